/* labels.c - GPU Feature Discovery's node labels from an inventory (the
 * rules of NVIDIA/k8s-device-plugin internal/lm/, followed here without
 * its code; docs/node.md), and their merge patch onto the Node through
 * kube/'s client. */
#include "node/labels.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sharing.h"
#include "kube/client.h"
#include "kube/objects.h"

#define P "nvidia.com/"

struct lset {
    struct gp_node_labels *l;
    bool full; /* a label did not fit */
};

static void set(struct lset *s, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets key (later settings win, as GFD's Merge). */
static void set(struct lset *s, const char *key, const char *fmt, ...)
{
    struct gp_node_label *it = NULL;
    for (size_t i = 0; i < s->l->n; i++)
        if (strcmp(s->l->items[i].key, key) == 0)
            it = &s->l->items[i];
    if (!it) {
        if (s->l->n == GP_NODE_MAX_LABELS || strlen(key) >= GP_NODE_LABEL_KEY_LEN) {
            s->full = true;
            return;
        }
        it = &s->l->items[s->l->n++];
        snprintf(it->key, sizeof it->key, "%s", key);
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(it->value, sizeof it->value, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof it->value)
        s->full = true;
}

/* "<resource>.<suffix>" */
static void rset(struct lset *s, const char *res, const char *suffix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void rset(struct lset *s, const char *res, const char *suffix, const char *fmt, ...)
{
    char key[GP_NODE_LABEL_KEY_LEN + 8], val[GP_NODE_LABEL_VALUE_LEN + 8];
    snprintf(key, sizeof key, "%s.%s", res, suffix);
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= GP_NODE_LABEL_VALUE_LEN)
        s->full = true;
    set(s, key, "%s", val);
}

/* GFD's sanitise: characters outside [A-Za-z0-9-_. ] dropped, runs of
 * blanks become one '-', none at either end. */
static void sanitise(const char *in, char *out, size_t n)
{
    size_t o = 0;
    bool gap = false;
    for (const char *p = in; *p && o + 2 < n; p++) {
        char c = *p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            gap = o > 0;
            continue;
        }
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || c == '.';
        if (!ok)
            continue;
        if (gap)
            out[o++] = '-';
        gap = false;
        out[o++] = c;
    }
    out[o] = '\0';
}

/* getArchFamily in internal/lm/resource.go */
static const char *arch_family(unsigned major, unsigned minor)
{
    switch (major) {
    case 1:
        return "tesla";
    case 2:
        return "fermi";
    case 3:
        return "kepler";
    case 5:
        return "maxwell";
    case 6:
        return "pascal";
    case 7:
        return minor < 5 ? "volta" : "turing";
    case 8:
        return minor < 9 ? "ampere" : "ada-lovelace";
    case 9:
        return "hopper";
    default:
        return "undefined";
    }
}

static const char *strategy_name(enum gp_node_share_mode m)
{
    return m == GP_NODE_SHARE_TIME_SLICING ? "time-slicing"
           : m == GP_NODE_SHARE_MPS        ? "mps"
                                           : "none";
}

/* A resource's sharing as GFD's resourceLabeler sees it: sharing is NULL
 * for MIG-enabled GPUs (labelled without sharing: replicas 0); replicated
 * is whether sh's replicas apply to this resource. */
struct rshare {
    const struct gp_node_sharing *sh;
    bool replicated;
};

static unsigned replicas_of(struct rshare r)
{
    if (!r.sh)
        return 0;
    if (r.replicated && r.sh->mode != GP_NODE_SHARE_NONE && r.sh->replicas > 0)
        return r.sh->replicas;
    return 1;
}

/* product, count, replicas and sharing-strategy (baseLabeler). */
static void base_labels(struct lset *s, const char *res, struct rshare r, size_t count,
                        const char *model, const char *mig_profile)
{
    char m[GP_NODE_NAME_LEN], prof[40];
    sanitise(model, m, sizeof m);
    unsigned replicas = replicas_of(r);
    bool shared = replicas > 1;
    sanitise(mig_profile ? mig_profile : "", prof, sizeof prof);
    rset(s, res, "product", "%s%s%s%s", m, mig_profile ? "-MIG-" : "", prof,
         shared && !r.sh->rename_by_default ? "-SHARED" : "");
    rset(s, res, "count", "%zu", count);
    rset(s, res, "replicas", "%u", replicas);
    rset(s, res, "sharing-strategy", "%s", shared ? strategy_name(r.sh->mode) : "none");
}

/* The full-GPU labels of the GPUs named like gpus[first] and MIG-enabled
 * or not like it (NewGPUResourceLabeler); count is every GPU of that name. */
static void gpu_labels(struct lset *s, const struct gp_node_inventory *inv,
                       const struct gp_node_sharing *sh, size_t first)
{
    const struct gp_node_gpu *g = &inv->gpus[first];
    size_t count = 0;
    for (size_t i = 0; i < inv->n_gpus; i++)
        count += strcmp(inv->gpus[i].name, g->name) == 0;
    struct rshare r = {g->mig_enabled ? NULL : sh, gp_node_sharing_replicates(sh, P "gpu")};
    base_labels(s, P "gpu", r, count, g->name, NULL);
    if (g->memory_mib)
        set(s, P "gpu.memory", "%llu", (unsigned long long)g->memory_mib);
    if (g->cc_major) {
        set(s, P "gpu.family", "%s", arch_family(g->cc_major, g->cc_minor));
        set(s, P "gpu.compute.major", "%u", g->cc_major);
        set(s, P "gpu.compute.minor", "%u", g->cc_minor);
    }
}

/* GFD iterates Go maps (an unspecified order) when GPUs of several models
 * share a node; here MIG-enabled GPUs' labels come first and full GPUs'
 * override them (as GFD's newGPULabelers), and within each the model of
 * the lowest-index GPU wins. */
static void full_gpu_labels(struct lset *s, const struct gp_node_inventory *inv,
                            const struct gp_node_sharing *sh)
{
    for (int pass = 0; pass < 2; pass++) {
        bool mig = pass == 0;
        for (size_t i = inv->n_gpus; i-- > 0;) {
            const struct gp_node_gpu *g = &inv->gpus[i];
            if (g->mig_enabled != mig)
                continue;
            bool seen = false; /* a lower index of the same model and kind comes later */
            for (size_t j = 0; j < i && !seen; j++)
                seen = inv->gpus[j].mig_enabled == mig && strcmp(inv->gpus[j].name, g->name) == 0;
            if (!seen)
                gpu_labels(s, inv, sh, i);
        }
    }
}

static void mig_attr_labels(struct lset *s, const char *res, const struct gp_node_mig *m)
{
    rset(s, res, "memory", "%llu", (unsigned long long)m->memory_mib);
    rset(s, res, "multiprocessors", "%u", m->multiprocessors);
    rset(s, res, "slices.gi", "%u", m->gi_slices);
    rset(s, res, "slices.ci", "%u", m->ci_slices);
    rset(s, res, "engines.copy", "%u", m->engines_copy);
    rset(s, res, "engines.decoder", "%u", m->engines_decoder);
    rset(s, res, "engines.encoder", "%u", m->engines_encoder);
    rset(s, res, "engines.jpeg", "%u", m->engines_jpeg);
    rset(s, res, "engines.ofa", "%u", m->engines_ofa);
}

/* The MIG devices of each profile, in order of first appearance: profile
 * k's first device is *firsts[k] on GPU gpu_of[k], counts[k] of them. */
struct profiles {
    size_t n;
    const struct gp_node_mig *first[GP_NODE_MAX_GPUS * GP_NODE_MAX_MIGS];
    const struct gp_node_gpu *gpu_of[GP_NODE_MAX_GPUS * GP_NODE_MAX_MIGS];
    size_t count[GP_NODE_MAX_GPUS * GP_NODE_MAX_MIGS];
};

static void collect_profiles(const struct gp_node_inventory *inv, struct profiles *p)
{
    p->n = 0;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const struct gp_node_gpu *g = &inv->gpus[i];
        if (!g->mig_enabled)
            continue;
        for (size_t k = 0; k < g->n_migs && k < GP_NODE_MAX_MIGS; k++) {
            size_t j = 0;
            while (j < p->n && strcmp(p->first[j]->profile, g->migs[k].profile) != 0)
                j++;
            if (j == p->n) {
                p->first[j] = &g->migs[k];
                p->gpu_of[j] = g;
                p->count[j] = 0;
                p->n++;
            }
            p->count[j]++;
        }
    }
}

/* mig-strategy=single (newMigStrategySingleLabeler). */
static void mig_single(struct lset *s, const struct gp_node_inventory *inv,
                       const struct gp_node_sharing *sh, const struct profiles *p)
{
    const struct gp_node_gpu *first_mig = NULL;
    bool empty = false, disabled = false;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const struct gp_node_gpu *g = &inv->gpus[i];
        if (g->mig_enabled) {
            first_mig = first_mig ? first_mig : g;
            empty |= g->n_migs == 0;
        } else {
            disabled = true;
        }
    }
    if (!first_mig)
        return; /* no MIG-enabled GPU: as the none strategy */
    if (empty || disabled || p->n != 1) {
        char m[GP_NODE_NAME_LEN];
        sanitise(first_mig->name, m, sizeof m);
        set(s, P "gpu.product", "%s-MIG-INVALID", m);
        set(s, P "gpu.count", "0");
        set(s, P "gpu.replicas", "0");
        set(s, P "gpu.memory", "0");
        return;
    }
    struct rshare r = {sh, gp_node_sharing_replicates(sh, P "gpu")};
    base_labels(s, P "gpu", r, p->count[0], p->gpu_of[0]->name, p->first[0]->profile);
    mig_attr_labels(s, P "gpu", p->first[0]);
}

