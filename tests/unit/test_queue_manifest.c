/* test_queue_manifest.c - queues and job hints in Kubernetes manifests:
 * gpuplane's Queue and Volcano's Queue read field by field into the same
 * struct, the three ways a pod names its queue, the failure rate, the
 * checkpoint interval and activeDeadlineSeconds, the example file, and one
 * test per class of bad input with its exact message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/workload.h"

struct parsed {
    struct gp_arena arena;
    struct gp_workload w;
    struct gp_diag diag;
    enum gp_err err;
};

static struct parsed *parse(const char *text)
{
    struct parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    gp_arena_init(&p->arena);
    p->err = gp_workload_parse_manifest(text, strlen(text), "q.yaml", &p->arena, &p->w, &p->diag);
    if (p->err != GP_OK) {
        assert_int_equal(p->w.nitems, 0);
        assert_int_equal(p->w.nqueues, 0); /* a file that fails adds nothing */
    }
    return p;
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

static void expect_error(const char *text, enum gp_err err, const char *msg)
{
    struct parsed *p = parse(text);
    if (p->err != err || strcmp(p->diag.msg, msg) != 0)
        print_error("got %d \"%s\"\nwant %d \"%s\"\n", p->err, p->diag.msg, err, msg);
    assert_int_equal(p->err, err);
    assert_string_equal(p->diag.msg, msg);
    done(p);
}

#define GQ "apiVersion: gpuplane.io/v1\nkind: Queue\n"
#define VQ "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"

static void test_gpuplane_queue(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok(GQ "metadata: {name: research}\n"
                    "spec:\n  weight: 2\n"
                    "  guaranteed: {nvidia.com/gpu: 16, cpu: \"64\", memory: 256Gi}\n"
                    "  borrowingLimit: {nvidia.com/gpu: 2.5}\n"
                    "  gpuModels:\n  - {model: A100-80GB, guaranteed: 8, "
                    "borrowingLimit: 0}\n  - {model: L4, guaranteed: 4}\n"
                    "  preemption: {withinQueue: Never, minRuntime: 30m}\n"
                    "  reclaimable: false\n"
                    "---\n" GQ "metadata: {name: vision}\n"
                    "spec: {parent: research}\n");
    assert_int_equal(p->w.nitems, 0);
    assert_int_equal(p->w.nqueues, 2);
    const struct gp_queue_def *q = &p->w.queues[0];
    assert_string_equal(q->source, "q.yaml:1");
    assert_null(q->parent);
    assert_string_equal(q->spec.name, "research");
    assert_true(q->spec.weight == 2);
    assert_int_equal(q->spec.gpu_milli.guaranteed, 16000);
    assert_true(q->spec.gpu_milli.limited);
    assert_int_equal(q->spec.gpu_milli.borrow_limit, 2500);
    assert_int_equal(q->spec.cpu_milli.guaranteed, 64000);
    assert_false(q->spec.cpu_milli.limited); /* no borrowing limit: unlimited */
    assert_int_equal(q->spec.mem_mib.guaranteed, 256 * 1024);
    assert_int_equal(q->spec.nmodels, 2);
    assert_string_equal(q->spec.models[0].model, "A100-80GB");
    assert_int_equal(q->spec.models[0].gpu_milli.guaranteed, 8000);
    assert_true(q->spec.models[0].gpu_milli.limited);
    assert_int_equal(q->spec.models[0].gpu_milli.borrow_limit, 0);
    assert_false(q->spec.models[1].gpu_milli.limited);
    assert_true(q->spec.no_preempt_within);
    assert_true(q->spec.not_reclaimable);
    assert_true(q->spec.min_runtime_s == 1800);
    q = &p->w.queues[1];
    assert_string_equal(q->parent, "research");
    assert_true(q->spec.weight == 1);
    assert_false(q->spec.no_preempt_within);
    assert_false(q->spec.not_reclaimable);
    done(p);
}

/* Volcano: deserved is the guarantee (else guarantee.resource), capability
 * the cap; other resources and fields are skipped; parent root = top. */
