/* trace.h — the npusim trace (.npt): event model, writer, reader, exporters.
 *
 * A trace is a stream of flat events (trc_event) of the kinds listed in
 * traces/events.def, plus the metadata a reader needs to stand alone (the
 * machine config, clock, symbol table, disassembly of every pc, and the
 * string tables that name opcode / stall-cause / counter / HBM-command ids).
 * The byte format is in docs/trace-format.md; the user guide in
 * docs/traces.md.
 *
 * The producer (the simulator) calls trc_writer_open, then trc_write per
 * event (roughly in time order: the writer sorts each chunk, the reader
 * merges chunks), trc_writer_add_disasm once per pc, then trc_writer_close.
 * Consumers (exporters, the viewer) open a trc_reader and iterate events in
 * start-cycle order with a trc_iter, filtered by core, pipe, kind and time
 * window. */
#ifndef TRC_TRACE_H
#define TRC_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "isa/npu_util.h"

/* ---- pipes ------------------------------------------------------------- */
#define TRC_PIPES(X) X(S) X(V) X(M) X(MTE1) X(MTE2) X(MTE3) X(FIX)
typedef enum trc_pipe {
#define TRC_PIPE_ENUM(p) TRC_PIPE_##p,
    TRC_PIPES(TRC_PIPE_ENUM)
#undef TRC_PIPE_ENUM
    TRC_NPIPES          /* 7; pipe ids are 0..6 in the order above */
} trc_pipe;
/* "S", "V", ... or "pipe7" for ids out of range (never NULL). */
const char *trc_pipe_name(unsigned pipe);

/* ---- event kinds (traces/events.def) ---------------------------------- */
typedef enum trc_kind {
    TRC_KIND_NONE = 0,  /* never stored: kind ids start at 1 */
#define TRC_EVENT(ID, ...) TRC_##ID,
#include "traces/events.def"
#undef TRC_EVENT
    TRC_NKINDS          /* one past the last kind id */
} trc_kind;

typedef enum trc_class { TRC_CLASS_CORE, TRC_CLASS_COUNTER, TRC_CLASS_HBM } trc_class;

/* The generic slots of an event; what each means per kind is the table's
 * row (events.def). Use the trc_ev_* constructors below instead of filling
 * slots by hand. Unused slots must be 0 (they are not stored). */
typedef enum trc_slot {
    TRC_SLOT_CORE, TRC_SLOT_PIPE, TRC_SLOT_PIPE2, TRC_SLOT_ID, TRC_SLOT_AUX,
    TRC_SLOT_ADDR, TRC_SLOT_ADDR2, TRC_SLOT_T0, TRC_SLOT_T1, TRC_SLOT_T2,
    TRC_SLOT_VAL, TRC_NSLOTS
} trc_slot;

typedef struct trc_event {
    uint8_t  kind;      /* trc_kind */
    uint8_t  pipe;      /* pipe / src pipe / pseudo-channel: 0..7 */
    uint8_t  pipe2;     /* dst pipe / is_write / HBM command kind */
    uint8_t  pad_;      /* always 0 */
    uint32_t core;      /* core / counter unit / HBM channel */
    uint32_t id;        /* opcode / cause / flag / counter / bank id */
    uint32_t aux;       /* INSN flags / MEM bytes */
    uint64_t addr;      /* pc / address / row */
    uint64_t addr2;     /* call target / return pc */
    uint64_t t0;        /* start cycle: the sort key */
    uint64_t t1;        /* end cycle of intervals */
    uint64_t t2;        /* INSN dispatch cycle */
    uint64_t val;       /* flag seq / counter value */
} trc_event;

