/* tests/memmodel/test_hbm.c — the HBM model: unloaded latencies against the
 * JEDEC formulas, the timing checker on mixed traffic, streaming bandwidth,
 * refresh blocking, back-pressure, address mapping. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "memmodel/mem.h"
#include "tests/memmodel/tmem.h"

typedef struct got { uint64_t tag[64], t[64]; int n; } got;

static void on_done(void *u, uint64_t tag, uint64_t t)
{
    got *g = u;
    if (g->n < 64) { g->tag[g->n] = tag; g->t[g->n] = t; }
    g->n++;
}

/* One stack, 1 channel, no refresh: a clean room for latency formulas. */
void tmem_small(mem_config *c, int dramsim_structure)
{
    mem_config_default(c);
    c->hbm.stacks = 1;
    c->hbm.channels = 1;
    c->hbm.refresh = MEM_REF_NONE;
    snprintf(c->hbm.mapping, MEM_MAP_LEN, "c5 p g2 b2 r");
    c->hbm.xor_map[0] = 0;
    if (dramsim_structure) { c->ctrl.cmd_queue = 8; c->ctrl.active_buffer = 0; c->ctrl.row_hit_cap = 4; }
}

static uint64_t run_one(mem_hbm *h, got *g, uint64_t addr, uint64_t at)
{
    int n0 = g->n;
    mem_hbm_advance_to(h, at - 1);
    ck_assert_int_eq(mem_hbm_submit(h, addr, 0, 7, at, NULL), NPU_OK);
    while (g->n == n0) {
        uint64_t e = mem_hbm_next_event(h);
        ck_assert(e != UINT64_MAX);
        mem_hbm_advance_to(h, e);
    }
    return g->t[n0] - at;
}

static void latency_formulas(int dq)
{
    mem_config c;
    tmem_small(&c, dq);
    mem_hbm *h = mem_hbm_new(&c, NULL);
    ck_assert_ptr_nonnull(h);
    got g = { 0 };
    mem_hbm_set_callback(h, on_done, &g);
    const mem_hbm_cfg *t = &c.hbm;
    int rd = t->tCL + t->burst_length / 2;
    /* row in bank 0 of bank group 0: closed bank */
    uint64_t row_bytes = (uint64_t)t->columns * mem_config_atom_bytes(&c) * 2 /* pc */ * 16;
    uint64_t l_closed = run_one(h, &g, 0, 100);
    ck_assert_uint_eq(l_closed, 1 + t->tRCDRD + rd);            /* accept, ACT, tRCD, CL + BL/2 */
    uint64_t l_hit = run_one(h, &g, 64, 1000);
    ck_assert_uint_eq(l_hit, 1 + rd);
    uint64_t l_conf = run_one(h, &g, row_bytes, 2000);          /* same bank, next row */
    ck_assert_uint_eq(l_conf, 1 + t->tRP + t->tRCDRD + rd);
    mem_hbm_free(h);
}

START_TEST(t_latency_fr) { latency_formulas(0); }
END_TEST
START_TEST(t_latency_dq) { latency_formulas(1); }
END_TEST

START_TEST(t_latency_act_cycles)
{
    /* a 2-cycle ACT (Ramulator's HBM2) delays the column command by one */
    mem_config c;
    tmem_small(&c, 0);
    c.hbm.act_cycles = 2;
    mem_hbm *h = mem_hbm_new(&c, NULL);
    got g = { 0 };
    mem_hbm_set_callback(h, on_done, &g);
    ck_assert_uint_eq(run_one(h, &g, 0, 10), 1 + 1 + c.hbm.tRCDRD + c.hbm.tCL + c.hbm.burst_length / 2);
    mem_hbm_free(h);
}
END_TEST

/* Random mixed traffic through several controller setups: the independent
 * checker must find no broken rule, and every request must complete. */
