/* main.c — tests/reliab: allocation-failure injection over the whole
 * assemble -> load -> bind -> run (func, perf) -> read outputs -> save path
 * of a small kernel (docs/reliability.md).
 *
 * For every N, the N-th allocation from the start of the path fails
 * (npu_alloc_fail_after). The path must then stop with a clean error (a
 * status, a message; ENOMEM, or the status of the step that could not go
 * on, which names what ran out), leave no output file and no temporary
 * behind, and leak nothing: under ASan (build-asan) LeakSanitizer is asked
 * after every N, so a leak is reported at the N that caused it. When no
 * failure was injected the path must give the right answer; N then stops.
 *
 * The suite runs in CK_NOFORK mode so that the leak check sees the same
 * process the allocations were made in. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/asm.h"
#include "frontend/config.h"
#include "frontend/elf.h"
#include "frontend/npy.h"
#include "sim/npusim.h"
#include "traces/trace.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#ifdef HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

/* C[i] = A[i] * M + B, with M from .rodata and a .data word the kernel
 * updates (so the data segments are on the path too); both scalar GM and
 * vector (UB) traffic: the last loop copies C through UB with DMA. */
static const char kernel_src[] =
    "    .rodata\n"
    "mul_k: .word 3\n"
    "    .data\n"
    "count: .word 0\n"
    "    .text\n"
    "    .globl main\n"
    "# a0 = A (int32[N]), a1 = B, a2 = C (int32[N]), a3 = N\n"
    "main:\n"
    "    mfsr t0, coreid\n"
    "    mfsr t1, corenum\n"
    "    la t6, mul_k\n"
    "    lwg t6, 0(t6)\n"
    "loop:\n"
    "    bge t0, a3, done\n"
    "    slli t2, t0, 2\n"
    "    add t3, a0, t2\n"
    "    lwg t4, 0(t3)\n"
    "    mul t4, t4, t6\n"
    "    add t4, t4, a1\n"
    "    add t5, a2, t2\n"
    "    swg t4, 0(t5)\n"
    "    add t0, t0, t1\n"
    "    j loop\n"
    "done:\n"
    "    halt\n";

static const char small_cfg[] =
    "{ \"version\": 1, \"name\": \"small-2core\", \"chip\": { \"cores\": 2 },\n"
    "  \"timing\": { \"max_cycles\": 100000000 } }\n";

#define N_ELEMS 16

typedef struct path_result {
    npu_status st;
    const char *step;   /* the step that failed */
    npu_diag d;
} path_result;

/* The whole path once; out is written with npy_save as the last step. */
static path_result run_path(const char *out_path, npy_tensor *got)
{
    path_result r = { NPU_OK, "", { 0 } };
    npu_diag *d = &r.d;
    asm_output o;
    memset(&o, 0, sizeof o);
    npu_buf elf = { 0 };
    npu_sim *s = NULL;
    npy_tensor a = { 0 };
    memset(got, 0, sizeof *got);
    cfg_machine m;

#define STEP(name, call)                 \
    do {                                 \
        r.step = name;                   \
        if ((r.st = (call)) != NPU_OK)   \
            goto out;                    \
    } while (0)
    STEP("config", cfg_load_json_text(&m, small_cfg, strlen(small_cfg), "small.json", d));
    STEP("assemble", asm_assemble_mem(kernel_src, strlen(kernel_src), "k.s", NULL, &o, d));
    STEP("elf_write", elf_write_mem(&o, &elf, d));
    STEP("sim_new", npu_sim_new(&s, &m, d));
    STEP("load", npu_sim_load_elf_mem(s, elf.data, elf.len, "k.elf", d));
    int64_t shape[1] = { N_ELEMS };
    STEP("npy_alloc", npy_alloc(&a, ISA_DT_S32, 1, shape, d));
    for (int i = 0; i < N_ELEMS; i++)
        ((int32_t *)a.data)[i] = i - 5;
    STEP("bind A", npu_sim_bind_tensor(s, "A", &a, NPU_IN, d));
    STEP("bind B", npu_sim_bind_int(s, "B", 7, d));
    STEP("bind C", npu_sim_bind_output(s, "C", ISA_DT_S32, 1, shape, d));
    STEP("bind N", npu_sim_bind_int(s, "N", N_ELEMS, d));
    npu_run_opts fo = { .mode = NPU_MODE_FUNC };
    STEP("run func", npu_sim_run(s, &fo, d));
    STEP("output func", npu_sim_get_output(s, "C", got, d));
    npy_free(got);
    npu_run_opts po = { .mode = NPU_MODE_PERF };
    STEP("run perf", npu_sim_run(s, &po, d));
    STEP("output perf", npu_sim_get_output(s, "C", got, d));
    STEP("save", npy_save(out_path, got, d));
#undef STEP
out:
    if (r.st != NPU_OK)
        npy_free(got);
    npy_free(&a);
    npu_sim_free(s);
    npu_buf_free(&elf);
    asm_output_free(&o);
    return r;
}

