/* t_record.c — the trace recorder (sim/record.h) against the timing engine:
 * a double-buffered MTE2/V kernel with calls, recorded and read back with
 * the traces reader, must agree with the engine's statistics event for
 * event; every allocation failure leaves either a valid trace or nothing. */
#include "tests/all/tm_harness.h"   /* config.h before isa.h: the dtype enum */
#include "isa/isa.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memmodel/mem.h"
#include "sim/record.h"
#include "traces/trace.h"

/* MTE2 loads into two UB buffers while V adds the other, with per-buffer
 * flags both ways; each iteration calls `step` (a function) once. */
static npu_sim *rec_kernel(const cfg_machine *m, int loops, int ncores)
{
    char src[2048];
    snprintf(src, sizeof src,
             "_start:\n la a1, buf\n li a2, 0\n li a3, 65536\n li64 a4, %" PRIu64 "\n li a5, 0\n"
             " li64 a6, %" PRIu64 "\n li t0, %d\n"
             " set_flag V, MTE2, 0\n set_flag V, MTE2, 1\n"
             "loop:\n"
             " wait_flag V, MTE2, 0\n mov.gm2ub a2, a1, a4, a5\n set_flag MTE2, V, 0\n"
             " wait_flag V, MTE2, 1\n mov.gm2ub a3, a1, a4, a5\n set_flag MTE2, V, 1\n"
             " wait_flag MTE2, V, 0\n vadd.f32 a2, a2, a2, a6\n set_flag V, MTE2, 0\n"
             " wait_flag MTE2, V, 1\n vadd.f32 a3, a3, a3, a6\n set_flag V, MTE2, 1\n"
             " call step\n"
             " addi t0, t0, -1\n bnez t0, loop\n"
             " wait_flag V, MTE2, 0\n wait_flag V, MTE2, 1\n halt\n"
             ".type step, @function\n"
             "step:\n addi t1, t1, 1\n ret\n"
             ".bss\n.balign 512\nbuf:\n .space 4096\n",
             (uint64_t)ISA_DMA_CFG(1, 4096), (uint64_t)ISA_VCFG(32, 1, 1, 1, 8, 8, 8), loops);
    return tmh_load(m, src, ncores);
}

