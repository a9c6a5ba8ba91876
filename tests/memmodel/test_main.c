/* tests/memmodel/test_main.c — runs every memmodel suite. */
#include <stdlib.h>
#include <string.h>

#include "memmodel/mem_int.h"
#include "tests/memmodel/tmem.h"

void tmem_check_bad_log(const mem_config *c)
{
    mem_cmd_rec log[3] = {
        { .t = 10, .row = 5, .chan = 0, .cmd = MC_ACT, .pc = 0, .bg = 0, .bank = 0 },
        { .t = 13, .row = 5, .chan = 0, .cmd = MC_RD,  .pc = 0, .bg = 0, .bank = 0 },
        { .t = 20, .row = 9, .chan = 0, .cmd = MC_RD,  .pc = 0, .bg = 1, .bank = 4 },
    };
    uint64_t v = 0;
    npu_diag d = { 0 };
    ck_assert_int_eq(mem_check_run(c, log, 3, &v, &d), NPU_EINVAL);
    ck_assert_uint_eq(v, 2);        /* RD too soon after ACT; RD to a closed bank */
    ck_assert_ptr_nonnull(strstr(d.msg, "tRCDRD"));
}

int main(void)
{
    SRunner *sr = srunner_create(tmem_config_suite());
    srunner_add_suite(sr, tmem_hbm_suite());
    srunner_add_suite(sr, tmem_sys_suite());
    srunner_add_suite(sr, tmem_hbm2_suite());
    srunner_add_suite(sr, tmem_ub_suite());
    srunner_add_suite(sr, tmem_robust_suite());
    srunner_add_suite(sr, tmem_calib_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
