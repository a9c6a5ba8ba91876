/* npt-bench — measure the trace writer, reader and exporters on the
 * synthetic GEMM-like stream (traces/synth.c):
 *   npt-bench -o x.npt [--events N] [--cores C]
 * prints one JSON object: bytes per event (all kinds and INSN only), the
 * writer's cost on the caller's thread (the cost a recording simulator
 * pays; compression runs on the writer's own thread), read and export
 * throughput. Figures in docs/trace-format.md come from this. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "traces/trace.h"

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct ctx { trc_writer *w; int insn_only; uint64_t n; } ctx;
static npu_status count_only(void *c, const trc_event *e)
{
    ctx *x = c;
    x->n += !x->insn_only || e->kind == TRC_INSN;
    return NPU_OK;
}
static npu_status to_writer(void *c, const trc_event *e)
{
    ctx *x = c;
    if (x->insn_only && e->kind != TRC_INSN)
        return NPU_OK;
    x->n++;
    return trc_write(x->w, e);
}
static npu_status dis(void *c, uint64_t pc, const char *t)
{
    return trc_writer_add_disasm(((ctx *)c)->w, pc, t);
}

static long fsize(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static int write_one(const trc_synth_opts *o, const char *path, int insn_only, double *caller_us,
                     uint64_t *n, npu_diag *d)
{
    ctx c = { .insn_only = insn_only };
    double t0 = cpu_now();
    if (trc_synth_run(o, count_only, NULL, &c, d) != NPU_OK)
        return -1;
    double gen = cpu_now() - t0;
    trc_meta m;
    c.w = trc_writer_open(path, trc_synth_meta(o, &m), d);
    if (!c.w)
        return -1;
    c.n = 0;
    t0 = cpu_now();
    if (trc_synth_run(o, to_writer, dis, &c, d) != NPU_OK) {
        trc_writer_discard(c.w);
        return -1;
    }
    if (trc_writer_close(c.w, d) != NPU_OK)
        return -1;
    *caller_us = (cpu_now() - t0 - gen) / (double)c.n * 1e6;
    *n = c.n;
    return 0;
}

int main(int argc, char **argv)
{
    trc_synth_opts o = { .events = 2000000, .cores = 24, .seed = 1 };
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: npt-bench -o SCRATCH.npt [--events N] [--cores C]\n");
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "npt-bench: %s needs a value\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "-o")) out = argv[++i];
        else if (!strcmp(argv[i], "--events")) o.events = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--cores")) o.cores = (uint32_t)strtoul(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "npt-bench: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!out || !o.events) {
        fprintf(stderr, "usage: npt-bench -o SCRATCH.npt [--events N] [--cores C]\n");
        return 2;
    }
    npu_diag d = { 0 };
    double cost_insn, cost_all;
    uint64_t n_insn, n_all;
    if (write_one(&o, out, 1, &cost_insn, &n_insn, &d) != 0) goto fail;
    long sz_insn = fsize(out);
    if (write_one(&o, out, 0, &cost_all, &n_all, &d) != 0) goto fail;
    long sz_all = fsize(out);
    trc_reader *r = trc_open(out, &d);
    if (!r) goto fail;
    double t0 = wall_now();
    trc_iter *it = trc_iter_new(r, NULL, &d);
    trc_event e;
    uint64_t nr = 0;
    while (it && trc_iter_next(it, &e))
        nr++;
    trc_iter_free(it);
    double read_s = wall_now() - t0;
    FILE *null = fopen("/dev/null", "w");
    trc_export_opts eo = { .filter = TRC_FILTER_ALL };
    t0 = wall_now();
    trc_export_chrome(r, null, &eo, &d);
    double chrome_s = wall_now() - t0;
    t0 = wall_now();
    trc_export_folded(r, null, 0, &d);
    double folded_s = wall_now() - t0;
    fclose(null);
    trc_close(r);
    printf("{\"events\":%llu,\"cores\":%u,\"bytes_per_event\":%.3f,\"insn_events\":%llu,"
           "\"bytes_per_insn_event\":%.3f,\"writer_caller_us_per_event\":%.4f,"
           "\"writer_caller_us_per_insn_event\":%.4f,\"read_mevents_per_s\":%.2f,"
           "\"chrome_export_mevents_per_s\":%.2f,\"folded_export_mevents_per_s\":%.2f}\n",
           (unsigned long long)n_all, o.cores, (double)sz_all / (double)n_all,
           (unsigned long long)n_insn, (double)sz_insn / (double)n_insn, cost_all, cost_insn,
           (double)nr / read_s / 1e6, (double)nr / chrome_s / 1e6, (double)nr / folded_s / 1e6);
    return 0;
fail:
    fprintf(stderr, "npt-bench: %s\n", d.msg);
    return 1;
}
