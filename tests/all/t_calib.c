/* t_calib.c — holds the default machine to the calibration it achieves
 * against the 910B1 per-instruction measurements (sim/calib.h,
 * docs/fidelity.md). The reference file lives outside the repository
 * ($NPU_ROOT/../shared/reference/); without it the test says so and passes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "frontend/config.h"
#include "sim/calib.h"

/* What `bench-calib` reports for the default machine (docs/fidelity.md):
 * judged points and how many are within the class bound. A change that
 * loses a point fails here; one that gains should raise the number. */
static const struct { sim_calib_class c; size_t judged, within; } expect[] = {
    { SIM_CAL_MMAD, 64, 64 },
    { SIM_CAL_VEC, 1765, 1695 },
    { SIM_CAL_MOV, 257, 254 },
};

static const char *ref_path(char *buf, size_t n)
{
    char dir[3000];
    snprintf(buf, n, "%s/ascend910b-measured.json", npu_reference_dir(dir, sizeof dir));
    return buf;
}

START_TEST(t_calibration_bounds)
{
    char path[4096];
    ref_path(path, sizeof path);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "calib: %s not found: calibration check skipped\n", path);
        return;
    }
    cfg_machine m;
    cfg_default(&m);
    sim_calib_result r;
    npu_diag d = {0};
    ck_assert_msg(sim_calib_run(&m, path, 0, &r, &d) == NPU_OK, "sweep: %s", d.msg);
    size_t judged[SIM_CAL__COUNT] = {0}, within[SIM_CAL__COUNT] = {0};
    double worst_mmad = 0;
    for (size_t i = 0; i < r.n; i++) {
        const sim_calib_point *p = &r.p[i];
        ck_assert_msg(isfinite(p->model) && p->model > 0, "%s %s: model %g", p->table, p->x, p->model);
        if (!p->judged)
            continue;
        judged[p->cls]++;
        within[p->cls] += fabs(p->err) <= sim_calib_bound(p->cls) + 1e-12;
        if (p->cls == SIM_CAL_MMAD && fabs(p->err) > worst_mmad)
            worst_mmad = fabs(p->err);
    }
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        ck_assert_msg(judged[expect[i].c] == expect[i].judged, "%s: %zu points judged, expected %zu",
                      sim_calib_class_name(expect[i].c), judged[expect[i].c], expect[i].judged);
        ck_assert_msg(within[expect[i].c] >= expect[i].within,
                      "%s: %zu of %zu points within %.0f %%, expected at least %zu",
                      sim_calib_class_name(expect[i].c), within[expect[i].c], judged[expect[i].c],
                      100 * sim_calib_bound(expect[i].c), expect[i].within);
    }
    ck_assert_msg(worst_mmad <= 0.05, "mmad worst error %.1f %%", 100 * worst_mmad);
    sim_calib_free(&r);
}
END_TEST

START_TEST(t_calibration_missing_file)
{
    cfg_machine m;
    cfg_default(&m);
    sim_calib_result r;
    npu_diag d = {0};
    ck_assert_int_ne(sim_calib_run(&m, "/nonexistent/ref.json", 0, &r, &d), NPU_OK);
    ck_assert_msg(d.msg[0], "a message");
}
END_TEST

Suite *calib_suite(void)
{
    Suite *s = suite_create("calib");
    TCase *tc = tcase_create("910b1");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, t_calibration_bounds);
    tcase_add_test(tc, t_calibration_missing_file);
    suite_add_tcase(s, tc);
    return s;
}
