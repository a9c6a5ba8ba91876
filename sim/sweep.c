/* sweep.c — points, records and processes of `npusim sweep` (sim/sweep.h,
 * docs/sweep.md). Each point runs as a separate process (the npusim binary
 * itself, `stat --json`), so a point that crashes, hangs or runs out of
 * memory costs only its own result, and the direct sweep, GNU parallel and
 * a Slurm array all run the very same command per point. */
#include "sim/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SWEEP_MAX_OUTPUT (64u << 20) /* a stat --json is kilobytes; bound a runaway child */

static char *dup_or_null(const char *s) { return s ? npu_strdup(s) : NULL; }

static void point_clear(sweep_point *p)
{
    npu_free(p->launch);
    npu_free(p->config);
    for (size_t i = 0; i < p->nset; i++) {
        npu_free(p->set[i].key);
        npu_free(p->set[i].val);
    }
    npu_free(p->set);
    memset(p, 0, sizeof *p);
}

void sweep_points_free(sweep_point *p, size_t n)
{
    if (!p)
        return;
    for (size_t i = 0; i < n; i++)
        point_clear(&p[i]);
    npu_free(p);
}

void sweep_spec_free(sweep_spec *s)
{
    npu_free(s->launch);
    npu_free(s->config);
    sweep_points_free(s->pts, s->npts);
    for (size_t i = 0; i < s->naxes; i++) {
        npu_free(s->axes[i].key);
        for (size_t j = 0; j < s->axes[i].nvals; j++)
            npu_free(s->axes[i].vals[j]);
        npu_free(s->axes[i].vals);
    }
    npu_free(s->axes);
    memset(s, 0, sizeof *s);
}

static npu_status oom(npu_diag *d) { return npu_errf(d, NPU_ENOMEM, "sweep: out of memory"); }

