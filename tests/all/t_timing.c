/* t_timing.c — the timing engine on an idle test machine (tm_harness.c):
 * exact cycle counts derived by hand from the config for each instruction
 * class, overlap, flags, queue-full stalls, barriers, GM sharing, deadlock
 * and watchdog reports, determinism. The derivation of every expected number
 * is in the comment above its assertion (docs/timing.md has the rules). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/all/tm_harness.h"   /* config.h before isa.h: the dtype enum */
#include "isa/isa.h"

/* A vector repeat config with unit block strides and 8-block repeats. */
static uint64_t vcfg(int rep) { return ISA_VCFG(rep, 1, 1, 1, 8, 8, 8); }

/* Common prologue: a1 = UB 0, a2 = UB 6304, a3 = UB 12608, a4 = vector
 * config (li64: 2 instructions); 5 scalar instructions: cycles 0..4. With
 * 32-byte blocks interleaved over 48 banks in 16 groups (docs/vector.md),
 * beat b touches banks b, b+5, b+10 (groups differ too): no conflicts. */
static void prologue(char *buf, size_t n, int rep)
{
    snprintf(buf, n,
             "_start:\n li a1, 0\n li a2, 6304\n li a3, 12608\n li64 a4, %" PRIu64 "\n",
             vcfg(rep));
}

START_TEST(t_scalar_alu)
{
    cfg_machine m;
    tmh_test_machine(&m);
    /* li 1 + addi 1 + mul 3 (mul_latency) + halt 1 = 6 */
    npu_sim *s = tmh_load(&m, "_start:\n li a0, 5\n addi a0, a0, 1\n mul a1, a0, a0\n halt\n", 1);
    ck_assert_uint_eq(tmh_cycles(s), 6);
    ck_assert_uint_eq(npu_sim_reg(s, 0, 11), 36);
    const sim_timing_stats *st = tmh_stats(s);
    ck_assert_uint_eq(st->core[0].insns[ISA_PIPE_S], 4);
    ck_assert_uint_eq(st->core[0].busy[ISA_PIPE_S], 6);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_scalar_branch)
{
    cfg_machine m;
    tmh_test_machine(&m);
    /* li 0->1, addi 1->2, bnez taken 2->5 (1 + penalty 2), addi 5->6,
     * bnez taken 6->9, addi 9->10, bnez not taken 10->11, halt 11->12 */
    npu_sim *s = tmh_load(&m, "_start:\n li t0, 3\nloop:\n addi t0, t0, -1\n bnez t0, loop\n halt\n", 1);
    ck_assert_uint_eq(tmh_cycles(s), 12);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_vector)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[512], pro[256];
    /* 5 scalar instructions (0..4); vadd dispatched at 5 and starts there:
     * max(startup 3, 4 repeats x 2) = 8 -> done at 13; halt at 6 -> 7, the
     * core ends when V drains: 13 */
    prologue(pro, sizeof pro, 4);
    snprintf(src, sizeof src, "%s vadd.f32 a1, a2, a3, a4\n halt\n", pro);
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 13);
    const sim_timing_stats *st = tmh_stats(s);
    ck_assert_uint_eq(st->core[0].busy[ISA_PIPE_V], 8);
    ck_assert_uint_eq(st->core[0].insns[ISA_PIPE_V], 1);
    ck_assert_uint_eq(st->core[0].stall[ISA_PIPE_V][SIM_STALL_BANK], 0);
    npu_sim_free(s);

    /* one repeat: the start-up floor, max(3, 1 x 2) = 3 -> 5 + 3 = 8 */
    prologue(pro, sizeof pro, 1);
    snprintf(src, sizeof src, "%s vadd.f32 a1, a2, a3, a4\n halt\n", pro);
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 8);
    npu_sim_free(s);

    /* unary class: vabs, 6 repeats x 1 = 6 -> 11 */
    prologue(pro, sizeof pro, 6);
    snprintf(src, sizeof src, "%s vabs.f32 a1, a2, a4\n halt\n", pro);
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 11);
    npu_sim_free(s);

    /* casts: a pair's own rate (vector.cast_to.f16.f32 0.5) replaces the
     * source's cast rate (vector.cpr.cast.f32 1): f32 -> f16, 9 repeats,
     * max(3, ceil(4.5)) = 5 -> 10; f32 -> bf16 keeps 1: 9 -> 14 */
    prologue(pro, sizeof pro, 9);
    snprintf(src, sizeof src, "%s vconv.f32.f16 a1, a2, a4\n halt\n", pro);
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 10);
    npu_sim_free(s);
    snprintf(src, sizeof src, "%s vconv.f32.bf16 a1, a2, a4\n halt\n", pro);
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 14);
    npu_sim_free(s);
    /* a widening cast reads half a source repeat per repeat (f16 -> f32:
     * 2 / 4 of 256 source bytes): cpr 1 x 0.5, 9 repeats -> 5 -> 10 */
    snprintf(src, sizeof src, "%s vconv.f16.f32 a1, a2, a4\n halt\n", pro);
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 10);
    npu_sim_free(s);
    snprintf(src, sizeof src, "%s vconv.f32.bf16 a1, a2, a4\n halt\n", pro);
    /* and a pair set in the config: vector.cast_to.bf16.f32 = 2 -> 18 -> 23 */
    m.vector.cast_to[ISA_DT_BF16][ISA_DT_F32] = 2;
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 23);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_bank_conflict)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[512];
    /* the two sources 48 blocks apart: one bank, different blocks, in every
     * beat: 4 repeats x 8 beats = 32 conflicts of 1 cycle
     * (vector.bank_conflict_cycles) on top of 4 x 2 */
    snprintf(src, sizeof src,
             "_start:\n li a1, 0\n li a2, 6304\n li a3, 7840\n li64 a4, %" PRIu64 "\n"
             " vadd.f32 a1, a2, a3, a4\n halt\n", vcfg(4));
    npu_sim *s = tmh_load(&m, src, 1);
    uint64_t c = tmh_cycles(s);
    const sim_timing_stats *st = tmh_stats(s);
    uint64_t conf = st->core[0].stall[ISA_PIPE_V][SIM_STALL_BANK];
    ck_assert_uint_eq(conf, 32);
    ck_assert_uint_eq(c, 13 + 32);
    ck_assert_uint_eq(st->core[0].busy[ISA_PIPE_V], 8 + conf);
    npu_sim_free(s);
    /* the ideal-UB switch removes them */
    tmh_set(&m, "vector.model_bank_conflicts=false");
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 13);
    npu_sim_free(s);
}
END_TEST

