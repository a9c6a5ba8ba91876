/* record.h — `npusim record`: a perf-mode run with a trace recorder as the
 * timing engine's observer (sim/timing.h), writing an .npt trace through
 * the traces/ writer (traces/trace.h). docs/traces.md, "Recording".
 *
 * What the recorder turns the observer calls into:
 *   - INSN for every instruction of every pipe (dispatch, start, end, pc,
 *     opcode). Scalar instructions are timed as the engine charges them
 *     (issue slot or scalar cost from sim/cost.c). The scalar unit's dispatch
 *     slot of a pipe instruction is an INSN on S with flag
 *     SIM_REC_INSN_DISPATCH (its opcode is the dispatched one), so that the
 *     durations of S's INSN events sum to the engine's busy[S] and its
 *     unflagged INSN events count insns[S].
 *   - STALL intervals with the engine's cause ids (sim_stall_name),
 *     FLAG_SET / FLAG_WAIT paired by set sequence numbers, CALL / RET,
 *     BARRIER (sync_all waits), and COUNTER samples every `interval` cycles
 *     (cumulative per-core pipe busy cycles and GM bytes).
 *   - at level mem/full: MEM events, one per contiguous GM byte range of a
 *     data move (issued at the move's start, done at its end) or of a
 *     scalar GM access (done when the scalar unit's memory stall ends).
 *     The engine has no hook for the memory system's own requests or HBM
 *     commands, so full records what mem does. */
#ifndef SIM_RECORD_H
#define SIM_RECORD_H

#include <stdint.h>

#include "sim/npusim.h"

typedef enum sim_rec_level { SIM_REC_INSTR = 0, SIM_REC_MEM, SIM_REC_FULL } sim_rec_level;

/* INSN.flags bit: the scalar unit dispatching a pipe instruction (not an
 * instruction of S itself). */
#define SIM_REC_INSN_DISPATCH 1u

/* COUNTER ids of a recorded trace (names as in counters/events.def). */
/* X(id, ev): ev is the row of counters/events.def (CTR_EV_<ev>) whose name
 * the trace header carries, so the sample names cannot drift from stat's. */
#define SIM_REC_COUNTERS(X) \
    X(S_BUSY, P_S_BUSY) X(V_BUSY, P_V_BUSY) X(M_BUSY, P_M_BUSY) X(MTE1_BUSY, P_MTE1_BUSY) \
    X(MTE2_BUSY, P_MTE2_BUSY) X(MTE3_BUSY, P_MTE3_BUSY) X(FIX_BUSY, P_FIX_BUSY) \
    X(GM_RD, GM_RD) X(GM_WR, GM_WR)
typedef enum sim_rec_counter {
#define SIM_REC_CTR_ENUM(id, name) SIM_REC_CTR_##id,
    SIM_REC_COUNTERS(SIM_REC_CTR_ENUM)
#undef SIM_REC_CTR_ENUM
    SIM_REC_CTR__COUNT
} sim_rec_counter;

typedef struct sim_rec_opts {
    sim_rec_level level;
    uint64_t interval;      /* cycles between counter samples; 0 = no samples */
    const char *kernel;     /* kernel name for the trace (NULL: the loaded file's) */
    uint64_t seed;          /* informative (the engine itself draws no random numbers) */
    int nodata;             /* timing mode instead of perf */
    uint64_t max_cycles;    /* watchdog; 0 = the config's timing.max_cycles */
    uint64_t max_insns;     /* per core; 0 = NPU_DEFAULT_MAX_INSNS */
    int mem_units;          /* -A: memory counters per L2 slice and HBM channel */
} sim_rec_opts;

typedef struct sim_rec_result {
    npu_status run;         /* the run: NPU_OK, a fault, NPU_EDEADLOCK, NPU_ETIMEOUT, ... */
    npu_diag run_diag;      /* its report */
    uint64_t events;        /* events written */
    uint64_t insn_events;   /* INSN events written (dispatch slots included) */
    uint64_t dispatch_events; /* of which dispatch slots */
    uint64_t counter_late;  /* contributions to counter bins already written (0 unless
                             * the flush's lower bound is wrong; totals stay exact) */
} sim_rec_result;

/* Run the loaded kernel of s (arguments bound) and write its trace to path
 * (atomically: a temp file renamed at close). A run that fails (fault,
 * deadlock, watchdog) still closes a valid trace of what ran: the return
 * is then NPU_OK and r->run says what happened. A return other than NPU_OK
 * means no trace was written (nothing is left under path): the writer
 * failed, or the run could not start. */
npu_status sim_record_run(npu_sim *s, const char *path, const sim_rec_opts *o,
                          sim_rec_result *r, npu_diag *d);

const char *sim_rec_level_name(sim_rec_level l);   /* "instr", "mem", "full" */
int sim_rec_level_from_name(const char *name);     /* -1 if unknown */

#endif
