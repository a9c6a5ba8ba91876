/* mem_ub.c — bank and bank-group conflicts of the unified buffer, for the
 * vector unit's timing (rules in mem.h). Pure functions of the config. */
#include <string.h>

#include "memmodel/mem_int.h"

void mem_ub_bank(const mem_config *c, uint64_t addr, int *bank, int *group)
{
    uint64_t blk = addr / (uint64_t)c->ub.block_bytes;
    int b = (int)(blk % (uint64_t)c->ub.banks);
    if (bank) *bank = b;
    if (group) *group = b / (c->ub.banks / c->ub.bank_groups);
}

int mem_ub_conflict_cycles(const mem_config *c, const uint64_t *reads, int nreads,
                           const uint64_t *writes, int nwrites)
{
    /* small fixed arrays: banks and groups are bounded by the key table (1024) */
    uint16_t per_bank[1024];
    uint8_t grp_r[1024], grp_w[1024];
    memset(per_bank, 0, sizeof per_bank);
    memset(grp_r, 0, sizeof grp_r);
    memset(grp_w, 0, sizeof grp_w);
    int worst = 0;
    for (int pass = 0; pass < 2; pass++) {
        const uint64_t *a = pass ? writes : reads;
        int n = pass ? nwrites : nreads;
        for (int i = 0; i < n; i++) {
            int b, g;
            mem_ub_bank(c, a[i], &b, &g);
            if (++per_bank[b] > worst) worst = per_bank[b];
            (pass ? grp_w : grp_r)[g] = 1;
        }
    }
    int extra = worst > 1 ? worst - 1 : 0;
    for (int g = 0; g < c->ub.bank_groups; g++)
        if (grp_r[g] && grp_w[g]) { extra++; break; }
    return extra;
}
