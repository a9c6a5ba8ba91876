/* launch.c — the launch descriptor: strict launch-file (JSON) reader, the
 * equivalent command-line flags, and the machine a launch runs on. See
 * launch.h and docs/launch.md. */
#include "frontend/launch.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "isa/isa_fp.h"

/* ---- small helpers ------------------------------------------------------------ */

const char *launch_mode_name(launch_mode m)
{
    switch (m) {
    case LAUNCH_MODE_PERF: return "perf";
    case LAUNCH_MODE_FUNC: return "func";
    case LAUNCH_MODE_TIMING: return "timing";
    }
    return "?";
}

const char *launch_arg_kind_name(launch_arg_kind k)
{
    switch (k) {
    case LAUNCH_ARG_IN: return "in";
    case LAUNCH_ARG_OUT: return "out";
    case LAUNCH_ARG_INOUT: return "inout";
    case LAUNCH_ARG_SCALAR: return "scalar";
    }
    return "?";
}

static int mode_from_name(const char *s)
{
    for (int m = LAUNCH_MODE_PERF; m <= LAUNCH_MODE_TIMING; m++)
        if (strcmp(s, launch_mode_name((launch_mode)m)) == 0) return m;
    return -1;
}

static int kind_from_name(const char *s)
{
    for (int k = LAUNCH_ARG_IN; k <= LAUNCH_ARG_SCALAR; k++)
        if (strcmp(s, launch_arg_kind_name((launch_arg_kind)k)) == 0) return k;
    return -1;
}

int launch_dtype_from_name(const char *name)
{
    /* isa_fp knows the suffixes and the numpy / ml_dtypes names */
    return name ? isa_dtype_from_name(name) : -1;
}

static npu_status oom(npu_diag *d) { return npu_errf(d, NPU_ENOMEM, "out of memory"); }

/* Replace *dst with a copy of src (NULL clears). */
static npu_status set_str(char **dst, const char *src, npu_diag *d)
{
    char *c = NULL;
    if (src && !(c = npu_strdup(src))) return oom(d);
    npu_free(*dst);
    *dst = c;
    return NPU_OK;
}

