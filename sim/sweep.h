/* sweep.h — the architect's sweep (`npusim sweep`, docs/sweep.md): many
 * (kernel, config) points, each run as its own `npusim stat --json` process.
 *
 * A spec is a set of explicit points (from a spec file, or one empty point)
 * crossed with a grid of axes (KEY and its value list, from --set or the
 * file's "set"); sweep_expand gives the points in a fixed order (explicit
 * point slowest, then the axes in the order given, the last axis fastest).
 * A point's result is a JSON record (cJSON object) built the same way by
 * the direct sweep and by a job-list line, so the merge of job files and
 * the direct sweep give identical tables. */
#ifndef NPU_SWEEP_H
#define NPU_SWEEP_H

#include <stddef.h>
#include <sys/types.h>

#include <cJSON.h>

#include "isa/npu_util.h"

typedef struct sweep_kv { char *key, *val; } sweep_kv;

/* The one point key that is no config key: the core count (the launch's
 * --cores N and chip.cores = N; sweep.c av_point) */
#define SWEEP_CORES_KEY "cores"

typedef struct sweep_point {
    char *launch;      /* LAUNCH.json or KERNEL.elf */
    char *config;      /* machine config file; NULL: the embedded default */
    sweep_kv *set;     /* --set overrides, in order */
    size_t nset;
} sweep_point;

typedef struct sweep_axis {
    char *key;
    char **vals;
    size_t nvals;
} sweep_axis;

typedef struct sweep_spec {
    char *launch, *config;   /* defaults for points that name none */
    sweep_point *pts;        /* explicit points (a spec file's "points") */
    size_t npts;
    sweep_axis *axes;        /* the grid */
    size_t naxes;
} sweep_spec;

/* Add an axis from "KEY=V1,V2,..." (split on commas when split, else one
 * value). A key given twice is an error. */
npu_status sweep_add_axis(sweep_spec *s, const char *arg, int split, npu_diag *d);
/* Read a spec file (docs/sweep.md "Spec files") into s. */
npu_status sweep_load_spec(sweep_spec *s, const char *path, npu_diag *d);
/* The points of s, in sweep order (max_points bounds the product). */
npu_status sweep_expand(const sweep_spec *s, size_t max_points, sweep_point **out, size_t *n,
                        npu_diag *d);
void sweep_points_free(sweep_point *p, size_t n);
void sweep_spec_free(sweep_spec *s);

/* How each point runs. Strings may be NULL (not passed). */
typedef struct sweep_opts {
    const char *events;      /* stat -e LIST */
    const char *group;       /* stat -M GROUP */
    const char *cores, *mode, *max_cycles;
    double timeout_s;        /* per point (stat + verify together); 0: none */
    int verify;              /* also `npusim run -q` the point: pass/fail of --expect */
} sweep_opts;

/* Run point p (number index of of) synchronously: fork/exec exe stat --json
 * (and exe run -q with verify), with the timeout; *rec gets the record
 * (status ok / fail / error / timeout). An error return means the point
 * could not be attempted at all (fork failed, out of memory). */
npu_status sweep_run_point(const char *exe, const sweep_point *p, size_t index, size_t of,
                           const sweep_opts *o, cJSON **rec, npu_diag *d);
/* 0 if the record's status is "ok". */
int sweep_record_ok(const cJSON *rec);

/* argv (NULL-terminated, npu_malloc'd strings) of the one-point worker
 * `npusim sweep --point I --of N ... -o OUT`, which is both what the direct
 * sweep spawns (OUT "-") and a job-list line. argv[0] is exe. */
npu_status sweep_worker_argv(const char *exe, const sweep_point *p, size_t index, size_t of,
                             const sweep_opts *o, const char *out, char ***argv, npu_diag *d);
void sweep_argv_free(char **argv);
/* Append s to b quoted for sh (single quotes). */
void sweep_shell_quote(npu_buf *b, const char *s);

/* fork/exec argv[0] with stdin /dev/null and stdout (and stderr when
 * err_fd) to non-blocking pipes. */
npu_status sweep_spawn(char *const argv[], pid_t *pid, int *out_fd, int *err_fd, npu_diag *d);

/* Parse a record (a worker's output or a points/NNNN.json file). */
npu_status sweep_parse_record(const char *text, const char *where, cJSON **rec, npu_diag *d);
/* The result table of records sorted by index: CSV or JSON. */
npu_status sweep_write_csv(cJSON *const *recs, size_t n, npu_buf *out, npu_diag *d);
npu_status sweep_write_json(cJSON *const *recs, size_t n, npu_buf *out, npu_diag *d);

#endif
