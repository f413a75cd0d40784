/* spot_times.h - the text of a spot pool's interruptionFile (docs/FORMATS.md,
 * "Spot"): one time from the start per line, a duration like 3600, 90m or
 * 2h30m; "#" starts a comment; blank lines are skipped; lines may be of any
 * length. Read by the Cluster reader (cluster_spot.c), which names the
 * file. */
#ifndef GP_IO_SPOT_TIMES_H
#define GP_IO_SPOT_TIMES_H

#include <stddef.h>

#include "util/arena.h"
#include "util/err.h"

/* Parses len bytes of text (name: the file, in messages "name:line: ...")
 * into times sorted in ascending order, in the arena (*times NULL and *n 0
 * when the file holds none). Errors (GP_EINVALID): a line that is not a
 * time, a time over max_time_s, a NUL byte; GP_ELIMIT: more than max_times
 * times; GP_ENOMEM. */
enum gp_err gp_spot_times_parse(const char *text, size_t len, const char *name, double max_time_s,
                                size_t max_times, struct gp_arena *a, const double **times,
                                size_t *n, struct gp_diag *diag);

#endif