/* dir/p, unless p is absolute or dir is empty. */
static npu_status resolve(char **dst, const char *dir, const char *p, npu_diag *d)
{
    if (!dir || !*dir || p[0] == '/') return set_str(dst, p, d);
    size_t n = strlen(dir) + strlen(p) + 2;
    char *c = npu_malloc(n);
    if (!c) return oom(d);
    snprintf(c, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", p);
    npu_free(*dst);
    *dst = c;
    return NPU_OK;
}

static void free_arg(launch_arg *a)
{
    npu_free(a->name);
    npu_free(a->file);
    npu_free(a->save);
    memset(a, 0, sizeof *a);
}

static void free_expect(launch_expect *e)
{
    npu_free(e->name);
    npu_free(e->file);
    memset(e, 0, sizeof *e);
}

void launch_free(launch_desc *l)
{
    if (!l) return;
    npu_free(l->kernel);
    npu_free(l->entry);
    npu_free(l->config);
    for (size_t i = 0; i < l->nsets; i++) {
        npu_free(l->sets[i].key);
        npu_free(l->sets[i].value);
    }
    npu_free(l->sets);
    for (size_t i = 0; i < l->nargs; i++) free_arg(&l->args[i]);
    npu_free(l->args);
    for (size_t i = 0; i < l->nexpects; i++) free_expect(&l->expects[i]);
    npu_free(l->expects);
    memset(l, 0, sizeof *l);
}

/* Grow an array by one zeroed element; returns it or NULL. */
static void *grow(void **arr, size_t *n, size_t elem)
{
    void *p = npu_realloc(*arr, (*n + 1) * elem);
    if (!p) return NULL;
    *arr = p;
    char *e = (char *)p + *n * elem;
    memset(e, 0, elem);
    (*n)++;
    return e;
}

static npu_status add_set(launch_desc *l, const char *key, const char *value, npu_diag *d)
{
    char *k = npu_strdup(key), *v = npu_strdup(value);
    launch_set *s = k && v ? grow((void **)&l->sets, &l->nsets, sizeof *s) : NULL;
    if (!s) {
        npu_free(k);
        npu_free(v);
        return oom(d);
    }
    s->key = k;
    s->value = v;
    return NPU_OK;
}

/* Put a (moved in) into l: replaces an argument of the same name in place,
 * else appends. a is zeroed either way. */
static npu_status put_arg(launch_desc *l, launch_arg *a, npu_diag *d)
{
    for (size_t i = 0; i < l->nargs; i++)
        if (strcmp(l->args[i].name, a->name) == 0) {
            free_arg(&l->args[i]);
            l->args[i] = *a;
            memset(a, 0, sizeof *a);
            return NPU_OK;
        }
    launch_arg *slot = grow((void **)&l->args, &l->nargs, sizeof *slot);
    if (!slot) {
        free_arg(a);
        return oom(d);
    }
    *slot = *a;
    memset(a, 0, sizeof *a);
    return NPU_OK;
}

static npu_status put_expect(launch_desc *l, launch_expect *e, npu_diag *d)
{
    for (size_t i = 0; i < l->nexpects; i++)
        if (strcmp(l->expects[i].name, e->name) == 0) {
            free_expect(&l->expects[i]);
            l->expects[i] = *e;
            memset(e, 0, sizeof *e);
            return NPU_OK;
        }
    launch_expect *slot = grow((void **)&l->expects, &l->nexpects, sizeof *slot);
    if (!slot) {
        free_expect(e);
        return oom(d);
    }
    *slot = *e;
    memset(e, 0, sizeof *e);
    return NPU_OK;
}

/* ---- text values -------------------------------------------------------------- */

/* An integer in decimal or 0x hex with optional sign, exactly. */
static int parse_i64(const char *s, int64_t *out)
{
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    if (!isdigit((unsigned char)*p)) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 0);
    if (errno == ERANGE || *end || end == s) return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!*s || isspace((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (*end || end == s || errno == ERANGE || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* Unsigned count in lo..hi: integers, also written like 1e9. */
static int parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    int64_t i;
    double f;
    if (parse_i64(s, &i) == 0) {
        if (i < 0 || (uint64_t)i < lo || (uint64_t)i > hi) return -1;
        *out = (uint64_t)i;
        return 0;
    }
    if (parse_double(s, &f) == 0 && f == floor(f) && f >= (double)lo && f <= (double)hi) {
        *out = (uint64_t)f;
        return 0;
    }
    return -1;
}

/* A scalar's value into a; dtype < 0 picks S64 or F32 from the text. */
static npu_status scalar_value(launch_arg *a, int dtype, int have_int, int64_t iv, double fv,
                               const char *ctx, npu_diag *d)
{
    if (dtype < 0) dtype = have_int ? ISA_DT_S64 : ISA_DT_F32;
    a->dtype = dtype;
    int kind = isa_dtype_kind((isa_dtype)dtype);
    if (kind == 'f') {
        a->is_float = 1;
        a->fval = have_int ? (double)iv : fv;
        return NPU_OK;
    }
    if (!have_int)
        return npu_errf(d, NPU_EINVAL, "%s: value: expected an integer for dtype %s, got %g", ctx,
                        isa_dtype_suffix((isa_dtype)dtype), fv);
    int bits = 8 * isa_dtype_bytes((isa_dtype)dtype);
    int ok;
    if (kind == 'u') ok = iv >= 0 && (bits >= 64 || (uint64_t)iv < (1ull << bits));
    else ok = bits >= 64 || (iv >= -(1ll << (bits - 1)) && iv < (1ll << (bits - 1)));
    if (!ok)
        return npu_errf(d, NPU_EINVAL, "%s: value: %lld does not fit dtype %s", ctx,
                        (long long)iv, isa_dtype_suffix((isa_dtype)dtype));
    a->is_float = 0;
    a->ival = iv;
    return NPU_OK;
}

/* "float32[1024,1024]" (or "float32[]" for a 0-d tensor) into a. */
static npu_status parse_dtype_shape(launch_arg *a, const char *s, const char *ctx, npu_diag *d)
{
    const char *br = strchr(s, '[');
    size_t n = strlen(s);
    if (!br || n < 2 || s[n - 1] != ']')
        return npu_errf(d, NPU_EINVAL, "%s: expected DTYPE[D0,D1,...], got '%s'", ctx, s);
    char name[64];
    if ((size_t)(br - s) >= sizeof name)
        return npu_errf(d, NPU_EINVAL, "%s: unknown dtype in '%s'", ctx, s);
    memcpy(name, s, (size_t)(br - s));
    name[br - s] = 0;
    int dt = launch_dtype_from_name(name);
    if (dt < 0)
        return npu_errf(d, NPU_EINVAL,
                        "%s: unknown dtype '%s' (numpy names: float32, float16, bfloat16, "
                        "float8_e4m3fn, float8_e5m2, int32, int16, int8, uint8, ...)",
                        ctx, name);
    a->dtype = dt;
    a->ndim = 0;
    const char *p = br + 1;
    if (*p == ']') return NPU_OK;
    for (;;) {
        if (a->ndim == LAUNCH_MAX_DIMS)
            return npu_errf(d, NPU_EINVAL, "%s: more than %d dimensions in '%s'", ctx,
                            LAUNCH_MAX_DIMS, s);
        if (!isdigit((unsigned char)*p))
            return npu_errf(d, NPU_EINVAL, "%s: bad shape in '%s' (dimensions are positive integers)",
                            ctx, s);
        errno = 0;
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno == ERANGE || v == 0 || v > (1ull << 40))
            return npu_errf(d, NPU_EINVAL, "%s: bad dimension in '%s' (1..2^40)", ctx, s);
        a->shape[a->ndim++] = v;
        p = end;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == ']' && p[1] == 0) return NPU_OK;
        return npu_errf(d, NPU_EINVAL, "%s: bad shape in '%s'", ctx, s);
    }
}

/* ---- JSON ----------------------------------------------------------------------- */

static const char *allowed_name(size_t i, void *ctx)
{
    return ((const char *const *)ctx)[i];
}

/* Every member of obj must be in allowed (NULL-terminated) and appear once. */
static npu_status check_keys(const cJSON *obj, const char *const *allowed, const char *where,
                             const char *ctx, npu_diag *d)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        const char *name = c->string ? c->string : "";
        if (npu_json_dup_key(obj, c))
            return npu_errf(d, NPU_EINVAL, "%s: %s%s%s: duplicate key", where, ctx, *ctx ? "." : "", name);
        if (name[0] == '_') continue;  /* "_note": a comment */
        size_t n = 0;
        int ok = 0;
        for (; allowed[n]; n++)
            ok |= strcmp(allowed[n], name) == 0;
        if (!ok) {
            char sug[256];
            npu_suggest(name, n, allowed_name, (void *)allowed, NULL, sug, sizeof sug);
            return npu_errf(d, NPU_EINVAL, "%s: %s%s%s: unknown key%s", where, ctx, *ctx ? "." : "", name, sug);
        }
    }
    return NPU_OK;
}

