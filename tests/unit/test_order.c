/* test_order.c - the engine's queue orders (FIFO, SJF, fair share) and
 * backfill, worked out by hand: FIFO across queues ignores priority, SJF
 * picks the shortest hint, a strict order lets nothing pass a head that
 * does not fit, EASY backfill lets short pods through without delaying
 * the head, quota blocks only its subtree, hopeless pods block nothing;
 * and a property test over seeded random workloads (every order, with and
 * without backfill): no partial gang is bound, no cap is exceeded, and
 * once the cluster drains every pod that fits it has run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "util/rng.h"

#define GPU 1000

static const char *const node_names[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};

static struct gp_engine *cluster(enum gp_order order, bool backfill, uint32_t nodes, uint32_t gpus)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_order(e, order, backfill), GP_OK);
    for (uint32_t i = 0; i < nodes; i++) {
        struct gp_node_spec n = {0};
        n.name = node_names[i];
        n.gpu_model = "H100";
        n.gpu_count = gpus;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 64000 * gpus;
        n.mem_mib = 65536 * gpus;
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    return e;
}

static uint32_t submit(struct gp_engine *e, uint32_t queue, uint32_t gpus, int32_t prio,
                       double hint_s, double now_s)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = gpus;
    s.gpu_milli = gpus ? GPU : 0;
    s.queue = queue;
    s.priority = prio;
    s.duration_hint_s = hint_s;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &s, now_s, &id), GP_OK);
    return id;
}

static uint32_t add_queue(struct gp_engine *e, const char *name, int64_t cap_gpus)
{
    struct gp_queue_spec q = {0};
    q.name = name;
    q.no_preempt_within = true;
    if (cap_gpus >= 0) {
        q.gpu_milli.limited = true;
        q.gpu_milli.borrow_limit = cap_gpus * GPU;
    }
    uint32_t id;
    assert_int_equal(gp_engine_queue_set(e, &q, &id), GP_OK);
    return id;
}

static enum gp_pod_state state(const struct gp_engine *e, uint32_t pod)
{
    return gp_engine_pod(e, pod)->state;
}

/* One cycle at now_s; returns the decisions' count and whether pod `who`
 * got any decision. */
static size_t cycle(struct gp_engine *e, double now_s, uint32_t who, bool *decided)
{
    struct gp_decision d[64];
    size_t n = gp_engine_schedule(e, now_s, 0, d, 64);
    if (decided) {
        *decided = false;
        for (size_t i = 0; i < n; i++)
            *decided |= d[i].pod == who;
    }
    return n;
}

/* A tiny driver: every pod runs exactly its hint. Runs cycles at each end
 * until nothing is bound; bind_at[pod] gets each pod's bind time (-1:
 * never). */
static void drive(struct gp_engine *e, double now_s, double *bind_at, size_t npods)
{
    for (size_t i = 0; i < npods; i++)
        if (state(e, (uint32_t)i) == GP_POD_BOUND && bind_at[i] < 0)
            bind_at[i] = gp_engine_pod_bound_at(e, (uint32_t)i);
    for (int guard = 0; guard < 1000; guard++) {
        struct gp_decision d[64];
        size_t n = gp_engine_schedule(e, now_s, 0, d, 64);
        for (size_t i = 0; i < n; i++)
            if (d[i].kind == GP_DECISION_BIND)
                bind_at[d[i].pod] = now_s;
        double next = INFINITY;
        for (size_t i = 0; i < npods; i++) {
            if (state(e, (uint32_t)i) != GP_POD_BOUND)
                continue;
            double end = gp_engine_pod_bound_at(e, (uint32_t)i) +
                         gp_engine_pod(e, (uint32_t)i)->spec.duration_hint_s;
            if (end < next)
                next = end;
        }
        if (next == INFINITY)
            return;
        now_s = next;
        for (size_t i = 0; i < npods; i++)
            if (state(e, (uint32_t)i) == GP_POD_BOUND &&
                gp_engine_pod_bound_at(e, (uint32_t)i) +
                        gp_engine_pod(e, (uint32_t)i)->spec.duration_hint_s <=
                    now_s)
                assert_int_equal(gp_engine_pod_finished(e, (uint32_t)i), GP_OK);
    }
    fail_msg("the driver did not settle");
}

/* FIFO: the oldest pod of the cluster first, whatever its queue and
 * priority; FAIR would take queue a's high-priority pod (the queues tie,
 * a has the lower id). */
