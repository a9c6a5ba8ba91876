/* test_asm.c — the assembler: round trip of every row through the
 * disassembler and back, each directive and pseudo-instruction, each error
 * class with its file:line:col and message, the runaway guards, and
 * allocation failures. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/asm.h"
#include "isa/isa.h"
#include "tests/frontend/suites.h"

static int assemble(const char *src, asm_output *o, const asm_opts *opts)
{
    npu_diag d = {0};
    return asm_assemble_mem(src, strlen(src), "t.s", opts, o, &d);
}

static void must(const char *src, asm_output *o)
{
    npu_diag d = {0};
    npu_status s = asm_assemble_mem(src, strlen(src), "t.s", NULL, o, &d);
    ck_assert_msg(s == NPU_OK, "assembly failed: %s", d.msg);
}

/* The one error message of a failing source (asserts there is exactly n). */
static const asm_msg *fails(const char *src, asm_output *o, size_t n)
{
    ck_assert_int_ne(assemble(src, o, NULL), NPU_OK);
    ck_assert_msg(o->nerrors == n, "expected %zu errors, got %zu (first: %s)", n, o->nerrors,
                  o->nmsgs ? o->msgs[0].msg : "-");
    return &o->msgs[0];
}

#define FAILS_WITH(src, text, line_, col_)                                          \
    do {                                                                             \
        asm_output o_;                                                               \
        const asm_msg *m_ = fails(src, &o_, 1);                                      \
        ck_assert_msg(strstr(m_->msg, text), "message '%s' lacks '%s'", m_->msg, text); \
        ck_assert_int_eq(m_->line, line_);                                           \
        if (col_) ck_assert_msg(m_->col == col_, "'%s': col %d, want %d", m_->msg, m_->col, col_); \
        ck_assert_str_eq(m_->file, "t.s");                                           \
        asm_output_free(&o_);                                                        \
    } while (0)

static isa_insn word(const asm_output *o, size_t i)
{
    isa_insn in;
    npu_diag d = {0};
    ck_assert_uint_lt(i, o->ntext);
    ck_assert_msg(isa_decode(o->text[i], &in, &d) == NPU_OK, "%s", d.msg);
    return in;
}

static const asm_sym *sym(const asm_output *o, const char *name)
{
    for (size_t i = 0; i < o->nsyms; i++)
        if (!strcmp(o->syms[i].name, name))
            return &o->syms[i];
    ck_abort_msg("no symbol %s", name);
    return NULL;
}

/* ---- round trip -------------------------------------------------------- */

/* encode -> decode -> disassemble -> assemble -> encode, bit for bit, for
 * many random legal operand sets of every row. */
START_TEST(every_row_roundtrips)
{
    npu_rng rng = {0xa5a5};
    npu_buf src = {0};
    size_t n = 0;
    uint64_t *want = NULL;
    for (int op = 1; op < ISA_OP_COUNT; op++)
        for (int k = 0; k < 100; k++) {
            isa_insn in, dec;
            npu_diag d = {0};
            ck_assert(isa_random_insn((isa_op)op, &rng, &in, &d) == NPU_OK);
            uint64_t w;
            ck_assert(isa_encode(&in, &w, &d) == NPU_OK);
            ck_assert(isa_decode(w, &dec, &d) == NPU_OK);
            char t[160];
            /* every word at pc = 8n in the source, so branch targets (printed
             * as absolute addresses) assemble back to the same offsets */
            isa_disasm(&dec, n * 8, t, sizeof t, NULL, NULL);
            npu_buf_printf(&src, "%s\n", t);
            want = realloc(want, (n + 1) * sizeof *want);
            want[n++] = w;
        }
    npu_buf_append(&src, "", 1);
    asm_output o;
    must((const char *)src.data, &o);
    ck_assert_uint_eq(o.ntext, n);
    for (size_t i = 0; i < n; i++) {
        isa_insn in;
        npu_diag d = {0};
        isa_decode(want[i], &in, &d);
        char t[160];
        isa_disasm(&in, i * 8, t, sizeof t, NULL, NULL);
        ck_assert_msg(o.text[i] == want[i], "word %zu '%s': 0x%016llx != 0x%016llx", i, t,
                      (unsigned long long)o.text[i], (unsigned long long)want[i]);
    }
    asm_output_free(&o);
    npu_buf_free(&src);
    free(want);
}
END_TEST

/* Pseudo-instruction names never shadow or collide with real mnemonics. */
START_TEST(pseudo_names_unique)
{
    static const char *const names[] = {
#define PSEUDO(name, ops, exp, doc) #name,
#include "frontend/asm_pseudo.def"
#undef PSEUDO
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(names); i++) {
        ck_assert_msg(isa_op_from_mnemonic(names[i]) == ISA_OP_INVALID, "pseudo %s is an instruction", names[i]);
        for (size_t j = i + 1; j < NPU_ARRAY_LEN(names); j++)
            ck_assert_str_ne(names[i], names[j]);
    }
}
END_TEST

/* ---- features ---------------------------------------------------------- */

