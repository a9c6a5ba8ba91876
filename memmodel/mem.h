/* mem.h — the memory system of npusim: a 3D-stacked HBM model (stacks,
 * channels, pseudo-channels, bank groups, banks, rows; JEDEC timings;
 * refresh; FR-FCFS controllers) with a shared, sliced L2 in front of it.
 *
 * The interface has the shape of DRAMSim3's: can-accept, submit, advance-to
 * (instead of a per-cycle tick, since the model is event-driven), a
 * completion callback and stats. Two layers are public:
 *
 *   mem_sys  — L2 + HBM, timed in CORE clock cycles; what the timing engine
 *              calls for every GM access of every core;
 *   mem_hbm  — the raw HBM controllers alone, timed in DRAM clock cycles
 *              (tCK); what the trace driver `npusim memsim` replays into.
 *
 * Everything is deterministic: no floating point in time keeping (clock
 * domains are converted with exact rational arithmetic), no globals.
 * docs/memmodel.md describes the model and every config key. */
#ifndef MEM_H
#define MEM_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <cJSON.h>
#include "isa/npu_util.h"

/* ---- configuration -----------------------------------------------------
 * One key table (memmodel/mem_keys.def) drives parsing, --set, dump and
 * docs. Every field below is one row of that table; units are in the
 * comments and in the table's doc strings. */

enum { MEM_PAGE_OPEN = 0, MEM_PAGE_CLOSED = 1 };
enum { MEM_REF_NONE = 0, MEM_REF_ALL_BANK = 1, MEM_REF_PER_BANK = 2 };

#define MEM_MAP_LEN 160

typedef struct mem_hbm_cfg {
    /* organisation */
    int stacks;            /* HBM stacks (each with its own channels) */
    int channels;          /* channels per stack */
    int pseudo_channels;   /* per channel; 1 = legacy (128-bit) mode */
    int sids;              /* stack IDs (HBM3 die groups); 1 if none */
    int bankgroups;        /* per pseudo-channel (per SID) */
    int banks;             /* banks per bank group */
    int rows;              /* rows per bank */
    int columns;           /* column bursts per row (row bytes = columns * atom) */
    int width_bits;        /* data width of one pseudo-channel (or legacy channel) */
    int burst_length;      /* BL: beats per column command (DDR: BL/2 tCK) */
    int data_rate_mbps;    /* per pin; clock = data rate / 2 */
    /* timings, in tCK */
    int tCL, tCWL, tRCDRD, tRCDWR, tRP, tRAS, tRC;
    int tCCD_S, tCCD_L, tRRD_S, tRRD_L, tFAW;
    int tWR, tWTR_S, tWTR_L, tRTP, tRTW;
    int tRFC, tRFCpb, tREFI, tREFIpb, tRREFD;
    int act_cycles;        /* row-bus cycles an ACT occupies (HBM: 1 or 2) */
    int refresh;           /* MEM_REF_* */
    int refresh_prea;      /* close banks for REFab with one PREab (1) or PREs (0) */
    /* address mapping: bit letters LSB first above the atom offset, see docs */
    char mapping[MEM_MAP_LEN];
    char xor_map[MEM_MAP_LEN];
} mem_hbm_cfg;

typedef struct mem_ctrl_cfg {
    int read_queue;        /* read transaction queue entries per channel */
    int write_queue;       /* write buffer entries per channel */
    int cmd_queue;         /* per-bank command queue depth; 0 = schedule from the request queue */
    int active_buffer;     /* entries for requests whose ACT issued (0 = none) */
    int row_hit_cap;       /* hits after which a waiting PRE may close the row (0 = no protection) */
    int page_policy;       /* MEM_PAGE_* */
    int wr_high_pct;       /* enter write drain when the write buffer is >= this % full */
    int wr_low_pct;        /* leave write drain when below this % (and reads wait) */
    int wr_idle_min;       /* also drain when no read waits and this many writes are buffered */
    int dual_cmd;          /* one row and one column command per cycle */
    int merge_reads;       /* a read to an address already pending rides along with it */
    int skip_idle;         /* sleep to the next possible command (0: tick every cycle while requests wait) */
} mem_ctrl_cfg;

