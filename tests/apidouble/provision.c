/* provision.c - the PV controller and an external provisioner, played by
 * the double for tests of WaitForFirstConsumer claims (POST
 * /_control/provisioner {"ms":MS}; -1: off; 0, the default: on the
 * reaper's next turn). MS milliseconds after a write leaves a claim
 * unbound (no spec.volumeName) with volume.kubernetes.io/selected-node
 * naming a node, of a StorageClass whose volumeBindingMode is
 * WaitForFirstConsumer and whose provisioner is not
 * kubernetes.io/no-provisioner, when the claim still is so: a
 * PersistentVolume "pvc-<claim uid>" is made for it, as a CSI
 * provisioner makes one (external-provisioner's ProvisionExt with the
 * selected node's topology): its spec.nodeAffinity requires the node's
 * topology.kubernetes.io/zone when it has one, else its
 * kubernetes.io/hostname (neither: no nodeAffinity), its claimRef the claim, status Bound; then the
 * claim bound to it as the PV controller binds it (bindClaimToVolume:
 * spec.volumeName, pv.kubernetes.io/bind-completed and
 * bound-by-controller, status.phase Bound with the volume's capacity and
 * access modes). Each a new resourceVersion and a watch event.
 *
 * The PV controller's bind of a volume claimRef'd to a claim (a static
 * binding: kube-scheduler's VolumeBinding sets the volume's spec.claimRef
 * to the claim it chose it for, binder.go bindAPIUpdate): MS milliseconds
 * after a write leaves a PersistentVolume whose spec.claimRef names a
 * claim that is there (of the reference's uid, when it has one) and
 * unbound, when it still is so, the volume's status.phase becomes Bound
 * and the claim is bound to it as above, with the volume's capacity and
 * access modes (pkg/controller/volume/persistentvolume syncVolume and
 * syncUnboundClaim: a volume pre-bound to its claim is bound whatever its
 * class's binding mode). The same switch turns both off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apidouble.h"

#define ANN_SELECTED "volume.kubernetes.io/selected-node"

struct due {
    struct object *o;
    double at; /* mono() */
};

static long prov_ms = 0;
static struct due *dues;
static size_t ndues, capdues;
static long prov_done;

void provision_set(long ms)
{
    prov_ms = ms;
    if (ms < 0)
        ndues = 0;
}

