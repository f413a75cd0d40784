/* test_kube_volumes_static.c - static binding of WaitForFirstConsumer
 * claims (src/kube/volumes.c, volumes_match.c, volumes_bind.c; docs/kube.md
 * "WaitForFirstConsumer: static binding"), as kube-scheduler's
 * VolumeBinding binds them (binder.go FindPodVolumes/findMatchingVolumes,
 * AssumePodVolumes, BindPodVolumes/bindAPIUpdate, checkBindings;
 * persistentvolume/util FindMatchingVolume, v1.28), against the API server
 * double, whose PV controller binds a claim to the volume claimRef'd to it
 * (tests/apidouble/provision.c). Run with "shared" the double checks every
 * object against the published schemas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_vworld.h"
#include "kube_world.h"
#include "shared_data.h"

#define SCHEMAS GP_SHARED_DIR "/k8s/schemas"

/* A volume of class cls, capacity size, access modes modes (a JSON array),
 * on the node of hostname `host` (NULL: no node affinity), made Available
 * as the PV controller makes an unclaimed volume (its status written
 * through /status); extra spec members when not NULL. */
static void spv(struct vworld *v, const char *name, const char *cls, const char *size,
                const char *modes, const char *host, const char *extra)
{
    char b[2048], path[200];
    char aff[512] = "";
    if (host)
        snprintf(aff, sizeof aff,
                 ",\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"
                 "[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":"
                 "[\"%s\"]}]}]}}",
                 host);
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"capacity\":{\"storage\":\"%s\"},\"accessModes\":%s,"
             "\"storageClassName\":\"%s\",\"local\":{\"path\":\"/mnt/%s\"}%s%s}}",
             name, size, modes, cls, name, aff, extra ? extra : "");
    kd_call(v->w.admin, "POST", "/api/v1/persistentvolumes", b, 201);
    snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s/status", name);
    kd_call(v->w.admin, "PATCH", path, "{\"status\":{\"phase\":\"Available\"}}", 200);
}

/* A local volume of class "local", 10Gi..., ReadWriteOnce, on host. */
static void lpv(struct vworld *v, const char *name, const char *size, const char *host)
{
    spv(v, name, "local", size, "[\"ReadWriteOnce\"]", host, NULL);
}

/* Nodes n1 (1 GPU, the tightest: best-fit's choice), n2 and n3 (2 GPUs),
 * each labelled with its hostname. */
static void three_nodes(struct vworld *v)
{
    lnode(v, "n1", 1, "\"kubernetes.io/hostname\":\"n1\"");
    lnode(v, "n2", 2, "\"kubernetes.io/hostname\":\"n2\"");
    lnode(v, "n3", 2, "\"kubernetes.io/hostname\":\"n3\"");
}

/* An unbound claim of a class without a provisioner (local volumes): the
 * volumes that do not match are passed over - on n1 one too small, one of
 * another class, one claimRef'd to another claim, one ReadOnlyMany, one
 * Filesystem for a Block claim... - so n1 fails though best-fit would
 * choose it; of the two that match on n2 and n3 the pod goes where one
 * reaches, the smaller of n2's two chosen (FindMatchingVolume's smallest);
 * its spec.claimRef set to the claim (uid and all) with
 * pv.kubernetes.io/bound-by-controller by a patch conditioned on its
 * resourceVersion, no selected-node annotation, the pod bound once the
 * double's PV controller bound the claim. Fails without static binding
 * (the pod refused: "gpuplane does not bind claims to existing volumes"). */
