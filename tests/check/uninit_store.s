# uninit_store.s — uninitialised UB read: the store reads UB [1024, 1280), never written.
# check-args: --cores 1 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    arg a3, 0
    dmaflat t1, t2, 256
    li t4, 1024
    mov.ub2gm.f16 a3, t4, t1, t2    # Y = UB [256, 512)
    halt
    .data
    .align 64
src: .zero 512
