/* codec.c — the event table's expansions, the record encoding shared by
 * writer and reader, chunk headers, and the small hash map.
 *
 * A record is: a tag byte (kind in bits 0-3, bit 4 = "same core as the
 * previous record of this chunk", pipe in bits 5-7), the core as a LEB128
 * varint unless bit 4 is set, then the kind's used slots in a fixed order:
 * pipe2 (byte), id, aux (varints), t0 (zigzag delta from the stream's last
 * t0), t1 (zigzag t1 - t0), t2 (zigzag t0 - t2), addr (zigzag delta from
 * the stream's last addr), addr2 (zigzag addr2 - addr), val (zigzag delta
 * from the stream's last val). Streams are per (class, core, pipe) (per
 * counter id for counters) and reset at each chunk, so that any chunk
 * decodes on its own. docs/trace-format.md is the reference. */
#include <zlib.h>

#include "traces/trc_int.h"
#include "isa/isa.h"

/* ---- the table ----------------------------------------------------------- */
typedef struct kind_row {
    const char *name, *doc;
    trc_class cls;
    unsigned slots;
    const char *slot_names[TRC_NSLOTS];
} kind_row;

static const kind_row kind_rows[TRC_NKINDS] = {
    [TRC_KIND_NONE] = { NULL, NULL, TRC_CLASS_CORE, 0, { 0 } },
#define TRC_EVENT(ID, nm, cl, c, p, p2, i, a, ad, ad2, t0, t1, t2, v, dc)                    \
    [TRC_##ID] = { nm, dc, TRC_CLASS_##cl, TRC_ROW_SLOTS(c, p, p2, i, a, ad, ad2, t0, t1, t2, v), \
                   { c, p, p2, i, a, ad, ad2, t0, t1, t2, v } },
#include "traces/events.def"
#undef TRC_EVENT
};

/* The trace's pipe ids are the ISA's (isa/pipes.def), so the names come
 * from that table; these checks stop the two orders from drifting apart. */
#define TRC_PIPE_SAME(p) _Static_assert((int)TRC_PIPE_##p == (int)ISA_PIPE_##p, "trace pipe " #p " != isa/pipes.def");
TRC_PIPES(TRC_PIPE_SAME)
#undef TRC_PIPE_SAME
_Static_assert((int)TRC_NPIPES == (int)ISA_NPIPES, "trace pipes != isa/pipes.def real pipes");

const char *trc_pipe_name(unsigned pipe)
{
    static const char *const other[] = { "pipe7", "pipe8+" };
    if (pipe < TRC_NPIPES)
        return isa_pipe_name((int)pipe);
    return pipe == 7 ? other[0] : other[1];
}

static int kind_ok(unsigned k) { return k > TRC_KIND_NONE && k < TRC_NKINDS; }
const char *trc_kind_name(unsigned k) { return kind_ok(k) ? kind_rows[k].name : NULL; }
const char *trc_kind_doc(unsigned k) { return kind_ok(k) ? kind_rows[k].doc : NULL; }
trc_class trc_kind_class(unsigned k) { return kind_ok(k) ? kind_rows[k].cls : TRC_CLASS_CORE; }
unsigned trc_kind_slots(unsigned k) { return kind_ok(k) ? kind_rows[k].slots : 0; }
const char *trc_slot_name(unsigned k, trc_slot s)
{
    return kind_ok(k) && (unsigned)s < TRC_NSLOTS ? kind_rows[k].slot_names[s] : "";
}

uint64_t trc_event_end(const trc_event *e)
{
    return (trc_kind_slots(e->kind) & (1u << TRC_SLOT_T1)) ? e->t1 : e->t0;
}

