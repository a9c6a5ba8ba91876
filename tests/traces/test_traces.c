/* test_traces.c — the traces/ suite: round trip, ordering, filters, seek,
 * determinism, truncation and corruption, size per event, exporters and
 * the trace command. Events come from a generator here and from the
 * synthetic GEMM-like stream (trc_synth_run), since the simulator is not a
 * dependency of this part. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "traces/trace.h"
#include "traces/trc_int.h"   /* trc_put32: rewriting chunk headers by hand */

/* ---- helpers ----------------------------------------------------------------- */
/* Check writes a record on every passing ck_assert; hot loops use this,
 * which only calls into Check on failure. */
#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)
static const char *const op_names[] = { "nop", "add", "mmad", "vadd", "mov_gm_l1", "mov_l1_l0a",
                                        "fixpipe", "set_flag", "wait_flag", "mov_ub_gm" };
static const char *const cause_names[] = { "queue_full", "wait_flag", "bank_conflict", "mem" };
static const char *const counter_names[] = { "cycles", "insns", "hbm_bytes" };
static const char *const hbm_names[] = { "ACT", "RD", "WR", "PRE", "REF" };
static const trc_symbol syms[] = {
    { "gemm", 0x1000, 0x400, 1 },
    { "tile_loop", 0x1040, 0, 0 },
    { "epilogue", 0x1200, 0, 0 },
    { "helper", 0x2000, 0x100, 1 },
    { "helper_body", 0x2010, 0, 0 },
};

static trc_meta test_meta(void)
{
    trc_meta m = { 0 };
    m.config_json = "{\"version\":1,\"cores\":4}";
    m.clock_ghz = 1.8;
    m.n_cores = 4;
    m.seed = 42;
    m.kernel = "gemm";
    m.level = "full";
    m.counter_interval = 1000;
    m.symbols = syms;
    m.n_symbols = NPU_ARRAY_LEN(syms);
    m.opcodes = (trc_names){ op_names, NPU_ARRAY_LEN(op_names) };
    m.causes = (trc_names){ cause_names, NPU_ARRAY_LEN(cause_names) };
    m.counters = (trc_names){ counter_names, NPU_ARRAY_LEN(counter_names) };
    m.hbm_commands = (trc_names){ hbm_names, NPU_ARRAY_LEN(hbm_names) };
    return m;
}

typedef struct evbuf { trc_event *e; size_t n, cap; } evbuf;
static void ev_push(evbuf *b, trc_event e)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 1024;
        b->e = realloc(b->e, b->cap * sizeof *b->e);
        REQUIRE(b->e, "oom");
    }
    b->e[b->n++] = e;
}

/* A mixed stream of every kind, slightly out of start order (each pipe's
 * events are pushed at their end, as a simulator finishes them). */
static evbuf gen_events(size_t n, uint64_t seed)
{
    evbuf b = { 0 };
    npu_rng rng = { seed };
    uint64_t t[4][7] = { { 0 } };
    uint64_t seq[4][8] = { { 0 } };
    while (b.n < n) {
        uint32_t core = (uint32_t)(npu_rng_next(&rng) % 4);
        unsigned pipe = (unsigned)(npu_rng_next(&rng) % 7);
        uint64_t r = npu_rng_next(&rng);
        uint64_t start = t[core][pipe] + (r % 5), dur = 1 + (r >> 8) % 300;
        t[core][pipe] = start + dur;
        uint64_t pc = 0x1000 + 8 * ((r >> 20) % 128);
        switch ((r >> 40) % 16) {
        case 0:
            ev_push(&b, trc_ev_stall(core, pipe, (uint32_t)(r % 4), start, start + dur));
            break;
        case 1: {
            unsigned dst = (pipe + 1) % 7;
            uint32_t flag = (uint32_t)(r % 8);
            uint64_t s = ++seq[core][flag];
            ev_push(&b, trc_ev_flag_set(core, pipe, dst, flag, start + dur, s));
            ev_push(&b, trc_ev_flag_wait(core, pipe, dst, flag, start, start + dur + 3, s));
            break;
        }
        case 2:
            ev_push(&b, trc_ev_call(core, pc, 0x2000, start));
            ev_push(&b, trc_ev_ret(core, 0x20f8, pc + 8, start + dur));
            break;
        case 3:
            ev_push(&b, trc_ev_counter((uint32_t)(r % 3), (uint32_t)(r >> 4) % 3, start,
                                       r >> 30));
            break;
        case 4:
            ev_push(&b, trc_ev_mem(core, pipe, 0x80000000ull + (r & 0xfffff), 512,
                                   (int)(r & 1), start, start + dur));
            break;
        case 5:
            ev_push(&b, trc_ev_hbm((uint32_t)(r % 32), (unsigned)(r >> 5) % 2,
                                   (uint32_t)(r >> 6) % 16, (r >> 10) % 65536,
                                   (unsigned)(r >> 3) % 5, start));
            break;
        case 6:
            ev_push(&b, trc_ev_barrier(core, start, start + dur));
            break;
        default:
            ev_push(&b, trc_ev_insn(core, pipe, pc, (uint32_t)(r % 10), start - (r % 7),
                                    start, start + dur, (uint32_t)((r >> 50) % 3 == 0)));
            break;
        }
    }
    return b;
}

/* Stable sort by t0: the order the reader must deliver. */
static void stable_sort(trc_event *a, size_t n)
{
    for (size_t w = 1; w < n; w *= 2) {
        trc_event *tmp = malloc(n * sizeof *tmp);
        REQUIRE(tmp, "oom");
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = NPU_MIN(lo + w, n), hi = NPU_MIN(lo + 2 * w, n), i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = (a[j].t0 < a[i].t0) ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof *a);
        free(tmp);
    }
}

static void write_trace_ch(const char *path, const evbuf *b, uint32_t chunk)
{
    npu_diag d = { 0 };
    trc_meta m = test_meta();
    trc_writer *w = trc_writer_open(path, &m, &d);
    ck_assert_msg(w != NULL, "%s", d.msg);
    if (chunk)
        ck_assert_int_eq(trc_writer_set_chunk_events(w, chunk), NPU_OK);
    for (size_t i = 0; i < b->n; i++)
        REQUIRE(trc_write(w, &b->e[i]) == NPU_OK, "write %zu", i);
    for (uint64_t pc = 0x1000; pc < 0x1000 + 8 * 128; pc += 8) {
        char txt[64];
        snprintf(txt, sizeof txt, "insn_at_%llx r1, r2", (unsigned long long)pc);
        REQUIRE(trc_writer_add_disasm(w, pc, txt) == NPU_OK, "disasm");
    }
    ck_assert_int_eq(trc_writer_close(w, &d), NPU_OK);
}
static void write_trace(const char *path, const evbuf *b) { write_trace_ch(path, b, 0); }

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    p[n] = 0;   /* a text file reads as a string */
    *len = (size_t)n;
    return p;
}

/* Every event of it (which is freed), requiring no error. */
static evbuf drain_iter(trc_iter *it)
{
    evbuf b = { 0 };
    npu_diag d = { 0 };
    trc_event e;
    while (trc_iter_next(it, &e))
        ev_push(&b, e);
    REQUIRE(trc_iter_error(it, &d) == NPU_OK, "%s", d.msg);
    trc_iter_free(it);
    return b;
}

static evbuf read_all(trc_reader *r, const trc_filter *f)
{
    npu_diag d = { 0 };
    trc_iter *it = trc_iter_new(r, f, &d);
    REQUIRE(it != NULL, "%s", d.msg);
    return drain_iter(it);
}

