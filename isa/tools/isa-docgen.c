/* isa-docgen — print docs/isa.md from the ISA tables (the isa/ .def files).
 *
 *   isa-docgen > docs/isa.md
 *
 * Everything here is a walk over a table; nothing about a single
 * instruction is written by hand, so the document cannot drift from the
 * encoder. tests/e2e/t_isa_docs.sh fails when the committed copy is stale. */
#include <stdio.h>
#include <string.h>

#include "isa/isa.h"

typedef struct pseudo { const char *name, *operands, *expansion, *doc; } pseudo;
static const pseudo pseudos[] = {
#define PSEUDO(name, ops, exp, doc) {#name, ops, exp, doc},
#include "frontend/asm_pseudo.def"
#undef PSEUDO
};

static const char *const dt_docs[] = {
#define DT(id, suffix, bytes, kind, descr, doc) doc,
#include "isa/dtypes.def"
#undef DT
};
static const char *const pipe_docs[] = {
#define PIPE(id, name, doc) doc,
#include "isa/pipes.def"
#undef PIPE
};
static const struct { const char *name, *doc; } stalls[] = {
#define STALL(id, name, doc) {name, doc},
#include "isa/stalls.def"
#undef STALL
};
static const char *const field_docs[] = {
#define FIELD(id, lsb, width, sgn, doc) doc,
#include "isa/fields.def"
#undef FIELD
};
static const char *const cost_names[] = {
#define X(c) #c,
    ISA_COST_LIST(X)
#undef X
};

/* Table cells: '|' would end the cell. */
static void md(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s);
    }
}

static void dtypes(uint32_t m)
{
    int first = 1;
    for (int i = 0; i < ISA_DT_COUNT; i++)
        if (m & (1u << i)) {
            printf("%s%s", first ? "" : " ", isa_dtype_suffix(i));
            first = 0;
        }
    if (first)
        printf("-");
}

static const char *pipe_col(int p)
{
    switch (p) {
    case ISA_PIPE_SPIPE: return "spipe operand";
    case ISA_PIPE_DPIPE: return "dpipe operand";
    case ISA_PIPE_BPIPE: return "pipe operand (ALL: S)";
    default: return isa_pipe_name(p);
    }
}

static void flags(uint32_t f)
{
    static const struct { uint32_t bit; const char *name; } fl[] = {
        {ISA_F_END, "end"}, {ISA_F_BRANCH, "branch"}, {ISA_F_JUMP, "jump"}, {ISA_F_LOAD, "load"},
        {ISA_F_STORE, "store"}, {ISA_F_GM, "gm"}, {ISA_F_SYNC, "sync"}, {ISA_F_SHAMT, "shamt"},
        {ISA_F_DTOPT, "dtype optional"},
    };
    int first = 1;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (f & fl[i].bit) {
            printf("%s%s", first ? "" : ", ", fl[i].name);
            first = 0;
        }
    if (first)
        printf("-");
}

