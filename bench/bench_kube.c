/* bench_kube.c - `gpuplane schedule` end to end against the API server
 * double (issue 14's benchmark), in two modes; then the engine alone on
 * the same shapes (decisions per second).
 *
 * The default, scheduler_perf's mode (SchedulingBasic 5000Nodes_50000Pods,
 * see "scheduler_perf's mode" below): N GPU nodes (8 GPUs each) made, the
 * scheduler started on them (kube/run.h: informer threads, the annotation
 * patch and the Binding per pod), --init-pods pods (5,000) created and
 * bound by it, then --creators threads (4, each a client of its own)
 * create the M measured pods (50,000: half one whole GPU, half a 500/1000
 * share) while it runs, and a sampler counts the measured pods bound once
 * a second: scheduler_perf's SchedulingThroughput (Average, Perc50/90/95/
 * 99 of the per-second samples), the rate from the first create to the
 * last bind, the creators' own rate, and the CPU of the scheduler, the
 * double and the creators over the measure.
 *
 * --prelisted, the old mode: every node and pod created first, then the
 * scheduler started: it lists them all; pods bound per second from the
 * informers' sync (and from the scheduler's start) to the last bind.
 *
 * The nodes are labelled as served by gpuplane's agent (gpuplane.io/agent), whose
 * "allocated" mark the double plays (--auto-allocate), so the scheduler
 * keeps one pod allocating per node as on a real cluster of such nodes.
 *
 *   bench_kube [--nodes 5000] [--pods 50000] [--init-pods 5000] [--init-milli 250]
 *              [--creators 4] [--prelisted] [--binders 8] [--bind-events] [--engine-only]
 *              [--tolerations]
 *
 * --init-pods N, --init-milli M: the pods bound before the measure, each
 * asking 100m CPU and 500Mi (scheduler_perf's default pod) and M/1000 of
 * a GPU (250; 0: no GPU), so that the measured pods still fit (5,000 x
 * 1/4 + 37,500 GPUs of 40,000). --creators N: the creating threads.
 *
 * --binders: the binder threads (gpuplane schedule's default 8; 0 binds
 * one pod at a time on the scheduling thread, as before bind.c).
 * --latency-ms N: the double answers each request about one pod (the
 * annotation patch, the Binding) N ms late, as a real API server's round
 * trip and etcd write take time (the double's delay fault, which holds no
 * lock while it waits).
 *
 * --tolerations: the engine-only run's pods carry the two tolerations a
 * real API server adds to every pod (DefaultTolerationSeconds; the
 * double adds them on create too, so the end-to-end run has them), each
 * pod its own copy as src/kube/objects.c reads them.
 *
 * --double PATH: this double's program in place of the one built beside
 * (GP_APIDOUBLE, compiled in), to compare two builds of it with the same
 * bench; --double-wrap "CMD ARGS": the double started under CMD (split at
 * spaces), e.g. "valgrind --tool=callgrind --callgrind-out-file=F" to
 * profile it while the bench drives it. */
#define _GNU_SOURCE /* RUSAGE_THREAD: the creators' and the sampler's own CPU */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "kube/run.h"

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t start_double(const char *prog, const char *wrap, char *server, size_t n)
{
    char *argv[40], *words = strdup(wrap ? wrap : "");
    size_t argc = 0;
    for (char *save, *t = strtok_r(words, " ", &save); t && argc < 32;
         t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    static char port_flag[] = "--port", zero[] = "0", bm[] = "--bookmark-ms", bm_ms[] = "1000",
                auto_alloc[] = "--auto-allocate", auto_ms[] = "0";
    char *prog_copy = strdup(prog);
    char *tail[] = {prog_copy, port_flag, zero, bm, bm_ms, auto_alloc, auto_ms};
    for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
        argv[argc++] = tail[i];
    argv[argc] = NULL;
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execvp(argv[0], argv);
        _exit(127);
    }
    free(words);
    free(prog_copy);
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    unsigned port = 0;
    if (!f || fscanf(f, "port %u", &port) != 1)
        return -1;
    fclose(f);
    snprintf(server, n, "http://127.0.0.1:%u", port);
    return pid;
}

