/* cmd_common.c — shared launch parsing and simulator setup for the npusim
 * commands (see cmd_common.h). */
#include "sim/cmd_common.h"

#include <stdio.h>
#include <string.h>

#include "frontend/npy.h"

#include "sim/check.h"

int sim_cmd_launch_arg(const char *cmd, launch_desc *l, int argc, char **argv, int *i,
                       npu_diag *d)
{
    const char *a = argv[*i];
    if (a[0] != '-' && l->kernel) {
        fprintf(stderr, "npusim %s: unexpected argument '%s' (the kernel is %s)\n", cmd, a,
                l->kernel);
        launch_free(l);
        return 2;
    }
    int used = 0;
    npu_status st = launch_parse_args(l, argc - *i, argv + *i, &used, d);
    if (st) {
        fprintf(stderr, "npusim %s: %s\n", cmd, d->msg);
        launch_free(l);
        return 2;
    }
    if (used == 0) {
        fprintf(stderr, "npusim %s: unknown option '%s' (see npusim %s --help)\n", cmd, a, cmd);
        launch_free(l);
        return 2;
    }
    *i += used;
    return 0;
}

npu_status sim_cmd_setup(launch_desc *l, const char *nofunc_cmd, npu_sim **s, npu_diag *d)
{
    cfg_machine m;
    *s = NULL;
    npu_status st = launch_finish(l, d);
    if (!st && nofunc_cmd && l->mode == LAUNCH_MODE_FUNC)
        st = npu_errf(d, NPU_EINVAL, "--mode func has no timing: %s runs in perf (or timing) mode",
                      nofunc_cmd);
    if (!st)
        st = launch_machine(l, &m, d);
    if (!st)
        st = npu_sim_new(s, &m, d);
    if (!st)
        st = npu_sim_load_elf(*s, l->kernel, d);
    if (!st && l->entry)
        st = npu_sim_set_entry(*s, l->entry, d);
    if (!st && l->cores)
        st = npu_sim_set_cores(*s, (int)l->cores, d);
    if (!st)
        st = sim_run_bind_args(*s, l, d);
    return st;
}

/* stat saves too: a kernel measuring itself with the PMU writes its
 * counters to an output file. */
npu_status sim_cmd_save_outputs(npu_sim *s, const launch_desc *l, int quiet, npu_diag *d)
{
    for (size_t i = 0; i < l->nargs; i++) {
        const launch_arg *a = &l->args[i];
        const char *path = a->kind == LAUNCH_ARG_OUT ? a->file
                           : a->kind == LAUNCH_ARG_INOUT ? a->save : NULL;
        if (!path)
            continue;
        npy_tensor t;
        npu_status st = npu_sim_get_output(s, a->name, &t, d);
        if (!st)
            st = npy_save(path, &t, d);
        npy_free(&t);
        if (st)
            return st;
        if (!quiet)
            printf("%s: written to %s\n", a->name, path);
    }
    return NPU_OK;
}

/* See cmd_common.h. */
int sim_cmd_opt(int argc, char **argv, int i, const char *shrt, const char *lng,
                const char **v, int *step)
{
    const char *a = argv[i];
    size_t ln = lng ? strlen(lng) : 0;
    if ((shrt && !strcmp(a, shrt)) || (lng && !strcmp(a, lng))) {
        *v = i + 1 < argc ? argv[i + 1] : NULL;
        *step = 2;
        return 1;
    }
    if (lng && !strncmp(a, lng, ln) && a[ln] == '=') {
        *v = a + ln + 1;
        *step = 1;
        return 1;
    }
    if (shrt && !strncmp(a, shrt, 2) && a[2]) {
        *v = a + 2;
        *step = 1;
        return 1;
    }
    return 0;
}

/* ---- progress on a terminal ----------------------------------------------- */

/* user: the command's name */
static void prog_print(void *user, const npu_progress *p)
{
    char cyc[48] = "";
    if (p->mode != NPU_MODE_FUNC)
        snprintf(cyc, sizeof cyc, "%.2f M cycles, ", (double)p->cycles * 1e-6);
    npu_tty_line("%s: %s%.1f M instructions, %d/%d cores done", (const char *)user, cyc, (double)p->insns * 1e-6,
                 p->cores_done, p->ncores);
}

void sim_cmd_progress(npu_sim *s, const char *cmd)
{
    if (!s || !npu_tty_line_wanted())
        return;
    npu_tty_line_start();
    /* the library asks often; npu_tty_line draws after 2 s, twice a second */
    npu_sim_set_progress(s, prog_print, (void *)cmd, 100);
}

void sim_cmd_progress_end(void) { npu_tty_line_end(); }
