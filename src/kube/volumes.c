/* volumes.c - PersistentVolumeClaims, PersistentVolumes and StorageClasses
 * as kube-scheduler's VolumeBinding and VolumeZone plugins read them
 * (pkg/scheduler/framework/plugins/volumebinding: volume_binding.go
 * PreFilter/podHasPVCs, binder.go GetPodVolumeClaims/checkBoundClaims;
 * .../volumezone/volume_zone.go; kubernetes v1.28): the objects kept from
 * their informers (claims by "namespace/name", volumes and classes by
 * name), as the listers those plugins ask (docs/kube.md, "Volumes"). */
#include <stdio.h>
#include <string.h>

#include "kube/sched_internal.h"

/* jansson's setters take no const object (nothing here changes one) */
static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

/* obj kept under key in *map (made on first use), or taken out when
 * deleted; false when out of memory. */
static bool keep(json_t **map, const char *key, enum gp_kube_event_type type, const json_t *obj)
{
    if (!*map && !(*map = json_object()))
        return false;
    if (type == GP_KUBE_DELETED) {
        json_object_del(*map, key); /* (not kept: nothing to take out) */
        return true;
    }
    return json_object_set(*map, key, mut(obj)) == 0;
}

static void change(struct gp_kube_sched *s, json_t **map, const char *kind, bool namespaced,
                   enum gp_kube_event_type type, const json_t *obj)
{
    const char *ns = gp_kube_meta(obj, "namespace"), *name = gp_kube_meta(obj, "name");
    if (!name)
        return;
    char key[600];
    if (namespaced)
        gp_kube_key_make(ns, name, key, sizeof key);
    else
        snprintf(key, sizeof key, "%s", name);
    gp_evlog_change(s->rec, s->now_s, kind, gp_kube_event_type_name(type), key,
                    gp_kube_meta(obj, "resourceVersion"));
    keep(map, key, type, obj);
}

void gp_kube_sched_pvc_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                              void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    change(s, &s->pvcs, "persistentvolumeclaim", true, type, obj);
}

void gp_kube_sched_pv_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    change(s, &s->pvs, "persistentvolume", false, type, obj);
}

void gp_kube_sched_sc_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    change(s, &s->scs, "storageclass", false, type, obj);
}

void gp_ks_volumes_free(struct gp_kube_sched *s)
{
    json_decref(s->pvcs);
    json_decref(s->pvs);
    json_decref(s->scs);
    s->pvcs = s->pvs = s->scs = NULL;
}
