/* config.h — the machine config (prefix cfg_): one plain struct describing
 * the simulated NPU, its embedded default, and the strict JSON/--set front
 * end that fills it.
 *
 * The keys are one table, frontend/config_keys.def; docs/config.md is
 * generated from it (frontend/tools/cfg-docgen.c). The memory system (L2 and
 * HBM) is the memmodel part's: cfg_machine embeds its mem_config and hands
 * the JSON object "memory" and "memory.*" keys to it.
 *
 * Lifecycle: cfg_default() (or cfg_load_file()) fills a caller-owned
 * cfg_machine; cfg_set() changes single keys; cfg_validate() checks the
 * cross-field rules (cfg_load_* call it). The struct owns no memory: copy it
 * with '=' and drop it without a free. */
#ifndef FRONTEND_CONFIG_H
#define FRONTEND_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "isa/npu_util.h"
#include "memmodel/mem.h"

/* The dtype enum (one row per line of isa/dtypes.def), under the same guard
 * as isa/isa.h and isa/isa_fp.h, so any of them may come first. Per-dtype
 * tables of the config are indexed by it. */
#ifndef ISA_DTYPE_DEFINED
#define ISA_DTYPE_DEFINED
typedef enum isa_dtype {
#define DT(id, suffix, bytes, kind, descr, doc) ISA_DT_##id,
#include "isa/dtypes.def"
#undef DT
    ISA_DT_COUNT
} isa_dtype;
#endif

/* The config file format version this build reads and writes. */
#define CFG_VERSION 1

/* Pipes with an instruction queue, numbered like isa/pipes.def (S first,
 * which has no queue, so that isa pipe ids index cfg_machine.pipe[]). */
typedef enum cfg_pipe {
    CFG_PIPE_S, CFG_PIPE_V, CFG_PIPE_M, CFG_PIPE_MTE1, CFG_PIPE_MTE2,
    CFG_PIPE_MTE3, CFG_PIPE_FIX,
    CFG_PIPE__COUNT
} cfg_pipe;

/* Data-move paths (rows CFG_PATH of config_keys.def). */
typedef enum cfg_path_id {
#define CFG_PATH(id, name, desc, pipe, width, latency, doc) CFG_PATH_##id,
#include "frontend/config_keys.def"
#undef CFG_PATH
    CFG_PATH__COUNT
} cfg_path_id;

/* Vector op classes (rows CFG_VOP of config_keys.def). */
typedef enum cfg_vop {
#define CFG_VOP(id, name, f32, f16, bf16, s32, s16, s8, doc) CFG_VOP_##id,
#include "frontend/config_keys.def"
#undef CFG_VOP
    CFG_VOP__COUNT
} cfg_vop;

/* Values of timing.memory_model (order of its choices in the table). */
enum { CFG_MEM_HBM = 0, CFG_MEM_FIXED = 1 };

typedef struct cfg_buffer {
    uint64_t size;   /* bytes */
    uint64_t align;  /* minimum alignment of an address in it, bytes */
} cfg_buffer;

typedef struct cfg_ub {
    uint64_t size, align;
    uint64_t banks;       /* bank = (addr / bank_size) % banks */
    uint64_t bank_size;
    uint64_t bank_groups; /* group = bank % bank_groups (assumed interleave) */
} cfg_ub;

/* One cube dtype: a fractal is an m x k x n block of MACs; an mmad of F
 * fractals takes startup_cycles + F * cycles_per_fractal. m == 0: the cube
 * has no mode for this dtype. */
typedef struct cfg_cube_dt {
    uint64_t m, k, n;
    double cycles_per_fractal;
} cfg_cube_dt;

typedef struct cfg_path {
    uint64_t width;    /* bytes per cycle */
    uint64_t latency;  /* cycles from start to first byte, excluding GM time */
    uint64_t min_cycles; /* minimum occupancy of one move on the path (timing) */
} cfg_path;

/* The machine. Field comments are in config_keys.def (one place); here only
 * the shape. Every field is set by cfg_default. */
typedef struct cfg_machine {
    char name[64];
    struct { uint64_t cores; double clock_ghz; } chip;
    struct {
        cfg_buffer l1, l0a, l0b, l0c;
        cfg_ub ub;
        cfg_buffer sdata;
    } core;
    struct {
        uint64_t issue_cycles, branch_taken_penalty, load_latency;
        uint64_t mul_latency, div_latency, dispatch_cycles;
    } scalar;
    struct { uint64_t queue_depth; } pipe[CFG_PIPE__COUNT];
    struct {
        uint64_t flag_latency, pipe_barrier_cycles, core_barrier_latency;
    } sync;
    struct {
        uint64_t startup_cycles;
        uint64_t min_cycles;         /* minimum occupancy of one mmad (timing) */
        double sparse_speedup;
        cfg_cube_dt dt[ISA_DT_COUNT];   /* indexed by isa_dtype of the inputs */
    } cube;
    struct {
        uint64_t repeat_bytes, block_bytes, startup_cycles;
        int model_bank_conflicts;    /* 0/1 */
        uint64_t bank_conflict_cycles, bank_group_conflict_cycles;
        uint64_t mask_partial_block_cycles;  /* compare: last mask block partly written */
        /* cycles per repeat, [op class][isa_dtype]; 0 = n/a */
        double cpr[CFG_VOP__COUNT][ISA_DT_COUNT];
        /* conversions: cycles per source repeat, [destination][source]
         * isa_dtype; 0 = the cast class's rate for the source */
        double cast_to[ISA_DT_COUNT][ISA_DT_COUNT];
    } vector;
    cfg_path path[CFG_PATH__COUNT];
    struct {
        int memory_model;            /* CFG_MEM_HBM or CFG_MEM_FIXED */
        uint64_t gm_fixed_latency;
        double gm_fixed_bytes_per_cycle;
        uint64_t gm_request_bytes;   /* fixed mode: GM traffic is split into requests of this size */
        int gm_posted_writes;        /* a GM write move ends when its last request is accepted */
        uint64_t max_cycles;
    } timing;
    mem_config mem;                  /* the memory system: memmodel/mem.h */
} cfg_machine;

