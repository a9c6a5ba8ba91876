/* test_isa.c — the instruction table tests itself: encodings do not
 * overlap, formats are sound, every row round-trips, random words either
 * decode and re-encode to themselves or are illegal with a clear message. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "isa/isa.h"

/* ---- table ---------------------------------------------------------------- */

START_TEST(opcodes_and_mnemonics_unique)
{
    for (int a = 1; a < ISA_OP_COUNT; a++)
        for (int b = a + 1; b < ISA_OP_COUNT; b++) {
            const isa_info *x = isa_info_of((isa_op)a), *y = isa_info_of((isa_op)b);
            ck_assert_msg(x->opcode != y->opcode, "%s and %s share opcode 0x%02x", x->mnemonic,
                          y->mnemonic, x->opcode);
            ck_assert_msg(strcmp(x->mnemonic, y->mnemonic), "mnemonic %s twice", x->mnemonic);
        }
    for (int a = 1; a < ISA_OP_COUNT; a++) {
        const isa_info *x = isa_info_of((isa_op)a);
        ck_assert_int_ne(x->opcode, 0); /* 0 stays illegal */
        ck_assert_int_eq(isa_op_from_opcode(x->opcode), a);
        ck_assert_int_eq(isa_op_from_mnemonic(x->mnemonic), a);
    }
}
END_TEST

/* A dotted mnemonic "A.B" must not read as row A with suffix B: B's first
 * component may not be a dtype or a modifier of A. */
START_TEST(dotted_mnemonics_unambiguous)
{
    for (int a = 1; a < ISA_OP_COUNT; a++)
        for (int b = 1; b < ISA_OP_COUNT; b++) {
            const isa_info *x = isa_info_of((isa_op)a), *y = isa_info_of((isa_op)b);
            size_t n = strlen(x->mnemonic);
            if (a == b || strncmp(x->mnemonic, y->mnemonic, n) || y->mnemonic[n] != '.')
                continue;
            char comp[32];
            snprintf(comp, sizeof comp, "%s", y->mnemonic + n + 1);
            comp[strcspn(comp, ".")] = 0;
            int v, m;
            ck_assert_msg(isa_dtype_from_suffix(comp) < 0, "%s reads as %s.<dtype>", y->mnemonic, x->mnemonic);
            ck_assert_msg(isa_mod_lookup(x->modclass, comp, &v, &m) != 0, "%s reads as %s.<modifier>",
                          y->mnemonic, x->mnemonic);
        }
}
END_TEST

START_TEST(formats_fields_disjoint)
{
    for (int f = 0; f < ISA_FMT_COUNT; f++) {
        uint32_t fm = isa_fmt_fields((isa_fmt)f);
        uint64_t used = 0;
        ck_assert_msg(fm & (1u << ISA_FLD_OPC), "format %s lacks OPC", isa_fmt_name((isa_fmt)f));
        for (int i = 0; i < ISA_FLD_COUNT; i++) {
            if (!(fm & (1u << i)))
                continue;
            const char *nm;
            int lsb, w, sg;
            isa_field_info((isa_field)i, &nm, &lsb, &w, &sg);
            ck_assert_msg(lsb >= 0 && w > 0 && lsb + w <= 64, "field %s outside 64 bits", nm);
            uint64_t bits = (w == 64 ? ~0ull : ((1ull << w) - 1)) << lsb;
            ck_assert_msg(!(used & bits), "format %s: field %s overlaps another field",
                          isa_fmt_name((isa_fmt)f), nm);
            used |= bits;
        }
    }
}
END_TEST

/* Every row's dtypes fit the format: a DT mask iff the format has DT. */
START_TEST(rows_consistent_with_formats)
{
    for (int a = 1; a < ISA_OP_COUNT; a++) {
        const isa_info *x = isa_info_of((isa_op)a);
        uint32_t fm = isa_fmt_fields(x->fmt);
        ck_assert_msg(!!(fm & (1u << ISA_FLD_DT)) == !!x->dtypes, "%s: dtypes vs format", x->mnemonic);
        ck_assert_msg(!!(fm & (1u << ISA_FLD_DT2)) == !!x->dtypes2, "%s: dtypes2 vs format", x->mnemonic);
        ck_assert_msg(!!(fm & (1u << ISA_FLD_MOD)) == (x->modclass != ISA_MC_NOMOD), "%s: modclass vs format",
                      x->mnemonic);
        ck_assert_msg(x->doc && *x->doc, "%s has no doc line", x->mnemonic);
        ck_assert_msg(x->dtypes < (1u << ISA_DT_COUNT) && x->dtypes2 < (1u << ISA_DT_COUNT), "%s: dtype mask", x->mnemonic);
    }
}
END_TEST

