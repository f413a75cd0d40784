/* test_kube_volumes_gang.c - a gang's members with WaitForFirstConsumer
 * claims (src/kube/volumes_bind.c gang_hold; docs/kube.md
 * "WaitForFirstConsumer", "A gang's members"), against the API server
 * double, whose provisioner and PV controller provision and bind the
 * claims (tests/apidouble/provision.c):
 *  - every member's claims provisioned for its node before any member is
 *    written or bound, the members held meanwhile with their GPUs booked
 *    (a pod that only their GPUs would fit stays pending, the audit clean),
 *    with and without binder threads;
 *  - one member's claim patch refused, or its provisioning given up, or
 *    the gang's wait past bindTimeoutSeconds: every member's decision
 *    taken back, none bound, and the gang bound together once retried;
 *  - a member deleted while its gang waits: the others taken back;
 *  - static binding: two members' claims given two volumes of one node,
 *    the second member's choice passing over the first's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_vworld.h"
#include "kube_world.h"

#define SELECTED "volume.kubernetes.io/selected-node"

static void podgroup(struct vworld *v, const char *name, unsigned min)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"minMember\":%u}}",
             name, min);
    kd_call(v->w.admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
            b, 201);
}

/* A member of gang `group` asking one GPU, naming claim `claim` (NULL: none). */
static void gpod(struct vworld *v, const char *name, const char *group, const char *claim)
{
    char b[1024];
    snprintf(
        b, sizeof b,
        "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":"
        "\"%s\"}},\"spec\":{\"schedulerName\":\"gpuplane\",\"containers\":[{\"name\":\"c\","
        "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\","
        "\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1\"}}}],\"volumes\":[%s%s%s]}}",
        name, group, claim ? "{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"" : "",
        claim ? claim : "", claim ? "\"}}" : "");
    kd_call(v->w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* A claim written (a label), so that the double's provisioner looks at it again. */
static void touch(struct vworld *v, const char *claim)
{
    char path[200];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/persistentvolumeclaims/%s", claim);
    kd_call(v->w.admin, "PATCH", path, "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
}

/* Waits (at most 3 s) until the provisioner bound the claim. */
static void provisioned(struct vworld *v, const char *claim)
{
    for (int i = 0; i < 100 && !claim_at(v, claim, "spec", NULL, "volumeName")[0]; i++) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_string_not_equal(claim_at(v, claim, "spec", NULL, "volumeName"), "");
}

/* Two nodes of one GPU, a WaitForFirstConsumer class, gang "train" of two
 * members w0 and w1, each naming a claim of its own (w0-data, w1-data). */
static void gang_world(struct vworld *v)
{
    v_open(v);
    wsc(v, "gp3", "ebs.csi.aws.com", NULL);
    lnode(v, "n1", 1, "\"topology.kubernetes.io/zone\":\"a\"");
    lnode(v, "n2", 1, "\"topology.kubernetes.io/zone\":\"b\"");
    podgroup(v, "train", 2);
    pvc(v, "w0-data", "gp3", NULL, NULL);
    pvc(v, "w1-data", "gp3", NULL, NULL);
    gpod(v, "w0", "train", "w0-data");
    gpod(v, "w1", "train", "w1-data");
}

/* Neither member bound nor written (no gpuplane.io annotation). */
static void none_written(struct vworld *v)
{
    assert_string_equal(w_node_of(&v->w, "w0", NULL), "");
    assert_string_equal(w_node_of(&v->w, "w1", NULL), "");
    assert_string_equal(w_ann(&v->w, "w0", GP_KUBE_ANN_NODE), "");
    assert_string_equal(w_ann(&v->w, "w1", GP_KUBE_ANN_NODE), "");
}

/* Both members bound, on the two nodes, each where its claim was provisioned. */
static void both_bound(struct vworld *v)
{
    char n0[32], n1[32];
    snprintf(n0, sizeof n0, "%s", w_node_of(&v->w, "w0", NULL));
    snprintf(n1, sizeof n1, "%s", w_node_of(&v->w, "w1", NULL));
    assert_string_not_equal(n0, "");
    assert_string_not_equal(n1, "");
    assert_string_not_equal(n0, n1);
    assert_string_equal(claim_at(v, "w0-data", "metadata", "annotations", SELECTED), n0);
    assert_string_equal(claim_at(v, "w1-data", "metadata", "annotations", SELECTED), n1);
    w_check_distinct(&v->w);
}

/* The gang's claims both annotated for their members' nodes, nothing
 * written to either pod while one claim is provisioned and the other not
 * (a pod that only their GPUs would fit stays pending meanwhile: booked
 * once), both bound in one cycle once the second is. Fails without the
 * change: the members are refused ("gpuplane does not bind claims of a
 * gang's pods"), no claim annotated; and with the gang's job not held
 * (bind.c dispatching a gang as before), w0 is bound while w1's claim
 * waits. */
static void gang_wffc_bound(unsigned binders)
{
    struct vworld v;
    gang_world(&v);
    struct gp_kube_client *bc[2] = {NULL, NULL};
    for (unsigned i = 0; i < binders; i++)
        bc[i] = kd_client();
    struct gp_diag d = {""};
    if (binders)
        assert_int_equal(gp_kube_sched_start_binders(v.w.s, bc, binders, NULL, NULL, &d), GP_OK);
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    assert_int_equal(v_cycle(&v), 0);
    char s0[32], s1[32];
    snprintf(s0, sizeof s0, "%s", claim_at(&v, "w0-data", "metadata", "annotations", SELECTED));
    snprintf(s1, sizeof s1, "%s", claim_at(&v, "w1-data", "metadata", "annotations", SELECTED));
    assert_string_not_equal(s0, "");
    assert_string_not_equal(s1, "");
    assert_string_not_equal(s0, s1);
    none_written(&v);
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_patches, 2);
    /* a pod of one GPU: the members' GPUs are booked while they wait */
    w_pod(&v.w, "other", 1);
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_node_of(&v.w, "other", NULL), "");
    /* w0's claim provisioned, w1's not yet: neither written */
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":0}", 200);
    touch(&v, "w0-data");
    provisioned(&v, "w0-data");
    for (int i = 0; i < 3; i++)
        assert_int_equal(v_cycle(&v), 0);
    none_written(&v);
    assert_string_equal(claim_at(&v, "w1-data", "spec", NULL, "volumeName"), "");
    /* w1's provisioned: both bound together */
    touch(&v, "w1-data");
    size_t n = 0;
    for (int i = 0; i < 8 && !w_node_of(&v.w, "w1", NULL)[0]; i++) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
        size_t more = 0;
        n += v_cycle(&v);
        gp_kube_sched_wait_binds(v.w.s, &more); /* (with binders: their results) */
        n += more;
        w_sync(&v.w);
    }
    assert_int_equal(n, 2);
    both_bound(&v);
    assert_string_equal(w_node_of(&v.w, "other", NULL), "");
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 0);
    assert_int_equal(gp_kube_sched_stats(v.w.s).rollbacks, 0);
    assert_string_equal(w_events(&v.w, "FailedScheduling", "w0"), "");
    if (binders)
        gp_kube_sched_stop_binders(v.w.s);
    v_close(&v);
    for (unsigned i = 0; i < binders; i++)
        gp_kube_client_free(bc[i]);
}