static char tmpdir[256];
static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test-traces.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}
/* Checked teardown: remove what the test wrote. */
static void rm_tmpdir(void)
{
    if (!tmpdir[0])
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    tmpdir[0] = 0;
}
static const char *tpath(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* ---- round trip ---------------------------------------------------------------- */
START_TEST(round_trip)
{
    make_tmpdir();
    evbuf in = gen_events(60000, 7);
    const char *p = tpath("rt.npt");
    write_trace(p, &in);
    npu_diag d = { 0 };
    trc_reader *r = trc_open(p, &d);
    ck_assert_msg(r != NULL, "%s", d.msg);
    ck_assert_int_eq(trc_reader_damage(r, NULL), 0);
    const trc_meta *m = trc_reader_meta(r);
    ck_assert_str_eq(m->config_json, "{\"version\":1,\"cores\":4}");
    ck_assert(m->clock_ghz == 1.8);
    ck_assert_uint_eq(m->n_cores, 4);
    ck_assert_uint_eq(m->seed, 42);
    ck_assert_str_eq(m->kernel, "gemm");
    ck_assert_uint_eq(m->n_symbols, NPU_ARRAY_LEN(syms));
    ck_assert_str_eq(trc_name(r, &m->opcodes, 2), "mmad");
    ck_assert_str_eq(trc_name(r, &m->causes, 1), "wait_flag");
    ck_assert_str_eq(trc_name(r, &m->counters, 2), "hbm_bytes");
    ck_assert_str_eq(trc_name(r, &m->hbm_commands, 4), "REF");
    ck_assert_str_eq(trc_name(r, &m->opcodes, 99), "#99");
    ck_assert_str_eq(trc_reader_disasm(r, 0x1008), "insn_at_1008 r1, r2");
    ck_assert_ptr_null(trc_reader_disasm(r, 0x1004));
    ck_assert_str_eq(trc_reader_function_at(r, 0x1100)->name, "gemm");
    ck_assert_str_eq(trc_reader_label_at(r, 0x1100)->name, "tile_loop");
    ck_assert_str_eq(trc_reader_label_at(r, 0x1208)->name, "epilogue");
    ck_assert_str_eq(trc_reader_label_at(r, 0x2020)->name, "helper_body");
    ck_assert_ptr_null(trc_reader_label_at(r, 0x1010));
    ck_assert_ptr_null(trc_reader_function_at(r, 0x3000));

    evbuf out = read_all(r, NULL);
    stable_sort(in.e, in.n);
    ck_assert_uint_eq(out.n, in.n);
    for (size_t i = 0; i < in.n; i++)
        REQUIRE(trc_event_equal(&in.e[i], &out.e[i]), "event %zu differs (kind %s)", i,
                      trc_kind_name(in.e[i].kind));
    uint64_t ev, st, raw, nch;
    trc_reader_totals(r, &ev, &st, &raw, &nch);
    ck_assert_uint_eq(ev, in.n);
    ck_assert_uint_ge(nch, 4);
    ck_assert_int_eq(trc_reader_verify(r, &d), NPU_OK);
    ck_assert_int_eq(trc_reader_damage(r, NULL), 0);
    trc_close(r);
    free(in.e);
    free(out.e);
}
END_TEST

START_TEST(filters_and_seek)
{
    make_tmpdir();
    evbuf in = gen_events(50000, 11);
    const char *p = tpath("f.npt");
    write_trace(p, &in);
    stable_sort(in.e, in.n);
    npu_diag d = { 0 };
    trc_reader *r = trc_open(p, &d);
    ck_assert_msg(r != NULL, "%s", d.msg);
    trc_filter f = TRC_FILTER_ALL;
    f.core = 2;
    f.pipe_mask = 1u << TRC_PIPE_M;
    f.t_lo = 20000;
    f.t_hi = 60000;
    evbuf out = read_all(r, &f);
    size_t k = 0;
    for (size_t i = 0; i < in.n; i++) {
        const trc_event *e = &in.e[i];
        int want = trc_kind_class(e->kind) == TRC_CLASS_CORE && e->core == 2 &&
                   (trc_kind_slots(e->kind) & (1u << TRC_SLOT_PIPE)) &&
                   (e->pipe == TRC_PIPE_M ||
                    ((e->kind == TRC_FLAG_SET || e->kind == TRC_FLAG_WAIT) &&
                     e->pipe2 == TRC_PIPE_M)) &&
                   (e->t0 >= 20000 || trc_event_end(e) > 20000) && e->t0 < 60000;
        if (!want)
            continue;
        REQUIRE(k < out.n && trc_event_equal(e, &out.e[k]), "filtered event %zu differs", k);
        k++;
    }
    ck_assert_uint_eq(k, out.n);
    ck_assert_uint_gt(k, 100);
    free(out.e);

    /* seek: the first event delivered overlaps t, and nothing before is lost */
    trc_iter *it = trc_iter_new(r, NULL, &d);
    trc_event e;
    for (int i = 0; i < 100; i++)
        ck_assert(trc_iter_next(it, &e));
    trc_iter_seek(it, 40000);
    size_t first = 0;
    while (first < in.n && !(in.e[first].t0 >= 40000 || trc_event_end(&in.e[first]) > 40000))
        first++;
    ck_assert(trc_iter_next(it, &e));
    ck_assert(trc_event_equal(&e, &in.e[first]));
    trc_iter_free(it);
    trc_close(r);
    free(in.e);
}
END_TEST

/* trc_reader_set_progress: an iterator reports each chunk it loads, the
 * count growing by one up to the total of chunks it reads; the events
 * delivered are the same with the hook as without. */
typedef struct { uint64_t calls, last_done, total; int ok; } prog_seen;
static void prog_hook(void *user, uint64_t done, uint64_t total)
{
    prog_seen *p = user;
    if (done != p->last_done + 1 || (p->calls && total != p->total) || done > total)
        p->ok = 0;
    p->last_done = done;
    p->total = total;
    p->calls++;
}

START_TEST(read_progress)
{
    make_tmpdir();
    evbuf in = gen_events(50000, 12);
    const char *p = tpath("p.npt");
    write_trace(p, &in);
    npu_diag d = { 0 };
    trc_reader *r = trc_open(p, &d);
    ck_assert_msg(r != NULL, "%s", d.msg);
    evbuf plain = read_all(r, NULL);
    prog_seen ps = { 0, 0, 0, 1 };
    trc_reader_set_progress(r, prog_hook, &ps);
    evbuf seen = read_all(r, NULL);
    ck_assert(ps.ok);
    ck_assert_uint_gt(ps.calls, 1);
    ck_assert_uint_eq(ps.last_done, ps.total);
    uint64_t nev, stored, raw, nch;
    trc_reader_totals(r, &nev, &stored, &raw, &nch);
    ck_assert_uint_le(ps.total, nch);
    ck_assert_uint_eq(seen.n, plain.n);
    for (size_t i = 0; i < seen.n; i++)
        REQUIRE(trc_event_equal(&seen.e[i], &plain.e[i]), "event %zu differs with the hook", i);
    trc_reader_set_progress(r, NULL, NULL);
    uint64_t before = ps.calls;
    free(read_all(r, NULL).e);
    ck_assert_uint_eq(ps.calls, before);
    free(plain.e);
    free(seen.e);
    trc_close(r);
    free(in.e);
}
END_TEST

START_TEST(determinism)
{
    make_tmpdir();
    evbuf in = gen_events(40000, 3);
    write_trace(tpath("a.npt"), &in);
    write_trace(tpath("b.npt"), &in);
    size_t la, lb;
    uint8_t *a = slurp(tpath("a.npt"), &la), *b = slurp(tpath("b.npt"), &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert(memcmp(a, b, la) == 0);
    /* no temp files left behind */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", tpath("a.npt"), (long)getpid());
    ck_assert_int_ne(access(tmp, F_OK), 0);
    free(a); free(b); free(in.e);
}
END_TEST

START_TEST(discard_leaves_nothing)
{
    make_tmpdir();
    npu_diag d = { 0 };
    trc_meta m = test_meta();
    const char *p = tpath("x.npt");
    trc_writer *w = trc_writer_open(p, &m, &d);
    ck_assert_ptr_nonnull(w);
    trc_event e = trc_ev_insn(0, 1, 0x1000, 1, 0, 1, 2, 0);
    ck_assert_int_eq(trc_write(w, &e), NPU_OK);
    trc_writer_discard(w);
    ck_assert_int_ne(access(p, F_OK), 0);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    ck_assert_int_ne(access(tmp, F_OK), 0);
    /* bad events are refused */
    w = trc_writer_open(p, &m, &d);
    trc_event bad = { 0 };
    ck_assert_int_eq(trc_write(w, &bad), NPU_EINVAL);
    ck_assert_int_ne(trc_writer_close(w, &d), NPU_OK);
    ck_assert_int_ne(access(p, F_OK), 0);
}
END_TEST

/* ---- damage -------------------------------------------------------------------------- */
typedef struct chunk_pos { size_t off, end; uint32_t count; } chunk_pos;

/* An independent walk of the chunk headers per docs/trace-format.md. */
static size_t chunks_of(const uint8_t *p, size_t len, chunk_pos *out, size_t max)
{
    size_t n = 0, off = 32;
    while (off + 52 <= len && memcmp(p + off, "NPTC", 4) == 0 && n < max) {
        uint32_t stored = (uint32_t)p[off + 8] | (uint32_t)p[off + 9] << 8 |
                          (uint32_t)p[off + 10] << 16 | (uint32_t)p[off + 11] << 24;
        uint32_t count = (uint32_t)p[off + 16] | (uint32_t)p[off + 17] << 8 |
                         (uint32_t)p[off + 18] << 16 | (uint32_t)p[off + 19] << 24;
        out[n++] = (chunk_pos){ off, off + 52 + stored, p[off + 4] == 2 ? count : 0 };
        off += 52 + stored;
    }
    return n;
}

/* got must be a subsequence of full (dropping chunks keeps the order). */
static size_t check_subsequence(const evbuf *full, const evbuf *got)
{
    size_t j = 0;
    for (size_t i = 0; i < got->n; i++) {
        while (j < full->n && !trc_event_equal(&full->e[j], &got->e[i]))
            j++;
        REQUIRE(j < full->n, "recovered event %zu is not in the original order", i);
        j++;
    }
    return got->n;
}

static void damaged_read(const uint8_t *buf, size_t len, const evbuf *full, size_t min_events,
                         int expect_damage)
{
    npu_diag d = { 0 };
    trc_reader *r = trc_open_mem(buf, len, &d);
    if (len < 32) {
        REQUIRE(r == NULL, "opened a %zu-byte file", len);
        return;
    }
    if (!r)     /* only the 32-byte file header may make a trace unopenable */
        ck_abort_msg("open failed at len %zu: %s", len, d.msg);
    evbuf got = read_all(r, NULL);
    REQUIRE(trc_reader_verify(r, &d) == NPU_OK, "verify");
    check_subsequence(full, &got);
    REQUIRE(got.n >= min_events, "len %zu: recovered %zu < %zu events", len, got.n,
                  min_events);
    const trc_damage *dl;
    size_t nd = trc_reader_damage(r, &dl);
    if (expect_damage)
        REQUIRE(nd > 0, "damage not reported (len %zu)", len);
    for (size_t i = 0; i < nd; i++)
        REQUIRE(dl[i].offset <= len, "damage offset past the end");
    free(got.e);
    trc_close(r);
}

START_TEST(truncation)
{
    make_tmpdir();
    evbuf in = gen_events(3000, 5);
    const char *p = tpath("t.npt");
    write_trace_ch(p, &in, 250);
    size_t len;
    uint8_t *buf = slurp(p, &len);
    chunk_pos ch[64];
    size_t nch = chunks_of(buf, len, ch, 64);
    ck_assert_uint_ge(nch, 5);
    npu_diag d = { 0 };
    trc_reader *r = trc_open_mem(buf, len, &d);
    evbuf full = read_all(r, NULL);
    trc_close(r);
    /* every byte near the chunk boundaries, and a stride over the rest */
    size_t cuts[4096], nc = 0;
    for (size_t i = 0; i < 40; i++)
        cuts[nc++] = i;
    for (size_t c = 0; c < nch; c++)
        for (long k = -3; k <= 60 && nc < 4000; k++)
            if ((long)ch[c].off + k > 0 && ch[c].off + (size_t)k < len)
                cuts[nc++] = ch[c].off + (size_t)k;
    for (size_t x = 1; x < len && nc < 4090; x += len / 500 + 1)
        cuts[nc++] = x;
    for (size_t i = 0; i < nc; i++) {
        size_t cut = cuts[i];
        uint8_t *copy = malloc(cut + 1);  /* exact-size copy so ASan sees overreads */
        memcpy(copy, buf, cut);
        size_t min = 0;
        for (size_t c = 0; c < nch; c++)
            if (ch[c].end <= cut)
                min += ch[c].count;
        damaged_read(copy, cut, &full, min, 1);
        free(copy);
    }
    free(buf); free(full.e); free(in.e);
}
END_TEST

START_TEST(corruption)
{
    make_tmpdir();
    evbuf in = gen_events(3000, 9);
    const char *p = tpath("c.npt");
    write_trace_ch(p, &in, 250);
    size_t len;
    uint8_t *buf = slurp(p, &len);
    chunk_pos ch[64];
    size_t nch = chunks_of(buf, len, ch, 64);
    npu_diag d = { 0 };
    trc_reader *r = trc_open_mem(buf, len, &d);
    evbuf full = read_all(r, NULL);
    trc_close(r);
    uint64_t total = full.n;
    npu_rng rng = { 99 };
    size_t offs[3000], no = 0;
    for (size_t i = 32; i < 32 + 120; i++) offs[no++] = i;       /* the meta chunk's header */
    for (size_t c = 0; c < nch; c++)
        for (size_t k = 0; k < 56 && no < 2000; k++)
            offs[no++] = ch[c].off + k;                          /* every chunk header byte */
    for (size_t k = 1; k <= 80; k++) offs[no++] = len - k;       /* footer and index */
    while (no < 2500) offs[no++] = 32 + npu_rng_next(&rng) % (len - 32);
    uint8_t *copy = malloc(len);
    for (size_t i = 0; i < no; i++) {
        size_t o = offs[i];
        memcpy(copy, buf, len);
        copy[o] ^= (uint8_t)(1u << (npu_rng_next(&rng) % 8));
        uint64_t lost = 0;
        for (size_t c = 0; c < nch; c++)
            if (o >= ch[c].off && o < ch[c].end)
                lost = ch[c].count;
        damaged_read(copy, len, &full, total - lost, 1);
    }
    /* multi-byte smears */
    for (int i = 0; i < 200; i++) {
        memcpy(copy, buf, len);
        size_t o = 32 + npu_rng_next(&rng) % (len - 32), n = 1 + npu_rng_next(&rng) % 300;
        for (size_t k = 0; k < n && o + k < len; k++)
            copy[o + k] = (uint8_t)npu_rng_next(&rng);
        damaged_read(copy, len, &full, 0, 0);
    }
    /* header damage: each has its own message */
    memcpy(copy, buf, len);
    memmove(copy + 4, copy + 5, len - 5);   /* a CRLF -> LF conversion */
    ck_assert_ptr_null(trc_open_mem(copy, len, &d));
    ck_assert_ptr_nonnull(strstr(d.msg, "text-mode"));
    memcpy(copy, buf, len);
    copy[1] = 'X';
    ck_assert_ptr_null(trc_open_mem(copy, len, &d));
    ck_assert_ptr_nonnull(strstr(d.msg, "not an npusim trace"));
    memcpy(copy, buf, len);
    copy[16] = 0x12; copy[17] = 0x34; copy[18] = 0x56; copy[19] = 0x78;
    ck_assert_ptr_null(trc_open_mem(copy, len, &d));
    ck_assert_ptr_nonnull(strstr(d.msg, "big-endian"));
    memcpy(copy, buf, len);
    copy[8] = 9;
    ck_assert_ptr_null(trc_open_mem(copy, len, &d));
    ck_assert_ptr_nonnull(strstr(d.msg, "version"));
    free(copy); free(buf); free(full.e); free(in.e);
}
END_TEST


/* ---- synthetic stream: size, exporters, command ------------------------------------ */
typedef struct collect { evbuf *b; int insn_only; } collect;
static npu_status sink_collect(void *ctx, const trc_event *e)
{
    collect *c = ctx;
    if (!c->insn_only || e->kind == TRC_INSN)
        ev_push(c->b, *e);
    return NPU_OK;
}

/* Size goal: under 8 bytes per INSN event on a realistic GEMM-like stream
 * (24 cores, INSN events only, so the figure is not flattered by the
 * smaller records of other kinds). */
START_TEST(size_per_insn)
{
    make_tmpdir();
    trc_synth_opts o = { .events = 600000, .cores = 24, .seed = 5 };
    evbuf b = { 0 };
    collect c = { &b, 1 };
    npu_diag d = { 0 };
    ck_assert_int_eq(trc_synth_run(&o, sink_collect, NULL, &c, &d), NPU_OK);
    ck_assert_uint_gt(b.n, 200000);
    const char *p = tpath("size.npt");
    trc_meta m;
    trc_writer *w = trc_writer_open(p, trc_synth_meta(&o, &m), &d);
    ck_assert_ptr_nonnull(w);
    for (size_t i = 0; i < b.n; i++)
        REQUIRE(trc_write(w, &b.e[i]) == NPU_OK, "write");
    ck_assert_int_eq(trc_writer_close(w, &d), NPU_OK);
    size_t len;
    uint8_t *buf = slurp(p, &len);
    double per = (double)len / (double)b.n;
    printf("size: %zu INSN events of a 24-core synthetic GEMM -> %zu bytes = %.2f bytes/event\n",
           b.n, len, per);
    ck_assert_msg(per < 8.0, "%.2f bytes per INSN event", per);
    /* and they read back in order */
    trc_reader *r = trc_open(p, &d);
    evbuf out = read_all(r, NULL);
    stable_sort(b.e, b.n);
    ck_assert_uint_eq(out.n, b.n);
    for (size_t i = 0; i < b.n; i++)
        REQUIRE(trc_event_equal(&b.e[i], &out.e[i]), "event %zu", i);
    trc_close(r);
    free(buf); free(b.e); free(out.e);
}
END_TEST

START_TEST(synth_deterministic)
{
    make_tmpdir();
    trc_synth_opts o = { .events = 50000, .cores = 6, .seed = 3, .mem = 1 };
    npu_diag d = { 0 };
    ck_assert_int_eq(trc_synth_write(tpath("s1.npt"), &o, &d), NPU_OK);
    ck_assert_int_eq(trc_synth_write(tpath("s2.npt"), &o, &d), NPU_OK);
    size_t la, lb;
    uint8_t *a = slurp(tpath("s1.npt"), &la), *b = slurp(tpath("s2.npt"), &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert(memcmp(a, b, la) == 0);
    free(a); free(b);
}
END_TEST

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    REQUIRE(cJSON_IsNumber(v), "missing number '%s'", k);
    return v->valuedouble;
}

typedef struct xev { double ts, dur; long pid, tid; size_t order; } xev;
static int cmp_xev(const void *a, const void *b)
{
    const xev *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

START_TEST(chrome_export)
{
    make_tmpdir();
    trc_synth_opts o = { .events = 40000, .cores = 3, .seed = 8, .mem = 1 };
    npu_diag d = { 0 };
    const char *p = tpath("c.npt"), *j = tpath("c.json");
    ck_assert_int_eq(trc_synth_write(p, &o, &d), NPU_OK);
    trc_reader *r = trc_open(p, &d);
    ck_assert_ptr_nonnull(r);
    uint64_t n_insn = 0, n_stall = 0, n_set = 0;
    {
        evbuf all = read_all(r, NULL);
        for (size_t i = 0; i < all.n; i++) {
            n_insn += all.e[i].kind == TRC_INSN;
            n_stall += all.e[i].kind == TRC_STALL;
            n_set += all.e[i].kind == TRC_FLAG_SET;
        }
        free(all.e);
    }
    trc_export_opts eo = { .filter = TRC_FILTER_ALL };
    ck_assert_int_eq(trc_export_file(r, "chrome", &eo, j, &d), NPU_OK);
    trc_close(r);
    size_t len;
    char *txt = (char *)slurp(j, &len);
    txt[len] = 0;
    cJSON *root = cJSON_Parse(txt);
    ck_assert_msg(root != NULL, "the JSON does not parse");
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    ck_assert(cJSON_IsArray(evs));
    size_t n = (size_t)cJSON_GetArraySize(evs), nx = 0, n_s = 0, n_f = 0, nb = 0, ne = 0;
    size_t x_insn = 0, x_stall = 0, n_c = 0, procs = 0, threads = 0;
    xev *xs = malloc(n * sizeof *xs);
    /* flow ids are 1..N: each must have one s and one f */
    unsigned char *sf = calloc(n + 2, 1);
    size_t k = 0;
    const double cyc = 1.0 / 1800.0;    /* one cycle in us at 1.8 GHz */
    double s_ts = 0;
    for (const cJSON *e = evs->child; e; e = e->next, k++) {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        REQUIRE(cJSON_IsString(ph), "event %zu without ph", k);
        char c = ph->valuestring[0];
        if (c == 'M') {
            const char *nm = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
            procs += !strcmp(nm, "process_name");
            threads += !strcmp(nm, "thread_name");
            REQUIRE(cJSON_GetObjectItemCaseSensitive(e, "args") != NULL, "M without args");
            continue;
        }
        double ts = num(e, "ts");
        REQUIRE(ts >= 0, "negative ts");
        if (c == 'X') {
            REQUIRE(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "name")), "X without name");
            const char *cat = cJSON_GetObjectItemCaseSensitive(e, "cat")->valuestring;
            double dur = num(e, "dur");
            REQUIRE(dur >= 0, "negative dur");
            xs[nx++] = (xev){ ts, dur, (long)num(e, "pid"), (long)num(e, "tid"), k };
            if (!strcmp(cat, "insn")) {
                x_insn++;
                const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
                const cJSON *pc = cJSON_GetObjectItemCaseSensitive(a, "pc");
                REQUIRE(cJSON_IsString(pc) && !strncmp(pc->valuestring, "0x", 2), "pc");
                REQUIRE(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(a, "disasm")), "disasm");
                /* the printed times keep single cycles apart */
                double start = num(a, "start"), end = num(a, "end");
                REQUIRE(fabs(ts - start * cyc) < cyc / 4 && fabs(dur - (end - start) * cyc) < cyc / 4,
                        "ts/dur do not match the cycles");
            }
            if (!strcmp(cat, "stall")) {
                x_stall++;
                REQUIRE(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(e, "args"), "cause")), "cause");
            }
        } else if (c == 's' || c == 'f') {
            double id = num(e, "id");
            REQUIRE(id >= 1 && id <= (double)n, "flow id out of range");
            unsigned bit = c == 's' ? 1 : 2;
            REQUIRE(!(sf[(size_t)id] & bit), "flow id %g used twice", id);
            sf[(size_t)id] |= (unsigned char)bit;
            /* s and f of a pair are written together, s first; the f must
             * come later in time (Perfetto drops an f seen before its s) */
            if (c == 's')
                s_ts = ts;
            else
                REQUIRE(ts > s_ts, "flow %g ends (%f) before it starts (%f)", id, ts, s_ts);
            if (c == 's') n_s++; else n_f++;
            if (c == 'f')
                REQUIRE(!strcmp(cJSON_GetObjectItemCaseSensitive(e, "bp")->valuestring, "e"), "bp");
        } else if (c == 'B') {
            nb++;
        } else if (c == 'E') {
            ne++;
        } else if (c == 'C') {
            n_c++;
            REQUIRE(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(e, "args"), "value")), "C value");
        } else {
            REQUIRE(c == 'i', "unexpected phase %c", c);
        }
    }
    ck_assert_uint_eq(x_insn, n_insn);
    ck_assert_uint_eq(x_stall, n_stall);
    ck_assert_uint_gt(n_s, n_set / 2);     /* sets whose wait is in the trace */
    ck_assert_uint_eq(n_s, n_f);
    for (size_t i = 1; i <= n_s; i++)
        REQUIRE(sf[i] == 3, "flow %zu is not an s/f pair", i);
    ck_assert_uint_eq(nb, ne);
    ck_assert_uint_gt(n_c, 0);
    ck_assert_uint_eq(procs, 4);           /* 3 cores and HBM */
    ck_assert_uint_gt(threads, 3 * 7);
    /* per track, in file order: X events start in order and never overlap */
    qsort(xs, nx, sizeof *xs, cmp_xev);
    for (size_t i = 1; i < nx; i++) {
        if (xs[i].pid != xs[i - 1].pid || xs[i].tid != xs[i - 1].tid)
            continue;
        REQUIRE(xs[i].ts >= xs[i - 1].ts, "ts goes back on track %ld/%ld", xs[i].pid, xs[i].tid);
        REQUIRE(xs[i].ts >= xs[i - 1].ts + xs[i - 1].dur - cyc / 4,
                "X events overlap on track %ld/%ld at %f", xs[i].pid, xs[i].tid, xs[i].ts);
    }
    cJSON_Delete(root);
    free(txt); free(xs); free(sf);
}
END_TEST

