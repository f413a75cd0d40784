/* philly.c - readers for the Microsoft Philly trace (Jeon et al., ATC'19):
 * the job table published with Pollux (timestamp,duration,num_gpus,
 * gpu_time,cluster) as pod and gang items, and the machine list as a
 * cluster. The trace records no CPU or memory, so jobs and machines get
 * 4 cores and 32 GiB per GPU. docs/FORMATS.md describes the mapping. */
#include "io/philly.h"
#include "io/philly_vc.h"

#include "io/csv.h"
#include "io/workload.h"
#include "util/vec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHILLY_MAX_GPUS     65536 /* per job */
#define PHILLY_MAX_DURATION 1e10  /* seconds, about 317 years */
#define PHILLY_MAX_GPU_MEM  1024  /* GB per GPU */

/* n decimal digits at s; false on anything else. */
static bool philly_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar: count
 * in 400-year eras of 146097 days, with years starting on March 1 so that
 * the leap day is the last day of a year. */
static int64_t philly_days_from_civil(int64_t y, int m, int d)
{
    if (m <= 2)
        y--;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                   /* 0..399 */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0..365 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* 0..146096 */
    return era * 146097 + doe - 719468; /* 719468: 0000-03-01 to 1970-01-01 */
}

bool gp_philly_parse_time(const char *s, int64_t *out)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, se;
    if (strlen(s) != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
        s[13] != ':' || s[16] != ':')
        return false;
    if (!philly_digits(s, 4, &y) || !philly_digits(s + 5, 2, &mo) || !philly_digits(s + 8, 2, &d) ||
        !philly_digits(s + 11, 2, &h) || !philly_digits(s + 14, 2, &mi) ||
        !philly_digits(s + 17, 2, &se))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59)
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] + (mo == 2 && leap))
        return false;
    *out = philly_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    return true;
}

enum gp_err gp_workload_parse_philly(const char *text, size_t len, const char *name,
                                     struct gp_arena *a, struct gp_workload *w,
                                     struct gp_diag *diag)
{
    enum { C_TIME, C_DUR, C_GPUS, C_GPUTIME, C_VC, C_N };
    static const struct gp_csv_col cols[C_N] = {
        {"timestamp", true}, {"duration", true}, {"num_gpus", true},
        {"gpu_time", false}, {"cluster", false},
    };
    struct gp_csv c;
    struct gp_csv_map vcs = {0}; /* interned virtual cluster names */
    GP_VEC(const char *) vc_names = {0};
    const size_t start = w->nitems;
    size_t row = 0;
    int64_t first = INT64_MAX;
    int idx[C_N];
    bool got;
    enum gp_err err;