typedef struct mem_l2_cfg {
    int enabled;           /* 0: GM requests go straight to HBM */
    int64_t size_bytes;
    int ways;
    int line_bytes;
    int slices;
    int hit_latency;       /* core cycles from slice acceptance to data */
    int slice_bytes_per_cycle; /* per-slice bandwidth, bytes per core cycle */
    int mshrs;             /* outstanding line misses per slice */
    int write_back;        /* 1 write-back, 0 write-through */
    int write_allocate;    /* 1 allocate on write miss */
    int queue;             /* requests waiting per slice before back-pressure */
} mem_l2_cfg;

typedef struct mem_memsim_cfg {
    int line_bytes;        /* bytes per trace line (DRAMSim3 traces: 64) */
    int inject_per_cycle;  /* HBM-atom requests the trace frontend injects per tCK */
} mem_memsim_cfg;

typedef struct mem_ub_cfg {
    int size_bytes;        /* unified buffer capacity */
    int banks;             /* banks, interleaved every block_bytes */
    int bank_groups;       /* banks / bank_groups consecutive banks form a group */
    int block_bytes;       /* interleave unit (one vector block) */
} mem_ub_cfg;

typedef struct mem_config {
    mem_hbm_cfg hbm;
    mem_ctrl_cfg ctrl;
    mem_l2_cfg l2;
    mem_memsim_cfg memsim;
    mem_ub_cfg ub;
} mem_config;

/* The default machine: HBM2E 3.2 Gb/s, 4 stacks x 8 channels x 2
 * pseudo-channels (1.64 TB/s); L2 192 MB, 512 B lines. */
void mem_config_default(mem_config *c);
/* Apply a built-in HBM preset ("hbm2", "hbm2e", "hbm3", "hbm3e") to c->hbm
 * and c->ctrl. */
npu_status mem_config_preset(mem_config *c, const char *name, npu_diag *d);
/* Parse a JSON "memory" object on top of what c holds. Strict: unknown keys,
 * wrong types and out-of-range values are errors naming "where.group.key".
 * "preset" (at the top or in "hbm") is applied first. Validates the result. */
npu_status mem_config_parse(const cJSON *obj, const char *where, mem_config *c, npu_diag *d);
/* One override: key relative to the memory object ("hbm.tCL", "l2.ways").
 * Checks the key's own range; cross-field rules wait for mem_config_validate. */
npu_status mem_config_set(mem_config *c, const char *key, const char *value, npu_diag *d);
/* Is key (relative to the memory object: "hbm.tCL", "preset") a key of
 * the table? NPU_OK, or the message mem_config_set_at would give, naming
 * where.key. */
npu_status mem_config_check_key(const char *key, const char *where, npu_diag *d);
/* The same, its messages naming "where.key" (mem_config_set: "--set
 * memory"; npusim's cfg_set: "memory", under its own "--set K=V" prefix).
 * Size keys (kind BYTES / BYTES64 in mem_keys.def) take a K, M, G or T
 * suffix (binary, npu_parse_count). */
npu_status mem_config_set_at(mem_config *c, const char *key, const char *value, const char *where,
                             npu_diag *d);
/* Cross-field checks (powers of two, mapping covers every field, ...). */
npu_status mem_config_validate(const mem_config *c, const char *where, npu_diag *d);
/* Every key, in table order. NULL on allocation failure. */
cJSON *mem_config_dump(const mem_config *c);
/* Markdown table of every key (for docs/memmodel.md). Caller frees. */
char *mem_config_doc(void);
/* Bytes one column command moves (width_bits * burst_length / 8). */
int mem_config_atom_bytes(const mem_config *c);
/* Theoretical peak of all stacks, bytes per second. */
double mem_config_peak_Bps(const mem_config *c);

/* ---- statistics ----------------------------------------------------------
 * Latencies are in the clock of the layer that reports them (tCK for
 * mem_hbm, core cycles for mem_sys L2 stats). The histogram is exact below
 * MEM_HIST_EXACT and has MEM_HIST_SUB buckets per octave above. */
#define MEM_HIST_EXACT 2048
#define MEM_HIST_SUB   128
#define MEM_HIST_N     (MEM_HIST_EXACT + MEM_HIST_SUB * 40)

typedef struct mem_hist {
    uint64_t n, sum, min, max;
    uint64_t bin[MEM_HIST_N];
} mem_hist;
void     mem_hist_add(mem_hist *h, uint64_t v);
uint64_t mem_hist_pct(const mem_hist *h, double pct);  /* nearest rank */
uint64_t mem_hist_bin_lo(int i);                        /* lowest value of bin i */

