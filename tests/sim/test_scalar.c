/* test_scalar.c — every scalar instruction against hand-computed values,
 * and the executor's faults with their exact messages. */
#include "tests/sim/suites.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Run "li64 a0, A; li64 a1, B; <op> a2, a0, a1; halt" and return a2. */
static uint64_t alu_rr(const char *op, uint64_t a, uint64_t b)
{
    char src[512];
    snprintf(src, sizeof src,
             ".text\n.globl main\nmain:\n  li64 a0, 0x%" PRIx64 "\n  li64 a1, 0x%" PRIx64
             "\n  %s a2, a0, a1\n  halt\n",
             a, b, op);
    npu_sim *s = t_sim_src(src, 1);
    t_run_ok(s);
    uint64_t v = t_reg(s, 0, "a2");
    npu_sim_free(s);
    return v;
}

static uint64_t alu_ri(const char *op, uint64_t a, int64_t imm)
{
    char src[512];
    snprintf(src, sizeof src,
             ".text\n.globl main\nmain:\n  li64 a0, 0x%" PRIx64 "\n  %s a2, a0, %" PRId64
             "\n  halt\n",
             a, op, imm);
    npu_sim *s = t_sim_src(src, 1);
    t_run_ok(s);
    uint64_t v = t_reg(s, 0, "a2");
    npu_sim_free(s);
    return v;
}

#define M1 0xffffffffffffffffull /* -1 */
#define MIN64 0x8000000000000000ull

static const struct { const char *op; uint64_t a, b, want; } rr[] = {
    {"add", 5, 7, 12},
    {"add", M1, 1, 0},
    {"sub", 5, 7, 0xfffffffffffffffeull},
    {"mul", (uint64_t)-3, 7, (uint64_t)-21},
    {"mul", 0x100000000ull, 0x100000000ull, 0},
    {"mulh", 0x4000000000000000ull, 4, 1},
    {"mulh", 0xc000000000000000ull, 4, M1},       /* -2^62 * 4 = -2^64 */
    {"mulh", M1, M1, 0},                          /* 1 */
    {"div", 7, (uint64_t)-2, (uint64_t)-3},       /* toward zero */
    {"div", 7, 0, M1},
    {"div", MIN64, M1, MIN64},
    {"divu", 7, 0, M1},
    {"divu", 0xfffffffffffffffeull, 2, 0x7fffffffffffffffull},
    {"rem", (uint64_t)-7, 2, M1},
    {"rem", 7, 0, 7},
    {"rem", MIN64, M1, 0},
    {"remu", 7, 0, 7},
    {"remu", 10, 3, 1},
    {"and", 0xf0f0, 0x0ff0, 0x00f0},
    {"or", 0xf0f0, 0x0ff0, 0xfff0},
    {"xor", 0xf0f0, 0x0ff0, 0xff00},
    {"sll", 1, 65, 2},                            /* shift amount & 63 */
    {"srl", MIN64, 63, 1},
    {"sra", MIN64, 63, M1},
    {"slt", M1, 1, 1},
    {"sltu", M1, 1, 0},
    {"min", (uint64_t)-5, 3, (uint64_t)-5},
    {"max", (uint64_t)-5, 3, 3},
    {"minu", (uint64_t)-5, 3, 3},
    {"maxu", (uint64_t)-5, 3, (uint64_t)-5},
};

START_TEST(alu_register_register)
{
    uint64_t got = alu_rr(rr[_i].op, rr[_i].a, rr[_i].b);
    ck_assert_msg(got == rr[_i].want, "%s 0x%" PRIx64 ", 0x%" PRIx64 ": got 0x%" PRIx64
                  ", want 0x%" PRIx64, rr[_i].op, rr[_i].a, rr[_i].b, got, rr[_i].want);
}
END_TEST

static const struct { const char *op; uint64_t a; int64_t imm; uint64_t want; } ri[] = {
    {"addi", 10, -20, (uint64_t)-10},
    {"muli", 3, -4, (uint64_t)-12},
    {"andi", 0xff, -16, 0xf0},
    {"ori", 0, -1, M1},
    {"xori", 5, -1, ~5ull},
    {"slli", 1, 63, MIN64},
    {"srli", M1, 60, 0xf},
    {"srai", (uint64_t)-16, 2, (uint64_t)-4},
    {"slti", M1, 0, 1},
    {"slti", 0, -1, 0},
    {"sltiu", 5, -1, 1},                          /* 5 < 0xffff...ff */
    {"sltiu", M1, 1, 0},
};

