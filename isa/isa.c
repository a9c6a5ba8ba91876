/* isa.c — the expansions of the instruction table: metadata, encoder,
 * decoder (with the legality check) and disassembler. Nothing here knows any
 * single instruction; everything comes from the isa/ .def tables. */
#include "isa/isa.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const isa_info infos[ISA_OP_COUNT] = {
    [ISA_OP_INVALID] = {"(invalid)", 0, ISA_FMT_NONE, ISA_PIPE_S, ISA_COST_SYS, 0, 0, ISA_MC_NOMOD, 0, ""},
#define DEF(id, mn, opc, fmt, pipe, cost, dts, dts2, mc, flags, doc) \
    [ISA_OP_##id] = {mn, opc, ISA_FMT_##fmt, ISA_PIPE_##pipe, ISA_COST_##cost, dts, dts2, ISA_MC_##mc, flags, doc},
#include "isa/isa.def"
#undef DEF
};

/* Opcode -> op, built as a constant table by the compiler: the designated
 * initialisers place each row at its opcode. Duplicate opcodes are caught by
 * the table test (and by -Woverride-init being an error under -Wextra). */
static const uint8_t op_by_opcode[256] = {
#define DEF(id, mn, opc, fmt, pipe, cost, dts, dts2, mc, flags, doc) [opc] = ISA_OP_##id,
#include "isa/isa.def"
#undef DEF
};

typedef struct field_desc { const char *name; int lsb, width, sgn; } field_desc;
static const field_desc fields[ISA_FLD_COUNT] = {
#define FIELD(id, lsb, width, sgn, doc) [ISA_FLD_##id] = {#id, lsb, width, sgn},
#include "isa/fields.def"
#undef FIELD
};

typedef struct fmt_desc { const char *name, *syntax, *suffixes, *doc; } fmt_desc;
static const fmt_desc fmts[ISA_FMT_COUNT] = {
#define FMT(id, syntax, suffixes, doc) [ISA_FMT_##id] = {#id, syntax, suffixes, doc},
#include "isa/formats.def"
#undef FMT
};

typedef struct mod_desc { isa_modclass mc; const char *tok; int value, mask; const char *doc; } mod_desc;
static const mod_desc mods[] = {
#define MOD(mc, tok, value, mask, doc) {ISA_MC_##mc, tok, value, mask, doc},
#include "isa/mods.def"
#undef MOD
};

typedef struct sreg_desc { const char *name; int num, rw; const char *doc; } sreg_desc;
#define R 0
#define RW 1
static const sreg_desc sregs[] = {
#define SREG(id, name, num, acc, doc) {name, num, acc, doc},
#include "isa/sregs.def"
#undef SREG
};
#undef R
#undef RW

typedef struct dt_desc { const char *suffix; int bytes; char kind; } dt_desc;
static const dt_desc dts[ISA_DT_COUNT] = {
#define DT(id, suffix, bytes, kind, descr, doc) [ISA_DT_##id] = {suffix, bytes, kind},
#include "isa/dtypes.def"
#undef DT
};

static const char *const pipe_names[] = {
#define PIPE(id, name, doc) name,
#include "isa/pipes.def"
#undef PIPE
};

static const char *const reg_abi[32] = {
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};

static const char *const modclass_names[ISA_MC_COUNT] = {"none", "xform", "fix", "round", "cmp"};

/* ---- metadata ------------------------------------------------------------ */

const isa_info *isa_info_of(isa_op op)
{
    if (op <= ISA_OP_INVALID || op >= ISA_OP_COUNT)
        return NULL;
    return &infos[op];
}

isa_op isa_op_from_mnemonic(const char *mn)
{
    for (int i = 1; i < ISA_OP_COUNT; i++)
        if (strcmp(infos[i].mnemonic, mn) == 0)
            return (isa_op)i;
    return ISA_OP_INVALID;
}

isa_op isa_op_from_opcode(uint8_t opcode) { return (isa_op)op_by_opcode[opcode]; }