static void test_gang_wffc_bound(void **state)
{
    (void)state;
    gang_wffc_bound(0);
}

/* The same with binder threads: the gang's job handed to them once held no more. */
static void test_gang_wffc_bound_binders(void **state)
{
    (void)state;
    gang_wffc_bound(2);
}

/* Whether the two members' FailedScheduling Events are one member's
 * PreBind words `words` and the other's the gang's take-back. */
static void gang_taken_back(struct vworld *v, const char *words)
{
    char e0[4096], e1[4096];
    snprintf(e0, sizeof e0, "%s", w_events(&v->w, "FailedScheduling", "w0"));
    snprintf(e1, sizeof e1, "%s", w_events(&v->w, "FailedScheduling", "w1"));
    const char *pre = strstr(e0, words) ? e0 : e1, *other = pre == e0 ? e1 : e0;
    assert_non_null(strstr(pre, words));
    assert_non_null(strstr(other, "failed its PreBind (\"VolumeBinding\": "));
    assert_non_null(strstr(other, "every member's decision taken back, none bound; gang "
                                  "default/train: 0 of its 1 other members bound"));
}

/* One member's claim patch refused (422): both members taken back,
 * neither written nor bound, and once retried (the back-off past) both
 * bound. Fails without the change (refused at the filter: no claim
 * annotated, no PreBind Event), and when a failure takes back only the
 * member that failed (w0 bound once its claim is provisioned). */
