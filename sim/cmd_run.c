/* cmd_run.c — `npusim run`: launch a kernel (flags or a launch file, parsed
 * by frontend/launch.h), bind its arguments, run it, write the outputs and
 * check them against golden tensors. Exit status: 0 every check passed,
 * 1 an output mismatched, 2 bad input or a fault of the kernel. */
#include "sim/sim_int.h" /* first: frontend/config.h wants the dtype enum before isa.h */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/launch.h"
#include "frontend/npy.h"
#include "isa/isa_fp.h"
#include "sim/timing.h"
#include "sim/cmd_common.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: npusim run KERNEL.elf [options]\n"
        "       npusim run LAUNCH.json [options]   (options override the file)\n"
        "\n"
        "Runs the kernel SPMD on N cores, writes its outputs and checks them.\n"
        "Arguments are positional, in the order given; the first 8 arrive in a0..a7\n"
        "and all of them in the parameter block (special register args); see\n"
        "docs/running.md.\n"
        "\n"
        "options:\n"
        "  --arg NAME=FILE.npy         an input tensor (copied into its own GM allocation)\n"
        "  --arg NAME=VALUE            a scalar: integer (123, -1, 0x10) or float (1.5: f32 bits)\n"
        "  --inout NAME=FILE.npy[:SAVE.npy]  a tensor read and written (saved if SAVE given)\n"
        "  --out NAME=FILE.npy:DTYPE[D0,D1,...]  an output tensor, zero-filled, saved to FILE\n"
        "  --out NAME=DTYPE[D0,...]    an output tensor that is checked but not saved\n"
        "  --expect NAME=REF.npy       check output NAME against REF.npy\n"
        "  --rtol X  --atol Y          tolerances: mismatch when |out-ref| > atol + rtol*|ref|\n"
        "                              (defaults %g and %g, numpy.allclose's)\n"
        "  --cores N                   cores of the launch (default: the machine's chip.cores)\n"
        "  --mode func|perf|timing     func: architectural state only; perf (default):\n"
        "                              functional + timing; timing: timing without data\n"
        "  --entry SYMBOL              start at this .text symbol instead of the ELF entry\n"
        "  --config FILE               machine config (default: the embedded default machine)\n"
        "  --set KEY=VALUE             override one config key (repeatable)\n"
        "  --max-cycles N              perf/timing watchdog (default: timing.max_cycles)\n"
        "  --max-insns N               instruction watchdog per core (default %llu)\n"
        "  -q, --quiet                 print only mismatches and errors\n"
        "  -h, --help                  this help\n"
        "\n"
        "environment: NPUSIM_THREADS=N|auto  host threads of a perf run (default auto: 2 on a\n"
        "                              multi-CPU host, the unit data computed beside the timing\n"
        "                              engine; 1: one thread); results are the same either way\n"
        "             " SIM_CMD_PROGRESS_HELP
        "\n"
        "exit status: 0 all outputs match, 1 a mismatch, 2 bad input or a kernel fault\n",
        LAUNCH_DEFAULT_RTOL, LAUNCH_DEFAULT_ATOL, (unsigned long long)NPU_DEFAULT_MAX_INSNS);
}

static npu_mode mode_of(launch_mode m)
{
    switch (m) {
    case LAUNCH_MODE_FUNC: return NPU_MODE_FUNC;
    case LAUNCH_MODE_TIMING: return NPU_MODE_TIMING;
    default: return NPU_MODE_PERF;
    }
}

/* Bind every launch argument in order (shared with npusim check, sim/check.h). */
npu_status sim_run_bind_args(npu_sim *s, const launch_desc *l, npu_diag *d)
{
    for (size_t i = 0; i < l->nargs; i++) {
        const launch_arg *a = &l->args[i];
        npu_status st = NPU_OK;
        switch (a->kind) {
        case LAUNCH_ARG_IN:
        case LAUNCH_ARG_INOUT: {
            npy_tensor t;
            st = npy_load(a->file, &t, d);
            if (st)
                return st;
            st = npu_sim_bind_tensor(s, a->name, &t, a->kind == LAUNCH_ARG_IN ? NPU_IN : NPU_INOUT,
                                     d);
            npy_free(&t);
            if (st) /* name the file: the binding error alone says only what is wrong */
                npu_diag_prefix(d, "%s (argument %s)", a->file, a->name);
            break;
        }
        case LAUNCH_ARG_OUT: {
            int64_t shape[LAUNCH_MAX_DIMS];
            for (int k = 0; k < a->ndim; k++)
                shape[k] = (int64_t)a->shape[k];
            st = npu_sim_bind_output(s, a->name, a->dtype, a->ndim, shape, d);
            break;
        }
        case LAUNCH_ARG_SCALAR:
            if (a->is_float && a->dtype >= 0 && a->dtype != ISA_DT_F32 &&
                isa_dtype_kind((isa_dtype)a->dtype) == 'f') {
                /* a float scalar of another float dtype: its bits in that
                 * dtype, zero-extended (what vadds.f16 etc. expect in rs2) */
                uint32_t bits = isa_fp_from_double((isa_dtype)a->dtype, a->fval, ISA_RM_RNE, 0);
                st = npu_sim_bind_int(s, a->name, (int64_t)bits, d);
            } else {
                st = a->is_float ? npu_sim_bind_float(s, a->name, a->fval, d)
                                 : npu_sim_bind_int(s, a->name, a->ival, d);
            }
            break;
        }
        if (st)
            return st;
    }
    return NPU_OK;
}

