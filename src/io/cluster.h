/* cluster.h - a cluster as the readers produce it: node pools and the
 * nodes they expand to. Readers: the gpuplane Cluster YAML (cluster_yaml.c)
 * and the openb node CSV (openb.c). Everything lives in the caller's arena. */
#ifndef GP_IO_CLUSTER_H
#define GP_IO_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"
#include "engine/sharing.h"
#include "util/arena.h"
#include "util/err.h"

struct gp_pool_spec {
    const char *name;
    const char *gpu_model; /* NULL for a CPU-only pool */
    uint32_t gpus_per_node;
    uint32_t gpu_mem_mib;    /* per GPU */
    uint32_t nvlink_gpus;    /* GPUs per NVLink domain in a node; 0 = none given */
    uint32_t driver_version; /* gpu.driver, coded as io/compat.h; 0 = not given */
    int64_t cpu_milli;       /* per node */
    int64_t mem_mib;         /* per node */
    uint32_t count;          /* nodes */
    const struct gp_kv *labels;
    size_t nlabels;
    const struct gp_taint *taints;
    size_t ntaints;
    double price_per_hour_usd;      /* per node-hour; 0 = unknown */
    struct gp_sharing_spec sharing; /* checked against gpu_model; zero = exclusive */
    /* --- size and autoscaling (docs/FORMATS.md). `count` above is the
     * initial size; a fixed pool (`count:` in the YAML, or a reader that
     * knows no autoscaling) has min_count = max_count = count. */
    uint32_t min_count, max_count;
    double boot_s; /* request to a ready node; 0 = at once */
    /* --- prices: price_per_hour_usd is what a node of the pool costs (the
     * spot price for a spot pool); on_demand_per_hour_usd is the same
     * node on demand, when known (0 otherwise), for spot savings */
    double on_demand_per_hour_usd;
    const char *offer; /* "provider/instance" of a catalog offer, or NULL */
    /* --- spot: nodes are interrupted as a Poisson process of
     * spot_rate_per_node_hour per node, or at the recorded times of
     * spot_times_s (seconds from the start, sorted; one node of the pool
     * each), after a notice of spot_notice_s */
    bool spot;
    double spot_rate_per_node_hour;
    const double *spot_times_s;
    size_t nspot_times;
    double spot_notice_s;
    /* --- a topology domain per block of nodes (`topology`): the pool's
     * nodes carry label topology_key, whose value names a domain of at
     * most nodes_per_domain live nodes ("<pool>-d<k>", k from 0; the
     * simulator assigns new nodes to domains and labels the nodes; docs/
     * FORMATS.md). NULL / 0: none */
    const char *topology_key;
    uint32_t nodes_per_domain;
    /* --- the provider's limits (docs/FORMATS.md, "Provider limits"): a
     * node's billed time is rounded up to billing_granularity_s and is at
     * least billing_minimum_s (0: exact); a node is replaced once it is
     * max_lifetime_s old (EKS Auto Mode: 21 days; 0: never) */
    double billing_granularity_s, billing_minimum_s;
    double max_lifetime_s;
};

/* The cluster autoscaler's settings (spec.autoscaler). */
#define GP_AUTOSCALER_UNNEEDED_S 600.0 /* cluster-autoscaler's default, 10 min */
struct gp_autoscaler_spec {
    double scale_down_unneeded_s; /* a node idle this long is removed (600) */
};

struct gp_cluster {
    const char *name;
    const char *source; /* file it was read from */
    struct gp_pool_spec *pools;
    size_t npools;
    struct gp_node_spec *nodes; /* every node of every pool, in order */
    size_t nnodes;
    double control_plane_per_hour_usd; /* the managed control plane's fee; 0 = none */
    const char *control_plane_offer;   /* the provider it came from, or NULL */
    struct gp_autoscaler_spec autoscaler;
    /* what the reader found doubtful but not wrong, one line each
     * ("FILE:LINE:COL: PATH: ..."), in the arena; the CLI prints them */
    const char **warnings;
    size_t nwarnings, warnings_cap;
};

/* Whether a pool can change size (min < max) or loses nodes (spot, a
 * maximum node lifetime). */
bool gp_pool_is_dynamic(const struct gp_pool_spec *p);

/* The node labels gp_cluster_expand sets, which a pool may not write:
 * returns what of the pool they come from ("name" for gpuplane.io/pool,
 * "gpu and sharing" for the GPU feature discovery labels), else NULL. */
const char *gp_cluster_label_owner(const char *key);

/* Expands pools into nodes named "<pool>-<i>" (i from 0) carrying the pool's
 * labels plus gpuplane.io/pool=<pool> and, on GPU pools, what NVIDIA's GPU
 * feature discovery sets: nvidia.com/gpu.product=<model> (with -SHARED on
 * time-sliced and MPS GPUs that are not renamed), nvidia.com/gpu.count,
 * nvidia.com/gpu.replicas and nvidia.com/gpu.sharing-strategy
 * (gp_sharing_gfd_product and the others, engine/sharing.h);
 * a node's sharing points at its pool's spec (exclusive ones too: a
 * fraction then takes a whole GPU). */
enum gp_err gp_cluster_expand(struct gp_cluster *c, struct gp_arena *a, struct gp_diag *diag);

/* Reads "PATH" (gpuplane Cluster YAML), "openb:PATH" or "philly:PATH"
 * (docs/FORMATS.md). */
enum gp_err gp_cluster_load(const char *arg, struct gp_arena *a, struct gp_cluster *out,
                            struct gp_diag *diag);

/* The readers behind gp_cluster_load; text is the whole file, name is used
 * in diagnostics. They never print; all errors go to diag. */
enum gp_err gp_cluster_parse_yaml(const char *text, size_t len, const char *name,
                                  struct gp_arena *a, struct gp_cluster *out, struct gp_diag *diag);
enum gp_err gp_cluster_parse_openb(const char *text, size_t len, const char *name,
                                   struct gp_arena *a, struct gp_cluster *out,
                                   struct gp_diag *diag);

#endif
