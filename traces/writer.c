/* writer.c — the streaming trace writer.
 *
 * Memory is bounded: one buffer of TRC_CHUNK_EVENTS events (sorted by start
 * cycle before encoding, since pipes finish out of order), its encoded form
 * and its compressed form, plus the disassembly waiting for its chunk and
 * one index entry per chunk written. Everything goes to "path.tmp.PID";
 * close appends the index and footer and renames, so an interrupted run
 * leaves nothing under the requested name. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "traces/trc_int.h"

/* zlib level. Measured on 5M synthetic events (docs/trace-format.md):
 * level 3 costs ~0.29 us/event and gives 4.6 B per INSN event; level 6
 * ~0.49 us for 4.4 B; level 1 ~0.26 us for 4.9 B. 3 keeps recording cheap. */
#ifndef TRC_ZLEVEL
#define TRC_ZLEVEL 3
#endif

typedef struct wstat { npu_status status; npu_diag diag; } wstat;

typedef struct idx_entry {
    uint64_t off, tmin, tmax, tend;
    uint32_t count;
    uint8_t type;
} idx_entry;

struct trc_writer {
    FILE *f;
    char *path, *tmp;
    uint64_t off;               /* bytes written so far */
    trc_event *ev, *scratch;    /* the chunk being filled and the sort scratch */
    size_t n_ev, chunk_events;  /* events so far; events per chunk */
    uint8_t *raw, *z;           /* encoded payload, compressed payload */
    size_t z_cap;
    trc_codec codec;
    npu_buf dis;                /* pending disassembly records */
    uint32_t dis_count;
    trc_map dis_seen;           /* pcs already registered */
    idx_entry *idx;
    size_t n_idx, cap_idx;
    uint64_t events;
    wstat ms;                   /* the caller's status (sticky) */
    /* The compressor thread: flush_events hands a full chunk of events over
     * (job) and the caller fills the other event buffer while the thread
     * sorts, encodes, compresses and writes; so the caller's cost per event
     * is a copy. Everything the thread touches (scratch, codec, raw, z, f,
     * off, idx, ts) is the thread's while a job is out and the caller's
     * after drain(). The output is the same bytes either way. */
    int threaded;
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    trc_event *ev_spare;        /* the other event buffer */
    int job_full, quit;
    struct { trc_event *ev; size_t n; } job;
    wstat ts;                   /* the thread's status, merged by drain() */
};

static npu_status failx(wstat *s, npu_status st, const char *fmt, const char *a)
{
    if (s->status == NPU_OK) {
        s->status = st;
        npu_errf(&s->diag, st, fmt, a);
    }
    return s->status;
}
static npu_status fail(trc_writer *w, npu_status st, const char *fmt, const char *a)
{
    return failx(&w->ms, st, fmt, a);
}

static npu_status putx(trc_writer *w, wstat *s, const void *p, size_t n)
{
    if (s->status != NPU_OK)
        return s->status;
    if (n && fwrite(p, 1, n, w->f) != n)
        return failx(s, NPU_EIO, "%s: write failed", w->tmp);
    w->off += n;
    return NPU_OK;
}
static npu_status put(trc_writer *w, const void *p, size_t n) { return putx(w, &w->ms, p, n); }

/* Write one chunk: header then payload, compressed when that is smaller. */
static npu_status put_chunkx(trc_writer *w, wstat *s, uint8_t type, const uint8_t *raw,
                             size_t raw_len, uint32_t count, uint64_t tmin, uint64_t tmax,
                             uint64_t tend)
{
    if (s->status != NPU_OK)
        return s->status;
    if (raw_len > TRC_MAX_RAW)
        return failx(s, NPU_EINVAL, "%s: a chunk payload exceeds the 64 MiB limit", w->tmp);
    size_t need = compressBound((uLong)raw_len);
    if (need > w->z_cap) {
        uint8_t *nz = npu_realloc(w->z, need);
        if (!nz)
            return failx(s, NPU_ENOMEM, "%s: out of memory for a chunk", w->tmp);
        w->z = nz;
        w->z_cap = need;
    }
    uLongf zlen = (uLongf)w->z_cap;
    trc_chunk_hdr h = { .type = type, .count = count, .tmin = tmin, .tmax = tmax, .tend = tend };
    const uint8_t *payload = raw;
    size_t plen = raw_len;
    if (compress2(w->z, &zlen, raw, (uLong)raw_len, TRC_ZLEVEL) == Z_OK && zlen < raw_len) {
        payload = w->z;
        plen = zlen;
        h.flags = TRC_CHF_ZLIB;
    }
    h.stored = (uint32_t)plen;
    h.raw = (uint32_t)raw_len;
    h.crc = trc_crc(payload, plen);
    uint8_t hb[TRC_CHUNK_HDR];
    trc_chunk_hdr_put(hb, &h);
    if (type != TRC_CH_INDEX) {
        if (w->n_idx == w->cap_idx) {
            size_t nc = w->cap_idx ? w->cap_idx * 2 : 64;
            idx_entry *ni = npu_realloc(w->idx, nc * sizeof *ni);
            if (!ni)
                return failx(s, NPU_ENOMEM, "%s: out of memory for the index", w->tmp);
            w->idx = ni;
            w->cap_idx = nc;
        }
        w->idx[w->n_idx++] = (idx_entry){ w->off, tmin, tmax, tend, count, type };
    }
    putx(w, s, hb, sizeof hb);
    return putx(w, s, payload, plen);
}
static npu_status put_chunk(trc_writer *w, uint8_t type, const uint8_t *raw, size_t raw_len,
                            uint32_t count, uint64_t tmin, uint64_t tmax, uint64_t tend)
{
    return put_chunkx(w, &w->ms, type, raw, raw_len, count, tmin, tmax, tend);
}