START_TEST(folded_export)
{
    make_tmpdir();
    trc_synth_opts o = { .events = 60000, .cores = 4, .seed = 2 };
    npu_diag d = { 0 };
    const char *p = tpath("f.npt");
    ck_assert_int_eq(trc_synth_write(p, &o, &d), NPU_OK);
    trc_reader *r = trc_open(p, &d);
    uint64_t busy[TRC_NPIPES] = { 0 }, stall[TRC_NPIPES] = { 0 };
    evbuf all = read_all(r, NULL);
    for (size_t i = 0; i < all.n; i++) {
        if (all.e[i].kind == TRC_INSN)
            busy[all.e[i].pipe] += all.e[i].t1 - all.e[i].t0;
        if (all.e[i].kind == TRC_STALL)
            stall[all.e[i].pipe] += all.e[i].t1 - all.e[i].t0;
    }
    free(all.e);
    for (int st = 0; st <= 1; st++) {
        trc_export_opts eo = { .filter = TRC_FILTER_ALL, .stalls = st };
        const char *fp = tpath(st ? "s.folded" : "b.folded");
        ck_assert_int_eq(trc_export_file(r, "folded", &eo, fp, &d), NPU_OK);
        FILE *f = fopen(fp, "r");
        char line[1024];
        uint64_t got[TRC_NPIPES] = { 0 };
        int lines = 0, with_label = 0;
        while (fgets(line, sizeof line, f)) {
            lines++;
            char *sp = strrchr(line, ' ');
            REQUIRE(sp, "no weight: %s", line);
            *sp = 0;
            uint64_t w = strtoull(sp + 1, NULL, 10);
            REQUIRE(!strncmp(line, "core ", 5), "stack does not start at the core: %s", line);
            /* pipe = the second-to-last frame */
            char *last = strrchr(line, ';');
            REQUIRE(last, "too few frames");
            *last = 0;
            char *pf = strrchr(line, ';');
            REQUIRE(pf, "too few frames");
            int pipe = -1;
            for (int q = 0; q < TRC_NPIPES; q++)
                if (!strcmp(pf + 1, trc_pipe_name((unsigned)q)))
                    pipe = q;
            REQUIRE(pipe >= 0, "no pipe frame in %s", line);
            got[pipe] += w;
            with_label += strstr(line, ";gemm;k_loop") != NULL || strstr(line, ";load_tile;load_") != NULL;
        }
        fclose(f);
        ck_assert_int_gt(lines, 10);
        if (!st)
            ck_assert_int_gt(with_label, 4);
        for (int q = 0; q < TRC_NPIPES; q++)
            ck_assert_msg(got[q] == (st ? stall[q] : busy[q]), "pipe %s: folded %llu != %llu",
                          trc_pipe_name((unsigned)q), (unsigned long long)got[q],
                          (unsigned long long)(st ? stall[q] : busy[q]));
    }
    trc_close(r);
}
END_TEST

