/* cmd_check.c — `npusim check`: run a kernel as `npusim run` would (same
 * launch parsing and argument binding) under the checker (sim/check.h) and
 * report every finding. Exit status: 0 clean, 1 findings, 2 bad input. */
#include "sim/check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/launch.h"
#include "frontend/npy.h"
#include "sim/cmd_common.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: npusim check [--tool memcheck,racecheck,initcheck,synccheck|all] [--json FILE]\n"
        "                    [--junit FILE] KERNEL.elf|LAUNCH.json [run options]\n"
        "\n"
        "Runs the kernel (deterministically, perf mode unless --mode says otherwise) and\n"
        "reports every finding with core, pipe(s), pc(s), instruction(s), symbol, address\n"
        "range and cycle. Findings at the same pcs are grouped with a count. docs/checks.md.\n"
        "\n"
        "  --tool LIST    tools to run (default all): memcheck (out of bounds, misaligned,\n"
        "                 cross-core overwrite), racecheck (unordered accesses of different\n"
        "                 pipes or cores), initcheck (reads of bytes never written),\n"
        "                 synccheck (deadlock, flag set twice, left set, sync_all mismatch)\n"
        "  --json FILE    write the findings as JSON\n"
        "  --junit FILE   write JUnit XML (one testcase per tool)\n"
        "  -q, --quiet    print only findings and the summary\n"
        "  --max-insns N  instruction watchdog per core\n"
        "  run options    as npusim run: --arg, --inout, --out, --expect (numerics), --rtol,\n"
        "                 --atol, --cores, --mode, --entry, --config, --set, --max-cycles\n"
        "\n"
        "environment: " SIM_CMD_PROGRESS_HELP
        "\n"
        "exit status: 0 clean, 1 findings (or an output mismatch), 2 bad input\n");
}

static npu_mode mode_of(launch_mode m)
{
    switch (m) {
    case LAUNCH_MODE_FUNC: return NPU_MODE_FUNC;
    case LAUNCH_MODE_TIMING: return NPU_MODE_TIMING;
    default: return NPU_MODE_PERF;
    }
}

int sim_cmd_check(int argc, char **argv)
{
    launch_desc l;
    memset(&l, 0, sizeof l);
    npu_diag d;
    npu_diag_clear(&d);
    uint64_t max_insns = 0;
    int quiet = 0, tools = SIM_CHK_ALL;
    const char *json = NULL, *junit = NULL;
    int i = 1;
    while (i < argc) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            launch_free(&l);
            return 0;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
            i++;
            continue;
        }
        static const char *const vopts[] = { "--tool", "--json", "--junit", "--max-insns" };
        const char *opt = NULL;
        int step = 0;
        for (size_t k = 0; k < sizeof vopts / sizeof vopts[0] && !opt; k++)
            if (sim_cmd_opt(argc, argv, i, NULL, vopts[k], &v, &step))
                opt = vopts[k];
        if (opt) {
            if (!v) {
                fprintf(stderr, "npusim check: %s needs a value\n", a);
                launch_free(&l);
                return 2;
            }
            i += step;
            if (!strcmp(opt, "--tool")) {
                tools = sim_chk_parse_tools(v, &d);
                if (tools < 0) {
                    fprintf(stderr, "npusim check: %s\n", d.msg);
                    launch_free(&l);
                    return 2;
                }
            } else if (!strcmp(opt, "--json")) {
                json = v;
            } else if (!strcmp(opt, "--junit")) {
                junit = v;
            } else if (npu_parse_u64(v, &max_insns) || max_insns == 0) {
                fprintf(stderr, "npusim check: --max-insns: expected a positive integer, got '%s'\n",
                        v);
                launch_free(&l);
                return 2;
            }
            continue;
        }
        if (sim_cmd_launch_arg("check", &l, argc, argv, &i, &d))
            return 2;
    }
    if (!l.kernel) {
        fprintf(stderr, "npusim check: no kernel given (see npusim check --help)\n");
        launch_free(&l);
        return 2;
    }
    npu_sim *s = NULL;
    sim_chk *c = NULL;
    int rc = 2;
    npu_status st = sim_cmd_setup(&l, NULL, &s, &d);
    if (!st)
        st = sim_chk_new(&c, s, (unsigned)tools, &d);
    if (st) {
        fprintf(stderr, "npusim check: %s\n", d.msg);
        goto out;
    }
    npu_run_opts ro = {mode_of(l.mode), l.max_cycles, max_insns};
    int ran_ok = 0;
    sim_cmd_progress(s, "npusim check");
    st = sim_chk_run(c, &ro, &ran_ok, &d);
    sim_cmd_progress_end();
    if (st) {
        fprintf(stderr, "npusim check: %s\n", d.msg);
        goto out;
    }
    /* numerics, as npusim run --expect (nothing to compare after a fault or
     * in timing mode, which computes no data) */
    for (size_t k = 0; ran_ok && ro.mode != NPU_MODE_TIMING && k < l.nexpects; k++) {
        const launch_expect *e = &l.expects[k];
        npy_tensor got, want;
        memset(&got, 0, sizeof got);
        memset(&want, 0, sizeof want);
        int pass = 0;
        st = npy_load(e->file, &want, &d);
        if (!st)
            st = npu_sim_get_output(s, e->name, &got, &d);
        if (!st)
            st = sim_chk_add_numerics(c, e->name, &got, &want, e->rtol, e->atol, &pass, &d);
        npy_free(&got);
        npy_free(&want);
        if (st) {
            fprintf(stderr, "npusim check: --expect %s=%s: %s\n", e->name, e->file, d.msg);
            goto out;
        }
        if (!quiet)
            printf("%s: %s against %s\n", e->name, pass ? "pass" : "FAIL", e->file);
    }
    npu_buf b = {0};
    if (!quiet)
        npu_buf_printf(&b, "%s: %s mode on %d core%s, %" PRIu64 " instructions, %" PRIu64
                       " cycles\n", l.kernel, launch_mode_name(l.mode), s->ncores,
                       s->ncores == 1 ? "" : "s", npu_sim_insns(s, -1), npu_sim_cycles(s));
    sim_chk_report_text(c, &b);
    if (b.len)
        fwrite(b.data, 1, b.len, stdout);
    npu_buf_free(&b);
    if (json && (st = sim_chk_write_json(c, json, &d))) {
        fprintf(stderr, "npusim check: --json: %s\n", d.msg);
        goto out;
    }
    if (junit && (st = sim_chk_write_junit(c, junit, &d))) {
        fprintf(stderr, "npusim check: --junit: %s\n", d.msg);
        goto out;
    }
    rc = sim_chk_nfindings(c) || sim_chk_dropped(c) ? 1 : 0;
out:
    sim_chk_free(c);
    npu_sim_free(s);
    launch_free(&l);
    fflush(stdout);
    return rc;
}
