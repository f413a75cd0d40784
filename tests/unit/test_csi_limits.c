/* test_csi_limits.c - the engine's CSI volume limits (csi.c,
 * kube-scheduler's NodeVolumeLimits, nodevolumelimits/csi.go Filter): a
 * node's attached volumes counted per driver, each unique name once
 * however many pods use it; a pod's new volumes (its own names once, those
 * attached not new) must keep the driver's count within the node's limit;
 * a driver without a limit, or a node without limits, is not counted; a
 * bound pod's release frees its volumes; a pod of more new volumes than
 * an empty node allows never fits it; a count lost refuses such pods on
 * limited nodes until the next cycle counts again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/internal.h"

#define PD  "pd.csi.storage.gke.io"
#define EBS "ebs.csi.aws.com"

static struct gp_node_spec lnode(const char *name, const struct gp_csi_limit *l, size_t nl)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "H100";
    s.gpu_count = 8;
    s.gpu_mem_mib = 81920;
    s.cpu_milli = 64000;
    s.mem_mib = 262144;
    s.csi_limits = l;
    s.ncsi_limits = nl;
    return s;
}

static uint32_t vpod(struct gp_engine *e, const struct gp_csi_volume *v, size_t nv)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1;
    s.gpu_milli = 1000;
    s.csi_volumes = v;
    s.ncsi_volumes = nv;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &id), GP_OK);
    return id;
}

static void assign(struct gp_engine *e, uint32_t pod, uint32_t node)
{
    assert_int_equal(gp_engine_pod_assign(e, pod, node, NULL), GP_OK);
}

static enum gp_filter filter(struct gp_engine *e, uint32_t node, uint32_t pod)
{
    return gp_engine_filter(e, gp_engine_node(e, node), gp_engine_pod(e, pod));
}

/* A node of limit 2 for PD (none for EBS): two PD volumes attached by
 * three pods (one shared); a pod of one more PD volume is refused, one
 * naming an attached volume passes (not new), one of EBS volumes passes
 * (no limit), one naming its one new volume twice counts it once. A node
 * without limits takes the refused pod. Once the pods holding one of the
 * two volumes end, the refused pod fits. */
static void test_limit_counts(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    static const struct gp_csi_limit lim[] = {{PD, 2}};
    struct gp_node_spec a = lnode("a", lim, 1), b = lnode("b", NULL, 0);
    uint32_t na, nb;
    assert_int_equal(gp_engine_node_add(e, &a, &na), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &b, &nb), GP_OK);
    static const struct gp_csi_volume v1[] = {{PD, PD "/v1"}}, v2[] = {{PD, PD "/v2"}},
                                      v3[] = {{PD, PD "/v3"}},
                                      v3twice[] = {{PD, PD "/v3"}, {PD, PD "/v3"}},
                                      v1v3[] = {{PD, PD "/v1"}, {PD, PD "/v3"}},
                                      ebs[] = {
                                          {EBS, EBS "/e1"}, {EBS, EBS "/e2"}, {EBS, EBS "/e3"}};
    uint32_t p1 = vpod(e, v1, 1), p2 = vpod(e, v2, 1), p1b = vpod(e, v1, 1);
    assign(e, p1, na);
    assign(e, p2, na);
    assign(e, p1b, na); /* v1 again: still two volumes */
    uint32_t new3 = vpod(e, v3, 1), again1 = vpod(e, v1, 1), e3 = vpod(e, ebs, 3);
    uint32_t twice = vpod(e, v3twice, 2), mixed = vpod(e, v1v3, 2);
    assert_int_equal(filter(e, na, new3), GP_FILTER_VOLUME_LIMITS);
    assert_int_equal(filter(e, na, twice), GP_FILTER_VOLUME_LIMITS);
    assert_int_equal(filter(e, na, mixed), GP_FILTER_VOLUME_LIMITS);
    assert_int_equal(filter(e, na, again1), GP_FILTER_COUNT);
    assert_int_equal(filter(e, na, e3), GP_FILTER_COUNT);
    assert_int_equal(filter(e, nb, new3), GP_FILTER_COUNT);
    /* the words: "node(s) exceed max volume count" */
    assert_string_equal(gp_filter_text(GP_FILTER_VOLUME_LIMITS), "node(s) exceed max volume count");
    /* v2's one pod ends: one volume attached, room for v3 (twice: once) */
    assert_int_equal(gp_engine_pod_finished(e, p2), GP_OK);
    assert_int_equal(filter(e, na, new3), GP_FILTER_COUNT);
    assert_int_equal(filter(e, na, twice), GP_FILTER_COUNT);
    assert_int_equal(filter(e, na, mixed), GP_FILTER_COUNT);
    /* v1's first pod ends: the other still holds v1 */
    assert_int_equal(gp_engine_pod_finished(e, p1), GP_OK);
    assign(e, new3, na);
    uint32_t new2 = vpod(e, v2, 1);
    assert_int_equal(filter(e, na, new2), GP_FILTER_VOLUME_LIMITS);
    assert_int_equal(gp_engine_pod_finished(e, p1b), GP_OK);
    assert_int_equal(filter(e, na, new2), GP_FILTER_COUNT);
    gp_engine_free(e);
}

