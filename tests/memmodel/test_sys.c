/* tests/memmodel/test_sys.c — the L2 + HBM system in core cycles: hit, miss,
 * MSHR merge, eviction, write-back, back-pressure (try_submit), early
 * answers, clock conversion. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "isa/npu_util.h"
#include "memmodel/mem.h"
#include "tests/memmodel/tmem.h"

typedef struct ans { uint64_t tag[256], t[256]; int n; } ans;

static void on_ans(void *u, uint64_t tag, uint64_t t)
{
    ans *a = u;
    if (a->n < 256) { a->tag[a->n] = tag; a->t[a->n] = t; }
    a->n++;
}

static mem_sys *small_sys(mem_config *c, ans *a)
{
    tmem_small(c, 0);
    c->l2.size_bytes = 4096;
    c->l2.ways = 2;
    c->l2.slices = 1;
    c->l2.line_bytes = 512;
    c->l2.hit_latency = 10;
    c->l2.slice_bytes_per_cycle = 64;
    c->l2.mshrs = 4;
    c->l2.queue = 16;
    mem_sys *s = mem_sys_new(c, 1.8, NULL);
    ck_assert_ptr_nonnull(s);
    memset(a, 0, sizeof *a);
    mem_sys_set_callback(s, on_ans, a);
    return s;
}

static void drain(mem_sys *s)
{
    for (uint64_t e; (e = mem_sys_next_event(s)) != UINT64_MAX;) mem_sys_advance_to(s, e);
}

static uint64_t req(mem_sys *s, ans *a, uint64_t addr, uint32_t bytes, int w, uint64_t at)
{
    mem_sys_advance_to(s, at);
    int n0 = a->n;
    mem_req r = { .addr = addr, .bytes = bytes, .is_write = w, .core = 0, .cycle = at, .tag = (uint64_t)n0 + 1000 };
    ck_assert_int_eq(mem_sys_submit(s, &r), NPU_OK);
    drain(s);
    ck_assert_int_eq(a->n, n0 + 1);
    return a->t[n0] - at;
}

START_TEST(t_hit_miss)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);
    uint64_t miss = req(s, &a, 0, 512, 0, 100);
    uint64_t hit = req(s, &a, 64, 64, 0, 5000);
    ck_assert_uint_eq(hit, 10);
    ck_assert_uint_gt(miss, 10 + 20);
    mem_sys_stats st;
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.l2_total.hits, 1);
    ck_assert_uint_eq(st.l2_total.misses, 1);
    ck_assert_uint_eq(st.hbm_total.reads, 512 / 32);     /* the whole line, in atoms */
    mem_sys_free(s);
}
END_TEST

START_TEST(t_mshr_merge)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);
    mem_req r1 = { .addr = 0, .bytes = 64, .cycle = 0, .tag = 1 };
    mem_req r2 = { .addr = 128, .bytes = 64, .cycle = 0, .tag = 2 };
    ck_assert_int_eq(mem_sys_submit(s, &r1), NPU_OK);
    ck_assert_int_eq(mem_sys_submit(s, &r2), NPU_OK);
    drain(s);
    ck_assert_int_eq(a.n, 2);
    ck_assert_uint_eq(a.t[0], a.t[1]);                   /* both answered by the one fill */
    mem_sys_stats st;
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.l2_total.mshr_merges, 1);
    ck_assert_uint_eq(st.l2_total.misses, 2);
    ck_assert_uint_eq(st.hbm_total.reads, 16);
    mem_sys_free(s);
}
END_TEST

