/* mem_check.c — an independent JEDEC timing checker.
 *
 * It replays a log of issued commands and checks each against the rules
 * written here afresh as named JEDEC pairs ("RD after ACT, same bank:
 * tRCDRD"), by remembering the last cycle of every command type at every
 * bank, bank group and pseudo-channel. It shares nothing with the model's
 * propagation tables (mem_hbm.c) except the config, so a slip in either
 * shows up as a violation. Also checked: bank state (RD to the open row,
 * ACT to a closed bank, REF with all banks closed), the four-ACT window,
 * the command buses (one row + one column command per cycle with dual
 * issue, one otherwise; an ACT's extra row-bus cycles), data-bus overlap
 * and the refresh interval (at most 8 postponed refreshes). */
#include <stdio.h>
#include <string.h>

#include "memmodel/mem_int.h"

#define NONE_T INT64_MIN

typedef struct rule {
    const char *name;
    int scope;               /* 0 bank, 1 bank group, 2 pseudo-channel */
    unsigned prev, next;     /* bit sets of MC_* */
    int min;
} rule;

#define B(x) (1u << (x))
#define RDS (B(MC_RD) | B(MC_RDA))
#define WRS (B(MC_WR) | B(MC_WRA))

static int64_t eff(const mem_config *c, int cmd, uint64_t t)
{
    return (int64_t)t + (cmd == MC_ACT ? c->hbm.act_cycles - 1 : 0);
}

