/* vw.h — npuview, the SDL2 trace viewer: the one public header of viewer/.
 *
 * Three layers, so that everything but the last is plain C testable without
 * a window (STYLE.md rule 11):
 *   vw_model  the trace loaded once through traces/trace.h into per-track
 *             sorted arrays (boxes, stalls, counter bins, HBM ticks), with
 *             prefix sums and interned call stacks, so that any frame is
 *             O(pixels x log events) and never O(events);
 *   vw_view   the view state (tab, zoom, pan, selection, search, hover,
 *             collapsed cores) with its layout and hit testing; events
 *             (SDL_Event) change it through vw_handle_event;
 *   vw_cmds   the UI's output: a list of draw commands (rect, text, line,
 *             clip) that vw_backend_draw turns into batched SDL_RenderGeometry
 *             calls with cached text textures.
 * vw_app ties them to a window, a surface (--screenshot) or a benchmark. */
#ifndef VW_H
#define VW_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "isa/npu_util.h"
#include "traces/trace.h"

/* ---- the model ------------------------------------------------------------ */

/* One interval on a track: an instruction (op = opcode) or a stall
 * (op = cause; FLAG_WAIT and BARRIER become stalls with a synthetic cause). */
typedef struct vw_box {
    uint64_t t0;
    uint32_t dur;       /* cycles (clamped to 2^32-1) */
    uint32_t pc;        /* low 32 bits of the pc (traces stay far below 4 GiB) */
    uint16_t op;
    uint16_t stack;     /* interned call stack (vw_model.stacks), 0 = kernel only */
    uint32_t leaf;      /* index of (pc, op, stack) in its track's vw_sums (fills the padding) */
} vw_box;

/* Summaries of a track's boxes for aggregates over any range in bounded
 * time: the distinct (pc, op, stack) "leaves" of the track (everything a
 * flame graph, hotspot table or range table groups by derives from them),
 * and the prefix sums of cycles and counts per leaf at every block of
 * 1 << shift boxes. A range sums whole blocks as the difference of two rows
 * and scans at most a block at each end: O(leaves + block) per track,
 * however long the range, instead of O(boxes in the range). */
typedef struct vw_leaf { uint32_t pc; uint16_t op, stack; } vw_leaf;
typedef struct vw_sums {
    vw_leaf *leaf; uint32_t nleaf;
    uint32_t shift;     /* boxes per block = 1 << shift */
    size_t nrow;        /* row r = boxes [0, min(r << shift, n)); the last row is all n */
    uint64_t *w;        /* nrow x nleaf: cycles per leaf */
    uint32_t *c;        /* nrow x nleaf: boxes per leaf */
} vw_sums;

/* Level of detail of a lane: its boxes merged into runs wherever the gap
 * to the next box is under `gap` cycles (a box of `gap` cycles or more
 * stays a run of its own). Zoomed out to c cycles a pixel, the lane draws
 * from the coarsest level with gap <= c: gaps that small vanish in a pixel
 * anyway, and a window of W pixels holds at most about W x c / gap runs,
 * so a frame touches O(pixels) runs instead of every box. */
typedef struct vw_run { uint64_t t0, end; uint32_t count, first; } vw_run;
#define VW_NLOD 6
#define VW_LOD_GAP0 256u    /* gap of level 0; each level 4x the one before */
typedef struct vw_lod { vw_run *r; size_t n; } vw_lod;

typedef struct vw_track {
    vw_box *box;        /* instructions, sorted by t0 */
    uint64_t *cum;      /* cum[i] = busy cycles of box[0..i) (n+1 entries) */
    uint64_t *maxend;   /* maxend[i] = latest end of box[0..i]: non-decreasing, so
                           "first box that may overlap t" is one binary search */
    uint32_t maxdur;    /* longest box */
    size_t n, cap;
    vw_box *stall;      /* stalls, sorted by t0 */
    uint64_t *smaxend;  /* as maxend, for the stalls */
    size_t ns, caps;
    uint32_t maxsdur;
    vw_sums sb, ss;     /* summaries of box[] and stall[] */
    vw_lod lod[VW_NLOD], slod[VW_NLOD]; /* of box[] and stall[]; n 0 = level not kept */
} vw_track;

/* A flag hand-off: set on (core, src) at t_set, released the wait on dst at
 * t_wait (0 = never seen). Used for the flow arrows of a clicked box. */
typedef struct vw_flow {
    uint32_t core;
    uint8_t src, dst, id, pad_;
    uint64_t t_set, t_wait0, t_wait1;
} vw_flow;