START_TEST(expressions)
{
    asm_output o;
    must(".equ A, 1 + 2 * 3 << 1\n"          /* (1 + 6) << 1 = 14 */
         ".equ B, (1 + 2) * 3\n"
         ".equ C, -A / 4 % 3\n"              /* -14/4 = -3, -3 % 3 = 0 */
         ".equ D, A > B ? 100 : 200\n"
         ".equ E, ~0 ^ 0xff | 0b1 & 7\n"
         ".equ F, (1 << 40) >> 38\n"
         ".equ G, !0 + (3 == 3) + (2 != 2) + (1 && 0) + (0 || 5)\n"
         ".equ H, -1 >> 60\n"                 /* arithmetic */
         ".equ I, 'a' + 0o17 + 1_000\n"
         "li a0, A; li a1, B; li a2, C; li a3, D; li a4, E; li a5, F; li a6, G; li a7, H; li t0, I\n",
         &o);
    int64_t want[] = {14, 9, 0, 100, (int64_t)(~0ull ^ 0xff) | 1, 4, 3, -1, 97 + 15 + 1000};
    for (size_t i = 0; i < NPU_ARRAY_LEN(want); i++)
        ck_assert_int_eq(word(&o, i).imm, want[i]);
    asm_output_free(&o);
}
END_TEST

START_TEST(labels_and_branches)
{
    asm_output o;
    must(".text\n.globl main\nmain:\n"
         "1:  addi a0, a0, -1\n"          /* 0 */
         "    bnez a0, 1b\n"              /* 8: -> 0 */
         "    beqz a0, 1f\n"              /* 16: -> 32 */
         "    j .Lout\n"                  /* 24: -> 40 */
         "1:  nop\n"                      /* 32 */
         ".Lout: call helper\n"           /* 40: -> 48 */
         "helper: ret\n",
         &o);
    ck_assert_int_eq(word(&o, 1).imm, -8);
    ck_assert_int_eq(word(&o, 1).op, ISA_OP_BNE);
    ck_assert_int_eq(word(&o, 2).imm, 16);
    ck_assert_int_eq(word(&o, 3).imm, 16);
    ck_assert_int_eq(word(&o, 3).rd, 0);
    ck_assert_int_eq(word(&o, 5).op, ISA_OP_JAL);
    ck_assert_int_eq(word(&o, 5).rd, 1);
    ck_assert_int_eq(word(&o, 6).op, ISA_OP_JALR);
    const asm_sym *m = sym(&o, "main");
    ck_assert_int_eq(m->type, ASM_SYM_FUNC);
    ck_assert(m->global);
    ck_assert_uint_eq(m->size, 56);      /* automatic: to the end of .text */
    ck_assert_int_eq(sym(&o, ".Lout")->type, ASM_SYM_NOTYPE);
    ck_assert(!sym(&o, ".Lout")->global);
    ck_assert_uint_eq(sym(&o, ".Lout")->size, 8);  /* to the next label */
    ck_assert_uint_eq(o.entry, 0);
    for (size_t i = 0; i < o.nsyms; i++)
        ck_assert_msg(o.syms[i].name[0] != '\001', "numeric labels are not emitted");
    asm_output_free(&o);
}
END_TEST

START_TEST(suffixes_and_operands)
{
    asm_output o;
    must("mov.gm2l1.nd2nz.f16 a0, a1, a2, a3\n"
         "mov.gm2ub a0, a1, a2, a3\n"               /* dtype optional: u8 */
         "mmad.sp.f16.f32 a0, a1, a2, a3, a4\n"     /* a dotted base mnemonic */
         "mmad.s8.s32 a0, a1, a2, a3\n"
         "fix.l0c2gm.f32.f16.relu.nd a0, a1, a2, a3, a4\n"
         "vconv.sat.rz.f32.s32 a0, a1, a2\n"
         "vcmpv.lt.f16 a0, a1, a2, a3\n"
         "ld t0, -16(sp)\n"
         "sd t0, (sp)\n"
         "lw a0, 4 * 2 (a1)\n"
         "set_flag MTE2, v, 1 + 2\n"
         "wait_flag mte2, V, 3\n"
         "pipe_barrier ALL\n"
         "mfsr a0, coreid\n"
         "mtsr pmusel2, a1\n"
         "mfsr a0, 0x30\n"
         "lih a0, 0xffff\n",
         &o);
    isa_insn i0 = word(&o, 0);
    ck_assert_int_eq(i0.op, ISA_OP_GM2L1);
    ck_assert_int_eq(i0.mod, ISA_XFORM_ND2NZ);
    ck_assert_int_eq(i0.dt, ISA_DT_F16);
    ck_assert_int_eq(word(&o, 1).dt, ISA_DT_U8);
    isa_insn i2 = word(&o, 2);
    ck_assert_int_eq(i2.op, ISA_OP_MMADSP);
    ck_assert_int_eq(i2.dt, ISA_DT_F16);
    ck_assert_int_eq(i2.dt2, ISA_DT_F32);
    ck_assert_int_eq(i2.rs4, 14);
    ck_assert_int_eq(word(&o, 3).dt2, ISA_DT_S32);
    isa_insn i4 = word(&o, 4);
    ck_assert_int_eq(i4.mod, ISA_FIX_RELU | ISA_FIX_ND);
    ck_assert_int_eq(i4.dt2, ISA_DT_F16);
    ck_assert_int_eq(word(&o, 5).mod, ISA_RND_RZ | ISA_RND_SAT);
    ck_assert_int_eq(word(&o, 5).dt2, ISA_DT_S32);
    ck_assert_int_eq(word(&o, 6).mod, ISA_CMP_LT);
    ck_assert_int_eq(word(&o, 7).imm, -16);
    ck_assert_int_eq(word(&o, 7).rs1, 2);
    ck_assert_int_eq(word(&o, 8).imm, 0);
    ck_assert_int_eq(word(&o, 9).imm, 8);
    ck_assert_int_eq(word(&o, 10).fid, 3);
    ck_assert_int_eq(word(&o, 10).spipe, ISA_PIPE_MTE2);
    ck_assert_int_eq(word(&o, 10).dpipe, ISA_PIPE_V);
    ck_assert_int_eq(word(&o, 12).pipe, ISA_PIPE_ALL);
    ck_assert_int_eq(word(&o, 13).sreg, ISA_SR_COREID);
    ck_assert_int_eq(word(&o, 14).sreg, ISA_SR_PMUSEL2);
    ck_assert_int_eq(word(&o, 15).sreg, ISA_SR_PMUCNT0);
    ck_assert_int_eq(word(&o, 16).imm, 0xffff);
    asm_output_free(&o);
}
END_TEST