/* mmad config m=16 k=16*kf n=16, init */
static void mmad_src(char *src, size_t n, int kf, const char *extra_before, const char *extra_after)
{
    snprintf(src, n,
             "_start:\n li a1, 0\n li a2, 0\n li a3, 0\n li64 a4, %" PRIu64 "\n%s"
             " mmad.f16.f32 a1, a2, a3, a4\n%s halt\n",
             (uint64_t)ISA_MM_CFG(16, 16 * kf, 16, 1), extra_before, extra_after);
}

START_TEST(t_cube)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[512];
    /* 5 scalar (0..4); mmad at 5: startup 5 + 4 fractals x 1 = 9 -> 14 */
    mmad_src(src, sizeof src, 4, "", "");
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 14);
    const sim_timing_stats *st = tmh_stats(s);
    ck_assert_uint_eq(st->core[0].macs[ISA_DT_F16], 16 * 64 * 16);
    ck_assert_uint_eq(st->core[0].busy[ISA_PIPE_M], 9);
    npu_sim_free(s);
    /* the minimum occupancy: min_cycles 20 > 9 -> 5 + 20 = 25 */
    tmh_set(&m, "cube.min_cycles=20");
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 25);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_overlap)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[1024];
    /* vadd (V, 8 repeats: 16 cycles) and mmad (M, 8 fractals: 13 cycles)
     * dispatched back to back at 7 and 8 (prologue of 7 scalar
     * instructions): both run at once, the core ends at max(7+16, 8+13) = 23,
     * not 7 + 16 + 13 */
    snprintf(src, sizeof src,
             "_start:\n li a1, 0\n li a2, 6304\n li a3, 12608\n li64 a4, %" PRIu64 "\n"
             " li64 a5, %" PRIu64 "\n"
             " vadd.f32 a1, a2, a3, a4\n mmad.f16.f32 zero, zero, zero, a5\n halt\n",
             vcfg(8), (uint64_t)ISA_MM_CFG(16, 128, 16, 1));
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 23);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_flag)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[1024];
    /* vadd on V 7..23 (8 repeats); set_flag V->M queued behind it takes
     * effect at 23, visible at 23 + flag_latency 10 = 33; the mmad waits
     * behind wait_flag on M until 33, runs 13 cycles -> 46 */
    snprintf(src, sizeof src,
             "_start:\n li a1, 0\n li a2, 6304\n li a3, 12608\n li64 a4, %" PRIu64 "\n"
             " li64 a5, %" PRIu64 "\n"
             " vadd.f32 a1, a2, a3, a4\n set_flag V, M, 3\n wait_flag V, M, 3\n"
             " mmad.f16.f32 zero, zero, zero, a5\n halt\n",
             vcfg(8), (uint64_t)ISA_MM_CFG(16, 128, 16, 1));
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 46);
    const sim_timing_stats *st = tmh_stats(s);
    /* the wait reached M's head at 9 (dispatched at 9) and was released at 33 */
    ck_assert_uint_eq(st->core[0].stall[ISA_PIPE_M][SIM_STALL_FLAG], 33 - 9);
    ck_assert_uint_eq(st->core[0].flag_sets, 1);
    ck_assert_uint_eq(st->core[0].flag_waits, 1);
    npu_sim_free(s);

    /* the latency is the config's: 0 -> 36 */
    tmh_set(&m, "sync.flag_latency=0");
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 36);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_flag_scalar)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[1024];
    /* a wait on S: the scalar unit blocks until V's set is visible.
     * vadd 5..13 (4 repeats), set at 13 visible 23, the scalar unit's
     * wait_flag V,S (issue slot 7 -> 8) releases at 23, li at 23 -> 24,
     * halt 24 -> 25; the stall is 8 .. 23 */
    prologue(src, sizeof src, 4);
    strcat(src, " vadd.f32 a1, a2, a3, a4\n set_flag V, S, 0\n wait_flag V, S, 0\n li a5, 1\n halt\n");
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 25);
    ck_assert_uint_eq(tmh_stats(s)->core[0].stall[ISA_PIPE_S][SIM_STALL_FLAG], 23 - 8);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_queue_full)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[1024];
    /* 6 vadds of 8 cycles, queue depth 4: #1 starts at 5 (leaves the
     * queue), #2..#5 fill it at 6..9, #6 (at 10) waits until #1 ends at 13
     * frees a slot: 3 cycles of queue-full stall. V runs 6 x 8 = 48 from 5:
     * the core ends at 53 */
    prologue(src, sizeof src, 4);
    for (int i = 0; i < 6; i++)
        strcat(src, " vadd.f32 a1, a2, a3, a4\n");
    strcat(src, " halt\n");
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 53);
    const sim_timing_stats *st = tmh_stats(s);
    ck_assert_uint_eq(st->core[0].stall[ISA_PIPE_S][SIM_STALL_QUEUE_FULL], 3);
    ck_assert_uint_eq(st->core[0].busy[ISA_PIPE_V], 48);
    npu_sim_free(s);
    /* depth 8: no stall, same end */
    tmh_set(&m, "pipe.v.queue_depth=8");
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 53);
    ck_assert_uint_eq(tmh_stats(s)->core[0].stall[ISA_PIPE_S][SIM_STALL_QUEUE_FULL], 0);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_pipe_barrier_all)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[1024];
    /* pipe_barrier ALL at 6 (issue -> 7) waits for V (5..13), then costs
     * pipe_barrier_cycles 2: li at 15 -> 16, halt -> 17 */
    prologue(src, sizeof src, 4);
    strcat(src, " vadd.f32 a1, a2, a3, a4\n pipe_barrier ALL\n li a5, 1\n halt\n");
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 17);
    ck_assert_uint_eq(tmh_stats(s)->core[0].stall[ISA_PIPE_S][SIM_STALL_BARRIER], 13 - 7);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_sync_all)
{
    cfg_machine m;
    tmh_test_machine(&m);
    /* core 0 spins 2 x 20 cycles (div), core 1 none: both leave the barrier
     * at max arrival + 50. core 0: li 0->1, div 1->21, div 21->41, sync_all
     * 41->42 (drained), release at 42 + 50 = 92, halt 92 -> 93 */
    const char *src =
        "_start:\n mfsr t0, coreid\n bnez t0, skip\n div t1, t1, t0\n div t1, t1, t0\n"
        "skip:\n sync_all\n halt\n";
    npu_sim *s = tmh_load(&m, src, 2);
    /* core 0: mfsr 0->1, bnez not taken 1->2, div 2->22, div 22->42,
     * sync_all 42->43; core 1: mfsr, bnez taken 1->4, sync_all 4->5.
     * release 43 + 50 = 93; halt 93 -> 94 on both */
    ck_assert_uint_eq(tmh_cycles(s), 94);
    const sim_timing_stats *st = tmh_stats(s);
    ck_assert_uint_eq(st->core[1].cycles, 94);
    ck_assert_uint_eq(st->core[1].stall[ISA_PIPE_S][SIM_STALL_BARRIER], 93 - 5);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_deadlock)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[512];
    prologue(src, sizeof src, 4);
    strcat(src, " vadd.f32 a1, a2, a3, a4\n wait_flag MTE2, V, 1\n vadd.f32 a1, a2, a3, a4\n halt\n");
    npu_sim *s = tmh_load(&m, src, 1);
    npu_diag d = {0};
    npu_status st = tmh_run(s, NPU_MODE_PERF, 0, &d);
    ck_assert_int_eq(st, NPU_EDEADLOCK);
    ck_assert_msg(strstr(d.msg, "deadlock") && strstr(d.msg, "wait_flag") && strstr(d.msg, "V:"),
                  "report: %s", d.msg);
    ck_assert_msg(strstr(d.msg, "pc 0x30"), "report names the pc: %s", d.msg);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_barrier_deadlock)
{
    /* core 1 halts, core 0 waits at sync_all for it forever: reported, not hung */
    cfg_machine m;
    tmh_test_machine(&m);
    npu_sim *s = tmh_load(&m, "_start:\n mfsr t0, coreid\n bnez t0, out\n sync_all\nout:\n halt\n", 2);
    npu_diag d = {0};
    ck_assert_int_eq(tmh_run(s, NPU_MODE_PERF, 0, &d), NPU_EDEADLOCK);
    ck_assert_msg(strstr(d.msg, "core 0 scalar: at sync_all"), "report: %s", d.msg);
    ck_assert_msg(!strstr(d.msg, "core 1"), "core 1 ended: %s", d.msg);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_watchdog)
{
    cfg_machine m;
    tmh_test_machine(&m);
    npu_sim *s = tmh_load(&m, "_start:\nloop:\n addi t0, t0, 1\n j loop\n", 1);
    npu_diag d = {0};
    npu_status st = tmh_run(s, NPU_MODE_PERF, 1000, &d);
    ck_assert_int_eq(st, NPU_ETIMEOUT);
    ck_assert_msg(strstr(d.msg, "watchdog") && strstr(d.msg, "1000") && strstr(d.msg, "core 0"),
                  "report: %s", d.msg);
    /* the config's limit applies without --max-cycles */
    tmh_set(&m, "timing.max_cycles=500");
    npu_sim_free(s);
    s = tmh_load(&m, "_start:\nloop:\n addi t0, t0, 1\n j loop\n", 1);
    st = tmh_run(s, NPU_MODE_TIMING, 0, &d);
    ck_assert_int_eq(st, NPU_ETIMEOUT);
    ck_assert_msg(strstr(d.msg, "500"), "report: %s", d.msg);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_timing_mode_same_cycles)
{
    cfg_machine m;
    tmh_test_machine(&m);
    char src[1024];
    prologue(src, sizeof src, 4);
    strcat(src, " vadd.f32 a1, a2, a3, a4\n set_flag V, M, 0\n wait_flag V, M, 0\n"
                " vabs.f32 a1, a2, a4\n halt\n");
    npu_sim *s = tmh_load(&m, src, 1);
    uint64_t perf = tmh_cycles(s);
    npu_diag d = {0};
    ck_assert_int_eq(tmh_run(s, NPU_MODE_TIMING, 0, &d), NPU_OK);
    ck_assert_uint_eq(npu_sim_cycles(s), perf);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_determinism)
{
    cfg_machine m;
    tmh_test_machine(&m);
    const char *src =
        "_start:\n mfsr t0, coreid\n li t1, 0\n li t2, 50\n"
        "loop:\n mul t3, t1, t0\n addi t1, t1, 1\n blt t1, t2, loop\n sync_all\n halt\n";
    npu_sim *s = tmh_load(&m, src, 4);
    uint64_t c1 = tmh_cycles(s);
    sim_timing_core_stats a[4];
    memcpy(a, tmh_stats(s)->core, sizeof a);
    uint64_t c2 = tmh_cycles(s);
    ck_assert_uint_eq(c1, c2);
    ck_assert_int_eq(memcmp(a, tmh_stats(s)->core, sizeof a), 0);
    npu_sim_free(s);
}
END_TEST

