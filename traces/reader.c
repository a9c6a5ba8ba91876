/* reader.c — opening a trace (with its index, or by scanning for chunk
 * headers when the index is lost), metadata, damage, and the time-ordered
 * iterator that merges chunks.
 *
 * Robustness: every length read from the file is checked against the file
 * size and TRC_MAX_RAW before anything is allocated; every chunk's payload
 * CRC is checked before it is inflated; records are decoded with a bounded
 * cursor. A damaged chunk is skipped and listed (trc_reader_damage) with its
 * byte offset; reading goes on with the next chunk. */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "traces/trc_int.h"

typedef struct chunk_info {
    uint64_t off;
    trc_chunk_hdr h;
    uint8_t checked;    /* 1 = verified intact, 2 = found damaged */
} chunk_info;

typedef struct sym_ent { trc_symbol s; uint64_t end; } sym_ent;

struct trc_reader {
    int fd;                     /* -1 for memory */
    const uint8_t *mem;
    uint64_t size;
    unsigned version;
    chunk_info *ch;             /* every chunk, in file order */
    size_t n_ch, cap_ch;
    size_t *ev_sorted;          /* events chunks by (tmin, file order) */
    size_t n_ev;
    trc_meta meta;
    char **strs;                /* strings owned for meta */
    size_t n_strs, cap_strs;
    sym_ent *funcs, *labels;
    size_t n_funcs, n_labels;
    trc_symbol *syms;           /* meta.symbols */
    uint64_t *dis_pc;           /* sorted */
    char **dis_text;
    size_t n_dis;
    trc_damage *dmg;
    size_t n_dmg, cap_dmg;
    /* Guards dmg and every chunk's checked byte once iterators run: two
     * iterators (trc_iter_new_part) may decode at once, and both may meet
     * the same damaged chunk (a part boundary chunk is read by both). */
    pthread_mutex_t mu;
    int mu_ok;
    char namebuf[32];
    trc_progress_fn prog;       /* trc_reader_set_progress */
    void *prog_user;
};

void trc_reader_set_progress(trc_reader *r, trc_progress_fn fn, void *user)
{
    r->prog = fn;
    r->prog_user = user;
}

