/* packing_lists.c - the lists `gpuplane packing` takes: --workloads,
 * --policies and --seeds (packing.h), parsed and checked before anything
 * is loaded. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cli/packing.h"
#include "engine/engine.h"
#include "util/arena.h"
#include "util/units.h"

/* The workloads of the paper's figures (docs/fragmentation.md). */
static const char *const paper_workloads[] = {
    "default",    "cpu050",     "cpu100",      "cpu200",     "cpu250",     "gpushare40",
    "gpushare60", "gpushare80", "gpushare100", "gpuspec10",  "gpuspec20",  "gpuspec25",
    "gpuspec33",  "multigpu20", "multigpu30",  "multigpu40", "multigpu50",
};
#define NPAPER_WORKLOADS (sizeof paper_workloads / sizeof paper_workloads[0])

/* The paper's policies, in its order. */
static const char *const paper_policies[] = {
    "random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd",
};
#define NPAPER_POLICIES (sizeof paper_policies / sizeof paper_policies[0])

/* Splits s at commas into at most max pieces copied into the arena; an
 * empty piece is an error. */
static enum gp_err split_list(const char *flag, const char *s, struct gp_arena *a, const char **out,
                              size_t max, size_t *n, struct gp_diag *d)
{
    *n = 0;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0)
            return gp_diag_set(d, GP_EUSAGE, "%s: empty name in the list '%s'", flag, s);
        if (*n == max)
            return gp_diag_set(d, GP_EUSAGE, "%s: more than %zu names in the list", flag, max);
        if (!(out[(*n)++] = gp_arena_strndup(a, p, len)))
            return gp_diag_set(d, GP_ENOMEM, "%s: out of memory", flag);
        if (!comma)
            return GP_OK;
        p = comma + 1;
    }
}

