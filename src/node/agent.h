/* agent.h - `gpuplane node agent`: the node's GPUs discovered (NVML, or an
 * inventory file read again whenever it changes), the device plugin
 * serving them to the kubelet (plugin.h), health changes streamed to it
 * (XIDs through node/health.h), Allocate answered for the pod the
 * scheduler placed (protocol.h) when the API is at hand, and /metrics and
 * /healthz (kube/httpd.h), and the node's CDI spec written (node/cdi.h).
 * NVML is discovered again every rediscover_s and followed through
 * failures (node/nvwatch.h).
 * docs/node.md, "The agent". */
#ifndef GP_NODE_AGENT_H
#define GP_NODE_AGENT_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kube/kubeconfig.h"
#include "node/inventory.h"
#include "util/err.h"

struct gp_node_agent_opts {
    const char *node_name;      /* this node (the protocol's gpuplane.io/node) */
    const char *inventory_file; /* NULL: NVML discovery */
    const char *nvml_path;      /* NULL: $GPUPLANE_NVML, else libnvidia-ml.so.1 */
    struct gp_node_sharing sharing;
    const char *plugin_dir;           /* NULL: /var/lib/kubelet/device-plugins */
    const struct gp_kube_config *cfg; /* NULL: no API (Allocate serves the kubelet's IDs) */
    const char *metrics_addr;         /* NULL: no HTTP endpoints */
    const char *cdi_dir;              /* NULL: /var/run/cdi (node/cdi.h's GP_NODE_CDI_DIR) */
    const char *driver_root;          /* the CDI spec's host paths under it; NULL: / */
    bool no_cdi;                      /* write no CDI spec */
    double alloc_wait_s;              /* how long Allocate waits for its pod: 2 when 0 */
    double poll_s;                    /* the inventory file, the health tick: 0.2 when 0 */
    double rediscover_s;              /* NVML discovery again (node/nvwatch.h): 60 when 0 */
    double sample_s; /* utilisation and memory used sampled between discoveries: 10 when 0 */
    double max_s;    /* stop after this long; 0: until *stop */
    volatile sig_atomic_t *stop; /* set from a signal handler */
    atomic_uint *metrics_port;   /* not NULL: set to /metrics' port once it listens */
    bool quiet;
};

struct gp_node_agent_result {
    unsigned long allocations, refusals, registrations, restarts, health_changes;
};

/* Runs until *stop or max_s. Errors at start: the inventory (bad file:
 * GP_EINVALID; no driver: GP_ENOTFOUND, node/nvml.h's exit code 3), the
 * sharing configuration, the sockets, the metrics address. */
enum gp_err gp_node_agent_run(const struct gp_node_agent_opts *o, struct gp_node_agent_result *res,
                              struct gp_diag *diag);

#endif
