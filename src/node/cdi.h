/* cdi.h - the node's CDI spec (Container Device Interface,
 * https://github.com/cncf-tags/container-device-interface/blob/main/SPEC.md):
 * kind nvidia.com/gpu, one device per GPU by index and by UUID, one per MIG
 * device by "<gpu>:<mig>" and by UUID, and "all"; the device nodes and the
 * driver's libraries, binaries and hooks in containerEdits, laid out as
 * NVIDIA's `nvidia-ctk cdi generate` lays them out (docs/node.md, "CDI"),
 * so containerd and CRI-O inject GPUs without the legacy runtime hook.
 * Written atomically (a temporary beside it, renamed into place). */
#ifndef GP_NODE_CDI_H
#define GP_NODE_CDI_H

#include <stdbool.h>
#include <stddef.h>

#include "node/inventory.h"
#include "util/err.h"

#define GP_NODE_CDI_DIR       "/var/run/cdi" /* containerd's and CRI-O's default, beside /etc/cdi */
#define GP_NODE_CDI_FILE      "gpuplane-nvidia.json"
#define GP_NODE_CDI_KIND      "nvidia.com/gpu"
#define GP_NODE_CDI_VERSION   "0.5.0" /* hostPath on device nodes; names starting with a digit */
#define GP_NODE_CDI_HOOK_PATH "/usr/bin/nvidia-cdi-hook"

struct gp_node_cdi_opts {
    const char *root;      /* the driver's root ("" or NULL: /): host paths are under it */
    const char *hook_path; /* NULL: GP_NODE_CDI_HOOK_PATH */
};

/* The spec's JSON text (malloc'd, *out) for inv: device nodes /dev/nvidia<index>
 * per GPU, /dev/nvidiactl always and /dev/nvidia-uvm, -uvm-tools and
 * -modeset when present under root; MIG devices' nvidia-caps nodes from
 * root/proc/driver/nvidia-caps/mig-minors (GP_ENOTFOUND when MIG devices
 * exist and it cannot be read); the driver's files of its version found
 * under root. GP_EINVALID: no GPU, or a name CDI refuses. */
enum gp_err gp_node_cdi_build(const struct gp_node_inventory *inv, const struct gp_node_cdi_opts *o,
                              char **out, struct gp_diag *d);

/* Writes spec (the text of gp_node_cdi_build) to dir/GP_NODE_CDI_FILE
 * atomically (a temporary beside it, fsync'd and renamed: a runtime reads
 * the old spec or the new one, never half of one); dir must exist. The
 * spec is checked by gp_node_cdi_validate first: GP_EINVALID and nothing
 * written when it breaks a rule. */
enum gp_err gp_node_cdi_write(const char *dir, const char *spec, struct gp_diag *d);

/* Checks a CDI spec's JSON text against the spec's rules: cdiVersion a
 * released version, kind "vendor/class" (vendor a DNS-like name, class up
 * to 63 characters, alphanumeric at both ends), at least one device, each
 * with a unique valid name and containerEdits with at least one edit;
 * device nodes with absolute paths, mounts with both paths, hooks with a
 * known hookName and a path, env entries "KEY=VALUE". The first breach in
 * d (GP_EINVALID). */
enum gp_err gp_node_cdi_validate(const char *spec, struct gp_diag *d);

#endif