/* Table look-ups (never NULL for a valid kind; NULL for an invalid one). */
const char *trc_kind_name(unsigned kind);
const char *trc_kind_doc(unsigned kind);
/* The name of slot s for kind ("" if the kind does not use it). */
const char *trc_slot_name(unsigned kind, trc_slot s);
trc_class trc_kind_class(unsigned kind);
/* Bit s set = kind uses slot s. */
unsigned trc_kind_slots(unsigned kind);
/* End of the event's interval (t1 for interval kinds, else t0). */
uint64_t trc_event_end(const trc_event *e);
/* 1 if the two events are equal in every used slot. */
int trc_event_equal(const trc_event *a, const trc_event *b);

/* Constructors: the named fields of each kind, in the order of the brief. */
static inline trc_event trc_ev_insn(uint32_t core, unsigned pipe, uint64_t pc, uint32_t opcode,
                                    uint64_t dispatch, uint64_t start, uint64_t end, uint32_t flags)
{ trc_event e = {0}; e.kind = TRC_INSN; e.core = core; e.pipe = (uint8_t)pipe; e.addr = pc;
  e.id = opcode; e.t2 = dispatch; e.t0 = start; e.t1 = end; e.aux = flags; return e; }
static inline trc_event trc_ev_stall(uint32_t core, unsigned pipe, uint32_t cause,
                                     uint64_t start, uint64_t end)
{ trc_event e = {0}; e.kind = TRC_STALL; e.core = core; e.pipe = (uint8_t)pipe; e.id = cause;
  e.t0 = start; e.t1 = end; return e; }
static inline trc_event trc_ev_flag_set(uint32_t core, unsigned src, unsigned dst, uint32_t flag,
                                        uint64_t cycle, uint64_t seq)
{ trc_event e = {0}; e.kind = TRC_FLAG_SET; e.core = core; e.pipe = (uint8_t)src;
  e.pipe2 = (uint8_t)dst; e.id = flag; e.t0 = cycle; e.val = seq; return e; }
static inline trc_event trc_ev_flag_wait(uint32_t core, unsigned src, unsigned dst, uint32_t flag,
                                         uint64_t start, uint64_t end, uint64_t set_seq)
{ trc_event e = {0}; e.kind = TRC_FLAG_WAIT; e.core = core; e.pipe = (uint8_t)src;
  e.pipe2 = (uint8_t)dst; e.id = flag; e.t0 = start; e.t1 = end; e.val = set_seq; return e; }
static inline trc_event trc_ev_call(uint32_t core, uint64_t pc, uint64_t target, uint64_t cycle)
{ trc_event e = {0}; e.kind = TRC_CALL; e.core = core; e.addr = pc; e.addr2 = target;
  e.t0 = cycle; return e; }
static inline trc_event trc_ev_ret(uint32_t core, uint64_t pc, uint64_t return_pc, uint64_t cycle)
{ trc_event e = {0}; e.kind = TRC_RET; e.core = core; e.addr = pc; e.addr2 = return_pc;
  e.t0 = cycle; return e; }
static inline trc_event trc_ev_barrier(uint32_t core, uint64_t start, uint64_t end)
{ trc_event e = {0}; e.kind = TRC_BARRIER; e.core = core; e.t0 = start; e.t1 = end; return e; }
static inline trc_event trc_ev_counter(uint32_t unit, uint32_t counter, uint64_t cycle, uint64_t value)
{ trc_event e = {0}; e.kind = TRC_COUNTER; e.core = unit; e.id = counter; e.t0 = cycle;
  e.val = value; return e; }
static inline trc_event trc_ev_mem(uint32_t core, unsigned pipe, uint64_t addr, uint32_t bytes,
                                   int is_write, uint64_t issue, uint64_t done)
{ trc_event e = {0}; e.kind = TRC_MEM; e.core = core; e.pipe = (uint8_t)pipe; e.addr = addr;
  e.aux = bytes; e.pipe2 = (uint8_t)(is_write != 0); e.t0 = issue; e.t1 = done; return e; }