/* A stall belongs to the instruction that waited (docs/traces.md): the
 * one of its core and pipe holding its start, else the next to start past
 * those already ended. Chrome gives it as the slice's "pc" and "waiting",
 * folded --stalls as the label frame; a stall nothing follows is the lane's
 * last instruction's, and one on a lane without any has neither. */
START_TEST(stall_owner_exports)
{
    make_tmpdir();
    evbuf b = { 0 };
    ev_push(&b, trc_ev_insn(0, TRC_PIPE_MTE2, 0x1200, 4, 0, 0, 100, 0));  /* epilogue: a move 0..100 */
    ev_push(&b, trc_ev_insn(0, TRC_PIPE_S, 0x1040, 1, 0, 0, 3, 0));
    ev_push(&b, trc_ev_stall(0, TRC_PIPE_S, 0, 3, 10));                   /* queue full: 7 ... */
    ev_push(&b, trc_ev_insn(0, TRC_PIPE_S, 0x1048, 4, 10, 10, 11, 1));    /* ... for this dispatch */
    ev_push(&b, trc_ev_insn(0, TRC_PIPE_MTE1, 0x1050, 7, 20, 20, 20, 0)); /* set_flag, no time */
    ev_push(&b, trc_ev_stall(0, TRC_PIPE_MTE1, 1, 20, 50));               /* flag: 30 ... */
    ev_push(&b, trc_ev_insn(0, TRC_PIPE_MTE1, 0x2010, 8, 50, 50, 50, 0)); /* ... helper_body's wait */
    ev_push(&b, trc_ev_stall(0, TRC_PIPE_MTE2, 3, 60, 100));              /* inside the move: 40 */
    ev_push(&b, trc_ev_stall(1, TRC_PIPE_V, 2, 5, 9));                    /* no instruction on the lane: 4 */
    ev_push(&b, trc_ev_stall(0, TRC_PIPE_S, 0, 20, 26));                  /* nothing after: the lane's last, 6 */
    const char *p = tpath("own.npt");
    write_trace(p, &b);
    free(b.e);
    npu_diag d = { 0 };
    trc_reader *r = trc_open(p, &d);
    ck_assert_msg(r != NULL, "%s", d.msg);
    trc_export_opts eo = { .filter = TRC_FILTER_ALL, .stalls = 1 };
    const char *fp = tpath("own.folded");
    ck_assert_int_eq(trc_export_file(r, "folded", &eo, fp, &d), NPU_OK);
    size_t len;
    char *txt = (char *)slurp(fp, &len);
    ck_assert_str_eq(txt, "core 0;gemm;epilogue;MTE2;mem 40\n"
                          "core 0;gemm;tile_loop;S;queue_full 13\n"
                          "core 0;helper;helper_body;MTE1;wait_flag 30\n"
                          "core 1;V;bank_conflict 4\n");
    free(txt);
    const char *cp = tpath("own.json");
    eo.stalls = 0;
    ck_assert_int_eq(trc_export_file(r, "chrome", &eo, cp, &d), NPU_OK);
    txt = (char *)slurp(cp, &len);
    cJSON *j = cJSON_Parse(txt);
    ck_assert_ptr_nonnull(j);
    const char *want[][3] = { { "queue_full", "0x1048", "insn_at_1048 r1, r2" },
                              { "wait_flag", "0x2010", NULL },
                              { "mem", "0x1200", "insn_at_1200 r1, r2" },
                              { "bank_conflict", NULL, NULL } };
    int seen = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(j, "traceEvents")) {
        const cJSON *cat = cJSON_GetObjectItem(ev, "cat");
        if (!cat || strcmp(cat->valuestring, "stall"))
            continue;
        const cJSON *a = cJSON_GetObjectItem(ev, "args");
        const char *cause = cJSON_GetObjectItem(a, "cause")->valuestring;
        const cJSON *pc = cJSON_GetObjectItem(a, "pc"), *wt = cJSON_GetObjectItem(a, "waiting");
        for (size_t i = 0; i < NPU_ARRAY_LEN(want); i++) {
            if (strcmp(cause, want[i][0]))
                continue;
            seen++;
            if (!want[i][1]) {
                ck_assert_msg(!pc && !wt, "%s: an owner where none follows", cause);
            } else {
                ck_assert_msg(pc && !strcmp(pc->valuestring, want[i][1]), "%s: pc %s", cause,
                              pc ? pc->valuestring : "none");
                ck_assert_ptr_nonnull(wt);   /* "" where the trace has no disassembly */
                if (want[i][2])
                    ck_assert_str_eq(wt->valuestring, want[i][2]);
            }
        }
    }
    ck_assert_int_eq(seen, 5);   /* both queue_full stalls: 0x1048, the later one as the lane's last */
    cJSON_Delete(j);
    free(txt);
    trc_close(r);
}
END_TEST