START_TEST(alu_register_immediate)
{
    uint64_t got = alu_ri(ri[_i].op, ri[_i].a, ri[_i].imm);
    ck_assert_msg(got == ri[_i].want, "%s 0x%" PRIx64 ", %" PRId64 ": got 0x%" PRIx64
                  ", want 0x%" PRIx64, ri[_i].op, ri[_i].a, ri[_i].imm, got, ri[_i].want);
}
END_TEST

START_TEST(li_lih_x0)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  li a0, -5\n"
                           "  li a1, 0x7fffffffffff\n"
                           "  li a2, 0x123\n"
                           "  lih a2, 0xabcd\n"
                           "  li zero, 55\n"           /* x0 stays 0 */
                           "  addi a3, zero, 1\n"
                           "  halt\n", 1);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 0, "a0"), (uint64_t)-5);
    ck_assert_uint_eq(t_reg(s, 0, "a1"), 0x7fffffffffffull);
    ck_assert_uint_eq(t_reg(s, 0, "a2"), 0xabcd000000000123ull);
    ck_assert_uint_eq(t_reg(s, 0, "zero"), 0);
    ck_assert_uint_eq(t_reg(s, 0, "a3"), 1);
    npu_sim_free(s);
}
END_TEST

START_TEST(scalar_buffer_loads_stores)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  li t0, 0x100\n"
                           "  li64 t1, 0x8182838485868788\n"
                           "  sd t1, 0(t0)\n"
                           "  lb a0, 0(t0)\n"
                           "  lbu a1, 0(t0)\n"
                           "  lh a2, 0(t0)\n"
                           "  lhu a3, 0(t0)\n"
                           "  lw a4, 4(t0)\n"
                           "  lwu a5, 4(t0)\n"
                           "  ld a6, 0(t0)\n"
                           "  li64 t2, 0x0102030405060708\n"
                           "  sd zero, 8(t0)\n"
                           "  sb t2, 8(t0)\n"
                           "  sh t2, 10(t0)\n"
                           "  sw t2, 12(t0)\n"
                           "  ld a7, 8(t0)\n"
                           "  addi sp, sp, -8\n"       /* the stack: sp starts at the top */
                           "  sd t2, 0(sp)\n"
                           "  ld s0, 0(sp)\n"
                           "  halt\n", 1);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 0, "a0"), 0xffffffffffffff88ull);
    ck_assert_uint_eq(t_reg(s, 0, "a1"), 0x88);
    ck_assert_uint_eq(t_reg(s, 0, "a2"), 0xffffffffffff8788ull);
    ck_assert_uint_eq(t_reg(s, 0, "a3"), 0x8788);
    ck_assert_uint_eq(t_reg(s, 0, "a4"), 0xffffffff81828384ull);
    ck_assert_uint_eq(t_reg(s, 0, "a5"), 0x81828384);
    ck_assert_uint_eq(t_reg(s, 0, "a6"), 0x8182838485868788ull);
    /* bytes 8..15: 08 00 | 08 07 | 08 07 06 05 */
    ck_assert_uint_eq(t_reg(s, 0, "a7"), 0x0506070807080008ull);
    ck_assert_uint_eq(t_reg(s, 0, "s0"), 0x0102030405060708ull);
    ck_assert_uint_eq(t_reg(s, 0, "sp"), 16384 - 8);
    npu_sim_free(s);
}
END_TEST

START_TEST(branches)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  li a0, 0\n"
                           "  li t0, -1\n"
                           "  li t1, 1\n"
                           "  beq t0, t1, bad\n"       /* not taken */
                           "  addi a0, a0, 1\n"
                           "  bne t0, t1, ok1\n"       /* taken */
                           "  j bad\n"
                           "ok1:\n  blt t0, t1, ok2\n" /* -1 < 1 signed */
                           "  j bad\n"
                           "ok2:\n  bltu t0, t1, bad\n" /* not: 2^64-1 < 1 unsigned */
                           "  addi a0, a0, 1\n"
                           "  bge t1, t0, ok3\n"
                           "  j bad\n"
                           "ok3:\n  bgeu t0, t1, ok4\n"
                           "  j bad\n"
                           "ok4:\n  bge t0, t1, bad\n"
                           "  bgeu t1, t0, bad\n"
                           "  beq t1, t1, ok5\n"
                           "  j bad\n"
                           "ok5:\n  li a1, 77\n"
                           "  halt\n"
                           "bad:\n  li a1, 99\n"
                           "  halt\n", 1);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 0, "a1"), 77);
    ck_assert_uint_eq(t_reg(s, 0, "a0"), 2);
    npu_sim_free(s);
}
END_TEST