static void call(struct gp_kube_client *c, const char *method, const char *path, const char *body,
                 long want)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    const char *ct =
        strcmp(method, "PATCH") == 0 ? "application/merge-patch+json" : "application/json";
    if (gp_kube_request(c, method, path, body, ct, &r, &d) != GP_OK || r.status != want) {
        fprintf(stderr, "bench_kube: %s %s: %s %ld\n", method, path, d.msg, r.status);
        exit(1);
    }
    gp_kube_response_free(&r);
}

/* A number from the double's GET /_control/stats (cpu_s: its own CPU
 * seconds so far; bindings: Bindings it answered 201, i.e. pods whose
 * nodeName it set); -1 if the request failed. */
static double double_stat(struct gp_kube_client *c, const char *key)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    if (gp_kube_request(c, "GET", "/_control/stats", NULL, NULL, &r, &d) != GP_OK)
        return -1;
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    json_t *v = json_object_get(doc, key);
    double s = json_is_number(v) ? json_number_value(v) : -1;
    json_decref(doc);
    gp_kube_response_free(&r);
    return s;
}

static double double_cpu_s(struct gp_kube_client *c)
{
    return double_stat(c, "cpu_s");
}

/* The pods the API shows bound (spec.nodeName set), read back from the
 * double as a client would count them: a list with the field selector
 * spec.nodeName!= and limit 1, its item plus its remainingItemCount
 * (-1: the list failed). */
static long api_bound(struct gp_kube_client *c)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    if (gp_kube_request(c, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%21%3D&limit=1", NULL,
                        NULL, &r, &d) != GP_OK)
        return -1;
    json_t *doc = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    json_t *rest = json_object_get(json_object_get(doc, "metadata"), "remainingItemCount");
    long n = doc ? (long)json_array_size(json_object_get(doc, "items")) +
                       (json_is_integer(rest) ? (long)json_integer_value(rest) : 0)
                 : -1;
    json_decref(doc);
    gp_kube_response_free(&r);
    return n;
}

/* This process's CPU seconds so far, *sys_s of them in the kernel. */
static double self_cpu_s(double *sys_s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + *sys_s;
}

/* The calling thread's CPU seconds so far, *sys_s of them in the kernel. */
static double thread_cpu_s(double *sys_s)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + *sys_s;
}

/* A pod of the bench: `gpu_milli` 1000 asks one whole GPU
 * (nvidia.com/gpu: 1), less a share of one (gpuplane.io/gpu-milli), 0 no
 * GPU; cpu and memory as given. */
static void pod_json(char *b, size_t n, const char *name, unsigned gpu_milli, const char *cpu,
                     const char *mem)
{
    char ann[96] = "";
    if (gpu_milli > 0 && gpu_milli < 1000)
        snprintf(ann, sizeof ann, ",\"annotations\":{\"gpuplane.io/gpu-milli\":\"%u\"}", gpu_milli);
    snprintf(b, n,
             "{\"metadata\":{\"name\":\"%s\"%s},\"spec\":{\"schedulerName\":"
             "\"gpuplane\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
             "\"requests\":{\"cpu\":\"%s\",\"memory\":\"%s\"%s}}}]}}",
             name, ann, cpu, mem, gpu_milli == 1000 ? ",\"nvidia.com/gpu\":\"1\"" : "");
}

/* The measured pods' shapes: half one whole GPU, half a 500/1000 share. */
static void measured_pod(char *b, size_t n, unsigned i)
{
    char name[32];
    snprintf(name, sizeof name, "pod-%06u", i);
    pod_json(b, n, name, i % 2 ? 500 : 1000, "1", "4Gi");
}

static void make_nodes(struct gp_kube_client *c, unsigned nodes)
{
    char b[1024], path[128];
    for (unsigned i = 0; i < nodes; i++) {
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"node-%05u\",\"labels\":{\"nvidia.com/gpu.product\":"
                 "\"NVIDIA-A100-SXM4-80GB\",\"nvidia.com/gpu.memory\":\"81920\",\"gpuplane.io/"
                 "agent\":\"1\"}},\"spec\":{}}",
                 i);
        call(c, "POST", "/api/v1/nodes", b, 201);
        snprintf(path, sizeof path, "/api/v1/nodes/node-%05u/status", i);
        call(c, "PATCH", path,
             "{\"status\":{\"allocatable\":{\"cpu\":\"128\",\"memory\":\"1024Gi\",\"nvidia.com/"
             "gpu\":\"8\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":"
             "\"True\"}]}}",
             200);
    }
}

