/* npu_util.c — status names, diagnostics, the allocation hook, file I/O. */
#include "isa/npu_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cJSON.h>

static const char *const status_names[] = {
#define NPU_STATUS(id, name, doc) name,
#include "isa/status.def"
#undef NPU_STATUS
};

const char *npu_status_name(npu_status s)
{
    if ((unsigned)s >= NPU_ARRAY_LEN(status_names))
        return "unknown";
    return status_names[s];
}

npu_status npu_verrf(npu_diag *d, npu_status code, const char *fmt, va_list ap)
{
    if (d) {
        d->status = code;
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    }
    return code;
}

npu_status npu_errf(npu_diag *d, npu_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    npu_verrf(d, code, fmt, ap);
    va_end(ap);
    return code;
}

void npu_diag_prefix(npu_diag *d, const char *fmt, ...)
{
    if (!d)
        return;
    char pre[512], old[sizeof d->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, d->msg, sizeof old);
    size_t pl = strlen(pre);
    if (pl > sizeof d->msg - 3)
        pl = sizeof d->msg - 3;
    memcpy(d->msg, pre, pl);
    d->msg[pl] = ':';
    d->msg[pl + 1] = ' ';
    size_t ol = strlen(old);
    if (pl + 2 + ol > sizeof d->msg - 1)
        ol = sizeof d->msg - 1 - pl - 2;
    memcpy(d->msg + pl + 2, old, ol);
    d->msg[pl + 2 + ol] = 0;
}

void npu_diag_clear(npu_diag *d)
{
    if (d) {
        d->status = NPU_OK;
        d->msg[0] = 0;
    }
}

/* ---- allocation hook ---------------------------------------------------- */

static _Thread_local long alloc_fail_at;   /* 0 = off */
static _Thread_local long alloc_count;
static _Thread_local int alloc_failed_flag;

static int alloc_should_fail(void)
{
    alloc_count++;
    if (alloc_fail_at && alloc_count == alloc_fail_at) {
        alloc_failed_flag = 1;
        return 1;
    }
    return 0;
}

long npu_alloc_fail_after(long n)
{
    long c = alloc_count;
    alloc_fail_at = n;
    alloc_count = 0;
    alloc_failed_flag = 0;
    return c;
}

int npu_alloc_failed(void) { return alloc_failed_flag; }

int npu_alloc_fail_armed(void) { return alloc_fail_at != 0; }

int npu_parse_count(const char *s, int size_suffix, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)s[0])) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno == ERANGE) return -2;
    if (end == s) return -1;
    if (*end) {
        if (!size_suffix) return -1;
        unsigned shift;
        switch (*end) {
        case 'K': case 'k': shift = 10; break;
        case 'M': case 'm': shift = 20; break;
        case 'G': case 'g': shift = 30; break;
        case 'T': case 't': shift = 40; break;
        default: return -1;
        }
        end++;
        /* "512K", "512KB", "512KiB" */
        if (strcmp(end, "") != 0 && strcmp(end, "B") != 0 && strcmp(end, "iB") != 0)
            return -1;
        if (v > (UINT64_MAX >> shift)) return -2;
        v <<= shift;
    }
    *out = v;
    return 0;
}

int npu_parse_u64(const char *s, uint64_t *v)
{
    return npu_parse_count(s, 0, v) ? -1 : 0;
}

int npu_json_dup_key(const cJSON *obj, const cJSON *item)
{
    if (!obj || !item || !item->string)
        return 0;
    for (const cJSON *e = obj->child; e && e != item; e = e->next)
        if (e->string && !strcmp(e->string, item->string))
            return 1;
    return 0;
}