const char *isa_fmt_syntax(isa_fmt f) { return f < ISA_FMT_COUNT ? fmts[f].syntax : ""; }
const char *isa_fmt_suffixes(isa_fmt f) { return f < ISA_FMT_COUNT ? fmts[f].suffixes : ""; }
const char *isa_fmt_name(isa_fmt f) { return f < ISA_FMT_COUNT ? fmts[f].name : "?"; }
const char *isa_fmt_doc(isa_fmt f) { return f < ISA_FMT_COUNT ? fmts[f].doc : ""; }

void isa_field_info(isa_field f, const char **name, int *lsb, int *width, int *is_signed)
{
    const field_desc *fd = &fields[f < ISA_FLD_COUNT ? f : 0];
    if (name) *name = fd->name;
    if (lsb) *lsb = fd->lsb;
    if (width) *width = fd->width;
    if (is_signed) *is_signed = fd->sgn;
}

/* The fields of a format: derived from its syntax tokens and suffix letters,
 * so that formats.def stays the only description. */
uint32_t isa_fmt_fields(isa_fmt f)
{
    if (f >= ISA_FMT_COUNT)
        return 0;
    uint32_t m = 1u << ISA_FLD_OPC;
    const char *s = fmts[f].syntax;
    /* Matched by length and bytes in place (no copy, no strcmp per table
     * row): the decoder and assembler call this once per instruction. */
#define TOK(t, fld) {t, sizeof t - 1, fld}
    static const struct { const char *tok; unsigned char len; unsigned char fld; } toks[] = {
        TOK("rd", ISA_FLD_RD), TOK("rs1", ISA_FLD_RS1), TOK("rs2", ISA_FLD_RS2),
        TOK("rs3", ISA_FLD_RS3), TOK("rs4", ISA_FLD_RS4), TOK("imm32", ISA_FLD_IMM32),
        TOK("imm48", ISA_FLD_IMM48), TOK("imm16", ISA_FLD_IMM16), TOK("label", ISA_FLD_IMM32),
        TOK("spipe", ISA_FLD_SPIPE), TOK("dpipe", ISA_FLD_DPIPE), TOK("pipe", ISA_FLD_PIPE),
        TOK("fid", ISA_FLD_FID), TOK("sreg", ISA_FLD_SREG), TOK("off", ISA_FLD_IMM32),
    };
#undef TOK
    for (;;) {
        while (*s == ' ' || *s == ',' || *s == '(' || *s == ')')
            s++;
        if (!*s)
            break;
        const char *t = s;
        while (*s && *s != ' ' && *s != ',' && *s != '(' && *s != ')')
            s++;
        size_t n = (size_t)(s - t);
        for (size_t i = 0; i < NPU_ARRAY_LEN(toks); i++)
            if (toks[i].len == n && toks[i].tok[0] == t[0] && memcmp(toks[i].tok, t, n) == 0) {
                m |= 1u << toks[i].fld;
                break;
            }
    }
    for (const char *p = fmts[f].suffixes; *p; p++) {
        if (*p == 'm')
            m |= 1u << ISA_FLD_MOD;
        else if (*p == 'd')
            m |= (m & (1u << ISA_FLD_DT)) ? 1u << ISA_FLD_DT2 : 1u << ISA_FLD_DT;
    }
    return m;
}

const char *isa_pipe_name(int pipe)
{
    if (pipe < 0 || pipe >= ISA_PIPE_COUNT)
        return "?";
    return pipe_names[pipe];
}

int isa_pipe_from_name(const char *name)
{
    for (int i = 0; i < ISA_PIPE_COUNT; i++)
        if (strcasecmp(pipe_names[i], name) == 0)
            return i;
    return -1;
}

isa_pipe isa_insn_pipe(const isa_insn *in)
{
    const isa_info *ii = isa_info_of(in->op);
    if (!ii)
        return ISA_PIPE_S;
    switch (ii->pipe) {
    case ISA_PIPE_SPIPE: return (isa_pipe)in->spipe;
    case ISA_PIPE_DPIPE: return (isa_pipe)in->dpipe;
    case ISA_PIPE_BPIPE: return in->pipe == ISA_PIPE_ALL ? ISA_PIPE_S : (isa_pipe)in->pipe;
    default: return (isa_pipe)ii->pipe;
    }
}