    if (!name)
        name = "<philly>";
    gp_csv_init(&c, text, len, name);
    err = gp_csv_header(&c, cols, C_N, 0, idx, diag);
    if (err != GP_OK)
        goto out;
    while ((err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
        struct gp_item it = {0};
        int64_t t, gpus;
        double dur, gpu_time;
        if (!gp_philly_parse_time(gp_csv_field(&c, idx[C_TIME]), &t)) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_TIME], "timestamp",
                             "a time YYYY-MM-DD HH:MM:SS", diag);
            goto out;
        }
        if ((err = gp_csv_number(&c, idx[C_DUR], "duration", 0, PHILLY_MAX_DURATION, &dur, diag)) ||
            (err = gp_csv_int(&c, idx[C_GPUS], "num_gpus", 1, PHILLY_MAX_GPUS, &gpus, diag)))
            goto out;
        /* gpu_time (duration x num_gpus) is redundant: checked, not used */
        if (*gp_csv_field(&c, idx[C_GPUTIME]) &&
            (err = gp_csv_number(&c, idx[C_GPUTIME], "gpu_time", 0, HUGE_VAL, &gpu_time, diag)))
            goto out;
        const char *vc = gp_csv_field(&c, idx[C_VC]);
        if (*vc) {
            uint32_t vi;
            if (gp_csv_map_get(&vcs, vc, &vi)) {
                it.queue = vc_names.items[vi];
            } else {
                bool found;
                it.queue = gp_arena_strdup(a, vc);
                if (!it.queue || GP_VEC_PUSH(&vc_names, it.queue) != 0 ||
                    gp_csv_map_put(&vcs, it.queue, (uint32_t)(vc_names.len - 1), &found, &vi) !=
                        GP_OK) {
                    err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
                    goto out;
                }
            }
        }
        it.name = gp_arena_printf(a, "philly-%zu", row);
        it.source = gp_arena_printf(a, "%s:%lu", name, c.line);
        if (!it.name || !it.source) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto out;
        }
        uint32_t per_pod = (uint32_t)gpus;
        if (gpus > GP_PHILLY_GPUS_PER_POD) {
            /* a gang of ceil(g/8) pods of 8 GPUs, placed all or nothing */
            it.kind = GP_ITEM_JOB;
            it.completions =
                (uint32_t)((gpus + GP_PHILLY_GPUS_PER_POD - 1) / GP_PHILLY_GPUS_PER_POD);
            it.parallelism = it.completions;
            it.gang_min = it.completions;
            per_pod = GP_PHILLY_GPUS_PER_POD;
        } else {
            it.kind = GP_ITEM_POD;
        }
        it.pod.name = it.name;
        it.pod.gpu_count = per_pod;
        it.pod.gpu_milli = GP_GPU_MILLI;
        it.pod.cpu_milli = (int64_t)per_pod * GP_PHILLY_CPU_MILLI_PER_GPU;
        it.pod.mem_mib = (int64_t)per_pod * GP_PHILLY_MEM_MIB_PER_GPU;
        it.has_duration = true;
        it.duration.kind = GP_DIST_FIXED;
        it.duration.a = dur;
        it.repeat = 1;
        it.arrival_s = (double)t; /* made relative below */
        if (t < first)
            first = t;
        if ((err = gp_workload_append(w, a, &it)) != GP_OK) {
            gp_diag_set(diag, err, "%s: out of memory", name);
            goto out;
        }
        row++;
    }
    if (err != GP_OK)
        goto out;
    if (row == 0) {
        err = gp_diag_set(diag, GP_EINVALID,
                          "%s: no jobs, expected at least one row after the header", name);
        goto out;
    }
    /* arrivals count from the earliest submission (rows are not sorted) */
    for (size_t i = start; i < w->nitems; i++)
        w->items[i].arrival_s -= (double)first;
out:
    gp_csv_free(&c);
    gp_csv_map_free(&vcs);
    GP_VEC_FREE(&vc_names);
    if (err != GP_OK)
        w->nitems = start; /* all or nothing */
    return err;
}

/* "12GB", "12 GB", "12GiB", "12G" or "12": per-GPU memory in GB (taken as
 * GiB). False on anything else. */
static bool philly_gpu_mem(const char *s, int64_t *gb)
{
    int64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (*p - '0');
        if (v > PHILLY_MAX_GPU_MEM)
            return false;
    }
    while (*p == ' ')
        p++;
    if (*p && strcmp(p, "GB") != 0 && strcmp(p, "GiB") != 0 && strcmp(p, "G") != 0)
        return false;
    if (v < 1)
        return false;
    *gb = v;
    return true;
}

enum gp_err gp_cluster_parse_philly(const char *text, size_t len, const char *name,
                                    struct gp_arena *a, struct gp_cluster *out,
                                    struct gp_diag *diag)
{
    enum { C_INDEX, C_ID, C_GPUS, C_MEM, C_N };
    /* the revised list starts with an unnamed index column */
    static const struct gp_csv_col cols[C_N] = {
        {"", false},
        {"machineId", true},
        {"number of GPUs", true},
        {"single GPU mem", false},
    };
    struct gp_csv c;
    struct gp_csv_map names = {0}, shapes = {0};
    GP_VEC(struct gp_node_spec) nodes = {0};
    GP_VEC(uint32_t) node_pool = {0};
    GP_VEC(struct gp_pool_spec) pools = {0};
    GP_VEC(struct gp_kv *) pool_labels = {0};
    size_t rows = 0;
    int idx[C_N];
    bool got;
    enum gp_err err;

