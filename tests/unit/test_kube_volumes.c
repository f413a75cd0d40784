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
#include <time.h>

#include <cmocka.h>

#include "kube/rbac.h"
#include "kube_double.h"
#include "kube_world.h"
#include "kube_vworld.h"
#include "shared_data.h"

#define SCHEMAS GP_SHARED_DIR "/k8s/schemas"

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

/* VolumeBinding's PreFilter in its words: a claim not found, then made
 * (bound to a volume without constraints: the pod goes), one being
 * deleted, an unbound claim of an Immediate class until the PV controller
 * binds it, a bound claim whose volume does not exist. */
static void test_prefilter(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    w_node(&v.w, "n1", 2);
    w_node(&v.w, "n2", 2);
    cpod(&v, "a", "missing");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(why(&v, "a"),
                        "0/2 nodes are available: persistentvolumeclaim \"missing\" not found. "
                        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                        "scheduling..");
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"), why(&v, "a"));
    /* the claim comes, bound: a is tried again and goes */
    pv(&v, "pv1", NULL, NULL);
    pvc(&v, "missing", "standard", "pv1", NULL);
    assert_int_equal(v_cycle(&v), 1);
    assert_string_not_equal(w_node_of(&v.w, "a", NULL), "");
    /* being deleted (kept by its protection finalizer) */
    pv(&v, "pv2", NULL, NULL);
    pvc(&v, "old", "standard", "pv2", ",\"finalizers\":[\"kubernetes.io/pvc-protection\"]");
    kd_call(v.w.admin, "DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/old", NULL,
            200);
    cpod(&v, "b", "old");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(why(&v, "b"),
                        "0/2 nodes are available: persistentvolumeclaim \"old\" is being deleted. "
                        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                        "scheduling..");
    /* unbound, of an Immediate class: until the PV controller binds it */
    pv(&v, "pv3", NULL, NULL);
    pvc(&v, "late", "standard", NULL, NULL);
    cpod(&v, "c", "late");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(
        why(&v, "c"), "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                      "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                      "scheduling..");
    kd_call(v.w.admin, "PATCH", "/api/v1/namespaces/default/persistentvolumeclaims/late",
            "{\"metadata\":{\"annotations\":{\"pv.kubernetes.io/bind-completed\":\"yes\"}},"
            "\"spec\":{\"volumeName\":\"pv3\"}}",
            200);
    assert_int_equal(v_cycle(&v), 1);
    assert_string_not_equal(w_node_of(&v.w, "c", NULL), "");
    /* bound to a volume that is not there (VolumeZone's PreFilter) */
    pvc(&v, "ghost", "standard", "pv-gone", NULL);
    cpod(&v, "d", "ghost");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(why(&v, "d"),
                        "0/2 nodes are available: persistentvolume \"pv-gone\" not found. "
                        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                        "scheduling..");
    /* a claim of a WaitForFirstConsumer class without a provisioner (local
     * volumes, bound statically) and no volume for it: no node
     * (test_kube_volumes_static binds such claims) */
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    pvc(&v, "wait", "local", NULL, NULL);
    cpod(&v, "e", "wait");
    assert_int_equal(v_cycle(&v), 0);
    assert_non_null(strstr(why(&v, "e"), "node(s) didn't find available persistent volumes to "
                                         "bind. preemption: "));
    /* the one bound elsewhere is untouched; b, d and e never bound */
    assert_string_equal(w_node_of(&v.w, "b", NULL), "");
    assert_string_equal(w_node_of(&v.w, "d", NULL), "");
    assert_string_equal(w_node_of(&v.w, "e", NULL), "");
    v_close(&v);
}

/* A bound claim's volume's spec.nodeAffinity (a local volume on n3): the
 * pod goes there, not where best-fit would put it; with n3 full, the
 * other nodes are "volume node affinity conflict" and preemption is not
 * helpful on them. */
