/* kube_vworld.h - for the volume tests: the scheduler's world with the
 * volumes' informers (PersistentVolumeClaims, PersistentVolumes,
 * StorageClasses) on a client of their own, and the objects they read made
 * in the API double: classes, volumes, claims, pods naming claims, labelled
 * nodes, a cycle after a sync. Included after kube_world.h by one test
 * file each (static functions). */
#ifndef GP_TEST_KUBE_VWORLD_H
#define GP_TEST_KUBE_VWORLD_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube_double.h"
#include "kube_world.h"

/* The world and the volumes' informers on a client of their own. */
struct vworld {
    struct world w;
    struct gp_kube_client *ic;
    struct gp_kube_informer *pvcs, *pvs, *scs;
};

__attribute__((unused)) static void v_open(struct vworld *v)
{
    w_open(&v->w, true);
    v->ic = kd_client();
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(v->ic, "/api/v1/persistentvolumeclaims", 0,
                                          gp_kube_sched_pvc_change, v->w.s, &v->pvcs, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_new(v->ic, "/api/v1/persistentvolumes", 0,
                                          gp_kube_sched_pv_change, v->w.s, &v->pvs, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_new(v->ic, "/apis/storage.k8s.io/v1/storageclasses", 0,
                                          gp_kube_sched_sc_change, v->w.s, &v->scs, &d),
                     GP_OK);
}

/* The volumes' informers re-listed (a re-list delivers what changed). */
__attribute__((unused)) static void v_sync(struct vworld *v)
{
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_list(v->scs, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(v->pvs, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(v->pvcs, &d), GP_OK);
}

__attribute__((unused)) static void v_close(struct vworld *v)
{
    gp_kube_informer_free(v->pvcs);
    gp_kube_informer_free(v->pvs);
    gp_kube_informer_free(v->scs);
    gp_kube_client_free(v->ic);
    w_close(&v->w);
}

__attribute__((unused)) static void sc(struct vworld *v, const char *name, const char *mode)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":"
             "{\"name\":\"%s\"},\"provisioner\":\"pd.csi.storage.gke.io\"%s%s%s}",
             name, mode ? ",\"volumeBindingMode\":\"" : "", mode ? mode : "", mode ? "\"" : "");
    kd_call(v->w.admin, "POST", "/apis/storage.k8s.io/v1/storageclasses", b, 201);
}

/* A WaitForFirstConsumer class of provisioner prov, allowedTopologies
 * topo (a JSON array, or NULL). */
__attribute__((unused)) static void wsc(struct vworld *v, const char *name, const char *prov,
                                        const char *topo)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":"
             "{\"name\":\"%s\"},\"provisioner\":\"%s\",\"volumeBindingMode\":"
             "\"WaitForFirstConsumer\"%s%s}",
             name, prov, topo ? ",\"allowedTopologies\":" : "", topo ? topo : "");
    kd_call(v->w.admin, "POST", "/apis/storage.k8s.io/v1/storageclasses", b, 201);
}

/* A volume: labels (JSON members, or NULL) and spec.nodeAffinity's
 * required terms (a JSON array, or NULL). */
__attribute__((unused)) static void pv(struct vworld *v, const char *name, const char *labels,
                                       const char *terms)
{
    char b[1536];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\""
             "%s%s%s},\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},\"accessModes\":"
             "[\"ReadWriteOnce\"],\"storageClassName\":\"standard\",\"csi\":{\"driver\":"
             "\"pd.csi.storage.gke.io\",\"volumeHandle\":\"%s\"}%s%s%s}}",
             name, labels ? ",\"labels\":{" : "", labels ? labels : "", labels ? "}" : "", name,
             terms ? ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":" : "",
             terms ? terms : "", terms ? "}}" : "");
    kd_call(v->w.admin, "POST", "/api/v1/persistentvolumes", b, 201);
}

/* A claim of class cls (NULL: none), bound to volume `bound` (NULL: not
 * bound; the PV controller's bind-completed annotation with it), extra
 * metadata members (",\"finalizers\":[...]") when not NULL. */