/* A counter as a rate: the summed deltas of all units per bin of `width`
 * cycles (bins are the trace's counter interval). COUNTER samples are
 * cumulative from the run's start (docs/traces.md), so a unit's first
 * sample is its delta since cycle 0 and its last one its total. */
typedef struct vw_counter {
    const char *name;
    double *bin;        /* delta per bin, all units */
    size_t nbins;
    double max_rate;    /* per cycle */
    uint64_t total;     /* the last sample of each unit, summed over units */
} vw_counter;

/* A heat map: one row per memory unit of one kind (the units `npusim
 * record -A` names "L2 slice N" / "HBM channel N"), bytes per counter bin
 * (l2.bytes; hbm.bytes_read + hbm.bytes_written). */
enum { VW_HEAT_L2, VW_HEAT_HBM, VW_HEAT__N };
typedef struct vw_heat {
    uint32_t n;         /* rows (the largest N + 1); 0 = no such units */
    double *bin;        /* [n * nbins] bytes per bin (row-major) */
    size_t nbins;
    double max_rate;    /* bytes per cycle of the busiest row and bin */
    /* a max pyramid of the rates, for vw_heat_max: level L holds, per row,
     * the largest rate of each block of 2^L bins (level 0 the rates) */
    int nlv;
    double *lv[32];     /* [n * ceil(nbins / 2^L)] each */
} vw_heat;

typedef struct vw_tick { uint64_t t; uint8_t cmd; } vw_tick;
typedef struct vw_lane_hbm { vw_tick *v; size_t n, cap; } vw_lane_hbm;

/* An interned stack: parent + frame name (function or label), depth. */
typedef struct vw_frame {
    int32_t parent;
    const trc_symbol *sym;  /* function or label (owned by the reader); NULL = kernel root */
} vw_frame;

#define VW_CAUSE_FLAG 0xFFF0u     /* op of a stall made from FLAG_WAIT */
#define VW_CAUSE_BARRIER 0xFFF1u  /* op of a stall made from BARRIER */

/* The model's stall totals by cause (vw_model.cause_stall): one slot per
 * trace stall-cause id below VW_CAUSE_IDS (later ids share the last), then
 * one for flag waits and one for barriers. */
enum { VW_CAUSE_IDS = 6, VW_SLOT_FLAG = VW_CAUSE_IDS, VW_SLOT_BARRIER, VW_CAUSE_SLOTS };
static inline unsigned vw_cause_slot(unsigned cause)
{
    return cause == VW_CAUSE_FLAG ? VW_SLOT_FLAG
         : cause == VW_CAUSE_BARRIER ? VW_SLOT_BARRIER
         : NPU_MIN(cause, (unsigned)VW_CAUSE_IDS - 1);
}
static inline unsigned vw_slot_cause(unsigned slot)
{
    return slot == VW_SLOT_FLAG ? VW_CAUSE_FLAG : slot == VW_SLOT_BARRIER ? VW_CAUSE_BARRIER : slot;
}

typedef struct vw_model {
    trc_reader *r;
    const trc_meta *meta;
    uint32_t ncores;
    vw_track *tracks;           /* ncores x TRC_NPIPES */
    vw_flow *flows; size_t nflows, capflows;
    vw_counter *ctr; size_t nctr;
    uint64_t ctr_width;
    vw_heat heat[VW_HEAT__N];
    vw_lane_hbm *hbm; uint32_t nhbm;  /* channel x pseudo-channel lanes */
    uint64_t *hbm_col_t; size_t nhbm_col;  /* times of every lane's column commands (RD/WR), sorted */
    vw_frame *stacks; size_t nstacks, capstacks;
    uint64_t t_min, t_end;
    uint64_t n_events, n_insn, n_stall;
    uint64_t mem_bytes;         /* sum of MEM bytes (for the roofline) */
    /* Busy cycles per core on a grid of 1 << grid_shift cycles, as prefix
     * sums: ugrid[c * (ngrid + 1) + k] = busy cycles of all of core c's
     * pipes before cycle k << grid_shift, mgrid the same for its cube (M).
     * Zoomed out so far that a grid cell is a small part of a pixel, the
     * per-core utilisation charts and the overview read these (two loads a
     * column) instead of searching the boxes. */
    uint32_t grid_shift;
    size_t ngrid;
    uint64_t *ugrid, *mgrid;
    /* pcs of the instructions that ran on a pipe other than S, sorted: their
     * boxes on S are dispatch slots, not instructions (vw_hotspots counts
     * an instruction once, on its pipe) */
    uint32_t *pipe_pcs; size_t npipe_pcs;
    uint64_t pipe_stall[TRC_NPIPES];    /* stall cycles per pipe, all cores */
    uint64_t cause_stall[VW_CAUSE_SLOTS];   /* by cause slot (vw_cause_slot) */
    /* CPU seconds of the load's parts: the decoding thread (the reader's
     * trc_iter), the thread filing events into tracks while it decodes, and
     * what runs after both (prefix arrays, summaries); on an idle machine
     * the wall time is about max(decode, build) + post */
    double load_decode_cpu, load_build_cpu, load_post_cpu;
    double load_post_wall;      /* wall seconds of the part after decoding */
    /* roofline roofs from the embedded config */
    double peak_ops_per_cycle;  /* chip, 2 x MACs */
    double peak_bytes_per_cycle;    /* GM's backing memory: the HBM, or the fixed port */
    double l2_bytes_per_cycle;      /* the L2's roof (slices x bytes per slice), 0 without one */
    double hbm_atom_bytes;          /* bytes of one HBM column command (RD/WR) */
    int fixed_port;                 /* timing.memory_model fixed: the memory roof is the port's */
    double cube_ops_per_busy_cycle; /* per core */
} vw_model;

