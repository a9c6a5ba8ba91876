/* config.c — the machine config: the key table (expanded from
 * config_keys.def), strict JSON and --set parsing, defaults, validation and
 * the canonical JSON dump. See config.h for the contract. */
#include "frontend/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

/* ---- the table ------------------------------------------------------------ */

/* C type of each row type, for the compile-time field type check below. */
#define CFG__CTYPE_INT    int64_t
#define CFG__CTYPE_UINT   uint64_t
#define CFG__CTYPE_DOUBLE double
#define CFG__CTYPE_BOOL   int
#define CFG__CTYPE_STRING char *
#define CFG__CTYPE_ENUM   int

#define CFG__FIELD(f) (((cfg_machine *)0)->f)
#define CFG__ROW(key, field, type, min, max, def, unit, choices, doc)                   \
    { key, CFG_T_##type, offsetof(cfg_machine, field), sizeof(CFG__FIELD(field)),     \
      (double)(min), (double)(max), def, unit, choices, doc },

static const cfg_key_info cfg__keys[] = {
#define CFG_KEY(key, field, type, min, max, def, unit, doc) \
    CFG__ROW(key, field, type, min, max, def, unit, "", doc)
#define CFG_ENUM(key, field, choices, def, doc) \
    CFG__ROW(key, field, ENUM, 0, 0, def, "", choices, doc)
#define CFG_PIPE(id, name, depth, doc)                                              \
    CFG__ROW("pipe." name ".queue_depth", pipe[CFG_PIPE_##id].queue_depth, UINT, 1, \
             4096, #depth, "instrs", "", doc)
#define CFG_PATH(id, name, desc, pipe_, w_, lat_, doc)                              \
    CFG__ROW("path." name ".width", path[CFG_PATH_##id].width, UINT, 1, 1 << 20,    \
             #w_, "B/cycle", "", desc " (" pipe_ ") bytes per cycle" doc)          \
    CFG__ROW("path." name ".latency", path[CFG_PATH_##id].latency, UINT, 0, 1000000, \
             #lat_, "cycles", "", desc " fixed latency (assumed)")
#define CFG_CUBE(dt_, name, m_, k_, n_, cpf_, doc)                                   \
    CFG__ROW("cube." name ".m", cube.dt[ISA_DT_##dt_].m, UINT, 1, 256, #m_, "", "",  \
             doc ": fractal rows (M)")                                              \
    CFG__ROW("cube." name ".k", cube.dt[ISA_DT_##dt_].k, UINT, 1, 256, #k_, "", "",  \
             doc ": fractal depth (K)")                                             \
    CFG__ROW("cube." name ".n", cube.dt[ISA_DT_##dt_].n, UINT, 1, 256, #n_, "", "",  \
             doc ": fractal columns (N)")                                           \
    CFG__ROW("cube." name ".cycles_per_fractal",                                     \
             cube.dt[ISA_DT_##dt_].cycles_per_fractal, DOUBLE, 0.001, 1e6, #cpf_,     \
             "cycles", "", doc ": cycles per fractal")
/* one row per dtype column (vector.cpr and vector.cast_to) */
#define CFG__DT6(one, id, name, f32, f16, bf16, s32, s16, s8, doc) \
    one(id, name, F32, "f32", f32, doc)                            \
    one(id, name, F16, "f16", f16, doc)                            \
    one(id, name, BF16, "bf16", bf16, doc)                         \
    one(id, name, S32, "s32", s32, doc)                            \
    one(id, name, S16, "s16", s16, doc)                            \
    one(id, name, S8, "s8", s8, doc)
#define CFG__VOP1(id, name, dt, dtname, v, doc)                                      \
    CFG__ROW("vector.cpr." name "." dtname, vector.cpr[CFG_VOP_##id][ISA_DT_##dt],   \
             DOUBLE, 0, 1e6, #v, "cycles", "", doc " (" dtname ")")
#define CFG_VOP(id, name, f32, f16, bf16, s32, s16, s8, doc) \
    CFG__DT6(CFG__VOP1, id, name, f32, f16, bf16, s32, s16, s8, doc)
#define CFG__CAST1(to, name, dt, dtname, v, doc)                                       \
    CFG__ROW("vector.cast_to." name "." dtname, vector.cast_to[ISA_DT_##to][ISA_DT_##dt], \
             DOUBLE, 0, 1e6, #v, "cycles", "", doc ", from " dtname)
#define CFG_CAST(to, name, f32, f16, bf16, s32, s16, s8, doc) \
    CFG__DT6(CFG__CAST1, to, name, f32, f16, bf16, s32, s16, s8, doc)
#define CFG_SECTION(name, doc)
#include "frontend/config_keys.def"
#undef CFG_KEY
#undef CFG_ENUM
#undef CFG_PIPE
#undef CFG_PATH
#undef CFG_CUBE
#undef CFG_VOP
#undef CFG_CAST
#undef CFG_SECTION
};

static const cfg_section_info cfg__sections[] = {
#define CFG_SECTION(name, doc) { name, doc },
#include "frontend/config_keys.def"
#undef CFG_SECTION
};

/* Every scalar row's field must have the C type its row type says (a table
 * typo would otherwise write 8 bytes into an int). */
#define CFG__CHECK(field, type)                                                   \
    _Static_assert(_Generic(CFG__FIELD(field), CFG__CTYPE_##type: 1, default: 0), \
                   "config_keys.def: field " #field " is not " #type);
#define CFG_KEY(key, field, type, min, max, def, unit, doc) CFG__CHECK(field, type)
#define CFG_ENUM(key, field, choices, def, doc) CFG__CHECK(field, ENUM)
#include "frontend/config_keys.def"
#undef CFG_KEY
#undef CFG_ENUM

const cfg_key_info *cfg_keys(size_t *count)
{
    if (count) *count = NPU_ARRAY_LEN(cfg__keys);
    return cfg__keys;
}

const cfg_section_info *cfg_sections(size_t *count)
{
    if (count) *count = NPU_ARRAY_LEN(cfg__sections);
    return cfg__sections;
}

const cfg_key_info *cfg_key_find(const char *key)
{
    for (size_t i = 0; i < NPU_ARRAY_LEN(cfg__keys); i++)
        if (strcmp(cfg__keys[i].key, key) == 0) return &cfg__keys[i];
    return NULL;
}

const cfg_section_info *cfg_key_section(const cfg_key_info *k)
{
    const cfg_section_info *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < NPU_ARRAY_LEN(cfg__sections); i++) {
        size_t n = strlen(cfg__sections[i].name);
        if (n > best_len && strncmp(k->key, cfg__sections[i].name, n) == 0 &&
            k->key[n] == '.') {
            best = &cfg__sections[i];
            best_len = n;
        }
    }
    return best;
}

static const char *const cfg__path_names[] = {
#define CFG_PATH(id, name, desc, pipe_, w_, lat_, doc) name,
#include "frontend/config_keys.def"
};

static const char *const cfg__vop_names[] = {
#define CFG_VOP(id, name, f32, f16, bf16, s32, s16, s8, doc) name,
#include "frontend/config_keys.def"
};

const char *cfg_path_name(int id)
{
    return id >= 0 && id < CFG_PATH__COUNT ? cfg__path_names[id] : "?";
}

const char *cfg_vop_name(int id)
{
    return id >= 0 && id < CFG_VOP__COUNT ? cfg__vop_names[id] : "?";
}

int cfg_path_from_name(const char *name)
{
    for (int i = 0; name && i < CFG_PATH__COUNT; i++)
        if (strcmp(cfg__path_names[i], name) == 0) return i;
    return -1;
}

int cfg_vop_from_name(const char *name)
{
    for (int i = 0; name && i < CFG_VOP__COUNT; i++)
        if (strcmp(cfg__vop_names[i], name) == 0) return i;
    return -1;
}

const char *cfg_type_name(cfg_type t)
{
    switch (t) {
    case CFG_T_INT: return "integer";
    case CFG_T_UINT: return "integer";
    case CFG_T_DOUBLE: return "number";
    case CFG_T_BOOL: return "boolean";
    case CFG_T_STRING: return "string";
    case CFG_T_ENUM: return "enum";
    }
    return "?";
}

/* ---- values ---------------------------------------------------------------- */

typedef union cfg__val {
    int64_t i;
    uint64_t u;
    double f;
    int b;       /* BOOL and ENUM (choice index) */
    const char *s;
} cfg__val;

static int is_size(const cfg_key_info *k) { return strcmp(k->unit, "B") == 0; }

/* Range text as messages and docs show it. */
static void fmt_num(char *buf, size_t n, double v, int integral)
{
    if (integral || (v == floor(v) && fabs(v) < 9007199254740992.0))
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%g", v);
}

/* "an integer in 1..1024", "a size in bytes in 32..1099511627776", ... */
static void expectation(const cfg_key_info *k, char *buf, size_t n)
{
    char lo[40], hi[40];
    fmt_num(lo, sizeof lo, k->min, k->type != CFG_T_DOUBLE);
    fmt_num(hi, sizeof hi, k->max, k->type != CFG_T_DOUBLE);
    switch (k->type) {
    case CFG_T_INT:
    case CFG_T_UINT:
        snprintf(buf, n, "%s in %s..%s", is_size(k) ? "a size in bytes" : "an integer", lo, hi);
        break;
    case CFG_T_DOUBLE: snprintf(buf, n, "a number in %s..%s", lo, hi); break;
    case CFG_T_BOOL: snprintf(buf, n, "true or false"); break;
    case CFG_T_STRING: snprintf(buf, n, "a string of at most %s characters", hi); break;
    case CFG_T_ENUM: {
        size_t o = (size_t)snprintf(buf, n, "one of");
        const char *c = k->choices;
        while (*c && o < n) {
            const char *bar = strchr(c, '|');
            size_t len = bar ? (size_t)(bar - c) : strlen(c);
            o += (size_t)snprintf(buf + o, n - o, "%s \"%.*s\"", c == k->choices ? "" : ",",
                                  (int)len, c);
            c += len + (bar ? 1 : 0);
        }
        break;
    }
    }
}

/* Index of choice text (len bytes) in k->choices, or -1. */
static int enum_index(const cfg_key_info *k, const char *text)
{
    int idx = 0;
    const char *c = k->choices;
    while (*c) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (strlen(text) == len && strncmp(c, text, len) == 0) return idx;
        idx++;
        c += len + (bar ? 1 : 0);
    }
    return -1;
}

static void enum_name(const cfg_key_info *k, int idx, char *buf, size_t n)
{
    const char *c = k->choices;
    for (int i = 0; *c; i++) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (i == idx) {
            snprintf(buf, n, "%.*s", (int)len, c);
            return;
        }
        c += len + (bar ? 1 : 0);
    }
    snprintf(buf, n, "?");
}

static npu_status range_error(const cfg_key_info *k, const char *where, const char *got,
                              npu_diag *d)
{
    char exp[256];
    expectation(k, exp, sizeof exp);
    return npu_errf(d, NPU_EINVAL, "%s%s%s: expected %s, got %s", where ? where : "",
                    where ? ": " : "", k->key, exp, got);
}

/* Check a number against the row's range (and integrality for INT/UINT) and
 * convert it. got is how the input spelled it, for the message. */
static npu_status check_number(const cfg_key_info *k, double v, const char *where,
                               const char *got, cfg__val *out, npu_diag *d)
{
    if (!isfinite(v) || v < k->min || v > k->max) return range_error(k, where, got, d);
    if (k->type == CFG_T_DOUBLE) {
        out->f = v;
    } else if (v != floor(v)) {
        return range_error(k, where, got, d);
    } else if (k->type == CFG_T_INT) {
        out->i = (int64_t)v;
    } else {
        out->u = (uint64_t)v;
    }
    return NPU_OK;
}

/* Text to value, as --set and the table defaults spell it. */
static npu_status parse_text_as(const cfg_key_info *k, const char *text, const char *where,
                                const char *got_as, cfg__val *out, npu_diag *d)
{
    char got[160];
    if (got_as) snprintf(got, sizeof got, "%s", got_as);
    else snprintf(got, sizeof got, "'%.120s'", text);
    switch (k->type) {
    case CFG_T_UINT:
    case CFG_T_INT: {
        int neg = k->type == CFG_T_INT && text[0] == '-';
        uint64_t u;
        int r = npu_parse_count(text + neg, is_size(k), &u);
        if (r == -1) {
            if (is_size(k))
                return npu_errf(d, NPU_EINVAL,
                                "%s%s%s: bad size %s (expected an integer with an optional "
                                "K, M, G or T suffix)",
                                where ? where : "", where ? ": " : "", k->key, got);
            return range_error(k, where, got, d);
        }
        if (r == -2 || u > (uint64_t)1 << 62) return range_error(k, where, got, d);
        double v = neg ? -(double)u : (double)u;
        if (v < k->min || v > k->max) return range_error(k, where, got, d);
        if (k->type == CFG_T_INT) out->i = neg ? -(int64_t)u : (int64_t)u;
        else out->u = u;
        return NPU_OK;
    }
    case CFG_T_DOUBLE: {
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        if (end == text || *end || errno == ERANGE || isspace((unsigned char)text[0]))
            return range_error(k, where, got, d);
        return check_number(k, v, where, got, out, d);
    }
    case CFG_T_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "on")) out->b = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "off")) out->b = 0;
        else return range_error(k, where, got, d);
        return NPU_OK;
    case CFG_T_ENUM:
        out->b = enum_index(k, text);
        if (out->b < 0) return range_error(k, where, got, d);
        return NPU_OK;
    case CFG_T_STRING:
        if (strlen(text) > (size_t)k->max) return range_error(k, where, got, d);
        out->s = text;
        return NPU_OK;
    }
    return npu_errf(d, NPU_EINVAL, "%s: bad row type", k->key);
}

static npu_status parse_text(const cfg_key_info *k, const char *text, const char *where,
                             cfg__val *out, npu_diag *d)
{
    return parse_text_as(k, text, where, NULL, out, d);
}

/* What a JSON value is, for "got ..." in messages. */
static void describe_json(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsNumber(v)) fmt_num(buf, n, v->valuedouble, 0);
    else if (cJSON_IsString(v)) snprintf(buf, n, "the string \"%.100s\"", v->valuestring);
    else if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v)) snprintf(buf, n, "null");
    else if (cJSON_IsArray(v)) snprintf(buf, n, "an array");
    else if (cJSON_IsObject(v)) snprintf(buf, n, "an object");
    else snprintf(buf, n, "an invalid value");
}

static npu_status parse_json_value(const cfg_key_info *k, const cJSON *v, const char *where,
                                   cfg__val *out, npu_diag *d)
{
    char got[160];
    describe_json(v, got, sizeof got);
    switch (k->type) {
    case CFG_T_INT:
    case CFG_T_UINT:
        if (cJSON_IsString(v) && is_size(k)) return parse_text(k, v->valuestring, where, out, d);
        if (!cJSON_IsNumber(v)) return range_error(k, where, got, d);
        return check_number(k, v->valuedouble, where, got, out, d);
    case CFG_T_DOUBLE:
        if (!cJSON_IsNumber(v)) return range_error(k, where, got, d);
        return check_number(k, v->valuedouble, where, got, out, d);
    case CFG_T_BOOL:
        if (!cJSON_IsBool(v)) return range_error(k, where, got, d);
        out->b = cJSON_IsTrue(v);
        return NPU_OK;
    case CFG_T_ENUM:
    case CFG_T_STRING:
        if (!cJSON_IsString(v)) return range_error(k, where, got, d);
        return parse_text_as(k, v->valuestring, where, got, out, d);
    }
    return npu_errf(d, NPU_EINVAL, "%s: bad row type", k->key);
}

static void store(cfg_machine *m, const cfg_key_info *k, const cfg__val *v)
{
    char *p = (char *)m + k->offset;
    switch (k->type) {
    case CFG_T_INT: memcpy(p, &v->i, sizeof v->i); break;
    case CFG_T_UINT: memcpy(p, &v->u, sizeof v->u); break;
    case CFG_T_DOUBLE: memcpy(p, &v->f, sizeof v->f); break;
    case CFG_T_BOOL:
    case CFG_T_ENUM: memcpy(p, &v->b, sizeof v->b); break;
    case CFG_T_STRING:
        memset(p, 0, k->size);
        memcpy(p, v->s, strlen(v->s)); /* length checked against max < size */
        break;
    }
}

/* Canonical text of a field (what the dump prints, without JSON quotes). */
static void format_value(const cfg_machine *m, const cfg_key_info *k, char *buf, size_t n)
{
    const char *p = (const char *)m + k->offset;
    switch (k->type) {
    case CFG_T_INT: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, n, "%" PRId64, v);
        break;
    }
    case CFG_T_UINT: {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, n, "%" PRIu64, v);
        break;
    }
    case CFG_T_DOUBLE: {
        double v;
        memcpy(&v, p, sizeof v);
        /* shortest text that reads back to the same double */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, n, "%.*g", prec, v);
            if (strtod(buf, NULL) == v) break;
        }
        break;
    }
    case CFG_T_BOOL: {
        int v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, n, "%s", v ? "true" : "false");
        break;
    }
    case CFG_T_ENUM: {
        int v;
        memcpy(&v, p, sizeof v);
        enum_name(k, v, buf, n);
        break;
    }
    case CFG_T_STRING: snprintf(buf, n, "%.*s", (int)k->size, p); break;
    }
}

