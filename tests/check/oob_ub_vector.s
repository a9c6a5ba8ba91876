# oob_ub_vector.s — burst one too long on chip: the add writes 256 bytes at UB 0x2ff20, 32 past the end of UB (0x30000).
# check-args: --cores 1 --out Y=f16[128]
    .include "npu.inc"
    .text
    .globl main
main:
    la a2, src
    dmaflat t1, t2, 256
    mov.gm2ub.f16 zero, a2, t1, t2
    handoff MTE2, V, 0
    vcfg t3, 1
    li t4, 0x2ff20
    vadd.f16 t4, zero, zero, t3
    halt
    .data
    .align 64
src: .zero 512