/* mig-strategy=mixed: nvidia.com/mig-<profile>.*; the sharing replicas
 * apply to the resources it names only (nvidia.com/gpu alone unless the
 * config file names the profile), so MIG profiles have replicas 1 unless
 * named (GFD's replicationInfo looks the resource up by name). */
static void mig_mixed(struct lset *s, const struct gp_node_sharing *sh, const struct profiles *p)
{
    for (size_t k = 0; k < p->n; k++) {
        char res[GP_NODE_LABEL_KEY_LEN];
        snprintf(res, sizeof res, P "mig-%s", p->first[k]->profile);
        struct rshare r = {sh, gp_node_sharing_replicates(sh, res)};
        base_labels(s, res, r, p->count[k], p->gpu_of[k]->name, p->first[k]->profile);
        mig_attr_labels(s, res, p->first[k]);
    }
}

/* gpuplane's own label beside GFD's under the mixed strategy: which GPUs
 * (NVML indexes, '.'-joined: a label value holds no comma) are in MIG
 * mode, so that the scheduler can tell a node's whole GPUs from its MIG
 * ones, which GFD's counts alone do not (kube/objects_mig.c; docs/node.md,
 * docs/kube.md). None when no GPU is. */
static void mig_gpus_label(struct lset *s, const struct gp_node_inventory *inv)
{
    char v[GP_NODE_LABEL_VALUE_LEN];
    size_t o = 0;
    v[0] = '\0';
    for (size_t i = 0; i < inv->n_gpus && o + 8 < sizeof v; i++)
        if (inv->gpus[i].mig_enabled)
            o += (size_t)snprintf(v + o, sizeof v - o, "%s%u", o ? "." : "", inv->gpus[i].index);
    if (o)
        set(s, GP_KUBE_LABEL_MIG_GPUS, "%s", v);
}