static void test_volcano_queue(void **state)
{
    (void)state;
    struct parsed *p = parse_ok(VQ "metadata: {name: team-b}\n"
                                   "spec:\n  weight: 3\n  reclaimable: true\n  parent: root\n"
                                   "  priority: 10\n"
                                   "  capability: {nvidia.com/gpu: 48, cpu: \"100\", pods: 10}\n"
                                   "  deserved: {nvidia.com/gpu: 32}\n"
                                   "  guarantee: {resource: {nvidia.com/gpu: 8, cpu: \"10\"}}\n"
                                   "status: {state: Open}\n");
    const struct gp_queue_def *q = &p->w.queues[0];
    assert_null(q->parent);
    assert_true(q->spec.weight == 3);
    assert_int_equal(q->spec.gpu_milli.guaranteed, 32000); /* deserved wins */
    assert_int_equal(q->spec.gpu_milli.borrow_limit, 16000);
    assert_int_equal(q->spec.cpu_milli.guaranteed, 10000); /* guarantee.resource */
    assert_int_equal(q->spec.cpu_milli.borrow_limit, 90000);
    assert_false(q->spec.mem_mib.limited);
    assert_false(q->spec.not_reclaimable);
    done(p);
}

/* A pod names its queue by gpuplane.io/queue, by Kueue's label or by
 * Volcano's annotation (in that order), or through its Volcano PodGroup. */
static void test_queue_names(void **state)
{
    (void)state;
    struct parsed *p = parse_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n"
                                "  labels: {kueue.x-k8s.io/queue-name: kq, gpuplane.io/queue: gq}\n"
                                "spec: {containers: [{name: c}]}\n"
                                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n"
                                "  labels: {kueue.x-k8s.io/queue-name: kq}\n"
                                "  annotations: {scheduling.volcano.sh/queue-name: vq}\n"
                                "spec: {containers: [{name: c}]}\n"
                                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: c\n"
                                "  annotations: {scheduling.volcano.sh/queue-name: vq}\n"
                                "spec: {containers: [{name: c}]}\n"
                                "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                                "metadata: {name: g}\nspec: {minMember: 1, queue: pgq}\n"
                                "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: d\n"
                                "  annotations: {scheduling.k8s.io/group-name: g}\n"
                                "spec:\n  template:\n    spec: {containers: [{name: c}]}\n");
    assert_int_equal(p->w.nitems, 4);
    assert_string_equal(p->w.items[0].queue, "gq");
    assert_string_equal(p->w.items[1].queue, "kq");
    assert_string_equal(p->w.items[2].queue, "vq");
    assert_string_equal(p->w.items[3].queue, "pgq");
    done(p);
}

static void test_job_hints(void **state)
{
    (void)state;
    struct parsed *p = parse_ok("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
                                "  annotations:\n    sim.gpuplane.io/failure-rate: 0.1/h\n"
                                "    sim.gpuplane.io/checkpoint-interval: 30m\n"
                                "spec:\n  activeDeadlineSeconds: 7200\n  template:\n"
                                "    metadata:\n      annotations: {sim.gpuplane.io/failure-rate: "
                                "\"2/d\"}\n"
                                "    spec: {containers: [{name: c}]}\n");
    const struct gp_item *it = &p->w.items[0];
    assert_true(it->active_deadline_s == 7200);
    assert_true(it->checkpoint_s == 1800);
    assert_true(it->failure_rate_per_s == 2.0 / 86400); /* the template's wins */
    done(p);
    p = parse_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                 "  annotations: {sim.gpuplane.io/failure-rate: 3/m}\n"
                 "spec: {containers: [{name: c}]}\n");
    assert_true(p->w.items[0].failure_rate_per_s == 3.0 / 60);
    assert_true(p->w.items[0].active_deadline_s == 0);
    assert_true(p->w.items[0].checkpoint_s == 0);
    done(p);
}