START_TEST(t_evict_writeback)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);
    /* 4 sets x 2 ways: lines 0, 4, 8 share set 0 */
    req(s, &a, 0, 64, 1, 10);                           /* write miss: fill, dirty */
    req(s, &a, 4 * 512, 64, 0, 2000);
    req(s, &a, 0, 64, 0, 4000);                         /* hit: line 0 most recent */
    req(s, &a, 8 * 512, 64, 0, 6000);                   /* evicts line 4 (LRU, clean) */
    mem_sys_stats st;
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.l2_total.evictions, 1);
    ck_assert_uint_eq(st.l2_total.writebacks, 0);
    req(s, &a, 4 * 512, 64, 0, 8000);                   /* evicts line 0: dirty */
    drain(s);
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.l2_total.evictions, 2);
    ck_assert_uint_eq(st.l2_total.writebacks, 1);
    ck_assert_uint_eq(st.hbm_total.writes, 16);
    ck_assert_uint_eq(st.l2_total.hits, 1);
    mem_sys_free(s);
}
END_TEST

START_TEST(t_full_line_write)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);
    uint64_t l = req(s, &a, 512, 512, 1, 10);
    ck_assert_uint_eq(l, 10);                           /* no fill for a whole-line write */
    mem_sys_stats st;
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.hbm_total.reads, 0);
    mem_sys_free(s);
}
END_TEST

/* l2.stall_cycles as of a cycle T: a wait still under way counts up to T
 * only, so that interval samples split it over the windows it spans. */
START_TEST(t_stall_split)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);
    /* four full-line reads at cycle 0, one slice of 64 B a cycle: each
     * holds it 8 cycles, so they start at 0, 8, 16, 24 (waits 0+8+16+24) */
    for (int i = 0; i < 4; i++) {
        mem_req r = { .addr = (uint64_t)i * 512, .bytes = 512, .cycle = 0, .tag = (uint64_t)i };
        ck_assert_int_eq(mem_sys_submit(s, &r), NPU_OK);
    }
    mem_sys_stats st;
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.l2_total.stall_cycles, 48);      /* whole, as counted at accept */
    mem_sys_advance_to(s, 9);                              /* lookups at 0 and 8 done */
    ck_assert_int_eq(mem_sys_waits_pending(s), 1);
    mem_sys_stats_at(s, 10, &st);                          /* 0 + 8 + 10 + 10 */
    ck_assert_uint_eq(st.l2_total.stall_cycles, 28);
    ck_assert_uint_eq(st.slice[0].stall_cycles, 28);
    mem_sys_stats_at(s, 16, &st);                          /* 0 + 8 + 16 + 16 */
    ck_assert_uint_eq(st.l2_total.stall_cycles, 40);
    drain(s);
    ck_assert_int_eq(mem_sys_waits_pending(s), 0);
    mem_sys_stats_at(s, 1000, &st);
    ck_assert_uint_eq(st.l2_total.stall_cycles, 48);
    mem_sys_free(s);
}
END_TEST

START_TEST(t_sys_backpressure)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);
    int n = 0;
    while (mem_sys_can_accept(s, (uint64_t)n * 512, 0)) {
        mem_req r = { .addr = (uint64_t)n * 512, .bytes = 512, .cycle = 0, .tag = (uint64_t)n };
        ck_assert_int_eq(mem_sys_submit(s, &r), NPU_OK);
        n++;
    }
    ck_assert_int_eq(n, 16);
    mem_req r = { .addr = 1 << 20, .bytes = 64, .cycle = 0, .tag = 99 };
    ck_assert_int_eq(mem_sys_submit(s, &r), NPU_EINVAL);
    mem_req bad = { .addr = 500, .bytes = 64, .cycle = 0, .tag = 98 };   /* crosses a line */
    drain(s);
    ck_assert_int_eq(mem_sys_submit(s, &bad), NPU_EINVAL);
    ck_assert_int_eq(a.n, 16);
    for (int i = 1; i < a.n; i++) ck_assert_uint_ge(a.t[i], a.t[i - 1]);   /* time order */
    mem_sys_free(s);
}
END_TEST

/* mem_sys_try_submit: taken while the slice queue has room; refused
 * (taken 0, NPU_OK) when full, changing nothing; a bad request is an error */