/* ---- defaults --------------------------------------------------------------- */

void cfg_default(cfg_machine *m)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < NPU_ARRAY_LEN(cfg__keys); i++) {
        cfg__val v;
        npu_diag d;
        /* The defaults are part of the table; a test parses every one, so a
         * failure here is a broken build, not bad input. */
        if (parse_text(&cfg__keys[i], cfg__keys[i].def, "config_keys.def", &v, &d) != NPU_OK)
            abort();
        store(m, &cfg__keys[i], &v);
    }
    mem_config_default(&m->mem);
}

/* ---- key suggestions ------------------------------------------------------- */

static const char *cfg_key_name(size_t i, void *ctx)
{
    (void)ctx;
    return cfg__keys[i].key;
}

/* " (did you mean core.ub.banks?)" or "" (npu_suggest). */
static void suggestion(const char *key, char *buf, size_t n)
{
    npu_suggest(key, NPU_ARRAY_LEN(cfg__keys), cfg_key_name, NULL, NULL, buf, n);
}

/* 1 if some key lies under "prefix." (prefix names a JSON object). */
static int is_object_path(const char *prefix)
{
    size_t n = strlen(prefix);
    for (size_t i = 0; i < NPU_ARRAY_LEN(cfg__keys); i++)
        if (strncmp(cfg__keys[i].key, prefix, n) == 0 && cfg__keys[i].key[n] == '.') return 1;
    return 0;
}