struct obs_rec { int disp, exec, flagset, flagwait; uint64_t vstart, vend, rel_set, wait_seq; };
static void obs_dispatch(void *u, int core, uint64_t seq, const sim_op *op, uint64_t cycle)
{
    (void)core; (void)seq; (void)op; (void)cycle;
    ((struct obs_rec *)u)->disp++;
}
static void obs_exec(void *u, int core, int pipe, uint64_t seq, uint64_t pc, const isa_insn *in,
                     uint64_t start, uint64_t end)
{
    struct obs_rec *r = u;
    (void)core; (void)seq; (void)pc;
    r->exec++;
    if (pipe == ISA_PIPE_V && in->op == ISA_OP_VADD) {
        r->vstart = start;
        r->vend = end;
    }
}
static void obs_flag(void *u, int core, int kind, int sp, int dp, int id, uint64_t cycle,
                     uint64_t set_seq, uint64_t wait_seq)
{
    struct obs_rec *r = u;
    (void)core; (void)sp; (void)dp; (void)id; (void)cycle;
    if (kind == SIM_TM_FLAG_SET) {
        r->flagset++;
    } else {
        r->flagwait++;
        r->rel_set = set_seq;
        r->wait_seq = wait_seq;
    }
}

/* One GM -> UB move of 4096 bytes per core from a 512-aligned buffer. */
static const char *gm_src =
    "_start:\n la a1, buf\n li a2, 0\n li64 a3, 268435457\n li a4, 0\n"  /* ISA_DMA_CFG(1, 4096) */
    " mov.gm2ub a2, a1, a3, a4\n halt\n"
    ".bss\n.balign 512\nbuf:\n .space 4096\n";