static void check_clean(mem_config *c, int nreq, int write_pct, uint64_t interval)
{
    memsim_trace t;
    ck_assert_int_eq(memsim_pattern("random", (uint64_t)nreq, 0, 42, write_pct, interval, c, &t, NULL), NPU_OK);
    memsim_result r;
    npu_diag d = { 0 };
    ck_assert_int_eq(memsim_run(c, &t, 1, &r, &d), NPU_OK);
    ck_assert_msg(r.violations == 0, "violations: %s", r.first_violation);
    ck_assert_uint_gt(r.commands_checked, (uint64_t)nreq);
    ck_assert_uint_eq(r.reads + r.writes, (uint64_t)nreq);
    memsim_result_free(&r);
    npu_free(t.req);
}

START_TEST(t_checker_default)
{
    mem_config c;
    mem_config_default(&c);
    c.hbm.stacks = 1;
    snprintf(c.hbm.mapping, MEM_MAP_LEN, "c4 h3 p g2 b2 c r");
    check_clean(&c, 20000, 30, 0);
}
END_TEST

START_TEST(t_checker_variants)
{
    mem_config c;
    for (int v = 0; v < 6; v++) {
        tmem_small(&c, v & 1);
        c.hbm.refresh = v < 2 ? MEM_REF_ALL_BANK : v < 4 ? MEM_REF_PER_BANK : MEM_REF_ALL_BANK;
        c.hbm.refresh_prea = v & 1;
        c.ctrl.page_policy = v >= 4 ? MEM_PAGE_CLOSED : MEM_PAGE_OPEN;
        c.ctrl.dual_cmd = v != 5;
        if (v == 3) c.hbm.act_cycles = 2;
        check_clean(&c, 6000, 40, 3);
        check_clean(&c, 3000, 50, 0);
    }
}
END_TEST

START_TEST(t_checker_catches)
{
    /* the checker must see a hand-made violation: RD 3 tCK after ACT */
    mem_config c;
    tmem_small(&c, 0);
    mem_hbm *h = mem_hbm_new(&c, NULL);
    mem_hbm_log_commands(h, 1);
    got g = { 0 };
    mem_hbm_set_callback(h, on_done, &g);
    run_one(h, &g, 0, 10);
    uint64_t v = 0;
    npu_diag d = { 0 };
    ck_assert_int_eq(mem_hbm_check(h, &v, &d), NPU_OK);
    ck_assert_uint_eq(v, 0);
    mem_hbm_free(h);
    tmem_check_bad_log(&c);
}
END_TEST

START_TEST(t_stream_peak)
{
    /* stream reads over one HBM2E stack: without refresh the data bus is
     * kept busy (>= 97 % of peak); with it we lose about tRFC / tREFI. The
     * queue is deep enough that the in-order frontend (head-of-line blocked
     * by a full channel queue) does not limit the stream. */
    for (int ref = 0; ref < 2; ref++) {
        mem_config c;
        mem_config_default(&c);
        c.hbm.stacks = 1;
        snprintf(c.hbm.mapping, MEM_MAP_LEN, "c4 h3 p g2 b2 c r");
        c.memsim.inject_per_cycle = 64;
        c.ctrl.read_queue = 128;
        c.hbm.refresh = ref ? MEM_REF_ALL_BANK : MEM_REF_NONE;
        memsim_trace t;
        ck_assert_int_eq(memsim_pattern("stream", 200000, 0, 1, 0, 0, &c, &t, NULL), NPU_OK);
        memsim_result r;
        ck_assert_int_eq(memsim_run(&c, &t, 0, &r, NULL), NPU_OK);
        double peak = mem_config_peak_Bps(&c) / 1e9;
        ck_assert_double_eq_tol(peak, 409.6, 0.01);
        double want = 0.97 * peak * (ref ? 1.0 - (double)c.hbm.tRFC / c.hbm.tREFI : 1.0);
        ck_assert_msg(r.bandwidth_GBps >= want, "stream %.1f GB/s, want >= %.1f of %.1f", r.bandwidth_GBps, want, peak);
        ck_assert(r.bandwidth_GBps <= peak);
        memsim_result_free(&r);
        npu_free(t.req);
    }
}
END_TEST