static npu_status unknown_key(const char *where, const char *key, npu_diag *d)
{
    char sug[200];
    suggestion(key, sug, sizeof sug);
    return npu_errf(d, NPU_EINVAL, "%s%s%s: unknown config key%s", where ? where : "",
                    where ? ": " : "", key, sug);
}

/* ---- JSON ------------------------------------------------------------------- */

/* Apply the members of obj (whose key path is prefix, "" at the top). */
static npu_status apply_object(cfg_machine *m, const cJSON *obj, const char *prefix,
                               const char *where, npu_diag *d)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        const char *name = c->string ? c->string : "";
        char key[256];
        int n = snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", name);
        if (n < 0 || (size_t)n >= sizeof key)
            return npu_errf(d, NPU_EINVAL, "%s: %.60s...: unknown config key", where, key);
        if (npu_json_dup_key(obj, c))
            return npu_errf(d, NPU_EINVAL, "%s: %s: duplicate key", where, key);
        if (!*prefix && strcmp(name, "version") == 0) continue;  /* checked by caller */
        /* "_note": a comment (the memory model's preset files use them too) */
        if (name[0] == '_') continue;
        if (!*prefix && strcmp(name, "memory") == 0) {
            /* memmodel names keys "<where>.hbm.tCL": make that "file: memory.hbm.tCL" */
            char mwhere[512];
            snprintf(mwhere, sizeof mwhere, "%s: memory", where);
            npu_status s = mem_config_parse(c, mwhere, &m->mem, d);
            if (s != NPU_OK) return s;
            continue;
        }
        if (!*name || strchr(name, '.')) return unknown_key(where, key, d);
        const cfg_key_info *k = cfg_key_find(key);
        if (k) {
            cfg__val v;
            npu_status s = parse_json_value(k, c, where, &v, d);
            if (s != NPU_OK) return s;
            store(m, k, &v);
        } else if (is_object_path(key)) {
            if (!cJSON_IsObject(c)) {
                char got[160];
                describe_json(c, got, sizeof got);
                return npu_errf(d, NPU_EINVAL, "%s: %s: expected an object, got %s", where,
                                key, got);
            }
            npu_status s = apply_object(m, c, key, where, d);
            if (s != NPU_OK) return s;
        } else {
            return unknown_key(where, key, d);
        }
    }
    return NPU_OK;
}