static void test_fifo_across_queues(void **state_)
{
    (void)state_;
    for (int k = 0; k < 2; k++) {
        struct gp_engine *e = cluster(k ? GP_ORDER_FIFO : GP_ORDER_FAIR, false, 1, 4);
        uint32_t a = add_queue(e, "a", -1), b = add_queue(e, "b", -1);
        uint32_t old = submit(e, b, 4, 0, 10, 0);
        uint32_t urgent = submit(e, a, 4, 100, 10, 1);
        cycle(e, 1, 0, NULL);
        assert_int_equal(state(e, old), k ? GP_POD_BOUND : GP_POD_PENDING);
        assert_int_equal(state(e, urgent), k ? GP_POD_PENDING : GP_POD_BOUND);
        gp_engine_free(e);
    }
}

/* SJF: the shortest hint first, unknown hints last (then age). */
static void test_sjf_shortest_first(void **state_)
{
    (void)state_;
    struct gp_engine *e = cluster(GP_ORDER_SJF, false, 1, 4);
    uint32_t unknown = submit(e, 0, 4, 0, 0, 0);
    uint32_t lng = submit(e, 0, 4, 0, 1000, 1);
    uint32_t shrt = submit(e, 0, 4, 0, 10, 2);
    uint32_t mid = submit(e, 0, 4, 0, 100, 3);
    double bind_at[4] = {-1, -1, -1, -1};
    drive(e, 5, bind_at, 4); /* the driver ends a pod without a hint at once */
    /* shrt 5..15, mid 15..115, lng 115..1115, then unknown at 1115 */
    assert_true(bind_at[shrt] == 5);
    assert_true(bind_at[mid] == 15);
    assert_true(bind_at[lng] == 115);
    assert_true(bind_at[unknown] == 1115);
    gp_engine_free(e);
}

/* The head-of-line scenario on one 8-GPU node. A filler holds 6
 * GPUs until t=100. At t=0 come the head (8 GPUs, 10 s), then s (1 GPU,
 * 50 s) and s2 (1 GPU, 200 s). By hand:
 *   FAIR (greedy): s and s2 start at 0; the head waits for s2: t=200.
 *   FIFO strict:   nothing passes the head: head 100, s and s2 at 110.
 *   FIFO backfill: the head's shadow time is 100 (the filler's end); s
 *                  ends by then and starts at 0; s2 would hold a GPU the
 *                  head needs at 100, so it waits: head 100, s2 110. */
static void test_backfill_head_not_delayed(void **state_)
{
    (void)state_;
    static const struct {
        enum gp_order order;
        bool backfill;
        double head, s, s2;
    } cases[] = {
        {GP_ORDER_FAIR, false, 200, 0, 0},  {GP_ORDER_FIFO, false, 100, 110, 110},
        {GP_ORDER_FIFO, true, 100, 0, 110}, {GP_ORDER_SJF, true, 100, 0, 110},
        {GP_ORDER_FAIR, true, 100, 0, 110},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct gp_engine *e = cluster(cases[c].order, cases[c].backfill, 1, 8);
        uint32_t filler = submit(e, 0, 6, 0, 100, 0);
        cycle(e, 0, 0, NULL);
        assert_int_equal(state(e, filler), GP_POD_BOUND);
        /* SJF would put the short pods first: give the head the shortest hint */
        uint32_t head = submit(e, 0, 8, 0, 10, 0);
        uint32_t s = submit(e, 0, 1, 0, 50, 0);
        uint32_t s2 = submit(e, 0, 1, 0, 200, 0);
        double bind_at[4] = {0, -1, -1, -1};
        drive(e, 0, bind_at, 4);
        assert_true(bind_at[head] == cases[c].head);
        assert_true(bind_at[s] == cases[c].s);
        assert_true(bind_at[s2] == cases[c].s2);
        gp_engine_free(e);
    }
}

/* Strict: a pod behind the blocked head is not even tried (no decision). */
static void test_strict_no_decision_behind_head(void **state_)
{
    (void)state_;
    struct gp_engine *e = cluster(GP_ORDER_FIFO, false, 1, 8);
    submit(e, 0, 6, 0, 100, 0);
    cycle(e, 0, 0, NULL);
    uint32_t head = submit(e, 0, 4, 0, 10, 1);
    uint32_t small = submit(e, 0, 1, 0, 10, 1);
    bool decided;
    cycle(e, 1, small, &decided);
    assert_false(decided);
    assert_int_equal(state(e, head), GP_POD_PENDING);
    assert_int_equal(state(e, small), GP_POD_PENDING);
    assert_int_equal(gp_engine_pending_count(e), 2);
    gp_engine_free(e);
}