START_TEST(t_gm_fixed_port)
{
    cfg_machine m;
    tmh_test_machine(&m);
    ck_assert_uint_eq((uint64_t)ISA_DMA_CFG(1, 4096), 268435457u);
    /* One core, move dispatched at 5. 8 requests of 512 B leave at the path
     * width (100 B/cycle): at +0, 5, 10, ... 35. The port serves 50 B/cycle
     * (10.24 cycles a request) from +0: the last is through at +81.92,
     * answered at ceil(81.92) + 100 = +182; the move ends after the path
     * latency: +202 -> 207. */
    npu_sim *s = tmh_load(&m, gm_src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 207);
    const sim_timing_stats *st = tmh_stats(s);
    ck_assert_uint_eq(st->core[0].gm_rd_bytes, 4096);
    ck_assert_uint_eq(st->core[0].gm_requests, 8);
    ck_assert_uint_eq(st->core[0].path_bytes[CFG_PATH_GM_UB], 4096);
    /* memory stall: everything beyond latency 20 + 41 streaming cycles */
    ck_assert_uint_eq(st->core[0].stall[ISA_PIPE_MTE2][SIM_STALL_MEMORY], 202 - 61);
    npu_sim_free(s);

    /* Two cores share the port: their 16 requests interleave (core 0
     * first at equal times), 163.84 cycles of port time. Core 0's last is
     * through at +153.6 -> answered +254 -> ends 5 + 274 = 279; core 1's at
     * +163.84 -> +264 -> 5 + 284 = 289. Each core is slower than alone. */
    s = tmh_load(&m, gm_src, 2);
    ck_assert_uint_eq(tmh_cycles(s), 289);
    st = tmh_stats(s);
    ck_assert_uint_eq(st->core[0].cycles, 279);
    ck_assert_uint_eq(st->core[1].cycles, 289);
    npu_sim_free(s);

    /* four cores: strictly slower again */
    s = tmh_load(&m, gm_src, 4);
    ck_assert_uint_gt(tmh_cycles(s), 289);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_gm_posted_write)
{
    cfg_machine m;
    tmh_test_machine(&m);
    /* UB -> GM, 4096 bytes: 8 requests leave at +0, 5, ... 35 at the path
     * width. Posted (the default): the move ends when the path has streamed
     * (+41) plus its latency 20 -> 5 + 61 = 66, and the port still carries
     * the bytes. Answered: like a read, +182 + 20 -> 207. */
    const char *src =
        "_start:\n la a1, buf\n li a2, 0\n li64 a3, 268435457\n li a4, 0\n"
        " mov.ub2gm a1, a2, a3, a4\n halt\n"
        ".bss\n.balign 512\nbuf:\n .space 4096\n";
    npu_sim *s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 66);
    ck_assert_uint_eq(tmh_stats(s)->core[0].gm_wr_bytes, 4096);
    npu_sim_free(s);
    tmh_set(&m, "timing.gm_posted_writes=false");
    s = tmh_load(&m, src, 1);
    ck_assert_uint_eq(tmh_cycles(s), 207);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_gm_hbm)
{
    /* the memory system behind the same interface: the default machine's
     * L2 + HBM. More cores, more contention, and runs repeat exactly. */
    cfg_machine m;
    cfg_default(&m);
    npu_sim *s = tmh_load(&m, gm_src, 1);
    uint64_t one = tmh_cycles(s);
    ck_assert_uint_gt(one, 5 + m.path[CFG_PATH_GM_UB].latency + 4096 / m.path[CFG_PATH_GM_UB].width);
    ck_assert_uint_eq(tmh_cycles(s), one);
    npu_sim_free(s);
    s = tmh_load(&m, gm_src, 24);
    uint64_t many = tmh_cycles(s);
    ck_assert_uint_ge(many, one);
    npu_sim_free(s);
}
END_TEST

/* Double-buffered loop: MTE2 loads tile b while V works on tile 1-b, with
 * per-buffer flags both ways. `loops` iterations of two tiles each. */
static npu_sim *dbuf_kernel(const cfg_machine *m, int loops, int vrep)
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
             " addi t0, t0, -1\n bnez t0, loop\n"
             " wait_flag V, MTE2, 0\n wait_flag V, MTE2, 1\n halt\n"
             ".bss\n.balign 512\nbuf:\n .space 4096\n",
             (uint64_t)ISA_DMA_CFG(1, 4096), vcfg(vrep), loops);
    return tmh_load(m, src, 1);
}

