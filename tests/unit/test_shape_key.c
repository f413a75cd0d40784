/* test_shape_key.c - pods are one request shape when their requests say
 * the same, wherever their arrays live (src/engine/shape_key.c): the
 * readers give every pod its own copy of its tolerations, node selector,
 * affinity and MIG profile, and a real API server adds two tolerations
 * to every pod. Equal copies at other addresses are one shape, any
 * difference in what they say is another; copies cost what shared arrays
 * cost (the node index's ranking is reused: score calls counted), one
 * release after the cluster is full is one try, not one per pending pod;
 * and on seeded random workloads pods of copied templates get the binds
 * and first decisions that pods of templates made distinct by a label
 * nothing selects get (each its own shape, the behaviour before shapes
 * were compared by content). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "util/rng.h"

/* --- what the API server adds, and other arrays, in static storage ----- */

static const struct gp_toleration defaults[] = {
    {"node.kubernetes.io/not-ready", NULL, true, false, GP_EFFECT_NO_EXECUTE},
    {"node.kubernetes.io/unreachable", NULL, true, false, GP_EFFECT_NO_EXECUTE}};
static const struct gp_kv zone_a[] = {{"zone", "a"}};
static const char *const zone_vals[] = {"a", "b"};
static const struct gp_match_expr zone_in[] = {{"zone", GP_MATCH_IN, zone_vals, 2}};
static const struct gp_node_term zone_term[] = {{zone_in, 1, NULL, 0, 0}};
static const struct gp_kv app_x[] = {{"app", "x"}};
static const struct gp_spread spread_host[] = {
    {1, "kubernetes.io/hostname", true, {true, app_x, 1, NULL, 0}, 0, false, false}};
static const struct gp_pod_constraints cons = {
    .node_required = zone_term, .nnode_required = 1, .spread = spread_host, .nspread = 1};

/* Everything a test allocates, freed at its end. */
static void *owned[1 << 17];
static size_t nowned;

static void *keep(void *p)
{
    assert_non_null(p);
    assert_true(nowned < sizeof owned / sizeof owned[0]);
    owned[nowned++] = p;
    return p;
}

static void free_owned(void)
{
    while (nowned)
        free(owned[--nowned]);
}

static const char *dup_str(const char *s)
{
    return s ? keep(strdup(s)) : NULL;
}

static struct gp_toleration *dup_tols(const struct gp_toleration *t, size_t n)
{
    struct gp_toleration *c = keep(calloc(n ? n : 1, sizeof *c));
    for (size_t i = 0; i < n; i++) {
        c[i] = t[i];
        c[i].key = dup_str(t[i].key);
        c[i].value = dup_str(t[i].value);
    }
    return c;
}

static struct gp_kv *dup_kv(const struct gp_kv *kv, size_t n)
{
    struct gp_kv *c = keep(calloc(n ? n : 1, sizeof *c));
    for (size_t i = 0; i < n; i++) {
        c[i].key = dup_str(kv[i].key);
        c[i].value = dup_str(kv[i].value);
    }
    return c;
}

/* A deep copy of cons, every part of it at hand to be changed. */
struct cons_copy {
    struct gp_pod_constraints c;
    struct gp_node_term term;
    struct gp_match_expr expr;
    const char *values[2];
    struct gp_spread spread;
    struct gp_kv *sel;
};

static struct cons_copy *dup_cons(void)
{
    struct cons_copy *cc = keep(calloc(1, sizeof *cc));
    cc->c = cons;
    cc->term = zone_term[0];
    cc->expr = zone_in[0];
    cc->expr.key = dup_str(zone_in[0].key);
    for (size_t i = 0; i < 2; i++)
        cc->values[i] = dup_str(zone_vals[i]);
    cc->expr.values = cc->values;
    cc->term.labels = &cc->expr;
    cc->c.node_required = &cc->term;
    cc->spread = spread_host[0];
    cc->spread.topology_key = dup_str(spread_host[0].topology_key);
    cc->sel = dup_kv(app_x, 1);
    cc->spread.selector.labels = cc->sel;
    cc->c.spread = &cc->spread;
    return cc;
}

static struct gp_pod_spec base_pod(void)
{
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1;
    s.gpu_milli = GP_GPU_MILLI;
    s.tolerations = defaults;
    s.ntolerations = 2;
    s.node_selector = zone_a;
    s.nnode_selector = 1;
    s.constraints = &cons;
    s.labels = app_x;
    s.nlabels = 1;
    return s;
}

