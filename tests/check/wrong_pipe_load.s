# wrong_pipe_load.s — wrong pipe pair: the store reads the loaded UB bytes, but the handoff is MTE2 -> V.
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
    mov.ub2gm.f16 a3, zero, t1, t2  # Y = UB [0, 256)
    halt
    .data
    .align 64
src: .zero 512
