/* machine.c — the simulator object: creation, kernel loading (predecode),
 * per-core state, fault reports, findings and observers. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"
#include "sim/timing.h"

npu_status npu_sim_new(npu_sim **out, const cfg_machine *cfg, npu_diag *d)
{
    *out = NULL;
    npu_sim *s = npu_calloc(1, sizeof *s);
    if (!s)
        return npu_errf(d, NPU_ENOMEM, "npu_sim_new: out of memory");
    if (cfg) {
        s->cfg = *cfg;
        npu_status st = cfg_validate(&s->cfg, d);
        if (st) {
            npu_diag_prefix(d, "npu_sim_new");
            npu_free(s);
            return st;
        }
    } else {
        cfg_default(&s->cfg);
    }
    sim_gm_init(&s->gm);
    s->ncores = (int)s->cfg.chip.cores;
    if (s->ncores < 1)
        s->ncores = 1;
    s->cur_core = -1;
    s->uctx_core = -1;
    *out = s;
    return NPU_OK;
}

static void free_cores(npu_sim *s)
{
    for (int i = 0; i < s->cores_cap; i++) {
        sim_core *c = &s->cores[i];
        for (int sp = 0; sp < SIM_SP_COUNT; sp++)
            npu_free(c->buf[sp]);
        npu_free(c->gmr);
        npu_free(c->dq);
    }
    npu_free(s->cores);
    s->cores = NULL;
    s->cores_cap = 0;
}

static void unload(npu_sim *s)
{
    elf_free(&s->img);
    npu_free(s->text);
    npu_free(s->tpipe);
    npu_free(s->tcost);
    s->text = NULL;
    s->tpipe = s->tcost = NULL;
    s->ntext = 0;
    s->loaded = 0;
    npu_sim_clear_args(s);
    sim_gm_free(&s->gm);
    s->param_addr = 0;
}

void npu_sim_free(npu_sim *s)
{
    if (!s)
        return;
    unload(s);
    free_cores(s);
    if (s->tstats) {
        sim_timing_stats_free(s->tstats);
        npu_free(s->tstats);
    }
    npu_free(s->args);
    npu_free(s->findings);
    npu_free(s);
}

/* Predecode .text and map the data segments into GM. */
static npu_status load_image(npu_sim *s, const char *name, npu_diag *d)
{
    if (s->img.ntext == 0)
        return npu_errf(d, NPU_EFORMAT, "%s: the kernel has no instructions", name);
    s->text = npu_calloc(s->img.ntext + 1, sizeof *s->text);
    if (!s->text)
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory for %zu instructions", name,
                        s->img.ntext);
    s->tpipe = npu_calloc(s->img.ntext + 1, 1);
    s->tcost = npu_calloc(s->img.ntext + 1, 1);
    if (!s->tpipe || !s->tcost)
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory for %zu instructions", name,
                        s->img.ntext);
    for (size_t i = 0; i <= s->img.ntext; i++) {
        npu_diag tmp;
        /* a word that does not decode stays INVALID: faults only if run */
        if (i == s->img.ntext || isa_decode(s->img.text[i], &s->text[i].in, &tmp))
            memset(&s->text[i].in, 0, sizeof s->text[i].in);
        const isa_info *ii = isa_info_of(s->text[i].in.op);
        s->tpipe[i] = (uint8_t)isa_insn_pipe(&s->text[i].in);
        s->tcost[i] = (uint8_t)(ii ? ii->cost : ISA_COST_SYS);
    }
    s->ntext = s->img.ntext;
    s->text_end = (uint64_t)s->ntext * 8;
    s->entry = s->img.entry;
    if (s->entry >= s->text_end || (s->entry & 7))
        return npu_errf(d, NPU_EFORMAT, "%s: entry point 0x%" PRIx64 " is not an instruction of .text",
                        name, s->entry);
    for (size_t i = 0; i < s->img.nsegs; i++) {
        const elf_seg *g = &s->img.segs[i];
        const char *sn = g->kind == ASM_SEC_RODATA ? ".rodata"
                         : g->kind == ASM_SEC_DATA ? ".data" : ".bss";
        if (g->size == 0)
            continue;
        npu_status st = sim_gm_map(&s->gm, g->addr, g->size, SIM_GM_SEG,
                                   g->kind == ASM_SEC_RODATA, sn, d);
        if (!st && g->filesz)
            st = sim_gm_write_init(&s->gm, g->addr, g->data, NPU_MIN(g->filesz, g->size), d);
        if (st) {
            npu_diag_prefix(d, "%s", name);
            return st;
        }
    }
    snprintf(s->kname, sizeof s->kname, "%s", name);
    s->loaded = 1;
    return NPU_OK;
}

