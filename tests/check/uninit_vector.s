# uninit_vector.s — uninitialised UB read: the add reads UB [512, 768), never written.
# check-args: --cores 1 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    la a2, src
    arg a3, 0                       # Y
    dmaflat t1, t2, 256
    mov.gm2ub.f16 zero, a2, t1, t2  # UB [0, 256) = src
    handoff MTE2, V, 0
    vcfg t3, 1
    li t4, 256
    li t5, 512
    vadd.f16 t4, zero, t5, t3
    handoff V, MTE3, 0
    mov.ub2gm.f16 a3, t4, t1, t2    # Y = UB [256, 512)
    halt
    .data
    .align 64
src: .zero 512