long provision_count(void)
{
    return prov_done;
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* The class of claim c, when it is one the provisioner serves. */
static json_t *class_of(const json_t *c)
{
    const char *cls = str_at(c, "spec", "storageClassName");
    struct object *so = cls ? find("storage.k8s.io/storageclasses", "", cls) : NULL;
    json_t *sc = so ? so->cur : NULL;
    const char *mode = json_string_value(json_object_get(sc, "volumeBindingMode"));
    const char *prov = json_string_value(json_object_get(sc, "provisioner"));
    if (!mode || strcmp(mode, "WaitForFirstConsumer") != 0 || !prov ||
        strcmp(prov, "kubernetes.io/no-provisioner") == 0)
        return NULL;
    return sc;
}

/* The node a claim waits for a volume on, NULL when it waits for none. */
static const char *wanted(const json_t *c)
{
    const char *vn = str_at(c, "spec", "volumeName");
    if (!c || (vn && vn[0]) || !class_of(c))
        return NULL;
    return json_string_value(json_object_get(
        json_object_get(json_object_get(c, "metadata"), "annotations"), ANN_SELECTED));
}

static struct object *claimed(const json_t *pv);

void provision_written(struct object *o)
{
    bool pv = strcmp(o->res, "persistentvolumes") == 0;
    if (prov_ms < 0 || !o->cur ||
        (pv ? !claimed(o->cur)
            : (strcmp(o->res, "persistentvolumeclaims") != 0 || !wanted(o->cur))))
        return;
    if (ndues == capdues) {
        size_t cap = capdues ? capdues * 2 : 64;
        struct due *v = realloc(dues, cap * sizeof *v);
        if (!v)
            return;
        dues = v;
        capdues = cap;
    }
    dues[ndues++] = (struct due){o, mono() + (double)prov_ms / 1000.0};
}

/* Claim o bound to volume pvname of capacity size and access modes am
 * (borrowed), as the PV controller binds it (bindClaimToVolume, then the
 * claim's status); copied on write: a stored version is never changed. */
static void bind_claim(struct object *o, const char *pvname, json_t *size, json_t *am)
{
    json_t *c = o->cur, *meta = json_object_get(c, "metadata"), *spec = json_object_get(c, "spec");
    json_t *next = json_copy(c), *nm = json_copy(meta), *ns_spec = json_copy(spec);
    json_t *ann = json_object_get(meta, "annotations");
    json_t *na = ann ? json_copy(ann) : json_object();
    json_object_set_new(na, "pv.kubernetes.io/bind-completed", json_string("yes"));
    json_object_set_new(na, "pv.kubernetes.io/bound-by-controller", json_string("yes"));
    json_object_set_new(nm, "annotations", na);
    json_object_set_new(next, "metadata", nm);
    json_object_set_new(ns_spec, "volumeName", json_string(pvname));
    json_object_set_new(next, "spec", ns_spec);
    json_object_set_new(next, "status",
                        json_pack("{s:s,s:O,s:{s:O}}", "phase", "Bound", "accessModes", am,
                                  "capacity", "storage", size));
    record(o, "MODIFIED", next);
}

/* The claim volume pv is claimRef'd to, when it is there (of the
 * reference's uid, if it has one) and unbound; NULL otherwise. */
static struct object *claimed(const json_t *pv)
{
    const json_t *ref = json_object_get(json_object_get(pv, "spec"), "claimRef");
    const char *ns = json_string_value(json_object_get(ref, "namespace"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    struct object *co = name ? find("persistentvolumeclaims", ns ? ns : "", name) : NULL;
    if (!co || !co->cur)
        return NULL;
    const char *cuid = str_at(co->cur, "metadata", "uid");
    const char *vn = str_at(co->cur, "spec", "volumeName");
    if ((uid && uid[0] && (!cuid || strcmp(uid, cuid) != 0)) || (vn && vn[0]))
        return NULL;
    return co;
}

/* Volume po bound to the claim it is claimRef'd to (syncVolume,
 * syncUnboundClaim), when it still is one to bind. */
static void bind_claimed(struct object *po)
{
    struct object *co = po->cur ? claimed(po->cur) : NULL;
    if (!co)
        return;
    json_t *spec = json_object_get(po->cur, "spec");
    json_t *size = json_object_get(json_object_get(spec, "capacity"), "storage");
    json_t *am = json_object_get(spec, "accessModes");
    json_t *pv = json_copy(po->cur);
    json_object_set_new(pv, "status", json_pack("{s:s}", "phase", "Bound"));
    const char *pvname = str_at(pv, "metadata", "name");
    json_t *nsize = size ? json_incref(size) : json_string("0");
    json_t *nam = am ? json_incref(am) : json_array();
    record(po, "MODIFIED", pv);
    bind_claim(co, pvname ? pvname : po->name, nsize, nam);
    json_decref(nsize);
    json_decref(nam);
}

static void provide(struct object *o)
{
    json_t *c = o->cur;
    const char *node = wanted(c);
    if (!node)
        return;
    json_t *sc = class_of(c), *meta = json_object_get(c, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    struct object *no = find("nodes", "", node);
    json_t *labels =
        no && no->cur ? json_object_get(json_object_get(no->cur, "metadata"), "labels") : NULL;
    const char *zone = json_string_value(json_object_get(labels, "topology.kubernetes.io/zone"));
    const char *host = json_string_value(json_object_get(labels, "kubernetes.io/hostname"));
    const char *key = zone ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname";
    const char *val = zone ? zone : host;
    char pvname[128];
    snprintf(pvname, sizeof pvname, "pvc-%s", uid ? uid : "");
    if (find("persistentvolumes", "", pvname) && find("persistentvolumes", "", pvname)->cur)
        return;
    json_t *spec = json_object_get(c, "spec");
    json_t *storage =
        json_object_get(json_object_get(json_object_get(spec, "resources"), "requests"), "storage");
    json_t *modes = json_object_get(spec, "accessModes");
    json_t *size = storage ? storage : json_string("1Gi"); /* (a reference of ours or none) */
    json_t *am = modes ? modes : json_pack("[s]", "ReadWriteOnce");
    char ts[32], pvuid[48];
    now_rfc3339(ts, sizeof ts);
    S.uid++;
    snprintf(pvuid, sizeof pvuid, "00000000-0000-4000-8000-%012ld", S.uid);
    json_t *pv =
        json_pack(/* (val NULL: the nodeAffinity taken out below) */
                  "{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s}},s:{s:{s:O},s:O,s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s},"
                  "s:{s:s,s:s},s:{s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}},s:{s:s}}",
                  "apiVersion", "v1", "kind", "PersistentVolume", "metadata", "name", pvname, "uid",
                  pvuid, "creationTimestamp", ts, "annotations", "pv.kubernetes.io/provisioned-by",
                  json_string_value(json_object_get(sc, "provisioner")), "spec", "capacity",
                  "storage", size, "accessModes", am, "persistentVolumeReclaimPolicy", "Delete",
                  "storageClassName", str_at(c, "spec", "storageClassName"), "claimRef", "kind",
                  "PersistentVolumeClaim", "apiVersion", "v1", "namespace", ns ? ns : "default",
                  "name", name ? name : "", "uid", uid ? uid : "", "csi", "driver",
                  json_string_value(json_object_get(sc, "provisioner")), "volumeHandle", pvname,
                  "nodeAffinity", "required", "nodeSelectorTerms", "matchExpressions", "key", key,
                  "operator", "In", "values", val ? val : "", "status", "phase", "Bound");
    if (pv && !val) /* a node of neither label: a volume any node reaches */
        json_object_del(json_object_get(pv, "spec"), "nodeAffinity");
    if (!pv) {
        if (!storage)
            json_decref(size);
        if (!modes)
            json_decref(am);
        return;
    }
    record(obj_new("persistentvolumes", "", pvname), "ADDED", pv);
    bind_claim(o, pvname, size, am);
    if (!storage)
        json_decref(size);
    if (!modes)
        json_decref(am);
    prov_done++;
}

void provision_run(void)
{
    double now = mono();
    size_t keep = 0;
    for (size_t i = 0; i < ndues; i++) {
        if (dues[i].at <= now && strcmp(dues[i].o->res, "persistentvolumes") == 0)
            bind_claimed(dues[i].o);
        else if (dues[i].at <= now)
            provide(dues[i].o);
        else
            dues[keep++] = dues[i];
    }
    ndues = keep;
}