START_TEST(csv_export_and_command)
{
    make_tmpdir();
    trc_synth_opts o = { .events = 20000, .cores = 2, .seed = 4, .mem = 1 };
    npu_diag d = { 0 };
    char *p = strdup(tpath("k.npt")), *csv = strdup(tpath("k.csv")), *js = strdup(tpath("k.json"));
    ck_assert_int_eq(trc_synth_write(p, &o, &d), NPU_OK);
    char *a1[] = { "trace", "export", "--format", "csv", p, "-o", csv, NULL };
    ck_assert_int_eq(trc_cmd_trace(7, a1), 0);
    FILE *f = fopen(csv, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    size_t rows = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert(!strncmp(line, "kind,core,pipe,opcode", 21));
    size_t cols = 1;
    for (char *q = line; *q; q++) cols += *q == ',';
    while (fgets(line, sizeof line, f)) {
        rows++;
        size_t c = 1;
        int inq = 0;
        for (char *q = line; *q; q++) {
            if (*q == '"') inq = !inq;
            c += *q == ',' && !inq;
        }
        REQUIRE(c == cols, "row %zu has %zu columns, the header %zu", rows, c, cols);
    }
    fclose(f);
    ck_assert_uint_eq(rows, 20000);
    char *a2[] = { "trace", "export", "--format", "chrome", "--core", "1", p, "-o", js, NULL };
    ck_assert_int_eq(trc_cmd_trace(9, a2), 0);
    ck_assert_int_eq(access(js, F_OK), 0);
    char *a3[] = { "trace", "info", p, NULL };
    ck_assert_int_eq(trc_cmd_trace(3, a3), 0);
    char *a4[] = { "trace", "export", "--format", "svg", p, "-o", js, NULL };
    ck_assert_int_eq(trc_cmd_trace(7, a4), 2);
    char *a5[] = { "trace", "info", "/nonexistent/x.npt", NULL };
    ck_assert_int_eq(trc_cmd_trace(3, a5), 2);
    char *a6[] = { "trace", "--help", NULL };
    ck_assert_int_eq(trc_cmd_trace(2, a6), 0);
    char *a7[] = { "trace", "export", p, NULL };
    ck_assert_int_eq(trc_cmd_trace(3, a7), 2);
    free(p); free(csv); free(js);
}
END_TEST

/* Every allocation of writer, reader and exporters failing in turn: each
 * run either succeeds or returns an error; never a crash or (under ASan) a
 * leak, and no output file is left by a failed run. */
static npu_status alloc_run(const char *path, const evbuf *in)
{
    npu_diag d = { 0 };
    trc_meta m = test_meta();
    trc_writer *w = trc_writer_open(path, &m, &d);
    if (!w)
        return d.status;
    npu_status st = trc_writer_set_chunk_events(w, 400);
    for (size_t i = 0; i < in->n && st == NPU_OK; i++)
        st = trc_write(w, &in->e[i]);
    for (uint64_t pc = 0x1000; pc < 0x1100 && st == NPU_OK; pc += 8)
        st = trc_writer_add_disasm(w, pc, "x");
    if (st != NPU_OK) {
        trc_writer_discard(w);
        REQUIRE(access(path, F_OK) != 0, "a failed write left the file");
        return st;
    }
    st = trc_writer_close(w, &d);
    if (st != NPU_OK) {
        REQUIRE(access(path, F_OK) != 0, "a failed close left the file");
        return st;
    }
    trc_reader *r = trc_open(path, &d);
    remove(path);
    if (!r)
        return d.status;
    trc_iter *it = trc_iter_new(r, NULL, &d);
    if (!it) {
        trc_close(r);
        return d.status;
    }
    trc_event e;
    size_t n = 0;
    while (trc_iter_next(it, &e))
        n++;
    st = trc_iter_error(it, &d);
    trc_iter_free(it);
    if (st == NPU_OK)
        st = trc_reader_verify(r, &d);
    FILE *devnull = fopen("/dev/null", "w");
    trc_export_opts eo = { .filter = TRC_FILTER_ALL };
    if (st == NPU_OK)
        st = trc_export_chrome(r, devnull, &eo, &d);
    if (st == NPU_OK)
        st = trc_export_folded(r, devnull, 0, &d);
    if (st == NPU_OK)
        st = trc_export_csv(r, devnull, &eo, &d);
    fclose(devnull);
    if (st == NPU_OK)
        REQUIRE(n == in->n, "lost events without an error");
    trc_close(r);
    return st;
}

START_TEST(allocation_failures)
{
    make_tmpdir();
    evbuf in = gen_events(1500, 21);
    const char *p = tpath("alloc.npt");
    long n;
    for (n = 1; n < 5000; n++) {
        npu_alloc_fail_after(n);
        npu_status st = alloc_run(p, &in);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (!failed) {
            ck_assert_int_eq(st, NPU_OK);
            break;
        }
        REQUIRE(st != NPU_OK, "allocation %ld failed but the run reported success", n);
    }
    ck_assert_int_lt(n, 5000);
    ck_assert_int_gt(n, 20);
    free(in.e);
}
END_TEST

/* A recording killed mid-run: the child writes and _exits without close.
 * Nothing is under the requested name; the temp file reads as a truncated
 * trace: every chunk that reached the disk is recovered, damage reported. */
START_TEST(killed_recording)
{
    make_tmpdir();
    evbuf in = gen_events(20000, 13);
    const char *p = tpath("killed.npt");
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        npu_diag d = { 0 };
        trc_meta m = test_meta();
        trc_writer *w = trc_writer_open(p, &m, &d);
        if (!w)
            _exit(3);
        trc_writer_set_chunk_events(w, 500);
        for (size_t i = 0; i < in.n; i++)
            trc_write(w, &in.e[i]);
        trc_writer_add_disasm(w, 0x1000, "x");
        _exit(0);   /* no close: the index, footer and rename never happen */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_ne(access(p, F_OK), 0);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)pid);
    ck_assert_int_eq(access(tmp, F_OK), 0);
    npu_diag d = { 0 };
    trc_reader *r = trc_open(tmp, &d);
    ck_assert_msg(r != NULL, "%s", d.msg);
    evbuf got = read_all(r, NULL);
    stable_sort(in.e, in.n);
    check_subsequence(&in, &got);
    ck_assert_uint_gt(got.n, in.n / 2);   /* 40 chunks, most of them on disk */
    ck_assert_uint_lt(got.n, in.n);
    ck_assert_uint_gt(trc_reader_damage(r, NULL), 0);
    ck_assert_str_eq(trc_reader_meta(r)->kernel, "gemm");
    trc_close(r);
    free(got.e); free(in.e);
}
END_TEST

