/* test_kube_podinfo.c - a pod's info read alone (gp_kube_pod_info_read,
 * kube/objects.c), as the scheduler reads a pod the engine already holds:
 * every field gp_kube_pod_read gives, the same, whatever of the pod
 * changed (deletionTimestamp, nodeName, the phase, gpuplane's annotations,
 * the PodGroup label), and read whole even when the spec does not read (a
 * request that is not a quantity, a bad gpu-milli annotation); read again
 * for a new version (gp_kube_pod_info_reread), a spec or status shared
 * with the version before kept, any other read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/jload.h"
#include "kube/objects.h"

static void same_str(const char *a, const char *b)
{
    if (!a || !b)
        assert_true(a == b);
    else
        assert_string_equal(a, b);
}

/* info_read's info is pod_read's, field by field; returns the info. */
static struct gp_kube_pod_info both(const char *text, bool spec_reads)
{
    json_t *pod = gp_kube_jload(text, strlen(text), JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(pod);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_pod_spec spec;
    struct gp_kube_pod_info full, alone;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_pod_read(pod, &a, &spec, &full, &d) == GP_OK, spec_reads);
    gp_kube_pod_info_read(pod, &alone);
    same_str(full.ns, alone.ns);
    same_str(full.name, alone.name);
    same_str(full.uid, alone.uid);
    same_str(full.rv, alone.rv);
    same_str(full.node_name, alone.node_name);
    same_str(full.scheduler_name, alone.scheduler_name);
    assert_int_equal(full.terminating, alone.terminating);
    assert_int_equal(full.ended, alone.ended);
    assert_int_equal(full.started, alone.started);
    same_str(full.ann_node, alone.ann_node);
    assert_int_equal(full.has_pick, alone.has_pick);
    assert_memory_equal(&full.pick, &alone.pick, sizeof full.pick);
    same_str(full.ann_mig, alone.ann_mig);
    same_str(full.ann_phase, alone.ann_phase);
    same_str(full.group, alone.group);
    assert_int_equal(full.gated, alone.gated);
    gp_arena_free(&a);
    /* the strings borrow from pod: copy what the caller checks */
    static char node[64], phase[64], group[64];
    snprintf(node, sizeof node, "%s", alone.ann_node ? alone.ann_node : "-");
    snprintf(phase, sizeof phase, "%s", alone.ann_phase ? alone.ann_phase : "-");
    snprintf(group, sizeof group, "%s", alone.group ? alone.group : "-");
    alone.ann_node = node;
    alone.ann_phase = phase;
    alone.group = group;
    alone.ns = alone.name = alone.uid = alone.rv = alone.node_name = alone.scheduler_name = NULL;
    alone.ann_mig = NULL;
    json_decref(pod);
    return alone;
}

#define POD(META, SPEC, STATUS)                                                                    \
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u1\","                      \
    "\"resourceVersion\":\"7\"" META "},\"spec\":{\"schedulerName\":\"gpuplane\","                 \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\","                  \
    "\"nvidia.com/gpu\":\"1\"}}}]" SPEC "},\"status\":{" STATUS "}}"

static void test_each_change_read(void **state)
{
    (void)state;
    struct gp_kube_pod_info i = both(POD("", "", "\"phase\":\"Pending\""), true);
    assert_false(i.terminating);
    assert_false(i.ended);
    assert_false(i.started);
    assert_false(i.has_pick);
    assert_string_equal(i.ann_node, "-");
    i = both(POD(",\"deletionTimestamp\":\"2026-12-02T03:00:00Z\"", "", ""), true);
    assert_true(i.terminating);
    i = both(POD(",\"deletionTimestamp\":null", "", ""), true);
    assert_false(i.terminating);
    i = both(POD("", ",\"nodeName\":\"n2\"", "\"phase\":\"Running\""), true);
    assert_true(i.started);
    i = both(POD("", "", "\"phase\":\"Succeeded\""), true);
    assert_true(i.ended);
    i = both(POD("", "",
                 "\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"running\":{\"startedAt\":"
                 "\"2026-12-02T03:00:00Z\"}}}]"),
             true);
    assert_true(i.started);
    i = both(POD(",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"0,3\","
                 "\"gpuplane.io/phase\":\"allocated\"}",
                 "", ""),
             true);
    assert_string_equal(i.ann_node, "n1");
    assert_string_equal(i.ann_phase, "allocated");
    assert_true(i.has_pick);
    assert_int_equal(i.pick.ngpus, 2);
    assert_int_equal(i.pick.gpu[1], 3);
    i = both(POD(",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"g1\"}", "", ""), true);
    assert_string_equal(i.group, "g1");
    i = both(POD(",\"annotations\":{\"scheduling.k8s.io/group-name\":\"g2\"}", "", ""), true);
    assert_string_equal(i.group, "g2");
}