static void test_static_bind(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    three_nodes(&v);
    lpv(&v, "n1-small", "5Gi", "n1");
    spv(&v, "n1-other", "fast", "50Gi", "[\"ReadWriteOnce\"]", "n1", NULL);
    spv(&v, "n1-rox", "local", "50Gi", "[\"ReadOnlyMany\"]", "n1", NULL);
    spv(&v, "n1-block", "local", "50Gi", "[\"ReadWriteOnce\"]", "n1", ",\"volumeMode\":\"Block\"");
    spv(&v, "n1-taken", "local", "50Gi", "[\"ReadWriteOnce\"]", "n1",
        ",\"claimRef\":{\"namespace\":\"default\",\"name\":\"someone-else\"}");
    lpv(&v, "n2-big", "100Gi", "n2");
    lpv(&v, "n2-fit", "20Gi", "n2");
    pvc(&v, "data", "local", NULL, NULL);
    cpod(&v, "a", "data");
    assert_int_equal(v_cycle(&v), 0); /* the volume's claimRef set, the claim to be bound */
    assert_string_equal(pv_at(&v, "n2-fit", "spec", "claimRef", "name"), "data");
    assert_string_equal(pv_at(&v, "n2-fit", "spec", "claimRef", "namespace"), "default");
    assert_string_equal(pv_at(&v, "n2-fit", "spec", "claimRef", "uid"),
                        claim_at(&v, "data", "metadata", NULL, "uid"));
    assert_string_equal(
        pv_at(&v, "n2-fit", "metadata", "annotations", "pv.kubernetes.io/bound-by-controller"),
        "yes");
    assert_string_equal(pv_at(&v, "n2-big", "spec", "claimRef", "name"), "");
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    assert_int_equal(v_cycles_until(&v, "a", 5), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n2");
    assert_string_equal(claim_at(&v, "data", "spec", NULL, "volumeName"), "n2-fit");
    assert_string_equal(
        claim_at(&v, "data", "metadata", "annotations", "volume.kubernetes.io/selected-node"), "");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_patches, 0);
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 0);
    /* a Block claim: n1-block alone matches it (volumeMode), so n1 */
    kd_call(v.w.admin, "POST", "/api/v1/namespaces/default/persistentvolumeclaims",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
            "\"raw\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"volumeMode\":\"Block\","
            "\"storageClassName\":\"local\",\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}}}",
            201);
    cpod(&v, "b", "raw");
    assert_int_equal(v_cycles_until(&v, "b", 5), 1);
    assert_string_equal(w_node_of(&v.w, "b", NULL), "n1");
    assert_string_equal(claim_at(&v, "raw", "spec", NULL, "volumeName"), "n1-block");
    w_check_distinct(&v.w);
    v_close(&v);
}

/* No volume matches and the class has no provisioner: no node passes, in
 * VolumeBinding's words; a matching volume made later (the PV event queues
 * the pod again) takes it there. Fails without static binding (refused in
 * gpuplane's words, and not placed once the volume comes). */
static void test_static_none_then_one(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    three_nodes(&v);
    pvc(&v, "data", "local", NULL, NULL);
    cpod(&v, "a", "data");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(why(&v, "a"),
                        "0/3 nodes are available: 3 node(s) didn't find available persistent "
                        "volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is "
                        "not helpful for scheduling..");
    lpv(&v, "n3-disk", "10Gi", "n3");
    assert_int_equal(v_cycles_until(&v, "a", 5), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n3");
    assert_string_equal(claim_at(&v, "data", "spec", NULL, "volumeName"), "n3-disk");
    v_close(&v);
}

/* A class with a provisioner and allowedTopologies (zone a) that also has
 * a local volume on n1 (zone b): n1 passes by its volume, n2 (zone a) by
 * provisioning, n3 (zone c, the tightest) neither. The first pod takes n1's
 * volume (no annotation); the second pod's claim finds it claimed, so it is
 * provisioned on n2 (selected-node n2), as checkVolumeProvisions falls
 * back when findMatchingVolumes finds none. Fails without static binding
 * (both refused: the class has an Available volume). */
static void test_static_or_provision(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "mixed", "ebs.csi.aws.com",
        "[{\"matchLabelExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"values\":"
        "[\"a\"]}]}]");
    lnode(&v, "n1", 2, "\"kubernetes.io/hostname\":\"n1\",\"topology.kubernetes.io/zone\":\"b\"");
    lnode(&v, "n2", 4, "\"kubernetes.io/hostname\":\"n2\",\"topology.kubernetes.io/zone\":\"a\"");
    lnode(&v, "n3", 1, "\"kubernetes.io/hostname\":\"n3\",\"topology.kubernetes.io/zone\":\"c\"");
    spv(&v, "n1-disk", "mixed", "10Gi", "[\"ReadWriteOnce\"]", "n1", NULL);
    pvc(&v, "first", "mixed", NULL, NULL);
    cpod(&v, "a", "first");
    assert_int_equal(v_cycles_until(&v, "a", 5), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n1");
    assert_string_equal(claim_at(&v, "first", "spec", NULL, "volumeName"), "n1-disk");
    assert_string_equal(
        claim_at(&v, "first", "metadata", "annotations", "volume.kubernetes.io/selected-node"), "");
    pvc(&v, "second", "mixed", NULL, NULL);
    cpod(&v, "b", "second");
    assert_int_equal(v_cycles_until(&v, "b", 5), 1);
    assert_string_equal(w_node_of(&v.w, "b", NULL), "n2");
    assert_string_equal(
        claim_at(&v, "second", "metadata", "annotations", "volume.kubernetes.io/selected-node"),
        "n2");
    assert_string_not_equal(claim_at(&v, "second", "spec", NULL, "volumeName"), "n1-disk");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_patches, 1);
    v_close(&v);
}

