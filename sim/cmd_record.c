/* cmd_record.c — `npusim record -o run.npt [--level instr|mem|full]
 * [-I CYCLES] run-arguments...`: the run of `npusim run` (same launch
 * flags or launch file, same argument binding: sim_run_bind_args) in perf
 * mode with the trace recorder (sim/record.h). Exit status: 0 the kernel
 * ran to its end and the trace is written; 1 the kernel faulted, deadlocked
 * or hit a watchdog, and the trace of what ran is written; 2 bad input or
 * the trace could not be written (nothing is left under the name).
 */
#include "sim/sim_int.h" /* first: frontend/config.h wants the dtype enum before isa.h */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/launch.h"
#include "sim/check.h"
#include "sim/record.h"
#include "sim/cmd_common.h"

#define REC_DEFAULT_INTERVAL 1000

static void usage(FILE *f)
{
    fprintf(f,
        "usage: npusim record -o TRACE.npt [--level instr|mem|full] [-I CYCLES] [-A] KERNEL.elf|LAUNCH.json\n"
        "                     [run options...]\n"
        "\n"
        "Runs the kernel as npusim run does (perf mode; the same launch options:\n"
        "--arg, --inout, --out, --cores, --config, --set, --entry, --max-cycles, --mode\n"
        "perf|timing; see npusim run --help) and writes a trace of the run: every\n"
        "instruction of every pipe of every core (dispatch, start, end, pc, opcode),\n"
        "stalls with their cause, flag sets and the waits they released, calls and\n"
        "returns, counter samples, and at level mem/full the GM ranges of data moves.\n"
        "Outputs are not saved or checked (use npusim run). See docs/traces.md.\n"
        "\n"
        "options:\n"
        "  -o, --output FILE      the trace (written to FILE.tmp.PID, renamed at the end)\n"
        "  --level L              instr (default), mem (adds GM requests), full (adds every\n"
        "                         HBM command: ACT, PRE, RD, WR, REF ... per channel and bank)\n"
        "  -I, --interval CYCLES  counter samples every CYCLES cycles (default %d; 0 = none);\n"
        "                         with the HBM model they include the memory system's\n"
        "                         l2.hits/misses/bytes and hbm.bytes_read/written, summed\n"
        "  -A, --no-aggregate     those memory counters per L2 slice and HBM channel (units\n"
        "                         'L2 slice N', 'HBM channel N') instead of summed\n"
        "  --seed N               recorded in the trace header (informative; default 0)\n"
        "  --max-insns N          instruction watchdog per core\n"
        "  -q, --quiet            no summary line\n"
        "  -h, --help             this help\n"
        "\n"
        "environment: " SIM_CMD_PROGRESS_HELP
        "\n"
        "exit status: 0 ran to the end, 1 fault/deadlock/watchdog (trace of what ran\n"
        "written), 2 bad input or the trace could not be written\n",
        REC_DEFAULT_INTERVAL);
}