static inline trc_event trc_ev_hbm(uint32_t channel, unsigned pseudo_channel, uint32_t bank,
                                   uint64_t row, unsigned command, uint64_t cycle)
{ trc_event e = {0}; e.kind = TRC_HBM; e.core = channel; e.pipe = (uint8_t)pseudo_channel;
  e.id = bank; e.addr = row; e.pipe2 = (uint8_t)command; e.t0 = cycle; return e; }

/* ---- metadata -------------------------------------------------------------- */
typedef struct trc_symbol {
    const char *name;
    uint64_t addr, size;    /* size 0 = a label whose extent is up to the next symbol */
    int is_function;        /* 1 = function (a stack frame), 0 = label inside one */
} trc_symbol;

/* A string table: names[i] names id i (NULL entries allowed: shown as "#i"). */
typedef struct trc_names {
    const char *const *names;
    uint32_t count;
} trc_names;

typedef struct trc_meta {
    const char *config_json;    /* the machine config, as JSON text */
    double clock_ghz;           /* core clock: cycles -> time */
    uint32_t n_cores;
    uint64_t seed;
    const char *kernel;         /* kernel name */
    const char *level;          /* "instr", "mem" or "full" (informative) */
    uint64_t counter_interval;  /* cycles between counter samples (0 = none) */
    const trc_symbol *symbols;
    uint32_t n_symbols;
    trc_names opcodes;          /* INSN.opcode ids */
    trc_names causes;           /* STALL.cause ids */
    trc_names counters;         /* COUNTER.counter ids */
    trc_names hbm_commands;     /* HBM.command ids */
    trc_names units;            /* COUNTER.unit ids (empty: unit i is core i) */
} trc_meta;

/* ---- writer ------------------------------------------------------------- */
typedef struct trc_writer trc_writer;

/* Create path (written as "path.tmp.PID" and renamed by close). meta is
 * copied: the caller may free it after the call. NULL on error (d says). */
trc_writer *trc_writer_open(const char *path, const trc_meta *meta, npu_diag *d);
/* Add one event. Events may arrive out of order; the writer sorts each chunk
 * by start cycle. Errors are sticky: later calls fail too, and close removes
 * the temp file. */
npu_status trc_write(trc_writer *w, const trc_event *e);
/* Record the disassembly of pc (once per pc: repeats are ignored). */
npu_status trc_writer_add_disasm(trc_writer *w, uint64_t pc, const char *text);
/* Flush, write the index and footer, rename into place, free w. On any
 * error the temp file is removed and nothing is left under path. */
npu_status trc_writer_close(trc_writer *w, npu_diag *d);
/* Free w and remove its temp file (an interrupted run). */
void trc_writer_discard(trc_writer *w);
/* The last error of w (sticky), if any. */
npu_status trc_writer_error(const trc_writer *w, npu_diag *d);
uint64_t trc_writer_events(const trc_writer *w);
/* Events per chunk (default and maximum 16384). Smaller chunks make seeking
 * finer and damage cost less, at some size cost; tests use them to get
 * many chunks from few events. */
npu_status trc_writer_set_chunk_events(trc_writer *w, uint32_t n);

/* ---- reader ------------------------------------------------------------- */
typedef struct trc_reader trc_reader;

typedef struct trc_damage {
    uint64_t offset;        /* byte offset in the file where the damage starts */
    char what[200];         /* what was wrong and what was skipped */
} trc_damage;

/* Open a trace. A damaged trace opens (damage is listed, see below) as long
 * as its file header is intact; NULL with a message otherwise. */
trc_reader *trc_open(const char *path, npu_diag *d);
/* Same from memory; buf must outlive the reader (not copied). */
trc_reader *trc_open_mem(const void *buf, size_t len, npu_diag *d);
void trc_close(trc_reader *r);

/* The metadata (strings owned by the reader). A lost meta chunk gives an
 * all-zero meta (and a damage entry). */
