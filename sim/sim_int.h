/* sim_int.h — the simulator's internals shared by the sim/ files: the
 * machine state (npu_sim), global memory, and the executor's step
 * interface that the timing engine drives.
 *
 * The split of work (STYLE.md 5):
 *   - the executor (exec.c) runs instructions functionally, in program order
 *     per core, at the moment the scalar unit dispatches them: operands are
 *     read at dispatch. With correct synchronisation this gives the results
 *     of any legal interleaving; the race checker finds kernels where not.
 *   - the timing engine (timing*.c) decides WHEN things happen. It calls
 *     sim_core_step() whenever a core's scalar unit is free to issue its next
 *     instruction; the step executes exactly one instruction and describes
 *     it in a sim_op (pipe, cost class, work, GM ranges, sync details), from
 *     which the engine schedules pipes, queues, flags and memory traffic.
 *   - func mode (run.c) is: for each core, loop sim_core_step until it ends,
 *     with the sync_all protocol across cores (round-robin).
 *
 * Threading: none. One npu_sim is used by one thread at a time. */
#ifndef SIM_INT_H
#define SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "frontend/config.h"
#include "frontend/elf.h"
#include "isa/isa.h"
#include "isa/npu_util.h"
#include "sim/npusim.h"
#include "sim/sim_units.h"

/* ===================================================================== *
 *  Global memory (gm.c)
 * ===================================================================== */

/* GM is sparse: every allocation owns a table of 64 KiB pages, each
 * allocated (zeroed) on first write; reads of a page never written return
 * zeros without allocating. So a 64 GB address space costs what is touched.
 *
 * Only allocations are mapped: the ELF's data segments at their link
 * addresses, the parameter block, and one allocation per tensor argument,
 * with at least SIM_GM_GUARD unmapped bytes between any two, so an overrun
 * of a tensor faults instead of silently writing its neighbour. */
#define SIM_GM_PAGE_SHIFT 16
#define SIM_GM_PAGE (1ull << SIM_GM_PAGE_SHIFT)
#define SIM_GM_GUARD 4096ull
/* Tensors and the parameter block are placed upward from here (the ELF's
 * data lives at ASM_GM_DATA_BASE = 0x1_0000_0000, below). */
#define SIM_GM_ALLOC_BASE 0x200000000ull
/* Allocations are aligned to this (>= every on-chip alignment, one L2 line). */
#define SIM_GM_ALLOC_ALIGN 512ull
/* The end of the address space (64 GiB of HBM in the default machine). */
#define SIM_GM_LIMIT 0x1000000000ull

typedef enum sim_gm_kind {
    SIM_GM_SEG,      /* an ELF data segment (.rodata/.data/.bss) */
    SIM_GM_PARAM,    /* the parameter block */
    SIM_GM_TENSOR    /* a tensor argument */
} sim_gm_kind;

typedef struct sim_gm_alloc {
    uint64_t addr, size;
    sim_gm_kind kind;
    int readonly;          /* .rodata: writes fault */
    char name[64];         /* ".rodata", "params", the argument name */
    uint8_t **pages;       /* ceil(size / SIM_GM_PAGE) entries, NULL until written */
    uint64_t npages;
} sim_gm_alloc;

typedef struct sim_gm {
    sim_gm_alloc *a;       /* sorted by addr, non-overlapping */
    size_t n, cap;
    size_t last;           /* index of the last allocation hit (lookup cache) */
    uint64_t next;         /* next free address for sim_gm_alloc_new placement */
    uint64_t touched;      /* bytes of pages allocated (for reports) */
} sim_gm;

void sim_gm_init(sim_gm *g);
void sim_gm_free(sim_gm *g);
/* Map [addr, addr+size) as a new allocation (ELF segments). Overlap with an
 * existing allocation or its guard zone is an error. */
npu_status sim_gm_map(sim_gm *g, uint64_t addr, uint64_t size, sim_gm_kind kind,
                      int readonly, const char *name, npu_diag *d);
/* Place a new allocation at the next free aligned address (after the guard
 * zone of the previous one); *addr receives it. */
npu_status sim_gm_alloc_new(sim_gm *g, uint64_t size, sim_gm_kind kind, const char *name,
                            uint64_t *addr, npu_diag *d);
/* Read/write bytes. Both fail with NPU_EFAULT naming the range and the
 * nearest allocation when [addr, addr+len) is not inside one allocation
 * (e.g. "GM write [0x200001000, +64) is 0 bytes past the end of tensor C
 * [0x200000000, +4096)"). write_init ignores readonly (loading .rodata). */