npu_status mem_check_run(const mem_config *c, const mem_cmd_rec *log, size_t n,
                         uint64_t *violations, npu_diag *d)
{
    const mem_hbm_cfg *h = &c->hbm;
    int bc = h->burst_length / 2, wl = h->tCWL;
    int wr_rec = wl + bc + h->tWR;   /* WR to PRE */
    const rule rules[] = {
        { "ACT->ACT same bank (tRC)",        0, B(MC_ACT), B(MC_ACT), h->tRC },
        { "ACT->RD same bank (tRCDRD)",      0, B(MC_ACT), RDS, h->tRCDRD },
        { "ACT->WR same bank (tRCDWR)",      0, B(MC_ACT), WRS, h->tRCDWR },
        { "ACT->PRE same bank (tRAS)",       0, B(MC_ACT), B(MC_PRE), h->tRAS },
        { "PRE->ACT same bank (tRP)",        0, B(MC_PRE), B(MC_ACT) | B(MC_REFB), h->tRP },
        { "RD->PRE same bank (tRTP)",        0, B(MC_RD), B(MC_PRE), h->tRTP },
        { "WR->PRE same bank (CWL+BL/2+tWR)", 0, B(MC_WR), B(MC_PRE), wr_rec },
        { "RDA->ACT same bank (tRTP+tRP)",   0, B(MC_RDA), B(MC_ACT) | B(MC_REFB), h->tRTP + h->tRP },
        { "WRA->ACT same bank (CWL+BL/2+tWR+tRP)", 0, B(MC_WRA), B(MC_ACT) | B(MC_REFB), wr_rec + h->tRP },
        { "REFpb->ACT same bank (tRFCpb)",   0, B(MC_REFB), B(MC_ACT), h->tRFCpb },
        { "ACT->REFpb same bank (tRC)",      0, B(MC_ACT), B(MC_REFB), h->tRC },
        { "col->col same bank group (tCCD_L)", 1, RDS, RDS, NPU_MAX(bc, h->tCCD_L) },
        { "WR->WR same bank group (tCCD_L)", 1, WRS, WRS, NPU_MAX(bc, h->tCCD_L) },
        { "WR->RD same bank group (tWTR_L)", 1, WRS, RDS, wl + bc + h->tWTR_L },
        { "ACT->ACT same bank group (tRRD_L)", 1, B(MC_ACT), B(MC_ACT), h->tRRD_L },
        { "RD->RD (tCCD_S)",                 2, RDS, RDS, NPU_MAX(bc, h->tCCD_S) },
        { "WR->WR (tCCD_S)",                 2, WRS, WRS, NPU_MAX(bc, h->tCCD_S) },
        { "RD->WR (tRTW)",                   2, RDS, WRS, h->tRTW },
        { "WR->RD (tWTR_S)",                 2, WRS, RDS, wl + bc + h->tWTR_S },
        { "ACT->ACT (tRRD_S)",               2, B(MC_ACT), B(MC_ACT), h->tRRD_S },
        { "RD->PREA (tRTP)",                 2, RDS, B(MC_PREA), h->tRTP },
        { "WR->PREA (write recovery)",       2, WRS, B(MC_PREA), wr_rec },
        { "ACT->PREA (tRAS)",                2, B(MC_ACT), B(MC_PREA), h->tRAS },
        { "PREA->ACT (tRP)",                 2, B(MC_PREA), B(MC_ACT) | B(MC_REFA) | B(MC_REFB), h->tRP },
        { "PRE->REFab (tRP)",                2, B(MC_PRE), B(MC_REFA), h->tRP },
        { "ACT->REFab (tRC)",                2, B(MC_ACT), B(MC_REFA), h->tRC },
        { "RDA->REFab (tRTP+tRP)",           2, B(MC_RDA), B(MC_REFA), h->tRTP + h->tRP },
        { "WRA->REFab (write recovery+tRP)", 2, B(MC_WRA), B(MC_REFA), wr_rec + h->tRP },
        { "REFab->any (tRFC)",               2, B(MC_REFA), B(MC_ACT) | B(MC_REFA) | B(MC_REFB) | B(MC_PREA) | B(MC_PRE), h->tRFC },
        { "REFpb->REFab (tRFCpb)",           2, B(MC_REFB), B(MC_REFA), h->tRFCpb },
        { "REFpb->ACT/REFpb other bank (tRREFD)", 2, B(MC_REFB), B(MC_ACT) | B(MC_REFB), h->tRREFD },
        { "ACT->REFpb (tRRD_S)",             2, B(MC_ACT), B(MC_REFB), h->tRRD_S },
    };
    uint64_t bad = 0;
    npu_status st = NPU_OK;
    if (violations) *violations = 0;
    if (n == 0) return NPU_OK;
    int nch = h->stacks * h->channels, npc = h->pseudo_channels;
    int ngpc = h->sids * h->bankgroups, nbpc = ngpc * h->banks;
    size_t nb = (size_t)nch * npc * nbpc, ng = (size_t)nch * npc * ngpc, np = (size_t)nch * npc;
    int64_t *bank_last = npu_malloc(nb * MC__N * sizeof(int64_t));
    int64_t *bg_last = npu_malloc(ng * MC__N * sizeof(int64_t));
    int64_t *pc_last = npu_malloc(np * MC__N * sizeof(int64_t));
    int32_t *open = npu_malloc(nb * sizeof(int32_t));
    int64_t *faw = npu_malloc(np * 4 * sizeof(int64_t));
    int *faw_i = npu_calloc(np, sizeof(int));
    int64_t *data_end = npu_malloc(np * sizeof(int64_t));
    int64_t *ref_last = npu_malloc(np * sizeof(int64_t));
    int64_t *rowbus = npu_malloc((size_t)nch * sizeof(int64_t));
    int64_t *cyc = npu_malloc((size_t)nch * sizeof(int64_t));
    int *ncol = npu_calloc((size_t)nch, sizeof(int)), *nrow = npu_calloc((size_t)nch, sizeof(int));
    if (!bank_last || !bg_last || !pc_last || !open || !faw || !faw_i || !data_end || !ref_last ||
        !rowbus || !cyc || !ncol || !nrow) {
        st = npu_errf(d, NPU_ENOMEM, "mem_check: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nb * MC__N; i++) bank_last[i] = NONE_T;
    for (size_t i = 0; i < ng * MC__N; i++) bg_last[i] = NONE_T;
    for (size_t i = 0; i < np * MC__N; i++) pc_last[i] = NONE_T;
    for (size_t i = 0; i < nb; i++) open[i] = -1;
    for (size_t i = 0; i < np * 4; i++) faw[i] = NONE_T;
    for (size_t i = 0; i < np; i++) { data_end[i] = NONE_T; ref_last[i] = 0; }
    for (int i = 0; i < nch; i++) { rowbus[i] = NONE_T; cyc[i] = -1; }

#define FAIL(...) do { if (bad++ == 0) st = npu_errf(d, NPU_EINVAL, __VA_ARGS__); } while (0)
    for (size_t k = 0; k < n; k++) {
        const mem_cmd_rec *r = &log[k];
        int ch = r->chan, p = r->pc, cmd = r->cmd;
        int pcl = ch * npc + p;
        int g = pcl * ngpc + r->bg, b = pcl * nbpc + r->bank;
        int bank_cmd = cmd != MC_PREA && cmd != MC_REFA;
        int64_t te = eff(c, cmd, r->t);
        const char *nm = mem_cmd_names[cmd];
        if (k && r->t < log[k - 1].t) FAIL("command %zu (%s) at %llu is earlier than the one before it", k, nm, (unsigned long long)r->t);
        /* command buses */
        if (cyc[ch] != (int64_t)r->t) { cyc[ch] = (int64_t)r->t; ncol[ch] = nrow[ch] = 0; }
        if (mem_cmd_is_col(cmd)) ncol[ch]++; else nrow[ch]++;
        if (c->ctrl.dual_cmd ? (ncol[ch] > 1 || nrow[ch] > 1) : ncol[ch] + nrow[ch] > 1)
            FAIL("chan %d cycle %llu: more commands than the command bus carries (%s)", ch, (unsigned long long)r->t, nm);
        if (!mem_cmd_is_col(cmd)) {
            if (rowbus[ch] != NONE_T && (int64_t)r->t < rowbus[ch])
                FAIL("chan %d cycle %llu: %s while an ACT still occupies the row bus", ch, (unsigned long long)r->t, nm);
            if (cmd == MC_ACT) rowbus[ch] = (int64_t)r->t + c->hbm.act_cycles;
        }
        /* pairwise rules: the last command of each preceding type is the tightest */
        for (size_t i = 0; i < NPU_ARRAY_LEN(rules); i++) {
            const rule *u = &rules[i];
            if (!(u->next & B(cmd)) || u->min <= 0) continue;
            if (u->scope < 2 && !bank_cmd) continue;
            const int64_t *last = u->scope == 0 ? &bank_last[(size_t)b * MC__N]
                                : u->scope == 1 ? &bg_last[(size_t)g * MC__N] : &pc_last[(size_t)pcl * MC__N];
            for (int x = 0; x < MC__N; x++) {
                if (!(u->prev & B(x)) || last[x] == NONE_T) continue;
                /* REFpb -> ACT of the same bank is tRFCpb, not tRREFD */
                if (te - last[x] < u->min)
                    FAIL("chan %d pc %d bg %d bank %d: %s at %llu only %lld tCK after %s: %s needs %d",
                         ch, p, r->bg, r->bank, nm, (unsigned long long)r->t, (long long)(te - last[x]),
                         mem_cmd_names[x], u->name, u->min);
            }
        }
        /* four-ACT window */
        if (cmd == MC_ACT && h->tFAW) {
            int64_t *w = &faw[(size_t)pcl * 4];
            int64_t oldest = w[faw_i[pcl]];
            if (oldest != NONE_T && te - oldest < h->tFAW)
                FAIL("chan %d pc %d: fifth ACT at %llu within tFAW = %d of the fourth before it",
                     ch, p, (unsigned long long)r->t, h->tFAW);
            w[faw_i[pcl]] = te;
            faw_i[pcl] = (faw_i[pcl] + 1) & 3;
        }
        /* bank state */
        switch (cmd) {
        case MC_ACT:
            if (open[b] >= 0) FAIL("chan %d pc %d bank %d: ACT at %llu to an open bank", ch, p, r->bank, (unsigned long long)r->t);
            open[b] = (int32_t)r->row;
            break;
        case MC_PRE:
            if (open[b] < 0) FAIL("chan %d pc %d bank %d: PRE at %llu to a closed bank", ch, p, r->bank, (unsigned long long)r->t);
            open[b] = -1;
            break;
        case MC_PREA:
            for (int i = 0; i < nbpc; i++) open[pcl * nbpc + i] = -1;
            break;
        case MC_RD: case MC_WR: case MC_RDA: case MC_WRA:
            if (open[b] != (int32_t)r->row)
                FAIL("chan %d pc %d bank %d: %s at %llu to row %u but the open row is %d",
                     ch, p, r->bank, nm, (unsigned long long)r->t, r->row, open[b]);
            if (cmd == MC_RDA || cmd == MC_WRA) open[b] = -1;
            {
                int64_t s = (int64_t)r->t + (cmd == MC_RD || cmd == MC_RDA ? h->tCL : h->tCWL);
                if (data_end[pcl] != NONE_T && s < data_end[pcl])
                    FAIL("chan %d pc %d: data of %s at %llu overlaps the previous burst", ch, p, nm, (unsigned long long)r->t);
                data_end[pcl] = s + bc;
            }
            break;
        case MC_REFA:
            for (int i = 0; i < nbpc; i++)
                if (open[pcl * nbpc + i] >= 0) { FAIL("chan %d pc %d: REFab at %llu with bank %d open", ch, p, (unsigned long long)r->t, i); break; }
            if (c->hbm.refresh == MEM_REF_ALL_BANK && (int64_t)r->t - ref_last[pcl] > 9LL * h->tREFI)
                FAIL("chan %d pc %d: REFab at %llu more than 9 x tREFI after the previous one", ch, p, (unsigned long long)r->t);
            ref_last[pcl] = (int64_t)r->t;
            break;
        case MC_REFB:
            if (open[b] >= 0) FAIL("chan %d pc %d bank %d: REFpb at %llu to an open bank", ch, p, r->bank, (unsigned long long)r->t);
            break;
        }
        /* remember */
        if (bank_cmd) {
            bank_last[(size_t)b * MC__N + cmd] = te;
            bg_last[(size_t)g * MC__N + cmd] = te;
        } else {
            /* PC-level commands constrain every bank through the PC scope */
        }
        pc_last[(size_t)pcl * MC__N + cmd] = te;
    }
#undef FAIL
    if (violations) *violations = bad;
out:
    npu_free(bank_last); npu_free(bg_last); npu_free(pc_last); npu_free(open); npu_free(faw);
    npu_free(faw_i); npu_free(data_end); npu_free(ref_last); npu_free(rowbus); npu_free(cyc);
    npu_free(ncol); npu_free(nrow);
    return st;
}