START_TEST(t_try_submit)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);
    int taken = 1, n = 0;
    for (;; n++) {
        mem_req r = { .addr = (uint64_t)n * 512, .bytes = 512, .cycle = 0, .tag = (uint64_t)n };
        ck_assert_int_eq(mem_sys_try_submit(s, &r, &taken), NPU_OK);
        if (!taken) break;
    }
    ck_assert_int_eq(n, 16);
    uint64_t ep = mem_sys_accept_epoch(s);
    mem_req r = { .addr = 1 << 20, .bytes = 64, .cycle = 0, .tag = 99 };
    ck_assert_int_eq(mem_sys_try_submit(s, &r, &taken), NPU_OK);
    ck_assert_int_eq(taken, 0);
    ck_assert_uint_eq(mem_sys_accept_epoch(s), ep);
    mem_req bad = { .addr = 500, .bytes = 64, .cycle = 0, .tag = 98 };   /* crosses a line */
    ck_assert_int_eq(mem_sys_try_submit(s, &bad, &taken), NPU_EINVAL);
    ck_assert_int_eq(taken, 0);
    drain(s);
    ck_assert_int_eq(a.n, 16);                  /* the refused one never entered */
    mem_sys_stats st;
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.l2_total.reads, 16);
    mem_sys_free(s);
}
END_TEST

/* Early answers: the same answers at the same cycles, only told sooner
 * (at the lookup or the fill, with a cycle after the model's own). A mix
 * of hits, misses, merges, evictions with write-backs and writes. */
static void early_run(int early, ans *a, uint64_t *before)
{
    mem_config c;
    mem_sys *s = small_sys(&c, a);
    mem_sys_set_early_answers(s, early);
    npu_rng rng = { 7 };
    int told_early = 0;
    for (int i = 0; i < 200; i++) {
        uint64_t seed = npu_rng_next(&rng);
        uint64_t at = (uint64_t)i * 37;
        mem_sys_advance_to(s, at);
        mem_req r = { .addr = ((seed >> 33) % 24) * 512 + ((seed >> 20) % 8) * 64, .bytes = 64,
                      .is_write = (int)((seed >> 40) % 3 == 0), .cycle = at, .tag = (uint64_t)i };
        int taken;
        ck_assert_int_eq(mem_sys_try_submit(s, &r, &taken), NPU_OK);
        if (!taken) { drain(s); ck_assert_int_eq(mem_sys_submit(s, &r), NPU_OK); }
        /* an answer told before the model reached its cycle */
        for (int k = 0; k < a->n && k < 256; k++)
            if (a->t[k] > at) told_early = 1;
    }
    drain(s);
    *before = (uint64_t)told_early;
    mem_sys_free(s);
}

static int ans_cmp(const void *x, const void *y)
{
    const uint64_t *p = x, *q = y;
    return p[0] != q[0] ? (p[0] < q[0] ? -1 : 1) : (p[1] < q[1] ? -1 : p[1] > q[1]);
}

START_TEST(t_early_answers)
{
    static ans a0, a1;
    uint64_t e0, e1;
    early_run(0, &a0, &e0);
    early_run(1, &a1, &e1);
    ck_assert_int_eq(a0.n, 200);
    ck_assert_int_eq(a1.n, 200);
    ck_assert_uint_eq(e1, 1);                    /* it does tell early */
    uint64_t p0[200][2], p1[200][2];
    for (int i = 0; i < 200; i++) {
        p0[i][0] = a0.tag[i]; p0[i][1] = a0.t[i];
        p1[i][0] = a1.tag[i]; p1[i][1] = a1.t[i];
    }
    qsort(p0, 200, sizeof p0[0], ans_cmp);
    qsort(p1, 200, sizeof p1[0], ans_cmp);
    ck_assert(memcmp(p0, p1, sizeof p0) == 0);   /* same (tag, cycle) pairs */
}
END_TEST

/* A slow slice serialises its lookups far into the future (past the
 * event calendar's 1024-cycle window, so those go to its heap): each hit
 * answers at its start cycle + hit latency, in submission order. */