START_TEST(t_refresh_blocks)
{
    mem_config c;
    tmem_small(&c, 0);
    c.hbm.refresh = MEM_REF_ALL_BANK;
    mem_hbm *h = mem_hbm_new(&c, NULL);
    got g = { 0 };
    mem_hbm_set_callback(h, on_done, &g);
    const mem_hbm_cfg *t = &c.hbm;
    /* arrives as the refresh falls due: waits for REFab to finish */
    uint64_t l = run_one(h, &g, 0, (uint64_t)t->tREFI);
    ck_assert_uint_ge(l, (uint64_t)t->tRFC + t->tRCDRD + t->tCL);
    /* well after: unaffected */
    uint64_t l2 = run_one(h, &g, 64, (uint64_t)t->tREFI + 3000);
    ck_assert_uint_eq(l2, 1 + t->tCL + t->burst_length / 2);
    mem_hbm_advance_to(h, 10ull * t->tREFI + 5);
    ck_assert_uint_eq(mem_hbm_chan_stats(h, 0)->refab, 10 * 2);   /* one per PC per tREFI */
    mem_hbm_free(h);
}
END_TEST

START_TEST(t_backpressure)
{
    mem_config c;
    tmem_small(&c, 0);
    mem_hbm *h = mem_hbm_new(&c, NULL);
    got g = { 0 };
    mem_hbm_set_callback(h, on_done, &g);
    int n = 0;
    while (mem_hbm_can_accept(h, (uint64_t)n * 4096 * 16, 0)) {
        ck_assert_int_eq(mem_hbm_submit(h, (uint64_t)n * 4096 * 16, 0, (uint64_t)n, 0, NULL), NPU_OK);
        n++;
    }
    ck_assert_int_eq(n, c.ctrl.read_queue);
    npu_diag d = { 0 };
    ck_assert_int_eq(mem_hbm_submit(h, 0x100000, 0, 99, 0, &d), NPU_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "queue full"));
    ck_assert(mem_hbm_can_accept(h, 0, 1));          /* the write buffer is separate */
    mem_hbm_advance_to(h, 500);
    ck_assert(mem_hbm_can_accept(h, 0, 0));          /* draining frees room */
    mem_hbm_free(h);
}
END_TEST

START_TEST(t_mapping_bits)
{
    mem_config c;
    mem_config_default(&c);
    mem_hbm *h = mem_hbm_new(&c, NULL);
    mem_addr a;
    /* default HBM2E: 32 B atoms; c4 k* h* p* s* g* b* c* r* (= c4 k2 h3 p g2 b2 c1 r), bank/BG XOR low row bits */
    mem_hbm_decode(h, 0, &a);
    ck_assert_int_eq(a.chan, 0); ck_assert_int_eq(a.col, 0);
    mem_hbm_decode(h, 1u << 5, &a);  ck_assert_int_eq(a.col, 1);
    mem_hbm_decode(h, 1u << 9, &a);  ck_assert_int_eq(a.stack, 1); ck_assert_int_eq(a.col, 0);
    mem_hbm_decode(h, 1u << 11, &a); ck_assert_int_eq(a.channel, 1); ck_assert_int_eq(a.chan, 1);
    mem_hbm_decode(h, 1u << 14, &a); ck_assert_int_eq(a.pc, 1);
    mem_hbm_decode(h, 1u << 15, &a); ck_assert_int_eq(a.bg, 1);
    mem_hbm_decode(h, 1u << 17, &a); ck_assert_int_eq(a.bank, 1);
    mem_hbm_decode(h, 1u << 19, &a); ck_assert_int_eq(a.col, 16);
    mem_hbm_decode(h, 1u << 20, &a); ck_assert_int_eq(a.row, 1); ck_assert_int_eq(a.bg, 1);   /* g0 ^= r0 */
    mem_hbm_decode(h, 3u << 20, &a); ck_assert_int_eq(a.row, 3); ck_assert_int_eq(a.bg, 3);
    mem_hbm_decode(h, (1u << 20) | (1u << 15), &a); ck_assert_int_eq(a.bg, 0);
    mem_hbm_free(h);
    /* Ramulator's MOP4CLXOR, against the bit formulas in the reference file */
    mem_config r;
    mem_config_default(&r);
    ck_assert_int_eq(memsim_load_config("configs/hbm2-ramulator-mop4clxor.json", &r, NULL), NPU_OK);
    h = mem_hbm_new(&r, NULL);
    mem_hbm_decode(h, 1u << 5, &a);  ck_assert_int_eq(a.col, 1); ck_assert_int_eq(a.pc, 1);   /* PC = a10 ^ a5 */
    mem_hbm_decode(h, 1u << 6, &a);  ck_assert_int_eq(a.chan, 1);
    mem_hbm_decode(h, 1u << 9, &a);  ck_assert_int_eq(a.col, 2); ck_assert_int_eq(a.bg, 1);   /* BG0 = a11 ^ a9 */
    mem_hbm_decode(h, 1u << 10, &a); ck_assert_int_eq(a.pc, 1); ck_assert_int_eq(a.col, 0);
    mem_hbm_decode(h, 1u << 13, &a); ck_assert_int_eq(a.bank, 1);
    mem_hbm_decode(h, 1u << 17, &a); ck_assert_int_eq(a.col, 16); ck_assert_int_eq(a.bank, 2); /* BA1 = a14 ^ a17 */
    mem_hbm_decode(h, 1u << 18, &a); ck_assert_int_eq(a.row, 1);
    mem_hbm_decode(h, (1u << 10) | (1u << 5), &a); ck_assert_int_eq(a.pc, 0);
    mem_hbm_free(h);
}
END_TEST

