/* npusim.h — libnpusim, the simulator as a C library: its one public header.
 *
 * Create a simulator for a machine config, load a kernel ELF, bind its
 * arguments (tensors and scalars, positionally), run it SPMD on N cores,
 * read back outputs, cycles and findings, free it. Nothing is global: any
 * number of simulators may live in one process (one per thread at a time).
 * Every fallible call returns npu_status and writes its message into a
 * caller-owned npu_diag; the library never prints and never exits.
 * docs/api.md has the walk-through, docs/running.md the kernel ABI. */
#ifndef NPUSIM_H
#define NPUSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* npu_util.h too: its npu_diag helpers are C functions */
#endif

#include "isa/npu_util.h"

/* The machine config (frontend/config.h) and a tensor (frontend/npy.h):
 * passed by pointer, so their definitions are not needed here. */
typedef struct cfg_machine cfg_machine;
struct npy_tensor;

typedef struct npu_sim npu_sim;

typedef enum npu_mode {
    NPU_MODE_FUNC = 0,  /* architectural state only, fastest */
    NPU_MODE_PERF,      /* functional plus timing (the timing engine) */
    NPU_MODE_TIMING     /* timing without data (units check and account only) */
} npu_mode;

/* Argument directions: in tensors are copied into GM before the run, out
 * tensors are read back after it (inout both). Out-only tensors start zero. */
typedef enum npu_dir { NPU_IN = 1, NPU_OUT = 2, NPU_INOUT = 3 } npu_dir;

typedef struct npu_run_opts {
    npu_mode mode;
    uint64_t max_cycles;   /* perf/timing watchdog; 0 = the config's timing.max_cycles */
    uint64_t max_insns;    /* instruction watchdog per core; 0 = NPU_DEFAULT_MAX_INSNS */
} npu_run_opts;

#define NPU_DEFAULT_MAX_INSNS 1000000000ull

/* Create a simulator for cfg (copied; NULL = the embedded default machine).
 * The core count starts at the config's chip.cores. */
npu_status npu_sim_new(npu_sim **out, const cfg_machine *cfg, npu_diag *d);
void npu_sim_free(npu_sim *s);

/* Load a kernel (replaces a loaded one and drops bound arguments). */
npu_status npu_sim_load_elf(npu_sim *s, const char *path, npu_diag *d);
npu_status npu_sim_load_elf_mem(npu_sim *s, const void *buf, size_t len, const char *name,
                                npu_diag *d);
/* Start at this .text symbol instead of the ELF's entry point. */
npu_status npu_sim_set_entry(npu_sim *s, const char *symbol, npu_diag *d);
/* Cores of the launch (1..chip.cores of the config). */
npu_status npu_sim_set_cores(npu_sim *s, int n, npu_diag *d);

/* Arguments are positional: each bind appends the next one. name labels it
 * for npu_sim_get_output and messages (NULL: "arg<N>"). The tensor gets its
 * own GM allocation (with guard zones around it); in/inout data is copied
 * now and written into GM at the start of every run (runs repeat exactly). */
npu_status npu_sim_bind_tensor(npu_sim *s, const char *name, const struct npy_tensor *t,
                               npu_dir dir, npu_diag *d);
/* An output tensor given by dtype (isa_dtype) and shape only (zero-filled). */
npu_status npu_sim_bind_output(npu_sim *s, const char *name, int dtype, int ndim,
                               const int64_t *shape, npu_diag *d);
npu_status npu_sim_bind_int(npu_sim *s, const char *name, int64_t v, npu_diag *d);
npu_status npu_sim_bind_float(npu_sim *s, const char *name, double v, npu_diag *d); /* as f32 bits */
/* Drop every bound argument (the kernel stays loaded). */
void npu_sim_clear_args(npu_sim *s);

/* Run the loaded kernel on the launch's cores, from the launch as bound
 * (.data/.bss, tensors and registers re-initialised). opts NULL = func mode with
 * default limits. A fault returns NPU_EFAULT (or the fault's status) with the
 * report (core, pc, instruction, cycle, what was wrong) in d. Outputs of a
 * run are readable until the next run or load. */