npu_status npu_sim_load_elf(npu_sim *s, const char *path, npu_diag *d)
{
    unload(s);
    npu_status st = elf_load_file(path, &s->img, d);
    if (!st)
        st = load_image(s, path, d);
    if (st)
        unload(s);
    return st;
}

npu_status npu_sim_load_elf_mem(npu_sim *s, const void *buf, size_t len, const char *name,
                                npu_diag *d)
{
    unload(s);
    if (!name)
        name = "<memory>";
    npu_status st = elf_load_mem(buf, len, name, &s->img, d);
    if (!st)
        st = load_image(s, name, d);
    if (st)
        unload(s);
    return st;
}

npu_status npu_sim_set_entry(npu_sim *s, const char *symbol, npu_diag *d)
{
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "set_entry: no kernel loaded");
    const elf_sym *y = elf_find_sym(&s->img, symbol);
    if (!y || y->section != ASM_SEC_TEXT)
        return npu_errf(d, NPU_EINVAL, "%s: no .text symbol '%s' for the entry point", s->kname,
                        symbol);
    if (y->addr >= s->text_end || (y->addr & 7))
        return npu_errf(d, NPU_EINVAL, "%s: symbol '%s' at 0x%" PRIx64 " is not an instruction",
                        s->kname, symbol, y->addr);
    s->entry = y->addr;
    return NPU_OK;
}

npu_status npu_sim_set_cores(npu_sim *s, int n, npu_diag *d)
{
    if (n < 1 || (uint64_t)n > s->cfg.chip.cores)
        return npu_errf(d, NPU_EINVAL, "cores: %d outside 1..%" PRIu64 " (chip.cores of machine '%s')",
                        n, s->cfg.chip.cores, s->cfg.name);
    s->ncores = n;
    return NPU_OK;
}

/* ---- cores ---------------------------------------------------------------- */

npu_status sim_cores_reset(npu_sim *s, npu_diag *d)
{
    if (s->cores_cap < s->ncores) {
        free_cores(s);
        s->cores = npu_calloc((size_t)s->ncores, sizeof *s->cores);
        if (!s->cores)
            return npu_errf(d, NPU_ENOMEM, "out of memory for %d cores", s->ncores);
        s->cores_cap = s->ncores;
    }
    const cfg_machine *m = &s->cfg;
    s->uctx_core = -1;
    uint64_t sizes[SIM_SP_COUNT] = {0};
    sizes[SIM_SP_L1] = m->core.l1.size;
    sizes[SIM_SP_L0A] = m->core.l0a.size;
    sizes[SIM_SP_L0B] = m->core.l0b.size;
    sizes[SIM_SP_L0C] = m->core.l0c.size;
    sizes[SIM_SP_UB] = m->core.ub.size;
    sizes[SIM_SP_SB] = m->core.sdata.size;
    for (int i = 0; i < s->ncores; i++) {
        sim_core *c = &s->cores[i];
        for (int sp = SIM_SP_L1; sp < SIM_SP_COUNT; sp++) {
            /* fresh zeroed buffers each run: calloc of a large block maps
             * zero pages lazily, so untouched buffer bytes cost nothing
             * (a memset would touch ~1 MB per core per run) */
            npu_free(c->buf[sp]);
            c->bufsize[sp] = 0;
            c->buf[sp] = npu_calloc(1, (size_t)(sizes[sp] ? sizes[sp] : 1));
            if (!c->buf[sp])
                return npu_errf(d, NPU_ENOMEM, "out of memory for core %d's %s (%" PRIu64 " B)", i,
                                sim_space_name((sim_space)sp), sizes[sp]);
            c->bufsize[sp] = sizes[sp];
        }
        c->id = i;
        memset(c->x, 0, sizeof c->x);
        c->x[1] = s->text_end;                /* ra: returning from the entry ends the core */
        c->x[2] = m->core.sdata.size;         /* sp: top of the scalar buffer */
        for (size_t a = 0; a < 8 && a < s->nargs; a++)
            c->x[10 + a] = s->args[a].value;  /* a0..a7 */
        c->pc = s->entry;
        c->state = SIM_CORE_RUNNING;
        c->cycle = 0;
        c->insns = 0;
        memset(&c->vmask, 0, sizeof c->vmask);
        c->vmask.bits[0] = c->vmask.bits[1] = ~0ull; /* all elements enabled */
        memset(c->flag, 0, sizeof c->flag);
        c->pmu_ctl = 0;
        memset(c->pmu_sel, 0, sizeof c->pmu_sel);
        memset(c->pmu_cnt, 0, sizeof c->pmu_cnt);
        c->ngmr = 0;
        c->gmr_oom = 0;
        c->ndq = 0;
        c->dq_rlo = c->dq_rhi = c->dq_wlo = c->dq_whi = 0;
    }
    s->ndefer = 0;
    return NPU_OK;
}

