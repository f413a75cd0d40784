/* test_podmem.c - pods the driver forgets (gp_engine_pod_forget) leave the
 * engine: a million pods submitted one after another, few of them alive at
 * once, take no more memory than the first thousands (under every queue
 * order, with gangs and drops); forgetting changes no decision;
 * a forgotten pod reads as unknown. Also util/idtab.h, which holds them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "engine/engine.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/idtab.h"
#include "util/rng.h"

#define GPU             1000
#define NODES           4
#define GPUS            8
#define SIM_PER_POD_MAX 28 /* bytes: three doubles (24) and the chunks' rounding */

static const char *const node_names[NODES] = {"n0", "n1", "n2", "n3"};

static struct gp_engine *cluster(enum gp_order order, bool backfill)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_order(e, order, backfill), GP_OK);
    struct gp_queue_spec q = {0};
    q.name = "hi";
    q.weight = 1;
    assert_int_equal(gp_engine_queue_set(e, &q, NULL), GP_OK);
    for (uint32_t i = 0; i < NODES; i++) {
        struct gp_node_spec n = {0};
        n.name = node_names[i];
        n.gpu_model = "H100";
        n.gpu_count = GPUS;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 64000;
        n.mem_mib = 512000;
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    return e;
}

/* A bound pod and when it ends. */
struct running {
    uint32_t pod;
    double end_s;
};

struct drive {
    struct gp_engine *e;
    bool forget;
    struct gp_rng rng;
    struct running *run; /* bound pods */
    size_t nrun;
    uint32_t *ended; /* ended pods to forget after the next cycle's answers */
    size_t nended;
    struct gp_decision *dec;
    uint64_t digest; /* of every decision */
    size_t max_alive, alive;
    size_t decisions;
};

static void mix(struct drive *d, uint64_t v)
{
    d->digest = (d->digest ^ v) * 0x100000001b3ULL;
}

static void ended(struct drive *d, uint32_t pod)
{
    d->ended[d->nended++] = pod;
    d->alive--;
}

/* One step at time t: pods whose run is over end, a pod (or a gang of
 * two) arrives, now and then a pending pod is dropped, a cycle runs. */
static void step(struct drive *d, double t)
{
    struct gp_engine *e = d->e;
    for (size_t i = 0; i < d->nrun;) {
        if (d->run[i].end_s <= t) {
            assert_int_equal(gp_engine_pod_finished(e, d->run[i].pod), GP_OK);
            ended(d, d->run[i].pod);
            d->run[i] = d->run[--d->nrun];
        } else {
            i++;
        }
    }
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1 + (uint32_t)gp_rng_below(&d->rng, 4);
    s.gpu_milli = GPU;
    s.queue = (uint32_t)gp_rng_below(&d->rng, 2);
    s.priority = (int32_t)gp_rng_below(&d->rng, 2);
    s.duration_hint_s = 1 + (double)gp_rng_below(&d->rng, 8);
    uint32_t n = 1;
    if (gp_rng_below(&d->rng, 16) == 0) { /* a gang of two */
        struct gp_group_spec g = {"g", 2, NULL, false};
        assert_int_equal(gp_engine_group_add(e, &g, &s.group), GP_OK);
        n = 2;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id;
        assert_int_equal(gp_engine_pod_add(e, &s, t, &id), GP_OK);
        d->alive++;
    }
    if (s.group && d->forget) /* no more members: freed when they are forgotten */
        assert_int_equal(gp_engine_group_forget(e, s.group), GP_OK);
    if (d->alive > d->max_alive)
        d->max_alive = d->alive;
    /* the driver is done with the pods that ended before this cycle */
    for (size_t i = 0; d->forget && i < d->nended; i++)
        assert_int_equal(gp_engine_pod_forget(e, d->ended[i]), GP_OK);
    d->nended = 0;
    size_t cap = gp_engine_pending_count(e) + d->nrun + 8;
    size_t nd = gp_engine_schedule(e, t, 0, d->dec, cap);
    for (size_t i = 0; i < nd; i++) {
        const struct gp_decision *x = &d->dec[i];
        mix(d, (uint64_t)x->kind << 32 | x->pod);
        d->decisions++;
        if (x->kind == GP_DECISION_BIND) {
            mix(d, x->node);
            const struct gp_pod *p = gp_engine_pod(e, x->pod);
            assert_non_null(p);
            struct running r = {x->pod, t + p->spec.duration_hint_s};
            d->run[d->nrun++] = r;
        } else if (x->kind == GP_DECISION_EVICT) {
            for (size_t j = 0; j < d->nrun; j++)
                if (d->run[j].pod == x->pod) {
                    d->run[j] = d->run[--d->nrun];
                    break;
                }
            ended(d, x->pod);
        }
    }
    /* now and then the oldest pending pod is dropped */
    if (gp_rng_below(&d->rng, 8) == 0) {
        uint32_t first;
        if (gp_engine_pending(e, &first, 1) > 0 && gp_engine_pod(e, first)->spec.group == 0) {
            assert_int_equal(gp_engine_pod_finished(e, first), GP_OK);
            ended(d, first);
        }
    }
}

