/* test_manifest_affinity.c - affinity and topologySpreadConstraints read
 * from manifests (io/manifest_affinity.c): every field into the engine's
 * constraints, the pod's namespace and labels (a template's, with the
 * Job's and Deployment's controller labels), matchLabelKeys merged into
 * the selectors, and the API server's validation, one message per rule;
 * no "not simulated" warning for what is now modelled. */
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
    p->err = gp_workload_parse_manifest(text, strlen(text), "a.yaml", &p->arena, &p->w, &p->diag);
    return p;
}

static struct parsed *parse_ok(const char *text)
{
    struct parsed *p = parse(text);
    if (p->err != GP_OK)
        print_error("%s\n", p->diag.msg);
    assert_int_equal(p->err, GP_OK);
    assert_int_equal(p->w.nwarnings, 0); /* modelled: nothing "not simulated" */
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

static const char *label(const struct gp_pod_spec *s, const char *key)
{
    for (size_t i = 0; i < s->nlabels; i++)
        if (strcmp(s->labels[i].key, key) == 0)
            return s->labels[i].value;
    return NULL;
}

#define POD(spec)                                                                                  \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n  labels: {app: web, "      \
    "tier: a}\nspec:\n  containers: [{name: c}]\n" spec

static void test_node_affinity(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok(POD("  affinity:\n"
                     "    nodeAffinity:\n"
                     "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                     "        nodeSelectorTerms:\n"
                     "        - matchExpressions:\n"
                     "          - {key: zone, operator: In, values: [a, b]}\n"
                     "          - {key: gen, operator: Gt, values: [\"3\"]}\n"
                     "        - matchFields:\n"
                     "          - {key: metadata.name, operator: NotIn, values: "
                     "[n1]}\n"
                     "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - weight: 40\n"
                     "        preference:\n"
                     "          matchExpressions: [{key: ssd, operator: Exists}]\n"));
    const struct gp_pod_spec *s = &p->w.items[0].pod;
    const struct gp_pod_constraints *c = s->constraints;
    assert_non_null(c);
    assert_int_equal(c->nnode_required, 2);
    assert_int_equal(c->node_required[0].nlabels, 2);
    assert_string_equal(c->node_required[0].labels[0].key, "zone");
    assert_int_equal(c->node_required[0].labels[0].op, GP_MATCH_IN);
    assert_int_equal(c->node_required[0].labels[0].nvalues, 2);
    assert_string_equal(c->node_required[0].labels[0].values[1], "b");
    assert_int_equal(c->node_required[0].labels[1].op, GP_MATCH_GT);
    assert_int_equal(c->node_required[1].nfields, 1);
    assert_int_equal(c->node_required[1].fields[0].op, GP_MATCH_NOT_IN);
    assert_int_equal(c->nnode_preferred, 1);
    assert_int_equal(c->node_preferred[0].weight, 40);
    assert_int_equal(c->node_preferred[0].labels[0].op, GP_MATCH_EXISTS);
    assert_string_equal(s->namespace_name, "ml");
    assert_string_equal(label(s, "tier"), "a");
    done(p);
}

static void test_pod_affinity(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok(POD("  affinity:\n"
                     "    podAffinity:\n"
                     "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - labelSelector: {matchLabels: {app: db}}\n"
                     "        topologyKey: topology.kubernetes.io/zone\n"
                     "        namespaces: [data]\n"
                     "    podAntiAffinity:\n"
                     "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - labelSelector:\n"
                     "          matchExpressions: [{key: app, operator: In, values: [web]}]\n"
                     "        topologyKey: kubernetes.io/hostname\n"
                     "        matchLabelKeys: [tier]\n"
                     "        mismatchLabelKeys: [absent]\n"
                     "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - weight: 100\n"
                     "        podAffinityTerm:\n"
                     "          labelSelector: {}\n"
                     "          namespaceSelector: {}\n"
                     "          topologyKey: rack\n"));
    const struct gp_pod_constraints *c = p->w.items[0].pod.constraints;
    assert_int_equal(c->naffinity, 1);
    assert_true(c->affinity[0].selector.set);
    assert_string_equal(c->affinity[0].selector.labels[0].value, "db");
    assert_string_equal(c->affinity[0].topology_key, "topology.kubernetes.io/zone");
    assert_int_equal(c->affinity[0].nnamespaces, 1);
    assert_false(c->affinity[0].ns_selector.set);
    assert_int_equal(c->nanti, 1);
    /* matchLabelKeys [tier] merged: app In [web], tier In [a]; the pod has
     * no "absent" label, so mismatchLabelKeys adds nothing */
    assert_int_equal(c->anti[0].selector.nexprs, 2);
    assert_string_equal(c->anti[0].selector.exprs[1].key, "tier");
    assert_int_equal(c->anti[0].selector.exprs[1].op, GP_MATCH_IN);
    assert_string_equal(c->anti[0].selector.exprs[1].values[0], "a");
    assert_int_equal(c->nanti_preferred, 1);
    assert_int_equal(c->anti_preferred[0].weight, 100);
    assert_true(c->anti_preferred[0].selector.set); /* {}: every pod */
    assert_int_equal(c->anti_preferred[0].selector.nlabels + c->anti_preferred[0].selector.nexprs,
                     0);
    assert_true(c->anti_preferred[0].ns_selector.set);
    done(p);
}

static void test_spread(void **state)
{
    (void)state;
    struct parsed *p = parse_ok(POD("  topologySpreadConstraints:\n"
                                    "  - maxSkew: 1\n"
                                    "    topologyKey: topology.kubernetes.io/zone\n"
                                    "    whenUnsatisfiable: DoNotSchedule\n"
                                    "    labelSelector: {matchLabels: {app: web}}\n"
                                    "    minDomains: 3\n"
                                    "    nodeAffinityPolicy: Ignore\n"
                                    "    nodeTaintsPolicy: Honor\n"
                                    "    matchLabelKeys: [tier]\n"
                                    "  - maxSkew: 2\n"
                                    "    topologyKey: kubernetes.io/hostname\n"
                                    "    whenUnsatisfiable: ScheduleAnyway\n"));
    const struct gp_pod_constraints *c = p->w.items[0].pod.constraints;
    assert_int_equal(c->nspread, 2);
    const struct gp_spread *a = &c->spread[0], *b = &c->spread[1];
    assert_int_equal(a->max_skew, 1);
    assert_false(a->schedule_anyway);
    assert_int_equal(a->min_domains, 3);
    assert_true(a->ignore_affinity);
    assert_true(a->honor_taints);
    assert_int_equal(a->selector.nexprs, 1); /* tier In [a] */
    assert_int_equal(b->max_skew, 2);
    assert_true(b->schedule_anyway);
    assert_false(b->selector.set); /* no selector: counts no pod */
    assert_false(b->ignore_affinity);
    assert_false(b->honor_taints);
    done(p);
}

static void test_controller_labels(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, labels: {x: y}}\n"
                 "spec:\n  template:\n    metadata: {labels: {app: t}}\n"
                 "    spec: {containers: [{name: c}]}\n"
                 "---\n"
                 "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                 "spec:\n  template:\n    spec: {containers: [{name: c}]}\n");
    const struct gp_pod_spec *job = &p->w.items[0].pod, *dep = &p->w.items[1].pod;
    /* a template's labels, not the object's, and the controller's */
    assert_string_equal(label(job, "app"), "t");
    assert_null(label(job, "x"));
    assert_string_equal(label(job, "job-name"), "train");
    assert_string_equal(label(job, "batch.kubernetes.io/job-name"), "train");
    assert_non_null(label(dep, "pod-template-hash"));
    assert_null(job->namespace_name); /* "default" */
    assert_null(job->constraints);
    done(p);
}

