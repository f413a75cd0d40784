/* render.c - writers for `gpuplane render`: NVIDIA device plugin configs,
 * mig-parted's config, the GPU Operator ConfigMaps that carry them and the
 * node labels that select them, from a checked Cluster spec. */
#include "io/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mig.h"
#include "engine/sharing.h"

/* --- YAML text ----------------------------------------------------------- */

static bool plain_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_' || c == '/';
}

/* True when s reads back as the same string without quotes: a letter
 * first (so never a number), only [A-Za-z0-9._/-], and not a word some YAML
 * reader takes for a boolean or null. */
static bool plain_ok(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no",  "on",
                                        "off",  "y",     "n",   "null"};
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return false;
    for (const char *p = s; *p; p++)
        if (!plain_char(*p))
            return false;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *a = s, *b = words[i];
        while (*a && *b && (*a | 0x20) == *b)
            a++, b++;
        if (!*a && !*b)
            return false;
    }
    return true;
}

/* A string scalar: plain when safe, else double-quoted with escapes. */
static void scalar(struct gp_sbuf *b, const char *s)
{
    if (plain_ok(s)) {
        gp_sbuf_add(b, s);
        return;
    }
    gp_sbuf_addc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            gp_sbuf_addc(b, '\\');
            gp_sbuf_addc(b, (char)*p);
        } else if (*p < 0x20 || *p == 0x7f) {
            gp_sbuf_printf(b, "\\x%02x", *p);
        } else {
            gp_sbuf_addc(b, (char)*p);
        }
    }
    gp_sbuf_addc(b, '"');
}

/* Text for a comment: control characters become '?'. */
static void comment_text(struct gp_sbuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        gp_sbuf_addc(b, *p < 0x20 || *p == 0x7f ? '?' : (char)*p);
}

/* Appends text with every line indented by `indent` spaces (a block scalar's
 * content). */
static void indented(struct gp_sbuf *b, const char *text, int indent)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0)
            gp_sbuf_printf(b, "%*s", indent, "");
        gp_sbuf_addn(b, p, len);
        gp_sbuf_addc(b, '\n');
        p += len + (nl ? 1 : 0);
    }
}

/* --- pools --------------------------------------------------------------- */

static bool gpu_pool(const struct gp_pool_spec *p)
{
    return p->gpu_model && *p->gpu_model && p->gpus_per_node > 0;
}

/* The MIG model of a GPU pool's GPUs, whatever its mode, or NULL. */
static const struct gp_mig_model *mig_model(const struct gp_pool_spec *p)
{
    if (!gpu_pool(p))
        return NULL;
    if (p->sharing.mode == GP_SHARE_MIG && p->sharing.mig.model)
        return p->sharing.mig.model;
    return gp_mig_model_find(p->gpu_model);
}

static bool any_mig_capable(const struct gp_cluster *c)
{
    for (size_t i = 0; i < c->npools; i++)
        if (mig_model(&c->pools[i]))
            return true;
    return false;
}

/* "1g.10gb x2, 3g.40gb x1" */
static void mig_summary(struct gp_sbuf *b, const struct gp_sharing_spec *s)
{
    struct gp_mig_counts counts;
    gp_mig_layout_counts(s->mig.model, &s->mig.layout, &counts);
    bool first = true;
    for (size_t i = 0; i < s->mig.model->nprofiles; i++) {
        if (!counts.n[i])
            continue;
        gp_sbuf_printf(b, "%s%s x%u", first ? "" : ", ", s->mig.model->profiles[i].name,
                       counts.n[i]);
        first = false;
    }
    if (first)
        gp_sbuf_add(b, "no instances");
}

/* The comment line saying what a pod's request of the replicated resource
 * res gets from the device plugin (docs/sharing.md). */
