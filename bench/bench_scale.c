/* bench_scale.c - the scale benchmark (issue 15): a generated cluster of
 * 8-GPU nodes (half A100-80GB, half H100-80GB) and a generated workload of
 * ten pods per GPU, replayed in timed mode at a given load (the GPUs the
 * pods ask for, times their mean run, over the arrival window, as a share
 * of the cluster's GPUs: 80 % hardly queues, 120 % queues). Prints, per
 * run, the wall and CPU time of the simulation alone, binds per second,
 * the peak resident memory of the process and the growth exponent of the
 * CPU time between sizes. Each run is a child process, so that its peak memory is
 * its own; a run past --max-s is stopped and reported with how far its
 * virtual time got.
 *
 * The workload is deterministic: eight streams of single pods (1, 2, 4 or
 * 8 whole GPUs, any model or one of the two), Poisson arrivals and
 * exponential runs of mean 1 h, all drawn by the simulator from --seed.
 *
 * Each run also prints a digest of its results (binds, completions, the
 * queueing delays and job completion times, the unschedulable counts),
 * which must not change with the engine's indexes: --no-index runs the
 * engine without them (gp_engine_set_index), as before they existed.
 *
 * --pending N[,N...] measures the pending side instead (issue 15 item 2),
 * the engine alone: 1,250 nodes (10,000 GPUs) full of one-GPU pods, N pods
 * pending behind them (the eight streams' shapes in turn), then cycles
 * in each of which one bound pod ends and one pod arrives (one GPU freed,
 * one pod bound): the CPU time per cycle in the fair order (the walk by
 * shape of pending.c), FIFO with backfill (order.c's walk by shape past
 * the head) and strict FIFO. A cycle that costs what changed takes the
 * same time whatever N.
 *
 * --distinct measures the placements the rankings do not help (issue 15
 * item 1), the engine alone: --gpus' sizes nearly full, then cycles in
 * each of which one pod ends and one pod of a request shape no pod had
 * arrives; per size the CPU time per cycle and the nodes looked at per
 * placement with the capacity index and without the indexes (which is
 * how every first placement of a shape ran before it), and a digest of
 * the decisions, the same either way.
 *
 * Usage:
 *   bench_scale [--gpus N[,N...]] [--load L[,L...]] [--policy NAME]
 *               [--seed N] [--max-s S] [--no-index] [--pending N[,N...]]
 *               [--distinct [--cycles N]]
 * Defaults: --gpus 1000,10000,100000 --load 0.8,1.2 --policy best-fit
 * --seed 42 --max-s 600 --cycles 2000 (--distinct's). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/rng.h"

#define GPUS_PER_NODE 8
#define PODS_PER_GPU  10
#define MEAN_RUN_S    3600.0
#define MAX_RUNS      16

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *const a100[] = {"A100-80GB"};
static const char *const h100[] = {"H100-80GB"};

/* The pod streams: GPUs per pod, allowed models, share of the pods. */
static const struct stream_def {
    uint32_t gpus;
    const char *const *models;
    double share;
} streams[] = {
    {1, NULL, 0.30}, {1, a100, 0.10}, {1, h100, 0.10}, {2, NULL, 0.20},
    {4, NULL, 0.10}, {4, h100, 0.05}, {8, NULL, 0.10}, {8, a100, 0.05},
};
#define NSTREAMS (sizeof streams / sizeof streams[0])

/* The cluster: gpus / 8 nodes, the first half A100, the second H100. */
static struct gp_node_spec *make_nodes(struct gp_arena *a, size_t nnodes)
{
    struct gp_node_spec *nodes = gp_arena_alloc(a, nnodes * sizeof *nodes);
    if (!nodes)
        return NULL;
    for (size_t i = 0; i < nnodes; i++) {
        struct gp_node_spec *n = &nodes[i];
        memset(n, 0, sizeof *n);
        char name[32];
        snprintf(name, sizeof name, "node-%zu", i);
        n->name = gp_arena_strdup(a, name);
        n->gpu_model = i < nnodes / 2 ? a100[0] : h100[0];
        n->gpu_count = GPUS_PER_NODE;
        n->gpu_mem_mib = 81920;
        n->cpu_milli = 128000;
        n->mem_mib = 1024 * 1024;
        n->price_per_hour_usd = i < nnodes / 2 ? 14.0 : 24.0;
        if (!n->name)
            return NULL;
    }
    return nodes;
}

