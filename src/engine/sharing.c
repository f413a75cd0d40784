/* sharing.c - names for the sharing modes, the resource names NVIDIA's
 * device plugin advertises for each of them and the labels its GPU feature
 * discovery sets. */
#include "engine/sharing.h"

#include <stdio.h>
#include <string.h>

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

bool gp_share_modes_parse(const char *list, uint8_t *modes)
{
    uint8_t got = 0;
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && *p == ' ')
            p++, len--;
        while (len > 0 && p[len - 1] == ' ')
            len--;
        int found = -1;
        for (int m = GP_SHARE_EXCLUSIVE; m <= GP_SHARE_MIG; m++) {
            const char *name = gp_share_mode_name((enum gp_share_mode)m);
            if (strlen(name) == len && strncmp(name, p, len) == 0)
                found = m;
        }
        if (found < 0)
            return false;
        got |= (uint8_t)(1u << found);
        if (!end)
            break;
        p = end + 1;
    }
    *modes = got;
    return true;
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

static bool gfd_shared(const struct gp_sharing_spec *s)
{
    return s && (s->mode == GP_SHARE_TIMESLICE || s->mode == GP_SHARE_MPS) && s->replicas > 1;
}

const char *gp_sharing_gfd_product(const struct gp_sharing_spec *s, const char *model, char *buf,
                                   size_t size)
{
    bool suffix = gfd_shared(s) && !s->rename_by_default;
    snprintf(buf, size, "%s%s", model ? model : "", suffix ? GP_GFD_SHARED_SUFFIX : "");
    return buf;
}

uint32_t gp_sharing_gfd_replicas(const struct gp_sharing_spec *s)
{
    if (gfd_shared(s))
        return s->replicas;
    return s && s->mode == GP_SHARE_MIG && s->mig.strategy == GP_MIG_MIXED ? 0 : 1;
}

const char *gp_sharing_gfd_strategy(const struct gp_sharing_spec *s)
{
    if (!gfd_shared(s))
        return "none";
    return s->mode == GP_SHARE_MPS ? "mps" : "time-slicing";
}

size_t gp_sharing_gfd_model_len(const char *product)
{
    size_t n = strlen(product), k = strlen(GP_GFD_SHARED_SUFFIX);
    return n > k && strcmp(product + n - k, GP_GFD_SHARED_SUFFIX) == 0 ? n - k : n;
}