static void replica_requests(struct gp_sbuf *b, const struct gp_sharing_spec *s, const char *res)
{
    bool fail_gt1 = s->mode == GP_SHARE_MPS || s->fail_requests_greater_than_one;
    gp_sbuf_printf(b, "# A pod asking for %s: 1 gets one replica; ", res);
    if (fail_gt1)
        gp_sbuf_add(b, "the plugin fails requests for more.\n");
    else
        gp_sbuf_printf(b, "%s: N gets N (they may share a GPU).\n", res);
}

/* Comment lines saying what a pool's GPUs offer. */
static void pool_comment(struct gp_sbuf *b, const struct gp_pool_spec *p)
{
    const struct gp_sharing_spec *s = &p->sharing;
    char res[96];
    gp_sharing_resource(s, -1, res, sizeof res);
    gp_sbuf_printf(b, "# %u x ", p->gpus_per_node);
    comment_text(b, p->gpu_model);
    gp_sbuf_add(b, " per node: ");
    switch (s->mode) {
    case GP_SHARE_EXCLUSIVE:
        gp_sbuf_printf(b, "whole GPUs, one pod each (%s).\n", res);
        break;
    case GP_SHARE_TIMESLICE:
        gp_sbuf_printf(b, "time-slicing, each GPU advertised %u times as %s;\n", s->replicas, res);
        gp_sbuf_add(b, "# no memory or fault isolation between the pods of a GPU.\n");
        replica_requests(b, s, res);
        break;
    case GP_SHARE_MPS: {
        uint32_t pct = 100 / s->replicas, mib = p->gpu_mem_mib / s->replicas;
        gp_sbuf_printf(b, "MPS, each GPU advertised %u times as %s;\n", s->replicas, res);
        gp_sbuf_printf(b, "# the MPS daemon holds each client to %u %% of the threads and ", pct);
        if (mib)
            gp_sbuf_printf(b, "%u MiB.\n", mib);
        else
            gp_sbuf_printf(b, "1/%u of the memory.\n", s->replicas);
        if (s->mps.active_thread_pct < pct || (mib && s->mps.pinned_mem_mib < mib))
            gp_sbuf_printf(
                b,
                "# gpuplane counts %u %% and %u MiB per client: set them in the pods "
                "with\n"
                "# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE and CUDA_MPS_PINNED_DEVICE_MEM_LIMIT "
                "(a\n"
                "# client can only lower the daemon's limits).\n",
                s->mps.active_thread_pct, s->mps.pinned_mem_mib);
        replica_requests(b, s, res);
        break;
    }
    case GP_SHARE_MIG:
        gp_sbuf_printf(b, "MIG, %s strategy, per GPU ", gp_mig_strategy_name(s->mig.strategy));
        mig_summary(b, s);
        gp_sbuf_printf(b, ";\n# each instance advertised as %s.\n",
                       s->mig.strategy == GP_MIG_SINGLE ? "nvidia.com/gpu"
                                                        : "nvidia.com/mig-<profile>");
        if (s->mig.dynamic)
            gp_sbuf_add(b, "# Dynamic: gpuplane re-partitions empty GPUs for pending pods; the "
                           "layout above\n# is the initial one.\n");
        break;
    }
}

void gp_render_device_plugin(const struct gp_pool_spec *p, struct gp_sbuf *out)
{
    const struct gp_sharing_spec *s = &p->sharing;
    const char *strategy = "none";
    if (s->mode == GP_SHARE_MIG)
        strategy = gp_mig_strategy_name(s->mig.strategy);
    gp_sbuf_printf(out, "version: v1\nflags:\n  migStrategy: %s\n", strategy);
    if (s->mode != GP_SHARE_TIMESLICE && s->mode != GP_SHARE_MPS)
        return;
    /* MPS: NVIDIA's plugin always refuses requests for more than one */
    bool fail_gt1 = s->mode == GP_SHARE_MPS || s->fail_requests_greater_than_one;
    gp_sbuf_printf(out,
                   "sharing:\n"
                   "  %s:\n"
                   "    renameByDefault: %s\n"
                   "    failRequestsGreaterThanOne: %s\n"
                   "    resources:\n"
                   "    - name: nvidia.com/gpu\n"
                   "      replicas: %u\n",
                   s->mode == GP_SHARE_MPS ? "mps" : "timeSlicing",
                   s->rename_by_default ? "true" : "false", fail_gt1 ? "true" : "false",
                   s->replicas);
}

