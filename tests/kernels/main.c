/* main.c — runner of the kernels part's Check suites: the golden-reference
 * tool (kernels/ref/). The kernels themselves are tested end to end by
 * tests/e2e/t_kernel_*.sh. */
#include <check.h>
#include <stdlib.h>

Suite *ref_suite(void);

int main(void)
{
    SRunner *sr = srunner_create(ref_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