/* The workload: ten pods per GPU over an arrival window that makes the
 * load asked for. */
static int make_items(struct gp_arena *a, struct gp_workload *w, uint64_t gpus, double load)
{
    double mean_gpus = 0;
    for (size_t s = 0; s < NSTREAMS; s++)
        mean_gpus += streams[s].share * streams[s].gpus;
    double pods = (double)gpus * PODS_PER_GPU;
    /* load = pods * mean_gpus * MEAN_RUN_S / (window * gpus) */
    double window_s = pods * mean_gpus * MEAN_RUN_S / (load * (double)gpus);
    for (size_t s = 0; s < NSTREAMS; s++) {
        struct gp_item it;
        memset(&it, 0, sizeof it);
        char name[32];
        snprintf(name, sizeof name, "stream-%zu", s);
        it.name = gp_arena_strdup(a, name);
        it.source = "bench_scale";
        it.kind = GP_ITEM_POD;
        it.pod.name = it.name;
        it.pod.cpu_milli = 8000 * (int64_t)streams[s].gpus;
        it.pod.mem_mib = 65536 * (int64_t)streams[s].gpus;
        it.pod.gpu_count = streams[s].gpus;
        it.pod.gpu_milli = GP_GPU_MILLI;
        it.pod.gpu_models = streams[s].models;
        it.pod.ngpu_models = streams[s].models ? 1 : 0;
        it.has_duration = true;
        it.duration.kind = GP_DIST_EXP;
        it.duration.a = MEAN_RUN_S;
        it.repeat = (uint32_t)llround(pods * streams[s].share);
        it.interarrival.kind = GP_DIST_EXP;
        it.interarrival.a = window_s / it.repeat;
        if (!it.name || gp_workload_append(w, a, &it) != GP_OK)
            return -1;
    }
    return 0;
}

static volatile sig_atomic_t progress_pct;

static void on_progress(void *ctx, double fraction)
{
    (void)ctx;
    progress_pct = (sig_atomic_t)(fraction * 100);
}

static void on_alarm(int sig)
{
    (void)sig;
    char msg[64];
    int n = snprintf(msg, sizeof msg, "TIMEOUT %d\n", (int)progress_pct);
    if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
        _exit(3);
    _exit(3);
}

/* FNV-1a over the bytes of a value. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* A digest of what the run did, that timings leave out. */
static uint64_t digest(const struct gp_sim_result *r)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    const double d[] = {r->queue_delay_s.mean, r->queue_delay_s.p50,  r->queue_delay_s.p99,
                        r->queue_delay_s.max,  r->jct_s.mean,         r->jct_s.p99,
                        r->sim_end_s,          r->gpu_hours_allocated};
    const uint64_t u[] = {r->binds, r->pods_completed, r->pods_failed, r->jobs_completed};
    h = mix(h, d, sizeof d);
    h = mix(h, u, sizeof u);
    return mix(h, r->unschedulable, sizeof r->unschedulable);
}

static bool plain; /* --no-index */