void gp_render_mig_parted(const struct gp_cluster *c, struct gp_sbuf *out)
{
    gp_sbuf_add(out, "version: v1\n"
                     "mig-configs:\n"
                     "  all-disabled:\n"
                     "  - devices: all\n"
                     "    mig-enabled: false\n");
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_pool_spec *p = &c->pools[i];
        const struct gp_sharing_spec *s = &p->sharing;
        if (!gpu_pool(p) || s->mode != GP_SHARE_MIG || !s->mig.model)
            continue;
        gp_sbuf_add(out, "  ");
        scalar(out, p->name);
        gp_sbuf_add(out, ":\n"
                         "  - devices: all\n"
                         "    mig-enabled: true\n"
                         "    mig-devices:");
        struct gp_mig_counts counts;
        gp_mig_layout_counts(s->mig.model, &s->mig.layout, &counts);
        bool any = false;
        for (size_t k = 0; k < s->mig.model->nprofiles; k++) {
            if (!counts.n[k])
                continue;
            gp_sbuf_add(out, "\n      ");
            scalar(out, s->mig.model->profiles[k].name);
            gp_sbuf_printf(out, ": %u", counts.n[k]);
            any = true;
        }
        gp_sbuf_add(out, any ? "\n" : " {}\n");
    }
}

/* --- files --------------------------------------------------------------- */

