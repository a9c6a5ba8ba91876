/* api.c — libnpusim's argument binding and result accessors. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"  /* first: config.h must see the dtype enum before isa.h */
#include "frontend/npy.h"
#include "counters/ctr.h"
#include "sim/record.h"
#include "sim/check.h"

#define SIM_MAX_ARGS 4096

void npu_sim_clear_args(npu_sim *s)
{
    for (size_t i = 0; i < s->nargs; i++) {
        npu_free(s->args[i].init);
        s->args[i].init = NULL;
    }
    s->nargs = 0;
    sim_gm_drop_kind(&s->gm, SIM_GM_TENSOR);
}

static npu_status new_arg(npu_sim *s, const char *name, sim_arg **out, npu_diag *d)
{
    char nm[64];
    if (name && *name) {
        if (strlen(name) >= sizeof nm)
            return npu_errf(d, NPU_EINVAL, "argument name '%.40s...' is longer than %zu characters",
                            name, sizeof nm - 1);
        snprintf(nm, sizeof nm, "%s", name);
    } else {
        snprintf(nm, sizeof nm, "arg%zu", s->nargs);
    }
    for (size_t i = 0; i < s->nargs; i++)
        if (strcmp(s->args[i].name, nm) == 0)
            return npu_errf(d, NPU_EINVAL, "argument '%s' is bound twice (arguments %zu and %zu)",
                            nm, i, s->nargs);
    if (s->nargs >= SIM_MAX_ARGS)
        return npu_errf(d, NPU_EINVAL, "more than %d arguments", SIM_MAX_ARGS);
    if (s->nargs == s->capargs) {
        size_t nc = s->capargs ? s->capargs * 2 : 16;
        sim_arg *na = npu_realloc(s->args, nc * sizeof *na);
        if (!na)
            return npu_errf(d, NPU_ENOMEM, "out of memory for arguments");
        s->args = na;
        s->capargs = nc;
    }
    sim_arg *a = &s->args[s->nargs];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", nm);
    *out = a;
    return NPU_OK;
}

static npu_status bind_tensor_raw(npu_sim *s, const char *name, int dtype, int ndim,
                                  const int64_t *shape, const void *data, npu_dir dir,
                                  npu_diag *d)
{
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "bind: load a kernel before binding arguments");
    if (isa_dtype_bytes(dtype) <= 0)
        return npu_errf(d, NPU_EINVAL, "bind: bad dtype %d", dtype);
    if (ndim < 0 || ndim > 8)
        return npu_errf(d, NPU_EINVAL, "bind: %d dimensions (at most 8)", ndim);
    if (dir != NPU_IN && dir != NPU_OUT && dir != NPU_INOUT)
        return npu_errf(d, NPU_EINVAL, "bind: bad direction %d", (int)dir);
    uint64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return npu_errf(d, NPU_EINVAL, "bind: negative dimension %" PRId64, shape[i]);
        if (shape[i] && numel > SIM_GM_LIMIT / (uint64_t)shape[i])
            return npu_errf(d, NPU_EINVAL, "bind: tensor too large for GM");
        numel *= (uint64_t)shape[i];
    }
    uint64_t nbytes = numel * (uint64_t)isa_dtype_bytes(dtype);
    sim_arg *a;
    npu_status st = new_arg(s, name, &a, d);
    if (st)
        return st;
    a->kind = SIM_ARG_TENSOR;
    a->dir = dir;
    a->dtype = dtype;
    a->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        a->shape[i] = shape[i];
    a->nbytes = nbytes;
    st = sim_gm_alloc_new(&s->gm, nbytes, SIM_GM_TENSOR, a->name, &a->addr, d);
    if (!st && (dir & NPU_IN) && data && nbytes) {
        /* kept, so that every run starts from the bound data */
        a->init = npu_malloc((size_t)nbytes);
        if (!a->init)
            st = npu_errf(d, NPU_ENOMEM, "out of memory for a copy of %" PRIu64 " bytes", nbytes);
        else
            memcpy(a->init, data, (size_t)nbytes);
    }
    if (st) {
        npu_free(a->init);
        a->init = NULL;
        npu_diag_prefix(d, "bind '%s'", a->name);
        return st;
    }
    a->value = a->addr;
    s->nargs++;
    return NPU_OK;
}

