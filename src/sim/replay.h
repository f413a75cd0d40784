/* replay.h - `gpuplane sim --replay FILE`: a live scheduler's event log
 * (io/eventlog.h) fed into the engine, call by call in the recorded order,
 * and each cycle's decisions compared with the recorded ones. */
#ifndef GP_SIM_REPLAY_H
#define GP_SIM_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

/* The first difference: where it was recorded, and both sides as JSON (a
 * decision: the log's line and the replay's own; "" for a side that has
 * none: a decision the other side did not make). */
struct gp_replay_diff {
    size_t line;
    uint64_t cycle;
    char what[160]; /* "cycle 4, decision 2", "pod_add", ... */
    char recorded[1024];
    char replayed[1024];
};

struct gp_replay_result {
    size_t lines;     /* events read (warnings' lines not counted) */
    size_t changes;   /* the API's changes (informational) */
    size_t calls;     /* engine calls made */
    size_t resets;    /* engines started */
    size_t cycles;    /* cycles run */
    size_t decisions; /* recorded decisions compared */
    size_t matched;   /* of which the replay made the same */
    size_t differing; /* decisions and call results that differ (extra ones included) */
    size_t warnings;  /* torn lines, unfinished cycles */
    bool has_diff;
    struct gp_replay_diff first;
};

/* Called with each warning (one line, no newline). */
typedef void (*gp_replay_warn_fn)(void *ctx, const char *line);

/* Replays path. GP_OK once read to the end (r says whether it matched);
 * GP_ENOTFOUND, GP_EPARSE or GP_EINVALID with "FILE:LINE: FIELD: ..." for
 * bad input; GP_ENOMEM. */
enum gp_err gp_replay_file(const char *path, gp_replay_warn_fn warn, void *warn_ctx,
                           struct gp_replay_result *r, struct gp_diag *diag);
/* The same from an open stream (path names it in messages). */
enum gp_err gp_replay_stream(FILE *f, const char *path, gp_replay_warn_fn warn, void *warn_ctx,
                             struct gp_replay_result *r, struct gp_diag *diag);

#endif