static void describe(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsNumber(v)) snprintf(buf, n, "%g", v->valuedouble);
    else if (cJSON_IsString(v)) snprintf(buf, n, "the string \"%.80s\"", v->valuestring);
    else if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v)) snprintf(buf, n, "null");
    else if (cJSON_IsArray(v)) snprintf(buf, n, "an array");
    else snprintf(buf, n, "an object");
}

static npu_status type_error(const char *where, const char *ctx, const char *key,
                             const char *expected, const cJSON *v, npu_diag *d)
{
    char got[128];
    describe(v, got, sizeof got);
    return npu_errf(d, NPU_EINVAL, "%s: %s%s%s: expected %s, got %s", where, ctx,
                    *ctx ? "." : "", key, expected, got);
}

/* A non-empty string member, or NULL (error set) when wrong. */
static const char *get_string(const cJSON *obj, const char *key, int required, const char *where,
                              const char *ctx, npu_status *st, npu_diag *d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *st = NPU_OK;
    if (!v) {
        if (required)
            *st = npu_errf(d, NPU_EINVAL, "%s: %s%s%s: missing", where, ctx, *ctx ? "." : "", key);
        return NULL;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0]) {
        *st = type_error(where, ctx, key, "a non-empty string", v, d);
        return NULL;
    }
    return v->valuestring;
}

static npu_status get_count(const cJSON *obj, const char *key, uint64_t lo, uint64_t hi,
                            const char *where, uint64_t *out, int *present, npu_diag *d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *present = v != NULL;
    if (!v) return NPU_OK;
    char exp[96];
    snprintf(exp, sizeof exp, "an integer in %llu..%llu", (unsigned long long)lo,
             (unsigned long long)hi);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return type_error(where, "", key, exp, v, d);
    *out = (uint64_t)v->valuedouble;
    return NPU_OK;
}

static npu_status get_tol(const cJSON *obj, const char *key, const char *where, const char *ctx,
                          double *out, int *present, npu_diag *d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *present = v != NULL;
    if (!v) return NPU_OK;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble))
        return type_error(where, ctx, key, "a number >= 0", v, d);
    *out = v->valuedouble;
    return NPU_OK;
}

/* Shortest text of a JSON scalar, for set values. */
static int json_scalar_text(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsString(v)) snprintf(buf, n, "%s", v->valuestring);
    else if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 9007199254740992.0) snprintf(buf, n, "%.0f", x);
        else
            for (int prec = 15; prec <= 17; prec++) {
                snprintf(buf, n, "%.*g", prec, x);
                if (strtod(buf, NULL) == x) break;
            }
    } else return -1;
    return 0;
}