START_TEST(t_far_events)
{
    mem_config c; ans a;
    mem_sys *s = small_sys(&c, &a);                  /* for its config */
    mem_sys_free(s);
    c.l2.slice_bytes_per_cycle = 1;                  /* 512 cycles a line */
    s = mem_sys_new(&c, 1.8, NULL);
    memset(&a, 0, sizeof a);
    mem_sys_set_callback(s, on_ans, &a);
    req(s, &a, 0, 512, 0, 100);                      /* warm again; the slice is idle after */
    uint64_t T = 100000;
    mem_sys_advance_to(s, T);
    int n0 = a.n;
    for (int k = 0; k < 16; k++) {
        ck_assert(mem_sys_can_accept(s, 0, 0));
        mem_req r = { .addr = 0, .bytes = 512, .cycle = T, .tag = (uint64_t)k };
        ck_assert_int_eq(mem_sys_submit(s, &r), NPU_OK);
        if (k == 7) {                                /* a near event between far ones */
            mem_sys_advance_to(s, T + 5);
            T += 5;
        }
    }
    drain(s);
    ck_assert_int_eq(a.n, n0 + 16);
    uint64_t t0 = 100000;
    for (int k = 0; k < 16; k++) {
        ck_assert_uint_eq(a.tag[n0 + k], (uint64_t)k);
        ck_assert_uint_eq(a.t[n0 + k], t0 + (uint64_t)k * 512 + 10);
    }
    mem_sys_free(s);
}
END_TEST

START_TEST(t_clocks)
{
    mem_config c;
    mem_config_default(&c);
    c.l2.enabled = 0;
    mem_sys *s = mem_sys_new(&c, 1.8, NULL);         /* HBM2E: 1.6 GHz DRAM clock */
    ck_assert_uint_eq(mem_sys_core_to_dram(s, 9), 8);
    ck_assert_uint_eq(mem_sys_dram_to_core(s, 8), 9);
    ck_assert_uint_eq(mem_sys_dram_to_core(s, 1), 2);  /* 1.125 rounds up */
    ck_assert_uint_eq(mem_sys_core_to_dram(s, 9000000000ull), 8000000000ull);   /* no drift */
    mem_sys_free(s);
}
END_TEST

START_TEST(t_direct)
{
    mem_config c;
    tmem_small(&c, 0);
    c.l2.enabled = 0;
    mem_sys *s = mem_sys_new(&c, 1.8, NULL);
    ans a = { 0 };
    mem_sys_set_callback(s, on_ans, &a);
    uint64_t l = req(s, &a, 0, 64, 0, 100);
    /* two 32 B atoms of one closed row, converted to core cycles (x 9/8, rounded up) */
    uint64_t dram = 1 + (uint64_t)c.hbm.tRCDRD + c.hbm.tCL + c.hbm.burst_length / 2 + c.hbm.tCCD_L;
    ck_assert_uint_ge(l, dram * 9 / 8);
    ck_assert_uint_le(l, dram * 9 / 8 + 3);
    mem_sys_free(s);
}
END_TEST

START_TEST(t_default_sys)
{
    mem_config c;
    mem_config_default(&c);
    mem_sys *s = mem_sys_new(&c, 1.8, NULL);
    ck_assert_ptr_nonnull(s);
    ans a = { 0 };
    mem_sys_set_callback(s, on_ans, &a);
    /* 24 cores stream 64 KiB each; everything completes, in time order */
    int sent = 0;
    uint64_t t = 0;
    while (sent < 24 * 128) {
        int core = sent % 24, k = sent / 24;
        uint64_t addr = ((uint64_t)core << 30) + (uint64_t)k * 512;
        if (mem_sys_can_accept(s, addr, 0)) {
            mem_req r = { .addr = addr, .bytes = 512, .core = core, .cycle = t, .tag = (uint64_t)sent };
            ck_assert_int_eq(mem_sys_submit(s, &r), NPU_OK);
            sent++;
        } else {
            mem_sys_advance_to(s, ++t);
        }
    }
    drain(s);
    mem_sys_stats st;
    mem_sys_stats_get(s, &st);
    ck_assert_uint_eq(st.l2_total.reads, 24 * 128);
    ck_assert_uint_eq(st.hbm_total.reads, 24 * 128 * 16);
    ck_assert_int_eq(st.nchan, 32);
    ck_assert_int_eq(st.nslice, 32);
    mem_sys_free(s);
}
END_TEST