npu_status sim_gm_read(sim_gm *g, uint64_t addr, void *dst, uint64_t len, npu_diag *d);
npu_status sim_gm_write(sim_gm *g, uint64_t addr, const void *src, uint64_t len, npu_diag *d);
npu_status sim_gm_write_init(sim_gm *g, uint64_t addr, const void *src, uint64_t len,
                             npu_diag *d);
/* NPU_OK when a read (is_write 0) or a write of [addr, addr+len) would
 * succeed, else the error sim_gm_read / sim_gm_write would give. Changes
 * nothing in g, not even its lookup cache (the data worker may be using
 * it): *hint is the caller's own (an allocation index, any value to start). */
npu_status sim_gm_check(const sim_gm *g, size_t *hint, uint64_t addr, uint64_t len, int is_write,
                        npu_diag *d);
/* The allocation containing [addr, addr+len), or NULL. */
const sim_gm_alloc *sim_gm_find(sim_gm *g, uint64_t addr, uint64_t len);
/* Zero the whole allocation that starts at addr (frees its pages). */
void sim_gm_zero(sim_gm *g, uint64_t addr);
/* Drop every allocation of a kind (re-binding arguments). */
void sim_gm_drop_kind(sim_gm *g, sim_gm_kind kind);
/* The sim_gm_if (sim_units.h) over g, for the units. */
sim_gm_if sim_gm_iface(sim_gm *g);

/* ===================================================================== *
 *  Per-core state
 * ===================================================================== */

typedef enum sim_core_state {
    SIM_CORE_RUNNING = 0,
    SIM_CORE_AT_BARRIER,   /* executed sync_all; waits for every core (pc is past it) */
    SIM_CORE_ENDED,        /* halt (or the entry function returned) */
    SIM_CORE_FAULTED       /* a fault or trap stopped it; s->fault has the report */
} sim_core_state;

/* The flag state of one (src pipe, dst pipe, id), for the legality checks.
 * In func mode flags order nothing; the executor counts sets and waits in
 * program order so that, at the end, a flag left set or a wait never
 * matched becomes a finding (the timing engine orders for real). */
typedef struct sim_flag {
    int64_t pending;       /* sets minus waits so far in program order */
    uint32_t nset, nwait;
    uint64_t last_set_pc, last_wait_pc;
} sim_flag;

#define SIM_NFLAG_IDS 8

/* A predecoded instruction: decoded once at load time. Words that do not
 * decode have in.op == ISA_OP_INVALID; the fault ("illegal instruction")
 * is raised only if one is executed (data in .text is not an error). */
typedef struct sim_pinsn {
    isa_insn in;
} sim_pinsn;

typedef struct sim_core {
    int id;
    uint64_t x[32];                 /* x0 is kept 0 (re-zeroed after every write) */
    uint64_t pc;                    /* byte address in .text (8 per instruction) */
    sim_core_state state;
    uint64_t cycle;                 /* the current cycle: the timing engine writes it
                                     * before each step (mfsr cycle, fault reports);
                                     * stays 0 in func mode */
    uint64_t insns;                 /* instructions retired */
    /* on-chip buffers, sized from the config: buf[SIM_SP_L1..SIM_SP_SB] */
    uint8_t *buf[SIM_SP_COUNT];
    uint64_t bufsize[SIM_SP_COUNT];
    sim_vmask vmask;
    sim_flag flag[ISA_NPIPES][ISA_NPIPES][SIM_NFLAG_IDS];
    /* PMU (special registers pmuctl, pmusel0..3, pmucnt0..3). In func mode the
     * executor counts event select 0 (instructions retired) while pmuctl bit 0
     * is set; other selects read through s->pmu_read when the counters part
     * installs it, else stay 0. */
    uint64_t pmu_ctl, pmu_sel[4], pmu_cnt[4];
    /* GM ranges of the current step (see sim_op.gm): grows, never shrinks */
    struct sim_gm_range *gmr;
    uint32_t ngmr, capgmr;
    int gmr_oom;                    /* a range could not be recorded (out of memory) */
    /* perf mode's deferred data work (exec.c, "Deferred data"): unit
     * instructions checked and accounted at dispatch whose data is still
     * to be computed, in program order; and the GM byte ranges they read
     * and write, as one bounding interval each ([lo, hi), lo = hi: none) */
    struct sim_defer *dq;
    uint32_t ndq, capdq;
    uint64_t dq_rlo, dq_rhi, dq_wlo, dq_whi;
} sim_core;

