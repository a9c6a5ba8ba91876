/* main.c — the npusim command: a table of subcommands (commands.def) and a
 * dispatcher. Every command body lives in its own part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/asm.h"
#include "frontend/config.h"
#include "kernels/ref/ref.h"
#include "memmodel/mem.h"
#include "traces/trace.h"
#include "sim/npusim.h"


typedef int (*cmd_fn)(int argc, char **argv);
typedef struct cmd { const char *name; cmd_fn fn; const char *summary; } cmd;

static const cmd cmds[] = {
#define CMD(name, fn, summary) {#name, fn, summary},
#include "sim/cli/commands.def"
#undef CMD
};

static void usage(FILE *f)
{
    fprintf(f, "usage: npusim COMMAND [ARGS...]\n"
               "       npusim help COMMAND | npusim COMMAND --help | npusim --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "  %-8s %s\n", "help", "show the help of a command");
    fprintf(f, "\nexit status: 0 ok; 2 bad input of any kind (file, command line), a fault,\n"
               "deadlock or watchdog in the kernel, or an I/O error; 1 the command did its job\n"
               "but what it was asked to check failed (an output mismatch, a check finding, a\n"
               "counter inconsistency) or, for record, the kernel stopped early and the trace\n"
               "of what ran is written (docs/reliability.md)\n");
}

static const cmd *find(const char *name)
{
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmds[i].name, name))
            return &cmds[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
        printf("npusim %s\n", NPU_VERSION);
        return 0;
    }
    if (!strcmp(a, "help")) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        const cmd *c = find(argv[2]);
        if (!c) {
            fprintf(stderr, "npusim: unknown command '%s' (see npusim --help)\n", argv[2]);
            return 2;
        }
        char *hargv[] = {argv[2], "--help", NULL};
        return c->fn(2, hargv);
    }
    if (a[0] == '-') {
        fprintf(stderr, "npusim: unknown option '%s' (see npusim --help)\n", a);
        return 2;
    }
    const cmd *c = find(a);
    if (npu_host_threads() < 0) {
        fprintf(stderr, "npusim: NPUSIM_THREADS='%s': expected a positive integer or 'auto'\n",
                getenv("NPUSIM_THREADS"));
        return 2;
    }
    if (npu_progress_setting() == -2) {
        fprintf(stderr, "npusim: NPUSIM_PROGRESS='%s': expected 0 (never) or 1 (always)\n",
                getenv("NPUSIM_PROGRESS"));
        return 2;
    }
    if (!c) {
        fprintf(stderr, "npusim: unknown command '%s' (see npusim --help)\n", a);
        return 2;
    }
    return c->fn(argc - 1, argv + 1);
}
