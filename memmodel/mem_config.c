/* mem_config.c — the memory config: defaults, built-in HBM presets, strict
 * JSON parsing, --set overrides, dump and the docs table, all driven by the
 * key table in mem_keys.def. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "memmodel/mem_int.h"

static const char *const mem_enum_refresh[] = { "none", "all_bank", "per_bank", NULL };
static const char *const mem_enum_page[] = { "open", "closed", NULL };
#define NONE NULL

enum { K_INT, K_I64, K_BOOL, K_ENUM, K_STR };
#define KIND_INT  K_INT
#define KIND_I64  K_I64
#define KIND_BOOL K_BOOL
#define KIND_ENUM K_ENUM
#define KIND_STR  K_STR
#define KIND_BYTES   K_INT   /* a size: as INT, and a binary suffix */
#define KIND_BYTES64 K_I64
#define SIZE_INT 0
#define SIZE_I64 0
#define SIZE_BOOL 0
#define SIZE_ENUM 0
#define SIZE_STR 0
#define SIZE_BYTES 1
#define SIZE_BYTES64 1

typedef struct mem_key {
    const char *group, *name;
    int kind;
    int bytes;                 /* a size: BYTES / BYTES64 in the table */
    size_t off;
    long long lo, hi;
    const char *const *enums;
    const char *doc;
} mem_key;

