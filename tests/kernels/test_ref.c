/* test_ref.c — the golden-reference tool: its generator table, the seeded
 * input generator, the 2:4 metadata panels, and `npusim ref` in process
 * (files made, launch.json readable by the launch parser, option errors). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/launch.h"
#include "kernels/ref/ref.h"
#include "sim/sparse.h"

/* The generator table: names unique, every row complete. */
START_TEST(t_table)
{
    const ref_gen *g = ref_gens();
    int n = 0;
    for (; g[n].name; n++) {
        ck_assert_ptr_nonnull(g[n].fn);
        ck_assert_ptr_nonnull(g[n].opts);
        ck_assert(strlen(g[n].summary) > 10);
        ck_assert_ptr_eq(ref_gen_find(g[n].name), &g[n]);
        for (int j = 0; j < n; j++)
            ck_assert_str_ne(g[j].name, g[n].name);
    }
    ck_assert_int_ge(n, 4);
    ck_assert_ptr_nonnull(ref_gen_find("gemm"));
    ck_assert_ptr_nonnull(ref_gen_find("elementwise"));
    ck_assert_ptr_null(ref_gen_find("nosuch"));
}
END_TEST

/* ref_rand: deterministic per seed, inside the range, already rounded to
 * the dtype (storing the loaded value again gives the same bits). */
START_TEST(t_rand)
{
    npu_diag d;
    npy_tensor a, b, c;
    npu_rng r1 = {42}, r2 = {42}, r3 = {43};
    ck_assert_int_eq(ref_rand(&a, ISA_DT_F16, 37, 5, &r1, -2.0, 3.0, &d), NPU_OK);
    ck_assert_int_eq(ref_rand(&b, ISA_DT_F16, 37, 5, &r2, -2.0, 3.0, &d), NPU_OK);
    ck_assert_int_eq(ref_rand(&c, ISA_DT_F16, 37, 5, &r3, -2.0, 3.0, &d), NPU_OK);
    ck_assert_int_eq(a.ndim, 2);
    ck_assert_int_eq(a.shape[0], 37);
    ck_assert_int_eq(a.shape[1], 5);
    ck_assert_mem_eq(a.data, b.data, a.nbytes);
    ck_assert(memcmp(a.data, c.data, a.nbytes) != 0);
    for (int64_t i = 0; i < npy_numel(&a); i++) {
        double v = ref_get(&a, i);
        ck_assert(v >= -2.0 && v <= 3.0);
        uint16_t bits;
        memcpy(&bits, (uint8_t *)a.data + 2 * i, 2);
        ref_put(&a, i, v);
        ck_assert_mem_eq(&bits, (uint8_t *)a.data + 2 * i, 2);
    }
    npy_free(&a);
    npy_free(&b);
    npy_free(&c);
    /* integers: every value an integer of the closed range, both ends reached */
    npu_rng r4 = {7};
    ck_assert_int_eq(ref_rand(&a, ISA_DT_S8, 4000, -1, &r4, -128, 127, &d), NPU_OK);
    ck_assert_int_eq(a.ndim, 1);
    int lo = 0, hi = 0;
    for (int64_t i = 0; i < 4000; i++) {
        int v = ((int8_t *)a.data)[i];
        lo |= v == -128;
        hi |= v == 127;
    }
    ck_assert(lo && hi);
    npy_free(&a);
}
END_TEST

/* Metadata panels: panel >= n is the plain layout; narrower panels hold
 * each column's nibble at the documented place. */
START_TEST(t_panels)
{
    enum { K = 12, N = 40 };
    npu_diag d;
    uint16_t dense[K * N];
    npu_rng r = {5};
    for (int i = 0; i < K * N; i++)
        dense[i] = isa_fp_f64_to_f16(ref_uniform(&r, -1, 1), ISA_RM_RNE, 0);
    uint16_t vals[K / 2 * N];
    uint8_t meta[256], pm[256];
    uint64_t mb = sim_sparse_meta_bytes(K, N);
    ck_assert_int_eq(sim_sparsify_24(ISA_DT_F16, dense, K, N, vals, meta, &d), NPU_OK);
    ck_assert_uint_eq(ref_sparse_panel_bytes(K, N, 64), mb);
    ref_sparse_panels(meta, K, N, 64, pm);
    ck_assert_mem_eq(pm, meta, mb);
    /* panels of 16: 16 + 16 + 8 columns, each padded to 16 */
    uint64_t pb = ref_sparse_panel_bytes(K, N, 16);
    ck_assert_uint_eq(pb, 3 * sim_sparse_meta_bytes(K, 16));
    ref_sparse_panels(meta, K, N, 16, pm);
    for (int g = 0; g < K / 4; g++)
        for (int c = 0; c < N; c++) {
            uint64_t q = (uint64_t)g * 48 + (uint64_t)c;
            unsigned want = (meta[q / 2] >> (4 * (q % 2))) & 15u;
            uint64_t base = (uint64_t)(c / 16) * sim_sparse_meta_bytes(K, 16);
            uint64_t rq = (uint64_t)g * 16 + (uint64_t)(c % 16);
            unsigned got = (pm[base + rq / 2] >> (4 * (rq % 2))) & 15u;
            ck_assert_uint_eq(got, want);
            ck_assert_uint_lt(got & 3, got >> 2);
        }
}
END_TEST

