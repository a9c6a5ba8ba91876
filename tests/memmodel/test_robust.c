/* tests/memmodel/test_robust.c — bad input never crashes: seeded mutations
 * of a trace and of a config, and allocation failures at every step of
 * creating and running the model. */
#include <check.h>
#include <string.h>

#include "memmodel/mem.h"
#include "tests/memmodel/tmem.h"

START_TEST(t_trace_mutations)
{
    const char *good = "0x0 READ 0\n0x40 WRITE 3\n0x1fc0 READ 10\n0xdeadbeef40 READ 11\n";
    size_t n = strlen(good);
    npu_rng rng = { 77 };
    static const char alphabet[] = "0x1fREADWRITE \n\t-#zZ9";
    char buf[256];
    for (int it = 0; it < 5000; it++) {
        memcpy(buf, good, n + 1);
        int edits = 1 + (int)(npu_rng_next(&rng) % 4);
        for (int e = 0; e < edits; e++)
            buf[npu_rng_next(&rng) % n] = alphabet[npu_rng_next(&rng) % (sizeof alphabet - 1)];
        memsim_trace t;
        npu_diag d = { 0 };
        npu_status st = memsim_parse_trace("m.trace", buf, n, &t, &d);
        if (st == NPU_OK) npu_free(t.req);
        else ck_assert_msg(strncmp(d.msg, "m.trace:", 8) == 0, "message without file:line: %s", d.msg);
    }
}
END_TEST

START_TEST(t_config_mutations)
{
    const char *good = "{\"hbm\": {\"tCL\": 20, \"mapping\": \"c4 k2 h3 p g2 b2 c r\", \"refresh\": \"per_bank\"},"
                       " \"controller\": {\"read_queue\": 16, \"dual_cmd\": false}, \"l2\": {\"ways\": 8}}";
    size_t n = strlen(good);
    npu_rng rng = { 78 };
    static const char alphabet[] = "{}[]\",:0123456789truefalsnpcghbrk ^-";
    char buf[512];
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, good, n + 1);
        int edits = 1 + (int)(npu_rng_next(&rng) % 3);
        for (int e = 0; e < edits; e++)
            buf[npu_rng_next(&rng) % n] = alphabet[npu_rng_next(&rng) % (sizeof alphabet - 1)];
        cJSON *j = cJSON_Parse(buf);
        if (!j) continue;
        mem_config c;
        mem_config_default(&c);
        npu_diag d = { 0 };
        if (mem_config_parse(j, "m.json: memory", &c, &d) != NPU_OK) {
            ck_assert_msg(strncmp(d.msg, "m.json: memory", 14) == 0, "message without the key path: %s", d.msg);
        } else {
            /* whatever parsed and validated must build and run */
            c.hbm.stacks = 1;
            c.l2.enabled = 0;
            if (mem_config_validate(&c, "m", NULL) == NPU_OK) {
                mem_hbm *h = mem_hbm_new(&c, &d);
                ck_assert_ptr_nonnull(h);
                mem_hbm_free(h);
            }
        }
        cJSON_Delete(j);
    }
}
END_TEST

START_TEST(t_alloc_failures)
{
    mem_config c;
    tmem_small(&c, 1);
    c.l2.size_bytes = 4096; c.l2.ways = 2; c.l2.slices = 1;
    memsim_trace t;
    ck_assert_int_eq(memsim_pattern("random", 300, 0, 5, 30, 2, &c, &t, NULL), NPU_OK);
    int ok_at = 0;
    for (long k = 1; k < 400 && !ok_at; k++) {
        npu_alloc_fail_after(k);
        memsim_result r;
        npu_diag d = { 0 };
        npu_status st = memsim_run(&c, &t, 1, &r, &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (st == NPU_OK && !failed) ok_at = (int)k;
        else ck_assert_msg(st != NPU_OK || failed, "k=%ld", k);
        memsim_result_free(&r);
    }
    ck_assert_int_gt(ok_at, 0);
    for (long k = 1; k < 200; k++) {
        npu_alloc_fail_after(k);
        mem_sys *s = mem_sys_new(&c, 1.8, NULL);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (s) {
            mem_req q = { .addr = 0, .bytes = 64, .cycle = 0, .tag = 1 };
            mem_sys_submit(s, &q);
            for (uint64_t e; (e = mem_sys_next_event(s)) != UINT64_MAX;) mem_sys_advance_to(s, e);
            mem_sys_free(s);
            if (!failed) break;
        }
    }
    npu_free(t.req);
}
END_TEST

Suite *tmem_robust_suite(void)
{
    Suite *s = suite_create("memmodel-robust");
    TCase *tc = tcase_create("robust");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_trace_mutations);
    tcase_add_test(tc, t_config_mutations);
    tcase_add_test(tc, t_alloc_failures);
    suite_add_tcase(s, tc);
    return s;
}