START_TEST(t_write_buffer)
{
    mem_config c;
    tmem_small(&c, 0);
    mem_hbm *h = mem_hbm_new(&c, NULL);
    got g = { 0 };
    mem_hbm_set_callback(h, on_done, &g);
    /* a write sits in the buffer (no drain while reads wait... none do, so it
     * drains); a read to it right after is forwarded in one cycle */
    c.ctrl.wr_idle_min = 4;
    mem_hbm_free(h);
    h = mem_hbm_new(&c, NULL);
    mem_hbm_set_callback(h, on_done, &g);
    ck_assert_int_eq(mem_hbm_submit(h, 0x1000, 1, 1, 10, NULL), NPU_OK);
    ck_assert_int_eq(mem_hbm_submit(h, 0x1000, 1, 2, 10, NULL), NPU_OK);   /* coalesced */
    ck_assert_int_eq(mem_hbm_submit(h, 0x1000, 0, 3, 10, NULL), NPU_OK);   /* forwarded */
    mem_hbm_advance_to(h, 11);
    ck_assert_uint_eq(mem_hbm_chan_stats(h, 0)->coalesced, 1);
    ck_assert_uint_eq(mem_hbm_chan_stats(h, 0)->forwarded, 1);
    int seen3 = 0;
    for (int i = 0; i < g.n; i++) if (g.tag[i] == 3) { seen3 = 1; ck_assert_uint_eq(g.t[i], 11); }
    ck_assert(seen3);
    mem_hbm_free(h);
}
END_TEST

Suite *tmem_hbm_suite(void)
{
    Suite *s = suite_create("memmodel-hbm");
    TCase *tc = tcase_create("hbm");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_latency_fr);
    tcase_add_test(tc, t_latency_dq);
    tcase_add_test(tc, t_latency_act_cycles);
    tcase_add_test(tc, t_checker_default);
    tcase_add_test(tc, t_checker_variants);
    tcase_add_test(tc, t_checker_catches);
    tcase_add_test(tc, t_stream_peak);
    tcase_add_test(tc, t_refresh_blocks);
    tcase_add_test(tc, t_backpressure);
    tcase_add_test(tc, t_mapping_bits);
    tcase_add_test(tc, t_write_buffer);
    suite_add_tcase(s, tc);
    return s;
}

/* DRAMSim3's drain rule keeps fewer than 9 writes buffered while no read
 * waits: the run must end (not spin on refresh) and report them, as the
 * reference does; FR-FCFS with wr_idle_min 1 drains them. */