static void test_gang_wffc_refused(void **state)
{
    (void)state;
    struct vworld v;
    gang_world(&v);
    kd_call(v.w.admin, "POST", "/_control/fault",
            "{\"status\":422,\"count\":1,\"match\":\"/persistentvolumeclaims/w1-data\"}", 200);
    assert_int_equal(v_cycle(&v), 0);
    gang_taken_back(&v, "running PreBind plugin \"VolumeBinding\": updating "
                        "persistentvolumeclaim \"w1-data\": status 422");
    none_written(&v);
    assert_int_equal(gp_kube_sched_stats(v.w.s).rollbacks, 2);
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 2);
    /* w0's claim, annotated before w1's was refused, keeps its annotation
     * (as upstream: the provisioner provisions it); nothing is bound in
     * the back-off */
    assert_string_not_equal(claim_at(&v, "w0-data", "metadata", "annotations", SELECTED), "");
    provisioned(&v, "w0-data");
    assert_int_equal(v_cycle(&v), 0);
    none_written(&v);
    v.w.now += 2; /* past the back-off */
    assert_int_equal(v_cycles_until(&v, "w1", 8), 2);
    both_bound(&v);
    v_close(&v);
}

/* The provisioner gives up on one member's claim (its annotation taken
 * off, rescheduleProvisioning): both taken back at once; and the gang's
 * wait past bindTimeoutSeconds: both taken back, then bound once the
 * provisioner works again. */
static void test_gang_wffc_given_up_and_timeout(void **state)
{
    (void)state;
    struct vworld v;
    gang_world(&v);
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    assert_int_equal(v_cycle(&v), 0);
    assert_string_not_equal(claim_at(&v, "w1-data", "metadata", "annotations", SELECTED), "");
    kd_call(v.w.admin, "PATCH", "/api/v1/namespaces/default/persistentvolumeclaims/w1-data",
            "{\"metadata\":{\"annotations\":{\"" SELECTED "\":null}}}", 200);
    assert_int_equal(v_cycle(&v), 0);
    gang_taken_back(&v, "running PreBind plugin \"VolumeBinding\": binding volumes: provisioning "
                        "failed for PVC \"w1-data\"");
    none_written(&v);
    assert_int_equal(gp_kube_sched_stats(v.w.s).rollbacks, 2);
    /* retried: held again (w1's claim annotated anew), then past 600 s */
    v.w.now += 2;
    assert_int_equal(v_cycle(&v), 0);
    assert_string_not_equal(claim_at(&v, "w1-data", "metadata", "annotations", SELECTED), "");
    assert_int_equal(gp_kube_sched_stats(v.w.s).rollbacks, 2);
    v.w.now += 300;
    assert_int_equal(v_cycle(&v), 0);
    assert_int_equal(gp_kube_sched_stats(v.w.s).rollbacks, 2);
    v.w.now += 301;
    assert_int_equal(v_cycle(&v), 0);
    none_written(&v);
    assert_int_equal(gp_kube_sched_stats(v.w.s).rollbacks, 4);
    char e[8192];
    snprintf(e, sizeof e, "%s|%s", w_events(&v.w, "FailedScheduling", "w0"),
             w_events(&v.w, "FailedScheduling", "w1"));
    assert_non_null(strstr(e, "running PreBind plugin \"VolumeBinding\": binding volumes: timed "
                              "out waiting for the condition"));
    /* the provisioner back: both bound after the back-off */
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":0}", 200);
    touch(&v, "w0-data");
    touch(&v, "w1-data");
    provisioned(&v, "w0-data");
    provisioned(&v, "w1-data");
    v.w.now += 5;
    assert_int_equal(v_cycles_until(&v, "w1", 8), 2);
    both_bound(&v);
    v_close(&v);
}

/* A member without claims waits with its gang for the other's claim, and
 * a member deleted while the gang waits takes the other back: the gang is
 * never bound short of a member. */