static uint64_t slot_value(const trc_event *e, trc_slot s)
{
    switch (s) {
    case TRC_SLOT_CORE: return e->core;
    case TRC_SLOT_PIPE: return e->pipe;
    case TRC_SLOT_PIPE2: return e->pipe2;
    case TRC_SLOT_ID: return e->id;
    case TRC_SLOT_AUX: return e->aux;
    case TRC_SLOT_ADDR: return e->addr;
    case TRC_SLOT_ADDR2: return e->addr2;
    case TRC_SLOT_T0: return e->t0;
    case TRC_SLOT_T1: return e->t1;
    case TRC_SLOT_T2: return e->t2;
    case TRC_SLOT_VAL: return e->val;
    default: return 0;
    }
}

int trc_event_equal(const trc_event *a, const trc_event *b)
{
    if (a->kind != b->kind)
        return 0;
    unsigned m = trc_kind_slots(a->kind);
    for (unsigned s = 0; s < TRC_NSLOTS; s++)
        if ((m & (1u << s)) && slot_value(a, (trc_slot)s) != slot_value(b, (trc_slot)s))
            return 0;
    return 1;
}

/* ---- hash map -------------------------------------------------------------- */
static int map_grow(trc_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    uint64_t *k = npu_calloc(ncap, sizeof *k), *v = npu_calloc(ncap, sizeof *v);
    uint8_t *u = npu_calloc(ncap, 1);
    if (!k || !v || !u) {
        npu_free(k); npu_free(v); npu_free(u);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = trc_hash64(m->keys[i]) & (ncap - 1);
        while (u[j])
            j = (j + 1) & (ncap - 1);
        u[j] = 1; k[j] = m->keys[i]; v[j] = m->vals[i];
    }
    npu_free(m->keys); npu_free(m->vals); npu_free(m->used);
    m->keys = k; m->vals = v; m->used = u; m->cap = ncap;
    return 0;
}

