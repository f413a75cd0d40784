/* sim_replay.c - `gpuplane sim --replay FILE`: replays a live scheduler's
 * event log through the engine (sim/replay.h) and prints what matched and,
 * for a difference, the first one with both sides. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/sim_replay.h"
#include "sim/replay.h"

static void on_warning(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "warning: %s\n", line);
}

int gp_cli_sim_replay(const char *path, bool quiet)
{
    struct gp_replay_result r;
    struct gp_diag d = {""};
    enum gp_err err = gp_replay_file(path, on_warning, NULL, &r, &d);
    if (err != GP_OK)
        return gp_cli_fail(err, d.msg);
    if (!quiet) {
        printf("replayed %s: %zu events (%zu API changes, %zu engine calls, %zu engine%s), %zu "
               "cycles\n",
               path, r.lines, r.changes, r.calls, r.resets, r.resets == 1 ? "" : "s", r.cycles);
        printf("decisions: %zu recorded, %zu the same, %zu differ%s\n", r.decisions, r.matched,
               r.differing, r.differing == 1 ? "s" : "");
        if (!r.has_diff) {
            printf("identical\n");
        } else {
            printf("first difference: %s (%s:%zu)\n", r.first.what, path, r.first.line);
            printf("  recorded: %s\n", r.first.recorded[0] ? r.first.recorded : "(none)");
            printf("  replayed: %s\n", r.first.replayed[0] ? r.first.replayed : "(none)");
        }
    }
    return r.has_diff ? 1 : 0;
}