/* Modifier tokens never collide with dtype suffixes or with each other. */
START_TEST(suffix_tokens_unique)
{
    for (int mc = 0; mc < ISA_MC_COUNT; mc++)
        for (int i = 0;; i++) {
            const char *t = isa_mod_token((isa_modclass)mc, i, NULL, NULL, NULL);
            if (!t)
                break;
            ck_assert_msg(isa_dtype_from_suffix(t) < 0, "modifier %s is also a dtype", t);
            for (int mc2 = 0; mc2 < ISA_MC_COUNT; mc2++)
                for (int j = 0;; j++) {
                    const char *u = isa_mod_token((isa_modclass)mc2, j, NULL, NULL, NULL);
                    if (!u)
                        break;
                    if (mc2 != mc || j != i)
                        ck_assert_msg(strcmp(t, u), "modifier %s twice", t);
                }
        }
}
END_TEST

/* The ISA_* packing macros agree with cfgregs.def. */
static uint64_t pack(const char *reg, const char *const *names, const uint64_t *vals, int n)
{
    uint64_t w = 0;
    for (int i = 0; isa_cfg_field(i); i++) {
        const isa_cfgfield *f = isa_cfg_field(i);
        if (strcmp(f->reg, reg))
            continue;
        for (int k = 0; k < n; k++)
            if (!strcmp(names[k], f->name))
                w |= (vals[k] & ((1ull << f->width) - 1)) << f->lsb;
    }
    return w;
}

START_TEST(cfg_macros_match_table)
{
    const char *dn[] = {"nburst", "burst_bytes"};
    uint64_t dv[] = {17, 4096};
    ck_assert_uint_eq(ISA_DMA_CFG(17, 4096), pack("DMA_CFG", dn, dv, 2));
    const char *sn[] = {"src_stride", "dst_stride"};
    uint64_t sv[] = {512, 96};
    ck_assert_uint_eq(ISA_DMA_STRIDES(512, 96), pack("DMA_STRIDES", sn, sv, 2));
    const char *mn[] = {"m", "k", "n", "init"};
    uint64_t mv[] = {16, 256, 48, 1};
    ck_assert_uint_eq(ISA_MM_CFG(16, 256, 48, 1), pack("MM_CFG", mn, mv, 4));
    const char *vn[] = {"repeat", "dst_blk", "s0_blk", "s1_blk", "dst_rep", "s0_rep", "s1_rep"};
    uint64_t vv[] = {255, 1, 2, 3, 8, 9, 10};
    ck_assert_uint_eq(ISA_VCFG(255, 1, 2, 3, 8, 9, 10), pack("VCFG", vn, vv, 7));
    /* fields of one register never overlap and stay in 64 bits */
    for (int i = 0; isa_cfg_field(i); i++)
        for (int j = i + 1; isa_cfg_field(j); j++) {
            const isa_cfgfield *a = isa_cfg_field(i), *b = isa_cfg_field(j);
            ck_assert(a->lsb + a->width <= 64);
            if (strcmp(a->reg, b->reg))
                continue;
            ck_assert_msg(a->lsb + a->width <= b->lsb || b->lsb + b->width <= a->lsb, "%s.%s overlaps %s",
                          a->reg, a->name, b->name);
        }
}
END_TEST

/* ---- codec ------------------------------------------------------------------ */

/* Many random legal operand sets per row: encode -> decode gives the same
 * fields, re-encodes to the same word, and the disassembly is stable. */
START_TEST(rows_roundtrip)
{
    npu_rng rng = {0x5eed0001};
    for (int a = 1; a < ISA_OP_COUNT; a++) {
        for (int k = 0; k < 300; k++) {
            isa_insn in, out;
            npu_diag d = {0};
            ck_assert_msg(isa_random_insn((isa_op)a, &rng, &in, &d) == NPU_OK, "%s", d.msg);
            uint64_t w, w2;
            ck_assert_msg(isa_encode(&in, &w, &d) == NPU_OK, "%s", d.msg);
            ck_assert_msg(isa_decode(w, &out, &d) == NPU_OK, "%s", d.msg);
            ck_assert(memcmp(&in, &out, sizeof in) == 0 || (in.op == out.op && in.rd == out.rd &&
                      in.rs1 == out.rs1 && in.rs2 == out.rs2 && in.rs3 == out.rs3 && in.rs4 == out.rs4 &&
                      in.dt == out.dt && in.dt2 == out.dt2 && in.mod == out.mod && in.imm == out.imm &&
                      in.sreg == out.sreg && in.fid == out.fid && in.spipe == out.spipe &&
                      in.dpipe == out.dpipe && in.pipe == out.pipe));
            ck_assert_msg(isa_encode(&out, &w2, &d) == NPU_OK, "%s", d.msg);
            ck_assert_uint_eq(w, w2);
            char t[160];
            int n = isa_disasm(&out, 0x1000, t, sizeof t, NULL, NULL);
            ck_assert_int_gt(n, 0);
            ck_assert_msg(!strncmp(t, isa_info_of((isa_op)a)->mnemonic, strlen(isa_info_of((isa_op)a)->mnemonic)),
                          "%s", t);
            ck_assert_msg(!strchr(t, '?'), "disassembly has an unknown token: %s", t);
        }
    }
}
END_TEST

