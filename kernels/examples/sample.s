# sample.s — a small kernel that exercises the assembler: sections, data of
# several dtypes, macros from npu.inc, local and global labels, a loop, a
# call, and parameters from the command line.
#
#   npusim asm kernels/examples/sample.s -I kernels/include -o sample.elf [-D N=64]
#   npusim dis sample.elf

    .include "npu.inc"

.ifndef N
    .equ N, 32                  # elements per core; override with -D N=...
.endif
.if N % 16
    .error "N must be a multiple of 16"
.endif
    .equ BYTES, N * 2           # f16

    .text
    .globl main
    .type main, @function
main:
    coreinfo s0, s1             # s0 = core id, s1 = core count
    la a0, scale                # GM address of a data label
    lwg a1, 0(a0)
    arg a2, 0                   # x (f16[N * cores])
    arg a3, 1                   # y
    li t0, BYTES
    mul t0, t0, s0
    add a2, a2, t0              # this core's slice
    add a3, a3, t0
    dmaflat t1, t2, BYTES
    mov.gm2ub.f16 zero, a2, t1, t2
    handoff MTE2, V, 0
    vcfg t3, BYTES / 256 + (BYTES % 256 != 0)
    vmuls.f16 zero, zero, a1, t3
    handoff V, MTE3, 0
    mov.ub2gm.f16 a3, zero, t1, t2
    call count_down
    halt
    .size main, . - main

    .type count_down, @function
count_down:                     # a local function with a loop
    li t0, 4
1:  addi t0, t0, -1
    bnez t0, 1b
.Ldone:
    ret

    .rodata
    .align 8
    .globl scale
scale:  .f32 0.5
halves: .f16 0.5, 1.5, -2.25, 65504
bf:     .bf16 3.140625
fp8:    .e4m3 1.0, -448 ; .e5m2 0.25
msg:    .asciz "sample"

    .data
counter: .dword 0

    .bss
    .align 64
scratch: .zero 256
