/* sharing.c - names for the sharing modes and the resource names NVIDIA's
 * device plugin advertises for each of them. */
#include "engine/sharing.h"

#include <stdio.h>

const char *gp_share_mode_name(enum gp_share_mode mode)
{
    switch (mode) {
    case GP_SHARE_EXCLUSIVE:
        return "exclusive";
    case GP_SHARE_TIMESLICE:
        return "timeslice";
    case GP_SHARE_MPS:
        return "mps";
    case GP_SHARE_MIG:
        return "mig";
    }
    return "?";
}

const char *gp_mig_strategy_name(enum gp_mig_strategy strategy)
{
    return strategy == GP_MIG_SINGLE ? "single" : "mixed";
}

const char *gp_sharing_resource(const struct gp_sharing_spec *s, int mig_profile, char *buf,
                                size_t size)
{
    const char *name = "nvidia.com/gpu";
    if (s && (s->mode == GP_SHARE_TIMESLICE || s->mode == GP_SHARE_MPS) && s->rename_by_default)
        name = "nvidia.com/gpu.shared";
    if (s && s->mode == GP_SHARE_MIG && s->mig.strategy == GP_MIG_MIXED && s->mig.model &&
        mig_profile >= 0 && (size_t)mig_profile < s->mig.model->nprofiles) {
        snprintf(buf, size, "nvidia.com/mig-%s", s->mig.model->profiles[mig_profile].name);
        return buf;
    }
    snprintf(buf, size, "%s", name);
    return buf;
}
