/* mig.h - NVIDIA Multi-Instance GPU: the profiles of each GPU model, GPU
 * instance layouts, their validity, and where to place one more instance.
 *
 * The model: a GPU has 8 memory slices (4 on A30) and 7 compute slices (4 on
 * A30). A GPU instance of a profile occupies the memory slices
 * [start, start + memory_slices) and compute_slices of the compute slices;
 * `start` must be one of the profile's valid starts, instances may not
 * overlap, at most max_instances of a profile and one "+me" instance (the
 * media engines) per GPU, and the compute slices may not exceed the GPU's.
 *
 * The tables are compiled from data/mig-profiles.json at build time
 * (cmake/mig_table.cmake): one source of truth, nothing read at run time.
 * Everything here is pure: no I/O, no state but those constant tables. */
#ifndef GP_ENGINE_MIG_H
#define GP_ENGINE_MIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_MIG_MAX_SLICES    8  /* memory slices of any GPU in the data */
#define GP_MIG_MAX_PROFILES  16 /* profiles of one GPU model */
#define GP_MIG_MAX_INSTANCES 8  /* GPU instances on one GPU (7 in practice) */
#define GP_MIG_MAX_MODELS    16 /* GPU models with MIG in the data */

struct gp_mig_profile {
    const char *name;       /* "1g.10gb", "1g.10gb+me" */
    uint8_t compute_slices; /* the "1g" */
    uint8_t memory_slices;  /* the placement size */
    uint8_t max_instances;
    uint8_t start_mask;  /* bit s set: s is a valid start */
    uint32_t memory_mib; /* nominal: the name's GB x 1024 (usable is ~3 % less) */
    bool media_ext;      /* "+me": takes the GPU's media engines; one per GPU */
    uint16_t smi_id;     /* nvidia-smi's profile ID (nvmlGpuInstanceProfileInfo_t.id) */
    uint16_t nvml_index; /* NVML_GPU_INSTANCE_PROFILE_* for ...GetGpuInstanceProfileInfo */
};

struct gp_mig_model {
    const char *id; /* "A100-80GB": the data's name for the model */
    uint8_t compute_slices, memory_slices;
    const char *confidence;      /* placements: "documented", "observed" or "derived" */
    const char *const *products; /* marketing names from the data */
    size_t nproducts;
    const uint32_t *pci_ids; /* PCI device IDs, e.g. 0x20B210DE */
    size_t npci_ids;
    const struct gp_mig_profile *profiles; /* in the data's order, smallest first */
    size_t nprofiles;
};

/* The compiled tables (mig_table.c, generated). */
extern const struct gp_mig_model gp_mig_models[];
extern const size_t gp_mig_nmodels;

/* One GPU instance: a profile index of the model and its first memory slice. */
struct gp_mig_instance {
    uint8_t profile;
    uint8_t start;
};

/* The GPU instances of one GPU, in no particular order. */
struct gp_mig_layout {
    uint8_t n;
    struct gp_mig_instance inst[GP_MIG_MAX_INSTANCES];
};

/* Instance counts per profile index, as mig-parted writes them. */
struct gp_mig_counts {
    uint8_t n[GP_MIG_MAX_PROFILES];
};

/* --- models and profiles ----------------------------------------------- */

/* The model for a name as users and tools write it: the data's id
 * ("A100-80GB"), a product name from the data, an nvidia-smi or GFD name
 * ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA-H100-80GB-HBM3",
 * "H100 NVL", "H200", "GH200"), case-insensitive. NULL for GPUs without MIG
 * (L4, T4, ...) and for names that do not say which model (bare "A100"). */
const struct gp_mig_model *gp_mig_model_find(const char *name);
/* The model with this PCI device ID (0x20B210DE), or NULL. */
const struct gp_mig_model *gp_mig_model_by_pci(uint32_t pci_id);

/* The index of a profile by name ("1g.10gb"), or -1. */
int gp_mig_profile_find(const struct gp_mig_model *m, const char *name);
/* The index of the profile behind a mixed-strategy resource name
 * ("nvidia.com/mig-1g.10gb"), or -1. */
