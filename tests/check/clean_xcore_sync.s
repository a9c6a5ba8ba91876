# clean_xcore_sync.s — control: two cores write the same bytes, separated by sync_all (no finding).
# check-args: --cores 2 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    arg a3, 0
    mfsr s0, coreid
    bnez s0, 1f
    sdg s0, 0(a3)
1:  sync_all
    beqz s0, 2f
    sdg s0, 0(a3)
2:  halt
    .data
    .align 64
src: .zero 512
