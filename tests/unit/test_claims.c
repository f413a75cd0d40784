/* test_claims.c - the engine's ReadWriteOncePod claims (claims.c,
 * kube-scheduler's VolumeRestrictions): a pod whose two volumes name one
 * claim does not hold it against itself, and another pod naming it is
 * refused while it runs; a use the counts lost (out of memory) refuses no
 * pod whose claim is free, and the next cycle counts the uses anew. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/internal.h"

static struct gp_node_spec cnode(const char *name)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "H100";
    s.gpu_count = 2;
    s.gpu_mem_mib = 81920;
    s.cpu_milli = 16000;
    s.mem_mib = 65536;
    return s;
}

static uint32_t cpod(struct gp_engine *e, const struct gp_claim_use *claims, size_t nclaims)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1;
    s.gpu_milli = 1000;
    s.claims = claims;
    s.nclaims = nclaims;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &id), GP_OK);
    return id;
}

static enum gp_decision_kind decided(struct gp_engine *e, uint32_t pod)
{
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    for (size_t i = 0; i < n; i++)
        if (d[i].pod == pod)
            return d[i].kind;
    fail_msg("pod %u got no decision", pod);
    return GP_DECISION_EVICT;
}

/* Two volumes of one pod naming one ReadWriteOncePod claim: NodeInfo's
 * PVCRefCounts counts both (framework/types.go updatePVCRefCounts), and
 * VolumeRestrictions asks of the pod before it is counted, so the pod is
 * placed; once bound, its two uses are its own, not another pod's: every
 * other node still passes (a bound pod's move off a blocked node asks
 * that, kube/sched_unblock.c). Another pod naming the claim is refused on
 * every node while it runs, and goes once it ended (both uses taken off). */
static void test_claim_named_twice(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec a = cnode("a"), b = cnode("b");
    uint32_t na, nb;
    assert_int_equal(gp_engine_node_add(e, &a, &na), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &b, &nb), GP_OK);
    static const struct gp_claim_use twice[] = {{"ns/data", true}, {"ns/data", true}};
    static const struct gp_claim_use once[] = {{"ns/data", true}};
    uint32_t holder = cpod(e, twice, 2);
    assert_int_equal(decided(e, holder), GP_DECISION_BIND);
    const struct gp_pod *h = gp_engine_pod(e, holder);
    uint32_t other = h->node == na ? nb : na;
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, other), h), GP_FILTER_COUNT);
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, h->node), h), GP_FILTER_COUNT);
    uint32_t rival = cpod(e, once, 1);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[0].explain.rejected[GP_FILTER_RWOP], 2);
    assert_int_equal(gp_engine_pod_finished(e, holder), GP_OK);
    assert_int_equal(decided(e, rival), GP_DECISION_BIND);
    gp_engine_free(e);
}

/* The counts lose a use, as when gp_eng_claims_bind could not allocate
 * (the project has no allocation-failure hook: the state such a failure
 * leaves is made by hand, every count lost and the map marked broken).
 * Until the next cycle the bound pods themselves are read: a pod whose
 * claim no one uses passes, one whose claim the holder uses is refused,
 * the bound holder passes its own node. The cycle counts the uses anew
 * (the map trusted again, and holding the holder's use); the holder ended,
 * the rival goes. */
static void test_claim_count_lost(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec a = cnode("a"), b = cnode("b");
    uint32_t na;
    assert_int_equal(gp_engine_node_add(e, &a, &na), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &b, NULL), GP_OK);
    static const struct gp_claim_use x[] = {{"ns/x", true}}, y[] = {{"ns/y", true}};
    uint32_t holder = cpod(e, x, 1);
    assert_int_equal(decided(e, holder), GP_DECISION_BIND);
    gp_eng_claims_free(e);
    e->claims.broken = true;
    uint32_t free_claim = cpod(e, y, 1), rival = cpod(e, x, 1);
    const struct gp_node *n = gp_engine_node(e, na);
    const struct gp_pod *h = gp_engine_pod(e, holder);
    assert_int_equal(gp_engine_filter(e, n, gp_engine_pod(e, free_claim)), GP_FILTER_COUNT);
    assert_int_equal(gp_engine_filter(e, n, gp_engine_pod(e, rival)), GP_FILTER_RWOP);
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, h->node), h), GP_FILTER_COUNT);
    struct gp_decision d[8];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 8), 2);
    assert_false(e->claims.broken);
    assert_int_equal(gp_engine_pod(e, free_claim)->state, GP_POD_BOUND);
    assert_int_equal(gp_engine_pod(e, rival)->state, GP_POD_PENDING);
    assert_true(gp_eng_claims_held(e, gp_engine_pod(e, rival)));
    assert_false(gp_eng_claims_held(e, gp_engine_pod(e, free_claim)));
    assert_int_equal(gp_engine_pod_finished(e, holder), GP_OK);
    assert_int_equal(decided(e, rival), GP_DECISION_BIND);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claim_named_twice),
        cmocka_unit_test(test_claim_count_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
