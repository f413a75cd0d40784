/* test_k8s_pod.c - a pod as the API server hands it to the scheduler.
 * Its request (Kubernetes' PodRequests): a limit alone is the request of
 * that resource, init containers run one at a time before the app
 * containers, a sidecar (an init container with restartPolicy: Always)
 * runs beside them and adds to their sum and to the need of every init
 * container after it, and the overhead is added last. Its priority (the
 * Priority admission plugin): the PriorityClass it names, or the
 * globalDefault one, gives spec.priority and the preemption policy; an
 * unknown class, a spec.priority or a preemptionPolicy that disagrees is
 * refused in the plugin's words. And in the engine, preemptionPolicy:
 * Never: a pod that would evict waits instead. Numbers are worked by hand
 * in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "io/workload.h"

struct parsed {
    struct gp_arena arena;
    struct gp_workload w;
    struct gp_diag diag;
    enum gp_err err;
};

/* Parses each text as a file of its own, then finishes the workload. */
static struct parsed *parse_files(const char *const *texts, size_t n)
{
    struct parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    gp_arena_init(&p->arena);
    for (size_t i = 0; i < n && p->err == GP_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%zu.yaml", i);
        p->err = gp_workload_parse_manifest(texts[i], strlen(texts[i]), name, &p->arena, &p->w,
                                            &p->diag);
    }
    if (p->err == GP_OK)
        p->err = gp_workload_finish(&p->w, &p->arena, &p->diag);
    return p;
}

static struct parsed *parse(const char *text)
{
    return parse_files(&text, 1);
}

static struct parsed *parse_ok(const char *text)
{
    struct parsed *p = parse(text);
    if (p->err != GP_OK)
        print_error("%s\n", p->diag.msg);
    assert_int_equal(p->err, GP_OK);
    return p;
}

static void done(struct parsed *p)
{
    gp_arena_free(&p->arena);
    free(p);
}

static void expect_error(const char *text, const char *msg)
{
    struct parsed *p = parse(text);
    if (p->err == GP_OK || strcmp(p->diag.msg, msg) != 0)
        print_error("got %d \"%s\"\nwant \"%s\"\n", p->err, p->diag.msg, msg);
    assert_int_not_equal(p->err, GP_OK);
    assert_string_equal(p->diag.msg, msg);
    done(p);
}

#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
#define APP(cpu) "  - {name: a" #cpu ", resources: {requests: {cpu: \"" #cpu "\"}}}\n"

/* --- the request ---------------------------------------------------------- */

static void test_init_container_larger(void **state)
{
    (void)state;
    /* an init container of 4 CPUs runs before the app containers of 2 and
     * 1: the pod needs max(4, 2 + 1) = 4 */
    struct parsed *p = parse_ok(POD_HEAD "  initContainers:\n"
                                         "  - {name: i, resources: {requests: {cpu: \"4\"}}}\n"
                                         "  containers:\n" APP(2) APP(1));
    assert_int_equal(p->w.items[0].pod.cpu_milli, 4000);
    done(p);
    /* and when the sum is larger, the sum: max(2, 2 + 1) = 3 */
    p = parse_ok(POD_HEAD "  initContainers:\n"
                          "  - {name: i, resources: {requests: {cpu: \"2\"}}}\n"
                          "  containers:\n" APP(2) APP(1));
    assert_int_equal(p->w.items[0].pod.cpu_milli, 3000);
    done(p);
}

