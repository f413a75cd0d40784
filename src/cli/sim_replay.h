/* sim_replay.h - `gpuplane sim --replay FILE`: the summary of a replayed
 * event log (sim/replay.h) and its exit code. */
#ifndef GP_CLI_SIM_REPLAY_H
#define GP_CLI_SIM_REPLAY_H

#include <stdbool.h>

/* 0 when every decision and call result is the same, 1 when one differs,
 * 2 for bad input (one line on stderr naming the file, line and field). */
int gp_cli_sim_replay(const char *path, bool quiet);

#endif
