/* calib.c — the calibration sweeps (see calib.h, docs/fidelity.md). */
#include "sim/calib.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "frontend/asm.h"
#include "frontend/elf.h"
#include "sim/npusim.h"
#include "sim/sim_int.h"
#include "isa/isa.h"

/* Steady state: (cycles(N_LONG) - cycles(N_SHORT)) / (N_LONG - N_SHORT). */
#define N_SHORT 2
#define N_LONG 6

double sim_calib_bound(sim_calib_class c)
{
    return c == SIM_CAL_MMAD ? 0.05 : 0.10;
}

const char *sim_calib_class_name(sim_calib_class c)
{
    static const char *const n[] = { "mmad", "vec", "mov" };
    return c < SIM_CAL__COUNT ? n[c] : "?";
}

void sim_calib_free(sim_calib_result *r)
{
    npu_free(r->p);
    npu_free(r->skip);
    memset(r, 0, sizeof *r);
}

static int add_point(sim_calib_result *r, const sim_calib_point *p)
{
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 256;
        sim_calib_point *np = npu_realloc(r->p, nc * sizeof *np);
        if (!np)
            return -1;
        r->p = np;
        r->cap = nc;
    }
    r->p[r->n++] = *p;
    return 0;
}

static int add_skip(sim_calib_result *r, const char *table, const char *why)
{
    if (r->nskip == r->capskip) {
        size_t nc = r->capskip ? r->capskip * 2 : 64;
        sim_calib_skip *ns = npu_realloc(r->skip, nc * sizeof *ns);
        if (!ns)
            return -1;
        r->skip = ns;
        r->capskip = nc;
    }
    sim_calib_skip *s = &r->skip[r->nskip++];
    snprintf(s->table, sizeof s->table, "%s", table);
    snprintf(s->why, sizeof s->why, "%s", why);
    return 0;
}

/* ---- running one kernel ----------------------------------------------------- */

typedef struct cal_ctx {
    const cfg_machine *m;
    npu_sim *s;
    npu_diag *d;
    char src[4096];
} cal_ctx;

static npu_status run_src(cal_ctx *c, const char *src, uint64_t *cycles)
{
    asm_output o;
    memset(&o, 0, sizeof o);
    npu_status st = asm_assemble_mem(src, strlen(src), "calib.s", NULL, &o, c->d);
    npu_buf b = { 0 };
    if (!st)
        st = elf_write_mem(&o, &b, c->d);
    asm_output_free(&o);
    if (!st)
        st = npu_sim_load_elf_mem(c->s, b.data, b.len, "calib.elf", c->d);
    npu_buf_free(&b);
    if (!st)
        st = npu_sim_set_cores(c->s, 1, c->d);
    if (!st) {
        npu_run_opts ro = { NPU_MODE_PERF, 0, 0 };
        st = npu_sim_run(c->s, &ro, c->d);
    }
    if (st)
        npu_diag_prefix(c->d, "calibration kernel [%s]", src);
    *cycles = npu_sim_cycles(c->s);
    return st;
}

/* Steady-state cycles per instruction of `insn` after `prologue`. */
static npu_status measure(cal_ctx *c, const char *prologue, const char *insn, const char *tail,
                          double *cpi)
{
    uint64_t cyc[2];
    int n[2] = { N_SHORT, N_LONG };
    for (int i = 0; i < 2; i++) {
        snprintf(c->src, sizeof c->src, "_start:\n%s.rept %d\n %s\n.endr\n halt\n%s", prologue,
                 n[i], insn, tail ? tail : "");
        npu_status st = run_src(c, c->src, &cyc[i]);
        if (st)
            return st;
    }
    *cpi = (double)(cyc[1] - cyc[0]) / (double)(N_LONG - N_SHORT);
    return NPU_OK;
}

/* ---- table names --------------------------------------------------------------- */

/* "FP16" -> "f16" etc.; NULL if the ISA has no such dtype. */
static const char *dt_of(const char *t)
{
    static const char *const map[][2] = {
        { "FP32", "f32" }, { "FP16", "f16" }, { "BF16", "bf16" }, { "INT32", "s32" },
        { "INT16", "s16" }, { "INT8", "s8" }, { "UINT32", "u32" }, { "UINT16", "u16" },
        { "UINT8", "u8" }, { "INT64", "s64" },
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(map); i++)
        if (!strcmp(t, map[i][0]))
            return map[i][1];
    return NULL;
}