static void test_sidecars(void **state)
{
    (void)state;
    /* a sidecar of 1 CPU, then an init container of 3, then apps of 2 and
     * 1: the sidecar runs beside the apps (2 + 1 + 1 = 4) and beside the
     * init container after it (3 + 1 = 4): max(4, 4) = 4. Counted as a
     * plain init container the sidecar would give max(3, 3) = 3 */
    struct parsed *p =
        parse_ok(POD_HEAD "  initContainers:\n"
                          "  - {name: s, restartPolicy: Always, resources: {requests: {cpu: \"1\", "
                          "memory: 1Gi}}}\n"
                          "  - {name: i, resources: {requests: {cpu: \"3\", memory: 4Gi}}}\n"
                          "  containers:\n"
                          "  - {name: a, resources: {requests: {cpu: \"2\", memory: 1Gi}}}\n"
                          "  - {name: b, resources: {requests: {cpu: \"1\", memory: 1Gi}}}\n");
    const struct gp_pod_spec *pod = &p->w.items[0].pod;
    assert_int_equal(pod->cpu_milli, 4000);
    assert_int_equal(pod->mem_mib, 5 * 1024); /* init 4Gi + sidecar 1Gi > 1 + 1 + 1 */
    done(p);
    /* the order of the init containers matters: an init container before
     * the sidecar runs without it: max(3, 1 + 2 + 1) = 4 on cpu, and
     * memory max(4Gi, 1 + 1 + 1 Gi) = 4Gi */
    p = parse_ok(POD_HEAD "  initContainers:\n"
                          "  - {name: i, resources: {requests: {cpu: \"3\", memory: 4Gi}}}\n"
                          "  - {name: s, restartPolicy: Always, resources: {requests: {cpu: \"1\", "
                          "memory: 1Gi}}}\n"
                          "  containers:\n"
                          "  - {name: a, resources: {requests: {cpu: \"2\", memory: 1Gi}}}\n"
                          "  - {name: b, resources: {requests: {cpu: \"1\", memory: 1Gi}}}\n");
    pod = &p->w.items[0].pod;
    assert_int_equal(pod->cpu_milli, 4000);
    assert_int_equal(pod->mem_mib, 4 * 1024);
    done(p);
    /* a GPU sidecar adds its GPU to the apps' */
    p = parse_ok(POD_HEAD "  initContainers:\n"
                          "  - {name: s, restartPolicy: Always, resources: {limits: "
                          "{nvidia.com/gpu: 1}}}\n"
                          "  containers:\n"
                          "  - {name: a, resources: {limits: {nvidia.com/gpu: 2}}}\n");
    assert_int_equal(p->w.items[0].pod.gpu_count, 3);
    done(p);
    expect_error(POD_HEAD "  containers:\n  - {name: a, restartPolicy: Always}\n",
                 "f0.yaml:7:30: Pod/p.spec.containers[0].restartPolicy: may not be set for "
                 "non-init containers (a sidecar is an init container with restartPolicy: "
                 "Always)");
    expect_error(POD_HEAD "  initContainers:\n  - {name: i, restartPolicy: OnFailure}\n"
                          "  containers:\n  - {name: a}\n",
                 "f0.yaml:7:30: Pod/p.spec.initContainers[0].restartPolicy: expected Always "
                 "(the only restart policy of an init container), got \"OnFailure\"");
}

static void test_overhead(void **state)
{
    (void)state;
    /* overhead is added after the max: max(4, 2 + 1) + 0.25 */
    struct parsed *p = parse_ok(POD_HEAD "  overhead: {cpu: 250m, memory: 120Mi}\n"
                                         "  initContainers:\n"
                                         "  - {name: i, resources: {requests: {cpu: \"4\"}}}\n"
                                         "  containers:\n" APP(2) APP(1));
    assert_int_equal(p->w.items[0].pod.cpu_milli, 4250);
    assert_int_equal(p->w.items[0].pod.mem_mib, 120);
    assert_int_equal(p->w.nwarnings, 0); /* modelled: no "not simulated" line */
    done(p);
    expect_error(POD_HEAD "  overhead: {nvidia.com/gpu: 1}\n  containers:\n" APP(1),
                 "f0.yaml:6:14: Pod/p.spec.overhead[\"nvidia.com/gpu\"]: expected cpu or memory (a "
                 "pod's overhead is its sandbox's, not a device's)");
}

static void test_limits_default_requests(void **state)
{
    (void)state;
    /* per resource: cpu from its request, memory from its limit alone,
     * GPUs from their limit alone */
    struct parsed *p = parse_ok(POD_HEAD "  containers:\n"
                                         "  - name: a\n"
                                         "    resources:\n"
                                         "      requests: {cpu: 500m}\n"
                                         "      limits: {cpu: \"2\", memory: 3Gi, "
                                         "nvidia.com/gpu: 1}\n"
                                         "  - name: b\n"
                                         "    resources:\n"
                                         "      limits: {cpu: 1500m}\n");
    const struct gp_pod_spec *pod = &p->w.items[0].pod;
    assert_int_equal(pod->cpu_milli, 500 + 1500);
    assert_int_equal(pod->mem_mib, 3 * 1024);
    assert_int_equal(pod->gpu_count, 1);
    done(p);
    /* an init container's limits count as its requests too */
    p = parse_ok(POD_HEAD "  initContainers:\n"
                          "  - {name: i, resources: {limits: {memory: 8Gi}}}\n"
                          "  containers:\n" APP(1));
    assert_int_equal(p->w.items[0].pod.mem_mib, 8 * 1024);
    done(p);
}

