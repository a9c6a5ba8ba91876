/* tests/check — the checker (sim/check.h) through its C API: each tool on
 * small kernels assembled in memory, the happens-before rules one by one
 * (dispatch order, flags with count pairing, a wait dispatched before its
 * set, pipe_barrier(ALL), sync_all), grouping, determinism, func and perf
 * modes, the reports (JSON parsed back with cJSON, JUnit), and bad input.
 * The corpus of broken kernels is tests/e2e/t_check_corpus.sh. */
#include "sim/check.h"

#include <check.h>
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/asm.h"
#include "frontend/elf.h"
#include "frontend/npy.h"

static npu_sim *mk(const char *body, int cores)
{
    static const char *const inc[] = {"kernels/include"};
    asm_opts ao = {inc, 1, NULL, 0, 0};
    char src[8192];
    snprintf(src, sizeof src,
             "    .include \"npu.inc\"\n    .text\n    .globl main\nmain:\n%s"
             "    .data\n    .align 64\nsrc: .zero 1024\n", body);
    npu_diag d;
    asm_output o;
    memset(&o, 0, sizeof o);
    npu_status st = asm_assemble_mem(src, strlen(src), "t.s", &ao, &o, &d);
    ck_assert_msg(st == NPU_OK, "asm: %s %s", d.msg, o.nmsgs ? o.msgs[0].msg : "");
    npu_buf b = {0};
    ck_assert_int_eq(elf_write_mem(&o, &b, &d), NPU_OK);
    asm_output_free(&o);
    npu_sim *s = NULL;
    ck_assert_int_eq(npu_sim_new(&s, NULL, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_load_elf_mem(s, b.data, b.len, "t.elf", &d), NPU_OK);
    npu_buf_free(&b);
    ck_assert_int_eq(npu_sim_set_cores(s, cores, &d), NPU_OK);
    int64_t shape[1] = {512};
    ck_assert_int_eq(npu_sim_bind_output(s, "Y", ISA_DT_F16, 1, shape, &d), NPU_OK);
    return s;
}

/* Run under all tools in mode; returns the checker (caller frees both). */
static sim_chk *run(npu_sim *s, npu_mode mode, unsigned tools, int *ran_ok)
{
    npu_diag d;
    sim_chk *c = NULL;
    ck_assert_int_eq(sim_chk_new(&c, s, tools, &d), NPU_OK);
    npu_run_opts ro = {mode, 0, 0};
    int ok = 0;
    ck_assert_int_eq(sim_chk_run(c, &ro, &ok, &d), NPU_OK);
    if (ran_ok)
        *ran_ok = ok;
    return c;
}

static size_t count_kind(const sim_chk *c, sim_chk_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < sim_chk_nfindings(c); i++)
        n += sim_chk_get(c, i)->kind == k;
    return n;
}

#define LOAD "    la a2, src\n    arg a3, 0\n    dmaflat t1, t2, 256\n    mov.gm2ub.f16 zero, a2, t1, t2\n"
#define ADD "    vcfg t3, 1\n    li t4, 256\n    vadd.f16 t4, zero, zero, t3\n"
#define STORE "    mov.ub2gm.f16 a3, t4, t1, t2\n"

START_TEST(clean_both_modes)
{
    const char *k = LOAD "    handoff MTE2, V, 0\n" ADD "    handoff V, MTE3, 0\n" STORE "    halt\n";
    for (int mode = 0; mode < 2; mode++) {
        npu_sim *s = mk(k, 1);
        int ok;
        sim_chk *c = run(s, mode ? NPU_MODE_PERF : NPU_MODE_FUNC, SIM_CHK_ALL, &ok);
        ck_assert_int_eq(ok, 1);
        ck_assert_uint_eq(sim_chk_nfindings(c), 0);
        sim_chk_free(c);
        npu_sim_free(s);
    }
}
END_TEST

