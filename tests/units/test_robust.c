/* test_robust.c — random instructions with random register values through
 * every unit: each must return a status (OK, or a fault with a message),
 * never crash or touch memory outside the buffers (run under ASan). */
#include "tests/units/ut.h"

#include <stdio.h>

/* A register value: mostly plausible (small, aligned, packed configs with
 * small fields), sometimes extreme. */
static uint64_t rnd_reg(npu_rng *r)
{
    uint64_t x = npu_rng_next(r);
    switch (x % 8) {
    case 0: return npu_rng_next(r);                              /* anything */
    case 1: return (npu_rng_next(r) % 4096) * 32;                /* an aligned address */
    case 2: return UT_GM_BASE + (npu_rng_next(r) % 8192) * 32;  /* a GM address */
    case 3: {                                                    /* small fields in every byte */
        uint64_t v = 0;
        for (int b = 0; b < 8; b++)
            v |= (npu_rng_next(r) % 5) << (8 * b);
        return v;
    }
    case 4: {                                                    /* small 16-bit fields */
        uint64_t v = 0;
        for (int b = 0; b < 4; b++)
            v |= (npu_rng_next(r) % 70) << (16 * b);
        return v;
    }
    case 5: return ~0ull - (npu_rng_next(r) % 64);
    case 6: return npu_rng_next(r) % 3;
    default: return ISA_DMA_CFG(1 + npu_rng_next(r) % 4, 32 * (1 + npu_rng_next(r) % 16));
    }
}

START_TEST(t_random_instructions)
{
    ut *u = ut_new();
    npu_rng r = {0xfeed};
    int ok = 0, fault = 0;
    for (int it = 0; it < 20000; it++) {
        isa_op op = (isa_op)(1 + npu_rng_next(&r) % (ISA_OP_COUNT - 1));
        if (!sim_unit_of(op))
            continue;
        const isa_info *info = isa_info_of(op);
        /* a legal dtype (pair) and modifier for the row, as the decoder guarantees */
        int dts[16], n = 0, dts2[16], n2 = 0;
        for (int dt = 0; dt < ISA_DT_COUNT; dt++) {
            if (info->dtypes & (1u << dt))
                dts[n++] = dt;
            if (info->dtypes2 & (1u << dt))
                dts2[n2++] = dt;
        }
        int dt = n ? dts[npu_rng_next(&r) % (uint64_t)n] : 0, dt2 = n2 ? dts2[npu_rng_next(&r) % (uint64_t)n2] : 0;
        int mod = (int)(npu_rng_next(&r) % 16);
        isa_insn in = ut_insn(op, dt, dt2, mod);
        for (int k = 1; k <= 5; k++)
            u->x[k] = rnd_reg(&r);
        u->vm.counter_mode = (int)(npu_rng_next(&r) % 2);
        u->vm.count = npu_rng_next(&r) % 20000;
        u->vm.bits[0] = npu_rng_next(&r);
        u->vm.bits[1] = npu_rng_next(&r);
        u->ctx.nodata = npu_rng_next(&r) % 8 == 0;
        npu_status st = ut_run(u, &in);
        ck_assert_msg(st == NPU_OK || st == NPU_EFAULT, "%s: status %d: %s", info->mnemonic, st, u->d.msg);
        if (st)
            ck_assert_msg(u->d.msg[0], "%s: fault without a message", info->mnemonic);
        ok += st == NPU_OK;
        fault += st != NPU_OK;
    }
    /* both outcomes are exercised */
    ck_assert_int_gt(ok, 50);
    ck_assert_int_gt(fault, 500);
    ut_free(u);
}
END_TEST

Suite *robust_suite(void)
{
    Suite *s = suite_create("robust");
    TCase *tc = tcase_create("robust");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_random_instructions);
    suite_add_tcase(s, tc);
    return s;
}