Suite *tmem_sys_suite(void)
{
    Suite *s = suite_create("memmodel-sys");
    TCase *tc = tcase_create("l2");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_hit_miss);
    tcase_add_test(tc, t_mshr_merge);
    tcase_add_test(tc, t_evict_writeback);
    tcase_add_test(tc, t_full_line_write);
    tcase_add_test(tc, t_stall_split);
    tcase_add_test(tc, t_sys_backpressure);
    tcase_add_test(tc, t_try_submit);
    tcase_add_test(tc, t_early_answers);
    tcase_add_test(tc, t_far_events);
    tcase_add_test(tc, t_clocks);
    tcase_add_test(tc, t_direct);
    tcase_add_test(tc, t_default_sys);
    suite_add_tcase(s, tc);
    return s;
}

/* UB bank conflicts: the DESIGN.md default, 48 banks x 32 B blocks in 16 groups of 3 */
START_TEST(t_ub_banks)
{
    mem_config c;
    mem_config_default(&c);
    int b, g;
    mem_ub_bank(&c, 0, &b, &g);           ck_assert_int_eq(b, 0);  ck_assert_int_eq(g, 0);
    mem_ub_bank(&c, 32 * 47, &b, &g);     ck_assert_int_eq(b, 47); ck_assert_int_eq(g, 15);
    mem_ub_bank(&c, 32 * 48, &b, &g);     ck_assert_int_eq(b, 0);
    mem_ub_bank(&c, 32 * 5, &b, &g);      ck_assert_int_eq(g, 1);
    uint64_t rd[16], wr[8];
    /* one 256 B repeat, contiguous: 8 banks, no conflict */
    for (int i = 0; i < 8; i++) rd[i] = (uint64_t)i * 32;
    ck_assert_int_eq(mem_ub_conflict_cycles(&c, rd, 8, NULL, 0), 0);
    /* block stride 48: all 8 blocks in bank 0 -> 7 extra cycles */
    for (int i = 0; i < 8; i++) rd[i] = (uint64_t)i * 48 * 32;
    ck_assert_int_eq(mem_ub_conflict_cycles(&c, rd, 8, NULL, 0), 7);
    /* two sources that collide block for block: 1 extra */
    for (int i = 0; i < 8; i++) { rd[i] = (uint64_t)i * 32; rd[8 + i] = 48 * 32 + (uint64_t)i * 32; }
    ck_assert_int_eq(mem_ub_conflict_cycles(&c, rd, 16, NULL, 0), 1);
    /* sources in banks 0..7, destination in banks 24..31: no shared group */
    for (int i = 0; i < 8; i++) { rd[i] = (uint64_t)i * 32; wr[i] = (uint64_t)(24 + i) * 32; }
    ck_assert_int_eq(mem_ub_conflict_cycles(&c, rd, 8, wr, 8), 0);
    /* destination in banks 8..15: bank 8 shares group 2 with bank 7 (read) */
    for (int i = 0; i < 8; i++) wr[i] = (uint64_t)(8 + i) * 32;
    ck_assert_int_eq(mem_ub_conflict_cycles(&c, rd, 8, wr, 8), 1);
}
END_TEST

Suite *tmem_ub_suite(void)
{
    Suite *s = suite_create("memmodel-ub");
    TCase *tc = tcase_create("ub");
    tcase_add_test(tc, t_ub_banks);
    suite_add_tcase(s, tc);
    return s;
}