int gp_mig_profile_by_resource(const struct gp_mig_model *m, const char *resource);

/* --- layouts ------------------------------------------------------------ */

/* True when the layout is valid for the model; otherwise false with a
 * one-line reason in why (if not NULL), e.g. "3g.40gb at slice 2: not a
 * valid start (valid: 0, 4)". */
bool gp_mig_layout_valid(const struct gp_mig_model *m, const struct gp_mig_layout *l, char *why,
                         size_t why_size);

/* The memory slices in use (bit s) and the compute slices in use. */
uint32_t gp_mig_used_slices(const struct gp_mig_model *m, const struct gp_mig_layout *l);
unsigned gp_mig_used_compute(const struct gp_mig_model *m, const struct gp_mig_layout *l);

/* True when adding profile p at start keeps a valid layout valid. */
bool gp_mig_fits(const struct gp_mig_model *m, const struct gp_mig_layout *l, unsigned p,
                 unsigned start);

/* How many more instances of profile p alone could be added to the layout. */
unsigned gp_mig_capacity(const struct gp_mig_model *m, const struct gp_mig_layout *l, unsigned p);

/* The start for one more instance of profile p on a valid layout, or -1
 * when none fits. The rule: among the starts where it fits, take the one
 * whose resulting layout keeps the most room for the largest profiles:
 * compare, for every profile from the largest (memory slices, then
 * compute slices) to the smallest, how many instances of it alone could
 * still be added (gp_mig_capacity); the first difference decides, and a
 * tie goes to the lowest start. So a slice is never taken from where a
 * larger profile could still have fitted when another start would do:
 * on an empty A100 a 1g goes to slice 6, a 2g to 4 and a 3g to 4, keeping
 * slices 0-3 for a 4g. */
int gp_mig_place(const struct gp_mig_model *m, const struct gp_mig_layout *l, unsigned p);

/* Places one instance of profile p (gp_mig_place) and appends it; returns
 * its index in the layout, or -1 (layout unchanged) when it does not fit. */
int gp_mig_add(const struct gp_mig_model *m, struct gp_mig_layout *l, unsigned p);

/* Removes instance i, keeping the others in order. */
void gp_mig_remove(struct gp_mig_layout *l, unsigned i);

/* The profiles (bit = profile index) of which one more instance fits. */
uint32_t gp_mig_free_profiles(const struct gp_mig_model *m, const struct gp_mig_layout *l);

/* The instance count of each profile in a layout. */
void gp_mig_layout_counts(const struct gp_mig_model *m, const struct gp_mig_layout *l,
                          struct gp_mig_counts *out);

/* A concrete layout for the counts (a mig-parted "mig-devices" map):
 * instances are placed largest first with gp_mig_place, backtracking to the
 * next-best start when a later instance would not fit, so any count vector
 * that has a valid layout gets one. False, with why naming the profile
 * that does not fit ("\"1g.10gb\": 8 instances, at most 7 on A100-80GB"),
 * when there is none. */
bool gp_mig_layout_from_counts(const struct gp_mig_model *m, const struct gp_mig_counts *counts,
                               struct gp_mig_layout *out, char *why, size_t why_size);

/* The counts of a named configuration from mig-parted's default file, for
 * this model: "all-disabled" (MIG off), "all-enabled" (MIG on, no
 * instances), "all-<profile>" (the profile, max_instances times; "+me"
 * written ".me", e.g. all-1g.10gb.me), "all-balanced" (2 of the 1-slice
 * profile, 1 of 2g and 1 of 3g where it exists). False when the name is
 * none of these or names a profile the model lacks. */
bool gp_mig_named_config(const struct gp_mig_model *m, const char *name, struct gp_mig_counts *out,
                         bool *mig_enabled);

/* "3g.40gb@4 2g.20gb@0 1g.10gb@2" into buf (for messages and tests). */
const char *gp_mig_layout_format(const struct gp_mig_model *m, const struct gp_mig_layout *l,
                                 char *buf, size_t size);

#endif
