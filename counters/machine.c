/* machine.c — a machine config's peaks as the counters' metrics and the
 * roofline use them (ctr_machine): the one place that turns config keys
 * into peak rates, for npusim stat and for npuview's roofline (which reads
 * the config a trace embeds). */
#include <string.h>

#include "counters/ctr.h"
#include "frontend/config.h"   /* (before isa.h: the dtype enum) */
#include "isa/isa.h"

void ctr_machine_from_cfg(const cfg_machine *m, int ncores, ctr_machine *o)
{
    memset(o, 0, sizeof *o);
    o->clock_ghz = m->chip.clock_ghz;
    o->ncores = ncores;
    for (int dt = 0; dt < ISA_DT_COUNT && dt < 16; dt++) {
        const cfg_cube_dt *c = &m->cube.dt[dt];
        if (c->cycles_per_fractal > 0)
            o->cube_macs_per_cycle[dt] = (double)(c->m * c->k * c->n) / c->cycles_per_fractal;
        int bytes = isa_dtype_bytes(dt);
        if (bytes > 0)
            o->vec_elems_per_cycle[dt] = (double)m->vector.repeat_bytes / bytes;
    }
    o->gm_peak_Bps = m->timing.memory_model == CFG_MEM_HBM
                         ? mem_config_peak_Bps(&m->mem)
                         : m->timing.gm_fixed_bytes_per_cycle * m->chip.clock_ghz * 1e9;
    o->fixed_port = m->timing.memory_model != CFG_MEM_HBM;
    /* the L2 serves every GM request of the HBM model (docs/stat.md) */
    if (m->timing.memory_model == CFG_MEM_HBM && m->mem.l2.enabled)
        o->l2_peak_Bps = (double)m->mem.l2.slices * m->mem.l2.slice_bytes_per_cycle *
                         m->chip.clock_ghz * 1e9;
}