npu_status npu_sim_bind_tensor(npu_sim *s, const char *name, const struct npy_tensor *t,
                               npu_dir dir, npu_diag *d)
{
    if (!t)
        return npu_errf(d, NPU_EINVAL, "bind: NULL tensor");
    return bind_tensor_raw(s, name, (int)t->dtype, t->ndim, t->shape, t->data, dir, d);
}

npu_status npu_sim_bind_output(npu_sim *s, const char *name, int dtype, int ndim,
                               const int64_t *shape, npu_diag *d)
{
    return bind_tensor_raw(s, name, dtype, ndim, shape, NULL, NPU_OUT, d);
}

npu_status npu_sim_bind_int(npu_sim *s, const char *name, int64_t v, npu_diag *d)
{
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "bind: load a kernel before binding arguments");
    sim_arg *a;
    npu_status st = new_arg(s, name, &a, d);
    if (st)
        return st;
    a->kind = SIM_ARG_INT;
    a->value = (uint64_t)v;
    s->nargs++;
    return NPU_OK;
}

npu_status npu_sim_bind_float(npu_sim *s, const char *name, double v, npu_diag *d)
{
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "bind: load a kernel before binding arguments");
    sim_arg *a;
    npu_status st = new_arg(s, name, &a, d);
    if (st)
        return st;
    a->kind = SIM_ARG_FLOAT;
    a->fvalue = v;
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    a->value = bits; /* f32 bits, zero-extended */
    s->nargs++;
    return NPU_OK;
}

static const sim_arg *find_arg(const npu_sim *s, const char *name)
{
    for (size_t i = 0; i < s->nargs; i++)
        if (strcmp(s->args[i].name, name) == 0)
            return &s->args[i];
    return NULL;
}

uint64_t npu_sim_arg_addr(const npu_sim *s, const char *name)
{
    const sim_arg *a = find_arg(s, name);
    return a && a->kind == SIM_ARG_TENSOR ? a->addr : 0;
}

npu_status npu_sim_get_output(npu_sim *s, const char *name, struct npy_tensor *out, npu_diag *d)
{
    memset(out, 0, sizeof *out);
    const sim_arg *a = find_arg(s, name);
    if (!a)
        return npu_errf(d, NPU_EINVAL, "no argument named '%s'", name);
    if (a->kind != SIM_ARG_TENSOR)
        return npu_errf(d, NPU_EINVAL, "argument '%s' is a scalar, not a tensor", name);
    npu_status st = npy_alloc(out, (isa_dtype)a->dtype, a->ndim, a->shape, d);
    if (st)
        return st;
    st = sim_gm_read(&s->gm, a->addr, out->data, a->nbytes, d);
    if (st)
        npy_free(out);
    return st;
}

npu_status npu_sim_read_gm(npu_sim *s, uint64_t addr, void *dst, uint64_t len, npu_diag *d)
{
    return sim_gm_read(&s->gm, addr, dst, len, d);
}

uint64_t npu_sim_cycles(const npu_sim *s) { return s->cycles; }

uint64_t npu_sim_insns(const npu_sim *s, int core)
{
    if (!s->cores)
        return 0;
    if (core >= 0)
        return core < s->ncores ? s->cores[core].insns : 0;
    uint64_t t = 0;
    for (int i = 0; i < s->ncores; i++)
        t += s->cores[i].insns;
    return t;
}

uint64_t npu_sim_reg(const npu_sim *s, int core, int reg)
{
    if (!s->cores || core < 0 || core >= s->ncores || reg < 0 || reg > 31)
        return 0;
    return s->cores[core].x[reg];
}

