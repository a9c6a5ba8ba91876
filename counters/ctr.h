/* ctr.h — counters: the event table, values, groups, derived metrics and the
 * `npusim stat` report (text like `perf stat`, CSV, JSON, intervals).
 *
 * The part knows nothing of the simulator: a collector (sim/cmd_stat.c)
 * fills a ctr_values from the timing engine's statistics and observer, and
 * this part selects, derives and prints. Everything about an event comes
 * from its row in counters/events.def (STYLE.md 2): enum, name (also the
 * JSON key and the viewer label), unit, kind, description.
 * docs/counters.md (generated) lists the events, docs/stat.md the command. */
#ifndef CTR_H
#define CTR_H

#include <stddef.h>
#include <stdint.h>

#include "isa/npu_util.h"

typedef enum ctr_event_id {
#define EV(id, name, unit, kind, src, a1, a2, desc) CTR_EV_##id,
#include "counters/events.def"
#undef EV
    CTR_EV__COUNT
} ctr_event_id;

typedef enum ctr_unit { CTR_UNIT_CORE = 0, CTR_UNIT_PIPE, CTR_UNIT_L2, CTR_UNIT_HBM, CTR_UNIT_CHIP,
                        CTR_UNIT__COUNT } ctr_unit;
typedef enum ctr_kind { CTR_KIND_COUNT = 0, CTR_KIND_CYCLES, CTR_KIND_BYTES, CTR_KIND_HIST,
                        CTR_KIND__COUNT } ctr_kind;

typedef struct ctr_event_info {
    const char *name;      /* "pipe.v.busy_cycles": also the JSON key and viewer label */
    ctr_unit unit;
    ctr_kind kind;
    const char *desc;
} ctr_event_info;

const ctr_event_info *ctr_event(int id);       /* NULL if out of range */
int ctr_event_find(const char *name);          /* exact name; -1 if none */
const char *ctr_unit_name(ctr_unit u);         /* "core", "pipe", "l2_slice", "hbm_channel", "chip" */
const char *ctr_kind_name(ctr_kind k);         /* "count", "cycles", "bytes", "histogram" */

typedef enum ctr_group_id {
#define GROUP(id, name, events, desc) CTR_GROUP_##id,
#include "counters/groups.def"
#undef GROUP
    CTR_GROUP__COUNT
} ctr_group_id;

typedef struct ctr_group_info { const char *name, *events, *desc; } ctr_group_info;
const ctr_group_info *ctr_group(int id);
int ctr_group_find(const char *name);

typedef enum ctr_metric_id {
#define METRIC(id, name, anchor, unit, desc) CTR_M_##id,
#include "counters/metrics.def"
#undef METRIC
    CTR_M__COUNT
} ctr_metric_id;

typedef struct ctr_metric_info { const char *name, *anchor, *unit, *desc; } ctr_metric_info;
const ctr_metric_info *ctr_metric(int id);

/* ---- values ----------------------------------------------------------------
 * One uint64 per (event, instance of its unit): cores for CORE and PIPE
 * events, slices for L2, channels for HBM, one for CHIP. A histogram event
 * keeps its sample count as the value and a summary beside it. have[e] is 0
 * for events the run did not count (L2/HBM with the fixed GM port): they
 * print as "<not counted>" and are absent from JSON. */
typedef struct ctr_hist_sum { uint64_t n, sum, min, max, p50, p90, p99; } ctr_hist_sum;

typedef struct ctr_values {
    int ninst[CTR_UNIT__COUNT];
    uint64_t *v[CTR_EV__COUNT];        /* [ninst[unit]] each */
    ctr_hist_sum *h[CTR_EV__COUNT];    /* HIST events only, [ninst[unit]] */
    uint8_t have[CTR_EV__COUNT];
} ctr_values;

npu_status ctr_values_init(ctr_values *cv, int ncores, int nslices, int nchans, npu_diag *d);
void ctr_values_free(ctr_values *cv);
int ctr_ninst(const ctr_values *cv, int ev);
uint64_t ctr_get(const ctr_values *cv, int ev, int inst);   /* inst -1: sum over instances */

/* Consistency of a set (a test and `stat --check` use it): per core and
 * pipe, busy + stalls outside busy (flag, queue_full, barrier; memory on S)
 * never exceed the core's cycles, so idle is never negative; the chip's
 * cycles are the max of the cores'. NPU_EINVAL naming the first violation. */
npu_status ctr_check(const ctr_values *cv, npu_diag *d);

/* The machine's peaks, for the utilisation metrics and the roofline. Rates
 * are per core per cycle; indexed by isa_dtype. */
typedef struct ctr_machine {
    double clock_ghz;
    int ncores;                        /* cores of the launch */
    double cube_macs_per_cycle[16];    /* 0 = the cube has no mode for the dtype */
    double vec_elems_per_cycle[16];
    double gm_peak_Bps;                /* peak of GM's backing memory: the HBM's
                                        * (stacks x channels x pseudo-channels x
                                        * width x data rate) or the fixed port's;
                                        * the roofline's bandwidth roof */
    double l2_peak_Bps;                /* the L2's (slices x bytes per slice per
                                        * cycle x clock); 0: no L2, GM requests
                                        * go straight to the memory above */
    int fixed_port;                    /* GM is the fixed port (the roof's name) */
} ctr_machine;
/* The peaks of machine config m for a launch of ncores (counters/machine.c). */
struct cfg_machine;
void ctr_machine_from_cfg(const struct cfg_machine *m, int ncores, ctr_machine *o);

