# xcore_scalar.s — cross-core overwrite: every core stores its id to Y[0] with sdg.
# check-args: --cores 2 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    arg a3, 0
    mfsr s0, coreid
    sdg s0, 0(a3)
    halt
    .data
    .align 64
src: .zero 512
