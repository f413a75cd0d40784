/* test_share_assign.c - a pod the driver names GPUs for (gp_engine_pod_assign
 * with a pick: a pod found running after a restart, at its device
 * annotations) on nodes that share their GPUs: booked on the GPUs named
 * on time-sliced, MPS, exclusive and MIG pools, never on the engine's own
 * choice; a pick that does not fit or names a GPU twice refused with
 * nothing changed; and a property test that a named pick is accepted
 * exactly when placement could have chosen it (docs/sharing.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/share.h"
#include "engine/sharing.h"
#include "util/rng.h"

#define GIB 1024u

static struct gp_sharing_spec timeslice(uint32_t replicas, bool over)
{
    struct gp_sharing_spec s = {0};
    s.mode = GP_SHARE_TIMESLICE;
    s.replicas = replicas;
    s.oversubscribe = over;
    return s;
}

/* MPS as NVIDIA's device plugin sets its defaults: 100 / replicas % of
 * the threads and the GPU's memory / replicas per client. */
static struct gp_sharing_spec mps(uint32_t replicas, uint32_t gpu_mem_mib)
{
    struct gp_sharing_spec s = {0};
    s.mode = GP_SHARE_MPS;
    s.replicas = replicas;
    s.fail_requests_greater_than_one = true;
    s.mps.active_thread_pct = 100 / replicas;
    s.mps.pinned_mem_mib = gpu_mem_mib / replicas;
    return s;
}

static struct gp_node_spec node(const char *name, uint32_t gpus, const struct gp_sharing_spec *sh)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "A100-80GB";
    s.gpu_count = gpus;
    s.gpu_mem_mib = 80 * GIB;
    s.cpu_milli = 96000;
    s.mem_mib = 1024 * GIB;
    s.sharing = sh;
    return s;
}

static struct gp_pod_spec pod(uint32_t count, uint32_t milli, uint32_t mem_mib)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = count;
    s.gpu_milli = milli;
    s.gpu_mem_mib = mem_mib;
    return s;
}

static struct gp_pick named(uint32_t n, const uint8_t *gpus)
{
    struct gp_pick k;
    memset(&k, 0, sizeof k);
    k.mig_profile = -1;
    k.ngpus = (uint8_t)n;
    memcpy(k.gpu, gpus, n);
    return k;
}

/* Adds a pod and assigns it on node 0 at the GPUs given; the result. */
static enum gp_err assign(struct gp_engine *e, const struct gp_pod_spec *spec, uint32_t n,
                          const uint8_t *gpus, uint32_t *id)
{
    uint32_t pid;
    assert_int_equal(gp_engine_pod_add(e, spec, 0, &pid), GP_OK);
    struct gp_pick k = named(n, gpus);
    enum gp_err err = gp_engine_pod_assign(e, pid, 0, &k);
    if (id)
        *id = pid;
    return err;
}

/* The pods booked on each GPU of node 0, as a string ("0,3"). */
static const char *pods_per_gpu(const struct gp_engine *e)
{
    static char b[128];
    const struct gp_node *n = gp_engine_node(e, 0);
    size_t off = 0;
    b[0] = '\0';
    for (uint32_t g = 0; g < n->spec.gpu_count; g++)
        off += (size_t)snprintf(b + off, sizeof b - off, "%s%u", g ? "," : "", n->gpu[g].pods);
    return b;
}

/* A pod refused: still pending, the node as it was. */
static void assert_refused(struct gp_engine *e, const struct gp_pod_spec *spec, uint32_t n,
                           const uint8_t *gpus)
{
    char before[128];
    snprintf(before, sizeof before, "%s", pods_per_gpu(e));
    uint32_t id;
    assert_int_equal(assign(e, spec, n, gpus, &id), GP_ELIMIT);
    assert_int_equal(gp_engine_pod(e, id)->state, GP_POD_PENDING);
    assert_string_equal(pods_per_gpu(e), before);
}