const char *isa_dtype_suffix(int dt) { return dt >= 0 && dt < ISA_DT_COUNT ? dts[dt].suffix : "?"; }
int isa_dtype_bytes(int dt) { return dt >= 0 && dt < ISA_DT_COUNT ? dts[dt].bytes : 0; }
int isa_dtype_kind(int dt) { return dt >= 0 && dt < ISA_DT_COUNT ? dts[dt].kind : 0; }

int isa_vrep_elems(int dt, int dt2)
{
    int w = isa_dtype_bytes(dt), w2 = isa_dtype_bytes(dt2);
    if (w2 > w) w = w2;
    return w > 0 ? ISA_VREP_BYTES / w : 0;
}

int isa_dtype_from_suffix(const char *s)
{
    for (int i = 0; i < ISA_DT_COUNT; i++)
        if (strcmp(dts[i].suffix, s) == 0)
            return i;
    return -1;
}

const char *isa_mod_token(isa_modclass mc, int i, int *value, int *mask, const char **doc)
{
    int k = 0;
    for (size_t j = 0; j < NPU_ARRAY_LEN(mods); j++) {
        if (mods[j].mc != mc)
            continue;
        if (k++ == i) {
            if (value) *value = mods[j].value;
            if (mask) *mask = mods[j].mask;
            if (doc) *doc = mods[j].doc;
            return mods[j].tok;
        }
    }
    return NULL;
}

int isa_mod_lookup(isa_modclass mc, const char *tok, int *value, int *mask)
{
    for (size_t j = 0; j < NPU_ARRAY_LEN(mods); j++)
        if (mods[j].mc == mc && strcmp(mods[j].tok, tok) == 0) {
            *value = mods[j].value;
            *mask = mods[j].mask;
            return 0;
        }
    return -1;
}

const char *isa_modclass_name(isa_modclass mc) { return mc < ISA_MC_COUNT ? modclass_names[mc] : "?"; }

int isa_sreg_from_name(const char *name)
{
    for (size_t i = 0; i < NPU_ARRAY_LEN(sregs); i++)
        if (strcasecmp(sregs[i].name, name) == 0)
            return sregs[i].num;
    return -1;
}

const char *isa_sreg_name(int num)
{
    for (size_t i = 0; i < NPU_ARRAY_LEN(sregs); i++)
        if (sregs[i].num == num)
            return sregs[i].name;
    return NULL;
}

int isa_sreg_writable(int num)
{
    for (size_t i = 0; i < NPU_ARRAY_LEN(sregs); i++)
        if (sregs[i].num == num)
            return sregs[i].rw;
    return 0;
}

int isa_sreg_count(void) { return (int)NPU_ARRAY_LEN(sregs); }

void isa_sreg_at(int i, const char **name, int *num, int *writable, const char **doc)
{
    const sreg_desc *s = &sregs[i >= 0 && i < (int)NPU_ARRAY_LEN(sregs) ? i : 0];
    if (name) *name = s->name;
    if (num) *num = s->num;
    if (writable) *writable = s->rw;
    if (doc) *doc = s->doc;
}

const char *isa_reg_name(int r) { return r >= 0 && r < 32 ? reg_abi[r] : "?"; }

int isa_reg_from_name(const char *name)
{
    if ((name[0] == 'x' || name[0] == 'X') && name[1]) {
        int v = 0;
        const char *p = name + 1;
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                break;
            v = v * 10 + (*p - '0');
            if (v > 31)
                return -1;
        }
        if (!*p && !(name[1] == '0' && name[2]))
            return v;
    }
    for (int i = 0; i < 32; i++)
        if (strcmp(reg_abi[i], name) == 0)
            return i;
    if (strcmp(name, "fp") == 0)
        return 8;
    return -1;
}

/* ---- encode / decode ---------------------------------------------------------- */

static uint64_t field_get(uint64_t w, isa_field f)
{
    const field_desc *fd = &fields[f];
    uint64_t v = fd->width == 64 ? w : (w >> fd->lsb) & ((1ull << fd->width) - 1);
    return v;
}

static int64_t field_get_signed(uint64_t w, isa_field f)
{
    const field_desc *fd = &fields[f];
    uint64_t v = field_get(w, f);
    if (fd->sgn && fd->width < 64 && (v >> (fd->width - 1)) & 1)
        v |= ~0ull << fd->width;
    return (int64_t)v;
}

