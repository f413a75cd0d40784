/* test_share.c - pods on shared GPUs in the engine: hand-worked cases for
 * exclusive, time-sliced, MPS and MIG (static and dynamic) pools, requests
 * that pin a mode, and a property test that no MIG layout is ever invalid
 * and no replica, client slot, slice or memory is over-allocated. */
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

static struct gp_sharing_spec mps(uint32_t replicas, uint32_t gpu_mem_mib)
{
    struct gp_sharing_spec s = {0};
    s.mode = GP_SHARE_MPS;
    s.replicas = replicas;
    s.mps.active_thread_pct = 100 / replicas;
    s.mps.pinned_mem_mib = gpu_mem_mib / replicas;
    return s;
}

/* A MIG pool of A100-80GB: a named mig-parted config, or empty (dynamic). */
static struct gp_sharing_spec mig(const char *config, bool dynamic)
{
    struct gp_sharing_spec s = {0};
    s.mode = GP_SHARE_MIG;
    s.replicas = 1;
    s.mig.model = gp_mig_model_find("A100-80GB");
    assert_non_null(s.mig.model);
    s.mig.dynamic = dynamic;
    if (config) {
        struct gp_mig_counts counts;
        bool enabled;
        assert_true(gp_mig_named_config(s.mig.model, config, &counts, &enabled));
        assert_true(gp_mig_layout_from_counts(s.mig.model, &counts, &s.mig.layout, NULL, 0));
    }
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

static struct gp_pod_spec share_pod(uint32_t milli, uint32_t mem_mib)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1;
    s.gpu_milli = milli;
    s.gpu_mem_mib = mem_mib;
    return s;
}

static struct gp_pod_spec mig_pod(const char *profile, uint32_t count)
{
    struct gp_pod_spec s = share_pod(142, 10 * GIB);
    s.gpu_count = count;
    s.mig_profile = profile;
    s.share_modes = 1u << GP_SHARE_MIG;
    return s;
}

/* Adds and places one pod now; returns its decision. */
static struct gp_decision place(struct gp_engine *e, const struct gp_pod_spec *spec, uint32_t *id)
{
    uint32_t pid;
    assert_int_equal(gp_engine_pod_add(e, spec, 0, &pid), GP_OK);
    struct gp_decision d;
    assert_int_equal(gp_engine_schedule_pod(e, pid, &d), GP_OK);
    if (id)
        *id = pid;
    return d;
}

static enum gp_filter main_reason(const struct gp_decision *d)
{
    assert_int_equal(d->kind, GP_DECISION_UNSCHEDULABLE);
    return gp_explain_main(&d->explain);
}