    if (!name)
        name = "<philly>";
    gp_csv_init(&c, text, len, name);
    err = gp_csv_header(&c, cols, C_N, 0, idx, diag);
    if (err != GP_OK)
        goto out;
    while ((err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
        struct gp_node_spec n = {0};
        int64_t gpus, gb = 0;
        rows++;
        const char *id = gp_csv_field(&c, idx[C_ID]);
        if (!*id) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_ID], "machineId", "a machine name", diag);
            goto out;
        }
        if ((err = gp_csv_int(&c, idx[C_GPUS], "number of GPUs", 0, GP_MAX_GPUS_PER_NODE, &gpus,
                              diag)))
            goto out;
        if (idx[C_MEM] >= 0 && !philly_gpu_mem(gp_csv_field(&c, idx[C_MEM]), &gb)) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_MEM], "single GPU mem",
                             "a GPU memory size like 12GB (1..1024)", diag);
            goto out;
        }
        if ((err = gp_csv_unique_name(&c, &names, a, id, "machineId", "machine", "listed", &n.name,
                                      diag)) != GP_OK)
            goto out;
        bool found; /* the map lookups below only insert */
        if (gpus == 0)
            continue; /* no GPUs: no Philly job can use it */
        char key[48];
        snprintf(key, sizeof key, "%" PRId64 "|%" PRId64, gpus, gb);
        uint32_t pi;
        if (!gp_csv_map_get(&shapes, key, &pi)) {
            struct gp_pool_spec p = {0};
            const char *k = gp_arena_strdup(a, key);
            if (gb) {
                p.name = gp_arena_printf(a, "philly-%" PRId64 "gpu-%" PRId64 "GB", gpus, gb);
                p.gpu_model = gp_arena_printf(a, "philly-%" PRId64 "GB", gb);
            } else {
                p.name = gp_arena_printf(a, "philly-%" PRId64 "gpu", gpus);
                p.gpu_model = "philly";
            }
            p.gpus_per_node = (uint32_t)gpus;
            p.gpu_mem_mib = (uint32_t)(gb * 1024);
            p.cpu_milli = gpus * GP_PHILLY_CPU_MILLI_PER_GPU;
            p.mem_mib = gpus * GP_PHILLY_MEM_MIB_PER_GPU;
            struct gp_kv *labels = gp_arena_alloc(a, 2 * sizeof *labels);
            pi = (uint32_t)pools.len;
            if (!k || !p.name || !p.gpu_model || !labels || GP_VEC_PUSH(&pools, p) != 0 ||
                gp_csv_map_put(&shapes, k, pi, &found, &pi) != GP_OK) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
                goto out;
            }
            labels[0].key = "gpuplane.io/pool";
            labels[0].value = p.name;
            labels[1].key = "nvidia.com/gpu.product";
            labels[1].value = p.gpu_model;
            /* the nodes carry the labels; a pool's own labels are user labels */
            if (GP_VEC_PUSH(&pool_labels, labels) != 0) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
                goto out;
            }
        }
        struct gp_pool_spec *p = &pools.items[pi];
        p->count++;
        n.pool = p->name;
        n.gpu_model = p->gpu_model;
        n.gpu_count = p->gpus_per_node;
        n.gpu_mem_mib = p->gpu_mem_mib;
        n.cpu_milli = p->cpu_milli;
        n.mem_mib = p->mem_mib;
        n.nlabels = 2;
        if (GP_VEC_PUSH(&nodes, n) != 0 || GP_VEC_PUSH(&node_pool, pi) != 0) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto out;
        }
    }
    if (err != GP_OK)
        goto out;
    if (nodes.len == 0) {
        err = gp_diag_set(diag, GP_EINVALID,
                          rows ? "%s: no machine has GPUs, expected at least one"
                               : "%s: no machines, expected at least one row after the header",
                          name);
        goto out;
    }
    for (size_t j = 0; j < nodes.len; j++)
        nodes.items[j].labels = pool_labels.items[node_pool.items[j]];
    out->name = "philly";
    out->source = gp_arena_strdup(a, name);
    out->pools = gp_arena_memdup(a, pools.items, pools.len * sizeof *pools.items);
    out->npools = pools.len;
    out->nodes = gp_arena_memdup(a, nodes.items, nodes.len * sizeof *nodes.items);
    out->nnodes = nodes.len;
    if (!out->source || !out->pools || !out->nodes) {
        memset(out, 0, sizeof *out);
        err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
    }
