/* labels.h - the node labels NVIDIA GPU Feature Discovery puts on a GPU
 * node (nvidia.com/gpu.product, gpu.count, cuda.driver-version.*, mig-*
 * ...), computed from an inventory and the device plugin's sharing, with
 * GFD's names and value formats (NVIDIA/k8s-device-plugin internal/lm/:
 * resource.go, mig-strategy.go, nvml.go, machine-type.go; docs/node.md),
 * and patched onto the Node through kube/'s API client. */
#ifndef GP_NODE_LABELS_H
#define GP_NODE_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "node/inventory.h"
#include "util/err.h"

struct gp_kube_client;

#define GP_NODE_LABEL_KEY_LEN   96  /* "nvidia.com/mig-1g.10gb.engines.decoder" */
#define GP_NODE_LABEL_VALUE_LEN 128 /* a product name with -MIG-<profile>-SHARED */
#define GP_NODE_MAX_LABELS      320 /* 20 node-wide + 13 per MIG profile, with room */

struct gp_node_label {
    char key[GP_NODE_LABEL_KEY_LEN];
    char value[GP_NODE_LABEL_VALUE_LEN];
};

/* A label set, sorted by key, each key once. */
struct gp_node_labels {
    size_t n;
    struct gp_node_label items[GP_NODE_MAX_LABELS];
};

/* What the inventory does not say. */
struct gp_node_label_opts {
    const char *machine;   /* DMI product_name (/sys/class/dmi/id/product_name); NULL: "unknown" */
    const char *pci_class; /* the first GPU's PCI class ("0x030200"); NULL: no gpu.mode label */
    long long timestamp_s; /* gfd.timestamp; < 0: none (GFD's noTimestamp) */
    /* gpuplane's own label beside GFD's: the agent serves the per-node
     * protocol (GP_KUBE_LABEL_AGENT, its version) */
    bool agent;
};

/* The label set of a node: GFD's labels for inv under sh, and gpuplane's
 * (GP_SHARING_LABEL_FAIL_GT1 on time-sliced or MPS GPUs, engine/sharing.h;
 * GP_KUBE_LABEL_AGENT with o->agent). An inventory with no GPU has none. Errors (GP_EINVALID, one
 * line in d): a driver version not X.Y[.Z], MPS asked for on a node with a MIG-enabled GPU, more
 * labels than fit. */
enum gp_err gp_node_labels_build(const struct gp_node_inventory *inv,
                                 const struct gp_node_sharing *sh,
                                 const struct gp_node_label_opts *o, struct gp_node_labels *out,
                                 struct gp_diag *d);

/* The value of key in l, or NULL. */
const char *gp_node_labels_get(const struct gp_node_labels *l, const char *key);

/* Whether key is one the agent owns (sets, and removes when it no longer
 * applies): GFD's labels and gpuplane's own (gpuplane.io/mig-gpus,
 * gpuplane.io/agent, gpuplane.io/fail-requests-greater-than-one), not the GPU Operator's
 * (gpu.deploy.*, gpu.present, mig.config, mig.config.state) nor NFD's, nor gpuplane.io/pool (the
 * operator's). */
bool gp_node_labels_owned(const char *key);

/* The JSON merge patch (RFC 7386) of metadata.labels that turns a Node
 * whose labels are `current` (a JSON object's text, NULL: none) into one
 * with `want`: changed and new labels set, owned labels not in want set to
 * null (removed), labels not owned left alone. *out is malloc'd ("" and
 * *changes 0 when nothing changes). */
enum gp_err gp_node_labels_patch_body(const char *current, const struct gp_node_labels *want,
                                      char **out, size_t *changes, struct gp_diag *d);

/* Reads the Node `node` through c and patches its labels to want
 * (application/merge-patch+json); *changes (may be NULL) gets the number
 * of labels set or removed, 0 when none and no PATCH was sent. */
enum gp_err gp_node_labels_apply(struct gp_kube_client *c, const char *node,
                                 const struct gp_node_labels *want, size_t *changes,
                                 struct gp_diag *d);

#endif
