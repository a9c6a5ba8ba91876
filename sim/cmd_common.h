/* cmd_common.h — the setup every launching npusim command (run, check,
 * record, stat) shares: one launch-argument step of the command-line loop
 * and the build of a simulator from a finished launch (machine, ELF, entry,
 * cores, argument binding). One copy, so the commands cannot drift apart.
 */
#ifndef SIM_CMD_COMMON_H
#define SIM_CMD_COMMON_H

#include "sim/sim_int.h" /* first: frontend/config.h wants the dtype enum before isa.h */

#include "frontend/launch.h"

/* One launch argument at argv[*i] for `npusim CMD`: rejects a second
 * kernel, hands the rest to launch_parse_args and advances *i. Returns 0
 * when consumed; on bad input prints "npusim CMD: ..." to stderr, frees l
 * and returns 2 (the command's exit status). */
int sim_cmd_launch_arg(const char *cmd, launch_desc *l, int argc, char **argv, int *i,
                       npu_diag *d);

/* Finish l and build *s from it: machine, ELF, entry, cores, arguments.
 * nofunc_cmd non-NULL: --mode func is refused (the command needs timing)
 * with "--mode func has no timing: NOFUNC_CMD runs in perf (or timing)
 * mode". On failure *s may be non-NULL (caller frees it). */
npu_status sim_cmd_setup(launch_desc *l, const char *nofunc_cmd, npu_sim **s, npu_diag *d);

/* Save every output (and INOUT with a save file) that names a file; prints
 * "NAME: written to PATH" for each unless quiet. */
npu_status sim_cmd_save_outputs(npu_sim *s, const launch_desc *l, int quiet, npu_diag *d);

/* One option with a value at argv[i]: "--opt V", "--opt=V", and for a
 * short option "-o V" or "-oV" (shrt or lng may be NULL). 1 matched (the
 * value in *v, NULL if it is missing; *step = argv slots used), 0 not this
 * option. */
int sim_cmd_opt(int argc, char **argv, int i, const char *shrt, const char *lng, const char **v,
                int *step);

/* A status line on stderr while s runs ("npusim CMD: 1.23 M cycles, ..."),
 * drawn by npu_tty_line (isa/npu_util.h says when). sim_cmd_progress_end
 * erases it (call it when the run returns, before printing anything).
 * SIM_CMD_PROGRESS_HELP: the environment line of the commands' --help. */
#define SIM_CMD_PROGRESS_HELP                                                 \
    "NPUSIM_PROGRESS=0|1  a status line on stderr once a run takes 2 s\n"     \
    "                              (on a terminal by default; 0 never, 1 also in a pipe)\n"
void sim_cmd_progress(npu_sim *s, const char *cmd);
void sim_cmd_progress_end(void);

#endif