__attribute__((unused)) static void pvc(struct vworld *v, const char *name, const char *cls,
                                        const char *bound, const char *meta)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
             "\"%s\"%s%s},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":"
             "{\"requests\":{\"storage\":\"10Gi\"}}%s%s%s%s%s%s}}",
             name, bound ? ",\"annotations\":{\"pv.kubernetes.io/bind-completed\":\"yes\"}" : "",
             meta ? meta : "", cls ? ",\"storageClassName\":\"" : "", cls ? cls : "",
             cls ? "\"" : "", bound ? ",\"volumeName\":\"" : "", bound ? bound : "",
             bound ? "\"" : "");
    kd_call(v->w.admin, "POST", "/api/v1/namespaces/default/persistentvolumeclaims", b, 201);
}

__attribute__((unused)) static json_t *get(struct vworld *v, const char *path)
{
    return w_get(&v->w, path);
}

/* A pod of ours asking one GPU, with the volumes (a JSON array's members). */
__attribute__((unused)) static void vpod(struct vworld *v, const char *name, const char *volumes)
{
    char b[12288];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
             "{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"1\"},\"limits\":"
             "{\"nvidia.com/gpu\":\"1\"}}}],\"volumes\":[%s]}}",
             name, volumes);
    kd_call(v->w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* A pod naming claim `claim`. */
__attribute__((unused)) static void cpod(struct vworld *v, const char *name, const char *claim)
{
    char b[256];
    snprintf(b, sizeof b, "{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}",
             claim);
    vpod(v, name, b);
}

/* A node of `gpus` GPUs with extra labels (JSON members). */
__attribute__((unused)) static void lnode(struct vworld *v, const char *name, unsigned gpus,
                                          const char *labels)
{
    w_node(&v->w, name, gpus);
    if (!labels)
        return;
    char b[512], path[128];
    snprintf(b, sizeof b, "{\"metadata\":{\"labels\":{%s}}}", labels);
    snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
    kd_call(v->w.admin, "PATCH", path, b, 200);
}

/* Synced (volumes first) and one cycle: the pods bound. */
__attribute__((unused)) static size_t v_cycle(struct vworld *v)
{
    v_sync(v);
    size_t n = w_cycle(&v->w);
    v->w.now += 1;
    return n;
}

/* The pod's PodScheduled message ("" when none), in a static buffer. */
__attribute__((unused)) static const char *why(struct vworld *v, const char *pod)
{
    static char out[1024];
    out[0] = '\0';
    json_t *o = w_pod_get(&v->w, pod);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(o, "status"), "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *m = json_string_value(json_object_get(c, "message"));
        if (t && m && strcmp(t, "PodScheduled") == 0)
            snprintf(out, sizeof out, "%s", m);
    }
    json_decref(o);
    return out;
}

/* An object's member (a/b, b may be NULL) as a string, in a static buffer. */
__attribute__((unused)) static const char *object_at(struct vworld *v, const char *path,
                                                     const char *a, const char *b, const char *k)
{
    static char out[256];
    json_t *o = get(v, path);
    const json_t *at = json_object_get(o, a);
    if (b)
        at = json_object_get(at, b);
    const char *s = json_string_value(json_object_get(at, k));
    snprintf(out, sizeof out, "%s", s ? s : "");
    json_decref(o);
    return out;
}

/* A claim's member (a/b: "metadata/annotations") as a string, in a static buffer. */
__attribute__((unused)) static const char *claim_at(struct vworld *v, const char *claim,
                                                    const char *a, const char *b, const char *k)
{
    char path[200];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/persistentvolumeclaims/%s", claim);
    return object_at(v, path, a, b, k);
}

/* A volume's member (a/b: "spec/claimRef") as a string, in a static buffer. */
__attribute__((unused)) static const char *pv_at(struct vworld *v, const char *pvn, const char *a,
                                                 const char *b, const char *k)
{
    char path[200];
    snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s", pvn);
    return object_at(v, path, a, b, k);
}

/* Cycles (each a second later, the double's provisioner given time to
 * answer) until pod is bound, at most n: the pods bound. */
__attribute__((unused)) static size_t v_cycles_until(struct vworld *v, const char *pod, int n)
{
    size_t total = 0;
    for (int i = 0; i < n && strcmp(w_node_of(&v->w, pod, NULL), "") == 0; i++) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
        total += v_cycle(v);
    }
    return total;
}

#endif
