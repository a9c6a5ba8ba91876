/* bench/calib.c — BUILD/bin/bench-calib: the calibration sweeps of the
 * timing model against the 910B1 per-instruction measurements (sim/calib.h).
 *
 *   bench-calib [--ref FILE] [--config FILE] [--set k=v ...] [--markdown] [--all]
 *               [--only mmad,vec,mov]
 *
 * Prints model vs measurement per point (cycles per instruction) and a
 * summary per instruction class: points judged (910B1 tables), points within
 * the bound (mmad 5 %, vector and data moves 10 %), worst error. --markdown
 * writes the tables of docs/fidelity.md; --all also lists every point of the
 * informational (other chip) tables. Exit 0 always when the sweep ran (the
 * bounds are the Check test's job), 2 on bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/config.h"
#include "sim/calib.h"

static void usage(void)
{
    fprintf(stderr, "usage: bench-calib [--ref FILE] [--config FILE] [--set k=v ...] "
                    "[--markdown] [--all] [--only mmad,vec,mov]\n");
}

int main(int argc, char **argv)
{
    const char *ref = NULL, *cfgfile = NULL;
    int md = 0, all = 0;
    unsigned classes = 0;
    cfg_machine m;
    npu_diag d = { 0 };
    cfg_default(&m);
    const char *sets[64];
    int nsets = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ref") && i + 1 < argc) ref = argv[++i];
        else if (!strcmp(argv[i], "--config") && i + 1 < argc) cfgfile = argv[++i];
        else if (!strcmp(argv[i], "--set") && i + 1 < argc && nsets < 64) sets[nsets++] = argv[++i];
        else if (!strcmp(argv[i], "--markdown")) md = 1;
        else if (!strcmp(argv[i], "--all")) all = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            const char *w = argv[++i];
            for (int c = 0; c < SIM_CAL__COUNT; c++)
                if (strstr(w, sim_calib_class_name(c)))
                    classes |= 1u << c;
        }
        else { usage(); return 2; }
    }
    if (cfgfile && cfg_load_file(&m, cfgfile, &d)) {
        fprintf(stderr, "bench-calib: %s\n", d.msg);
        return 2;
    }
    for (int i = 0; i < nsets; i++)
        if (cfg_set_kv(&m, sets[i], &d)) {
            fprintf(stderr, "bench-calib: --set %s: %s\n", sets[i], d.msg);
            return 2;
        }
    char defref[4096];
    if (!ref) {
        char dir[4000];
        snprintf(defref, sizeof defref, "%s/ascend910b-measured.json", npu_reference_dir(dir, sizeof dir));
        ref = defref;
    }
    sim_calib_result r;
    if (sim_calib_run(&m, ref, classes, &r, &d)) {
        fprintf(stderr, "bench-calib: %s\n", d.msg);
        return 2;
    }
    /* per-table summary */
    const char *cur = "";
    if (md)
        printf("| table | points | within bound | worst error | at |\n|---|---:|---:|---:|---|\n");
    size_t judged[SIM_CAL__COUNT] = { 0 }, ok[SIM_CAL__COUNT] = { 0 };
    double worst[SIM_CAL__COUNT] = { 0 };
    for (size_t i = 0; i < r.n; i = i) {
        size_t j = i, n = 0, in = 0;
        double w = 0;
        const char *wx = "";
        cur = r.p[i].table;
        for (; j < r.n && !strcmp(r.p[j].table, cur); j++) {
            const sim_calib_point *p = &r.p[j];
            n++;
            int good = fabs(p->err) <= sim_calib_bound(p->cls) + 1e-12;
            in += good;
            if (fabs(p->err) > fabs(w)) { w = p->err; wx = p->x; }
            if (p->judged) {
                judged[p->cls]++;
                ok[p->cls] += good;
                if (fabs(p->err) > fabs(worst[p->cls])) worst[p->cls] = p->err;
            }
            if (!md && (p->judged || all))
                printf("%-44s %-18s measured %9.2f model %9.2f  %+6.1f%%%s\n", p->table, p->x,
                       p->measured, p->model, 100 * p->err, good ? "" : "  !");
        }
        if (md)
            printf("| %s%s | %zu | %zu | %+.1f %% | %s |\n", cur, r.p[i].judged ? "" : " (not judged)",
                   n, in, 100 * w, wx);
        i = j;
    }
    printf(md ? "\n| class | judged points | within bound | bound | worst |\n|---|---:|---:|---:|---:|\n" : "\nsummary (910B1 tables):\n");
    for (int c = 0; c < SIM_CAL__COUNT; c++)
        printf(md ? "| %s | %zu | %zu | %.0f %% | %+.1f %% |\n" : "  %-5s judged %zu, within bound %zu (%.0f %%), worst %+.1f %%\n",
               sim_calib_class_name(c), judged[c], ok[c], 100 * sim_calib_bound(c), 100 * worst[c]);
    if (md)
        printf("\n| table not swept | why |\n|---|---|\n");
    else
        printf("not swept:\n");
    for (size_t i = 0; i < r.nskip; i++)
        printf(md ? "| %s | %s |\n" : "  %-44s %s\n", r.skip[i].table, r.skip[i].why);
    sim_calib_free(&r);
    return 0;
}