/* ---- counters ------------------------------------------------------------- */
struct npu_counters {
    ctr_values cv;
    ctr_intervals iv;       /* npu_sim_run_counted_every's windows (width 0: none) */
    size_t nwin;
    ctr_values wv;          /* window wk's values, made on demand */
    size_t wk;              /* SIZE_MAX: wv holds none */
};

npu_status npu_sim_run_counted(npu_sim *s, const npu_run_opts *opts, npu_counters **out, npu_diag *d)
{
    return npu_sim_run_counted_every(s, opts, 0, out, d);
}

npu_status npu_sim_run_counted_every(npu_sim *s, const npu_run_opts *opts, uint64_t interval,
                                     npu_counters **out, npu_diag *d)
{
    npu_run_opts def = {NPU_MODE_PERF, 0, 0};
    if (!opts)
        opts = &def;
    if (!s || !out)
        return npu_errf(d, NPU_EINVAL, "run: no simulator or no place for the counters (NULL)");
    *out = NULL;
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "run: no kernel loaded");
    if (opts->mode != NPU_MODE_PERF && opts->mode != NPU_MODE_TIMING)
        return npu_errf(d, NPU_EINVAL, "run: counters need perf or timing mode (func mode has no time)");
    npu_counters *c = npu_calloc(1, sizeof *c);
    if (!c)
        return npu_errf(d, NPU_ENOMEM, "run: out of memory");
    c->wk = SIZE_MAX;
    npu_status st = sim_stat_collect(s, opts->mode == NPU_MODE_TIMING, opts->max_cycles, opts->max_insns,
                                     interval, &c->cv, interval ? &c->iv : NULL, d);
    if (!st && interval) {
        c->nwin = ctr_intervals_used(&c->iv);
        if (ctr_intervals_values_init(&c->iv, &c->wv))
            st = npu_errf(d, NPU_ENOMEM, "run: out of memory");
    }
    if (st) {
        npu_counters_free(c);
        return st;
    }
    *out = c;
    return NPU_OK;
}

/* Event ev of cv on instance inst (-1: the sum), or NPU_EINVAL naming the
 * instances its unit has */
static npu_status value_of(const ctr_values *cv, int ev, const char *name, int inst, uint64_t *value,
                           npu_diag *d)
{
    int n = ctr_ninst(cv, ev);
    if (inst < -1 || inst >= n)
        return npu_errf(d, NPU_EINVAL, "%s: no instance %d (its unit, %s, has %d: 0..%d, or -1 for the sum)",
                        name, inst, ctr_unit_name(ctr_event(ev)->unit), n, n - 1);
    *value = ctr_get(cv, ev, inst);
    return NPU_OK;
}

size_t npu_counters_windows(const npu_counters *c)
{
    return c ? c->nwin : 0;
}

uint64_t npu_counters_window_end(const npu_counters *c, size_t k)
{
    if (!c || k >= c->nwin)
        return 0;
    return (uint64_t)k * c->iv.width + ctr_intervals_window_len(&c->iv, k);   /* as stat -I's end cycle */
}

npu_status npu_counters_get_window(npu_counters *c, size_t k, const char *name, int inst, uint64_t *value,
                                   npu_diag *d)
{
    if (!c || !value)
        return npu_errf(d, NPU_EINVAL, "counters: no counters or no place for the value (NULL)");
    if (k >= c->nwin)
        return npu_errf(d, NPU_EINVAL, "counters: window %zu: the run has %zu (0..%zu; "
                        "npu_sim_run_counted_every makes them)", k, c->nwin, c->nwin ? c->nwin - 1 : 0);
    int ev = name ? ctr_event_find(name) : -1;
    if (ev < 0)
        return npu_errf(d, NPU_EINVAL, "no counter named '%s' (docs/counters.md lists them)",
                        name ? name : "(null)");
    if (c->wk != k) {
        ctr_intervals_window(&c->iv, k, &c->wv);
        c->wk = k;
    }
    if (!c->wv.have[ev])
        return npu_errf(d, NPU_EUNSUPP, "%s has no per-window value (totals only, as in npusim stat -I; "
                        "or no L2/HBM model)", name);
    return value_of(&c->wv, ev, name, inst, value, d);
}