static void test_exclusive_fraction_takes_whole_gpu(void **state)
{
    (void)state;
    struct gp_sharing_spec ex = {0};
    struct gp_node_spec n = node("n", 2, &ex);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec small = share_pod(100, 5 * GIB);
    struct gp_decision d = place(e, &small, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    d = place(e, &small, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.gpu[0], 1); /* the first GPU is taken whole */
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    assert_int_equal(t.gpu_milli_alloc, 2000);
    d = place(e, &small, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_GPU_COUNT);
    gp_engine_free(e);
}

static void test_timeslice_replicas_and_memory(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = timeslice(4, false);
    struct gp_node_spec n = node("n", 1, &ts);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec p20 = share_pod(0, 20 * GIB), p30 = share_pod(0, 30 * GIB);
    uint32_t first;
    for (int i = 0; i < 3; i++) {
        struct gp_decision d = place(e, &p20, i == 0 ? &first : NULL);
        assert_int_equal(d.kind, GP_DECISION_BIND);
    }
    /* 60 GiB declared of 80: a 30 GiB pod does not fit, a 20 GiB one does */
    struct gp_decision d = place(e, &p30, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_GPU_MEMORY);
    d = place(e, &p20, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    /* four replicas are taken: the fifth pod finds none */
    struct gp_pod_spec tiny = share_pod(0, 1);
    d = place(e, &tiny, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_GPU_REPLICA);
    const struct gp_node *nd = gp_engine_node(e, 0);
    assert_int_equal(nd->gpu[0].pods, 4);
    assert_int_equal(nd->gpu[0].milli_free, 0);
    assert_int_equal(nd->gpu[0].mem_free_mib, 0);
    /* nvidia.com/gpu: 1 on replicas that are not renamed is one replica */
    assert_int_equal(gp_engine_pod_finished(e, first), GP_OK);
    struct gp_pod_spec whole = share_pod(1000, 0);
    d = place(e, &whole, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(nd->gpu[0].pods, 4);
    gp_engine_free(e);
}

/* The device plugin advertises time-sliced and MPS replicas as
 * nvidia.com/gpu (renameByDefault false, its default) or only as
 * nvidia.com/gpu.shared (true): a pod asking for the other name fits no
 * replica, and an exclusive node has no nvidia.com/gpu.shared. */
static void test_replica_resource_names(void **state)
{
    (void)state;
    struct gp_sharing_spec plain = timeslice(4, false), renamed = plain, ex = {0};
    renamed.rename_by_default = true;
    struct gp_sharing_spec mp = mps(4, 80 * GIB), mp_renamed = mp;
    mp_renamed.rename_by_default = true;
    struct gp_pod_spec gpu = share_pod(1000, 0), shared = gpu;
    shared.gpu_resource = GP_GPU_RES_SHARED;
    const struct {
        const struct gp_sharing_spec *node;
        const struct gp_pod_spec *pod;
        bool fits;
    } cases[] = {
        {&plain, &gpu, true},       {&plain, &shared, false},
        {&renamed, &gpu, false},    {&renamed, &shared, true},
        {&mp, &gpu, true},          {&mp, &shared, false},
        {&mp_renamed, &gpu, false}, {&mp_renamed, &shared, true},
        {&ex, &gpu, true},          {&ex, &shared, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gp_node_spec n = node("n", 2, cases[i].node);
        struct gp_engine *e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        struct gp_decision d = place(e, cases[i].pod, NULL);
        if (cases[i].fits) {
            assert_int_equal(d.kind, GP_DECISION_BIND);
        } else {
            assert_int_equal(main_reason(&d), GP_FILTER_SHARING);
            char why[256];
            uint32_t pid = d.pod;
            assert_non_null(
                gp_share_refusal(gp_engine_node(e, 0), gp_engine_pod(e, pid), why, sizeof why));
            assert_non_null(strstr(why, cases[i].pod == &gpu ? "renameByDefault: true"
                                                             : "nvidia.com/gpu.shared"));
        }
        gp_engine_free(e);
    }
    /* a share by annotations alone (no NVIDIA resource) takes a replica
     * whatever the name; with nvidia.com/gpu: 1 beside it, not a renamed one */
    struct gp_pod_spec frac = share_pod(300, 10 * GIB);
    struct gp_node_spec n = node("n", 1, &renamed);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_decision d = place(e, &frac, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_SHARING);
    frac.gpu_resource = GP_GPU_RES_NONE;
    assert_int_equal(place(e, &frac, NULL).kind, GP_DECISION_BIND);
    gp_engine_free(e);

    /* in one cycle: the first pod's failure does not answer for the second,
     * alike in every number but the resource it asks with */
    e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec asks_gpu = frac, asks_none = frac;
    asks_gpu.gpu_resource = GP_GPU_RES_GPU;
    assert_int_equal(gp_engine_pod_add(e, &asks_gpu, 0, NULL), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &asks_none, 0, NULL), GP_OK);
    struct gp_decision out[4];
    assert_int_equal(gp_engine_schedule(e, 0, 0, out, 4), 2);
    assert_int_equal(out[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(out[1].kind, GP_DECISION_BIND);
    gp_engine_free(e);
}

/* nvidia.com/gpu: N on replicas takes N replicas: on distinct GPUs while
 * there are some, on one GPU otherwise; refused outright where the device
 * plugin fails requests greater than one (failRequestsGreaterThanOne, and
 * always under MPS). */
static void test_replicas_greater_than_one(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = timeslice(4, false), strict = ts, mp = mps(4, 80 * GIB);
    strict.fail_requests_greater_than_one = true;
    struct gp_pod_spec two = share_pod(1000, 10 * GIB);
    two.gpu_count = 2;
    struct gp_node_spec n2 = node("n", 2, &ts), n1 = node("m", 1, &ts);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n2, NULL), GP_OK);
    struct gp_decision d = place(e, &two, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.ngpus, 2);
    assert_int_not_equal(d.pick.gpu[0], d.pick.gpu[1]); /* two GPUs */
    const struct gp_node *nd = gp_engine_node(e, 0);
    assert_int_equal(nd->gpu[0].pods, 1);
    assert_int_equal(nd->gpu[1].pods, 1);
    assert_int_equal(nd->gpu[0].mem_free_mib, 70 * GIB); /* memory counts per replica */
    gp_engine_free(e);

    e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n1, NULL), GP_OK);
    d = place(e, &two, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.gpu[0], 0);
    assert_int_equal(d.pick.gpu[1], 0); /* one GPU holds both */
    struct gp_pod_spec one = share_pod(1000, 0);
    assert_int_equal(place(e, &one, NULL).kind, GP_DECISION_BIND);
    d = place(e, &two, NULL); /* one replica left of four */
    assert_int_equal(main_reason(&d), GP_FILTER_GPU_REPLICA);
    assert_int_equal(gp_engine_node(e, 0)->gpu[0].pods, 3);
    gp_engine_free(e);

    const struct gp_sharing_spec *refusing[] = {&strict, &mp};
    for (size_t i = 0; i < 2; i++) {
        struct gp_node_spec n = node("n", 2, refusing[i]);
        e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        d = place(e, &two, NULL);
        assert_int_equal(main_reason(&d), GP_FILTER_SHARING);
        char why[256];
        assert_non_null(
            gp_share_refusal(gp_engine_node(e, 0), gp_engine_pod(e, d.pod), why, sizeof why));
        assert_non_null(strstr(why, "failRequestsGreaterThanOne"));
        assert_int_equal(place(e, &one, NULL).kind, GP_DECISION_BIND); /* one is fine */
        gp_engine_free(e);
    }
}

static void test_timeslice_oversubscribe_flags(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = timeslice(4, true);
    struct gp_node_spec n = node("n", 1, &ts);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec p50 = share_pod(0, 50 * GIB);
    uint32_t a, b;
    assert_int_equal(place(e, &p50, &a).kind, GP_DECISION_BIND);
    assert_int_equal(place(e, &p50, &b).kind, GP_DECISION_BIND);
    assert_false(gp_engine_pod(e, a)->oversubscribed);
    assert_true(gp_engine_pod(e, b)->oversubscribed);
    const struct gp_node *nd = gp_engine_node(e, 0);
    assert_int_equal(nd->gpu[0].mem_free_mib, 0);
    assert_int_equal(nd->gpu[0].mem_over_mib, 20 * GIB);
    /* releasing the oversubscribed pod gives back exactly its excess */
    assert_int_equal(gp_engine_pod_finished(e, b), GP_OK);
    assert_int_equal(nd->gpu[0].mem_over_mib, 0);
    assert_int_equal(nd->gpu[0].mem_free_mib, 30 * GIB);
    gp_engine_free(e);
}

static void test_mps_client_limits(void **state)
{
    (void)state;
    struct gp_sharing_spec m = mps(4, 80 * GIB); /* 25 % and 20 GiB per client */
    struct gp_node_spec n = node("n", 1, &m);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec hungry = share_pod(300, 10 * GIB), big = share_pod(250, 25 * GIB);
    struct gp_decision d = place(e, &hungry, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_GPU_SHARE);
    d = place(e, &big, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_GPU_MEMORY);
    struct gp_pod_spec ok = share_pod(250, 20 * GIB);
    for (int i = 0; i < 4; i++)
        assert_int_equal(place(e, &ok, NULL).kind, GP_DECISION_BIND);
    d = place(e, &ok, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_GPU_REPLICA);
    gp_engine_free(e);
    /* nvidia.com/gpu: 1 with no share declared is a client with the
     * daemon's limits: the thread limit does not turn it away */
    e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec plain = share_pod(1000, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(place(e, &plain, NULL).kind, GP_DECISION_BIND);
    assert_int_equal(gp_engine_node(e, 0)->gpu[0].pods, 4);
    gp_engine_free(e);
}

static void test_mig_static(void **state)
{
    (void)state;
    struct gp_sharing_spec sh = mig("all-1g.10gb", false);
    struct gp_node_spec n = node("n", 1, &sh);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec one = mig_pod("1g.10gb", 1);
    /* a fraction of 10 GiB is served by the smallest profile that holds it */
    struct gp_pod_spec frac = share_pod(100, 10 * GIB);
    frac.gpu_resource = GP_GPU_RES_NONE; /* by gpuplane's annotations alone */
    assert_int_equal(place(e, &frac, NULL).kind, GP_DECISION_BIND);
    for (int i = 0; i < 6; i++) {
        struct gp_decision d = place(e, &one, NULL);
        assert_int_equal(d.kind, GP_DECISION_BIND);
        assert_int_equal(d.pick.reconfigured, 0); /* a static layout never changes */
    }
    struct gp_decision d = place(e, &one, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_MIG);
    /* the same fraction asked with nvidia.com/gpu: 1 is not served: the
     * mixed strategy advertises no nvidia.com/gpu for GPUs in MIG mode */
    frac.gpu_resource = GP_GPU_RES_GPU;
    d = place(e, &frac, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_SHARING);
    /* another profile: the layout has none, and a static pool makes none */
    struct gp_pod_spec two = mig_pod("2g.20gb", 1);
    d = place(e, &two, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_MIG);
    /* a profile this model lacks: not the pool for it */
    struct gp_pod_spec other = mig_pod("1g.5gb", 1);
    d = place(e, &other, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_SHARING);
    const struct gp_node *nd = gp_engine_node(e, 0);
    assert_int_equal(nd->gpu[0].pods, 7);
    assert_int_equal(nd->gpu[0].milli_free, 0);
    gp_engine_free(e);
}

/* Under the single strategy the device plugin advertises each instance as
 * nvidia.com/gpu: a whole-GPU request takes instances of the pool's
 * profile; under mixed it does not fit at all. */
static void test_mig_single_strategy(void **state)
{
    (void)state;
    struct gp_sharing_spec single = mig("all-1g.10gb", false), mixed = single;
    single.mig.strategy = GP_MIG_SINGLE;
    struct gp_node_spec n = node("n", 1, &single);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    struct gp_pod_spec two = share_pod(1000, 0), six = share_pod(1000, 0);
    two.gpu_count = 2;
    six.gpu_count = 6;
    struct gp_decision d = place(e, &two, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.ngpus, 2);
    assert_int_equal(d.pick.gpu[0], 0);
    assert_int_equal(d.pick.gpu[1], 0); /* two instances of the one GPU */
    d = place(e, &six, NULL);           /* 2 + 6 > 7 instances */
    assert_int_equal(main_reason(&d), GP_FILTER_MIG);
    /* nor is any nvidia.com/mig-<profile> advertised under single */
    struct gp_pod_spec named = mig_pod("1g.10gb", 1);
    d = place(e, &named, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_SHARING);
    gp_engine_free(e);

    n.sharing = &mixed;
    e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    d = place(e, &two, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_SHARING);
    gp_engine_free(e);
}

static void test_mig_dynamic_keeps_room(void **state)
{
    (void)state;
    struct gp_sharing_spec sh = mig(NULL, true);
    struct gp_node_spec n = node("n", 1, &sh);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    /* a 3g on an empty A100 goes to slice 4, keeping 0-3 for a 4g */
    struct gp_pod_spec three = mig_pod("3g.40gb", 1), four = mig_pod("4g.40gb", 1);
    uint32_t id3;
    struct gp_decision d = place(e, &three, &id3);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.mig_start[0], 4);
    assert_int_equal(d.pick.reconfigured, 1);
    d = place(e, &four, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.mig_start[0], 0);
    struct gp_pod_spec one = mig_pod("1g.10gb", 1);
    d = place(e, &one, NULL);
    assert_int_equal(main_reason(&d), GP_FILTER_MIG);
    /* the 3g ends: its instance stays, free; a 2g needs it removed */
    assert_int_equal(gp_engine_pod_finished(e, id3), GP_OK);
    struct gp_pod_spec two = mig_pod("2g.20gb", 1);
    d = place(e, &two, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.reconfigured, 1);
    const struct gp_node *nd = gp_engine_node(e, 0);
    char why[160];
    assert_true(gp_mig_layout_valid(sh.mig.model, &nd->mig[0].layout, why, sizeof why));
    assert_int_equal(nd->mig[0].layout.n, 2); /* the 4g and the 2g */
    gp_engine_free(e);
}

static void test_pinned_modes(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = timeslice(4, false), mg = mig("all-1g.10gb", false);
    struct gp_node_spec a = node("ts", 1, &ts), b = node("mig", 1, &mg), c = node("frac", 1, NULL);
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_int_equal(gp_engine_node_add(e, &a, NULL), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &b, NULL), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &c, NULL), GP_OK);
    struct gp_pod_spec p = share_pod(100, 8 * GIB);
    p.gpu_resource = GP_GPU_RES_NONE; /* a share by annotations alone */
    p.share_modes = 1u << GP_SHARE_MIG;
    struct gp_decision d = place(e, &p, NULL);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 1);
    p.share_modes = 1u << GP_SHARE_TIMESLICE;
    d = place(e, &p, NULL);
    assert_int_equal(d.node, 0);
    p.share_modes = 1u << GP_SHARE_MPS; /* no MPS pool: nowhere */
    d = place(e, &p, NULL);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_SHARING], 3);
    gp_engine_free(e);
}