/* ---- damage --------------------------------------------------------------- */
static void damage(trc_reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void vdamage(trc_reader *r, uint64_t off, const char *fmt, va_list ap)
{
    if (r->n_dmg == r->cap_dmg) {
        size_t nc = r->cap_dmg ? r->cap_dmg * 2 : 8;
        if (nc > 4096)  /* a shredded file: the first 4096 places are enough */
            return;
        trc_damage *nd = npu_realloc(r->dmg, nc * sizeof *nd);
        if (!nd)
            return;
        r->dmg = nd;
        r->cap_dmg = nc;
    }
    trc_damage *x = &r->dmg[r->n_dmg++];
    x->offset = off;
    vsnprintf(x->what, sizeof x->what, fmt, ap);
}

static void lock(trc_reader *r) { if (r->mu_ok) pthread_mutex_lock(&r->mu); }
static void unlock(trc_reader *r) { if (r->mu_ok) pthread_mutex_unlock(&r->mu); }

static void damage(trc_reader *r, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lock(r);
    vdamage(r, off, fmt, ap);
    unlock(r);
    va_end(ap);
}

static uint8_t chunk_checked(trc_reader *r, const chunk_info *c)
{
    lock(r);
    uint8_t v = c->checked;
    unlock(r);
    return v;
}

/* Mark c damaged and list the damage, unless it was marked already (by
 * another iterator, or an earlier pass). */
static void chunk_damaged(trc_reader *r, chunk_info *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void chunk_damaged(trc_reader *r, chunk_info *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lock(r);
    if (c->checked != 2)
        vdamage(r, c->off, fmt, ap);
    c->checked = 2;
    unlock(r);
    va_end(ap);
}

size_t trc_reader_damage(const trc_reader *r, const trc_damage **list)
{
    if (list)
        *list = r->dmg;
    return r->n_dmg;
}

/* ---- source --------------------------------------------------------------- */
static int src_read(const trc_reader *r, uint64_t off, void *buf, size_t n)
{
    if (off > r->size || n > r->size - off)
        return -1;
    if (r->mem) {
        memcpy(buf, r->mem + off, n);
        return 0;
    }
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t k = pread(r->fd, p, n, (off_t)off);
        if (k <= 0)
            return -1;
        p += k;
        off += (uint64_t)k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reusable buffers of one reader of chunks (an iterator, or a one-off call):
 * the stored bytes, the raw bytes (with TRC_DEC_PAD zero bytes after them,
 * so that the record decoder can read a whole record without a bounds check
 * per byte) and one inflate state, reset per chunk instead of allocated and
 * freed (inflateInit allocates a 32 KB window, and fresh 200 KB buffers
 * per chunk are fresh pages the kernel has to fault in). */
#define TRC_DEC_PAD (TRC_MAX_RECORD + 16)
typedef struct chunk_buf {
    uint8_t *st, *raw;
    size_t cap_st, cap_raw;
    z_stream z;
    int z_ok;               /* z is initialised (raw inflate, no zlib header) */
} chunk_buf;

static void chunk_buf_free(chunk_buf *b)
{
    npu_free(b->st);
    npu_free(b->raw);
    if (b->z_ok)
        inflateEnd(&b->z);
    memset(b, 0, sizeof *b);
}

static int buf_room(uint8_t **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    uint8_t *n = npu_realloc(*p, need);
    if (!n)
        return -1;
    *p = n;
    *cap = need;
    return 0;
}

/* Inflate a zlib stream (as compress2 writes it) into out[raw]. The
 * chunk's CRC, checked before, already proves these are the bytes the
 * writer wrote, so the stream's own Adler-32 is not computed again: the
 * 2-byte zlib header is checked and skipped and the deflate data inflated
 * raw (a header this reader does not expect, e.g. a preset dictionary,
 * goes through plain inflate). 1 = ok. */
static int inflate_chunk(chunk_buf *b, const uint8_t *in, uint32_t n, uint8_t *out, uint32_t raw)
{
    int plain = n < 6 || (in[0] & 0x0f) != 8 || (in[0] >> 4) > 7 || (in[1] & 0x20) ||
                ((unsigned)in[0] << 8 | in[1]) % 31 != 0;
    z_stream z0, *z = &z0;
    memset(&z0, 0, sizeof z0);
    if (plain) {
        if (inflateInit(z) != Z_OK)
            return 0;
    } else {
        if (!b->z_ok) {
            memset(&b->z, 0, sizeof b->z);
            if (inflateInit2(&b->z, -15) != Z_OK)
                return 0;
            b->z_ok = 1;
        } else if (inflateReset(&b->z) != Z_OK) {
            return 0;
        }
        z = &b->z;
        in += 2;
        n -= 2;
    }
    z->next_in = (Bytef *)in;
    z->avail_in = n;
    z->next_out = out;
    z->avail_out = raw;
    int zr = inflate(z, Z_FINISH);
    /* raw: the 4 bytes left are the Adler-32 trailer */
    int ok = zr == Z_STREAM_END && z->total_out == raw && z->avail_in == (plain ? 0u : 4u);
    if (plain)
        inflateEnd(z);
    return ok;
}

/* Read, check and inflate chunk i into b: *out points into b (valid until
 * the next call with b) and has h.raw bytes followed by TRC_DEC_PAD zero
 * bytes. On damage: lists it (once), marks the chunk and returns -1; -2 on
 * OOM. */
static int load_chunk_buf(trc_reader *r, size_t i, chunk_buf *b, uint8_t **out)
{
    chunk_info *c = &r->ch[i];
    *out = NULL;
    if (chunk_checked(r, c) == 2)
        return -1;
    const trc_chunk_hdr *h = &c->h;
    int z = (h->flags & TRC_CHF_ZLIB) != 0;
    if (buf_room(&b->st, &b->cap_st, (size_t)h->stored + (z ? 1 : TRC_DEC_PAD)) != 0)
        return -2;
    if (src_read(r, c->off + TRC_CHUNK_HDR, b->st, h->stored) != 0) {
        chunk_damaged(r, c, "chunk at offset %llu: cannot read its %u payload bytes",
                      (unsigned long long)c->off, h->stored);
        return -1;
    }
    if (trc_crc(b->st, h->stored) != h->crc) {
        chunk_damaged(r, c, "chunk at offset %llu: payload CRC mismatch (%u records lost)",
                      (unsigned long long)c->off, h->count);
        return -1;
    }
    if (!z) {
        memset(b->st + h->stored, 0, TRC_DEC_PAD);
        *out = b->st;
        return 0;
    }
    if (buf_room(&b->raw, &b->cap_raw, (size_t)h->raw + TRC_DEC_PAD) != 0)
        return -2;
    if (!inflate_chunk(b, b->st, h->stored, b->raw, h->raw)) {
        chunk_damaged(r, c, "chunk at offset %llu: does not inflate to its %u bytes",
                      (unsigned long long)c->off, h->raw);
        return -1;
    }
    memset(b->raw + h->raw, 0, TRC_DEC_PAD);
    *out = b->raw;
    return 0;
}

/* The same into a buffer of its own (*out npu_malloc'd, h.raw bytes): for
 * the meta, disassembly and index chunks, read once. */
static int load_chunk(trc_reader *r, size_t i, uint8_t **out)
{
    chunk_buf b;
    memset(&b, 0, sizeof b);
    uint8_t *p;
    int rc = load_chunk_buf(r, i, &b, &p);
    *out = NULL;
    if (rc == 0) {
        /* hand over whichever buffer holds the bytes */
        *out = p == b.raw ? b.raw : b.st;
        if (p == b.raw) b.raw = NULL; else b.st = NULL;
    }
    chunk_buf_free(&b);
    return rc;
}

/* ---- chunk table ------------------------------------------------------------ */
static int add_chunk(trc_reader *r, uint64_t off, const trc_chunk_hdr *h)
{
    if (r->n_ch == r->cap_ch) {
        size_t nc = r->cap_ch ? r->cap_ch * 2 : 64;
        chunk_info *n = npu_realloc(r->ch, nc * sizeof *n);
        if (!n)
            return -1;
        r->ch = n;
        r->cap_ch = nc;
    }
    r->ch[r->n_ch++] = (chunk_info){ off, *h, 0 };
    return 0;
}

/* A header that parses and whose payload fits in the file. zlib cannot
 * inflate more than ~1032x, so a larger raw size is a lie. */
static int header_at(const trc_reader *r, uint64_t off, trc_chunk_hdr *h)
{
    uint8_t b[TRC_CHUNK_HDR];
    if (src_read(r, off, b, sizeof b) != 0)
        return -4;
    int rc = trc_chunk_hdr_get(b, h);
    if (rc != 0)
        return rc;
    if ((h->flags & TRC_CHF_ZLIB) && (uint64_t)h->raw > (uint64_t)h->stored * 1032 + 64)
        return -3;
    if (h->stored > r->size - off - TRC_CHUNK_HDR)
        return -5;
    return 0;
}

static int footer_ok(const trc_reader *r, uint64_t *idx_off)
{
    if (r->size < TRC_HEADER_SIZE + TRC_FOOTER_SIZE)
        return 0;
    uint8_t f[TRC_FOOTER_SIZE];
    if (src_read(r, r->size - TRC_FOOTER_SIZE, f, sizeof f) != 0)
        return 0;
    if (memcmp(f + 20, trc_footer_magic, 4) != 0 || trc_get32(f + 16) != trc_crc(f, 16))
        return 0;
    *idx_off = trc_get64(f);
    return 1;
}

/* Build the chunk table from the index. 0 ok, -1 unusable (scan instead), -2 OOM. */
static int use_index(trc_reader *r, uint64_t idx_off)
{
    trc_chunk_hdr h;
    if (idx_off < TRC_HEADER_SIZE || idx_off > r->size - TRC_FOOTER_SIZE ||
        header_at(r, idx_off, &h) != 0 || h.type != TRC_CH_INDEX ||
        idx_off + TRC_CHUNK_HDR + h.stored != r->size - TRC_FOOTER_SIZE) {
        damage(r, idx_off, "the footer points at offset %llu, where there is no valid index "
               "chunk: chunks found by scanning", (unsigned long long)idx_off);
        return -1;
    }
    if (add_chunk(r, idx_off, &h) != 0)
        return -2;
    uint8_t *raw;
    int rc = load_chunk(r, r->n_ch - 1, &raw);
    r->n_ch--;
    if (rc == -2)
        return -2;
    if (rc != 0) {
        damage(r, idx_off, "index chunk unreadable: chunks found by scanning");
        return -1;
    }
    trc_cur cur = { raw, raw + h.raw, 0 };
    uint64_t off = 0, prev_end = TRC_HEADER_SIZE;
    for (uint32_t i = 0; i < h.count; i++) {
        off += trc_get_uv(&cur);
        uint8_t type = trc_get_u8(&cur);
        uint64_t count = trc_get_uv(&cur), tmin = trc_get_uv(&cur);
        uint64_t dmax = trc_get_uv(&cur), dend = trc_get_uv(&cur);
        if (cur.bad || off < prev_end || off >= idx_off) {
            npu_free(raw);
            r->n_ch = 0;
            damage(r, idx_off, "index chunk malformed at entry %u: chunks found by scanning", i);
            return -1;
        }
        trc_chunk_hdr c;
        int hr = header_at(r, off, &c);
        if (hr != 0 || c.type != type || c.count != count || c.tmin != tmin ||
            c.tmax != tmin + dmax || c.tend != tmin + dend ||
            off + TRC_CHUNK_HDR + c.stored > idx_off) {
            damage(r, off, "chunk at offset %llu: header %s (chunk skipped)",
                   (unsigned long long)off, hr == -2 ? "CRC mismatch" :
                   hr != 0 ? "damaged" : "does not match the index");
            continue;
        }
        if (add_chunk(r, off, &c) != 0) {
            npu_free(raw);
            return -2;
        }
        prev_end = off + TRC_CHUNK_HDR + c.stored;
    }
    npu_free(raw);
    return 0;
}

/* Find the next offset >= from where "NPTC" starts, or r->size. */
static uint64_t find_magic(const trc_reader *r, uint64_t from)
{
    uint8_t buf[65536];
    while (from + 4 <= r->size) {
        size_t n = (size_t)NPU_MIN((uint64_t)sizeof buf, r->size - from);
        if (src_read(r, from, buf, n) != 0)
            return r->size;
        const uint8_t *m = memmem(buf, n, trc_chunk_magic, 4);
        if (m)
            return from + (uint64_t)(m - buf);
        if (n < 4)
            break;
        from += n - 3;
    }
    return r->size;
}

/* Build the chunk table by walking the file and resynchronising on chunk
 * magics after damage. */
static int scan(trc_reader *r, int have_footer)
{
    uint64_t end = r->size - (have_footer ? TRC_FOOTER_SIZE : 0);
    uint64_t pos = TRC_HEADER_SIZE;
    while (pos < end) {
        trc_chunk_hdr h;
        int rc = pos + TRC_CHUNK_HDR <= end ? header_at(r, pos, &h) : -4;
        if (rc == 0 && pos + TRC_CHUNK_HDR + h.stored <= end) {
            if (h.type != TRC_CH_INDEX && add_chunk(r, pos, &h) != 0)
                return -2;
            pos += TRC_CHUNK_HDR + h.stored;
            continue;
        }
        uint64_t next = find_magic(r, pos + 1);
        /* Skip false magics (inside compressed data) quietly: only a
         * header that checks out ends the damaged run. */
        while (next < end) {
            trc_chunk_hdr t;
            if (next + TRC_CHUNK_HDR <= end && header_at(r, next, &t) == 0 &&
                next + TRC_CHUNK_HDR + t.stored <= end)
                break;
            next = find_magic(r, next + 1);
        }
        if (next > end)
            next = end;
        if (rc == 0 || rc == -5)
            damage(r, pos, "chunk at offset %llu: truncated (its %u payload bytes run past "
                   "the end of the file at %llu)", (unsigned long long)pos, h.stored,
                   (unsigned long long)r->size);
        else if (rc == -4)
            damage(r, pos, "%llu trailing bytes at offset %llu are not a whole chunk "
                   "(truncated file?)", (unsigned long long)(end - pos), (unsigned long long)pos);
        else
            damage(r, pos, "bytes %llu..%llu are not a valid chunk (%s); skipped",
                   (unsigned long long)pos, (unsigned long long)next,
                   rc == -1 ? "no chunk magic" : rc == -2 ? "header CRC mismatch"
                                                        : "header fields out of range");
        pos = next;
    }
    return 0;
}

/* ---- meta ------------------------------------------------------------------- */
static char *own_str(trc_reader *r, const uint8_t *p, size_t n)
{
    if (r->n_strs == r->cap_strs) {
        size_t nc = r->cap_strs ? r->cap_strs * 2 : 64;
        char **ns = npu_realloc(r->strs, nc * sizeof *ns);
        if (!ns)
            return NULL;
        r->strs = ns;
        r->cap_strs = nc;
    }
    char *s = npu_malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    r->strs[r->n_strs++] = s;
    return s;
}

static int name_set(trc_reader *r, trc_names *t, uint64_t id, const uint8_t *p, size_t n)
{
    if (id >= 1u << 20)     /* ids are small: a huge one is damage, not a table */
        return 0;
    if (id >= t->count) {
        uint32_t nc = (uint32_t)id + 1;
        const char **nn = npu_realloc((void *)t->names, nc * sizeof *nn);
        if (!nn)
            return -1;
        for (uint32_t i = t->count; i < nc; i++)
            nn[i] = NULL;
        t->names = nn;
        t->count = nc;
    }
    char *s = own_str(r, p, n);
    if (!s)
        return -1;
    ((const char **)t->names)[id] = s;
    return 0;
}

static int cmp_sym(const void *a, const void *b)
{
    const sym_ent *x = a, *y = b;
    if (x->s.addr != y->s.addr)
        return x->s.addr < y->s.addr ? -1 : 1;
    /* Larger first at the same address so that the smaller (inner) one is
     * found last by the backward walk. */
    if (x->s.size != y->s.size)
        return x->s.size > y->s.size ? -1 : 1;
    return 0;
}

static int parse_meta(trc_reader *r, const uint8_t *p, size_t n, uint64_t off)
{
    trc_cur c = { p, p ? p + n : p, 0 };  /* p is NULL for a lost meta chunk: NULL + 0 is UB */
    size_t cap_syms = 0;
    while (c.p < c.end) {
        uint64_t tag = trc_get_uv(&c), len = trc_get_uv(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p)) {
            damage(r, off, "meta chunk at offset %llu: malformed entry", (unsigned long long)off);
            return 0;
        }
        const uint8_t *v = c.p;
        c.p += len;
        trc_cur vc = { v, v + len, 0 };
        uint64_t x;
        switch (tag) {
        case 1: if (!(r->meta.config_json = own_str(r, v, len))) return -1; break;
        case 5: if (!(r->meta.kernel = own_str(r, v, len))) return -1; break;
        case 6: if (!(r->meta.level = own_str(r, v, len))) return -1; break;
        case 2:
            if (len == 8) {
                uint64_t bits = trc_get64(v);
                memcpy(&r->meta.clock_ghz, &bits, 8);
            }
            break;
        case 3: x = trc_get_uv(&vc); r->meta.n_cores = (uint32_t)x; break;
        case 4: r->meta.seed = trc_get_uv(&vc); break;
        case 7: r->meta.counter_interval = trc_get_uv(&vc); break;
        case 8: {
            uint64_t addr = trc_get_uv(&vc), size = trc_get_uv(&vc);
            uint8_t fn = trc_get_u8(&vc);
            if (vc.bad)
                break;
            if (r->meta.n_symbols == cap_syms) {
                size_t nc = cap_syms ? cap_syms * 2 : 64;
                trc_symbol *ns = npu_realloc(r->syms, nc * sizeof *ns);
                if (!ns)
                    return -1;
                r->syms = ns;
                cap_syms = nc;
            }
            char *name = own_str(r, vc.p, (size_t)(vc.end - vc.p));
            if (!name)
                return -1;
            r->syms[r->meta.n_symbols++] = (trc_symbol){ name, addr, size, fn != 0 };
            break;
        }
        case 9: case 10: case 11: case 12: case 13: {
            trc_names *t = tag == 9 ? &r->meta.opcodes : tag == 10 ? &r->meta.causes
                         : tag == 11 ? &r->meta.counters : tag == 12 ? &r->meta.hbm_commands
                         : &r->meta.units;
            uint64_t id = trc_get_uv(&vc);
            if (!vc.bad && name_set(r, t, id, vc.p, (size_t)(vc.end - vc.p)) != 0)
                return -1;
            break;
        }
        default: break;     /* a newer writer's entry: skipped */
        }
    }
    r->meta.symbols = r->syms;
    /* Function and label tables with effective ends (size 0 = up to the next). */
    size_t nf = 0, nl = 0;
    for (uint32_t i = 0; i < r->meta.n_symbols; i++)
        if (r->syms[i].is_function) nf++; else nl++;
    r->funcs = npu_calloc(nf ? nf : 1, sizeof *r->funcs);
    r->labels = npu_calloc(nl ? nl : 1, sizeof *r->labels);
    if (!r->funcs || !r->labels)
        return -1;
    for (uint32_t i = 0; i < r->meta.n_symbols; i++) {
        sym_ent e = { r->syms[i], 0 };
        if (r->syms[i].is_function)
            r->funcs[r->n_funcs++] = e;
        else
            r->labels[r->n_labels++] = e;
    }
    qsort(r->funcs, r->n_funcs, sizeof *r->funcs, cmp_sym);
    qsort(r->labels, r->n_labels, sizeof *r->labels, cmp_sym);
    for (size_t i = 0; i < r->n_funcs; i++) {
        sym_ent *s = &r->funcs[i];
        if (s->s.size) {
            s->end = s->s.addr + s->s.size;
        } else {
            s->end = UINT64_MAX;
            for (size_t j = i + 1; j < r->n_funcs; j++)
                if (r->funcs[j].s.addr > s->s.addr) { s->end = r->funcs[j].s.addr; break; }
        }
    }
    for (size_t i = 0; i < r->n_labels; i++) {
        sym_ent *s = &r->labels[i];
        if (s->s.size) {
            s->end = s->s.addr + s->s.size;
        } else {
            s->end = UINT64_MAX;
            for (size_t j = i + 1; j < r->n_labels; j++)
                if (r->labels[j].s.addr > s->s.addr) { s->end = r->labels[j].s.addr; break; }
            const trc_symbol *f = trc_reader_function_at(r, s->s.addr);
            if (f) {
                uint64_t fend = f->size ? f->addr + f->size : UINT64_MAX;
                if (fend < s->end)
                    s->end = fend;
            }
        }
    }
    return 0;
}

static const trc_symbol *sym_at(const sym_ent *t, size_t n, uint64_t pc)
{
    size_t lo = 0, hi = n;  /* first index with addr > pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid].s.addr <= pc) lo = mid + 1; else hi = mid;
    }
    for (size_t i = lo; i-- > 0;)
        if (pc < t[i].end)
            return &t[i].s;
    return NULL;
}
const trc_symbol *trc_reader_function_at(const trc_reader *r, uint64_t pc)
{ return sym_at(r->funcs, r->n_funcs, pc); }
const trc_symbol *trc_reader_label_at(const trc_reader *r, uint64_t pc)
{
    const trc_symbol *l = sym_at(r->labels, r->n_labels, pc);
    return l && pc >= l->addr ? l : NULL;
}
const trc_symbol *trc_reader_symbol_exact(const trc_reader *r, uint64_t addr)
{
    const trc_symbol *f = trc_reader_function_at(r, addr);
    if (f && f->addr == addr)
        return f;
    const trc_symbol *l = trc_reader_label_at(r, addr);
    return l && l->addr == addr ? l : NULL;
}

static int parse_disasm(trc_reader *r, const uint8_t *p, size_t n, uint32_t count, size_t *cap)
{
    trc_cur c = { p, p + n, 0 };
    for (uint32_t i = 0; i < count; i++) {
        uint64_t pc = trc_get_uv(&c), len = trc_get_uv(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p))
            return 1;
        if (r->n_dis == *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            uint64_t *np = npu_realloc(r->dis_pc, nc * sizeof *np);
            if (!np)
                return -1;
            r->dis_pc = np;
            char **nt = npu_realloc(r->dis_text, nc * sizeof *nt);
            if (!nt)
                return -1;
            r->dis_text = nt;
            *cap = nc;
        }
        char *s = npu_malloc(len + 1);
        if (!s)
            return -1;
        memcpy(s, c.p, len);
        s[len] = 0;
        c.p += len;
        r->dis_pc[r->n_dis] = pc;
        r->dis_text[r->n_dis++] = s;
    }
    return 0;
}

typedef struct pair { uint64_t pc; size_t i; } pair;
static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->pc != y->pc) return x->pc < y->pc ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Sort pcs (with texts) keeping the first registration of a repeated pc.
 * -1 on OOM. */
static int sort_disasm(trc_reader *r)
{
    if (r->n_dis < 2)
        return 0;
    pair *pr = npu_malloc(r->n_dis * sizeof *pr);
    char **nt = npu_malloc(r->n_dis * sizeof *nt);
    if (!pr || !nt) {
        npu_free(pr); npu_free(nt);
        return -1;
    }
    for (size_t i = 0; i < r->n_dis; i++)
        pr[i] = (pair){ r->dis_pc[i], i };
    qsort(pr, r->n_dis, sizeof *pr, cmp_pair);
    size_t k = 0;
    for (size_t i = 0; i < r->n_dis; i++) {
        if (k && pr[i].pc == r->dis_pc[k - 1]) {
            npu_free(r->dis_text[pr[i].i]);
            continue;
        }
        r->dis_pc[k] = pr[i].pc;
        nt[k++] = r->dis_text[pr[i].i];
    }
    npu_free(r->dis_text);
    r->dis_text = nt;
    r->n_dis = k;
    npu_free(pr);
    return 0;
}
const char *trc_reader_disasm(const trc_reader *r, uint64_t pc)
{
    size_t lo = 0, hi = r->n_dis;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->dis_pc[mid] < pc) lo = mid + 1; else hi = mid;
    }
    return lo < r->n_dis && r->dis_pc[lo] == pc ? r->dis_text[lo] : NULL;
}

const char *trc_name(const trc_reader *r, const trc_names *t, uint32_t id)
{
    if (t && id < t->count && t->names && t->names[id])
        return t->names[id];
    snprintf((char *)r->namebuf, sizeof r->namebuf, "#%u", id);
    return r->namebuf;
}

/* ---- open / close ------------------------------------------------------------ */
void trc_close(trc_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    if (r->mu_ok)
        pthread_mutex_destroy(&r->mu);
    npu_free(r->ch);
    npu_free(r->ev_sorted);
    for (size_t i = 0; i < r->n_strs; i++)
        npu_free(r->strs[i]);
    npu_free(r->strs);
    npu_free((void *)r->meta.opcodes.names);
    npu_free((void *)r->meta.causes.names);
    npu_free((void *)r->meta.counters.names);
    npu_free((void *)r->meta.hbm_commands.names);
    npu_free((void *)r->meta.units.names);
    npu_free(r->syms);
    npu_free(r->funcs);
    npu_free(r->labels);
    for (size_t i = 0; i < r->n_dis; i++)
        npu_free(r->dis_text[i]);
    npu_free(r->dis_pc);
    npu_free(r->dis_text);
    npu_free(r->dmg);
    npu_free(r);
}

static int cmp_ev_chunk_ctx(const chunk_info *ch, size_t a, size_t b)
{
    if (ch[a].h.tmin != ch[b].h.tmin)
        return ch[a].h.tmin < ch[b].h.tmin ? -1 : 1;
    return a < b ? -1 : a > b;
}

static trc_reader *open_common(trc_reader *r, const char *name, npu_diag *d)
{
    r->mu_ok = pthread_mutex_init(&r->mu, NULL) == 0;
    uint8_t h[TRC_HEADER_SIZE];
    if (r->size < TRC_HEADER_SIZE || src_read(r, 0, h, sizeof h) != 0) {
        npu_errf(d, NPU_EFORMAT, "%s: %llu bytes: too short for a trace header (%d bytes)",
                 name, (unsigned long long)r->size, TRC_HEADER_SIZE);
        goto fail;
    }
    if (memcmp(h, trc_file_magic, 4) != 0) {
        npu_errf(d, NPU_EFORMAT, "%s: offset 0: not an npusim trace (bad magic)", name);
        goto fail;
    }
    if (memcmp(h + 4, trc_file_magic + 4, 4) != 0) {
        npu_errf(d, NPU_EFORMAT, "%s: offset 4: the \\r\\n\\x1a\\n sentinel is mangled: the file "
                 "went through a text-mode (line-ending) conversion", name);
        goto fail;
    }
    unsigned maj = trc_get16(h + 8), min = trc_get16(h + 10);
    if (maj != TRC_VERSION_MAJOR) {
        npu_errf(d, NPU_EFORMAT, "%s: offset 8: format version %u.%u, this reader reads %d.x",
                 name, maj, min, TRC_VERSION_MAJOR);
        goto fail;
    }
    uint32_t pu = trc_get32(h + 16);
    if (pu != TRC_PROBE_U32) {
        npu_errf(d, NPU_EFORMAT, "%s: offset 16: integer probe is 0x%08x, expected 0x%08x%s", name,
                 pu, TRC_PROBE_U32, pu == 0x78563412u ? " (written big-endian)" : "");
        goto fail;
    }
    uint64_t pb = trc_get64(h + 20);
    double pf;
    memcpy(&pf, &pb, 8);
    if (pf != TRC_PROBE_F64) {
        /* the bits, not %g: a one-bit flip of the mantissa prints as the same value */
        uint64_t want;
        double wf = TRC_PROBE_F64;
        memcpy(&want, &wf, 8);
        npu_errf(d, NPU_EFORMAT, "%s: offset 20: float probe is %.17g (0x%016" PRIx64 "), expected "
                 "%.17g (0x%016" PRIx64 ") (foreign floating-point format or byte order)", name, pf,
                 pb, wf, want);
        goto fail;
    }
    if (trc_get16(h + 12) != TRC_HEADER_SIZE || trc_get32(h + 28) != trc_crc(h, 28)) {
        npu_errf(d, NPU_EFORMAT, "%s: offset 28: file header CRC mismatch", name);
        goto fail;
    }
    r->version = maj * 100 + min;

    uint64_t idx_off = 0;
    int have_footer = footer_ok(r, &idx_off);
    int rc = -1;
    if (have_footer)
        rc = use_index(r, idx_off);
    else
        damage(r, r->size, "no valid footer at the end of the file (truncated or damaged at "
               "the end): chunks found by scanning");
    if (rc == -1) {
        r->n_ch = 0;
        rc = scan(r, have_footer);
    }
    if (rc == -2) {
        npu_errf(d, NPU_ENOMEM, "%s: out of memory reading the chunk table", name);
        goto fail;
    }
    /* Meta and disassembly. */
    int have_meta = 0;
    size_t dcap = 0;
    for (size_t i = 0; i < r->n_ch; i++) {
        uint8_t type = r->ch[i].h.type;
        if (type == TRC_CH_EVENTS || (type == TRC_CH_META && have_meta))
            continue;
        uint8_t *raw;
        int lr = load_chunk(r, i, &raw);
        if (lr == -2)
            goto oom;
        if (lr != 0)
            continue;
        r->ch[i].checked = 1;
        int pr;
        if (type == TRC_CH_META) {
            have_meta = 1;
            pr = parse_meta(r, raw, r->ch[i].h.raw, r->ch[i].off);
        } else {
            pr = parse_disasm(r, raw, r->ch[i].h.raw, r->ch[i].h.count, &dcap);
            if (pr == 1)
                damage(r, r->ch[i].off, "disassembly chunk at offset %llu: malformed record",
                       (unsigned long long)r->ch[i].off);
        }
        npu_free(raw);
        if (pr < 0)
            goto oom;
    }
    if (!have_meta) {
        damage(r, TRC_HEADER_SIZE, "no readable meta chunk: config, symbols and names are lost");
        if (parse_meta(r, NULL, 0, 0) != 0)
            goto oom;
    }
    if (sort_disasm(r) != 0)
        goto oom;
    size_t ne = 0;
    for (size_t i = 0; i < r->n_ch; i++)
        ne += r->ch[i].h.type == TRC_CH_EVENTS;
    r->ev_sorted = npu_malloc((ne ? ne : 1) * sizeof(size_t));
    if (!r->ev_sorted)
        goto oom;
    for (size_t i = 0; i < r->n_ch; i++)
        if (r->ch[i].h.type == TRC_CH_EVENTS)
            r->ev_sorted[r->n_ev++] = i;
    /* insertion sort: chunks come nearly in tmin order already */
    for (size_t i = 1; i < r->n_ev; i++) {
        size_t x = r->ev_sorted[i], j = i;
        while (j > 0 && cmp_ev_chunk_ctx(r->ch, r->ev_sorted[j - 1], x) > 0) {
            r->ev_sorted[j] = r->ev_sorted[j - 1];
            j--;
        }
        r->ev_sorted[j] = x;
    }
    return r;
oom:
    npu_errf(d, NPU_ENOMEM, "%s: out of memory reading the trace", name);
fail:
    trc_close(r);
    return NULL;
}

trc_reader *trc_open(const char *path, npu_diag *d)
{
    trc_reader *r = npu_calloc(1, sizeof *r);
    if (!r) {
        npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    r->fd = open(path, O_RDONLY);
    struct stat st;
    if (r->fd < 0 || fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        npu_errf(d, NPU_EIO, "%s: cannot open the trace (not a readable regular file)", path);
        trc_close(r);
        return NULL;
    }
    r->size = (uint64_t)st.st_size;
    return open_common(r, path, d);
}

trc_reader *trc_open_mem(const void *buf, size_t len, npu_diag *d)
{
    trc_reader *r = npu_calloc(1, sizeof *r);
    if (!r) {
        npu_errf(d, NPU_ENOMEM, "<memory>: out of memory");
        return NULL;
    }
    static const uint8_t empty[1] = { 0 };
    r->fd = -1;
    r->mem = buf ? buf : empty;
    r->size = buf ? len : 0;
    return open_common(r, "<memory>", d);
}

const trc_meta *trc_reader_meta(const trc_reader *r) { return &r->meta; }
uint64_t trc_reader_file_size(const trc_reader *r) { return r->size; }
unsigned trc_reader_version(const trc_reader *r) { return r->version; }

void trc_reader_totals(const trc_reader *r, uint64_t *events, uint64_t *stored,
                       uint64_t *raw, uint64_t *n_chunks)
{
    uint64_t e = 0, s = 0, w = 0;
    for (size_t i = 0; i < r->n_ev; i++) {
        const trc_chunk_hdr *h = &r->ch[r->ev_sorted[i]].h;
        e += h->count;
        s += h->stored + TRC_CHUNK_HDR;
        w += h->raw;
    }
    if (events) *events = e;
    if (stored) *stored = s;
    if (raw) *raw = w;
    if (n_chunks) *n_chunks = r->n_ev;
}

void trc_reader_time_range(const trc_reader *r, uint64_t *t_min, uint64_t *t_end)
{
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < r->n_ev; i++) {
        const trc_chunk_hdr *h = &r->ch[r->ev_sorted[i]].h;
        if (i == 0 || h->tmin < a) a = h->tmin;
        if (h->tend > b) b = h->tend;
    }
    if (t_min) *t_min = a;
    if (t_end) *t_end = b;
}

/* ---- the iterator's record decoder -------------------------------------------
 * The same records as trc_decode (codec.c; docs/trace-format.md), decoded
 * for speed, since a viewer load is mostly this loop:
 * - the kind's slot set is a compile-time constant in each case of the
 *   switch (expanded from events.def), so the per-slot tests fold away;
 * - delta streams of the usual ids (core / channel < 64, counter unit and
 *   id < 32) sit in direct tables validated by a per-chunk generation,
 *   instead of a hash-map probe per record; other ids use a map;
 * - varints are read without a bounds check per byte: chunk buffers carry
 *   TRC_DEC_PAD zero bytes after the records (longer than any record), and a
 *   record that ends past the chunk's end is malformed, exactly the records
 *   the checked decoder rejects for running out of bytes.
 * Malformed input is rejected by the same rules as trc_decode. */
typedef trc_stream dstream;     /* codec.c's per-stream delta state */
typedef struct dslot { uint32_t gen, pad_; dstream s; } dslot;
#define FD_IDS 64   /* core / channel ids with a direct stream table */
#define FD_CTR 32   /* counter units and ids with one */
typedef struct fdec {
    trc_codec c;            /* the last core, and the streams of other keys */
    uint32_t gen;           /* slots of another generation are unused */
    dslot core[FD_IDS * 8];     /* (core, pipe or 7 = no pipe) */
    dslot hbm[FD_IDS * 8];      /* (channel, pseudo-channel) */
    dslot ctr[FD_CTR * FD_CTR]; /* (unit, counter id) */
} fdec;

static void fd_reset(fdec *d)
{
    if (++d->gen == 0) {    /* wrapped: forget every slot */
        memset(d->core, 0, sizeof d->core);
        memset(d->hbm, 0, sizeof d->hbm);
        memset(d->ctr, 0, sizeof d->ctr);
        d->gen = 1;
    }
    trc_codec_reset(&d->c);
}

static void fd_free(fdec *d)
{
    trc_codec_free(&d->c);
}

static inline dstream *fd_stream(fdec *d, unsigned cls, uint32_t core, uint32_t sub)
{
    dslot *s = NULL;
    if (cls == TRC_CLASS_CORE) {
        if (core < FD_IDS)
            s = &d->core[core * 8 + sub];
    } else if (cls == TRC_CLASS_HBM) {
        if (core < FD_IDS)
            s = &d->hbm[core * 8 + sub];
    } else if (core < FD_CTR && sub < FD_CTR) {
        s = &d->ctr[core * FD_CTR + sub];
    }
    if (s) {
        if (s->gen != d->gen) {
            s->gen = d->gen;
            s->s = (dstream){ 0, 0, 0 };
        }
        return &s->s;
    }
    return trc_codec_stream(&d->c, trc_stream_key(cls, core, sub));
}

/* LEB128 without bounds checks (see above); *bad on an overlong 10th byte. */
static inline uint64_t fd_uv(const uint8_t **pp, int *bad)
{
    const uint8_t *p = *pp;
    uint64_t b = *p++;
    if (b < 0x80) {
        *pp = p;
        return b;
    }
    uint64_t v = b & 0x7f;
    for (unsigned sh = 7;; sh += 7) {
        b = *p++;
        if (sh == 63) {
            if (b > 1)
                *bad = 1;
            v |= b << 63;
            break;
        }
        v |= (b & 0x7f) << sh;
        if (b < 0x80)
            break;
    }
    *pp = p;
    return v;
}

#define FD_HAS(s) (slots & (1u << TRC_SLOT_##s))
static inline __attribute__((always_inline)) int
fd_body(fdec *d, const uint8_t **pp, const uint8_t *end, trc_event *e, unsigned tag,
        unsigned kind, unsigned cls, unsigned slots)
{
    const uint8_t *p = *pp;
    int bad = 0;
    unsigned pipe = tag >> 5;
    if (!FD_HAS(PIPE) && pipe)
        return -1;
    uint32_t core;
    if (tag & 0x10) {
        if (!d->c.have_core)
            return -1;
        core = d->c.last_core;
    } else {
        uint64_t v = fd_uv(&p, &bad);
        if (v > UINT32_MAX)
            return -1;
        core = (uint32_t)v;
    }
    d->c.have_core = 1;
    d->c.last_core = core;
    uint8_t pipe2 = 0;
    uint32_t id = 0, aux = 0;
    if (FD_HAS(PIPE2))
        pipe2 = *p++;
    if (FD_HAS(ID)) {
        uint64_t v = fd_uv(&p, &bad);
        if (v > UINT32_MAX)
            return -1;
        id = (uint32_t)v;
    }
    if (FD_HAS(AUX)) {
        uint64_t v = fd_uv(&p, &bad);
        if (v > UINT32_MAX)
            return -1;
        aux = (uint32_t)v;
    }
    if (bad || p > end)
        return -1;
    uint32_t sub = trc_stream_sub(cls, slots, pipe, id);
    dstream *st = fd_stream(d, cls, core, sub);
    if (!st)
        return -2;
    uint64_t t0 = st->t0 + trc_unzz(fd_uv(&p, &bad)), t1 = 0, t2 = 0, addr = 0, addr2 = 0, val = 0;
    st->t0 = t0;
    if (FD_HAS(T1)) t1 = t0 + trc_unzz(fd_uv(&p, &bad));
    if (FD_HAS(T2)) t2 = t0 - trc_unzz(fd_uv(&p, &bad));
    if (FD_HAS(ADDR)) {
        addr = st->addr + trc_unzz(fd_uv(&p, &bad));
        st->addr = addr;
    }
    if (FD_HAS(ADDR2)) addr2 = addr + trc_unzz(fd_uv(&p, &bad));
    if (FD_HAS(VAL)) {
        val = st->val + trc_unzz(fd_uv(&p, &bad));
        st->val = val;
    }
    if (bad || p > end)
        return -1;
    *pp = p;
    e->kind = (uint8_t)kind;
    e->pipe = (uint8_t)pipe;
    e->pipe2 = pipe2;
    e->pad_ = 0;
    e->core = core;
    e->id = id;
    e->aux = aux;
    e->addr = addr;
    e->addr2 = addr2;
    e->t0 = t0;
    e->t1 = t1;
    e->t2 = t2;
    e->val = val;
    return 0;
}
#undef FD_HAS

/* One record at *pp (< end, padded after end): 0 ok, -1 malformed, -2 OOM. */
static int fd_decode(fdec *d, const uint8_t **pp, const uint8_t *end, trc_event *e)
{
    if (*pp >= end)
        return -1;
    unsigned tag = *(*pp)++;
    switch (tag & 15u) {
#define TRC_EVENT(ID, nm, cl, c, p, p2, i, a, ad, ad2, t0, t1, t2, v, dc)                   \
    case TRC_##ID:                                                                          \
        return fd_body(d, pp, end, e, tag, TRC_##ID, TRC_CLASS_##cl,                        \
                       TRC_ROW_SLOTS(c, p, p2, i, a, ad, ad2, t0, t1, t2, v));
#include "traces/events.def"
#undef TRC_EVENT
    default:
        return -1;
    }
}

/* ---- iteration ------------------------------------------------------------------ */
typedef struct cursor {
    size_t chunk;           /* index into r->ch (file order: the tie-break) */
    chunk_buf buf;          /* the chunk's bytes (kept when the cursor is reused) */
    const uint8_t *p, *end; /* next record, end of the records */
    fdec dec;
    uint32_t left;          /* records not yet decoded */
    uint64_t pos;           /* position of head in the chunk */
    trc_event head;
} cursor;

/* Cursors in the heap are the chunks being merged (those whose time ranges
 * overlap the current time); a finished cursor goes to the free list with
 * its buffers and tables, so a long iteration allocates a handful. */
#define ITER_SPARE 8
struct trc_iter {
    trc_reader *r;
    trc_filter f;
    int all;                /* the filter passes everything: no per-event test */
    size_t *cands;          /* events chunks that may hold matches, by tmin */
    size_t n_cands, next;
    cursor **heap;
    size_t n_heap;
    cursor *spare[ITER_SPARE];
    size_t n_spare;
    /* a part (trc_iter_new_part): events with part_lo <= t0 < part_hi only
     * (part_hi 0 = no bound) */
    uint64_t part_lo, part_hi;
    struct prefetch *pf;    /* trc_iter_prefetch: chunks read and inflated ahead */
    int pf_on;
    npu_status st;
    npu_diag diag;
};

/* ---- reading ahead on a helper thread (trc_iter_prefetch) ------------------
 * Reading, CRC-checking and inflating a chunk is about half of an
 * iteration, and it does not depend on the merge: the chunks are loaded in
 * the order of it->cands whatever the events say. So a helper thread runs
 * load_chunk_buf over cands in that order into a ring of PF_DEPTH slots and
 * load_next takes them in the same order: the same chunks, the same bytes,
 * the same damage (listed under the reader's mutex, possibly before damage
 * the merge finds in earlier chunks' records). A slot's buffers are swapped
 * with the cursor's (not copied); each slot keeps its own inflate state (a
 * z_stream cannot move: zlib keeps a pointer back to it). */
#define PF_DEPTH 4
typedef struct pf_slot {
    chunk_buf buf;
    uint8_t *raw;
    int rc;
} pf_slot;
typedef struct prefetch {
    trc_iter *it;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pf_slot slot[PF_DEPTH];
    size_t made, taken;     /* chunks loaded by the helper / taken by load_next */
    int stop;
} prefetch;

static void *pf_main(void *arg)
{
    prefetch *pf = arg;
    trc_iter *it = pf->it;
    for (size_t k = 0; k < it->n_cands; k++) {
        pthread_mutex_lock(&pf->mu);
        while (pf->made - pf->taken == PF_DEPTH && !pf->stop)
            pthread_cond_wait(&pf->cv, &pf->mu);
        int stop = pf->stop;
        pthread_mutex_unlock(&pf->mu);
        if (stop)
            break;
        pf_slot *sl = &pf->slot[k % PF_DEPTH];
        sl->rc = load_chunk_buf(it->r, it->cands[k], &sl->buf, &sl->raw);
        pthread_mutex_lock(&pf->mu);
        pf->made++;
        pthread_cond_broadcast(&pf->cv);
        pthread_mutex_unlock(&pf->mu);
    }
    return NULL;
}

static void pf_stop(trc_iter *it)
{
    prefetch *pf = it->pf;
    if (!pf)
        return;
    pthread_mutex_lock(&pf->mu);
    pf->stop = 1;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    pthread_join(pf->th, NULL);
    pthread_mutex_destroy(&pf->mu);
    pthread_cond_destroy(&pf->cv);
    for (int i = 0; i < PF_DEPTH; i++)
        chunk_buf_free(&pf->slot[i].buf);
    npu_free(pf);
    it->pf = NULL;
}

/* Start the helper over the current cands (from it->next on, which is 0
 * after a reset). 0 ok; -1 no helper (the iterator loads chunks itself). */
static int pf_start(trc_iter *it)
{
    if (it->n_cands < 2)
        return -1;  /* nothing to overlap */
    prefetch *pf = npu_calloc(1, sizeof *pf);
    if (!pf)
        return -1;
    pf->it = it;
    if (pthread_mutex_init(&pf->mu, NULL) != 0) {
        npu_free(pf);
        return -1;
    }
    if (pthread_cond_init(&pf->cv, NULL) != 0) {
        pthread_mutex_destroy(&pf->mu);
        npu_free(pf);
        return -1;
    }
    if (pthread_create(&pf->th, NULL, pf_main, pf) != 0) {
        pthread_cond_destroy(&pf->cv);
        pthread_mutex_destroy(&pf->mu);
        npu_free(pf);
        return -1;
    }
    it->pf = pf;
    return 0;
}

/* The next chunk from the helper into c's buffers (the slot gets c's old
 * ones for reuse): load_chunk_buf's result. */
static int pf_take(trc_iter *it, cursor *c, uint8_t **raw)
{
    prefetch *pf = it->pf;
    pthread_mutex_lock(&pf->mu);
    while (pf->made == pf->taken)
        pthread_cond_wait(&pf->cv, &pf->mu);
    pthread_mutex_unlock(&pf->mu);
    pf_slot *sl = &pf->slot[pf->taken % PF_DEPTH];
    int rc = sl->rc;
    *raw = sl->raw;
    uint8_t *st = c->buf.st, *rw = c->buf.raw;
    size_t cs = c->buf.cap_st, cr = c->buf.cap_raw;
    c->buf.st = sl->buf.st; c->buf.cap_st = sl->buf.cap_st;
    c->buf.raw = sl->buf.raw; c->buf.cap_raw = sl->buf.cap_raw;
    sl->buf.st = st; sl->buf.cap_st = cs;
    sl->buf.raw = rw; sl->buf.cap_raw = cr;
    pthread_mutex_lock(&pf->mu);
    pf->taken++;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    return rc;
}

static int passes(const trc_filter *f, const trc_event *e)
{
    if (f->kind_mask && !(f->kind_mask & (1u << e->kind)))
        return 0;
    unsigned slots = trc_kind_slots(e->kind);
    if (f->core >= 0 && (trc_kind_class(e->kind) != TRC_CLASS_CORE || e->core != f->core))
        return 0;
    if (f->pipe_mask) {
        if (trc_kind_class(e->kind) != TRC_CLASS_CORE || !(slots & (1u << TRC_SLOT_PIPE))) {
            if (!(f->pipe_mask & (1u << TRC_PIPE_NONE)))
                return 0;
        } else {
            int ok = (f->pipe_mask >> e->pipe) & 1;
            if ((e->kind == TRC_FLAG_SET || e->kind == TRC_FLAG_WAIT) && e->pipe2 < 8)
                ok |= (f->pipe_mask >> e->pipe2) & 1;
            if (!ok)
                return 0;
        }
    }
    if (e->t0 < f->t_lo && trc_event_end(e) <= f->t_lo)
        return 0;
    if (f->t_hi && e->t0 >= f->t_hi)
        return 0;
    return 1;
}

static void cursor_free(cursor *c)
{
    if (!c)
        return;
    chunk_buf_free(&c->buf);
    fd_free(&c->dec);
    npu_free(c);
}

static void cursor_drop(trc_iter *it, cursor *c)
{
    if (it->n_spare < ITER_SPARE)
        it->spare[it->n_spare++] = c;
    else
        cursor_free(c);
}

/* Decode up to the next matching record: 1 = head set, 0 = chunk done. */
static int cursor_advance(trc_iter *it, cursor *c)
{
    while (c->left > 0) {
        int rc = fd_decode(&c->dec, &c->p, c->end, &c->head);
        c->left--;
        c->pos++;
        if (rc == -2) {
            it->st = npu_errf(&it->diag, NPU_ENOMEM, "out of memory decoding a chunk");
            return 0;
        }
        if (rc != 0) {
            chunk_info *ci = &it->r->ch[c->chunk];
            chunk_damaged(it->r, ci, "chunk at offset %llu: record %llu of %u is malformed "
                          "(the rest of the chunk is lost)", (unsigned long long)ci->off,
                          (unsigned long long)c->pos - 1, ci->h.count);
            return 0;
        }
        if (c->head.t0 < it->part_lo || (it->part_hi && c->head.t0 >= it->part_hi))
            continue;
        if (it->all || passes(&it->f, &c->head))
            return 1;
    }
    return 0;
}

static int cur_less(const cursor *a, const cursor *b)
{
    if (a->head.t0 != b->head.t0)
        return a->head.t0 < b->head.t0;
    if (a->chunk != b->chunk)
        return a->chunk < b->chunk;
    return a->pos < b->pos;
}

static void heap_push(trc_iter *it, cursor *c)
{
    size_t i = it->n_heap++;
    it->heap[i] = c;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!cur_less(it->heap[i], it->heap[p]))
            break;
        cursor *t = it->heap[i]; it->heap[i] = it->heap[p]; it->heap[p] = t;
        i = p;
    }
}

