/* load.c - the entry points behind --cluster and --workload: pick the
 * reader from the argument ("openb:PATH", "philly:PATH", or a plain path
 * to gpuplane YAML or Kubernetes manifests, where a workload directory is
 * read file by file in name order), expand node pools into nodes, and
 * grow a workload's item array. */
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/sharing.h"
#include "io/cluster.h"
#include "io/k8s_schema.h"
#include "io/philly.h"
#include "io/workload.h"
#include "io/yaml_walk.h"
#include "util/fs.h"

/* "openb:x" -> "x" when arg starts with prefix, else NULL. */
static const char *after_prefix(const char *arg, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(arg, prefix, n) == 0 ? arg + n : NULL;
}

const char *gp_workload_arg_path(const char *arg)
{
    const char *rest = after_prefix(arg, "openb:");
    if (!rest)
        rest = after_prefix(arg, "philly:");
    return rest ? rest : arg;
}

static enum gp_err empty_path(const char *arg, struct gp_diag *diag)
{
    return gp_diag_set(diag, GP_EUSAGE, "%s: expected a file name after the colon", arg);
}

/* The labels NVIDIA's GPU feature discovery sets that gpuplane models. */
static const char *const gfd_labels[] = {
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.replicas",
    "nvidia.com/gpu.sharing-strategy",
};
#define NGFD (sizeof gfd_labels / sizeof gfd_labels[0])

const char *gp_cluster_label_owner(const char *key)
{
    if (strcmp(key, "gpuplane.io/pool") == 0)
        return "name";
    for (size_t i = 0; i < NGFD; i++)
        if (strcmp(key, gfd_labels[i]) == 0)
            return "gpu and sharing";
    return NULL;
}

/* The GFD labels of a GPU pool's nodes, in gfd_labels' order, into
 * labels; false when out of memory. */
static bool gfd_values(const struct gp_pool_spec *p, struct gp_arena *a, struct gp_kv *labels)
{
    char product[160];
    const char *values[NGFD] = {
        gp_arena_printf(a, "%s",
                        gp_sharing_gfd_product(&p->sharing, p->gpu_model, product, sizeof product)),
        gp_arena_printf(a, "%u", p->gpus_per_node),
        gp_arena_printf(a, "%u", gp_sharing_gfd_replicas(&p->sharing)),
        gp_sharing_gfd_strategy(&p->sharing),
    };
    for (size_t i = 0; i < NGFD; i++) {
        if (!values[i])
            return false;
        labels[i].key = gfd_labels[i];
        labels[i].value = values[i];
    }
    return true;
}

enum gp_err gp_cluster_expand(struct gp_cluster *c, struct gp_arena *a, struct gp_diag *diag)
{
    const char *name = c->source ? c->source : "cluster";
    uint64_t total = 0;
    for (size_t i = 0; i < c->npools; i++)
        total += c->pools[i].count;
    if (total > GP_CLUSTER_MAX_NODES)
        return gp_diag_set(diag, GP_ELIMIT, "%s: %llu nodes in all, more than the %d supported",
                           name, (unsigned long long)total, GP_CLUSTER_MAX_NODES);
    struct gp_node_spec *nodes = NULL;
    if (total > 0) {
        nodes = gp_arena_alloc(a, (size_t)total * sizeof *nodes);
        if (!nodes)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
    }
    size_t k = 0;
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_pool_spec *p = &c->pools[i];
        bool gpu = p->gpu_model && *p->gpu_model && p->gpus_per_node > 0;
        /* every node of a pool shares one label array: the pool's labels,
         * then the ones that gpuplane sets (replacing any written) */
        struct gp_kv *labels = gp_arena_alloc(a, (p->nlabels + 1 + NGFD) * sizeof *labels);
        if (!labels)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
        size_t nl = 0;
        for (size_t j = 0; j < p->nlabels; j++)
            if (!gp_cluster_label_owner(p->labels[j].key))
                labels[nl++] = p->labels[j];
        labels[nl].key = "gpuplane.io/pool";
        labels[nl++].value = p->name;
        if (gpu) {
            if (!gfd_values(p, a, labels + nl))
                return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            nl += NGFD;
        }
        for (uint32_t n = 0; n < p->count; n++, k++) {
            struct gp_node_spec *s = &nodes[k];
            s->name = gp_arena_printf(a, "%s-%u", p->name, n);
            if (!s->name)
                return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            s->pool = p->name;
            s->gpu_model = gpu ? p->gpu_model : NULL;
            s->cpu_milli = p->cpu_milli;
            s->mem_mib = p->mem_mib;
            s->gpu_count = gpu ? p->gpus_per_node : 0;
            s->gpu_mem_mib = gpu ? p->gpu_mem_mib : 0;
            s->nvlink_gpus = gpu ? p->nvlink_gpus : 0;
            s->driver_version = gpu ? p->driver_version : 0;
            s->labels = labels;
            s->nlabels = nl;
            s->taints = p->taints;
            s->ntaints = p->ntaints;
            s->price_per_hour_usd = p->price_per_hour_usd;
            s->sharing = gpu ? &p->sharing : NULL;
        }
    }
    c->nodes = nodes;
    c->nnodes = k;
    return GP_OK;
}