/* Malformed records behind a valid CRC (a buggy writer, or crafted input):
 * an events chunk is replaced by its own records, inflated, with a few bytes
 * changed, stored uncompressed under fresh CRCs; the footer is dropped so
 * the file is scanned. The decoder must stop at the damage, never overrun,
 * and keep every other chunk. */
START_TEST(garbage_records)
{
    make_tmpdir();
    evbuf in = gen_events(3000, 17);
    const char *p = tpath("g.npt");
    write_trace_ch(p, &in, 300);
    size_t len;
    uint8_t *buf = slurp(p, &len);
    chunk_pos ch[64];
    size_t nch = chunks_of(buf, len, ch, 64);
    size_t victim = 0;
    for (size_t c = 0; c < nch; c++)
        if (ch[c].count && c > 2) { victim = c; break; }
    ck_assert_uint_gt(victim, 0);
    const uint8_t *h = buf + ch[victim].off;
    uint32_t stored = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
    uint32_t raw = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 | (uint32_t)h[15] << 24;
    uint8_t *plain = malloc(raw);
    uLongf plen = raw;
    ck_assert_int_eq(uncompress(plain, &plen, h + 52, stored), Z_OK);
    ck_assert_uint_eq(plen, raw);
    npu_diag d = { 0 };
    trc_reader *r0 = trc_open_mem(buf, len, &d);
    evbuf full = read_all(r0, NULL);
    trc_close(r0);
    npu_rng rng = { 5 };
    size_t out_cap = len + raw + 64;
    uint8_t *out = malloc(out_cap), *mut = malloc(raw);
    int damaged = 0, bad_records = 0;
    for (int it = 0; it < 600; it++) {
        memcpy(mut, plain, raw);
        int flips = 1 + (int)(npu_rng_next(&rng) % 4);
        for (int k = 0; k < flips; k++)
            mut[npu_rng_next(&rng) % raw] = (uint8_t)npu_rng_next(&rng);
        size_t o = 0;
        memcpy(out, buf, ch[victim].off);
        o = ch[victim].off;
        uint8_t nh[52];
        memcpy(nh, h, 52);
        nh[5] = 0;                        /* stored, not zlib */
        trc_put32(nh + 8, raw);
        trc_put32(nh + 12, raw);
        trc_put32(nh + 44, (uint32_t)crc32(0, mut, raw));
        trc_put32(nh + 48, (uint32_t)crc32(0, nh, 48));
        memcpy(out + o, nh, 52);
        o += 52;
        memcpy(out + o, mut, raw);
        o += raw;
        size_t rest = len - 24 - ch[victim].end;   /* without the footer */
        memcpy(out + o, buf + ch[victim].end, rest);
        o += rest;
        uint8_t *exact = malloc(o);
        memcpy(exact, out, o);
        trc_reader *r = trc_open_mem(exact, o, &d);
        REQUIRE(r != NULL, "open: %s", d.msg);
        evbuf got = read_all(r, NULL);
        REQUIRE(trc_reader_verify(r, &d) == NPU_OK, "verify");
        REQUIRE(got.n <= full.n, "more events than written");
        REQUIRE(got.n >= full.n - ch[victim].count, "lost events of intact chunks");
        REQUIRE(trc_reader_damage(r, NULL) > 0, "no damage reported (the footer is gone)");
        const trc_damage *dl;
        size_t nd = trc_reader_damage(r, &dl);
        for (size_t i = 0; i < nd; i++)
            damaged += dl[i].offset == ch[victim].off;
        /* differential: the iterator's fast decoder (read_all above) stops
         * at the same record as the checked decoder of trc_reader_verify on
         * a fresh reader, or finds the same trailing bytes, or neither */
        trc_reader *rv = trc_open_mem(exact, o, &d), *ri = trc_open_mem(exact, o, &d);
        REQUIRE(rv != NULL && ri != NULL, "open: %s", d.msg);
        REQUIRE(trc_reader_verify(rv, &d) == NPU_OK, "verify");
        evbuf goti = read_all(ri, NULL);  /* iterator only: no verify after it */
        REQUIRE(goti.n == got.n, "two iterations differ");
        free(goti.e);
        long k_it = -1, k_ver = -1;
        int tr_it = 0, tr_ver = 0;
        for (int w = 0; w < 2; w++) {
            const trc_damage *l;
            size_t n = trc_reader_damage(w ? rv : ri, &l);
            for (size_t i = 0; i < n; i++) {
                if (l[i].offset != ch[victim].off)
                    continue;
                const char *q = strstr(l[i].what, "record ");
                long k;
                if (q && sscanf(q, "record %ld of", &k) == 1)
                    *(w ? &k_ver : &k_it) = k;
                if (strstr(l[i].what, "bytes after its last record"))
                    *(w ? &tr_ver : &tr_it) = 1;
            }
        }
        REQUIRE(k_it == k_ver && tr_it == tr_ver, "mutation %d: iterator stops at record %ld "
                "(trailing %d), the checked decoder at %ld (trailing %d)", it, k_it, tr_it, k_ver, tr_ver);
        bad_records += k_ver >= 0;
        if (k_it >= 0)
            REQUIRE(got.n - (full.n - ch[victim].count) == (size_t)k_it,
                    "mutation %d: %zu events of the chunk before its bad record %ld", it,
                    got.n - (full.n - ch[victim].count), k_it);
        trc_close(rv);
        trc_close(ri);
        trc_close(r);
        free(got.e);
        free(exact);
    }
    ck_assert_int_gt(damaged, 100);   /* most mutations are caught as malformed */
    ck_assert_int_gt(bad_records, 100);   /* ... at a record, the differential's case */
    free(out); free(mut); free(plain); free(buf); free(full.e); free(in.e);
}
END_TEST