static int counter_of(const npu_counters *c, const char *name)
{
    int ev = c && name ? ctr_event_find(name) : -1;
    return ev >= 0 && c->cv.have[ev] ? ev : -1;
}

npu_status npu_counters_get(const npu_counters *c, const char *name, int inst, uint64_t *value,
                            npu_diag *d)
{
    if (!c || !value)
        return npu_errf(d, NPU_EINVAL, "counters: no counters or no place for the value (NULL)");
    int ev = name ? ctr_event_find(name) : -1;
    if (ev < 0)
        return npu_errf(d, NPU_EINVAL, "no counter named '%s' (docs/counters.md lists them)",
                        name ? name : "(null)");
    if (!c->cv.have[ev])
        return npu_errf(d, NPU_EUNSUPP, "%s was not counted: this machine has no L2 or HBM model "
                        "(timing.memory_model is fixed)", name);
    return value_of(&c->cv, ev, name, inst, value, d);
}

int npu_counters_instances(const npu_counters *c, const char *name)
{
    int ev = counter_of(c, name);
    return ev < 0 ? -1 : ctr_ninst(&c->cv, ev);
}

void npu_counters_free(npu_counters *c)
{
    if (!c)
        return;
    ctr_values_free(&c->cv);
    ctr_values_free(&c->wv);
    ctr_intervals_free(&c->iv);
    npu_free(c);
}

/* ---- traces --------------------------------------------------------------- */
npu_status npu_sim_record(npu_sim *s, const char *path, const npu_record_opts *opts, npu_diag *d)
{
    npu_record_opts def = {NPU_MODE_PERF, 0, 1000, 0, 0, 0};
    if (!opts)
        opts = &def;
    if (!s)
        return npu_errf(d, NPU_EINVAL, "record: no simulator (NULL)");
    if (!path || !*path)
        return npu_errf(d, NPU_EINVAL, "record: no trace file given");
    if (opts->mode != NPU_MODE_PERF && opts->mode != NPU_MODE_TIMING)
        return npu_errf(d, NPU_EINVAL, "record: a trace needs perf or timing mode (func mode has no time)");
    if (opts->level < SIM_REC_INSTR || opts->level > SIM_REC_FULL)
        return npu_errf(d, NPU_EINVAL, "record: level %d (0 instr, 1 mem, 2 full)", opts->level);
    sim_rec_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.level = (sim_rec_level)opts->level;
    ro.interval = opts->interval;
    ro.nodata = opts->mode == NPU_MODE_TIMING;
    ro.max_cycles = opts->max_cycles;
    ro.max_insns = opts->max_insns;
    ro.mem_units = opts->mem_units != 0;
    sim_rec_result r;
    npu_status st = sim_record_run(s, path, &ro, &r, d);
    if (st)
        return st;
    if (r.run && d)
        *d = r.run_diag;
    return r.run;
}

/* ---- checks --------------------------------------------------------------- */
_Static_assert((int)NPU_CHECK_MEM == (int)SIM_CHK_MEM && (int)NPU_CHECK_RACE == (int)SIM_CHK_RACE &&
                   (int)NPU_CHECK_INIT == (int)SIM_CHK_INIT && (int)NPU_CHECK_SYNC == (int)SIM_CHK_SYNC &&
                   (int)NPU_CHECK_ALL == (int)SIM_CHK_ALL,
               "the public check bits are sim/check.h's");
typedef struct npu_check_item {
    const char *tool;       /* static */
    char *header, *details;
} npu_check_item;

struct npu_check_result {
    npu_check_item *it;
    size_t n;
    uint64_t dropped;
    int ran_ok;
    char *report;
};

void npu_check_free(npu_check_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        npu_free(r->it[i].header);
        npu_free(r->it[i].details);
    }
    npu_free(r->it);
    npu_free(r->report);
    npu_free(r);
}

static char *dup_str(const char *x)
{
    size_t n = strlen(x) + 1;
    char *p = npu_malloc(n);
    if (p)
        memcpy(p, x, n);
    return p;
}

