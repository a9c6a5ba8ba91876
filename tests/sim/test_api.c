/* test_api.c — libnpusim: binding, outputs, compare, a vector-add kernel. */
#include "tests/sim/suites.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void mk_f32(npy_tensor *t, int ndim, const int64_t *shape)
{
    npu_diag d;
    ck_assert_int_eq(npy_alloc(t, ISA_DT_F32, ndim, shape, &d), NPU_OK);
}

START_TEST(compare_rules)
{
    int64_t shape[2] = {2, 3};
    npy_tensor a, b;
    mk_f32(&a, 2, shape);
    mk_f32(&b, 2, shape);
    float *x = a.data, *y = b.data;
    float ga[6] = {1, 2, NAN, INFINITY, 5, 6};
    float gb[6] = {1, 2.001f, NAN, INFINITY, 5, 6};
    memcpy(x, ga, sizeof ga);
    memcpy(y, gb, sizeof gb);
    npu_cmp_result r;
    npu_diag d;
    /* within rtol: NaN==NaN and inf==inf match */
    ck_assert_int_eq(npu_compare(&a, &b, 1e-3, 0, &r, &d), NPU_OK);
    ck_assert_int_eq(r.pass, 1);
    ck_assert_uint_eq(r.numel, 6);
    ck_assert(fabs(r.max_abs - 0.001) < 1e-6);
    /* tight tolerance: element [0, 1] mismatches */
    ck_assert_int_eq(npu_compare(&a, &b, 1e-6, 1e-6, &r, &d), NPU_OK);
    ck_assert_int_eq(r.pass, 0);
    ck_assert_uint_eq(r.mismatches, 1);
    ck_assert_int_eq(r.first[0], 0);
    ck_assert_int_eq(r.first[1], 1);
    /* NaN vs number mismatches; first index is multi-dimensional */
    x[4] = NAN;
    ck_assert_int_eq(npu_compare(&a, &b, 1e-3, 0, &r, &d), NPU_OK);
    ck_assert_uint_eq(r.mismatches, 1);
    ck_assert_uint_eq(r.first_flat, 4);
    ck_assert_int_eq(r.first[0], 1);
    ck_assert_int_eq(r.first[1], 1);
    char line[300];
    npu_compare_format(&r, line, sizeof line);
    ck_assert_msg(strstr(line, "FAIL: 1 of 6 elements mismatch") && strstr(line, "first at [1, 1]: got nan, want 5"),
                  "%s", line);
    /* a pass on atol at a near-zero reference: the relative error past rtol
     * is located, so it does not read as a numerical fault */
    float gc[6] = {1, 2, 3, 4, 2e-6f, 6}, gd[6] = {1, 2, 3, 4, 1e-6f, 6};
    memcpy(x, gc, sizeof gc);
    memcpy(y, gd, sizeof gd);
    ck_assert_int_eq(npu_compare(&a, &b, 1e-6, 1e-4, &r, &d), NPU_OK);
    ck_assert_int_eq(r.pass, 1);
    ck_assert(fabs(r.max_rel - 1.0) < 1e-3);
    ck_assert_int_eq(r.max_rel_at[0], 1);
    ck_assert_int_eq(r.max_rel_at[1], 1);
    npu_compare_format(&r, line, sizeof line);
    ck_assert_msg(strstr(line, "max rel err 1 at [1, 1] (got 2e-06, want 1e-06: within atol)"), "%s", line);
    /* within rtol: no location */
    ck_assert_int_eq(npu_compare(&a, &b, 2, 0, &r, &d), NPU_OK);
    npu_compare_format(&r, line, sizeof line);
    ck_assert_msg(!strstr(line, " at ["), "%s", line);
    /* shapes must agree */
    int64_t s2[2] = {3, 2};
    npy_tensor c;
    mk_f32(&c, 2, s2);
    ck_assert_int_eq(npu_compare(&a, &c, 0, 0, &r, &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "shape mismatch: dimension 0 is 2 but 3 in the expected tensor");
    npy_free(&a);
    npy_free(&b);
    npy_free(&c);
}
END_TEST

START_TEST(bind_errors)
{
    npu_sim *s = NULL;
    npu_diag d;
    ck_assert_int_eq(npu_sim_new(&s, NULL, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_run(s, NULL, &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "run: no kernel loaded");
    ck_assert_int_eq(npu_sim_bind_int(s, "M", 4, &d), NPU_EINVAL);
    uint8_t junk[64] = {0x7f, 'E', 'L', 'F'};
    ck_assert_int_ne(npu_sim_load_elf_mem(s, junk, sizeof junk, "junk.elf", &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(d.msg, "junk.elf"));
    ck_assert_int_eq(npu_sim_set_cores(s, 25, &d), NPU_EINVAL);
    ck_assert_int_eq(t_load_src(s, ".text\n.globl main\nmain:\n  halt\n", &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_int(s, "M", 4, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_float(s, "alpha", 1.5, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_int(s, "M", 5, &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "argument 'M' is bound twice (arguments 0 and 2)");
    npy_tensor t;
    ck_assert_int_eq(npu_sim_get_output(s, "M", &t, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_sim_get_output(s, "nope", &t, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_sim_set_entry(s, "nope", &d), NPU_EINVAL);
    ck_assert_int_eq(npu_sim_set_cores(s, 1, &d), NPU_OK);
    t_run_ok(s);
    /* a0 = 4, a1 = f32 bits of 1.5, both also in the parameter block */
    ck_assert_uint_eq(t_reg(s, 0, "a0"), 4);
    ck_assert_uint_eq(t_reg(s, 0, "a1"), 0x3fc00000);
    uint64_t p[2];
    ck_assert_int_eq(npu_sim_read_gm(s, SIM_GM_ALLOC_BASE, p, 16, &d), NPU_OK);
    ck_assert_uint_eq(p[0], 4);
    ck_assert_uint_eq(p[1], 0x3fc00000);
    npu_sim_free(s);
}
END_TEST

START_TEST(ninth_argument_in_param_block)
{
    /* arguments past a7 arrive only in the parameter block */
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  mfsr t0, args\n  ldg s1, 64(t0)\n"
                           "  mfsr s2, nargs\n  halt\n", 1);
    npu_diag d;
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(npu_sim_bind_int(s, NULL, 100 + i, &d), NPU_OK);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 0, "a7"), 107);
    ck_assert_uint_eq(t_reg(s, 0, "s1"), 108);
    ck_assert_uint_eq(t_reg(s, 0, "s2"), 9);
    npu_sim_free(s);
}
END_TEST

START_TEST(tensor_overrun_faults)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  sdg zero, 4096(a0)\n  halt\n", 1);
    npu_diag d;
    int64_t shape[1] = {1024};
    ck_assert_int_eq(npu_sim_bind_output(s, "C", ISA_DT_F32, 1, shape, &d), NPU_OK);
    ck_assert_int_eq(t_run(s, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "t.elf: fault on core 0 at pc 0x0 (main), cycle 0: sdg zero, 4096(a0): "
                            "GM write [0x200001000, +8) is 0 bytes past the end of tensor C "
                            "[0x200000000, +4096)");
    npu_sim_free(s);
}
END_TEST

/* C = A + B over f32[256] on 2 cores through UB (MTE2, V, MTE3). */
static const char *vadd_src =
    ".text\n.globl main\nmain:\n"
    "  mfsr t0, coreid\n"
    "  slli t0, t0, 9\n"
    "  add a0, a0, t0\n  add a1, a1, t0\n  add a2, a2, t0\n"
    "  li t1, 0\n  li t2, 512\n  li t3, 1024\n"
    "  li64 t4, 1 | (512 << 16)\n"
    "  li t5, 0\n"
    "  mov.gm2ub t1, a0, t4, t5\n"
    "  mov.gm2ub t2, a1, t4, t5\n"
    "  set_flag MTE2, V, 0\n"
    "  wait_flag MTE2, V, 0\n"
    "  li64 t6, 2 | (1 << 8) | (1 << 16) | (1 << 24) | (8 << 32) | (8 << 40) | (8 << 48)\n"
    "  vadd.f32 t3, t1, t2, t6\n"
    "  set_flag V, MTE3, 0\n"
    "  wait_flag V, MTE3, 0\n"
    "  mov.ub2gm a2, t3, t4, t5\n"
    "  halt\n";

START_TEST(vector_add_kernel)
{
    npu_sim *s = t_sim_src(vadd_src, 2);
    npu_diag d;
    int64_t shape[1] = {256};
    npy_tensor a, b, want, got;
    mk_f32(&a, 1, shape);
    mk_f32(&b, 1, shape);
    mk_f32(&want, 1, shape);
    for (int i = 0; i < 256; i++) {
        ((float *)a.data)[i] = (float)i * 0.5f;
        ((float *)b.data)[i] = 1000.0f - (float)i;
        ((float *)want.data)[i] = (float)i * 0.5f + (1000.0f - (float)i);
    }
    ck_assert_int_eq(npu_sim_bind_tensor(s, "A", &a, NPU_IN, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_tensor(s, "B", &b, NPU_IN, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_output(s, "C", ISA_DT_F32, 1, shape, &d), NPU_OK);
    npu_status st = t_run(s, &d);
    if (st == NPU_EUNSUPP && strstr(d.msg, "not implemented")) {
        /* the data-move model has not landed in this tree yet */
        fprintf(stderr, "vector_add_kernel: skipped (%s)\n", d.msg);
        npy_free(&a);
        npy_free(&b);
        npy_free(&want);
        npu_sim_free(s);
        return;
    }
    ck_assert_msg(st == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(npu_sim_nfindings(s), 0);
    ck_assert_int_eq(npu_sim_get_output(s, "C", &got, &d), NPU_OK);
    npu_cmp_result r;
    ck_assert_int_eq(npu_compare(&got, &want, 0, 0, &r, &d), NPU_OK);
    ck_assert_msg(r.pass, "mismatches %llu", (unsigned long long)r.mismatches);
    npy_free(&a);
    npy_free(&b);
    npy_free(&want);
    npy_free(&got);
    npu_sim_free(s);
}
END_TEST

/* The same kernel in perf mode: identical numbers, cycles > 0, and the same
 * cycles on a second run (determinism). */
START_TEST(vector_add_perf_mode)
{
    npu_sim *s = t_sim_src(vadd_src, 2);
    npu_diag d;
    int64_t shape[1] = {256};
    npy_tensor a, b, got;
    mk_f32(&a, 1, shape);
    mk_f32(&b, 1, shape);
    for (int i = 0; i < 256; i++) {
        ((float *)a.data)[i] = (float)i;
        ((float *)b.data)[i] = 0.25f;
    }
    ck_assert_int_eq(npu_sim_bind_tensor(s, "A", &a, NPU_IN, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_tensor(s, "B", &b, NPU_IN, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_output(s, "C", ISA_DT_F32, 1, shape, &d), NPU_OK);
    npu_run_opts o = {NPU_MODE_PERF, 0, 0};
    npu_status st = npu_sim_run(s, &o, &d);
    ck_assert_msg(st == NPU_OK, "%s", d.msg);
    uint64_t cyc = npu_sim_cycles(s);
    ck_assert_uint_gt(cyc, 0);
    ck_assert_int_eq(npu_sim_get_output(s, "C", &got, &d), NPU_OK);
    for (int i = 0; i < 256; i++)
        ck_assert_float_eq(((float *)got.data)[i], (float)i + 0.25f);
    npy_free(&got);
    ck_assert_int_eq(npu_sim_run(s, &o, &d), NPU_OK);
    ck_assert_uint_eq(npu_sim_cycles(s), cyc);
    /* func mode has no time */
    o.mode = NPU_MODE_FUNC;
    ck_assert_int_eq(npu_sim_run(s, &o, &d), NPU_OK);
    ck_assert_uint_eq(npu_sim_cycles(s), 0);
    npy_free(&a);
    npy_free(&b);
    npu_sim_free(s);
}
END_TEST

/* vadd_src on 2 cores of cfg, with A and B bound and C (shape) to come */
static npu_sim *vadd_bound(const cfg_machine *cfg, const npy_tensor *a, const npy_tensor *b, const int64_t *shape)
{
    npu_diag d;
    npu_sim *s = t_sim_src_cfg(vadd_src, 2, cfg);
    ck_assert_int_eq(npu_sim_bind_tensor(s, "A", a, NPU_IN, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_tensor(s, "B", b, NPU_IN, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_output(s, "C", ISA_DT_F32, 1, shape, &d), NPU_OK);
    return s;
}

/* npu_sim_run_counted and npu_sim_record: the counters of a timing run
 * equal a perf run's where data does not matter; with the fixed GM port the
 * memory events are not counted (NPU_EUNSUPP); a faulting kernel gives its
 * report and no counters, and its trace is written all the same; a trace
 * that cannot be written leaves nothing behind. */
START_TEST(counters_and_traces)
{
    npu_diag d;
    int64_t shape[1] = {256};
    npy_tensor a, b;
    mk_f32(&a, 1, shape);
    mk_f32(&b, 1, shape);
    cfg_machine cfg;
    cfg_default(&cfg);
    for (int fixed = 0; fixed < 2; fixed++) {
        cfg.timing.memory_model = fixed ? CFG_MEM_FIXED : CFG_MEM_HBM;
        npu_sim *s = vadd_bound(&cfg, &a, &b, shape);
        npu_counters *cp = NULL, *ct = NULL;
        ck_assert_int_eq(npu_sim_run_counted(s, NULL, &cp, &d), NPU_OK);   /* NULL: perf */
        uint64_t cyc = npu_sim_cycles(s), v = 0, w = 0;
        npu_run_opts to = {NPU_MODE_TIMING, 0, 0};
        ck_assert_int_eq(npu_sim_run_counted(s, &to, &ct, &d), NPU_OK);
        ck_assert_int_eq(npu_counters_get(cp, "chip.cycles", -1, &v, &d), NPU_OK);
        ck_assert_uint_eq(v, cyc);
        ck_assert_int_eq(npu_counters_get(ct, "chip.cycles", -1, &w, &d), NPU_OK);
        ck_assert_uint_eq(w, cyc);
        ck_assert_int_eq(npu_counters_instances(cp, "insns"), 2);
        ck_assert_int_eq(npu_counters_instances(cp, "chip.cycles"), 1);
        uint64_t i0, i1, all;
        ck_assert_int_eq(npu_counters_get(cp, "insns", 0, &i0, &d), NPU_OK);
        ck_assert_int_eq(npu_counters_get(cp, "insns", 1, &i1, &d), NPU_OK);
        ck_assert_int_eq(npu_counters_get(cp, "insns", -1, &all, &d), NPU_OK);
        ck_assert_uint_eq(i0 + i1, all);
        ck_assert_uint_eq(all, npu_sim_insns(s, -1));
        if (fixed) {
            ck_assert_int_eq(npu_counters_get(cp, "l2.hits", -1, &v, &d), NPU_EUNSUPP);
            ck_assert_str_eq(d.msg, "l2.hits was not counted: this machine has no L2 or HBM model "
                                    "(timing.memory_model is fixed)");
            ck_assert_int_eq(npu_counters_instances(cp, "l2.hits"), -1);
        } else {
            ck_assert_int_eq(npu_counters_get(cp, "l2.reads", -1, &v, &d), NPU_OK);
            ck_assert_int_eq(npu_counters_get(cp, "gm.requests", -1, &w, &d), NPU_OK);
            ck_assert_uint_gt(w, 0);
            uint64_t wr;
            ck_assert_int_eq(npu_counters_get(cp, "l2.writes", -1, &wr, &d), NPU_OK);
            ck_assert_uint_eq(v + wr, w);
        }
        npu_counters_free(cp);
        npu_counters_free(ct);
        npu_counters_free(NULL);
        /* a trace in timing mode */
        char dir[] = "/tmp/t_api_rec.XXXXXX", path[64];
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/t.npt", dir);
        npu_record_opts ro = {NPU_MODE_TIMING, 0, 100, 0, 0, 0};
        ck_assert_msg(npu_sim_record(s, path, &ro, &d) == NPU_OK, "%s", d.msg);
        ck_assert_int_eq(access(path, R_OK), 0);
        /* -A with no memory counters to split */
        ro.mem_units = 1;
        ck_assert_int_eq(npu_sim_record(s, path, &ro, &d), fixed ? NPU_EINVAL : NPU_OK);
        /* nowhere to write */
        char bad[96];
        snprintf(bad, sizeof bad, "%s/no/such/dir/t.npt", dir);
        ro.mem_units = 0;
        ck_assert_int_ne(npu_sim_record(s, bad, &ro, &d), NPU_OK);
        ck_assert_int_ne(access(bad, F_OK), 0);
        ro.mode = NPU_MODE_FUNC;
        ck_assert_int_eq(npu_sim_record(s, path, &ro, &d), NPU_EINVAL);
        unlink(path);
        rmdir(dir);
        npu_sim_free(s);
    }
    /* a fault: its report, no counters; the trace of what ran is written */
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  sdg zero, 4096(a0)\n  halt\n", 1);
    ck_assert_int_eq(npu_sim_bind_output(s, "C", ISA_DT_F32, 1, shape, &d), NPU_OK);
    npu_counters *c = (npu_counters *)&d;   /* set to NULL by the call */
    ck_assert_int_eq(npu_sim_run_counted(s, NULL, &c, &d), NPU_EFAULT);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(d.msg, "fault on core 0 at pc 0x0 (main)"), "%s", d.msg);
    char dir[] = "/tmp/t_api_rec.XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.npt", dir);
    ck_assert_int_eq(npu_sim_record(s, path, NULL, &d), NPU_EFAULT);
    ck_assert_msg(strstr(d.msg, "fault on core 0 at pc 0x0 (main)"), "%s", d.msg);
    ck_assert_int_eq(access(path, R_OK), 0);
    unlink(path);
    rmdir(dir);
    npu_sim_free(s);
    npy_free(&a);
    npy_free(&b);
}
END_TEST

/* npu_sim_run_counted_every: the windows of `npusim stat -I`. Each
 * binned event's windows add up to its total, per instance; window ends
 * step by the interval and the last is the run's end; the totals equal
 * npu_sim_run_counted's; totals-only events and bad windows are refused. */
START_TEST(counters_per_window)
{
    npu_diag d;
    int64_t shape[1] = {4096};
    npy_tensor a, b;
    mk_f32(&a, 1, shape);
    mk_f32(&b, 1, shape);
    cfg_machine cfg;
    cfg_default(&cfg);
    npu_sim *s = vadd_bound(&cfg, &a, &b, shape);
    npu_counters *c = NULL, *t = NULL;
    ck_assert_int_eq(npu_sim_run_counted(s, NULL, &t, &d), NPU_OK);
    ck_assert_uint_eq(npu_counters_windows(t), 0);
    const uint64_t iv = 100;
    ck_assert_msg(npu_sim_run_counted_every(s, NULL, iv, &c, &d) == NPU_OK, "%s", d.msg);
    uint64_t cyc = 0;
    ck_assert_int_eq(npu_counters_get(c, "chip.cycles", -1, &cyc, &d), NPU_OK);
    size_t n = npu_counters_windows(c);
    ck_assert_uint_eq(n, (cyc + iv - 1) / iv);
    ck_assert_uint_gt(n, 2);
    for (size_t k = 0; k < n; k++)
        ck_assert_uint_eq(npu_counters_window_end(c, k), k + 1 < n ? (k + 1) * iv : cyc);
    static const char *const evs[] = { "cycles", "insns", "pipe.v.busy_cycles", "pipe.mte2.busy_cycles",
                                       "pipe.mte3.busy_cycles", "l2.bytes", "hbm.bytes_read" };
    for (size_t e = 0; e < sizeof evs / sizeof evs[0]; e++) {
        int ni = npu_counters_instances(c, evs[e]);
        ck_assert_int_gt(ni, 0);
        for (int i = -1; i < ni; i++) {
            uint64_t sum = 0, v, tot, tot2;
            for (size_t k = 0; k < n; k++) {
                ck_assert_msg(npu_counters_get_window(c, k, evs[e], i, &v, &d) == NPU_OK, "%s", d.msg);
                sum += v;
            }
            ck_assert_int_eq(npu_counters_get(c, evs[e], i, &tot, &d), NPU_OK);
            ck_assert_int_eq(npu_counters_get(t, evs[e], i, &tot2, &d), NPU_OK);
            ck_assert_msg(sum == tot && tot == tot2, "%s[%d]: windows %llu, total %llu, run_counted %llu", evs[e],
                          i, (unsigned long long)sum, (unsigned long long)tot, (unsigned long long)tot2);
        }
    }
    uint64_t v;
    ck_assert_int_eq(npu_counters_get_window(c, 0, "pipe.s.busy_cycles", -1, &v, &d), NPU_EUNSUPP);
    ck_assert_int_eq(npu_counters_get_window(c, n, "insns", -1, &v, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_counters_get_window(c, 0, "nope", -1, &v, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_counters_get_window(c, 0, "insns", 2, &v, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_counters_get_window(t, 0, "insns", -1, &v, &d), NPU_EINVAL);   /* no windows */
    ck_assert_int_eq(npu_counters_get_window(NULL, 0, "insns", -1, &v, &d), NPU_EINVAL);
    ck_assert_uint_eq(npu_counters_windows(NULL), 0);
    ck_assert_uint_eq(npu_counters_window_end(c, n), 0);
    npu_counters_free(c);
    npu_counters_free(t);
    /* a window longer than the run: one, the whole run */
    ck_assert_int_eq(npu_sim_run_counted_every(s, NULL, 1u << 30, &c, &d), NPU_OK);
    ck_assert_uint_eq(npu_counters_windows(c), 1);
    ck_assert_uint_eq(npu_counters_window_end(c, 0), cyc);
    ck_assert_int_eq(npu_counters_get_window(c, 0, "insns", -1, &v, &d), NPU_OK);
    ck_assert_uint_eq(v, npu_sim_insns(s, -1));
    npu_counters_free(c);
    npu_sim_free(s);
    npy_free(&a);
    npy_free(&b);
}
END_TEST

/* npu_sim_run_checked: a fault is a finding (NPU_OK, not run to its end);
 * the result outlives the simulator; bad tool bits are refused. */
START_TEST(checked_runs)
{
    npu_diag d;
    int64_t shape[1] = {1024};
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  sdg zero, 4096(a0)\n  halt\n", 1);
    ck_assert_int_eq(npu_sim_bind_output(s, "C", ISA_DT_F32, 1, shape, &d), NPU_OK);
    npu_check_opts o = {0x100, NPU_MODE_FUNC, 0, 0, NULL, NULL};
    npu_check_result *r = (npu_check_result *)&d, *r2 = NULL;
    ck_assert_int_eq(npu_sim_run_checked(s, &o, &r, &d), NPU_EINVAL);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(d.msg, "check: tools 0x100: only NPU_CHECK_MEM, _RACE, _INIT and _SYNC (0xf)");
    ck_assert_int_eq(npu_sim_run_checked(s, NULL, &r, &d), NPU_OK);
    npu_sim_free(s);
    ck_assert_int_eq(npu_check_ran_to_end(r), 0);
    ck_assert_uint_ge(npu_check_nfindings(r), 1);
    ck_assert_str_eq(npu_check_tool(r, 0), "memcheck");
    ck_assert_msg(strstr(npu_check_header(r, 0), "memcheck: out-of-bounds access: core 0 S pc 0x0 (main)"), "%s",
                  npu_check_header(r, 0));
    ck_assert_msg(strstr(npu_check_details(r, 0), "past the end of tensor C"), "%s", npu_check_details(r, 0));
    ck_assert_msg(strstr(npu_check_report(r), "ERROR SUMMARY"), "%s", npu_check_report(r));
    ck_assert_ptr_null(npu_check_header(r, 99));
    /* NULLs are refused, not followed */
    uint64_t v;
    ck_assert_int_eq(npu_counters_get(NULL, "insns", -1, &v, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_counters_instances(NULL, "insns"), -1);
    ck_assert_int_eq(npu_sim_run_checked(NULL, NULL, &r2, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_sim_run_counted(NULL, NULL, NULL, &d), NPU_EINVAL);
    ck_assert_int_eq(npu_sim_record(NULL, "x.npt", NULL, &d), NPU_EINVAL);
    ck_assert_uint_eq(npu_check_dropped(r), 0);
    npu_check_free(r);
    npu_check_free(NULL);
}
END_TEST

/* Progress reports (npu_sim_set_progress): called during a run that lasts
 * longer than the period, with instructions and cycles that only grow,
 * never in a run shorter than the period; and the run's results do not
 * depend on it. */
typedef struct {
    int calls;
    npu_progress last;
    int monotone;
} prog_seen;

static void prog_cb(void *user, const npu_progress *p)
{
    prog_seen *ps = user;
    if (ps->calls && (p->insns < ps->last.insns || p->cycles < ps->last.cycles ||
                      p->host_seconds < ps->last.host_seconds || p->cores_done < ps->last.cores_done))
        ps->monotone = 0;
    ps->last = *p;
    ps->calls++;
}

static const char *spin_src = ".text\n.globl main\nmain:\n  li t1, 0\n  li t2, ITERS\n"
                              "l:\n  addi t1, t1, 1\n  blt t1, t2, l\n  halt\n";

static void prog_run(npu_mode mode, long iters, unsigned period_ms, prog_seen *ps, uint64_t *insns,
                     uint64_t *cycles)
{
    char src[256];
    snprintf(src, sizeof src, "%s", spin_src);
    char *at = strstr(src, "ITERS");
    char num[24];
    snprintf(num, sizeof num, "%ld", iters);
    memmove(at + strlen(num), at + 5, strlen(at + 5) + 1);
    memcpy(at, num, strlen(num));
    npu_sim *s = t_sim_src(src, 2);
    npu_diag d;
    memset(ps, 0, sizeof *ps);
    ps->monotone = 1;
    if (period_ms)
        npu_sim_set_progress(s, prog_cb, ps, period_ms);
    npu_run_opts o = {mode, 0, 0};
    npu_status st = npu_sim_run(s, &o, &d);
    ck_assert_msg(st == NPU_OK, "%s", d.msg);
    *insns = npu_sim_insns(s, -1);
    *cycles = npu_sim_cycles(s);
    npu_sim_free(s);
}

START_TEST(progress_reports)
{
    /* func: 2 cores x 2 x 3M instructions (chunks of 1M between polls) */
    prog_seen on, off;
    uint64_t i_on, c_on, i_off, c_off;
    prog_run(NPU_MODE_FUNC, 3000000, 1, &on, &i_on, &c_on);
    prog_run(NPU_MODE_FUNC, 3000000, 0, &off, &i_off, &c_off);
    ck_assert_uint_eq(i_on, i_off);
    ck_assert_uint_eq(i_on, 2 * (3 + 2 * 3000000ull));
    ck_assert_int_eq(off.calls, 0);
    ck_assert_int_gt(on.calls, 0);
    ck_assert(on.monotone);
    ck_assert_int_eq(on.last.mode, NPU_MODE_FUNC);
    ck_assert_int_eq(on.last.ncores, 2);
    ck_assert_uint_le(on.last.insns, i_on);
    ck_assert_uint_gt(on.last.insns, 0);
    ck_assert_uint_eq(on.last.cycles, 0);
    ck_assert(on.last.host_seconds >= 0.001);
    /* perf: the cycle reached grows too; the same cycles with and without */
    prog_run(NPU_MODE_PERF, 200000, 1, &on, &i_on, &c_on);
    prog_run(NPU_MODE_PERF, 200000, 0, &off, &i_off, &c_off);
    ck_assert_uint_eq(i_on, i_off);
    ck_assert_uint_eq(c_on, c_off);
    ck_assert_int_gt(on.calls, 0);
    ck_assert(on.monotone);
    ck_assert_int_eq(on.last.mode, NPU_MODE_PERF);
    ck_assert_uint_gt(on.last.cycles, 0);
    ck_assert_uint_le(on.last.cycles, c_on);
    /* a run shorter than the period reports nothing */
    prog_run(NPU_MODE_PERF, 10, 60000, &on, &i_on, &c_on);
    ck_assert_int_eq(on.calls, 0);
}
END_TEST

START_TEST(alloc_failures_are_clean)
{
    /* every allocation of create/load/bind/run may fail: an error, never a crash */
    for (long n = 1; n < 60; n++) {
        npu_sim *s = NULL;
        npu_diag d;
        npu_alloc_fail_after(n);
        npu_status st = npu_sim_new(&s, NULL, &d);
        if (!st)
            st = t_load_src(s, ".text\n.globl main\nmain:\n  sd zero, 0(zero)\n  halt\n", &d);
        if (!st)
            st = npu_sim_set_cores(s, 2, &d);
        if (!st)
            st = npu_sim_bind_int(s, "M", 3, &d);
        if (!st)
            st = npu_sim_run(s, NULL, &d);
        npu_alloc_fail_after(0);
        npu_sim_free(s);
    }
}
END_TEST

Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("api");
    tcase_add_test(tc, compare_rules);
    tcase_add_test(tc, bind_errors);
    tcase_add_test(tc, ninth_argument_in_param_block);
    tcase_add_test(tc, tensor_overrun_faults);
    tcase_add_test(tc, vector_add_kernel);
    tcase_add_test(tc, vector_add_perf_mode);
    tcase_add_test(tc, counters_and_traces);
    tcase_add_test(tc, counters_per_window);
    tcase_add_test(tc, checked_runs);
    tcase_add_test(tc, progress_reports);
    tcase_add_test(tc, alloc_failures_are_clean);
    suite_add_tcase(s, tc);
    return s;
}
