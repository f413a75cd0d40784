/* test_kube_volumes.c - the volumes a pod of ours claims, as kube-scheduler's
 * VolumeBinding and VolumeZone read them (src/kube/volumes.c, docs/kube.md
 * "Volumes"), against the API server double: its PersistentVolumeClaims,
 * PersistentVolumes and StorageClasses listed and watched (the double
 * filling in what kube-apiserver does, a claim with a finalizer only
 * marked when deleted), and what render --self grants for them. Run with
 * "shared" the double checks every object against the published schemas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/rbac.h"
#include "kube_double.h"
#include "kube_world.h"
#include "shared_data.h"

#define SCHEMAS GP_SHARED_DIR "/k8s/schemas"

/* The world and the volumes' informers on a client of their own. */
struct vworld {
    struct world w;
    struct gp_kube_client *ic;
    struct gp_kube_informer *pvcs, *pvs, *scs;
};

static void v_open(struct vworld *v)
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
static void v_sync(struct vworld *v)
{
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_list(v->scs, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(v->pvs, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(v->pvcs, &d), GP_OK);
}

static void v_close(struct vworld *v)
{
    gp_kube_informer_free(v->pvcs);
    gp_kube_informer_free(v->pvs);
    gp_kube_informer_free(v->scs);
    gp_kube_client_free(v->ic);
    w_close(&v->w);
}

static void sc(struct vworld *v, const char *name, const char *mode)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":"
             "{\"name\":\"%s\"},\"provisioner\":\"pd.csi.storage.gke.io\"%s%s%s}",
             name, mode ? ",\"volumeBindingMode\":\"" : "", mode ? mode : "", mode ? "\"" : "");
    kd_call(v->w.admin, "POST", "/apis/storage.k8s.io/v1/storageclasses", b, 201);
}

/* A volume: labels (JSON members, or NULL) and spec.nodeAffinity's
 * required terms (a JSON array, or NULL). */
static void pv(struct vworld *v, const char *name, const char *labels, const char *terms)
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
static void pvc(struct vworld *v, const char *name, const char *cls, const char *bound,
                const char *meta)
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

static json_t *get(struct vworld *v, const char *path)
{
    return w_get(&v->w, path);
}

/* The three kinds listed and watched as the others: what kube-apiserver
 * fills in on create (status Pending, the classes' binding mode), a
 * watch delivering a new claim, a deletion leaving the store, and a claim
 * with a finalizer marked, not deleted, until it has none. */
static void test_informers(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    sc(&v, "local", "WaitForFirstConsumer");
    pv(&v, "pv1", NULL, NULL);
    pvc(&v, "data", "standard", "pv1", NULL);
    v_sync(&v);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(v.w.s);
    assert_int_equal(st.storage_classes, 2);
    assert_int_equal(st.volumes, 1);
    assert_int_equal(st.volume_claims, 1);
    /* the server's defaults */
    json_t *o = get(&v, "/apis/storage.k8s.io/v1/storageclasses/standard");
    assert_string_equal(json_string_value(json_object_get(o, "volumeBindingMode")), "Immediate");
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "StorageClass");
    json_decref(o);
    o = get(&v, "/api/v1/namespaces/default/persistentvolumeclaims/data");
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "status"), "phase")),
                        "Pending");
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "PersistentVolumeClaim");
    json_decref(o);
    /* a watch delivers a new claim */
    pvc(&v, "scratch", "local", NULL, ",\"finalizers\":[\"kubernetes.io/pvc-protection\"]");
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_watch(v.pvcs, 0.5, &d), GP_OK);
    assert_int_equal(gp_kube_sched_stats(v.w.s).volume_claims, 2);
    /* a claim with a finalizer: marked deleting, kept */
    kd_call(v.w.admin, "DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/scratch", NULL,
            200);
    o = get(&v, "/api/v1/namespaces/default/persistentvolumeclaims/scratch");
    assert_non_null(json_object_get(json_object_get(o, "metadata"), "deletionTimestamp"));
    json_decref(o);
    v_sync(&v);
    assert_int_equal(gp_kube_sched_stats(v.w.s).volume_claims, 2);
    /* its finalizer removed (the PVC protection controller): gone */
    kd_call(v.w.admin, "PATCH", "/api/v1/namespaces/default/persistentvolumeclaims/scratch",
            "{\"metadata\":{\"finalizers\":null}}", 200);
    kd_call(v.w.admin, "GET", "/api/v1/namespaces/default/persistentvolumeclaims/scratch", NULL,
            404);
    kd_call(v.w.admin, "DELETE", "/api/v1/persistentvolumes/pv1", NULL, 200);
    v_sync(&v);
    st = gp_kube_sched_stats(v.w.s);
    assert_int_equal(st.volume_claims, 1);
    assert_int_equal(st.volumes, 0);
    v_close(&v);
}

/* render --self grants the volumes' list and watch, nothing more. */
static void test_rbac(void **state)
{
    (void)state;
    const char *yes[][3] = {
        {"list", "", "persistentvolumeclaims"},
        {"watch", "", "persistentvolumeclaims"},
        {"list", "", "persistentvolumes"},
        {"watch", "", "persistentvolumes"},
        {"list", "storage.k8s.io", "storageclasses"},
        {"watch", "storage.k8s.io", "storageclasses"},
    };
    const char *no[][3] = {
        {"get", "", "persistentvolumeclaims"},
        {"update", "", "persistentvolumeclaims"},
        {"delete", "", "persistentvolumeclaims"},
        {"create", "", "persistentvolumes"},
        {"get", "", "persistentvolumes"},
        {"patch", "", "persistentvolumes"},
        {"get", "storage.k8s.io", "storageclasses"},
        {"list", "storage.k8s.io", "csinodes"},
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!gp_rbac_allows(yes[i][0], yes[i][1], yes[i][2], NULL))
            fail_msg("refused: %s %s/%s", yes[i][0], yes[i][1], yes[i][2]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (gp_rbac_allows(no[i][0], no[i][1], no[i][2], NULL))
            fail_msg("allowed: %s %s/%s", no[i][0], no[i][1], no[i][2]);
    char why[256];
    assert_true(gp_rbac_allows_request("GET", "/api/v1/persistentvolumeclaims?watch=true",
                                       "gpuplane-system", why, sizeof why));
    assert_true(gp_rbac_allows_request("GET", "/apis/storage.k8s.io/v1/storageclasses?limit=500",
                                       "gpuplane-system", why, sizeof why));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_informers, kd_start, kd_stop),
        cmocka_unit_test(test_rbac),
    };
    if (gp_shared_mode(argc, argv)) {
        if (!gp_shared_have(SCHEMAS "/api__v1_openapi.json"))
            return GP_SHARED_SKIP_EXIT;
        kd_schemas = SCHEMAS;
        return gp_shared_exit(cmocka_run_group_tests_name("schemas", tests, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