/* Split "VADD_FP16_FP16_FP16_1_core_910b1" into op, dtypes, chip. */
typedef struct tname {
    char op[32];
    char dt[4][8];
    int ndt;
    char chip[16];
} tname;

static int parse_tname(const char *key, tname *t)
{
    memset(t, 0, sizeof *t);
    char buf[96];
    snprintf(buf, sizeof buf, "%s", key);
    char *save = NULL;
    int i = 0;
    for (char *tok = strtok_r(buf, "_", &save); tok; tok = strtok_r(NULL, "_", &save), i++) {
        if (i == 0) {
            snprintf(t->op, sizeof t->op, "%s", tok);
        } else if (!strcmp(tok, "1") || !strcmp(tok, "core")) {
            continue;
        } else if (!strncmp(tok, "910", 3)) {
            snprintf(t->chip, sizeof t->chip, "%s", tok);
        } else if (t->ndt < 4) {
            snprintf(t->dt[t->ndt++], sizeof t->dt[0], "%s", tok);
        }
    }
    return t->op[0] && t->chip[0] ? 0 : -1;
}

/* ---- vector -------------------------------------------------------------------- */

/* The reference names an instruction by its upper-case mnemonic; two
 * tables use the vendor's name for one of ours. Everything else (is it a
 * vector instruction, its operand format) comes from the ISA table. */
static const struct { const char *ref, *mn; } valias[] = {
    { "VCOPY", "vmov" },
    { "VECTORDUP", "vdup" },
};

static isa_op vec_op_of(const char *ref)
{
    char mn[32];
    size_t n = strlen(ref);
    if (n >= sizeof mn)
        return ISA_OP_INVALID;
    for (size_t i = 0; i <= n; i++)
        mn[i] = (char)tolower((unsigned char)ref[i]);
    for (size_t i = 0; i < NPU_ARRAY_LEN(valias); i++)
        if (!strcmp(valias[i].ref, ref))
            snprintf(mn, sizeof mn, "%s", valias[i].mn);
    isa_op op = isa_op_from_mnemonic(mn);
    const isa_info *in = isa_info_of(op);
    return in && in->pipe == ISA_PIPE_V ? op : ISA_OP_INVALID;
}

/* The vector operands: dst UB 0, src0 at block 197, src1 at block 394, so
 * that in every beat the three blocks are in different banks and bank
 * groups of the default UB (no conflict cycles, as the measurements
 * assume); the select mask at 160 KiB. */
