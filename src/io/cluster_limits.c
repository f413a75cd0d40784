/* cluster_limits.c - a pool's provider limits (docs/FORMATS.md, "Provider
 * limits"): billingGranularity and billingMinimum, how the provider rounds
 * a node's billed time (per second with a one-minute minimum on Compute
 * Engine; per minute; per hour), and maxNodeLifetime, the age at which the
 * provider replaces a node whatever it runs (EKS Auto Mode: at most 21
 * days; GKE flex-start VMs: at most seven days). The values and their
 * sources are in data/provider-limits.json; a Cluster spec states them per
 * pool (the planner writes them from that file). */
#include <math.h>

#include "io/cluster_internal.h"

#define MAX_GRANULARITY_S 86400.0         /* a day: coarser billing is a reservation */
#define MAX_MINIMUM_S     (31 * 86400.0)  /* a month */
#define MAX_LIFETIME_S    (366 * 86400.0) /* a year */

enum gp_err gp_cluster_pool_granularity(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.granularity = v;
    enum gp_err err =
        gp_cluster_read_duration(y, v, MAX_GRANULARITY_S, &po->spec.billing_granularity_s);
    if (err == GP_OK && !(po->spec.billing_granularity_s > 0))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a duration above 0 (1s, 1m or 1h)");
    return err;
}

enum gp_err gp_cluster_pool_minimum(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.minimum = v;
    return gp_cluster_read_duration(y, v, MAX_MINIMUM_S, &po->spec.billing_minimum_s);
}

enum gp_err gp_cluster_pool_lifetime(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.lifetime = v;
    enum gp_err err = gp_cluster_read_duration(y, v, MAX_LIFETIME_S, &po->spec.max_lifetime_s);
    if (err == GP_OK && !(po->spec.max_lifetime_s > 0))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a duration above 0, like 21d or 336h");
    return err;
}

enum gp_err gp_cluster_check_limits(struct gp_yaml *y, struct cluster_pool *po)
{
    const struct gp_pool_spec *p = &po->spec;
    if (po->f.lifetime && !(p->max_lifetime_s > p->boot_s))
        return gp_cluster_key_fail(y, "maxNodeLifetime", po->f.lifetime, GP_EINVALID,
                                   "%g s is not longer than the pool's bootTime (%g s): its "
                                   "nodes would be replaced before they are ready",
                                   p->max_lifetime_s, p->boot_s);
    return GP_OK;
}