#define AFF(rest) POD("  affinity:\n" rest)
#define REQ_NODE  "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"

static void test_errors(void **state)
{
    (void)state;
    expect_error(AFF(REQ_NODE "        nodeSelectorTerms: []\n"),
                 "a.yaml:12:9: Pod/p.spec.affinity.nodeAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: must have at "
                 "least one node selector term");
    expect_error(AFF(REQ_NODE "        nodeSelectorTerms:\n"
                              "        - matchExpressions: [{key: z, operator: Near, values: "
                              "[a]}]\n"),
                 "a.yaml:13:49: Pod/p.spec.affinity.nodeAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].operator: expected In, NotIn, Exists, DoesNotExist, Gt or "
                 "Lt, got \"Near\"");
    expect_error(AFF(REQ_NODE "        nodeSelectorTerms:\n"
                              "        - matchExpressions: [{key: z, operator: In}]\n"),
                 "a.yaml:13:49: Pod/p.spec.affinity.nodeAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].values: must be specified when `operator` is 'In' or "
                 "'NotIn'");
    expect_error(AFF(REQ_NODE "        nodeSelectorTerms:\n"
                              "        - matchExpressions: [{key: z, operator: Gt, values: "
                              "[big]}]\n"),
                 "a.yaml:13:62: Pod/p.spec.affinity.nodeAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].values: for 'Gt' and 'Lt', expected an integer");
    expect_error(AFF(REQ_NODE "        nodeSelectorTerms:\n"
                              "        - matchFields: [{key: metadata.uid, operator: In, values: "
                              "[x]}]\n"),
                 "a.yaml:13:31: Pod/p.spec.affinity.nodeAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchFields[0].key: expected metadata.name (the one node field selectors read), "
                 "got \"metadata.uid\"");
    expect_error(AFF("    nodeAffinity:\n"
                     "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - {weight: 0, preference: {matchExpressions: [{key: z, operator: "
                     "Exists}]}}\n"),
                 "a.yaml:12:18: Pod/p.spec.affinity.nodeAffinity."
                 "preferredDuringSchedulingIgnoredDuringExecution[0].weight: expected an integer "
                 "from 1 to 100, got \"0\"");
    expect_error(AFF("    podAntiAffinity:\n"
                     "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - labelSelector: {matchLabels: {app: web}}\n"),
                 "a.yaml:12:9: Pod/p.spec.affinity.podAntiAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: can not be empty");
    expect_error(AFF("    podAffinity:\n"
                     "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                     "      - {topologyKey: zone, matchLabelKeys: [tier]}\n"),
                 "a.yaml:12:10: Pod/p.spec.affinity.podAffinity."
                 "requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys: must not be "
                 "specified when labelSelector is not set");
    expect_error(POD("  topologySpreadConstraints:\n"
                     "  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"),
                 "a.yaml:10:15: Pod/p.spec.topologySpreadConstraints[0].maxSkew: expected an "
                 "integer from 1 to 2147483647, got \"0\"");
    expect_error(POD("  topologySpreadConstraints:\n"
                     "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}\n"),
                 "a.yaml:10:56: Pod/p.spec.topologySpreadConstraints[0].whenUnsatisfiable: "
                 "expected DoNotSchedule or ScheduleAnyway, got \"Sometimes\"");
    expect_error(POD("  topologySpreadConstraints:\n"
                     "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, "
                     "minDomains: 2}\n"),
                 "a.yaml:10:84: Pod/p.spec.topologySpreadConstraints[0].minDomains: can only use "
                 "minDomains if whenUnsatisfiable=DoNotSchedule");
    expect_error(POD("  topologySpreadConstraints:\n"
                     "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
                     "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"),
                 "a.yaml:11:6: Pod/p.spec.topologySpreadConstraints[1]: a second constraint of "
                 "topologyKey zone and whenUnsatisfiable DoNotSchedule (the first is [0])");
    expect_error(POD("  topologySpreadConstraints:\n"
                     "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
                     "nodeTaintsPolicy: Always}\n"),
                 "a.yaml:10:89: Pod/p.spec.topologySpreadConstraints[0].nodeTaintsPolicy: "
                 "expected Honor or Ignore, got \"Always\"");
}

static void test_example(void **state)
{
    (void)state;
    /* examples/workload-affinity.yaml, read as the CLI reads it */
    struct gp_arena a;
    struct gp_workload w;
    struct gp_diag diag;
    gp_arena_init(&a);
    memset(&w, 0, sizeof w);
    enum gp_err err = gp_workload_load(GP_EXAMPLES_DIR "/workload-affinity.yaml", &a, &w, &diag);
    if (err == GP_OK)
        err = gp_workload_finish(&w, &a, &diag);
    if (err != GP_OK)
        print_error("%s\n", diag.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(w.nwarnings, 0);
    assert_int_equal(w.nitems, 6);
    const struct gp_pod_spec *chat = &w.items[0].pod, *cache = &w.items[1].pod,
                             *rerank = &w.items[2].pod, *train = &w.items[3].pod,
                             *etl = &w.items[4].pod, *audit = &w.items[5].pod;
    assert_int_equal(chat->priority, 1000);
    assert_string_equal(chat->namespace_name, "serving");
    assert_int_equal(chat->constraints->nspread, 1);
    assert_int_equal(chat->constraints->nanti_preferred, 1);
    assert_int_equal(cache->constraints->nanti, 1);
    assert_int_equal(rerank->constraints->nnode_required, 1);
    assert_int_equal(rerank->constraints->naffinity_preferred, 1);
    /* max(init 4, 64 + sidecar 8) + overhead 0.5; memory 512 + 32 + 1 Gi */
    assert_int_equal(train->cpu_milli, 72500);
    assert_int_equal(train->mem_mib, (512 + 32 + 1) * 1024);
    assert_int_equal(train->constraints->node_required[0].labels[0].op, GP_MATCH_GT);
    assert_int_equal(etl->priority, 10);
    assert_true(etl->preempt_never);
    assert_int_equal(etl->cpu_milli, 24000); /* limits only */
    assert_int_equal(audit->constraints->naffinity, 1);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_affinity), cmocka_unit_test(test_pod_affinity),
        cmocka_unit_test(test_spread),        cmocka_unit_test(test_controller_labels),
        cmocka_unit_test(test_errors),        cmocka_unit_test(test_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
