/* bench_mig.c - placement time per pod on MIG GPUs: a 1,000-node cluster of
 * 8-GPU nodes, half A100-80GB and half H100-80GB, with MIG layouts - a
 * static mig-parted config ("all-balanced") or dynamic re-partitioning -
 * filled by a seeded stream of pods asking for nvidia.com/mig-<profile>
 * (1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb, most of them small) and
 * for fractions that the engine maps to the smallest profile; the time of
 * each placement until the cluster is full, and the share of the GPUs'
 * compute slices held at the end. Usage:
 *   bench_mig [--nodes N] [--pods N] [--repeat N] [POLICY...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/sharing.h"
#include "util/rng.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int sharing_spec(struct gp_sharing_spec *s, const char *model, bool dynamic)
{
    memset(s, 0, sizeof *s);
    s->mode = GP_SHARE_MIG;
    s->replicas = 1;
    s->mig.model = gp_mig_model_find(model);
    s->mig.dynamic = dynamic;
    if (!s->mig.model)
        return -1;
    if (dynamic)
        return 0;
    struct gp_mig_counts counts;
    bool enabled;
    if (!gp_mig_named_config(s->mig.model, "all-balanced", &counts, &enabled) ||
        !gp_mig_layout_from_counts(s->mig.model, &counts, &s->mig.layout, NULL, 0))
        return -1;
    return 0;
}

struct result {
    double total_s, max_s;
    long placed, failed;
    double used_pct; /* GPU compute held by pods at the end */
};

static int run(const struct gp_policy_ops *policy, int nodes, long pods, bool dynamic,
               struct result *out)
{
    struct gp_sharing_spec a100, h100;
    if (sharing_spec(&a100, "A100-80GB", dynamic) != 0 ||
        sharing_spec(&h100, "H100-80GB", dynamic) != 0)
        return -1;
    struct gp_engine *e = gp_engine_new(policy, 42);
    if (!e)
        return -1;
    static char names[100000][16];
    for (int i = 0; i < nodes && i < 100000; i++) {
        struct gp_node_spec n = {0};
        snprintf(names[i], sizeof names[i], "n%d", i);
        n.name = names[i];
        bool h = i % 2;
        n.gpu_model = h ? "H100-80GB" : "A100-80GB";
        n.gpu_count = 8;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = h ? 192000 : 96000;
        n.mem_mib = h ? 2097152 : 1179648;
        n.sharing = h ? &h100 : &a100;
        gp_engine_node_add(e, &n, NULL);
    }
    /* the stream: mostly small instances, as inference fleets ask */
    static const char *const profiles[] = {"1g.10gb", "1g.10gb", "1g.10gb", "2g.20gb",
                                           "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"};
    struct gp_rng r;
    gp_rng_seed(&r, 11);
    memset(out, 0, sizeof *out);
    for (long k = 0; k < pods; k++) {
        struct gp_pod_spec p = {0};
        p.name = "p";
        p.cpu_milli = 4000;
        p.mem_mib = 16384;
        p.gpu_count = 1;
        if (gp_rng_below(&r, 4) == 0) { /* a fraction: the smallest profile that holds it */
            p.gpu_milli = 100 + (uint32_t)gp_rng_below(&r, 300);
            p.gpu_mem_mib = 4096 + (uint32_t)gp_rng_below(&r, 16384);
        } else {
            p.mig_profile = profiles[gp_rng_below(&r, 8)];
            p.gpu_milli = 142;
            p.share_modes = 1u << GP_SHARE_MIG;
        }
        uint32_t id;
        struct gp_decision d;
        gp_engine_pod_add(e, &p, 0, &id);
        double t0 = now_s();
        gp_engine_schedule_pod(e, id, &d);
        double dt = now_s() - t0;
        out->total_s += dt;
        if (dt > out->max_s)
            out->max_s = dt;
        if (d.kind == GP_DECISION_BIND)
            out->placed++;
        else
            out->failed++;
    }
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    out->used_pct =
        t.gpu_milli_total ? 100.0 * (double)t.gpu_milli_alloc / (double)t.gpu_milli_total : 0;
    gp_engine_free(e);
    return 0;
}

int main(int argc, char **argv)
{
    int nodes = 1000, repeat = 3;
    long pods = 40000;
    const char *policies[16];
    int npolicies = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            nodes = atoi(argv[++i]);
        else if (strcmp(argv[i], "--pods") == 0 && i + 1 < argc)
            pods = atol(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (argv[i][0] != '-' && npolicies < 16)
            policies[npolicies++] = argv[i];
        else {
            fprintf(stderr, "usage: bench_mig [--nodes N] [--pods N] [--repeat N] [POLICY...]\n");
            return 2;
        }
    }
    if (nodes < 1 || nodes > 100000 || pods < 1 || repeat < 1) {
        fprintf(stderr, "bench_mig: --nodes 1..100000, --pods and --repeat positive\n");
        return 2;
    }
    if (npolicies == 0)
        policies[npolicies++] = "best-fit";
    printf("%d nodes (A100-80GB and H100-80GB, 8 GPUs each, MIG), %ld pods, best of %d\n", nodes,
           pods, repeat);
    printf("%-12s %-8s %8s %8s %8s %12s %12s\n", "policy", "layout", "placed", "failed", "used %",
           "mean us/pod", "max us/pod");
    for (int i = 0; i < npolicies; i++) {
        const struct gp_policy_ops *policy = gp_policy_find(policies[i]);
        if (!policy) {
            fprintf(stderr, "bench_mig: unknown policy %s\n", policies[i]);
            return 2;
        }
        for (int dyn = 0; dyn <= 1; dyn++) {
            struct result best = {0}, r;
            for (int k = 0; k < repeat; k++) {
                if (run(policy, nodes, pods, dyn, &r) != 0) {
                    fprintf(stderr, "bench_mig: cannot build the cluster\n");
                    return 1;
                }
                if (k == 0 || r.total_s < best.total_s)
                    best = r;
            }
            printf("%-12s %-8s %8ld %8ld %8.1f %12.2f %12.1f\n", policies[i],
                   dyn ? "dynamic" : "static", best.placed, best.failed, best.used_pct,
                   best.total_s / (double)pods * 1e6, best.max_s * 1e6);
        }
    }
    return 0;
}
