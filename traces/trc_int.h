/* trc_int.h — internals shared by the writer, reader and exporters: the byte
 * layout constants of docs/trace-format.md, little-endian and LEB128
 * helpers, the record codec and a small u64 hash map. */
#ifndef TRC_INT_H
#define TRC_INT_H

#include <string.h>

#include "traces/trace.h"

/* ---- layout (docs/trace-format.md) ------------------------------------ */
#define TRC_VERSION_MAJOR 1
#define TRC_VERSION_MINOR 0
#define TRC_HEADER_SIZE   32
#define TRC_CHUNK_HDR     52
#define TRC_FOOTER_SIZE   24
#define TRC_PROBE_U32     0x12345678u
#define TRC_PROBE_F64     370.5
static const uint8_t trc_file_magic[8] = { 0x89, 'N', 'P', 'T', '\r', '\n', 0x1a, '\n' };
static const uint8_t trc_chunk_magic[4] = { 'N', 'P', 'T', 'C' };
static const uint8_t trc_footer_magic[4] = { 'N', 'P', 'T', 'E' };

enum { TRC_CH_META = 1, TRC_CH_EVENTS = 2, TRC_CH_DISASM = 3, TRC_CH_INDEX = 4 };
#define TRC_CHF_ZLIB 1u

/* Records per events chunk (the writer's sort buffer). */
#define TRC_CHUNK_EVENTS 16384
/* Largest raw (uncompressed) chunk payload a reader accepts: a corrupted
 * length field can never make it allocate more. */
#define TRC_MAX_RAW (64u << 20)
/* Longest possible record: tag + core + pipe2 + id + aux + 6 u64 varints. */
#define TRC_MAX_RECORD (1 + 5 + 1 + 5 + 5 + 6 * 10)

typedef struct trc_chunk_hdr {
    uint8_t type, flags;
    uint32_t stored, raw, count;
    uint64_t tmin, tmax, tend;
    uint32_t crc;
} trc_chunk_hdr;

/* ---- little-endian and varints ---------------------------------------- */
static inline void trc_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void trc_put32(uint8_t *p, uint32_t v)
{ for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void trc_put64(uint8_t *p, uint64_t v)
{ for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint16_t trc_get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t trc_get32(const uint8_t *p)
{ uint32_t v = 0; for (int i = 3; i >= 0; i--) v = (v << 8) | p[i]; return v; }
static inline uint64_t trc_get64(const uint8_t *p)
{ uint64_t v = 0; for (int i = 7; i >= 0; i--) v = (v << 8) | p[i]; return v; }

static inline uint8_t *trc_put_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
    *p++ = (uint8_t)v;
    return p;
}
/* Zigzag of a wrapping difference: exact for any pair of u64 values. */
static inline uint64_t trc_zz(uint64_t diff) { return (diff << 1) ^ (uint64_t)((int64_t)diff >> 63); }
static inline uint64_t trc_unzz(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

/* A bounded reader over a byte range: every get checks the end, and a
 * failed get sets bad (later gets return 0). */
typedef struct trc_cur { const uint8_t *p, *end; int bad; } trc_cur;
static inline uint64_t trc_get_uv(trc_cur *c)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) { c->bad = 1; return 0; }
        uint8_t b = *c->p++;
        if (shift == 63 && (b & 0x7e)) { c->bad = 1; return 0; }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    c->bad = 1;
    return 0;
}
static inline uint8_t trc_get_u8(trc_cur *c)
{
    if (c->p >= c->end) { c->bad = 1; return 0; }
    return *c->p++;
}

/* ---- u64 -> u64 hash map (open addressing, linear probing) ----------- */
typedef struct trc_map {
    uint64_t *keys, *vals;
    uint8_t *used;
    size_t cap, n;
} trc_map;
/* Pointer to the value of key (inserted as 0 if absent, *fresh = 1); NULL on OOM. */
uint64_t *trc_map_get(trc_map *m, uint64_t key, int *fresh);
uint64_t *trc_map_find(const trc_map *m, uint64_t key);
int trc_map_del(trc_map *m, uint64_t key);
void trc_map_clear(trc_map *m);
void trc_map_free(trc_map *m);
static inline uint64_t trc_hash64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* The slot set of an events.def row as a constant expression (a slot is
 * used when its name is not ""): one rule for codec.c's kind table and the
 * iterator's decoder, whose switch cases fold their slot tests with it. */
