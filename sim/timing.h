/* timing.h — the timing engine: when each instruction of each core happens.
 *
 * The executor (sim_core_step, sim_int.h) runs instructions functionally at
 * the moment the scalar unit dispatches them; this engine decides that
 * moment and everything after it: the in-order scalar unit, one in-order
 * queue per pipe (depth from the config; a full queue stalls the scalar
 * unit), pipes running in parallel, set_flag / wait_flag / pipe_barrier /
 * sync_all, and GM traffic through the memory system (memmodel's L2 + HBM,
 * or a fixed-latency, fixed-bandwidth port shared by all cores). Time
 * advances by events: an idle cycle costs nothing to simulate. Durations come
 * from sim/cost.c. docs/timing.md is the full description.
 *
 * Determinism: events are ordered by (cycle, sequence number of their
 * creation); nothing depends on pointers or hash order. Identical runs give
 * identical cycles, stats and observer calls. */
#ifndef SIM_TIMING_H
#define SIM_TIMING_H

#include <stdint.h>

#include "sim/sim_int.h"

/* Number of dtypes (rows of isa/dtypes.def), independent of whether isa.h
 * or config.h defined the enum first. */
enum {
    SIM_TM_NDT = 0
#define DT(id, suffix, bytes, kind, descr, doc) + 1
#include "isa/dtypes.def"
#undef DT
};

/* Why something waited. Scalar-unit stalls are charged to pipe S. */
typedef enum sim_stall_cause {
#define STALL(id, name, doc) SIM_STALL_##id,
#include "isa/stalls.def"
#undef STALL
    SIM_STALL__COUNT
} sim_stall_cause;

const char *sim_stall_name(int cause);   /* "flag", "queue_full", ... */

/* Per-core statistics (what the counters part reads). All cycle counts are
 * core clock cycles. */
typedef struct sim_timing_core_stats {
    uint64_t cycles;                       /* launch to the core's end (halt + every pipe drained) */
    uint64_t busy[ISA_NPIPES];             /* cycles a pipe was executing an instruction
                                            * (S: the scalar unit issuing) */
    uint64_t insns[ISA_NPIPES];            /* instructions executed per pipe (S: scalar ones,
                                            * set_flag/wait_flag counted on their pipe) */
    uint64_t stall[ISA_NPIPES][SIM_STALL__COUNT];  /* stall cycles by pipe and cause */
    uint64_t path_bytes[CFG_PATH__COUNT];  /* payload bytes moved per data path */
    uint64_t gm_rd_bytes, gm_wr_bytes;     /* GM bytes (data moves and scalar ldg/sdg) */
    uint64_t gm_requests;                  /* requests sent to the memory system */
    uint64_t macs[SIM_TM_NDT];             /* cube MACs per input dtype */
    uint64_t vec_elems[SIM_TM_NDT];        /* vector elements per dtype */
    uint64_t flag_sets, flag_waits;        /* set_flag / wait_flag executed */
} sim_timing_core_stats;

typedef struct sim_timing_stats {
    int ncores;
    uint64_t cycles;                       /* max over cores */
    double clock_ghz;                      /* chip.clock_ghz of the run */
    uint64_t events;                       /* events the engine processed (host cost) */
    sim_timing_core_stats *core;           /* [ncores], npu_malloc'd */
} sim_timing_stats;

void sim_timing_stats_free(sim_timing_stats *st);

/* ---- observer --------------------------------------------------------------
 * Called as the engine decides times (not in cycle order across cores: a
 * dispatch is reported when it happens, an execution when its end is
 * known). Every instruction gets a per-core sequence number `seq` (dispatch
 * order) that links its dispatch, exec and flag events. The sim_op is valid
 * only during on_dispatch. Any callback may be NULL; with no observer the
 * engine does no extra work. */
typedef enum sim_tm_flag_ev { SIM_TM_FLAG_SET = 0, SIM_TM_FLAG_WAIT } sim_tm_flag_ev;