/* A pod that can never fit (16 GPUs on 8-GPU nodes) or a gang waiting for
 * its members holds nothing up, even in a strict order. */
static void test_hopeless_does_not_block(void **state_)
{
    (void)state_;
    struct gp_engine *e = cluster(GP_ORDER_FIFO, false, 2, 8);
    uint32_t huge = submit(e, 0, 16, 0, 10, 0);
    struct gp_group_spec g = {"g", 3, NULL, false};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    struct gp_pod_spec m = {0};
    m.name = "m";
    m.gpu_count = 1;
    m.gpu_milli = GPU;
    m.group = gid;
    uint32_t member;
    assert_int_equal(gp_engine_pod_add(e, &m, 0, &member), GP_OK); /* 1 of 3 */
    /* a gang of 3 x 5 GPUs: 15 GPUs <= 16, but one per node: it never packs */
    struct gp_group_spec g2 = {"g2", 3, NULL, false};
    uint32_t gid2;
    assert_int_equal(gp_engine_group_add(e, &g2, &gid2), GP_OK);
    struct gp_pod_spec w = m;
    w.gpu_count = 5;
    w.group = gid2;
    for (int i = 0; i < 3; i++)
        assert_int_equal(gp_engine_pod_add(e, &w, 0, NULL), GP_OK);
    uint32_t small = submit(e, 0, 1, 0, 10, 1);
    cycle(e, 1, 0, NULL);
    assert_int_equal(state(e, huge), GP_POD_PENDING);
    assert_int_equal(state(e, member), GP_POD_PENDING);
    assert_int_equal(state(e, small), GP_POD_BOUND);
    gp_engine_free(e);
}

/* A pod stopped by its queue's cap holds up only that queue's pods. */
static void test_quota_blocks_its_queue(void **state_)
{
    (void)state_;
    struct gp_engine *e = cluster(GP_ORDER_FIFO, false, 1, 8);
    uint32_t a = add_queue(e, "a", 4), b = add_queue(e, "b", -1);
    uint32_t a0 = submit(e, a, 4, 0, 100, 0);
    cycle(e, 0, 0, NULL);
    assert_int_equal(state(e, a0), GP_POD_BOUND);
    uint32_t a1 = submit(e, a, 1, 0, 10, 1); /* over a's cap: blocks a */
    uint32_t b1 = submit(e, b, 1, 0, 10, 2);
    uint32_t a2 = submit(e, a, 0, 0, 10, 3); /* cpu only: fits a's cap, but behind a1 */
    cycle(e, 3, 0, NULL);
    assert_int_equal(state(e, a1), GP_POD_PENDING);
    assert_int_equal(state(e, b1), GP_POD_BOUND);
    assert_int_equal(state(e, a2), GP_POD_PENDING);
    gp_engine_free(e);

    /* with backfill, a2 (no GPU) fits what is left of a's cap at a1's
     * shadow time and goes */
    e = cluster(GP_ORDER_FIFO, true, 1, 8);
    a = add_queue(e, "a", 4);
    a0 = submit(e, a, 4, 0, 100, 0);
    cycle(e, 0, 0, NULL);
    a1 = submit(e, a, 1, 0, 10, 1);
    uint32_t a3 = submit(e, a, 1, 0, 500, 2); /* would take a's GPU past t=100 */
    a2 = submit(e, a, 0, 0, 500, 3);
    cycle(e, 3, 0, NULL);
    assert_int_equal(state(e, a1), GP_POD_PENDING);
    assert_int_equal(state(e, a3), GP_POD_PENDING);
    assert_int_equal(state(e, a2), GP_POD_BOUND);
    gp_engine_free(e);
}

/* A gang at the head: backfill keeps the nodes it will need at its
 * shadow time. Two 8-GPU nodes, 5 GPUs of each taken until t=100; the
 * gang wants 2 x 8 GPUs. A 3-GPU pod of 50 s ends before t=100 and goes;
 * one of 500 s would keep a node from the gang and waits. */
