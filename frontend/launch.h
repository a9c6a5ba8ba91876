/* launch.h — the launch descriptor (prefix launch_): what `npusim run`
 * runs. One struct, filled from a launch file (JSON, strict like the machine
 * config, docs/launch.md) or from the equivalent command-line flags, or both
 * (flags override the file).
 *
 *   launch_desc l = {0};                      (zero is a valid empty descriptor)
 *   launch_load_file(&l, "gemm.json", &d)     or launch_parse_args(...) + launch_finish
 *   launch_machine(&l, &machine, &d)          the cfg_machine the run uses
 *   ... bind l.args, run in l.mode, check l.expects ...
 *   launch_free(&l);
 *
 * Every string in the struct is owned by it (npu_malloc'd). Paths from a
 * launch file are resolved relative to that file's folder; paths from flags
 * are kept as given (relative to the current directory). */
#ifndef FRONTEND_LAUNCH_H
#define FRONTEND_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "frontend/config.h"
#include "isa/npu_util.h"

#define LAUNCH_VERSION 1
#define LAUNCH_MAX_DIMS 8

/* Zero is perf, the default mode. */
typedef enum launch_mode {
    LAUNCH_MODE_PERF = 0,   /* functional + timing */
    LAUNCH_MODE_FUNC,       /* architectural state only */
    LAUNCH_MODE_TIMING,     /* timing without data */
} launch_mode;

typedef enum launch_arg_kind {
    LAUNCH_ARG_IN,      /* a GM tensor read from .npy file */
    LAUNCH_ARG_OUT,     /* a GM tensor of dtype/shape, written to file if given */
    LAUNCH_ARG_INOUT,   /* read from file; written to save if given */
    LAUNCH_ARG_SCALAR,  /* a scalar register value */
} launch_arg_kind;

/* One kernel argument, in kernel argument order. */
typedef struct launch_arg {
    char *name;
    launch_arg_kind kind;
    char *file;      /* in/inout: the .npy to read; out: where to write (or NULL) */
    char *save;      /* inout: where to write the result (or NULL) */
    int dtype;       /* isa_dtype. out: required; scalar: S64 for an integer
                      * value, F32 for a float one unless given; in/inout: -1
                      * (the .npy header says) */
    int ndim;        /* out: shape */
    uint64_t shape[LAUNCH_MAX_DIMS];
    int is_float;    /* scalar: 1 if fval is the value, 0 if ival */
    int64_t ival;
    double fval;
} launch_arg;

/* A golden tensor for an out/inout argument: pass if
 * |out - ref| <= atol + rtol * |ref| everywhere (numpy.allclose). */
typedef struct launch_expect {
    char *name;      /* the argument it checks */
    char *file;      /* the reference .npy */
    double rtol, atol;
    int has_rtol, has_atol;  /* given for this one (else launch_finish fills them) */
} launch_expect;

/* A `--set KEY=VALUE` override of the machine config, applied in order. */
typedef struct launch_set {
    char *key, *value;
} launch_set;

/* Bits of launch_desc.given: fields set explicitly (a flag given before a
 * launch file keeps priority over the file). */
enum {
    LAUNCH_GIVEN_KERNEL = 1u << 0, LAUNCH_GIVEN_ENTRY = 1u << 1,
    LAUNCH_GIVEN_CORES = 1u << 2, LAUNCH_GIVEN_CONFIG = 1u << 3,
    LAUNCH_GIVEN_MODE = 1u << 4, LAUNCH_GIVEN_MAX_CYCLES = 1u << 5,
    LAUNCH_GIVEN_RTOL = 1u << 6, LAUNCH_GIVEN_ATOL = 1u << 7,
};

/* Default tolerances (numpy.allclose's). */
#define LAUNCH_DEFAULT_RTOL 1e-5
#define LAUNCH_DEFAULT_ATOL 1e-8

typedef struct launch_desc {
    char *kernel;          /* ELF path (required) */
    char *entry;           /* entry symbol, or NULL for the ELF entry point */
    char *config;          /* machine config file, or NULL for the default */
    uint64_t cores;        /* 0: the config's chip.cores */
    launch_mode mode;
    uint64_t max_cycles;   /* 0: the config's timing.max_cycles */
    double rtol, atol;     /* for expectations without their own (if given) */
    launch_set *sets;
    size_t nsets;
    launch_arg *args;
    size_t nargs;
    launch_expect *expects;
    size_t nexpects;
    unsigned given;        /* LAUNCH_GIVEN_* */
} launch_desc;

/* Read a launch file (JSON) into l, which may already hold flags: what l
 * already gives keeps priority (sets from the file come first, so later
 * ones win; args and expectations with the same name are replaced by l's).
 * Then launch_finish. Errors name the file and the key ("args[2].dtype"). */
npu_status launch_load_file(launch_desc *l, const char *path, npu_diag *d);
/* The same from text; dir is the folder relative paths are resolved
 * against (NULL or "" = keep them as they are). */
npu_status launch_load_json_text(launch_desc *l, const char *text, size_t len,
                                 const char *where, const char *dir, npu_diag *d);

/* Parse launch flags from argv[0] on (argv[0] is the first argument, not a
 * program name): the first positional is the kernel, or a launch file if
 * it ends in ".json" (loaded as launch_load_file does, under the flags).
 * Stops, with NPU_OK, at "--" (consumed), at a second positional or at an
 * option it does not know, and reports in *consumed how many arguments it
 * used, so a command can interleave its own options and call again.
 * Flags:
 *   --cores N  --mode func|perf|timing  --max-cycles N  --entry SYM
 *   --config FILE  --set KEY=VALUE
 *   --arg NAME=FILE.npy (in)   --arg NAME=123 | NAME=-1.5 | NAME=0x10 (scalar)
 *   --inout NAME=FILE.npy[:SAVE.npy]
 *   --out NAME=FILE.npy:DTYPE[D0,D1,...] (or NAME=DTYPE[...] to not save)
 *   --expect NAME=REF.npy  --rtol X  --atol Y
 * "--flag=value" works as well as "--flag value". Does not check
 * completeness: call launch_finish after the last call. */
npu_status launch_parse_args(launch_desc *l, int argc, char **argv, int *consumed,
                             npu_diag *d);

/* Completeness and consistency: a kernel is given; argument names are
 * unique; each expectation names an out/inout argument; fills each
 * expectation's rtol/atol from the descriptor's or the defaults. */
npu_status launch_finish(launch_desc *l, npu_diag *d);

/* The machine the launch runs on: the default or the config file, then
 * cores, then the sets in order, then max_cycles (timing.max_cycles), then
 * cfg_validate. */
npu_status launch_machine(const launch_desc *l, cfg_machine *m, npu_diag *d);

/* Free everything l owns and zero it. */
void launch_free(launch_desc *l);

/* "func", "perf", "timing"; "in", "out", "inout", "scalar". */
const char *launch_mode_name(launch_mode m);
const char *launch_arg_kind_name(launch_arg_kind k);
/* A dtype named the numpy way ("float32", "bfloat16", "float8_e4m3fn",
 * "int8", ...) or by its ISA suffix ("f32"): the isa_dtype, or -1. */
int launch_dtype_from_name(const char *name);

#endif
