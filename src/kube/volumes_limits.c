/* volumes_limits.c - kube-scheduler's NodeVolumeLimits plugin for CSI
 * volumes (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go,
 * v1.28) as the kube side reads it; the engine counts (engine/csi.c,
 * GP_FILTER_VOLUME_LIMITS, "node(s) exceed max volume count"):
 *  - the CSINode objects (storage.k8s.io/v1, one per node, of the node's
 *    name) kept from their informer; a node's limits are its CSINode's
 *    spec.drivers[] with allocatable.count (getVolumeLimits), given to the
 *    engine in the node's spec (struct gp_csi_limit). A node without a
 *    CSINode, or a driver without a count, has no limit. A CSINode that
 *    changes a node's limits changes the node (the engine is rebuilt, as
 *    for any change of what it reads of a node);
 *  - a pod's CSI volumes (filterAttachableVolumes, getCSIDriverInfo,
 *    getCSIDriverInfoFromSC), for every pod with claims, ours or not,
 *    bound or pending: each persistentVolumeClaim volume's claim (an
 *    ephemeral volume's, "<pod>-<volume>", when the pod owns it), bound
 *    to a PersistentVolume with spec.csi: that driver, unique name
 *    "driver/volumeHandle"; without volumeName, or its volume not found:
 *    the claim's StorageClass's provisioner as the driver, a name of the
 *    claim's own (upstream's random prefix, here a fixed one no handle
 *    starts with: "\x01" + "namespace/claim"); a claim without a class,
 *    a class not found, a volume neither CSI nor translated: not counted.
 *    A claim not found is not counted (VolumeBinding's PreFilter refuses
 *    a pending pod of ours for it: volumes.c).
 * Left out: in-tree volumes (a PersistentVolume's or inline awsElasticBlockStore,
 * gcePersistentDisk, azureDisk, cinder...) that CSI migration translates
 * to a CSI driver, and the Node's own status.allocatable
 * "attachable-volumes-csi-<driver>" limits (getVolumeLimits' older source). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"
#include "kube/volumes_internal.h"

static const char *str_of(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (h ^ 0xff) * 1099511628211u; /* (an end, so "ab"+"c" is not "a"+"bc") */
}

/* The drivers of csinode with a limit: spec.drivers[i] with
 * allocatable.count a count (0 or more); calls f for each. */
static size_t each_limit(const json_t *csinode, void (*f)(void *, const char *, uint32_t),
                         void *ctx)
{
    size_t i, n = 0;
    json_t *dr;
    json_array_foreach(json_object_get(json_object_get(csinode, "spec"), "drivers"), i, dr)
    {
        const char *name = str_of(dr, "name");
        const json_t *count = json_object_get(json_object_get(dr, "allocatable"), "count");
        if (!name || !json_is_integer(count) || json_integer_value(count) < 0 ||
            json_integer_value(count) > UINT32_MAX)
            continue; /* (the API validates count >= 0; none: no limit) */
        if (f)
            f(ctx, name, (uint32_t)json_integer_value(count));
        n++;
    }
    return n;
}

struct limits_fill {
    struct gp_arena *a;
    struct gp_csi_limit *l;
    size_t n;
    bool oom;
};

static void limit_fill(void *ctx, const char *driver, uint32_t max)
{
    struct limits_fill *lf = ctx;
    for (size_t i = 0; i < lf->n; i++)
        if (strcmp(lf->l[i].driver, driver) == 0) {
            lf->l[i].max = max; /* (a driver named twice: the last, as the map) */
            return;
        }
    const char *d = gp_arena_strdup(lf->a, driver);
    lf->oom = lf->oom || !d;
    if (d)
        lf->l[lf->n++] = (struct gp_csi_limit){d, max};
}

static void limit_print(void *ctx, const char *driver, uint32_t max)
{
    uint64_t *h = ctx;
    char num[16];
    snprintf(num, sizeof num, "%u", (unsigned)max);
    *h = fnv_str(fnv_str(*h, driver), num);
}

enum gp_err gp_ks_csi_node(struct gp_kube_sched *s, const char *name, struct gp_arena *a,
                           struct gp_node_spec *spec, uint64_t *print)
{
    const json_t *cn = json_object_get(s->csinodes, name);
    spec->csi_limits = NULL;
    spec->ncsi_limits = 0;
    size_t n = cn ? each_limit(cn, NULL, NULL) : 0;
    uint64_t h = 1469598103934665603u;
    each_limit(cn, limit_print, &h);
    *print = n ? h : 0;
    if (n == 0)
        return GP_OK;
    struct limits_fill lf = {a, gp_arena_alloc(a, n * sizeof *lf.l), 0, false};
    if (!lf.l)
        return GP_ENOMEM;
    each_limit(cn, limit_fill, &lf);
    if (lf.oom)
        return GP_ENOMEM;
    spec->csi_limits = lf.l;
    spec->ncsi_limits = lf.n;
    return GP_OK;
}

/* getCSIDriverInfo for claim pvc (key "ns/name"): its driver and unique
 * name into drv and name; false: not counted. */