static void test_node_affinity(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    lnode(&v, "n1", 1, "\"kubernetes.io/hostname\":\"n1\"");
    lnode(&v, "n2", 1, "\"kubernetes.io/hostname\":\"n2\"");
    lnode(&v, "n3", 2, "\"kubernetes.io/hostname\":\"n3\"");
    pv(&v, "local-n3", NULL,
       "[{\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
       "\"values\":[\"n3\"]}]}]");
    pvc(&v, "data", "standard", "local-n3", NULL);
    cpod(&v, "a", "data");
    assert_int_equal(v_cycle(&v), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n3");
    /* n3 holds one more; then it is full and the others conflict */
    cpod(&v, "b", "data");
    assert_int_equal(v_cycle(&v), 1);
    assert_string_equal(w_node_of(&v.w, "b", NULL), "n3");
    cpod(&v, "c", "data");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(why(&v, "c"),
                        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had "
                        "volume node affinity conflict. preemption: 0/3 nodes are available: 1 "
                        "No preemption victims found for incoming pod, 2 Preemption is not "
                        "helpful for scheduling..");
    /* a pod without the claim still takes n1 */
    w_pod(&v.w, "free", 1);
    assert_int_equal(v_cycle(&v), 1);
    assert_string_equal(w_node_of(&v.w, "free", NULL), "n1");
    v_close(&v);
}

/* VolumeZone: a volume labelled zone c (GA key) keeps the pod off nodes of
 * zones a and b, a node without topology labels passing; a beta label
 * "a__c" is read against a node's GA label when it lacks the beta one. */
static void test_zone(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    lnode(&v, "n1", 1, "\"topology.kubernetes.io/zone\":\"a\"");
    lnode(&v, "n2", 1, "\"topology.kubernetes.io/zone\":\"b\"");
    lnode(&v, "n3", 2, NULL);
    pv(&v, "pd-c", "\"topology.kubernetes.io/zone\":\"c\"", NULL);
    pvc(&v, "c-data", "standard", "pd-c", NULL);
    cpod(&v, "a", "c-data");
    assert_int_equal(v_cycle(&v), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n3");
    cpod(&v, "b", "c-data");
    assert_int_equal(v_cycle(&v), 1);
    cpod(&v, "c", "c-data");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(why(&v, "c"),
                        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had "
                        "no available volume zone. preemption: 0/3 nodes are available: 1 No "
                        "preemption victims found for incoming pod, 2 Preemption is not helpful "
                        "for scheduling..");
    /* the beta label of zones a and c: n1 (GA zone a) passes */
    pv(&v, "pd-ac", "\"failure-domain.beta.kubernetes.io/zone\":\"a__c\"", NULL);
    pvc(&v, "ac-data", "standard", "pd-ac", NULL);
    cpod(&v, "d", "ac-data");
    assert_int_equal(v_cycle(&v), 1);
    assert_string_equal(w_node_of(&v.w, "d", NULL), "n1");
    v_close(&v);
}

/* A claim of ReadWriteOncePod access bound to volume `bound` (no constraints). */
static void rwop_pvc(struct vworld *v, const char *name, const char *bound)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
             "\"%s\",\"annotations\":{\"pv.kubernetes.io/bind-completed\":\"yes\"}},\"spec\":"
             "{\"accessModes\":[\"ReadWriteOncePod\"],\"resources\":{\"requests\":{\"storage\":"
             "\"10Gi\"}},\"storageClassName\":\"standard\",\"volumeName\":\"%s\"}}",
             name, bound);
    kd_call(v->w.admin, "POST", "/api/v1/namespaces/default/persistentvolumeclaims", b, 201);
}

/* A pod of scheduler `sched` and priority `prio` asking `gpus` GPUs and
 * naming claim `claim`. */
