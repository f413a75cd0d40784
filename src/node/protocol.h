/* protocol.h - the node agent's side of the per-node protocol (DESIGN.md
 * section 7; docs/kube.md, "Annotations"; docs/node.md, "Which pod an
 * Allocate serves"): the scheduler writes gpuplane.io/node,
 * gpuplane.io/gpus and gpuplane.io/phase=allocating on a pod before it
 * binds it, and has at most one such pod per node at a time; the agent's
 * Allocate serves that pod, with the GPUs the scheduler chose, and sets
 * gpuplane.io/phase=allocated. Two pods allocating on one node at once
 * break the protocol: the Allocate is refused rather than guessed. */
#ifndef GP_NODE_PROTOCOL_H
#define GP_NODE_PROTOCOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "node/devices.h"
#include "util/err.h"

#define GP_NODE_PHASE_ALLOCATING "allocating"
#define GP_NODE_PHASE_ALLOCATED  "allocated"
#define GP_NODE_PHASE_EXPIRED    "expired" /* the scheduler gave the pod's GPUs up */

/* pods another scheduler placed that this agent served, remembered so
 * that they are no candidates while the kubelet has not yet reported
 * their containers */
#define GP_NODE_PROTOCOL_SERVED 64

struct gp_node_protocol {
    struct gp_kube_client *client; /* borrowed */
    const char *node;              /* this node's name */
    double wait_s;                 /* how long an Allocate waits for its pod (2 s) */
    double poll_s;                 /* between looks while waiting (0.05 s) */
    pthread_mutex_t mu;            /* the client: one request at a time */
    char ns[128], name[128];       /* the pod the last choice named */
    char rv[64];                   /* its resourceVersion as the look saw it */
    char served_uid[GP_NODE_PROTOCOL_SERVED][128];
    size_t served_next;
    unsigned long served, refused, foreign;
};

void gp_node_protocol_init(struct gp_node_protocol *p, struct gp_kube_client *client,
                           const char *node);
void gp_node_protocol_destroy(struct gp_node_protocol *p);

/* plugin.h's gp_plugin_choice_fn and gp_plugin_done_fn, ctx a
 * gp_node_protocol. The candidates of an Allocate are the pods bound
 * here that ask the resource and that the kubelet has not admitted yet
 * (no container status, not Running or ended, not being deleted, not
 * served already). Exactly one, ours and allocating: its choice. Only
 * pods another scheduler placed: GP_OK with no choice (the kubelet's
 * devices). Otherwise, after waiting wait_s for the candidates to
 * settle: GP_ESTATE with the reason (a pod the scheduler gave up on,
 * several candidates of which one is ours, none at all): the kubelet
 * fails the pod it admits (UnexpectedAdmissionError) rather than give it
 * another pod's GPUs. Two pods allocating: GP_ESTATE at once. */
enum gp_err gp_node_protocol_choice(void *ctx, const char *resource, size_t n_devices, bool wait,
                                    struct gp_node_choice *out, struct gp_diag *diag);
enum gp_err gp_node_protocol_done(void *ctx, const char *resource,
                                  const struct gp_node_choice *choice,
                                  const struct gp_node_alloc *alloc, bool ok, struct gp_diag *diag);

#endif