/* One run, in the child: prints "OK wall cpu binds pods peak_kib digest". */
static int run_one(uint64_t gpus, double load, const char *policy, uint64_t seed, int max_s)
{
    struct gp_arena arena;
    gp_arena_init(&arena);
    struct gp_cluster cluster;
    struct gp_workload workload;
    memset(&cluster, 0, sizeof cluster);
    memset(&workload, 0, sizeof workload);
    size_t nnodes = (size_t)(gpus / GPUS_PER_NODE);
    cluster.name = "bench-scale";
    cluster.source = "bench_scale";
    cluster.nodes = make_nodes(&arena, nnodes);
    cluster.nnodes = nnodes;
    if (!cluster.nodes || make_items(&arena, &workload, gpus, load) != 0) {
        fprintf(stderr, "bench_scale: out of memory\n");
        return 1;
    }
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.mode = GP_SIM_TIMED;
    cfg.policy = gp_policy_find(policy);
    cfg.seed = seed;
    cfg.progress = on_progress;
    cfg.no_index = plain;
    struct gp_arena run;
    gp_arena_init(&run);
    struct gp_sim_result r;
    struct gp_diag diag = {""};
    signal(SIGALRM, on_alarm);
    alarm((unsigned)max_s);
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    enum gp_err err = gp_sim_run(&cfg, &cluster, &workload, &run, &r, &diag);
    double dt = clock_s(CLOCK_MONOTONIC) - t0, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    alarm(0);
    if (err != GP_OK) {
        fprintf(stderr, "bench_scale: %s\n", diag.msg);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("OK %.6f %.6f %llu %llu %ld %016llx\n", dt, dc, (unsigned long long)r.binds,
           (unsigned long long)r.pods_submitted, ru.ru_maxrss, (unsigned long long)digest(&r));
    fflush(stdout);
    gp_arena_free(&run);
    gp_arena_free(&arena);
    return 0;
}

/* --pending: N pods pending on a full cluster, then `cycles` cycles of
 * one pod ended and one arrived; the CPU microseconds per cycle in *us and
 * the pods bound meanwhile in *binds. Returns 0, or 1 on an error. */
static int run_pending(uint64_t npending, enum gp_order order, bool backfill,
                       const struct gp_policy_ops *policy, size_t cycles, double *us,
                       uint64_t *binds)
{
    enum { NNODES = 1250, FILL = NNODES * GPUS_PER_NODE };
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_engine *e = gp_engine_new(policy, 42);
    struct gp_node_spec *nodes = make_nodes(&a, NNODES);
    size_t cap = npending + FILL + 16;
    struct gp_decision *d = malloc(cap * sizeof *d);
    uint32_t *bound = malloc((FILL + cycles) * sizeof *bound);
    int rc = 1;
    if (!e || !nodes || !d || !bound || gp_engine_set_order(e, order, backfill) != GP_OK)
        goto out;
    gp_engine_set_index(e, !plain, !plain);
    for (size_t i = 0; i < NNODES; i++)
        if (gp_engine_node_add(e, &nodes[i], NULL) != GP_OK)
            goto out;
    struct gp_pod_spec specs[NSTREAMS];
    for (size_t k = 0; k < NSTREAMS; k++) {
        memset(&specs[k], 0, sizeof specs[k]);
        specs[k].name = "p";
        specs[k].gpu_count = streams[k].gpus;
        specs[k].gpu_milli = GP_GPU_MILLI;
        specs[k].gpu_models = streams[k].models;
        specs[k].ngpu_models = streams[k].models ? 1 : 0;
        specs[k].cpu_milli = 1000;
        specs[k].mem_mib = 4096;
        specs[k].duration_hint_s = MEAN_RUN_S;
    }
    double now = 0;
    for (size_t i = 0; i < FILL; i++) /* the cluster full of one-GPU pods */
        if (gp_engine_pod_add(e, &specs[0], now, NULL) != GP_OK)
            goto out;
    size_t nb = 0, head = 0, n = gp_engine_schedule(e, now, 0, d, cap);
    for (size_t i = 0; i < n; i++)
        if (d[i].kind == GP_DECISION_BIND)
            bound[nb++] = d[i].pod;
    for (uint64_t i = 0; i < npending; i++) /* the queue behind them */
        if (gp_engine_pod_add(e, &specs[i % NSTREAMS], now, NULL) != GP_OK)
            goto out;
    gp_engine_schedule(e, now, 0, d, cap); /* each pending pod's first decision */
    *binds = 0;
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t c = 0; c < cycles; c++) {
        now += 1;
        if (head < nb && gp_engine_pod_finished(e, bound[head++]) != GP_OK)
            goto out;
        if (gp_engine_pod_add(e, &specs[0], now, NULL) != GP_OK)
            goto out;
        n = gp_engine_schedule(e, now, 0, d, cap);
        for (size_t i = 0; i < n; i++)
            if (d[i].kind == GP_DECISION_BIND) {
                bound[nb++] = d[i].pod;
                (*binds)++;
            }
    }
    *us = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6 / (double)cycles;
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench_scale: the pending run failed\n");
    gp_engine_free(e);
    free(d);
    free(bound);
    gp_arena_free(&a);
    return rc;
}