static const mem_key mem_keys[] = {
#define MEM_KEY(g, n, k, f, lo, hi, en, doc) \
    { #g, #n, KIND_##k, SIZE_##k, offsetof(mem_config, f), lo, hi, en, doc },
#include "memmodel/mem_keys.def"
#undef MEM_KEY
};

/* ---- presets ------------------------------------------------------------
 * Timing figures: HBM2 at 2.0 Gb/s (tCK 1 ns) are JESD235-family values as
 * shipped in Ramulator 2's HBM2_2Gbps preset; the faster grades keep the
 * same nanosecond values and convert them to their tCK (rounding up), as
 * their core arrays are the same technology. configs/hbm*.json carry the
 * same numbers with the source of each; a test checks they agree. */
typedef struct mem_preset_ns {
    const char *name;
    int rate, pcs, channels, sids, width, bl, rows;
    /* ns x 100 for the array timings */
    int cl, cwl, rcdrd, rcdwr, rp, ras, rc, wr, rtp, ccdl, rrds, rrdl, faw, wtrs, wtrl,
        rfc, rfcpb, refi, refipb, rrefd;
} mem_preset_ns;

static const mem_preset_ns mem_presets[] = {
    /* name     rate  pc ch sid w  bl rows   CL    CWL  RCDRD RCDWR  RP   RAS   RC    WR   RTP  CCDL RRDS RRDL FAW  WTRS WTRL  RFC    RFCpb  REFI    REFIpb RREFD */
    { "hbm2",  2000, 2, 8, 1, 64, 4, 32768, 1400, 500, 1400, 1200, 1400, 3400, 4800, 1600, 500, 400, 400, 400, 1500, 600, 800, 35000, 16000, 390000, 12200, 800 },
    { "hbm2e", 3200, 2, 8, 1, 64, 4, 65536, 1400, 500, 1400, 1200, 1400, 3300, 4700, 1600, 500, 250, 400, 400, 1500, 300, 750, 35000, 16000, 390000, 12200, 800 },
    { "hbm3",  6400, 2, 16, 2, 32, 8, 16384, 1400, 500, 1400, 1200, 1400, 3300, 4700, 1600, 500, 250, 400, 400, 1500, 300, 750, 35000, 16000, 390000, 12200, 800 },
    { "hbm3e", 9600, 2, 16, 2, 32, 8, 16384, 1400, 500, 1400, 1200, 1400, 3300, 4700, 1600, 500, 250, 400, 400, 1500, 300, 750, 35000, 16000, 390000, 12200, 800 },
};

/* ns*100 -> tCK at rate Mb/s (tCK = 2000/rate ns), rounded up. */
static int ns_to_ck(int ns100, int rate)
{
    long long num = (long long)ns100 * rate, den = 200000;
    return (int)((num + den - 1) / den);
}

static void apply_preset(mem_config *c, const mem_preset_ns *p)
{
    mem_hbm_cfg *h = &c->hbm;
    h->stacks = 4;
    h->channels = p->channels;
    h->pseudo_channels = p->pcs;
    h->sids = p->sids;
    h->bankgroups = 4;
    h->banks = 4;
    h->rows = p->rows;
    h->width_bits = p->width;
    h->burst_length = p->bl;
    h->columns = 1024 * 8 / (p->width * p->bl);   /* 1 KiB pseudo-channel rows */
    h->data_rate_mbps = p->rate;
    int r = p->rate, bc = p->bl / 2;
    h->tCL = ns_to_ck(p->cl, r);
    h->tCWL = ns_to_ck(p->cwl, r);
    h->tRCDRD = ns_to_ck(p->rcdrd, r);
    h->tRCDWR = ns_to_ck(p->rcdwr, r);
    h->tRP = ns_to_ck(p->rp, r);
    h->tRAS = ns_to_ck(p->ras, r);
    h->tRC = NPU_MAX(ns_to_ck(p->rc, r), h->tRAS + h->tRP);
    h->tWR = ns_to_ck(p->wr, r);
    h->tRTP = ns_to_ck(p->rtp, r);
    h->tCCD_S = bc;
    h->tCCD_L = NPU_MAX(bc, ns_to_ck(p->ccdl, r));
    h->tRRD_S = ns_to_ck(p->rrds, r);
    h->tRRD_L = ns_to_ck(p->rrdl, r);
    h->tFAW = ns_to_ck(p->faw, r);
    h->tWTR_S = ns_to_ck(p->wtrs, r);
    h->tWTR_L = ns_to_ck(p->wtrl, r);
    h->tRTW = h->tCL + bc - h->tCWL + 2;
    h->tRFC = ns_to_ck(p->rfc, r);
    h->tRFCpb = ns_to_ck(p->rfcpb, r);
    h->tREFI = ns_to_ck(p->refi, r);
    h->tREFIpb = ns_to_ck(p->refipb, r);
    h->tRREFD = ns_to_ck(p->rrefd, r);
    h->act_cycles = 1;
    h->refresh = MEM_REF_ALL_BANK;
    h->refresh_prea = 1;
    /* column bits of one 512 B L2 line lowest (row hits within a line), then
     * stack, channel, pseudo-channel, SID, bank group, bank: consecutive
     * lines spread over every channel before reusing a bank. Every field
     * but the line's columns is written as '*' (all its bits), so the
     * mapping stays valid when a size is changed (--set
     * memory.hbm.stacks=2). Bank group and bank are XOR-hashed with low row
     * bits to break power-of-2 strides. */
    int atom = p->width * p->bl / 8;
    int cl = mem_log2((uint64_t)(512 / atom));
    memset(h->mapping, 0, sizeof h->mapping);
    memset(h->xor_map, 0, sizeof h->xor_map);
    snprintf(h->mapping, MEM_MAP_LEN, "c%d k* h* p* s* g* b* c* r*", cl);
    snprintf(h->xor_map, MEM_MAP_LEN, "g*^r* b*^r*");   /* g0^r0 g1^r1 b0^r2 b1^r3 with 4 x 4 */

    mem_ctrl_cfg *k = &c->ctrl;
    k->read_queue = 64;
    k->write_queue = 64;
    k->cmd_queue = 0;
    k->active_buffer = 32;
    k->row_hit_cap = 32;
    k->page_policy = MEM_PAGE_OPEN;
    k->wr_high_pct = 80;
    k->wr_low_pct = 20;
    k->wr_idle_min = 1;
    k->dual_cmd = 1;
    k->merge_reads = 0;
    k->skip_idle = 1;
}

npu_status mem_config_preset(mem_config *c, const char *name, npu_diag *d)
{
    for (size_t i = 0; i < NPU_ARRAY_LEN(mem_presets); i++)
        if (strcmp(mem_presets[i].name, name) == 0) {
            apply_preset(c, &mem_presets[i]);
            return NPU_OK;
        }
    return npu_errf(d, NPU_EINVAL, "unknown HBM preset \"%s\" (hbm2, hbm2e, hbm3, hbm3e)", name);
}

void mem_config_default(mem_config *c)
{
    memset(c, 0, sizeof *c);
    apply_preset(c, &mem_presets[1]);
    c->l2.enabled = 1;
    c->l2.size_bytes = 192LL << 20;
    c->l2.ways = 16;
    c->l2.line_bytes = 512;
    c->l2.slices = 32;
    c->l2.hit_latency = 60;
    c->l2.slice_bytes_per_cycle = 64;
    c->l2.mshrs = 64;
    c->l2.write_back = 1;
    c->l2.write_allocate = 1;
    c->l2.queue = 64;
    c->ub.size_bytes = 192 * 1024;    /* DESIGN.md: 48 banks x 4 KB in 16 bank groups */
    c->ub.banks = 48;
    c->ub.bank_groups = 16;
    c->ub.block_bytes = 32;
    c->memsim.line_bytes = 64;
    c->memsim.inject_per_cycle = 16;
}

int mem_config_atom_bytes(const mem_config *c)
{
    return c->hbm.width_bits * c->hbm.burst_length / 8;
}

double mem_config_peak_Bps(const mem_config *c)
{
    const mem_hbm_cfg *h = &c->hbm;
    return (double)h->stacks * h->channels * h->pseudo_channels * h->width_bits *
           (double)h->data_rate_mbps * 1e6 / 8.0;
}

/* ---- mapping ------------------------------------------------------------- */
static int field_of(char ch)
{
    switch (ch) {
    case 'k': return MF_K; case 'h': return MF_H; case 'p': return MF_P; case 's': return MF_S;
    case 'g': return MF_G; case 'b': return MF_B; case 'c': return MF_C; case 'r': return MF_R;
    default: return -1;
    }
}

/* The decimal digits at *s (at least one), advancing past them: their value,
 * or 1000 when it is larger (no field of an address has that many bits, so
 * the callers' range checks reject it). */
static int read_count(const char **s)
{
    int v = 0;
    while (**s >= '0' && **s <= '9') {
        if (v < 1000) v = v * 10 + (**s - '0');
        (*s)++;
    }
    return v < 1000 ? v : 1000;
}

/* The key path in where: after its file ("machine.json: memory" ->
 * "memory"), after "--set " ("--set memory" -> "memory"), else all of it
 * (a memsim config path without a "memory" object): messages
 * name the size keys in full (memory.hbm.stacks), so that a --set of one is
 * recognised in them */
static const char *key_root(const char *where)
{
    const char *c = strstr(where, ": "), *n;
    while (c && (n = strstr(c + 2, ": ")))
        c = n;
    if (c) return c + 2;
    c = strrchr(where, ' ');   /* "--set memory" */
    return c ? c + 1 : where;
}

/* One XOR term of the map: bit ti of field t ^= bit si of field s. */
static npu_status add_xor(mem_map *m, int t, int ti, int sf, int si, const char *where, npu_diag *d)
{
    if (m->nxor >= 32)
        return npu_errf(d, NPU_EINVAL, "%s.hbm.xor_map: more than 32 terms", where);
    m->xt[m->nxor] = (uint8_t)t; m->xti[m->nxor] = (uint8_t)ti;
    m->xs[m->nxor] = (uint8_t)sf; m->xsi[m->nxor] = (uint8_t)si;
    m->nxor++;
    return NPU_OK;
}

npu_status mem_map_build(const mem_hbm_cfg *h, mem_map *m, const char *where, npu_diag *d)
{
    memset(m, 0, sizeof *m);
    int atom = h->width_bits * h->burst_length / 8;
    m->off_bits = mem_log2((uint64_t)atom);
    if (m->off_bits < 0)
        return npu_errf(d, NPU_EINVAL, "%s.hbm: atom (width_bits x burst_length / 8 = %d B) must be a power of 2",
                        where, atom);
    int dims[MF__N] = { h->stacks, h->channels, h->pseudo_channels, h->sids,
                        h->bankgroups, h->banks, h->columns, h->rows };
    static const char *const names[MF__N] = { "stacks", "channels", "pseudo_channels", "sids",
                                              "bankgroups", "banks", "columns", "rows" };
    int need[MF__N];
    for (int f = 0; f < MF__N; f++) {
        need[f] = mem_log2((uint64_t)dims[f]);
        if (need[f] < 0)
            return npu_errf(d, NPU_EINVAL, "%s.hbm.%s: %d is not a power of 2 (the address mapping needs one)",
                            where, names[f], dims[f]);
    }
    /* The terms, read once: a field letter with a count, bare (one bit;
     * a bare r ending a term is r*) or with '*', all the bits the counted
     * terms of the field leave anywhere in the string, so that a mapping
     * written with '*' stays valid when a size changes (--set
     * memory.hbm.stacks=2). Then the bits, LSB first. */
    struct term { uint8_t f, star; int cnt; const char *at; } tm[MEM_MAP_LEN];
    int nt = 0, given[MF__N] = { 0 }, star[MF__N] = { 0 };
    for (const char *s = h->mapping; *s;) {
        if (*s == ' ' || *s == ',') { s++; continue; }
        int f = field_of(*s);
        if (f < 0)
            return npu_errf(d, NPU_EINVAL, "%s.hbm.mapping: unknown field letter '%c' at offset %d (use k h p s g b c r)",
                            where, *s, (int)(s - h->mapping));
        struct term *t = &tm[nt++];
        *t = (struct term){ (uint8_t)f, 0, 1, s++ };
        if (*s >= '0' && *s <= '9') {
            const char *at = s;
            t->cnt = read_count(&s);
            if (t->cnt > 64)
                return npu_errf(d, NPU_EINVAL, "%s.hbm.mapping: field '%c' at offset %d: %.*s bits is more "
                                "than an address has (64)", where, "khpsgbcr"[f], (int)(at - 1 - h->mapping),
                                (int)(s - at) > 24 ? 24 : (int)(s - at), at);
        } else if (*s == '*' || (f == MF_R && (*s == 0 || *s == ' '))) {
            if (*s == '*') s++;
            t->star = 1;
            if (star[f]++)
                return npu_errf(d, NPU_EINVAL, "%s.hbm.mapping: field '%c' has a second '*' at offset %d "
                                "(one term may take the rest of a field)", where, "khpsgbcr"[f],
                                (int)(t->at - h->mapping));
        }
        if (!t->star) given[f] += t->cnt;
    }
    int have[MF__N] = { 0 };
    for (int i = 0; i < nt; i++) {
        int f = tm[i].f, cnt = tm[i].star ? NPU_MAX(need[f] - given[f], 0) : tm[i].cnt;
        if (have[f] + cnt > need[f])
            return npu_errf(d, NPU_EINVAL, "%s.hbm.mapping: field '%c' has %d bits, more than log2(%s.hbm.%s) = %d "
                            "(a term like %c* takes whatever the field has)",
                            where, "khpsgbcr"[f], given[f], key_root(where), names[f], need[f], "khpsgbcr"[f]);
        for (int j = 0; j < cnt; j++) {
            if (m->nbits >= 64 - m->off_bits)
                return npu_errf(d, NPU_EINVAL, "%s.hbm.mapping: more than 64 address bits", where);
            m->field[m->nbits] = (uint8_t)f;
            m->idx[m->nbits] = (uint8_t)have[f]++;
            m->nbits++;
        }
    }
    for (int f = 0; f < MF__N; f++) {
        if (have[f] != need[f])
            return npu_errf(d, NPU_EINVAL, "%s.hbm.mapping: field '%c' has %d bits, log2(%s.hbm.%s) = %d needed "
                            "(a term like %c* takes whatever the field has)",
                            where, "khpsgbcr"[f], have[f], key_root(where), names[f], need[f], "khpsgbcr"[f]);
        m->width[f] = need[f];
    }
    /* xor_map: terms t<i>^s<j> (bit i of field t ^= bit j of field s), or
     * t*^s*: every bit of t, each with the next bit of s that no earlier
     * '*' term took (from bit 0), so that the hash follows a changed size
     * (the presets' g*^r* b*^r* is g0^r0 g1^r1 b0^r2 b1^r3 for 4 bank
     * groups of 4 banks) */
    int src_next[MF__N] = { 0 };
    const char *s = h->xor_map;
    while (*s) {
        if (*s == ' ' || *s == ',') { s++; continue; }
        int t = field_of(*s), ti = 0, sf, si = 0, star = 0;
        const char *tok = s;
        if (t < 0) goto bad;
        s++;
        if (*s == '*') { star = 1; s++; }
        else if (*s >= '0' && *s <= '9') ti = read_count(&s);
        else goto bad;
        if (*s++ != '^') goto bad;
        sf = field_of(*s);
        if (sf < 0) goto bad;
        s++;
        if (star) {
            if (*s++ != '*') goto bad;
            if (t == sf)
                return npu_errf(d, NPU_EINVAL, "%s.hbm.xor_map: term '%.*s' at offset %d XORs a field with itself",
                                where, (int)(s - tok), tok, (int)(tok - h->xor_map));
            if (src_next[sf] + need[t] > need[sf])
                return npu_errf(d, NPU_EINVAL, "%s.hbm.xor_map: term '%.*s' at offset %d needs %d bits of '%c' "
                                "from bit %d, which has %d (log2(%s.hbm.%s))", where, (int)(s - tok), tok,
                                (int)(tok - h->xor_map), need[t], "khpsgbcr"[sf], src_next[sf], need[sf],
                                key_root(where), names[sf]);
            for (int i = 0; i < need[t]; i++)
                if (add_xor(m, t, i, sf, src_next[sf]++, where, d))
                    return NPU_EINVAL;
            continue;
        }
        if (!(*s >= '0' && *s <= '9')) goto bad;
        si = read_count(&s);
        if (t == sf && ti == si)
            return npu_errf(d, NPU_EINVAL, "%s.hbm.xor_map: term '%.*s' at offset %d XORs a bit with itself",
                            where, (int)(s - tok), tok, (int)(tok - h->xor_map));
        if (ti >= need[t] || si >= need[sf]) {
            int bf = ti >= need[t] ? t : sf, bi = ti >= need[t] ? ti : si;
            return npu_errf(d, NPU_EINVAL, "%s.hbm.xor_map: term '%.*s' at offset %d names bit %d of '%c', "
                            "which has %d bit%s (log2(%s.hbm.%s)): the XOR terms name fixed bits, so give an "
                            "xor_map for the new size (or terms like %c*^%c*)", where, (int)(s - tok), tok,
                            (int)(tok - h->xor_map), bi, "khpsgbcr"[bf], need[bf], need[bf] == 1 ? "" : "s",
                            key_root(where), names[bf], "khpsgbcr"[t], "khpsgbcr"[sf]);
        }
        if (add_xor(m, t, ti, sf, si, where, d))
            return NPU_EINVAL;
        continue;
    bad:
        return npu_errf(d, NPU_EINVAL, "%s.hbm.xor_map: expected terms like g0^r1 or g*^r* at offset %d",
                        where, (int)(tok - h->xor_map));
    }
    return NPU_OK;
}

/* ---- validation ------------------------------------------------------------ */
npu_status mem_config_validate(const mem_config *c, const char *where, npu_diag *d)
{
    mem_map m;
    npu_status st = mem_map_build(&c->hbm, &m, where, d);
    if (st) return st;
    const mem_hbm_cfg *h = &c->hbm;
    if (h->burst_length % 2)
        return npu_errf(d, NPU_EINVAL, "%s.hbm.burst_length: must be even (DDR)", where);
    if (h->tRAS + h->tRP > h->tRC + 0 && h->tRC < h->tRAS)
        return npu_errf(d, NPU_EINVAL, "%s.hbm.tRC: %d is below tRAS %d", where, h->tRC, h->tRAS);
    const mem_l2_cfg *l = &c->l2;
    if (mem_log2((uint64_t)l->line_bytes) < 0)
        return npu_errf(d, NPU_EINVAL, "%s.l2.line_bytes: %d is not a power of 2", where, l->line_bytes);
    if (l->line_bytes < mem_config_atom_bytes(c))
        return npu_errf(d, NPU_EINVAL, "%s.l2.line_bytes: %d is smaller than one HBM atom (%d B)",
                        where, l->line_bytes, mem_config_atom_bytes(c));
    int64_t per = (int64_t)l->ways * l->line_bytes * l->slices;
    if (l->size_bytes % per)
        return npu_errf(d, NPU_EINVAL, "%s.l2.size_bytes: %lld is not a multiple of ways x line_bytes x slices (%lld)",
                        where, (long long)l->size_bytes, (long long)per);
    if (c->ub.banks % c->ub.bank_groups)
        return npu_errf(d, NPU_EINVAL, "%s.ub.bank_groups: %d does not divide banks (%d)", where, c->ub.bank_groups, c->ub.banks);
    if (c->ctrl.wr_low_pct > c->ctrl.wr_high_pct)
        return npu_errf(d, NPU_EINVAL, "%s.controller.wr_low_pct: %d is above wr_high_pct %d",
                        where, c->ctrl.wr_low_pct, c->ctrl.wr_high_pct);
    return NPU_OK;
}

/* ---- parse / set / dump ---------------------------------------------------- */
static const mem_key *find_key(const char *group, const char *name)
{
    for (size_t i = 0; i < NPU_ARRAY_LEN(mem_keys); i++)
        if (strcmp(mem_keys[i].group, group) == 0 && strcmp(mem_keys[i].name, name) == 0)
            return &mem_keys[i];
    return NULL;
}

/* "group.name" of table row i, for npu_suggest (ctx: a buffer of 96 bytes) */
static const char *mem_key_name(size_t i, void *ctx)
{
    snprintf(ctx, 96, "%s.%s", mem_keys[i].group, mem_keys[i].name);
    return ctx;
}

/* where.group.name: unknown key, with the nearest keys of the table */
static npu_status unknown_mem_key(const char *where, const char *group, const char *name, npu_diag *d)
{
    char key[160], pre[128], sug[600], tmp[96];
    snprintf(key, sizeof key, "%s.%s", group, name);
    /* where may start with the file ("c.json: memory"): the hint is a key */
    const char *w = where, *colon;
    while ((colon = strstr(w, ": ")))
        w = colon + 2;
    snprintf(pre, sizeof pre, "%s.", w);
    npu_suggest(key, NPU_ARRAY_LEN(mem_keys), mem_key_name, tmp, pre, sug, sizeof sug);
    return npu_errf(d, NPU_EINVAL, "%s.%s: unknown key%s", where, key, sug);
}

static npu_status range_err(const mem_key *k, const char *where, npu_diag *d)
{
    switch (k->kind) {
    case K_INT: case K_I64:
        return npu_errf(d, NPU_EINVAL, "%s.%s.%s: expected integer in %lld..%lld",
                        where, k->group, k->name, k->lo, k->hi);
    case K_BOOL:
        return npu_errf(d, NPU_EINVAL, "%s.%s.%s: expected true or false", where, k->group, k->name);
    case K_ENUM: {
        char list[256] = "";
        size_t n = 0;
        for (int i = 0; k->enums[i]; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? " | " : "", k->enums[i]);
        return npu_errf(d, NPU_EINVAL, "%s.%s.%s: expected one of %s", where, k->group, k->name, list);
    }
    default:
        return npu_errf(d, NPU_EINVAL, "%s.%s.%s: expected a string of at most %d characters",
                        where, k->group, k->name, MEM_MAP_LEN - 1);
    }
}

static npu_status store_int(mem_config *c, const mem_key *k, long long v, const char *where, npu_diag *d)
{
    if (v < k->lo || v > k->hi) return range_err(k, where, d);
    char *p = (char *)c + k->off;
    if (k->kind == K_I64) { int64_t x = v; memcpy(p, &x, sizeof x); }
    else { int x = (int)v; memcpy(p, &x, sizeof x); }
    return NPU_OK;
}

static npu_status store_str(mem_config *c, const mem_key *k, const char *s, const char *where, npu_diag *d)
{
    char *p = (char *)c + k->off;
    if (k->kind == K_ENUM) {
        for (int i = 0; k->enums[i]; i++)
            if (strcmp(k->enums[i], s) == 0) { memcpy(p, &i, sizeof i); return NPU_OK; }
        return range_err(k, where, d);
    }
    if (strlen(s) >= MEM_MAP_LEN) return range_err(k, where, d);
    memset(p, 0, MEM_MAP_LEN);      /* whole buffer, so configs compare with memcmp */
    memcpy(p, s, strlen(s));
    return NPU_OK;
}

/* value as an integer, a size (npu_parse_count's suffixes) where the key
 * counts bytes; 0 ok */
static int parse_int_text(const mem_key *k, const char *value, long long *out)
{
    if (k->bytes) {
        uint64_t u;
        if (npu_parse_count(value, 1, &u) || u > LLONG_MAX) return -1;
        *out = (long long)u;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 0);
    if (errno || end == value || *end) return -1;
    *out = v;
    return 0;
}

/* A value text that is no number for k: the range, and for a size the
 * suffixes it takes and what it got (quoted as the caller shows it) */
static npu_status text_err(const mem_key *k, const char *where, const char *got, npu_diag *d)
{
    npu_status st = range_err(k, where, d);
    if (k->bytes && d) {
        size_t n = strlen(d->msg);
        snprintf(d->msg + n, sizeof d->msg - n, " (a size may end in K, M, G or T), got %s", got);
    }
    return st;
}

static npu_status parse_value(mem_config *c, const mem_key *k, const cJSON *v, const char *where, npu_diag *d)
{
    switch (k->kind) {
    case K_INT: case K_I64: {
        long long t;
        if (cJSON_IsString(v) && k->bytes) {   /* "96M", as in --set */
            if (parse_int_text(k, v->valuestring, &t) == 0) return store_int(c, k, t, where, d);
            char got[80];
            snprintf(got, sizeof got, "\"%.60s\"", v->valuestring);
            return text_err(k, where, got, d);
        }
        if (!cJSON_IsNumber(v)) return range_err(k, where, d);
        double x = v->valuedouble;
        if (x != floor(x) || x < (double)k->lo || x > (double)k->hi) return range_err(k, where, d);
        return store_int(c, k, (long long)x, where, d);
    }
    case K_BOOL:
        if (!cJSON_IsBool(v)) return range_err(k, where, d);
        return store_int(c, k, cJSON_IsTrue(v) ? 1 : 0, where, d);
    default:
        if (!cJSON_IsString(v)) return range_err(k, where, d);
        return store_str(c, k, v->valuestring, where, d);
    }
}

static int is_group(const char *g)
{
    return !strcmp(g, "hbm") || !strcmp(g, "controller") || !strcmp(g, "l2") || !strcmp(g, "memsim") ||
           !strcmp(g, "ub");
}

npu_status mem_config_parse(const cJSON *obj, const char *where, mem_config *c, npu_diag *d)
{
    if (!where) where = "memory";
    if (!cJSON_IsObject(obj)) return npu_errf(d, NPU_EINVAL, "%s: expected an object", where);
    /* presets first, so explicit keys override them wherever they appear */
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "preset");
    const cJSON *hb = cJSON_GetObjectItemCaseSensitive(obj, "hbm");
    const cJSON *hp = cJSON_IsObject(hb) ? cJSON_GetObjectItemCaseSensitive(hb, "preset") : NULL;
    const cJSON *pr[2] = { p, hp };
    for (int i = 0; i < 2; i++) {
        if (!pr[i]) continue;
        if (!cJSON_IsString(pr[i]))
            return npu_errf(d, NPU_EINVAL, "%s.%spreset: expected a string (hbm2, hbm2e, hbm3, hbm3e)",
                            where, i ? "hbm." : "");
        if (mem_config_preset(c, pr[i]->valuestring, d)) {
            npu_diag_prefix(d, "%s.%spreset", where, i ? "hbm." : "");
            return NPU_EINVAL;
        }
    }
    for (const cJSON *g = obj->child; g; g = g->next) {
        /* a key twice is ambiguous (which one counts?): an error, as in the
         * rest of the config (frontend/config.c) */
        if (npu_json_dup_key(obj, g))
            return npu_errf(d, NPU_EINVAL, "%s.%s: duplicate key", where, g->string);
        if (!strcmp(g->string, "preset") || !strcmp(g->string, "comment") || g->string[0] == '_') continue;
        if (!is_group(g->string))
            return npu_errf(d, NPU_EINVAL, "%s.%s: unknown key (hbm, controller, l2, memsim, ub, preset)",
                            where, g->string);
        if (!cJSON_IsObject(g)) return npu_errf(d, NPU_EINVAL, "%s.%s: expected an object", where, g->string);
        for (const cJSON *v = g->child; v; v = v->next) {
            if (npu_json_dup_key(g, v))
                return npu_errf(d, NPU_EINVAL, "%s.%s.%s: duplicate key", where, g->string, v->string);
            /* "_source"-style keys carry provenance notes in the preset files */
            if (v->string[0] == '_' || !strcmp(v->string, "comment")) continue;
            if (!strcmp(g->string, "hbm") && !strcmp(v->string, "preset")) continue;
            const mem_key *k = find_key(g->string, v->string);
            if (!k) return unknown_mem_key(where, g->string, v->string, d);
            npu_status st = parse_value(c, k, v, where, d);
            if (st) return st;
        }
    }
    return mem_config_validate(c, where, d);
}