/* HBM column commands (RD, RDA, WR, WRA) of all lanes in [t0, t1): a
 * binary search in hbm_col_t, cheap enough for every frame. */
size_t vw_hbm_col_count(const vw_model *m, uint64_t t0, uint64_t t1);
/* The roofline's HBM bytes in [a, z): the column commands x the atom (level
 * full), else the memory system's hbm.bytes_* counters (npusim record
 * samples them with the HBM model), by their bins; -1 with neither. *how
 * names the source for the caption. */
double vw_hbm_bytes(const vw_model *m, uint64_t a, uint64_t z, const char **how);
/* The bytes in [a, z) of the byte counters of one level ("gm": gm.*bytes*,
 * "hbm": hbm.bytes_*), read and write summed, by their bins; -1 when the
 * trace samples none. */
double vw_bytes_counters(const vw_model *m, const char *level, uint64_t a, uint64_t z);

/* Load a trace. Damage in chunks is not an error (the rest loads); a trace
 * whose header is bad, or with no events at all, is. */
npu_status vw_model_load(vw_model *m, const char *path, npu_diag *d);
npu_status vw_model_load_reader(vw_model *m, trc_reader *r, npu_diag *d); /* takes r */
void vw_model_free(vw_model *m);
/* Seconds on clock id (CLOCK_MONOTONIC for wall time, a CPU-time clock for
 * CPU time): the load and benchmark figures, never in a picture's data. */
double vw_clock_s(clockid_t id);
static inline vw_track *vw_track_at(const vw_model *m, uint32_t core, unsigned pipe)
{ return &m->tracks[(size_t)core * TRC_NPIPES + pipe]; }
/* A lower bound for the first box ending after t: every box before it ends
 * at or before t (maxend is the prefix maximum of the ends). */
size_t vw_track_first(const uint64_t *maxend, size_t n, uint64_t t);
/* First index k >= 0 with b[k].t0 >= t in a t0-sorted array, found by
 * galloping from `from` (a previous answer): O(log distance), so a sweep
 * of increasing t touches only the boxes it passes. */
size_t vw_first_ge(const vw_box *b, size_t n, uint64_t t, size_t from);
/* Busy cycles of the track inside [a, b). */
uint64_t vw_track_busy(const vw_track *t, uint64_t a, uint64_t b);
/* Busy cycles of the track before x (so busy in [a, b) = to(b) - to(a));
 * *hint carries the search position between calls of increasing x. */
uint64_t vw_track_busy_to(const vw_track *t, uint64_t x, size_t *hint);
/* The heat maps' colour position of a rate, rate / max on the linear
 * scale; on the log scale three decades below the maximum map to 0..1
 * (log10(1000 x / max) / 3), so a row at a hundredth of the busiest
 * still shows. */
double vw_heat_level(double rate, double max, int log_scale);
/* Bytes per cycle of heat map row `row` in bin k. */
double vw_heat_rate(const vw_model *m, const vw_heat *h, uint32_t row, size_t k);
/* The largest of those over bins ba..bz (from the pyramid: O(log^2) bins
 * read, however many a pixel spans). */