/* A new file named prefix + pool + ".yaml"; NULL when out of memory. */
static struct gp_sbuf *add_file(struct gp_render *r, const char *prefix, const char *pool)
{
    if (r->nfiles == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        struct gp_render_file *f = realloc(r->files, cap * sizeof *f);
        if (!f)
            return NULL;
        r->files = f;
        r->cap = cap;
    }
    struct gp_render_file *f = &r->files[r->nfiles++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s%s.yaml", prefix, pool);
    gp_sbuf_init(&f->text);
    return &f->text;
}

/* " of cluster NAME (gpuplane render)." and the end of the line. */
static void tail(struct gp_sbuf *b, const struct gp_cluster *c)
{
    gp_sbuf_add(b, " of cluster ");
    comment_text(b, c->name ? c->name : "?");
    gp_sbuf_add(b, " (gpuplane render).\n");
}

static void header(struct gp_sbuf *b, const struct gp_cluster *c, const char *what)
{
    gp_sbuf_printf(b, "# %s", what);
    tail(b, c);
}

static void device_plugin_files(const struct gp_cluster *c, struct gp_render *r, bool *oom)
{
    struct gp_sbuf all;
    gp_sbuf_init(&all);
    size_t ngpu = 0;
    for (size_t i = 0; i < c->npools && !*oom; i++) {
        const struct gp_pool_spec *p = &c->pools[i];
        if (!gpu_pool(p))
            continue;
        struct gp_sbuf *b = add_file(r, "device-plugin-", p->name);
        if (!b) {
            *oom = true;
            break;
        }
        gp_sbuf_add(b, "# NVIDIA device plugin config for node pool ");
        comment_text(b, p->name);
        tail(b, c);
        pool_comment(b, p);
        gp_sbuf_add(b, "# Its nodes select it with the label nvidia.com/device-plugin.config=");
        comment_text(b, p->name);
        gp_sbuf_add(b, ".\n");
        struct gp_sbuf body;
        gp_sbuf_init(&body);
        gp_render_device_plugin(p, &body);
        gp_sbuf_add(b, gp_sbuf_str(&body));
        gp_sbuf_add(&all, "  ");
        scalar(&all, p->name);
        gp_sbuf_add(&all, ": |\n");
        indented(&all, gp_sbuf_str(&body), 4);
        *oom |= body.oom;
        gp_sbuf_free(&body);
        ngpu++;
    }
    if (ngpu > 0 && !*oom) {
        struct gp_sbuf *b = add_file(r, "configmap-device-plugin", "");
        if (!b) {
            *oom = true;
        } else {
            header(b, c, "NVIDIA device plugin configs, a key per node pool,");
            gp_sbuf_add(
                b, "# For the GPU Operator, set its ClusterPolicy's spec.devicePlugin.config.name\n"
                   "# to " GP_RENDER_DEVICE_PLUGIN_CM ".\n"
                   "# Each node picks its key with nvidia.com/device-plugin.config "
                   "(node-labels.yaml).\n"
                   "apiVersion: v1\n"
                   "kind: ConfigMap\n"
                   "metadata:\n"
                   "  name: " GP_RENDER_DEVICE_PLUGIN_CM "\n"
                   "  namespace: " GP_RENDER_NAMESPACE "\n"
                   "  labels:\n"
                   "    app.kubernetes.io/managed-by: gpuplane\n"
                   "data:\n");
            gp_sbuf_add(b, gp_sbuf_str(&all));
        }
    }
    *oom |= all.oom;
    gp_sbuf_free(&all);
}

static void mig_parted_files(const struct gp_cluster *c, struct gp_render *r, bool *oom)
{
    if (!any_mig_capable(c))
        return;
    struct gp_sbuf body;
    gp_sbuf_init(&body);
    gp_render_mig_parted(c, &body);
    struct gp_sbuf *b = add_file(r, "mig-parted", "");
    if (b) {
        header(b, c, "mig-parted config");
        gp_sbuf_add(b,
                    "# A MIG config per MIG node pool (the layout of every GPU) and all-disabled\n"
                    "# for the other pools whose GPUs have MIG. Nodes select one with the label\n"
                    "# nvidia.com/mig.config=<name> (node-labels.yaml).\n");
        gp_sbuf_add(b, gp_sbuf_str(&body));
    }
    struct gp_sbuf *cm = b ? add_file(r, "configmap-mig-parted", "") : NULL;
    if (cm) {
        header(cm, c, "The GPU Operator's custom MIG ConfigMap (mig-parted config)");
        gp_sbuf_add(cm,
                    "# For the GPU Operator, set its ClusterPolicy's spec.migManager.config.name\n"
                    "# to " GP_RENDER_MIG_PARTED_CM ".\n"
                    "apiVersion: v1\n"
                    "kind: ConfigMap\n"
                    "metadata:\n"
                    "  name: " GP_RENDER_MIG_PARTED_CM "\n"
                    "  namespace: " GP_RENDER_NAMESPACE "\n"
                    "  labels:\n"
                    "    app.kubernetes.io/managed-by: gpuplane\n"
                    "data:\n"
                    "  " GP_RENDER_MIG_PARTED_CM_KEY ": |\n");
        indented(cm, gp_sbuf_str(&body), 4);
    }
    *oom |= !b || !cm || body.oom;
    gp_sbuf_free(&body);
}

/* The labels GPU feature discovery sets on a GPU pool's nodes, as
 * comments (gp_cluster_expand gives gpuplane's nodes the same). */
static void gfd_labels(struct gp_sbuf *b, const struct gp_pool_spec *p)
{
    char product[160];
    gp_sbuf_add(b, "  # nvidia.com/gpu.product: ");
    comment_text(b, gp_sharing_gfd_product(&p->sharing, p->gpu_model, product, sizeof product));
    gp_sbuf_printf(b, "\n  # nvidia.com/gpu.count: \"%u\"\n", p->gpus_per_node);
    gp_sbuf_printf(b, "  # nvidia.com/gpu.replicas: \"%u\"\n",
                   gp_sharing_gfd_replicas(&p->sharing));
    gp_sbuf_printf(b, "  # nvidia.com/gpu.sharing-strategy: %s\n",
                   gp_sharing_gfd_strategy(&p->sharing));
}

static void node_label_file(const struct gp_cluster *c, struct gp_render *r, bool *oom)
{
    struct gp_sbuf *b = add_file(r, "node-labels", "");
    if (!b) {
        *oom = true;
        return;
    }
    header(b, c, "Node labels");
    gp_sbuf_add(b, "# Each pool's nodes need these labels (set them on the provider's node pool,\n"
                   "# or kubectl label node NODE KEY=VALUE): the GPU Operator picks the device\n"
                   "# plugin config and the MIG layout from them, gpuplane the node's pool\n"
                   "# (and, on time-sliced and MPS GPUs, what the plugin config says of\n"
                   "# requests for more than one replica: the plugin does not publish it).\n"
                   "# Under each GPU pool, commented out, the labels GPU feature discovery then\n"
                   "# sets, as gpuplane's nodes have them: a nodeSelector matches these values\n"
                   "# (nvidia.com/gpu.product ends in -SHARED on time-sliced and MPS GPUs that\n"
                   "# are not renamed). Do not set them yourself.\n");
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_pool_spec *p = &c->pools[i];
        scalar(b, p->name);
        gp_sbuf_add(b, ":\n  gpuplane.io/pool: ");
        scalar(b, p->name);
        gp_sbuf_addc(b, '\n');
        if (!gpu_pool(p))
            continue;
        gp_sbuf_add(b, "  nvidia.com/device-plugin.config: ");
        scalar(b, p->name);
        gp_sbuf_addc(b, '\n');
        if (mig_model(p)) {
            gp_sbuf_add(b, "  nvidia.com/mig.config: ");
            scalar(b, p->sharing.mode == GP_SHARE_MIG ? p->name : "all-disabled");
            gp_sbuf_addc(b, '\n');
        }
        const struct gp_sharing_spec *sh = &p->sharing;
        if (sh->mode == GP_SHARE_TIMESLICE || sh->mode == GP_SHARE_MPS)
            gp_sbuf_printf(
                b, "  " GP_SHARING_LABEL_FAIL_GT1 ": \"%s\"\n", /* as gp_render_device_plugin */
                sh->mode == GP_SHARE_MPS || sh->fail_requests_greater_than_one ? "true" : "false");
        gfd_labels(b, p);
    }
}

