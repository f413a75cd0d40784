/* config.h - the configuration file of NVIDIA's k8s-device-plugin
 * (`--config-file`, YAML or JSON), read into what the node agent's options
 * can hold. The format is NVIDIA's api/config/v1 (README "As a
 * configuration file", "Shared Access to GPUs"; config.go, flags.go,
 * replicas.go, sharing.go):
 *
 *   version: v1                      # required value; absent means v1
 *   flags:
 *     migStrategy: none|single|mixed
 *     failOnInitError: true
 *     nvidiaDriverRoot: "/"
 *     mpsRoot: /run/nvidia/mps       # MPS: the control daemon's pipes and shm
 *     plugin:
 *       passDeviceSpecs: false
 *       deviceListStrategy: envvar   # or a list of strategies
 *       deviceIDStrategy: uuid
 *   sharing:
 *     timeSlicing:                   # or mps:, not both
 *       renameByDefault: false
 *       failRequestsGreaterThanOne: false   # MPS: always true
 *       resources:
 *       - name: nvidia.com/gpu
 *         replicas: 10               # at least 2
 *         rename: ...                # read and checked, then ignored with a
 *         devices: all               # warning, as NVIDIA's plugin does
 *
 * Every other key NVIDIA's v1 has is accepted and not used (flags.gfd.*,
 * flags.plugin.cdiAnnotationPrefix, imex, ...); a key it does not have is
 * refused, so a typo is not silently dropped. What gpuplane's agent does
 * not do is refused with the reason: deviceListStrategy volume-mounts or
 * cdi-annotations, deviceIDStrategy index, passDeviceSpecs true, and
 * replicated resources with different replica counts (the agent gives
 * every resource of the node one count, devices.h).
 *
 * Every error is one line, "FILE:LINE:COL: FIELD: what", and GP_EINVALID
 * (exit 2); a syntax error GP_EPARSE (exit 2). docs/node.md, "NVIDIA's
 * configuration file". */
#ifndef GP_NODE_CONFIG_H
#define GP_NODE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "node/inventory.h"
#include "util/arena.h"
#include "util/err.h"

#define GP_NODE_CONFIG_MAX_WARNINGS 8
#define GP_NODE_CONFIG_MAX_BYTES    (1u << 20) /* a config file is small */

/* What the file says; each has_* false when the file leaves it out. */
struct gp_node_config {
    bool has_mig_strategy;
    enum gp_node_mig_strategy mig_strategy;
    bool has_fail_on_init_error;
    bool fail_on_init_error;
    const char
        *driver_root; /* flags.nvidiaDriverRoot (--driver-root); NULL when absent, in the arena */
    const char *mps_root; /* flags.mpsRoot; NULL when absent, in the arena */
    /* sharing.timeSlicing or sharing.mps */
    bool has_sharing;
    enum gp_node_share_mode mode;
    unsigned replicas; /* the resources' replica count */
    bool rename_by_default;
    bool fail_requests_greater_than_one;
    /* resources[].name, each once: the resources shared (NVIDIA replicates
     * only these, gp_node_sharing.named) */
    size_t n_named;
    char named[GP_NODE_SHARING_MAX_NAMES][64];
    /* rename, devices, resources: read, not followed */
    size_t n_warnings;
    char warnings[GP_NODE_CONFIG_MAX_WARNINGS][512];
};

/* Reads text (name for messages). */
enum gp_err gp_node_config_parse(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_node_config *out, struct gp_diag *diag);
/* Reads the file at path (GP_ENOTFOUND when it is not there, GP_EIO when
 * it cannot be read, with the path). */
enum gp_err gp_node_config_read(const char *path, struct gp_arena *a, struct gp_node_config *out,
                                struct gp_diag *diag);

#endif