static npu_status parse_arg(const cJSON *o, size_t idx, const char *where, const char *dir,
                            launch_arg *a, npu_diag *d)
{
    char ctx[96];
    snprintf(ctx, sizeof ctx, "args[%zu]", idx);
    if (!cJSON_IsObject(o)) return type_error(where, "", ctx, "an object", o, d);
    static const char *const all[] = { "name", "kind", "file", "save", "dtype", "shape", "value",
                                       NULL };
    npu_status s = check_keys(o, all, where, ctx, d);
    if (s != NPU_OK) return s;
    const char *name = get_string(o, "name", 1, where, ctx, &s, d);
    if (!name) return s;
    snprintf(ctx, sizeof ctx, "args[%zu] (%.40s)", idx, name);
    const char *kind = get_string(o, "kind", 1, where, ctx, &s, d);
    if (!kind) return s;
    int k = kind_from_name(kind);
    if (k < 0)
        return npu_errf(d, NPU_EINVAL,
                        "%s: %s.kind: expected one of \"in\", \"out\", \"inout\", \"scalar\", "
                        "got \"%s\"",
                        where, ctx, kind);
    a->kind = (launch_arg_kind)k;
    a->dtype = -1;
    if ((s = set_str(&a->name, name, d)) != NPU_OK) return s;
    /* which members apply to which kind */
    static const char *const member[] = { "file", "save", "dtype", "shape", "value" };
    static const char use[4][5] = {
        /* file save dtype shape value;  2 = required, 1 = optional, 0 = not allowed */
        [LAUNCH_ARG_IN] = { 2, 0, 0, 0, 0 },
        [LAUNCH_ARG_OUT] = { 1, 0, 2, 2, 0 },
        [LAUNCH_ARG_INOUT] = { 2, 1, 0, 0, 0 },
        [LAUNCH_ARG_SCALAR] = { 0, 0, 1, 0, 2 },
    };
    for (int i = 0; i < 5; i++) {
        int here = cJSON_GetObjectItemCaseSensitive(o, member[i]) != NULL;
        if (here && !use[k][i])
            return npu_errf(d, NPU_EINVAL, "%s: %s.%s: not allowed for kind \"%s\"", where, ctx,
                            member[i], kind);
        if (!here && use[k][i] == 2)
            return npu_errf(d, NPU_EINVAL, "%s: %s.%s: missing (required for kind \"%s\")", where,
                            ctx, member[i], kind);
    }
    const char *file = get_string(o, "file", 0, where, ctx, &s, d);
    if (s != NPU_OK) return s;
    if (file && (s = resolve(&a->file, dir, file, d)) != NPU_OK) return s;
    const char *save = get_string(o, "save", 0, where, ctx, &s, d);
    if (s != NPU_OK) return s;
    if (save && (s = resolve(&a->save, dir, save, d)) != NPU_OK) return s;
    int dtype = -1;
    const char *dtname = get_string(o, "dtype", 0, where, ctx, &s, d);
    if (s != NPU_OK) return s;
    if (dtname && (dtype = launch_dtype_from_name(dtname)) < 0)
        return npu_errf(d, NPU_EINVAL,
                        "%s: %s.dtype: unknown dtype \"%s\" (numpy names: float32, float16, "
                        "bfloat16, float8_e4m3fn, float8_e5m2, int32, int16, int8, uint8, ...)",
                        where, ctx, dtname);
    if (k == LAUNCH_ARG_OUT) {
        a->dtype = dtype;
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(o, "shape");
        if (!cJSON_IsArray(sh))
            return type_error(where, ctx, "shape", "an array of positive integers", sh, d);
        int nd = cJSON_GetArraySize(sh);
        if (nd > LAUNCH_MAX_DIMS)
            return npu_errf(d, NPU_EINVAL, "%s: %s.shape: more than %d dimensions", where, ctx,
                            LAUNCH_MAX_DIMS);
        a->ndim = 0;
        for (const cJSON *e = sh->child; e; e = e->next) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) ||
                e->valuedouble < 1 || e->valuedouble > 1099511627776.0)
                return type_error(where, ctx, "shape", "an array of positive integers", e, d);
            a->shape[a->ndim++] = (uint64_t)e->valuedouble;
        }
    }
    if (k == LAUNCH_ARG_SCALAR) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "value");
        int64_t iv = 0;
        double fv = 0;
        int have_int;
        if (cJSON_IsNumber(v)) {
            fv = v->valuedouble;
            have_int = fv == floor(fv) && fabs(fv) < 9007199254740992.0;
            iv = have_int ? (int64_t)fv : 0;
            if (!isfinite(fv)) return type_error(where, ctx, "value", "a number", v, d);
        } else if (cJSON_IsString(v)) {
            /* exact 64-bit integers (beyond 2^53) as strings: "0xffffffffffffffff" */
            if (parse_i64(v->valuestring, &iv) == 0) have_int = 1;
            else if (parse_double(v->valuestring, &fv) == 0) have_int = 0;
            else return type_error(where, ctx, "value", "a number", v, d);
        } else {
            return type_error(where, ctx, "value", "a number", v, d);
        }
        char vctx[128];
        snprintf(vctx, sizeof vctx, "%s: %s", where, ctx);
        if ((s = scalar_value(a, dtype, have_int, iv, fv, vctx, d)) != NPU_OK) return s;
    }
    return NPU_OK;
}