static void test_backfill_gang_head(void **state_)
{
    (void)state_;
    struct gp_engine *e = cluster(GP_ORDER_FIFO, true, 2, 8);
    uint32_t f0 = submit(e, 0, 5, 0, 100, 0), f1 = submit(e, 0, 5, 0, 100, 0);
    cycle(e, 0, 0, NULL);
    assert_int_equal(state(e, f0), GP_POD_BOUND);
    assert_int_equal(state(e, f1), GP_POD_BOUND);
    assert_int_not_equal(gp_engine_pod(e, f0)->node, gp_engine_pod(e, f1)->node);
    struct gp_group_spec g = {"train", 2, NULL, false};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    struct gp_pod_spec w = {0};
    w.name = "w";
    w.gpu_count = 8;
    w.gpu_milli = GPU;
    w.group = gid;
    w.duration_hint_s = 10;
    uint32_t w0, w1;
    assert_int_equal(gp_engine_pod_add(e, &w, 1, &w0), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &w, 1, &w1), GP_OK);
    uint32_t lng = submit(e, 0, 3, 0, 500, 1);
    uint32_t shrt = submit(e, 0, 3, 0, 50, 1);
    cycle(e, 1, 0, NULL);
    assert_int_equal(state(e, w0), GP_POD_PENDING);
    assert_int_equal(state(e, lng), GP_POD_PENDING);
    assert_int_equal(state(e, shrt), GP_POD_BOUND);
    gp_engine_free(e);
}

/* A gang of n pods of 1 GPU each, all needed, of hint hint_s, added at now_s. */
static uint32_t submit_gang(struct gp_engine *e, uint32_t n, double hint_s, double now_s)
{
    struct gp_group_spec g = {"g", n, NULL, false};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    struct gp_pod_spec w = {0};
    w.name = "w";
    w.gpu_count = 1;
    w.gpu_milli = GPU;
    w.group = gid;
    w.duration_hint_s = hint_s;
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(gp_engine_pod_add(e, &w, now_s, NULL), GP_OK);
    return gid;
}

/* Whether the n decisions are all `kind` (GP_GANG_NO_ROOM when not binds). */
static bool all_are(const struct gp_decision *d, size_t n, enum gp_decision_kind kind)
{
    for (size_t i = 0; i < n; i++)
        if (d[i].kind != kind || (kind != GP_DECISION_BIND && d[i].gang != GP_GANG_NO_ROOM))
            return false;
    return true;
}

/* gp_engine_schedule_group under backfill holds a gang back as the cycle
 * does. One 8-GPU node, 4 GPUs taken until t=100; the head (8 GPUs) waits
 * for t=100 with no spare. A gang of 2 x 1 GPU for 500 s would delay it:
 * the cycle holds it back, and so does the call (before, it bound both
 * members on the head's room). A gang of 2 x 1 GPU for 50 s ends by t=100:
 * the call binds it. The head gone (deleted while pending: nothing else
 * changed, so what was remembered of the held gang is of a reservation
 * that no longer is), the long gang goes. */
static void test_schedule_group_resv(void **state_)
{
    (void)state_;
    struct gp_engine *e = cluster(GP_ORDER_FIFO, true, 1, 8);
    uint32_t filler = submit(e, 0, 4, 0, 100, 0);
    cycle(e, 0, 0, NULL);
    assert_int_equal(state(e, filler), GP_POD_BOUND);
    uint32_t head = submit(e, 0, 8, 0, 10, 1);
    uint32_t lng = submit_gang(e, 2, 500, 1);
    size_t n = cycle(e, 1, 0, NULL);
    assert_int_equal(n, 1); /* the head's; the gang held back gets none */
    assert_int_equal(state(e, head), GP_POD_PENDING);
    assert_int_equal(gp_engine_group_bound(e, lng), 0);
    struct gp_decision d[8];
    assert_int_equal(gp_engine_schedule_group(e, lng, d, 8), 2);
    assert_true(all_are(d, 2, GP_DECISION_UNSCHEDULABLE));
    assert_int_equal(gp_engine_group_bound(e, lng), 0);
    uint32_t shrt = submit_gang(e, 2, 50, 1);
    assert_int_equal(gp_engine_schedule_group(e, shrt, d, 8), 2);
    assert_true(all_are(d, 2, GP_DECISION_BIND));
    assert_int_equal(gp_engine_schedule_group(e, lng, d, 8), 2); /* at the state now */
    assert_true(all_are(d, 2, GP_DECISION_UNSCHEDULABLE));
    assert_int_equal(gp_engine_schedule_group(e, lng, d, 8), 2); /* again, nothing changed */
    assert_true(all_are(d, 2, GP_DECISION_UNSCHEDULABLE));
    assert_int_equal(gp_engine_pod_finished(e, head), GP_OK);
    assert_int_equal(gp_engine_schedule_group(e, lng, d, 8), 2);
    assert_true(all_are(d, 2, GP_DECISION_BIND));
    assert_int_equal(gp_engine_group_bound(e, lng), 2);
    assert_int_equal(gp_engine_pending_count(e), 0);
    gp_engine_free(e);
}