START_TEST(t_double_buffer)
{
    cfg_machine m;
    tmh_test_machine(&m);
    tmh_set(&m, "vector.model_bank_conflicts=false");
    /* a load takes 202 cycles on MTE2 (t_gm_fixed_port); a vadd of r
     * repeats 2r on V. In the steady state a tile costs the slower stage:
     * 8 more tiles (4 more loops) cost exactly 8 x max(202, 2r). */
    const int reps[2] = { 128, 32 };
    const uint64_t per_tile[2] = { 256, 202 };
    for (int i = 0; i < 2; i++) {
        npu_sim *s = dbuf_kernel(&m, 4, reps[i]);
        uint64_t c4 = tmh_cycles(s);
        npu_sim_free(s);
        s = dbuf_kernel(&m, 8, reps[i]);
        uint64_t c8 = tmh_cycles(s);
        npu_sim_free(s);
        ck_assert_msg(c8 - c4 == 8 * per_tile[i], "vadd x%d: 8 tiles took %" PRIu64 ", expected %" PRIu64,
                      reps[i], c8 - c4, 8 * per_tile[i]);
    }
}
END_TEST

/* Scalar GM traffic against a memory system with tiny queues: every core
 * stores, reloads and sums in a tight loop (sdg / ldg / lwg), so L2 slices
 * (or, with the L2 off, the HBM controller) refuse requests. The scalar
 * unit must stall (cause memory) and retry, never abort the run. Core c
 * uses its own 512-byte line: slot = buf + 512 c; per iteration i (N..1) it
 * stores i at slot+0, reloads it (a3 += i), loads the shared word 7 (a4 +=
 * 7) and at the end stores a3 at slot+16. */
#define SGM_N 40
static const char *sgm_src =
    "_start:\n mfsr t0, coreid\n la a1, buf\n slli t1, t0, 9\n add a2, a1, t1\n"
    " la a5, seven\n li t2, 40\n li a3, 0\n li a4, 0\n"
    "loop:\n sdg t2, 0(a2)\n ldg t3, 0(a2)\n add a3, a3, t3\n lwg t4, 0(a5)\n add a4, a4, t4\n"
    " sdg a4, 8(a2)\n addi t2, t2, -1\n bnez t2, loop\n sdg a3, 16(a2)\n halt\n"
    ".data\n.balign 8\nseven:\n .word 7\n .word 0\n"
    ".bss\n.balign 512\nbuf:\n .space 16384\n";

/* Stores only: without back-pressure the scalar unit never waits on them. */
static const char *sgm_store_src =
    "_start:\n mfsr t0, coreid\n la a1, buf\n slli t1, t0, 9\n add a2, a1, t1\n li t2, 64\n"
    "loop:\n sdg t2, 0(a2)\n sdg t2, 8(a2)\n sdg t2, 16(a2)\n sdg t2, 24(a2)\n"
    " addi t2, t2, -1\n bnez t2, loop\n halt\n"
    ".bss\n.balign 512\nbuf:\n .space 16384\n";

static uint64_t s_mem_stall(const sim_timing_stats *st)
{
    uint64_t sum = 0;
    for (int c = 0; c < st->ncores; c++)
        sum += st->core[c].stall[ISA_PIPE_S][SIM_STALL_MEMORY];
    return sum;
}

/* Run sgm_src on ncores of m, check every core's values, return cycles and
 * the S memory stall. */
static uint64_t sgm_run(const cfg_machine *m, int ncores, uint64_t *s_stall)
{
    npu_sim *s = tmh_load(m, sgm_src, ncores);
    uint64_t cyc = tmh_cycles(s);
    const sim_timing_stats *st = tmh_stats(s);
    const uint64_t sum = SGM_N * (SGM_N + 1) / 2;
    for (int c = 0; c < ncores; c++) {
        ck_assert_uint_eq(npu_sim_reg(s, c, 13), sum);            /* a3 */
        ck_assert_uint_eq(npu_sim_reg(s, c, 14), 7 * SGM_N);      /* a4 */
        uint64_t slot = npu_sim_reg(s, c, 12), v[3];              /* a2 */
        npu_diag d = {0};
        ck_assert_int_eq(npu_sim_read_gm(s, slot, v, sizeof v, &d), NPU_OK);
        ck_assert_uint_eq(v[0], 1);            /* the last i stored */
        ck_assert_uint_eq(v[1], 7 * SGM_N);
        ck_assert_uint_eq(v[2], sum);
        /* 40 x (3 loads/stores of 8 B + one 4 B lwg) + the final store */
        ck_assert_uint_eq(st->core[c].gm_rd_bytes, SGM_N * 12);
        ck_assert_uint_eq(st->core[c].gm_wr_bytes, SGM_N * 16 + 8);
        ck_assert_uint_eq(st->core[c].gm_requests, SGM_N * 4 + 1);
    }
    *s_stall = s_mem_stall(st);
    npu_sim_free(s);
    return cyc;
}

START_TEST(t_scalar_gm_backpressure)
{
    cfg_machine m;
    cfg_default(&m);
    uint64_t roomy_stall, tiny_stall, stall2;

    /* stores only, default queues: nothing refused, S never waits */
    npu_sim *s = tmh_load(&m, sgm_store_src, 24);
    uint64_t roomy = tmh_cycles(s);
    ck_assert_uint_eq(s_mem_stall(tmh_stats(s)), 0);
    npu_sim_free(s);
    uint64_t roomy_vals = sgm_run(&m, 24, &roomy_stall);

    /* one L2 slice with a one-request queue and tiny HBM queues: 24 cores
     * hammer it; the refused stores now stall S with cause memory */
    tmh_set(&m, "memory.l2.slices=1");
    tmh_set(&m, "memory.l2.size_bytes=8388608");
    tmh_set(&m, "memory.l2.queue=1");
    tmh_set(&m, "memory.controller.read_queue=2");
    tmh_set(&m, "memory.controller.write_queue=2");
    s = tmh_load(&m, sgm_store_src, 24);
    uint64_t tiny = tmh_cycles(s);
    const sim_timing_stats *st = tmh_stats(s);
    ck_assert_uint_gt(s_mem_stall(st), 0);
    ck_assert_uint_gt(tiny, roomy);
    for (int c = 0; c < 24; c++) {
        ck_assert_uint_eq(st->core[c].gm_requests, 4 * 64);
        ck_assert_uint_eq(st->core[c].gm_wr_bytes, 4 * 64 * 8);
    }
    npu_sim_free(s);

    /* loads and stores mixed: right values, more memory stall than with
     * roomy queues, and two runs identical */
    uint64_t c1 = sgm_run(&m, 24, &tiny_stall);
    uint64_t c2 = sgm_run(&m, 24, &stall2);
    ck_assert_uint_gt(tiny_stall, roomy_stall);
    ck_assert_uint_gt(c1, roomy_vals);
    ck_assert_uint_eq(c1, c2);
    ck_assert_uint_eq(tiny_stall, stall2);

    /* the L2 off: the in-order HBM port refuses while anything waits */
    tmh_set(&m, "memory.l2.enabled=false");
    c1 = sgm_run(&m, 24, &tiny_stall);
    c2 = sgm_run(&m, 24, &stall2);
    ck_assert_uint_gt(tiny_stall, 0);
    ck_assert_uint_eq(c1, c2);
    ck_assert_uint_eq(tiny_stall, stall2);
}
END_TEST