/* gpuplane's own labels beside GFD's under the mixed strategy: the GPU
 * instances of each GPU in MIG mode, GP_KUBE_LABEL_MIG_LAYOUT "<index>"
 * (kube/objects.h: by profile in the order of their first start, each
 * profile's starts as digits, "4g.40gb-0_3g.40gb-4"; "none" without one),
 * since GFD counts MIG devices per node and GPUs of one node may have
 * different layouts (mig-parted applies a config per device), while the
 * scheduler must name instances that exist on the GPU it names
 * (kube/objects_mig.c; docs/node.md). None for a GPU whose placements
 * NVML did not give, or whose layout does not fit in a label value. */
static void mig_layout_labels(struct lset *s, const struct gp_node_inventory *inv)
{
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const struct gp_node_gpu *g = &inv->gpus[i];
        if (!g->mig_enabled)
            continue;
        size_t n = g->n_migs < GP_NODE_MAX_MIGS ? g->n_migs : GP_NODE_MAX_MIGS,
               ord[GP_NODE_MAX_MIGS];
        bool known = true, done[GP_NODE_MAX_MIGS] = {false};
        for (size_t k = 0; k < n; k++) { /* by start */
            known = known && g->migs[k].size > 0 && g->migs[k].start < 8;
            size_t j = k;
            for (; j > 0 && g->migs[ord[j - 1]].start > g->migs[k].start; j--)
                ord[j] = ord[j - 1];
            ord[j] = k;
        }
        char v[GP_NODE_LABEL_VALUE_LEN] = "none";
        size_t o = 0;
        for (size_t a = 0; known && a < n && o < sizeof v; a++) {
            const struct gp_node_mig *m = &g->migs[ord[a]];
            if (done[a])
                continue;
            char prof[40];
            snprintf(prof, sizeof prof, "%s", m->profile);
            for (char *c = prof; *c; c++)
                *c = *c == '+' ? '.' : *c; /* "1g.10gb+me": no '+' in a label value */
            o += (size_t)snprintf(v + o, sizeof v - o, "%s%s-", o ? "_" : "", prof);
            unsigned last = 99;
            for (size_t b = a; b < n && o < sizeof v; b++) {
                const struct gp_node_mig *x = &g->migs[ord[b]];
                if (done[b] || strcmp(x->profile, m->profile) != 0)
                    continue;
                done[b] = true;
                if (x->start != last) /* compute instances of one GPU instance: once */
                    o += (size_t)snprintf(v + o, sizeof v - o, "%u", x->start);
                last = x->start;
            }
        }
        char key[GP_NODE_LABEL_KEY_LEN];
        snprintf(key, sizeof key, "%s%u", GP_KUBE_LABEL_MIG_LAYOUT, g->index);
        if (known && o < 64) /* a label value holds 63 characters */
            set(s, key, "%s", v);
    }
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct gp_node_label *)a)->key, ((const struct gp_node_label *)b)->key);
}