START_TEST(t_writes_left_buffered)
{
    mem_config c;
    mem_config_default(&c);
    ck_assert_int_eq(memsim_load_config("configs/hbm2-dramsim3.json", &c, NULL), NPU_OK);
    const char *tr = "0x0 WRITE 0\n0x40 WRITE 0\n0x1000 READ 5\n0x80 WRITE 100\n";
    memsim_trace t;
    ck_assert_int_eq(memsim_parse_trace("w.trace", tr, strlen(tr), &t, NULL), NPU_OK);
    memsim_result r;
    ck_assert_int_eq(memsim_run(&c, &t, 1, &r, NULL), NPU_OK);
    ck_assert_uint_eq(r.writes_unissued, 3);
    ck_assert_uint_eq(r.reads, 1);
    ck_assert_uint_eq(r.dram_cycles, 5 + 1 + c.hbm.tRCDRD + c.hbm.tCL + c.hbm.burst_length / 2);
    memsim_result_free(&r);
    mem_config_default(&c);
    ck_assert_int_eq(memsim_load_config("configs/hbm2-ramulator-robaracoch.json", &c, NULL), NPU_OK);
    ck_assert_int_eq(memsim_run(&c, &t, 1, &r, NULL), NPU_OK);
    ck_assert_uint_eq(r.writes_unissued, 0);
    ck_assert_uint_eq(r.violations, 0);
    memsim_result_free(&r);
    npu_free(t.req);
}
END_TEST

/* merge_reads: a second read to a pending address takes no queue entry and
 * completes with the first (DRAMSim3's pending_rd_q) */
START_TEST(t_merge_reads)
{
    for (int merge = 0; merge < 2; merge++) {
        mem_config c;
        tmem_small(&c, 1);
        c.ctrl.merge_reads = merge;
        mem_hbm *h = mem_hbm_new(&c, NULL);
        got g = { 0 };
        mem_hbm_set_callback(h, on_done, &g);
        ck_assert_int_eq(mem_hbm_submit(h, 0x2000, 0, 1, 10, NULL), NPU_OK);
        ck_assert_int_eq(mem_hbm_submit(h, 0x2000, 0, 2, 10, NULL), NPU_OK);
        for (uint64_t e; (e = mem_hbm_next_event(h)) != UINT64_MAX;) mem_hbm_advance_to(h, e);
        ck_assert_int_eq(g.n, 2);
        const mem_chan_stats *st = mem_hbm_chan_stats(h, 0);
        ck_assert_uint_eq(st->rd, merge ? 1 : 2);
        ck_assert_uint_eq(st->merged_reads, (uint64_t)merge);
        ck_assert_uint_eq(st->reads, 2);
        if (merge) ck_assert_uint_eq(g.t[0], g.t[1]);
        mem_hbm_free(h);
    }
}
END_TEST

/* Queue occupancy is a time integral: writes the drain rule leaves in the
 * buffer count up to the cycle mem_hbm_account_to names, whatever the
 * tick schedule was (the model goes idle and stops ticking long before). */
START_TEST(t_occupancy_integral)
{
    mem_config c;
    tmem_small(&c, 1);
    c.ctrl.wr_idle_min = 9;            /* DRAMSim3: fewer stay buffered while no read waits */
    mem_hbm *h = mem_hbm_new(&c, NULL);
    ck_assert_int_eq(mem_hbm_submit(h, 0x0, 1, 1, 10, NULL), NPU_OK);
    ck_assert_int_eq(mem_hbm_submit(h, 0x4000, 1, 2, 12, NULL), NPU_OK);
    for (uint64_t e; (e = mem_hbm_next_event(h)) != UINT64_MAX;) mem_hbm_advance_to(h, e);
    mem_hbm_advance_to(h, 40);
    mem_hbm_account_to(h, 110);
    const mem_chan_stats *st = mem_hbm_chan_stats(h, 0);
    ck_assert_uint_eq(st->wr, 0);
    ck_assert_uint_eq(st->wq_occ_sum, (110 - 10) + (110 - 12));
    ck_assert_uint_eq(st->rq_occ_sum, 0);
    mem_hbm_account_to(h, 50);         /* never integrates backwards */
    ck_assert_uint_eq(st->wq_occ_sum, (110 - 10) + (110 - 12));
    mem_hbm_free(h);
}
END_TEST

/* mem_hbm_offer is can_accept + submit in one call: a full queue refuses
 * and changes nothing; and a mixed stream (write-buffer hits, merged
 * reads, back-pressure) fed through either interface gives the same
 * completions, in the same order, at the same cycles, with the same stats. */
typedef struct trail { uint64_t h, n; } trail;