/* The word bits the fields in mask m occupy; takes the mask, not the format,
 * so that isa_decode parses the format's syntax once, not twice. */
static uint64_t fields_used_bits(uint32_t m)
{
    uint64_t bits = 0;
    for (int i = 0; i < ISA_FLD_COUNT; i++)
        if (m & (1u << i)) {
            const field_desc *fd = &fields[i];
            bits |= (fd->width == 64 ? ~0ull : ((1ull << fd->width) - 1)) << fd->lsb;
        }
    return bits;
}

/* The value of field f in insn in (as the raw unsigned value to place). */
static int64_t insn_field(const isa_insn *in, isa_field f)
{
    switch (f) {
    case ISA_FLD_OPC: return infos[in->op].opcode;
    case ISA_FLD_RD: return in->rd;
    case ISA_FLD_RS1: return in->rs1;
    case ISA_FLD_RS2: return in->rs2;
    case ISA_FLD_RS3: return in->rs3;
    case ISA_FLD_RS4: return in->rs4;
    case ISA_FLD_DT: return in->dt;
    case ISA_FLD_DT2: return in->dt2;
    case ISA_FLD_MOD: return in->mod;
    case ISA_FLD_SPIPE: return in->spipe;
    case ISA_FLD_DPIPE: return in->dpipe;
    case ISA_FLD_FID: return in->fid;
    case ISA_FLD_PIPE: return in->pipe;
    case ISA_FLD_SREG: return in->sreg;
    case ISA_FLD_IMM32: case ISA_FLD_IMM48: case ISA_FLD_IMM16: return in->imm;
    default: return 0;
    }
}

/* Legality of field values beyond their width: dtypes and modifiers legal
 * for the row, pipes that exist, special registers that exist. Shared by
 * encode and decode so that both accept exactly the same set. */
static npu_status check_values(const isa_insn *in, uint32_t fm, npu_diag *d, const char *what)
{
    const isa_info *ii = &infos[in->op];
    if ((fm & (1u << ISA_FLD_DT)) && !(ii->dtypes & (1u << in->dt)))
        return npu_errf(d, NPU_EINVAL, "%s: %s does not take dtype %s", what, ii->mnemonic,
                        isa_dtype_suffix(in->dt));
    if ((fm & (1u << ISA_FLD_DT2)) && !(ii->dtypes2 & (1u << in->dt2)))
        return npu_errf(d, NPU_EINVAL, "%s: %s does not take second dtype %s", what, ii->mnemonic,
                        isa_dtype_suffix(in->dt2));
    if (fm & (1u << ISA_FLD_MOD)) {
        /* every set bit of MOD must be covered by some token of the class,
         * and each masked group must hold a value some token defines */
        int covered = 0;
        for (int i = 0;; i++) {
            int v, m;
            if (!isa_mod_token(ii->modclass, i, &v, &m, NULL))
                break;
            covered |= m;
        }
        if (in->mod & ~covered)
            return npu_errf(d, NPU_EINVAL, "%s: %s: modifier bits 0x%x are undefined", what,
                            ii->mnemonic, in->mod & ~covered);
        for (int i = 0;; i++) {
            int v, m;
            if (!isa_mod_token(ii->modclass, i, &v, &m, NULL))
                break;
            int grp = in->mod & m;
            if (!grp)
                continue;
            int ok = 0;
            for (int j = 0;; j++) {
                int v2, m2;
                if (!isa_mod_token(ii->modclass, j, &v2, &m2, NULL))
                    break;
                if (m2 == m && v2 == grp)
                    ok = 1;
            }
            if (!ok)
                return npu_errf(d, NPU_EINVAL, "%s: %s: modifier value 0x%x is undefined", what,
                                ii->mnemonic, grp);
        }
    }
    if ((fm & (1u << ISA_FLD_SPIPE)) && (in->spipe >= ISA_NPIPES || in->dpipe >= ISA_NPIPES ||
                                          in->spipe == in->dpipe))
        return npu_errf(d, NPU_EINVAL, "%s: %s: flag pipes must be two different real pipes", what,
                        ii->mnemonic);
    if ((fm & (1u << ISA_FLD_PIPE)) && in->pipe > ISA_PIPE_ALL)
        return npu_errf(d, NPU_EINVAL, "%s: %s: no pipe %d", what, ii->mnemonic, in->pipe);
    if ((fm & (1u << ISA_FLD_SREG))) {
        if (!isa_sreg_name(in->sreg))
            return npu_errf(d, NPU_EINVAL, "%s: %s: no special register 0x%x", what, ii->mnemonic,
                            in->sreg);
        if (in->op == ISA_OP_MTSR && !isa_sreg_writable(in->sreg))
            return npu_errf(d, NPU_EINVAL, "%s: mtsr: special register %s is read-only", what,
                            isa_sreg_name(in->sreg));
    }
    if ((ii->flags & ISA_F_SHAMT) && (in->imm < 0 || in->imm > 63))
        return npu_errf(d, NPU_EINVAL, "%s: %s: shift amount %lld outside 0..63", what,
                        ii->mnemonic, (long long)in->imm);
    if ((fm & (1u << ISA_FLD_IMM32)) && (ii->flags & (ISA_F_BRANCH | ISA_F_JUMP)) &&
        in->op != ISA_OP_JALR && (in->imm & 7))
        return npu_errf(d, NPU_EINVAL, "%s: %s: branch offset %lld is not a multiple of 8", what,
                        ii->mnemonic, (long long)in->imm);
    return NPU_OK;
}