static void ppod(struct vworld *v, const char *name, const char *sched, int prio, unsigned gpus,
                 const char *claim)
{
    char b[1536];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"%s\",\"priority\":%d,"
             "\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":\"c\",\"image\":"
             "\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\","
             "\"nvidia.com/gpu\":\"%u\"},\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}],\"volumes\":"
             "[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}]}}",
             name, sched, prio, gpus, gpus, claim);
    kd_call(v->w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

#define RWOP_WORDS                                                                                 \
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access "     \
    "mode"

/* VolumeRestrictions' ReadWriteOncePod (volume_restrictions.go, v1.28):
 * a claim another scheduler's bound pod uses refuses our pod on every
 * node, in upstream's words, Unschedulable (preemption is tried: no
 * victim of a lower priority here); the holder ended, the pod goes. Two
 * pods of ours sharing such a claim: one is placed in the cycle, the
 * other refused until the first is deleted. A claim of ReadWriteOnce
 * access is shared as before. */
static void test_rwop(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    w_node(&v.w, "n1", 2);
    w_node(&v.w, "n2", 2);
    pv(&v, "pv1", NULL, NULL);
    rwop_pvc(&v, "solo", "pv1");
    ppod(&v, "holder", "other-scheduler", 0, 1, "solo");
    w_bind(&v.w, "holder", "n1");
    ppod(&v, "a", "gpuplane", 0, 1, "solo");
    assert_int_equal(v_cycle(&v), 0);
    /* (no pod of a lower priority on either node: no victims) */
    assert_string_equal(why(&v, "a"), "0/2 nodes are available: 2 " RWOP_WORDS
                                      ". preemption: 0/2 nodes are available: 2 No preemption "
                                      "victims found for incoming pod..");
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    /* the holder ends: a is tried again and goes */
    kd_call(v.w.admin, "PATCH", "/api/v1/namespaces/default/pods/holder/status",
            "{\"status\":{\"phase\":\"Succeeded\"}}", 200);
    assert_int_equal(v_cycle(&v), 1);
    assert_string_not_equal(w_node_of(&v.w, "a", NULL), "");
    /* two of ours on one claim: one placed, the other refused */
    pv(&v, "pv2", NULL, NULL);
    rwop_pvc(&v, "duo", "pv2");
    ppod(&v, "b", "gpuplane", 0, 1, "duo");
    ppod(&v, "c", "gpuplane", 0, 1, "duo");
    assert_int_equal(v_cycle(&v), 1);
    bool b_went = strcmp(w_node_of(&v.w, "b", NULL), "") != 0;
    const char *left = b_went ? "c" : "b", *went = b_went ? "b" : "c";
    assert_string_equal(w_node_of(&v.w, left, NULL), "");
    if (!strstr(why(&v, left), " " RWOP_WORDS ". preemption: 0/2 nodes are available: 2 No "))
        fail_msg("%s: %s", left, why(&v, left));
    /* the one placed deleted: the other goes */
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", went);
    kd_call(v.w.admin, "DELETE", path, NULL, 200);
    kd_call(v.w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    assert_int_equal(v_cycle(&v), 1);
    assert_string_not_equal(w_node_of(&v.w, left, NULL), "");
    /* ReadWriteOnce: two pods share it */
    pv(&v, "pv3", NULL, NULL);
    pvc(&v, "shared", "standard", "pv3", NULL);
    ppod(&v, "d", "gpuplane", 0, 0, "shared");
    ppod(&v, "e", "gpuplane", 0, 0, "shared");
    assert_int_equal(v_cycle(&v), 2);
    v_close(&v);
}

/* Preemption may evict the holder (v1.28's Filter is Unschedulable and
 * its RemovePod takes a victim's use off the count): a pod of priority
 * 100 whose claim a pod of ours of priority 0 holds on n1 preempts it
 * there, and is bound on n1 once it is gone, though n2 has room. */
static void test_rwop_preempt(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    w_node(&v.w, "n1", 2);
    w_node(&v.w, "n2", 2);
    pv(&v, "pv1", NULL, NULL);
    rwop_pvc(&v, "solo", "pv1");
    ppod(&v, "low", "gpuplane", 0, 2, "solo");
    assert_int_equal(v_cycle(&v), 1);
    const char *at = w_node_of(&v.w, "low", NULL);
    char low_node[64];
    snprintf(low_node, sizeof low_node, "%s", at);
    ppod(&v, "high", "gpuplane", 100, 1, "solo");
    assert_int_equal(v_cycle(&v), 0);
    json_t *o = w_pod_get(&v.w, "low");
    assert_non_null(json_object_get(json_object_get(o, "metadata"), "deletionTimestamp"));
    json_decref(o);
    kd_call(v.w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    v.w.now += 1;
    assert_int_equal(v_cycle(&v), 1);
    assert_string_equal(w_node_of(&v.w, "high", NULL), low_node);
    v_close(&v);
}

/* WaitForFirstConsumer dynamic provisioning (VolumeBinding: binder.go
 * FindPodVolumes/checkVolumeProvisions, AssumePodVolumes, BindPodVolumes,
 * checkBindings, v1.28): a claim of a class whose allowedTopologies allow
 * zone a alone keeps the pod off n1 (zone b: "node(s) didn't find
 * available persistent volumes to bind"), where best-fit would put it;
 * on n2 the claim is annotated volume.kubernetes.io/selected-node=n2
 * before anything is written to the pod, the pod bound only once the
 * double's provisioner bound the claim to a volume of zone a. */
static void test_wffc_provision(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "gp3", "ebs.csi.aws.com",
        "[{\"matchLabelExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"values\":"
        "[\"a\"]}]}]");
    lnode(&v, "n1", 1, "\"topology.kubernetes.io/zone\":\"b\"");
    lnode(&v, "n2", 2, "\"topology.kubernetes.io/zone\":\"a\"");
    pvc(&v, "data", "gp3", NULL, NULL);
    cpod(&v, "a", "data");
    assert_int_equal(v_cycle(&v), 0); /* the claim annotated, its volume to come */
    assert_string_equal(
        claim_at(&v, "data", "metadata", "annotations", "volume.kubernetes.io/selected-node"),
        "n2");
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    assert_int_equal(v_cycles_until(&v, "a", 5), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n2");
    const char *pvn = claim_at(&v, "data", "spec", NULL, "volumeName");
    assert_string_not_equal(pvn, "");
    char path[200];
    snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s", pvn);
    json_t *pv = get(&v, path);
    json_t *term =
        json_array_get(json_object_get(json_object_get(json_object_get(json_object_get(pv, "spec"),
                                                                       "nodeAffinity"),
                                                       "required"),
                                       "nodeSelectorTerms"),
                       0);
    json_t *x = json_array_get(json_object_get(term, "matchExpressions"), 0);
    assert_string_equal(json_string_value(json_object_get(x, "key")),
                        "topology.kubernetes.io/zone");
    assert_string_equal(json_string_value(json_array_get(json_object_get(x, "values"), 0)), "a");
    json_decref(pv);
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_patches, 1);
    /* a pod whose class allows only zone c: no node passes */
    wsc(&v, "gp3-c", "ebs.csi.aws.com",
        "[{\"matchLabelExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"values\":"
        "[\"c\"]}]}]");
    pvc(&v, "c-data", "gp3-c", NULL, NULL);
    cpod(&v, "b", "c-data");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(why(&v, "b"),
                        "0/2 nodes are available: 2 node(s) didn't find available persistent "
                        "volumes to bind. preemption: 0/2 nodes are available: 2 Preemption is "
                        "not helpful for scheduling..");
    assert_string_equal(
        claim_at(&v, "c-data", "metadata", "annotations", "volume.kubernetes.io/selected-node"),
        "");
    v_close(&v);
}

/* A provisioning that never completes (the double's provisioner off):
 * past bindTimeoutSeconds (600) the decision is taken back, in
 * kube-scheduler's words for a failed PreBind, and the pod tried again;
 * the annotation stays (upstream's scheduler does not take it off), so
 * the retried pod waits on the same node, and binds once the claim is
 * provisioned. The provisioner taking the annotation off
 * (rescheduleProvisioning) fails the wait at once. */
static void test_wffc_timeout(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    struct gp_kube_metrics km;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_metrics_init(&km, &d), GP_OK);
    gp_kube_sched_set_metrics(v.w.s, &km);
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    wsc(&v, "gp3", "ebs.csi.aws.com", NULL);
    lnode(&v, "n1", 2, "\"topology.kubernetes.io/zone\":\"a\"");
    pvc(&v, "slow", "gp3", NULL, NULL);
    cpod(&v, "a", "slow");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(
        claim_at(&v, "slow", "metadata", "annotations", "volume.kubernetes.io/selected-node"),
        "n1");
    v.w.now += 300;
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"), "");
    v.w.now += 301; /* past 600 s */
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"),
                        "running PreBind plugin \"VolumeBinding\": binding volumes: timed out "
                        "waiting for the condition");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 1);
    assert_string_equal(
        claim_at(&v, "slow", "metadata", "annotations", "volume.kubernetes.io/selected-node"),
        "n1");
    /* the provisioner back (a claim touched: its resync) */
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":0}", 200);
    kd_call(v.w.admin, "PATCH", "/api/v1/namespaces/default/persistentvolumeclaims/slow",
            "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    assert_int_equal(v_cycles_until(&v, "a", 6), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n1");
    /* the provisioner gives up (the annotation taken off): taken back at once */
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    pvc(&v, "doomed", "gp3", NULL, NULL);
    cpod(&v, "b", "doomed");
    assert_int_equal(v_cycle(&v), 0);
    kd_call(v.w.admin, "PATCH", "/api/v1/namespaces/default/persistentvolumeclaims/doomed",
            "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":null}}}", 200);
    v.w.now += 1;
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_events(&v.w, "FailedScheduling", "b"),
                        "running PreBind plugin \"VolumeBinding\": binding volumes: provisioning "
                        "failed for PVC \"doomed\"");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 2);
    /* the same counts on /metrics: two claims annotated, two decisions taken back */
    gp_kube_sched_metrics(v.w.s);
    assert_true(gp_metrics_value(km.claim_patches) == 2);
    assert_true(gp_metrics_value(km.volume_binding_failures) == 2);
    gp_kube_sched_set_metrics(v.w.s, NULL);
    gp_kube_metrics_free(&km);
    v_close(&v);
}