npu_status npu_sim_run(npu_sim *s, const npu_run_opts *opts, npu_diag *d);

/* Progress of a run in progress, for a front end's status line (npusim's
 * commands print one on a terminal). The library never prints: it calls
 * fn from inside npu_sim_run (and the stat/record/check runs built on it),
 * on the calling thread, at most once per period_ms of host wall time, the
 * first time period_ms after the run started; never in a run shorter than
 * that. NULL fn turns it off (the default). It only reads the clock, so
 * results never depend on it. */
typedef struct npu_progress {
    npu_mode mode;
    uint64_t insns;         /* instructions retired, all cores */
    uint64_t cycles;        /* perf/timing: simulated cycle reached (func: 0) */
    int cores_done, ncores; /* cores ended */
    double host_seconds;    /* wall time since the run started */
} npu_progress;
typedef void (*npu_progress_fn)(void *user, const npu_progress *p);
void npu_sim_set_progress(npu_sim *s, npu_progress_fn fn, void *user, unsigned period_ms);

/* Host threads a perf-mode run uses: $NPUSIM_THREADS, a positive integer
 * (1: everything on the calling thread; 2 or more: unit data is computed
 * on a second thread while the timing engine goes on, docs/timing.md), or
 * "auto" / unset: 2 when the process may run on a second CPU, else 1.
 * Returns -1 when the variable is malformed (runs then take "auto"; the
 * commands refuse it). Results never depend on it. */
int npu_host_threads(void);

/* Copy an output (or any tensor argument) out of GM into out, which is
 * allocated (free with npy_free from frontend/npy.h). name or "arg<N>". */
npu_status npu_sim_get_output(npu_sim *s, const char *name, struct npy_tensor *out,
                              npu_diag *d);
/* Raw GM access after a run (for tests and tools). */
npu_status npu_sim_read_gm(npu_sim *s, uint64_t addr, void *dst, uint64_t len, npu_diag *d);
/* The GM address an argument was placed at (0 if unknown name). */
uint64_t npu_sim_arg_addr(const npu_sim *s, const char *name);

/* Results of the last run. */
uint64_t npu_sim_cycles(const npu_sim *s);          /* max over cores; 0 in func mode */
uint64_t npu_sim_insns(const npu_sim *s, int core); /* instructions retired; core -1: all */
/* Scalar register of a core after the run (tests). */
uint64_t npu_sim_reg(const npu_sim *s, int core, int reg);

/* Findings (sync-use warnings etc.) of the last run, in order found. */
typedef enum npu_finding_kind {
    NPU_FIND_FLAG_LEFT_SET,     /* a flag still set when the kernel ended */
    NPU_FIND_WAIT_UNMATCHED,    /* a wait_flag no set_flag ever matched */
    NPU_FIND_FLAG_SET_TWICE     /* set_flag on a flag already set */
} npu_finding_kind;
typedef struct npu_finding {
    npu_finding_kind kind;
    int core;
    uint64_t pc;
    char msg[256];
} npu_finding;
size_t npu_sim_nfindings(const npu_sim *s);
const npu_finding *npu_sim_finding(const npu_sim *s, size_t i);

/* ---- counters (what `npusim stat` counts) ---------------------------------
 * A perf or timing run (opts NULL: perf, default limits) that counts every
 * event of docs/counters.md; *out gets the run's totals (free with
 * npu_counters_free). A fault, deadlock or watchdog returns its status and
 * report as npu_sim_run does, and *out stays NULL. Outputs are readable
 * afterwards as after npu_sim_run. */
typedef struct npu_counters npu_counters;
npu_status npu_sim_run_counted(npu_sim *s, const npu_run_opts *opts, npu_counters **out,
                               npu_diag *d);
