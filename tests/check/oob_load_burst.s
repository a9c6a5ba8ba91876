# oob_load_burst.s — burst one too long: the load reads 544 bytes of the 512-byte .data.
# check-args: --cores 1 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    la a2, src
    arg a3, 0
    dmaflat t1, t2, 544
    mov.gm2ub.f16 zero, a2, t1, t2
    halt
    .data
    .align 64
src: .zero 512