static void make_cluster(struct gp_kube_client *c, unsigned nodes, unsigned pods)
{
    char b[1024];
    make_nodes(c, nodes);
    for (unsigned i = 0; i < pods; i++) {
        measured_pod(b, sizeof b, i);
        call(c, "POST", "/api/v1/namespaces/default/pods", b, 201);
    }
}

/* The engine alone: the same nodes and pods, one cycle; with tolerations,
 * each pod's own copy of the API server's two. */
static void engine_only(unsigned nodes, unsigned pods, bool tolerations)
{
    static const struct gp_toleration defaults[] = {
        {"node.kubernetes.io/not-ready", NULL, true, false, GP_EFFECT_NO_EXECUTE},
        {"node.kubernetes.io/unreachable", NULL, true, false, GP_EFFECT_NO_EXECUTE}};
    struct gp_toleration *tols = malloc((size_t)pods * sizeof defaults);
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    char(*names)[16] = malloc((size_t)(nodes > pods ? nodes : pods) * sizeof *names);
    for (unsigned i = 0; i < nodes; i++) {
        snprintf(names[i], sizeof names[i], "node-%05u", i);
        struct gp_node_spec ns = {.name = names[i],
                                  .gpu_model = "NVIDIA-A100-SXM4-80GB",
                                  .cpu_milli = 128000,
                                  .mem_mib = 1024 * 1024,
                                  .gpu_count = 8,
                                  .gpu_mem_mib = 81920};
        uint32_t id;
        gp_engine_node_add(e, &ns, &id);
    }
    for (unsigned i = 0; i < pods; i++) {
        struct gp_pod_spec ps = {.name = "p",
                                 .cpu_milli = 1000,
                                 .mem_mib = 4096,
                                 .gpu_count = 1,
                                 .gpu_milli = i % 2 ? 500 : 1000,
                                 .gpu_resource = i % 2 ? GP_GPU_RES_NONE : GP_GPU_RES_GPU};
        if (tolerations) {
            memcpy(&tols[2 * (size_t)i], defaults, sizeof defaults);
            ps.tolerations = &tols[2 * (size_t)i];
            ps.ntolerations = 2;
        }
        uint32_t id;
        gp_engine_pod_add(e, &ps, 0, &id);
    }
    struct gp_decision *d = malloc(((size_t)pods + 1) * sizeof *d);
    double t0 = mono();
    size_t n = gp_engine_schedule(e, 1, 0, d, (size_t)pods + 1);
    double dt = mono() - t0;
    size_t binds = 0;
    for (size_t i = 0; i < n; i++)
        binds += d[i].kind == GP_DECISION_BIND;
    printf("engine only%s: %zu decisions (%zu binds) in %.3f s: %.0f decisions/s\n",
           tolerations ? " (each pod its own copy of the 2 default tolerations)" : "", n, binds, dt,
           (double)n / dt);
    free(d);
    free(tols);
    free(names);
    gp_engine_free(e);
}

/* --- scheduler_perf's mode ---------------------------------------------
 *
 * As test/integration/scheduler_perf does for SchedulingBasic (misc/
 * performance-config.yaml: createNodes initNodes, createPods initPods,
 * createPods measurePods with collectMetrics; 5000Nodes_50000Pods: 5,000
 * nodes, 5,000 init pods, 50,000 measured, threshold 810): the scheduler
 * runs first; the init pods are created and bound by it; then the
 * throughput collector starts and the measured pods are created while
 * the scheduler runs (executor.go runCreatePodsOp: startCollectingMetrics,
 * createPodsRapidly, waitUntilPodsScheduledInNamespace, stopCollecting-
 * Metrics). The collector (util.go throughputCollector.run) counts the
 * scheduled measured pods once a second (throughputSampleInterval),
 * skips the first sample that sees any, records nothing for an interval
 * with no new pod but then the next rate once per interval it spans, and
 * reports Average and Perc50/90/95/99 of the sorted samples (the element
 * at ceil(n*p/100)-1); the threshold applies to the Average. */