static void drive_init(struct drive *d, enum gp_order order, bool backfill, bool forget)
{
    memset(d, 0, sizeof *d);
    d->e = cluster(order, backfill);
    d->forget = forget;
    gp_rng_seed(&d->rng, 42);
    d->run = malloc(NODES * GPUS * sizeof *d->run);
    d->ended = malloc(100000 * sizeof *d->ended);
    d->dec = malloc(200000 * sizeof *d->dec);
    assert_true(d->run && d->ended && d->dec);
    d->digest = 0xcbf29ce484222325ULL;
}

static void drive_free(struct drive *d)
{
    gp_engine_free(d->e);
    free(d->run);
    free(d->ended);
    free(d->dec);
}

/* Submits pods until `total` were added. */
static void drive_to(struct drive *d, size_t total, double *t)
{
    while (gp_engine_pod_count(d->e) < total) {
        step(d, *t);
        *t += 0.5;
    }
}

static size_t heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd; /* in use, and the large blocks mapped apart */
#else
    return 0;
#endif
}

/* A million pods one after another: the records held stay what the
 * first 20,000 needed, and so does the heap. Without forgetting, a
 * million records (about 300 MB) would be held. */
static void test_million_pods_bounded(void **state)
{
    (void)state;
    const enum gp_order orders[] = {GP_ORDER_FIFO, GP_ORDER_FAIR};
    for (int o = 0; o < 2; o++) {
        struct drive d;
        drive_init(&d, orders[o], o == 0, true);
        double t = 0;
        drive_to(&d, 20000, &t);
        size_t held_early = gp_engine_pods_held(d.e);
        size_t heap_early = heap_in_use();
        size_t total = o == 0 ? 1000000 : 200000;
        drive_to(&d, total, &t);
        size_t held = gp_engine_pods_held(d.e);
        size_t heap = heap_in_use();
        /* the pods alive at once, and the chunks their ids share */
        assert_true(d.max_alive < 2000);
        assert_true(held <= 64 * (d.max_alive + 64));
        assert_true(held <= 2 * held_early + 4096);
        if (heap_early > 0) /* glibc: what the heap holds grew by less than 2 MB */
            assert_true(heap < heap_early + 2 * 1024 * 1024);
        assert_true(d.decisions > total / 2);
        drive_free(&d);
    }
}

/* The same calls with and without forgetting make the same decisions, in
 * every order; a forgotten pod is unknown afterwards. */
static void test_forget_same_decisions(void **state)
{
    (void)state;
    const struct {
        enum gp_order order;
        bool backfill;
    } runs[] = {{GP_ORDER_FAIR, false},
                {GP_ORDER_FAIR, true},
                {GP_ORDER_FIFO, false},
                {GP_ORDER_FIFO, true},
                {GP_ORDER_SJF, true}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        struct drive a, b;
        drive_init(&a, runs[i].order, runs[i].backfill, true);
        drive_init(&b, runs[i].order, runs[i].backfill, false);
        double ta = 0, tb = 0;
        drive_to(&a, 30000, &ta);
        drive_to(&b, 30000, &tb);
        assert_true(a.decisions > 10000);
        assert_int_equal(a.decisions, b.decisions);
        assert_true(a.digest == b.digest);
        assert_true(gp_engine_pods_held(a.e) < gp_engine_pods_held(b.e) / 4);
        drive_free(&a);
        drive_free(&b);
    }
}

