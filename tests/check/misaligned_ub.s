# misaligned_ub.s — misaligned: the add's destination UB address 0x110 is not 32-byte aligned.
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
    li t4, 0x110
    vadd.f16 t4, zero, zero, t3
    halt
    .data
    .align 64
src: .zero 512
