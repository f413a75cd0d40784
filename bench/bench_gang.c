/* bench_gang.c - placing one large gang: a 1,024-GPU training job (128
 * workers of 8 GPUs) on a 5,000-node cluster of 8-GPU nodes in racks of 32,
 * empty or with half its GPUs taken by one-GPU pods; the time of the one
 * scheduling cycle that places it (or finds it does not fit), per policy,
 * and a digest of the decisions. --no-memo runs each policy as if its
 * scores were not node-local (gp_policy_ops.node_local false), so the
 * engine scores every node for every member, as before the gang memo: the
 * digests must match.
 * Usage: bench_gang [--nodes N] [--repeat N] [--no-memo] [POLICY...] */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "util/rng.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct setup {
    char (*names)[16];
    struct gp_kv *racks;
    char (*rack_names)[16];
};

static struct gp_engine *cluster(const struct gp_policy_ops *policy, int nodes, double busy,
                                 struct setup *s)
{
    struct gp_engine *e = gp_engine_new(policy, 42);
    for (int i = 0; i < nodes; i++) {
        struct gp_node_spec n = {0};
        n.name = s->names[i];
        n.gpu_model = "H100-80GB";
        n.gpu_count = 8;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 192000;
        n.mem_mib = 2097152;
        n.labels = &s->racks[i / 32];
        n.nlabels = 1;
        gp_engine_node_add(e, &n, NULL);
    }
    /* fill: one-GPU pods on random nodes until `busy` of the GPUs are taken */
    struct gp_rng r;
    gp_rng_seed(&r, 7);
    struct gp_pod_spec small = {0};
    small.name = "small";
    small.cpu_milli = 8000;
    small.mem_mib = 65536;
    small.gpu_count = 1;
    small.gpu_milli = 1000;
    struct gp_decision d;
    for (long k = 0; k < (long)(busy * nodes * 8); k++) {
        uint32_t id;
        gp_engine_pod_add(e, &small, 0, &id);
        gp_engine_schedule_pod(e, id, &d);
    }
    (void)r;
    return e;
}

/* FNV-1a over what the decisions say: pod, kind, node and GPUs. */
static uint64_t digest(const struct gp_decision *d, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t words[4] = {d[i].pod, (uint32_t)d[i].kind, d[i].node, d[i].pick.ngpus};
        for (size_t k = 0; k < 4 + (size_t)d[i].pick.ngpus; k++) {
            uint32_t w = k < 4 ? words[k] : d[i].pick.gpu[k - 4];
            h = (h ^ w) * 0x100000001b3ULL;
        }
    }
    return h;
}

int main(int argc, char **argv)
{
    int nodes = 5000, repeat = 3;
    bool memo = true;
    const char *policies[16];
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            nodes = atoi(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-memo") == 0)
            memo = false;
        else if (np < 16 && gp_policy_find(argv[i]))
            policies[np++] = argv[i];
        else {
            fprintf(stderr, "bench_gang: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (np == 0) {
        policies[np++] = "best-fit";
        policies[np++] = "fgd";
    }
    if (nodes < 128)
        nodes = 128;
    struct setup s;
    s.names = calloc((size_t)nodes, sizeof *s.names);
    s.racks = calloc((size_t)nodes / 32 + 1, sizeof *s.racks);
    s.rack_names = calloc((size_t)nodes / 32 + 1, sizeof *s.rack_names);
    for (int i = 0; i < nodes; i++)
        snprintf(s.names[i], sizeof s.names[i], "n%d", i);
    for (int i = 0; i <= nodes / 32; i++) {
        snprintf(s.rack_names[i], sizeof s.rack_names[i], "r%d", i);
        s.racks[i].key = "gpuplane.io/rack";
        s.racks[i].value = s.rack_names[i];
    }
    printf("a gang of 128 x 8 GPUs on %d nodes of 8 GPUs (racks of 32), best of %d%s\n", nodes,
           repeat, memo ? "" : ", no memo");
    printf("%-10s %-10s %-10s %10s %8s  %-16s\n", "policy", "cluster", "topology", "ms", "placed",
           "digest");
    static const double fills[] = {0.0, 0.5};
    static const char *const topo[] = {NULL, "gpuplane.io/rack"};
    for (int p = 0; p < np; p++)
        for (int f = 0; f < 2; f++)
            for (int t = 0; t < 2; t++) {
                double best = 1e9;
                uint32_t placed = 0;
                uint64_t dig = 0;
                struct gp_policy_ops ops = *gp_policy_find(policies[p]);
                if (!memo)
                    ops.node_local = false;
                for (int k = 0; k < repeat; k++) {
                    struct gp_engine *e = cluster(&ops, nodes, fills[f], &s);
                    struct gp_group_spec g = {"train", 128, topo[t], false};
                    uint32_t gid;
                    gp_engine_group_add(e, &g, &gid);
                    struct gp_pod_spec w = {0};
                    w.name = "worker";
                    w.cpu_milli = 96000;
                    w.mem_mib = 1048576;
                    w.gpu_count = 8;
                    w.gpu_milli = 1000;
                    w.group = gid;
                    for (int i = 0; i < 128; i++)
                        gp_engine_pod_add(e, &w, 1, NULL);
                    struct gp_decision *d = calloc(256, sizeof *d);
                    double t0 = now_s();
                    size_t nd = gp_engine_schedule(e, 1, 0, d, 256);
                    double dt = now_s() - t0;
                    placed = gp_engine_group_bound(e, gid);
                    dig = digest(d, nd);
                    if (dt < best)
                        best = dt;
                    free(d);
                    gp_engine_free(e);
                }
                printf("%-10s %-10s %-10s %10.2f %8u  %016llx\n", policies[p],
                       fills[f] > 0 ? "half busy" : "empty", topo[t] ? "rack" : "none", best * 1e3,
                       placed, (unsigned long long)dig);
            }
    free(s.names);
    free(s.racks);
    free(s.rack_names);
    return 0;
}