static void test_forgotten_pod_unknown(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(GP_ORDER_FIFO, false);
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.gpu_count = 1;
    s.gpu_milli = GPU;
    uint32_t a, b;
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &a), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &b), GP_OK);
    struct gp_decision d[4];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 4), 2);
    assert_int_equal(gp_engine_pod_forget(e, a), GP_ESTATE); /* bound: not ended */
    assert_int_equal(gp_engine_pod_finished(e, a), GP_OK);
    assert_int_equal(gp_engine_pod_forget(e, a), GP_OK);
    assert_non_null(gp_engine_pod(e, a)); /* readable until the next cycle */
    gp_engine_schedule(e, 1, 0, d, 4);
    assert_null(gp_engine_pod(e, a));
    assert_int_equal(gp_engine_pod_finished(e, a), GP_ESTATE);
    assert_int_equal(gp_engine_pod_forget(e, a), GP_EINVALID);
    assert_int_equal(gp_engine_pod(e, b)->state, GP_POD_BOUND);
    assert_int_equal(gp_engine_pod_count(e), 2); /* ids are not reused */
    uint32_t c;
    assert_int_equal(gp_engine_pod_add(e, &s, 2, &c), GP_OK);
    assert_int_equal(c, 2);
    gp_engine_free(e);
}

static void test_idtab(void **state)
{
    (void)state;
    struct gp_idtab t;
    gp_idtab_init(&t, 24, 2); /* four records a chunk */
    uint32_t id;
    for (uint32_t i = 0; i < 10; i++) {
        uint64_t *r = gp_idtab_add(&t, &id);
        assert_non_null(r);
        assert_int_equal(id, i);
        r[0] = i;
    }
    assert_int_equal(gp_idtab_held_bytes(&t) / (t.header + 4 * 24), 3);
    for (uint32_t i = 0; i < 4; i++)
        if (i != 2)
            gp_idtab_release(&t, i);
    assert_null(gp_idtab_get(&t, 1));
    assert_int_equal(*(uint64_t *)gp_idtab_get(&t, 2), 2);
    assert_int_equal(gp_idtab_first(&t), 0); /* 2 keeps the first chunk */
    gp_idtab_release(&t, 2);
    gp_idtab_release(&t, 2); /* twice: nothing */
    assert_int_equal(gp_idtab_first(&t), 4);
    assert_int_equal(gp_idtab_held_bytes(&t) / (t.header + 4 * 24), 2);
    for (uint32_t i = 8; i < 10; i++) /* the last chunk is not full: kept */
        gp_idtab_release(&t, i);
    assert_int_equal(gp_idtab_held_bytes(&t) / (t.header + 4 * 24), 2);
    assert_null(gp_idtab_get(&t, 9));
    assert_null(gp_idtab_get(&t, 10));
    assert_non_null(gp_idtab_add(&t, &id));
    assert_int_equal(id, 10);
    gp_idtab_unadd(&t);
    assert_null(gp_idtab_get(&t, 10));
    assert_int_equal(*(uint64_t *)gp_idtab_get(&t, 7), 7);
    gp_idtab_free(&t);
}

/* The simulator's side: a stream of pods one after another, a few alive at
 * once. What the heap holds grows, from the middle of the run to its
 * peak, by what the run's exact percentiles need per pod (its queueing
 * delay, its job's completion time and cost: 8 bytes each), not by the
 * simulator's and the engine's records of each pod (over 500 bytes a pod
 * more when they are kept), nor by the state log (88 bytes an entry, two
 * entries a pod when every entry is kept: sim.c thins it to the entries
 * the samples read, past its first 2^18 changes without a horizon). */
struct heap_watch {
    size_t at_half, peak;
};

/* AddressSanitizer keeps freed blocks in quarantine (resident): the
 * growth per pod is not the simulator's there. */
#if defined(__SANITIZE_ADDRESS__)
#define GP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GP_ASAN 1
#endif
#endif

/* Resident bytes (/proc/self/statm): the heap and the pages the
 * simulator maps for its figures (sim/values.c); 0 where unknown (and
 * under AddressSanitizer). */
static size_t resident(void)
{
#ifdef GP_ASAN
    return 0;
#else
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &res) != 2)
        res = 0;
    fclose(f);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
