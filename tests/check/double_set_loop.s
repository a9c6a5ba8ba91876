# double_set_loop.s — double set: a loop sets (V, MTE3, 1) each iteration, the wait is after the loop.
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
    li s2, 2
1:  vadd.f16 t4, zero, zero, t3
    set_flag V, MTE3, 1
    addi s2, s2, -1
    bnez s2, 1b
    wait_flag V, MTE3, 1
    wait_flag V, MTE3, 1
    mov.ub2gm.f16 a3, t4, t1, t2    # Y = UB [256, 512)
    halt
    .data
    .align 64
src: .zero 512
