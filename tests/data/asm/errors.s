# One error of each class; tests/e2e/t_asm_errors.sh compares the
# assembler's messages with errors.expected.
    .include "errors_inc.s"
    .text
main:
    frob a0, a1
    add a0, a1, 5
    addi a0, a1, 70000
    addi a0, a1, 0x80000000
    li a0, 1 << 50
    vadd.f64 a0, a1, a2, a3
    vdiv.s32 a0, a1, a2, a3
	mmad.f16 a0, a1, a2, a3
    j nowhere
main:
    .frob
    set_flag V, V, 0
    checked 3
    .rodata
    .byte 300
    .f16 1e6
    .if 1