/* The PV controller slow (the double's off): past bindTimeoutSeconds the
 * decision is taken back in kube-scheduler's words; the volume keeps its
 * claimRef (upstream's revertAssumedPVs restores only its cache), so the
 * retried pod goes where that volume is (FindMatchingVolume's pre-bound
 * volume first, though one on n2 now matches too) and binds once
 * the controller is back. The claimRef reset meanwhile (unbindVolume) fails
 * the wait at once. Fails without static binding. */
static void test_static_timeout(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    three_nodes(&v);
    lpv(&v, "n3-disk", "10Gi", "n3");
    pvc(&v, "data", "local", NULL, NULL);
    cpod(&v, "a", "data");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(pv_at(&v, "n3-disk", "spec", "claimRef", "name"), "data");
    v.w.now += 601;
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"),
                        "running PreBind plugin \"VolumeBinding\": binding volumes: timed out "
                        "waiting for the condition");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 1);
    assert_string_equal(pv_at(&v, "n3-disk", "spec", "claimRef", "name"), "data");
    /* another volume, on n2, now: the claimRef'd one is still the claim's */
    lpv(&v, "n2-disk", "10Gi", "n2");
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":0}", 200);
    kd_call(v.w.admin, "PATCH", "/api/v1/persistentvolumes/n3-disk",
            "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    assert_int_equal(v_cycles_until(&v, "a", 8), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n3");
    assert_string_equal(claim_at(&v, "data", "spec", NULL, "volumeName"), "n3-disk");
    assert_string_equal(pv_at(&v, "n2-disk", "spec", "claimRef", "name"), "");
    /* the claimRef taken off while the pod waits: taken back at once */
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    pvc(&v, "other", "local", NULL, NULL);
    cpod(&v, "b", "other");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(pv_at(&v, "n2-disk", "spec", "claimRef", "name"), "other");
    kd_call(v.w.admin, "PATCH", "/api/v1/persistentvolumes/n2-disk",
            "{\"spec\":{\"claimRef\":null}}", 200);
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_events(&v.w, "FailedScheduling", "b"),
                        "running PreBind plugin \"VolumeBinding\": binding volumes: ClaimRef got "
                        "reset for pv \"n2-disk\"");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 2);
    v_close(&v);
}

/* The volume changed after the informer's view (a label added, not yet
 * seen): the claimRef patch, conditioned on the version seen, is refused
 * with 409 and the decision taken back in the API server's words; nothing
 * written to the volume. Fails when the patch is sent without the
 * precondition (the claimRef set on a volume the scheduler never saw). */
static void test_static_conflict(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    three_nodes(&v);
    lpv(&v, "n3-disk", "10Gi", "n3");
    pvc(&v, "data", "local", NULL, NULL);
    cpod(&v, "a", "data");
    v_sync(&v);
    kd_call(v.w.admin, "PATCH", "/api/v1/persistentvolumes/n3-disk",
            "{\"metadata\":{\"labels\":{\"changed\":\"yes\"}}}", 200);
    assert_int_equal(w_cycle(&v.w), 0); /* (the volumes' informers not synced) */
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"),
                        "running PreBind plugin \"VolumeBinding\": Operation cannot be fulfilled "
                        "on persistentvolumes \"n3-disk\": the object has been modified; please "
                        "apply your changes to the latest version and try again");
    assert_string_equal(pv_at(&v, "n3-disk", "spec", "claimRef", "name"), "");
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    v_close(&v);
}

/* Two pods, each with its own claim, and one volume that either could
 * take: the first decided takes it; the second, decided in the same cycle
 * for the same node before the informer shows the claimRef, finds the
 * volume assumed for the other (binder.go's assume cache) and is taken
 * back, never claimRef'ing the volume a second time; once the informer
 * shows the volume claimed, no node passes for it. */
