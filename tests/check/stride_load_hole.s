# stride_load_hole.s — stride error: the load's UB stride 128 leaves holes the add then reads.
# check-args: --cores 1 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    la a2, src
    arg a3, 0
    dmacfg t1, 2, 64
    dmastride t2, 64, 128
    mov.gm2ub.f16 zero, a2, t1, t2
    handoff MTE2, V, 0
    vcfg t3, 1
    li t4, 256
    vadd.f16 t4, zero, zero, t3
    handoff V, MTE3, 0
    dmaflat t1, t2, 256
    mov.ub2gm.f16 a3, t4, t1, t2    # Y = UB [256, 512)
    halt
    .data
    .align 64
src: .zero 512