/* --distinct: the engine alone, nnodes 8-GPU nodes nearly full of pods
 * of the eight streams, each pod a request shape of its own (its CPU
 * differs by a milli), then `cycles` cycles of one bound pod ended and
 * one such pod arrived: the CPU microseconds per cycle in *us, the nodes
 * looked at per placement in *visits (gp_engine_place_stats), and a digest
 * of the decisions of the cycles (pod, kind, node, GPUs) in *dig. A shape
 * placed once is never ranked (index.c): before the capacity index every
 * such placement scanned every node, as the engine without its indexes
 * does. Returns 0, or 1 on an error. */
/* A pod of a stream drawn by its share, with a CPU request no pod had. */
static struct gp_pod_spec distinct_pod(struct gp_rng *rng, const struct gp_pod_spec *specs,
                                       int64_t *milli)
{
    double u = gp_rng_unit(rng), acc = 0;
    size_t k = 0;
    while (k + 1 < NSTREAMS && (acc += streams[k].share) < u)
        k++;
    struct gp_pod_spec ps = specs[k];
    ps.cpu_milli = 1000 * (int64_t)streams[k].gpus + ++*milli;
    return ps;
}

static int run_distinct(size_t nnodes, const struct gp_policy_ops *policy, bool index,
                        size_t cycles, double *us, double *visits, uint64_t *dig)
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_engine *e = gp_engine_new(policy, 42);
    struct gp_node_spec *nodes = make_nodes(&a, nnodes);
    size_t fill = nnodes * GPUS_PER_NODE / 3, cap = fill + 64; /* 2.7 GPUs a pod */
    struct gp_decision *d = malloc(cap * sizeof *d);
    uint32_t *bound = malloc((fill + cycles) * sizeof *bound);
    int rc = 1;
    if (!e || !nodes || !d || !bound)
        goto out;
    gp_engine_set_index(e, index, index);
    for (size_t i = 0; i < nnodes; i++)
        if (gp_engine_node_add(e, &nodes[i], NULL) != GP_OK)
            goto out;
    struct gp_pod_spec specs[NSTREAMS];
    for (size_t k = 0; k < NSTREAMS; k++) {
        memset(&specs[k], 0, sizeof specs[k]);
        specs[k].name = "p";
        specs[k].gpu_count = streams[k].gpus;
        specs[k].gpu_milli = GP_GPU_MILLI;
        specs[k].gpu_models = streams[k].models;
        specs[k].ngpu_models = streams[k].models ? 1 : 0;
        specs[k].mem_mib = 65536 * (int64_t)streams[k].gpus;
    }
    gp_engine_set_target(e, specs, NULL, NSTREAMS, 1.0);
    struct gp_rng rng;
    gp_rng_seed(&rng, 7);
    int64_t milli = 0;
    double now = 0;
    struct gp_pod_spec ps;
    size_t nb = 0, head = 0, n;
    for (size_t i = 0; i < fill; i++) { /* about 90 % of the GPUs asked for */
        ps = distinct_pod(&rng, specs, &milli);
        if (gp_engine_pod_add(e, &ps, now, NULL) != GP_OK)
            goto out;
    }
    n = gp_engine_schedule(e, now, 0, d, cap);
    for (size_t i = 0; i < n; i++)
        if (d[i].kind == GP_DECISION_BIND)
            bound[nb++] = d[i].pod;
    uint64_t p0, v0, p1, v1, h = 0xcbf29ce484222325ULL;
    gp_engine_place_stats(e, &p0, &v0);
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t c = 0; c < cycles; c++) {
        now += 1;
        if (head < nb && gp_engine_pod_finished(e, bound[head++]) != GP_OK)
            goto out;
        ps = distinct_pod(&rng, specs, &milli);
        if (gp_engine_pod_add(e, &ps, now, NULL) != GP_OK)
            goto out;
        n = gp_engine_schedule(e, now, 0, d, cap);
        for (size_t i = 0; i < n; i++) {
            const uint32_t w[] = {d[i].pod, (uint32_t)d[i].kind, d[i].node};
            h = mix(h, w, sizeof w);
            if (d[i].kind != GP_DECISION_BIND)
                continue;
            h = mix(h, d[i].pick.gpu, d[i].pick.ngpus);
            bound[nb++] = d[i].pod;
        }
    }
    *us = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6 / (double)cycles;
    gp_engine_place_stats(e, &p1, &v1);
    *visits = p1 > p0 ? (double)(v1 - v0) / (double)(p1 - p0) : 0;
    *dig = h;
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench_scale: the distinct run failed\n");
    gp_engine_free(e);
    free(d);
    free(bound);
    gp_arena_free(&a);
    return rc;
}