/* A spec that does not read leaves the info whole. */
static void test_unreadable_spec(void **state)
{
    (void)state;
    struct gp_kube_pod_info i =
        both(POD(",\"annotations\":{\"gpuplane.io/gpu-milli\":\"2000\",\"gpuplane.io/node\":"
                 "\"n1\",\"gpuplane.io/gpus\":\"1\",\"gpuplane.io/phase\":\"allocating\"}",
                 "", ""),
             false);
    assert_string_equal(i.ann_node, "n1");
    assert_string_equal(i.ann_phase, "allocating");
    assert_true(i.has_pick);
    const char *bad = "{\"metadata\":{\"name\":\"q\",\"annotations\":{\"gpuplane.io/node\":\"n3\"},"
                      "\"deletionTimestamp\":\"2026-12-02T03:00:00Z\"},\"spec\":{\"containers\":[{"
                      "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]}}";
    i = both(bad, false);
    assert_string_equal(i.ann_node, "n3");
    assert_true(i.terminating);
}

/* A pod with every member the pods informer leaves out
 * (gp_kube_pod_unread, objects_unread.c) and every one the readers read:
 * read from the tree with them left out, it is the same pod as read from
 * the whole tree (info, request, selectors, tolerations, labels, priority,
 * status.nominatedNodeName), and they are truly out. */
static const char rich_pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"generateName\":\"p-\","
    "\"namespace\":\"ml\",\"uid\":\"u1\",\"resourceVersion\":\"9\",\"creationTimestamp\":"
    "\"2026-12-02T03:00:00Z\",\"labels\":{\"app\":\"a\",\"scheduling.x-k8s.io/pod-group\":\"g\"},"
    "\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"0,1\","
    "\"gpuplane.io/phase\":\"allocated\",\"gpuplane.io/gpu-memory\":\"20Gi\","
    "\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"kind\\\":\\\"Pod\\\"}\"},"
    "\"managedFields\":[{\"manager\":\"kubectl\"}]},"
    "\"spec\":{\"schedulerName\":\"gpuplane\",\"nodeName\":\"n1\",\"priority\":7,"
    "\"priorityClassName\":\"high\",\"preemptionPolicy\":\"Never\","
    "\"nodeSelector\":{\"zone\":\"z1\"},\"overhead\":{\"cpu\":\"250m\",\"memory\":\"64Mi\"},"
    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\",\"effect\":"
    "\"NoSchedule\"},{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],"
    "\"initContainers\":[{\"name\":\"side\",\"image\":\"s\",\"restartPolicy\":\"Always\","
    "\"resources\":{\"requests\":{\"cpu\":\"500m\"}},\"imagePullPolicy\":\"Always\"}],"
    "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"command\":[\"run\"],\"args\":[\"-v\"],"
    "\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"ports\":[{\"containerPort\":80}],"
    "\"volumeMounts\":[{\"name\":\"tok\",\"mountPath\":\"/var/run\"}],\"livenessProbe\":{},"
    "\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"nvidia.com/gpu\":\"2\"},"
    "\"limits\":{\"nvidia.com/gpu\":\"2\"}},\"terminationMessagePath\":\"/dev/termination-log\"}],"
    "\"volumes\":[{\"name\":\"tok\",\"projected\":{\"sources\":[{\"serviceAccountToken\":{"
    "\"path\":\"token\"}}]}}],\"dnsPolicy\":\"ClusterFirst\",\"restartPolicy\":\"Always\","
    "\"serviceAccountName\":\"default\",\"securityContext\":{},\"hostname\":\"h\"},"
    "\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":\"n1\",\"qosClass\":\"Burstable\","
    "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"}],\"podIP\":\"10.0.0.1\","
    "\"containerStatuses\":[{\"name\":\"c\",\"image\":\"x\",\"ready\":false,\"restartCount\":0,"
    "\"state\":{\"running\":{\"startedAt\":\"2026-12-02T03:00:00Z\"}}}]}}";