/* line:col (1-based) of byte offset off in text. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

npu_status cfg_json_parse(const char *text, size_t len, const char *where,
                          struct cJSON **out, npu_diag *d)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    int trailing = root != NULL;
    size_t off;
    if (!root) {
        off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
    } else {
        off = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
        while (off < len && isspace((unsigned char)text[off])) off++;
        if (off >= len || text[off] == '\0') {
            *out = root;
            return NPU_OK;
        }
        cJSON_Delete(root);
    }
    int line, col;
    line_col(text, off, &line, &col);
    char near[32];
    size_t k = 0;
    for (size_t i = off; i < len && k < 20 && text[i] != '\n'; i++)
        near[k++] = isprint((unsigned char)text[i]) ? text[i] : '?';
    near[k] = 0;
    if (off >= len)
        return npu_errf(d, NPU_EFORMAT, "%s:%d:%d: JSON syntax error: unexpected end of input",
                        where, line, col);
    return npu_errf(d, NPU_EFORMAT, "%s:%d:%d: JSON syntax error %s '%s'", where, line, col,
                    trailing ? "(trailing text after the value) at" : "near", near);
}

npu_status cfg_json_check_version(const struct cJSON *root, const char *where,
                                  int supported, npu_diag *d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!v) {
        /* a memory-only file (a memsim --config file of an older tree) */
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory");
        int only_mem = cJSON_IsObject(mem);
        for (const cJSON *k = root->child; k && only_mem; k = k->next)
            only_mem = k == mem || (k->string && k->string[0] == '_');
        return npu_errf(d, NPU_EINVAL, "%s: version: missing (this build reads version %d)%s",
                        where, supported,
                        only_mem ? "; a file with only a \"memory\" object is a machine config "
                                   "(the default machine with that memory) once it says \"version\": 1"
                                 : "");
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble)) {
        char got[160];
        describe_json(v, got, sizeof got);
        return npu_errf(d, NPU_EINVAL, "%s: version: expected an integer, got %s", where, got);
    }
    if (v->valuedouble != supported)
        return npu_errf(d, NPU_EUNSUPP,
                        "%s: version: unsupported version %.0f (this build reads version %d)",
                        where, v->valuedouble, supported);
    return NPU_OK;
}