#endif
}

static void watch(void *ctx, double fraction)
{
    struct heap_watch *w = ctx;
    size_t h = resident();
    if (fraction >= 0.5 && w->at_half == 0)
        w->at_half = h;
    if (w->at_half && h > w->peak)
        w->peak = h;
}

static void test_sim_stream_bounded(void **state)
{
    (void)state;
    struct gp_node_spec n[8];
    for (int i = 0; i < 8; i++) {
        memset(&n[i], 0, sizeof n[i]);
        n[i].name = node_names[i % NODES];
        n[i].gpu_model = "H100";
        n[i].gpu_count = GPUS;
        n[i].gpu_mem_mib = 81920;
        n[i].cpu_milli = 64000;
        n[i].mem_mib = 512000;
    }
    struct gp_item it = {0};
    it.name = "tick";
    it.source = "tick";
    it.kind = GP_ITEM_POD;
    it.pod.name = "tick";
    it.pod.cpu_milli = 1000;
    it.pod.mem_mib = 1024;
    it.pod.gpu_count = 1;
    it.pod.gpu_milli = GPU;
    const uint32_t pods = 400000;
    it.repeat = pods;
    it.interarrival.kind = GP_DIST_EXP;
    it.interarrival.a = 3;
    it.has_duration = true;
    it.duration.kind = GP_DIST_EXP;
    it.duration.a = 60;
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    struct heap_watch w = {0, 0};
    c.progress = watch;
    c.progress_ctx = &w;
    struct gp_cluster cl = {.name = "t", .source = "t", .nodes = n, .nnodes = 8};
    struct gp_workload wl = {.items = &it, .nitems = 1, .cap = 1};
    struct gp_diag d = {{0}};
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(gp_sim_run(&c, &cl, &wl, &a, &r, &d), GP_OK);
    assert_int_equal(r.pods_completed, pods);
    /* the samples: a 1-2-5 step (a long run), and 289 of them at most */
    assert_true(r.nsamples >= 2 && r.nsamples <= 290);
    double step = r.samples[1].t_s - r.samples[0].t_s, dec = 1;
    while (dec * 10 <= step)
        dec *= 10;
    assert_true(step == dec || step == 2 * dec || step == 5 * dec);
    if (w.at_half > 0) {
        double per_pod = ((double)w.peak - (double)w.at_half) / (0.5 * pods);
        print_message("resident growth per pod: %.1f bytes\n", per_pod);
        assert_true(per_pod < SIM_PER_POD_MAX);
    }
    /* the thinned log reads as the whole one: the same run with the step
     * given (its log thinned to that step's multiples from the start)
     * samples the same states, and the peak is the same */
    struct gp_sim_config c2 = c;
    c2.progress = NULL;
    c2.sample_s = step;
    struct gp_arena a2;
    gp_arena_init(&a2);
    struct gp_sim_result r2;
    assert_int_equal(gp_sim_run(&c2, &cl, &wl, &a2, &r2, &d), GP_OK);
    assert_int_equal(r2.nsamples, r.nsamples);
    for (size_t i = 0; i < r.nsamples; i++) {
        const struct gp_sim_sample *x = &r.samples[i], *y = &r2.samples[i];
        assert_true(x->t_s == y->t_s && x->gpu_alloc_pct == y->gpu_alloc_pct &&
                    x->cpu_alloc_pct == y->cpu_alloc_pct && x->pending == y->pending &&
                    x->running == y->running && x->nodes == y->nodes && x->cost_usd == y->cost_usd);
    }
    assert_true(r.gpu_alloc_peak_pct == r2.gpu_alloc_peak_pct &&
                r.gpu_alloc_peak_t_s == r2.gpu_alloc_peak_t_s);
    assert_true(r.queue_delay_s.p99 == r2.queue_delay_s.p99 && r.jct_s.p50 == r2.jct_s.p50 &&
                r.cost.job_usd.p95 == r2.cost.job_usd.p95);
    gp_arena_free(&a2);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idtab),
        cmocka_unit_test(test_forgotten_pod_unknown),
        cmocka_unit_test(test_forget_same_decisions),
        cmocka_unit_test(test_million_pods_bounded),
        cmocka_unit_test(test_sim_stream_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