/* ===================================================================== *
 *  One executed instruction, as the timing engine and observers see it
 * ===================================================================== */

typedef struct sim_gm_range {
    uint64_t addr, len;
    int is_write;
} sim_gm_range;

typedef struct sim_op {
    uint64_t pc;                    /* where it was */
    uint64_t next_pc;               /* where the core goes next */
    isa_insn in;                    /* decoded */
    isa_pipe pipe;                  /* isa_insn_pipe(&in) */
    isa_cost cost;                  /* the row's cost class */
    sim_work work;                  /* what the unit reported (zero for scalar) */
    /* GM byte ranges touched (data moves: one per burst; ldg/sdg: one),
     * valid until the next step of this core. */
    const sim_gm_range *gm;
    uint32_t ngm;
    /* sync */
    int is_set_flag, is_wait_flag;  /* spipe/dpipe/fid in `in` */
    int is_barrier;                 /* pipe_barrier; barrier_pipe = in.pipe (ALL possible) */
    int barrier_pipe;
    int is_sync_all;                /* the core is now SIM_CORE_AT_BARRIER */
    /* control flow */
    int is_branch, taken;           /* conditional branch and whether taken */
    int is_call;                    /* jal/jalr with rd = ra */
    int is_ret;                     /* jalr x0, ra, 0 */
    uint64_t target;                /* call/return/jump target */
    int ended;                      /* halt (or entry returned): the core ended */
    int faulted;                    /* the step faulted (trap included) */
} sim_op;

/* ===================================================================== *
 *  Observers (checkers, tracers)
 * ===================================================================== */

/* One memory access of an executing instruction, with its context. */
typedef struct sim_access_ev {
    int core;
    uint64_t pc;
    isa_pipe pipe;                  /* the pipe of the instruction */
    sim_space space;
    uint64_t addr, len;
    int is_write;
} sim_access_ev;

typedef struct sim_observer {
    void *user;
    /* every byte range touched in any space (scalar loads/stores included) */
    void (*access)(void *user, const sim_access_ev *ev);
    /* after every executed instruction (also faulting ones, op->faulted) */
    void (*on_op)(void *user, npu_sim *s, int core, const sim_op *op);
} sim_observer;

#define SIM_MAX_OBSERVERS 8

/* ===================================================================== *
 *  Arguments
 * ===================================================================== */

typedef enum sim_arg_kind { SIM_ARG_TENSOR, SIM_ARG_INT, SIM_ARG_FLOAT } sim_arg_kind;

typedef struct sim_arg {
    sim_arg_kind kind;
    char name[64];
    npu_dir dir;                    /* tensors */
    int dtype;                      /* tensors: isa_dtype */
    int ndim;
    int64_t shape[8];
    uint64_t addr, nbytes;          /* tensors: GM placement */
    uint64_t value;                 /* the 64-bit argument value (register / param block) */
    double fvalue;
    uint8_t *init;                  /* in/inout tensors: the bound data (nbytes), copied into
                                     * GM at the start of every run, so runs repeat exactly */
} sim_arg;

/* ===================================================================== *
 *  The simulator
 * ===================================================================== */