npu_status cfg_apply_json_text(cfg_machine *m, const char *text, size_t len,
                               const char *where, npu_diag *d)
{
    if (!where) where = "<config>";
    cJSON *root = NULL;
    npu_status s = cfg_json_parse(text, len, where, &root, d);
    if (s != NPU_OK) return s;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return npu_errf(d, NPU_EINVAL, "%s: expected a JSON object at the top", where);
    }
    s = cfg_json_check_version(root, where, CFG_VERSION, d);
    if (s == NPU_OK) {
        /* work on a copy so that a failure leaves m as it was */
        cfg_machine *tmp = npu_malloc(sizeof *tmp);
        if (!tmp) {
            s = npu_errf(d, NPU_ENOMEM, "%s: out of memory", where);
        } else {
            *tmp = *m;
            s = apply_object(tmp, root, "", where, d);
            if (s == NPU_OK) *m = *tmp;
            npu_free(tmp);
        }
    }
    cJSON_Delete(root);
    return s;
}

npu_status cfg_load_json_text(cfg_machine *m, const char *text, size_t len,
                              const char *where, npu_diag *d)
{
    if (!where) where = "<config>";
    cfg_default(m);
    npu_status s = cfg_apply_json_text(m, text, len, where, d);
    if (s == NPU_OK) {
        s = cfg_validate(m, d);
        if (s != NPU_OK) npu_diag_prefix(d, "%s", where);
    }
    if (s != NPU_OK) cfg_default(m);
    return s;
}