int sim_cmd_record(int argc, char **argv)
{
    launch_desc l;
    memset(&l, 0, sizeof l);
    npu_diag d;
    npu_diag_clear(&d);
    const char *out = NULL;
    sim_rec_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.interval = REC_DEFAULT_INTERVAL;
    int quiet = 0;
    int i = 1;
    while (i < argc) {
        const char *a = argv[i], *v = NULL;
        int step = 0;
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
        if (!strcmp(a, "-A") || !strcmp(a, "--no-aggregate")) {
            ro.mem_units = 1;
            i++;
            continue;
        }
        if (sim_cmd_opt(argc, argv, i, "-o", "--output", &v, &step)) {
            if (!v || !*v) {
                fprintf(stderr, "npusim record: -o needs a file name\n");
                launch_free(&l);
                return 2;
            }
            out = v;
        } else if (sim_cmd_opt(argc, argv, i, NULL, "--level", &v, &step)) {
            int lv = sim_rec_level_from_name(v);
            if (lv < 0) {
                fprintf(stderr, "npusim record: --level: expected instr, mem or full, got '%s'\n",
                        v ? v : "");
                launch_free(&l);
                return 2;
            }
            ro.level = (sim_rec_level)lv;
        } else if (sim_cmd_opt(argc, argv, i, "-I", "--interval", &v, &step)) {
            if (npu_parse_u64(v, &ro.interval)) {
                fprintf(stderr, "npusim record: -I: expected a number of cycles, got '%s'\n",
                        v ? v : "");
                launch_free(&l);
                return 2;
            }
        } else if (sim_cmd_opt(argc, argv, i, NULL, "--seed", &v, &step)) {
            if (npu_parse_u64(v, &ro.seed)) {
                fprintf(stderr, "npusim record: --seed: expected an integer, got '%s'\n",
                        v ? v : "");
                launch_free(&l);
                return 2;
            }
        } else if (sim_cmd_opt(argc, argv, i, NULL, "--max-insns", &v, &step)) {
            if (npu_parse_u64(v, &ro.max_insns) || ro.max_insns == 0) {
                fprintf(stderr, "npusim record: --max-insns: expected a positive integer, got '%s'\n",
                        v ? v : "");
                launch_free(&l);
                return 2;
            }
        }
        if (step) {
            i += step;
            continue;
        }
        if (sim_cmd_launch_arg("record", &l, argc, argv, &i, &d))
            return 2;
    }
    if (!out) {
        fprintf(stderr, "npusim record: no trace file given (-o TRACE.npt)\n");
        launch_free(&l);
        return 2;
    }
    if (!l.kernel) {
        fprintf(stderr, "npusim record: no kernel given (see npusim record --help)\n");
        launch_free(&l);
        return 2;
    }
    npu_sim *s = NULL;
    int rc = 2;
    npu_status st = sim_cmd_setup(&l, "record", &s, &d);
    if (st) {
        fprintf(stderr, "npusim record: %s\n", d.msg);
        goto done;
    }
    ro.nodata = l.mode == LAUNCH_MODE_TIMING;
    ro.max_cycles = l.max_cycles;
    sim_rec_result res;
    sim_cmd_progress(s, "npusim record");
    st = sim_record_run(s, out, &ro, &res, &d);
    sim_cmd_progress_end();
    for (size_t k = 0; k < npu_sim_nfindings(s); k++)
        fprintf(stderr, "npusim record: warning: %s\n", npu_sim_finding(s, k)->msg);
    if (st) {
        if (res.run)
            fprintf(stderr, "npusim record: %s\n", res.run_diag.msg);
        fprintf(stderr, "npusim record: %s (no trace written)\n", d.msg);
        goto done;
    }
    if (res.run)
        fprintf(stderr, "npusim record: %s\n", res.run_diag.msg);
    if (!quiet) {
        struct stat sb;
        long long size = stat(out, &sb) == 0 ? (long long)sb.st_size : -1;
        uint64_t ninsn = res.insn_events - res.dispatch_events;
        printf("%s: %s%" PRIu64 " cycles on %d core%s; trace %s: %" PRIu64 " events (%" PRIu64
               " instructions, %" PRIu64 " dispatch slots), %lld bytes, %.2f bytes per instruction"
               " event\n",
               l.kernel, res.run ? "stopped after " : "", npu_sim_cycles(s), s->ncores,
               s->ncores == 1 ? "" : "s", out, res.events, ninsn, res.dispatch_events, size,
               res.insn_events ? (double)size / (double)res.insn_events : 0.0);
        /* what to do with it next, as perf record points to perf report */
        printf("  read it: npuview %s (window), npuview --report %s (hotspots), "
               "npusim trace export --format chrome %s -o OUT.json (Perfetto)\n", out, out, out);
    }
    rc = res.run ? 1 : 0;
done:
    npu_sim_free(s);
    launch_free(&l);
    fflush(stdout);
    return rc;
}