/* Event `name` ("pipe.m.busy_cycles", "l2.hits", "chip.cycles") on instance
 * inst of its unit (a core, an L2 slice, an HBM channel; -1: the sum over
 * them). A histogram event (hbm.read_latency) gives its sample count.
 * NPU_EINVAL for an unknown name or instance; NPU_EUNSUPP for an event the
 * machine does not count (L2 and HBM events with the fixed GM port). */
npu_status npu_counters_get(const npu_counters *c, const char *name, int inst, uint64_t *value,
                            npu_diag *d);
/* Instances of the event's unit (cores, slices, channels; 1 for chip
 * events), or -1 for an unknown or uncounted event. */
int npu_counters_instances(const npu_counters *c, const char *name);
/* The same run with the counters also per window of `interval` cycles, as
 * `npusim stat -I interval` gives them (interval 0: totals only, as
 * npu_sim_run_counted): npu_counters_windows windows, window k ending at
 * npu_counters_window_end (the last one with the run), and each event's
 * delta in it by npu_counters_get_window (instance -1: the sum). Events
 * that stat -I keeps as totals only (pipe.s.busy_cycles, gm.requests, the
 * flag counts...) are NPU_EUNSUPP there; npu_counters_get still gives
 * every total. */
npu_status npu_sim_run_counted_every(npu_sim *s, const npu_run_opts *opts, uint64_t interval,
                                     npu_counters **out, npu_diag *d);
size_t npu_counters_windows(const npu_counters *c);
uint64_t npu_counters_window_end(const npu_counters *c, size_t k);
npu_status npu_counters_get_window(npu_counters *c, size_t k, const char *name, int inst, uint64_t *value,
                                   npu_diag *d);
void npu_counters_free(npu_counters *c);

/* ---- checks (what `npusim check` finds) ------------------------------------
 * A run under the checkers (docs/checks.md): memcheck, racecheck, initcheck,
 * synccheck, as bits. A fault, deadlock or watchdog of the kernel is a
 * finding, not an error: the return is NPU_OK whenever the run was checked
 * (an error only for bad options or when the checker itself failed). The
 * result is a snapshot: it stays valid after later runs and after
 * npu_sim_free; free it with npu_check_free. json / junit (may be NULL):
 * also write npusim check's --json / --junit files. */
enum { NPU_CHECK_MEM = 1, NPU_CHECK_RACE = 2, NPU_CHECK_INIT = 4, NPU_CHECK_SYNC = 8, NPU_CHECK_ALL = 15 };
typedef struct npu_check_opts {
    unsigned tools;         /* NPU_CHECK_* bits; 0 = all */
    npu_mode mode;          /* NPU_MODE_FUNC (0, the default); NPU_MODE_PERF gives findings their
                             * cycles; NPU_MODE_TIMING checks accesses without computing data */
    uint64_t max_cycles, max_insns;   /* 0 = the defaults */
    const char *json, *junit;
} npu_check_opts;
typedef struct npu_check_result npu_check_result;
npu_status npu_sim_run_checked(npu_sim *s, const npu_check_opts *opts, npu_check_result **out,
                               npu_diag *d);
size_t npu_check_nfindings(const npu_check_result *r);   /* findings kept (grouped) */
uint64_t npu_check_dropped(const npu_check_result *r);   /* past the group limit, counted only */
int npu_check_ran_to_end(const npu_check_result *r);     /* 1: outputs are meaningful */
/* Finding i (NULL past the end): its tool ("racecheck"), its header line,
 * stable across timing changes ("racecheck: read-after-write hazard on UB
 * [0x0, +256): core 0 MTE2 pc 0x30 (main+0x30) write -> core 0 V pc 0x48
 * (main+0x48) read"), and its details (the fault or deadlock report, ...). */
const char *npu_check_tool(const npu_check_result *r, size_t i);
const char *npu_check_header(const npu_check_result *r, size_t i);
const char *npu_check_details(const npu_check_result *r, size_t i);
/* The whole report as `npusim check` prints it (every finding, a summary). */
const char *npu_check_report(const npu_check_result *r);
void npu_check_free(npu_check_result *r);