/* Copy what the checker found, so the result outlives it and the simulator. */
static npu_status check_snapshot(const sim_chk *c, int ran_ok, npu_check_result **out, npu_diag *d)
{
    npu_check_result *r = npu_calloc(1, sizeof *r);
    size_t n = sim_chk_nfindings(c);
    if (r && n)
        r->it = npu_calloc(n, sizeof *r->it);
    if (!r || (n && !r->it)) {
        npu_check_free(r);
        return npu_errf(d, NPU_ENOMEM, "check: out of memory");
    }
    r->ran_ok = ran_ok;
    r->dropped = sim_chk_dropped(c);
    char line[2048];
    for (size_t i = 0; i < n; i++) {
        const sim_chk_finding *f = sim_chk_get(c, i);
        sim_chk_header(c, f, line, sizeof line);
        r->it[i].tool = sim_chk_kind_tool(f->kind);
        r->it[i].header = dup_str(line);
        r->it[i].details = dup_str(f->msg);
        r->n = i + 1;
        if (!r->it[i].header || !r->it[i].details) {
            npu_check_free(r);
            return npu_errf(d, NPU_ENOMEM, "check: out of memory");
        }
    }
    npu_buf b = {0};
    sim_chk_report_text(c, &b);
    r->report = b.oom ? NULL : dup_str(b.data ? (const char *)b.data : "");
    npu_buf_free(&b);
    if (!r->report) {
        npu_check_free(r);
        return npu_errf(d, NPU_ENOMEM, "check: out of memory");
    }
    *out = r;
    return NPU_OK;
}

npu_status npu_sim_run_checked(npu_sim *s, const npu_check_opts *opts, npu_check_result **out,
                               npu_diag *d)
{
    npu_check_opts def = {0};
    if (!opts)
        opts = &def;
    if (!s || !out)
        return npu_errf(d, NPU_EINVAL, "check: no simulator or no place for the result (NULL)");
    *out = NULL;
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "check: no kernel loaded");
    if (opts->tools & ~(unsigned)NPU_CHECK_ALL)
        return npu_errf(d, NPU_EINVAL, "check: tools 0x%x: only NPU_CHECK_MEM, _RACE, _INIT and _SYNC (0x%x)",
                        opts->tools, (unsigned)NPU_CHECK_ALL);
    if (opts->mode != NPU_MODE_FUNC && opts->mode != NPU_MODE_PERF && opts->mode != NPU_MODE_TIMING)
        return npu_errf(d, NPU_EINVAL, "check: unknown mode %d", (int)opts->mode);
    sim_chk *c = NULL;
    npu_status st = sim_chk_new(&c, s, opts->tools ? opts->tools : (unsigned)NPU_CHECK_ALL, d);
    if (st)
        return st;
    npu_run_opts ro = {opts->mode, opts->max_cycles, opts->max_insns};
    int ran_ok = 0;
    st = sim_chk_run(c, &ro, &ran_ok, d);
    if (!st && opts->json)
        st = sim_chk_write_json(c, opts->json, d);
    if (!st && opts->junit)
        st = sim_chk_write_junit(c, opts->junit, d);
    if (!st)
        st = check_snapshot(c, ran_ok, out, d);
    sim_chk_free(c);
    return st;
}

size_t npu_check_nfindings(const npu_check_result *r) { return r ? r->n : 0; }
uint64_t npu_check_dropped(const npu_check_result *r) { return r ? r->dropped : 0; }
int npu_check_ran_to_end(const npu_check_result *r) { return r ? r->ran_ok : 0; }
const char *npu_check_tool(const npu_check_result *r, size_t i) { return r && i < r->n ? r->it[i].tool : NULL; }
const char *npu_check_header(const npu_check_result *r, size_t i) { return r && i < r->n ? r->it[i].header : NULL; }
const char *npu_check_details(const npu_check_result *r, size_t i) { return r && i < r->n ? r->it[i].details : NULL; }
const char *npu_check_report(const npu_check_result *r) { return r ? r->report : NULL; }
