# barrier_mismatch.s — sync_all mismatch: core 0 waits at sync_all, core 1 ends without reaching it.
# check-args: --cores 2 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    mfsr s0, coreid
    bnez s0, 1f
    sync_all
1:  halt