/* Names in dir other than "." and ".." (0 = empty). */
static int dir_entries(const char *dir, char *first, size_t n)
{
    DIR *dd = opendir(dir);
    int count = 0;
    struct dirent *e;
    while (dd && (e = readdir(dd))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (!count)
            snprintf(first, n, "%s", e->d_name);
        count++;
    }
    if (dd)
        closedir(dd);
    return count;
}

static void check_answer(const npy_tensor *t)
{
    ck_assert_int_eq(t->dtype, ISA_DT_S32);
    ck_assert_int_eq(t->ndim, 1);
    ck_assert_int_eq(t->shape[0], N_ELEMS);
    for (int i = 0; i < N_ELEMS; i++)
        ck_assert_int_eq(((const int32_t *)t->data)[i], (i - 5) * 3 + 7);
}

START_TEST(every_allocation_fails_once)
{
    char dir[] = "/tmp/npu-reliab-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char out[256];
    snprintf(out, sizeof out, "%s/c.npy", dir);

    /* the injection is per thread: perf mode's data worker (sim/defer.c)
     * would take the data pass's allocations out of its count, so the path
     * runs on one thread, where every allocation is seen */
    setenv("NPUSIM_THREADS", "1", 1);
    /* the path works without injection, and says how many allocations it makes */
    npu_alloc_fail_after(0);
    npy_tensor got;
    path_result r = run_path(out, &got);
    ck_assert_msg(r.st == NPU_OK, "clean path failed at %s: %s", r.step, r.d.msg);
    check_answer(&got);
    npy_free(&got);
    long total = npu_alloc_fail_after(0);
    ck_assert_int_gt(total, 10);
    unlink(out);

    /* RELIAB_N=K runs only N=K (to debug one failure, e.g. under gdb) */
    long only = getenv("RELIAB_N") ? atol(getenv("RELIAB_N")) : 0;
    long n, failures = 0;
    for (n = only ? only : 1; n <= total + 10; n++) {
        npu_alloc_fail_after(n);
        r = run_path(out, &got);
        int injected = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (!injected) {
            /* past the last allocation: the full answer, written */
            ck_assert_msg(r.st == NPU_OK, "N=%ld: no injection but %s failed: %s", n, r.step, r.d.msg);
            check_answer(&got);
            npy_free(&got);
            if (only)
                break;
            struct stat sb;
            ck_assert_int_eq(stat(out, &sb), 0);
            break;
        }
        failures++;
        /* an allocation failure inside the memory model must be reported
         * as out of memory, never mistaken for a deadlock or a watchdog */
        ck_assert_msg(r.st != NPU_EDEADLOCK && r.st != NPU_ETIMEOUT,
                      "N=%ld: %s: injected allocation failure reported as %s: %s", n, r.step,
                      npu_status_name(r.st), r.d.msg);
        /* A failed allocation may be one the library recovers from (a
         * cache, an optional table): then the answer must still be right. */
        if (r.st == NPU_OK) {
            check_answer(&got);
            npy_free(&got);
            unlink(out);
        } else {
            ck_assert_msg(r.d.msg[0] != '\0', "N=%ld: %s failed (%s) with no message", n, r.step,
                          npu_status_name(r.st));
            ck_assert_msg(strlen(r.d.msg) < sizeof r.d.msg - 1, "N=%ld: message not terminated", n);
            /* out of memory is reported as such, or as the failure of the
             * step it stopped (e.g. a fault report), never as success */
            ck_assert_msg(r.st == NPU_ENOMEM || strstr(r.d.msg, "memory") != NULL ||
                          r.st == NPU_EFAULT || r.st == NPU_EINVAL || r.st == NPU_EIO ||
                          r.st == NPU_EFORMAT,
                          "N=%ld: %s: unexpected status %s: %s", n, r.step, npu_status_name(r.st), r.d.msg);
        }
        /* never a half-written output or a temporary left behind */
        char first[256] = "";
        int left = dir_entries(dir, first, sizeof first);
        ck_assert_msg(left == 0 || (r.st == NPU_OK && left == 1),
                      "N=%ld (%s failed: %s): %d files left in the output dir, first %s", n, r.step,
                      r.d.msg, left, first);
#ifdef HAVE_LSAN
        ck_assert_msg(__lsan_do_recoverable_leak_check() == 0,
                      "N=%ld: leak after a failure in %s (%s); see the LeakSanitizer report above",
                      n, r.step, r.d.msg);
#endif
    }
    ck_assert_msg(n <= total + 10, "the path kept allocating past %ld", total + 10);
    if (!only)
        ck_assert_int_ge(failures, total - 2);
    unlink(out);
    rmdir(dir);
}
END_TEST