double vw_heat_max(const vw_model *m, const vw_heat *h, uint32_t row, size_t ba, size_t bz);
/* Counter c's rate in bin k, per cycle: its delta over the cycles the bin
 * covers up to the end of the run (the last bin may be partial). */
double vw_counter_rate(const vw_model *m, const vw_counter *c, size_t k);
const char *vw_op_name(const vw_model *m, unsigned op);
const char *vw_cause_name(const vw_model *m, unsigned cause);
/* Name of the innermost frame of a stack ("kernel" for the root). */
const char *vw_stack_name(const vw_model *m, uint32_t stack);

/* ---- aggregates (flame graph, hotspots, range table) ---------------------- */

typedef struct vw_fnode {
    char name[48];
    int32_t parent, child, next;    /* first child / next sibling, -1 = none */
    uint64_t w;                     /* inclusive weight (cycles) */
    uint32_t depth;
    int pipe;                       /* pipe of pipe / opcode frames, -1 for stack frames */
} vw_fnode;

typedef struct vw_flame {
    vw_fnode *n; size_t count, cap;
    uint32_t max_depth;
    int stalls;
} vw_flame;

/* Flame tree of [t0, t1) (t1 0 = all): kernel -> functions -> label -> pipe
 * -> opcode, weighted by busy cycles, or stall cycles (-> cause) if stalls. */
npu_status vw_flame_build(const vw_model *m, uint64_t t0, uint64_t t1, int stalls,
                          vw_flame *f, npu_diag *d);
void vw_flame_free(vw_flame *f);

typedef enum vw_hkey { VW_HK_FUNC, VW_HK_LABEL, VW_HK_PC, VW_HK_OPCODE, VW_HK__N } vw_hkey;
typedef struct vw_hrow {
    char name[64];
    uint64_t key, count, busy, stall;
    unsigned pipe;      /* for per-pipe rows */
    uint64_t stall_by[VW_CAUSE_SLOTS];  /* stall by cause slot (vw_cause_slot), hotspots only */
} vw_hrow;
typedef struct vw_table { vw_hrow *row; size_t n, cap; uint64_t total_busy, total_stall; } vw_table;
/* The cause slot with the most of the row's stall cycles (0 without stalls) */
unsigned vw_hrow_top_cause(const vw_hrow *r);
/* Hotspots over [t0, t1): one row per function / label / pc / opcode.
 * sort_col: 0 name, 1 count, 2 busy, 3 stall (descending except name), 4 address
 * (the key, ascending: program order for pcs and symbols). */
npu_status vw_hotspots(const vw_model *m, vw_hkey key, uint64_t t0, uint64_t t1, vw_table *t,
                       npu_diag *d);
/* The same over one core's pipes (core -1: all cores). */
npu_status vw_hotspots_core(const vw_model *m, vw_hkey key, uint64_t t0, uint64_t t1, int core, vw_table *t,
                            npu_diag *d);
void vw_table_sort(vw_table *t, int sort_col);
/* The names of the groupings (--group) and of the sort columns (--sort),
 * by vw_hkey and by sort_col */
enum { VW_SORT__N = 5 };
extern const char *const vw_hkey_names[VW_HK__N];
extern const char *const vw_sort_names[VW_SORT__N];
/* The range aggregate: one row per (pipe, opcode) in [t0, t1), busiest first. */
npu_status vw_range_table(const vw_model *m, uint64_t t0, uint64_t t1, vw_table *t, npu_diag *d);
void vw_table_free(vw_table *t);

/* The hotspot table as a report (npuview --report, viewer/report.c):
 * vw_hotspots over the whole run or [r0, r1), sorted, the first `top` rows
 * (0 = all), appended to out as text (perf report --stdio style), CSV or
 * JSON. */
typedef enum vw_rfmt { VW_RF_TEXT, VW_RF_CSV, VW_RF_JSON } vw_rfmt;
typedef struct vw_report_opts {
    vw_hkey key;
    int sort_col;           /* as vw_table_sort: 0 name, 1 count, 2 busy, 3 stall, 4 address */
    size_t top;
    int has_range; uint64_t r0, r1;
    vw_rfmt fmt;
    const char *trace;      /* named in the header */
    int core;               /* one core's pipes, or -1 for all */
} vw_report_opts;
npu_status vw_report(const vw_model *m, const vw_report_opts *o, npu_buf *out, npu_diag *d);
/* Two runs' tables side by side (npuview --report --diff BASE, as perf
 * diff): rows of either run matched by pc (--group pcs) or by name, base
 * and new cycles with the change, sorted by the larger of the two. */