static int key_ok(const char *k, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(k[i] == '.' || k[i] == '_' || k[i] == '-' || (k[i] >= '0' && k[i] <= '9') ||
              (k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z')))
            return 0;
    return 1;
}

static npu_status axis_push(sweep_spec *s, const char *key, size_t klen, npu_diag *d,
                            sweep_axis **out)
{
    for (size_t i = 0; i < s->naxes; i++)
        if (strlen(s->axes[i].key) == klen && !memcmp(s->axes[i].key, key, klen))
            return npu_errf(d, NPU_EINVAL, "sweep: --set %.*s given twice (list every value once: KEY=V1,V2)",
                            (int)klen, key);
    sweep_axis *na = npu_realloc(s->axes, (s->naxes + 1) * sizeof *na);
    if (!na)
        return oom(d);
    s->axes = na;
    sweep_axis *a = &s->axes[s->naxes];
    memset(a, 0, sizeof *a);
    a->key = npu_malloc(klen + 1);
    if (!a->key)
        return oom(d);
    memcpy(a->key, key, klen);
    a->key[klen] = 0;
    s->naxes++;
    *out = a;
    return NPU_OK;
}

static npu_status axis_add_val(sweep_axis *a, const char *v, size_t n, npu_diag *d)
{
    char **nv = npu_realloc(a->vals, (a->nvals + 1) * sizeof *nv);
    if (!nv)
        return oom(d);
    a->vals = nv;
    char *c = npu_malloc(n + 1);
    if (!c)
        return oom(d);
    memcpy(c, v, n);
    c[n] = 0;
    a->vals[a->nvals++] = c;
    return NPU_OK;
}

npu_status sweep_add_axis(sweep_spec *s, const char *arg, int split, npu_diag *d)
{
    const char *eq = strchr(arg, '=');
    if (!eq || !key_ok(arg, (size_t)(eq - arg)))
        return npu_errf(d, NPU_EINVAL, "sweep: --set '%s': expected KEY=VALUE[,VALUE...] with a config key such as core.l1.size", arg);
    sweep_axis *a;
    npu_status st = axis_push(s, arg, (size_t)(eq - arg), d, &a);
    if (st)
        return st;
    const char *v = eq + 1;
    for (;;) {
        const char *e = split ? strchr(v, ',') : NULL;
        size_t n = e ? (size_t)(e - v) : strlen(v);
        if (n == 0)
            return npu_errf(d, NPU_EINVAL, "sweep: --set '%s': empty value", arg);
        if ((st = axis_add_val(a, v, n, d)))
            return st;
        if (!e)
            break;
        v = e + 1;
    }
    return NPU_OK;
}

/* ---- spec files ------------------------------------------------------- */

/* A value of a "set" entry as the text --set would take. */
static npu_status json_val_text(const cJSON *v, const char *where, char *buf, size_t cap, npu_diag *d)
{
    if (cJSON_IsString(v) && v->valuestring[0]) {
        if (strlen(v->valuestring) >= cap)
            return npu_errf(d, NPU_EFORMAT, "%s: value too long", where);
        snprintf(buf, cap, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 9007199254740992.0)
            snprintf(buf, cap, "%.0f", x);
        else
            snprintf(buf, cap, "%.17g", x);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else {
        return npu_errf(d, NPU_EFORMAT, "%s: expected a string, number or boolean value", where);
    }
    return NPU_OK;
}

/* Paths in a spec file are relative to the file's directory. */
static char *spec_path(const char *dir, const char *p)
{
    if (p[0] == '/' || !dir[0])
        return npu_strdup(p);
    size_t n = strlen(dir) + strlen(p) + 2;
    char *r = npu_malloc(n);
    if (r)
        snprintf(r, n, "%s/%s", dir, p);
    return r;
}

static npu_status spec_str(const cJSON *o, const char *name, const char *dir, const char *where,
                           char **out, npu_diag *d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v)
        return NPU_OK;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return npu_errf(d, NPU_EFORMAT, "%s: \"%s\" must be a non-empty string (a path)", where, name);
    npu_free(*out);
    *out = spec_path(dir, v->valuestring);
    return *out ? NPU_OK : oom(d);
}

npu_status sweep_load_spec(sweep_spec *s, const char *path, npu_diag *d)
{
    uint8_t *data;
    size_t len;
    npu_status st = npu_read_file(path, 0, 16u << 20, &data, &len, d);
    if (st)
        return st;
    cJSON *root = cJSON_ParseWithLength((const char *)data, len);
    npu_free(data);
    if (!root)
        return npu_errf(d, NPU_EFORMAT, "%s: not valid JSON", path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        dir[0] = 0;
    char where[4200], vbuf[1024];
    if (!cJSON_IsObject(root)) {
        st = npu_errf(d, NPU_EFORMAT, "%s: expected an object with \"launch\", \"config\", \"set\" or \"points\"", path);
        goto out;
    }
    for (const cJSON *k = root->child; k; k = k->next)
        if (strcmp(k->string, "launch") && strcmp(k->string, "config") && strcmp(k->string, "set") &&
            strcmp(k->string, "points")) {
            st = npu_errf(d, NPU_EFORMAT, "%s: unknown key \"%s\" (expected launch, config, set, points)",
                          path, k->string);
            goto out;
        }
    if ((st = spec_str(root, "launch", dir, path, &s->launch, d)) ||
        (st = spec_str(root, "config", dir, path, &s->config, d)))
        goto out;
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(root, "set");
    if (set) {
        if (!cJSON_IsObject(set)) {
            st = npu_errf(d, NPU_EFORMAT, "%s: \"set\" must be an object {\"KEY\": [values]}", path);
            goto out;
        }
        for (const cJSON *k = set->child; k; k = k->next) {
            snprintf(where, sizeof where, "%s: set.%s", path, k->string);
            if (!key_ok(k->string, strlen(k->string))) {
                st = npu_errf(d, NPU_EFORMAT, "%s: not a config key", where);
                goto out;
            }
            sweep_axis *a;
            if ((st = axis_push(s, k->string, strlen(k->string), d, &a)))
                goto out;
            const cJSON *v = k;
            if (cJSON_IsArray(k)) {
                if (!k->child) {
                    st = npu_errf(d, NPU_EFORMAT, "%s: empty value list", where);
                    goto out;
                }
                v = k->child;
            }
            for (; v; v = cJSON_IsArray(k) ? v->next : NULL) {
                if ((st = json_val_text(v, where, vbuf, sizeof vbuf, d)) ||
                    (st = axis_add_val(a, vbuf, strlen(vbuf), d)))
                    goto out;
            }
        }
    }
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
    if (pts) {
        if (!cJSON_IsArray(pts) || !pts->child) {
            st = npu_errf(d, NPU_EFORMAT, "%s: \"points\" must be a non-empty array of objects", path);
            goto out;
        }
        int i = 0;
        for (const cJSON *p = pts->child; p; p = p->next, i++) {
            snprintf(where, sizeof where, "%s: points[%d]", path, i);
            if (!cJSON_IsObject(p)) {
                st = npu_errf(d, NPU_EFORMAT, "%s: expected an object", where);
                goto out;
            }
            for (const cJSON *k = p->child; k; k = k->next)
                if (strcmp(k->string, "launch") && strcmp(k->string, "config") && strcmp(k->string, "set")) {
                    st = npu_errf(d, NPU_EFORMAT, "%s: unknown key \"%s\" (expected launch, config, set)",
                                  where, k->string);
                    goto out;
                }
            sweep_point *np = npu_realloc(s->pts, (s->npts + 1) * sizeof *np);
            if (!np) {
                st = oom(d);
                goto out;
            }
            s->pts = np;
            sweep_point *q = &s->pts[s->npts++];
            memset(q, 0, sizeof *q);
            if ((st = spec_str(p, "launch", dir, where, &q->launch, d)) ||
                (st = spec_str(p, "config", dir, where, &q->config, d)))
                goto out;
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(p, "set");
            if (ps && !cJSON_IsObject(ps)) {
                st = npu_errf(d, NPU_EFORMAT, "%s: \"set\" must be an object {\"KEY\": value}", where);
                goto out;
            }
            for (const cJSON *k = ps ? ps->child : NULL; k; k = k->next) {
                char w2[4400];
                snprintf(w2, sizeof w2, "%s.set.%s", where, k->string);
                if (!key_ok(k->string, strlen(k->string))) {
                    st = npu_errf(d, NPU_EFORMAT, "%s: not a config key", w2);
                    goto out;
                }
                if ((st = json_val_text(k, w2, vbuf, sizeof vbuf, d)))
                    goto out;
                sweep_kv *nk = npu_realloc(q->set, (q->nset + 1) * sizeof *nk);
                if (!nk) {
                    st = oom(d);
                    goto out;
                }
                q->set = nk;
                q->set[q->nset].key = npu_strdup(k->string);
                q->set[q->nset].val = npu_strdup(vbuf);
                if (!q->set[q->nset].key || !q->set[q->nset].val) {
                    npu_free(q->set[q->nset].key);
                    npu_free(q->set[q->nset].val);
                    st = oom(d);
                    goto out;
                }
                q->nset++;
            }
        }
    }
out:
    cJSON_Delete(root);
    return st;
}

npu_status sweep_expand(const sweep_spec *s, size_t max_points, sweep_point **out, size_t *n,
                        npu_diag *d)
{
    *out = NULL;
    *n = 0;
    size_t nbase = s->npts ? s->npts : 1, grid = 1;
    for (size_t i = 0; i < s->naxes; i++) {
        if (s->axes[i].nvals && grid > max_points / s->axes[i].nvals)
            return npu_errf(d, NPU_EINVAL, "sweep: more than %zu points (raise --max-points if meant)",
                            max_points);
        grid *= s->axes[i].nvals;
    }
    if (grid > max_points / nbase)
        return npu_errf(d, NPU_EINVAL, "sweep: more than %zu points (raise --max-points if meant)",
                        max_points);
    size_t total = nbase * grid;
    sweep_point *pts = npu_calloc(total, sizeof *pts);
    if (!pts)
        return oom(d);
    for (size_t b = 0; b < nbase; b++) {
        const sweep_point *bp = s->npts ? &s->pts[b] : NULL;
        const char *launch = bp && bp->launch ? bp->launch : s->launch;
        const char *config = bp && bp->config ? bp->config : s->config;
        if (!launch) {
            sweep_points_free(pts, total);
            if (s->npts)
                return npu_errf(d, NPU_EINVAL, "sweep: points[%zu] names no launch file (give --launch or \"launch\")", b);
            return npu_errf(d, NPU_EINVAL, "sweep: no kernel: give --launch LAUNCH.json (or a spec file with \"launch\")");
        }
        for (size_t g = 0; g < grid; g++) {
            sweep_point *p = &pts[b * grid + g];
            size_t nb = bp ? bp->nset : 0;
            p->launch = npu_strdup(launch);
            p->config = dup_or_null(config);
            p->set = npu_calloc(nb + s->naxes + 1, sizeof *p->set);
            if (!p->launch || (config && !p->config) || !p->set) {
                sweep_points_free(pts, total);
                return oom(d);
            }
            for (size_t i = 0; i < nb; i++) {
                p->set[p->nset].key = npu_strdup(bp->set[i].key);
                p->set[p->nset].val = npu_strdup(bp->set[i].val);
                p->nset++;
                if (!p->set[p->nset - 1].key || !p->set[p->nset - 1].val) {
                    sweep_points_free(pts, total);
                    return oom(d);
                }
            }
            /* mixed radix, the last axis fastest */
            size_t rem = g;
            size_t idx[64];
            if (s->naxes > 64) {
                sweep_points_free(pts, total);
                return npu_errf(d, NPU_EINVAL, "sweep: more than 64 --set keys");
            }
            for (size_t a = s->naxes; a-- > 0;) {
                idx[a] = rem % s->axes[a].nvals;
                rem /= s->axes[a].nvals;
            }
            for (size_t a = 0; a < s->naxes; a++) {
                p->set[p->nset].key = npu_strdup(s->axes[a].key);
                p->set[p->nset].val = npu_strdup(s->axes[a].vals[idx[a]]);
                p->nset++;
                if (!p->set[p->nset - 1].key || !p->set[p->nset - 1].val) {
                    sweep_points_free(pts, total);
                    return oom(d);
                }
            }
        }
    }
    *out = pts;
    *n = total;
    return NPU_OK;
}

/* ---- argv ------------------------------------------------------------- */

typedef struct argv_b { char **v; size_t n, cap; int oom; } argv_b;

static void av_push(argv_b *a, const char *s)
{
    if (a->oom)
        return;
    if (a->n + 2 > a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 32;
        char **nv = npu_realloc(a->v, nc * sizeof *nv);
        if (!nv) {
            a->oom = 1;
            return;
        }
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n] = npu_strdup(s);
    if (!a->v[a->n]) {
        a->oom = 1;
        return;
    }
    a->v[++a->n] = NULL;
}

static void av_push2(argv_b *a, const char *opt, const char *val)
{
    if (val) {
        av_push(a, opt);
        av_push(a, val);
    }
}

void sweep_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        npu_free(*p);
    npu_free(argv);
}

static npu_status av_done(argv_b *a, char ***out, npu_diag *d)
{
    if (a->oom || !a->v) {
        if (a->v) {
            a->v[a->n] = NULL;
            sweep_argv_free(a->v);
        }
        return oom(d);
    }
    *out = a->v;
    return NPU_OK;
}

/* The key "cores" of a point is not a config key: the kernel on every core
 * of an N-core machine, i.e. the launch's cores (--cores N) and the
 * machine's chip.cores = N, the latter first so that a chip.cores of the
 * point's own still wins for the machine. The last "cores" counts. */
static const char *point_cores(const sweep_point *p)
{
    const char *c = NULL;
    for (size_t i = 0; i < p->nset; i++)
        if (!strcmp(p->set[i].key, SWEEP_CORES_KEY))
            c = p->set[i].val;
    return c;
}

static void av_point(argv_b *a, const sweep_point *p, const sweep_opts *o)
{
    av_push(a, p->launch);
    av_push2(a, "--config", p->config);
    char kv[2200];
    const char *cores = point_cores(p);
    if (cores) {
        snprintf(kv, sizeof kv, "chip.cores=%s", cores);
        av_push2(a, "--set", kv);
    }
    for (size_t i = 0; i < p->nset; i++) {
        if (!strcmp(p->set[i].key, SWEEP_CORES_KEY))
            continue;
        snprintf(kv, sizeof kv, "%s=%s", p->set[i].key, p->set[i].val);
        av_push2(a, "--set", kv);
    }
    av_push2(a, "--cores", cores ? cores : o->cores);
    av_push2(a, "--mode", o->mode);
    av_push2(a, "--max-cycles", o->max_cycles);
}

npu_status sweep_worker_argv(const char *exe, const sweep_point *p, size_t index, size_t of,
                             const sweep_opts *o, const char *out, char ***argv, npu_diag *d)
{
    argv_b a = { 0 };
    char num[64];
    av_push(&a, exe);
    av_push(&a, "sweep");
    snprintf(num, sizeof num, "%zu", index);
    av_push2(&a, "--point", num);
    snprintf(num, sizeof num, "%zu", of);
    av_push2(&a, "--of", num);
    av_push2(&a, "--launch", p->launch);
    av_push2(&a, "--config", p->config);
    char kv[2200];
    for (size_t i = 0; i < p->nset; i++) {
        snprintf(kv, sizeof kv, "%s=%s", p->set[i].key, p->set[i].val);
        av_push2(&a, "--set", kv);
    }
    av_push2(&a, "-e", o->events);
    av_push2(&a, "-M", o->group);
    av_push2(&a, "--cores", o->cores);
    av_push2(&a, "--mode", o->mode);
    av_push2(&a, "--max-cycles", o->max_cycles);
    snprintf(num, sizeof num, "%g", o->timeout_s);
    av_push2(&a, "--timeout", num);
    if (o->verify)
        av_push(&a, "--verify");
    av_push2(&a, "-o", out);
    return av_done(&a, argv, d);
}

void sweep_shell_quote(npu_buf *b, const char *s)
{
    int plain = *s != 0;
    for (const char *c = s; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/=,:+@%", *c))
            plain = 0;
    if (plain) {
        npu_buf_append(b, s, strlen(s));
        return;
    }
    npu_buf_append(b, "'", 1);
    for (const char *c = s; *c; c++) {
        if (*c == '\'')
            npu_buf_append(b, "'\\''", 4);
        else
            npu_buf_append(b, c, 1);
    }
    npu_buf_append(b, "'", 1);
}

/* ---- processes -------------------------------------------------------- */

npu_status sweep_spawn(char *const argv[], pid_t *pid, int *out_fd, int *err_fd, npu_diag *d)
{
    int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
    if (pipe2(po, O_CLOEXEC) || (err_fd && pipe2(pe, O_CLOEXEC))) {
        int e = errno;
        if (po[0] >= 0) {
            close(po[0]);
            close(po[1]);
        }
        return npu_errf(d, NPU_EIO, "sweep: pipe: %s", strerror(e));
    }
    pid_t c = fork();
    if (c < 0) {
        int e = errno;
        close(po[0]);
        close(po[1]);
        if (err_fd) {
            close(pe[0]);
            close(pe[1]);
        }
        return npu_errf(d, NPU_EIO, "sweep: fork: %s", strerror(e));
    }
    if (c == 0) {
        /* the child: only async-signal-safe calls until exec */
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        dup2(po[1], 1);
        if (err_fd)
            dup2(pe[1], 2);
        execv(argv[0], argv);
        static const char msg[] = "sweep: exec of the npusim binary failed\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    close(po[1]);
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    *out_fd = po[0];
    if (err_fd) {
        close(pe[1]);
        fcntl(pe[0], F_SETFL, O_NONBLOCK);
        *err_fd = pe[0];
    }
    *pid = c;
    return NPU_OK;
}

/* Drain fd into b; 1 at EOF, 0 if more may come. Past the cap, bytes are dropped. */
static int drain(int fd, npu_buf *b)
{
    char tmp[65536];
    for (;;) {
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r > 0) {
            if (b->len + (size_t)r <= SWEEP_MAX_OUTPUT)
                npu_buf_append(b, tmp, (size_t)r);
            continue;
        }
        if (r == 0)
            return 1;
        if (errno == EINTR)
            continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
    }
}

typedef struct child_res {
    int exited, code, sig, timed_out;
    npu_buf out, err;
} child_res;

/* Run argv to completion (or until deadline, 0 = none), collecting both streams. */
static npu_status run_child(char *const argv[], double deadline, child_res *r, npu_diag *d)
{
    memset(r, 0, sizeof *r);
    pid_t pid;
    int fo, fe;
    npu_status st = sweep_spawn(argv, &pid, &fo, &fe, d);
    if (st)
        return st;
    int open_o = 1, open_e = 1;
    while (open_o || open_e) {
        struct pollfd pf[2];
        int n = 0;
        if (open_o)
            pf[n++] = (struct pollfd){ fo, POLLIN, 0 };
        if (open_e)
            pf[n++] = (struct pollfd){ fe, POLLIN, 0 };
        int ms = -1;
        if (deadline > 0 && !r->timed_out) {
            double left = deadline - npu_mono_s();
            if (left <= 0) {
                kill(pid, SIGKILL); /* our own child, by its pid */
                r->timed_out = 1;
                continue;
            }
            ms = left > 3600 ? 3600000 : (int)(left * 1000) + 1;
        }
        int k = poll(pf, (nfds_t)n, ms);
        if (k < 0 && errno != EINTR)
            break;
        if (open_o && drain(fo, &r->out))
            open_o = 0;
        if (open_e && drain(fe, &r->err))
            open_e = 0;
    }
    close(fo);
    close(fe);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(ws)) {
        r->exited = 1;
        r->code = WEXITSTATUS(ws);
    } else if (WIFSIGNALED(ws)) {
        r->sig = WTERMSIG(ws);
    }
    npu_buf_append(&r->out, "", 1); /* NUL-terminate */
    npu_buf_append(&r->err, "", 1);
    if (r->out.oom || r->err.oom) {
        npu_buf_free(&r->out);
        npu_buf_free(&r->err);
        return oom(d);
    }
    return NPU_OK;
}

static void child_free(child_res *r)
{
    npu_buf_free(&r->out);
    npu_buf_free(&r->err);
}

/* The first non-empty line of a child's stderr: its message (a fault or
 * deadlock report puts its one-line summary first, details after). */
static void first_line(const char *s, char *buf, size_t cap)
{
    while (*s == '\n' || *s == '\r' || *s == ' ')
        s++;
    size_t n = strcspn(s, "\r\n");
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
}

static cJSON *base_record(const sweep_point *p, size_t index, size_t of)
{
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return NULL;
    cJSON_AddNumberToObject(r, "index", (double)index);
    cJSON_AddNumberToObject(r, "of", (double)of);
    cJSON_AddStringToObject(r, "launch", p->launch);
    if (p->config)
        cJSON_AddStringToObject(r, "config", p->config);
    else
        cJSON_AddNullToObject(r, "config");
    cJSON *set = cJSON_AddObjectToObject(r, "set");
    for (size_t i = 0; set && i < p->nset; i++)
        cJSON_AddStringToObject(set, p->set[i].key, p->set[i].val);
    return r;
}

static void set_status(cJSON *r, const char *status, int code, const char *err)
{
    cJSON_AddStringToObject(r, "status", status);
    cJSON_AddNumberToObject(r, "exit", code);
    if (err && err[0])
        cJSON_AddStringToObject(r, "error", err);
}

/* Status of a finished child: "ok", "error" or "timeout" with its message. */
static const char *judge(const child_res *c, const char *what, char *msg, size_t cap, int *code)
{
    *code = c->exited ? c->code : -1;
    if (c->timed_out) {
        snprintf(msg, cap, "%s: killed at the timeout", what);
        return "timeout";
    }
    if (!c->exited) {
        snprintf(msg, cap, "%s: killed by signal %d", what, c->sig);
        return "error";
    }
    first_line((const char *)c->err.data, msg, cap);
    return c->code == 0 ? "ok" : "error";
}

npu_status sweep_run_point(const char *exe, const sweep_point *p, size_t index, size_t of,
                           const sweep_opts *o, cJSON **rec, npu_diag *d)
{
    *rec = NULL;
    double deadline = o->timeout_s > 0 ? npu_mono_s() + o->timeout_s : 0;
    argv_b a = { 0 };
    av_push(&a, exe);
    av_push(&a, "stat");
    av_push(&a, "--json");
    av_push2(&a, "-e", o->events);
    av_push2(&a, "-M", o->group);
    av_point(&a, p, o);
    char **argv = NULL;
    npu_status st = av_done(&a, &argv, d);
    if (st)
        return st;
    child_res c;
    st = run_child(argv, deadline, &c, d);
    sweep_argv_free(argv);
    if (st)
        return st;
    cJSON *r = base_record(p, index, of);
    if (!r) {
        child_free(&c);
        return oom(d);
    }
    char msg[512];
    int code;
    const char *status = judge(&c, "stat", msg, sizeof msg, &code);
    cJSON *sj = NULL;
    if (!strcmp(status, "ok")) {
        sj = cJSON_Parse((const char *)c.out.data);
        if (!sj || !cJSON_IsObject(sj)) {
            status = "error";
            snprintf(msg, sizeof msg, "stat --json printed no JSON object");
        }
    }
    child_free(&c);
    if (!strcmp(status, "ok") && o->verify) {
        argv_b b = { 0 };
        av_push(&b, exe);
        av_push(&b, "run");
        av_push(&b, "-q");
        av_point(&b, p, o);
        argv = NULL;
        if ((st = av_done(&b, &argv, d)) || (st = run_child(argv, deadline, &c, d))) {
            sweep_argv_free(argv);
            cJSON_Delete(sj);
            cJSON_Delete(r);
            return st;
        }
        sweep_argv_free(argv);
        status = judge(&c, "run", msg, sizeof msg, &code);
        if (!strcmp(status, "error") && c.exited && c.code == 1) {
            status = "fail"; /* an output mismatched its --expect */
            first_line((const char *)c.out.data, msg, sizeof msg);
        }
        child_free(&c);
    }
    set_status(r, status, code, strcmp(status, "ok") ? msg : NULL);
    if (sj) {
        const cJSON *cy = cJSON_GetObjectItemCaseSensitive(sj, "cycles");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(sj, "metrics");
        const cJSON *t = m ? cJSON_GetObjectItemCaseSensitive(m, "time_us") : NULL;
        if (cJSON_IsNumber(cy))
            cJSON_AddNumberToObject(r, "cycles", cy->valuedouble);
        if (cJSON_IsNumber(t))
            cJSON_AddNumberToObject(r, "time_us", t->valuedouble);
        cJSON *ev = cJSON_AddObjectToObject(r, "events");
        const cJSON *se = cJSON_GetObjectItemCaseSensitive(sj, "events");
        for (const cJSON *e = se ? se->child : NULL; ev && e; e = e->next) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
            if (cJSON_IsNumber(v))
                cJSON_AddNumberToObject(ev, e->string, v->valuedouble);
        }
        cJSON *mo = cJSON_AddObjectToObject(r, "metrics");
        for (const cJSON *e = m ? m->child : NULL; mo && e; e = e->next) {
            if (cJSON_IsNumber(e))
                cJSON_AddNumberToObject(mo, e->string, e->valuedouble);
            else if (cJSON_IsString(e))
                cJSON_AddStringToObject(mo, e->string, e->valuestring);
        }
        cJSON_Delete(sj);
    }
    *rec = r;
    return NPU_OK;
}

int sweep_record_ok(const cJSON *rec)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(rec, "status");
    return cJSON_IsString(s) && !strcmp(s->valuestring, "ok") ? 0 : 1;
}