/* ---- the compressor thread -------------------------------------------------- */
static npu_status encode_put(trc_writer *w, wstat *s, trc_event *ev, size_t n);
static void *compressor(void *arg)
{
    trc_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->job_full && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->job_full)
            break;
        pthread_mutex_unlock(&w->mu);
        if (w->ts.status == NPU_OK)
            encode_put(w, &w->ts, w->job.ev, w->job.n);
        pthread_mutex_lock(&w->mu);
        w->job_full = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Wait until the thread is idle; take over its error, if any. */
static npu_status drain(trc_writer *w)
{
    if (!w->threaded)
        return w->ms.status;
    pthread_mutex_lock(&w->mu);
    while (w->job_full)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    if (w->ts.status != NPU_OK && w->ms.status == NPU_OK)
        w->ms = w->ts;
    return w->ms.status;
}

static void stop_thread(trc_writer *w)
{
    if (!w->threaded)
        return;
    drain(w);
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thr, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    w->threaded = 0;
}

/* Stable merge sort by t0 (stability keeps arrival order for equal starts,
 * which makes the file a pure function of the event sequence). Nearly
 * sorted input costs about one comparison per element per level. */
static void msort(trc_event *a, trc_event *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    msort(a, tmp, h);
    msort(a + h, tmp, n - h);
    if (a[h - 1].t0 <= a[h].t0)
        return;
    memcpy(tmp, a, h * sizeof *a);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        a[k++] = (a[j].t0 < tmp[i].t0) ? a[j++] : tmp[i++];
    while (i < h)
        a[k++] = tmp[i++];
}

/* Sort, encode and write one chunk of events (on the compressor thread
 * when there is one; errors go to s). */
static npu_status encode_put(trc_writer *w, wstat *s, trc_event *ev, size_t n)
{
    msort(ev, w->scratch, n);
    trc_codec_reset(&w->codec);
    uint8_t *p = w->raw;
    uint64_t tmin = ev[0].t0, tmax = ev[n - 1].t0, tend = 0;
    for (size_t i = 0; i < n; i++) {
        p = trc_encode(&w->codec, &ev[i], p);
        if (!p)
            return failx(s, NPU_ENOMEM, "%s: out of memory encoding a chunk", w->tmp);
        uint64_t e = trc_event_end(&ev[i]);
        if (e > tend)
            tend = e;
    }
    if (tend < tmax)
        tend = tmax;
    return put_chunkx(w, s, TRC_CH_EVENTS, w->raw, (size_t)(p - w->raw), (uint32_t)n, tmin, tmax,
                      tend);
}

static npu_status flush_events(trc_writer *w)
{
    if (w->ms.status != NPU_OK || w->n_ev == 0)
        return w->ms.status;
    size_t n = w->n_ev;
    w->n_ev = 0;
    if (!w->threaded)
        return encode_put(w, &w->ms, w->ev, n);
    if (drain(w) != NPU_OK)
        return w->ms.status;
    pthread_mutex_lock(&w->mu);
    w->job.ev = w->ev;
    w->job.n = n;
    w->job_full = 1;
    trc_event *t = w->ev;
    w->ev = w->ev_spare;
    w->ev_spare = t;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NPU_OK;
}