/* The example parses: both queues, and every item names one of them. */
static void test_example(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d;
    enum gp_err err = gp_workload_load(GP_EXAMPLES_DIR "/queues.yaml", &a, &w, &d);
    if (err != GP_OK)
        print_error("%s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(w.nqueues, 2);
    assert_string_equal(w.queues[0].spec.name, "team-a");
    assert_string_equal(w.queues[1].spec.name, "team-b");
    assert_int_equal(w.queues[1].spec.gpu_milli.borrow_limit, 16000);
    for (size_t i = 0; i < w.nitems; i++) {
        assert_non_null(w.items[i].queue);
        assert_true(strcmp(w.items[i].queue, "team-a") == 0 ||
                    strcmp(w.items[i].queue, "team-b") == 0);
    }
    gp_arena_free(&a);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error(GQ "metadata: {name: a}\nspec:\n  guaranteed: {nvidia.com/mig-1g.10gb: 1}\n",
                 GP_EUNSUPPORTED,
                 "q.yaml:5:16: Queue.spec.guaranteed[\"nvidia.com/mig-1g.10gb\"]: unknown "
                 "resource (expected one of: nvidia.com/gpu, cpu, memory; per GPU model, use "
                 "gpuModels)");
    expect_error(GQ "metadata: {name: a}\nspec:\n  guaranteed: {nvidia.com/gpu: -1}\n", GP_EINVALID,
                 "q.yaml:5:32: Queue.spec.guaranteed[\"nvidia.com/gpu\"]: expected a number of "
                 "GPUs like 16 or 2.5, got \"-1\"");
    expect_error(GQ "metadata: {name: a}\nspec: {wieght: 2}\n", GP_EINVALID,
                 "q.yaml:4:8: Queue/a.spec.wieght: unknown field; did you mean \"weight\"?");
    expect_error(GQ "metadata: {name: a}\nspec: {preemption: {withinQueue: Always}}\n", GP_EINVALID,
                 "q.yaml:4:34: Queue.spec.preemption.withinQueue: expected LowerPriority or "
                 "Never, got \"Always\"");
    expect_error(GQ "metadata: {name: a}\nspec: {reclaimable: maybe}\n", GP_EINVALID,
                 "q.yaml:4:21: Queue.spec.reclaimable: expected true or false, got \"maybe\"");
    expect_error(GQ "metadata: {name: a}\n---\n" GQ "metadata: {name: a}\n", GP_EINVALID,
                 "q.yaml:7:18: Queue/a: defined twice (first at q.yaml:3)");
    expect_error(GQ "metadata: {name: \"a b\"}\n", GP_EINVALID,
                 "q.yaml:3:18: Queue.metadata.name: expected a queue name (at most 63 of "
                 "[A-Za-z0-9_.-]), got \"a b\"");
    expect_error(GQ "metadata: {name: a}\nspec:\n  gpuModels: [{model: L4}, {model: L4}]\n",
                 GP_EINVALID, "q.yaml:5:29: Queue.spec.gpuModels[1]: model L4 is listed twice");
    expect_error(VQ "metadata: {name: a}\n"
                    "spec: {capability: {nvidia.com/gpu: 4}, deserved: {nvidia.com/gpu: 8}}\n",
                 GP_EINVALID,
                 "q.yaml:4:8: Queue: spec.capability[\"nvidia.com/gpu\"] is below what the queue "
                 "is guaranteed");
    expect_error("apiVersion: v1\nkind: Queue\nmetadata: {name: a}\n", GP_EINVALID,
                 "q.yaml:1:13: apiVersion: expected \"gpuplane.io/v1\" or "
                 "\"scheduling.volcano.sh/v1beta1\" for a Queue, got \"v1\"");
    expect_error("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                 "  annotations: {sim.gpuplane.io/failure-rate: 0.1}\n"
                 "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "q.yaml:5:47: Pod/p.metadata.annotations[\"sim.gpuplane.io/failure-rate\"]: "
                 "expected a failure rate like 0.1/h (failures per s, m, h or d), got \"0.1\"");
    expect_error(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "  annotations: {sim.gpuplane.io/checkpoint-interval: 0s}\n"
        "spec: {containers: [{name: c}]}\n",
        GP_EINVALID,
        "q.yaml:5:54: Pod/p.metadata.annotations[\"sim.gpuplane.io/checkpoint-interval\"]: "
        "expected a checkpoint interval greater than zero like 30m, got \"0s\"");
    expect_error(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n"
        "spec:\n  activeDeadlineSeconds: 0\n  template: {spec: {containers: [{name: c}]}}\n",
        GP_EINVALID,
        "q.yaml:5:26: Job/j.spec.activeDeadlineSeconds: expected an integer from 1 to 2147483647, "
        "got \"0\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpuplane_queue), cmocka_unit_test(test_volcano_queue),
        cmocka_unit_test(test_queue_names),    cmocka_unit_test(test_job_hints),
        cmocka_unit_test(test_example),        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