/* --- property test --------------------------------------------------------- */

static void check_invariants(const struct gp_engine *e)
{
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    uint64_t taken = 0;
    uint32_t pods_on[64][GP_MAX_GPUS_PER_NODE];
    uint64_t mem_on[64][GP_MAX_GPUS_PER_NODE];
    memset(pods_on, 0, sizeof pods_on);
    memset(mem_on, 0, sizeof mem_on);
    for (size_t i = 0; i < gp_engine_pod_count(e); i++) {
        const struct gp_pod *p = gp_engine_pod(e, (uint32_t)i);
        if (p->state != GP_POD_BOUND)
            continue;
        taken += p->gpu_milli_taken;
        for (uint32_t k = 0; k < p->pick.ngpus; k++) {
            pods_on[p->node][p->pick.gpu[k]]++;
            mem_on[p->node][p->pick.gpu[k]] += p->spec.gpu_mem_mib;
        }
    }
    assert_int_equal(taken, t.gpu_milli_alloc);
    for (size_t i = 0; i < gp_engine_node_count(e); i++) {
        const struct gp_node *n = gp_engine_node(e, (uint32_t)i);
        const struct gp_sharing_spec *s = n->spec.sharing;
        assert_true(n->cpu_free_milli >= 0 && n->mem_free_mib >= 0);
        for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
            const struct gp_gpu *gpu = &n->gpu[g];
            assert_true(gpu->milli_free <= GP_GPU_MILLI);
            assert_int_equal(gpu->pods, pods_on[i][g]);
            switch (s->mode) {
            case GP_SHARE_EXCLUSIVE:
                assert_true(gpu->pods <= 1);
                break;
            case GP_SHARE_TIMESLICE:
                assert_true(gpu->pods <= s->replicas);
                /* declared memory: what is used plus the excess */
                assert_int_equal(mem_on[i][g] + gpu->mem_free_mib,
                                 (uint64_t)n->spec.gpu_mem_mib + gpu->mem_over_mib);
                if (!s->oversubscribe)
                    assert_int_equal(gpu->mem_over_mib, 0);
                break;
            case GP_SHARE_MPS:
                assert_true(gpu->pods <= s->replicas && s->replicas <= GP_MPS_MAX_CLIENTS);
                break;
            case GP_SHARE_MIG: {
                const struct gp_mig_gpu *mg = &n->mig[g];
                char why[160];
                assert_true(gp_mig_layout_valid(s->mig.model, &mg->layout, why, sizeof why));
                assert_int_equal(mg->held >> mg->layout.n, 0); /* held are instances */
                break;
            }
            }
        }
    }
}

