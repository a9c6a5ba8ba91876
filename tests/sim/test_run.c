/* test_run.c — launches: special registers, SPMD, sync_all, the watchdog,
 * sync findings, the step interface, determinism. */
#include "tests/sim/suites.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

START_TEST(special_registers)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  mfsr a0, coreid\n"
                           "  mfsr a1, corenum\n"
                           "  mfsr a2, cycle\n"
                           "  mfsr a3, nargs\n"
                           "  mfsr a4, args\n"
                           "  halt\n", 3);
    t_run_ok(s);
    for (int c = 0; c < 3; c++) {
        ck_assert_uint_eq(t_reg(s, c, "a0"), (uint64_t)c);
        ck_assert_uint_eq(t_reg(s, c, "a1"), 3);
        ck_assert_uint_eq(t_reg(s, c, "a2"), 0);         /* func mode: no time */
        ck_assert_uint_eq(t_reg(s, c, "a3"), 0);
        ck_assert_uint_eq(t_reg(s, c, "a4"), SIM_GM_ALLOC_BASE);
    }
    npu_sim_free(s);
}
END_TEST

START_TEST(pmu_counts_instructions)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  li t0, 2\n"
                           "  mtsr pmuctl, t0\n"       /* zero the counters, counting off */
                           "  li t0, 1\n"
                           "  mtsr pmuctl, t0\n"       /* counting on: select 0 = instructions */
                           "  nop\n  nop\n  nop\n"
                           "  mfsr a0, pmucnt0\n"      /* mtsr + 3 nops = 4 */
                           "  mtsr pmuctl, zero\n"
                           "  nop\n"
                           "  mfsr a1, pmucnt1\n"      /* + the mfsr = 5; the disabling mtsr is not counted */
                           "  mfsr a2, pmusel1\n"
                           "  halt\n", 1);
    t_run_ok(s);
    ck_assert_uint_eq(t_reg(s, 0, "a0"), 4);
    ck_assert_uint_eq(t_reg(s, 0, "a1"), 5);
    ck_assert_uint_eq(t_reg(s, 0, "a2"), 0);
    npu_sim_free(s);
}
END_TEST

/* Each core writes coreid * 10 to out[coreid] (an int64 tensor). */
static const char *spmd_src =
    ".text\n.globl main\nmain:\n"
    "  mfsr t0, coreid\n"
    "  muli t1, t0, 10\n"
    "  slli t2, t0, 3\n"
    "  add t2, t2, a0\n"
    "  sdg t1, 0(t2)\n"
    "  mfsr t3, args\n"
    "  ldg t4, 8(t3)\n"          /* second argument from the parameter block */
    "  sdg t4, 0(a1)\n"
    "  halt\n";

START_TEST(spmd_coreid)
{
    npu_sim *s = t_sim_src(spmd_src, 8);
    npu_diag d;
    int64_t shape[1] = {8};
    ck_assert_int_eq(npu_sim_bind_output(s, "out", ISA_DT_S64, 1, shape, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_bind_output(s, "x", ISA_DT_S64, 1, shape, &d), NPU_OK);
    t_run_ok(s);
    npy_tensor t;
    ck_assert_int_eq(npu_sim_get_output(s, "out", &t, &d), NPU_OK);
    ck_assert_int_eq(t.dtype, ISA_DT_S64);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(((int64_t *)t.data)[i], i * 10);
    npy_free(&t);
    ck_assert_int_eq(npu_sim_get_output(s, "x", &t, &d), NPU_OK);
    /* a1 is the address of x, and so is parameter 1 */
    ck_assert_uint_eq((uint64_t)((int64_t *)t.data)[0], npu_sim_arg_addr(s, "x"));
    npy_free(&t);
    npu_sim_free(s);
}
END_TEST

/* Phase 1: each core writes coreid+1 to buf[coreid]; sync_all; phase 2:
 * each core sums every buf entry. Without the barrier's ordering (round-robin
 * cores in func mode) a core would see zeros. */
START_TEST(sync_all_orders_cores)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  mfsr t0, coreid\n"
                           "  mfsr t5, corenum\n"
                           "  addi t1, t0, 1\n"
                           "  slli t2, t0, 3\n"
                           "  add t2, t2, a0\n"
                           "  sdg t1, 0(t2)\n"
                           "  sync_all\n"
                           "  li a2, 0\n  li t3, 0\n  mv t4, a0\n"
                           "loop:\n  ldg t6, 0(t4)\n"
                           "  add a2, a2, t6\n"
                           "  addi t4, t4, 8\n"
                           "  addi t3, t3, 1\n"
                           "  blt t3, t5, loop\n"
                           "  sync_all\n"
                           "  halt\n", 5);
    npu_diag d;
    int64_t shape[1] = {5};
    ck_assert_int_eq(npu_sim_bind_output(s, "buf", ISA_DT_S64, 1, shape, &d), NPU_OK);
    t_run_ok(s);
    for (int c = 0; c < 5; c++)
        ck_assert_uint_eq(t_reg(s, c, "a2"), 15);
    npu_sim_free(s);
}
END_TEST