static int is_preset_key(const char *key) { return !strcmp(key, "preset") || !strcmp(key, "hbm.preset"); }

/* The table row of key ("hbm.tCL", relative to the memory object), or NULL
 * with the message naming where.key */
static const mem_key *key_of(const char *key, const char *where, npu_diag *d)
{
    const char *dot = strchr(key, '.');
    char group[32];
    if (!dot || (size_t)(dot - key) >= sizeof group) {
        npu_errf(d, NPU_EINVAL, "%s.%s: unknown key (expected group.key, e.g. hbm.tCL)", where, key);
        return NULL;
    }
    memcpy(group, key, (size_t)(dot - key));
    group[dot - key] = 0;
    const mem_key *k = find_key(group, dot + 1);
    if (!k) unknown_mem_key(where, group, dot + 1, d);
    return k;
}

npu_status mem_config_check_key(const char *key, const char *where, npu_diag *d)
{
    return is_preset_key(key) || key_of(key, where ? where : "--set memory", d) ? NPU_OK : NPU_EINVAL;
}

npu_status mem_config_set_at(mem_config *c, const char *key, const char *value, const char *where,
                             npu_diag *d)
{
    if (!where) where = "--set memory";
    if (is_preset_key(key)) {
        if (mem_config_preset(c, value, d)) { npu_diag_prefix(d, "%s.%s", where, key); return NPU_EINVAL; }
        return NPU_OK;
    }
    const mem_key *k = key_of(key, where, d);
    if (!k) return NPU_EINVAL;
    npu_status st;
    if (k->kind == K_INT || k->kind == K_I64) {
        long long v;
        char got[80];
        snprintf(got, sizeof got, "'%.60s'", value);
        st = parse_int_text(k, value, &v) ? text_err(k, where, got, d) : store_int(c, k, v, where, d);
    } else if (k->kind == K_BOOL) {
        if (!strcmp(value, "true") || !strcmp(value, "1")) st = store_int(c, k, 1, where, d);
        else if (!strcmp(value, "false") || !strcmp(value, "0")) st = store_int(c, k, 0, where, d);
        else st = range_err(k, where, d);
    } else {
        st = store_str(c, k, value, where, d);
    }
    /* cross-field rules are checked once all overrides are in (mem_hbm_new
     * and mem_sys_new validate), so that e.g. stacks and mapping can change
     * together */
    return st;
}

