/* test_interpod_ns.c - a pod affinity term's namespaceSelector against
 * the namespaces' labels (engine/namespaces.c, gp_engine_namespace_set),
 * as kube-scheduler's InterPodAffinity reads the Namespace objects: a
 * bound pod's term selects the incoming pod by its namespace's labels
 * (GetNamespaceLabelsSnapshot), a pod's own term counts the bound pods of
 * the namespaces whose labels it selects; a change of the labels is seen
 * by the next decision both ways (the tallies counted again); the
 * simulator's fallback (no namespace given: the name's label alone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

#define HOST "kubernetes.io/hostname"
#define NSL  "kubernetes.io/metadata.name"

static const struct gp_kv node_l[] = {{HOST, "n0"}};
static const struct gp_kv app_db[] = {{"app", "db"}}, app_x[] = {{"app", "x"}};
static const struct gp_kv prod[] = {{"env", "prod"}}, dev[] = {{"env", "dev"}};
static const struct gp_kv team_prod[] = {{NSL, "team"}, {"env", "prod"}},
                          team_dev[] = {{NSL, "team"}, {"env", "dev"}},
                          other_dev[] = {{NSL, "other"}, {"env", "dev"}};
static const struct gp_kv by_name[] = {{NSL, "team"}};

/* One node of 8 GPUs. */
static struct gp_engine *one_node(void)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    struct gp_node_spec n = {0};
    n.name = "n0";
    n.gpu_model = "H100";
    n.gpu_count = 8;
    n.gpu_mem_mib = 81920;
    n.cpu_milli = 64000;
    n.mem_mib = 1 << 20;
    n.labels = node_l;
    n.nlabels = 1;
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    return e;
}

static struct gp_pod_term term_db(const struct gp_kv *ns_sel)
{
    struct gp_pod_term t = {0};
    t.selector.set = true;
    t.selector.labels = app_db;
    t.selector.nlabels = 1;
    t.ns_selector.set = true;
    t.ns_selector.labels = ns_sel;
    t.ns_selector.nlabels = 1;
    t.topology_key = HOST;
    return t;
}

static uint32_t add(struct gp_engine *e, const char *ns, const struct gp_kv *labels,
                    const struct gp_pod_constraints *c)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.namespace_name = ns;
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1;
    s.gpu_milli = GP_GPU_MILLI;
    s.labels = labels;
    s.nlabels = 1;
    s.constraints = c;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &id), GP_OK);
    return id;
}

static struct gp_decision d[16];

/* One cycle; the decision of pod id (kind BIND or UNSCHEDULABLE). */
static const struct gp_decision *cycle_for(struct gp_engine *e, uint32_t id)
{
    size_t n = gp_engine_schedule(e, 0, 0, d, 16);
    for (size_t i = 0; i < n; i++)
        if (d[i].pod == id)
            return &d[i];
    return NULL;
}

static bool bound(const struct gp_engine *e, uint32_t id)
{
    return gp_engine_pod(e, id)->state == GP_POD_BOUND;
}

/* A bound pod's term reads the incoming pod's namespace's labels. */
static void test_existing_term_reads_labels(void **state)
{
    (void)state;
    struct gp_engine *e = one_node();
    assert_int_equal(gp_engine_namespace_set(e, "team", team_prod, 2), GP_OK);
    assert_int_equal(gp_engine_namespace_set(e, "other", other_dev, 2), GP_OK);
    struct gp_pod_term t = term_db(prod);
    struct gp_pod_constraints c = {0};
    c.anti = &t;
    c.nanti = 1;
    uint32_t guard = add(e, "default", app_x, &c);
    cycle_for(e, guard);
    assert_true(bound(e, guard));
    uint32_t tp = add(e, "team", app_db, NULL), op = add(e, "other", app_db, NULL);
    const struct gp_decision *x = cycle_for(e, tp);
    assert_non_null(x);
    assert_int_equal(x->kind, GP_DECISION_UNSCHEDULABLE); /* team is env=prod */
    assert_int_equal(x->explain.rejected[GP_FILTER_EXISTING_ANTI_AFFINITY], 1);
    assert_true(bound(e, op)); /* other is env=dev */
    /* the same labels again: nothing changes */
    assert_int_equal(gp_engine_namespace_set(e, "team", team_prod, 2), GP_OK);
    cycle_for(e, tp);
    assert_false(bound(e, tp));
    /* team relabelled env=dev: the next cycle binds its pod */
    assert_int_equal(gp_engine_namespace_set(e, "team", team_dev, 2), GP_OK);
    cycle_for(e, tp);
    assert_true(bound(e, tp));
    gp_engine_free(e);
}

/* A pod's own term counts the bound pods of the namespaces its selector
 * selects, counted again when a namespace's labels change or it goes. */
static void test_own_term_recounted(void **state)
{
    (void)state;
    struct gp_engine *e = one_node();
    assert_int_equal(gp_engine_namespace_set(e, "team", team_prod, 2), GP_OK);
    uint32_t db = add(e, "team", app_db, NULL);
    cycle_for(e, db);
    assert_true(bound(e, db));
    struct gp_pod_term t = term_db(prod);
    struct gp_pod_constraints c = {0};
    c.anti = &t;
    c.nanti = 1;
    uint32_t x1 = add(e, "default", app_x, &c);
    const struct gp_decision *x = cycle_for(e, x1);
    assert_non_null(x);
    assert_int_equal(x->kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(x->explain.rejected[GP_FILTER_POD_ANTI_AFFINITY], 1);
    assert_int_equal(gp_engine_namespace_set(e, "team", team_dev, 2), GP_OK);
    cycle_for(e, x1);
    assert_true(bound(e, x1)); /* db's pod no longer counts */
    /* back to prod: counted again, a second pod alike is kept off */
    assert_int_equal(gp_engine_namespace_set(e, "team", team_prod, 2), GP_OK);
    uint32_t x2 = add(e, "default", app_x, &c);
    cycle_for(e, x2);
    assert_false(bound(e, x2));
    /* the namespace deleted: no labels, nothing selected */
    assert_int_equal(gp_engine_namespace_delete(e, "team"), GP_OK);
    assert_int_equal(gp_engine_namespace_delete(e, "team"), GP_ENOTFOUND);
    cycle_for(e, x2);
    assert_true(bound(e, x2));
    gp_engine_free(e);
}

/* No namespace given (the simulator): each has its name's label alone;
 * once given, the labels as given (the API server's name label among
 * them, which the live scheduler passes on). */
static void test_fallback_name_label(void **state)
{
    (void)state;
    struct gp_engine *e = one_node();
    uint32_t db = add(e, "team", app_db, NULL);
    cycle_for(e, db);
    struct gp_pod_term t = term_db(by_name);
    struct gp_pod_constraints c = {0};
    c.anti = &t;
    c.nanti = 1;
    uint32_t x1 = add(e, "default", app_x, &c);
    cycle_for(e, x1);
    assert_false(bound(e, x1)); /* team's name label selects it */
    assert_int_equal(gp_engine_namespace_set(e, "team", dev, 1), GP_OK);
    cycle_for(e, x1);
    assert_true(bound(e, x1)); /* given without the name label: not selected */
    assert_int_equal(gp_engine_namespace_set(e, "", dev, 1), GP_EINVALID);
    assert_int_equal(gp_engine_namespace_set(e, "a", NULL, 1), GP_EINVALID);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_existing_term_reads_labels),
        cmocka_unit_test(test_own_term_recounted),
        cmocka_unit_test(test_fallback_name_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