typedef struct mem_chan_stats {
    uint64_t reads, writes;             /* requests completed */
    uint64_t bytes_read, bytes_written;
    uint64_t act, pre, prea, rd, wr, rda, wra, refab, refpb;
    uint64_t row_hits, row_misses, row_conflicts;   /* per request, at its first command */
    uint64_t cmd_row_hits;              /* RD/WR issued while the row had served one before (DRAMSim3's) */
    uint64_t forwarded, coalesced;      /* reads served from / writes merged into the write buffer */
    uint64_t merged_reads;              /* reads merged into a pending read of the same address */
    uint64_t dual_issue_cycles;
    uint64_t rq_occ_sum, wq_occ_sum;    /* sum over ticks-in-time of queue length (length x cycles) */
    uint64_t last_done;                 /* tCK of the last completion */
    mem_hist lat;                       /* read latency, accept -> data, tCK */
} mem_chan_stats;

/* ---- the raw HBM (DRAM clock) ----------------------------------------- */
typedef struct mem_hbm mem_hbm;

/* Decoded address (for tests and the trace tools). */
typedef struct mem_addr {
    int chan;        /* global channel: stack * channels + channel */
    int stack, channel, pc, sid, bg, bank;
    uint32_t row, col;
} mem_addr;

typedef void (*mem_done_fn)(void *user, uint64_t tag, uint64_t cycle);

mem_hbm *mem_hbm_new(const mem_config *c, npu_diag *d);
void     mem_hbm_free(mem_hbm *h);
void     mem_hbm_decode(const mem_hbm *h, uint64_t addr, mem_addr *a);
int      mem_hbm_channels(const mem_hbm *h);    /* total channels, all stacks */
int      mem_hbm_can_accept(const mem_hbm *h, uint64_t addr, int is_write);
/* Counts the requests that have left a read or write queue: can_accept
 * can only turn true when this moves. */
uint64_t mem_hbm_accept_epoch(const mem_hbm *h);
/* One request of one atom (mem_config_atom_bytes). cycle (tCK) is when it
 * is offered; it is accepted at max(cycle, now + 1). NPU_EINVAL if the
 * queue is full (call can_accept first). */
npu_status mem_hbm_submit(mem_hbm *h, uint64_t addr, int is_write, uint64_t tag,
                          uint64_t cycle, npu_diag *d);
/* can_accept and submit in one: 1 accepted, 0 the queue is full (nothing
 * done), -1 an error (in d). */
int      mem_hbm_offer(mem_hbm *h, uint64_t addr, int is_write, uint64_t tag,
                       uint64_t cycle, npu_diag *d);
void     mem_hbm_set_callback(mem_hbm *h, mem_done_fn done, void *user);
/* Run every tick and completion at or before cycle; callbacks fire in time
 * order (a read at its data's last beat, a write when its WR issues). */
void     mem_hbm_advance_to(mem_hbm *h, uint64_t cycle);
/* Earliest cycle at which something will happen, UINT64_MAX if idle (or
 * if all that is left are writes the drain policy holds until more
 * traffic comes: DRAMSim3's buffer keeps fewer than wr_idle_min). */
uint64_t mem_hbm_next_event(const mem_hbm *h);
/* Requests accepted and not yet completed. */
int      mem_hbm_pending(const mem_hbm *h);
/* NPU_ENOMEM once an allocation inside the model failed (a completion or
 * a logged command may then be lost), NPU_OK otherwise; sticky. */
npu_status mem_hbm_status(const mem_hbm *h);
uint64_t mem_hbm_now(const mem_hbm *h);
const mem_chan_stats *mem_hbm_chan_stats(const mem_hbm *h, int chan);
/* Sum of all channels (histograms merged). Caller-owned out. */
void     mem_hbm_total_stats(const mem_hbm *h, mem_chan_stats *out);
/* The same without the latency histogram's bins (left untouched; n, sum,
 * min and max are filled): 57 KB a histogram not summed, for samples. */
void     mem_hbm_total_stats_nobins(const mem_hbm *h, mem_chan_stats *out);
/* Bring the queue-occupancy integrals (rq_occ_sum, wq_occ_sum) of every
 * channel up to cycle t (they are otherwise integrated up to each
 * channel's last tick or submit); call before reading them. */
void     mem_hbm_account_to(mem_hbm *h, uint64_t t);
/* Command log for the timing checker: off unless enabled before traffic. */
void     mem_hbm_log_commands(mem_hbm *h, int on);
/* Replay the logged commands through the independent JEDEC checker.
 * NPU_OK if no rule was broken; otherwise the first violation in d and the
 * number found in *violations. */