npu_status vw_report_diff(const vw_model *base, const vw_model *m, const vw_report_opts *o, const char *base_name,
                          npu_buf *out, npu_diag *d);

/* ---- draw commands ---------------------------------------------------------- */
typedef enum vw_cmd_kind { VW_CMD_RECT, VW_CMD_TEXT, VW_CMD_LINE, VW_CMD_CLIP, VW_CMD_STRIP } vw_cmd_kind;
/* STRIP: the rects of one lane, which share their y and height: spans
 * (x, w, colour) drawn in order. The software backend draws a strip a row
 * at a time (each pixel row one sequential write) instead of thousands of
 * one-pixel-wide rects that each touch a cache line per row. */
typedef struct vw_span { float x, w; uint32_t color; } vw_span;
enum { VW_FONT_UI = 0, VW_FONT_MONO = 1, VW_FONT_SMALL = 2, VW_NFONTS = 3 };
typedef struct vw_cmd {
    uint8_t kind, font;
    uint32_t color;     /* 0xRRGGBBAA */
    float x, y, w, h;   /* LINE: (x,y) -> (w,h) = second point; CLIP w=0: unclip */
    uint32_t text;      /* offset of the NUL-terminated text in vw_cmds.str;
                           STRIP: index of its first span (color = span count) */
} vw_cmd;
typedef struct vw_cmds {
    vw_cmd *c; size_t n, cap;
    char *str; size_t slen, scap;
    vw_span *sp; size_t nsp, capsp;
    size_t strip;       /* the open strip (index in c), SIZE_MAX = none */
    int oom;
} vw_cmds;
void vw_cmds_reset(vw_cmds *l);
void vw_cmds_free(vw_cmds *l);
void vw_rect(vw_cmds *l, float x, float y, float w, float h, uint32_t rgba);
void vw_line(vw_cmds *l, float x0, float y0, float x1, float y1, uint32_t rgba);
void vw_text(vw_cmds *l, float x, float y, int font, uint32_t rgba, const char *s);
void vw_clip(vw_cmds *l, float x, float y, float w, float h);
/* Open a strip at (y, h); vw_strip_span adds to the open strip (the last
 * one begun). */
void vw_strip_begin(vw_cmds *l, float y, float h);
void vw_strip_span(vw_cmds *l, float x, float w, uint32_t rgba);
void vw_unclip(vw_cmds *l);

/* Text measurement is the backend's (fonts); the UI asks through this hook.
 * Without one (tests of layout) a fixed advance of 0.6 x size is assumed. */
typedef struct vw_textm {
    void *ctx;
    int (*width)(void *ctx, int font, const char *s);
    int line_h[VW_NFONTS];
} vw_textm;

/* ---- the view --------------------------------------------------------------- */
typedef enum vw_tab { VW_TAB_TIMELINE, VW_TAB_FLAME, VW_TAB_HOTSPOTS, VW_TAB_COUNTERS, VW_NTABS } vw_tab;

typedef struct vw_hit {     /* what is under a point of the timeline */
    int kind;               /* 0 none, 1 box, 2 stall, 3 core header, 4 flame node, 5 tab,
                               6 table header, 7 overview, 8 hotspot key button,
                               9 counter bin (core = counter, index = bin),
                               10 heat map cell (core = map, pipe = row, index = bin) */
    uint32_t core; unsigned pipe;
    size_t index;           /* box / stall index, flame node, tab, column */
} vw_hit;

typedef struct vw_search_hit { uint32_t core; uint8_t pipe; size_t index; uint64_t t0; /* of the box */ } vw_search_hit;

typedef struct vw_view {
    const vw_model *m;
    int w, h;               /* drawable size in pixels */
    float scale;            /* HiDPI factor: layout sizes are multiplied by it */
    vw_tab tab;
    double t0, t1;          /* visible time window (cycles, fractional) */
    uint8_t *collapsed;     /* per core */
    float scroll_y;         /* lane scroll (pixels) */
    /* mouse */
    int mx, my, drag, drag_select, dragged;
    double drag_t, drag_x;  /* time and x where a drag started */
    float drag_sy;
    int dy0;
    /* selection */
    int has_range; uint64_t r0, r1;
    int has_sel; vw_hit sel;
    /* search */
    int searching;          /* the / prompt is open */
    char query[64];
    vw_search_hit *hits; size_t nhits, hit_cur;
    /* flame */
    int flame_stalls, flame_icicle;
    int heat_log;           /* heat maps on a log scale (L; --heat log) */
    int32_t flame_zoom;     /* zoomed node, -1 = root */
    vw_flame flame;
    int flame_dirty;
    uint64_t flame_r0, flame_r1;
    /* hotspots */
    vw_hkey hkey; int hsort;
    vw_table htab; int htab_dirty;
    vw_table rtab; int rtab_dirty;
    int help, quit;
    float *ov; int ov_w;    /* overview cache: 2 values (all pipes, cube) per column */
    vw_textm tm;
    char status[160];       /* last message (search result, errors) */
} vw_view;

