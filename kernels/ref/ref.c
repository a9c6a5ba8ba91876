/* ref.c — the `npusim ref` command and the generator context: options,
 * the argument list a generator declares, and the writer that turns it
 * into a runnable directory (inputs, golden outputs, kernel.elf assembled
 * with the generator's -D defines, launch.json). See ref.h. */
#include "kernels/ref/ref.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/asm.h"
#include "frontend/elf.h"

#define REF_MAX_OPTS 32
#define REF_MAX_ARGS 24
#define REF_MAX_DEFS 32
#define REF_NAME 64

enum { RA_IN, RA_OUT, RA_SCALAR };

typedef struct ref_arg {
    char name[REF_NAME];
    int kind;
    npy_tensor t;           /* in: the input; out: the expected result */
    int64_t ival;           /* scalar */
    double rtol, atol;      /* out */
    char why[256];          /* out: the reason for the tolerance */
} ref_arg;

struct ref_ctx {
    const ref_gen *gen;
    struct { const char *name, *val; int used; } opt[REF_MAX_OPTS];
    int nopt;
    npu_rng rng;
    int cores;
    ref_arg arg[REF_MAX_ARGS];
    int narg;
    asm_define def[REF_MAX_DEFS];
    char defname[REF_MAX_DEFS][REF_NAME];
    int ndef;
    char kernel[256];
    npu_buf notes;          /* lines, '\n'-separated */
};

static const ref_gen gens[] = {
#define GEN(name, fn, opts, summary) {#name, fn, opts, summary},
#include "kernels/ref/gens.def"
#undef GEN
    {NULL, NULL, NULL, NULL},
};

const ref_gen *ref_gens(void) { return gens; }

void ref_progress(ref_ctx *c, double done)
{
    npu_tty_line("npusim ref %s: %.0f %% of the reference", c->gen->name, done * 100.0);
}

const ref_gen *ref_gen_find(const char *name)
{
    for (const ref_gen *g = gens; g->name; g++)
        if (!strcmp(g->name, name))
            return g;
    return NULL;
}

/* ---- options -------------------------------------------------------------- */

static const char *opt_get(ref_ctx *c, const char *name)
{
    for (int i = 0; i < c->nopt; i++)
        if (!strcmp(c->opt[i].name, name)) {
            c->opt[i].used = 1;
            return c->opt[i].val;
        }
    return NULL;
}

const char *ref_opt_str(ref_ctx *c, const char *name, const char *def)
{
    const char *v = opt_get(c, name);
    return v ? v : def;
}

npu_status ref_opt_int(ref_ctx *c, const char *name, int64_t def, int64_t *out, npu_diag *d)
{
    const char *v = opt_get(c, name);
    if (!v) {
        *out = def;
        return NPU_OK;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 0);
    if (errno || end == v || *end)
        return npu_errf(d, NPU_EINVAL, "ref %s: --%s %s: not an integer", c->gen->name, name, v);
    *out = x;
    return NPU_OK;
}

npu_status ref_opt_dtype(ref_ctx *c, const char *name, isa_dtype def, uint32_t allowed, isa_dtype *out,
                         npu_diag *d)
{
    const char *v = opt_get(c, name);
    if (!v) {
        *out = def;
        return NPU_OK;
    }
    int dt = isa_dtype_from_name(v);
    if (dt < 0 || !(allowed & (1u << dt))) {
        char list[256] = "";
        for (int i = 0; i < ISA_DT_COUNT; i++)
            if (allowed & (1u << i)) {
                strncat(list, " ", sizeof list - strlen(list) - 1);
                strncat(list, isa_dtype_suffix((isa_dtype)i), sizeof list - strlen(list) - 1);
            }
        return npu_errf(d, NPU_EINVAL, "ref %s: --%s %s: %s (allowed:%s)", c->gen->name, name, v,
                        dt < 0 ? "unknown dtype" : "dtype not supported by this kernel", list);
    }
    *out = (isa_dtype)dt;
    return NPU_OK;
}

npu_rng *ref_rng(ref_ctx *c) { return &c->rng; }
int ref_cores(ref_ctx *c) { return c->cores; }

/* ---- declarations ----------------------------------------------------------- */