static void test_timeslice_named(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = timeslice(4, false);
    struct gp_node_spec n = node("ts", 2, &ts);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    /* nvidia.com/gpu: 1 of a replica, named on GPU 1: the engine's own
     * choice on the empty node would be GPU 0 */
    struct gp_pod_spec one = pod(1, GP_GPU_MILLI, 0);
    struct gp_pick dflt;
    assert_int_equal(
        gp_engine_pick_default(gp_engine_node(e, 0), &(struct gp_pod){.spec = one}, &dflt), 0);
    assert_int_equal(dflt.gpu[0], 0);
    uint8_t g1[] = {1};
    uint32_t first;
    assert_int_equal(assign(e, &one, 1, g1, &first), GP_OK);
    const struct gp_pod *p = gp_engine_pod(e, first);
    assert_int_equal(p->state, GP_POD_BOUND);
    assert_int_equal(p->pick.ngpus, 1);
    assert_int_equal(p->pick.gpu[0], 1);
    assert_int_equal(p->pick.mig_profile, -1);
    assert_string_equal(pods_per_gpu(e), "0,1");
    for (int i = 0; i < 3; i++)
        assert_int_equal(assign(e, &one, 1, g1, NULL), GP_OK);
    assert_string_equal(pods_per_gpu(e), "0,4");
    assert_int_equal(gp_engine_node(e, 0)->gpu[1].milli_free, 0);
    /* GPU 1's four replicas are taken: a fifth named there is refused */
    assert_refused(e, &one, 1, g1);
    uint8_t g2[] = {2}, dup[] = {0, 0}, spread[] = {0, 1};
    assert_refused(e, &one, 1, g2); /* no GPU 2 */
    struct gp_pod_spec two = pod(2, GP_GPU_MILLI, 0);
    assert_refused(e, &two, 2, dup);    /* a GPU named twice */
    assert_refused(e, &two, 2, spread); /* GPU 1 full */
    assert_refused(e, &two, 1, g1);     /* fewer GPUs than replicas asked */
    /* a pod finishing gives back its replica on GPU 1 */
    assert_int_equal(gp_engine_pod_finished(e, first), GP_OK);
    assert_string_equal(pods_per_gpu(e), "0,3");
    assert_int_equal(assign(e, &two, 2, spread, NULL), GP_OK);
    assert_string_equal(pods_per_gpu(e), "1,4");
    gp_engine_free(e);
}

/* Declared memory on a time-sliced GPU: what is left of the GPU's, or
 * beyond it, flagged, when the pool oversubscribes. */
static void test_timeslice_named_memory(void **state)
{
    (void)state;
    for (int over = 0; over <= 1; over++) {
        struct gp_sharing_spec ts = timeslice(4, over);
        struct gp_node_spec n = node("ts", 2, &ts);
        struct gp_engine *e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        struct gp_pod_spec p50 = pod(1, 0, 50 * GIB);
        uint8_t g1[] = {1};
        assert_int_equal(assign(e, &p50, 1, g1, NULL), GP_OK);
        assert_int_equal(gp_engine_node(e, 0)->gpu[1].mem_free_mib, 30 * GIB);
        if (!over) {
            assert_refused(e, &p50, 1, g1); /* 100 GiB declared of 80 */
        } else {
            uint32_t id;
            assert_int_equal(assign(e, &p50, 1, g1, &id), GP_OK);
            assert_true(gp_engine_pod(e, id)->oversubscribed);
            assert_int_equal(gp_engine_node(e, 0)->gpu[1].mem_over_mib, 20 * GIB);
        }
        gp_engine_free(e);
    }
}

static void test_mps_named(void **state)
{
    (void)state;
    struct gp_sharing_spec m = mps(4, 80 * GIB); /* 25 % and 20 GiB per client */
    struct gp_node_spec n = node("mps", 2, &m);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec ok = pod(1, 250, 20 * GIB);
    uint8_t g1[] = {1};
    for (int i = 0; i < 4; i++)
        assert_int_equal(assign(e, &ok, 1, g1, NULL), GP_OK);
    assert_string_equal(pods_per_gpu(e), "0,4");
    assert_int_equal(gp_engine_node(e, 0)->gpu[1].mem_free_mib, 0);
    assert_refused(e, &ok, 1, g1); /* no client left on GPU 1 */
    /* a client's limits, as placement applies them */
    uint8_t g0[] = {0}, dup[] = {0, 0};
    struct gp_pod_spec hungry = pod(1, 300, 10 * GIB), big = pod(1, 250, 25 * GIB);
    assert_refused(e, &hungry, 1, g0);
    assert_refused(e, &big, 1, g0);
    assert_refused(e, &(struct gp_pod_spec){.name = "two", .gpu_count = 2, .gpu_milli = 1000}, 2,
                   dup);
    /* without a share declared, a client with the daemon's limits */
    struct gp_pod_spec plain = pod(1, GP_GPU_MILLI, 0);
    assert_int_equal(assign(e, &plain, 1, g0, NULL), GP_OK);
    assert_string_equal(pods_per_gpu(e), "1,4");
    gp_engine_free(e);
}

