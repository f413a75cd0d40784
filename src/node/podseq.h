/* podseq.h - a pod of several GPU containers served one Allocate at a
 * time. The kubelet calls a plugin's Allocate once per container and
 * resource, init containers first, then the app containers, each in the
 * pod spec's order, with that container's device IDs only (kubelet
 * pkg/kubelet/cm/devicemanager/manager.go: Allocate, "the caller always
 * loops through init containers before looping through app containers";
 * allocateContainerResources sends one ContainerAllocateRequest), and it
 * gives a later container the devices of the plain init containers before
 * it (devicesToReuse) but never those of an app container or of a
 * restartable init container (a sidecar), which keep theirs for the pod's
 * life.
 *
 * The scheduler writes one list for the pod (gpuplane.io/gpus: "3,1");
 * the part each container gets follows from the spec, with no annotation
 * of its own (docs/node.md, "Pods of several containers"): the
 * containers that keep their GPUs (sidecars and app containers, in the
 * kubelet's order) take consecutive runs of the list from its start; a
 * plain init container takes the run after the sidecars started before
 * it. So a pod with an init container of 2 and app containers of 1 and 1
 * on "3,1" gives the init container GPUs 3 and 1, the first app container
 * GPU 3 and the second GPU 1. A pod on MIG instances (gpuplane.io/mig) is
 * not split: each container's MIG devices must be on the pod's GPUs.
 *
 * The agent's Allocate (plugin.h's choice and done callbacks, ctx a
 * gp_node_podseq) asks the per-node protocol (protocol.h) for the pod
 * allocating here, reads the pod (its uid and containers), hands the next
 * container its part, refuses an app container or sidecar whose device
 * IDs another of them already got (HAMi #1741 across containers), and
 * marks the pod allocated only once its last container is served, so the
 * scheduler places no other pod on the node while one is half served. */
#ifndef GP_NODE_PODSEQ_H
#define GP_NODE_PODSEQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "node/devices.h"
#include "node/protocol.h"
#include "util/err.h"

#define GP_NODE_PODSEQ_MAX_CTRS 32 /* containers of one pod asking one resource */

enum gp_node_ctr_kind {
    GP_NODE_CTR_INIT,    /* a plain init container: runs to completion first */
    GP_NODE_CTR_SIDECAR, /* an init container with restartPolicy Always */
    GP_NODE_CTR_APP,
};

/* One container asking the resource, and the GPUs it gets: positions
 * first..first+n-1 of the pod's list (when split). */
struct gp_node_ctr {
    char name[64];
    enum gp_node_ctr_kind kind;
    unsigned n;     /* devices asked (resources.limits, else requests) */
    unsigned first; /* its run of the pod's GPU list */
};

struct gp_node_podplan {
    size_t n; /* containers asking the resource, in the kubelet's order */
    struct gp_node_ctr c[GP_NODE_PODSEQ_MAX_CTRS];
    unsigned gpus_needed; /* how long the pod's list must be */
    bool split;           /* whole GPUs or replicas: each container its run */
};

/* The containers of pod (an API Pod object) asking resource, in the
 * kubelet's order, and each one's run of a list of n_gpus GPUs (split
 * false: no runs, a MIG pod). GP_EINVALID with a one-line diag naming the
 * field: a quantity that is not a whole number, more than
 * GP_NODE_PODSEQ_MAX_CTRS containers, a list too short for the runs. */
enum gp_err gp_node_podplan_read(const json_t *pod, const char *resource, size_t n_gpus, bool split,
                                 struct gp_node_podplan *out, struct gp_diag *diag);

struct gp_node_podseq {
    struct gp_node_protocol *proto; /* borrowed */
    pthread_mutex_t mu;
    /* the pod being served */
    char uid[128];
    char resource[64];
    struct gp_node_podplan plan;
    unsigned gpus[GP_NODE_MAX_GPUS]; /* its gpuplane.io/gpus */
    size_t n_gpus;
    size_t next;    /* the next container to serve */
    size_t pending; /* the container the last Allocate's choice named */
    size_t n_held;  /* device IDs of its sidecars and app containers so far */
    char held[GP_NODE_ALLOC_MAX][GP_NODE_DEV_ID_LEN];
};

void gp_node_podseq_init(struct gp_node_podseq *s, struct gp_node_protocol *proto);
void gp_node_podseq_destroy(struct gp_node_podseq *s);

/* plugin.h's gp_plugin_choice_fn and gp_plugin_done_fn, ctx a
 * gp_node_podseq; done reads the device IDs the kubelet asked in
 * alloc->asked. */
enum gp_err gp_node_podseq_choice(void *ctx, const char *resource, size_t n_devices, bool wait,
                                  struct gp_node_choice *out, struct gp_diag *diag);
enum gp_err gp_node_podseq_done(void *ctx, const char *resource,
                                const struct gp_node_choice *choice,
                                const struct gp_node_alloc *alloc, bool ok, struct gp_diag *diag);

#endif