typedef enum gp_err (*cluster_reader)(const char *, size_t, const char *, struct gp_arena *,
                                      struct gp_cluster *, struct gp_diag *);

enum gp_err gp_cluster_load(const char *arg, struct gp_arena *a, struct gp_cluster *out,
                            struct gp_diag *diag)
{
    cluster_reader reader = gp_cluster_parse_yaml;
    const char *path = arg;
    const char *rest = after_prefix(arg, "openb:");
    if (rest) {
        reader = gp_cluster_parse_openb;
        path = rest;
    } else if ((rest = after_prefix(arg, "philly:")) != NULL) {
        reader = gp_cluster_parse_philly;
        path = rest;
    }
    if (!*path)
        return rest ? empty_path(arg, diag)
                    : gp_diag_set(diag, GP_EUSAGE, "expected a cluster file name");
    char *text = NULL;
    size_t len = 0;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err != GP_OK)
        return err;
    err = reader(text, len, path, a, out, diag);
    free(text);
    if (err == GP_OK && !out->nodes)
        err = gp_cluster_expand(out, a, diag);
    return err;
}

typedef enum gp_err (*workload_reader)(const char *, size_t, const char *, struct gp_arena *,
                                       struct gp_workload *, struct gp_diag *);

static enum gp_err read_workload_file(const char *path, workload_reader reader, struct gp_arena *a,
                                      struct gp_workload *w, struct gp_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err != GP_OK)
        return err;
    err = reader(text, len, path, a, w, diag);
    free(text);
    return err;
}

bool gp_workload_dir_reads(const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return false;
    static const char *const exts[] = {".yaml", ".yml", ".json"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(name + n - e, exts[i]) == 0)
            return true;
    }
    return false;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads every manifest of a directory in name order (bytewise, so the
 * order does not depend on the locale). */
static enum gp_err read_workload_dir(const char *dir, struct gp_arena *a, struct gp_workload *w,
                                     struct gp_diag *diag)
{
    enum gp_err err = GP_OK;
    char **names = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir(dir);
    if (!d)
        return gp_diag_set(diag, GP_EIO, "%s: cannot read the directory", dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!gp_workload_dir_reads(e->d_name))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **p = realloc(names, ncap * sizeof *names);
            if (!p) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", dir);
                goto out;
            }
            names = p;
            cap = ncap;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", dir);
            goto out;
        }
        bool slash = *dir && dir[strlen(dir) - 1] == '/';
        snprintf(names[n], len, "%s%s%s", dir, slash ? "" : "/", e->d_name);
        n++;
    }
    if (n == 0) {
        err = gp_diag_set(diag, GP_EINVALID,
                          "%s: no *.yaml, *.yml or *.json files in the directory", dir);
        goto out;
    }
    qsort(names, n, sizeof *names, compare_names);
    size_t before = w->nitems, before_queues = w->nqueues, before_groups = w->ngroups;
    size_t before_classes = w->npclasses;
    struct gp_k8s_mark mark = gp_k8s_mark(w);
    for (size_t i = 0; i < n && err == GP_OK; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode))
            continue; /* a directory named like a file */
        err = read_workload_file(names[i], gp_workload_parse_manifest, a, w, diag);
    }
    if (err != GP_OK) { /* nothing of the directory stays */
        w->nitems = before;
        w->nqueues = before_queues;
        w->ngroups = before_groups;
        w->npclasses = before_classes;
        gp_k8s_restore(w, &mark);
    }
out:
    closedir(d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return err;
}

/* ---- the pod budget ------------------------------------------------------- */

static uint64_t max_pods = GP_WORKLOAD_MAX_PODS_DEFAULT;
static const char *max_pods_hint = "";

