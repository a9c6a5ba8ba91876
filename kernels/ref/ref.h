/* ref.h — golden-reference generators for the kernel library (prefix ref_).
 *
 * `npusim ref KERNEL [--OPTION VALUE ...] --seed S -o DIR` makes a runnable
 * directory: the inputs (DIR/<name>.npy, from a seeded npu_rng), the
 * expected outputs (DIR/<name>_ref.npy, computed here in plain C, in double
 * with the documented input/output rounding, independently of the
 * simulator), the kernel assembled with the -D values it needs
 * (DIR/kernel.elf) and DIR/launch.json, so that `npusim run DIR/launch.json`
 * runs and checks it. docs/kernels.md documents each kernel.
 *
 * The tool is a table of generators (kernels/ref/gens.def): a row names the
 * kernel, its generator function, the options it accepts and a summary. A
 * generator reads its options with ref_opt_*, makes tensors, and declares
 * the kernel's arguments in argument order with ref_in / ref_out /
 * ref_scalar, the -D defines with ref_define, the kernel source with
 * ref_kernel. ref.c does the rest (files, assembly, launch.json).
 *
 * To add a kernel: write `npu_status ref_gen_NAME(ref_ctx *c, npu_diag *d)`
 * in a kernels/ref/ref_*.c file and add a GEN row. */
#ifndef KERNELS_REF_H
#define KERNELS_REF_H

#include <stdint.h>

#include "frontend/npy.h"
#include "isa/isa_fp.h"
#include "isa/npu_util.h"

typedef struct ref_ctx ref_ctx;
typedef npu_status (*ref_gen_fn)(ref_ctx *c, npu_diag *d);

/* A row of the generator table. opts: the generator's own options, space
 * separated ("m n k dtype"); each is given as --NAME VALUE. */
typedef struct ref_gen {
    const char *name;
    ref_gen_fn fn;
    const char *opts;
    const char *summary;
} ref_gen;

#define GEN(name, fn, opts, summary) npu_status fn(ref_ctx *c, npu_diag *d);
#include "kernels/ref/gens.def"
#undef GEN

/* The table, in gens.def order; NULL-terminated by name. */
const ref_gen *ref_gens(void);
const ref_gen *ref_gen_find(const char *name);

/* ---- options --------------------------------------------------------------
 * Values of --NAME options (only names in the row's opts are accepted).
 * ref_opt_int parses decimal/hex integers; a bad value is an error naming
 * the option. *out is def when the option was not given. */
npu_status ref_opt_int(ref_ctx *c, const char *name, int64_t def, int64_t *out, npu_diag *d);
const char *ref_opt_str(ref_ctx *c, const char *name, const char *def);
/* A dtype option (suffix or numpy name); allowed: bit set of isa_dtype. */
npu_status ref_opt_dtype(ref_ctx *c, const char *name, isa_dtype def, uint32_t allowed, isa_dtype *out,
                         npu_diag *d);
/* The run's PRNG (seeded from --seed) and the launch's core count. */
npu_rng *ref_rng(ref_ctx *c);
int ref_cores(ref_ctx *c);

/* ---- what the generator declares -----------------------------------------
 * Arguments in kernel argument order. ref_in takes ownership of t (saved as
 * DIR/<name>.npy). ref_out takes ownership of the expected tensor (saved as
 * DIR/<name>_ref.npy); the launch's out argument gets its dtype and shape
 * and is written to DIR/<name>.npy, checked with rtol/atol. why: the
 * reason for the tolerance (written into launch.json as a comment). */
npu_status ref_in(ref_ctx *c, const char *name, npy_tensor *t, npu_diag *d);
npu_status ref_out(ref_ctx *c, const char *name, npy_tensor *expect, double rtol, double atol,
                   const char *why, npu_diag *d);
npu_status ref_scalar(ref_ctx *c, const char *name, int64_t v, npu_diag *d);
npu_status ref_define(ref_ctx *c, const char *name, int64_t v, npu_diag *d);
/* The kernel source, relative to the kernels folder ("gemm.s"). */
void ref_kernel(ref_ctx *c, const char *file);
/* A line for launch.json's "_note" and for the tool's output. */
void ref_note(ref_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- helpers for generators ---------------------------------------------- */
/* A generator's long loops call this now and then with the fraction done
 * (0..1): on a terminal, once the generator has taken 2 s, a status line
 * "npusim ref NAME: 37 % of the reference, 4.1 s" (npu_tty_line). Cheap
 * when nothing is due: call it every row or so, not every element. */
void ref_progress(ref_ctx *c, double done);

/* Uniform double in [lo, hi). */
double ref_uniform(npu_rng *r, double lo, double hi);
/* Allocate t (dtype, 1 or 2 dims: d1 < 0 means 1-D) and fill it with
 * uniform values in [lo, hi), each rounded once (RNE, saturating) to the
 * dtype; integer dtypes get integers in [lo, hi]. */
npu_status ref_rand(npy_tensor *t, isa_dtype dt, int64_t d0, int64_t d1, npu_rng *r, double lo, double hi,
                    npu_diag *d);
/* Element i of t as a double (exact). */
static inline double ref_get(const npy_tensor *t, int64_t i)
{
    return isa_fp_load(t->dtype, (const uint8_t *)t->data + (size_t)i * (size_t)isa_dtype_bytes(t->dtype));
}
/* Store v into element i of t, rounded once (RNE, saturating). */
static inline void ref_put(npy_tensor *t, int64_t i, double v)
{
    isa_fp_store(t->dtype, (uint8_t *)t->data + (size_t)i * (size_t)isa_dtype_bytes(t->dtype), v, ISA_RM_RNE, 1);
}

/* ---- 2:4 metadata in column panels ---------------------------------------------
 * gemm_sparse.s loads, per k step, the metadata of one BN-column tile of B
 * as one contiguous burst. So its metadata is cut into column panels of
 * `panel` columns (a multiple of 16; the last panel narrower): panel p is
 * the sim/sparse.h format of columns [p*panel, p*panel + w) alone (nibble
 * g*ceil16(w) + c), and the panels are concatenated. panel >= n gives the
 * plain sim/sparse.h format. meta: sim_sparsify_24's metadata of k x n. */
uint64_t ref_sparse_panel_bytes(int k, int n, int panel);
void ref_sparse_panels(const uint8_t *meta, int k, int n, int panel, uint8_t *out);

/* ---- the commands ------------------------------------------------------------
 * `npusim ref` and `npusim sparsify` (argv[0] is the command name); return
 * a process exit code (0 ok, 1 failure, 2 usage). */
int ref_cmd_ref(int argc, char **argv);
int ref_cmd_sparsify(int argc, char **argv);

#endif