out:
    gp_csv_free(&c);
    gp_csv_map_free(&names);
    gp_csv_map_free(&shapes);
    GP_VEC_FREE(&nodes);
    GP_VEC_FREE(&node_pool);
    GP_VEC_FREE(&pools);
    GP_VEC_FREE(&pool_labels);
    return err;
}

/* ---- virtual clusters as queues ------------------------------------------ */

enum gp_err gp_philly_vc_queues(struct gp_workload *w, const char *vcs_text, size_t vcs_len,
                                const char *vcs_name, struct gp_arena *a, struct gp_diag *diag)
{
    enum { C_VC, C_NODES, C_N };
    static const struct gp_csv_col cols[C_N] = {{"vc", true}, {"node num", true}};
    struct gp_csv c;
    struct gp_csv_map sizes = {0}; /* VC name -> index in nodes */
    GP_VEC(int64_t) nodes = {0};
    GP_VEC(struct gp_queue_def) defs = {0};
    int idx[C_N];
    bool got, csv = vcs_text != NULL;
    enum gp_err err = GP_OK;

    if (!vcs_name)
        vcs_name = "<vcs>";
    if (w->nqueues > 0)
        return gp_diag_set(diag, GP_EINVALID,
                           "--vc-queues: the workload declares its own queues (%s); use one or "
                           "the other",
                           w->queues[0].source ? w->queues[0].source : "a Queue object");
    gp_csv_init(&c, csv ? vcs_text : "", csv ? vcs_len : 0, vcs_name);
    if (csv && (err = gp_csv_header(&c, cols, C_N, 0, idx, diag)) != GP_OK)
        goto out;
    while (csv && (err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
        const char *vc = gp_csv_field(&c, idx[C_VC]);
        int64_t n;
        uint32_t at;
        bool found;
        if (!*vc) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[C_VC], "vc", "a virtual cluster name", diag);
            goto out;
        }
        if ((err = gp_csv_int(&c, idx[C_NODES], "node num", 0, 1000000, &n, diag)) != GP_OK)
            goto out;
        if (gp_csv_map_get(&sizes, vc, &at)) {
            err = gp_csv_fail(&c, GP_EINVALID, diag, "VC \"%s\" is listed twice", vc);
            goto out;
        }
        const char *key = gp_arena_strdup(a, vc);
        if (!key || GP_VEC_PUSH(&nodes, n) != 0 ||
            gp_csv_map_put(&sizes, key, (uint32_t)(nodes.len - 1), &found, &at) != GP_OK) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", vcs_name);
            goto out;
        }
    }
    if (err != GP_OK)
        goto out;
    for (size_t i = 0; i < w->nitems; i++) {
        const char *name = w->items[i].queue;
        if (!name || strcmp(name, "default") == 0)
            continue;
        size_t k = defs.len;
        while (k > 0 && defs.items[k - 1].spec.name != name &&
               strcmp(defs.items[k - 1].spec.name, name) != 0)
            k--;
        if (k > 0)
            continue;
        struct gp_queue_def d;
        memset(&d, 0, sizeof d);
        d.source = "--vc-queues";
        d.spec.name = name;
        d.spec.weight = 1;
        d.spec.no_preempt_within = true;
        uint32_t at;
        if (csv && gp_csv_map_get(&sizes, name, &at)) {
            int64_t gpus = nodes.items[at] * GP_PHILLY_VC_GPUS_PER_NODE;
            d.spec.weight = nodes.items[at] > 0 ? (double)nodes.items[at] : 1;
            d.spec.gpu_milli.limited = true;
            d.spec.gpu_milli.borrow_limit = gpus * GP_GPU_MILLI;
        }
        if (GP_VEC_PUSH(&defs, d) != 0) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", vcs_name);
            goto out;
        }
    }
    if (defs.len > 0) {
        struct gp_queue_def *q = gp_arena_memdup(a, defs.items, defs.len * sizeof *defs.items);
        if (!q) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", vcs_name);
            goto out;
        }
        w->queues = q;
        w->nqueues = w->queues_cap = defs.len;
    }
out:
    gp_csv_free(&c);
    gp_csv_map_free(&sizes);
    GP_VEC_FREE(&nodes);
    GP_VEC_FREE(&defs);
    return err;
}