START_TEST(race_raw_sites_and_fix)
{
    npu_sim *s = mk(LOAD ADD "    handoff V, MTE3, 0\n" STORE "    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, NULL);
    ck_assert_uint_eq(sim_chk_nfindings(c), 1);
    const sim_chk_finding *f = sim_chk_get(c, 0);
    ck_assert_int_eq(f->kind, SIM_CHK_K_RAW);
    ck_assert_int_eq(f->nat, 2);
    ck_assert_int_eq(f->at[0].pipe, ISA_PIPE_MTE2);
    ck_assert_int_eq(f->at[1].pipe, ISA_PIPE_V);
    ck_assert_int_eq(f->at[0].is_write, 1);
    ck_assert_int_eq(f->at[1].is_write, 0);
    ck_assert(f->at[0].pc < f->at[1].pc);
    ck_assert_int_eq(f->space, SIM_SP_UB);
    ck_assert_uint_eq(f->addr, 0);
    ck_assert_uint_eq(f->len, 256);
    ck_assert(f->at[1].cycle > 0);   /* perf mode: cycles are real */
    ck_assert_ptr_nonnull(strstr(f->fix, "set_flag(MTE2, V, 0) after pc"));
    ck_assert_ptr_nonnull(strstr(f->fix, "wait_flag(MTE2, V, 0) before pc"));
    char h[1024];
    sim_chk_header(c, f, h, sizeof h);
    ck_assert_ptr_nonnull(strstr(h, "racecheck: read-after-write hazard on UB [0x0, +256)"));
    /* racecheck off: nothing */
    sim_chk_free(c);
    c = run(s, NPU_MODE_PERF, SIM_CHK_MEM | SIM_CHK_INIT | SIM_CHK_SYNC, NULL);
    ck_assert_uint_eq(sim_chk_nfindings(c), 0);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(race_found_in_func_mode_too)
{
    /* the model is logical: func mode (no timing) finds the same race */
    npu_sim *s = mk(LOAD ADD "    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_FUNC, SIM_CHK_RACE, NULL);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_RAW), 1);
    ck_assert_uint_eq(sim_chk_get(c, 0)->at[1].cycle, 0);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(dispatch_order_scalar_to_pipe)
{
    /* a scalar store to GM, then a DMA reading it: ordered by dispatch; the
     * reverse (DMA writes, scalar reads) needs a flag */
    npu_sim *s = mk("    arg a3, 0\n    li t0, 7\n    sdg t0, 0(a3)\n    dmaflat t1, t2, 64\n"
                    "    mov.gm2ub zero, a3, t1, t2\n    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, NULL);
    ck_assert_uint_eq(sim_chk_nfindings(c), 1);   /* only the uninit read of Y[8..64) */
    ck_assert_int_eq(sim_chk_get(c, 0)->kind, SIM_CHK_K_UNINIT);
    ck_assert_uint_eq(sim_chk_get(c, 0)->len, 56);
    sim_chk_free(c);
    npu_sim_free(s);
    s = mk(LOAD "    dmaflat t1, t2, 64\n    mov.ub2gm a3, zero, t1, t2\n    handoff MTE2, MTE3, 0\n"
           "    ldg t5, 0(a3)\n    halt\n", 1);
    c = run(s, NPU_MODE_PERF, SIM_CHK_RACE, NULL);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_RAW), 2);   /* UB MTE2->MTE3, GM MTE3->S */
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(wait_before_set_in_program_order)
{
    /* V's wait is dispatched before MTE2's set: count pairing still orders */
    npu_sim *s = mk("    la a2, src\n    arg a3, 0\n    dmaflat t1, t2, 256\n"
                    "    wait_flag MTE2, V, 0\n    mov.gm2ub.f16 zero, a2, t1, t2\n"
                    "    set_flag MTE2, V, 0\n" ADD "    halt\n", 1);
    int ok;
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, &ok);
    ck_assert_int_eq(ok, 1);
    ck_assert_uint_eq(sim_chk_nfindings(c), 0);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(pipe_barrier_all_orders)
{
    npu_sim *s = mk(LOAD "    pipe_barrier ALL\n" ADD "    pipe_barrier ALL\n" STORE "    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, NULL);
    ck_assert_uint_eq(sim_chk_nfindings(c), 0);
    sim_chk_free(c);
    npu_sim_free(s);
    /* pipe_barrier(V) does not order MTE2 -> V */
    s = mk(LOAD "    pipe_barrier V\n" ADD "    halt\n", 1);
    c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, NULL);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_RAW), 1);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(cross_core_sync_all)
{
    const char *racy = "    arg a3, 0\n    mfsr s0, coreid\n    sdg s0, 0(a3)\n    halt\n";
    const char *synced = "    arg a3, 0\n    mfsr s0, coreid\n    bnez s0, 1f\n    sdg s0, 0(a3)\n"
                         "1:  sync_all\n    ldg t0, 0(a3)\n    halt\n";
    const char *rd = "    arg a3, 0\n    mfsr s0, coreid\n    bnez s0, 1f\n    sdg s0, 0(a3)\n"
                     "    halt\n1:  ldg t0, 0(a3)\n    halt\n";
    for (int mode = 0; mode < 2; mode++) {
        npu_mode m = mode ? NPU_MODE_PERF : NPU_MODE_FUNC;
        npu_sim *s = mk(racy, 3);
        sim_chk *c = run(s, m, SIM_CHK_ALL, NULL);
        ck_assert_uint_eq(sim_chk_nfindings(c), 1);
        ck_assert_int_eq(sim_chk_get(c, 0)->kind, SIM_CHK_K_OVERWRITE);
        ck_assert_uint_eq(sim_chk_get(c, 0)->count, 2);   /* cores 1 and 2 over 0 (grouped) */
        ck_assert_ptr_nonnull(strstr(sim_chk_get(c, 0)->fix, "sync_all"));
        sim_chk_free(c);
        /* without memcheck a cross-core overwrite is a WAW race */
        c = run(s, m, SIM_CHK_RACE, NULL);
        ck_assert_uint_eq(count_kind(c, SIM_CHK_K_WAW), 1);
        sim_chk_free(c);
        npu_sim_free(s);
        s = mk(synced, 2);
        c = run(s, m, SIM_CHK_ALL, NULL);
        ck_assert_uint_eq(sim_chk_nfindings(c), 0);
        sim_chk_free(c);
        npu_sim_free(s);
        s = mk(rd, 2);
        c = run(s, m, SIM_CHK_RACE | SIM_CHK_MEM, NULL);
        ck_assert_uint_eq(sim_chk_nfindings(c), 1);
        ck_assert_int_eq(sim_chk_get(c, 0)->at[0].core != sim_chk_get(c, 0)->at[1].core, 1);
        sim_chk_free(c);
        npu_sim_free(s);
    }
}
END_TEST

START_TEST(initcheck_gm_in_out)
{
    /* reading the zero-filled out tensor before writing it is a finding;
     * .data, the parameter block and what the kernel wrote are not */
    npu_sim *s = mk("    arg a3, 0\n    la a2, src\n    ldg t0, 0(a2)\n    ldg t1, 8(a3)\n"
                    "    sdg t0, 0(a3)\n    ldg t1, 0(a3)\n    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_FUNC, SIM_CHK_ALL, NULL);
    ck_assert_uint_eq(sim_chk_nfindings(c), 1);
    const sim_chk_finding *f = sim_chk_get(c, 0);
    ck_assert_int_eq(f->kind, SIM_CHK_K_UNINIT);
    ck_assert_int_eq(f->space, SIM_SP_GM);
    ck_assert_uint_eq(f->addr, npu_sim_arg_addr(s, "Y") + 8);
    ck_assert_str_eq(f->what, "Y+0x8");
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(grouping_counts_instructions)
{
    /* the same race in a loop of 5: one finding, count 5 */
    npu_sim *s = mk(LOAD "    vcfg t3, 1\n    li t4, 256\n    li s2, 5\n"
                    "1:  mov.gm2ub.f16 zero, a2, t1, t2\n    vadd.f16 t4, zero, zero, t3\n"
                    "    addi s2, s2, -1\n    bnez s2, 1b\n    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_RACE, NULL);
    /* every add reads what the loop's load (not the first) last wrote */
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_RAW), 1);
    for (size_t i = 0; i < sim_chk_nfindings(c); i++) {
        const sim_chk_finding *f = sim_chk_get(c, i);
        if (f->kind == SIM_CHK_K_RAW)
            ck_assert_uint_eq(f->count, 5);
        if (f->kind == SIM_CHK_K_WAR)   /* the next load over the add's read */
            ck_assert_uint_eq(f->count, 4);
    }
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_WAR), 1);   /* loop load after the add */
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(sync_findings)
{
    npu_sim *s = mk("    set_flag MTE2, V, 1\n    set_flag MTE2, V, 1\n    wait_flag MTE2, V, 1\n"
                    "    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_SYNC, NULL);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_SET_TWICE), 1);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_LEFT_SET), 1);
    sim_chk_free(c);
    npu_sim_free(s);
    /* a wait nothing sets: perf mode deadlocks (reported, no hang); func
     * mode completes and reports the unmatched wait */
    s = mk("    wait_flag MTE2, V, 3\n    halt\n", 1);
    int ok;
    c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, &ok);
    ck_assert_int_eq(ok, 0);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_DEADLOCK), 1);
    ck_assert_ptr_nonnull(strstr(sim_chk_get(c, 0)->msg, "deadlock"));
    sim_chk_free(c);
    c = run(s, NPU_MODE_FUNC, SIM_CHK_ALL, &ok);
    ck_assert_int_eq(ok, 1);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_WAIT_UNMATCHED), 1);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(faults_become_findings)
{
    npu_sim *s = mk("    arg a3, 0\n    dmaflat t1, t2, 1026\n    mov.ub2gm.f16 a3, zero, t1, t2\n"
                    "    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_MEM, NULL);
    ck_assert_uint_eq(sim_chk_nfindings(c), 1);
    ck_assert_int_eq(sim_chk_get(c, 0)->kind, SIM_CHK_K_OOB);
    ck_assert_ptr_nonnull(strstr(sim_chk_get(c, 0)->what, "past the end of tensor Y"));
    ck_assert_int_eq(sim_chk_get(c, 0)->at[0].pipe, ISA_PIPE_MTE3);
    sim_chk_free(c);
    /* a fault is reported even when memcheck is off: the kernel stopped */
    c = run(s, NPU_MODE_PERF, SIM_CHK_RACE, NULL);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_OOB), 1);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(deterministic_and_reports)
{
    const char *k = LOAD ADD "    set_flag V, MTE3, 0\n" STORE "    halt\n";
    npu_sim *s = mk(k, 2);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, NULL);
    npu_buf a = {0}, b = {0};
    sim_chk_report_text(c, &a);
    sim_chk_free(c);
    c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, NULL);
    sim_chk_report_text(c, &b);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert_int_eq(memcmp(a.data, b.data, a.len), 0);
    ck_assert_ptr_nonnull(strstr((const char *)a.data, "ERROR SUMMARY"));
    char jp[] = "/tmp/test_check_XXXXXX";
    int fd = mkstemp(jp);
    ck_assert_int_ge(fd, 0);
    close(fd);
    npu_diag d;
    ck_assert_int_eq(sim_chk_write_json(c, jp, &d), NPU_OK);
    uint8_t *txt;
    size_t len;
    ck_assert_int_eq(npu_read_file(jp, 0, 0, &txt, &len, &d), NPU_OK);
    cJSON *j = cJSON_Parse((const char *)txt);
    ck_assert_ptr_nonnull(j);
    cJSON *arr = cJSON_GetObjectItem(j, "findings");
    ck_assert_int_eq(cJSON_GetArraySize(arr), (int)sim_chk_nfindings(c));
    cJSON *f0 = cJSON_GetArrayItem(arr, 0);
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(f0, "sites"));
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(f0, "summary"));
    cJSON_Delete(j);
    npu_free(txt);
    ck_assert_int_eq(sim_chk_write_junit(c, jp, &d), NPU_OK);
    ck_assert_int_eq(npu_read_file(jp, 0, 0, &txt, &len, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr((const char *)txt, "<failure message="));
    ck_assert_ptr_nonnull(strstr((const char *)txt, "name=\"racecheck: t.elf\""));
    npu_free(txt);
    unlink(jp);
    npu_buf_free(&a);
    npu_buf_free(&b);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST

START_TEST(parse_tools)
{
    npu_diag d;
    ck_assert_int_eq(sim_chk_parse_tools("all", &d), SIM_CHK_ALL);
    ck_assert_int_eq(sim_chk_parse_tools("memcheck,synccheck", &d), SIM_CHK_MEM | SIM_CHK_SYNC);
    ck_assert_int_eq(sim_chk_parse_tools("racecheck", &d), SIM_CHK_RACE);
    ck_assert_int_eq(sim_chk_parse_tools("memcheck,bogus", &d), -1);
    ck_assert_ptr_nonnull(strstr(d.msg, "unknown tool 'bogus'"));
    ck_assert_int_eq(sim_chk_parse_tools("", &d), -1);
    ck_assert_int_eq(sim_chk_parse_tools(NULL, &d), -1);
}
END_TEST

START_TEST(numerics)
{
    npu_sim *s = mk("    halt\n", 1);
    sim_chk *c = run(s, NPU_MODE_FUNC, SIM_CHK_ALL, NULL);
    npy_tensor a, b;
    npu_diag d;
    ck_assert_int_eq(npu_sim_get_output(s, "Y", &a, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_get_output(s, "Y", &b, &d), NPU_OK);
    int pass;
    ck_assert_int_eq(sim_chk_add_numerics(c, "Y", &a, &b, 0, 0, &pass, &d), NPU_OK);
    ck_assert_int_eq(pass, 1);
    ck_assert_uint_eq(sim_chk_nfindings(c), 0);
    ((uint16_t *)b.data)[3] = 0x3c00;   /* 1.0 */
    ck_assert_int_eq(sim_chk_add_numerics(c, "Y", &a, &b, 0, 0, &pass, &d), NPU_OK);
    ck_assert_int_eq(pass, 0);
    ck_assert_uint_eq(count_kind(c, SIM_CHK_K_NUMERICS), 1);
    ck_assert_ptr_nonnull(strstr(sim_chk_get(c, 0)->msg, "first at [3]"));
    npy_free(&a);
    npy_free(&b);
    sim_chk_free(c);
    npu_sim_free(s);
}
END_TEST


START_TEST(allocation_failures)
{
    /* every allocation of a checked run (checker and simulator) failing in
     * turn: an error or the baseline findings, never a crash or a leak */
    const char *k = LOAD ADD "    set_flag V, MTE3, 0\n" STORE "    halt\n";
    npu_sim *s = mk(k, 2);
    sim_chk *c = run(s, NPU_MODE_PERF, SIM_CHK_ALL, NULL);
    size_t base = sim_chk_nfindings(c);
    ck_assert_uint_gt(base, 1);
    sim_chk_free(c);
    int failures = 0;
    for (long n = 1; n < 400; n++) {
        npu_diag d;
        npu_alloc_fail_after(n);
        npu_status st = sim_chk_new(&c, s, SIM_CHK_ALL, &d);
        if (st) {
            npu_alloc_fail_after(0);
            failures++;
            continue;
        }
        npu_run_opts ro = {NPU_MODE_PERF, 0, 0};
        int ok = 0;
        st = sim_chk_run(c, &ro, &ok, &d);
        npu_buf b = {0};
        if (!st)
            sim_chk_report_text(c, &b);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (!failed) {
            ck_assert_int_eq(st, NPU_OK);
            ck_assert_uint_eq(sim_chk_nfindings(c), base);
        } else {
            failures++;
        }
        npu_buf_free(&b);
        sim_chk_free(c);
        if (!failed)
            break;
    }
    ck_assert_int_gt(failures, 3);
    npu_sim_free(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("check");
    TCase *t = tcase_create("check");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, clean_both_modes);
    tcase_add_test(t, race_raw_sites_and_fix);
    tcase_add_test(t, race_found_in_func_mode_too);
    tcase_add_test(t, dispatch_order_scalar_to_pipe);
    tcase_add_test(t, wait_before_set_in_program_order);
    tcase_add_test(t, pipe_barrier_all_orders);
    tcase_add_test(t, cross_core_sync_all);
    tcase_add_test(t, initcheck_gm_in_out);
    tcase_add_test(t, grouping_counts_instructions);
    tcase_add_test(t, sync_findings);
    tcase_add_test(t, faults_become_findings);
    tcase_add_test(t, deterministic_and_reports);
    tcase_add_test(t, parse_tools);
    tcase_add_test(t, numerics);
    tcase_add_test(t, allocation_failures);
    suite_add_tcase(su, t);
    SRunner *r = srunner_create(su);
    srunner_run_all(r, CK_NORMAL);
    int nf = srunner_ntests_failed(r);
    srunner_free(r);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