START_TEST(call_return_jalr)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  li a0, 1\n"              /* pc 0 */
                           "  call f\n"                /* pc 8: ra = 16 */
                           "  addi a0, a0, 100\n"
                           "  mv s1, ra\n"
                           "  li t0, g + 3\n"          /* jalr clears the low 3 bits */
                           "  jalr t1, t0, 0\n"
                           "  halt\n"
                           "f:\n  addi a0, a0, 10\n"
                           "  ret\n"
                           "g:\n  li a2, 5\n"
                           "  halt\n", 1);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 0, "a0"), 111);
    ck_assert_uint_eq(t_reg(s, 0, "s1"), 16);
    ck_assert_uint_eq(t_reg(s, 0, "t1"), 48);    /* jalr at pc 40 links 48 */
    ck_assert_uint_eq(t_reg(s, 0, "a2"), 5);
    npu_sim_free(s);
}
END_TEST

START_TEST(entry_return_ends_core)
{
    /* ra starts at the end of .text: returning from the entry is like halt */
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  li a0, 5\n  ret\n", 2);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 1, "a0"), 5);
    ck_assert_uint_eq(npu_sim_insns(s, 1), 2);
    npu_sim_free(s);
}
END_TEST

START_TEST(gm_scalar_access)
{
    npu_sim *s = t_sim_src(".rodata\nro: .dword 0x1122334455667788\n"
                           ".data\nrw: .word -2\n  .word 0\n  .dword 0\n"
                           ".text\n.globl main\nmain:\n"
                           "  la t0, ro\n"
                           "  ldg a0, 0(t0)\n"
                           "  la t1, rw\n"
                           "  lwg a1, 0(t1)\n"
                           "  li a2, 0x55\n"
                           "  sdg a2, 8(t1)\n"
                           "  swg a1, 4(t1)\n"
                           "  ldg a3, 8(t1)\n"
                           "  ldg a4, 0(t1)\n"
                           "  halt\n", 1);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 0, "a0"), 0x1122334455667788ull);
    ck_assert_uint_eq(t_reg(s, 0, "a1"), (uint64_t)-2);   /* sign-extended */
    ck_assert_uint_eq(t_reg(s, 0, "a3"), 0x55);
    ck_assert_uint_eq(t_reg(s, 0, "a4"), 0xfffffffefffffffeull);
    npu_sim_free(s);
}
END_TEST

/* Run src on one core, expect it to fail with st and a message ending in tail. */
static void expect_fault(const char *src, npu_status want, const char *tail)
{
    npu_sim *s = t_sim_src(src, 1);
    npu_diag d;
    npu_status st = t_run(s, &d);
    ck_assert_msg(st == want, "status %s (want %s): %s", npu_status_name(st),
                  npu_status_name(want), d.msg);
    size_t n = strlen(d.msg), m = strlen(tail);
    ck_assert_msg(n >= m && strcmp(d.msg + n - m, tail) == 0, "message '%s' does not end in '%s'",
                  d.msg, tail);
    npu_sim_free(s);
}

START_TEST(fault_report_format)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  nop\n  ld a0, 16384(zero)\n  halt\n", 1);
    npu_diag d;
    ck_assert_int_eq(t_run(s, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "t.elf: fault on core 0 at pc 0x8 (main+0x8), cycle 0: "
                            "ld a0, 16384(zero): scalar buffer read [0x4000, +8) outside the "
                            "scalar buffer (16384 bytes)");
    npu_sim_free(s);
}
END_TEST