/* Parse a launch file's root object into the fresh descriptor f. */
static npu_status parse_root(launch_desc *f, const cJSON *root, const char *where,
                             const char *dir, npu_diag *d)
{
    static const char *const top[] = { "version", "kernel", "entry", "cores", "config", "set",
                                       "mode", "max_cycles", "args", "expect", "rtol", "atol",
                                       NULL };
    npu_status s = check_keys(root, top, where, "", d);
    if (s != NPU_OK) return s;
    const char *str;
    if ((str = get_string(root, "kernel", 0, where, "", &s, d))) {
        if ((s = resolve(&f->kernel, dir, str, d)) != NPU_OK) return s;
        f->given |= LAUNCH_GIVEN_KERNEL;
    } else if (s != NPU_OK) return s;
    if ((str = get_string(root, "entry", 0, where, "", &s, d))) {
        if ((s = set_str(&f->entry, str, d)) != NPU_OK) return s;
        f->given |= LAUNCH_GIVEN_ENTRY;
    } else if (s != NPU_OK) return s;
    if ((str = get_string(root, "config", 0, where, "", &s, d))) {
        if ((s = resolve(&f->config, dir, str, d)) != NPU_OK) return s;
        f->given |= LAUNCH_GIVEN_CONFIG;
    } else if (s != NPU_OK) return s;
    if ((str = get_string(root, "mode", 0, where, "", &s, d))) {
        int m = mode_from_name(str);
        if (m < 0)
            return npu_errf(d, NPU_EINVAL,
                            "%s: mode: expected one of \"func\", \"perf\", \"timing\", got \"%s\"",
                            where, str);
        f->mode = (launch_mode)m;
        f->given |= LAUNCH_GIVEN_MODE;
    } else if (s != NPU_OK) return s;
    const cfg_key_info *ck = cfg_key_find("chip.cores");
    int present;
    if ((s = get_count(root, "cores", 1, ck ? (uint64_t)ck->max : 1024, where, &f->cores,
                       &present, d)) != NPU_OK)
        return s;
    if (present) f->given |= LAUNCH_GIVEN_CORES;
    if ((s = get_count(root, "max_cycles", 1, 1000000000000000ull, where, &f->max_cycles,
                       &present, d)) != NPU_OK)
        return s;
    if (present) f->given |= LAUNCH_GIVEN_MAX_CYCLES;
    if ((s = get_tol(root, "rtol", where, "", &f->rtol, &present, d)) != NPU_OK) return s;
    if (present) f->given |= LAUNCH_GIVEN_RTOL;
    if ((s = get_tol(root, "atol", where, "", &f->atol, &present, d)) != NPU_OK) return s;
    if (present) f->given |= LAUNCH_GIVEN_ATOL;

    const cJSON *set = cJSON_GetObjectItemCaseSensitive(root, "set");
    if (set) {
        if (!cJSON_IsObject(set)) return type_error(where, "", "set", "an object", set, d);
        cfg_machine *scratch = npu_malloc(sizeof *scratch);
        if (!scratch) return oom(d);
        cfg_default(scratch);
        for (const cJSON *c = set->child; c && s == NPU_OK; c = c->next) {
            char val[256];
            if (npu_json_dup_key(set, c)) {
                s = npu_errf(d, NPU_EINVAL, "%s: set.%s: duplicate key", where, c->string);
                break;
            }
            if (c->string[0] == '_') continue;
            if (json_scalar_text(c, val, sizeof val) != 0) {
                s = type_error(where, "set", c->string, "a string, number or boolean", c, d);
                break;
            }
            /* check the key and value now, so the message names this file */
            s = cfg_set(scratch, c->string, val, d);
            if (s != NPU_OK) npu_diag_prefix(d, "%s: set", where);
            else s = add_set(f, c->string, val, d);
        }
        npu_free(scratch);
        if (s != NPU_OK) return s;
    }

    const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
    if (args) {
        if (!cJSON_IsArray(args)) return type_error(where, "", "args", "an array", args, d);
        size_t idx = 0;
        for (const cJSON *c = args->child; c; c = c->next, idx++) {
            launch_arg a = { 0 };
            s = parse_arg(c, idx, where, dir, &a, d);
            for (size_t i = 0; s == NPU_OK && i < f->nargs; i++)
                if (strcmp(f->args[i].name, a.name) == 0)
                    s = npu_errf(d, NPU_EINVAL, "%s: args[%zu]: duplicate argument name \"%s\"",
                                 where, idx, a.name);
            if (s == NPU_OK) s = put_arg(f, &a, d);
            free_arg(&a);
            if (s != NPU_OK) return s;
        }
    }

    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(root, "expect");
    if (exp) {
        if (!cJSON_IsObject(exp)) return type_error(where, "", "expect", "an object", exp, d);
        static const char *const ekeys[] = { "file", "rtol", "atol", NULL };
        for (const cJSON *c = exp->child; c; c = c->next) {
            if (c->string[0] == '_') continue;
            char ctx[96];
            snprintf(ctx, sizeof ctx, "expect.%.60s", c->string);
            if (npu_json_dup_key(exp, c))
                return npu_errf(d, NPU_EINVAL, "%s: %s: duplicate key", where, ctx);
            launch_expect e = { 0 };
            if ((s = set_str(&e.name, c->string, d)) != NPU_OK) return s;
            if (cJSON_IsString(c) && c->valuestring[0]) {  /* "C": "ref.npy" */
                s = resolve(&e.file, dir, c->valuestring, d);
            } else if (cJSON_IsObject(c)) {
                s = check_keys(c, ekeys, where, ctx, d);
                const char *file = s == NPU_OK ? get_string(c, "file", 1, where, ctx, &s, d) : NULL;
                if (file) s = resolve(&e.file, dir, file, d);
                if (s == NPU_OK) s = get_tol(c, "rtol", where, ctx, &e.rtol, &e.has_rtol, d);
                if (s == NPU_OK) s = get_tol(c, "atol", where, ctx, &e.atol, &e.has_atol, d);
            } else {
                s = type_error(where, "expect", c->string,
                               "an object {file, rtol, atol} or a file name", c, d);
            }
            if (s == NPU_OK) s = put_expect(f, &e, d);
            free_expect(&e);
            if (s != NPU_OK) return s;
        }
    }
    return NPU_OK;
}

/* Move what file f gives into l where l does not give it (l wins). f is
 * consumed (left empty, still to be launch_free'd). */