START_TEST(sync_all_deadlock)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  mfsr t0, coreid\n"
                           "  beq t0, zero, out\n"
                           "  sync_all\n"
                           "out:\n  halt\n", 3);
    npu_diag d;
    ck_assert_int_eq(t_run(s, &d), NPU_EDEADLOCK);
    ck_assert_msg(strstr(d.msg, "deadlock: 2 core(s) wait at sync_all but 1 core(s) ended without "
                                "reaching it: core 0 pc 0x18 (out) ended, core 1 pc 0x18 (out) "
                                "at sync_all") != NULL, "%s", d.msg);
    npu_sim_free(s);
}
END_TEST

START_TEST(watchdog)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  li t0, 0\nspin:\n  addi t0, t0, 1\n"
                           "  j spin\n", 2);
    npu_diag d;
    npu_run_opts o = {NPU_MODE_FUNC, 0, 1001};
    ck_assert_int_eq(npu_sim_run(s, &o, &d), NPU_ETIMEOUT);
    ck_assert_msg(strstr(d.msg, "fault on core 0 at pc 0x8 (spin), cycle 0: addi t0, t0, 1: "
                                "watchdog: 1001 instructions retired without ending") != NULL,
                  "%s", d.msg);
    ck_assert_msg(strstr(d.msg, "every core: core 0 pc 0x8 (spin) running, core 1 pc 0x0 (main) "
                                "running") != NULL, "%s", d.msg);
    /* li + 500 x (addi, j) = 1001 */
    ck_assert_uint_eq(t_reg(s, 0, "t0"), 500);
    npu_sim_free(s);
}
END_TEST

START_TEST(sync_findings)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n"
                           "  set_flag MTE2, V, 1\n"
                           "  set_flag MTE2, V, 1\n"    /* set twice */
                           "  wait_flag MTE2, V, 1\n"   /* one left set */
                           "  wait_flag V, MTE3, 2\n"   /* never matched */
                           "  set_flag MTE1, M, 0\n"
                           "  wait_flag MTE1, M, 0\n"   /* balanced: nothing */
                           "  pipe_barrier ALL\n"
                           "  halt\n", 1);
    t_run_ok(s);
    ck_assert_uint_eq(npu_sim_nfindings(s), 3);
    const npu_finding *f = npu_sim_finding(s, 0);
    ck_assert_int_eq(f->kind, NPU_FIND_FLAG_SET_TWICE);
    ck_assert_uint_eq(f->pc, 8);
    /* end-of-run findings come in (src pipe, dst pipe, id) order */
    f = npu_sim_finding(s, 1);
    ck_assert_int_eq(f->kind, NPU_FIND_WAIT_UNMATCHED);
    ck_assert_uint_eq(f->pc, 24);
    ck_assert_str_eq(f->msg, "core 0: 1 wait_flag(V, MTE3, 2) never matched by a set_flag (0 sets, "
                             "1 waits; last wait at pc 0x18): the MTE3 pipe would block forever");
    f = npu_sim_finding(s, 2);
    ck_assert_int_eq(f->kind, NPU_FIND_FLAG_LEFT_SET);
    ck_assert_str_eq(f->msg, "core 0: flag (MTE2, V, 1) still set when the kernel ended (2 sets, "
                             "1 waits; last set at pc 0x8)");
    npu_sim_free(s);
}
END_TEST

