/* test_affinity.c - kube-scheduler's NodeAffinity, InterPodAffinity and
 * PodTopologySpread in the engine, each rule set up so that breaking it
 * changes the outcome (worked by hand in the comments): the node selector
 * operators and how terms combine, required pod affinity (an unmatched
 * selector stays pending with kube-scheduler's words; the first of a
 * group that wants itself), anti-affinity on hostname (one replica per
 * node) and its symmetry, spreading over two zones (5 pods: 3 and 2),
 * minDomains, the inclusion policies, a bind that lets a waiting pod fit,
 * and the preferences added to the policy's score. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

#define ZONE "topology.kubernetes.io/zone"
#define HOST "kubernetes.io/hostname"

/* Nodes n0..n3: zone a (n0, n1) and b (n2, n3), a "gen" label 3, 5, 7, 9
 * (for Gt, Lt) and n3 "ssd". */
static const struct gp_kv l0[] = {{ZONE, "a"}, {"gen", "3"}}, l1[] = {{ZONE, "a"}, {"gen", "5"}},
                          l2[] = {{ZONE, "b"}, {"gen", "7"}},
                          l3[] = {{ZONE, "b"}, {"gen", "x9"}, {"ssd", "true"}};
static const struct gp_kv *const labels[] = {l0, l1, l2, l3};
static const size_t nlabels[] = {2, 2, 2, 3};
static const char *const names[] = {"n0", "n1", "n2", "n3"};

static struct gp_engine *cluster(size_t nodes, uint32_t gpus, const char *policy)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find(policy), 1);
    assert_non_null(e);
    for (size_t i = 0; i < nodes; i++) {
        struct gp_node_spec s = {0};
        s.name = names[i];
        s.gpu_model = "H100";
        s.gpu_count = gpus;
        s.gpu_mem_mib = 81920;
        s.cpu_milli = 64000;
        s.mem_mib = 1 << 20;
        s.labels = labels[i];
        s.nlabels = nlabels[i];
        assert_int_equal(gp_engine_node_add(e, &s, NULL), GP_OK);
    }
    return e;
}

static struct gp_pod_spec pod(const struct gp_kv *l, size_t nl, const struct gp_pod_constraints *c)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1;
    s.gpu_milli = GP_GPU_MILLI;
    s.labels = l;
    s.nlabels = nl;
    s.constraints = c;
    return s;
}

static uint32_t add(struct gp_engine *e, const struct gp_pod_spec *s)
{
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, s, 0, &id), GP_OK);
    return id;
}

static struct gp_decision d[64];

/* One cycle; returns the decisions' count. */
static size_t cycle(struct gp_engine *e)
{
    return gp_engine_schedule(e, 0, 0, d, 64);
}

static int node_of(const struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = gp_engine_pod(e, pod);
    return p->state == GP_POD_BOUND ? (int)p->node : -1;
}

/* n0, n1: zone 0 (a); n2, n3: zone 1 (b); -1: not bound */
static int zone_of(const struct gp_engine *e, uint32_t pod)
{
    int node = node_of(e, pod);
    return node < 0 ? -1 : node / 2;
}

static const struct gp_decision *decision_of(size_t n, uint32_t pod)
{
    for (size_t i = 0; i < n; i++)
        if (d[i].pod == pod)
            return &d[i];
    return NULL;
}

/* --- node affinity ------------------------------------------------------- */

static const char *const v_a[] = {"a"}, *const v_b[] = {"b"}, *const v_4[] = {"4"},
                         *const v_5[] = {"5"}, *const v_8[] = {"8"}, *const v_n1[] = {"n1"},
                         *const v_true[] = {"true"};

/* The nodes (bits) a pod with one required term of these expressions may use. */
static unsigned fits(const struct gp_match_expr *x, size_t nx, const struct gp_match_expr *f,
                     size_t nf)
{
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_node_term t = {x, nx, f, nf, 0};
    struct gp_pod_constraints c = {0};
    c.node_required = &t;
    c.nnode_required = 1;
    struct gp_pod_spec s = pod(NULL, 0, &c);
    const struct gp_pod *p = gp_engine_pod(e, add(e, &s));
    unsigned mask = 0;
    for (uint32_t i = 0; i < 4; i++) {
        enum gp_filter r = gp_engine_filter(e, gp_engine_node(e, i), p);
        assert_true(r == GP_FILTER_COUNT || r == GP_FILTER_NODE_AFFINITY);
        mask |= (unsigned)(r == GP_FILTER_COUNT) << i;
    }
    gp_engine_free(e);
    return mask;
}

