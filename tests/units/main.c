/* main.c — runner of the unit suites (vector, cube, data moves, 2:4
 * sparsity); the list is UNITS_SUITES in ut.h. */
#include "tests/units/ut.h"

#include <stdlib.h>

int main(void)
{
    SRunner *sr = NULL;
#define ADD_SUITE(fn)                      \
    if (!sr)                               \
        sr = srunner_create(fn());         \
    else                                   \
        srunner_add_suite(sr, fn());
    UNITS_SUITES(ADD_SUITE)
#undef ADD_SUITE
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