uint64_t *trc_map_find(const trc_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t j = trc_hash64(key) & (m->cap - 1);
    while (m->used[j]) {
        if (m->keys[j] == key)
            return &m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

uint64_t *trc_map_get(trc_map *m, uint64_t key, int *fresh)
{
    uint64_t *v = trc_map_find(m, key);
    if (v) {
        if (fresh) *fresh = 0;
        return v;
    }
    if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0)
        return NULL;
    size_t j = trc_hash64(key) & (m->cap - 1);
    while (m->used[j])
        j = (j + 1) & (m->cap - 1);
    m->used[j] = 1; m->keys[j] = key; m->vals[j] = 0; m->n++;
    if (fresh) *fresh = 1;
    return &m->vals[j];
}

int trc_map_del(trc_map *m, uint64_t key)
{
    uint64_t *v = trc_map_find(m, key);
    if (!v)
        return 0;
    size_t j = (size_t)(v - m->vals);
    m->used[j] = 0;
    m->n--;
    /* Re-insert the rest of the probe run so lookups stay correct. */
    size_t i = (j + 1) & (m->cap - 1);
    while (m->used[i]) {
        uint64_t k = m->keys[i], val = m->vals[i];
        m->used[i] = 0;
        size_t t = trc_hash64(k) & (m->cap - 1);
        while (m->used[t])
            t = (t + 1) & (m->cap - 1);
        m->used[t] = 1; m->keys[t] = k; m->vals[t] = val;
        i = (i + 1) & (m->cap - 1);
    }
    return 1;
}

void trc_map_clear(trc_map *m)
{
    if (m->cap)
        memset(m->used, 0, m->cap);
    m->n = 0;
}

void trc_map_free(trc_map *m)
{
    npu_free(m->keys); npu_free(m->vals); npu_free(m->used);
    memset(m, 0, sizeof *m);
}

/* ---- codec ---------------------------------------------------------------- */
void trc_codec_reset(trc_codec *c)
{
    trc_map_clear(&c->map);
    c->n_streams = 0;
    c->have_core = 0;
    c->last_core = 0;
}

void trc_codec_free(trc_codec *c)
{
    trc_map_free(&c->map);
    npu_free(c->streams);
    memset(c, 0, sizeof *c);
}

static uint64_t stream_key(const trc_event *e, unsigned slots)
{
    unsigned cls = trc_kind_class(e->kind);
    return trc_stream_key(cls, e->core, trc_stream_sub(cls, slots, e->pipe, e->id));
}

trc_stream *trc_codec_stream(trc_codec *c, uint64_t key)
{
    int fresh = 0;
    uint64_t *v = trc_map_get(&c->map, key, &fresh);
    if (!v)
        return NULL;
    if (fresh) {
        if (c->n_streams == c->cap_streams) {
            size_t ncap = c->cap_streams ? c->cap_streams * 2 : 64;
            trc_stream *ns = npu_realloc(c->streams, ncap * sizeof *ns);
            if (!ns) {
                trc_map_del(&c->map, key);
                return NULL;
            }
            c->streams = ns;
            c->cap_streams = ncap;
        }
        *v = c->n_streams;
        memset(&c->streams[c->n_streams++], 0, sizeof(trc_stream));
    }
    return &c->streams[*v];
}

static trc_stream *stream_of(trc_codec *c, const trc_event *e, unsigned slots)
{
    return trc_codec_stream(c, stream_key(e, slots));
}

uint8_t *trc_encode(trc_codec *c, const trc_event *e, uint8_t *p)
{
    unsigned slots = trc_kind_slots(e->kind);
    unsigned pipe = (slots & (1u << TRC_SLOT_PIPE)) ? (e->pipe & 7u) : 0;
    int same = c->have_core && c->last_core == e->core;
    *p++ = (uint8_t)(e->kind | (same ? 0x10 : 0) | (pipe << 5));
    if (!same)
        p = trc_put_uv(p, e->core);
    c->have_core = 1;
    c->last_core = e->core;
    if (slots & (1u << TRC_SLOT_PIPE2)) *p++ = e->pipe2;
    if (slots & (1u << TRC_SLOT_ID)) p = trc_put_uv(p, e->id);
    if (slots & (1u << TRC_SLOT_AUX)) p = trc_put_uv(p, e->aux);
    trc_event k = *e;
    k.pipe = (uint8_t)pipe;
    trc_stream *st = stream_of(c, &k, slots);
    if (!st)
        return NULL;
    p = trc_put_uv(p, trc_zz(e->t0 - st->t0));
    st->t0 = e->t0;
    if (slots & (1u << TRC_SLOT_T1)) p = trc_put_uv(p, trc_zz(e->t1 - e->t0));
    if (slots & (1u << TRC_SLOT_T2)) p = trc_put_uv(p, trc_zz(e->t0 - e->t2));
    if (slots & (1u << TRC_SLOT_ADDR)) {
        p = trc_put_uv(p, trc_zz(e->addr - st->addr));
        st->addr = e->addr;
    }
    if (slots & (1u << TRC_SLOT_ADDR2)) p = trc_put_uv(p, trc_zz(e->addr2 - e->addr));
    if (slots & (1u << TRC_SLOT_VAL)) {
        p = trc_put_uv(p, trc_zz(e->val - st->val));
        st->val = e->val;
    }
    return p;
}

int trc_decode(trc_codec *c, trc_cur *cur, trc_event *e)
{
    memset(e, 0, sizeof *e);
    uint8_t tag = trc_get_u8(cur);
    if (cur->bad)
        return -1;
    unsigned kind = tag & 15u, pipe = tag >> 5;
    if (!kind_ok(kind))
        return -1;
    unsigned slots = kind_rows[kind].slots;
    if (!(slots & (1u << TRC_SLOT_PIPE)) && pipe)
        return -1;
    e->kind = (uint8_t)kind;
    e->pipe = (uint8_t)pipe;
    if (tag & 0x10) {
        if (!c->have_core)
            return -1;
        e->core = c->last_core;
    } else {
        uint64_t core = trc_get_uv(cur);
        if (core > UINT32_MAX)
            return -1;
        e->core = (uint32_t)core;
    }
    c->have_core = 1;
    c->last_core = e->core;
    if (slots & (1u << TRC_SLOT_PIPE2)) e->pipe2 = trc_get_u8(cur);
    if (slots & (1u << TRC_SLOT_ID)) {
        uint64_t v = trc_get_uv(cur);
        if (v > UINT32_MAX) return -1;
        e->id = (uint32_t)v;
    }
    if (slots & (1u << TRC_SLOT_AUX)) {
        uint64_t v = trc_get_uv(cur);
        if (v > UINT32_MAX) return -1;
        e->aux = (uint32_t)v;
    }
    if (cur->bad)
        return -1;
    trc_stream *st = stream_of(c, e, slots);
    if (!st)
        return -2;
    e->t0 = st->t0 + trc_unzz(trc_get_uv(cur));
    st->t0 = e->t0;
    if (slots & (1u << TRC_SLOT_T1)) e->t1 = e->t0 + trc_unzz(trc_get_uv(cur));
    if (slots & (1u << TRC_SLOT_T2)) e->t2 = e->t0 - trc_unzz(trc_get_uv(cur));
    if (slots & (1u << TRC_SLOT_ADDR)) {
        e->addr = st->addr + trc_unzz(trc_get_uv(cur));
        st->addr = e->addr;
    }
    if (slots & (1u << TRC_SLOT_ADDR2)) e->addr2 = e->addr + trc_unzz(trc_get_uv(cur));
    if (slots & (1u << TRC_SLOT_VAL)) {
        e->val = st->val + trc_unzz(trc_get_uv(cur));
        st->val = e->val;
    }
    return cur->bad ? -1 : 0;
}

/* ---- chunk headers ---------------------------------------------------------- */
uint32_t trc_crc(const void *p, size_t n)
{
    uLong c = crc32(0L, Z_NULL, 0);
    const uint8_t *b = p;
    while (n > 0) {     /* crc32 takes a uInt length */
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, b, k);
        b += k;
        n -= k;
    }
    return (uint32_t)c;
}