static void on_trail(void *u, uint64_t tag, uint64_t t)
{
    trail *tr = u;
    tr->h = (tr->h ^ tag) * 0x100000001b3ull;
    tr->h = (tr->h ^ t) * 0x100000001b3ull;
    tr->n++;
}

static void feed(const mem_config *c, int use_offer, trail *tr, mem_chan_stats *st)
{
    mem_hbm *h = mem_hbm_new(c, NULL);
    ck_assert_ptr_nonnull(h);
    mem_hbm_set_callback(h, on_trail, tr);
    npu_rng rng = { 12345 };
    uint64_t now = 0;
    int atom = mem_config_atom_bytes(c);
    for (int i = 0; i < 3000;) {
        /* a small footprint, so that writes meet buffered writes and reads
         * meet pending reads */
        uint64_t a = (npu_rng_next(&rng) % 256) * (uint64_t)atom * 7;
        int w = npu_rng_next(&rng) % 3 == 0;
        int ok;
        if (use_offer) {
            ok = mem_hbm_offer(h, a, w, (uint64_t)i, now, NULL);
            ck_assert_int_ge(ok, 0);
        } else {
            ok = mem_hbm_can_accept(h, a, w);
            if (ok) ck_assert_int_eq(mem_hbm_submit(h, a, w, (uint64_t)i, now, NULL), NPU_OK);
        }
        if (ok) { i++; if (npu_rng_next(&rng) % 2) continue; }
        else npu_rng_next(&rng);                /* keep both runs' draws in step */
        mem_hbm_advance_to(h, now);
        now++;
    }
    for (uint64_t e; (e = mem_hbm_next_event(h)) != UINT64_MAX;) mem_hbm_advance_to(h, e);
    mem_hbm_total_stats(h, st);
    mem_hbm_free(h);
}

static void offer_same(int dq)
{
    mem_config c;
    tmem_small(&c, dq);
    c.ctrl.read_queue = 8;                   /* back-pressure often */
    c.ctrl.merge_reads = 1;
    trail a = { 14695981039346656037ull, 0 }, b = a;
    mem_chan_stats sa, sb;
    feed(&c, 0, &a, &sa);
    feed(&c, 1, &b, &sb);
    ck_assert_uint_eq(a.n, 3000);
    ck_assert_uint_eq(b.n, a.n);
    ck_assert_uint_eq(b.h, a.h);
    ck_assert_uint_eq(sb.reads, sa.reads);
    ck_assert_uint_eq(sb.writes, sa.writes);
    ck_assert_uint_eq(sb.rd, sa.rd);
    ck_assert_uint_eq(sb.act, sa.act);
    ck_assert_uint_eq(sb.lat.sum, sa.lat.sum);
    ck_assert(sa.forwarded + sa.coalesced + sa.merged_reads > 0);   /* the stream reached those paths */
}

/* skip_idle false ticks a channel every cycle it holds requests instead of
 * sleeping to its next possible command: the same stream must give the
 * same completions at the same cycles and the same statistics (the wake
 * bounds, and the FR-FCFS scan's per-bank skip, only save host time). */
static void idle_same(int dq)
{
    mem_config c;
    tmem_small(&c, dq);
    c.ctrl.read_queue = 8;
    c.ctrl.merge_reads = 1;
    trail a = { 14695981039346656037ull, 0 }, b = a;
    mem_chan_stats sa, sb;
    feed(&c, 1, &a, &sa);
    c.ctrl.skip_idle = 0;
    feed(&c, 1, &b, &sb);
    ck_assert_uint_eq(a.n, 3000);
    ck_assert_uint_eq(b.n, a.n);
    ck_assert_uint_eq(b.h, a.h);
    ck_assert(memcmp(&sa, &sb, sizeof sa) == 0);
}

START_TEST(t_idle_same_fr) { idle_same(0); }
END_TEST
START_TEST(t_idle_same_dq) { idle_same(1); }
END_TEST

/* The queues' own decode (a shift and a mask per field, XOR terms on top)
 * sends every request to the channel, pseudo-channel, bank group, bank and
 * row that mem_hbm_decode names, on mappings with a split column field and
 * XOR bank hashing: each request runs alone, and the commands it causes
 * (seen by the command observer) must all be to that place. */
