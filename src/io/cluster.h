/* cluster.h - a cluster as the readers produce it: node pools and the
 * nodes they expand to. Readers: the gpuplane Cluster YAML (cluster_yaml.c)
 * and the openb node CSV (openb.c). Everything lives in the caller's arena. */
#ifndef GP_IO_CLUSTER_H
#define GP_IO_CLUSTER_H

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
    uint32_t gpu_mem_mib; /* per GPU */
    int64_t cpu_milli;    /* per node */
    int64_t mem_mib;      /* per node */
    uint32_t count;       /* nodes */
    const struct gp_kv *labels;
    size_t nlabels;
    const struct gp_taint *taints;
    size_t ntaints;
    double price_per_hour_usd;      /* per node-hour; 0 = unknown */
    struct gp_sharing_spec sharing; /* checked against gpu_model; zero = exclusive */
};

struct gp_cluster {
    const char *name;
    const char *source; /* file it was read from */
    struct gp_pool_spec *pools;
    size_t npools;
    struct gp_node_spec *nodes; /* every node of every pool, in order */
    size_t nnodes;
};

/* Expands pools into nodes named "<pool>-<i>" (i from 0) carrying the pool's
 * labels plus gpuplane.io/pool=<pool> and nvidia.com/gpu.product=<model>;
 * a node's sharing points at its pool's spec unless that is exclusive. */
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
