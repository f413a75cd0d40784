/* test_kube_podinfo.c - a pod's info read alone (gp_kube_pod_info_read,
 * kube/objects.c), as the scheduler reads a pod the engine already holds:
 * every field gp_kube_pod_read gives, the same, whatever of the pod
 * changed (deletionTimestamp, nodeName, the phase, gpuplane's annotations,
 * the PodGroup label), and read whole even when the spec does not read (a
 * request that is not a quantity, a bad gpu-milli annotation). */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_change_read),
        cmocka_unit_test(test_unreadable_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