/* ---- records and tables ---------------------------------------------- */

npu_status sweep_parse_record(const char *text, const char *where, cJSON **rec, npu_diag *d)
{
    *rec = NULL;
    cJSON *r = cJSON_Parse(text);
    if (!r)
        return npu_errf(d, NPU_EFORMAT, "%s: not a JSON sweep record", where);
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(r, "index");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(r, "of");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "status");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(r, "launch");
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(r, "set");
    if (!cJSON_IsObject(r) || !cJSON_IsNumber(i) || !cJSON_IsNumber(of) || i->valuedouble < 0 ||
        i->valuedouble != floor(i->valuedouble) || of->valuedouble <= i->valuedouble ||
        !cJSON_IsString(s) || !cJSON_IsString(l) || !cJSON_IsObject(set)) {
        cJSON_Delete(r);
        return npu_errf(d, NPU_EFORMAT,
                        "%s: not a sweep record (needs index < of, launch, set, status; made by npusim sweep --point)",
                        where);
    }
    *rec = r;
    return NPU_OK;
}

/* Names of the members of obj over all records, in order of first appearance. */
typedef struct names { const char **v; size_t n; int oom; } names;

static void names_add(names *ns, const char *s)
{
    for (size_t i = 0; i < ns->n; i++)
        if (!strcmp(ns->v[i], s))
            return;
    const char **nv = npu_realloc(ns->v, (ns->n + 1) * sizeof *nv);
    if (!nv) {
        ns->oom = 1;
        return;
    }
    ns->v = nv;
    ns->v[ns->n++] = s;
}