static void test_node_operators(void **state)
{
    (void)state;
    struct gp_match_expr in = {ZONE, GP_MATCH_IN, v_a, 1};
    assert_int_equal(fits(&in, 1, NULL, 0), 0x3);
    struct gp_match_expr notin = {ZONE, GP_MATCH_NOT_IN, v_a, 1};
    assert_int_equal(fits(&notin, 1, NULL, 0), 0xc);
    struct gp_match_expr notin_absent = {"ssd", GP_MATCH_NOT_IN, v_true, 1};
    assert_int_equal(fits(&notin_absent, 1, NULL, 0), 0x7); /* absent keys are not in */
    struct gp_match_expr exists = {"ssd", GP_MATCH_EXISTS, NULL, 0};
    assert_int_equal(fits(&exists, 1, NULL, 0), 0x8);
    struct gp_match_expr absent = {"ssd", GP_MATCH_DOES_NOT_EXIST, NULL, 0};
    assert_int_equal(fits(&absent, 1, NULL, 0), 0x7);
    struct gp_match_expr gt = {"gen", GP_MATCH_GT, v_5, 1};
    assert_int_equal(fits(&gt, 1, NULL, 0), 0x4); /* 7, not 5; "x9" is no integer */
    struct gp_match_expr lt = {"gen", GP_MATCH_LT, v_8, 1};
    assert_int_equal(fits(&lt, 1, NULL, 0), 0x7); /* 3, 5, 7 */
    struct gp_match_expr both[] = {{"gen", GP_MATCH_GT, v_4, 1}, {"gen", GP_MATCH_LT, v_8, 1}};
    assert_int_equal(fits(both, 2, NULL, 0), 0x6);            /* ANDed: 5 and 7 */
    struct gp_match_expr host = {HOST, GP_MATCH_IN, v_n1, 1}; /* the kubelet's label */
    assert_int_equal(fits(&host, 1, NULL, 0), 0x2);
    struct gp_match_expr field = {"metadata.name", GP_MATCH_IN, v_n1, 1};
    assert_int_equal(fits(NULL, 0, &field, 1), 0x2);
    struct gp_match_expr not_field = {"metadata.name", GP_MATCH_NOT_IN, v_n1, 1};
    assert_int_equal(fits(&in, 1, &not_field, 1), 0x1); /* zone a, not n1 */
    assert_int_equal(fits(NULL, 0, NULL, 0), 0x0);      /* an empty term: no node */
}

static void test_node_terms_ored(void **state)
{
    (void)state;
    /* terms are ORed: gen > 6, or zone a; an empty term adds nothing */
    struct gp_match_expr big = {"gen", GP_MATCH_GT, (const char *const[]){"6"}, 1};
    struct gp_match_expr in_a = {ZONE, GP_MATCH_IN, v_a, 1};
    struct gp_node_term t[] = {
        {&big, 1, NULL, 0, 0}, {NULL, 0, NULL, 0, 0}, {&in_a, 1, NULL, 0, 0}};
    struct gp_pod_constraints c = {0};
    c.node_required = t;
    c.nnode_required = 3;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec s = pod(NULL, 0, &c);
    const struct gp_pod *p = gp_engine_pod(e, add(e, &s));
    static const enum gp_filter want[] = {GP_FILTER_COUNT, GP_FILTER_COUNT, GP_FILTER_COUNT,
                                          GP_FILTER_NODE_AFFINITY};
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(gp_engine_filter(e, gp_engine_node(e, i), p), want[i]);
    /* and with a node selector too: both must hold */
    static const struct gp_kv sel[] = {{ZONE, "b"}};
    s.node_selector = sel;
    s.nnode_selector = 1;
    p = gp_engine_pod(e, add(e, &s));
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, 0), p), GP_FILTER_SELECTOR);
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, 2), p), GP_FILTER_COUNT);
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, 3), p), GP_FILTER_NODE_AFFINITY);
    assert_string_equal(gp_filter_text(GP_FILTER_NODE_AFFINITY),
                        "node(s) didn't match Pod's node affinity/selector");
    gp_engine_free(e);
}