static void test_gang_wffc_member_gone(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "gp3", "ebs.csi.aws.com", NULL);
    lnode(&v, "n1", 1, NULL);
    lnode(&v, "n2", 1, NULL);
    podgroup(&v, "train", 2);
    pvc(&v, "w1-data", "gp3", NULL, NULL);
    gpod(&v, "w0", "train", NULL);
    gpod(&v, "w1", "train", "w1-data");
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    assert_int_equal(v_cycle(&v), 0);
    none_written(&v);
    assert_string_not_equal(claim_at(&v, "w1-data", "metadata", "annotations", SELECTED), "");
    kd_call(v.w.admin, "DELETE", "/api/v1/namespaces/default/pods/w1?gracePeriodSeconds=0", NULL,
            200);
    assert_int_equal(v_cycle(&v), 0);
    assert_string_equal(w_node_of(&v.w, "w0", NULL), "");
    assert_string_equal(w_ann(&v.w, "w0", GP_KUBE_ANN_NODE), "");
    assert_non_null(strstr(w_events(&v.w, "FailedScheduling", "w0"),
                           "a member of its gang left while the gang's claims were provisioned"));
    assert_int_equal(gp_kube_sched_stats(v.w.s).rollbacks, 1);
    v_close(&v);
}

/* A local volume of class "local" (no provisioner) on node n1, made
 * Available as the PV controller makes an unclaimed volume. */
static void local_pv(struct vworld *v, const char *name, const char *size)
{
    char b[1024], path[200];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"capacity\":{\"storage\":\"%s\"},\"accessModes\":[\"ReadWriteOnce\"],"
             "\"storageClassName\":\"local\",\"local\":{\"path\":\"/mnt/%s\"},\"nodeAffinity\":"
             "{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
             "\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}}}}",
             name, size, name);
    kd_call(v->w.admin, "POST", "/api/v1/persistentvolumes", b, 201);
    snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s/status", name);
    kd_call(v->w.admin, "PATCH", path, "{\"status\":{\"phase\":\"Available\"}}", 200);
}

/* Static binding for a gang: both members on n1, its two local volumes,
 * each member's claim claimRef'd to a volume of its own (the second
 * member's choice passing over the first's: binder.go's assume cache)
 * before either pod is written, both bound once the PV controller bound
 * the claims. Fails without the change (the members refused at the
 * filter), and when the members' choices do not see each other (both
 * claims given local-a, the second taken back). */
static void test_gang_static(void **state)
{
    (void)state;
    struct vworld v;
    v_open(&v);
    wsc(&v, "local", "kubernetes.io/no-provisioner", NULL);
    lnode(&v, "n1", 2, "\"kubernetes.io/hostname\":\"n1\"");
    local_pv(&v, "local-a", "10Gi");
    local_pv(&v, "local-b", "20Gi");
    podgroup(&v, "train", 2);
    pvc(&v, "w0-data", "local", NULL, NULL);
    pvc(&v, "w1-data", "local", NULL, NULL);
    gpod(&v, "w0", "train", "w0-data");
    gpod(&v, "w1", "train", "w1-data");
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":-1}", 200);
    assert_int_equal(v_cycle(&v), 0);
    none_written(&v);
    json_t *a = get(&v, "/api/v1/persistentvolumes/local-a");
    json_t *b = get(&v, "/api/v1/persistentvolumes/local-b");
    const char *ca = json_string_value(
        json_object_get(json_object_get(json_object_get(a, "spec"), "claimRef"), "name"));
    const char *cb = json_string_value(
        json_object_get(json_object_get(json_object_get(b, "spec"), "claimRef"), "name"));
    assert_non_null(ca);
    assert_non_null(cb);
    assert_string_not_equal(ca, cb);
    json_decref(a);
    json_decref(b);
    /* the PV controller on (the volumes written again: its resync) */
    kd_call(v.w.admin, "POST", "/_control/provisioner", "{\"ms\":0}", 200);
    kd_call(v.w.admin, "PATCH", "/api/v1/persistentvolumes/local-a",
            "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    kd_call(v.w.admin, "PATCH", "/api/v1/persistentvolumes/local-b",
            "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    provisioned(&v, "w0-data");
    provisioned(&v, "w1-data");
    v_cycles_until(&v, "w0", 6);
    v_cycles_until(&v, "w1", 6);
    assert_string_equal(w_node_of(&v.w, "w0", NULL), "n1");
    assert_string_equal(w_node_of(&v.w, "w1", NULL), "n1");
    char v0[64];
    snprintf(v0, sizeof v0, "%s", claim_at(&v, "w0-data", "spec", NULL, "volumeName"));
    assert_string_not_equal(v0, claim_at(&v, "w1-data", "spec", NULL, "volumeName"));
    assert_int_equal(gp_kube_sched_stats(v.w.s).claim_failures, 0);
    w_check_distinct(&v.w);
    v_close(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gang_wffc_bound, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_wffc_bound_binders, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_wffc_refused, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_wffc_given_up_and_timeout, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_wffc_member_gone, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_static, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