void *npu_malloc(size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *npu_calloc(size_t count, size_t size)
{
    if (alloc_should_fail())
        return NULL;
    if (count == 0 || size == 0)
        count = size = 1;
    return calloc(count, size);
}

void *npu_realloc(void *p, size_t n)
{
    if (alloc_should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void npu_free(void *p) { free(p); }

char *npu_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = npu_malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}

/* ---- byte buffer ---------------------------------------------------------- */

int npu_buf_append(npu_buf *b, const void *p, size_t n)
{
    if (b->oom)
        return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        uint8_t *nd = npu_realloc(b->data, cap);
        if (!nd) {
            b->oom = 1;
            return -1;
        }
        b->data = nd;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return 0;
}

int npu_buf_printf(npu_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof small)
        return npu_buf_append(b, small, (size_t)n);
    char *big = npu_malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int r = npu_buf_append(b, big, (size_t)n);
    npu_free(big);
    return r;
}

void npu_buf_free(npu_buf *b)
{
    npu_free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

/* ---- files ---------------------------------------------------------------- */

static npu_status inflate_gzip(const char *path, const uint8_t *in, size_t in_len,
                               size_t max_len, uint8_t **out, size_t *out_len,
                               npu_diag *d)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return npu_errf(d, NPU_ENOMEM, "%s: cannot start gzip decoder", path);
    npu_buf b = {0};
    uint8_t chunk[65536];
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)in_len;
    int rc;
    do {
        zs.next_out = chunk;
        zs.avail_out = sizeof chunk;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&zs);
            npu_buf_free(&b);
            return npu_errf(d, NPU_EFORMAT, "%s: corrupt gzip data at compressed offset %lu",
                            path, (unsigned long)zs.total_in);
        }
        if (npu_buf_append(&b, chunk, sizeof chunk - zs.avail_out)) {
            inflateEnd(&zs);
            npu_buf_free(&b);
            return npu_errf(d, NPU_ENOMEM, "%s: out of memory inflating", path);
        }
        if (b.len > max_len) {
            inflateEnd(&zs);
            npu_buf_free(&b);
            return npu_errf(d, NPU_EFORMAT, "%s: inflated size exceeds the limit of %zu bytes",
                            path, max_len);
        }
        if (rc != Z_STREAM_END && zs.avail_in == 0 && zs.avail_out != 0) {
            inflateEnd(&zs);
            npu_buf_free(&b);
            return npu_errf(d, NPU_EFORMAT, "%s: truncated gzip data", path);
        }
    } while (rc != Z_STREAM_END);
    inflateEnd(&zs);
    if (npu_buf_append(&b, "", 0)) {
        npu_buf_free(&b);
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
    }
    *out = b.data;
    *out_len = b.len;
    return NPU_OK;
}

size_t npu_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 127 || lb > 127)
        return (size_t)-1;
    size_t row[128];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

void npu_suggest(const char *key, size_t n, const char *(*name)(size_t i, void *ctx), void *ctx,
                 const char *prefix, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = 0;
    size_t best = n, best_d = (size_t)-1, lcp = 0;   /* indices: name() may reuse one buffer */
    for (size_t i = 0; i < n; i++) {
        const char *c = name(i, ctx);
        if (!c)
            continue;
        size_t dd = npu_edit_distance(key, c);
        if (dd < best_d) {
            best_d = dd;
            best = i;
        }
        size_t k = 0;
        while (key[k] && key[k] == c[k])
            k++;
        if (k > lcp)
            lcp = k;
    }
    size_t limit = strlen(key) / 4;
    if (limit < 2)
        limit = 2;
    if (best < n && best_d <= limit) {
        snprintf(buf, len, " (did you mean %s%s?)", prefix ? prefix : "", name(best, ctx));
        return;
    }
    /* a shared prefix that reaches past the first dot ("core.l1" of
     * core.l1_bytes): the names under it */
    const char *dot = strchr(key, '.');
    if (!dot || lcp <= (size_t)(dot - key) + 1)
        return;
    size_t total = 0, pick[4];
    for (size_t i = 0; i < n; i++) {
        const char *c = name(i, ctx);
        if (c && strncmp(c, key, lcp) == 0) {
            if (total < 4)
                pick[total] = i;
            total++;
        }
    }
    size_t used = 0;
    for (size_t k = 0; k < total && k < 4; k++) {
        int w = snprintf(buf + used, len - used, "%s%s%s", k ? ", " : total == 1 ? " (did you mean " : " (did you mean one of ",
                         prefix ? prefix : "", name(pick[k], ctx));
        if (w < 0 || (size_t)w >= len - used) {
            buf[0] = 0;
            return;
        }
        used += (size_t)w;
    }
    if (total > 4)
        snprintf(buf + used, len - used, ", ... (%zu more)?)", total - 4);
    else if (total)
        snprintf(buf + used, len - used, "?)");
}