static void heap_sift(trc_iter *it)
{
    size_t i = 0, n = it->n_heap;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cur_less(it->heap[l], it->heap[m])) m = l;
        if (r < n && cur_less(it->heap[r], it->heap[m])) m = r;
        if (m == i)
            break;
        cursor *t = it->heap[i]; it->heap[i] = it->heap[m]; it->heap[m] = t;
        i = m;
    }
}

static void iter_reset(trc_iter *it)
{
    pf_stop(it);
    for (size_t i = 0; i < it->n_heap; i++)
        cursor_drop(it, it->heap[i]);
    it->n_heap = 0;
    it->n_cands = 0;
    it->next = 0;
    /* derived here, where the filter last changed (trc_iter_seek moves t_lo) */
    it->all = it->f.core < 0 && !it->f.pipe_mask && !it->f.kind_mask && !it->f.t_lo && !it->f.t_hi;
    const trc_reader *r = it->r;
    if (it->part_hi && it->part_hi <= it->part_lo)
        return;     /* an empty part (its neighbours' chunks share one tmin) */
    for (size_t i = 0; i < r->n_ev; i++) {
        const trc_chunk_hdr *h = &r->ch[r->ev_sorted[i]].h;
        if (h->tend < it->f.t_lo && h->tmax < it->f.t_lo)
            continue;
        /* a part's events start at part_lo or later: a chunk whose last
         * start is earlier holds none of them */
        if (h->tmax < it->part_lo)
            continue;
        if (it->f.t_hi && h->tmin >= it->f.t_hi)
            continue;
        if (it->part_hi && h->tmin >= it->part_hi)
            continue;
        it->cands[it->n_cands++] = r->ev_sorted[i];
    }
    if (it->pf_on)
        pf_start(it);
}