typedef struct sim_timing_observer {
    void *user;
    /* the scalar unit issued (scalar) or dispatched (others) instruction seq */
    void (*on_dispatch)(void *user, int core, uint64_t seq, const sim_op *op, uint64_t cycle);
    /* instruction seq ran on pipe from start to end (end > start unless 0-cycle sync) */
    void (*on_exec)(void *user, int core, int pipe, uint64_t seq, uint64_t pc,
                    const isa_insn *in, uint64_t start, uint64_t end);
    /* pipe (S = scalar unit) waited [start, end) for cause, at instruction seq */
    void (*on_stall)(void *user, int core, int pipe, int cause, uint64_t seq, uint64_t pc,
                     uint64_t start, uint64_t end);
    /* set: flag becomes visible at cycle (set_seq is the set). wait: released at
     * cycle by the set set_seq (wait_seq is the wait). */
    void (*on_flag)(void *user, int core, int kind, int spipe, int dpipe, int id,
                    uint64_t cycle, uint64_t set_seq, uint64_t wait_seq);
    /* call (is_ret 0) or return (1) at pc to target, issued at cycle */
    void (*on_call)(void *user, int core, int is_ret, uint64_t pc, uint64_t target,
                    uint64_t cycle);
    /* (counters) the run is over: memmodel's L2 and HBM statistics, a
     * struct mem_sys_stats (memmodel/mem.h) valid only during the call; not
     * called with the fixed GM port (timing.memory_model fixed) */
    void (*on_mem_stats)(void *user, const void *mem_sys_stats);
    /* (counters, interval mode) the same statistics as they stand when the
     * run reaches `cycle`, a multiple of opts.mem_sample_cycles: all the
     * memory system counted before that cycle, nothing after. Called once
     * for the first multiple after each stretch of activity (the run skips
     * the multiples it jumps over, nothing happened in them); valid only
     * during the call; not called with the fixed GM port */
    void (*on_mem_sample)(void *user, uint64_t cycle, const void *mem_sys_stats);
    /* (traces, level full) every HBM command as the controllers issue it:
     * channel, pseudo-channel, command id (memmodel's mem_cmd_name), bank
     * group and bank within the pseudo-channel (-1: all banks), row, and the
     * core cycle it issues at (rounded down from the DRAM clock). Called in
     * DRAM time order per channel; not called with the fixed GM port. */
    void (*on_hbm_cmd)(void *user, int chan, int pc, int cmd, int bg, int bank, uint32_t row,
                       uint64_t cycle);
} sim_timing_observer;

typedef struct sim_timing_opts {
    int nodata;                            /* timing mode: units check and account only */
    uint64_t max_cycles;                   /* watchdog; 0 = the config's timing.max_cycles */
    const sim_timing_observer *obs;        /* NULL: none */
    uint64_t mem_sample_cycles;            /* on_mem_sample's period; 0: no samples */
} sim_timing_opts;

/* Run the loaded kernel on s's launch in perf (nodata 0) or timing (nodata 1)
 * mode. The cores must be reset and arguments placed (as for func mode).
 * Fills *stats (caller frees with sim_timing_stats_free; zeroed on entry,
 * partially filled on error) and sets s->cycles. Errors: a fault of the
 * program (the executor's report), NPU_EDEADLOCK (every pipe of every core
 * waiting, nothing in flight) and NPU_ETIMEOUT (the watchdog), both with each
 * core's state: every pipe's pending instruction, its pc and what it waits
 * for. */
npu_status sim_timing_run(npu_sim *s, const sim_timing_opts *opts, sim_timing_stats *stats,
                          npu_diag *d);

/* The perf report of `npusim run` (text, appended to b): total cycles, time
 * at the configured clock, per core the busy % of each pipe, achieved
 * TFLOP/s (2 x MACs) and GB/s of GM traffic, and the stall cycles by cause. */
void sim_timing_report(const sim_timing_stats *st, npu_buf *b);

#endif