npu_status mem_config_set(mem_config *c, const char *key, const char *value, npu_diag *d)
{
    return mem_config_set_at(c, key, value, "--set memory", d);
}

cJSON *mem_config_dump(const mem_config *c)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    for (size_t i = 0; i < NPU_ARRAY_LEN(mem_keys); i++) {
        const mem_key *k = &mem_keys[i];
        cJSON *g = cJSON_GetObjectItemCaseSensitive(root, k->group);
        if (!g && !(g = cJSON_AddObjectToObject(root, k->group))) goto oom;
        const char *p = (const char *)c + k->off;
        cJSON *v = NULL;
        int x;
        int64_t y;
        switch (k->kind) {
        case K_INT: memcpy(&x, p, sizeof x); v = cJSON_AddNumberToObject(g, k->name, x); break;
        case K_I64: memcpy(&y, p, sizeof y); v = cJSON_AddNumberToObject(g, k->name, (double)y); break;
        case K_BOOL: memcpy(&x, p, sizeof x); v = cJSON_AddBoolToObject(g, k->name, x); break;
        case K_ENUM: memcpy(&x, p, sizeof x); v = cJSON_AddStringToObject(g, k->name, k->enums[x]); break;
        default: v = cJSON_AddStringToObject(g, k->name, p); break;
        }
        if (!v) goto oom;
    }
    return root;
oom:
    cJSON_Delete(root);
    return NULL;
}

char *mem_config_doc(void)
{
    npu_buf b = { 0 };
    npu_buf_printf(&b, "| key | type | range | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < NPU_ARRAY_LEN(mem_keys); i++) {
        const mem_key *k = &mem_keys[i];
        const char *ty = k->bytes ? "size" : k->kind == K_INT || k->kind == K_I64 ? "integer" : k->kind == K_BOOL ? "bool"
                       : k->kind == K_ENUM ? "enum" : "string";
        char range[128] = "";
        if (k->kind == K_INT || k->kind == K_I64) snprintf(range, sizeof range, "%lld..%lld", k->lo, k->hi);
        npu_buf_printf(&b, "| `%s.%s` | %s | %s | %s |\n", k->group, k->name, ty, range, k->doc);
    }
    if (npu_buf_append(&b, "", 1) || b.oom) { npu_buf_free(&b); return NULL; }
    return (char *)b.data;
}