static enum gp_err version_labels(struct lset *s, const struct gp_node_inventory *inv,
                                  struct gp_diag *d)
{
    const char *v = inv->driver_version;
    char part[3][GP_NODE_VER_LEN];
    size_t np = 0, o = 0;
    memset(part, 0, sizeof part);
    for (const char *c = v;; c++) {
        if (*c == '.' || *c == '\0') {
            if (np == 3)
                np = 4;
            else
                part[np++][o] = '\0';
            o = 0;
            if (*c == '\0')
                break;
        } else if (np < 3 && o + 1 < GP_NODE_VER_LEN) {
            part[np][o++] = *c;
        }
    }
    if (np < 2 || np > 3)
        return gp_diag_set(d, GP_EINVALID,
                           "driver version \"%s\" does not match the format X.Y[.Z] (GFD)", v);
    int cuda = inv->cuda_driver_version;
    int cmaj = cuda / 1000, cmin = (cuda % 1000) / 10;
    set(s, P "cuda.driver.major", "%s", part[0]);
    set(s, P "cuda.driver.minor", "%s", part[1]);
    set(s, P "cuda.driver.rev", "%s", part[2]);
    set(s, P "cuda.runtime.major", "%d", cmaj);
    set(s, P "cuda.runtime.minor", "%d", cmin);
    set(s, P "cuda.driver-version.major", "%s", part[0]);
    set(s, P "cuda.driver-version.minor", "%s", part[1]);
    set(s, P "cuda.driver-version.revision", "%s", part[2]);
    set(s, P "cuda.driver-version.full", "%s", v);
    set(s, P "cuda.runtime-version.major", "%d", cmaj);
    set(s, P "cuda.runtime-version.minor", "%d", cmin);
    set(s, P "cuda.runtime-version.full", "%d.%d", cmaj, cmin);
    return GP_OK;
}

