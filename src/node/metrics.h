/* metrics.h - the node agent's per-GPU metrics for its /metrics, in a
 * registry of kube/metrics.h (so kube/httpd.c serves them as it serves
 * the scheduler's): each a gauge or counter with one label, gpu, whose
 * value is the GPU's UUID (the device ID the device plugin advertises).
 * docs/node.md, "Metrics", lists them. */
#ifndef GP_NODE_METRICS_H
#define GP_NODE_METRICS_H

#include <stdint.h>

#include "kube/metrics.h"
#include "node/health.h"
#include "node/inventory.h"
#include "util/err.h"

#define GP_NM_UTIL       "gpuplane_node_gpu_utilization_percent"
#define GP_NM_MEM_USED   "gpuplane_node_gpu_memory_used_bytes"
#define GP_NM_MEM_TOTAL  "gpuplane_node_gpu_memory_total_bytes"
#define GP_NM_PODS       "gpuplane_node_gpu_pods_allocated"
#define GP_NM_HEALTHY    "gpuplane_node_gpu_healthy"
#define GP_NM_LAST_XID   "gpuplane_node_gpu_last_xid"
#define GP_NM_XIDS_APP   "gpuplane_node_gpu_xids_application_total"
#define GP_NM_XIDS_REC   "gpuplane_node_gpu_xids_recoverable_total"
#define GP_NM_XIDS_FATAL "gpuplane_node_gpu_xids_fatal_total"
#define GP_NM_XIDS_RESET "gpuplane_node_gpu_xids_reset_total"

#define GP_NM_MAX_SERIES (2 * GP_NODE_MAX_GPUS) /* UUIDs per metric over the agent's life */

struct gp_node_metrics {
    struct gp_metrics *reg; /* owned: serve it with kube/httpd.h */
    struct gp_metric *util, *mem_used, *mem_total, *pods, *healthy, *last_xid;
    struct gp_metric *xids[GP_XID_CLASS_COUNT];
    /* what the XID counters were last raised to, per NVML index */
    char seen_uuid[GP_NODE_MAX_GPUS][GP_NODE_UUID_LEN];
    uint64_t seen[GP_NODE_MAX_GPUS][GP_XID_CLASS_COUNT];
};

enum gp_err gp_node_metrics_init(struct gp_node_metrics *nm, struct gp_diag *diag);
void gp_node_metrics_free(struct gp_node_metrics *nm);

/* Sets every GPU's series from the inventory (utilisation, memory used
 * and total), the pods allocated on it (pods[i] for the GPU of index i;
 * NULL or n_pods short: 0) and its health (h NULL: the inventory's
 * healthy and last_xid, XID counters untouched); the XID counters rise to
 * h's counts. */
void gp_node_metrics_update(struct gp_node_metrics *nm, const struct gp_node_inventory *inv,
                            const struct gp_node_health *h, const unsigned *pods, size_t n_pods);

#endif