static void test_set_order_errors(void **state_)
{
    (void)state_;
    struct gp_engine *e = cluster(GP_ORDER_FAIR, false, 1, 8);
    assert_int_equal(gp_engine_set_order(e, (enum gp_order)7, false), GP_EINVALID);
    submit(e, 0, 1, 0, 10, 0);
    assert_int_equal(gp_engine_set_order(e, GP_ORDER_SJF, true), GP_ESTATE);
    gp_engine_free(e);
}

/* ---- property test ------------------------------------------------------- */

struct prop {
    struct gp_engine *e;
    uint32_t nodes, gpus;    /* nodes of `gpus` GPUs */
    int64_t cap_gpus[4];     /* per queue (index = engine id); -1: none */
    uint32_t nqueues;        /* engine queues, the default included */
    uint32_t min_member[16]; /* per gang id */
    uint32_t gang_gpus[16];  /* per gang: each member's GPUs */
    uint32_t gang_queue[16];
    uint32_t ngangs;
};

static void prop_check(const struct prop *t)
{
    const struct gp_engine *e = t->e;
    for (uint32_t q = 0; q < t->nqueues; q++) {
        struct gp_queue_usage u;
        assert_int_equal(gp_engine_queue_usage(e, q, &u), GP_OK);
        if (t->cap_gpus[q] >= 0)
            assert_true(u.gpu_milli <= t->cap_gpus[q] * GPU);
    }
    for (uint32_t g = 1; g <= t->ngangs; g++) {
        uint32_t b = gp_engine_group_bound(e, g);
        assert_true(b == 0 || b >= t->min_member[g]);
    }
}

/* Whether `n` pods of `gpus` GPUs fit the empty cluster within queue q's cap. */
static bool prop_fits_empty(const struct prop *t, uint32_t q, uint32_t gpus, uint32_t n)
{
    if (t->cap_gpus[q] >= 0 && (int64_t)gpus * n > t->cap_gpus[q])
        return false;
    if (gpus == 0)
        return true;
    return gpus <= t->gpus && (t->gpus / gpus) * t->nodes >= n;
}

