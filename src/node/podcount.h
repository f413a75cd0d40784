/* podcount.h - the pods holding each GPU of this node, for /metrics
 * (gpuplane_node_gpu_pods_allocated), learnt from the API: the pods bound
 * here are watched (an informer on /api/v1/pods, fieldSelector
 * spec.nodeName, kube/informer.h), and a pod holds the GPUs its
 * gpuplane.io/gpus names (DESIGN.md section 7) from the time the agent
 * marked it gpuplane.io/phase=allocated until it ends (status.phase
 * Succeeded or Failed) or is deleted; a pod being deleted still holds
 * them while its containers stop.
 *
 * Why the API and not the kubelet's PodResources List: the annotations
 * are what Allocate served (the scheduler's GPUs; PodResources reports
 * the kubelet's device IDs, which differ from them whenever the kubelet
 * did not follow the preferred allocation or reused an init container's
 * devices), they are there again after an agent restart, and the agent
 * talks to the API anyway. What the API cannot say: pods gpuplane did not
 * place (no annotations) are not counted. docs/node.md, "Metrics". */
#ifndef GP_NODE_PODCOUNT_H
#define GP_NODE_PODCOUNT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kube/client.h"
#include "kube/informer.h"
#include "node/inventory.h"
#include "util/err.h"

/* The GPUs (a mask of NVML indexes) pod holds on node; 0 when none: not
 * placed there by gpuplane, not yet allocated, ended, or an unreadable
 * gpuplane.io/gpus. */
uint64_t gp_node_podcount_holds(const json_t *pod, const char *node);

struct gp_node_podcount_entry {
    char key[320]; /* "ns/name" */
    uint64_t gpus;
};

struct gp_node_podcount {
    const char *node; /* borrowed */
    pthread_mutex_t mu;
    struct gp_node_podcount_entry *pods; /* the pods holding GPUs, malloc'd */
    size_t n, cap;
    /* the watching thread (gp_node_podcount_start) */
    struct gp_kube_client *client;
    struct gp_kube_informer *inf;
    pthread_t thread;
    bool running;
    atomic_bool quit;
    double retry_s; /* after a failed list or watch: 1 s */
};

void gp_node_podcount_init(struct gp_node_podcount *pc, const char *node);
/* Stops the thread (if started) and frees. */
void gp_node_podcount_free(struct gp_node_podcount *pc);

/* A change of one pod (kube/informer.h's callback, ctx a podcount). */
void gp_node_podcount_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx);

/* pods[i]: the pods holding the GPU of NVML index i, for i < n. */
void gp_node_podcount_get(struct gp_node_podcount *pc, unsigned *pods, size_t n);

/* Watches the node's pods on a client of its own made from cfg. */
enum gp_err gp_node_podcount_start(struct gp_node_podcount *pc, const struct gp_kube_config *cfg,
                                   struct gp_diag *diag);

#endif