npu_status trc_iter_prefetch(trc_iter *it, int on)
{
    if (!on) {
        pf_stop(it);
        it->pf_on = 0;
        return NPU_OK;
    }
    if (it->pf || it->next != 0 || it->n_heap != 0)
        return it->pf ? NPU_OK : NPU_EINVAL;    /* only before the first chunk is read */
    it->pf_on = 1;
    pf_start(it);
    return NPU_OK;
}

static trc_iter *iter_make(trc_reader *r, const trc_filter *f, uint64_t lo, uint64_t hi,
                           npu_diag *d)
{
    trc_iter *it = npu_calloc(1, sizeof *it);
    if (it) {
        it->cands = npu_malloc((r->n_ev ? r->n_ev : 1) * sizeof *it->cands);
        it->heap = npu_malloc((r->n_ev ? r->n_ev : 1) * sizeof *it->heap);
    }
    if (!it || !it->cands || !it->heap) {
        if (it) { npu_free(it->cands); npu_free(it->heap); npu_free(it); }
        npu_errf(d, NPU_ENOMEM, "out of memory for a trace iterator");
        return NULL;
    }
    it->r = r;
    it->f = f ? *f : TRC_FILTER_ALL;
    it->part_lo = lo;
    it->part_hi = hi;
    iter_reset(it);
    return it;
}