const trc_meta *trc_reader_meta(const trc_reader *r);
uint64_t trc_reader_file_size(const trc_reader *r);
unsigned trc_reader_version(const trc_reader *r);          /* major*100 + minor */
/* Chunk-table totals from the chunk headers: events, stored and raw bytes. */
void trc_reader_totals(const trc_reader *r, uint64_t *events, uint64_t *stored_bytes,
                       uint64_t *raw_bytes, uint64_t *n_chunks);
/* Progress of the reader's iterators, for a front end's status line (the
 * library never prints): fn(user, done, total) each time an iterator
 * loads a chunk, done of the total chunks it will read, on the thread of
 * that iterator (give a reader read on several threads a thread-safe fn).
 * NULL turns it off (the default). */
typedef void (*trc_progress_fn)(void *user, uint64_t done, uint64_t total);
void trc_reader_set_progress(trc_reader *r, trc_progress_fn fn, void *user);
/* Time range of all events: min start, max end (0,0 when empty). */
void trc_reader_time_range(const trc_reader *r, uint64_t *t_min, uint64_t *t_end);
/* Disassembly of pc, or NULL. */
const char *trc_reader_disasm(const trc_reader *r, uint64_t pc);
/* Name of an id in a table of the meta ("#id" in a buffer of the reader when
 * absent; valid until the next call). */
const char *trc_name(const trc_reader *r, const trc_names *table, uint32_t id);
/* Innermost function / label symbol containing pc, or NULL. */
const trc_symbol *trc_reader_function_at(const trc_reader *r, uint64_t pc);
const trc_symbol *trc_reader_label_at(const trc_reader *r, uint64_t pc);
const trc_symbol *trc_reader_symbol_exact(const trc_reader *r, uint64_t addr);

/* Damage found so far (at open, and by iterators when a chunk fails its CRC
 * or does not decode). The list is owned by the reader. */
size_t trc_reader_damage(const trc_reader *r, const trc_damage **list);
/* Read every chunk and check its CRC and records, so that the damage list is
 * complete. NPU_OK even if damage was found (that is not an error). */
npu_status trc_reader_verify(trc_reader *r, npu_diag *d);

/* ---- iteration ------------------------------------------------------------ */
#define TRC_PIPE_NONE 7     /* pipe_mask bit for events of kinds without a pipe */
typedef struct trc_filter {
    int64_t core;           /* -1: all; else only CORE-class events of this core */
    uint32_t pipe_mask;     /* 0: all; else bit p = pipe p (FLAG_*: src or dst),
                               bit TRC_PIPE_NONE = kinds without a pipe */
    uint32_t kind_mask;     /* 0: all; else bit k = kind k */
    uint64_t t_lo, t_hi;    /* window [t_lo, t_hi) of overlap; t_hi 0 = no bound */
} trc_filter;
#define TRC_FILTER_ALL ((trc_filter){ .core = -1 })

typedef struct trc_iter trc_iter;
/* f NULL = everything. */
trc_iter *trc_iter_new(trc_reader *r, const trc_filter *f, npu_diag *d);
/* 1 and *e = next event in (t0, file order) order; 0 at the end or on error
 * (see trc_iter_error). Damaged chunks are skipped and added to the
 * reader's damage list. */
int trc_iter_next(trc_iter *it, trc_event *e);
/* An iterator over part `part` of `nparts` of the trace, for decoding on
 * several threads: the parts split the start cycles into consecutive
 * ranges (at chunk boundaries of the index, so each part reads about
 * 1/nparts of the chunks), and each yields the events of its range that
 * pass f, in the same (t0, file) order as trc_iter_new. So the events of
 * part 0, then part 1, ... are exactly trc_iter_new's sequence, and each
 * part is in time order on its own (per track, too). Parts of one reader
 * may run on different threads at once (the reader's damage list and
 * chunk marks are locked); the damage list then holds each damaged chunk
 * once, in the order the threads met them. nparts 1 = trc_iter_new.
 * NULL with NPU_EINVAL when part >= nparts. */