static npu_status new_arg(ref_ctx *c, const char *name, int kind, ref_arg **out, npu_diag *d)
{
    if (c->narg >= REF_MAX_ARGS)
        return npu_errf(d, NPU_EINVAL, "ref %s: more than %d arguments", c->gen->name, REF_MAX_ARGS);
    if (strlen(name) >= REF_NAME)
        return npu_errf(d, NPU_EINVAL, "ref %s: argument name '%s' too long", c->gen->name, name);
    for (int i = 0; i < c->narg; i++)
        if (!strcmp(c->arg[i].name, name))
            return npu_errf(d, NPU_EINVAL, "ref %s: argument '%s' declared twice", c->gen->name, name);
    ref_arg *a = &c->arg[c->narg++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->kind = kind;
    *out = a;
    return NPU_OK;
}

npu_status ref_in(ref_ctx *c, const char *name, npy_tensor *t, npu_diag *d)
{
    ref_arg *a;
    npu_status st = new_arg(c, name, RA_IN, &a, d);
    if (st) {
        npy_free(t);
        return st;
    }
    a->t = *t;
    memset(t, 0, sizeof *t);
    return NPU_OK;
}

npu_status ref_out(ref_ctx *c, const char *name, npy_tensor *expect, double rtol, double atol,
                   const char *why, npu_diag *d)
{
    ref_arg *a;
    npu_status st = new_arg(c, name, RA_OUT, &a, d);
    if (st) {
        npy_free(expect);
        return st;
    }
    a->t = *expect;
    memset(expect, 0, sizeof *expect);
    a->rtol = rtol;
    a->atol = atol;
    snprintf(a->why, sizeof a->why, "%s", why ? why : "");
    return NPU_OK;
}

npu_status ref_scalar(ref_ctx *c, const char *name, int64_t v, npu_diag *d)
{
    ref_arg *a;
    npu_status st = new_arg(c, name, RA_SCALAR, &a, d);
    if (!st)
        a->ival = v;
    return st;
}

npu_status ref_define(ref_ctx *c, const char *name, int64_t v, npu_diag *d)
{
    for (int i = 0; i < c->ndef; i++)
        if (!strcmp(c->defname[i], name)) {
            c->def[i].value = v;
            return NPU_OK;
        }
    if (c->ndef >= REF_MAX_DEFS || strlen(name) >= REF_NAME)
        return npu_errf(d, NPU_EINVAL, "ref %s: too many or too long -D defines (%s)", c->gen->name, name);
    snprintf(c->defname[c->ndef], REF_NAME, "%s", name);
    c->def[c->ndef].name = c->defname[c->ndef];
    c->def[c->ndef].value = v;
    c->ndef++;
    return NPU_OK;
}

void ref_kernel(ref_ctx *c, const char *file) { snprintf(c->kernel, sizeof c->kernel, "%s", file); }

void ref_note(ref_ctx *c, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    npu_buf_printf(&c->notes, "%s\n", line);
}

/* ---- helpers ------------------------------------------------------------------ */

double ref_uniform(npu_rng *r, double lo, double hi)
{
    /* 53 random bits -> [0, 1) exactly */
    double u = (double)(npu_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return lo + (hi - lo) * u;
}

npu_status ref_rand(npy_tensor *t, isa_dtype dt, int64_t d0, int64_t d1, npu_rng *r, double lo, double hi,
                    npu_diag *d)
{
    int64_t shape[2] = {d0, d1};
    npu_status st = npy_alloc(t, dt, d1 < 0 ? 1 : 2, shape, d);
    if (st)
        return st;
    int64_t n = npy_numel(t);
    int isint = isa_dtype_kind(dt) != 'f';
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (isint) {
            int64_t span = (int64_t)hi - (int64_t)lo + 1;
            v = (double)((int64_t)lo + (int64_t)(npu_rng_next(r) % (uint64_t)span));
        } else {
            v = ref_uniform(r, lo, hi);
        }
        ref_put(t, i, v);
    }
    return NPU_OK;
}

/* ---- the writer ----------------------------------------------------------------- */

static void json_str(npu_buf *b, const char *s)
{
    npu_buf_append(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            npu_buf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            npu_buf_printf(b, "\\u%04x", (unsigned char)*s);
        else
            npu_buf_append(b, s, 1);
    }
    npu_buf_append(b, "\"", 1);
}

static void path_join(char *out, size_t n, const char *dir, const char *file)
{
    size_t l = strlen(dir);
    /* a path longer than the buffer is cut; the open that follows then
     * fails with the cut name, which is the honest error */
    int w = snprintf(out, n, "%s%s", dir, l && dir[l - 1] == '/' ? "" : "/");
    if (w >= 0 && (size_t)w < n)
        snprintf(out + w, n - (size_t)w, "%s", file);
}

/* The kernels folder: --kernels, else $NPU_ROOT/kernels, else the one next
 * to the build folder of this binary (BUILD/bin/npusim -> ../../kernels),
 * else ./kernels. */
static void find_kernels_dir(const char *given, char *out, size_t n)
{
    struct stat sb;
    if (given) {
        snprintf(out, n, "%s", given);
        return;
    }
    const char *root = getenv("NPU_ROOT");
    if (root && *root) {
        path_join(out, n, root, "kernels");
        if (!stat(out, &sb))
            return;
    }
    char exe[PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l > 0) {
        exe[l] = 0;
        for (int up = 0; up < 3; up++) {
            char *sl = strrchr(exe, '/');
            if (!sl)
                break;
            *sl = 0;
        }
        path_join(out, n, exe, "kernels");
        if (!stat(out, &sb))
            return;
    }
    snprintf(out, n, "kernels");
}

static npu_status assemble(ref_ctx *c, const char *kdir, const char *elf, npu_diag *d)
{
    char src[PATH_MAX], inc[PATH_MAX];
    path_join(src, sizeof src, kdir, c->kernel);
    path_join(inc, sizeof inc, kdir, "include");
    const char *incs[1] = {inc};
    asm_opts o = {incs, 1, c->def, (size_t)c->ndef, 0};
    asm_output out;
    memset(&out, 0, sizeof out);
    npu_status st = asm_assemble_file(src, &o, &out, d);
    if (st) {
        npu_buf b = {0};
        for (size_t i = 0; i < out.nmsgs; i++)
            asm_msg_format(&out.msgs[i], &b);
        npu_buf_append(&b, "", 1);
        if (b.data && !b.oom)
            npu_errf(d, st, "assembling %s:\n%s", src, (const char *)b.data);
        npu_buf_free(&b);
    } else {
        st = elf_write(elf, &out, d);
    }
    asm_output_free(&out);
    return st;
}

static npu_status write_launch(ref_ctx *c, const char *dir, const char *config, const char *mode, npu_diag *d)
{
    npu_buf b = {0};
    npu_buf_printf(&b, "{\n  \"version\": 1,\n  \"_generated\": ");
    json_str(&b, "npusim ref — regenerate rather than edit");
    npu_buf_printf(&b, ",\n  \"kernel\": \"kernel.elf\",\n  \"cores\": %d,\n", c->cores);
    if (config) {
        npu_buf_printf(&b, "  \"config\": ");
        json_str(&b, config);
        npu_buf_printf(&b, ",\n");
    }
    if (mode)
        npu_buf_printf(&b, "  \"mode\": \"%s\",\n", mode);
    if (c->notes.len) {
        npu_buf_printf(&b, "  \"_note\": [");
        const char *p = (const char *)c->notes.data, *e = p + c->notes.len;
        int first = 1;
        while (p < e) {
            const char *nl = memchr(p, '\n', (size_t)(e - p));
            size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)l, p);
            npu_buf_printf(&b, "%s\n    ", first ? "" : ",");
            json_str(&b, line);
            first = 0;
            p += l + 1;
        }
        npu_buf_printf(&b, "\n  ],\n");
    }
    npu_buf_printf(&b, "  \"args\": [\n");
    for (int i = 0; i < c->narg; i++) {
        const ref_arg *a = &c->arg[i];
        npu_buf_printf(&b, "    { \"name\": \"%s\", ", a->name);
        if (a->kind == RA_IN) {
            npu_buf_printf(&b, "\"kind\": \"in\", \"file\": \"%s.npy\" }", a->name);
        } else if (a->kind == RA_OUT) {
            npu_buf_printf(&b, "\"kind\": \"out\", \"dtype\": \"%s\", \"shape\": [", isa_dtype_suffix(a->t.dtype));
            for (int k = 0; k < a->t.ndim; k++)
                npu_buf_printf(&b, "%s%lld", k ? ", " : "", (long long)a->t.shape[k]);
            npu_buf_printf(&b, "], \"file\": \"%s.npy\" }", a->name);
        } else {
            npu_buf_printf(&b, "\"kind\": \"scalar\", \"value\": %lld }", (long long)a->ival);
        }
        npu_buf_printf(&b, "%s\n", i + 1 < c->narg ? "," : "");
    }
    npu_buf_printf(&b, "  ],\n  \"expect\": {\n");
    int first = 1;
    for (int i = 0; i < c->narg; i++) {
        const ref_arg *a = &c->arg[i];
        if (a->kind != RA_OUT)
            continue;
        npu_buf_printf(&b, "%s    \"%s\": { \"file\": \"%s_ref.npy\", \"rtol\": %.17g, \"atol\": %.17g", first ? "" : ",\n",
                       a->name, a->name, a->rtol, a->atol);
        if (a->why[0]) {
            npu_buf_printf(&b, ", \"_why\": ");
            json_str(&b, a->why);
        }
        npu_buf_printf(&b, " }");
        first = 0;
    }
    npu_buf_printf(&b, "\n  }\n}\n");
    npu_status st;
    if (b.oom) {
        st = npu_errf(d, NPU_ENOMEM, "out of memory writing launch.json");
    } else {
        char path[PATH_MAX];
        path_join(path, sizeof path, dir, "launch.json");
        st = npu_write_file_atomic(path, b.data, b.len, d);
    }
    npu_buf_free(&b);
    return st;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: npusim ref KERNEL [--OPTION VALUE ...] [--seed S] -o DIR\n"
               "         [--cores N] [--config FILE] [--mode func|perf|timing] [--kernels DIR]\n"
               "       npusim ref --list\n\n"
               "Writes DIR/<input>.npy, DIR/<output>_ref.npy (golden, computed in plain C), DIR/kernel.elf\n"
               "(the kernel assembled with the -D values it needs) and DIR/launch.json; then\n"
               "`npusim run DIR/launch.json` runs the kernel and checks its outputs. On a terminal a\n"
               "generator that takes over 2 s shows its progress on stderr (NPUSIM_PROGRESS=0|1).\n\n"
               "kernels:\n");
    for (const ref_gen *g = gens; g->name; g++)
        fprintf(f, "  %-12s %s\n  %-12s options: %s\n", g->name, g->summary, "", g->opts);
}