npu_status vw_view_init(vw_view *v, const vw_model *m, int w, int h, float scale, npu_diag *d);
void vw_view_free(vw_view *v);
void vw_view_resize(vw_view *v, int w, int h, float scale);
/* Layout: pixel rows of the lane area, x range of the time area. */
float vw_time_x0(const vw_view *v);
float vw_time_x1(const vw_view *v);
double vw_x_to_t(const vw_view *v, double x);
double vw_t_to_x(const vw_view *v, double t);
void vw_zoom_at(vw_view *v, double x, double factor); /* factor < 1 zooms in */
void vw_pan_px(vw_view *v, double dx);
void vw_fit(vw_view *v);          /* selection (range or box) or the whole run */
void vw_set_range(vw_view *v, uint64_t r0, uint64_t r1);
/* Search: sets hits (opcode name, label / function name, or pc "0x..." ) and
 * jumps to the first; vw_search_next steps (wraps). Returns the hit count. */
size_t vw_search(vw_view *v, const char *query);
void vw_search_next(vw_view *v, int dir);
vw_hit vw_hit_test(vw_view *v, int x, int y);
/* The three tooltip lines of a counter bin or heat map cell (hit kinds 9, 10). */
void vw_bin_lines(const vw_view *v, const vw_hit *h, char buf[3][160]);
/* Build this frame's commands. */
void vw_draw(vw_view *v, vw_cmds *out);

/* SDL events: defined in ui.c (the only file of the view that sees SDL). */
union SDL_Event;
void vw_handle_event(vw_view *v, const union SDL_Event *e);

/* ---- colours ----------------------------------------------------------------- */
uint32_t vw_pipe_color(unsigned pipe, unsigned op);  /* a family per pipe, shade per opcode */
uint32_t vw_pipe_base_color(unsigned pipe);

/* ---- backend and app (SDL) -------------------------------------------------- */
typedef struct vw_backend vw_backend;
struct SDL_Renderer;
/* fonts at pt sizes scaled by scale; font_dir NULL = search. */
vw_backend *vw_backend_new(struct SDL_Renderer *ren, float scale, npu_diag *d);
void vw_backend_free(vw_backend *b);
void vw_backend_textm(vw_backend *b, vw_textm *tm);
void vw_backend_draw(vw_backend *b, const vw_cmds *l);
/* The SDL_Surface a software renderer draws into (headless): opaque rects
 * are then filled into it directly, skipping the renderer's command queue.
 * Ignored for other renderers. */
void vw_backend_set_target(vw_backend *b, void *surface);
/* The font file used for UI text (for docs and tests). */
const char *vw_backend_font_path(const vw_backend *b);

typedef struct vw_shot_opts {
    int w, h;
    vw_tab tab;
    int has_range; uint64_t r0, r1;
    float scale;
    vw_hkey hkey;          /* the hotspot table's grouping (--group) */
    int heat_log;          /* the heat maps' scale: 0 linear, 1 log (--heat) */
} vw_shot_opts;
/* Render one frame of the model into a new RGBA surface (a software
 * renderer: no display needed). *out is an SDL_Surface*. */
npu_status vw_render_surface(const vw_model *m, const vw_shot_opts *o, void **out, npu_diag *d);
/* Same, driven with a view the caller prepared (tests of interaction). */
npu_status vw_render_view(vw_view *v, void **out, npu_diag *d);
npu_status vw_screenshot(const vw_model *m, const vw_shot_opts *o, const char *png, npu_diag *d);
/* Load time and frame-time percentiles over a scripted zoom/pan sequence,
 * as a JSON object appended to b. */
npu_status vw_bench(const char *path, int w, int h, npu_buf *b, npu_diag *d);
/* The interactive window (o: its size and starting tab, grouping, heat
 * scale and range, as for a picture; scale comes from the display).
 * Returns when the user quits. */
npu_status vw_run_window(const vw_model *m, const vw_shot_opts *o, npu_diag *d);

#endif