npu_status isa_encode(const isa_insn *in, uint64_t *word, npu_diag *d)
{
    const isa_info *ii = isa_info_of(in->op);
    if (!ii)
        return npu_errf(d, NPU_EINVAL, "encode: invalid opcode %d", (int)in->op);
    uint32_t fm = isa_fmt_fields(ii->fmt);
    uint64_t w = 0;
    for (int f = 0; f < ISA_FLD_COUNT; f++) {
        int64_t v = insn_field(in, (isa_field)f);
        const field_desc *fd = &fields[f];
        if (!(fm & (1u << f))) {
            /* IMM fields share storage in the struct; only complain about
             * the non-shared ones */
            if (v != 0 && f != ISA_FLD_IMM32 && f != ISA_FLD_IMM48 && f != ISA_FLD_IMM16)
                return npu_errf(d, NPU_EINVAL, "encode: %s has no field %s", ii->mnemonic, fd->name);
            continue;
        }
        if (fd->sgn) {
            int64_t lo = -(1ll << (fd->width - 1)), hi = (1ll << (fd->width - 1)) - 1;
            if (v < lo || v > hi)
                return npu_errf(d, NPU_EINVAL, "encode: %s: %s value %lld outside %lld..%lld",
                                ii->mnemonic, fd->name, (long long)v, (long long)lo, (long long)hi);
        } else if (v < 0 || (uint64_t)v > ((1ull << fd->width) - 1)) {
            return npu_errf(d, NPU_EINVAL, "encode: %s: %s value %lld outside 0..%llu", ii->mnemonic,
                            fd->name, (long long)v, (unsigned long long)((1ull << fd->width) - 1));
        }
        w |= ((uint64_t)v & ((1ull << fd->width) - 1)) << fd->lsb;
    }
    if (!(fm & (1u << ISA_FLD_IMM32)) && !(fm & (1u << ISA_FLD_IMM48)) &&
        !(fm & (1u << ISA_FLD_IMM16)) && in->imm != 0)
        return npu_errf(d, NPU_EINVAL, "encode: %s takes no immediate", ii->mnemonic);
    npu_status s = check_values(in, fm, d, "encode");
    if (s)
        return s;
    *word = w;
    return NPU_OK;
}