/* Every statistic of a run of src on ncores of m, once with the HBM's
 * channels sleeping to their next possible command (the default) and once
 * ticked every cycle they hold requests: the same, counter for counter. */
static void same_when_ticked(cfg_machine *m, const char *src, int ncores)
{
    sim_timing_core_stats a[24], b[24];
    uint64_t ca, cb;
    ck_assert_int_le(ncores, 24);
    for (int pass = 0; pass < 2; pass++) {
        tmh_set(m, pass ? "memory.controller.skip_idle=false" : "memory.controller.skip_idle=true");
        npu_sim *s = tmh_load(m, src, ncores);
        uint64_t cyc = tmh_cycles(s);
        const sim_timing_stats *st = tmh_stats(s);
        memcpy(pass ? b : a, st->core, (size_t)ncores * sizeof *st->core);
        *(pass ? &cb : &ca) = cyc;
        npu_sim_free(s);
    }
    ck_assert_uint_eq(ca, cb);
    for (int c = 0; c < ncores; c++)
        ck_assert_msg(memcmp(&a[c], &b[c], sizeof a[c]) == 0, "core %d: statistics differ", c);
}

START_TEST(t_idle_ticks_invisible)
{
    /* Which idle cycles the memory model skips is host bookkeeping: it must
     * not show in any result. 24 cores of data moves and of scalar GM
     * accesses on queues small enough that the memory system refuses
     * requests (the refused wait for room, not for the model's next event),
     * with the L2, with the DRAMSim3 controller structure, without the L2. */
    cfg_machine m;
    cfg_default(&m);
    same_when_ticked(&m, gm_src, 24);
    tmh_set(&m, "memory.l2.slices=1");
    tmh_set(&m, "memory.l2.size_bytes=8388608");
    tmh_set(&m, "memory.l2.queue=1");
    tmh_set(&m, "memory.controller.read_queue=2");
    tmh_set(&m, "memory.controller.write_queue=2");
    same_when_ticked(&m, gm_src, 24);
    same_when_ticked(&m, sgm_src, 24);
    tmh_set(&m, "memory.controller.cmd_queue=4");
    same_when_ticked(&m, gm_src, 24);
    tmh_set(&m, "memory.controller.cmd_queue=0");
    tmh_set(&m, "memory.l2.enabled=false");
    same_when_ticked(&m, gm_src, 24);
    same_when_ticked(&m, sgm_src, 24);
}
END_TEST

/* Racy cross-core traffic through 8 shared GM slots of 256 B: each core,
 * 24 rounds: load slot (c + r) % 8 to UB, add 1.0 to its 64 floats, store
 * to slot (5c + 3r + 1) % 8; every fourth round also a scalar ldg/sdg of
 * slot 0's first word, summed into a word of the core's own after the
 * slots. Nothing orders the cores, so what each load sees depends on the
 * order the instructions were dispatched in. */
#define RACE_BYTES 2240   /* 8 slots of 256 B, then 24 cores' 8-byte sums */
static void race_src_opt(char *src, size_t n, int scalar)
{
    snprintf(src, n,
             "_start:\n mfsr s0, coreid\n la a1, buf\n li s1, 0\n li64 a3, %" PRIu64 "\n"
             " li64 a4, %" PRIu64 "\n li a5, 0x3f800000\n li a6, 0\n li a7, 0\n li a2, 0\n"
             "loop:\n add t0, s0, s1\n andi t0, t0, 7\n slli t0, t0, 8\n add t0, a1, t0\n"
             " mov.gm2ub a6, t0, a3, a7\n set_flag MTE2, V, 0\n wait_flag MTE2, V, 0\n"
             " vadds.f32 a6, a6, a5, a4\n set_flag V, MTE3, 0\n wait_flag V, MTE3, 0\n"
             " li t1, 5\n mul t1, s0, t1\n li t2, 3\n mul t2, s1, t2\n add t1, t1, t2\n"
             " addi t1, t1, 1\n andi t1, t1, 7\n slli t1, t1, 8\n add t1, a1, t1\n"
             " mov.ub2gm t1, a6, a3, a7\n set_flag MTE3, MTE2, 0\n wait_flag MTE3, MTE2, 0\n"
             " andi t3, s1, 3\n bnez t3, skip\n%s"
             "skip:\n addi s1, s1, 1\n li t5, 24\n blt s1, t5, loop\n"
             " slli t6, s0, 3\n add t6, a1, t6\n sdg a2, 2048(t6)\n halt\n"
             ".bss\n.balign 512\nbuf:\n .space %d\n",
             (uint64_t)ISA_DMA_CFG(1, 256), vcfg(1),
             scalar ? " ldg t4, 0(a1)\n add a2, a2, t4\n addi t4, t4, 1\n sdg t4, 0(a1)\n" : "",
             RACE_BYTES);
}

static void race_src(char *src, size_t n)
{
    race_src_opt(src, n, 1);
}

static void race_watch(void *u, const sim_access_ev *ev)
{
    (void)u;
    (void)ev;
}