/* Check every expectation; returns 0 all pass, 1 a mismatch, 2 an error. */
static int check_expects(npu_sim *s, const launch_desc *l, int quiet)
{
    int rc = 0;
    for (size_t i = 0; i < l->nexpects; i++) {
        const launch_expect *e = &l->expects[i];
        npu_diag d;
        npy_tensor got, want;
        memset(&got, 0, sizeof got);
        memset(&want, 0, sizeof want);
        npu_status st = npy_load(e->file, &want, &d);
        if (!st)
            st = npu_sim_get_output(s, e->name, &got, &d);
        npu_cmp_result r;
        if (!st)
            st = npu_compare(&got, &want, e->rtol, e->atol, &r, &d);
        if (st) {
            fprintf(stderr, "npusim run: --expect %s=%s: %s\n", e->name, e->file, d.msg);
            rc = 2;
        } else {
            char line[512];
            npu_compare_format(&r, line, sizeof line);
            if (!r.pass || !quiet)
                printf("%s: %s (rtol %g, atol %g)\n", e->name, line, e->rtol, e->atol);
            if (!r.pass && rc == 0)
                rc = 1;
        }
        npy_free(&got);
        npy_free(&want);
    }
    return rc;
}

/* An error of the launch: prefixed with the launch file when the message
 * does not already name it (keys such as "expect.Q" mean little alone). */
static void run_err(const char *lfile, const char *msg)
{
    if (lfile && !strstr(msg, lfile))
        fprintf(stderr, "npusim run: %s: %s\n", lfile, msg);
    else
        fprintf(stderr, "npusim run: %s\n", msg);
}

int sim_cmd_run(int argc, char **argv)
{
    const char *lfile = NULL;  /* the launch file, if the kernel came from one */
    launch_desc l;
    memset(&l, 0, sizeof l);
    npu_diag d;
    npu_diag_clear(&d);
    uint64_t max_insns = 0;
    int quiet = 0;
    int i = 1;
    while (i < argc) {
        const char *a = argv[i];
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
        const char *v;
        int step;
        if (sim_cmd_opt(argc, argv, i, NULL, "--max-insns", &v, &step)) {
            if (npu_parse_u64(v, &max_insns) || max_insns == 0) {
                fprintf(stderr, "npusim run: --max-insns: expected a positive integer, got '%s'\n",
                        v ? v : "");
                launch_free(&l);
                return 2;
            }
            i += step;
            continue;
        }
        if (a[0] != '-' && !lfile && strlen(a) > 5 && !strcmp(a + strlen(a) - 5, ".json"))
            lfile = a;
        if (sim_cmd_launch_arg("run", &l, argc, argv, &i, &d))
            return 2;
    }
    if (!l.kernel) {
        run_err(lfile, "no kernel given (see npusim run --help)");
        launch_free(&l);
        return 2;
    }
    npu_sim *s = NULL;
    int rc = 2;
    npu_status st = sim_cmd_setup(&l, NULL, &s, &d);
    if (st) {
        run_err(lfile, d.msg);
        goto out;
    }
    npu_run_opts ro = {mode_of(l.mode), l.max_cycles, max_insns};
    sim_cmd_progress(s, "npusim run");
    st = npu_sim_run(s, &ro, &d);
    sim_cmd_progress_end();
    for (size_t k = 0; k < npu_sim_nfindings(s); k++)
        fprintf(stderr, "npusim run: warning: %s\n", npu_sim_finding(s, k)->msg);
    if (st) {
        fprintf(stderr, "npusim run: %s\n", d.msg);
        goto out;
    }
    if (!quiet) {
        printf("%s: %s mode on %d core%s, %" PRIu64 " instructions", l.kernel,
               launch_mode_name(l.mode), s->ncores, s->ncores == 1 ? "" : "s",
               npu_sim_insns(s, -1));
        if (ro.mode != NPU_MODE_FUNC)
            printf(", %" PRIu64 " cycles", npu_sim_cycles(s));
        printf("\n");
        if (ro.mode != NPU_MODE_FUNC && s->tstats) {
            npu_buf b = {0};
            sim_timing_report(s->tstats, &b);
            if (b.len)
                fwrite(b.data, 1, b.len, stdout);
            npu_buf_free(&b);
        }
    }
    if (ro.mode == NPU_MODE_TIMING) {
        /* nodata: the units computed nothing, so there is nothing to save or check */
        if (l.nexpects || l.nargs)
            fprintf(stderr, "npusim run: timing mode computes no data: outputs not written, "
                            "--expect not checked\n");
        rc = 0;
        goto out;
    }
    st = sim_cmd_save_outputs(s, &l, quiet, &d);
    if (st) {
        fprintf(stderr, "npusim run: %s\n", d.msg);
        goto out;
    }
    rc = check_expects(s, &l, quiet);
out:
    npu_sim_free(s);
    launch_free(&l);
    fflush(stdout);
    return rc;
}