static npu_status vec_table(cal_ctx *c, const char *key, const cJSON *rows, const tname *t,
                            sim_calib_result *r)
{
    const isa_info *vi = isa_info_of(vec_op_of(t->op));
    if (!vi)
        return add_skip(r, key, "no such instruction in the ISA") ? npu_errf(c->d, NPU_ENOMEM, "oom") : NPU_OK;
    const char *d0 = t->ndt > 0 ? dt_of(t->dt[0]) : NULL;
    const char *d1 = t->ndt > 1 ? dt_of(t->dt[1]) : NULL;
    if (!d0 || (vi->fmt == ISA_FMT_VCVT && !d1))
        return add_skip(r, key, "dtype not in the ISA") ? npu_errf(c->d, NPU_ENOMEM, "oom") : NPU_OK;
    if (vi->fmt != ISA_FMT_VCVT)
        for (int i = 1; i < t->ndt; i++)
            if (strcmp(t->dt[i], t->dt[0]))
                return add_skip(r, key, "mixed-precision form not in the ISA")
                           ? npu_errf(c->d, NPU_ENOMEM, "oom") : NPU_OK;
    /* operands by format: a1 dst, a2 src0, a3 src1, a4 the config word, a5
     * the scalar, a6 the select mask (the prologue below sets them) */
    char insn[96];
    const char *mn = vi->mnemonic;
    switch (vi->fmt) {
    case ISA_FMT_VBIN: snprintf(insn, sizeof insn, "%s.%s a1, a2, a3, a4", mn, d0); break;
    case ISA_FMT_VSCA: snprintf(insn, sizeof insn, "%s.%s a1, a2, a5, a4", mn, d0); break;
    case ISA_FMT_VUN:  snprintf(insn, sizeof insn, "%s.%s a1, a2, a4", mn, d0); break;
    case ISA_FMT_VCVT: snprintf(insn, sizeof insn, "%s.%s.%s a1, a2, a4", mn, d0, d1); break;
    case ISA_FMT_VCMP: snprintf(insn, sizeof insn, "%s.lt.%s a1, a2, a3, a4", mn, d0); break;
    case ISA_FMT_VSEL: snprintf(insn, sizeof insn, "%s.%s a1, a2, a3, a4, a6", mn, d0); break;
    case ISA_FMT_VDUP: snprintf(insn, sizeof insn, "%s.%s a1, a5, a4", mn, d0); break;
    default:
        return add_skip(r, key, "operand format not swept by the calibration")
                   ? npu_errf(c->d, NPU_ENOMEM, "oom") : NPU_OK;
    }
    int judged = !strcmp(t->chip, "910b1");
    size_t first = r->n;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        int nf = cJSON_GetArraySize(row);
        if (nf < 5)
            continue;
        double f0 = cJSON_GetArrayItem(row, 0)->valuedouble;
        double f1 = cJSON_GetArrayItem(row, 1)->valuedouble;
        double rep = cJSON_GetArrayItem(row, 3)->valuedouble;
        double cyc = cJSON_GetArrayItem(row, 4)->valuedouble;
        /* most tables: [elements, ops/cycle, 0, repeat, cycles]; those
         * without the cycles column give ops/cycle = 2 x elements / cycles */
        if (cyc <= 0 && f1 > 0)
            cyc = 2.0 * f0 / f1;
        if (rep < 1 || rep > 255 || cyc <= 0)
            continue;
        /* the same work: a conversion's measured repeat is 256 bytes of its
         * source (elements / repeat = 256 / source size), ours 256 bytes of
         * the wider operand, so a widening one takes more of ours */
        double our = rep;
        if (vi->fmt == ISA_FMT_VCVT) {
            our = f0 / isa_vrep_elems(isa_dtype_from_suffix(d0), isa_dtype_from_suffix(d1));
            if (our < 1 || our > 255 || our != floor(our))
                continue;
        }
        char pro[256];
        snprintf(pro, sizeof pro,
                 " li a1, 0\n li a2, 6304\n li a3, 12608\n li64 a4, %" PRIu64 "\n"
                 " li a5, 0\n li a6, 163840\n",
                 (uint64_t)ISA_VCFG((uint64_t)our, 1, 1, 1, 8, 8, 8));
        sim_calib_point p;
        memset(&p, 0, sizeof p);
        snprintf(p.table, sizeof p.table, "%s", key);
        p.cls = SIM_CAL_VEC;
        p.judged = judged;
        snprintf(p.x, sizeof p.x, "r=%d", (int)rep);
        p.measured = cyc;
        npu_status st = measure(c, pro, insn, NULL, &p.model);
        if (st == NPU_EINVAL && r->n == first) {
            /* the assembler refused the form (a dtype pair the ISA lacks) */
            char why[128];
            snprintf(why, sizeof why, "not in the ISA: %.80s", strstr(c->d->msg, "]: ")
                     ? strstr(c->d->msg, "]: ") + 3 : c->d->msg);
            npu_diag_clear(c->d);
            return add_skip(r, key, why) ? npu_errf(c->d, NPU_ENOMEM, "oom") : NPU_OK;
        }
        if (st)
            return st;
        p.err = (p.model - p.measured) / p.measured;
        if (add_point(r, &p))
            return npu_errf(c->d, NPU_ENOMEM, "calibration: out of memory");
    }
    return NPU_OK;
}

/* ---- cube ---------------------------------------------------------------------- */