/* A pod with a claim bound before (its volume a filter's) and a claim of
 * a WaitForFirstConsumer class: the claim bound before is ready whatever
 * its resourceVersion (checkBindings compares each claim with the version
 * its own patch made: the assume cache's, binder.go bindAPIUpdate), so
 * the pod is bound once the other claim is provisioned, not held until
 * bindTimeoutSeconds because the older claim's version is below the new
 * claim's patch. */
static void test_wffc_with_bound_claim(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    wsc(&v, "gp3", "ebs.csi.aws.com", NULL);
    lnode(&v, "n1", 2, "\"topology.kubernetes.io/zone\":\"a\"");
    pv(&v, "old-pv", NULL, NULL);
    pvc(&v, "old", "standard", "old-pv", NULL);
    pvc(&v, "new", "gp3", NULL, NULL);
    vpod(&v, "a",
         "{\"name\":\"o\",\"persistentVolumeClaim\":{\"claimName\":\"old\"}},"
         "{\"name\":\"n\",\"persistentVolumeClaim\":{\"claimName\":\"new\"}}");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(
        claim_at(&v, "new", "metadata", "annotations", "volume.kubernetes.io/selected-node"), "n1");
    assert_int_equal(v_cycles_until(&v, "a", 6), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n1");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 0);
    v_close(&v);
}

/* A claim the informer shows without metadata.resourceVersion (a bad
 * object): its annotation patch is not sent (a merge patch with "" is no
 * precondition: the API server would apply it whatever the claim became),
 * the pod's PreBind fails naming the field, nothing half-written. */
static void test_wffc_claim_without_rv(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "gp3", "ebs.csi.aws.com", NULL);
    lnode(&v, "n1", 2, NULL);
    pvc(&v, "data", "gp3", NULL, NULL);
    v_sync(&v);
    json_t *c = get(&v, "/api/v1/namespaces/default/persistentvolumeclaims/data");
    json_t *bad = json_deep_copy(c);
    json_object_del(json_object_get(bad, "metadata"), "resourceVersion");
    gp_kube_sched_pvc_change(GP_KUBE_MODIFIED, bad, c, v.w.s);
    cpod(&v, "a", "data");
    assert_int_equal(w_cycle(&v.w), 0);
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_patches, 0);
    assert_string_equal(
        claim_at(&v, "data", "metadata", "annotations", "volume.kubernetes.io/selected-node"), "");
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"),
                        "running PreBind plugin \"VolumeBinding\": binding volumes: "
                        "persistentvolumeclaim \"data\" has no metadata.resourceVersion");
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    json_decref(bad);
    json_decref(c);
    v_close(&v);
}

