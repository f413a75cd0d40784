/* cluster_internal.h - what the parts of the Cluster spec reader share;
 * internal to src/io, the public interface is gp_cluster_parse_yaml in
 * io/cluster.h.
 *
 *   cluster_yaml.c    the document: apiVersion, kind, metadata, spec,
 *                     spec.autoscaler; the helpers below
 *   cluster_pool.c    spec.nodePools[]: the pool table and the checks run
 *                     once a pool is read; name, gpu, labels, taints,
 *                     size (count or minCount/maxCount/initialCount),
 *                     bootTime, topology
 *   cluster_sharing.c a pool's GPU sharing (time-slicing, MPS, MIG), checked
 *                     against its GPU model
 *   cluster_offer.c   prices, catalog offers (data/providers.json) and
 *                     spec.controlPlane
 *   cluster_spot.c    spot pools: interruptions by rate, times or file,
 *                     and the notice
 *
 * The parts share the pool being read (struct cluster_pool: the spec and
 * the nodes its fields were written at). Each part gives the field
 * handlers cluster_pool.c's pool_fields table names, and a check_* that
 * runs once the whole pool is known. Adding a pool field: a row in
 * pool_fields and its handler in the part it belongs to. */
#ifndef GP_IO_CLUSTER_INTERNAL_H
#define GP_IO_CLUSTER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/cluster.h"
#include "io/yaml_walk.h"

/* One entry of sharing.mig.layout as written: profile: count. */
struct cluster_layout_entry {
    const char *profile;
    uint32_t count;
    struct fy_node *key, *value;
};

/* A pool while it is read: the spec (first, so the field table's offsets
 * hold) and the fields' nodes, kept for the checks that run when the
 * whole pool is known. A NULL node is a field not written. */
struct cluster_pool {
    struct gp_pool_spec spec;
    struct {
        struct fy_node *node, *mode, *replicas, *rename, *fail_gt1, *oversubscribe, *mps, *mig;
        struct fy_node *mps_pct, *mps_mem, *mig_strategy, *mig_layout, *mig_dynamic;
        struct fy_node *mig_reconf;
        int64_t mps_mem_mib;
        const char *layout_name; /* layout: all-balanced */
        struct cluster_layout_entry *layout;
        size_t nlayout;
    } sh;
    /* size, price and spot fields as written (NULL: not written) */
    struct {
        struct fy_node *count, *min, *max, *initial, *boot, *price, *gpu_price, *od_price;
        struct fy_node *offer, *spot, *rate, *times, *file, *notice, *topology;
        struct fy_node *granularity, *minimum, *lifetime;
        double gpu_price_usd;
        const char *offer_provider, *offer_instance, *offer_gpu;
    } f;
};

/* --- helpers (cluster_yaml.c) ------------------------------------------ */

enum gp_err gp_cluster_oom(struct gp_yaml *y);
/* Fails at node `at` with ".key" pushed on the path. */
enum gp_err gp_cluster_key_fail(struct gp_yaml *y, const char *key, struct fy_node *at,
                                enum gp_err err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* true or false (True, TRUE, ...), unquoted. */
enum gp_err gp_cluster_read_bool(struct gp_yaml *y, struct fy_node *v, bool *out);
/* A duration like 90s, 4m or 1h30m, at most max_s. */
enum gp_err gp_cluster_read_duration(struct gp_yaml *y, struct fy_node *v, double max_s,
                                     double *out);

/* --- spec.nodePools (cluster_pool.c) ----------------------------------- */

/* A field handler: reads spec.nodePools into the struct gp_cluster obj. */
enum gp_err gp_cluster_spec_pools(struct gp_yaml *y, struct fy_node *v, void *obj);

/* --- sharing (cluster_sharing.c) --------------------------------------- */

/* Field handler of `sharing` (obj: struct cluster_pool). */
enum gp_err gp_cluster_pool_sharing(struct gp_yaml *y, struct fy_node *v, void *obj);
/* The sharing spec against the rest of the pool, once the pool is read. */
enum gp_err gp_cluster_check_sharing(struct gp_yaml *y, struct cluster_pool *po);

/* --- prices, offers, control plane (cluster_offer.c) ------------------- */

/* Field handlers of pricePerHour, pricePerGpuHour, onDemandPricePerHour
 * and offer (obj: struct cluster_pool). */
enum gp_err gp_cluster_pool_price(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_gpu_price(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_od_price(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_offer(struct gp_yaml *y, struct fy_node *v, void *obj);
/* pricePerHour, pricePerGpuHour or offer: one of them; the offer resolved. */
enum gp_err gp_cluster_check_price(struct gp_yaml *y, struct cluster_pool *po);
/* Field handler of spec.controlPlane (obj: struct gp_cluster). */
enum gp_err gp_cluster_spec_control_plane(struct gp_yaml *y, struct fy_node *v, void *obj);

/* --- spot (cluster_spot.c) --------------------------------------------- */

/* Field handlers of spot, interruptionRate, interruptionTimes,
 * interruptionFile and spotNotice (obj: struct cluster_pool). */
enum gp_err gp_cluster_pool_spot(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_rate(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_times(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_file(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_notice(struct gp_yaml *y, struct fy_node *v, void *obj);
/* The interruption fields need spot: true; a rate or a series, not both. */
enum gp_err gp_cluster_check_spot(struct gp_yaml *y, struct cluster_pool *po);

/* --- the provider's limits (cluster_limits.c) -------------------------- */

/* Field handlers of billingGranularity, billingMinimum and
 * maxNodeLifetime (obj: struct cluster_pool). */
enum gp_err gp_cluster_pool_granularity(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_minimum(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_cluster_pool_lifetime(struct gp_yaml *y, struct fy_node *v, void *obj);
/* A lifetime longer than the pool's boot time. */
enum gp_err gp_cluster_check_limits(struct gp_yaml *y, struct cluster_pool *po);

#endif
