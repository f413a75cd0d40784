/* bench_interpod.c - the engine's decisions with pods of required pod
 * anti-affinity bound (issue 14): bench_kube --engine-only's nodes and
 * pods (8 A100s, 128 cores, 1 TiB a node; pods of 1 CPU, 4 GiB and one
 * GPU or half of one), each node labelled kubernetes.io/hostname, and
 * first --guards pods bound that keep pods labelled app=db off their node
 * (requiredDuringScheduling podAntiAffinity, hostname key, selector
 * app=db, themselves app=guard); of the measured pods one in --db-every is
 * app=db (the guards' terms match it), the others app=web (no term
 * concerns them). One cycle places them all; the time of that cycle and
 * the nodes the placements visited are printed. For callgrind:
 *   valgrind --tool=callgrind --toggle-collect=gp_engine_schedule \
 *     bench_interpod --nodes 5000 --pods 20000
 *
 *   bench_interpod [--nodes 5000] [--pods 50000] [--guards 1] [--db-every 10]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int arg_u(const char *flag, const char *v, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
        fprintf(stderr, "bench_interpod: %s must be %u to %u, not '%s'\n", flag, lo, hi, v);
        return -1;
    }
    *out = (unsigned)x;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned nodes = 5000, pods = 50000, guards = 1, db_every = 10;
    for (int i = 1; i < argc; i++) {
        int bad = i + 1 >= argc;
        if (!bad && strcmp(argv[i], "--nodes") == 0)
            bad = arg_u("--nodes", argv[++i], 1, 100000, &nodes);
        else if (!bad && strcmp(argv[i], "--pods") == 0)
            bad = arg_u("--pods", argv[++i], 1, 1000000, &pods);
        else if (!bad && strcmp(argv[i], "--guards") == 0)
            bad = arg_u("--guards", argv[++i], 0, 100000, &guards);
        else if (!bad && strcmp(argv[i], "--db-every") == 0)
            bad = arg_u("--db-every", argv[++i], 1, 1000000, &db_every);
        else
            bad = 1;
        if (bad) {
            fprintf(stderr, "usage: bench_interpod [--nodes N] [--pods M] [--guards G] "
                            "[--db-every K]\n");
            return 2;
        }
    }
    if (guards > nodes) {
        fprintf(stderr, "bench_interpod: --guards %u is more than the %u nodes\n", guards, nodes);
        return 2;
    }
    static const struct gp_kv web[] = {{"app", "web"}}, db[] = {{"app", "db"}},
                              guard[] = {{"app", "guard"}};
    static struct gp_pod_term term;
    term.selector.set = true;
    term.selector.labels = db;
    term.selector.nlabels = 1;
    term.topology_key = "kubernetes.io/hostname";
    static struct gp_pod_constraints cons;
    cons.anti = &term;
    cons.nanti = 1;

    int rc = 1;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    char(*names)[16] = malloc((size_t)nodes * sizeof *names);
    struct gp_kv *labels = malloc((size_t)nodes * sizeof *labels);
    size_t ndec = (size_t)(pods > guards ? pods : guards) + 1;
    struct gp_decision *d = malloc(ndec * sizeof *d);
    if (!e || !names || !labels || !d) {
        fprintf(stderr, "bench_interpod: out of memory\n");
        goto out;
    }
    for (unsigned i = 0; i < nodes; i++) {
        snprintf(names[i], sizeof names[i], "node-%05u", i);
        labels[i].key = "kubernetes.io/hostname";
        labels[i].value = names[i];
        struct gp_node_spec ns = {.name = names[i],
                                  .gpu_model = "NVIDIA-A100-SXM4-80GB",
                                  .cpu_milli = 128000,
                                  .mem_mib = 1024 * 1024,
                                  .gpu_count = 8,
                                  .gpu_mem_mib = 81920,
                                  .labels = &labels[i],
                                  .nlabels = 1};
        if (gp_engine_node_add(e, &ns, NULL) != GP_OK)
            goto oom;
    }
    for (unsigned i = 0; i < guards; i++) {
        struct gp_pod_spec ps = {.name = "guard",
                                 .cpu_milli = 1000,
                                 .mem_mib = 4096,
                                 .gpu_count = 1,
                                 .gpu_milli = 1000,
                                 .labels = guard,
                                 .nlabels = 1,
                                 .constraints = &cons};
        if (gp_engine_pod_add(e, &ps, 0, NULL) != GP_OK)
            goto oom;
    }
    size_t n = gp_engine_schedule(e, 0, 0, d, ndec);
    for (unsigned i = 0; i < pods; i++) {
        bool is_db = i % db_every == 0;
        struct gp_pod_spec ps = {.name = "p",
                                 .cpu_milli = 1000,
                                 .mem_mib = 4096,
                                 .gpu_count = 1,
                                 .gpu_milli = i % 2 ? 500 : 1000,
                                 .gpu_resource = i % 2 ? GP_GPU_RES_NONE : GP_GPU_RES_GPU,
                                 .labels = is_db ? db : web,
                                 .nlabels = 1};
        if (gp_engine_pod_add(e, &ps, 1, NULL) != GP_OK)
            goto oom;
    }
    uint64_t places0, visits0, places1, visits1;
    gp_engine_place_stats(e, &places0, &visits0);
    double t0 = mono();
    n = gp_engine_schedule(e, 1, 0, d, ndec);
    double dt = mono() - t0;
    gp_engine_place_stats(e, &places1, &visits1);
    size_t binds = 0;
    for (size_t i = 0; i < n; i++)
        binds += d[i].kind == GP_DECISION_BIND;
    printf("%u nodes, %u anti-affinity pods bound, %u pods (1 in %u app=db): %zu decisions (%zu "
           "binds) in %.3f s: %.0f decisions/s; %.1f nodes visited a placement\n",
           nodes, guards, pods, db_every, n, binds, dt, (double)n / dt,
           (double)(visits1 - visits0) / (double)(places1 - places0 ? places1 - places0 : 1));
    rc = 0;
    goto out;
oom:
    fprintf(stderr, "bench_interpod: out of memory\n");
out:
    free(d);
    free(labels);
    free(names);
    gp_engine_free(e);
    return rc;
}