START_TEST(pseudo_instructions)
{
    asm_output o;
    must("mv a0, a1; not a2, a3; neg a4, a5\n"
         "x: bgt a0, a1, x; ble a0, a1, x; bgtu a0, a1, x; bleu a0, a1, x\n"
         "li64 t0, 0x123456789abcdef0\n"
         "li64 t1, -2\n"
         "la a0, tab\n"
         "nop\n"
         ".data\ntab: .dword 1\n",
         &o);
    ck_assert_uint_eq(o.ntext, 3 + 4 + 2 + 2 + 1 + 1);
    ck_assert_int_eq(word(&o, 0).op, ISA_OP_ADDI);
    ck_assert_int_eq(word(&o, 1).op, ISA_OP_XORI);
    ck_assert_int_eq(word(&o, 1).imm, -1);
    ck_assert_int_eq(word(&o, 2).op, ISA_OP_SUB);
    ck_assert_int_eq(word(&o, 2).rs2, 15);
    isa_insn b = word(&o, 3);
    ck_assert_int_eq(b.op, ISA_OP_BLT);
    ck_assert_int_eq(b.rs1, 11);  /* bgt a0, a1 = blt a1, a0 */
    ck_assert_int_eq(b.rs2, 10);
    ck_assert_int_eq(word(&o, 4).op, ISA_OP_BGE);
    ck_assert_int_eq(word(&o, 5).op, ISA_OP_BLTU);
    ck_assert_int_eq(word(&o, 6).op, ISA_OP_BGEU);
    ck_assert_int_eq(word(&o, 6).imm, -24);
    /* li64: the machine's view of li then lih gives the full constant */
    for (int k = 0; k < 2; k++) {
        isa_insn li = word(&o, 7 + 2 * (size_t)k), lih = word(&o, 8 + 2 * (size_t)k);
        ck_assert_int_eq(li.op, ISA_OP_LI);
        ck_assert_int_eq(lih.op, ISA_OP_LIH);
        uint64_t v = ((uint64_t)li.imm & 0x0000ffffffffffffull) | ((uint64_t)lih.imm << 48);
        ck_assert_uint_eq(v, k == 0 ? 0x123456789abcdef0ull : (uint64_t)-2);
    }
    ck_assert_int_eq(word(&o, 11).imm, (int64_t)ASM_GM_DATA_BASE);  /* .rodata is empty */
    ck_assert_uint_eq(sym(&o, "tab")->addr, o.data[ASM_SEC_DATA].addr);
    ck_assert_int_eq(word(&o, 12).op, ISA_OP_NOP);
    asm_output_free(&o);
}
END_TEST

START_TEST(macros_rept_if)
{
    asm_output o;
    must(".macro addn rd, n=1, base=zero\n"
         "  addi \\rd, \\base, \\n\n"
         ".endm\n"
         ".macro twice what\n"
         "  \\what\n  \\what\n"
         ".endm\n"
         ".macro lbl\n"
         "L\\@: j L\\@\n"
         ".endm\n"
         "addn a0\n"                 /* 0: addi a0, zero, 1 */
         "addn a1, 5\n"              /* 1 */
         "addn a2, base=a1, n=7\n"   /* 2 */
         "twice nop\n"               /* 3, 4 */
         "lbl; lbl\n"                /* 5, 6 */
         ".set i, 0\n"
         ".rept 4\n"
         "  addi a3, a3, i\n"        /* 7..10: 0 1 2 3 */
         "  .set i, i + 1\n"
         ".endr\n"
         ".rept 2\n.rept 3\nnop\n.endr\n.endr\n"   /* 11..16 */
         ".if i == 4\n li a0, 1\n.elif i == 5\n li a0, 2\n.else\n li a0, 3\n.endif\n"  /* 17 */
         ".if 0\n .bogus\n.elif 1\n li a0, 4\n.endif\n"   /* 18 */
         ".ifdef i\n li a0, 5\n.endif\n"                   /* 19 */
         ".ifndef nothere\n li a0, 6\n.else\n li a0, 7\n.endif\n" /* 20 */
         ".if 0\n.macro hidden\n.if 1\n.endm\n.endif\n",   /* a false branch skips a definition */
         &o);
    ck_assert_uint_eq(o.ntext, 21);
    ck_assert_int_eq(word(&o, 0).imm, 1);
    ck_assert_int_eq(word(&o, 1).imm, 5);
    ck_assert_int_eq(word(&o, 2).imm, 7);
    ck_assert_int_eq(word(&o, 2).rs1, 11);
    ck_assert_int_eq(word(&o, 3).op, ISA_OP_NOP);
    ck_assert_int_eq(word(&o, 5).imm, 0);     /* each L\@ is its own label */
    ck_assert_int_eq(word(&o, 6).imm, 0);
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(word(&o, 7 + (size_t)k).imm, k);
    ck_assert_int_eq(word(&o, 16).op, ISA_OP_NOP);
    ck_assert_int_eq(word(&o, 17).imm, 1);
    ck_assert_int_eq(word(&o, 18).imm, 4);
    ck_assert_int_eq(word(&o, 19).imm, 5);
    ck_assert_int_eq(word(&o, 20).imm, 6);
    asm_output_free(&o);
}
END_TEST