static npu_status merge_under(launch_desc *l, launch_desc *f, npu_diag *d)
{
#define TAKE_STR(bit, field)                      \
    if (!(l->given & (bit)) && (f->given & (bit))) { \
        npu_free(l->field);                       \
        l->field = f->field;                      \
        f->field = NULL;                          \
        l->given |= (bit);                        \
    }
#define TAKE_VAL(bit, field)                      \
    if (!(l->given & (bit)) && (f->given & (bit))) { \
        l->field = f->field;                      \
        l->given |= (bit);                        \
    }
    TAKE_STR(LAUNCH_GIVEN_KERNEL, kernel)
    TAKE_STR(LAUNCH_GIVEN_ENTRY, entry)
    TAKE_STR(LAUNCH_GIVEN_CONFIG, config)
    TAKE_VAL(LAUNCH_GIVEN_CORES, cores)
    TAKE_VAL(LAUNCH_GIVEN_MODE, mode)
    TAKE_VAL(LAUNCH_GIVEN_MAX_CYCLES, max_cycles)
    TAKE_VAL(LAUNCH_GIVEN_RTOL, rtol)
    TAKE_VAL(LAUNCH_GIVEN_ATOL, atol)
#undef TAKE_STR
#undef TAKE_VAL
    /* sets: the file's first, then l's (later sets win) */
    if (f->nsets) {
        launch_set *all = npu_calloc(f->nsets + l->nsets, sizeof *all);
        if (!all) return oom(d);
        memcpy(all, f->sets, f->nsets * sizeof *all);
        if (l->nsets) memcpy(all + f->nsets, l->sets, l->nsets * sizeof *all);
        npu_free(l->sets);
        npu_free(f->sets);
        l->sets = all;
        l->nsets += f->nsets;
        f->sets = NULL;
        f->nsets = 0;
    }
    /* args: the file's order, with l's same-named ones in their place and
     * l's others after */
    if (f->nargs) {
        for (size_t i = 0; i < l->nargs; i++) {
            npu_status s = put_arg(f, &l->args[i], d);
            if (s != NPU_OK) return s;
        }
        npu_free(l->args);
        l->args = f->args;
        l->nargs = f->nargs;
        f->args = NULL;
        f->nargs = 0;
    }
    if (f->nexpects) {
        for (size_t i = 0; i < l->nexpects; i++) {
            npu_status s = put_expect(f, &l->expects[i], d);
            if (s != NPU_OK) return s;
        }
        npu_free(l->expects);
        l->expects = f->expects;
        l->nexpects = f->nexpects;
        f->expects = NULL;
        f->nexpects = 0;
    }
    return NPU_OK;
}

/* Parse and merge a launch file's text under l, without launch_finish
 * (launch_parse_args may add more after it). */
static npu_status load_text(launch_desc *l, const char *text, size_t len, const char *where,
                            const char *dir, npu_diag *d)
{
    if (!where) where = "<launch>";
    cJSON *root = NULL;
    npu_status s = cfg_json_parse(text, len, where, &root, d);
    if (s != NPU_OK) return s;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return npu_errf(d, NPU_EINVAL, "%s: expected a JSON object at the top", where);
    }
    s = cfg_json_check_version(root, where, LAUNCH_VERSION, d);
    launch_desc f = { 0 };
    if (s == NPU_OK) s = parse_root(&f, root, where, dir, d);
    cJSON_Delete(root);
    if (s == NPU_OK) s = merge_under(l, &f, d);
    launch_free(&f);
    return s;
}

npu_status launch_load_json_text(launch_desc *l, const char *text, size_t len,
                                 const char *where, const char *dir, npu_diag *d)
{
    if (!where) where = "<launch>";
    npu_status s = load_text(l, text, len, where, dir, d);
    if (s == NPU_OK) {
        s = launch_finish(l, d);
        if (s != NPU_OK) npu_diag_prefix(d, "%s", where);
    }
    return s;
}

static npu_status load_file(launch_desc *l, const char *path, int finish, npu_diag *d)
{
    uint8_t *data;
    size_t len;
    npu_status s = npu_read_file(path, 0, 64u << 20, &data, &len, d);
    if (s != NPU_OK) return s;
    /* the folder relative paths in the file are resolved against */
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    if (slash) {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        dir = npu_malloc(n + 1);
        if (!dir) {
            npu_free(data);
            return oom(d);
        }
        memcpy(dir, path, n);
        dir[n] = 0;
    }
    s = finish ? launch_load_json_text(l, (const char *)data, len, path, dir, d)
               : load_text(l, (const char *)data, len, path, dir, d);
    npu_free(dir);
    npu_free(data);
    return s;
}

npu_status launch_load_file(launch_desc *l, const char *path, npu_diag *d)
{
    return load_file(l, path, 1, d);
}

/* ---- completeness ------------------------------------------------------------- */

npu_status launch_finish(launch_desc *l, npu_diag *d)
{
    if (!l->kernel)
        return npu_errf(d, NPU_EINVAL, "kernel: missing (give the kernel ELF path)");
    for (size_t i = 0; i < l->nargs; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(l->args[i].name, l->args[j].name) == 0)
                return npu_errf(d, NPU_EINVAL, "args: duplicate argument name \"%s\"",
                                l->args[i].name);
    for (size_t i = 0; i < l->nexpects; i++) {
        launch_expect *e = &l->expects[i];
        const launch_arg *a = NULL;
        for (size_t j = 0; j < l->nargs; j++)
            if (strcmp(l->args[j].name, e->name) == 0) a = &l->args[j];
        if (!a)
            return npu_errf(d, NPU_EINVAL, "expect.%s: no argument of that name", e->name);
        if (a->kind != LAUNCH_ARG_OUT && a->kind != LAUNCH_ARG_INOUT)
            return npu_errf(d, NPU_EINVAL,
                            "expect.%s: the argument is of kind \"%s\"; only out and inout "
                            "arguments have results to check",
                            e->name, launch_arg_kind_name(a->kind));
        if (!e->has_rtol)
            e->rtol = l->given & LAUNCH_GIVEN_RTOL ? l->rtol : LAUNCH_DEFAULT_RTOL;
        if (!e->has_atol)
            e->atol = l->given & LAUNCH_GIVEN_ATOL ? l->atol : LAUNCH_DEFAULT_ATOL;
    }
    return NPU_OK;
}

/* The first place msg names config key key as a whole word (not a part of
 * a longer key), or NULL */
