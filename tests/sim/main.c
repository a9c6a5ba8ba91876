/* main.c — runner of the sim core's Check suites (see suites.h). */
#include "tests/sim/suites.h"

#include <stdlib.h>

int main(void)
{
    SRunner *sr = NULL;
#define ADD_SUITE(fn)                      \
    if (!sr)                               \
        sr = srunner_create(fn());         \
    else                                   \
        srunner_add_suite(sr, fn());
    SIM_SUITES(ADD_SUITE)
#undef ADD_SUITE
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