START_TEST(data_directives)
{
    asm_output o;
    must(".rodata\n"
         "a: .byte 1, -1, 255\n"
         ".half 0x1234\n"
         ".word -2\n"
         ".dword 0x0102030405060708\n"
         ".f32 0.1, -0.0\n"
         ".f16 1.5, 65504, 2049, 2051, inf, -inf\n"
         ".bf16 1.5, 3.0\n"
         ".e4m3 448, 0.5, -1.75\n"
         ".e5m2 57344, 1.0\n"
         ".ascii \"ab\"\n"
         ".asciz \"c\\n\"\n"
         ".align 8\n"
         "b: .zero 3\n"
         ".dword a\n"
         ".data\n"
         "d: .s16 -32768\n"
         ".bss\n"
         ".align 64\n"
         "z: .zero 100\n",
         &o);
    static const uint8_t want[] = {
        1, 0xff, 0xff, 0x34, 0x12, 0xfe, 0xff, 0xff, 0xff, 8, 7, 6, 5, 4, 3, 2, 1,
        0xcd, 0xcc, 0xcc, 0x3d, 0, 0, 0, 0x80,
        0x00, 0x3e, 0xff, 0x7b, 0x00, 0x68, 0x02, 0x68, 0x00, 0x7c, 0x00, 0xfc, /* 2049 -> 2048, 2051 -> 2052 */
        0xc0, 0x3f, 0x40, 0x40,
        0x7e, 0x30, 0xbe,
        0x7b, 0x3c,
        'a', 'b', 'c', '\n', 0,
    };
    const asm_data *r = &o.data[ASM_SEC_RODATA];
    ck_assert_uint_ge(r->size, sizeof want);
    for (size_t i = 0; i < sizeof want; i++)
        ck_assert_msg(r->bytes[i] == want[i], "rodata byte %zu: 0x%02x, want 0x%02x", i, r->bytes[i], want[i]);
    ck_assert_uint_eq(r->addr, ASM_GM_DATA_BASE);
    uint64_t boff = sym(&o, "b")->addr - r->addr;
    ck_assert_uint_eq(boff % 8, 0);
    ck_assert_uint_eq(boff, 56);
    uint64_t ptr = 0;
    for (int i = 7; i >= 0; i--)
        ptr = ptr << 8 | r->bytes[boff + 3 + (size_t)i];
    ck_assert_uint_eq(ptr, ASM_GM_DATA_BASE);
    ck_assert_uint_eq(o.data[ASM_SEC_DATA].bytes[1], 0x80);
    ck_assert_uint_gt(o.data[ASM_SEC_DATA].addr, r->addr + r->size - 1);
    const asm_data *z = &o.data[ASM_SEC_BSS];
    ck_assert_ptr_null(z->bytes);
    ck_assert_uint_eq(sym(&o, "z")->addr % 64, 0);
    ck_assert_uint_eq(sym(&o, "z")->size, 100);
    ck_assert_uint_eq(sym(&o, "a")->size, boff);  /* up to the next label */
    asm_output_free(&o);
}
END_TEST

START_TEST(symbols_types_sizes)
{
    asm_output o;
    must(".globl f, g\n.type f, @function\nf: nop\n.Lx: nop\n.size f, 16\n"
         "g: nop; nop; nop\nlocal_fn: nop\n"
         ".type local_fn, @function\n"
         ".rodata\n.globl tbl\ntbl: .word 1, 2\n.size tbl, . - tbl\n",
         &o);
    ck_assert_uint_eq(sym(&o, "f")->size, 16);
    ck_assert_int_eq(sym(&o, "f")->type, ASM_SYM_FUNC);
    ck_assert_uint_eq(sym(&o, "g")->size, 24);       /* up to local_fn, a function */
    ck_assert_int_eq(sym(&o, "local_fn")->type, ASM_SYM_FUNC);
    ck_assert(!sym(&o, "local_fn")->global);
    ck_assert_uint_eq(sym(&o, "tbl")->size, 8);
    ck_assert_int_eq(sym(&o, "tbl")->type, ASM_SYM_OBJECT);
    ck_assert_uint_eq(o.entry, 0);                   /* first global function */
    asm_output_free(&o);
    must("nop\n.globl _start\n_start: halt\n", &o);
    ck_assert_uint_eq(o.entry, 8);
    asm_output_free(&o);
}
END_TEST

