/* test_kube_volumes_limits.c - CSI volume limits (src/kube/volumes_limits.c,
 * src/engine/csi.c; docs/kube.md "CSI volume limits"), as kube-scheduler's
 * NodeVolumeLimits counts them (nodevolumelimits/csi.go Filter,
 * filterAttachableVolumes, getCSIDriverInfo(FromSC), getVolumeLimits;
 * v1.28), against the API server double: each node's CSINode
 * spec.drivers[].allocatable.count limits the CSI volumes of that driver
 * the pods on it hold, whoever scheduled them, each volume once. Run with
 * "shared" the double checks every object against the published schemas. */
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

#define SCHEMAS     GP_SHARED_DIR "/k8s/schemas"
#define PD          "pd.csi.storage.gke.io"
#define LIMIT_WORDS "node(s) exceed max volume count"

/* The volumes' world with a CSINode informer of its own. */
struct lworld {
    struct vworld v;
    struct gp_kube_informer *csinodes;
};

static void l_open(struct lworld *l)
{
    v_open(&l->v);
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(l->v.ic, "/apis/storage.k8s.io/v1/csinodes", 0,
                                          gp_kube_sched_csinode_change, l->v.w.s, &l->csinodes, &d),
                     GP_OK);
}

static void l_close(struct lworld *l)
{
    gp_kube_informer_free(l->csinodes);
    v_close(&l->v);
}

/* The CSINodes synced, then the volumes' informers and one cycle: the pods bound. */
static size_t l_cycle(struct lworld *l)
{
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_list(l->csinodes, &d), GP_OK);
    return v_cycle(&l->v);
}

/* Node `node`'s CSINode: drivers, a JSON array's members (made, or
 * replaced when `replace`). */
static void csinode(struct lworld *l, const char *node, const char *drivers, bool replace)
{
    char b[2048], path[200];
    snprintf(path, sizeof path, "/apis/storage.k8s.io/v1/csinodes/%s", node);
    if (replace)
        kd_call(l->v.w.admin, "DELETE", path, NULL, 200);
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSINode\",\"metadata\":{\"name\":"
             "\"%s\"},\"spec\":{\"drivers\":[%s]}}",
             node, drivers);
    kd_call(l->v.w.admin, "POST", "/apis/storage.k8s.io/v1/csinodes", b, 201);
}

/* A driver of CSINode node with a count (negative: no allocatable). */
static const char *drv(const char *name, const char *node, int count)
{
    static char out[4][256];
    static int k;
    char *o = out[k++ % 4];
    if (count < 0)
        snprintf(o, 256, "{\"name\":\"%s\",\"nodeID\":\"%s\"}", name, node);
    else
        snprintf(o, 256, "{\"name\":\"%s\",\"nodeID\":\"%s\",\"allocatable\":{\"count\":%d}}", name,
                 node, count);
    return o;
}