static const char *key_in(const char *msg, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = strstr(msg, key); p; p = strstr(p + 1, key)) {
        char b = p == msg ? ' ' : p[-1], a = p[n];
        if (!isalnum((unsigned char)b) && b != '_' && b != '.' && !isalnum((unsigned char)a) && a != '_' &&
            a != '.')
            return p;
    }
    return NULL;
}

npu_status launch_machine(const launch_desc *l, cfg_machine *m, npu_diag *d)
{
    npu_status s;
    if (l->config) {
        if ((s = cfg_load_file(m, l->config, d)) != NPU_OK) return s;
    } else {
        cfg_default(m);
    }
    char buf[32];
    if (l->given & LAUNCH_GIVEN_CORES) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)l->cores);
        if ((s = cfg_set(m, "chip.cores", buf, d)) != NPU_OK) {
            npu_diag_prefix(d, "cores");
            return s;
        }
    }
    for (size_t i = 0; i < l->nsets; i++)
        if ((s = cfg_set(m, l->sets[i].key, l->sets[i].value, d)) != NPU_OK) {
            npu_diag_prefix(d, "set %s=%s", l->sets[i].key, l->sets[i].value);
            return s;
        }
    if (l->given & LAUNCH_GIVEN_MAX_CYCLES) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)l->max_cycles);
        if ((s = cfg_set(m, "timing.max_cycles", buf, d)) != NPU_OK) {
            npu_diag_prefix(d, "max_cycles");
            return s;
        }
    }
    if ((s = cfg_validate(m, d)) != NPU_OK && d) {
        /* a check across keys fails after the overrides (a file or the
         * default machine is valid on its own): name the override the
         * message is about (its key first), else one it names as the other
         * side of the rule, so the message points at the flag */
        const launch_set *hit = NULL;
        for (size_t i = l->nsets; i-- > 0;) {
            const char *at = key_in(d->msg, l->sets[i].key);
            if (at == d->msg) { hit = &l->sets[i]; break; }
            if (at && !hit) hit = &l->sets[i];
        }
        if (hit) npu_diag_prefix(d, "set %s=%s", hit->key, hit->value);
    }
    return s;
}

/* ---- flags -------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Split "NAME=REST" (NAME non-empty); returns REST or NULL. */
static const char *split_name(const char *v, char *name, size_t n)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || (size_t)(eq - v) >= n) return NULL;
    memcpy(name, v, (size_t)(eq - v));
    name[eq - v] = 0;
    return eq + 1;
}

static npu_status flag_arg(launch_desc *l, const char *flag, const char *v, npu_diag *d)
{
    char name[128];
    const char *rest = split_name(v, name, sizeof name);
    if (!rest || !*rest)
        return npu_errf(d, NPU_EINVAL, "%s %s: expected NAME=%s", flag, v,
                        !strcmp(flag, "--out") ? "FILE.npy:DTYPE[SHAPE]"
                        : !strcmp(flag, "--arg") ? "FILE.npy or NAME=NUMBER" : "FILE.npy");
    launch_arg a = { 0 };
    a.dtype = -1;
    npu_status s = set_str(&a.name, name, d);
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s %s", flag, v);
    if (s == NPU_OK && !strcmp(flag, "--arg")) {
        int64_t iv;
        double fv;
        if (parse_i64(rest, &iv) == 0) {
            a.kind = LAUNCH_ARG_SCALAR;
            s = scalar_value(&a, -1, 1, iv, 0, ctx, d);
        } else if (parse_double(rest, &fv) == 0) {
            a.kind = LAUNCH_ARG_SCALAR;
            s = scalar_value(&a, -1, 0, 0, fv, ctx, d);
        } else {
            a.kind = LAUNCH_ARG_IN;
            s = set_str(&a.file, rest, d);
        }
    } else if (s == NPU_OK && !strcmp(flag, "--inout")) {
        a.kind = LAUNCH_ARG_INOUT;
        const char *colon = strchr(rest, ':');
        if (colon) {
            char *f = npu_strdup(rest);
            if (!f) s = oom(d);
            else {
                f[colon - rest] = 0;
                s = set_str(&a.file, f, d);
                if (s == NPU_OK) s = set_str(&a.save, colon + 1, d);
                npu_free(f);
            }
        } else {
            s = set_str(&a.file, rest, d);
        }
        if (s == NPU_OK && (!a.file[0] || (a.save && !a.save[0])))
            s = npu_errf(d, NPU_EINVAL, "%s: expected NAME=FILE.npy[:SAVE.npy]", ctx);
    } else if (s == NPU_OK) { /* --out */
        a.kind = LAUNCH_ARG_OUT;
        const char *colon = strrchr(rest, ':');
        const char *spec = colon ? colon + 1 : rest;
        s = parse_dtype_shape(&a, spec, ctx, d);
        if (s == NPU_OK && colon) {
            if (colon == rest) s = npu_errf(d, NPU_EINVAL, "%s: empty file name", ctx);
            else {
                char *f = npu_strdup(rest);
                if (!f) s = oom(d);
                else {
                    f[colon - rest] = 0;
                    s = set_str(&a.file, f, d);
                    npu_free(f);
                }
            }
        }
    }
    if (s == NPU_OK) s = put_arg(l, &a, d);
    free_arg(&a);
    return s;
}