/* A pod of more claims than volumes.c reads (32): refused in gpuplane's
 * words naming spec.volumes, not placed with the 33rd claim unread (here
 * one that does not exist, which kube-scheduler's PreFilter refuses).
 * Fails without the refusal: no PreFilter reason, the pod decided and
 * taken back at its PreBind each try (volumes_bind.c reads every volume). */
static void test_too_many_claims(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    sc(&v, "standard", NULL);
    w_node(&v.w, "n1", 2);
    pv(&v, "pv1", NULL, NULL);
    pvc(&v, "ok", "standard", "pv1", NULL);
    char vols[8192] = "";
    size_t at = 0;
    for (int i = 0; i < 33; i++)
        at += (size_t)snprintf(vols + at, sizeof vols - at,
                               "%s{\"name\":\"v%d\",\"persistentVolumeClaim\":{\"claimName\":"
                               "\"%s\"}}",
                               i ? "," : "", i, i < 32 ? "ok" : "missing");
    vpod(&v, "a", vols);
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    assert_string_equal(why(&v, "a"),
                        "0/1 nodes are available: pod has 33 persistentVolumeClaim and ephemeral "
                        "volumes (spec.volumes): gpuplane reads at most 32. preemption: 0/1 nodes "
                        "are available: 1 Preemption is not helpful for scheduling..");
    v_close(&v);
}