/* An exclusive pool: whole free GPUs, a fraction taking one whole. */
static void test_exclusive_named(void **state)
{
    (void)state;
    struct gp_sharing_spec ex = {0};
    struct gp_node_spec n = node("ex", 2, &ex);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec small = pod(1, 100, 5 * GIB);
    uint8_t g1[] = {1}, dup[] = {0, 0};
    assert_int_equal(assign(e, &small, 1, g1, NULL), GP_OK);
    assert_string_equal(pods_per_gpu(e), "0,1");
    assert_refused(e, &small, 1, g1);
    assert_refused(e, &(struct gp_pod_spec){.name = "two", .gpu_count = 2, .gpu_milli = 1000}, 2,
                   dup);
    gp_engine_free(e);
}

/* MIG: free instances of the pod's profile, by GPU and first slice. */
static void test_mig_named(void **state)
{
    (void)state;
    struct gp_sharing_spec s = {0};
    s.mode = GP_SHARE_MIG;
    s.replicas = 1;
    s.mig.model = gp_mig_model_find("A100-80GB");
    assert_non_null(s.mig.model);
    struct gp_mig_counts counts;
    bool enabled;
    assert_true(gp_mig_named_config(s.mig.model, "all-1g.10gb", &counts, &enabled));
    assert_true(gp_mig_layout_from_counts(s.mig.model, &counts, &s.mig.layout, NULL, 0));
    struct gp_node_spec n = node("mig", 2, &s);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec p = pod(2, 142, 10 * GIB);
    p.mig_profile = "1g.10gb";
    p.share_modes = 1u << GP_SHARE_MIG;
    int q = gp_mig_profile_find(s.mig.model, "1g.10gb");
    const struct gp_mig_instance *last = &s.mig.layout.inst[s.mig.layout.n - 1];
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    /* two instances on GPU 1, the last of the layout and its first */
    struct gp_pick k = named(2, (const uint8_t[]){1, 1});
    k.mig_profile = (int8_t)q;
    k.mig_start[0] = last->start;
    k.mig_start[1] = s.mig.layout.inst[0].start;
    struct gp_pick same = k, wrong = k;
    same.mig_start[1] = same.mig_start[0];
    wrong.mig_profile = (int8_t)(q + 1);
    assert_int_equal(gp_engine_pod_assign(e, id, 0, &same), GP_ELIMIT); /* one instance twice */
    assert_int_equal(gp_engine_pod_assign(e, id, 0, &wrong), GP_ELIMIT);
    assert_int_equal(gp_engine_pod_assign(e, id, 0, &k), GP_OK);
    const struct gp_pod *bp = gp_engine_pod(e, id);
    assert_int_equal(bp->pick.gpu[0], 1);
    assert_int_equal(bp->pick.mig_start[0], last->start);
    assert_int_equal(bp->pick.mig_profile, q);
    assert_int_equal(bp->pick.reconfigured, 0);
    assert_string_equal(pods_per_gpu(e), "0,2");
    /* those instances are held now */
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_pod_assign(e, id, 0, &k), GP_ELIMIT);
    assert_string_equal(pods_per_gpu(e), "0,2");
    gp_engine_free(e);
}

/* Random states of time-sliced and MPS nodes: for random pods, a named
 * pick of distinct GPUs is accepted exactly when placement could have
 * given the pod each of its replicas there - when, on the node with every
 * other GPU's replicas taken, the filter passes a pod of one replica
 * alike and the engine picks that GPU - and the engine's own choice is
 * always accepted as a named pick. */
