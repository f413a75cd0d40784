/* philly_vc.h - Philly's virtual clusters as engine queues: one queue per
 * queue name the workload's items carry (the Philly reader puts each job's
 * VC there), optionally sized from a Helios-style VC list. Lives in
 * philly.c; docs/philly.md gives the setup. Everything goes in the
 * caller's arena. */
#ifndef GP_IO_PHILLY_VC_H
#define GP_IO_PHILLY_VC_H

#include <stddef.h>

#include "io/workload.h"
#include "util/arena.h"
#include "util/err.h"

/* GPUs per node of a VC size in the list ("node num" counts 8-GPU nodes). */
#define GP_PHILLY_VC_GPUS_PER_NODE 8

/* Declares a queue (a struct gp_queue_def appended to w->queues) for each
 * distinct queue name of w's items other than "default", in order of first
 * use: top level, no preemption inside, weight 1 and no quota. With a VC
 * list (vcs_text, the CSV "vc,node num" of the Helios artifact), a VC it
 * lists gets weight = its node count and a GPU cap of node count x 8 GPUs
 * (guaranteed 0, borrowing limit = the cap: it never holds more, and there
 * is nothing to reclaim); VCs it does not list keep weight 1 and no cap.
 * GP_EINVALID when w declares queues already, or for a bad list (a diag
 * naming the file and line); w is unchanged on error. vcs_text need not be
 * NUL-terminated; vcs_name names it in messages. */
enum gp_err gp_philly_vc_queues(struct gp_workload *w, const char *vcs_text, size_t vcs_len,
                                const char *vcs_name, struct gp_arena *a, struct gp_diag *diag);

#endif
