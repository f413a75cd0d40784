/* render.h - the Kubernetes-side configuration a Cluster spec's GPU sharing
 * needs, in the formats NVIDIA's tools read (docs/sharing.md):
 *
 *   device-plugin-<pool>.yaml  the NVIDIA device plugin config of each GPU
 *                              pool (version v1, flags.migStrategy, and
 *                              sharing.timeSlicing or sharing.mps)
 *   configmap-device-plugin.yaml  those configs in one ConfigMap, a key per
 *                              pool (the GPU Operator's devicePlugin.config)
 *   mig-parted.yaml            mig-parted's config: a MIG config per MIG pool
 *                              plus all-disabled (when a pool's GPU has MIG)
 *   configmap-mig-parted.yaml  that file as the GPU Operator's custom MIG
 *                              ConfigMap (key config.yaml)
 *   node-labels.yaml           the labels each pool's nodes need
 *                              (nvidia.com/device-plugin.config,
 *                              nvidia.com/mig.config, gpuplane.io/pool)
 *
 * Output is hand-written YAML in a fixed order with every string that YAML
 * could read as something else quoted, so the same spec gives the same
 * bytes. Nothing here prints or writes files; the caller owns the result. */
#ifndef GP_IO_RENDER_H
#define GP_IO_RENDER_H

#include <stddef.h>

#include "io/cluster.h"
#include "util/err.h"
#include "util/sbuf.h"

/* The names of the two ConfigMaps and their namespace. */
#define GP_RENDER_NAMESPACE         "gpu-operator"
#define GP_RENDER_DEVICE_PLUGIN_CM  "gpuplane-device-plugin-config"
#define GP_RENDER_MIG_PARTED_CM     "gpuplane-mig-parted-config"
#define GP_RENDER_MIG_PARTED_CM_KEY "config.yaml"

struct gp_render_file {
    char name[96];       /* "device-plugin-a100.yaml" */
    struct gp_sbuf text; /* owned */
};

struct gp_render {
    struct gp_render_file *files; /* owned, in output order */
    size_t nfiles, cap;
};

/* Renders every file for the cluster's pools. Errors: GP_EINVALID when the
 * spec cannot be expressed (a MIG pool named all-disabled would clash with
 * mig-parted's config of that name), GP_ENOMEM. On error *out is empty. */
enum gp_err gp_render_cluster(const struct gp_cluster *c, struct gp_render *out,
                              struct gp_diag *diag);
void gp_render_free(struct gp_render *r);

/* All files as one YAML stream: each document starts "---" and
 * "# file: NAME". */
void gp_render_stream(const struct gp_render *r, struct gp_sbuf *out);

/* For other writers of files in this form (kube/deploy.h): a new file
 * NAME.yaml at the end of r (NULL when out of memory), and a string as a
 * YAML scalar (plain when it reads back as the same string, else
 * double-quoted). */
struct gp_sbuf *gp_render_add_file(struct gp_render *r, const char *name);
void gp_render_scalar(struct gp_sbuf *b, const char *s);

/* The pieces, for tests: one pool's device plugin config (GPU pools only)
 * and the mig-parted config body. */
void gp_render_device_plugin(const struct gp_pool_spec *p, struct gp_sbuf *out);
void gp_render_mig_parted(const struct gp_cluster *c, struct gp_sbuf *out);

#endif