/* ---- parts: decoding on several threads ------------------------------------------ */
static evbuf read_part_pf(trc_reader *r, const trc_filter *f, unsigned k, unsigned n, int pf)
{
    npu_diag d = { 0 };
    trc_iter *it = trc_iter_new_part(r, f, k, n, &d);
    REQUIRE(it != NULL, "%s", d.msg);
    REQUIRE(trc_iter_prefetch(it, pf) == NPU_OK, "prefetch");
    return drain_iter(it);
}
static evbuf read_part(trc_reader *r, const trc_filter *f, unsigned k, unsigned n)
{
    return read_part_pf(r, f, k, n, 0);
}

/* Parts 0, 1, ... in order must be exactly the whole iterator's sequence. */
static void check_parts_concat(trc_reader *r, const trc_filter *f, const evbuf *full, unsigned n)
{
    size_t k = 0, nonempty = 0;
    uint64_t prev_hi = 0;
    for (unsigned part = 0; part < n; part++) {
        evbuf b = read_part(r, f, part, n);
        npu_diag d = { 0 };
        trc_iter *it = trc_iter_new_part(r, f, part, n, &d);
        uint64_t lo, hi;
        trc_iter_part_range(it, &lo, &hi);
        trc_iter_free(it);
        REQUIRE(part == 0 ? lo == 0 : lo == prev_hi, "part %u/%u starts at %llu, not where "
                "the last ended", part, n, (unsigned long long)lo);
        REQUIRE(part + 1 == n ? hi == 0 : hi >= lo, "part %u/%u range", part, n);
        prev_hi = hi;
        for (size_t i = 0; i < b.n; i++, k++) {
            REQUIRE(k < full->n, "parts of %u give more events than the whole", n);
            REQUIRE(trc_event_equal(&b.e[i], &full->e[k]) && b.e[i].t0 == full->e[k].t0,
                    "%u parts: event %zu (part %u) differs from the whole iterator's", n, k, part);
            REQUIRE(b.e[i].t0 >= lo && (!hi || b.e[i].t0 < hi), "event outside its part");
        }
        nonempty += b.n > 0;
        free(b.e);
    }
    REQUIRE(k == full->n, "%u parts give %zu events, the whole %zu", n, k, full->n);
    if (full->n > 1000 && n <= 8)    /* fewer parts than chunks: none is empty */
        REQUIRE(nonempty == n, "%u parts: only %zu hold events", n, nonempty);
}

