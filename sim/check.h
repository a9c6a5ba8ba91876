/* check.h — `npusim check`: the simulator as a sanitizer (memcheck,
 * racecheck, initcheck, synccheck and numerics), docs/checks.md.
 *
 * A sim_chk attaches to an npu_sim as an observer (sim_int.h): it sees every
 * executed instruction (on_op) and every byte range each unit touches
 * (access), in dispatch order per core. From that stream alone it keeps a
 * vector clock per (core, pipe) and per-range shadow state, so what it finds
 * does not depend on timing: a race is found whether or not this run's
 * cycles happened to order the two accesses. The timing engine (perf mode)
 * contributes the cycle of each finding and its deadlock detection.
 *
 * Usage: sim_chk_new(&c, s, tools) after the kernel is loaded and bound,
 * sim_chk_run(c, &opts) (runs npu_sim_run, turns faults and deadlocks into
 * findings), sim_chk_add_numerics for each --expect, then the reports.
 * sim_chk_free detaches the observer. */
#ifndef SIM_CHECK_H
#define SIM_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim_int.h"

/* Tools (bit set). */
enum {
    SIM_CHK_MEM = 1,
    SIM_CHK_RACE = 2,
    SIM_CHK_INIT = 4,
    SIM_CHK_SYNC = 8,
    SIM_CHK_ALL = 15
};

/* Finding kinds: CHK(id, tool bit, "tool", "title"). */
#define SIM_CHK_KINDS(X)                                                        \
    X(NUMERICS, 0, "numerics", "output mismatch")                              \
    X(OOB, SIM_CHK_MEM, "memcheck", "out-of-bounds access")                    \
    X(MISALIGNED, SIM_CHK_MEM, "memcheck", "misaligned access")                \
    X(FAULT, SIM_CHK_MEM, "memcheck", "fault")                                 \
    X(OVERWRITE, SIM_CHK_MEM, "memcheck", "cross-core overwrite")              \
    X(RAW, SIM_CHK_RACE, "racecheck", "read-after-write hazard")               \
    X(WAR, SIM_CHK_RACE, "racecheck", "write-after-read hazard")               \
    X(WAW, SIM_CHK_RACE, "racecheck", "write-after-write hazard")              \
    X(UNINIT, SIM_CHK_INIT, "initcheck", "read of uninitialised memory")       \
    X(DEADLOCK, SIM_CHK_SYNC, "synccheck", "deadlock")                         \
    X(SET_TWICE, SIM_CHK_SYNC, "synccheck", "flag set twice")                  \
    X(LEFT_SET, SIM_CHK_SYNC, "synccheck", "flag left set")                    \
    X(WAIT_UNMATCHED, SIM_CHK_SYNC, "synccheck", "wait never matched")         \
    X(BARRIER, SIM_CHK_SYNC, "synccheck", "sync_all mismatch")                 \
    X(TIMEOUT, SIM_CHK_SYNC, "synccheck", "watchdog")

typedef enum sim_chk_kind {
#define X(id, tool, tname, title) SIM_CHK_K_##id,
    SIM_CHK_KINDS(X)
#undef X
    SIM_CHK_K__COUNT
} sim_chk_kind;

const char *sim_chk_kind_tool(sim_chk_kind k);   /* "racecheck" */
const char *sim_chk_kind_title(sim_chk_kind k);  /* "read-after-write hazard" */
unsigned sim_chk_kind_bit(sim_chk_kind k);       /* SIM_CHK_RACE (0: numerics) */
/* "memcheck,racecheck" or "all" -> bits; -1 on an unknown name (msg in d). */
int sim_chk_parse_tools(const char *list, npu_diag *d);

/* One instruction taking part in a finding. */
typedef struct sim_chk_site {
    int core, pipe;
    uint64_t pc, cycle;     /* cycle: when the scalar unit dispatched it (0 in func mode) */
    int is_write;           /* accesses: 1 write, 0 read */
} sim_chk_site;

typedef struct sim_chk_finding {
    sim_chk_kind kind;
    int nat;                /* sites: at[0] the earlier, at[1] the later */
    sim_chk_site at[2];
    int has_range;
    int space;              /* sim_space */
    uint64_t addr, len;     /* the bytes (the first occurrence's) */
    uint64_t count;         /* occurrences (instructions) grouped into this finding */
    char what[160];         /* short, stable description for the header line */
    char msg[1024];         /* details: fault / deadlock report, compare line */
    char fix[384];          /* suggested fix, or empty */
    uint64_t last_op;       /* grouping: the op that last counted */
} sim_chk_finding;

typedef struct sim_chk sim_chk;

/* Attach a checker with `tools` (SIM_CHK_* bits) to s (kernel loaded). */
npu_status sim_chk_new(sim_chk **out, npu_sim *s, unsigned tools, npu_diag *d);
/* Detach from the simulator and free. NULL is a no-op. */
void sim_chk_free(sim_chk *c);
/* Run the kernel under the checks. Returns NPU_OK when the run was checked
 * (a fault, deadlock or watchdog of the kernel becomes a finding); an error
 * only when the checker itself failed (out of memory). *ran_ok is 1 when the
 * kernel ran to its end (outputs are meaningful). */
npu_status sim_chk_run(sim_chk *c, const npu_run_opts *ro, int *ran_ok, npu_diag *d);
/* Add a numerics finding when got and want differ beyond the tolerances;
 * *pass receives the comparison result. Errors (shapes) go to d. */
npu_status sim_chk_add_numerics(sim_chk *c, const char *name, const struct npy_tensor *got,
                                const struct npy_tensor *want, double rtol, double atol,
                                int *pass, npu_diag *d);

size_t sim_chk_nfindings(const sim_chk *c);
const sim_chk_finding *sim_chk_get(const sim_chk *c, size_t i);
unsigned sim_chk_tools(const sim_chk *c);
/* Findings beyond the group limit, counted but not kept. */
uint64_t sim_chk_dropped(const sim_chk *c);

/* Reports (check_out.c). The header line of a finding (no cycles, so that
 * it is stable across timing-model changes: what tests compare):
 * "racecheck: read-after-write hazard on UB [0x0, +256): core 0 MTE2 pc 0x30
 * (main+0x30) write -> core 0 V pc 0x48 (main+0x48) read". */
void sim_chk_header(const sim_chk *c, const sim_chk_finding *f, char *buf, size_t n);
/* compute-sanitizer-like text: every finding, then a summary. */
void sim_chk_report_text(const sim_chk *c, npu_buf *b);
npu_status sim_chk_write_json(const sim_chk *c, const char *path, npu_diag *d);
npu_status sim_chk_write_junit(const sim_chk *c, const char *path, npu_diag *d);

/* Internal to check*.c: the simulator (disassembly, symbols). */
npu_sim *sim_chk_sim(const sim_chk *c);

/* Bind a launch's arguments in order: defined in cmd_run.c (npusim run's
 * own binding, shared so that check runs exactly what run runs). */
struct launch_desc;
npu_status sim_run_bind_args(npu_sim *s, const struct launch_desc *l, npu_diag *d);

/* `npusim check` (cmd_check.c). */
int sim_cmd_check(int argc, char **argv);

#endif