npu_status isa_decode(uint64_t word, isa_insn *out, npu_diag *d)
{
    memset(out, 0, sizeof *out);
    isa_op op = isa_op_from_opcode((uint8_t)(word & 0xff));
    if (op == ISA_OP_INVALID)
        return npu_errf(d, NPU_EINVAL, "illegal instruction 0x%016llx: unknown opcode 0x%02x",
                        (unsigned long long)word, (unsigned)(word & 0xff));
    const isa_info *ii = &infos[op];
    uint32_t fm = isa_fmt_fields(ii->fmt);
    uint64_t used = fields_used_bits(fm);
    if (word & ~used)
        return npu_errf(d, NPU_EINVAL,
                        "illegal instruction 0x%016llx: %s has reserved bits set (0x%016llx)",
                        (unsigned long long)word, ii->mnemonic, (unsigned long long)(word & ~used));
    out->op = op;
    if (fm & (1u << ISA_FLD_RD)) out->rd = (uint8_t)field_get(word, ISA_FLD_RD);
    if (fm & (1u << ISA_FLD_RS1)) out->rs1 = (uint8_t)field_get(word, ISA_FLD_RS1);
    if (fm & (1u << ISA_FLD_RS2)) out->rs2 = (uint8_t)field_get(word, ISA_FLD_RS2);
    if (fm & (1u << ISA_FLD_RS3)) out->rs3 = (uint8_t)field_get(word, ISA_FLD_RS3);
    if (fm & (1u << ISA_FLD_RS4)) out->rs4 = (uint8_t)field_get(word, ISA_FLD_RS4);
    if (fm & (1u << ISA_FLD_DT)) out->dt = (uint8_t)field_get(word, ISA_FLD_DT);
    if (fm & (1u << ISA_FLD_DT2)) out->dt2 = (uint8_t)field_get(word, ISA_FLD_DT2);
    if (fm & (1u << ISA_FLD_MOD)) out->mod = (uint8_t)field_get(word, ISA_FLD_MOD);
    if (fm & (1u << ISA_FLD_SPIPE)) out->spipe = (uint8_t)field_get(word, ISA_FLD_SPIPE);
    if (fm & (1u << ISA_FLD_DPIPE)) out->dpipe = (uint8_t)field_get(word, ISA_FLD_DPIPE);
    if (fm & (1u << ISA_FLD_FID)) out->fid = (uint8_t)field_get(word, ISA_FLD_FID);
    if (fm & (1u << ISA_FLD_PIPE)) out->pipe = (uint8_t)field_get(word, ISA_FLD_PIPE);
    if (fm & (1u << ISA_FLD_SREG)) out->sreg = (uint16_t)field_get(word, ISA_FLD_SREG);
    if (fm & (1u << ISA_FLD_IMM32)) out->imm = field_get_signed(word, ISA_FLD_IMM32);
    if (fm & (1u << ISA_FLD_IMM48)) out->imm = field_get_signed(word, ISA_FLD_IMM48);
    if (fm & (1u << ISA_FLD_IMM16)) out->imm = (int64_t)field_get(word, ISA_FLD_IMM16);
    char what[48];
    snprintf(what, sizeof what, "illegal instruction 0x%016llx", (unsigned long long)word);
    return check_values(out, fm, d, what);
}

/* ---- disassembler --------------------------------------------------------- */

typedef struct sbuf { char *p; size_t len, n; } sbuf;

static void sb_put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = b->n < b->len ? b->p + b->n : NULL;
    size_t room = b->n < b->len ? b->len - b->n : 0;
    int k = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n += (size_t)k;
}

static void put_suffixes(sbuf *b, const isa_insn *in, const isa_info *ii)
{
    uint32_t fm = isa_fmt_fields(ii->fmt);
    if (fm & (1u << ISA_FLD_MOD)) {
        /* print every token whose masked group matches, except value-0
         * defaults (rn, eq need printing: eq is 0 but meaningful) */
        for (int i = 0;; i++) {
            int v, m;
            const char *tok = isa_mod_token(ii->modclass, i, &v, &m, NULL);
            if (!tok)
                break;
            if ((in->mod & m) != v)
                continue;
            if (v == 0 && ii->modclass != ISA_MC_CMP)
                continue; /* rn and "no transform" are the defaults */
            sb_put(b, ".%s", tok);
        }
    }
    if (fm & (1u << ISA_FLD_DT)) {
        if (!((ii->flags & ISA_F_DTOPT) && in->dt == ISA_DT_U8))
            sb_put(b, ".%s", isa_dtype_suffix(in->dt));
    }
    if (fm & (1u << ISA_FLD_DT2))
        sb_put(b, ".%s", isa_dtype_suffix(in->dt2));
}