/* Does the option take a value? 1 yes, 0 no (none do today), -1 unknown. */
static int known_flag(const char *f)
{
    static const char *const with_value[] = { "--cores", "--mode", "--max-cycles", "--entry",
                                              "--config", "--set", "--arg", "--inout", "--out",
                                              "--expect", "--rtol", "--atol", NULL };
    for (const char *const *p = with_value; *p; p++)
        if (!strcmp(*p, f)) return 1;
    return -1;
}

npu_status launch_parse_args(launch_desc *l, int argc, char **argv, int *consumed,
                             npu_diag *d)
{
    int i = 0;
    npu_status s = NPU_OK;
    int have_positional = 0;
    while (i < argc && s == NPU_OK) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] == '-' && a[1]) {
            /* --flag value, or --flag=value */
            char flag[32];
            const char *val = NULL;
            const char *eq = strchr(a, '=');
            size_t fl = eq ? (size_t)(eq - a) : strlen(a);
            if (fl >= sizeof flag) break;
            memcpy(flag, a, fl);
            flag[fl] = 0;
            if (known_flag(flag) < 0) break;   /* not ours: the caller's */
            int used = 1;
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[i + 1], used = 2;
            else {
                s = npu_errf(d, NPU_EINVAL, "%s: missing value", flag);
                break;
            }
            if (!strcmp(flag, "--cores")) {
                const cfg_key_info *ck = cfg_key_find("chip.cores");
                uint64_t max = ck ? (uint64_t)ck->max : 1024;
                if (parse_count(val, 1, max, &l->cores) != 0)
                    s = npu_errf(d, NPU_EINVAL, "--cores %s: expected an integer in 1..%llu", val,
                                 (unsigned long long)max);
                else l->given |= LAUNCH_GIVEN_CORES;
            } else if (!strcmp(flag, "--max-cycles")) {
                if (parse_count(val, 1, 1000000000000000ull, &l->max_cycles) != 0)
                    s = npu_errf(d, NPU_EINVAL,
                                 "--max-cycles %s: expected an integer in 1..1000000000000000", val);
                else l->given |= LAUNCH_GIVEN_MAX_CYCLES;
            } else if (!strcmp(flag, "--mode")) {
                int m = mode_from_name(val);
                if (m < 0)
                    s = npu_errf(d, NPU_EINVAL, "--mode %s: expected func, perf or timing", val);
                else l->mode = (launch_mode)m, l->given |= LAUNCH_GIVEN_MODE;
            } else if (!strcmp(flag, "--entry")) {
                if (!*val) s = npu_errf(d, NPU_EINVAL, "--entry: empty symbol name");
                else if ((s = set_str(&l->entry, val, d)) == NPU_OK) l->given |= LAUNCH_GIVEN_ENTRY;
            } else if (!strcmp(flag, "--config")) {
                if (!*val) s = npu_errf(d, NPU_EINVAL, "--config: empty file name");
                else if ((s = set_str(&l->config, val, d)) == NPU_OK)
                    l->given |= LAUNCH_GIVEN_CONFIG;
            } else if (!strcmp(flag, "--set")) {
                char key[256];
                const char *v = split_name(val, key, sizeof key);
                if (!v) {
                    s = npu_errf(d, NPU_EINVAL, "--set %s: expected KEY=VALUE", val);
                } else {
                    /* check now, so a typo is reported against the flag */
                    cfg_machine *scratch = npu_malloc(sizeof *scratch);
                    if (!scratch) s = oom(d);
                    else {
                        cfg_default(scratch);
                        s = cfg_set(scratch, key, v, d);
                        npu_free(scratch);
                        if (s != NPU_OK) npu_diag_prefix(d, "--set %s", val);
                        else s = add_set(l, key, v, d);
                    }
                }
            } else if (!strcmp(flag, "--arg") || !strcmp(flag, "--out") ||
                       !strcmp(flag, "--inout")) {
                s = flag_arg(l, flag, val, d);
            } else if (!strcmp(flag, "--expect")) {
                char name[128];
                const char *file = split_name(val, name, sizeof name);
                if (!file || !*file) {
                    s = npu_errf(d, NPU_EINVAL, "--expect %s: expected NAME=REF.npy", val);
                } else {
                    launch_expect e = { 0 };
                    s = set_str(&e.name, name, d);
                    if (s == NPU_OK) s = set_str(&e.file, file, d);
                    if (s == NPU_OK) s = put_expect(l, &e, d);
                    free_expect(&e);
                }
            } else if (!strcmp(flag, "--rtol") || !strcmp(flag, "--atol")) {
                double v;
                if (parse_double(val, &v) != 0 || v < 0)
                    s = npu_errf(d, NPU_EINVAL, "%s %s: expected a number >= 0", flag, val);
                else if (flag[2] == 'r') l->rtol = v, l->given |= LAUNCH_GIVEN_RTOL;
                else l->atol = v, l->given |= LAUNCH_GIVEN_ATOL;
            }
            if (s == NPU_OK) i += used;
            continue;
        }
        /* a positional: the kernel or a launch file; a second one is not ours */
        if (have_positional) break;
        have_positional = 1;
        if (ends_with(a, ".json")) {
            s = load_file(l, a, 0, d);
        } else if ((s = set_str(&l->kernel, a, d)) == NPU_OK) {
            l->given |= LAUNCH_GIVEN_KERNEL;
        }
        if (s == NPU_OK) i++;
    }
    if (consumed) *consumed = i;
    return s;
}