/* ---- the key table, for tools (docgen) and tests ---------------------- */
typedef enum cfg_type {
    CFG_T_INT, CFG_T_UINT, CFG_T_DOUBLE, CFG_T_BOOL, CFG_T_STRING, CFG_T_ENUM
} cfg_type;

typedef struct cfg_key_info {
    const char *key;       /* "core.ub.size" */
    cfg_type type;
    size_t offset, size;   /* of the field in cfg_machine */
    double min, max;       /* range (STRING: max = longest length) */
    const char *def;       /* default, as --set text */
    const char *unit;      /* "B", "cycles", ... or "" */
    const char *choices;   /* ENUM: "hbm|fixed"; else "" */
    const char *doc;
} cfg_key_info;

typedef struct cfg_section_info {
    const char *name;
    const char *doc;
} cfg_section_info;

/* The table rows, in table order. */
const cfg_key_info *cfg_keys(size_t *count);
const cfg_section_info *cfg_sections(size_t *count);
/* The row of a key, or NULL. */
const cfg_key_info *cfg_key_find(const char *key);
/* The docs section a key is listed under: the longest section name that is
 * a prefix of the key at a dot; NULL for top-level keys ("name"). */
const cfg_section_info *cfg_key_section(const cfg_key_info *k);
/* "integer", "number", ... as used in messages and the docs. */
const char *cfg_type_name(cfg_type t);

/* Names of table enums, for counters and traces: "gm_l1", "exp"; "?" if
 * out of range. The lookups return the id or -1. */
const char *cfg_path_name(int id);
const char *cfg_vop_name(int id);
int cfg_path_from_name(const char *name);
int cfg_vop_from_name(const char *name);

/* ---- the API ------------------------------------------------------------ */

/* The embedded default machine (DESIGN.md's A2-class NPU); needs no file. */
void cfg_default(cfg_machine *m);

/* Reset m to the default and apply a JSON config file on top (keys it leaves
 * out keep their default); then cfg_validate. A missing or unsupported
 * "version", an unknown key, a wrong type or an out-of-range value is an
 * error naming the file and the key. On error m is left as the defaults. */
npu_status cfg_load_file(cfg_machine *m, const char *path, npu_diag *d);
/* The same from text in memory; where names it in messages ("<stdin>"). */
npu_status cfg_load_json_text(cfg_machine *m, const char *text, size_t len,
                              const char *where, npu_diag *d);
/* Apply JSON text on top of m as it is (no reset, no validation); used by
 * the two above and by tools layering several files. On error m is
 * unchanged. */
npu_status cfg_apply_json_text(cfg_machine *m, const char *text, size_t len,
                               const char *where, npu_diag *d);

/* Set one key from its text form, as `--set key=value` does: integers in
 * decimal or 0x hex, sizes (unit B) with an optional K/M/G suffix (x1024),
 * numbers, true/false, enum choice names. "memory.*" keys go to memmodel.
 * Range-checked, not cross-validated (call cfg_validate after the last). */
npu_status cfg_set(cfg_machine *m, const char *key, const char *value, npu_diag *d);
/* Is key a config key (the memory keys included)? NPU_OK, or cfg_set's
 * message for an unknown key (with its suggestion). */
npu_status cfg_check_key(const char *key, npu_diag *d);
/* Parse "key=value" and cfg_set it. */
npu_status cfg_set_kv(cfg_machine *m, const char *kv, npu_diag *d);
/* The current value of a table key as text (canonical: sizes in bytes). */
npu_status cfg_get(const cfg_machine *m, const char *key, char *buf, size_t n,
                   npu_diag *d);

/* Cross-field rules: UB size = banks x bank size, bank groups divide banks,
 * alignments are powers of two, buffer sizes are multiples of their
 * alignment, repeat = whole blocks. (The memory object is checked by
 * memmodel when it is parsed.) */
npu_status cfg_validate(const cfg_machine *m, npu_diag *d);

/* The whole config as JSON in table order ("version" first, "memory" last),
 * two-space indented, ending in a newline. npu_malloc'd; NULL if out of
 * memory. cfg_load_json_text of it gives back the same machine. */
char *cfg_dump_json(const cfg_machine *m);

/* ---- JSON helpers shared by the frontend's strict JSON readers ----------- */
struct cJSON;
/* Parse one JSON document strictly: one value and nothing but whitespace
 * after it. A syntax error is EFORMAT with "where:LINE:COL: JSON syntax
 * error near '...'". Free *out with cJSON_Delete. */
npu_status cfg_json_parse(const char *text, size_t len, const char *where,
                          struct cJSON **out, npu_diag *d);
/* The "version" member of a top-level object: required, an integer, equal
 * to supported; otherwise an error naming where. */
npu_status cfg_json_check_version(const struct cJSON *root, const char *where,
                                  int supported, npu_diag *d);

/* `npusim config --dump [--config FILE] [--set k=v ...] [-o FILE]`,
 * `npusim config --check FILE`, `npusim config --help`. argv[0] is the
 * subcommand name. Returns the exit status; prints (it is a command). */
int cfg_cmd_config(int argc, char **argv);

#endif
