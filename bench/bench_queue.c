/* bench_queue.c - the pending lists under churn (issue 15 item 2): the
 * engine alone, 1,250 8-GPU nodes full of one-GPU pods and N pods pending
 * behind them, then cycles in each of which a bound pod ends, a pending
 * pod is withdrawn (gp_engine_pod_finished on a pending pod: a deleted Pod)
 * and two pods arrive, each with a random priority (fair) or duration hint
 * (SJF), so that arrivals and departures land anywhere in the queue's
 * order, not only at its end as in `bench_scale --pending`. Prints per
 * order and N the CPU microseconds per cycle, the pods bound, and a digest
 * of every decision (which must not change with the lists' structure).
 *
 * Usage: bench_queue [--pending N[,N...]] [--cycles C] [--order fair|sjf|fifo]
 * Defaults: --pending 1000,10000,50000 --cycles 2000, every order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "util/rng.h"

enum { NNODES = 1250, GPUS = 8, FILL = NNODES * GPUS, MAXN = 8 };

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct run {
    struct gp_engine *e;
    struct gp_decision *d;
    size_t cap;
    uint32_t *bound; /* the pods bound, in bind order (the oldest end first) */
    size_t nb, head;
    uint32_t *live, *pos; /* the pending pods (in no order), and where each is in live */
    size_t nlive;
    struct gp_rng rng;
    enum gp_order order;
    uint64_t digest, binds;
};

static void mix(struct run *r, uint64_t x)
{
    r->digest = (r->digest ^ x) * 0x100000001b3ULL;
}

/* A pod of 1 or 2 GPUs at a random place in the order. */
static int arrive(struct run *r, double now)
{
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    s.gpu_count = 1 + (uint32_t)gp_rng_below(&r->rng, 2);
    s.gpu_milli = GP_GPU_MILLI;
    s.cpu_milli = 1000;
    s.mem_mib = 4096;
    s.priority = (int32_t)gp_rng_below(&r->rng, 10);
    s.duration_hint_s = 60.0 * (double)(1 + gp_rng_below(&r->rng, 600));
    uint32_t id;
    if (gp_engine_pod_add(r->e, &s, now, &id) != GP_OK)
        return -1;
    r->pos[id] = (uint32_t)r->nlive;
    r->live[r->nlive++] = id;
    return 0;
}

/* Pod id is no longer pending: off `live`. */
static void unlive(struct run *r, uint32_t id)
{
    uint32_t at = r->pos[id], last = r->live[--r->nlive];
    r->live[at] = last;
    r->pos[last] = at;
}

static void cycle(struct run *r, double now)
{
    size_t n = gp_engine_schedule(r->e, now, 0, r->d, r->cap);
    for (size_t i = 0; i < n; i++) {
        mix(r, (uint64_t)r->d[i].kind << 32 | r->d[i].pod);
        if (r->d[i].kind == GP_DECISION_BIND) {
            mix(r, r->d[i].node);
            if (r->d[i].pod >= FILL)
                unlive(r, r->d[i].pod);
            r->bound[r->nb++] = r->d[i].pod;
            r->binds++;
        }
    }
}

/* The measured part: `cycles` cycles of churn. */
__attribute__((noinline)) static int churn(struct run *r, size_t cycles)
{
    double now = 1;
    for (size_t c = 0; c < cycles; c++, now += 1) {
        if (r->head < r->nb && gp_engine_pod_finished(r->e, r->bound[r->head++]) != GP_OK)
            return -1;
        if (r->nlive > 0) { /* a pending pod withdrawn, anywhere in the order */
            uint32_t id = r->live[gp_rng_below(&r->rng, r->nlive)];
            unlive(r, id);
            if (gp_engine_pod_finished(r->e, id) != GP_OK)
                return -1;
        }
        if (arrive(r, now) != 0 || arrive(r, now) != 0)
            return -1;
        cycle(r, now);
    }
    return 0;
}