static void field_list(uint32_t fm)
{
    int first = 1;
    for (int i = 0; i < ISA_FLD_COUNT; i++)
        if (fm & (1u << i)) {
            const char *nm;
            int lsb, w, sg;
            isa_field_info((isa_field)i, &nm, &lsb, &w, &sg);
            printf("%s%s[%d:%d]", first ? "" : " ", nm, lsb + w - 1, lsb);
            first = 0;
        }
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: isa-docgen > docs/isa.md\n");
        return 2;
    }
    printf("<!-- generated from isa/*.def by isa/tools/isa-docgen — do not edit; run `make docs` -->\n");
    printf("# The NPU instruction set\n\n");
    printf("Every instruction is one 64-bit little-endian word; the program counter is the\n"
           "byte address of the word (8 per instruction, `.text` starts at 0). Bits a format\n"
           "does not use must be zero, and an all-zero word is illegal (opcode 0x00 is\n"
           "unassigned). %d instructions in %d formats.\n\n",
           ISA_OP_COUNT - 1, ISA_FMT_COUNT);
    printf("Assembler syntax: `mnemonic[.suffix...] operands`; suffixes are dtypes and\n"
           "modifier tokens, in any order (the first dtype is the source/input type, the\n"
           "second the destination/accumulator type). See docs/asm.md.\n\n");

    printf("## Bit fields\n\n| field | bits | signed | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < ISA_FLD_COUNT; i++) {
        const char *nm;
        int lsb, w, sg;
        isa_field_info((isa_field)i, &nm, &lsb, &w, &sg);
        printf("| %s | %d:%d | %s | %s |\n", nm, lsb + w - 1, lsb, sg ? "yes" : "no", field_docs[i]);
    }

    printf("\n## Formats\n\nOperand tokens: `rd rs1..rs4` scalar registers; `imm32 imm48 imm16` integer\n"
           "expressions; `off(rs1)` a memory operand; `label` a pc-relative target (stored as\n"
           "target - pc in IMM32); `spipe dpipe pipe` pipe names; `fid` a flag id 0..7;\n"
           "`sreg` a special register. Suffix letters: `d` a dtype, `dd` two dtypes, `m`\n"
           "modifier tokens of the row's class.\n\n");
    printf("| format | operands | suffixes | fields | meaning |\n|---|---|---|---|---|\n");
    for (int f = 0; f < ISA_FMT_COUNT; f++) {
        printf("| %s | `%s` | %s | ", isa_fmt_name((isa_fmt)f), isa_fmt_syntax((isa_fmt)f),
               *isa_fmt_suffixes((isa_fmt)f) ? isa_fmt_suffixes((isa_fmt)f) : "-");
        field_list(isa_fmt_fields((isa_fmt)f));
        printf(" | %s |\n", isa_fmt_doc((isa_fmt)f));
    }

    printf("\n## Instructions\n\nIn table order (isa/isa.def). *dtypes*: legal values of the first dtype\n"
           "suffix (DT); *dtypes2*: of the second (DT2). *cost*: the timing model's cost class.\n\n");
    printf("| mnemonic | opcode | operands | pipe | dtypes | dtypes2 | modifiers | cost | flags | description |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int op = 1; op < ISA_OP_COUNT; op++) {
        const isa_info *ii = isa_info_of((isa_op)op);
        printf("| `%s` | 0x%02x | `%s` | %s | ", ii->mnemonic, ii->opcode, isa_fmt_syntax(ii->fmt),
               pipe_col(ii->pipe));
        dtypes(ii->dtypes);
        printf(" | ");
        dtypes(ii->dtypes2);
        printf(" | ");
        if (ii->modclass == ISA_MC_NOMOD) {
            printf("-");
        } else {
            for (int k = 0;; k++) {
                const char *t = isa_mod_token(ii->modclass, k, NULL, NULL, NULL);
                if (!t)
                    break;
                printf("%s.%s", k ? " " : "", t);
            }
        }
        printf(" | %s | ", cost_names[ii->cost]);
        flags(ii->flags);
        printf(" | ");
        md(ii->doc);
        printf(" |\n");
    }

    printf("\n## Modifiers\n\nA suffix token sets (MOD & mask) = value. Without a token of a group, the\n"
           "group is 0 (no transform, round to nearest even, no saturation).\n\n");
    printf("| class | token | value | mask | meaning |\n|---|---|---|---|---|\n");
    for (int mc = 1; mc < ISA_MC_COUNT; mc++)
        for (int k = 0;; k++) {
            int v, m;
            const char *doc;
            const char *t = isa_mod_token((isa_modclass)mc, k, &v, &m, &doc);
            if (!t)
                break;
        {
            printf("| %s | `.%s` | %d | 0x%x | ", isa_modclass_name((isa_modclass)mc), t, v, m);
            md(doc);
            printf(" |\n");
        }
        }

    printf("\n## Data types\n\n| DT value | suffix | bytes | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < ISA_DT_COUNT; i++)
    {
        printf("| %d | `.%s` | %d | ", i, isa_dtype_suffix(i), isa_dtype_bytes(i));
        md(dt_docs[i]);
        printf(" |\n");
    }

    printf("\n## Pipes\n\n| value | name | role |\n|---|---|---|\n");
    for (int i = 0; i < ISA_PIPE_COUNT; i++)
        printf("| %d | %s | %s |\n", i, isa_pipe_name(i), pipe_docs[i]);

    printf("\n## Stall causes\n\nWhy a pipe waited (`isa/stalls.def`): the cause ids and names of "
           "traces, the timing statistics and deadlock reports; the counters' `pipe.P.stall.*` rows.\n\n"
           "| id | name | meaning |\n|---|---|---|\n");
    for (size_t i = 0; i < sizeof stalls / sizeof stalls[0]; i++)
        printf("| %zu | `%s` | %s |\n", i, stalls[i].name, stalls[i].doc);

    printf("\n## Special registers\n\n| number | name | access | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < isa_sreg_count(); i++) {
        const char *nm, *doc;
        int num, wr;
        isa_sreg_at(i, &nm, &num, &wr, &doc);
        printf("| 0x%03x | `%s` | %s | %s |\n", num, nm, wr ? "RW" : "R", doc);
    }

    printf("\n## Scalar registers\n\n`x0`..`x31`, 64 bits; `x0` reads as zero and ignores writes. ABI names:\n\n"
           "| register | ABI name |\n|---|---|\n");
    for (int r = 0; r < 32; r++)
        printf("| x%d | `%s`%s |\n", r, isa_reg_name(r), r == 8 ? " (also `fp`)" : "");

    printf("\n## Packed configuration registers\n\nDMA, img2col, FIX, cube and vector instructions take their parameters\n"
           "from scalar registers packed as below (isa/cfgregs.def; `ISA_*` macros in\n"
           "isa/isa.h and the macros of kernels/include/npu.inc build them).\n");
    for (int i = 0;; i++) {
        const char *operand, *doc;
        const char *id = isa_cfg_reg(i, &operand, &doc);
        if (!id)
            break;
        printf("\n### %s — %s\n\n%s.\n\n| bits | field | meaning |\n|---|---|---|\n", id, operand, doc);
        for (int k = 0; isa_cfg_field(k); k++) {
            const isa_cfgfield *f = isa_cfg_field(k);
            if (!strcmp(f->reg, id))
                printf("| %d:%d | %s | %s |\n", f->lsb + f->width - 1, f->lsb, f->name, f->doc);
        }
    }

    printf("\n## Pseudo-instructions\n\nExpanded by the assembler (frontend/asm_pseudo.def); always the same number\n"
           "of instructions.\n\n| pseudo | operands | expansion | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof pseudos / sizeof pseudos[0]; i++)
    {
        printf("| `%s` | `%s` | `", pseudos[i].name, pseudos[i].operands);
        md(pseudos[i].expansion);
        printf("` | ");
        md(pseudos[i].doc);
        printf(" |\n");
    }
    return 0;
}