/* A claim already annotated volume.kubernetes.io/selected-node for a node
 * outside its class's allowedTopologies: that node alone passes the fast
 * path, and the class's topology is still checked for it
 * (checkVolumeProvisions reads every claim to provision), so no node
 * passes. Fails without the topology check (the pod bound on n1, zone b). */
static void test_wffc_selected_outside_topology(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "gp3", "ebs.csi.aws.com",
        "[{\"matchLabelExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"values\":"
        "[\"a\"]}]}]");
    lnode(&v, "n1", 2, "\"topology.kubernetes.io/zone\":\"b\"");
    lnode(&v, "n2", 2, "\"topology.kubernetes.io/zone\":\"a\"");
    pvc(&v, "data", "gp3", NULL,
        ",\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"}");
    cpod(&v, "a", "data");
    assert_int_equal(v_cycle(&v), 0);
    assert_int_equal(v_cycles_until(&v, "a", 3), 0);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    assert_string_equal(why(&v, "a"),
                        "0/2 nodes are available: 2 node(s) didn't find available persistent "
                        "volumes to bind. preemption: 0/2 nodes are available: 2 Preemption is "
                        "not helpful for scheduling..");
    v_close(&v);
}

/* A decision moved off a blocked node (sched_unblock.c) after its claim
 * was provisioned there: the pod on n1 (zone a) waits for n1's slot,
 * which another scheduler's pod never admitted blocks; its claim, of a
 * class that allows every zone, was annotated for n1 and bound to a volume
 * the double's provisioner made for zone a. The move reads the claim as
 * it is now: n2 (zone b, the tighter) is excluded by the volume's node
 * affinity, so the pod goes to n3 (zone a) and is bound there at once.
 * Fails with the conditions read when the pod was (the class's: every
 * node): the move picks n2 and the pod's PreBind fails ("pv ... node
 * affinity doesn't match node \"n2\""), the decision taken back. */