void trc_chunk_hdr_put(uint8_t o[TRC_CHUNK_HDR], const trc_chunk_hdr *h)
{
    memcpy(o, trc_chunk_magic, 4);
    o[4] = h->type;
    o[5] = h->flags;
    trc_put16(o + 6, 0);
    trc_put32(o + 8, h->stored);
    trc_put32(o + 12, h->raw);
    trc_put32(o + 16, h->count);
    trc_put64(o + 20, h->tmin);
    trc_put64(o + 28, h->tmax);
    trc_put64(o + 36, h->tend);
    trc_put32(o + 44, h->crc);
    trc_put32(o + 48, trc_crc(o, 48));
}

int trc_chunk_hdr_get(const uint8_t in[TRC_CHUNK_HDR], trc_chunk_hdr *h)
{
    if (memcmp(in, trc_chunk_magic, 4) != 0)
        return -1;
    if (trc_get32(in + 48) != trc_crc(in, 48))
        return -2;
    h->type = in[4];
    h->flags = in[5];
    h->stored = trc_get32(in + 8);
    h->raw = trc_get32(in + 12);
    h->count = trc_get32(in + 16);
    h->tmin = trc_get64(in + 20);
    h->tmax = trc_get64(in + 28);
    h->tend = trc_get64(in + 36);
    h->crc = trc_get32(in + 44);
    if (h->type < TRC_CH_META || h->type > TRC_CH_INDEX || (h->flags & ~TRC_CHF_ZLIB) ||
        trc_get16(in + 6) != 0 || h->raw > TRC_MAX_RAW ||
        (!(h->flags & TRC_CHF_ZLIB) && h->stored != h->raw) || h->count > h->raw ||
        h->tmin > h->tmax)
        return -3;
    return 0;
}
