# uninit_partial.s — uninitialised UB read: 128 bytes loaded, the add reads 256.
# check-args: --cores 1 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    la a2, src
    arg a3, 0
    dmaflat t1, t2, 128
    mov.gm2ub.f16 zero, a2, t1, t2
    handoff MTE2, V, 0
    vcfg t3, 1
    li t4, 256
    vadd.f16 t4, zero, zero, t3     # UB [256, 512) = 2 src
    halt
    .data
    .align 64
src: .zero 512