static int run_ref(const char *const *args, int n)
{
    char *argv[32];
    for (int i = 0; i < n; i++)
        argv[i] = (char *)args[i];
    argv[n] = NULL;
    fflush(stdout);
    return ref_cmd_ref(n, argv);
}

static void kernels_dir(char *out, size_t n)
{
    const char *root = getenv("NPU_ROOT");
    snprintf(out, n, "%s/kernels", root && *root ? root : ".");
}

/* DIR/NAME.npy into *t (the test fails if it does not load). */
static void load_npy(const char *dir, const char *name, npy_tensor *t)
{
    char p[700];
    npu_diag d;
    snprintf(p, sizeof p, "%s/%s.npy", dir, name);
    ck_assert_msg(npy_load(p, t, &d) == NPU_OK, "%s", d.msg);
}

static void rm_tree(const char *dir)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* npusim ref gemm in process: every file is made and launch.json is a
 * launch the parser accepts, with the arguments in kernel order. */
START_TEST(t_cmd_gemm)
{
    char tmpl[] = "/tmp/test_ref.XXXXXX", kd[512], out[600], p[700];
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    kernels_dir(kd, sizeof kd);
    snprintf(out, sizeof out, "%s/g", tmpl);
    const char *a[] = {"ref", "gemm", "--m", "20", "--n", "36", "--k", "50", "--dtype", "bf16", "--out", "bf16",
                       "--seed", "3", "--cores", "2", "--kernels", kd, "-o", out};
    ck_assert_int_eq(run_ref(a, (int)(sizeof a / sizeof a[0])), 0);
    const char *files[] = {"A.npy", "B.npy", "C_ref.npy", "kernel.elf", "launch.json"};
    struct stat sb;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", out, files[i]);
        ck_assert_msg(stat(p, &sb) == 0 && sb.st_size > 0, "%s missing", p);
    }
    launch_desc l;
    memset(&l, 0, sizeof l);
    npu_diag d;
    snprintf(p, sizeof p, "%s/launch.json", out);
    ck_assert_msg(launch_load_file(&l, p, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(l.cores, 2);
    ck_assert_uint_eq(l.nargs, 6);
    const char *names[] = {"A", "B", "C", "m", "n", "k"};
    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(l.args[i].name, names[i]);
    ck_assert_int_eq(l.args[2].kind, LAUNCH_ARG_OUT);
    ck_assert_int_eq(l.args[2].dtype, ISA_DT_BF16);
    ck_assert_uint_eq(l.args[2].shape[0], 20);
    ck_assert_uint_eq(l.args[2].shape[1], 36);
    ck_assert_int_eq(l.args[5].ival, 50);
    ck_assert_uint_eq(l.nexpects, 1);
    ck_assert_str_eq(l.expects[0].name, "C");
    ck_assert(l.expects[0].rtol > 0 && l.expects[0].rtol < 0.01);
    launch_free(&l);
    /* the golden C is A x B in double rounded once: check one element */
    npy_tensor A, B, C;
    load_npy(out, "A", &A);
    load_npy(out, "B", &B);
    load_npy(out, "C_ref", &C);
    double s = 0;
    for (int q = 0; q < 50; q++)
        s += ref_get(&A, 7 * 50 + q) * ref_get(&B, q * 36 + 11);
    ck_assert_uint_eq(((uint16_t *)C.data)[7 * 36 + 11], isa_fp_f64_to_bf16(s, ISA_RM_RNE, 1));
    npy_free(&A);
    npy_free(&B);
    npy_free(&C);
    /* the same seed makes the same bytes */
    char out2[600];
    snprintf(out2, sizeof out2, "%s/g2", tmpl);
    a[19] = out2;
    ck_assert_int_eq(run_ref(a, (int)(sizeof a / sizeof a[0])), 0);
    for (int i = 0; i < 3; i++) {
        uint8_t *x, *y;
        size_t nx, ny;
        snprintf(p, sizeof p, "%s/%s", out, files[i]);
        ck_assert_int_eq(npu_read_file(p, 0, 0, &x, &nx, &d), NPU_OK);
        snprintf(p, sizeof p, "%s/%s", out2, files[i]);
        ck_assert_int_eq(npu_read_file(p, 0, 0, &y, &ny, &d), NPU_OK);
        ck_assert_uint_eq(nx, ny);
        ck_assert_mem_eq(x, y, nx);
        npu_free(x);
        npu_free(y);
    }
    rm_tree(tmpl);
}
END_TEST

/* The golden GEMM is computed in blocks (kernels/ref/ref_gemm.c, matmul)
 * for speed; every element must still be the plain triple loop's: the sum
 * over p in increasing order in double, rounded once. Sizes cross every
 * block edge (64 rows, 512 columns, 256 values of k, the 4 x 4 register
 * block) and leave remainders. */
START_TEST(t_gemm_blocked_is_triple_loop)
{
    char tmpl[] = "/tmp/test_ref.XXXXXX", kd[512], out[600];
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    kernels_dir(kd, sizeof kd);
    snprintf(out, sizeof out, "%s/g", tmpl);
    const char *a[] = {"ref", "gemm", "--m", "70", "--n", "530", "--k", "301", "--dtype", "f16", "--out", "f32",
                       "--seed", "9", "--kernels", kd, "-o", out};
    ck_assert_int_eq(run_ref(a, (int)(sizeof a / sizeof a[0])), 0);
    npy_tensor A, B, C;
    load_npy(out, "A", &A);
    load_npy(out, "B", &B);
    load_npy(out, "C_ref", &C);
    ck_assert_int_eq(C.dtype, ISA_DT_F32);
    long bad = 0;
    for (int i = 0; i < 70; i++)
        for (int j = 0; j < 530; j++) {
            double s = 0;
            for (int q = 0; q < 301; q++)
                s += ref_get(&A, i * 301 + q) * ref_get(&B, q * 530 + j);
            float want = (float)s, got = ((const float *)C.data)[i * 530 + j];
            if (memcmp(&want, &got, sizeof want))
                bad++;
        }
    ck_assert_int_eq(bad, 0);
    npy_free(&A);
    npy_free(&B);
    npy_free(&C);
    rm_tree(tmpl);
}
END_TEST

/* Bad command lines: usage errors exit 2, nothing is written. */
START_TEST(t_cmd_errors)
{
    char tmpl[] = "/tmp/test_ref.XXXXXX", kd[512], out[600];
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    kernels_dir(kd, sizeof kd);
    snprintf(out, sizeof out, "%s/x", tmpl);
    const char *unknown[] = {"ref", "nosuch", "-o", out};
    ck_assert_int_eq(run_ref(unknown, 4), 2);
    const char *badopt[] = {"ref", "gemm", "--bogus", "1", "-o", out};
    ck_assert_int_eq(run_ref(badopt, 6), 2);
    const char *noout[] = {"ref", "gemm", "--m", "4"};
    ck_assert_int_eq(run_ref(noout, 4), 2);
    const char *badint[] = {"ref", "gemm", "--m", "4x", "--kernels", kd, "-o", out};
    ck_assert_int_eq(run_ref(badint, 8), 2);
    const char *baddt[] = {"ref", "gemm", "--dtype", "f64", "--kernels", kd, "-o", out};
    ck_assert_int_eq(run_ref(baddt, 8), 2);
    const char *twice[] = {"ref", "gemm", "--m", "4", "--m", "5", "-o", out};
    ck_assert_int_eq(run_ref(twice, 8), 2);
    struct stat sb;
    ck_assert_int_ne(stat(out, &sb), 0);
    /* a kernel that does not assemble (tile check) fails with exit 2 */
    const char *badtile[] = {"ref", "gemm", "--bm", "24", "--kernels", kd, "-o", out};
    ck_assert_int_eq(run_ref(badtile, 8), 2);
    rm_tree(tmpl);
}
END_TEST

Suite *ref_suite(void)
{
    Suite *s = suite_create("ref");
    TCase *tc = tcase_create("ref");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_table);
    tcase_add_test(tc, t_rand);
    tcase_add_test(tc, t_panels);
    tcase_add_test(tc, t_cmd_gemm);
    tcase_add_test(tc, t_gemm_blocked_is_triple_loop);
    tcase_add_test(tc, t_cmd_errors);
    suite_add_tcase(s, tc);
    return s;
}