typedef struct part_job { trc_reader *r; unsigned k, n; int pf; evbuf out; } part_job;
static void *part_thread(void *arg)
{
    part_job *j = arg;
    j->out = read_part_pf(j->r, NULL, j->k, j->n, j->pf);
    return NULL;
}

START_TEST(iter_parts)
{
    make_tmpdir();
    evbuf in = gen_events(60000, 21);
    const char *p = tpath("p.npt");
    write_trace_ch(p, &in, 512);
    npu_diag d = { 0 };
    trc_reader *r = trc_open(p, &d);
    ck_assert_msg(r != NULL, "%s", d.msg);
    evbuf full = read_all(r, NULL);
    ck_assert_uint_eq(full.n, in.n);
    for (unsigned n = 1; n <= 5; n++)
        check_parts_concat(r, NULL, &full, n);
    trc_filter f = TRC_FILTER_ALL;
    f.core = 1;
    f.t_lo = 15000;
    evbuf ff = read_all(r, &f);
    ck_assert_uint_gt(ff.n, 100);
    check_parts_concat(r, &f, &ff, 3);
    free(ff.e);
    /* more parts than chunks: empty parts, still the same sequence */
    check_parts_concat(r, NULL, &full, 400);
    /* reading ahead on a helper thread: the same sequence, also after a seek */
    evbuf pf = read_part_pf(r, NULL, 0, 1, 1);
    ck_assert_uint_eq(pf.n, full.n);
    for (size_t i = 0; i < full.n; i++)
        REQUIRE(trc_event_equal(&pf.e[i], &full.e[i]), "prefetching: event %zu differs", i);
    free(pf.e);
    {
        trc_iter *it = trc_iter_new(r, NULL, &d);
        ck_assert_int_eq(trc_iter_prefetch(it, 1), NPU_OK);
        trc_event e;
        for (int i = 0; i < 5000; i++)
            ck_assert(trc_iter_next(it, &e));
        trc_iter *late = trc_iter_new(r, NULL, &d);
        ck_assert(trc_iter_next(late, &e));
        ck_assert_int_eq(trc_iter_prefetch(late, 1), NPU_EINVAL);  /* chunks already read */
        trc_iter_free(late);
        trc_iter_seek(it, 30000);
        for (size_t i = 0; i < full.n; i++) {
            if (!(full.e[i].t0 >= 30000 || trc_event_end(&full.e[i]) > 30000))
                continue;   /* the seek's window starts at 30000 */
            REQUIRE(trc_iter_next(it, &e), "prefetching after a seek: ended at %zu", i);
            REQUIRE(trc_event_equal(&e, &full.e[i]), "prefetching after a seek: event %zu", i);
        }
        ck_assert(!trc_iter_next(it, &e));
        trc_iter_free(it);
    }
    ck_assert_ptr_null(trc_iter_new_part(r, NULL, 2, 2, &d));
    ck_assert_int_eq(d.status, NPU_EINVAL);
    trc_close(r);

    /* two threads on one damaged reader: each damaged chunk listed once, and
     * the parts give what one iterator gives */
    size_t len;
    uint8_t *buf = slurp(p, &len);
    chunk_pos ch[256];
    size_t nch = chunks_of(buf, len, ch, 256);
    ck_assert_uint_gt(nch, 60);
    for (size_t c = nch / 4; c < nch; c += nch / 4)
        buf[ch[c].off + 52 + (ch[c].end - ch[c].off - 52) / 2] ^= 0x5a;    /* payload byte */
    trc_reader *r1 = trc_open_mem(buf, len, &d);
    ck_assert_msg(r1 != NULL, "%s", d.msg);
    evbuf one = read_all(r1, NULL);
    const trc_damage *dl;
    size_t nd1 = trc_reader_damage(r1, &dl);
    ck_assert_uint_gt(nd1, 0);
    ck_assert_uint_lt(one.n, full.n);
    trc_reader *r2 = trc_open_mem(buf, len, &d);
    ck_assert_msg(r2 != NULL, "%s", d.msg);
    part_job jobs[2] = { { r2, 0, 2, 1, { 0 } }, { r2, 1, 2, 1, { 0 } } };   /* each prefetching */
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, part_thread, &jobs[1]), 0);
    part_thread(&jobs[0]);
    pthread_join(th, NULL);
    ck_assert_uint_eq(jobs[0].out.n + jobs[1].out.n, one.n);
    for (size_t i = 0; i < one.n; i++) {
        const trc_event *e = i < jobs[0].out.n ? &jobs[0].out.e[i] : &jobs[1].out.e[i - jobs[0].out.n];
        REQUIRE(trc_event_equal(e, &one.e[i]), "threaded parts: event %zu differs", i);
    }
    const trc_damage *dl2;
    size_t nd2 = trc_reader_damage(r2, &dl2);
    ck_assert_uint_eq(nd2, nd1);
    for (size_t i = 0; i < nd1; i++) {
        size_t j = 0;
        while (j < nd2 && (dl2[j].offset != dl[i].offset || strcmp(dl2[j].what, dl[i].what)))
            j++;
        REQUIRE(j < nd2, "damage at %llu not listed by the threaded parts",
                (unsigned long long)dl[i].offset);
    }
    free(jobs[0].out.e);
    free(jobs[1].out.e);
    free(one.e);
    trc_close(r1);
    trc_close(r2);
    free(buf);
    free(full.e);
    free(in.e);
}
END_TEST

static Suite *traces_suite(void)
{
    Suite *s = suite_create("traces");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, NULL, rm_tmpdir);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, filters_and_seek);
    tcase_add_test(tc, read_progress);
    tcase_add_test(tc, determinism);
    tcase_add_test(tc, discard_leaves_nothing);
    tcase_add_test(tc, truncation);
    tcase_add_test(tc, corruption);
    tcase_add_test(tc, size_per_insn);
    tcase_add_test(tc, synth_deterministic);
    tcase_add_test(tc, chrome_export);
    tcase_add_test(tc, folded_export);
    tcase_add_test(tc, stall_owner_exports);
    tcase_add_test(tc, csv_export_and_command);
    tcase_add_test(tc, allocation_failures);
    tcase_add_test(tc, killed_recording);
    tcase_add_test(tc, garbage_records);
    tcase_add_test(tc, iter_parts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(traces_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