/* The step interface the timing engine drives. */
START_TEST(step_interface)
{
    npu_sim *s = t_sim_src(".data\nv: .dword 7\n"
                           ".text\n.globl main\nmain:\n"
                           "  la t0, v\n"
                           "  ldg t1, 0(t0)\n"
                           "  call f\n"
                           "  set_flag S, MTE2, 4\n"
                           "  sync_all\n"
                           "  beq zero, zero, end\n"
                           "  nop\n"
                           "end:\n  halt\n"
                           "f:\n  ret\n", 1);
    npu_diag d;
    ck_assert_int_eq(sim_place_args(s, &d), NPU_OK);
    ck_assert_int_eq(sim_cores_reset(s, &d), NPU_OK);
    sim_op op;
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* la */
    ck_assert_uint_eq(op.pc, 0);
    ck_assert_uint_eq(op.next_pc, 8);
    ck_assert_int_eq(op.pipe, ISA_PIPE_S);
    ck_assert_int_eq(op.cost, ISA_COST_SALU);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* ldg */
    ck_assert_int_eq(op.in.op, ISA_OP_LDG);
    ck_assert_int_eq(op.cost, ISA_COST_SLDG);
    ck_assert_uint_eq(op.ngm, 1);
    ck_assert_uint_eq(op.gm[0].addr, ASM_GM_DATA_BASE);
    ck_assert_uint_eq(op.gm[0].len, 8);
    ck_assert_int_eq(op.gm[0].is_write, 0);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* call */
    ck_assert_int_eq(op.is_call, 1);
    ck_assert_uint_eq(op.target, 64);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* ret */
    ck_assert_int_eq(op.is_ret, 1);
    ck_assert_uint_eq(op.target, 24);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* set_flag */
    ck_assert_int_eq(op.is_set_flag, 1);
    ck_assert_int_eq(op.pipe, ISA_PIPE_S);
    ck_assert_int_eq(op.in.dpipe, ISA_PIPE_MTE2);
    ck_assert_int_eq(op.in.fid, 4);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* sync_all */
    ck_assert_int_eq(op.is_sync_all, 1);
    ck_assert_int_eq(s->cores[0].state, SIM_CORE_AT_BARRIER);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_EINVAL);         /* not running */
    ck_assert_int_eq(sim_barrier_ready(s), 1);
    sim_barrier_release(s);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* beq */
    ck_assert_int_eq(op.is_branch, 1);
    ck_assert_int_eq(op.taken, 1);
    ck_assert_uint_eq(op.next_pc, 56);
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_OK);             /* halt */
    ck_assert_int_eq(op.ended, 1);
    ck_assert_int_eq(s->cores[0].state, SIM_CORE_ENDED);
    ck_assert_uint_eq(s->cores[0].insns, 8);
    npu_sim_free(s);
}
END_TEST

START_TEST(timing_mode_refuses_data_dependent_ldg)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  ldg t0, 0(a0)\n  halt\n", 1);
    npu_diag d;
    int64_t shape[1] = {4};
    ck_assert_int_eq(npu_sim_bind_output(s, "T", ISA_DT_S64, 1, shape, &d), NPU_OK);
    ck_assert_int_eq(sim_place_args(s, &d), NPU_OK);
    s->nodata = 1;
    ck_assert_int_eq(sim_cores_reset(s, &d), NPU_OK);
    sim_op op;
    ck_assert_int_eq(sim_core_step(s, 0, &op, &d), NPU_EUNSUPP);
    ck_assert_int_eq(op.faulted, 1);
    ck_assert_msg(strstr(d.msg, "timing mode cannot run this kernel: ldg at pc 0x0 reads tensor "
                                "data of T (control flow depends on data)") != NULL, "%s", d.msg);
    npu_sim_free(s);
}
END_TEST

/* Observers see every access with core, pc and pipe; on_op sees every op. */
typedef struct obs_log { int nacc, nops; sim_access_ev last; uint64_t last_pc; } obs_log;
static void obs_access(void *u, const sim_access_ev *ev)
{
    obs_log *l = u;
    l->nacc++;
    l->last = *ev;
}
static void obs_op(void *u, npu_sim *s, int core, const sim_op *op)
{
    (void)s; (void)core;
    obs_log *l = u;
    l->nops++;
    l->last_pc = op->pc;
}

START_TEST(observers)
{
    npu_sim *s = t_sim_src(".text\n.globl main\nmain:\n  sd sp, -8(sp)\n  nop\n  halt\n", 2);
    obs_log l = {0};
    sim_observer o = {&l, obs_access, obs_op};
    npu_diag d;
    ck_assert_int_eq(sim_add_observer(s, &o, &d), NPU_OK);
    t_run_ok(s);
    ck_assert_int_eq(l.nacc, 2);
    ck_assert_int_eq(l.nops, 6);
    ck_assert_int_eq(l.last.core, 1);
    ck_assert_int_eq(l.last.space, SIM_SP_SB);
    ck_assert_uint_eq(l.last.addr, 16384 - 8);
    ck_assert_uint_eq(l.last.len, 8);
    ck_assert_int_eq(l.last.is_write, 1);
    ck_assert_uint_eq(l.last_pc, 16);
    npu_sim_free(s);
}
END_TEST