/* The --distinct table: per size, the index on and off in turn. */
static int distinct_table(const double *gpus, size_t ng, const char *policy, size_t cycles)
{
    printf("bench_scale --distinct: 8-GPU nodes (half A100, half H100) nearly full, %zu "
           "cycles of one pod ended and one of a new request shape arrived, policy %s\n",
           cycles, policy);
    printf("%8s %6s %12s %12s %18s\n", "gpus", "index", "us/cycle", "nodes/place", "digest");
    for (size_t g = 0; g < ng; g++)
        for (int index = 1; index >= 0; index--) {
            double us, visits;
            uint64_t dig;
            if (run_distinct((size_t)gpus[g] / GPUS_PER_NODE, gp_policy_find(policy), index, cycles,
                             &us, &visits, &dig) != 0)
                return 1;
            printf("%8.0f %6s %12.2f %12.1f   %016llx\n", gpus[g], index ? "on" : "off", us, visits,
                   (unsigned long long)dig);
            fflush(stdout);
        }
    return 0;
}

/* The --pending table: per N and order, the CPU time per cycle. */
static int pending_table(const double *ns, size_t nn, const char *policy)
{
    static const struct {
        const char *name;
        enum gp_order order;
        bool backfill;
    } orders[] = {{"fair", GP_ORDER_FAIR, false},
                  {"fifo+backfill", GP_ORDER_FIFO, true},
                  {"fifo", GP_ORDER_FIFO, false}};
    printf("bench_scale --pending: 1,250 full 8-GPU nodes, N pods pending, 2,000 cycles of one "
           "pod ended and one arrived, policy %s%s\n",
           policy, plain ? ", engine without its indexes" : "");
    printf("%14s %8s %12s %8s\n", "order", "pending", "us/cycle", "binds");
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++)
        for (size_t i = 0; i < nn; i++) {
            double us;
            uint64_t binds;
            if (run_pending((uint64_t)ns[i], orders[o].order, orders[o].backfill,
                            gp_policy_find(policy), 2000, &us, &binds) != 0)
                return 1;
            printf("%14s %8.0f %12.2f %8llu\n", orders[o].name, ns[i], us,
                   (unsigned long long)binds);
            fflush(stdout);
        }
    return 0;
}

struct result {
    bool ok, timeout;
    double wall_s, cpu_s;
    unsigned long long binds, pods;
    long peak_kib;
    unsigned long long digest;
    int pct;
};