npu_status mem_hbm_check(const mem_hbm *h, uint64_t *violations, npu_diag *d);
uint64_t mem_hbm_logged_commands(const mem_hbm *h);
/* Print the command log, one command a line (for debugging and docs). */
void     mem_hbm_dump_commands(const mem_hbm *h, FILE *f);

/* Observer of every command the controllers issue, as it issues (for the
 * `full` level of traces): channel, pseudo-channel, command (mem_cmd_name),
 * bank group and bank (-1 for all-bank commands), row, and the DRAM cycle.
 * Streaming: nothing is kept. NULL turns it off. */
typedef void (*mem_cmd_fn)(void *user, int chan, int pc, int cmd, int bg, int bank,
                           uint32_t row, uint64_t dram_cycle);
void     mem_hbm_set_cmd_observer(mem_hbm *h, mem_cmd_fn fn, void *user);
/* Command names ("ACT", "PRE", ...), for trace name tables. */
int         mem_cmd_count(void);
const char *mem_cmd_name(int cmd);

/* ---- the memory system (core clock): L2 + HBM --------------------------- */
typedef struct mem_sys mem_sys;

typedef struct mem_req {
    uint64_t addr;
    uint32_t bytes;       /* <= one L2 line; the caller splits data moves */
    int is_write;
    int core;
    uint64_t cycle;       /* issue cycle, CORE clock */
    uint64_t tag;         /* returned to the completion callback */
} mem_req;

typedef struct mem_l2_stats {
    uint64_t reads, writes;         /* requests */
    uint64_t hits, misses;          /* line lookups */
    uint64_t mshr_merges;           /* misses merged into an outstanding fill */
    uint64_t evictions, writebacks; /* lines evicted, dirty lines written to HBM */
    uint64_t bytes;                 /* bytes moved through the slice */
    uint64_t stall_cycles;          /* cycles a request waited for slice bandwidth */
    mem_hist lat;                   /* request latency, core cycles */
} mem_l2_stats;

typedef struct mem_sys_stats {
    int nchan, nslice;
    const mem_chan_stats *chan;     /* [nchan], tCK */
    const mem_l2_stats *slice;      /* [nslice], core cycles */
    mem_chan_stats hbm_total;
    mem_l2_stats l2_total;
    uint64_t dram_cycles;           /* HBM clock now */
    uint64_t core_cycles;           /* core clock now */
} mem_sys_stats;

mem_sys *mem_sys_new(const mem_config *c, double core_clock_ghz, npu_diag *d);
void     mem_sys_free(mem_sys *s);
int      mem_sys_can_accept(mem_sys *s, uint64_t addr, int is_write);
/* A counter that moves whenever room may have appeared at the request port
 * (an L2 slice answered or handed on a request; without the L2, the HBM's
 * queues or the port's in-order buffer emptied). A request mem_sys_can_accept
 * refused cannot be accepted before it moves, so a caller waits for that
 * instead of retrying at every event of the model. */
uint64_t mem_sys_accept_epoch(const mem_sys *s);
npu_status mem_sys_submit(mem_sys *s, const mem_req *r);
/* mem_sys_submit where the port has room, in one step: *taken = 1, or 0
 * (and NPU_OK) when mem_sys_can_accept would have refused it. */
npu_status mem_sys_try_submit(mem_sys *s, const mem_req *r, int *taken);
void     mem_sys_set_callback(mem_sys *s, void (*done)(void *user, uint64_t tag,
                              uint64_t core_cycle), void *user);
/* Early answers (off by default): an L2 slice hands its answer to the
 * callback as soon as it is decided (at the tag lookup, or when a fill
 * lands), with the answer's cycle, which may then be after the cycle the
 * model has advanced to; without them the callback comes at that cycle.
 * The times are the same either way: it saves the model an event per
 * request, for a caller that only needs to know when the answer will be. */
void     mem_sys_set_early_answers(mem_sys *s, int on);
void     mem_sys_advance_to(mem_sys *s, uint64_t core_cycle);
/* (not const: it keeps a cache of the HBM's next event) */
uint64_t mem_sys_next_event(mem_sys *s);
/* NPU_ENOMEM once an allocation inside the L2 or HBM model failed during
 * submit or advance (the lost request would never complete: callers check
 * this after advancing so the failure is not mistaken for a deadlock). */