static void test_unread_left_out(void **state)
{
    (void)state;
    size_t n = strlen(rich_pod);
    json_t *whole = gp_kube_jload(rich_pod, n, JSON_REJECT_DUPLICATES, NULL);
    json_t *lean =
        gp_kube_jload_skip(rich_pod, n, JSON_REJECT_DUPLICATES, NULL, &gp_kube_pod_unread);
    assert_non_null(whole);
    assert_non_null(lean);
    struct gp_arena a, b;
    gp_arena_init(&a);
    gp_arena_init(&b);
    struct gp_pod_spec sw, sl;
    struct gp_kube_pod_info iw, il;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_pod_read(whole, &a, &sw, &iw, &d), GP_OK);
    assert_int_equal(gp_kube_pod_read(lean, &b, &sl, &il, &d), GP_OK);
    same_str(iw.ns, il.ns);
    same_str(iw.name, il.name);
    same_str(iw.uid, il.uid);
    same_str(iw.rv, il.rv);
    same_str(iw.node_name, il.node_name);
    same_str(iw.scheduler_name, il.scheduler_name);
    same_str(iw.ann_node, il.ann_node);
    same_str(iw.ann_phase, il.ann_phase);
    same_str(iw.group, il.group);
    assert_int_equal(iw.started, il.started);
    assert_true(il.started); /* the container's state is kept */
    assert_int_equal(iw.has_pick, il.has_pick);
    assert_memory_equal(&iw.pick, &il.pick, sizeof iw.pick);
    assert_int_equal(sw.cpu_milli, sl.cpu_milli);
    assert_int_equal(sw.cpu_milli, 2750); /* 2, the sidecar's 500m and the overhead's 250m */
    assert_int_equal(sw.mem_mib, sl.mem_mib);
    assert_int_equal(sw.gpu_count, sl.gpu_count);
    assert_int_equal(sw.gpu_count, 2);
    assert_int_equal(sw.gpu_milli, sl.gpu_milli);
    assert_int_equal(sw.gpu_mem_mib, sl.gpu_mem_mib);
    assert_int_equal(sw.gpu_container_max, sl.gpu_container_max);
    assert_int_equal(sw.priority, sl.priority);
    assert_int_equal(sw.preempt_never, sl.preempt_never);
    assert_true(sl.preempt_never);
    assert_int_equal(sw.share_modes, sl.share_modes);
    assert_int_equal(sw.gpu_resource, sl.gpu_resource);
    same_str(sw.mig_profile, sl.mig_profile);
    assert_int_equal(sw.nnode_selector, sl.nnode_selector);
    for (size_t i = 0; i < sw.nnode_selector; i++) {
        same_str(sw.node_selector[i].key, sl.node_selector[i].key);
        same_str(sw.node_selector[i].value, sl.node_selector[i].value);
    }
    assert_int_equal(sw.nlabels, sl.nlabels);
    for (size_t i = 0; i < sw.nlabels; i++) {
        same_str(sw.labels[i].key, sl.labels[i].key);
        same_str(sw.labels[i].value, sl.labels[i].value);
    }
    assert_int_equal(sw.ntolerations, 2);
    assert_int_equal(sw.ntolerations, sl.ntolerations);
    for (size_t i = 0; i < sw.ntolerations; i++) {
        same_str(sw.tolerations[i].key, sl.tolerations[i].key);
        same_str(sw.tolerations[i].value, sl.tolerations[i].value);
        assert_int_equal(sw.tolerations[i].op_exists, sl.tolerations[i].op_exists);
        assert_int_equal(sw.tolerations[i].any_effect, sl.tolerations[i].any_effect);
        assert_int_equal(sw.tolerations[i].effect, sl.tolerations[i].effect);
    }
    const json_t *st = json_object_get(lean, "status"), *sp = json_object_get(lean, "spec");
    assert_string_equal(json_string_value(json_object_get(st, "nominatedNodeName")), "n1");
    assert_string_equal(json_string_value(json_object_get(sp, "priorityClassName")), "high");
    assert_true(json_equal(json_object_get(json_object_get(lean, "metadata"), "labels"),
                           json_object_get(json_object_get(whole, "metadata"), "labels")));
    /* and left out */
    assert_null(json_object_get(lean, "kind"));
    /* a volume's kinds but the claims (info.claims reads those) */
    assert_null(json_object_get(json_array_get(json_object_get(sp, "volumes"), 0), "projected"));
    /* its name kept: an ephemeral volume's claim is named after it (kube/volumes.c) */
    assert_non_null(json_object_get(json_array_get(json_object_get(sp, "volumes"), 0), "name"));
    assert_int_equal(iw.claims, il.claims);
    assert_null(json_object_get(st, "conditions"));
    assert_null(json_object_get(json_array_get(json_object_get(sp, "tolerations"), 1),
                                "tolerationSeconds"));
    assert_null(json_object_get(json_array_get(json_object_get(sp, "containers"), 0), "image"));
    assert_null(json_object_get(json_object_get(json_object_get(lean, "metadata"), "annotations"),
                                "kubectl.kubernetes.io/last-applied-configuration"));
    assert_null(
        json_object_get(json_array_get(json_object_get(st, "containerStatuses"), 0), "image"));
    gp_arena_free(&a);
    gp_arena_free(&b);
    json_decref(whole);
    json_decref(lean);
}