static int run_one(enum gp_order order, size_t npending, size_t cycles, double *us, uint64_t *binds,
                   uint64_t *digest)
{
    struct run r;
    memset(&r, 0, sizeof r);
    gp_rng_seed(&r.rng, 42);
    r.order = order;
    r.cap = npending + FILL + 4 * cycles + 16;
    r.e = gp_engine_new(gp_policy_find("best-fit"), 42);
    r.d = malloc(r.cap * sizeof *r.d);
    r.bound = malloc(r.cap * sizeof *r.bound);
    r.live = malloc(r.cap * sizeof *r.live);
    r.pos = malloc(r.cap * sizeof *r.pos);
    static char names[NNODES][16]; /* borrowed by the engine */
    int rc = -1;
    if (!r.e || !r.d || !r.bound || !r.live || !r.pos ||
        gp_engine_set_order(r.e, order, false) != GP_OK)
        goto out;
    for (size_t i = 0; i < NNODES; i++) {
        snprintf(names[i], sizeof names[i], "node-%zu", i);
        struct gp_node_spec n;
        memset(&n, 0, sizeof n);
        n.name = names[i];
        n.gpu_model = "H100-80GB";
        n.gpu_count = GPUS;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 128000;
        n.mem_mib = 1024 * 1024;
        if (gp_engine_node_add(r.e, &n, NULL) != GP_OK)
            goto out;
    }
    struct gp_pod_spec one;
    memset(&one, 0, sizeof one);
    one.name = "fill";
    one.gpu_count = 1;
    one.gpu_milli = GP_GPU_MILLI;
    one.cpu_milli = 1000;
    one.mem_mib = 4096;
    one.priority = 9; /* bound first, whatever the order */
    one.duration_hint_s = 1;
    for (size_t i = 0; i < FILL; i++)
        if (gp_engine_pod_add(r.e, &one, 0, NULL) != GP_OK)
            goto out;
    cycle(&r, 0);
    for (size_t i = 0; i < npending; i++)
        if (arrive(&r, 0) != 0)
            goto out;
    cycle(&r, 0); /* each pending pod's first decision */
    r.binds = 0;
    double c0 = cpu_s();
    if (churn(&r, cycles) != 0)
        goto out;
    *us = (cpu_s() - c0) * 1e6 / (double)cycles;
    *binds = r.binds;
    *digest = r.digest;
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench_queue: the run failed\n");
    gp_engine_free(r.e);
    free(r.d);
    free(r.bound);
    free(r.live);
    free(r.pos);
    return rc;
}

int main(int argc, char **argv)
{
    size_t ns[MAXN] = {1000, 10000, 50000}, nn = 3, cycles = 2000;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pending") == 0 && i + 1 < argc) {
            nn = 0;
            for (char *s = argv[++i], *end; *s && nn < MAXN; s = *end ? end + 1 : end) {
                ns[nn++] = strtoul(s, &end, 10);
                if (end == s)
                    return 2;
            }
        } else if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) {
            cycles = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--order") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "bench_queue: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    static const struct {
        const char *name;
        enum gp_order order;
    } orders[] = {{"fair", GP_ORDER_FAIR}, {"sjf", GP_ORDER_SJF}, {"fifo", GP_ORDER_FIFO}};
    printf("bench_queue: 1,250 full 8-GPU nodes, N pending, %zu cycles of one pod ended, one "
           "pending pod withdrawn and two arrived (random priority and duration hint)\n",
           cycles);
    printf("%6s %8s %12s %8s %18s\n", "order", "pending", "us/cycle", "binds", "digest");
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        if (only && strcmp(only, orders[o].name) != 0)
            continue;
        for (size_t i = 0; i < nn; i++) {
            double us;
            uint64_t binds, digest;
            if (run_one(orders[o].order, ns[i], cycles, &us, &binds, &digest) != 0)
                return 1;
            printf("%6s %8zu %12.2f %8llu   %016llx\n", orders[o].name, ns[i], us,
                   (unsigned long long)binds, (unsigned long long)digest);
            fflush(stdout);
        }
    }
    return 0;
}