void gp_render_free(struct gp_render *r)
{
    for (size_t i = 0; i < r->nfiles; i++)
        gp_sbuf_free(&r->files[i].text);
    free(r->files);
    memset(r, 0, sizeof *r);
}

enum gp_err gp_render_cluster(const struct gp_cluster *c, struct gp_render *out,
                              struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    const char *src = c->source ? c->source : "cluster";
    for (size_t i = 0; i < c->npools; i++)
        if (c->pools[i].sharing.mode == GP_SHARE_MIG &&
            strcmp(c->pools[i].name, "all-disabled") == 0)
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: pool all-disabled: a MIG pool cannot be named like "
                               "mig-parted's all-disabled config; rename the pool",
                               src);
    bool oom = false;
    device_plugin_files(c, out, &oom);
    if (!oom)
        mig_parted_files(c, out, &oom);
    if (!oom)
        node_label_file(c, out, &oom);
    for (size_t i = 0; i < out->nfiles; i++)
        oom |= out->files[i].text.oom;
    if (oom) {
        gp_render_free(out);
        return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory while rendering", src);
    }
    return GP_OK;
}

void gp_render_stream(const struct gp_render *r, struct gp_sbuf *out)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        gp_sbuf_printf(out, "---\n# file: %s\n", r->files[i].name);
        gp_sbuf_add(out, gp_sbuf_str(&r->files[i].text));
    }
}

struct gp_sbuf *gp_render_add_file(struct gp_render *r, const char *name)
{
    return add_file(r, name, "");
}

void gp_render_scalar(struct gp_sbuf *b, const char *s)
{
    scalar(b, s);
}