static bool listed_before(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* A workload name becomes part of a file name: letters, digits, '_', '-'
 * and '.' only, and no leading '.'. */
static bool workload_name_ok(const char *s)
{
    if (!*s || *s == '.')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

enum gp_err gp_packing_parse_workloads(const char *arg, const char *dir, struct gp_arena *a,
                                       const char **out, size_t *n, struct gp_diag *d)
{
    if (strcmp(arg, "all") == 0) {
        for (size_t i = 0; i < NPAPER_WORKLOADS; i++)
            out[i] = paper_workloads[i];
        *n = NPAPER_WORKLOADS;
    } else {
        enum gp_err err = split_list("--workloads", arg, a, out, GP_PACKING_MAX_WORKLOADS, n, d);
        if (err != GP_OK)
            return err;
    }
    for (size_t i = 0; i < *n; i++) {
        if (!workload_name_ok(out[i]))
            return gp_diag_set(d, GP_EUSAGE,
                               "--workloads: '%s' is not a workload name (expected letters, "
                               "digits, '_' or '-', as in default,cpu050,gpushare40, or all)",
                               out[i]);
        if (listed_before(out, i, out[i]))
            return gp_diag_set(d, GP_EUSAGE, "--workloads: '%s' is listed twice", out[i]);
        char *path = gp_arena_printf(a, "%s/" GP_PACKING_POD_FILE_PREFIX "%s.csv", dir, out[i]);
        if (!path)
            return gp_diag_set(d, GP_ENOMEM, "--workloads: out of memory");
        if (access(path, R_OK) != 0)
            return gp_diag_set(d, GP_EUSAGE,
                               "--workloads: unknown workload '%s': no readable %s (the paper's "
                               "are: default, cpu050, ..., multigpu50, or all)",
                               out[i], path);
    }
    return GP_OK;
}

static enum gp_err unknown_policy(const char *name, struct gp_diag *d)
{
    char names[256] = "";
    for (size_t i = 0; gp_policies[i]; i++) {
        if (i)
            strncat(names, ", ", sizeof names - strlen(names) - 1);
        strncat(names, gp_policies[i]->name, sizeof names - strlen(names) - 1);
    }
    return gp_diag_set(d, GP_EUSAGE,
                       "--policies: unknown policy '%s' (expected all, or some of: %s)", name,
                       names);
}

enum gp_err gp_packing_parse_policies(const char *arg, struct gp_arena *a,
                                      const struct gp_policy_ops **out, size_t *n,
                                      struct gp_diag *d)
{
    *n = 0;
    if (!arg || strcmp(arg, "all") == 0) {
        /* the paper's six in its order, then the rest in registry order */
        for (size_t i = 0; i < NPAPER_POLICIES; i++)
            if ((out[*n] = gp_policy_find(paper_policies[i])))
                (*n)++;
        if (!arg)
            return GP_OK;
        for (size_t i = 0; gp_policies[i] && *n < GP_PACKING_MAX_POLICIES; i++) {
            bool seen = false;
            for (size_t k = 0; k < *n; k++)
                seen = seen || out[k] == gp_policies[i];
            if (!seen)
                out[(*n)++] = gp_policies[i];
        }
        return GP_OK;
    }
    const char *names[GP_PACKING_MAX_POLICIES];
    size_t nn;
    enum gp_err err = split_list("--policies", arg, a, names, GP_PACKING_MAX_POLICIES, &nn, d);
    if (err != GP_OK)
        return err;
    for (size_t i = 0; i < nn; i++) {
        if (!(out[i] = gp_policy_find(names[i])))
            return unknown_policy(names[i], d);
        if (listed_before(names, i, names[i]))
            return gp_diag_set(d, GP_EUSAGE, "--policies: '%s' is listed twice", names[i]);
    }
    *n = nn;
    return GP_OK;
}

enum gp_err gp_packing_parse_seeds(const char *arg, struct gp_arena *a, uint64_t **out, size_t *n,
                                   struct gp_diag *d)
{
    const char *items[GP_PACKING_MAX_SEEDS];
    size_t nitems;
    enum gp_err err = split_list("--seeds", arg, a, items, GP_PACKING_MAX_SEEDS, &nitems, d);
    if (err != GP_OK)
        return err;
    uint64_t *seeds = gp_arena_alloc(a, GP_PACKING_MAX_SEEDS * sizeof *seeds);
    if (!seeds)
        return gp_diag_set(d, GP_ENOMEM, "--seeds: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < nitems; i++) {
        const char *item = items[i];
        const char *dash = strchr(item, '-');
        char lo_text[32];
        int64_t lo = 0, hi = 0;
        bool ok;
        if (dash) {
            size_t n_lo = (size_t)(dash - item);
            ok = n_lo < sizeof lo_text;
            if (ok) {
                memcpy(lo_text, item, n_lo);
                lo_text[n_lo] = '\0';
                ok = gp_units_uint(lo_text, &lo) && gp_units_uint(dash + 1, &hi);
            }
        } else {
            ok = gp_units_uint(item, &lo);
            hi = lo;
        }
        if (!ok)
            return gp_diag_set(d, GP_EUSAGE,
                               "--seeds: expected a range A-B or a list of non-negative "
                               "integers like 42,43,50-51, got '%s'",
                               arg);
        if (hi < lo)
            return gp_diag_set(d, GP_EUSAGE, "--seeds: the range '%s' ends before it starts", item);
        if ((uint64_t)(hi - lo) >= GP_PACKING_MAX_SEEDS - k)
            return gp_diag_set(d, GP_EUSAGE, "--seeds: more than %d seeds", GP_PACKING_MAX_SEEDS);
        for (int64_t s = lo; s <= hi; s++) {
            for (size_t j = 0; j < k; j++)
                if (seeds[j] == (uint64_t)s)
                    return gp_diag_set(d, GP_EUSAGE, "--seeds: seed %lld is listed twice",
                                       (long long)s);
            seeds[k++] = (uint64_t)s;
        }
    }
    *out = seeds;
    *n = k;
    return GP_OK;
}