static void names_of(cJSON *const *recs, size_t n, const char *obj, names *ns)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(recs[i], obj);
        for (const cJSON *e = o ? o->child : NULL; e; e = e->next)
            names_add(ns, e->string);
    }
}

static void csv_field(npu_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r") && s[0] != ' ') {
        npu_buf_append(b, s, strlen(s));
        return;
    }
    npu_buf_append(b, "\"", 1);
    for (const char *c = s; *c; c++) {
        if (*c == '"')
            npu_buf_append(b, "\"", 1);
        npu_buf_append(b, c, 1);
    }
    npu_buf_append(b, "\"", 1);
}

static void csv_value(npu_buf *b, const cJSON *v)
{
    if (cJSON_IsString(v)) {
        csv_field(b, v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 9007199254740992.0)
            npu_buf_printf(b, "%.0f", x);
        else
            npu_buf_printf(b, "%.15g", x);
    }
}

npu_status sweep_write_csv(cJSON *const *recs, size_t n, npu_buf *out, npu_diag *d)
{
    names keys = { 0 }, evs = { 0 }, mets = { 0 };
    names_of(recs, n, "set", &keys);
    names_of(recs, n, "events", &evs);
    names_of(recs, n, "metrics", &mets);
    if (keys.oom || evs.oom || mets.oom) {
        npu_free(keys.v);
        npu_free(evs.v);
        npu_free(mets.v);
        return oom(d);
    }
    npu_buf_printf(out, "index,launch,config");
    for (size_t i = 0; i < keys.n; i++) {
        npu_buf_append(out, ",", 1);
        csv_field(out, keys.v[i]);
    }
    npu_buf_printf(out, ",status,exit,cycles,time_us");
    for (size_t i = 0; i < evs.n; i++) {
        /* stat's "cycles" event (summed over cores) is not the chip's cycles column */
        npu_buf_printf(out, !strcmp(evs.v[i], "cycles") || !strcmp(evs.v[i], "status") ||
                                    !strcmp(evs.v[i], "exit") || !strcmp(evs.v[i], "time_us")
                                ? ",event."
                                : ",");
        csv_field(out, evs.v[i]);
    }
    for (size_t i = 0; i < mets.n; i++) {
        if (!strcmp(mets.v[i], "time_us"))
            continue;
        npu_buf_printf(out, ",metric.");
        csv_field(out, mets.v[i]);
    }
    npu_buf_printf(out, ",error\n");
    for (size_t r = 0; r < n; r++) {
        const cJSON *rec = recs[r];
        csv_value(out, cJSON_GetObjectItemCaseSensitive(rec, "index"));
        npu_buf_append(out, ",", 1);
        csv_value(out, cJSON_GetObjectItemCaseSensitive(rec, "launch"));
        npu_buf_append(out, ",", 1);
        csv_value(out, cJSON_GetObjectItemCaseSensitive(rec, "config"));
        const cJSON *set = cJSON_GetObjectItemCaseSensitive(rec, "set");
        for (size_t i = 0; i < keys.n; i++) {
            npu_buf_append(out, ",", 1);
            csv_value(out, cJSON_GetObjectItemCaseSensitive(set, keys.v[i]));
        }
        static const char *const fixed[4] = { "status", "exit", "cycles", "time_us" };
        for (int i = 0; i < 4; i++) {
            npu_buf_append(out, ",", 1);
            csv_value(out, cJSON_GetObjectItemCaseSensitive(rec, fixed[i]));
        }
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(rec, "events");
        for (size_t i = 0; i < evs.n; i++) {
            npu_buf_append(out, ",", 1);
            csv_value(out, cJSON_GetObjectItemCaseSensitive(ev, evs.v[i]));
        }
        const cJSON *me = cJSON_GetObjectItemCaseSensitive(rec, "metrics");
        for (size_t i = 0; i < mets.n; i++) {
            if (strcmp(mets.v[i], "time_us")) {
                npu_buf_append(out, ",", 1);
                csv_value(out, cJSON_GetObjectItemCaseSensitive(me, mets.v[i]));
            }
        }
        npu_buf_append(out, ",", 1);
        csv_value(out, cJSON_GetObjectItemCaseSensitive(rec, "error"));
        npu_buf_append(out, "\n", 1);
    }
    npu_free(keys.v);
    npu_free(evs.v);
    npu_free(mets.v);
    return out->oom ? oom(d) : NPU_OK;
}

npu_status sweep_write_json(cJSON *const *recs, size_t n, npu_buf *out, npu_diag *d)
{
    npu_buf_printf(out, "{\"points\": [");
    for (size_t i = 0; i < n; i++) {
        char *s = cJSON_PrintUnformatted(recs[i]);
        if (!s)
            return oom(d);
        npu_buf_printf(out, "%s\n  %s", i ? "," : "", s);
        cJSON_free(s);
    }
    npu_buf_printf(out, "\n]}\n");
    return out->oom ? oom(d) : NPU_OK;
}