trc_iter *trc_iter_new(trc_reader *r, const trc_filter *f, npu_diag *d)
{
    return iter_make(r, f, 0, 0, d);
}

/* Part k of n covers the start cycles [B_k, B_k+1): B_0 = 0, B_n = no
 * bound, and the others are the tmin of the events chunk at k/n of the
 * chunk list (sorted by tmin), so each part starts about k/n of the way
 * through the chunks. The chunks that straddle a boundary are read by both
 * neighbours, each keeping its own events. */
static uint64_t part_bound(const trc_reader *r, unsigned k, unsigned n)
{
    if (k == 0 || k >= n || r->n_ev == 0)
        return 0;   /* B_0, or B_n: part_hi's "no bound" */
    size_t i = (size_t)((uint64_t)r->n_ev * k / n);
    uint64_t b = r->ch[r->ev_sorted[i]].h.tmin;
    return b ? b : 1;   /* 0 would mean "no bound" for part_hi */
}

trc_iter *trc_iter_new_part(trc_reader *r, const trc_filter *f, unsigned part, unsigned nparts,
                            npu_diag *d)
{
    if (nparts == 0 || part >= nparts) {
        npu_errf(d, NPU_EINVAL, "trace iterator part %u of %u: expected part < nparts", part, nparts);
        return NULL;
    }
    return iter_make(r, f, part_bound(r, part, nparts), part_bound(r, part + 1, nparts), d);
}