int isa_disasm(const isa_insn *in, uint64_t pc, char *buf, size_t len, isa_symbolizer sym, void *user)
{
    sbuf b = {buf, len, 0};
    if (len)
        buf[0] = 0;
    const isa_info *ii = isa_info_of(in->op);
    if (!ii) {
        sb_put(&b, "(illegal)");
        return (int)b.n;
    }
    sb_put(&b, "%s", ii->mnemonic);
    put_suffixes(&b, in, ii);
    const char *s = isa_fmt_syntax(ii->fmt);
    if (*s)
        sb_put(&b, " ");
    while (*s) {
        if (*s == ',' || *s == ' ' || *s == '(' || *s == ')') {
            sb_put(&b, "%c", *s++);
            continue;
        }
        char tok[16];
        size_t n = 0;
        while (*s && *s != ',' && *s != ' ' && *s != '(' && *s != ')' && n < sizeof tok - 1)
            tok[n++] = *s++;
        tok[n] = 0;
        if (!strcmp(tok, "rd")) sb_put(&b, "%s", isa_reg_name(in->rd));
        else if (!strcmp(tok, "rs1")) sb_put(&b, "%s", isa_reg_name(in->rs1));
        else if (!strcmp(tok, "rs2")) sb_put(&b, "%s", isa_reg_name(in->rs2));
        else if (!strcmp(tok, "rs3")) sb_put(&b, "%s", isa_reg_name(in->rs3));
        else if (!strcmp(tok, "rs4")) sb_put(&b, "%s", isa_reg_name(in->rs4));
        else if (!strcmp(tok, "imm32") || !strcmp(tok, "imm48") || !strcmp(tok, "off"))
            sb_put(&b, "%lld", (long long)in->imm);
        else if (!strcmp(tok, "imm16")) sb_put(&b, "0x%llx", (unsigned long long)in->imm);
        else if (!strcmp(tok, "label")) {
            uint64_t target = pc + (uint64_t)in->imm;
            uint64_t off = 0;
            const char *name = sym ? sym(user, target, &off) : NULL;
            if (name && off)
                sb_put(&b, "%s+0x%llx", name, (unsigned long long)off);
            else if (name)
                sb_put(&b, "%s", name);
            else
                sb_put(&b, "0x%llx", (unsigned long long)target);
        } else if (!strcmp(tok, "spipe")) sb_put(&b, "%s", isa_pipe_name(in->spipe));
        else if (!strcmp(tok, "dpipe")) sb_put(&b, "%s", isa_pipe_name(in->dpipe));
        else if (!strcmp(tok, "pipe")) sb_put(&b, "%s", isa_pipe_name(in->pipe));
        else if (!strcmp(tok, "fid")) sb_put(&b, "%d", in->fid);
        else if (!strcmp(tok, "sreg")) {
            const char *nm = isa_sreg_name(in->sreg);
            if (nm) sb_put(&b, "%s", nm);
            else sb_put(&b, "0x%x", in->sreg);
        } else
            sb_put(&b, "?%s", tok);
    }
    return (int)b.n;
}

/* ---- config register layouts ------------------------------------------ */

static const isa_cfgfield cfgfields[] = {
#define CFGREG(id, operand, doc)
#define CFGFIELD(id, name, lsb, width, doc) {#id, #name, lsb, width, doc},
#include "isa/cfgregs.def"
#undef CFGREG
#undef CFGFIELD
};

typedef struct cfgreg_desc { const char *id, *operand, *doc; } cfgreg_desc;
static const cfgreg_desc cfgregs[] = {
#define CFGREG(id, operand, doc) {#id, operand, doc},
#define CFGFIELD(id, name, lsb, width, doc)
#include "isa/cfgregs.def"
#undef CFGREG
#undef CFGFIELD
};

const isa_cfgfield *isa_cfg_field(int i)
{
    return i >= 0 && i < (int)NPU_ARRAY_LEN(cfgfields) ? &cfgfields[i] : NULL;
}

const char *isa_cfg_reg(int i, const char **operand, const char **doc)
{
    if (i < 0 || i >= (int)NPU_ARRAY_LEN(cfgregs))
        return NULL;
    if (operand) *operand = cfgregs[i].operand;
    if (doc) *doc = cfgregs[i].doc;
    return cfgregs[i].id;
}

/* ---- random legal instructions ----------------------------------------- */