static void test_static_one_volume_two_pods(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    lnode(&v, "n1", 4, "\"kubernetes.io/hostname\":\"n1\"");
    lpv(&v, "n1-disk", "10Gi", "n1");
    pvc(&v, "one", "local", NULL, NULL);
    pvc(&v, "two", "local", NULL, NULL);
    cpod(&v, "a", "one");
    cpod(&v, "b", "two");
    assert_int_equal(v_cycle(&v), 0);
    const char *ref = pv_at(&v, "n1-disk", "spec", "claimRef", "name");
    assert_true(strcmp(ref, "one") == 0 || strcmp(ref, "two") == 0);
    char winner[8];
    snprintf(winner, sizeof winner, "%s", strcmp(ref, "one") == 0 ? "a" : "b");
    const char *loser = winner[0] == 'a' ? "b" : "a";
    char want[300];
    snprintf(want, sizeof want,
             "running PreBind plugin \"VolumeBinding\": binding volumes: pvc \"%s\": no "
             "available persistent volume reaches node \"n1\" and none can be provisioned there",
             loser[0] == 'a' ? "one" : "two");
    assert_string_equal(w_events(&v.w, "FailedScheduling", loser), want);
    assert_int_equal(v_cycles_until(&v, winner, 5), 1);
    assert_string_equal(w_node_of(&v.w, winner, NULL), "n1");
    assert_string_equal(w_node_of(&v.w, loser, NULL), "");
    v_close(&v);
}

/* A decision waiting for a blocked node (another scheduler's pod that
 * the kubelet never admits holds n1's slot) after its claim was bound to
 * n1's local volume: the move (sched_unblock.c) reads the claim as it is
 * now, bound to a volume only n1 reaches, so the pod stays decided for
 * n1 (a Warning Event says so) and is not bound to n2. Fails with the
 * conditions read when the pod was (a volume on n1 or n2 would do): the
 * pod moved to n2 and bound there, away from its volume. */
static void test_static_moved_stays(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    lnode(&v, "n1", 4, "\"kubernetes.io/hostname\":\"n1\"");
    lnode(&v, "n2", 8, "\"kubernetes.io/hostname\":\"n2\"");
    lpv(&v, "n1-disk", "10Gi", "n1");
    lpv(&v, "n2-disk", "100Gi", "n2");
    w_pod_full(&v.w, "f1", 1, 0, "default-scheduler", NULL);
    kd_call(v.w.admin, "POST", "/api/v1/namespaces/default/pods/f1/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"f1\"},"
            "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
            201);
    pvc(&v, "data", "local", NULL, NULL);
    cpod(&v, "a", "data");
    for (int i = 0; i < 5 && gp_kube_sched_stats(v.w.s).slot_waiting == 0; i++) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
        assert_int_equal(v_cycle(&v), 0);
    }
    assert_int_equal(gp_kube_sched_stats(v.w.s).slot_waiting, 1); /* bound claim, waiting */
    assert_string_equal(claim_at(&v, "data", "spec", NULL, "volumeName"), "n1-disk");
    v.w.now += 125; /* n1 blocked */
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    assert_non_null(strstr(w_events(&v.w, "AllocatingSlotBlocked", "a"),
                           "no other node fits the pod now: it stays decided for n1"));
    assert_string_equal(pv_at(&v, "n2-disk", "spec", "claimRef", "name"), "");
    v_close(&v);
}

/* Two pods of one claim decided in the same cycle: the second shares the
 * volume the first chose for the claim (upstream's assume cache shows it
 * claimRef'd to that claim) instead of finding it taken, and both are
 * bound once the claim is. Fails when the second pod looks for a volume
 * of its own (its PreBind fails: "no available persistent volume reaches
 * node"). */
static void test_static_shared_claim(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    lnode(&v, "n1", 4, "\"kubernetes.io/hostname\":\"n1\"");
    lpv(&v, "n1-disk", "10Gi", "n1");
    pvc(&v, "data", "local", NULL, NULL);
    cpod(&v, "a", "data");
    cpod(&v, "b", "data");
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(pv_at(&v, "n1-disk", "spec", "claimRef", "name"), "data");
    assert_string_equal(w_events(&v.w, "FailedScheduling", "a"), "");
    assert_string_equal(w_events(&v.w, "FailedScheduling", "b"), "");
    for (int i = 0; i < 5 && (strcmp(w_node_of(&v.w, "a", NULL), "") == 0 ||
                              strcmp(w_node_of(&v.w, "b", NULL), "") == 0);
         i++) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
        v_cycle(&v);
    }
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n1");
    assert_string_equal(w_node_of(&v.w, "b", NULL), "n1");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 0);
    v_close(&v);
}

/* A claim of size `size` of class "local" (raw: pvc() asks 10Gi). */
static void spvc(struct vworld *v, const char *name, const char *size)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
             "\"%s\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":"
             "\"local\",\"resources\":{\"requests\":{\"storage\":\"%s\"}}}}",
             name, size);
    kd_call(v->w.admin, "POST", "/api/v1/namespaces/default/persistentvolumeclaims", b, 201);
}