/* ---- traces (what `npusim record` writes) ----------------------------------
 * A perf or timing run that writes a trace of the run to path (docs/traces.md;
 * written to a temporary file and renamed at the end). opts NULL: perf, level
 * instr, a counter sample every 1000 cycles. The return is the trace's status
 * if it could not be written (nothing is left under path), else the run's:
 * NPU_OK, or a fault, deadlock or watchdog with its report in d, and then the
 * trace of what ran is written all the same. */
typedef struct npu_record_opts {
    npu_mode mode;          /* NPU_MODE_PERF or NPU_MODE_TIMING */
    int level;              /* 0 instructions, stalls, flags, counters; 1 also GM ranges;
                             * 2 also every HBM command */
    uint64_t interval;      /* cycles between counter samples; 0 = none */
    int mem_units;          /* the memory counters per L2 slice and HBM channel (-A) */
    uint64_t max_cycles;    /* 0 = the config's timing.max_cycles */
    uint64_t max_insns;     /* per core; 0 = NPU_DEFAULT_MAX_INSNS */
} npu_record_opts;
npu_status npu_sim_record(npu_sim *s, const char *path, const npu_record_opts *opts, npu_diag *d);

/* ---- comparing tensors (npusim run --expect, npusim check) --------------
 * Element i mismatches when |got - want| > atol + rtol * |want|, computed in
 * double after converting both from their dtypes (they may differ). NaN vs
 * NaN matches, NaN vs a number mismatches; +inf vs +inf matches. max_rel is
 * |got - want| / |want| over elements with want != 0. Shapes must be equal
 * (an error, not a mismatch). */
typedef struct npu_cmp_result {
    int pass;                /* mismatches == 0 */
    uint64_t numel, mismatches;
    double max_abs, max_rel;
    int ndim;
    int64_t first[8];        /* multi-dimensional index of the first mismatch */
    uint64_t first_flat;     /* its flat index (valid when mismatches > 0) */
    double first_got, first_want;
    /* where max_rel is (multi-dimensional index, values), and the
     * tolerances compared with: a pass whose max_rel exceeds rtol passed
     * on atol, at a reference near zero (npu_compare_format says where) */
    int64_t max_rel_at[8];
    double max_rel_got, max_rel_want;
    double rtol, atol;
} npu_cmp_result;

npu_status npu_compare(const struct npy_tensor *got, const struct npy_tensor *want, double rtol,
                       double atol, npu_cmp_result *r, npu_diag *d);
/* One line: "pass: 0 of 1048576 elements mismatch, max abs err 1.2e-07, max rel err 3.4e-06"
 * (then " at [i, j] (got G, want W: within atol)" when max_rel exceeds rtol) or
 * "FAIL: 17 of 1048576 mismatch (...), first at [3, 14]: got 1.5, want 1.25". */
void npu_compare_format(const npu_cmp_result *r, char *buf, size_t n);

/* `npusim run` (sim/cmd_run.c): argv[0] is "run". Prints; returns the exit
 * status (0 pass, 1 mismatch, 2 bad input or fault). */
int sim_cmd_run(int argc, char **argv);
/* `npusim check` (sim/cmd_check.c, sim/check.h): 0 clean, 1 findings, 2 bad input. */
int sim_cmd_check(int argc, char **argv);
/* `npusim stat` (sim/cmd_stat.c, the counters' command): run in perf mode and
 * print counters like perf stat. Exit 0 ok, 1 --check failed, 2 bad input. */
int sim_cmd_stat(int argc, char **argv);
/* `npusim record` (sim/cmd_record.c, sim/record.h): run in perf mode and write a
 * trace. 0 ran to the end, 1 fault/deadlock/watchdog (trace written), 2 bad input. */
int sim_cmd_record(int argc, char **argv);
/* `npusim sweep` (sim/cmd_sweep.c, sim/sweep.h): many (kernel, config) points
 * in parallel. 0 every point ok, 1 a point failed, 2 bad input. */
int sim_cmd_sweep(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
