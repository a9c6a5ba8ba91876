# xcore_overlap.s — cross-core overwrite: slices 254 bytes apart, 256 long (off by one element).
# check-args: --cores 2 --out Y=f16[256]
    .include "npu.inc"
    .text
    .globl main
main:
    mfsr s0, coreid
    la a2, src
    arg a3, 0                       # Y
    dmaflat t1, t2, 256
    mov.gm2ub.f16 zero, a2, t1, t2  # UB [0, 256) = src
    li t5, 254
    mul t5, t5, s0
    add a3, a3, t5
    handoff MTE2, V, 0
    vcfg t3, 1
    li t4, 256
    vadd.f16 t4, zero, zero, t3     # UB [256, 512) = 2 src
    handoff V, MTE3, 0
    mov.ub2gm.f16 a3, t4, t1, t2    # Y = UB [256, 512)
    halt
    .data
    .align 64
src: .zero 512
