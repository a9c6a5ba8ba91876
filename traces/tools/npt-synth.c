/* npt-synth — write a synthetic, realistic GEMM-like trace (traces/synth.c)
 * for benchmarks and for the viewer:
 *   npt-synth -o x.npt [--events N] [--cores C] [--seed S] [--mem] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/trace.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: npt-synth -o OUT.npt [--events N] [--cores C] [--seed S] [--mem]\n"
               "  writes a synthetic GEMM-like trace of about N events (default 1000000)\n"
               "  on C cores (default 24); --mem adds memory requests and HBM commands\n");
    return f == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
    trc_synth_opts o = { .events = 1000000, .cores = 24, .seed = 1 };
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return usage(stdout);
        if (!strcmp(a, "--mem")) {
            o.mem = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "npt-synth: %s needs a value\n", a);
            return usage(stderr);
        }
        const char *v = argv[++i];
        if (!strcmp(a, "-o")) {
            out = v;
            continue;
        }
        unsigned long long x = strtoull(v, &end, 0);
        if (!end || *end || v[0] == '-') {
            fprintf(stderr, "npt-synth: %s: not a number: '%s'\n", a, v);
            return 2;
        }
        if (!strcmp(a, "--events")) o.events = x;
        else if (!strcmp(a, "--cores")) o.cores = (uint32_t)x;
        else if (!strcmp(a, "--seed")) o.seed = x;
        else {
            fprintf(stderr, "npt-synth: unknown option '%s'\n", a);
            return usage(stderr);
        }
    }
    if (!out) {
        fprintf(stderr, "npt-synth: -o OUT.npt is required\n");
        return usage(stderr);
    }
    npu_diag d = { 0 };
    if (trc_synth_write(out, &o, &d) != NPU_OK) {
        fprintf(stderr, "npt-synth: %s\n", d.msg);
        return 1;
    }
    return 0;
}
