/* bench_kube.c - `gpuplane schedule` end to end against the API server
 * double, scheduler_perf style (issue 14's benchmark): N GPU nodes (8 GPUs
 * each) and M pending pods (half asking one whole GPU, half a 500/1000
 * share) created first, then the scheduler started (kube/run.h: informer
 * threads, the annotation patch and the Binding per pod); pods bound per
 * second = pods whose nodeName went from empty to set, over the time from
 * the scheduler's start (and from its first bind) to the last bind. Then
 * the engine alone on the same shapes: decisions per second. The nodes
 * are labelled as served by gpuplane's agent (gpuplane.io/agent), whose
 * "allocated" mark the double plays (--auto-allocate), so the scheduler
 * keeps one pod allocating per node as on a real cluster of such nodes.
 *
 *   bench_kube [--nodes 5000] [--pods 50000] [--binders 8] [--bind-events] [--engine-only]
 *              [--tolerations]
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
#include <signal.h>
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

/* The double's own CPU seconds so far (GET /_control/stats: cpu_s). */
static double double_cpu_s(struct gp_kube_client *c)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    if (gp_kube_request(c, "GET", "/_control/stats", NULL, NULL, &r, &d) != GP_OK)
        return -1;
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    json_t *v = json_object_get(doc, "cpu_s");
    double s = json_is_number(v) ? json_number_value(v) : -1;
    json_decref(doc);
    gp_kube_response_free(&r);
    return s;
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

static void make_cluster(struct gp_kube_client *c, unsigned nodes, unsigned pods)
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
    for (unsigned i = 0; i < pods; i++) {
        bool share = i % 2;
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"pod-%06u\"%s},\"spec\":{\"schedulerName\":"
                 "\"gpuplane\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
                 "\"requests\":{\"cpu\":\"1\",\"memory\":\"4Gi\"%s}}}]}}",
                 i, share ? ",\"annotations\":{\"gpuplane.io/gpu-milli\":\"500\"}" : "",
                 share ? "" : ",\"nvidia.com/gpu\":\"1\"");
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

int main(int argc, char **argv)
{
    unsigned nodes = 5000, pods = 50000;
    bool events = false, engine = false, tolerations = false;
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
                "usage: bench_kube [--nodes N] [--pods M] [--binders N] [--latency-ms "
                "N] [--bind-events] "
                "[--engine-only] [--tolerations] [--double PATH] [--double-wrap \"CMD ARGS\"]\n");
            return 2;
        }
    }
    if (engine) {
        engine_only(nodes, pods, tolerations);
        return 0;
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
    double t0 = mono();
    make_cluster(c, nodes, pods);
    printf("cluster made: %u nodes, %u pods in %.1f s\n", nodes, pods, mono() - t0);
    if (latency_ms > 0) {
        char fault[160];
        snprintf(fault, sizeof fault,
                 "{\"delay_ms\":%d,\"count\":1000000000,\"match\":\"/namespaces/default/pods/\"}",
                 latency_ms);
        call(c, "POST", "/_control/fault", fault, 200);
        printf("each pod request answered %d ms late\n", latency_ms);
    }
    struct gp_kube_run_result res;
    double sys0, sys1, sched0 = self_cpu_s(&sys0), double0 = double_cpu_s(c);
    if (gp_kube_run(&o, &res, &d) != GP_OK) {
        fprintf(stderr, "bench_kube: %s\n", d.msg);
        return 1;
    }
    double sched_cpu = self_cpu_s(&sys1) - sched0, double_cpu = double_cpu_s(c) - double0;
    double span = res.last_bind_s - res.synced_s;
    printf("end to end: %llu pods bound; informers synced at %.2f s, the last bind at %.2f s: "
           "%.0f pods/s (bound over the time from the sync to the last bind); %llu rollbacks, "
           "%llu audit violations\n",
           (unsigned long long)res.stats.binds, res.synced_s, res.last_bind_s,
           (double)res.stats.binds / span, (unsigned long long)res.stats.rollbacks,
           (unsigned long long)res.stats.audit_violations);
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
