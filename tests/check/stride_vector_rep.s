# stride_vector_rep.s — stride error: the add's source repeat stride runs past the 256 loaded bytes.
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
    vcfg t3, 2, 1, 1, 1, 8, 8, 8
    li t4, 1024
    vadd.f16 t4, zero, zero, t3
    halt
    .data
    .align 64
src: .zero 512
