/* mem_int.h — internals shared by the memmodel files (not public). */
#ifndef MEM_INT_H
#define MEM_INT_H

#include "memmodel/mem.h"

/* Address-mapping fields; letters in the mapping string. */
enum { MF_K, MF_H, MF_P, MF_S, MF_G, MF_B, MF_C, MF_R, MF__N };

/* A parsed mapping: for each address bit above the atom offset (LSB
 * first), which field and which bit of it; then XOR terms applied to the
 * decoded fields (sources read before any XOR is applied). */
typedef struct mem_map {
    int off_bits;             /* log2(atom bytes) */
    int nbits;
    uint8_t field[64], idx[64];
    int nxor;
    uint8_t xt[32], xti[32], xs[32], xsi[32];
    int width[MF__N];         /* bits of each field */
} mem_map;

npu_status mem_map_build(const mem_hbm_cfg *h, mem_map *m, const char *where, npu_diag *d);

/* Command types of the DRAM timing model and the checker. */
enum { MC_ACT, MC_PRE, MC_PREA, MC_RD, MC_RDA, MC_WR, MC_WRA, MC_REFA, MC_REFB, MC__N };
extern const char *const mem_cmd_names[MC__N];
static inline int mem_cmd_is_col(int c) { return c == MC_RD || c == MC_RDA || c == MC_WR || c == MC_WRA; }

/* One issued command, as the checker sees it. */
typedef struct mem_cmd_rec {
    uint64_t t;
    uint32_t row;
    uint16_t chan;
    uint8_t cmd, pc, bg, bank;     /* bg: flat (sid * bankgroups + bg) */
} mem_cmd_rec;

/* The independent checker (mem_check.c). */
npu_status mem_check_run(const mem_config *c, const mem_cmd_rec *log, size_t n,
                         uint64_t *violations, npu_diag *d);

/* Integer log2 of a power of two, -1 otherwise. */
static inline int mem_log2(uint64_t v)
{
    if (v == 0 || (v & (v - 1))) return -1;
    int n = 0;
    while (v > 1) { v >>= 1; n++; }
    return n;
}

/* The latency histogram's bucket of v and the add, inline for the models'
 * per-request paths (mem_hist_add is the same, out of line). */
static inline int mem_hist_bin(uint64_t v)
{
    if (v < MEM_HIST_EXACT) return (int)v;
    int oct = 63 - __builtin_clzll(v);          /* >= 11 */
    int base = oct - 11;
    uint64_t sub = (v >> (oct - 7)) & (MEM_HIST_SUB - 1);
    int i = MEM_HIST_EXACT + base * MEM_HIST_SUB + (int)sub;
    return i < MEM_HIST_N ? i : MEM_HIST_N - 1;
}

static inline void mem_hist_add_i(mem_hist *h, uint64_t v)
{
    if (h->n == 0 || v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    h->n++;
    h->sum += v;
    h->bin[mem_hist_bin(v)]++;
}

#endif
