/* providers.h - the GPU cloud catalog compiled from data/providers.json
 * (providers_table.c, generated in the build directory by
 * cmake/providers_table.cmake):
 * each provider's control-plane fee and its GPU offers with their prices,
 * so that a Cluster YAML pool can say `offer: eks/p4de.24xlarge` instead of
 * copying a price. Constant data; nothing is read at run time. */
#ifndef GP_IO_PROVIDERS_H
#define GP_IO_PROVIDERS_H

#include <stddef.h>
#include <stdint.h>

struct gp_provider {
    const char *id;                    /* "eks", "gke", ... */
    double control_plane_usd_per_hour; /* cheapest GPU-capable tier; < 0 = not known */
};

/* One offer; prices in USD, < 0 when the catalog has none. */
struct gp_offer {
    const char *provider;
    const char *instance;   /* instance type; "" when the catalog names none */
    const char *gpu;        /* the catalog's GPU name, e.g. "A100 SXM 80GB" */
    uint32_t gpus_per_node; /* 0 = not known */
    double on_demand_gpu_hour, on_demand_node_hour;
    double spot_gpu_hour, spot_node_hour;
    const char *price_date;
};

extern const struct gp_provider gp_providers[];
extern const size_t gp_nproviders;
extern const struct gp_offer gp_offers[];
extern const size_t gp_noffers;

/* The price of one node of an offer with gpus GPUs: the node price when the
 * catalog gives one, else the per-GPU price x gpus; spot or on demand.
 * < 0 when not known. */
double gp_offer_node_price(const struct gp_offer *o, uint32_t gpus, int spot);

#endif