void trc_iter_part_range(const trc_iter *it, uint64_t *t_lo, uint64_t *t_hi)
{
    if (t_lo) *t_lo = it->part_lo;
    if (t_hi) *t_hi = it->part_hi;
}

void trc_iter_seek(trc_iter *it, uint64_t t)
{
    it->f.t_lo = t;
    iter_reset(it);
}

static int load_next(trc_iter *it)
{
    size_t ci = it->cands[it->next++];
    if (it->r->prog)
        it->r->prog(it->r->prog_user, it->next, it->n_cands);
    cursor *c = it->n_spare ? it->spare[--it->n_spare] : npu_calloc(1, sizeof *c);
    if (!c) {
        it->st = npu_errf(&it->diag, NPU_ENOMEM, "out of memory loading a chunk");
        return -1;
    }
    c->chunk = ci;
    uint8_t *raw;
    int rc = it->pf ? pf_take(it, c, &raw) : load_chunk_buf(it->r, ci, &c->buf, &raw);
    if (rc == -2) {
        cursor_drop(it, c);
        it->st = npu_errf(&it->diag, NPU_ENOMEM, "out of memory loading a chunk");
        return -1;
    }
    if (rc != 0) {
        cursor_drop(it, c);
        return 0;
    }
    c->p = raw;
    c->end = raw + it->r->ch[ci].h.raw;
    c->left = it->r->ch[ci].h.count;
    c->pos = 0;
    fd_reset(&c->dec);
    if (cursor_advance(it, c))
        heap_push(it, c);
    else
        cursor_drop(it, c);
    return it->st == NPU_OK ? 0 : -1;
}