/* Random words: legal ones re-encode to themselves; illegal ones fail with
 * "illegal instruction 0x...". */
START_TEST(random_words)
{
    npu_rng rng = {42};
    long legal = 0;
    for (int k = 0; k < 400000; k++) {
        uint64_t w = npu_rng_next(&rng);
        /* also words with a real opcode and few bits set, so that legal
         * decodes happen often */
        if (k & 1) {
            int op = 1 + (int)(npu_rng_next(&rng) % (ISA_OP_COUNT - 1));
            w &= npu_rng_next(&rng) & npu_rng_next(&rng) & ~0xffull;
            w |= isa_info_of((isa_op)op)->opcode;
        }
        isa_insn in;
        npu_diag d = {0};
        if (isa_decode(w, &in, &d) == NPU_OK) {
            uint64_t w2;
            ck_assert_msg(isa_encode(&in, &w2, &d) == NPU_OK, "0x%016llx: %s", (unsigned long long)w, d.msg);
            ck_assert_uint_eq(w, w2);
            legal++;
        } else {
            char want[40];
            snprintf(want, sizeof want, "illegal instruction 0x%016llx", (unsigned long long)w);
            ck_assert_msg(strstr(d.msg, want) == d.msg, "message: %s", d.msg);
        }
    }
    ck_assert_int_gt(legal, 1000);
}
END_TEST

START_TEST(illegal_examples)
{
    isa_insn in;
    npu_diag d = {0};
    ck_assert_int_ne(isa_decode(0, &in, &d), NPU_OK);
    ck_assert_str_eq(d.msg, "illegal instruction 0x0000000000000000: unknown opcode 0x00");
    ck_assert_int_ne(isa_decode(0x8000000000000001ull, &in, &d), NPU_OK); /* nop with a reserved bit */
    ck_assert_ptr_nonnull(strstr(d.msg, "reserved bits"));
    /* vdiv.s32: dtype not legal */
    uint64_t w = isa_info_of(ISA_OP_VDIV)->opcode | ((uint64_t)ISA_DT_S32 << 33);
    ck_assert_int_ne(isa_decode(w, &in, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(d.msg, "does not take dtype s32"));
}
END_TEST

START_TEST(registers_and_names)
{
    for (int r = 0; r < 32; r++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", r);
        ck_assert_int_eq(isa_reg_from_name(nm), r);
        ck_assert_int_eq(isa_reg_from_name(isa_reg_name(r)), r);
    }
    ck_assert_int_eq(isa_reg_from_name("x32"), -1);
    ck_assert_int_eq(isa_reg_from_name("x01"), -1);
    ck_assert_int_eq(isa_reg_from_name("fp"), 8);
    for (int p = 0; p < ISA_PIPE_COUNT; p++)
        ck_assert_int_eq(isa_pipe_from_name(isa_pipe_name(p)), p);
    for (int i = 0; i < isa_sreg_count(); i++) {
        const char *nm;
        int num, wr;
        isa_sreg_at(i, &nm, &num, &wr, NULL);
        ck_assert_int_eq(isa_sreg_from_name(nm), num);
        ck_assert_str_eq(isa_sreg_name(num), nm);
    }
}
END_TEST

Suite *isa_table_suite(void)
{
    Suite *s = suite_create("isa-table");
    TCase *t = tcase_create("table");
    tcase_add_test(t, opcodes_and_mnemonics_unique);
    tcase_add_test(t, dotted_mnemonics_unambiguous);
    tcase_add_test(t, formats_fields_disjoint);
    tcase_add_test(t, rows_consistent_with_formats);
    tcase_add_test(t, suffix_tokens_unique);
    tcase_add_test(t, cfg_macros_match_table);
    tcase_add_test(t, registers_and_names);
    suite_add_tcase(s, t);
    return s;
}

Suite *isa_codec_suite(void)
{
    Suite *s = suite_create("isa-codec");
    TCase *t = tcase_create("codec");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, rows_roundtrip);
    tcase_add_test(t, random_words);
    tcase_add_test(t, illegal_examples);
    suite_add_tcase(s, t);
    return s;
}