/* ---- symbols, disassembly, faults ----------------------------------------- */

static const char *symbolizer(void *user, uint64_t addr, uint64_t *offset)
{
    const npu_sim *s = user;
    const elf_sym *y = elf_sym_at(&s->img, addr, offset);
    return y ? y->name : NULL;
}

void sim_symbolize(const npu_sim *s, uint64_t pc, char *buf, size_t n)
{
    uint64_t off = 0;
    const elf_sym *y = s->loaded ? elf_sym_at(&s->img, pc, &off) : NULL;
    if (y && off)
        snprintf(buf, n, "%s+0x%" PRIx64, y->name, off);
    else if (y)
        snprintf(buf, n, "%s", y->name);
    else
        snprintf(buf, n, "0x%" PRIx64, pc);
}

void sim_disasm_at(const npu_sim *s, uint64_t pc, char *buf, size_t n)
{
    if (!s->loaded || pc >= s->text_end || (pc & 7)) {
        snprintf(buf, n, "(no instruction: pc outside .text)");
        return;
    }
    const isa_insn *in = &s->text[pc >> 3].in;
    if (in->op == ISA_OP_INVALID) {
        snprintf(buf, n, ".word 0x%016" PRIx64, s->img.text[pc >> 3]);
        return;
    }
    isa_disasm(in, pc, buf, n, symbolizer, (void *)s);
}

npu_status sim_fault(npu_sim *s, int core, uint64_t pc, npu_status code, npu_diag *d,
                     const char *fmt, ...)
{
    char what[1400], sym[160], dis[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sim_symbolize(s, pc, sym, sizeof sym);
    sim_disasm_at(s, pc, dis, sizeof dis);
    uint64_t cyc = 0;
    if (core >= 0 && core < s->ncores && s->cores) {
        s->cores[core].state = SIM_CORE_FAULTED;
        cyc = s->cores[core].cycle;
    }
    npu_diag tmp;
    npu_diag *dd = d ? d : &tmp;
    npu_errf(dd, code, "%s: fault on core %d at pc 0x%" PRIx64 " (%s), cycle %" PRIu64 ": %s: %s",
             s->kname, core, pc, sym, cyc, dis, what);
    if (!s->faulted) {
        s->fault = *dd;
        s->faulted = 1;
    }
    return code;
}

/* ---- findings, observers ------------------------------------------------ */

#define SIM_MAX_FINDINGS 1000

void sim_add_finding(npu_sim *s, npu_finding_kind k, int core, uint64_t pc, const char *fmt, ...)
{
    if (s->nfind >= SIM_MAX_FINDINGS)
        return;
    if (s->nfind == s->capfind) {
        size_t nc = s->capfind ? s->capfind * 2 : 16;
        npu_finding *nf = npu_realloc(s->findings, nc * sizeof *nf);
        if (!nf)
            return; /* findings are advisory: dropping one under OOM is acceptable */
        s->findings = nf;
        s->capfind = nc;
    }
    npu_finding *f = &s->findings[s->nfind++];
    f->kind = k;
    f->core = core;
    f->pc = pc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
}

size_t npu_sim_nfindings(const npu_sim *s) { return s->nfind; }

const npu_finding *npu_sim_finding(const npu_sim *s, size_t i)
{
    return i < s->nfind ? &s->findings[i] : NULL;
}

npu_status sim_add_observer(npu_sim *s, const sim_observer *o, npu_diag *d)
{
    if (s->nobs >= SIM_MAX_OBSERVERS)
        return npu_errf(d, NPU_EINVAL, "sim: at most %d observers", SIM_MAX_OBSERVERS);
    s->obs[s->nobs++] = *o;
    return NPU_OK;
}