struct npu_sim {
    cfg_machine cfg;                /* owned copy */
    /* the loaded kernel */
    elf_image img;
    int loaded;
    char kname[256];                /* file name, for messages */
    sim_pinsn *text;                /* ntext + 1 entries: the last is a sentinel
                                     * (ISA_OP_INVALID) so running off the end of
                                     * .text faults without a bounds check */
    size_t ntext;
    uint8_t *tpipe, *tcost;         /* per instruction (ntext + 1): isa_insn_pipe and the
                                     * row's cost class, precomputed for sim_core_step */
    uint64_t text_end;              /* ntext * 8: also the initial ra, so that the
                                     * entry function returning ends the core */
    uint64_t entry;
    /* the launch */
    int ncores;                     /* cores of the launch */
    sim_core *cores;                /* ncores entries (allocated at run) */
    int cores_cap;
    sim_gm gm;
    sim_arg *args;
    size_t nargs, capargs;
    uint64_t param_addr;            /* GM address of the parameter block */
    /* mode of the current run */
    npu_mode mode;
    int nodata;                     /* timing mode: units in nodata mode */
    int defer;                      /* perf mode: data work deferred per core (exec.c) */
    int ndefer;                     /* cores with deferred work */
    uint64_t dseq;                  /* batches handed on in this run */
    struct sim_dworker *dw;         /* the data worker thread, or NULL (defer.c) */
    uint64_t dw_batches;            /* batches the worker computed in the last run */
    size_t gm_hint;                 /* the engine's own GM lookup cache (sim_gm_check) */
    uint64_t max_insns;
    /* observers */
    sim_observer obs[SIM_MAX_OBSERVERS];
    int nobs;
    /* PMU read hook of the counters part: value of counter idx with event sel */
    uint64_t (*pmu_read)(void *user, npu_sim *s, int core, int idx, uint64_t sel);
    void *pmu_user;
    /* progress (npu_sim_set_progress): fn, and the wall clock (seconds)
     * of the run's start and of the next report */
    struct {
        npu_progress_fn fn;
        void *user;
        double period, start, next;
    } prog;
    /* results */
    npu_finding *findings;
    size_t nfind, capfind;
    uint64_t cycles;                /* the timing engine sets it after a run */
    struct sim_timing_stats *tstats; /* perf/timing statistics of the last run (or NULL) */
    npu_diag fault;                 /* the report of the first fault */
    int faulted;
    /* the step's scratch: the unit context of the core being stepped */
    sim_unit_ctx uctx;
    int uctx_core;                  /* the core uctx points at (-1: none) */
    int rec_gm;                     /* record units' GM ranges into the core's gmr */
    int cur_core;
    uint64_t cur_pc;
    isa_pipe cur_pipe;
};

/* Progress (run.c): sim_progress_start at the start of a run; then, where
 * sim_progress_on, sim_progress_poll every so often (it reads the clock:
 * every few thousand events, or every chunk of func-mode instructions)
 * calls the front end's function when its period has passed. */
void sim_progress_start(npu_sim *s);
static inline int sim_progress_on(const npu_sim *s) { return s->prog.fn != NULL; }
void sim_progress_poll(npu_sim *s, uint64_t cycles, int cores_done);

/* ===================================================================== *
 *  The executor (exec.c)
 * ===================================================================== */

/* Execute one instruction of core `core` (which must be SIM_CORE_RUNNING)
 * and describe it in *op (may be NULL when the caller needs no description).
 * Returns NPU_OK, or an error with the full fault report in d (the core is
 * then SIM_CORE_FAULTED, op->faulted is set, s->fault holds a copy). A halt
 * returns NPU_OK with op->ended; sync_all returns NPU_OK with
 * op->is_sync_all and the core SIM_CORE_AT_BARRIER until sim_barrier_release. */
npu_status sim_core_step(npu_sim *s, int core, sim_op *op, npu_diag *d);
/* Run unit ('v', 'c' or 'd', sim_unit_of) on in, in u's mode. */
npu_status sim_unit_run(sim_unit_ctx *u, int unit, const isa_insn *in, sim_work *w, npu_diag *d);

/* ===================================================================== *
 *  Perf mode's deferred data work (defer.c)
 * ===================================================================== */

/* The GM bytes one instruction reads and writes, as one bounding interval
 * each ([lo, hi), hi 0: none). */
typedef struct sim_gm_bounds { uint64_t rlo, rhi, wlo, whi; } sim_gm_bounds;

/* Defer the data of the unit instruction core just checked (its GM ranges
 * span b), after handing on any other core's batch it conflicts with. */
npu_status sim_defer_push(npu_sim *s, int core, const isa_insn *in, uint64_t pc, int unit,
                          const sim_gm_bounds *b, npu_diag *d);
/* Hand on core's batch (computed at once without the worker). */
npu_status sim_defer_flush(npu_sim *s, int core, npu_diag *d);
/* Compute every core's batch and wait for all of it. */
npu_status sim_defer_flush_all(npu_sim *s, npu_diag *d);
/* 1 while some deferred data may still be uncomputed. */
int sim_defer_pending(const npu_sim *s);
/* Start of a perf run (after s->defer is set): start the worker if the
 * host has a second CPU for it. */
void sim_defer_begin(npu_sim *s);
/* End of a run that stopped with st: compute the rest, stop the worker;
 * the run's status (a worker failure ahead of the engine's own error). */
npu_status sim_defer_end(npu_sim *s, npu_status st, npu_diag *d);

/* Fast path for func mode: run core until it ends, reaches a barrier,
 * faults or has retired `budget` more instructions; no sim_op is filled and
 * on_op observers are not called (run.c uses the step when any is set). */