START_TEST(comments_and_statements)
{
    asm_output o;
    must("# full line\n  nop # trailing\n nop // c++ style\n nop; nop ; nop\n"
         "li a0, ';'; li a1, '#'\n"
         ".rodata\n.ascii \"#not; a // comment\"\n",
         &o);
    ck_assert_uint_eq(o.ntext, 7);
    ck_assert_int_eq(word(&o, 5).imm, ';');
    ck_assert_int_eq(word(&o, 6).imm, '#');
    ck_assert_uint_eq(o.data[ASM_SEC_RODATA].size, 18);
    asm_output_free(&o);
}
END_TEST

START_TEST(defines_and_parametric)
{
    asm_define defs[] = {{"M", 4096}, {"TILE", 256}};
    asm_opts opts = {NULL, 0, defs, 2, 0};
    asm_output o;
    const char *src = ".ifndef M\n.equ M, 16\n.endif\n.ifndef TILE\n.equ TILE, 16\n.endif\n"
                      ".if M % TILE\n.error \"M must be a multiple of TILE\"\n.endif\n"
                      "li a0, M / TILE\n";
    ck_assert_int_eq(assemble(src, &o, &opts), NPU_OK);
    ck_assert_int_eq(word(&o, 0).imm, 16);
    asm_output_free(&o);
    defs[0].value = 1000;
    ck_assert_int_ne(assemble(src, &o, &opts), NPU_OK);
    ck_assert_str_eq(o.msgs[0].msg, "M must be a multiple of TILE");
    ck_assert_int_eq(o.msgs[0].line, 8);
    asm_output_free(&o);
    ck_assert_int_ne(assemble(".equ M, 3\n", &o, &opts), NPU_OK);
    ck_assert_ptr_nonnull(strstr(o.msgs[0].msg, "already defined by -D on the command line"));
    asm_output_free(&o);
    ck_assert_int_eq(assemble(src, &o, NULL), NPU_OK);  /* defaults from .ifndef */
    ck_assert_int_eq(word(&o, 0).imm, 1);
    asm_output_free(&o);
    char name[32];
    int64_t v;
    ck_assert_int_eq(asm_parse_define("N=1<<12", name, sizeof name, &v), 0);
    ck_assert_str_eq(name, "N");
    ck_assert_int_eq(v, 4096);
    ck_assert_int_eq(asm_parse_define("FLAG", name, sizeof name, &v), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_int_ne(asm_parse_define("=3", name, sizeof name, &v), 0);
    ck_assert_int_ne(asm_parse_define("N=abc", name, sizeof name, &v), 0);
    ck_assert_int_ne(asm_parse_define("N=1+", name, sizeof name, &v), 0);
}
END_TEST

/* .include with -I, and cycles. */
START_TEST(includes)
{
    char dir[] = "/tmp/npu-asm-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char p[256], sub[256];
    snprintf(sub, sizeof sub, "%s/inc", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    FILE *f;
    snprintf(p, sizeof p, "%s/inc/defs.inc", dir);
    f = fopen(p, "w");
    fputs(".equ K, 7\n.macro seven rd\n li \\rd, K\n.endm\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/main.s", dir);
    f = fopen(p, "w");
    fputs(".include \"defs.inc\"\nseven a0\n.include \"local.inc\"\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/local.inc", dir);
    f = fopen(p, "w");
    fputs("nop\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/cyc_a.s", dir);
    f = fopen(p, "w");
    fputs("nop\n.include \"cyc_b.s\"\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/cyc_b.s", dir);
    f = fopen(p, "w");
    fputs(".include \"cyc_a.s\"\n", f);
    fclose(f);

    const char *incs[] = {sub};
    asm_opts opts = {incs, 1, NULL, 0, 0};
    asm_output o;
    npu_diag d = {0};
    snprintf(p, sizeof p, "%s/main.s", dir);
    ck_assert_msg(asm_assemble_file(p, &opts, &o, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(o.ntext, 2);
    ck_assert_int_eq(word(&o, 0).imm, 7);
    asm_output_free(&o);
    /* without -I the include is not found, and the message says so */
    ck_assert_int_ne(asm_assemble_file(p, NULL, &o, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(o.msgs[0].msg, "defs.inc\": file not found"));
    ck_assert_int_eq(o.msgs[0].line, 1);
    /* and it is the only message: assembling stops there (the uses of
     * what the file defines are not reported as unknown) */
    ck_assert_uint_eq(o.nerrors, 1);
    ck_assert_uint_eq(o.nmsgs, 1);
    asm_output_free(&o);
    snprintf(p, sizeof p, "%s/cyc_a.s", dir);
    ck_assert_int_ne(asm_assemble_file(p, NULL, &o, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(o.msgs[0].msg, ".include cycle"));
    ck_assert_ptr_nonnull(strstr(o.msgs[0].file, "cyc_b.s"));
    asm_output_free(&o);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The value a li / li+lih sequence at word *i leaves in its register. */
static uint64_t loaded(const asm_output *o, size_t *i)
{
    isa_insn li = word(o, (*i)++);
    ck_assert_int_eq(li.op, ISA_OP_LI);
    uint64_t v = (uint64_t)li.imm;
    if (*i < o->ntext) {
        isa_insn h = word(o, *i);
        if (h.op == ISA_OP_LIH && h.rd == li.rd) {
            v = (v & 0x0000ffffffffffffull) | ((uint64_t)h.imm << 48);
            (*i)++;
        }
    }
    return v;
}

/* kernels/include/npu.inc builds the same words as the ISA_* macros. */
START_TEST(npu_inc_macros)
{
    const char *incs[] = {"kernels/include"};
    asm_opts opts = {incs, 1, NULL, 0, 0};
    asm_output o;
    const char *src = ".include \"npu.inc\"\n.include \"npu.inc\"\n"  /* include guard */
                      "dmacfg a0, 17, 4096\n"
                      "dmacfg a0, 65535, 0xffffffff\n"
                      "dmastride a1, 512, 96\n"
                      "mmcfg a2, 16, 256, 48\n"
                      "mmcfg a2, 16, 256, 48, init=0\n"
                      "vcfg a3, 255, 1, 2, 3, 8, 9, 10\n"
                      "vcfg a3, 4\n";
    npu_diag d = {0};
    ck_assert_msg(asm_assemble_mem(src, strlen(src), "inc.s", &opts, &o, &d) == NPU_OK, "%s", d.msg);
    size_t i = 0;
    ck_assert_uint_eq(loaded(&o, &i), ISA_DMA_CFG(17, 4096));
    ck_assert_uint_eq(loaded(&o, &i), ISA_DMA_CFG(65535, 0xffffffffu));
    ck_assert_uint_eq(loaded(&o, &i), ISA_DMA_STRIDES(512, 96));
    ck_assert_uint_eq(loaded(&o, &i), ISA_MM_CFG(16, 256, 48, 1));
    ck_assert_uint_eq(loaded(&o, &i), ISA_MM_CFG(16, 256, 48, 0));
    ck_assert_uint_eq(loaded(&o, &i), ISA_VCFG(255, 1, 2, 3, 8, 9, 10));
    ck_assert_uint_eq(loaded(&o, &i), ISA_VCFG(4, 1, 1, 1, 8, 8, 8));
    ck_assert_uint_eq(i, o.ntext);
    asm_output_free(&o);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

START_TEST(error_classes)
{
    FAILS_WITH("  frob a0\n", "unknown mnemonic 'frob'", 1, 3);
    FAILS_WITH("nop\n  add a0, a1, 5\n", "expected a register for rs2", 2, 15);
    FAILS_WITH("addi a0, a1, 70000000000\n", "immediate 70000000000 out of range -2147483648..2147483647", 1, 14);
    FAILS_WITH("lih a0, 70000\n", "immediate 70000 out of range 0..65535", 1, 9);
    FAILS_WITH("slli a0, a0, 64\n", "out of range 0..63", 1, 14);
    FAILS_WITH("li a0, 1 << 50\n", "use li64", 1, 8);
    FAILS_WITH("j nowhere\n", "undefined symbol 'nowhere'", 1, 3); /* pseudo: at the operand */
    FAILS_WITH("bnez a0, 1b\n", "undefined local label 1b", 1, 10);
    FAILS_WITH("x: nop\nx: nop\n", "duplicate label 'x' (first defined at t.s:1)", 2, 1);
    FAILS_WITH("  .frob 1\n", "unknown directive '.frob'", 1, 3);
    FAILS_WITH("vadd.f64 a0, a1, a2, a3\n", "bad dtype suffix .f64", 1, 6);
    FAILS_WITH("vdiv.s32 a0, a1, a2, a3\n", "dtype .s32 is not legal for vdiv (legal: f32 f16)", 1, 6);
    FAILS_WITH("vadd a0, a1, a2, a3\n", "vadd needs a dtype suffix", 1, 1);
    FAILS_WITH("mmad.f16 a0, a1, a2, a3\n", "needs two dtype suffixes", 1, 1);
    FAILS_WITH("vconv.rz.ru.f32.f16 a0, a1, a2\n", "conflicts", 1, 10);
    FAILS_WITH("add.f16 a0, a1, a2\n", "add takes no dtype suffix", 1, 5);
    FAILS_WITH("vadd.relu.f16 a0, a1, a2, a3\n", "bad dtype suffix .relu", 1, 6);
    FAILS_WITH("add a0, a1\n", "too few operands", 1, 11);
    FAILS_WITH("add a0, a1, a2, a3\n", "too many operands", 1, 15);
    FAILS_WITH("set_flag V, V, 1\n", "must differ", 1, 10);
    FAILS_WITH("set_flag V, ALL, 1\n", "expected a pipe", 1, 13);
    FAILS_WITH("set_flag V, S, 9\n", "flag id 9 out of range 0..7", 1, 16);
    FAILS_WITH("mtsr coreid, a0\n", "read-only", 1, 6);
    FAILS_WITH("mfsr a0, bogus\n", "expected a special register", 1, 10);
    FAILS_WITH(".macro m\nnop\n", "unterminated .macro m", 1, 1);
    FAILS_WITH("nop\n.rept 3\nnop\n", "unterminated .rept", 2, 1);
    FAILS_WITH(".if 1\nnop\n", "unterminated .if", 1, 1);
    FAILS_WITH(".endif\n", ".endif without .if", 1, 1);
    FAILS_WITH(".if 1\n.else\n.else\n.endif\n", "after .else", 3, 1);
    FAILS_WITH(".endm\n", ".endm without .macro", 1, 1);
    FAILS_WITH(".rept N\nnop\n.endr\n", "'N' is not defined yet", 1, 7);
    FAILS_WITH(".equ A, 1\n.equ A, 2\n", "'A' is already defined", 2, 6);
    FAILS_WITH(".equ A, B\n.equ B, A\nli a0, A\n", "defined in terms of itself", 3, 0);
    FAILS_WITH("li a0, 1 / 0\n", "division by zero", 1, 8);
    FAILS_WITH("li a0, (1 + 2\n", "expected ')'", 1, 14);
    FAILS_WITH("li a0, 0x\n", "expected digits", 1, 8);
    FAILS_WITH("li a0, 99999999999999999999\n", "does not fit in 64 bits", 1, 8);
    FAILS_WITH(".rodata\nnop\n", "outside .text", 2, 1);
    FAILS_WITH(".word 1\n", ".text holds instructions only", 1, 1);
    FAILS_WITH(".rodata\n.byte 256\n", "does not fit in 1 byte (range -128..255)", 2, 7);
    FAILS_WITH(".rodata\n.f16 70000\n", "overflows f16", 2, 6);
    FAILS_WITH(".rodata\n.e4m3 inf\n", "overflows e4m3", 2, 7);
    FAILS_WITH(".bss\n.word 1\n", ".bss holds no initialised data", 2, 1);
    FAILS_WITH(".rodata\n.ascii \"abc\n", "unterminated string", 2, 8);
    FAILS_WITH(".macro m a\n.endm\nm 1, 2\n", "takes 1 argument", 3, 6);
    FAILS_WITH(".macro m a\n.endm\nm\n", "missing argument 'a'", 3, 1);
    FAILS_WITH(".macro m a\n.endm\nm b=1\n", "no parameter 'b'", 3, 3);
    FAILS_WITH(".globl nothing\n", "never defined", 1, 1);
    FAILS_WITH(".align 3\n", "power of two", 1, 8);
    FAILS_WITH(".include \"/nonexistent/x.inc\"\n", "file not found", 1, 10);
    FAILS_WITH("mv a0\n", "mv: expected 2 operands", 1, 0);
    FAILS_WITH("la a0, nowhere\n", "undefined symbol 'nowhere'", 1, 8);
    FAILS_WITH("li64 a0, 1 / 0\n", "division by zero", 1, 10);
    FAILS_WITH("bgt a0, q1, x\nx:\n", "expected a register", 1, 9);
    FAILS_WITH(".section .weird\n", "unknown section", 1, 10);
    FAILS_WITH(".error \"stop here\"\n", "stop here", 1, 1);
}
END_TEST

/* An error inside a macro says where the macro was called. */
START_TEST(error_in_macro)
{
    asm_output o;
    const asm_msg *m = fails(".macro bad\n  addi a0, a0, 1 << 40\n.endm\nnop\nbad\n", &o, 1);
    ck_assert_int_eq(m->line, 2);
    ck_assert_ptr_nonnull(strstr(m->msg, "in macro 'bad' called at t.s:5"));
    ck_assert_str_eq(m->src, "  addi a0, a0, 1 << 40");
    npu_buf b = {0};
    asm_msg_format(m, &b);
    npu_buf_append(&b, "", 1);
    ck_assert_msg(strstr((char *)b.data, "t.s:2:16: error: immediate") == (char *)b.data, "%s", b.data);
    ck_assert_ptr_nonnull(strstr((char *)b.data, "\n    addi a0, a0, 1 << 40\n                 ^\n"));
    npu_buf_free(&b);
    asm_output_free(&o);
}
END_TEST

/* Every error of a file is reported (up to the limit), not just the first. */
START_TEST(all_errors_reported)
{
    asm_output o;
    fails("frob\nnop\nadd a0\nj nowhere\n.frob\nvadd.f64 a0, a1, a2, a3\n", &o, 5);
    int lines[] = {1, 3, 5, 6, 4};  /* undefined symbols come from the final pass */
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(o.msgs[i].line, lines[i]);
    asm_output_free(&o);
    npu_buf src = {0};
    for (int i = 0; i < 80; i++)
        npu_buf_printf(&src, "bogus%d\n", i);
    npu_buf_append(&src, "", 1);
    ck_assert_int_ne(assemble((char *)src.data, &o, NULL), NPU_OK);
    ck_assert_uint_eq(o.nerrors, ASM_MAX_ERRORS);
    ck_assert_str_eq(o.msgs[o.nmsgs - 1].msg, "too many errors, stopping");
    asm_output_free(&o);
    npu_buf_free(&src);
}
END_TEST

START_TEST(runaway_guards)
{
    asm_output o;
    const asm_msg *m = fails(".macro r\n r\n.endm\nr\n", &o, 1);
    ck_assert_ptr_nonnull(strstr(m->msg, "nested deeper than"));
    asm_output_free(&o);
    m = fails(".rept 1000\n.rept 1001\n.set x, 1\n.endr\n.endr\n", &o, 1);
    ck_assert_ptr_nonnull(strstr(m->msg, "lines after expansion"));
    asm_output_free(&o);
    m = fails(".rept 2000000\nnop\n.endr\n", &o, 1);
    ck_assert_ptr_nonnull(strstr(m->msg, ".rept count 2000000 out of range"));
    asm_output_free(&o);
}
END_TEST

/* Hostile bytes never crash the assembler. */
START_TEST(garbage_input)
{
    npu_rng r = {7};
    const char alphabet[] = "abcx0123456789 ,.:;()#\"'\\\n+-*/<>=!?~&|^@$_\tLfb";
    for (int k = 0; k < 300; k++) {
        char buf[256];
        size_t n = npu_rng_next(&r) % (sizeof buf - 1);
        for (size_t i = 0; i < n; i++)
            buf[i] = alphabet[npu_rng_next(&r) % (sizeof alphabet - 1)];
        buf[n] = 0;
        asm_output o;
        npu_diag d = {0};
        asm_assemble_mem(buf, n, "fuzz.s", NULL, &o, &d);
        asm_output_free(&o);
    }
    /* mutations of a valid kernel that uses every feature */
    static const char base[] =
        ".macro m a, b=2\n addi \\a, \\a, \\b\n1: bnez \\a, 1b\n.endm\n"
        ".equ N, 8\n.set i, 0\n.globl main\n.type main, @function\nmain:\n"
        ".rept N / 2\n m a0, i\n .set i, i + 1\n.endr\n"
        ".if N > 4\n li64 t0, 0x123456789\n.else\n nop\n.endif\n"
        "la a1, tab; ld a2, 8(a1); mov.gm2l1.nd2nz.f16 a0, a1, a2, a3\n"
        "vconv.rz.f32.s32 a0, a1, a2; set_flag MTE2, V, 1; j .Lend\n.Lend: halt\n"
        ".size main, . - main\n.rodata\ntab: .f16 1.5, -2; .word tab - .; .asciz \"x;#y\"\n"
        ".bss\n.zero 16\n";
    for (int k = 0; k < 2000; k++) {
        char buf[sizeof base];
        memcpy(buf, base, sizeof base);
        int nmut = 1 + (int)(npu_rng_next(&r) % 4);
        for (int j = 0; j < nmut; j++)
            buf[npu_rng_next(&r) % (sizeof base - 1)] = alphabet[npu_rng_next(&r) % (sizeof alphabet - 1)];
        asm_output o;
        npu_diag d = {0};
        asm_assemble_mem(buf, sizeof base - 1, "mut.s", NULL, &o, &d);
        for (size_t i = 0; i < o.nmsgs; i++)
            ck_assert_ptr_nonnull(o.msgs[i].msg);
        asm_output_free(&o);
    }
    asm_output o;
    npu_diag d = {0};
    ck_assert_int_eq(asm_assemble_mem(base, sizeof base - 1, "base.s", NULL, &o, &d), NPU_OK);
    asm_output_free(&o);
    ck_assert_int_ne(asm_assemble_mem("nop\0nop", 7, "nul.s", NULL, &o, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(o.msgs[0].msg, "NUL"));
    asm_output_free(&o);
}
END_TEST

/* Every allocation failure is reported as ENOMEM (or the run succeeds),
 * never a crash or a leak. */
START_TEST(allocation_failures)
{
    const char *src = ".macro m a\n addi a0, a0, \\a\n.endm\n.rept 3\nm 1\n.endr\nj 1f\n1: nop\n"
                      ".rodata\nt: .f16 1.5\n.dword t\n";
    for (long n = 1;; n++) {
        npu_alloc_fail_after(n);
        asm_output o;
        npu_diag d = {0};
        npu_status s = asm_assemble_mem(src, strlen(src), "t.s", NULL, &o, &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        asm_output_free(&o);
        if (!failed) {
            ck_assert_int_eq(s, NPU_OK);
            break;
        }
        ck_assert_msg(s != NPU_OK, "allocation %ld failed but the call succeeded", n);
        ck_assert_int_lt(n, 100000);
    }
}
END_TEST

Suite *asm_suite(void)
{
    Suite *s = suite_create("asm");
    TCase *t = tcase_create("asm");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, every_row_roundtrips);
    tcase_add_test(t, pseudo_names_unique);
    tcase_add_test(t, expressions);
    tcase_add_test(t, labels_and_branches);
    tcase_add_test(t, suffixes_and_operands);
    tcase_add_test(t, pseudo_instructions);
    tcase_add_test(t, macros_rept_if);
    tcase_add_test(t, data_directives);
    tcase_add_test(t, symbols_types_sizes);
    tcase_add_test(t, comments_and_statements);
    tcase_add_test(t, defines_and_parametric);
    tcase_add_test(t, includes);
    tcase_add_test(t, npu_inc_macros);
    tcase_add_test(t, error_classes);
    tcase_add_test(t, error_in_macro);
    tcase_add_test(t, all_errors_reported);
    tcase_add_test(t, runaway_guards);
    tcase_add_test(t, garbage_input);
    tcase_add_test(t, allocation_failures);
    suite_add_tcase(s, t);
    return s;
}