enum gp_err gp_node_labels_build(const struct gp_node_inventory *inv,
                                 const struct gp_node_sharing *sh,
                                 const struct gp_node_label_opts *o, struct gp_node_labels *out,
                                 struct gp_diag *d)
{
    out->n = 0;
    if (inv->n_gpus == 0)
        return GP_OK;
    struct lset s = {out, false};
    bool any_mig_capable = false, any_mig_enabled = false;
    for (size_t i = 0; i < inv->n_gpus; i++) {
        any_mig_capable |= inv->gpus[i].mig_capable;
        any_mig_enabled |= inv->gpus[i].mig_enabled;
    }
    if (sh->mode == GP_NODE_SHARE_MPS && any_mig_enabled)
        return gp_diag_set(d, GP_EINVALID,
                           "sharing: MPS is not supported on MIG devices (a GPU has MIG enabled)");
    char machine[GP_NODE_LABEL_VALUE_LEN];
    snprintf(machine, sizeof machine, "%s", o && o->machine ? o->machine : "unknown");
    for (char *c = machine; *c; c++)
        *c = *c == ' ' ? '-' : *c;
    set(&s, P "gpu.machine", "%s", machine);
    enum gp_err err = version_labels(&s, inv, d);
    if (err != GP_OK)
        return err;
    set(&s, P "mig.capable", "%s", any_mig_capable ? "true" : "false");
    set(&s, P "mps.capable", "%s", sh->mode == GP_NODE_SHARE_MPS ? "true" : "false");
    full_gpu_labels(&s, inv, sh);
    if (sh->mig_strategy != GP_NODE_MIG_NONE) {
        static struct profiles p; /* large; labels are built by one thread */
        collect_profiles(inv, &p);
        set(&s, P "mig.strategy", "%s",
            sh->mig_strategy == GP_NODE_MIG_SINGLE ? "single" : "mixed");
        if (sh->mig_strategy == GP_NODE_MIG_SINGLE)
            mig_single(&s, inv, sh, &p);
        else
            mig_mixed(&s, sh, &p);
        if (sh->mig_strategy == GP_NODE_MIG_MIXED) {
            mig_gpus_label(&s, inv);
            mig_layout_labels(&s, inv);
        }
    }
    if (o && o->pci_class) {
        const char *mode = strcmp(o->pci_class, "0x030000") == 0   ? "graphics"
                           : strcmp(o->pci_class, "0x030200") == 0 ? "compute"
                                                                   : "unknown";
        set(&s, P "gpu.mode", "%s", mode);
    }
    if (o && o->timestamp_s >= 0)
        set(&s, P "gfd.timestamp", "%lld", o->timestamp_s);
    if (sh->mode != GP_NODE_SHARE_NONE && sh->replicas > 1) /* kube/objects_share.c reads it */
        set(&s, GP_SHARING_LABEL_FAIL_GT1, "%s",
            sh->mode == GP_NODE_SHARE_MPS || sh->fail_requests_greater_than_one ? "true" : "false");
    if (o && o->agent) /* the scheduler waits for this agent's marks here (kube/sched_slot.c) */
        set(&s, GP_KUBE_LABEL_AGENT, "%s", GP_KUBE_AGENT_PROTOCOL);
    if (s.full)
        return gp_diag_set(d, GP_EINVALID,
                           "node labels: more than %d labels, or a key or value too long",
                           GP_NODE_MAX_LABELS);
    qsort(out->items, out->n, sizeof out->items[0], by_key);
    return GP_OK;
}