typedef struct seen { int n, chan, pc, bg, bank; uint32_t row; int bad; } seen;

static void on_cmd(void *u, int chan, int pc, int cmd, int bg, int bank, uint32_t row, uint64_t t)
{
    seen *s = u;
    (void)t;
    int act = !strcmp(mem_cmd_name(cmd), "ACT");
    if (!act && strcmp(mem_cmd_name(cmd), "RD")) return;
    s->n++;
    if (chan != s->chan || pc != s->pc || bg != s->bg || bank != s->bank || (act && row != s->row)) s->bad++;
}

static void route_check(const char *cfg)
{
    mem_config c;
    mem_config_default(&c);
    if (cfg) ck_assert_int_eq(memsim_load_config(cfg, &c, NULL), NPU_OK);
    c.hbm.refresh = MEM_REF_NONE;
    mem_hbm *h = mem_hbm_new(&c, NULL);
    seen s = { 0 };
    mem_hbm_set_cmd_observer(h, on_cmd, &s);
    npu_rng rng = { 99 };
    uint64_t now = 0;
    int atom = mem_config_atom_bytes(&c);
    for (int i = 0; i < 400; i++) {
        uint64_t a = (npu_rng_next(&rng) % (1u << 26)) * (uint64_t)atom;
        mem_addr d;
        mem_hbm_decode(h, a, &d);
        /* the observer numbers bank groups and banks within the pseudo-channel */
        s.chan = d.chan; s.pc = d.pc; s.bg = d.sid * c.hbm.bankgroups + d.bg;
        s.bank = s.bg * c.hbm.banks + d.bank; s.row = d.row;
        int n0 = s.n;
        ck_assert_int_eq(mem_hbm_offer(h, a, 0, (uint64_t)i, now, NULL), 1);
        for (uint64_t e; (e = mem_hbm_next_event(h)) != UINT64_MAX;) { mem_hbm_advance_to(h, e); now = e + 1; }
        ck_assert_int_gt(s.n, n0);                          /* at least its RD */
    }
    ck_assert_int_eq(s.bad, 0);
    mem_hbm_free(h);
}

START_TEST(t_queue_decode)
{
    route_check(NULL);                                      /* default: c4 k* h* p* s* g* b* c* r*, XOR */
    route_check("configs/hbm2-ramulator-mop4clxor.json");   /* XOR terms that read the column */
    route_check("configs/hbm2-dramsim3.json");              /* contiguous, no XOR */
}
END_TEST

START_TEST(t_offer_same_fr) { offer_same(0); }
END_TEST
START_TEST(t_offer_same_dq) { offer_same(1); }
END_TEST

START_TEST(t_offer_full)
{
    mem_config c;
    tmem_small(&c, 0);
    mem_hbm *h = mem_hbm_new(&c, NULL);
    int n = 0;
    while (mem_hbm_offer(h, (uint64_t)n * 4096 * 16, 0, (uint64_t)n, 0, NULL) == 1) n++;
    ck_assert_int_eq(n, c.ctrl.read_queue);
    int pend = mem_hbm_pending(h);
    ck_assert_int_eq(mem_hbm_offer(h, 0x100000, 0, 99, 0, NULL), 0);
    ck_assert_int_eq(mem_hbm_pending(h), pend);            /* a refusal changes nothing */
    ck_assert_int_eq(mem_hbm_offer(h, 0, 1, 100, 0, NULL), 1);   /* the write buffer is separate */
    mem_hbm_free(h);
}
END_TEST

Suite *tmem_hbm2_suite(void)
{
    Suite *s = suite_create("memmodel-hbm-writes");
    TCase *tc = tcase_create("writes");
    tcase_add_test(tc, t_writes_left_buffered);
    tcase_add_test(tc, t_merge_reads);
    tcase_add_test(tc, t_occupancy_integral);
    tcase_add_test(tc, t_offer_same_fr);
    tcase_add_test(tc, t_offer_same_dq);
    tcase_add_test(tc, t_offer_full);
    tcase_add_test(tc, t_queue_decode);
    tcase_add_test(tc, t_idle_same_fr);
    tcase_add_test(tc, t_idle_same_dq);
    suite_add_tcase(s, tc);
    return s;
}