static npu_status flush_disasm(trc_writer *w)
{
    if (w->ms.status != NPU_OK || w->dis_count == 0)
        return w->ms.status;
    if (w->dis.oom)
        return fail(w, NPU_ENOMEM, "%s: out of memory for the disassembly", w->tmp);
    if (drain(w) != NPU_OK)
        return w->ms.status;
    npu_status st = put_chunk(w, TRC_CH_DISASM, w->dis.data, w->dis.len, w->dis_count, 0, 0, 0);
    w->dis.len = 0;
    w->dis_count = 0;
    return st;
}

/* ---- meta (a TLV list: docs/trace-format.md "meta chunk") ----------------- */
static void tlv(npu_buf *b, uint64_t tag, const void *p, size_t n)
{
    uint8_t v[20], *q = trc_put_uv(trc_put_uv(v, tag), n);
    npu_buf_append(b, v, (size_t)(q - v));
    npu_buf_append(b, p, n);
}
static void tlv_str(npu_buf *b, uint64_t tag, const char *s)
{
    if (s)
        tlv(b, tag, s, strlen(s));
}
static void tlv_uv(npu_buf *b, uint64_t tag, uint64_t x)
{
    uint8_t v[10];
    tlv(b, tag, v, (size_t)(trc_put_uv(v, x) - v));
}
static void tlv_names(npu_buf *b, uint64_t tag, const trc_names *t)
{
    for (uint32_t i = 0; i < t->count; i++) {
        if (!t->names || !t->names[i])
            continue;
        size_t n = strlen(t->names[i]);
        uint8_t v[10], *q = trc_put_uv(v, i);
        uint8_t *tmp = npu_malloc((size_t)(q - v) + n + 1);
        if (!tmp) {
            b->oom = 1;
            return;
        }
        memcpy(tmp, v, (size_t)(q - v));
        memcpy(tmp + (q - v), t->names[i], n);
        tlv(b, tag, tmp, (size_t)(q - v) + n);
        npu_free(tmp);
    }
}

static int encode_meta(npu_buf *b, const trc_meta *m)
{
    tlv_str(b, 1, m->config_json);
    uint8_t g[8];
    double ghz = m->clock_ghz;
    uint64_t bits;
    memcpy(&bits, &ghz, 8);
    trc_put64(g, bits);
    tlv(b, 2, g, 8);
    tlv_uv(b, 3, m->n_cores);
    tlv_uv(b, 4, m->seed);
    tlv_str(b, 5, m->kernel);
    tlv_str(b, 6, m->level);
    tlv_uv(b, 7, m->counter_interval);
    for (uint32_t i = 0; i < m->n_symbols; i++) {
        const trc_symbol *s = &m->symbols[i];
        const char *name = s->name ? s->name : "";
        size_t n = strlen(name);
        uint8_t *tmp = npu_malloc(21 + n);
        if (!tmp)
            return -1;
        uint8_t *q = trc_put_uv(trc_put_uv(tmp, s->addr), s->size);
        *q++ = (uint8_t)(s->is_function != 0);
        memcpy(q, name, n);
        tlv(b, 8, tmp, (size_t)(q - tmp) + n);
        npu_free(tmp);
    }
    tlv_names(b, 9, &m->opcodes);
    tlv_names(b, 10, &m->causes);
    tlv_names(b, 11, &m->counters);
    tlv_names(b, 12, &m->hbm_commands);
    tlv_names(b, 13, &m->units);
    return b->oom ? -1 : 0;
}

static void free_writer(trc_writer *w)
{
    stop_thread(w);
    if (w->f)
        fclose(w->f);
    if (w->tmp)
        remove(w->tmp);
    npu_free(w->path); npu_free(w->tmp);
    npu_free(w->ev); npu_free(w->scratch); npu_free(w->raw); npu_free(w->ev_spare); npu_free(w->z);
    trc_codec_free(&w->codec);
    npu_buf_free(&w->dis);
    trc_map_free(&w->dis_seen);
    npu_free(w->idx);
    npu_free(w);
}