static bool csi_of(const struct gp_kube_sched *s, const json_t *pvc, const char *key, char *drv,
                   size_t ndrv, char *name, size_t nname)
{
    const char *vn = str_of(json_object_get(pvc, "spec"), "volumeName");
    const json_t *pv = vn && vn[0] ? json_object_get(s->pvs, vn) : NULL;
    if (pv) {
        const json_t *csi = json_object_get(json_object_get(pv, "spec"), "csi");
        const char *d = str_of(csi, "driver"), *h = str_of(csi, "volumeHandle");
        if (!d || !d[0] || !h || !h[0])
            return false; /* not CSI (migration left out), or no handle */
        snprintf(drv, ndrv, "%s", d);
        snprintf(name, nname, "%s/%s", d, h);
        return true;
    }
    /* getCSIDriverInfoFromSC: no volume (yet), or its volume not found */
    const char *cls = gp_ks_claim_class(pvc);
    const json_t *sc = cls && cls[0] ? json_object_get(s->scs, cls) : NULL;
    const char *prov = str_of(sc, "provisioner");
    if (!prov || !prov[0])
        return false;
    snprintf(drv, ndrv, "%s", prov);
    snprintf(name, nname, "%s/\x01%s", prov, key);
    return true;
}

/* Calls f for each CSI volume of pod (namespace ns, name pod_name, uid);
 * returns how many. */
static size_t each_volume(const struct gp_kube_sched *s, const json_t *pod, const char *ns,
                          const char *pod_name, const char *uid,
                          void (*f)(void *, const char *, const char *), void *ctx)
{
    size_t i, n = 0;
    json_t *vol;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, vol)
    {
        const json_t *pc = json_object_get(vol, "persistentVolumeClaim");
        bool eph = !pc && json_object_get(vol, "ephemeral") != NULL;
        char claim[256], key[600], drv[256], name[1024];
        if (pc) {
            const char *cn = str_of(pc, "claimName");
            snprintf(claim, sizeof claim, "%s", cn ? cn : "");
        } else if (eph) {
            const char *vn = str_of(vol, "name");
            snprintf(claim, sizeof claim, "%s-%s", pod_name ? pod_name : "", vn ? vn : "");
        } else {
            continue; /* inline: only a migrated in-tree volume would count */
        }
        if (!claim[0])
            continue;
        gp_kube_key_make(ns, claim, key, sizeof key);
        const json_t *pvc = json_object_get(s->pvcs, key);
        if (!pvc || (eph && !gp_ks_pvc_owned_by(pvc, uid)) ||
            !csi_of(s, pvc, key, drv, sizeof drv, name, sizeof name))
            continue;
        if (f)
            f(ctx, drv, name);
        n++;
    }
    return n;
}

struct vols_fill {
    struct gp_arena *a;
    struct gp_csi_volume *v;
    size_t n;
    bool oom;
};

static void volume_fill(void *ctx, const char *driver, const char *name)
{
    struct vols_fill *vf = ctx;
    const char *d = gp_arena_strdup(vf->a, driver), *nm = gp_arena_strdup(vf->a, name);
    vf->oom = vf->oom || !d || !nm;
    if (d && nm)
        vf->v[vf->n++] = (struct gp_csi_volume){d, nm};
}

static void volume_print(void *ctx, const char *driver, const char *name)
{
    uint64_t *h = ctx;
    *h = fnv_str(fnv_str(*h, driver), name);
}

enum gp_err gp_ks_csi_pod(struct gp_kube_sched *s, const json_t *pod,
                          const struct gp_kube_pod_info *in, struct gp_arena *a,
                          struct gp_pod_spec *spec)
{
    spec->csi_volumes = NULL;
    spec->ncsi_volumes = 0;
    if (!in->claims)
        return GP_OK;
    const char *ns = in->ns ? in->ns : "default";
    size_t n = each_volume(s, pod, ns, in->name, in->uid, NULL, NULL);
    if (n == 0)
        return GP_OK;
    struct vols_fill vf = {a, gp_arena_alloc(a, n * sizeof *vf.v), 0, false};
    if (!vf.v)
        return GP_ENOMEM;
    each_volume(s, pod, ns, in->name, in->uid, volume_fill, &vf);
    if (vf.oom)
        return GP_ENOMEM;
    spec->csi_volumes = vf.v;
    spec->ncsi_volumes = vf.n;
    return GP_OK;
}

uint64_t gp_ks_csi_print(const struct gp_kube_sched *s, const json_t *pod,
                         const struct gp_kube_pod_info *in)
{
    uint64_t h = 1469598103934665603u;
    if (in->claims)
        each_volume(s, pod, in->ns ? in->ns : "default", in->name, in->uid, volume_print, &h);
    return h;
}

void gp_kube_sched_csinode_change(enum gp_kube_event_type type, const json_t *obj,
                                  const json_t *old, void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    const char *name = gp_kube_meta(obj, "name");
    if (!name || (!s->csinodes && !(s->csinodes = json_object())))
        return;
    gp_evlog_change(s->rec, s->now_s, "csinode", gp_kube_event_type_name(type), name,
                    gp_kube_meta(obj, "resourceVersion"));
    if (type == GP_KUBE_DELETED)
        json_object_del(s->csinodes, name);
    else if (json_object_set(s->csinodes, name, mut(obj)) != 0)
        return;
    /* its node read again: a change of its limits changes the node
     * (sched.c: the engine rebuilt), as CSILimits' EventsToRegister asks
     * its pods to be tried again on a CSINode's add */
    struct snode *n = gp_ks_node_get(s, name, false);
    if (n && n->obj) {
        json_t *o = json_incref(n->obj); /* (node_change lets go of n->obj) */
        gp_kube_sched_node_change(GP_KUBE_MODIFIED, o, NULL, s);
        json_decref(o);
    }
}