trc_iter *trc_iter_new_part(trc_reader *r, const trc_filter *f, unsigned part, unsigned nparts,
                            npu_diag *d);
/* The start-cycle range [*t_lo, *t_hi) of a part (t_hi 0 = no bound;
 * 0, 0 for a whole-trace iterator). */
void trc_iter_part_range(const trc_iter *it, uint64_t *t_lo, uint64_t *t_hi);
/* on = 1: read, check and inflate the iterator's chunks ahead on a helper
 * thread (a few chunks ahead, in the order the merge takes them), so that
 * decoding overlaps inflating: the same events in the same order, and the
 * same damage (a chunk's read / CRC / inflate damage may be listed before
 * damage found in earlier chunks' records). Call before the first
 * trc_iter_next (NPU_EINVAL after); it stays on across trc_iter_seek. No
 * thread can be made: the iterator reads chunks itself, NPU_OK all the
 * same. on = 0 stops the helper. */
npu_status trc_iter_prefetch(trc_iter *it, int on);
/* Restart at the first event that overlaps [t, t_hi) (uses the index: chunks
 * that end before t are not read). */
void trc_iter_seek(trc_iter *it, uint64_t t);
npu_status trc_iter_error(const trc_iter *it, npu_diag *d);
void trc_iter_free(trc_iter *it);

/* ---- exporters (stream through the reader; never hold the whole trace) --- */
typedef struct trc_export_opts {
    trc_filter filter;      /* what to export (TRC_FILTER_ALL for all) */
    int stalls;             /* folded: weight = stall cycles instead of busy cycles */
} trc_export_opts;

/* Chrome Trace Event JSON (Perfetto UI, chrome://tracing). */
npu_status trc_export_chrome(trc_reader *r, FILE *out, const trc_export_opts *o, npu_diag *d);
/* Folded stacks "core N;func;...;label;pipe;opcode weight" (flamegraph.pl,
 * speedscope). stalls=1: weight is stall cycles, last frame the cause. */
npu_status trc_export_folded(trc_reader *r, FILE *out, int stalls, npu_diag *d);
/* One row per event, one column per distinct slot name of events.def. */
npu_status trc_export_csv(trc_reader *r, FILE *out, const trc_export_opts *o, npu_diag *d);
/* Export to path via "path.tmp.PID" + rename. fmt: "chrome", "folded", "csv". */
npu_status trc_export_file(trc_reader *r, const char *fmt, const trc_export_opts *o,
                           const char *path, npu_diag *d);

/* ---- command and synthetic traces ------------------------------------- */
/* `npusim trace info|export ...`; argv[0] is "trace". Prints; returns the
 * process exit code. */
int trc_cmd_trace(int argc, char **argv);

/* A synthetic but realistic GEMM-like event stream (for tests, benchmarks
 * and the viewer): per core, tiles of MTE2 loads, MTE1 moves, cube mmads,
 * FIX drains and a vector epilogue, chained by set/wait flags, with scalar
 * dispatch, stalls, calls, counter samples and memory requests. Events are
 * delivered in completion order (not start order), as a simulator would. */
typedef struct trc_synth_opts {
    uint64_t events;        /* stop after about this many events */
    uint32_t cores;
    uint64_t seed;
    int mem;                /* also MEM and HBM events */
} trc_synth_opts;
typedef npu_status (*trc_synth_sink)(void *ctx, const trc_event *e);
/* The meta of the synthetic program (static tables). */
const trc_meta *trc_synth_meta(const trc_synth_opts *o, trc_meta *storage);
/* Generate: sink per event, and disasm(ctx, pc, text) once per pc. */
npu_status trc_synth_run(const trc_synth_opts *o, trc_synth_sink sink,
                         npu_status (*disasm)(void *ctx, uint64_t pc, const char *text),
                         void *ctx, npu_diag *d);
/* Write a synthetic trace file. */
npu_status trc_synth_write(const char *path, const trc_synth_opts *o, npu_diag *d);

#endif