/* ENOMEM is reported with a message naming what ran out, at each step. */
START_TEST(enomem_is_named)
{
    npu_alloc_fail_after(0);
    npu_diag d = { 0 };
    asm_output o;
    memset(&o, 0, sizeof o);
    npu_alloc_fail_after(1);
    npu_status st = asm_assemble_mem(kernel_src, strlen(kernel_src), "k.s", NULL, &o, &d);
    npu_alloc_fail_after(0);
    ck_assert_int_eq(st, NPU_ENOMEM);
    ck_assert_ptr_nonnull(strstr(d.msg, "memory"));
    asm_output_free(&o);
    npu_sim *s = NULL;
    npu_alloc_fail_after(1);
    st = npu_sim_new(&s, NULL, &d);
    npu_alloc_fail_after(0);
    ck_assert_int_eq(st, NPU_ENOMEM);
    ck_assert_ptr_null(s);
}
END_TEST

/* ---- fuzz regressions ------------------------------------------------------
 * Every finding of `make fuzz` is kept as tests/malformed/FORMAT/fuzz-*; the
 * CLI runs them in t_malformed.sh, and here they go through the same
 * library calls as the fuzz target that found them, so the ASan+UBSan
 * build re-checks the exact path (e.g. npy_numel, which the CLI may not
 * reach for that file). */
static void replay_npy(const uint8_t *b, size_t n)
{
    npu_diag d = { 0 };
    npy_tensor t;
    if (npy_load_mem(b, n, "fuzz.npy", &t, &d) != NPU_OK)
        return;
    ck_assert_int_ge(npy_numel(&t), 0);
    npu_buf e = { 0 };
    if (npy_encode(&t, NPY_DESCR_MLDTYPES, &e, &d) == NPU_OK) {
        npy_tensor u;
        ck_assert_int_eq(npy_load_mem(e.data, e.len, "again.npy", &u, &d), NPU_OK);
        ck_assert_uint_eq(u.nbytes, t.nbytes);
        npy_free(&u);
    }
    npu_buf_free(&e);
    npy_free(&t);
}

static void replay_trace(const uint8_t *b, size_t n)
{
    npu_diag d = { 0 };
    trc_reader *r = trc_open_mem(b, n, &d);
    if (!r)
        return;
    trc_iter *it = trc_iter_new(r, NULL, &d);
    trc_event e;
    while (it && trc_iter_next(it, &e))
        ;
    trc_iter_free(it);
    trc_reader_verify(r, &d);
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        trc_export_opts o = { .filter = TRC_FILTER_ALL };
        trc_export_chrome(r, null, &o, &d);
        trc_export_folded(r, null, 0, &d);
        trc_export_csv(r, null, &o, &d);
        fclose(null);
    }
    trc_close(r);
}

static void replay_elf(const uint8_t *b, size_t n)
{
    npu_diag d = { 0 };
    elf_image img = { 0 };
    elf_load_mem(b, n, "fuzz.elf", &img, &d);
    elf_free(&img);
}

static void replay_asm(const uint8_t *b, size_t n)
{
    npu_diag d = { 0 };
    asm_output o;
    memset(&o, 0, sizeof o);
    asm_assemble_mem((const char *)b, n, "fuzz.s", NULL, &o, &d);
    asm_output_free(&o);
}

static void replay_json(const uint8_t *b, size_t n)
{
    npu_diag d = { 0 };
    cfg_machine m;
    cfg_load_json_text(&m, (const char *)b, n, "fuzz.json", &d);
}

START_TEST(fuzz_regressions)
{
    static const struct { const char *dir; void (*fn)(const uint8_t *, size_t); } fmts[] = {
        { "npy", replay_npy }, { "trace", replay_trace }, { "elf", replay_elf },
        { "asm", replay_asm }, { "config", replay_json }, { "launch", replay_json },
    };
    const char *root = getenv("NPU_ROOT") ? getenv("NPU_ROOT") : ".";
    int replayed = 0;
    for (size_t f = 0; f < NPU_ARRAY_LEN(fmts); f++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/tests/malformed/%s", root, fmts[f].dir);
        DIR *dd = opendir(dir);
        struct dirent *e;
        while (dd && (e = readdir(dd))) {
            if (strncmp(e->d_name, "fuzz-", 5))
                continue;
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            npu_diag d = { 0 };
            uint8_t *buf;
            size_t len;
            ck_assert_msg(npu_read_file(path, 0, 0, &buf, &len, &d) == NPU_OK, "%s", d.msg);
            fmts[f].fn(buf, len);
            npu_free(buf);
            replayed++;
        }
        if (dd)
            closedir(dd);
    }
    ck_assert_int_ge(replayed, 2);   /* the committed regressions were found */
}
END_TEST

int main(void)
{
    Suite *su = suite_create("reliab");
    TCase *tc = tcase_create("alloc_failures");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_allocation_fails_once);
    tcase_add_test(tc, enomem_is_named);
    tcase_add_test(tc, fuzz_regressions);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