/* Two claims of one pod, of a class without a provisioner, and one volume
 * (n1's) that either would match: whatever node the pod is decided for,
 * PreBind plans both claims before writing (findMatchingVolumes'
 * chosenPVs), the second finds nothing, so n1-a keeps no claimRef (a
 * claimRef once patched is the PV controller's to bind) and no claim is
 * bound; the pod stays pending. Fails without the plan (n1-a claimRef'd
 * to d1, then the decision taken back with the volume gone for good). */
static void test_static_two_claims_one_volume(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    three_nodes(&v);
    lpv(&v, "n1-a", "20Gi", "n1");
    pvc(&v, "d1", "local", NULL, NULL);
    pvc(&v, "d2", "local", NULL, NULL);
    vpod(&v, "a",
         "{\"name\":\"x\",\"persistentVolumeClaim\":{\"claimName\":\"d1\"}},"
         "{\"name\":\"y\",\"persistentVolumeClaim\":{\"claimName\":\"d2\"}}");
    assert_int_equal(v_cycles_until(&v, "a", 4), 0);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "");
    assert_string_equal(pv_at(&v, "n1-a", "spec", "claimRef", "name"), "");
    assert_string_equal(claim_at(&v, "d1", "spec", NULL, "volumeName"), "");
    assert_string_equal(claim_at(&v, "d2", "spec", NULL, "volumeName"), "");
    v_close(&v);
}

/* findMatchingVolumes sorts the pod's claims by requested size (byPVCSize,
 * smallest first): the pod names the 20Gi claim before the 10Gi one, and
 * n2 has volumes of 20Gi and 30Gi; the 10Gi claim takes the 20Gi volume
 * (FindMatchingVolume's smallest), the 20Gi claim the 30Gi one. Fails
 * with the claims matched in the pod's order (the 20Gi claim takes the
 * 20Gi volume, the 10Gi claim the 30Gi one). */
static void test_static_smallest_first(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    three_nodes(&v);
    lpv(&v, "n2-20", "20Gi", "n2");
    lpv(&v, "n2-30", "30Gi", "n2");
    spvc(&v, "big", "20Gi");
    spvc(&v, "small", "10Gi");
    vpod(&v, "a",
         "{\"name\":\"x\",\"persistentVolumeClaim\":{\"claimName\":\"big\"}},"
         "{\"name\":\"y\",\"persistentVolumeClaim\":{\"claimName\":\"small\"}}");
    assert_int_equal(v_cycles_until(&v, "a", 6), 1);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n2");
    assert_string_equal(claim_at(&v, "small", "spec", NULL, "volumeName"), "n2-20");
    assert_string_equal(claim_at(&v, "big", "spec", NULL, "volumeName"), "n2-30");
    v_close(&v);
}

/* Two claims of one pod, of a class without a provisioner: n1 (best-fit's
 * choice) has one matching volume, n2 two. Upstream's findMatchingVolumes
 * matches the claims together (chosenPVs): n1 fails, the pod goes to n2,
 * n1-a keeping no claimRef. Fails with a condition per claim (n1 passes,
 * its PreBind plan refuses it: the pod never placed). */
static void test_static_two_claims(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    three_nodes(&v);
    lpv(&v, "n1-a", "20Gi", "n1");
    lpv(&v, "n2-a", "20Gi", "n2");
    lpv(&v, "n2-b", "20Gi", "n2");
    pvc(&v, "d1", "local", NULL, NULL);
    pvc(&v, "d2", "local", NULL, NULL);
    vpod(&v, "a",
         "{\"name\":\"x\",\"persistentVolumeClaim\":{\"claimName\":\"d1\"}},"
         "{\"name\":\"y\",\"persistentVolumeClaim\":{\"claimName\":\"d2\"}}");
    v_cycles_until(&v, "a", 6);
    assert_string_equal(w_node_of(&v.w, "a", NULL), "n2");
    assert_string_equal(pv_at(&v, "n1-a", "spec", "claimRef", "name"), "");
    assert_string_equal(claim_at(&v, "d1", "spec", NULL, "volumeName"), "n2-a");
    assert_string_equal(claim_at(&v, "d2", "spec", NULL, "volumeName"), "n2-b");
    v_close(&v);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_static_bind, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_none_then_one, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_or_provision, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_timeout, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_conflict, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_one_volume_two_pods, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_moved_stays, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_shared_claim, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_two_claims_one_volume, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_smallest_first, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_static_two_claims, kd_start, kd_stop),
    };
    if (gp_shared_mode(argc, argv)) {
        if (!gp_shared_have(SCHEMAS "/api__v1_openapi.json"))
            return GP_SHARED_SKIP_EXIT;
        kd_schemas = SCHEMAS;
        return gp_shared_exit(cmocka_run_group_tests_name("schemas", tests, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