/* ---- selection ------------------------------------------------------------ */
typedef struct ctr_sel { uint8_t on[CTR_EV__COUNT]; } ctr_sel;
/* events: "-e" list of names or globs (may be NULL); group: "-M" name (may
 * be NULL); both NULL: the default group. Unknown names are an error naming
 * them (with the closest known name when one is close). */
npu_status ctr_select(ctr_sel *s, const char *events, const char *group, npu_diag *d);

/* ---- derived metrics ------------------------------------------------------ */
/* The anchored metric of row (ev, inst), for a run lasting `cycles` chip
 * cycles. Returns the metric id and sets *val, or -1 when none applies. */
int ctr_metric_row(const ctr_values *cv, const ctr_machine *m, uint64_t cycles, int ev, int inst,
                   double *val);
typedef struct ctr_summary {
    double val[CTR_M__COUNT];
    uint8_t have[CTR_M__COUNT];
    const char *verdict;               /* "compute-bound", "memory-bound", "latency-bound" */
    const char *roof;                  /* the bounding roof: "compute", "l2", "hbm", "port" */
} ctr_summary;
void ctr_summarize(const ctr_values *cv, const ctr_machine *m, ctr_summary *out);

/* ---- reports -------------------------------------------------------------- */
typedef enum ctr_aggr { CTR_AGGR_ALL = 0, CTR_AGGR_PER_CORE, CTR_AGGR_NONE } ctr_aggr;

typedef struct ctr_report_opts {
    ctr_aggr aggr;        /* ALL: sums; PER_CORE: core/pipe events per core; NONE (-A): every instance */
    const char *sep;      /* CSV separator (-x); NULL: text */
    int json;
    const char *title;    /* the kernel, for the header */
    const char *mode;     /* "perf" / "timing" */
} ctr_report_opts;

/* The whole-run report (text, CSV or JSON by opts) appended to b. */
void ctr_report(const ctr_values *cv, const ctr_machine *m, const ctr_sel *sel,
                const ctr_report_opts *o, npu_buf *b);

/* Interval data: deltas of core and pipe events per window of `width`
 * cycles. v[(bin * CTR_EV__COUNT + ev) * ncores + core]. binned[ev] says
 * which events have per-window values (the rest print only in the totals).
 * L2 and HBM events, once ctr_intervals_mem_init gave their instance
 * counts: mv[(bin * nmslot + mslot[ev]) * nmem + slice or channel]. */
typedef struct ctr_intervals {
    uint64_t width;
    int ncores;
    size_t nbins;
    uint64_t *v;
    uint8_t binned[CTR_EV__COUNT];
    int nslices, nchans, nmem, nmslot;
    int8_t mslot[CTR_EV__COUNT];       /* -1: not an L2 / HBM event */
    uint64_t *mv;                      /* NULL until ctr_intervals_mem_init */
} ctr_intervals;
/* Make room for bins 0..bin. NPU_ENOMEM, or NPU_EINVAL past max_bins (the window is too small). */
npu_status ctr_intervals_grow(ctr_intervals *iv, size_t bin, size_t max_bins, npu_diag *d);
void ctr_intervals_add(ctr_intervals *iv, int ev, int core, uint64_t cycle, uint64_t n);
/* Add the cycles of [start, end) to ev, split over the windows they cross. */
void ctr_intervals_add_span(ctr_intervals *iv, int ev, int core, uint64_t start, uint64_t end);
void ctr_intervals_free(ctr_intervals *iv);
/* Start per-window L2 and HBM values (nslices slices, nchans channels);
 * they are kept for every L2 / HBM event, binned[] set. A histogram event
 * has two slots, its sample count (the value) at mslot[ev] and the samples'
 * sum at mslot[ev] + 1: a window shows the count and the mean. */
npu_status ctr_intervals_mem_init(ctr_intervals *iv, int nslices, int nchans, npu_diag *d);
/* Add n to slot 0 (the value) or 1 (a histogram's sum) of L2 / HBM event
 * ev, slice or channel inst, in window bin. */
void ctr_intervals_add_mem_slot(ctr_intervals *iv, int ev, int slot, int inst, size_t bin, uint64_t n);
/* Windows up to the last one any core reached. */
size_t ctr_intervals_used(const ctr_intervals *iv);
/* A ctr_values sized for iv's windows (0; 1 out of memory). */
int ctr_intervals_values_init(const ctr_intervals *iv, ctr_values *cv);
/* Window k's length: the most cycles a core spent in it (the last window
 * ends with the run); it ends at k x width + that. */
uint64_t ctr_intervals_window_len(const ctr_intervals *iv, size_t k);
/* Window k's values into cv (from ctr_intervals_values_init): every binned
 * event's delta in the window (an L2/HBM histogram its count and sum); the
 * window's length in cycles (its chip.cycles) is returned. */
uint64_t ctr_intervals_window(const ctr_intervals *iv, size_t k, ctr_values *cv);
/* The interval report (perf stat -I layout; CSV rows start with the end
 * cycle; JSON an array of windows). */
void ctr_report_intervals(const ctr_intervals *iv, const ctr_machine *m, const ctr_sel *sel,
                          const ctr_report_opts *o, npu_buf *b);

/* `npusim stat --list`: events and groups with descriptions. */
void ctr_list(npu_buf *b);
/* docs/counters.md (ctr-docgen). */
void ctr_doc_markdown(npu_buf *b);

/* "1,234,567" */
void ctr_thousands(uint64_t v, char *buf, size_t n);

#endif