#define TRC_ROW_USED(s) ((sizeof(s) > 1) ? 1u : 0u)
#define TRC_ROW_SLOTS(c, p, p2, i, a, ad, ad2, t0, t1, t2, v)                                  \
    (TRC_ROW_USED(c) << TRC_SLOT_CORE | TRC_ROW_USED(p) << TRC_SLOT_PIPE |                      \
     TRC_ROW_USED(p2) << TRC_SLOT_PIPE2 | TRC_ROW_USED(i) << TRC_SLOT_ID |                      \
     TRC_ROW_USED(a) << TRC_SLOT_AUX | TRC_ROW_USED(ad) << TRC_SLOT_ADDR |                      \
     TRC_ROW_USED(ad2) << TRC_SLOT_ADDR2 | TRC_ROW_USED(t0) << TRC_SLOT_T0 |                    \
     TRC_ROW_USED(t1) << TRC_SLOT_T1 | TRC_ROW_USED(t2) << TRC_SLOT_T2 | TRC_ROW_USED(v) << TRC_SLOT_VAL)

/* ---- record codec (codec.c) ------------------------------------------ */
/* Per-chunk delta state of one stream (reset at each chunk boundary). */
typedef struct trc_stream { uint64_t t0, addr, val; } trc_stream;

/* The key of a record's delta stream (docs/trace-format.md): counters by
 * (unit, counter id), HBM commands by (channel, pseudo-channel), the rest
 * by (core, pipe, or 7 for a kind without a pipe); sub (trc_stream_sub) is
 * the second part. One rule for the codec and the iterator's fast decoder. */
static inline uint32_t trc_stream_sub(unsigned cls, unsigned slots, unsigned pipe, uint32_t id)
{
    return cls == TRC_CLASS_COUNTER ? id : cls == TRC_CLASS_HBM ? pipe
         : (slots & (1u << TRC_SLOT_PIPE)) ? pipe : 7;
}
static inline uint64_t trc_stream_key(unsigned cls, uint32_t core, uint32_t sub)
{
    return cls == TRC_CLASS_COUNTER ? ((uint64_t)core << 34) ^ ((uint64_t)sub << 2) ^ 1
         : cls == TRC_CLASS_HBM ? (((uint64_t)core << 8 | sub) << 2) | 2
         : ((uint64_t)core << 8 | sub) << 2;
}
typedef struct trc_codec {
    trc_stream *streams;        /* pool, indexed by map values */
    size_t n_streams, cap_streams;
    trc_map map;                /* stream key -> index into streams */
    uint32_t last_core;
    int have_core;
} trc_codec;
void trc_codec_reset(trc_codec *c);
void trc_codec_free(trc_codec *c);
/* The delta stream of a key (trc_stream_key), zeroed when new; NULL on OOM. */
trc_stream *trc_codec_stream(trc_codec *c, uint64_t key);
/* Encode e at p (room for TRC_MAX_RECORD bytes); returns the end, NULL on OOM. */
uint8_t *trc_encode(trc_codec *c, const trc_event *e, uint8_t *p);
/* Decode one record; 0 ok, -1 malformed, -2 OOM. */
int trc_decode(trc_codec *c, trc_cur *cur, trc_event *e);

/* Header / footer / chunk-header parse and build (codec.c). */
void trc_chunk_hdr_put(uint8_t out[TRC_CHUNK_HDR], const trc_chunk_hdr *h);
/* 0 ok; else -1 bad magic, -2 bad header CRC, -3 bad fields. */
int trc_chunk_hdr_get(const uint8_t in[TRC_CHUNK_HDR], trc_chunk_hdr *h);
uint32_t trc_crc(const void *p, size_t n);

#endif