npu_status mem_sys_status(const mem_sys *s);
/* Fill *out (pointers stay valid until the next call into s). */
void     mem_sys_stats_get(mem_sys *s, mem_sys_stats *out);
/* The same as counted up to cycle T (> 0; every memory event before T
 * done, none at or after it), for interval samples: a request's
 * l2.stall_cycles, added whole when the slice accepts it, count only up to
 * T while its lookup is still to come, so that a sample splits a wait over
 * the windows it spans; and the latency histograms carry their n, sum, min
 * and max but not their bins (7 168 of them each: copying 64 of them at
 * every sample cost more than the run). T = 0: as mem_sys_stats_get. */
void     mem_sys_stats_at(mem_sys *s, uint64_t T, mem_sys_stats *out);
/* 1 while some accepted request's lookup is still to start (a sample at a
 * later window end would then differ from this one). */
int      mem_sys_waits_pending(const mem_sys *s);
mem_hbm *mem_sys_hbm(mem_sys *s);
/* Core <-> DRAM cycle conversion (exact, rounding up). */
uint64_t mem_sys_core_to_dram(const mem_sys *s, uint64_t core_cycle);
uint64_t mem_sys_dram_to_core(const mem_sys *s, uint64_t dram_cycle);
/* The HBM command observer of the system's controllers (see mem_cmd_fn);
 * the callback gets DRAM cycles: convert with mem_sys_dram_to_core. */
void     mem_sys_set_cmd_observer(mem_sys *s, mem_cmd_fn fn, void *user);

/* ---- on-chip buffer banks (UB) ------------------------------------------
 * A vector repeat touches blocks of block_bytes; block b lives in bank
 * b % banks, bank k in group k / (banks / bank_groups). One repeat takes
 * one cycle if conflict-free. Each bank serves one block a cycle, so k
 * accesses to one bank cost k - 1 extra cycles; and a bank group cannot
 * read and write in the same cycle, so a group that is both read and
 * written costs one more (once per repeat). Returns the extra cycles. */
int mem_ub_conflict_cycles(const mem_config *c, const uint64_t *reads, int nreads,
                           const uint64_t *writes, int nwrites);
/* Bank and group of a UB byte address. */
void mem_ub_bank(const mem_config *c, uint64_t addr, int *bank, int *group);

/* ---- the stand-alone driver ---------------------------------------------
 * npusim memsim --config FILE [--json] [--check] TRACE
 * npusim memsim --config FILE --pattern stream|random|strided --requests N ...
 * Exit 0 ok, 1 check violations, 2 bad input. */
int mem_cmd_memsim(int argc, char **argv);

/* Driver pieces, public for the tests and bench/memsim_bench.c. */
typedef struct memsim_req { uint64_t addr, cycle; int is_write; } memsim_req;
typedef struct memsim_trace { memsim_req *req; size_t n; } memsim_trace;   /* free req with npu_free */

typedef struct memsim_result {
    size_t lines;
    uint64_t reads, writes, bytes;
    uint64_t dram_cycles;           /* last completion, tCK from 0 */
    double tck_ns, bandwidth_GBps, peak_GBps;
    mem_hist lat;                   /* per trace line: accept of first atom -> last completion, tCK */
    mem_chan_stats total;
    mem_chan_stats *chan;           /* [nchan] */
    int nchan;
    uint64_t frontend_stall_cycles;
    uint64_t writes_unissued;       /* write lines the drain policy left buffered at the end (not in dram_cycles) */
    int checked;
    uint64_t commands_checked, violations;
    char first_violation[512];
    double host_seconds;            /* simulation loop only, wall (not in any output) */
    double cpu_seconds;             /* the same loop, CPU time of the process */
} memsim_result;

/* Parse DRAMSim3 text ("0x<addr> READ|WRITE <cycle>"); errors name path:line. */
npu_status memsim_parse_trace(const char *path, const char *text, size_t len, memsim_trace *t, npu_diag *d);
/* Synthetic traffic: stream, random (seeded), strided; cycle = i * interval. */
npu_status memsim_pattern(const char *pat, uint64_t n, uint64_t stride, uint64_t seed, int write_pct,
                          uint64_t interval, const mem_config *c, memsim_trace *t, npu_diag *d);
/* Load a config file (a "memory" object, or the object itself) over c. */
npu_status memsim_load_config(const char *path, mem_config *c, npu_diag *d);
npu_status memsim_run(const mem_config *c, const memsim_trace *t, int check, memsim_result *r, npu_diag *d);
cJSON *memsim_result_json(const memsim_result *r);
void memsim_result_free(memsim_result *r);


#endif