/* Run race_src_opt on 24 cores in perf mode with $NPUSIM_THREADS =
 * threads; with watch, an observer that sees every access (which turns
 * the deferred data work off). Returns the cycles; the slots' and sums'
 * bytes go to out[RACE_BYTES], every core's statistics to *st (NULL:
 * freed here), the batches the data worker computed to *batches (or NULL). */
static uint64_t race_exec(const cfg_machine *m, int scalar, int watch, const char *threads, uint8_t *out,
                          sim_timing_stats *st, uint64_t *batches)
{
    char src[2048];
    race_src_opt(src, sizeof src, scalar);
    npu_sim *s = tmh_load(m, src, 24);
    npu_diag d = {0};
    if (watch) {
        sim_observer o = { NULL, race_watch, NULL };
        ck_assert_int_eq(sim_add_observer(s, &o, &d), NPU_OK);
    }
    sim_timing_stats own;
    if (!st)
        st = &own;
    setenv("NPUSIM_THREADS", threads, 1);
    ck_assert_int_eq(sim_cores_reset(s, &d), NPU_OK);
    sim_timing_opts to = {0, 0, NULL};
    ck_assert_int_eq(sim_timing_run(s, &to, st, &d), NPU_OK);
    unsetenv("NPUSIM_THREADS");
    if (batches)
        *batches = s->dw_batches;
    ck_assert_int_eq(npu_sim_read_gm(s, npu_sim_reg(s, 0, 11), out, RACE_BYTES, &d), NPU_OK);
    uint64_t cyc = st->cycles;
    if (st == &own)
        sim_timing_stats_free(&own);
    npu_sim_free(s);
    return cyc;
}

static uint64_t race_run(const cfg_machine *m, int watch, uint8_t *out)
{
    return race_exec(m, 1, watch, "auto", out, NULL, NULL);
}

START_TEST(t_deferred_data_exact)
{
    /* perf mode computes unit data in per-core batches; on racy traffic
     * the GM it leaves and the cycles must be those of computing each
     * instruction at dispatch (the observed run), and the race must have
     * made the order matter at all (different from func mode's) */
    cfg_machine m;
    cfg_default(&m);
    static uint8_t a[RACE_BYTES], b[RACE_BYTES], f[RACE_BYTES];
    uint64_t ca = race_run(&m, 0, a), cb = race_run(&m, 1, b);
    ck_assert_uint_eq(ca, cb);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    char src[2048];
    race_src(src, sizeof src);
    npu_sim *s = tmh_load(&m, src, 24);
    npu_diag d = {0};
    ck_assert_int_eq(tmh_run(s, NPU_MODE_FUNC, 0, &d), NPU_OK);
    ck_assert_int_eq(npu_sim_read_gm(s, npu_sim_reg(s, 0, 11), f, RACE_BYTES, &d), NPU_OK);
    npu_sim_free(s);
    ck_assert(memcmp(a, f, sizeof a) != 0);
    float v;
    memcpy(&v, a + 4, 4);
    ck_assert(v >= 1.0f);   /* the adds reached GM */

    /* a scalar load of what another core's data move wrote, dispatched
     * later but with nothing else in between to compute it: core 1 adds
     * 1.0 to slot 0 and stores it back at once; core 0 first counts to 200,
     * then reads the slot's first word with lwg and stores it after the
     * slots. The load must see 1.0f (computing at dispatch), not 0. */
    snprintf(src, sizeof src,
             "_start:\n mfsr s0, coreid\n la a1, buf\n li64 a3, %" PRIu64 "\n li64 a4, %" PRIu64 "\n"
             " li a5, 0x3f800000\n li a6, 0\n li a7, 0\n bnez s0, one\n"
             " li t0, 200\nspin:\n addi t0, t0, -1\n bnez t0, spin\n"
             " lwg t1, 0(a1)\n sdg t1, 2048(a1)\n halt\n"
             "one:\n mov.gm2ub a6, a1, a3, a7\n set_flag MTE2, V, 0\n wait_flag MTE2, V, 0\n"
             " vadds.f32 a6, a6, a5, a4\n set_flag V, MTE3, 0\n wait_flag V, MTE3, 0\n"
             " mov.ub2gm a1, a6, a3, a7\n halt\n"
             ".bss\n.balign 512\nbuf:\n .space %d\n",
             (uint64_t)ISA_DMA_CFG(1, 256), vcfg(1), RACE_BYTES);
    s = tmh_load(&m, src, 2);
    (void)tmh_cycles(s);
    uint64_t got = 0;
    ck_assert_int_eq(npu_sim_read_gm(s, npu_sim_reg(s, 0, 11) + 2048, &got, 8, &d), NPU_OK);
    ck_assert_uint_eq(got, 0x3f800000u);
    npu_sim_free(s);
}
END_TEST

START_TEST(t_data_worker_exact)
{
    /* perf mode's data worker (sim/defer.c) computes the batches on a
     * second host thread: on racy traffic, with and without scalar GM
     * accesses among it, GM, cycles and every statistic are those of
     * computing them on the engine's thread, and the worker did compute */
    cfg_machine m;
    cfg_default(&m);
    for (int scalar = 0; scalar < 2; scalar++) {
        static uint8_t a[RACE_BYTES], b[RACE_BYTES];
        sim_timing_stats sa, sb;
        uint64_t na, nb;
        uint64_t ca = race_exec(&m, scalar, 0, "1", a, &sa, &na);
        uint64_t cb = race_exec(&m, scalar, 0, "2", b, &sb, &nb);
        ck_assert_uint_eq(ca, cb);
        ck_assert(memcmp(a, b, sizeof a) == 0);
        ck_assert_int_eq(sa.ncores, sb.ncores);
        for (int c = 0; c < sa.ncores; c++)
            ck_assert(memcmp(&sa.core[c], &sb.core[c], sizeof sa.core[c]) == 0);
        ck_assert_uint_eq(sa.events, sb.events);
        ck_assert_uint_eq(na, 0);
        ck_assert_uint_gt(nb, 0);
        sim_timing_stats_free(&sa);
        sim_timing_stats_free(&sb);
    }
}
END_TEST