static void test_property_never_over_allocated(void **state)
{
    (void)state;
    static const char *const profiles[] = {"1g.10gb", "1g.20gb", "2g.20gb",   "3g.40gb",
                                           "4g.40gb", "7g.80gb", "1g.10gb+me"};
    struct gp_sharing_spec specs[7] = {{0},
                                       timeslice(4, false),
                                       timeslice(3, true),
                                       mps(8, 80 * GIB),
                                       mig("all-balanced", false),
                                       mig(NULL, true),
                                       timeslice(2, false)};
    specs[6].rename_by_default = true; /* nvidia.com/gpu.shared */
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct gp_rng r;
        gp_rng_seed(&r, seed);
        struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), seed);
        struct gp_node_spec nodes[12];
        for (int i = 0; i < 12; i++) {
            nodes[i] = node("n", 1 + (uint32_t)gp_rng_below(&r, 8), &specs[gp_rng_below(&r, 7)]);
            assert_int_equal(gp_engine_node_add(e, &nodes[i], NULL), GP_OK);
        }
        uint32_t live[400];
        size_t nlive = 0;
        for (int step = 0; step < 400; step++) {
            if (nlive > 0 && gp_rng_below(&r, 3) == 0) { /* one ends */
                size_t k = gp_rng_below(&r, nlive);
                assert_int_equal(gp_engine_pod_finished(e, live[k]), GP_OK);
                live[k] = live[--nlive];
            } else {
                struct gp_pod_spec p;
                switch (gp_rng_below(&r, 5)) {
                case 0:
                    p = mig_pod(profiles[gp_rng_below(&r, 7)], 1 + (uint32_t)gp_rng_below(&r, 2));
                    break;
                case 1:
                    p = share_pod(0, 1 + (uint32_t)gp_rng_below(&r, 40 * GIB));
                    p.share_modes = 1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS;
                    break;
                case 2:
                    p = share_pod(1 + (uint32_t)gp_rng_below(&r, 500),
                                  (uint32_t)gp_rng_below(&r, 30 * GIB));
                    break;
                case 3:
                    p = share_pod(1000, 0);
                    p.gpu_count = 1 + (uint32_t)gp_rng_below(&r, 4);
                    break;
                default: /* replicas of renamed GPUs, some on one GPU */
                    p = share_pod(1000, (uint32_t)gp_rng_below(&r, 30 * GIB));
                    p.gpu_count = 1 + (uint32_t)gp_rng_below(&r, 3);
                    p.gpu_resource = GP_GPU_RES_SHARED;
                }
                uint32_t id;
                struct gp_decision d = place(e, &p, &id);
                if (d.kind == GP_DECISION_BIND)
                    live[nlive++] = id;
            }
            check_invariants(e);
        }
        while (nlive > 0)
            assert_int_equal(gp_engine_pod_finished(e, live[--nlive]), GP_OK);
        check_invariants(e);
        for (size_t i = 0; i < gp_engine_node_count(e); i++) { /* all back */
            const struct gp_node *n = gp_engine_node(e, (uint32_t)i);
            for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
                assert_int_equal(n->gpu[g].milli_free, GP_GPU_MILLI);
                assert_int_equal(n->gpu[g].pods, 0);
            }
        }
        gp_engine_free(e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exclusive_fraction_takes_whole_gpu),
        cmocka_unit_test(test_timeslice_replicas_and_memory),
        cmocka_unit_test(test_replica_resource_names),
        cmocka_unit_test(test_replicas_greater_than_one),
        cmocka_unit_test(test_timeslice_oversubscribe_flags),
        cmocka_unit_test(test_mps_client_limits),
        cmocka_unit_test(test_mig_static),
        cmocka_unit_test(test_mig_single_strategy),
        cmocka_unit_test(test_mig_dynamic_keeps_room),
        cmocka_unit_test(test_pinned_modes),
        cmocka_unit_test(test_property_never_over_allocated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