void gp_workload_set_max_pods(uint64_t n, const char *hint)
{
    max_pods = n ? n : GP_WORKLOAD_MAX_PODS_DEFAULT;
    max_pods_hint = hint ? hint : "";
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

uint64_t gp_workload_item_pods(const struct gp_item *it)
{
    bool can_fail = it->failure_prob > 0 || it->failure_rate_per_s > 0;
    uint64_t per = 1;
    switch (it->kind) {
    case GP_ITEM_DEPLOYMENT:
        per = it->replicas;
        break;
    case GP_ITEM_JOB:
        per = it->completions > it->parallelism ? it->completions : it->parallelism;
        if (per == 0)
            per = 1;
        if (can_fail)
            per += it->backoff_limit;
        break;
    case GP_ITEM_POD:
        per = 1 + (can_fail ? (uint64_t)it->backoff_limit : 0);
        break;
    }
    return mul_sat(per, it->repeat ? it->repeat : 1);
}

static const char *kind_name(enum gp_item_kind k)
{
    return k == GP_ITEM_DEPLOYMENT ? "Deployment" : k == GP_ITEM_JOB ? "Job" : "Pod";
}

/* Whether item i stands for rows of a trace read for the static mode. */
static bool in_trace(const struct gp_workload *w, size_t i)
{
    for (size_t t = 0; t < w->ntraces; t++)
        if (i >= w->traces[t].first && i - w->traces[t].first < w->traces[t].nitems)
            return true;
    return false;
}

enum gp_err gp_workload_check_budget(const struct gp_workload *w, struct gp_diag *diag)
{
    uint64_t total = 0;
    for (size_t i = 0; i < w->nitems; i++) {
        const struct gp_item *it = &w->items[i];
        uint64_t n = gp_workload_item_pods(it);
        total = total + n < total ? UINT64_MAX : total + n;
        if (total <= max_pods)
            continue;
        const char *src = it->source ? it->source : "workload";
        const char *name = it->name ? it->name : "?";
        const char *sep = *max_pods_hint ? "; " : "";
        char detail[64] = "";
        uint32_t repeat = it->repeat ? it->repeat : 1;
        if (repeat > 1 && in_trace(w, i))
            snprintf(detail, sizeof detail, " (%u rows of the trace ask for it)", repeat);
        else if (repeat > 1 && n < UINT64_MAX)
            snprintf(detail, sizeof detail, " (%u submissions of %llu)", repeat,
                     (unsigned long long)(n / repeat));
        if (n > max_pods)
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: %s/%s: up to %llu pods%s, more than the pod budget of "
                               "%llu%s%s",
                               src, kind_name(it->kind), name, (unsigned long long)n, detail,
                               (unsigned long long)max_pods, sep, max_pods_hint);
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: %s/%s: its %llu pods%s take the workload to %llu, more than "
                           "the pod budget of %llu%s%s",
                           src, kind_name(it->kind), name, (unsigned long long)n,
                           in_trace(w, i) ? detail : "", (unsigned long long)total,
                           (unsigned long long)max_pods, sep, max_pods_hint);
    }
    return GP_OK;
}

static enum gp_err load_one(const char *arg, struct gp_arena *a, struct gp_workload *w,
                            struct gp_diag *diag)
{
    const char *rest;
    if ((rest = after_prefix(arg, "openb:")) != NULL)
        return *rest ? gp_workload_read_openb(rest, a, w, diag) : empty_path(arg, diag);
    if ((rest = after_prefix(arg, "philly:")) != NULL)
        return *rest ? read_workload_file(rest, gp_workload_parse_philly, a, w, diag)
                     : empty_path(arg, diag);
    if (!*arg)
        return gp_diag_set(diag, GP_EUSAGE, "expected a workload file or directory name");
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return read_workload_dir(arg, a, w, diag);
    return read_workload_file(arg, gp_workload_parse_manifest, a, w, diag);
}

enum gp_err gp_workload_warn(struct gp_workload *w, struct gp_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg = n >= 0 ? gp_arena_alloc(a, (size_t)n + 1) : NULL;
    if (!msg)
        return GP_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++) /* one line, whatever names the input holds */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    if (w->nwarnings == w->warnings_cap) {
        size_t cap = w->warnings_cap ? 2 * w->warnings_cap : 16;
        const char **p = gp_arena_alloc(a, cap * sizeof *p);
        if (!p)
            return GP_ENOMEM;
        if (w->nwarnings)
            memcpy(p, w->warnings, w->nwarnings * sizeof *p);
        w->warnings = p;
        w->warnings_cap = cap;
    }
    w->warnings[w->nwarnings++] = msg;
    return GP_OK;
}

enum gp_err gp_workload_load(const char *arg, struct gp_arena *a, struct gp_workload *w,
                             struct gp_diag *diag)
{
    size_t before = w->nitems, before_traces = w->ntraces;
    enum gp_err err = load_one(arg, a, w, diag);
    if (err == GP_OK && (err = gp_workload_check_budget(w, diag)) != GP_OK) {
        w->nitems = before;
        w->ntraces = before_traces;
    }
    return err;
}

enum gp_err gp_workload_append(struct gp_workload *w, struct gp_arena *a,
                               const struct gp_item *item)
{
    const struct gp_item copy = *item; /* item may point into the array */
    if (w->nitems == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof *w->items)
            return GP_ENOMEM;
        /* a large array has a block of its own, grown in place of its
         * block: no old copies left behind (no reader keeps pointers into
         * the array across an append) */
        struct gp_item *items =
            gp_arena_grow(a, w->items, w->cap * sizeof *items, cap * sizeof *items);
        if (!items)
            return GP_ENOMEM;
        w->items = items;
        w->cap = cap;
    }
    w->items[w->nitems++] = copy;
    return GP_OK;
}