const char *npu_reference_dir(char *buf, size_t n)
{
    const char *ref = getenv("NPU_REFERENCE"), *root = getenv("NPU_ROOT");
    if (ref && *ref)
        snprintf(buf, n, "%s", ref);
    else
        snprintf(buf, n, "%s/../shared/reference", root && *root ? root : ".");
    return buf;
}

npu_status npu_read_file(const char *path, int gz_ok, size_t max_len,
                         uint8_t **data, size_t *len, npu_diag *d)
{
    *data = NULL;
    *len = 0;
    if (!max_len)
        max_len = (size_t)1 << 30;
    FILE *f = fopen(path, "rb");
    if (!f)
        return npu_errf(d, NPU_EIO, "%s: cannot open: %s", path, strerror(errno));
    npu_buf b = {0};
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.len + n > max_len) {
            fclose(f);
            npu_buf_free(&b);
            return npu_errf(d, NPU_EFORMAT, "%s: file larger than the limit of %zu bytes",
                            path, max_len);
        }
        if (npu_buf_append(&b, chunk, n)) {
            fclose(f);
            npu_buf_free(&b);
            return npu_errf(d, NPU_ENOMEM, "%s: out of memory reading", path);
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        npu_buf_free(&b);
        return npu_errf(d, NPU_EIO, "%s: read error", path);
    }
    if (npu_buf_append(&b, "", 0)) {
        npu_buf_free(&b);
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory reading", path);
    }
    if (gz_ok && b.len >= 2 && b.data[0] == 0x1f && b.data[1] == 0x8b) {
        npu_status s = inflate_gzip(path, b.data, b.len, max_len, data, len, d);
        npu_buf_free(&b);
        return s;
    }
    *data = b.data;
    *len = b.len;
    return NPU_OK;
}

npu_status npu_write_file_atomic(const char *path, const void *data, size_t len,
                                 npu_diag *d)
{
    size_t pl = strlen(path);
    char *tmp = npu_malloc(pl + 32);
    if (!tmp)
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        npu_status s = npu_errf(d, NPU_EIO, "%s: cannot create: %s", path, strerror(errno));
        npu_free(tmp);
        return s;
    }
    int bad = len && fwrite(data, 1, len, f) != len;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        npu_status s = npu_errf(d, NPU_EIO, "%s: cannot write: %s", path, strerror(errno));
        remove(tmp);
        npu_free(tmp);
        return s;
    }
    npu_free(tmp);
    return NPU_OK;
}

/* ---- a status line on a terminal ------------------------------------------ */

#define TTY_AFTER_S 2.0    /* jobs shorter than this show nothing */
#define TTY_PERIOD_S 0.5

static struct {
    int wanted;            /* -1 not yet asked */
    double start, next;
    int shown;
} tty_line = { -1, 0, 0, 0 };

double npu_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int npu_progress_setting(void)
{
    const char *e = getenv("NPUSIM_PROGRESS");
    if (!e || !*e)
        return -1;
    return !strcmp(e, "0") ? 0 : !strcmp(e, "1") ? 1 : -2;
}

int npu_tty_line_wanted(void)
{
    if (tty_line.wanted < 0) {
        int set = npu_progress_setting();
        tty_line.wanted = set >= 0 ? set : isatty(2);
    }
    return tty_line.wanted;
}

void npu_tty_line_start(void)
{
    /* $NPUSIM_PROGRESS_AFTER: the 2 s in other seconds (tests show the
     * line of a short job with 0) */
    const char *e = getenv("NPUSIM_PROGRESS_AFTER");
    char *end;
    double after = e && *e ? strtod(e, &end) : TTY_AFTER_S;
    if (!e || !*e || *end || !(after >= 0 && after <= 3600))
        after = TTY_AFTER_S;
    tty_line.start = npu_mono_s();
    tty_line.next = tty_line.start + after;
    tty_line.shown = 0;
}

void npu_tty_line(const char *fmt, ...)
{
    if (!npu_tty_line_wanted())
        return;
    double now = npu_mono_s();
    if (now < tty_line.next)
        return;
    tty_line.next = now + TTY_PERIOD_S;
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ", %.1f s", now - tty_line.start);
    fflush(stderr);
    tty_line.shown = 1;
}

void npu_tty_line_end(void)
{
    if (tty_line.shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    tty_line.shown = 0;
}
