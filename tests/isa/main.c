/* main.c — runner of the isa Check suites. */
#include <check.h>
#include <stdlib.h>

Suite *isa_table_suite(void);
Suite *isa_codec_suite(void);
Suite *isa_calq_suite(void);

int main(void)
{
    SRunner *sr = srunner_create(isa_table_suite());
    srunner_add_suite(sr, isa_codec_suite());
    srunner_add_suite(sr, isa_calq_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