/* The info read again for a new version (gp_kube_pod_info_reread): a spec
 * or status that is the old version's very value keeps what it gave; one
 * that is not (a copy with the same text, a changed one) is read. Each
 * version's info is the one a full read of it gives. */
static void check_same(const struct gp_kube_pod_info *a, const struct gp_kube_pod_info *b)
{
    same_str(a->ns, b->ns);
    same_str(a->name, b->name);
    same_str(a->uid, b->uid);
    same_str(a->rv, b->rv);
    same_str(a->node_name, b->node_name);
    same_str(a->scheduler_name, b->scheduler_name);
    assert_int_equal(a->terminating, b->terminating);
    assert_int_equal(a->ended, b->ended);
    assert_int_equal(a->started, b->started);
    same_str(a->ann_node, b->ann_node);
    assert_int_equal(a->has_pick, b->has_pick);
    assert_memory_equal(&a->pick, &b->pick, sizeof a->pick);
    same_str(a->ann_mig, b->ann_mig);
    same_str(a->ann_phase, b->ann_phase);
    same_str(a->group, b->group);
    assert_int_equal(a->gated, b->gated);
    assert_int_equal(a->claims, b->claims);
}

static json_t *load(const char *text)
{
    json_t *j = gp_kube_jload(text, strlen(text), JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(j);
    return j;
}

/* version `next` with its member `key` replaced by prev's very value */
static void share(json_t *next, const json_t *prev, const char *key)
{
    assert_int_equal(json_object_set(next, key, json_object_get(prev, key)), 0);
}

static void test_reread_shared(void **state)
{
    (void)state;
    json_t *v1 =
        load(POD("", ",\"volumes\":[{\"persistentVolumeClaim\":{}}]", "\"phase\":\"Pending\""));
    struct gp_kube_pod_info info, full;
    gp_kube_pod_info_reread(v1, NULL, &info); /* no old: read whole */
    gp_kube_pod_info_read(v1, &full);
    check_same(&info, &full);
    assert_true(info.claims);

    /* the annotation patch: metadata new, spec and status shared */
    json_t *v2 = load(POD(",\"annotations\":{\"gpuplane.io/node\":\"n1\","
                          "\"gpuplane.io/gpus\":\"2\"}",
                          ",\"schedulingGates\":[{\"name\":\"g\"}]", "\"phase\":\"Running\""));
    share(v2, v1, "spec");
    share(v2, v1, "status");
    gp_kube_pod_info_reread(v2, v1, &info);
    gp_kube_pod_info_read(v2, &full);
    check_same(&info, &full);
    assert_string_equal(info.ann_node, "n1");
    assert_true(info.has_pick);
    assert_false(info.started); /* v1's status, shared */

    /* the Binding: a new spec (nodeName) and status, as their texts
     * differ: both read (a reread keeping v2's would miss the node, the
     * claims gone and the phase) */
    json_t *v3 = load(POD("", ",\"nodeName\":\"n1\"", "\"phase\":\"Running\""));
    gp_kube_pod_info_reread(v3, v2, &info);
    gp_kube_pod_info_read(v3, &full);
    check_same(&info, &full);
    assert_string_equal(info.node_name, "n1");
    assert_false(info.claims);
    assert_false(info.gated);
    assert_true(info.started);
    assert_null(info.ann_node); /* metadata always read */

    /* the same text, not the same value: read (equal content is not
     * enough to keep, the value is) */
    json_t *v4 = load(POD("", ",\"nodeName\":\"n2\"", "\"phase\":\"Succeeded\""));
    gp_kube_pod_info_reread(v4, v3, &info);
    assert_string_equal(info.node_name, "n2");
    assert_true(info.ended);

    /* the status shared, the spec not */
    json_t *v5 =
        load(POD(",\"deletionTimestamp\":\"2026-12-02T03:00:00Z\"", ",\"nodeName\":\"n3\"", ""));
    share(v5, v4, "status");
    gp_kube_pod_info_reread(v5, v4, &info);
    gp_kube_pod_info_read(v5, &full);
    check_same(&info, &full);
    assert_string_equal(info.node_name, "n3");
    assert_true(info.terminating);
    assert_true(info.ended);
    json_decref(v1);
    json_decref(v2);
    json_decref(v3);
    json_decref(v4);
    json_decref(v5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_change_read),
        cmocka_unit_test(test_unreadable_spec),
        cmocka_unit_test(test_unread_left_out),
        cmocka_unit_test(test_reread_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