trc_writer *trc_writer_open(const char *path, const trc_meta *meta, npu_diag *d)
{
    if (!path || !meta) {
        npu_errf(d, NPU_EINVAL, "trc_writer_open: path and meta are required");
        return NULL;
    }
    if (!(meta->clock_ghz > 0) || !isfinite(meta->clock_ghz)) {
        npu_errf(d, NPU_EINVAL, "%s: clock_ghz must be positive (got %g)", path, meta->clock_ghz);
        return NULL;
    }
    trc_writer *w = npu_calloc(1, sizeof *w);
    if (!w) {
        npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    size_t pl = strlen(path);
    w->path = npu_strdup(path);
    w->tmp = npu_malloc(pl + 32);
    w->ev = npu_malloc(TRC_CHUNK_EVENTS * sizeof *w->ev);
    w->scratch = npu_malloc(TRC_CHUNK_EVENTS / 2 * sizeof *w->ev + sizeof *w->ev);
    w->raw = npu_malloc((size_t)TRC_CHUNK_EVENTS * TRC_MAX_RECORD);
    w->ev_spare = npu_malloc(TRC_CHUNK_EVENTS * sizeof *w->ev);
    /* the z buffer is sized for the largest events chunk now, on this
     * thread, so that the compressor thread does not allocate for it */
    w->z_cap = compressBound((uLong)TRC_CHUNK_EVENTS * TRC_MAX_RECORD);
    w->z = npu_malloc(w->z_cap);
    if (!w->path || !w->tmp || !w->ev || !w->scratch || !w->raw || !w->ev_spare || !w->z) {
        npu_free(w->tmp);
        w->tmp = NULL;
        free_writer(w);
        npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    w->chunk_events = TRC_CHUNK_EVENTS;
    snprintf(w->tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        npu_errf(d, NPU_EIO, "%s: cannot create the trace", w->tmp);
        npu_free(w->tmp);
        w->tmp = NULL;
        free_writer(w);
        return NULL;
    }
    /* File header (32 bytes). */
    uint8_t h[TRC_HEADER_SIZE] = { 0 };
    memcpy(h, trc_file_magic, 8);
    trc_put16(h + 8, TRC_VERSION_MAJOR);
    trc_put16(h + 10, TRC_VERSION_MINOR);
    trc_put16(h + 12, TRC_HEADER_SIZE);
    trc_put16(h + 14, 0);
    trc_put32(h + 16, TRC_PROBE_U32);
    double probe = TRC_PROBE_F64;
    uint64_t pb;
    memcpy(&pb, &probe, 8);
    trc_put64(h + 20, pb);
    trc_put32(h + 28, trc_crc(h, 28));
    put(w, h, sizeof h);
    npu_buf mb = { 0 };
    if (encode_meta(&mb, meta) != 0)
        fail(w, NPU_ENOMEM, "%s: out of memory encoding the metadata", w->tmp);
    else
        put_chunk(w, TRC_CH_META, mb.data, mb.len, 1, 0, 0, 0);
    npu_buf_free(&mb);
    if (w->ms.status != NPU_OK) {
        if (d) *d = w->ms.diag;
        free_writer(w);
        return NULL;
    }
    /* No thread (creation failed): the writer compresses inline. */
    if (pthread_mutex_init(&w->mu, NULL) == 0) {
        if (pthread_cond_init(&w->cv, NULL) == 0) {
            if (pthread_create(&w->thr, NULL, compressor, w) == 0)
                w->threaded = 1;
            else
                pthread_cond_destroy(&w->cv);
        }
        if (!w->threaded)
            pthread_mutex_destroy(&w->mu);
    }
    return w;
}

npu_status trc_write(trc_writer *w, const trc_event *e)
{
    if (w->ms.status != NPU_OK)
        return w->ms.status;
    if (e->kind == TRC_KIND_NONE || e->kind >= TRC_NKINDS)
        return fail(w, NPU_EINVAL, "%s: event of unknown kind", w->tmp);
    if ((trc_kind_slots(e->kind) & (1u << TRC_SLOT_PIPE)) && e->pipe > 7)
        return fail(w, NPU_EINVAL, "%s: event pipe out of range 0..7", w->tmp);
    if (w->n_ev >= w->chunk_events && flush_events(w) != NPU_OK)
        return w->ms.status;
    /* Unused slots are not stored: clear them so the sort sees what the
     * reader will see. */
    trc_event c = { 0 };
    unsigned m = trc_kind_slots(e->kind);
    c.kind = e->kind;
    c.core = e->core;
    if (m & (1u << TRC_SLOT_PIPE)) c.pipe = e->pipe;
    if (m & (1u << TRC_SLOT_PIPE2)) c.pipe2 = e->pipe2;
    if (m & (1u << TRC_SLOT_ID)) c.id = e->id;
    if (m & (1u << TRC_SLOT_AUX)) c.aux = e->aux;
    if (m & (1u << TRC_SLOT_ADDR)) c.addr = e->addr;
    if (m & (1u << TRC_SLOT_ADDR2)) c.addr2 = e->addr2;
    c.t0 = e->t0;
    if (m & (1u << TRC_SLOT_T1)) c.t1 = e->t1;
    if (m & (1u << TRC_SLOT_T2)) c.t2 = e->t2;
    if (m & (1u << TRC_SLOT_VAL)) c.val = e->val;
    w->ev[w->n_ev++] = c;
    w->events++;
    return NPU_OK;
}

npu_status trc_writer_add_disasm(trc_writer *w, uint64_t pc, const char *text)
{
    if (w->ms.status != NPU_OK)
        return w->ms.status;
    int fresh = 0;
    if (!trc_map_get(&w->dis_seen, pc, &fresh))
        return fail(w, NPU_ENOMEM, "%s: out of memory for the disassembly", w->tmp);
    if (!fresh)
        return NPU_OK;
    size_t n = text ? strlen(text) : 0;
    uint8_t v[20], *q = trc_put_uv(trc_put_uv(v, pc), n);
    npu_buf_append(&w->dis, v, (size_t)(q - v));
    npu_buf_append(&w->dis, text ? text : "", n);
    w->dis_count++;
    if (w->dis.oom)
        return fail(w, NPU_ENOMEM, "%s: out of memory for the disassembly", w->tmp);
    if (w->dis.len >= (1u << 20))
        return flush_disasm(w);
    return NPU_OK;
}

npu_status trc_writer_error(const trc_writer *w, npu_diag *d)
{
    if (w->ms.status != NPU_OK && d)
        *d = w->ms.diag;
    return w->ms.status;
}

uint64_t trc_writer_events(const trc_writer *w) { return w->events; }

npu_status trc_writer_set_chunk_events(trc_writer *w, uint32_t n)
{
    if (n < 1 || n > TRC_CHUNK_EVENTS)
        return fail(w, NPU_EINVAL, "%s: chunk size must be 1..16384 events", w->tmp);
    if (flush_events(w) != NPU_OK)
        return w->ms.status;
    w->chunk_events = n;
    return NPU_OK;
}

void trc_writer_discard(trc_writer *w)
{
    if (w)
        free_writer(w);
}

npu_status trc_writer_close(trc_writer *w, npu_diag *d)
{
    if (!w)
        return npu_errf(d, NPU_EINVAL, "trc_writer_close: no writer");
    flush_events(w);
    flush_disasm(w);
    stop_thread(w);     /* merges the thread's error */
    if (w->ts.status != NPU_OK && w->ms.status == NPU_OK)
        w->ms = w->ts;
    /* The index: one entry per chunk before it. */
    uint64_t idx_off = w->off;
    npu_buf ib = { 0 };
    uint64_t prev = 0;
    for (size_t i = 0; i < w->n_idx && w->ms.status == NPU_OK; i++) {
        const idx_entry *x = &w->idx[i];
        uint8_t v[64], *q = v;
        q = trc_put_uv(q, x->off - prev);
        *q++ = x->type;
        q = trc_put_uv(q, x->count);
        q = trc_put_uv(q, x->tmin);
        q = trc_put_uv(q, x->tmax - x->tmin);
        q = trc_put_uv(q, x->tend - x->tmin);
        prev = x->off;
        npu_buf_append(&ib, v, (size_t)(q - v));
    }
    if (ib.oom)
        fail(w, NPU_ENOMEM, "%s: out of memory for the index", w->tmp);
    put_chunk(w, TRC_CH_INDEX, ib.data ? ib.data : (const uint8_t *)"", ib.len,
              (uint32_t)w->n_idx, 0, 0, 0);
    npu_buf_free(&ib);
    uint8_t ft[TRC_FOOTER_SIZE];
    trc_put64(ft, idx_off);
    trc_put64(ft + 8, w->events);
    trc_put32(ft + 16, trc_crc(ft, 16));
    memcpy(ft + 20, trc_footer_magic, 4);
    put(w, ft, sizeof ft);
    if (w->ms.status == NPU_OK && fflush(w->f) != 0)
        fail(w, NPU_EIO, "%s: write failed", w->tmp);
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0)
        fail(w, NPU_EIO, "%s: close failed", w->tmp);
    if (w->ms.status == NPU_OK && rename(w->tmp, w->path) != 0)
        fail(w, NPU_EIO, "%s: cannot rename the trace into place", w->path);
    npu_status st = w->ms.status;
    if (st != NPU_OK && d)
        *d = w->ms.diag;
    if (st == NPU_OK) {
        npu_free(w->tmp);
        w->tmp = NULL;
    }
    free_writer(w);
    return st;
}