START_TEST(t_gm_fault_at_dispatch)
{
    /* a data move outside GM's allocations is a fault at its dispatch in
     * timing mode too (which computes nothing), and in perf mode, with or
     * without the data worker, the same report and the same GM: core 0
     * stores to GM first, core 1's move then reads past the buffer */
    char src[1024];
    snprintf(src, sizeof src,
             "_start:\n mfsr s0, coreid\n la a1, buf\n li64 a3, %" PRIu64 "\n li a6, 0\n li a7, 0\n"
             " bnez s0, one\n li t0, 7\n sdg t0, 0(a1)\n mov.gm2ub a6, a1, a3, a7\n"
             " set_flag MTE2, MTE3, 0\n wait_flag MTE2, MTE3, 0\n mov.ub2gm a1, a6, a3, a7\n halt\n"
             "one:\n li t0, 100\nspin:\n addi t0, t0, -1\n bnez t0, spin\n"
             " addi a1, a1, 256\n mov.gm2ub a6, a1, a3, a7\n halt\n"
             ".bss\n.balign 512\nbuf:\n .space 256\n",
             (uint64_t)ISA_DMA_CFG(1, 256));
    cfg_machine m;
    cfg_default(&m);
    char msg[3][sizeof(((npu_diag *)0)->msg)];
    uint64_t word[3];
    static const char *const thr[3] = { "1", "1", "2" };
    for (int i = 0; i < 3; i++) {
        npu_sim *s = tmh_load(&m, src, 2);
        npu_diag d = {0};
        setenv("NPUSIM_THREADS", thr[i], 1);
        npu_status st = npu_sim_run(s, &(npu_run_opts){ i ? NPU_MODE_PERF : NPU_MODE_TIMING, 0, 0 }, &d);
        unsetenv("NPUSIM_THREADS");
        ck_assert_int_eq(st, NPU_EFAULT);
        ck_assert_msg(strstr(d.msg, "fault on core 1 at pc") && strstr(d.msg, "mov.gm2ub") &&
                          strstr(d.msg, "GM read [") && strstr(d.msg, "past the end of"),
                      "%s", d.msg);
        snprintf(msg[i], sizeof msg[i], "%s", d.msg);
        ck_assert_int_eq(npu_sim_read_gm(s, npu_sim_reg(s, 0, 11), &word[i], 8, &d), NPU_OK);
        npu_sim_free(s);
    }
    ck_assert_str_eq(msg[1], msg[2]);
    ck_assert_uint_eq(word[1], 7);
    ck_assert_uint_eq(word[2], 7);
}
END_TEST

START_TEST(t_observer)
{
    /* the observer sees every instruction's dispatch and, for pipes, its
     * exec interval; and the flag set that released each wait */
    cfg_machine m;
    tmh_test_machine(&m);
    char src[1024];
    prologue(src, sizeof src, 4);
    strcat(src, " vadd.f32 a1, a2, a3, a4\n set_flag V, M, 0\n wait_flag V, M, 0\n halt\n");
    npu_sim *s = tmh_load(&m, src, 1);
    npu_diag d = {0};
    ck_assert_int_eq(npu_sim_run(s, &(npu_run_opts){NPU_MODE_FUNC, 0, 0}, &d), NPU_OK);
    ck_assert_int_eq(sim_cores_reset(s, &d), NPU_OK);
    struct obs_rec rec = {0};
    sim_timing_observer o = {0};
    o.user = &rec;
    o.on_dispatch = obs_dispatch;
    o.on_exec = obs_exec;
    o.on_flag = obs_flag;
    sim_timing_opts to = {0, 0, &o};
    sim_timing_stats st;
    ck_assert_int_eq(sim_timing_run(s, &to, &st, &d), NPU_OK);
    /* 5 prologue + vadd + set + wait + halt */
    ck_assert_int_eq(rec.disp, 9);
    ck_assert_int_eq(rec.exec, 3);   /* vadd, set_flag on V, wait_flag on M */
    ck_assert_uint_eq(rec.vstart, 5);
    ck_assert_uint_eq(rec.vend, 13);
    ck_assert_int_eq(rec.flagset, 1);
    ck_assert_int_eq(rec.flagwait, 1);
    ck_assert_uint_eq(rec.rel_set, 6);   /* seq of the set_flag */
    ck_assert_uint_eq(rec.wait_seq, 7);
    sim_timing_stats_free(&st);
    npu_sim_free(s);
}
END_TEST

Suite *timing_suite(void)
{
    Suite *s = suite_create("timing");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, t_scalar_alu);
    tcase_add_test(tc, t_scalar_branch);
    tcase_add_test(tc, t_vector);
    tcase_add_test(tc, t_bank_conflict);
    tcase_add_test(tc, t_cube);
    tcase_add_test(tc, t_overlap);
    tcase_add_test(tc, t_flag);
    tcase_add_test(tc, t_flag_scalar);
    tcase_add_test(tc, t_queue_full);
    tcase_add_test(tc, t_pipe_barrier_all);
    tcase_add_test(tc, t_sync_all);
    tcase_add_test(tc, t_deadlock);
    tcase_add_test(tc, t_barrier_deadlock);
    tcase_add_test(tc, t_watchdog);
    tcase_add_test(tc, t_timing_mode_same_cycles);
    tcase_add_test(tc, t_determinism);
    tcase_add_test(tc, t_gm_fixed_port);
    tcase_add_test(tc, t_gm_posted_write);
    tcase_add_test(tc, t_gm_hbm);
    tcase_add_test(tc, t_double_buffer);
    tcase_add_test(tc, t_observer);
    tcase_add_test(tc, t_scalar_gm_backpressure);
    tcase_add_test(tc, t_idle_ticks_invisible);
    tcase_add_test(tc, t_deferred_data_exact);
    tcase_add_test(tc, t_data_worker_exact);
    tcase_add_test(tc, t_gm_fault_at_dispatch);
    suite_add_tcase(s, tc);
    return s;
}
