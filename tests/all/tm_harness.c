/* tm_harness.c — see tm_harness.h. */
#include "tests/all/tm_harness.h"

#include <string.h>

#include "frontend/asm.h"
#include "frontend/elf.h"

void tmh_set(cfg_machine *m, const char *kv)
{
    npu_diag d = {0};
    ck_assert_msg(cfg_set_kv(m, kv, &d) == NPU_OK, "cfg_set %s: %s", kv, d.msg);
}

void tmh_test_machine(cfg_machine *m)
{
    static const char *const kv[] = {
        "chip.cores=4", "chip.clock_ghz=1",
        "scalar.issue_cycles=1", "scalar.dispatch_cycles=1", "scalar.branch_taken_penalty=2",
        "scalar.load_latency=4", "scalar.mul_latency=3", "scalar.div_latency=20",
        "pipe.v.queue_depth=4", "pipe.m.queue_depth=4", "pipe.mte1.queue_depth=4",
        "pipe.mte2.queue_depth=4", "pipe.mte3.queue_depth=4", "pipe.fix.queue_depth=4",
        "sync.flag_latency=10", "sync.pipe_barrier_cycles=2", "sync.core_barrier_latency=50",
        "cube.startup_cycles=5", "cube.min_cycles=0", "cube.f16.cycles_per_fractal=1",
        "vector.startup_cycles=3", "vector.cpr.binary.f32=2", "vector.cpr.unary.f32=1",
        "vector.cpr.cast.f32=1", "vector.cast_to.f16.f32=0.5", "vector.cast_to.bf16.f32=0",
        "vector.bank_conflict_cycles=1", "vector.bank_group_conflict_cycles=1",
        "path.gm_ub.width=100", "path.gm_ub.latency=20",
        "path.ub_gm.width=100", "path.ub_gm.latency=20",
        "path.l1_l0a.width=256", "path.l1_l0a.latency=10",
        "timing.memory_model=fixed", "timing.gm_fixed_latency=100",
        "timing.gm_fixed_bytes_per_cycle=50", "timing.gm_request_bytes=512",
        "path.gm_ub.min_cycles=0", "path.ub_gm.min_cycles=0", "path.l1_l0a.min_cycles=0",
    };
    cfg_default(m);
    for (size_t i = 0; i < NPU_ARRAY_LEN(kv); i++)
        tmh_set(m, kv[i]);
}

npu_sim *tmh_load(const cfg_machine *m, const char *src, int ncores)
{
    npu_diag d = {0};
    asm_output o;
    memset(&o, 0, sizeof o);
    npu_status st = asm_assemble_mem(src, strlen(src), "test.s", NULL, &o, &d);
    ck_assert_msg(st == NPU_OK, "asm: %s", d.msg);
    npu_buf b = {0};
    st = elf_write_mem(&o, &b, &d);
    ck_assert_msg(st == NPU_OK, "elf: %s", d.msg);
    asm_output_free(&o);
    npu_sim *s = NULL;
    st = npu_sim_new(&s, m, &d);
    ck_assert_msg(st == NPU_OK, "sim_new: %s", d.msg);
    st = npu_sim_load_elf_mem(s, b.data, b.len, "test.elf", &d);
    ck_assert_msg(st == NPU_OK, "load: %s", d.msg);
    npu_buf_free(&b);
    st = npu_sim_set_cores(s, ncores, &d);
    ck_assert_msg(st == NPU_OK, "cores: %s", d.msg);
    return s;
}

npu_status tmh_run(npu_sim *s, npu_mode mode, uint64_t max_cycles, npu_diag *d)
{
    npu_run_opts o = {mode, max_cycles, 0};
    return npu_sim_run(s, &o, d);
}

uint64_t tmh_cycles(npu_sim *s)
{
    npu_diag d = {0};
    npu_status st = tmh_run(s, NPU_MODE_PERF, 0, &d);
    ck_assert_msg(st == NPU_OK, "run: %s", d.msg);
    return npu_sim_cycles(s);
}

const sim_timing_stats *tmh_stats(npu_sim *s)
{
    ck_assert_ptr_nonnull(s->tstats);
    return s->tstats;
}