static int run_child(uint64_t gpus, double load, const char *policy, uint64_t seed, int max_s,
                     struct result *res)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], STDOUT_FILENO) < 0)
            _exit(1);
        _exit(run_one(gpus, load, policy, seed, max_s));
    }
    close(fd[1]);
    char buf[256] = "";
    size_t len = 0;
    ssize_t n;
    while (len + 1 < sizeof buf && (n = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = 0;
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    memset(res, 0, sizeof *res);
    if (sscanf(buf, "OK %lf %lf %llu %llu %ld %llx", &res->wall_s, &res->cpu_s, &res->binds,
               &res->pods, &res->peak_kib, &res->digest) == 6) {
        res->ok = true;
        return 0;
    }
    if (sscanf(buf, "TIMEOUT %d", &res->pct) == 1) {
        res->timeout = true;
        res->wall_s = max_s;
        return 0;
    }
    return -1;
}

/* Parses "a,b,c" into at most MAX_RUNS numbers. */
static size_t parse_list(const char *s, double *out)
{
    size_t n = 0;
    while (*s && n < MAX_RUNS) {
        char *end;
        out[n] = strtod(s, &end);
        if (end == s || !(out[n] > 0))
            return 0;
        n++;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return n;
}

int main(int argc, char **argv)
{
    double gpus[MAX_RUNS] = {1000, 10000, 100000}, loads[MAX_RUNS] = {0.8, 1.2}, pend[MAX_RUNS];
    size_t ngpus = 3, nloads = 2, npend = 0;
    const char *policy = "best-fit";
    unsigned long long seed = 42;
    int max_s = 600;
    bool distinct = false;
    long cycles = 2000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gpus") == 0 && i + 1 < argc)
            ngpus = parse_list(argv[++i], gpus);
        else if (strcmp(argv[i], "--load") == 0 && i + 1 < argc)
            nloads = parse_list(argv[++i], loads);
        else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
            policy = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--max-s") == 0 && i + 1 < argc)
            max_s = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-index") == 0)
            plain = true;
        else if (strcmp(argv[i], "--pending") == 0 && i + 1 < argc)
            npend = parse_list(argv[++i], pend);
        else if (strcmp(argv[i], "--distinct") == 0)
            distinct = true;
        else if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc)
            cycles = atol(argv[++i]);
        else {
            fprintf(stderr, "bench_scale: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (ngpus == 0 || nloads == 0 || max_s < 1 || !gp_policy_find(policy) || cycles < 1) {
        fprintf(stderr, "bench_scale: bad --gpus, --load, --max-s, --cycles or --policy\n");
        return 2;
    }
    if (npend > 0)
        return pending_table(pend, npend, policy);
    if (distinct)
        return distinct_table(gpus, ngpus, policy, (size_t)cycles);
    printf("bench_scale: 8-GPU nodes (half A100, half H100), %d pods per GPU, policy %s, "
           "seed %llu, timed mode%s\n",
           PODS_PER_GPU, policy, seed, plain ? ", engine without its indexes" : "");
    printf("%6s %8s %9s %10s %10s %11s %10s %9s %9s\n", "load", "gpus", "pods", "wall_s", "cpu_s",
           "binds/s", "us/bind", "peak_MiB", "exponent");
    for (size_t l = 0; l < nloads; l++) {
        double prev_gpus = 0, prev_s = 0;
        for (size_t g = 0; g < ngpus; g++) {
            uint64_t n = (uint64_t)gpus[g];
            struct result res;
            if (run_child(n, loads[l], policy, seed, max_s, &res) != 0) {
                fprintf(stderr, "bench_scale: the run of %llu GPUs at load %.2f failed\n",
                        (unsigned long long)n, loads[l]);
                return 1;
            }
            if (res.timeout) {
                printf("%5.0f%% %8llu %9llu %10s  stopped after %d s at %d %% of the virtual "
                       "time\n",
                       loads[l] * 100, (unsigned long long)n, (unsigned long long)n * PODS_PER_GPU,
                       "-", max_s, res.pct);
                prev_gpus = 0;
                continue;
            }
            /* the exponent k of time ~ gpus^k from the previous size, on
             * CPU time (the machine is shared: wall time is noisier) */
            char expo[16] = "-";
            if (prev_gpus > 0 && prev_s > 0)
                snprintf(expo, sizeof expo, "%.2f",
                         log(res.cpu_s / prev_s) / log((double)n / prev_gpus));
            printf("%5.0f%% %8llu %9llu %10.3f %10.3f %11.0f %10.2f %9.1f %9s  %016llx\n",
                   loads[l] * 100, (unsigned long long)n, res.pods, res.wall_s, res.cpu_s,
                   (double)res.binds / res.wall_s, res.wall_s * 1e6 / (double)res.binds,
                   (double)res.peak_kib / 1024.0, expo, res.digest);
            fflush(stdout);
            prev_gpus = (double)n;
            prev_s = res.cpu_s;
        }
    }
    return 0;
}