static npu_status mmad_table(cal_ctx *c, const char *key, const cJSON *rows, const tname *t,
                             sim_calib_result *r)
{
    int judged = !strcmp(t->chip, "910b1");
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        if (cJSON_GetArraySize(row) < 5)
            continue;
        int mm = cJSON_GetArrayItem(row, 1)->valueint;
        int kk = cJSON_GetArrayItem(row, 2)->valueint;
        int nn = cJSON_GetArrayItem(row, 3)->valueint;
        double opc = cJSON_GetArrayItem(row, 4)->valuedouble;
        if (mm <= 0 || kk <= 0 || nn <= 0 || opc <= 0)
            continue;
        char pro[256];
        snprintf(pro, sizeof pro, " li a1, 0\n li a2, 0\n li a3, 0\n li64 a4, %" PRIu64 "\n",
                 (uint64_t)ISA_MM_CFG(mm, kk, nn, 1));
        sim_calib_point p;
        memset(&p, 0, sizeof p);
        snprintf(p.table, sizeof p.table, "%s", key);
        p.cls = SIM_CAL_MMAD;
        p.judged = judged;
        snprintf(p.x, sizeof p.x, "m=%d k=%d n=%d", mm, kk, nn);
        /* ops = 2 x MACs (multiply and add) */
        p.measured = 2.0 * mm * kk * nn / opc;
        npu_status st = measure(c, pro, "mmad.f16.f32 a1, a2, a3, a4", NULL, &p.model);
        if (st)
            return st;
        p.err = (p.model - p.measured) / p.measured;
        if (add_point(r, &p))
            return npu_errf(c->d, NPU_ENOMEM, "calibration: out of memory");
    }
    return NPU_OK;
}

/* ---- data moves ---------------------------------------------------------------- */

/* Table path -> instruction and operands. The first column of the mov tables
 * is the size of one move in KiB (msKPP's sweep; total data = size x 1024
 * moves), bandwidth in GiB/s at the tool's 1.8 GHz. */
static const struct { const char *path, *mn; int src_gm, dst_gm; } movs[] = {
    { "GM_TO_L1", "mov.gm2l1", 1, 0 },   { "GM_TO_UB", "mov.gm2ub", 1, 0 },
    { "GM_TO_L0A", "mov.gm2l0a", 1, 0 }, { "GM_TO_L0B", "mov.gm2l0b", 1, 0 },
    { "L1_TO_L0A", "mov.l12l0a", 0, 0 }, { "L1_TO_L0B", "mov.l12l0b", 0, 0 },
    { "L1_TO_UB", "mov.l12ub", 0, 0 },   { "UB_TO_GM", "mov.ub2gm", 0, 1 },
    { "UB_TO_L1", "mov.ub2l1", 0, 0 },   { "L1_TO_GM", "mov.l12gm", 0, 1 },
    { "UB_TO_UB", "mov.ub2ub", 0, 0 },
};

static npu_status mov_table(cal_ctx *c, const char *key, const cJSON *rows, const tname *t,
                            sim_calib_result *r)
{
    /* key: PATH_TO_PATH[_TRANS]_chip */
    char path[32];
    snprintf(path, sizeof path, "%s", key);
    char *chip = strrchr(path, '_');
    if (!chip)
        return NPU_OK;
    *chip = 0;
    int mi = -1;
    for (size_t i = 0; i < NPU_ARRAY_LEN(movs); i++)
        if (!strcmp(movs[i].path, path))
            mi = (int)i;
    if (mi < 0) {
        const char *why = strstr(path, "TRANS") ? "transposing form not modelled"
                          : strstr(path, "L0C") ? "L0C -> GM/L1/UB is the FIX pipe's fix.* (measured separately below)"
                                                : "no such path in the ISA";
        if (!strcmp(path, "L0C_TO_GM"))
            why = NULL;
        if (why)
            return add_skip(r, key, why) ? npu_errf(c->d, NPU_ENOMEM, "oom") : NPU_OK;
    }
    int judged = !strcmp(t->chip, "910b1");
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        if (cJSON_GetArraySize(row) < 2)
            continue;
        double kib = cJSON_GetArrayItem(row, 0)->valuedouble;
        double gibps = cJSON_GetArrayItem(row, 1)->valuedouble;
        if (kib <= 0 || gibps <= 0)
            continue;
        uint64_t bytes = (uint64_t)llround(kib * 1024);
        if (bytes < 32 || bytes > 65536)
            continue;   /* beyond one on-chip buffer of the default machine */
        char pro[512], insn[128];
        if (mi >= 0) {
            /* one contiguous burst of `bytes` */
            snprintf(pro, sizeof pro,
                     " la a1, buf\n li a2, 0\n li64 a3, %" PRIu64 "\n li a4, 0\n",
                     (uint64_t)ISA_DMA_CFG(1, bytes));
            if (movs[mi].src_gm)
                snprintf(insn, sizeof insn, "%s a2, a1, a3, a4", movs[mi].mn);
            else if (movs[mi].dst_gm)
                snprintf(insn, sizeof insn, "%s a1, a2, a3, a4", movs[mi].mn);
            else
                snprintf(insn, sizeof insn, "%s a2, a2, a3, a4", movs[mi].mn);
        } else {
            /* L0C -> GM: fix.l0c2gm of m x n fp32 -> fp32 (4 bytes each), n = 16 */
            uint64_t n16 = 16, m = bytes / (4 * n16);
            if (!m)
                continue;
            snprintf(pro, sizeof pro,
                     " la a1, buf\n li a2, 0\n li64 a3, %" PRIu64 "\n li64 a4, %" PRIu64 "\n li a5, 0\n",
                     (uint64_t)((n16 << 16) | m), (uint64_t)(((uint64_t)(n16 * 4) << 32) | (m * 64)));
            snprintf(insn, sizeof insn, "fix.l0c2gm.nd.f32.f32 a1, a2, a3, a4, a5");
        }
        sim_calib_point p;
        memset(&p, 0, sizeof p);
        snprintf(p.table, sizeof p.table, "%s", key);
        p.cls = SIM_CAL_MOV;
        p.judged = judged;
        snprintf(p.x, sizeof p.x, "%g KiB", kib);
        p.measured = (double)bytes * 1.8e9 / (gibps * 1073741824.0);
        /* the GM side: a buffer in .bss, one L2 line aligned */
        npu_status st = measure(c, pro, insn, ".bss\n.balign 512\nbuf:\n .space 65536\n", &p.model);
        if (st)
            return st;
        p.err = (p.model - p.measured) / p.measured;
        if (add_point(r, &p))
            return npu_errf(c->d, NPU_ENOMEM, "calibration: out of memory");
    }
    return NPU_OK;
}