START_TEST(faults)
{
    const char *hdr = ".text\n.globl main\nmain:\n";
    char src[512];
#define F(body, st, tail) \
    (snprintf(src, sizeof src, "%s%s", hdr, body), expect_fault(src, st, tail))
    F("  li t0, 16380\n  sd t0, 0(t0)\n  halt\n", NPU_EFAULT,
      "scalar buffer write [0x3ffc, +8) outside the scalar buffer (16384 bytes)");
    F("  lw a0, 2(zero)\n  halt\n", NPU_EFAULT,
      "misaligned scalar buffer read of 4 bytes at 0x2 (needs 4-byte alignment)");
    F("  li t0, 0x100000004\n  ldg a0, 0(t0)\n  halt\n", NPU_EFAULT,
      "misaligned GM read of 8 bytes at 0x100000004 (needs 8-byte alignment)");
    F("  li t0, 0x300000000\n  sdg t0, 0(t0)\n  halt\n", NPU_EFAULT,
      "GM write [0x300000000, +8) outside any allocation (the nearest is the parameter block "
      "[0x200000000, +8))");
    F("  li t0, 0x200000010\n  sdg t0, 0(t0)\n  halt\n", NPU_EFAULT,
      "GM write [0x200000010, +8) is 8 bytes past the end of the parameter block "
      "[0x200000000, +8)");
    F("  trap 42\n", NPU_EFAULT, "trap 42");
    F("  li a0, 1\n", NPU_EFAULT, "pc ran past the end of .text [0x0, 0x8)");
    F("  li t0, 0x10000\n  jalr zero, t0, 0\n", NPU_EFAULT,
      "jump target 0x10000 is outside .text [0x0, 0x10)");
    F("  wait_flag MTE2, S, 3\n  halt\n", NPU_EDEADLOCK,
      "deadlock: wait_flag(MTE2, S, 3) blocks the scalar unit but no earlier "
      "set_flag(MTE2, S, 3) is pending, and no later one can be issued");
#undef F
}
END_TEST

START_TEST(illegal_instruction)
{
    /* an all-zero word in .text decodes to nothing: faults when executed */
    npu_sim *s = NULL;
    npu_diag d;
    ck_assert_int_eq(npu_sim_new(&s, NULL, &d), NPU_OK);
    asm_output o;
    const char *src = ".text\n.globl main\nmain:\n  nop\n  nop\n  halt\n";
    ck_assert_int_eq(asm_assemble_mem(src, strlen(src), "t.s", NULL, &o, &d), NPU_OK);
    o.text[1] = 0;
    npu_buf b = {0};
    ck_assert_int_eq(elf_write_mem(&o, &b, &d), NPU_OK);
    asm_output_free(&o);
    ck_assert_int_eq(npu_sim_load_elf_mem(s, b.data, b.len, "z.elf", &d), NPU_OK);
    npu_buf_free(&b);
    ck_assert_int_eq(npu_sim_set_cores(s, 1, &d), NPU_OK);
    ck_assert_int_eq(t_run(s, &d), NPU_EFAULT);
    ck_assert_msg(strstr(d.msg, "fault on core 0 at pc 0x8 (main+0x8)") != NULL, "%s", d.msg);
    ck_assert_msg(strstr(d.msg, ".word 0x0000000000000000: illegal instruction") != NULL, "%s",
                  d.msg);
    npu_sim_free(s);
}
END_TEST

Suite *scalar_suite(void)
{
    Suite *s = suite_create("scalar");
    TCase *tc = tcase_create("alu");
    tcase_add_loop_test(tc, alu_register_register, 0, (int)NPU_ARRAY_LEN(rr));
    tcase_add_loop_test(tc, alu_register_immediate, 0, (int)NPU_ARRAY_LEN(ri));
    tcase_add_test(tc, li_lih_x0);
    suite_add_tcase(s, tc);
    tc = tcase_create("memory");
    tcase_add_test(tc, scalar_buffer_loads_stores);
    tcase_add_test(tc, gm_scalar_access);
    suite_add_tcase(s, tc);
    tc = tcase_create("control");
    tcase_add_test(tc, branches);
    tcase_add_test(tc, call_return_jalr);
    tcase_add_test(tc, entry_return_ends_core);
    suite_add_tcase(s, tc);
    tc = tcase_create("faults");
    tcase_add_test(tc, fault_report_format);
    tcase_add_test(tc, faults);
    tcase_add_test(tc, illegal_instruction);
    suite_add_tcase(s, tc);
    return s;
}