npu_status cfg_load_file(cfg_machine *m, const char *path, npu_diag *d)
{
    uint8_t *data;
    size_t len;
    npu_status s = npu_read_file(path, 0, 16u << 20, &data, &len, d);
    if (s != NPU_OK) {
        cfg_default(m);
        return s;
    }
    s = cfg_load_json_text(m, (const char *)data, len, path, d);
    npu_free(data);
    return s;
}

/* ---- --set ------------------------------------------------------------------ */

npu_status cfg_set(cfg_machine *m, const char *key, const char *value, npu_diag *d)
{
    if (!key || !value) return npu_errf(d, NPU_EINVAL, "cfg_set: NULL key or value");
    if (strncmp(key, "memory.", 7) == 0) return mem_config_set_at(&m->mem, key + 7, value, "memory", d);
    const cfg_key_info *k = cfg_key_find(key);
    if (!k) return unknown_key(NULL, key, d);
    cfg__val v;
    npu_status s = parse_text(k, value, NULL, &v, d);
    if (s != NPU_OK) return s;
    store(m, k, &v);
    return NPU_OK;
}

npu_status cfg_check_key(const char *key, npu_diag *d)
{
    if (!key) return npu_errf(d, NPU_EINVAL, "cfg_check_key: NULL key");
    if (strncmp(key, "memory.", 7) == 0) return mem_config_check_key(key + 7, "memory", d);
    return cfg_key_find(key) ? NPU_OK : unknown_key(NULL, key, d);
}

npu_status cfg_set_kv(cfg_machine *m, const char *kv, npu_diag *d)
{
    const char *eq = kv ? strchr(kv, '=') : NULL;
    if (!eq || eq == kv)
        return npu_errf(d, NPU_EINVAL, "--set %s: expected KEY=VALUE", kv ? kv : "(null)");
    char key[256];
    if ((size_t)(eq - kv) >= sizeof key)
        return npu_errf(d, NPU_EINVAL, "--set: key too long");
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = 0;
    npu_status s = cfg_set(m, key, eq + 1, d);
    if (s != NPU_OK) npu_diag_prefix(d, "--set %s", kv);
    return s;
}

npu_status cfg_get(const cfg_machine *m, const char *key, char *buf, size_t n, npu_diag *d)
{
    const cfg_key_info *k = key ? cfg_key_find(key) : NULL;
    if (!k) return unknown_key(NULL, key ? key : "(null)", d);
    format_value(m, k, buf, n);
    return NPU_OK;
}

/* ---- validation ------------------------------------------------------------- */

static int pow2(uint64_t v) { return v && !(v & (v - 1)); }

static npu_status check_buffer(const char *name, uint64_t size, uint64_t align, npu_diag *d)
{
    if (!pow2(align))
        return npu_errf(d, NPU_EINVAL, "core.%s.align: must be a power of two, got %" PRIu64,
                        name, align);
    if (size % align)
        return npu_errf(d, NPU_EINVAL,
                        "core.%s.size: must be a multiple of core.%s.align (%" PRIu64
                        "), got %" PRIu64,
                        name, name, align, size);
    return NPU_OK;
}

npu_status cfg_validate(const cfg_machine *m, npu_diag *d)
{
    npu_status s;
    const struct { const char *name; const cfg_buffer *b; } bufs[] = {
        { "l1", &m->core.l1 }, { "l0a", &m->core.l0a }, { "l0b", &m->core.l0b },
        { "l0c", &m->core.l0c }, { "sdata", &m->core.sdata },
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(bufs); i++)
        if ((s = check_buffer(bufs[i].name, bufs[i].b->size, bufs[i].b->align, d)) != NPU_OK)
            return s;
    const cfg_ub *ub = &m->core.ub;
    if ((s = check_buffer("ub", ub->size, ub->align, d)) != NPU_OK) return s;
    if (ub->banks * ub->bank_size != ub->size)
        return npu_errf(d, NPU_EINVAL,
                        "core.ub.size: must equal core.ub.banks x core.ub.bank_size (%" PRIu64
                        " x %" PRIu64 " = %" PRIu64 "), got %" PRIu64,
                        ub->banks, ub->bank_size, ub->banks * ub->bank_size, ub->size);
    if (ub->banks % ub->bank_groups)
        return npu_errf(d, NPU_EINVAL,
                        "core.ub.bank_groups: must divide core.ub.banks (%" PRIu64
                        "), got %" PRIu64,
                        ub->banks, ub->bank_groups);
    if (ub->bank_size % ub->align)
        return npu_errf(d, NPU_EINVAL,
                        "core.ub.bank_size: must be a multiple of core.ub.align (%" PRIu64
                        "), got %" PRIu64,
                        ub->align, ub->bank_size);
    if (m->vector.repeat_bytes % m->vector.block_bytes)
        return npu_errf(d, NPU_EINVAL,
                        "vector.repeat_bytes: must be a multiple of vector.block_bytes (%" PRIu64
                        "), got %" PRIu64,
                        m->vector.block_bytes, m->vector.repeat_bytes);
    if ((s = mem_config_validate(&m->mem, "memory", d)) != NPU_OK) return s;
    if (m->vector.repeat_bytes > ub->size)
        return npu_errf(d, NPU_EINVAL,
                        "vector.repeat_bytes: must not exceed core.ub.size (%" PRIu64
                        "), got %" PRIu64,
                        ub->size, m->vector.repeat_bytes);
    return NPU_OK;
}