/* ---- the run -------------------------------------------------------------------- */

npu_status sim_calib_run(const cfg_machine *m, const char *ref_path, unsigned classes,
                         sim_calib_result *out, npu_diag *d)
{
    if (!classes)
        classes = (1u << SIM_CAL__COUNT) - 1;
    memset(out, 0, sizeof *out);
    uint8_t *text = NULL;
    size_t len = 0;
    npu_status st = npu_read_file(ref_path, 0, 0, &text, &len, d);
    if (st)
        return st;
    cJSON *root = cJSON_ParseWithLength((const char *)text, len);
    npu_free(text);
    if (!root)
        return npu_errf(d, NPU_EFORMAT, "%s: not valid JSON", ref_path);
    cal_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.d = d;
    cfg_machine one = *m;
    one.chip.cores = 1;
    /* The mmad and vector kernels touch no GM, so the memory model cannot
     * change their cycles; they run with the fixed port, which costs nothing
     * to set up (the HBM model's tables are built per run). The data moves
     * run on the machine as given. */
    cfg_machine nogm = one;
    nogm.timing.memory_model = CFG_MEM_FIXED;
    npu_sim *s_mov = NULL, *s_nogm = NULL;
    st = npu_sim_new(&s_mov, &one, d);
    if (!st)
        st = npu_sim_new(&s_nogm, &nogm, d);
    static const char *const secs[] = { "mmad", "vec", "mov" };
    for (int sec = 0; !st && sec < 3; sec++) {
        if (!(classes & (1u << sec)))
            continue;
        const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, secs[sec]);
        if (!cJSON_IsObject(obj)) {
            st = npu_errf(d, NPU_EFORMAT, "%s: no \"%s\" object", ref_path, secs[sec]);
            break;
        }
        const cJSON *tab;
        cJSON_ArrayForEach(tab, obj) {
            tname t;
            if (!cJSON_IsArray(tab) || parse_tname(tab->string, &t)) {
                if (add_skip(out, tab->string ? tab->string : "?", "unrecognised table name"))
                    st = npu_errf(d, NPU_ENOMEM, "oom");
                continue;
            }
            c.s = sec == 2 ? s_mov : s_nogm;
            if (sec == 0)
                st = mmad_table(&c, tab->string, tab, &t, out);
            else if (sec == 1)
                st = vec_table(&c, tab->string, tab, &t, out);
            else
                st = mov_table(&c, tab->string, tab, &t, out);
            if (st)
                break;
        }
    }
    npu_sim_free(s_mov);
    npu_sim_free(s_nogm);
    cJSON_Delete(root);
    return st;
}