/* A pod of scheduler `sched` asking one GPU, naming claim `claim`. */
static void spod(struct lworld *l, const char *name, const char *sched, const char *claim)
{
    char b[1536];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"%s\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
             "{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"1\"},\"limits\":"
             "{\"nvidia.com/gpu\":\"1\"}}}],\"volumes\":[{\"name\":\"data\","
             "\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}]}}",
             name, sched, claim);
    kd_call(l->v.w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* A bound claim cN on volume pvN (driver PD, handle pvN), for N in [from, to]. */
static void claims(struct lworld *l, int from, int to)
{
    for (int i = from; i <= to; i++) {
        char c[16], p[16];
        snprintf(c, sizeof c, "c%d", i);
        snprintf(p, sizeof p, "pv%d", i);
        pv(&l->v, p, NULL, NULL);
        pvc(&l->v, c, "standard", p, NULL);
    }
}

/* One node, its CSINode allowing 2 PD volumes (and a driver of no count,
 * which limits nothing): another scheduler's pod holds pv1, ours takes
 * pv2; a pod of a third volume is refused in NodeVolumeLimits' words
 * (Unschedulable: preemption tried, no victim of a lower priority); a
 * pod naming pv1's claim goes (one volume, counted once). The CSINode
 * raised to 3: the refused pod goes. The CSINode deleted: no limit. */
static void test_limit(void **state)
{
    (void)state;
    struct lworld l;
    l_open(&l);
    sc(&l.v, "standard", NULL);
    w_node(&l.v.w, "n1", 8);
    csinode(&l, "n1", drv(PD, "n1", 2), false);
    char two[600];
    snprintf(two, sizeof two, "%s,%s", drv(PD, "n1", 2), drv("ebs.csi.aws.com", "n1", -1));
    csinode(&l, "n1", two, true);
    claims(&l, 1, 5);
    spod(&l, "other", "other-scheduler", "c1");
    w_bind(&l.v.w, "other", "n1");
    spod(&l, "a", "gpuplane", "c2");
    assert_int_equal(l_cycle(&l), 1);
    spod(&l, "b", "gpuplane", "c3");
    assert_int_equal(l_cycle(&l), 0);
    assert_string_equal(why(&l.v, "b"), "0/1 nodes are available: 1 " LIMIT_WORDS
                                        ". preemption: 0/1 nodes are available: 1 No preemption "
                                        "victims found for incoming pod..");
    spod(&l, "shared", "gpuplane", "c1");
    assert_int_equal(l_cycle(&l), 1);
    assert_string_equal(w_node_of(&l.v.w, "shared", NULL), "n1");
    assert_string_equal(w_node_of(&l.v.w, "b", NULL), "");
    /* the limit raised: b goes */
    csinode(&l, "n1", drv(PD, "n1", 3), true);
    assert_int_equal(l_cycle(&l), 1);
    assert_string_equal(w_node_of(&l.v.w, "b", NULL), "n1");
    spod(&l, "c", "gpuplane", "c4");
    assert_int_equal(l_cycle(&l), 0);
    assert_string_equal(w_node_of(&l.v.w, "c", NULL), "");
    /* no CSINode: no limit */
    kd_call(l.v.w.admin, "DELETE", "/apis/storage.k8s.io/v1/csinodes/n1", NULL, 200);
    assert_int_equal(l_cycle(&l), 1);
    assert_string_equal(w_node_of(&l.v.w, "c", NULL), "n1");
    l_close(&l);
}

/* Two nodes: n1 would be chosen (the tighter) but holds its one PD volume
 * already; our pod goes to n2, whose CSINode limits another driver only.
 * A pod of no volume still goes to n1. */
static void test_limit_other_node(void **state)
{
    (void)state;
    struct lworld l;
    l_open(&l);
    sc(&l.v, "standard", NULL);
    w_node(&l.v.w, "n1", 2);
    w_node(&l.v.w, "n2", 8);
    csinode(&l, "n1", drv(PD, "n1", 1), false);
    csinode(&l, "n2", drv("ebs.csi.aws.com", "n2", 0), false);
    claims(&l, 1, 2);
    spod(&l, "other", "other-scheduler", "c1");
    w_bind(&l.v.w, "other", "n1");
    spod(&l, "a", "gpuplane", "c2");
    assert_int_equal(l_cycle(&l), 1);
    assert_string_equal(w_node_of(&l.v.w, "a", NULL), "n2");
    w_pod(&l.v.w, "plain", 1);
    assert_int_equal(l_cycle(&l), 1);
    assert_string_equal(w_node_of(&l.v.w, "plain", NULL), "n1");
    l_close(&l);
}

/* An unbound claim of a WaitForFirstConsumer class counts for its class's
 * provisioner as the driver (getCSIDriverInfoFromSC): both nodes hold
 * their one PD volume, so a pod whose claim's class provisions PD volumes
 * is refused on both (its claim not annotated for a node); one whose
 * class has another provisioner is annotated for a node. */
static void test_limit_unbound(void **state)
{
    (void)state;
    struct lworld l;
    l_open(&l);
    sc(&l.v, "standard", NULL);
    wsc(&l.v, "wait-pd", PD, NULL);
    wsc(&l.v, "wait-ebs", "ebs.csi.aws.com", NULL);
    w_node(&l.v.w, "n1", 4);
    w_node(&l.v.w, "n2", 4);
    csinode(&l, "n1", drv(PD, "n1", 1), false);
    csinode(&l, "n2", drv(PD, "n2", 1), false);
    claims(&l, 1, 2);
    spod(&l, "o1", "other-scheduler", "c1");
    w_bind(&l.v.w, "o1", "n1");
    spod(&l, "o2", "other-scheduler", "c2");
    w_bind(&l.v.w, "o2", "n2");
    pvc(&l.v, "w-pd", "wait-pd", NULL, NULL);
    pvc(&l.v, "w-ebs", "wait-ebs", NULL, NULL);
    spod(&l, "pd", "gpuplane", "w-pd");
    spod(&l, "ebs", "gpuplane", "w-ebs");
    l_cycle(&l);
    if (!strstr(why(&l.v, "pd"), "0/2 nodes are available: 2 " LIMIT_WORDS "."))
        fail_msg("pd: %s", why(&l.v, "pd"));
    assert_string_equal(
        claim_at(&l.v, "w-pd", "metadata", "annotations", "volume.kubernetes.io/selected-node"),
        "");
    assert_string_not_equal(
        claim_at(&l.v, "w-ebs", "metadata", "annotations", "volume.kubernetes.io/selected-node"),
        "");
    l_close(&l);
}

/* A pod of priority `prio` asking `gpus` GPUs, naming claim `claim`. */
static void prio_pod(struct lworld *l, const char *name, int prio, unsigned gpus, const char *claim)
{
    char b[1536];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priority\":%d,\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":"
             "\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
             "\"1Gi\",\"nvidia.com/gpu\":\"%u\"},\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}],"
             "\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}]}}",
             name, prio, gpus, gpus, claim);
    kd_call(l->v.w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* Preemption frees a volume slot (the filter is Unschedulable; upstream's
 * NodeInfo has the victim removed): a pod of priority 100 whose volume
 * would pass n1's limit of 1 evicts the priority-0 pod (of no GPU)
 * holding pv1 there, waits while the victim stops, and is bound on n1
 * once it is gone. */
static void test_limit_preempt(void **state)
{
    (void)state;
    struct lworld l;
    l_open(&l);
    sc(&l.v, "standard", NULL);
    w_node(&l.v.w, "n1", 4);
    csinode(&l, "n1", drv(PD, "n1", 1), false);
    claims(&l, 1, 2);
    prio_pod(&l, "low", 0, 0, "c1"); /* (no GPU: its volume alone is what it holds there) */
    assert_int_equal(l_cycle(&l), 1);
    prio_pod(&l, "high", 100, 1, "c2");
    assert_int_equal(l_cycle(&l), 0);
    json_t *o = w_pod_get(&l.v.w, "low");
    assert_non_null(json_object_get(json_object_get(o, "metadata"), "deletionTimestamp"));
    json_decref(o);
    assert_int_equal(l_cycle(&l), 0); /* the victim still stopping */
    assert_string_equal(w_node_of(&l.v.w, "high", NULL), "");
    kd_call(l.v.w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    for (int i = 0; i < 3 && !w_node_of(&l.v.w, "high", NULL)[0]; i++)
        l_cycle(&l);
    assert_string_equal(w_node_of(&l.v.w, "high", NULL), "n1");
    l_close(&l);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_limit, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_limit_other_node, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_limit_unbound, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_limit_preempt, kd_start, kd_stop),
    };
    if (gp_shared_mode(argc, argv)) {
        if (!gp_shared_have(SCHEMAS "/api__v1_openapi.json"))
            return GP_SHARED_SKIP_EXIT;
        kd_schemas = SCHEMAS;
        return gp_shared_exit(cmocka_run_group_tests_name("schemas", tests, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