START_TEST(determinism_and_two_sims)
{
    /* two simulators side by side in one process, interleaved, same results */
    const char *src = ".text\n.globl main\nmain:\n"
                      "  mfsr t0, coreid\n  li a0, 1\n  li t1, 0\n"
                      "l:\n  muli a0, a0, 1103515245\n  add a0, a0, t0\n"
                      "  addi t1, t1, 1\n  li t2, 1000\n  blt t1, t2, l\n  halt\n";
    npu_sim *a = t_sim_src(src, 4), *b = t_sim_src(src, 4);
    t_run_ok(a);
    t_run_ok(b);
    for (int c = 0; c < 4; c++)
        ck_assert_uint_eq(t_reg(a, c, "a0"), t_reg(b, c, "a0"));
    ck_assert_uint_ne(t_reg(a, 0, "a0"), t_reg(a, 1, "a0"));
    uint64_t first = t_reg(a, 2, "a0");
    t_run_ok(a); /* a second run of the same simulator starts afresh */
    ck_assert_uint_eq(t_reg(a, 2, "a0"), first);
    ck_assert_uint_eq(npu_sim_insns(a, -1), 4 * (3 + 5 * 1000 + 1));
    npu_sim_free(a);
    npu_sim_free(b);
}
END_TEST

/* Every run starts from the launch: inout tensors from their bound data,
 * .data from the ELF, out tensors zero. */
START_TEST(runs_repeat_exactly)
{
    npu_sim *s = t_sim_src(".data\ncount: .dword 0\n"
                           ".text\n.globl main\nmain:\n"
                           "  la t0, count\n"
                           "  ldg t1, 0(t0)\n"
                           "  addi t1, t1, 1\n"
                           "  sdg t1, 0(t0)\n"          /* .data count += 1 */
                           "  sdg t1, 0(a1)\n"          /* out[0] = count */
                           "  ldg t2, 8(a1)\n"
                           "  addi t2, t2, 5\n"
                           "  sdg t2, 8(a1)\n"          /* out[1] += 5 */
                           "  ldg t3, 0(a0)\n"
                           "  addi t3, t3, 1\n"
                           "  sdg t3, 0(a0)\n"          /* io[0] += 1 */
                           "  halt\n", 1);
    npu_diag d;
    npy_tensor io;
    int64_t shape[1] = {2};
    ck_assert_int_eq(npy_alloc(&io, ISA_DT_S64, 1, shape, &d), NPU_OK);
    ((int64_t *)io.data)[0] = 41;
    ck_assert_int_eq(npu_sim_bind_tensor(s, "io", &io, NPU_INOUT, &d), NPU_OK);
    ((int64_t *)io.data)[0] = 0; /* the simulator keeps its own copy */
    npy_free(&io);
    ck_assert_int_eq(npu_sim_bind_output(s, "out", ISA_DT_S64, 1, shape, &d), NPU_OK);
    for (int run = 0; run < 3; run++) {
        t_run_ok(s);
        npy_tensor o;
        ck_assert_int_eq(npu_sim_get_output(s, "out", &o, &d), NPU_OK);
        ck_assert_int_eq(((int64_t *)o.data)[0], 1);
        ck_assert_int_eq(((int64_t *)o.data)[1], 5);
        npy_free(&o);
        ck_assert_int_eq(npu_sim_get_output(s, "io", &o, &d), NPU_OK);
        ck_assert_int_eq(((int64_t *)o.data)[0], 42);
        npy_free(&o);
    }
    npu_sim_free(s);
}
END_TEST

Suite *run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("run");
    tcase_add_test(tc, special_registers);
    tcase_add_test(tc, pmu_counts_instructions);
    tcase_add_test(tc, spmd_coreid);
    tcase_add_test(tc, sync_all_orders_cores);
    tcase_add_test(tc, sync_all_deadlock);
    tcase_add_test(tc, watchdog);
    tcase_add_test(tc, sync_findings);
    tcase_add_test(tc, step_interface);
    tcase_add_test(tc, timing_mode_refuses_data_dependent_ldg);
    tcase_add_test(tc, observers);
    tcase_add_test(tc, determinism_and_two_sims);
    tcase_add_test(tc, runs_repeat_exactly);
    suite_add_tcase(s, tc);
    return s;
}