static void test_wffc_moved_keeps_volume(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "gp3", "ebs.csi.aws.com", NULL);
    lnode(&v, "n1", 4, "\"topology.kubernetes.io/zone\":\"a\"");
    w_pod_full(&v.w, "f1", 1, 0, "default-scheduler", NULL);
    kd_call(v.w.admin, "POST", "/api/v1/namespaces/default/pods/f1/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"f1\"},"
            "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
            201);
    pvc(&v, "data", "gp3", NULL, NULL);
    cpod(&v, "a", "data");
    for (int i = 0; i < 5 && gp_kube_sched_stats(v.w.s).slot_waiting == 0; i++) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
        assert_int_equal(v_cycle(&v), 0);
    }
    assert_int_equal(gp_kube_sched_stats(v.w.s).slot_waiting, 1); /* provisioned, waiting */
    assert_string_not_equal(claim_at(&v, "data", "spec", NULL, "volumeName"), "");
    lnode(&v, "n2", 2, "\"topology.kubernetes.io/zone\":\"b\"");
    lnode(&v, "n3", 8, "\"topology.kubernetes.io/zone\":\"a\"");
    v.w.now += 125; /* n1 blocked */
    assert_int_equal(v_cycle(&v), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n3");
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"), "");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 0);
    w_check_distinct(&v.w);
    v_close(&v);
}

/* render --self grants the volumes' (and CSINodes') list and watch, the claims' patch
 * (the selected-node annotation: volumes_bind.c) and the volumes' patch
 * (a static binding's claimRef), nothing more. */
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
        {"list", "storage.k8s.io", "csinodes"},
        {"watch", "storage.k8s.io", "csinodes"},
        {"patch", "", "persistentvolumeclaims"},
        {"patch", "", "persistentvolumes"},
    };
    const char *no[][3] = {
        {"get", "", "persistentvolumeclaims"},    {"update", "", "persistentvolumeclaims"},
        {"create", "", "persistentvolumeclaims"}, {"delete", "", "persistentvolumeclaims"},
        {"create", "", "persistentvolumes"},      {"get", "", "persistentvolumes"},
        {"update", "", "persistentvolumes"},      {"get", "storage.k8s.io", "storageclasses"},
        {"get", "storage.k8s.io", "csinodes"},    {"update", "storage.k8s.io", "csinodes"},
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
    assert_true(gp_rbac_allows_request("PATCH", "/api/v1/namespaces/ml/persistentvolumeclaims/data",
                                       "gpuplane-system", why, sizeof why));
    assert_false(gp_rbac_allows_request("PUT", "/api/v1/namespaces/ml/persistentvolumeclaims/data",
                                        "gpuplane-system", why, sizeof why));
    assert_true(gp_rbac_allows_request("PATCH", "/api/v1/persistentvolumes/local-n1",
                                       "gpuplane-system", why, sizeof why));
    assert_false(gp_rbac_allows_request("PUT", "/api/v1/persistentvolumes/local-n1",
                                        "gpuplane-system", why, sizeof why));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_informers, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_prefilter, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_node_affinity, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_zone, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_rwop, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_rwop_preempt, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_wffc_provision, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_wffc_timeout, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_wffc_with_bound_claim, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_wffc_claim_without_rv, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_too_many_claims, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_wffc_selected_outside_topology, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_wffc_moved_keeps_volume, kd_start, kd_stop),
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