static void test_node_preferred(void **state)
{
    (void)state;
    /* best-fit packs: the second pod goes where the first is (n0). A
     * preferred term for zone b (weight 10) outweighs it: NodeAffinity
     * scores n2, n3 100, x 2 = 200 > best-fit's few points */
    struct gp_match_expr in_b = {ZONE, GP_MATCH_IN, v_b, 1};
    struct gp_match_expr ssd = {"ssd", GP_MATCH_EXISTS, NULL, 0};
    struct gp_node_term pref[] = {{&in_b, 1, NULL, 0, 10}};
    struct gp_pod_constraints c = {0};
    c.node_preferred = pref;
    c.nnode_preferred = 1;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec plain = pod(NULL, 0, NULL), s = pod(NULL, 0, &c);
    uint32_t a = add(e, &plain);
    cycle(e);
    assert_int_equal(node_of(e, a), 0);
    uint32_t b = add(e, &plain), p = add(e, &s);
    cycle(e);
    assert_int_equal(node_of(e, b), 0); /* the control */
    assert_int_equal(node_of(e, p), 2); /* zone b; n2 before n3 on ties */
    /* weights: zone b (10) against ssd (80): n3 has both, 90 > 10 */
    struct gp_node_term two[] = {{&in_b, 1, NULL, 0, 10}, {&ssd, 1, NULL, 0, 80}};
    c.node_preferred = two;
    c.nnode_preferred = 2;
    uint32_t q = add(e, &s);
    cycle(e);
    assert_int_equal(node_of(e, q), 3);
    gp_engine_free(e);
}

/* --- pod affinity ---------------------------------------------------------- */

static const struct gp_kv app_web[] = {{"app", "web"}}, app_db[] = {{"app", "db"}},
                          app_x[] = {{"app", "x"}};

static struct gp_pod_term term(const struct gp_kv *match, const char *key, int32_t weight)
{
    struct gp_pod_term t = {0};
    t.selector.set = true;
    t.selector.labels = match;
    t.selector.nlabels = 1;
    t.topology_key = key;
    t.weight = weight;
    return t;
}