npu_status sim_core_run(npu_sim *s, int core, uint64_t budget, npu_diag *d);

/* Reset every core for a new run: registers (a0..a7 arguments, sp = top
 * of the scalar buffer, ra = text_end), pc = entry, buffers zeroed, flags,
 * PMU, state RUNNING. Allocates the cores if needed. */
npu_status sim_cores_reset(npu_sim *s, npu_diag *d);

/* sync_all protocol: 1 when every core of the launch is AT_BARRIER;
 * sim_barrier_release sets them back to RUNNING. A barrier some core can
 * never reach (it ended while others wait) is a deadlock: sim_barrier_check
 * reports it (NPU_EDEADLOCK, with every core's pc). */
int sim_barrier_ready(const npu_sim *s);
void sim_barrier_release(npu_sim *s);
npu_status sim_barrier_check(npu_sim *s, npu_diag *d);

/* End-of-run sync findings (flags left set, waits never matched). */
void sim_sync_findings(npu_sim *s);
void sim_add_finding(npu_sim *s, npu_finding_kind k, int core, uint64_t pc,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Register an observer (copied). Fails when SIM_MAX_OBSERVERS are set. */
npu_status sim_add_observer(npu_sim *s, const sim_observer *o, npu_diag *d);

/* Write the fault report for core c at pc into d and s->fault, mark the
 * core FAULTED: "core 3 pc 0x40 <gemm+0x40> cycle 120: ldg x5, 0(x6): <what>". */
npu_status sim_fault(npu_sim *s, int core, uint64_t pc, npu_status code, npu_diag *d,
                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Disassemble the instruction at pc with symbols ("gemm+0x40" targets). */
void sim_disasm_at(const npu_sim *s, uint64_t pc, char *buf, size_t n);
/* "gemm+0x40" for pc (or "0x40" with no symbol). */
void sim_symbolize(const npu_sim *s, uint64_t pc, char *buf, size_t n);

/* ===================================================================== *
 *  Runs (run.c)
 * ===================================================================== */

/* Func mode over every core of the launch (round-robin for sync_all). */
npu_status sim_run_func(npu_sim *s, npu_diag *d);

/* Perf and timing modes go to the timing engine's sim_timing_run
 * (sim/timing.h); its statistics of the last run stay in s->tstats. */

/* Before a run: re-initialise GM (.data/.bss from the ELF, in/inout tensors
 * from their bound data, out tensors zeroed) and write the parameter block. */
npu_status sim_place_args(npu_sim *s, npu_diag *d);

/* The start of every run (npu_sim_run, stat, record): the mode and the
 * instruction limit (0: the default) set, findings, fault and cycles
 * cleared, arguments placed, cores reset, and for a timed mode the timing
 * statistics allocated. `who` names the caller in messages. */
npu_status sim_run_begin(npu_sim *s, npu_mode mode, uint64_t max_insns, const char *who,
                         npu_diag *d);
/* A timed run after sim_run_begin: the timing engine with an observer
 * (NULL: none), a watchdog (0: the config's) and the period of the
 * observer's memory-system samples (0: none; sim_timing_opts), then
 * findings synced. */
struct sim_timing_observer;
npu_status sim_run_timed(npu_sim *s, uint64_t max_cycles, const struct sim_timing_observer *obs,
                         uint64_t mem_sample_cycles, npu_diag *d);
/* The value of L2 / HBM counter event e (counters/events.def) in memmodel's
 * statistics: of slice or channel i, or (i -1) the L2's and HBM's totals;
 * 0 for any other event. The one mapping of those rows to the statistics'
 * fields (npusim stat, its intervals, npusim record; sim/cmd_stat.c). */
struct mem_sys_stats;
uint64_t sim_ctr_mem_value(const struct mem_sys_stats *ms, int e, int i);
/* A perf (nodata 0) or timing run of the bound launch with every counter
 * of counters/events.def counted, as `npusim stat` counts them; *out gets
 * the totals (ctr_values_free them), and with an interval and iv, *iv the
 * windows of `stat -I interval` (ctr_intervals_free). The library's
 * npu_sim_run_counted and npu_sim_run_counted_every. */
struct ctr_values;
struct ctr_intervals;
npu_status sim_stat_collect(npu_sim *s, int nodata, uint64_t max_cycles, uint64_t max_insns,
                            uint64_t interval, struct ctr_values *out, struct ctr_intervals *iv,
                            npu_diag *d);

#endif