int trc_iter_next(trc_iter *it, trc_event *e)
{
    if (it->st != NPU_OK)
        return 0;
    /* Load every chunk that may start before the current head. */
    while (it->next < it->n_cands &&
           (it->n_heap == 0 ||
            it->r->ch[it->cands[it->next]].h.tmin <= it->heap[0]->head.t0))
        if (load_next(it) != 0)
            return 0;
    if (it->n_heap == 0)
        return 0;
    cursor *c = it->heap[0];
    *e = c->head;
    if (cursor_advance(it, c)) {
        /* usually the same chunk stays first: two compares, no swap */
        heap_sift(it);
    } else {
        chunk_info *ci = &it->r->ch[c->chunk];
        if (c->left == 0 && c->p != c->end && it->st == NPU_OK)
            chunk_damaged(it->r, ci, "chunk at offset %llu: %llu bytes after its last record",
                          (unsigned long long)ci->off, (unsigned long long)(c->end - c->p));
        it->heap[0] = it->heap[--it->n_heap];
        cursor_drop(it, c);
        if (it->n_heap)
            heap_sift(it);
    }
    if (it->st != NPU_OK)
        return 0;
    return 1;
}

npu_status trc_iter_error(const trc_iter *it, npu_diag *d)
{
    if (it->st != NPU_OK && d)
        *d = it->diag;
    return it->st;
}