static void test_affinity_unmatched(void **state)
{
    (void)state;
    /* wants a pod app=x in its zone; there is none, and it is not app=x
     * itself: pending, every node rejected with kube-scheduler's words */
    struct gp_pod_term t = term(app_x, ZONE, 0);
    struct gp_pod_constraints c = {0};
    c.affinity = &t;
    c.naffinity = 1;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec s = pod(app_web, 1, &c);
    uint32_t p = add(e, &s);
    size_t n = cycle(e);
    const struct gp_decision *x = decision_of(n, p);
    assert_non_null(x);
    assert_int_equal(x->kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(x->explain.rejected[GP_FILTER_POD_AFFINITY], 4);
    assert_int_equal(gp_explain_main(&x->explain), GP_FILTER_POD_AFFINITY);
    assert_string_equal(gp_filter_text(GP_FILTER_POD_AFFINITY),
                        "node(s) didn't match pod affinity rules");
    /* an app=x pod arrives and binds (zone b: n2, by a selector); the
     * waiting pod follows it into zone b at the next cycle, though
     * nothing was released (a bind can let such a pod fit) */
    static const struct gp_kv in_b[] = {{ZONE, "b"}};
    struct gp_pod_spec x_pod = pod(app_x, 1, NULL);
    x_pod.node_selector = in_b;
    x_pod.nnode_selector = 1;
    x_pod.cpu_milli = 2000; /* another shape */
    uint32_t xp = add(e, &x_pod);
    cycle(e);
    assert_int_equal(node_of(e, xp), 2);
    cycle(e);
    assert_true(node_of(e, p) == 2 || node_of(e, p) == 3);
    gp_engine_free(e);
}

static void test_affinity_to_itself(void **state)
{
    (void)state;
    /* replicas of app=db that want to share a zone with app=db: the first
     * goes anywhere (no such pod exists, and it matches its own term),
     * the others follow it into its zone */
    struct gp_pod_term t = term(app_db, ZONE, 0);
    struct gp_pod_constraints c = {0};
    c.affinity = &t;
    c.naffinity = 1;
    struct gp_engine *e = cluster(4, 1, "spread"); /* spread would use every node */
    struct gp_pod_spec s = pod(app_db, 1, &c);
    uint32_t ids[2];
    for (int i = 0; i < 2; i++)
        ids[i] = add(e, &s);
    cycle(e);
    cycle(e);
    int z0 = zone_of(e, ids[0]), z1 = zone_of(e, ids[1]);
    assert_true(node_of(e, ids[0]) >= 0 && node_of(e, ids[1]) >= 0);
    assert_int_equal(z0, z1);
    /* a third cannot: its zone is full (one GPU a node) */
    uint32_t third = add(e, &s);
    size_t n = cycle(e);
    assert_int_equal(node_of(e, third), -1);
    assert_int_equal(decision_of(n, third)->kind, GP_DECISION_UNSCHEDULABLE);
    gp_engine_free(e);
}

static void test_anti_affinity_hostname(void **state)
{
    (void)state;
    /* five replicas that refuse to share a node with one another, on four
     * nodes that would each hold all five (best-fit packs them on n0): one
     * per node, the fifth pending with kube-scheduler's words */
    struct gp_pod_term t = term(app_web, HOST, 0);
    struct gp_pod_constraints c = {0};
    c.anti = &t;
    c.nanti = 1;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec s = pod(app_web, 1, &c);
    uint32_t ids[5];
    for (int i = 0; i < 5; i++)
        ids[i] = add(e, &s);
    size_t n = cycle(e); /* each is tried once, in order */
    unsigned used = 0;
    for (int i = 0; i < 4; i++) {
        int node = node_of(e, ids[i]);
        assert_true(node >= 0);
        assert_false(used >> node & 1);
        used |= 1u << node;
    }
    assert_int_equal(node_of(e, ids[4]), -1);
    const struct gp_decision *x = decision_of(n, ids[4]);
    assert_non_null(x);
    assert_int_equal(gp_explain_main(&x->explain), GP_FILTER_POD_ANTI_AFFINITY);
    /* symmetry: a pod with no affinity of its own but app=web may not go
     * where a pod holding the anti-affinity term runs */
    struct gp_pod_spec plain = pod(app_web, 1, NULL);
    plain.cpu_milli = 3000;
    uint32_t q = add(e, &plain);
    n = cycle(e);
    x = decision_of(n, q);
    assert_non_null(x);
    assert_int_equal(x->explain.rejected[GP_FILTER_EXISTING_ANTI_AFFINITY], 4);
    assert_string_equal(gp_filter_text(GP_FILTER_EXISTING_ANTI_AFFINITY),
                        "node(s) didn't satisfy existing pods anti-affinity rules");
    /* one replica ends: its node takes the waiting replica (a release) */
    gp_engine_pod_finished(e, ids[0]);
    cycle(e);
    assert_true(node_of(e, ids[4]) >= 0);
    gp_engine_free(e);
}

static void test_alike_but_for_labels(void **state)
{
    (void)state;
    /* one node, where a pod refuses app=web beside it. An app=web pod and
     * an app=db pod of the same request shape: the first is refused, and
     * its failure must not answer the second, which fits */
    struct gp_pod_term t = term(app_web, HOST, 0);
    struct gp_pod_constraints c = {0};
    c.anti = &t;
    c.nanti = 1;
    struct gp_engine *e = cluster(1, 8, "best-fit");
    struct gp_pod_spec guard = pod(app_x, 1, &c);
    uint32_t g = add(e, &guard);
    cycle(e);
    assert_int_equal(node_of(e, g), 0);
    struct gp_pod_spec web = pod(app_web, 1, NULL), db = pod(app_db, 1, NULL);
    uint32_t w = add(e, &web), d2 = add(e, &db);
    cycle(e);
    assert_int_equal(node_of(e, w), -1);
    assert_int_equal(node_of(e, d2), 0);
    gp_engine_free(e);
}

static void test_namespaces(void **state)
{
    (void)state;
    /* a term counts pods of its owner's namespace unless it names others */
    struct gp_pod_term t = term(app_web, HOST, 0);
    struct gp_pod_constraints c = {0};
    c.anti = &t;
    c.nanti = 1;
    struct gp_engine *e = cluster(1, 8, "best-fit");
    struct gp_pod_spec other = pod(app_web, 1, NULL);
    other.namespace_name = "team-b";
    uint32_t o = add(e, &other);
    cycle(e);
    assert_int_equal(node_of(e, o), 0);
    struct gp_pod_spec s = pod(app_db, 1, &c); /* in "default": team-b's web does not count */
    uint32_t p = add(e, &s);
    cycle(e);
    assert_int_equal(node_of(e, p), 0);
    static const char *const nss[] = {"team-b"};
    struct gp_pod_term t2 = term(app_web, HOST, 0);
    t2.namespaces = nss;
    t2.nnamespaces = 1;
    struct gp_pod_constraints c2 = {0};
    c2.anti = &t2;
    c2.nanti = 1;
    struct gp_pod_spec s2 = pod(app_db, 1, &c2);
    s2.cpu_milli = 500;
    uint32_t q = add(e, &s2);
    cycle(e);
    assert_int_equal(node_of(e, q), -1); /* it names team-b: rejected */
    gp_engine_free(e);
}

/* --- topology spread ------------------------------------------------------- */

static struct gp_spread spread(int32_t skew, bool anyway)
{
    struct gp_spread s = {0};
    s.max_skew = skew;
    s.topology_key = ZONE;
    s.schedule_anyway = anyway;
    s.selector.set = true;
    s.selector.labels = app_web;
    s.selector.nlabels = 1;
    return s;
}

/* Pods per zone after placing n pods of spec s, one cycle each. */
static void zones_after(struct gp_engine *e, const struct gp_pod_spec *s, int n, int *za, int *zb,
                        int *pending)
{
    *za = *zb = *pending = 0;
    for (int i = 0; i < n; i++) {
        uint32_t id = add(e, s);
        cycle(e);
        int node = node_of(e, id);
        if (node < 0)
            ++*pending;
        else if (node < 2)
            ++*za;
        else
            ++*zb;
    }
}

static void test_spread_two_zones(void **state)
{
    (void)state;
    /* best-fit would put all five on n0; maxSkew 1 over two zones: 3 and 2 */
    struct gp_spread sp = spread(1, false);
    struct gp_pod_constraints c = {0};
    c.spread = &sp;
    c.nspread = 1;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec s = pod(app_web, 1, &c);
    int za, zb, pending;
    zones_after(e, &s, 5, &za, &zb, &pending);
    assert_int_equal(za, 3);
    assert_int_equal(zb, 2);
    assert_int_equal(pending, 0);
    gp_engine_free(e);
    /* two pods: maxSkew 1 puts the second in zone b; maxSkew 2 lets
     * best-fit pack both on n0 (2 - 0 <= 2) */
    e = cluster(4, 8, "best-fit");
    zones_after(e, &s, 2, &za, &zb, &pending);
    assert_int_equal(za, 1);
    assert_int_equal(zb, 1);
    gp_engine_free(e);
    sp.max_skew = 2;
    e = cluster(4, 8, "best-fit");
    zones_after(e, &s, 2, &za, &zb, &pending);
    assert_int_equal(za, 2);
    assert_int_equal(zb, 0);
    gp_engine_free(e);
}

static void test_spread_waits_for_a_bind(void **state)
{
    (void)state;
    /* zone b's GPUs are taken by other pods; the first app=web pod goes
     * to zone a, the second may not (1 + 1 - 0 > 1) and waits. An app=web
     * pod without GPUs or the constraint then lands in zone b: the
     * minimum becomes 1 and the waiting pod fits zone a (1 + 1 - 1) -
     * after a bind, with nothing released */
    struct gp_spread sp = spread(1, false);
    struct gp_pod_constraints c = {0};
    c.spread = &sp;
    c.nspread = 1;
    struct gp_engine *e = cluster(4, 2, "best-fit");
    static const struct gp_kv in_b[] = {{ZONE, "b"}};
    struct gp_pod_spec filler = pod(NULL, 0, NULL);
    filler.node_selector = in_b;
    filler.nnode_selector = 1;
    filler.gpu_count = 2;
    uint32_t f = add(e, &filler);
    add(e, &filler);
    struct gp_pod_spec s = pod(app_web, 1, &c);
    uint32_t p1 = add(e, &s);
    cycle(e);
    assert_int_equal(zone_of(e, p1), 0);
    uint32_t p2 = add(e, &s);
    size_t n = cycle(e);
    assert_int_equal(node_of(e, p2), -1);
    assert_int_equal(decision_of(n, p2)->explain.rejected[GP_FILTER_SPREAD], 2); /* zone a */
    assert_int_equal(decision_of(n, p2)->explain.rejected[GP_FILTER_GPU_COUNT], 2);
    assert_string_equal(gp_filter_text(GP_FILTER_SPREAD),
                        "node(s) didn't match pod topology spread constraints");
    struct gp_pod_spec small = pod(app_web, 1, NULL);
    small.gpu_count = 0;
    small.gpu_milli = 0;
    small.node_selector = in_b;
    small.nnode_selector = 1;
    uint32_t sm = add(e, &small);
    cycle(e);
    assert_int_equal(zone_of(e, sm), 1);
    cycle(e);
    assert_int_equal(zone_of(e, p2), 0);
    (void)f;
    gp_engine_free(e);
}

static void test_spread_min_domains(void **state)
{
    (void)state;
    /* two zones, minDomains 3: fewer domains than asked, so the global
     * minimum is 0 and each zone holds at most maxSkew = 1 */
    struct gp_spread sp = spread(1, false);
    sp.min_domains = 3;
    struct gp_pod_constraints c = {0};
    c.spread = &sp;
    c.nspread = 1;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec s = pod(app_web, 1, &c);
    int za, zb, pending;
    zones_after(e, &s, 4, &za, &zb, &pending);
    assert_int_equal(za, 1);
    assert_int_equal(zb, 1);
    assert_int_equal(pending, 2);
    gp_engine_free(e);
    /* minDomains 2 (as many as there are): 2 and 2 */
    sp.min_domains = 2;
    e = cluster(4, 8, "best-fit");
    zones_after(e, &s, 4, &za, &zb, &pending);
    assert_int_equal(za, 2);
    assert_int_equal(zb, 2);
    gp_engine_free(e);
}

static void test_spread_inclusion(void **state)
{
    (void)state;
    /* the pod may only go to zone a (node selector). nodeAffinityPolicy
     * Honor (the default): zone b is no domain of its, so all three go to
     * zone a. Ignore: zone b counts with 0 pods: one in zone a, then
     * pending */
    static const struct gp_kv in_a[] = {{ZONE, "a"}};
    struct gp_spread sp = spread(1, false);
    struct gp_pod_constraints c = {0};
    c.spread = &sp;
    c.nspread = 1;
    struct gp_pod_spec s = pod(app_web, 1, &c);
    s.node_selector = in_a;
    s.nnode_selector = 1;
    int za, zb, pending;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    zones_after(e, &s, 3, &za, &zb, &pending);
    assert_int_equal(za, 3);
    assert_int_equal(pending, 0);
    gp_engine_free(e);
    sp.ignore_affinity = true;
    e = cluster(4, 8, "best-fit");
    zones_after(e, &s, 3, &za, &zb, &pending);
    assert_int_equal(za, 1);
    assert_int_equal(pending, 2);
    gp_engine_free(e);
    /* nodeTaintsPolicy: zone b drained (cordoned). Ignore (the default):
     * it still counts, 0 pods: one in zone a. Honor: it does not: three */
    sp.ignore_affinity = false;
    s.node_selector = NULL;
    s.nnode_selector = 0;
    e = cluster(4, 8, "best-fit");
    gp_engine_node_drain(e, 2);
    gp_engine_node_drain(e, 3);
    zones_after(e, &s, 3, &za, &zb, &pending);
    assert_int_equal(za, 1);
    assert_int_equal(pending, 2);
    gp_engine_free(e);
    sp.honor_taints = true;
    e = cluster(4, 8, "best-fit");
    gp_engine_node_drain(e, 2);
    gp_engine_node_drain(e, 3);
    zones_after(e, &s, 3, &za, &zb, &pending);
    assert_int_equal(za, 3);
    gp_engine_free(e);
}

static void test_spread_missing_key(void **state)
{
    (void)state;
    /* a node without the key is no place for a DoNotSchedule pod */
    struct gp_spread sp = spread(1, false);
    sp.topology_key = "rack";
    struct gp_pod_constraints c = {0};
    c.spread = &sp;
    c.nspread = 1;
    struct gp_engine *e = cluster(2, 8, "best-fit");
    struct gp_pod_spec s = pod(app_web, 1, &c);
    uint32_t p = add(e, &s);
    size_t n = cycle(e);
    assert_int_equal(decision_of(n, p)->explain.rejected[GP_FILTER_SPREAD], 2);
    gp_engine_free(e);
}

/* --- preferences ------------------------------------------------------------ */

static void test_spread_schedule_anyway(void **state)
{
    (void)state;
    /* ScheduleAnyway, maxSkew 1, one node a zone (n0: a, n2 is b, added
     * as n0 and n2 of four with n1, n3 drained): best-fit alone packs all
     * four on n0; the spreading score turns them 2 and 2 */
    struct gp_spread sp = spread(1, true);
    struct gp_pod_constraints c = {0};
    c.spread = &sp;
    c.nspread = 1;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    gp_engine_node_drain(e, 1);
    gp_engine_node_drain(e, 3);
    struct gp_pod_spec s = pod(app_web, 1, &c);
    int za, zb, pending;
    zones_after(e, &s, 4, &za, &zb, &pending);
    assert_int_equal(za, 2);
    assert_int_equal(zb, 2);
    gp_engine_free(e);
    /* the control: without the constraint, all on n0 */
    e = cluster(4, 8, "best-fit");
    gp_engine_node_drain(e, 1);
    gp_engine_node_drain(e, 3);
    struct gp_pod_spec plain = pod(app_web, 1, NULL);
    zones_after(e, &plain, 4, &za, &zb, &pending);
    assert_int_equal(za, 4);
    gp_engine_free(e);
}

static void test_preferred_pod_affinity(void **state)
{
    (void)state;
    /* a cache pod on n3; a pod that prefers (weight 50) the node of an
     * app=db pod goes there rather than where best-fit packs (n0, which
     * holds two plain pods) */
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec plain = pod(NULL, 0, NULL);
    static const struct gp_kv on_n3[] = {{HOST, "n3"}};
    struct gp_pod_spec db = pod(app_db, 1, NULL);
    db.node_selector = on_n3;
    db.nnode_selector = 1;
    add(e, &plain);
    add(e, &plain);
    uint32_t c0 = add(e, &db);
    cycle(e);
    assert_int_equal(node_of(e, c0), 3);
    struct gp_pod_term t = term(app_db, HOST, 50);
    struct gp_pod_constraints c = {0};
    c.affinity_preferred = &t;
    c.naffinity_preferred = 1;
    struct gp_pod_spec s = pod(app_web, 1, &c);
    uint32_t p = add(e, &s);
    uint32_t ctl = add(e, &plain);
    cycle(e);
    assert_int_equal(node_of(e, ctl), 0);
    assert_int_equal(node_of(e, p), 3);
    /* preferred anti-affinity to app=db: away from n3 even if n3 were the
     * fullest; and an existing pod's preferred affinity to app=web pulls
     * other app=web pods (symmetry of the score) */
    gp_engine_free(e);
}

static void test_preferred_anti_spreads(void **state)
{
    (void)state;
    /* best-fit packs; a preferred anti-affinity of weight 100 on hostname
     * among app=web replicas puts four on four nodes, the fifth shares */
    struct gp_pod_term t = term(app_web, HOST, 100);
    struct gp_pod_constraints c = {0};
    c.anti_preferred = &t;
    c.nanti_preferred = 1;
    struct gp_engine *e = cluster(4, 8, "best-fit");
    struct gp_pod_spec s = pod(app_web, 1, &c);
    unsigned used = 0;
    uint32_t ids[5];
    for (int i = 0; i < 5; i++) {
        ids[i] = add(e, &s);
        cycle(e);
        assert_true(node_of(e, ids[i]) >= 0);
        if (i < 4)
            used |= 1u << node_of(e, ids[i]);
    }
    assert_int_equal(used, 0xf);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_operators),
        cmocka_unit_test(test_node_terms_ored),
        cmocka_unit_test(test_node_preferred),
        cmocka_unit_test(test_affinity_unmatched),
        cmocka_unit_test(test_affinity_to_itself),
        cmocka_unit_test(test_anti_affinity_hostname),
        cmocka_unit_test(test_alike_but_for_labels),
        cmocka_unit_test(test_namespaces),
        cmocka_unit_test(test_spread_two_zones),
        cmocka_unit_test(test_spread_waits_for_a_bind),
        cmocka_unit_test(test_spread_min_domains),
        cmocka_unit_test(test_spread_inclusion),
        cmocka_unit_test(test_spread_missing_key),
        cmocka_unit_test(test_spread_schedule_anyway),
        cmocka_unit_test(test_preferred_pod_affinity),
        cmocka_unit_test(test_preferred_anti_spreads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