static void prop_case(uint64_t seed, enum gp_order order, bool backfill)
{
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    struct prop t;
    memset(&t, 0, sizeof t);
    t.nodes = 1 + (uint32_t)gp_rng_below(&r, 4);
    t.gpus = 2 + 2 * (uint32_t)gp_rng_below(&r, 4);
    t.e = cluster(order, backfill, t.nodes, t.gpus);
    t.cap_gpus[0] = -1;
    t.nqueues = 1 + (uint32_t)gp_rng_below(&r, 3);
    static const char *const qnames[] = {"default", "q1", "q2", "q3"};
    for (uint32_t q = 1; q < t.nqueues; q++) {
        t.cap_gpus[q] = gp_rng_below(&r, 2) ? (int64_t)(1 + gp_rng_below(&r, 8)) : -1;
        assert_int_equal(add_queue(t.e, qnames[q], t.cap_gpus[q]), q);
    }
    /* pods and gangs (all members at once), submitted over time; each runs
     * `run` seconds, its hint (one pod in seven gives none) */
    enum { NPODS = 40 };
    double arrive[NPODS], run[NPODS];
    uint32_t queue[NPODS], gpus[NPODS], gang[NPODS];
    uint32_t npods = 0;
    while (npods < NPODS) {
        uint32_t q = (uint32_t)gp_rng_below(&r, t.nqueues);
        double at = (double)gp_rng_below(&r, 50);
        double len = (double)(1 + gp_rng_below(&r, 40));
        if (gp_rng_below(&r, 5) == 0 && t.ngangs < 15 && npods + 4 <= NPODS) {
            uint32_t g = ++t.ngangs, size = 2 + (uint32_t)gp_rng_below(&r, 3);
            struct gp_group_spec gs = {"g", size, NULL, false};
            uint32_t gid;
            assert_int_equal(gp_engine_group_add(t.e, &gs, &gid), GP_OK);
            assert_int_equal(gid, g);
            t.min_member[g] = size;
            t.gang_gpus[g] = 1 + (uint32_t)gp_rng_below(&r, 4);
            t.gang_queue[g] = q;
            for (uint32_t k = 0; k < size && npods < NPODS; k++, npods++) {
                arrive[npods] = at;
                run[npods] = len;
                queue[npods] = q;
                gpus[npods] = t.gang_gpus[g];
                gang[npods] = g;
            }
            continue;
        }
        arrive[npods] = at;
        run[npods] = len;
        queue[npods] = q;
        gpus[npods] = (uint32_t)gp_rng_below(&r, 9);
        gang[npods] = 0;
        npods++;
    }
    /* drive: at each time, submissions, then a cycle, then the ends */
    uint32_t id_of[NPODS];
    bool added[NPODS] = {0};
    double bound_at[NPODS];
    for (uint32_t i = 0; i < NPODS; i++)
        bound_at[i] = -1;
    uint32_t pod_of_id[NPODS];
    uint32_t nadded = 0;
    double now = 0;
    struct gp_decision d[2 * NPODS];
    for (int step = 0; step < 10000; step++) {
        for (uint32_t i = 0; i < npods; i++) {
            if (added[i] || arrive[i] > now)
                continue;
            struct gp_pod_spec s = {0};
            s.name = "p";
            s.cpu_milli = 100;
            s.mem_mib = 64;
            s.gpu_count = gpus[i];
            s.gpu_milli = gpus[i] ? GPU : 0;
            s.queue = queue[i];
            s.group = gang[i];
            s.duration_hint_s = (i % 7 == 3) ? 0 : run[i];
            assert_int_equal(gp_engine_pod_add(t.e, &s, now, &id_of[i]), GP_OK);
            pod_of_id[id_of[i]] = i;
            added[i] = true;
            nadded++;
        }
        size_t n = gp_engine_schedule(t.e, now, 0, d, 2 * NPODS);
        for (size_t k = 0; k < n; k++)
            if (d[k].kind == GP_DECISION_BIND)
                bound_at[pod_of_id[d[k].pod]] = now;
        prop_check(&t);
        double next = INFINITY;
        for (uint32_t i = 0; i < npods; i++) {
            if (!added[i] && arrive[i] < next)
                next = arrive[i];
            if (added[i] && state(t.e, id_of[i]) == GP_POD_BOUND) {
                double end = bound_at[i] + run[i];
                if (end < next)
                    next = end;
            }
        }
        if (next == INFINITY)
            break;
        now = next;
        for (uint32_t i = 0; i < npods; i++)
            if (added[i] && state(t.e, id_of[i]) == GP_POD_BOUND && bound_at[i] + run[i] <= now)
                assert_int_equal(gp_engine_pod_finished(t.e, id_of[i]), GP_OK);
    }
    assert_int_equal(nadded, npods);
    /* drained: what still waits could never fit */
    for (uint32_t i = 0; i < npods; i++) {
        enum gp_pod_state st = state(t.e, id_of[i]);
        assert_int_not_equal(st, GP_POD_BOUND);
        if (st != GP_POD_PENDING)
            continue;
        bool fits = gang[i] ? prop_fits_empty(&t, queue[i], gpus[i], t.min_member[gang[i]])
                            : prop_fits_empty(&t, queue[i], gpus[i], 1);
        if (fits)
            fail_msg("seed %llu order %d backfill %d: pod %u (%u GPUs, gang %u, queue %u) "
                     "starved",
                     (unsigned long long)seed, (int)order, (int)backfill, i, gpus[i], gang[i],
                     queue[i]);
    }
    gp_engine_free(t.e);
}

static void test_property_orders(void **state_)
{
    (void)state_;
    static const enum gp_order orders[] = {GP_ORDER_FAIR, GP_ORDER_FIFO, GP_ORDER_SJF};
    for (uint64_t seed = 1; seed <= 300; seed++)
        for (size_t o = 0; o < 3; o++)
            for (int b = 0; b < 2; b++)
                prop_case(seed, orders[o], b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_across_queues),
        cmocka_unit_test(test_sjf_shortest_first),
        cmocka_unit_test(test_backfill_head_not_delayed),
        cmocka_unit_test(test_strict_no_decision_behind_head),
        cmocka_unit_test(test_hopeless_does_not_block),
        cmocka_unit_test(test_quota_blocks_its_queue),
        cmocka_unit_test(test_backfill_gang_head),
        cmocka_unit_test(test_schedule_group_resv),
        cmocka_unit_test(test_set_order_errors),
        cmocka_unit_test(test_property_orders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
