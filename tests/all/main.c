/* tests/all — cross-part Check suites that link the whole library (the
 * timing engine's suite and the calibration check). One runner. */
#include <check.h>
#include <stdlib.h>

Suite *timing_suite(void);
Suite *calib_suite(void);
Suite *record_suite(void);

int main(void)
{
    SRunner *sr = srunner_create(timing_suite());
    srunner_add_suite(sr, calib_suite());
    srunner_add_suite(sr, record_suite());
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