/* ---- dump ------------------------------------------------------------------- */

static void put_indent(npu_buf *b, int depth)
{
    for (int i = 0; i < depth; i++) npu_buf_append(b, "  ", 2);
}

static void put_string(npu_buf *b, const char *s)
{
    npu_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = { '\\', (char)*p };
            npu_buf_append(b, e, 2);
        } else if (*p == '\n') {
            npu_buf_append(b, "\\n", 2);
        } else if (*p == '\t') {
            npu_buf_append(b, "\\t", 2);
        } else if (*p < 0x20) {
            npu_buf_printf(b, "\\u%04x", *p);
        } else {
            npu_buf_append(b, p, 1);
        }
    }
    npu_buf_append(b, "\"", 1);
}

/* Start a member: separator, newline, indent, "name": */
static void put_member(npu_buf *b, int depth, int *first, const char *name, size_t len)
{
    npu_buf_append(b, *first ? "\n" : ",\n", *first ? 1 : 2);
    *first = 0;
    put_indent(b, depth);
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(len < 127 ? len : 127), name);
    put_string(b, tmp);
    npu_buf_append(b, ": ", 2);
}

/* Any cJSON value (the memory section), in the same style. */
static void put_json(npu_buf *b, const cJSON *v, int depth)
{
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        int obj = cJSON_IsObject(v);
        npu_buf_append(b, obj ? "{" : "[", 1);
        int first = 1;
        for (const cJSON *c = v->child; c; c = c->next) {
            if (obj) {
                const char *nm = c->string ? c->string : "";
                put_member(b, depth + 1, &first, nm, strlen(nm));
            } else {
                npu_buf_append(b, first ? "\n" : ",\n", first ? 1 : 2);
                first = 0;
                put_indent(b, depth + 1);
            }
            put_json(b, c, depth + 1);
        }
        if (!first) {
            npu_buf_append(b, "\n", 1);
            put_indent(b, depth);
        }
        npu_buf_append(b, obj ? "}" : "]", 1);
    } else if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 9007199254740992.0) {
            npu_buf_printf(b, "%.0f", x);
        } else {
            char t[40];
            for (int prec = 15; prec <= 17; prec++) {
                snprintf(t, sizeof t, "%.*g", prec, x);
                if (strtod(t, NULL) == x) break;
            }
            npu_buf_printf(b, "%s", t);
        }
    } else if (cJSON_IsString(v)) {
        put_string(b, v->valuestring ? v->valuestring : "");
    } else if (cJSON_IsBool(v)) {
        npu_buf_printf(b, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else {
        npu_buf_printf(b, "null");
    }
}

char *cfg_dump_json(const cfg_machine *m)
{
    npu_buf b = { 0 };
    /* the open objects: their names (pointers into the current key) */
    enum { MAXD = 8 };
    const char *open_name[MAXD];
    size_t open_len[MAXD];
    int first[MAXD + 1];
    int depth = 0;          /* open objects below the root */
    first[0] = 1;
    npu_buf_append(&b, "{", 1);
    put_member(&b, 1, &first[0], "version", 7);
    npu_buf_printf(&b, "%d", CFG_VERSION);
    for (size_t i = 0; i < NPU_ARRAY_LEN(cfg__keys); i++) {
        const cfg_key_info *k = &cfg__keys[i];
        /* split the key into components */
        const char *comp[MAXD + 1];
        size_t clen[MAXD + 1];
        int nc = 0;
        for (const char *p = k->key; nc <= MAXD;) {
            const char *dot = strchr(p, '.');
            comp[nc] = p;
            clen[nc] = dot ? (size_t)(dot - p) : strlen(p);
            nc++;
            if (!dot) break;
            p = dot + 1;
        }
        int nobj = nc - 1;  /* objects the leaf lives in */
        int common = 0;
        while (common < depth && common < nobj && open_len[common] == clen[common] &&
               strncmp(open_name[common], comp[common], clen[common]) == 0)
            common++;
        while (depth > common) {  /* close */
            npu_buf_append(&b, "\n", 1);
            put_indent(&b, depth);
            npu_buf_append(&b, "}", 1);
            depth--;
        }
        while (depth < nobj) {   /* open */
            put_member(&b, depth + 1, &first[depth], comp[depth], clen[depth]);
            npu_buf_append(&b, "{", 1);
            open_name[depth] = comp[depth];
            open_len[depth] = clen[depth];
            depth++;
            first[depth] = 1;
        }
        /* open_name points into the previous key's text; repoint to this
         * key (same text) so the next comparison reads live, equal data */
        for (int j = 0; j < depth; j++) open_name[j] = comp[j];
        put_member(&b, depth + 1, &first[depth], comp[nobj], clen[nobj]);
        char val[160];
        format_value(m, k, val, sizeof val);
        if (k->type == CFG_T_STRING || k->type == CFG_T_ENUM) put_string(&b, val);
        else npu_buf_printf(&b, "%s", val);
    }
    while (depth > 0) {
        npu_buf_append(&b, "\n", 1);
        put_indent(&b, depth);
        npu_buf_append(&b, "}", 1);
        depth--;
    }
    cJSON *mem = mem_config_dump(&m->mem);
    if (!mem) {
        npu_buf_free(&b);
        return NULL;
    }
    put_member(&b, 1, &first[0], "memory", 6);
    put_json(&b, mem, 1);
    cJSON_Delete(mem);
    npu_buf_append(&b, "\n}\n", 4);  /* with the NUL */
    if (b.oom) {
        npu_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

/* ---- npusim config ---------------------------------------------------------- */

static const char cfg__usage[] =
    "usage: npusim config --dump [--config FILE] [--set KEY=VALUE ...] [-o FILE]\n"
    "       npusim config --check FILE\n"
    "       npusim config --help\n"
    "\n"
    "  --dump          print the machine config as JSON: the embedded default, or\n"
    "                  FILE on top of it, with the --set overrides applied\n"
    "  --config FILE   start from this config file (keys it omits keep defaults)\n"
    "  --set K=V       override one key (sizes take K/M/G suffixes, e.g. 1M)\n"
    "  -o FILE         write the dump to FILE instead of standard output\n"
    "  --check FILE    validate a config file; exit 0 if it is good, 2 if not\n"
    "Keys and their ranges: docs/config.md.\n";

int cfg_cmd_config(int argc, char **argv)
{
    int dump = 0;
    const char *check = NULL, *config = NULL, *out = NULL;
    npu_diag d;
    npu_diag_clear(&d);
    /* the --set list is applied after the config file, in order */
    const char **sets = npu_calloc((size_t)(argc > 0 ? argc : 1), sizeof *sets);
    int nsets = 0, rc = 0;
    if (!sets) {
        fprintf(stderr, "npusim config: out of memory\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(cfg__usage, stdout);
            npu_free(sets);
            return 0;
        } else if (!strcmp(a, "--dump")) {
            dump = 1;
        } else if (!strcmp(a, "--check") && has_val) {
            check = argv[++i];
        } else if (!strcmp(a, "--config") && has_val) {
            config = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_val) {
            out = argv[++i];
        } else if (!strcmp(a, "--set") && has_val) {
            sets[nsets++] = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) {
            sets[nsets++] = a + 6;
        } else {
            fprintf(stderr, "npusim config: unknown or incomplete option '%s'\n%s", a, cfg__usage);
            npu_free(sets);
            return 2;
        }
    }
    if (!!dump + !!check != 1) {
        fprintf(stderr, "npusim config: give exactly one of --dump and --check\n%s", cfg__usage);
        npu_free(sets);
        return 2;
    }
    cfg_machine *m = npu_malloc(sizeof *m);
    if (!m) {
        fprintf(stderr, "npusim config: out of memory\n");
        npu_free(sets);
        return 2;
    }
    npu_status s;
    if (check) {
        s = cfg_load_file(m, check, &d);
        if (s == NPU_OK) printf("%s: ok\n", check);
    } else {
        if (config) s = cfg_load_file(m, config, &d);
        else { cfg_default(m); s = NPU_OK; }
        for (int i = 0; s == NPU_OK && i < nsets; i++) s = cfg_set_kv(m, sets[i], &d);
        if (s == NPU_OK) s = cfg_validate(m, &d);
        if (s == NPU_OK) {
            char *text = cfg_dump_json(m);
            if (!text) {
                s = npu_errf(&d, NPU_ENOMEM, "out of memory");
            } else if (out) {
                s = npu_write_file_atomic(out, text, strlen(text), &d);
            } else {
                fputs(text, stdout);
            }
            npu_free(text);
        }
    }
    if (s != NPU_OK) {
        fprintf(stderr, "npusim config: %s\n", d.msg);
        rc = 2;
    }
    npu_free(m);
    npu_free(sets);
    return rc;
}