void trc_iter_free(trc_iter *it)
{
    if (!it)
        return;
    pf_stop(it);
    for (size_t i = 0; i < it->n_heap; i++)
        cursor_free(it->heap[i]);
    for (size_t i = 0; i < it->n_spare; i++)
        cursor_free(it->spare[i]);
    npu_free(it->heap);
    npu_free(it->cands);
    npu_free(it);
}

npu_status trc_reader_verify(trc_reader *r, npu_diag *d)
{
    for (size_t i = 0; i < r->n_ch; i++) {
        chunk_info *c = &r->ch[i];
        if (c->checked)
            continue;
        uint8_t *raw;
        int rc = load_chunk(r, i, &raw);
        if (rc == -2)
            return npu_errf(d, NPU_ENOMEM, "out of memory verifying the trace");
        if (rc != 0)
            continue;
        if (c->h.type == TRC_CH_EVENTS) {
            trc_codec codec = { 0 };
            trc_cur cur = { raw, raw + c->h.raw, 0 };
            trc_event e;
            for (uint32_t k = 0; k < c->h.count; k++) {
                int dr = trc_decode(&codec, &cur, &e);
                if (dr == -2) {
                    trc_codec_free(&codec);
                    npu_free(raw);
                    return npu_errf(d, NPU_ENOMEM, "out of memory verifying the trace");
                }
                if (dr != 0) {
                    damage(r, c->off, "chunk at offset %llu: record %u of %u is malformed",
                           (unsigned long long)c->off, k, c->h.count);
                    c->checked = 2;
                    break;
                }
            }
            if (c->checked != 2 && cur.p != cur.end) {
                damage(r, c->off, "chunk at offset %llu: bytes after its last record",
                       (unsigned long long)c->off);
                c->checked = 2;
            }
            trc_codec_free(&codec);
        }
        if (c->checked != 2)
            c->checked = 1;
        npu_free(raw);
    }
    return NPU_OK;
}