static void tmp_dir(char *buf, size_t n)
{
    snprintf(buf, n, "%s/t_record.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(buf));
}

/* Files in dir (to see that nothing, not even a temp file, is left). */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

START_TEST(t_record_matches_engine)
{
    cfg_machine m;
    tmh_test_machine(&m);
    const int loops = 6, ncores = 2;
    npu_sim *s = rec_kernel(&m, loops, ncores);
    char dir[256], path[300];
    tmp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/r.npt", dir);
    sim_rec_opts o = { .level = SIM_REC_MEM, .interval = 100, .kernel = "dbuf", .seed = 7 };
    sim_rec_result r;
    npu_diag d;
    ck_assert_msg(sim_record_run(s, path, &o, &r, &d) == NPU_OK, "%s", d.msg);
    ck_assert_msg(r.run == NPU_OK, "%s", r.run_diag.msg);
    ck_assert_uint_eq(r.counter_late, 0);
    const sim_timing_stats *st = tmh_stats(s);

    trc_reader *rd = trc_open(path, &d);
    ck_assert_msg(rd != NULL, "%s", d.msg);
    const trc_meta *mt = trc_reader_meta(rd);
    ck_assert_uint_eq(mt->n_cores, ncores);
    ck_assert_str_eq(mt->kernel, "dbuf");
    ck_assert_str_eq(mt->level, "mem");
    ck_assert_uint_eq(mt->seed, 7);
    ck_assert_uint_eq(mt->counter_interval, 100);
    ck_assert(mt->config_json && strstr(mt->config_json, "\"chip\""));
    const trc_symbol *fn = trc_reader_function_at(rd, 0);
    ck_assert_msg(fn == NULL || fn->addr == 0, "pc 0 is in the first function or none");
    int have_step = 0;
    for (uint32_t i = 0; i < mt->n_symbols; i++)
        have_step |= !strcmp(mt->symbols[i].name, "step") && mt->symbols[i].is_function;
    ck_assert_msg(have_step, "the function symbol 'step' is in the trace");
    ck_assert_ptr_nonnull(trc_reader_disasm(rd, 0));

    uint64_t busy[2][ISA_NPIPES] = {{0}}, n[2][ISA_NPIPES] = {{0}}, lastc[2][SIM_REC_CTR__COUNT] = {{0}};
    uint64_t calls[2] = {0}, rets[2] = {0}, waits[2] = {0}, sets[2] = {0}, memb[2] = {0};
    /* sets by (core, src, dst, flag, seq) -> visible cycle */
    enum { MAXSET = 256 };
    trc_event setv[MAXSET];
    int nsetv = 0;
    trc_event waitv[MAXSET];
    int nwaitv = 0;
    /* INSN intervals and busy-counter samples, to check each sample */
    trc_event *ins = NULL, *smp = NULL;
    size_t nins = 0, nsmp = 0, capins = 0, capsmp = 0;
    /* GM reads (MEM events) and GM read-byte samples */
    trc_event *mr = NULL, *rs = NULL;
    size_t nmr = 0, nrs = 0, capmr = 0, caprs = 0;
    trc_iter *it = trc_iter_new(rd, NULL, &d);
    ck_assert_ptr_nonnull(it);
    trc_event e;
    uint64_t prev_t0 = 0;
    while (trc_iter_next(it, &e)) {
        ck_assert_uint_ge(e.t0, prev_t0);   /* time order */
        prev_t0 = e.t0;
        ck_assert_uint_lt(e.core, ncores);
        switch (e.kind) {
        case TRC_INSN:
            ck_assert_uint_le(e.t2, e.t0);
            ck_assert_uint_le(e.t0, e.t1);
            ck_assert_ptr_nonnull(trc_reader_disasm(rd, e.addr));
            busy[e.core][e.pipe] += e.t1 - e.t0;
            if (nins == capins) {
                capins = capins ? 2 * capins : 256;
                ins = realloc(ins, capins * sizeof *ins);
                ck_assert_ptr_nonnull(ins);
            }
            ins[nins++] = e;
            n[e.core][e.pipe] += !(e.aux & SIM_REC_INSN_DISPATCH);
            break;
        case TRC_FLAG_SET:
            sets[e.core]++;
            ck_assert_int_lt(nsetv, MAXSET);
            setv[nsetv++] = e;
            break;
        case TRC_FLAG_WAIT:
            waits[e.core]++;
            ck_assert_uint_le(e.t0, e.t1);
            ck_assert_int_lt(nwaitv, MAXSET);
            waitv[nwaitv++] = e;
            break;
        case TRC_CALL: calls[e.core]++; break;
        case TRC_RET: rets[e.core]++; break;
        case TRC_COUNTER:
            ck_assert_uint_ge(e.val, lastc[e.core][e.id]);   /* cumulative */
            lastc[e.core][e.id] = e.val;
            if (e.id == SIM_REC_CTR_GM_RD) {
                if (nrs == caprs) {
                    caprs = caprs ? 2 * caprs : 256;
                    rs = realloc(rs, caprs * sizeof *rs);
                    ck_assert_ptr_nonnull(rs);
                }
                rs[nrs++] = e;
            }
            if (e.id <= SIM_REC_CTR_FIX_BUSY) {
                if (nsmp == capsmp) {
                    capsmp = capsmp ? 2 * capsmp : 256;
                    smp = realloc(smp, capsmp * sizeof *smp);
                    ck_assert_ptr_nonnull(smp);
                }
                smp[nsmp++] = e;
            }
            break;
        case TRC_MEM:
            memb[e.core] += e.aux;
            if (!e.pipe2) {
                if (nmr == capmr) {
                    capmr = capmr ? 2 * capmr : 256;
                    mr = realloc(mr, capmr * sizeof *mr);
                    ck_assert_ptr_nonnull(mr);
                }
                mr[nmr++] = e;
            }
            break;
        default: break;
        }
    }
    ck_assert_msg(trc_iter_error(it, &d) == NPU_OK, "%s", d.msg);
    trc_iter_free(it);
    for (int c = 0; c < ncores; c++) {
        const sim_timing_core_stats *cs = &st->core[c];
        for (int p = 0; p < ISA_NPIPES; p++) {
            ck_assert_msg(busy[c][p] == cs->busy[p], "core %d pipe %s: busy %" PRIu64 " != %" PRIu64,
                          c, isa_pipe_name(p), busy[c][p], cs->busy[p]);
            ck_assert_msg(n[c][p] == cs->insns[p], "core %d pipe %s: insns %" PRIu64 " != %" PRIu64,
                          c, isa_pipe_name(p), n[c][p], cs->insns[p]);
            ck_assert_uint_eq(lastc[c][SIM_REC_CTR_S_BUSY + p], cs->busy[p]);
        }
        ck_assert_uint_eq(lastc[c][SIM_REC_CTR_GM_RD], cs->gm_rd_bytes);
        ck_assert_uint_eq(lastc[c][SIM_REC_CTR_GM_WR], cs->gm_wr_bytes);
        ck_assert_uint_eq(memb[c], cs->gm_rd_bytes + cs->gm_wr_bytes);
        ck_assert_uint_eq(sets[c], cs->flag_sets);
        ck_assert_uint_eq(waits[c], cs->flag_waits);
        ck_assert_uint_eq(calls[c], loops);
        ck_assert_uint_eq(rets[c], loops);
    }
    /* every busy sample at T is the busy time of its pipe's instructions in [0, T) */
    ck_assert_uint_gt(nsmp, 10 * ncores);
    for (size_t i = 0; i < nsmp; i++) {
        const trc_event *x = &smp[i];
        unsigned pipe = x->id - SIM_REC_CTR_S_BUSY;
        uint64_t want = 0;
        for (size_t j = 0; j < nins; j++)
            if (ins[j].core == x->core && ins[j].pipe == pipe && ins[j].t0 < x->t0)
                want += NPU_MIN(ins[j].t1, x->t0) - ins[j].t0;
        ck_assert_msg(x->val == want, "core %u %s at %" PRIu64 ": sample %" PRIu64 ", insns say %" PRIu64,
                      x->core, isa_pipe_name((int)pipe), x->t0, x->val, want);
    }
    free(ins);
    free(smp);
    /* every GM read-byte sample at T lies between the bytes of the reads
     * done by T and of those begun by T; a move's bytes are spread over its
     * duration, so samples inside a long move fall strictly between */
    size_t inside = 0;
    for (size_t i = 0; i < nrs; i++) {
        const trc_event *x = &rs[i];
        uint64_t done = 0, begun = 0;
        for (size_t j = 0; j < nmr; j++) {
            if (mr[j].core != x->core)
                continue;
            if (mr[j].t1 <= x->t0)
                done += mr[j].aux;
            if (mr[j].t0 <= x->t0)
                begun += mr[j].aux;
        }
        ck_assert_msg(done <= x->val && x->val <= begun,
                      "core %u GM read bytes at %" PRIu64 ": sample %" PRIu64 " outside [%" PRIu64
                      ", %" PRIu64 "]", x->core, x->t0, x->val, done, begun);
        inside += done < x->val && x->val < begun;
    }
    ck_assert_uint_gt(inside, 0);
    free(mr);
    free(rs);
    /* every wait names a set of its flag that became visible by its release */
    for (int i = 0; i < nwaitv; i++) {
        const trc_event *w = &waitv[i];
        int found = 0;
        for (int j = 0; j < nsetv && !found; j++) {
            const trc_event *x = &setv[j];
            found = x->core == w->core && x->pipe == w->pipe && x->pipe2 == w->pipe2 &&
                    x->id == w->id && x->val == w->val && x->t0 <= w->t1;
        }
        ck_assert_msg(found, "wait %d (core %u %u->%u #%u seq %" PRIu64 ") has no set", i, w->core,
                      w->pipe, w->pipe2, w->id, w->val);
    }
    ck_assert_uint_gt(r.events, 0);
    trc_close(rd);

    /* the same run again: byte-identical */
    char path2[300];
    snprintf(path2, sizeof path2, "%s/r2.npt", dir);
    ck_assert(sim_record_run(s, path2, &o, &r, &d) == NPU_OK);
    uint8_t *a, *b;
    size_t la, lb;
    ck_assert(npu_read_file(path, 0, 0, &a, &la, &d) == NPU_OK);
    ck_assert(npu_read_file(path2, 0, 0, &b, &lb, &d) == NPU_OK);
    ck_assert_msg(la == lb && !memcmp(a, b, la), "two recordings differ");
    npu_free(a);
    npu_free(b);
    unlink(path);
    unlink(path2);
    rmdir(dir);
    npu_sim_free(s);
}
END_TEST

/* Fail each allocation in turn (the recorder's and the run's): the call
 * returns an error and leaves no file, or returns OK with a trace that
 * opens (a run stopped by ENOMEM still closes what it recorded). */
/* With the HBM model the trace also carries the memory system's counters:
 * on the unit after the cores, named, sampled at every interval's end,
 * cumulative, and ending at the totals the engine hands a stat observer. */
static void mem_totals(void *user, const void *p)
{
    const mem_sys_stats *ms = p;
    uint64_t *t = user;
    t[0] = ms->l2_total.hits;
    t[1] = ms->l2_total.misses;
    t[2] = ms->l2_total.bytes;
    t[3] = ms->hbm_total.bytes_read;
    t[4] = ms->hbm_total.bytes_written;
}

START_TEST(t_record_memory_counters)
{
    cfg_machine m;
    tmh_test_machine(&m);
    tmh_set(&m, "timing.memory_model=hbm");
    const int ncores = 2;
    static const char *const names[5] = { "l2.hits", "l2.misses", "l2.bytes", "hbm.bytes_read",
                                          "hbm.bytes_written" };
    /* the totals, from a run observed the way npusim stat observes one */
    npu_sim *s = rec_kernel(&m, 6, ncores);
    uint64_t want[5] = {0};
    npu_diag d;
    ck_assert_int_eq(sim_run_begin(s, NPU_MODE_PERF, 0, "test", &d), NPU_OK);
    sim_timing_observer ob = { .user = want, .on_mem_stats = mem_totals };
    ck_assert_msg(sim_run_timed(s, 0, &ob, 0, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_gt(want[3], 0);
    npu_sim_free(s);

    s = rec_kernel(&m, 6, ncores);
    char dir[256], path[300];
    tmp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/m.npt", dir);
    sim_rec_opts o = { .level = SIM_REC_INSTR, .interval = 100 };
    sim_rec_result r;
    ck_assert_msg(sim_record_run(s, path, &o, &r, &d) == NPU_OK, "%s", d.msg);
    ck_assert_msg(r.run == NPU_OK, "%s", r.run_diag.msg);
    const uint64_t cycles = tmh_stats(s)->cycles;
    trc_reader *rd = trc_open(path, &d);
    ck_assert_msg(rd != NULL, "%s", d.msg);
    const trc_meta *mt = trc_reader_meta(rd);
    ck_assert_uint_eq(mt->units.count, ncores + 1);
    ck_assert_str_eq(mt->units.names[ncores], "memory (L2 + HBM)");
    int id[5];
    for (int j = 0; j < 5; j++) {
        id[j] = -1;
        for (uint32_t i = 0; i < mt->counters.count; i++)
            if (mt->counters.names[i] && !strcmp(mt->counters.names[i], names[j]))
                id[j] = (int)i;
        ck_assert_msg(id[j] >= 0, "counter %s is in the trace", names[j]);
    }
    uint64_t last[5] = {0}, last_t = 0;
    int samples = 0;
    trc_iter *it = trc_iter_new(rd, NULL, &d);
    ck_assert_ptr_nonnull(it);
    trc_event e;
    while (trc_iter_next(it, &e)) {
        if (e.kind != TRC_COUNTER || e.core != (uint32_t)ncores)
            continue;
        int j = 0;
        while (j < 5 && id[j] != (int)e.id)
            j++;
        ck_assert_int_lt(j, 5);
        ck_assert_uint_ge(e.val, last[j]);   /* cumulative */
        ck_assert_msg(e.t0 % 100 == 0 || e.t0 == cycles, "sample at %" PRIu64, e.t0);
        last[j] = e.val;
        last_t = e.t0;
        samples++;
    }
    trc_iter_free(it);
    trc_close(rd);
    ck_assert_int_gt(samples, 5 * 3);
    ck_assert_uint_eq(last_t, cycles);
    for (int j = 0; j < 5; j++)
        ck_assert_msg(last[j] == want[j], "%s: last sample %" PRIu64 ", total %" PRIu64, names[j],
                      last[j], want[j]);
    unlink(path);
    rmdir(dir);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_record_alloc_failures)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char dir[256], path[300];
    tmp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/f.npt", dir);
    sim_rec_opts o = { .level = SIM_REC_MEM, .interval = 50 };
    int errors = 0;
    long k;
    for (k = 1; k < 5000; k++) {
        npu_sim *s = rec_kernel(&m, 3, 2);
        sim_rec_result r;
        npu_diag d;
        npu_alloc_fail_after(k);
        npu_status st = sim_record_run(s, path, &o, &r, &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        npu_sim_free(s);
        if (st != NPU_OK) {
            ck_assert_msg(failed, "error without an injected failure: %s", d.msg);
            ck_assert_msg(dir_entries(dir) == 0, "allocation %ld: a failed record left a file", k);
            errors++;
        } else {
            trc_reader *rd = trc_open(path, &d);
            ck_assert_msg(rd != NULL, "allocation %ld: trace does not open: %s", k, d.msg);
            trc_close(rd);
            unlink(path);
        }
        if (!failed)
            break;
    }
    ck_assert_msg(k < 5000, "more than 5000 allocations");
    ck_assert_msg(k > 20 && errors > 0, "%ld allocations, %d errors", k, errors);
    fprintf(stderr, "record: %ld allocation points, %d ended in an error\n", k - 1, errors);
    rmdir(dir);
}
END_TEST

Suite *record_suite(void)
{
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("record");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_record_matches_engine);
    tcase_add_test(tc, t_record_memory_counters);
    tcase_add_test(tc, t_record_alloc_failures);
    suite_add_tcase(s, tc);
    return s;
}