/* The same pod, every array and string its own copy. */
static struct gp_pod_spec copied(struct gp_pod_spec s)
{
    s.tolerations = dup_tols(s.tolerations, s.ntolerations);
    s.node_selector = dup_kv(s.node_selector, s.nnode_selector);
    s.labels = dup_kv(s.labels, s.nlabels);
    if (s.constraints)
        s.constraints = &dup_cons()->c; /* the only constraints the tests use */
    s.mig_profile = dup_str(s.mig_profile);
    s.namespace_name = dup_str(s.namespace_name);
    return s;
}

static uint32_t shape_of(struct gp_engine *e, const struct gp_pod_spec *s)
{
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, s, 0, &id), GP_OK);
    return pod_at(e, id)->shape;
}

/* --- equal copies are one shape, any difference another ---------------- */

static void test_copies_one_shape(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_non_null(e);
    struct gp_pod_spec a = base_pod();
    uint32_t sa = shape_of(e, &a);
    struct gp_pod_spec b = copied(a);
    assert_ptr_not_equal(b.tolerations, a.tolerations);
    assert_ptr_not_equal(b.tolerations[0].key, a.tolerations[0].key);
    assert_int_equal(shape_of(e, &b), sa);
    struct gp_pod_spec ns = copied(a); /* no namespace is "default" */
    ns.namespace_name = "default";
    assert_int_equal(shape_of(e, &ns), sa);

    /* each of these says something else: a shape of its own */
    struct gp_pod_spec v[14];
    for (size_t i = 0; i < 14; i++) {
        struct gp_toleration *t = dup_tols(defaults, 2);
        struct gp_kv *sel = dup_kv(zone_a, 1), *lab = dup_kv(app_x, 1);
        struct cons_copy *c = dup_cons();
        switch (i) {
        case 0:
            t[1].value = "";
            break; /* NULL is not "" */
        case 1:
            t[1].op_exists = false;
            break;
        case 2:
            t[1].any_effect = true;
            break;
        case 3:
            t[0].effect = GP_EFFECT_NO_SCHEDULE;
            break;
        case 4:
            t[0].key = "node.kubernetes.io/not-read";
            break;
        case 5:
            break; /* one toleration: below */
        case 6:
            sel[0].value = "b";
            break;
        case 7:
            sel[0].key = "zone2";
            break;
        case 8:
            c->expr.op = GP_MATCH_NOT_IN;
            break;
        case 9:
            c->values[1] = "c";
            break;
        case 10:
            c->spread.max_skew = 2;
            break;
        case 11:
            c->sel[0].value = "y";
            break;
        case 12:
            break; /* no constraints: below */
        default:
            lab[0].value = "y";
            break;
        }
        v[i] = a;
        v[i].tolerations = t;
        v[i].ntolerations = i == 5 ? 1 : 2;
        v[i].node_selector = sel;
        v[i].labels = lab;
        v[i].constraints = i == 12 ? NULL : &c->c;
    }
    uint32_t seen[15];
    seen[0] = sa;
    for (size_t i = 0; i < 14; i++) {
        seen[i + 1] = shape_of(e, &v[i]);
        for (size_t j = 0; j <= i; j++)
            if (seen[i + 1] == seen[j]) {
                print_error("variant %zu is the shape of %zu\n", i, j);
                fail();
            }
    }
    /* and an equal copy of a variant is that variant's shape */
    struct gp_pod_spec v6 = copied(v[6]);
    assert_int_equal(shape_of(e, &v6), seen[7]);

    /* a MIG profile by what it names */
    struct gp_pod_spec m = base_pod();
    m.gpu_milli = 142;
    m.gpu_mem_mib = 10240;
    m.share_modes = 1u << GP_SHARE_MIG;
    char prof[] = "1g.10gb";
    m.mig_profile = prof;
    uint32_t sm = shape_of(e, &m);
    struct gp_pod_spec m2 = copied(m);
    assert_int_equal(shape_of(e, &m2), sm);
    m2 = copied(m);
    m2.mig_profile = "2g.20gb";
    assert_int_not_equal(shape_of(e, &m2), sm);
    gp_engine_free(e);
    free_owned();
}

/* --- copies cost what shared arrays cost -------------------------------- */

static const struct gp_policy_ops *wrapped;
static unsigned long score_calls;

static double counting_score(void *st, const struct gp_engine *e, const struct gp_node *node,
                             const struct gp_pod *pod, struct gp_pick *pick)
{
    score_calls++;
    return wrapped->score(st, e, node, pod, pick);
}

#define FILL_NODES 100
#define FILL_PODS  1000 /* 800 GPUs: 200 wait */

static char fill_names[FILL_NODES][16];
static struct gp_decision fill_out[FILL_PODS];

struct fill {
    unsigned long calls_fill, calls_release;
    size_t ndec_fill, ndec_release, binds_release;
};

/* Pods of one GPU that carry the API server's two tolerations, shared or
 * each its own copy, fill FILL_NODES nodes of 8 GPUs; then one ends. */