/* --- priority classes ---------------------------------------------------- */

#define PC(name, rest)                                                                             \
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " name "}\n" rest     \
    "---\n"
#define PODC(name, spec)                                                                           \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n" spec                          \
    "  containers: [{name: c}]\n"

static void test_class_value(void **state)
{
    (void)state;
    /* the class named gives the value; Never comes with it; a pod without
     * a class and without a default keeps its own spec.priority */
    struct parsed *p = parse_ok(
        PC("high", "value: 1000\n") PC("batch", "value: 10\npreemptionPolicy: Never\n")
            PODC("a", "  priorityClassName: high\n") "---\n" PODC(
                "b",
                "  priorityClassName: "
                "batch\n") "---\n" PODC("c",
                                        "  priority: 7\n") "---\n" PODC("d",
                                                                        "  priorityClassName: "
                                                                        "system-node-critical\n"));
    assert_int_equal(p->w.npclasses, 2);
    assert_int_equal(p->w.items[0].pod.priority, 1000);
    assert_false(p->w.items[0].pod.preempt_never);
    assert_int_equal(p->w.items[1].pod.priority, 10);
    assert_true(p->w.items[1].pod.preempt_never);
    assert_int_equal(p->w.items[2].pod.priority, 7);
    assert_int_equal(p->w.items[3].pod.priority, 2000001000); /* built in */
    assert_int_equal(p->w.nwarnings, 0);
    done(p);
}

static void test_global_default(void **state)
{
    (void)state;
    /* a pod without a class takes the globalDefault class's value and
     * policy; one with a class keeps its class's; spec.priority equal to
     * the default's is accepted */
    struct parsed *p =
        parse_ok(PC("dflt", "value: 50\nglobalDefault: true\npreemptionPolicy: Never\n")
                     PC("high", "value: 100\n") PODC("a", "") "---\n" PODC(
                         "b", "  priorityClassName: high\n") "---\n" PODC("c", "  priority: 50\n"));
    assert_int_equal(p->w.items[0].pod.priority, 50);
    assert_true(p->w.items[0].pod.preempt_never);
    assert_int_equal(p->w.items[1].pod.priority, 100);
    assert_false(p->w.items[1].pod.preempt_never);
    assert_int_equal(p->w.items[2].pod.priority, 50);
    done(p);
}

static void test_class_in_another_file(void **state)
{
    (void)state;
    /* the pod comes first, its class in a later file */
    const char *files[] = {PODC("a", "  priorityClassName: late\n"), PC("late", "value: 3\n")};
    struct parsed *p = parse_files(files, 2);
    assert_int_equal(p->err, GP_OK);
    assert_int_equal(p->w.items[0].pod.priority, 3);
    done(p);
}

