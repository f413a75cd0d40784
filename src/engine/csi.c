/* csi.c - kube-scheduler's NodeVolumeLimits plugin for CSI volumes
 * (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go, v1.28, read
 * and re-derived): the CSI volumes the pods bound on each node hold, each
 * unique name once however many pods use it (with how many do), kept as
 * pods bind and release, and whether a pod's new volumes would take a
 * node past one of its drivers' limits. Upstream's Filter
 * (CSILimits.Filter) gathers the new pod's volumes and the node's pods'
 * volumes by unique name, drops the new ones already attached, counts
 * each side per driver, and refuses the node (Unschedulable,
 * ErrReasonMaxVolumeCountExceeded) when attached + new exceeds the
 * driver's limit; a driver the node has no limit for is not counted, so
 * neither is a node without limits. It has no PreFilterExtensions: a
 * preemption victim's volumes leave the node with the victim (its
 * NodeInfo has the pod removed), as gp_eng_release does here. Only pods
 * with CSI volumes cost anything. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

/* One volume on a node: its driver and name (owned, "driver\0name"), the
 * bound pods' uses of it. */
struct csi_att {
    char *driver;
    const char *name; /* inside driver's allocation */
    uint32_t uses;
};

struct csi_list {
    struct csi_att *items;
    uint32_t len, cap;
};

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

static struct csi_att *find(const struct csi_list *l, const char *name)
{
    for (uint32_t i = 0; l && i < l->len; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    return NULL;
}

/* A list for node `node`; NULL when out of memory. */
static struct csi_list *list_of(struct gp_engine *e, uint32_t node)
{
    if (node >= e->nnode_csi) {
        size_t n = e->nodes.len > node ? e->nodes.len : (size_t)node + 1;
        struct csi_list *nl = realloc(e->node_csi, n * sizeof *nl);
        if (!nl)
            return NULL;
        memset(nl + e->nnode_csi, 0, (n - e->nnode_csi) * sizeof *nl);
        e->node_csi = nl;
        e->nnode_csi = n;
    }
    return &e->node_csi[node];
}

static bool add_use(struct csi_list *l, const struct gp_csi_volume *v)
{
    const char *name = str_or_empty(v->name), *driver = str_or_empty(v->driver);
    struct csi_att *a = find(l, name);
    if (a) {
        a->uses++;
        return true;
    }
    if (l->len == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 4;
        struct csi_att *items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return false;
        l->items = items;
        l->cap = cap;
    }
    size_t nd = strlen(driver) + 1, nn = strlen(name) + 1;
    char *buf = malloc(nd + nn);
    if (!buf)
        return false;
    memcpy(buf, driver, nd);
    memcpy(buf + nd, name, nn);
    l->items[l->len++] = (struct csi_att){buf, buf + nd, 1};
    return true;
}

static void drop_use(struct csi_list *l, const struct gp_csi_volume *v)
{
    struct csi_att *a = find(l, str_or_empty(v->name));
    if (a && --a->uses == 0) {
        free(a->driver);
        *a = l->items[--l->len];
    }
}

void gp_eng_csi_bind(struct gp_engine *e, const struct gp_pod *p, uint32_t node, int sign)
{
    if (sign < 0) {
        if (node < e->nnode_csi)
            for (size_t i = 0; i < p->spec.ncsi_volumes; i++)
                drop_use(&e->node_csi[node], &p->spec.csi_volumes[i]);
        return;
    }
    struct csi_list *l = list_of(e, node);
    for (size_t i = 0; i < p->spec.ncsi_volumes; i++)
        if (!l || !add_use(l, &p->spec.csi_volumes[i])) {
            /* (the uses counted stay: a release takes them off, and
             * the recount starts from nothing) */
            e->csi_broken = true;
            return;
        }
}

/* The limit node n has for driver d; false when none. */
static bool limit_of(const struct gp_node *n, const char *d, uint32_t *max)
{
    for (size_t i = 0; i < n->spec.ncsi_limits; i++)
        if (strcmp(str_or_empty(n->spec.csi_limits[i].driver), d) == 0) {
            *max = n->spec.csi_limits[i].max;
            return true;
        }
    return false;
}

bool gp_eng_csi_exceeds(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    const struct csi_list *l = e && n->id < e->nnode_csi ? &e->node_csi[n->id] : NULL;
    const struct gp_csi_volume *v = p->spec.csi_volumes;
    size_t nv = p->spec.ncsi_volumes;
    for (size_t i = 0; i < nv; i++) {
        const char *d = str_or_empty(v[i].driver);
        bool seen = false; /* each driver once, at its first volume */
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(str_or_empty(v[k].driver), d) == 0;
        uint32_t max;
        if (seen || !limit_of(n, d, &max))
            continue;
        if (e && e->csi_broken)
            return true; /* a use was lost: no room is known */
        /* the new volumes of d: each name once, those attached not new */
        uint64_t count = 0;
        for (size_t k = i; k < nv; k++) {
            const char *name = str_or_empty(v[k].name);
            if (strcmp(str_or_empty(v[k].driver), d) != 0 || find(l, name))
                continue;
            bool dup = false;
            for (size_t j = i; j < k && !dup; j++)
                dup = strcmp(str_or_empty(v[j].name), name) == 0;
            count += !dup;
        }
        if (count == 0)
            continue;
        /* the volumes of d attached (attachedVolumeCount) */
        for (uint32_t k = 0; l && k < l->len; k++)
            count += strcmp(l->items[k].driver, d) == 0;
        if (count > max)
            return true;
    }
    return false;
}

void gp_eng_csi_free(struct gp_engine *e)
{
    for (size_t i = 0; i < e->nnode_csi; i++) {
        struct csi_list *l = &e->node_csi[i];
        for (uint32_t k = 0; k < l->len; k++)
            free(l->items[k].driver);
        free(l->items);
    }
    free(e->node_csi);
    e->node_csi = NULL;
    e->nnode_csi = 0;
    e->csi_broken = false;
}

void gp_eng_csi_recount(struct gp_engine *e)
{
    if (!e->csi_broken)
        return;
    gp_eng_csi_free(e);
    for (size_t q = 0; q < e->queues.len; q++) {
        const struct queue *qu = &e->queues.items[q];
        for (size_t i = 0; i < qu->bound.len; i++) {
            const struct gp_pod *b = pod_at(e, qu->bound.items[i]);
            if (b->spec.ncsi_volumes)
                gp_eng_csi_bind(e, b, b->node, 1); /* out of memory again: broken again */
        }
    }
}