/* Scheduled by the engine: pods of one new volume each on two nodes of
 * limit 1: two are placed, one per node, the third refused on both in the
 * explanation's count. A limit of 0 with a pod of no volumes: it passes. */
static void test_limit_cycle(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    static const struct gp_csi_limit lim[] = {{PD, 1}}, zero[] = {{PD, 0}};
    struct gp_node_spec a = lnode("a", lim, 1), b = lnode("b", lim, 1), c = lnode("c", zero, 1);
    assert_int_equal(gp_engine_node_add(e, &a, NULL), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &b, NULL), GP_OK);
    uint32_t nc;
    assert_int_equal(gp_engine_node_add(e, &c, &nc), GP_OK);
    static const struct gp_csi_volume v1[] = {{PD, PD "/v1"}}, v2[] = {{PD, PD "/v2"}},
                                      v3[] = {{PD, PD "/v3"}};
    uint32_t p1 = vpod(e, v1, 1), p2 = vpod(e, v2, 1), p3 = vpod(e, v3, 1);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(n, 3);
    uint32_t bound = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind == GP_DECISION_BIND) {
            bound++;
            continue;
        }
        assert_int_equal(d[i].pod, p3);
        assert_int_equal(d[i].kind, GP_DECISION_UNSCHEDULABLE);
        assert_int_equal(d[i].explain.rejected[GP_FILTER_VOLUME_LIMITS], 3);
    }
    assert_int_equal(bound, 2);
    assert_int_not_equal(gp_engine_pod(e, p1)->node, gp_engine_pod(e, p2)->node);
    assert_int_not_equal(gp_engine_pod(e, p1)->node, nc);
    uint32_t plain = vpod(e, NULL, 0);
    assert_int_equal(filter(e, nc, plain), GP_FILTER_COUNT);
    gp_engine_free(e);
}

/* A count lost (out of memory in csi.c; made by hand: the counts freed,
 * the engine marked): limited nodes refuse pods of CSI volumes of a
 * limited driver, a node without limits takes them; the next cycle counts
 * the bound pods again and decides as before. */
static void test_limit_count_lost(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    static const struct gp_csi_limit lim[] = {{PD, 2}};
    struct gp_node_spec a = lnode("a", lim, 1), b = lnode("b", NULL, 0);
    uint32_t na, nb;
    assert_int_equal(gp_engine_node_add(e, &a, &na), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &b, &nb), GP_OK);
    static const struct gp_csi_volume v1[] = {{PD, PD "/v1"}}, v2[] = {{PD, PD "/v2"}},
                                      v3[] = {{PD, PD "/v3"}};
    uint32_t p1 = vpod(e, v1, 1);
    assign(e, p1, na);
    gp_eng_csi_free(e);
    e->csi_broken = true;
    uint32_t p2 = vpod(e, v2, 1);
    assert_int_equal(filter(e, na, p2), GP_FILTER_VOLUME_LIMITS);
    assert_int_equal(filter(e, nb, p2), GP_FILTER_COUNT);
    gp_eng_csi_recount(e);
    assert_false(e->csi_broken);
    assert_int_equal(filter(e, na, p2), GP_FILTER_COUNT);
    assign(e, p2, na);
    uint32_t p3 = vpod(e, v3, 1);
    assert_int_equal(filter(e, na, p3), GP_FILTER_VOLUME_LIMITS); /* v1 counted again */
    gp_engine_free(e);
}

/* More new volumes of a driver than an empty node allows: never fits it. */
static void test_limit_never_fits(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    static const struct gp_csi_limit lim[] = {{PD, 1}};
    struct gp_node_spec a = lnode("a", lim, 1);
    uint32_t na;
    assert_int_equal(gp_engine_node_add(e, &a, &na), GP_OK);
    static const struct gp_csi_volume two[] = {{PD, PD "/v1"}, {PD, PD "/v2"}},
                                      one[] = {{PD, PD "/v1"}, {PD, PD "/v1"}};
    uint32_t p2 = vpod(e, two, 2), p1 = vpod(e, one, 2);
    assert_false(gp_eng_fits_empty(e, gp_engine_node(e, na), gp_engine_pod(e, p2)));
    assert_true(gp_eng_fits_empty(e, gp_engine_node(e, na), gp_engine_pod(e, p1)));
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_counts),
        cmocka_unit_test(test_limit_cycle),
        cmocka_unit_test(test_limit_count_lost),
        cmocka_unit_test(test_limit_never_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
