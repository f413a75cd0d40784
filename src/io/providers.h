/* providers.h - the GPU cloud catalog compiled from data/providers.json
 * (providers_table.c, generated in the build directory by
 * cmake/providers_table.cmake):
 * each provider's control-plane fee, whether its machines can be Kubernetes
 * nodes, what its Kubernetes gives (drivers, sharing, interconnect, shared
 * storage, spot, autoscaling), and its GPU offers with their dated, sourced
 * prices, so that a Cluster YAML pool can say `offer: eks/p4de.24xlarge`
 * instead of copying a price and `gpuplane providers` can list them.
 * Constant data; nothing is read at run time. */
#ifndef GP_IO_PROVIDERS_H
#define GP_IO_PROVIDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a provider's machines become Kubernetes nodes (the catalog's
 * `kubernetes`): node pools of its managed control plane; machines you
 * join to a cluster you run yourself (k3s, kubeadm); or not at all
 * (containers on shared hosts, a marketplace). */
enum gp_kube_support {
    GP_KUBE_MANAGED,
    GP_KUBE_BYO,
    GP_KUBE_NONE,
};

/* A capability the catalog says yes or no to, or does not know. */
enum gp_tri {
    GP_TRI_UNKNOWN,
    GP_TRI_NO,
    GP_TRI_YES,
};

struct gp_provider {
    const char *id;                    /* "eks", "gke", ... */
    double control_plane_usd_per_hour; /* cheapest GPU-capable tier; < 0 = not known */
    enum gp_kube_support kubernetes;
    const char *name, *category, *product; /* "" when the catalog gives none */
    enum gp_tri drivers_preinstalled;      /* NVIDIA driver present on GPU nodes */
    enum gp_tri time_slicing, mig, mps;    /* GPU sharing modes the provider allows */
    const char *interconnect;              /* multi-node fabric as the catalog says; "" unknown */
    double interconnect_gbps;              /* < 0 = not stated */
    enum gp_tri rwx_storage;               /* a ReadWriteMany file system for pods */
    enum gp_tri spot;                      /* spot / preemptible GPU nodes */
    enum gp_tri autoscaling, scale_to_zero;
    const char *billing;    /* billing granularity as the catalog says; "" unknown */
    const char *source_url; /* the provider's first source; "" none */
    /* its limits (data/provider-limits.json): the least billed time of a
     * node, and the age at which the provider replaces a node in the mode
     * lifetime_scope names (EKS Auto Mode, GKE flex-start); < 0 / "" when
     * none is known */
    double billing_minimum_s;
    double max_node_lifetime_h;
    const char *lifetime_scope;
    const char *limits_source_url;
};

/* One offer; prices in USD, < 0 when the catalog has none. */
struct gp_offer {
    const char *provider;
    const char *instance;    /* instance type; "" when the catalog names none */
    const char *gpu;         /* the catalog's GPU name, e.g. "A100 SXM 80GB" */
    const char *form_factor; /* "SXM", "PCIe", ...; "" when not known */
    uint32_t gpus_per_node;  /* 0 = not known */
    uint32_t gpu_memory_gb;  /* per GPU; 0 = not known */
    double on_demand_gpu_hour, on_demand_node_hour;
    double spot_gpu_hour, spot_node_hour;
    const char *price_date;       /* YYYY-MM-DD; "" when the catalog gives none */
    const char *region;           /* "" when not known */
    const char *price_source_url; /* where the price was read */
    /* a third-party average over listings, not a list price; < 0 = none */
    double observed_avg_gpu_hour;
};

extern const char gp_providers_compiled_on[]; /* the catalog's as_of.compiled_on */
extern const struct gp_provider gp_providers[];
extern const size_t gp_nproviders;
extern const struct gp_offer gp_offers[];
extern const size_t gp_noffers;

/* The price of one node of an offer with gpus GPUs: the node price when the
 * catalog gives one, else the per-GPU price x gpus; spot or on demand.
 * < 0 when not known. */
double gp_offer_node_price(const struct gp_offer *o, uint32_t gpus, int spot);

/* The provider `id` of the catalog; NULL if it has none. */
const struct gp_provider *gp_provider_find(const char *id);

/* Whether a pool's gpu.model ("A100-80GB", "NVIDIA-H100-80GB-HBM3") names
 * the offer's GPU. Both are cut into words at every character that is not
 * a letter or a digit, case aside; vendor words (NVIDIA, Tesla, AMD, GeForce) and
 * memory types (HBM3, ...) are dropped and SXM4 is SXM. The model's first
 * word is the family and must be a word of the offer's GPU (A100 is not
 * A10, H100 not GH200); its memory ("80GB") must be the offer's when the
 * offer gives one; each other word must be one of the offer's, except a
 * form factor (SXM, PCIe, NVL) when the offer states none. */
bool gp_offer_gpu_matches(const struct gp_offer *o, const char *model);

#endif