static void test_class_errors(void **state)
{
    (void)state;
    expect_error(PODC("a", "  priorityClassName: nope\n"),
                 "f0.yaml:5:22: Pod/a.spec.priorityClassName: no PriorityClass with name nope was "
                 "found (define one: apiVersion: scheduling.k8s.io/v1, kind: PriorityClass)");
    expect_error(PC("high", "value: 1000\n")
                     PODC("a", "  priorityClassName: high\n  priority: 5\n"),
                 "f0.yaml:11:13: Pod/a.spec.priority: the integer value of priority (5) must not "
                 "be provided in pod spec; priority admission controller computed 1000 from the "
                 "given PriorityClass name");
    expect_error(PC("d", "value: 9\nglobalDefault: true\n") PODC("a", "  priority: 5\n"),
                 "f0.yaml:11:13: Pod/a.spec.priority: the integer value of priority (5) must not "
                 "be provided in pod spec; priority admission controller computed 9 from the "
                 "given PriorityClass name");
    expect_error(PC("high", "value: 1000\n")
                     PODC("a", "  priorityClassName: high\n  preemptionPolicy: Never\n"),
                 "f0.yaml:11:21: Pod/a.spec.preemptionPolicy: the string value of "
                 "PreemptionPolicy (Never) must not be provided in pod spec; priority admission "
                 "controller computed PreemptLowerPriority from the given PriorityClass name");
    expect_error(PC("a", "value: 1\nglobalDefault: true\n")
                     PC("b", "value: 2\nglobalDefault: true\n"),
                 "f0.yaml:11:16: PriorityClass/b.globalDefault: PriorityClass a is already "
                 "marked as default (f0.yaml:1). Only one default can exist");
    expect_error(PC("system-mine", "value: 1\n"),
                 "f0.yaml:3:18: PriorityClass/system-mine.metadata.name: priority class names "
                 "with 'system-' prefix are reserved");
    expect_error(PC("huge", "value: 1000000001\n"),
                 "f0.yaml:4:8: PriorityClass/huge.value: maximum allowed value of a user defined "
                 "priority is 1000000000");
    expect_error(PC("x", "value: 1\npreemptionPolicy: Sometimes\n"),
                 "f0.yaml:5:19: PriorityClass/x.preemptionPolicy: expected PreemptLowerPriority or "
                 "Never, got \"Sometimes\"");
    expect_error(PC("x", "globalDefault: true\n"),
                 "f0.yaml:1:1: PriorityClass/x: missing required field \"value\"");
}

/* --- preemptionPolicy: Never in the engine -------------------------------- */

/* One node of 8 GPUs full of priority-0 pods of a queue that may preempt
 * within; a priority-100 pod of 8 GPUs arrives. PreemptLowerPriority: it
 * evicts all eight; Never: it stays pending and nothing is evicted. */
static void run_never(bool never, size_t *evicted, bool *bound)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    struct gp_node_spec n = {.name = "n0",
                             .gpu_model = "H100",
                             .gpu_count = 8,
                             .gpu_mem_mib = 81920,
                             .cpu_milli = 64000,
                             .mem_mib = 1 << 20};
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_queue_spec q = {.name = "team", .weight = 1};
    uint32_t qid;
    assert_int_equal(gp_engine_queue_set(e, &q, &qid), GP_OK);
    struct gp_pod_spec low = {.name = "low",
                              .cpu_milli = 1000,
                              .mem_mib = 1024,
                              .gpu_count = 1,
                              .gpu_milli = GP_GPU_MILLI,
                              .queue = qid};
    for (int i = 0; i < 8; i++)
        assert_int_equal(gp_engine_pod_add(e, &low, 0, NULL), GP_OK);
    struct gp_decision d[32];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 32), 8);
    struct gp_pod_spec high = low;
    high.name = "high";
    high.gpu_count = 8;
    high.priority = 100;
    high.preempt_never = never;
    uint32_t hid;
    assert_int_equal(gp_engine_pod_add(e, &high, 10, &hid), GP_OK);
    size_t nd = gp_engine_schedule(e, 10, 0, d, 32);
    *evicted = 0;
    *bound = false;
    for (size_t i = 0; i < nd; i++) {
        *evicted += d[i].kind == GP_DECISION_EVICT;
        *bound |= d[i].kind == GP_DECISION_BIND && d[i].pod == hid;
    }
    /* a later cycle does not change its mind */
    nd = gp_engine_schedule(e, 20, 0, d, 32);
    for (size_t i = 0; i < nd; i++) {
        *evicted += d[i].kind == GP_DECISION_EVICT;
        *bound |= d[i].kind == GP_DECISION_BIND && d[i].pod == hid;
    }
    gp_engine_free(e);
}

static void test_never_preempts(void **state)
{
    (void)state;
    size_t evicted;
    bool bound;
    run_never(false, &evicted, &bound);
    assert_int_equal(evicted, 8); /* the control: the rule is what stops it */
    assert_true(bound);
    run_never(true, &evicted, &bound);
    assert_int_equal(evicted, 0);
    assert_false(bound);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_container_larger),
        cmocka_unit_test(test_sidecars),
        cmocka_unit_test(test_overhead),
        cmocka_unit_test(test_limits_default_requests),
        cmocka_unit_test(test_class_value),
        cmocka_unit_test(test_global_default),
        cmocka_unit_test(test_class_in_another_file),
        cmocka_unit_test(test_class_errors),
        cmocka_unit_test(test_never_preempts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