static int pick_bit(npu_rng *r, uint32_t mask)
{
    int n = 0;
    for (int i = 0; i < 32; i++)
        n += (mask >> i) & 1;
    if (!n)
        return 0;
    int k = (int)(npu_rng_next(r) % (uint64_t)n);
    for (int i = 0; i < 32; i++)
        if (((mask >> i) & 1) && k-- == 0)
            return i;
    return 0;
}

npu_status isa_random_insn(isa_op op, npu_rng *r, isa_insn *out, npu_diag *d)
{
    const isa_info *ii = isa_info_of(op);
    if (!ii)
        return npu_errf(d, NPU_EINVAL, "random insn: invalid op %d", (int)op);
    uint32_t fm = isa_fmt_fields(ii->fmt);
    for (int attempt = 0; attempt < 1000; attempt++) {
        isa_insn in;
        memset(&in, 0, sizeof in);
        in.op = op;
        uint64_t x = npu_rng_next(r);
        if (fm & (1u << ISA_FLD_RD)) in.rd = x & 31;
        if (fm & (1u << ISA_FLD_RS1)) in.rs1 = (x >> 5) & 31;
        if (fm & (1u << ISA_FLD_RS2)) in.rs2 = (x >> 10) & 31;
        if (fm & (1u << ISA_FLD_RS3)) in.rs3 = (x >> 15) & 31;
        if (fm & (1u << ISA_FLD_RS4)) in.rs4 = (x >> 20) & 31;
        if (fm & (1u << ISA_FLD_DT)) in.dt = (uint8_t)pick_bit(r, ii->dtypes);
        if (fm & (1u << ISA_FLD_DT2)) in.dt2 = (uint8_t)pick_bit(r, ii->dtypes2);
        if (fm & (1u << ISA_FLD_MOD)) {
            /* per mask group: nothing or one token of the group */
            for (int i = 0;; i++) {
                int v, m;
                if (!isa_mod_token(ii->modclass, i, &v, &m, NULL))
                    break;
                if (!(in.mod & m) && (npu_rng_next(r) & 1))
                    in.mod = (uint8_t)(in.mod | v);
            }
        }
        if (fm & (1u << ISA_FLD_SPIPE)) {
            in.spipe = (uint8_t)(npu_rng_next(r) % ISA_NPIPES);
            in.dpipe = (uint8_t)(npu_rng_next(r) % ISA_NPIPES);
        }
        if (fm & (1u << ISA_FLD_FID)) in.fid = (uint8_t)(npu_rng_next(r) & 7);
        if (fm & (1u << ISA_FLD_PIPE)) in.pipe = (uint8_t)(npu_rng_next(r) % (ISA_PIPE_ALL + 1));
        if (fm & (1u << ISA_FLD_SREG)) {
            const char *nm;
            int num, wr;
            isa_sreg_at((int)(npu_rng_next(r) % (uint64_t)isa_sreg_count()), &nm, &num, &wr, NULL);
            in.sreg = (uint16_t)num;
        }
        isa_field immf = (fm & (1u << ISA_FLD_IMM48)) ? ISA_FLD_IMM48
                       : (fm & (1u << ISA_FLD_IMM16)) ? ISA_FLD_IMM16
                       : (fm & (1u << ISA_FLD_IMM32)) ? ISA_FLD_IMM32 : ISA_FLD_COUNT;
        if (immf != ISA_FLD_COUNT) {
            const field_desc *fd = &fields[immf];
            uint64_t v = npu_rng_next(r);
            /* small values are the interesting ones half the time */
            if (v & 1)
                v = (v >> 1) % 200;
            v &= (1ull << fd->width) - 1;
            int64_t s = (int64_t)v;
            if (fd->sgn && (v >> (fd->width - 1)) & 1)
                s = (int64_t)(v | (~0ull << fd->width));
            if (ii->flags & ISA_F_SHAMT)
                s = (int64_t)(v % 64);
            if ((ii->flags & (ISA_F_BRANCH | ISA_F_JUMP)) && op != ISA_OP_JALR)
                s &= ~(int64_t)7;
            in.imm = s;
        }
        uint64_t w;
        if (isa_encode(&in, &w, NULL) == NPU_OK) {
            *out = in;
            return NPU_OK;
        }
    }
    return npu_errf(d, NPU_EINVAL, "random insn: no legal operands found for %s", ii->mnemonic);
}