static struct fill fill_run(bool copy)
{
    wrapped = gp_policy_find("best-fit");
    assert_non_null(wrapped);
    struct gp_policy_ops ops = *wrapped;
    ops.score = counting_score;
    struct gp_engine *e = gp_engine_new(&ops, 1);
    assert_non_null(e);
    for (uint32_t i = 0; i < FILL_NODES; i++) {
        snprintf(fill_names[i], sizeof fill_names[i], "n%u", i);
        struct gp_node_spec n;
        memset(&n, 0, sizeof n);
        n.name = fill_names[i];
        n.gpu_model = "A100-80GB";
        n.gpu_count = 8;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 64000;
        n.mem_mib = 512000;
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    s.cpu_milli = 100;
    s.mem_mib = 100;
    s.gpu_count = 1;
    s.gpu_milli = GP_GPU_MILLI;
    s.tolerations = defaults;
    s.ntolerations = 2;
    for (size_t i = 0; i < FILL_PODS; i++) {
        struct gp_pod_spec c = s;
        if (copy)
            c.tolerations = dup_tols(defaults, 2);
        assert_int_equal(gp_engine_pod_add(e, &c, 0, NULL), GP_OK);
    }
    struct fill f;
    score_calls = 0;
    f.ndec_fill = gp_engine_schedule(e, 1, 0, fill_out, FILL_PODS);
    f.calls_fill = score_calls;
    uint32_t victim = NONE;
    for (size_t k = 0; k < f.ndec_fill && victim == NONE; k++)
        if (fill_out[k].kind == GP_DECISION_BIND)
            victim = fill_out[k].pod;
    assert_int_not_equal(victim, NONE);
    assert_int_equal(gp_engine_pod_finished(e, victim), GP_OK);
    score_calls = 0;
    f.ndec_release = gp_engine_schedule(e, 2, 0, fill_out, FILL_PODS);
    f.calls_release = score_calls;
    f.binds_release = 0;
    for (size_t k = 0; k < f.ndec_release; k++)
        f.binds_release += fill_out[k].kind == GP_DECISION_BIND;
    gp_engine_free(e);
    free_owned();
    return f;
}

static void test_copies_cost_as_shared(void **state)
{
    (void)state;
    struct fill shared = fill_run(false), copies = fill_run(true);
    print_message("shared: %lu score calls, %zu decisions; after a release %zu decisions, %lu "
                  "calls\ncopies: %lu score calls, %zu decisions; after a release %zu decisions, "
                  "%lu calls\n",
                  shared.calls_fill, shared.ndec_fill, shared.ndec_release, shared.calls_release,
                  copies.calls_fill, copies.ndec_fill, copies.ndec_release, copies.calls_release);
    assert_int_equal(copies.ndec_fill, shared.ndec_fill);
    /* the ranking made on the shape's second placement serves the rest:
     * far below a scan of every node for each of the 800 binds */
    assert_true(copies.calls_fill == shared.calls_fill);
    assert_true(copies.calls_fill < (unsigned long)FILL_NODES * 800 / 10);
    /* one GPU back: one bind, and the shape's next pod tried once at most */
    assert_int_equal(copies.binds_release, 1);
    assert_int_equal(copies.ndec_release, shared.ndec_release);
    assert_true(copies.ndec_release <= 2);
}

/* --- seeded random workloads: copies decide as distinct shapes do ------- */

#define RAND_NODES 24
#define RAND_DEC   60000

static char rand_names[RAND_NODES][16];
static const struct gp_kv zone_b[] = {{"zone", "b"}};
static const struct gp_taint spot_taint[] = {{"spot", "true", GP_EFFECT_NO_SCHEDULE}};
static const struct gp_toleration spot_tols[] = {
    {"node.kubernetes.io/not-ready", NULL, true, false, GP_EFFECT_NO_EXECUTE},
    {"spot", "true", false, false, GP_EFFECT_NO_SCHEDULE}};

/* Template k of 9 (what a Deployment's pods share): 0-5 in pairs that
 * differ in their tolerations alone, 6 and 7 in their selector's value, 8
 * is 0 with constraints. */
#define NTEMPLATES 9
static struct gp_pod_spec template_pod(size_t k)
{
    static const uint32_t gpus[] = {1, 1, 2, 2, 8, 8, 1, 1, 1};
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    s.cpu_milli = 2000;
    s.mem_mib = 16384;
    s.gpu_count = gpus[k];
    s.gpu_milli = GP_GPU_MILLI;
    s.tolerations = k < 6 && k % 2 ? spot_tols : defaults;
    s.ntolerations = 2;
    if (k == 6 || k == 7) {
        s.node_selector = k == 6 ? zone_a : zone_b;
        s.nnode_selector = 1;
    }
    if (k == 8)
        s.constraints = &cons;
    if (k == 8 || k == 2) { /* what cons spreads */
        s.labels = app_x;
        s.nlabels = 1;
    }
    return s;
}

static struct gp_decision rand_out[RAND_DEC];

/* Binds in order (pod, node, GPUs) and each pod's first decision (its
 * kind: the counts of a pod whose shape failed earlier in the cycle are
 * that failure's, as for pods sharing a template's arrays), as one text;
 * distinct: every pod has a label of its own. */
static char *rand_run(uint64_t seed, bool distinct)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), seed);
    assert_non_null(e);
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    for (uint32_t i = 0; i < RAND_NODES; i++) {
        snprintf(rand_names[i], sizeof rand_names[i], "n%u", i);
        struct gp_node_spec n;
        memset(&n, 0, sizeof n);
        n.name = rand_names[i];
        n.gpu_model = "A100-80GB";
        n.gpu_count = gp_rng_below(&r, 3) ? 8 : 4;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 32000;
        n.mem_mib = 262144;
        n.labels = i % 2 ? zone_b : zone_a;
        n.nlabels = 1;
        if (gp_rng_below(&r, 4) == 0) {
            n.taints = spot_taint;
            n.ntaints = 1;
        }
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    size_t cap = 1 << 20, len = 0;
    char *text = keep(malloc(cap));
    text[0] = '\0';
    static bool decided[20000];
    memset(decided, 0, sizeof decided);
    uint32_t bound[20000];
    size_t nbound = 0, npods = 0;
    for (int step = 0; step < 60; step++) {
        uint64_t adds = gp_rng_below(&r, 40);
        for (uint64_t k = 0; k < adds; k++) {
            struct gp_pod_spec s = copied(template_pod(gp_rng_below(&r, NTEMPLATES)));
            if (distinct) { /* a label of its own, that nothing selects */
                struct gp_kv *kv = keep(calloc(s.nlabels + 1, sizeof *kv));
                memcpy(kv, s.labels, s.nlabels * sizeof *kv);
                char v[32];
                snprintf(v, sizeof v, "%zu", npods);
                kv[s.nlabels] = (struct gp_kv){"test.gpuplane.io/pod", dup_str(v)};
                s.labels = kv;
                s.nlabels++;
            }
            assert_int_equal(gp_engine_pod_add(e, &s, step, NULL), GP_OK);
            npods++;
        }
        size_t n = gp_engine_schedule(e, step, 0, rand_out, RAND_DEC);
        assert_true(n < RAND_DEC);
        for (size_t k = 0; k < n; k++) {
            const struct gp_decision *d = &rand_out[k];
            char line[160];
            int w = 0;
            if (d->kind == GP_DECISION_BIND) {
                w = snprintf(line, sizeof line, "bind %u node %u gpus", d->pod, d->node);
                for (unsigned g = 0; g < d->pick.ngpus; g++)
                    w += snprintf(line + w, sizeof line - (size_t)w, " %u", d->pick.gpu[g]);
                bound[nbound++] = d->pod;
            } else if (!decided[d->pod]) {
                w = snprintf(line, sizeof line, "first %u kind %d of %u", d->pod, d->kind,
                             d->explain.nodes_total);
            }
            decided[d->pod] = true;
            if (w > 0) {
                assert_true(len + (size_t)w + 2 < cap);
                memcpy(text + len, line, (size_t)w);
                len += (size_t)w;
                text[len++] = '\n';
                text[len] = '\0';
            }
        }
        for (uint64_t k = gp_rng_below(&r, 8); k > 0 && nbound > 0; k--) { /* some end */
            size_t i = gp_rng_below(&r, nbound);
            assert_int_equal(gp_engine_pod_finished(e, bound[i]), GP_OK);
            bound[i] = bound[--nbound];
        }
    }
    gp_engine_free(e);
    return text;
}

static void test_copies_decide_as_distinct(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        const char *a = rand_run(seed, false), *b = rand_run(seed, true);
        if (strcmp(a, b) != 0) {
            size_t i = 0;
            while (a[i] == b[i])
                i++;
            while (i > 0 && a[i - 1] != '\n')
                i--;
            print_error("seed %llu: copies '%.60s', distinct shapes '%.60s'\n",
                        (unsigned long long)seed, a + i, b + i);
            fail();
        }
        assert_true(strstr(a, "bind ") != NULL);
        assert_true(strstr(a, "first ") != NULL);
        free_owned();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_one_shape),
        cmocka_unit_test(test_copies_cost_as_shared),
        cmocka_unit_test(test_copies_decide_as_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
