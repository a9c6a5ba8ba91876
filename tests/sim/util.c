/* util.c — helpers of the sim core tests: kernels from assembler text. */
#include "tests/sim/suites.h"

#include <string.h>

#include "frontend/elf.h"

npu_status t_load_src(npu_sim *s, const char *src, npu_diag *d)
{
    asm_output o;
    npu_status st = asm_assemble_mem(src, strlen(src), "t.s", NULL, &o, d);
    if (st) {
        if (o.nmsgs)
            npu_errf(d, st, "t.s:%d: %s", o.msgs[0].line, o.msgs[0].msg);
        asm_output_free(&o);
        return st;
    }
    npu_buf b = {0};
    st = elf_write_mem(&o, &b, d);
    asm_output_free(&o);
    if (!st)
        st = npu_sim_load_elf_mem(s, b.data, b.len, "t.elf", d);
    npu_buf_free(&b);
    return st;
}

npu_sim *t_sim_src_cfg(const char *src, int cores, const cfg_machine *cfg)
{
    npu_sim *s = NULL;
    npu_diag d;
    ck_assert_int_eq(npu_sim_new(&s, cfg, &d), NPU_OK);
    npu_status st = t_load_src(s, src, &d);
    ck_assert_msg(st == NPU_OK, "load: %s", d.msg);
    ck_assert_int_eq(npu_sim_set_cores(s, cores, &d), NPU_OK);
    return s;
}

npu_sim *t_sim_src(const char *src, int cores) { return t_sim_src_cfg(src, cores, NULL); }

npu_status t_run(npu_sim *s, npu_diag *d)
{
    npu_run_opts o = {NPU_MODE_FUNC, 0, 0};
    npu_diag_clear(d);
    return npu_sim_run(s, &o, d);
}

void t_run_ok(npu_sim *s)
{
    npu_diag d;
    npu_status st = t_run(s, &d);
    ck_assert_msg(st == NPU_OK, "run failed: %s", d.msg);
}

uint64_t t_reg(npu_sim *s, int core, const char *name)
{
    int r = isa_reg_from_name(name);
    ck_assert_int_ge(r, 0);
    return npu_sim_reg(s, core, r);
}