static int opt_allowed(const ref_gen *g, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = g->opts; *p;) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && !strncmp(p, name, n))
            return 1;
        p = e;
    }
    return 0;
}

int ref_cmd_ref(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--list")) {
        for (const ref_gen *g = gens; g->name; g++)
            printf("%s\n", g->name);
        return 0;
    }
    const ref_gen *g = ref_gen_find(argv[1]);
    if (!g) {
        fprintf(stderr, "npusim ref: unknown kernel '%s' (npusim ref --list)\n", argv[1]);
        return 2;
    }
    ref_ctx *c = npu_calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "npusim ref: out of memory\n");
        return 2;
    }
    c->gen = g;
    c->cores = 1;
    const char *outdir = NULL, *config = NULL, *mode = NULL, *kgiven = NULL;
    uint64_t seed = 1;
    int rc = 2;   /* every failure below exits 2 (docs/reliability.md) */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || i + 1 >= argc) {
            fprintf(stderr, "npusim ref %s: %s: expected --OPTION VALUE\n", g->name, a);
            goto out;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "-o")) {
            outdir = v;
        } else if (!strcmp(a, "--seed")) {
            char *e;
            seed = strtoull(v, &e, 0);
            if (e == v || *e) {
                fprintf(stderr, "npusim ref: --seed %s: not an integer\n", v);
                goto out;
            }
        } else if (!strcmp(a, "--cores")) {
            char *e;
            long n = strtol(v, &e, 0);
            if (e == v || *e || n < 1 || n > 1024) {
                fprintf(stderr, "npusim ref: --cores %s: need an integer 1..1024\n", v);
                goto out;
            }
            c->cores = (int)n;
        } else if (!strcmp(a, "--config")) {
            config = v;
        } else if (!strcmp(a, "--mode")) {
            if (strcmp(v, "func") && strcmp(v, "perf") && strcmp(v, "timing")) {
                fprintf(stderr, "npusim ref: --mode %s: need func, perf or timing\n", v);
                goto out;
            }
            mode = v;
        } else if (!strcmp(a, "--kernels")) {
            kgiven = v;
        } else if (a[0] == '-' && a[1] == '-' && opt_allowed(g, a + 2)) {
            if (c->nopt >= REF_MAX_OPTS) {
                fprintf(stderr, "npusim ref: too many options\n");
                goto out;
            }
            for (int k = 0; k < c->nopt; k++)
                if (!strcmp(c->opt[k].name, a + 2)) {
                    fprintf(stderr, "npusim ref %s: %s given twice\n", g->name, a);
                    goto out;
                }
            c->opt[c->nopt].name = a + 2;
            c->opt[c->nopt].val = v;
            c->nopt++;
        } else {
            fprintf(stderr, "npusim ref %s: unknown option %s (options: %s; and --seed -o --cores --config --mode --kernels)\n",
                    g->name, a, g->opts);
            goto out;
        }
    }
    if (!outdir) {
        fprintf(stderr, "npusim ref %s: -o DIR is required\n", g->name);
        goto out;
    }
    c->rng.s = seed;
    npu_diag d;
    npu_diag_clear(&d);
    npu_tty_line_start();
    npu_status st = g->fn(c, &d);
    npu_tty_line_end();
    if (st) {
        /* generator messages already start with "ref NAME:" by convention */
        if (!strncmp(d.msg, "ref ", 4))
            fprintf(stderr, "npusim %s\n", d.msg);
        else
            fprintf(stderr, "npusim ref %s: %s\n", g->name, d.msg);
        goto out;
    }
    if (!c->kernel[0]) {
        fprintf(stderr, "npusim ref %s: the generator named no kernel source\n", g->name);
        goto out;
    }
    if (mkdir(outdir, 0777) && errno != EEXIST) {
        fprintf(stderr, "npusim ref: mkdir %s: %s\n", outdir, strerror(errno));
        goto out;
    }
    char path[PATH_MAX], cfgabs[PATH_MAX];
    for (int i = 0; i < c->narg; i++) {
        ref_arg *a = &c->arg[i];
        if (a->kind == RA_SCALAR)
            continue;
        char fn[REF_NAME + 16];
        snprintf(fn, sizeof fn, a->kind == RA_IN ? "%s.npy" : "%s_ref.npy", a->name);
        path_join(path, sizeof path, outdir, fn);
        if ((st = npy_save(path, &a->t, &d))) {
            fprintf(stderr, "npusim ref: %s\n", d.msg);
            goto out;
        }
    }
    char kdir[PATH_MAX];
    find_kernels_dir(kgiven, kdir, sizeof kdir);
    path_join(path, sizeof path, outdir, "kernel.elf");
    if ((st = assemble(c, kdir, path, &d))) {
        fprintf(stderr, "npusim ref %s: %s\n", g->name, d.msg);
        goto out;
    }
    if (config) {
        if (!realpath(config, cfgabs)) {
            fprintf(stderr, "npusim ref: --config %s: %s\n", config, strerror(errno));
            goto out;
        }
        config = cfgabs;
    }
    if ((st = write_launch(c, outdir, config, mode, &d))) {
        fprintf(stderr, "npusim ref: %s\n", d.msg);
        goto out;
    }
    /* What was made, and the equivalent assembler command. */
    printf("ref %s: wrote %s/launch.json (%d core%s)\n", g->name, outdir, c->cores, c->cores == 1 ? "" : "s");
    printf("  npusim asm %s/%s -I %s/include", kdir, c->kernel, kdir);
    for (int i = 0; i < c->ndef; i++)
        printf(" -D %s=%lld", c->def[i].name, (long long)c->def[i].value);
    printf(" -o %s/kernel.elf\n", outdir);
    for (const char *p = (const char *)c->notes.data, *e = p + c->notes.len; p && p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        int len = (int)((nl ? nl : e) - p);
        printf("  %.*s\n", len, p);
        p += len + 1;
    }
    printf("  run: npusim run %s/launch.json\n", outdir);
    rc = 0;
out:
    for (int i = 0; i < c->narg; i++)
        npy_free(&c->arg[i].t);
    npu_buf_free(&c->notes);
    npu_free(c);
    return rc;
}