static bool placement_gives(const struct gp_node *nd, const struct gp_pod *p, uint32_t g)
{
    const struct gp_sharing_spec *sh = nd->spec.sharing;
    struct gp_node alone = *nd;
    for (uint32_t x = 0; x < nd->spec.gpu_count; x++)
        if (x != g) {
            alone.gpu[x].pods = sh->replicas;
            alone.gpu[x].milli_free = 0;
        }
    alone.gpu_milli_max_free = alone.gpu[g].milli_free;
    struct gp_pod one = *p;
    one.spec.gpu_count = 1;
    struct gp_pick k;
    return gp_share_filter(&alone, &one) == GP_FILTER_COUNT &&
           gp_share_pick(&alone, &one, &k) == 0 && k.ngpus == 1 && k.gpu[0] == g;
}

static void test_property_named_as_placement(void **state)
{
    (void)state;
    struct gp_rng rng;
    gp_rng_seed(&rng, 14);
    struct gp_sharing_spec specs[4] = {timeslice(3, false), timeslice(4, true), mps(4, 80 * GIB),
                                       mps(2, 0)};
    size_t checked = 0, accepted = 0;
    for (int round = 0; round < 200; round++) {
        const struct gp_sharing_spec *sh = &specs[gp_rng_below(&rng, 4)];
        struct gp_node_spec n = node("n", 1 + (uint32_t)gp_rng_below(&rng, 4), sh);
        struct gp_engine *e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        for (int i = 0; i < 12; i++) {
            bool two = sh->mode == GP_SHARE_TIMESLICE && gp_rng_below(&rng, 4) == 0;
            uint32_t milli = two || gp_rng_below(&rng, 3) == 0 /* a share is of one GPU */
                                 ? GP_GPU_MILLI
                                 : 50 * (1 + (uint32_t)gp_rng_below(&rng, 8));
            struct gp_pod_spec ps = pod(1 + two, milli, (uint32_t)gp_rng_below(&rng, 5) * 10 * GIB);
            uint32_t id;
            assert_int_equal(gp_engine_pod_add(e, &ps, 0, &id), GP_OK);
            const struct gp_node *nd = gp_engine_node(e, 0);
            const struct gp_pod *p = gp_engine_pod(e, id);
            for (uint32_t mask = 1; mask < (1u << nd->spec.gpu_count); mask++) {
                if ((uint32_t)__builtin_popcount(mask) != ps.gpu_count)
                    continue; /* every set of distinct GPUs of the pod's size */
                uint8_t gs[4];
                uint32_t k = 0;
                for (uint32_t g = 0; g < nd->spec.gpu_count; g++)
                    if (mask >> g & 1)
                        gs[k++] = (uint8_t)g;
                struct gp_pick in = named(k, gs), out;
                bool ok = gp_share_pick_named(nd, p, &in, &out) == 0;
                bool could = true;
                for (uint32_t j = 0; j < k; j++)
                    could = could && placement_gives(nd, p, gs[j]);
                if (could != ok)
                    fail_msg("round %d pod %d GPUs %#x: placement %d, named %d", round, i, mask,
                             could, ok);
                checked++;
                accepted += ok;
            }
            struct gp_pick dflt, out;
            if (gp_share_filter(nd, p) == GP_FILTER_COUNT && gp_share_pick(nd, p, &dflt) == 0) {
                bool distinct = dflt.ngpus < 2 || dflt.gpu[0] != dflt.gpu[1];
                if (distinct)
                    assert_int_equal(gp_share_pick_named(nd, p, &dflt, &out), 0);
                assert_int_equal(gp_engine_pod_assign(e, id, 0, distinct ? &dflt : NULL), GP_OK);
            }
        }
        gp_engine_free(e);
    }
    assert_true(checked > 1000);
    assert_true(accepted > checked / 10 && accepted < checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeslice_named), cmocka_unit_test(test_timeslice_named_memory),
        cmocka_unit_test(test_mps_named),       cmocka_unit_test(test_exclusive_named),
        cmocka_unit_test(test_mig_named),       cmocka_unit_test(test_property_named_as_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