const char *gp_node_labels_get(const struct gp_node_labels *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

bool gp_node_labels_owned(const char *key)
{
    static const char *const exact[] = {
        P "gfd.timestamp",        P "mig.capable",         P "mig.strategy",
        P "mps.capable",          P "gpu.machine",         P "gpu.mode",
        P "gpu.product",          P "gpu.count",           P "gpu.replicas",
        P "gpu.sharing-strategy", P "gpu.memory",          P "gpu.family",
        P "gpu.compute.major",    P "gpu.compute.minor",   P "gpu.multiprocessors",
        P "gpu.slices.gi",        P "gpu.slices.ci",       P "gpu.engines.copy",
        P "gpu.engines.decoder",  P "gpu.engines.encoder", P "gpu.engines.jpeg",
        P "gpu.engines.ofa",
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(key, exact[i]) == 0)
            return true;
    if (strncmp(key, GP_KUBE_LABEL_MIG_LAYOUT, strlen(GP_KUBE_LABEL_MIG_LAYOUT)) == 0)
        return true;
    if (strcmp(key, GP_KUBE_LABEL_MIG_GPUS) == 0 || strcmp(key, GP_KUBE_LABEL_AGENT) == 0 ||
        strcmp(key, GP_SHARING_LABEL_FAIL_GT1) == 0)
        return true;
    return strncmp(key, P "cuda.", strlen(P "cuda.")) == 0 ||
           strncmp(key, P "mig-", strlen(P "mig-")) == 0;
}

enum gp_err gp_node_labels_patch_body(const char *current, const struct gp_node_labels *want,
                                      char **out, size_t *changes, struct gp_diag *d)
{
    *out = NULL;
    *changes = 0;
    json_t *cur = NULL;
    if (current) {
        json_error_t je;
        cur = json_loads(current, 0, &je);
        if (!json_is_object(cur)) {
            json_decref(cur);
            return gp_diag_set(d, GP_EPARSE, "node labels: not a JSON object: %s", je.text);
        }
    }
    json_t *labels = json_object();
    if (!labels) {
        json_decref(cur);
        return gp_diag_set(d, GP_ENOMEM, "node labels: out of memory");
    }
    for (size_t i = 0; i < want->n; i++) {
        const char *have = json_string_value(json_object_get(cur, want->items[i].key));
        if (!have || strcmp(have, want->items[i].value) != 0)
            json_object_set_new(labels, want->items[i].key, json_string(want->items[i].value));
    }
    const char *k;
    json_t *v;
    json_object_foreach(cur, k, v)
    {
        if (gp_node_labels_owned(k) && !gp_node_labels_get(want, k))
            json_object_set_new(labels, k, json_null());
    }
    json_decref(cur);
    *changes = json_object_size(labels);
    if (*changes == 0) {
        json_decref(labels);
        *out = strdup("");
        return *out ? GP_OK : gp_diag_set(d, GP_ENOMEM, "node labels: out of memory");
    }
    json_t *patch = json_pack("{s:{s:o}}", "metadata", "labels", labels);
    *out = patch ? json_dumps(patch, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    json_decref(patch);
    return *out ? GP_OK : gp_diag_set(d, GP_ENOMEM, "node labels: out of memory");
}

enum gp_err gp_node_labels_apply(struct gp_kube_client *c, const char *node,
                                 const struct gp_node_labels *want, size_t *changes,
                                 struct gp_diag *d)
{
    char path[512];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    struct gp_kube_response r;
    enum gp_err err = gp_kube_request(c, "GET", path, NULL, NULL, &r, d);
    if (err != GP_OK)
        return err;
    if ((err = gp_kube_status_err(r.status, r.body, "GET", path, d)) != GP_OK) {
        gp_kube_response_free(&r);
        return err;
    }
    json_error_t je;
    json_t *obj = json_loads(r.body, 0, &je);
    gp_kube_response_free(&r);
    json_t *cur = json_object_get(json_object_get(obj, "metadata"), "labels");
    char *cur_text = json_is_object(cur) ? json_dumps(cur, JSON_COMPACT) : NULL;
    json_decref(obj);
    char *body;
    size_t n;
    err = gp_node_labels_patch_body(cur_text, want, &body, &n, d);
    free(cur_text);
    if (changes)
        *changes = n;
    if (err != GP_OK || n == 0) {
        free(body);
        return err;
    }
    err = gp_kube_request(c, "PATCH", path, body, "application/merge-patch+json", &r, d);
    free(body);
    if (err != GP_OK)
        return err;
    err = gp_kube_status_err(r.status, r.body, "PATCH", path, d);
    gp_kube_response_free(&r);
    return err;
}
