/* bench_openb.c - the static packing benchmark on the Alibaba openb trace:
 * for each policy, replay a pod list on the openb GPU cluster (shuffled with
 * the seed, inflated to 130 % of GPU capacity), and print the unallocated
 * GPU % at 100 % arrived and the wall time of the simulation alone (parsing
 * excluded). Usage:
 *   bench_openb [--nodes CSV] [--pods CSV] [--seed N] [--repeat N] [POLICY...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "sim/sim.h"
#include "util/arena.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *nodes = "../shared/data/openb/openb_node_list_gpu_node.csv";
    const char *pods = "../shared/data/openb/openb_pod_list_default.csv";
    unsigned long long seed = 42;
    int repeat = 3;
    const char *policies[32];
    int npolicies = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            nodes = argv[++i];
        else if (strcmp(argv[i], "--pods") == 0 && i + 1 < argc)
            pods = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (npolicies < 32 && gp_policy_find(argv[i]))
            policies[npolicies++] = argv[i];
        else {
            fprintf(stderr, "bench_openb: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (npolicies == 0)
        for (size_t i = 0; gp_policies[i] && npolicies < 32; i++)
            policies[npolicies++] = gp_policies[i]->name;
    if (repeat < 1)
        repeat = 1;

    struct gp_arena arena;
    gp_arena_init(&arena);
    struct gp_cluster cluster;
    struct gp_workload workload;
    memset(&cluster, 0, sizeof cluster);
    memset(&workload, 0, sizeof workload);
    struct gp_diag diag = {""};
    char arg[4096];
    snprintf(arg, sizeof arg, "openb:%s", nodes);
    int rc = 0;
    if (gp_cluster_load(arg, &arena, &cluster, &diag) != GP_OK) {
        fprintf(stderr, "bench_openb: %s\n", diag.msg);
        rc = 2;
        goto out;
    }
    snprintf(arg, sizeof arg, "openb:%s", pods);
    if (gp_workload_load(arg, &arena, &workload, &diag) != GP_OK) {
        fprintf(stderr, "bench_openb: %s\n", diag.msg);
        rc = 2;
        goto out;
    }
    printf("openb static packing: %zu nodes, %zu pods, inflate 1.3, seed %llu, best of %d\n",
           cluster.nnodes, workload.nitems, seed, repeat);
    printf("%-16s %10s %10s %12s %12s\n", "policy", "arrivals", "unalloc%", "wall_ms",
           "us/decision");
    for (int p = 0; p < npolicies; p++) {
        double best = 1e9;
        struct gp_sim_result r;
        for (int k = 0; k < repeat; k++) {
            struct gp_arena run;
            gp_arena_init(&run);
            struct gp_sim_config cfg;
            gp_sim_config_default(&cfg);
            cfg.mode = GP_SIM_STATIC;
            cfg.policy = gp_policy_find(policies[p]);
            cfg.seed = seed;
            cfg.inflate = 1.3;
            double t0 = now_s();
            enum gp_err err = gp_sim_run(&cfg, &cluster, &workload, &run, &r, &diag);
            double dt = now_s() - t0;
            gp_arena_free(&run); /* r's scalars stay valid; its arrays are not read */
            if (err != GP_OK) {
                fprintf(stderr, "bench_openb: %s: %s\n", policies[p], diag.msg);
                rc = 1;
                goto out;
            }
            if (dt < best)
                best = dt;
        }
        printf("%-16s %10llu %10.2f %12.1f %12.2f\n", policies[p],
               (unsigned long long)r.pods_submitted, r.unallocated_gpu_pct_at_100, best * 1e3,
               best * 1e6 / (double)r.pods_submitted);
    }
out:
    gp_arena_free(&arena);
    return rc;
}