struct sampler {
    struct gp_kube_client *c;
    long base; /* Bindings before the measure: the init pods' */
    atomic_int stop;
    atomic_int created; /* set once the creators are done */
    double *rate;       /* pods/s, one per interval */
    bool *creating;     /* the interval ended while the creators ran */
    size_t n, cap;
    double cpu_s, sys_s;
};

static void sample_push(struct sampler *s, double rate)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *r = realloc(s->rate, cap * sizeof *r);
        if (r)
            s->rate = r;
        bool *c = realloc(s->creating, cap * sizeof *c);
        if (c)
            s->creating = c;
        if (!r || !c)
            return;
        s->cap = cap;
    }
    s->creating[s->n] = !atomic_load(&s->created);
    s->rate[s->n++] = rate;
}

static void *sampler_main(void *arg)
{
    struct sampler *s = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long last = 0;
    double last_t = 0;
    bool started = false;
    unsigned skipped = 0;
    while (!atomic_load(&s->stop)) {
        next.tv_sec += 1;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;
        if (atomic_load(&s->stop))
            break; /* the partial interval at the end is not a sample, as there */
        double now = mono();
        long bound = (long)double_stat(s->c, "bindings") - s->base;
        if (bound <= 0)
            continue;
        if (!started) { /* the first sample skipped, as throughputCollector does */
            started = true;
            last = bound;
            last_t = now;
            continue;
        }
        if (bound == last) {
            skipped++;
            continue;
        }
        double rate = (double)(bound - last) / (now - last_t);
        for (unsigned i = 0; i <= skipped; i++)
            sample_push(s, rate);
        last = bound;
        last_t = now;
        skipped = 0;
    }
    s->cpu_s = thread_cpu_s(&s->sys_s);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* scheduler_perf's percentile: the sorted samples' element ceil(n*p/100)-1. */
static double perc(const double *sorted, size_t n, unsigned p)
{
    size_t i = (size_t)ceil((double)(n * p) / 100.0);
    return sorted[i ? i - 1 : 0];
}

struct creators {
    const struct gp_kube_config *cfg;
    const struct gp_kube_client_opts *copts;
    unsigned pods;
    atomic_uint next;
    atomic_int failed;
};

struct creator {
    struct creators *all;
    pthread_t t;
    unsigned made;
    double start_s, end_s, cpu_s, sys_s;
};

/* One creator: a client of its own, POSTing measured pods (the next index
 * taken from the shared counter) one after the other. */
static void *creator_main(void *arg)
{
    struct creator *w = arg;
    struct creators *all = w->all;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    w->start_s = mono();
    if (gp_kube_client_new(all->cfg, all->copts, &c, &d) != GP_OK) {
        fprintf(stderr, "bench_kube: creator: %s\n", d.msg);
        atomic_store(&all->failed, 1);
        w->end_s = mono();
        return NULL;
    }
    char b[1024];
    while (!atomic_load(&all->failed)) {
        unsigned i = atomic_fetch_add(&all->next, 1);
        if (i >= all->pods)
            break;
        measured_pod(b, sizeof b, i);
        struct gp_kube_response r;
        if (gp_kube_request(c, "POST", "/api/v1/namespaces/default/pods", b, "application/json", &r,
                            &d) != GP_OK ||
            r.status != 201) {
            fprintf(stderr, "bench_kube: creator: POST pod-%06u: %s %ld\n", i, d.msg, r.status);
            atomic_store(&all->failed, 1);
            break;
        }
        gp_kube_response_free(&r);
        w->made++;
    }
    w->end_s = mono();
    w->cpu_s = thread_cpu_s(&w->sys_s);
    gp_kube_client_free(c);
    return NULL;
}

struct sched_thread {
    const struct gp_kube_run_opts *o;
    struct gp_kube_run_result res;
    struct gp_diag d;
    enum gp_err err;
    double t0; /* mono() at gp_kube_run's call */
    atomic_int done;
};

static void *sched_main(void *arg)
{
    struct sched_thread *st = arg;
    st->t0 = mono();
    st->err = gp_kube_run(st->o, &st->res, &st->d);
    atomic_store(&st->done, 1);
    return NULL;
}

static volatile sig_atomic_t stop_flag;

struct perf_args {
    unsigned nodes, init_pods, init_milli, pods, creators;
};

/* The nodes made; the scheduler started on them (a thread); the init pods
 * created and bound by it; then the sampler and the creators started and
 * the measured pods bound. Returns the exit status. */
static int perf_mode(const struct perf_args *a, struct gp_kube_run_opts *o,
                     struct gp_kube_client *c)
{
    double t0 = mono();
    make_nodes(c, a->nodes);
    printf("nodes made: %u in %.1f s\n", a->nodes, mono() - t0);
    o->stop_after_binds = (uint64_t)a->init_pods + a->pods;
    o->stop_when_idle = false;
    o->stop = &stop_flag;
    struct sched_thread st = {.o = o, .d = {""}};
    pthread_t sched_t;
    if (pthread_create(&sched_t, NULL, sched_main, &st) != 0)
        return 1;
    /* the init pods: scheduler_perf's default pod asks 100m CPU and 500Mi
     * (templates/pod-default.yaml); here also a GPU share (--init-milli) */
    char b[1024], name[32];
    double ti = mono();
    for (unsigned i = 0; i < a->init_pods; i++) {
        snprintf(name, sizeof name, "init-%05u", i);
        pod_json(b, sizeof b, name, a->init_milli, "100m", "500Mi");
        call(c, "POST", "/api/v1/namespaces/default/pods", b, 201);
    }
    long bound = 0;
    for (double last_t = mono(); !atomic_load(&st.done);) {
        long last = bound;
        bound = (long)double_stat(c, "bindings");
        if (bound >= (long)a->init_pods)
            break;
        if (bound != last)
            last_t = mono();
        else if (mono() - last_t > 60)
            break;
        struct timespec ms20 = {0, 20000000};
        nanosleep(&ms20, NULL);
    }
    if (bound < (long)a->init_pods) {
        fprintf(stderr, "bench_kube: %ld of the %u init pods bound (%s)\n", bound, a->init_pods,
                st.d.msg);
        stop_flag = 1;
        pthread_join(sched_t, NULL);
        return 1;
    }
    printf("init pods: %u created and bound by the scheduler in %.1f s (%u milli-GPU each, 100m "
           "CPU, 500Mi)\n",
           a->init_pods, mono() - ti, a->init_milli);

    /* the measure */
    double sys0, cpu0 = self_cpu_s(&sys0), dcpu0 = double_cpu_s(c);
    struct gp_kube_client *sc;
    struct gp_diag d = {""};
    if (gp_kube_client_new(o->cfg, &o->client, &sc, &d) != GP_OK)
        return 1;
    struct sampler smp = {.c = sc, .base = bound};
    struct creators all = {.cfg = o->cfg, .copts = &o->client, .pods = a->pods};
    struct creator *w = calloc(a->creators, sizeof *w);
    pthread_t smp_t;
    pthread_create(&smp_t, NULL, sampler_main, &smp);
    double tc = mono();
    for (unsigned k = 0; k < a->creators; k++) {
        w[k].all = &all;
        pthread_create(&w[k].t, NULL, creator_main, &w[k]);
    }
    double first_create = INFINITY, created = 0, ccpu = 0, csys = 0;
    unsigned made = 0;
    for (unsigned k = 0; k < a->creators; k++) {
        pthread_join(w[k].t, NULL);
        first_create = fmin(first_create, w[k].start_s);
        created = fmax(created, w[k].end_s);
        ccpu += w[k].cpu_s;
        csys += w[k].sys_s;
        made += w[k].made;
    }
    atomic_store(&smp.created, 1);
    long backlog = (long)made - ((long)double_stat(c, "bindings") - bound);
    if (atomic_load(&all.failed))
        stop_flag = 1;
    /* until every measured pod is bound, or nothing binds for 60 s */
    for (double last_t = mono(), last = 0; !atomic_load(&st.done) && !stop_flag;) {
        double now_bound = double_stat(c, "bindings");
        if (now_bound != last)
            last = now_bound, last_t = mono();
        else if (mono() - last_t > 60) {
            fprintf(stderr, "bench_kube: nothing bound for 60 s; stopping\n");
            stop_flag = 1;
        }
        struct timespec ms100 = {0, 100000000};
        nanosleep(&ms100, NULL);
    }
    pthread_join(sched_t, NULL);
    atomic_store(&smp.stop, 1);
    pthread_join(smp_t, NULL);
    double sys1, cpu = self_cpu_s(&sys1) - cpu0, dcpu = double_cpu_s(c) - dcpu0;
    if (st.err != GP_OK) {
        fprintf(stderr, "bench_kube: %s\n", st.d.msg);
        return 1;
    }
    struct gp_kube_run_result *res = &st.res;
    double last_bind = st.t0 + res->last_bind_s;
    printf("creators: %u, each a client of its own: %u pods created in %.2f s: %.0f pods/s "
           "(the last created %.2f s before the last bind, %ld created and not yet bound then)\n",
           a->creators, made, created - first_create, made / (created - first_create),
           last_bind - created, backlog);
    printf("scheduler: informers synced at %.2f s from its start; %llu pods bound in all (%u init "
           "+ %u measured); %llu rollbacks, %llu audit violations\n",
           res->synced_s, (unsigned long long)res->stats.binds, a->init_pods, a->pods,
           (unsigned long long)res->stats.rollbacks,
           (unsigned long long)res->stats.audit_violations);
    long seen = api_bound(c);
    printf("read back from the API: %ld pods with spec.nodeName set\n", seen);
    if (seen != (long)res->stats.binds || res->stats.binds != o->stop_after_binds) {
        fprintf(stderr,
                "bench_kube: the scheduler counted %llu binds, the API shows %ld pods "
                "bound, %llu wanted\n",
                (unsigned long long)res->stats.binds, seen,
                (unsigned long long)o->stop_after_binds);
        return 1;
    }
    if (smp.n > 0) {
        printf("samples (pods/s, one a second, scheduler_perf's throughputCollector):");
        for (size_t i = 0; i < smp.n; i++)
            printf(" %.0f", smp.rate[i]);
        printf("\n");
        double sum_c = 0, sum_a = 0;
        size_t n_c = 0;
        for (size_t i = 0; i < smp.n; i++) {
            if (smp.creating[i])
                sum_c += smp.rate[i], n_c++;
            else
                sum_a += smp.rate[i];
        }
        if (n_c > 0 && n_c < smp.n)
            printf(
                "samples' average while the creators ran: %.0f pods/s (%zu samples); after: %.0f "
                "pods/s (%zu samples)\n",
                sum_c / (double)n_c, n_c, sum_a / (double)(smp.n - n_c), smp.n - n_c);
        qsort(smp.rate, smp.n, sizeof *smp.rate, cmp_double);
        double sum = 0;
        for (size_t i = 0; i < smp.n; i++)
            sum += smp.rate[i];
        printf("SchedulingThroughput: Average %.0f, Perc50 %.0f, Perc90 %.0f, Perc95 %.0f, Perc99 "
               "%.0f pods/s (%zu samples)\n",
               sum / (double)smp.n, perc(smp.rate, smp.n, 50), perc(smp.rate, smp.n, 90),
               perc(smp.rate, smp.n, 95), perc(smp.rate, smp.n, 99), smp.n);
    } else {
        printf("SchedulingThroughput: no sample (the measure took under 2 s)\n");
    }
    printf("overall: %u measured pods from the first create to the last bind in %.2f s: %.0f "
           "pods/s\n",
           a->pods, last_bind - first_create, a->pods / (last_bind - first_create));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("bench process (scheduler, creators, sampler): peak RSS %ld MiB\n", ru.ru_maxrss / 1024);
    double scpu = cpu - ccpu - smp.cpu_s, ssys = sys1 - sys0 - csys - smp.sys_s;
    double all_cpu = scpu + dcpu + ccpu + smp.cpu_s;
    printf("CPU over the measure (from the creators' start to the last bind, %.2f s wall): "
           "scheduler %.2f s (%.0f us a pod, %.0f of them in the kernel), the double %.2f s (%.0f "
           "us a pod, the creates included), creators %.2f s (%.0f us a pod), sampler %.2f s; "
           "shares: scheduler %.0f %%, double %.0f %%, creators %.0f %%\n",
           last_bind - tc, scpu, scpu / a->pods * 1e6, ssys / a->pods * 1e6, dcpu,
           dcpu / a->pods * 1e6, ccpu, ccpu / a->pods * 1e6, smp.cpu_s, 100 * scpu / all_cpu,
           100 * dcpu / all_cpu, 100 * ccpu / all_cpu);
    free(smp.rate);
    free(smp.creating);
    free(w);
    gp_kube_client_free(sc);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned nodes = 5000, pods = 50000;
    struct perf_args pa = {.init_pods = 5000, .init_milli = 250, .creators = 4};
    bool events = false, engine = false, tolerations = false, prelisted = false;
    int binders = -1, latency_ms = 0;
    const char *double_prog = GP_APIDOUBLE, *double_wrap = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            nodes = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--pods") == 0 && i + 1 < argc)
            pods = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--binders") == 0 && i + 1 < argc)
            binders = atoi(argv[++i]);
        else if (strcmp(argv[i], "--init-pods") == 0 && i + 1 < argc)
            pa.init_pods = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--init-milli") == 0 && i + 1 < argc)
            pa.init_milli = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--creators") == 0 && i + 1 < argc)
            pa.creators = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--prelisted") == 0)
            prelisted = true;
        else if (strcmp(argv[i], "--latency-ms") == 0 && i + 1 < argc)
            latency_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--double") == 0 && i + 1 < argc)
            double_prog = argv[++i];
        else if (strcmp(argv[i], "--double-wrap") == 0 && i + 1 < argc)
            double_wrap = argv[++i];
        else if (strcmp(argv[i], "--bind-events") == 0)
            events = true;
        else if (strcmp(argv[i], "--engine-only") == 0)
            engine = true;
        else if (strcmp(argv[i], "--tolerations") == 0)
            tolerations = true;
        else {
            fprintf(
                stderr,
                "usage: bench_kube [--nodes N] [--pods M] [--init-pods N] [--init-milli M] "
                "[--creators N] [--prelisted] [--binders N] [--latency-ms N] [--bind-events] "
                "[--engine-only] [--tolerations] [--double PATH] [--double-wrap \"CMD ARGS\"]\n");
            return 2;
        }
    }
    if (engine) {
        engine_only(nodes, pods, tolerations);
        return 0;
    }
    if (!prelisted && (pa.creators < 1 || pa.creators > 64 || pa.init_milli > 1000)) {
        fprintf(stderr, "bench_kube: --creators must be 1 to 64, --init-milli 0 to 1000\n");
        return 2;
    }
    /* every pod must bind (the measure ends at the last one): whole GPUs
     * for the measured pods (a share per half GPU, rounded up) and the
     * init pods' shares, against 8 a node (a share never straddles GPUs:
     * a bound, not exact when --init-milli does not divide 1000) */
    double gpus_asked = (double)(pods - pods / 2) + (double)(pods / 2 + 1) / 2 +
                        ceil((double)pa.init_pods * pa.init_milli / 1000.0);
    if (!prelisted && gpus_asked > 8.0 * nodes) {
        fprintf(stderr,
                "bench_kube: %u measured and %u init pods ask about %.0f GPUs, the %u nodes have "
                "%u: more nodes or fewer pods\n",
                pods, pa.init_pods, gpus_asked, nodes, 8 * nodes);
        return 2;
    }
    char server[64];
    pid_t pid = start_double(double_prog, double_wrap, server, sizeof server);
    if (pid < 0)
        return 1;
    struct gp_kube_config cfg = {.server = server, .ns = "default"};
    struct gp_kube_run_opts o;
    memset(&o, 0, sizeof o);
    o.cfg = &cfg;
    gp_kube_client_opts_default(&o.client);
    o.client.qps = 0; /* no client-side limit: the double is the bound */
    gp_kube_sched_opts_default(&o.sched);
    o.sched.bind_events = events;
    if (binders >= 0)
        o.sched.binders = (unsigned)binders;
    printf("binders: %u\n", o.sched.binders);
    gp_kube_lease_opts_default(&o.lease);
    o.stop_after_binds = pods;
    o.stop_when_idle = true;
    o.max_s = 600;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    if (gp_kube_client_new(&cfg, &o.client, &c, &d) != GP_OK)
        return 1;
    if (latency_ms > 0) {
        char fault[160];
        snprintf(fault, sizeof fault,
                 "{\"delay_ms\":%d,\"count\":1000000000,\"match\":\"/namespaces/default/pods/\"}",
                 latency_ms);
        call(c, "POST", "/_control/fault", fault, 200);
        printf("each pod request answered %d ms late\n", latency_ms);
    }
    if (!prelisted) {
        pa.nodes = nodes;
        pa.pods = pods;
        printf("scheduler_perf's mode: %u nodes, %u init pods, %u measured pods created by %u "
               "creators while the scheduler runs\n",
               nodes, pa.init_pods, pods, pa.creators);
        int rc = perf_mode(&pa, &o, c);
        gp_kube_client_free(c);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        if (rc == 0)
            engine_only(nodes, pods, tolerations);
        return rc;
    }
    double t0 = mono();
    make_cluster(c, nodes, pods);
    printf("prelisted mode: cluster made: %u nodes, %u pods in %.1f s, then the scheduler "
           "started\n",
           nodes, pods, mono() - t0);
    struct gp_kube_run_result res;
    double sys0, sys1, sched0 = self_cpu_s(&sys0), double0 = double_cpu_s(c);
    if (gp_kube_run(&o, &res, &d) != GP_OK) {
        fprintf(stderr, "bench_kube: %s\n", d.msg);
        return 1;
    }
    double sched_cpu = self_cpu_s(&sys1) - sched0, double_cpu = double_cpu_s(c) - double0;
    double span = res.last_bind_s - res.synced_s;
    printf("end to end: %llu pods bound; informers synced at %.2f s, the last bind at %.2f s: "
           "%.0f pods/s from the sync to the last bind, %.0f pods/s from the scheduler's start "
           "(its initial list included); %llu rollbacks, %llu audit violations\n",
           (unsigned long long)res.stats.binds, res.synced_s, res.last_bind_s,
           (double)res.stats.binds / span, (double)res.stats.binds / res.last_bind_s,
           (unsigned long long)res.stats.rollbacks, (unsigned long long)res.stats.audit_violations);
    printf(
        "left: %llu pending (%llu fit nowhere), %llu backing off, %llu assumed; %llu unschedulable "
        "written, %llu bind failures\n",
        (unsigned long long)res.stats.pending, (unsigned long long)res.stats.unschedulable_now,
        (unsigned long long)res.stats.waiting_backoff, (unsigned long long)res.stats.assumed,
        (unsigned long long)res.stats.unschedulable, (unsigned long long)res.stats.bind_failures);
    long seen = api_bound(c);
    printf("read back from the API: %ld pods with spec.nodeName set\n", seen);
    if (seen != (long)res.stats.binds) {
        fprintf(stderr,
                "bench_kube: the scheduler counted %llu binds, the API shows %ld pods bound\n",
                (unsigned long long)res.stats.binds, seen);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("scheduler process: peak RSS %ld MiB\n", ru.ru_maxrss / 1024);
    double bound = res.stats.binds ? (double)res.stats.binds : 1;
    printf("CPU over the whole run (lists, watches, binds): scheduler %.2f s (%.0f us a pod, %.0f "
           "of them in the kernel), the double %.2f s (%.0f us a pod): the double's share %.0f "
           "%%\n",
           sched_cpu, sched_cpu / bound * 1e6, (sys1 - sys0) / bound * 1e6, double_cpu,
           double_cpu / bound * 1e6, 100 * double_cpu / (sched_cpu + double_cpu));
    gp_kube_client_free(c);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    engine_only(nodes, pods, tolerations);
    return 0;
}
