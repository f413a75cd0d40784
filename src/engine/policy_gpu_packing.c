/* policy_gpu_packing.c - "gpu-packing": the FGD authors' GpuPackingScore.
 * Three bands, best first:
 *   share on a partly used GPU       100 - (free%/10) of the GPUs used, >= 50
 *   whole free GPUs of a busy node   50 - (fully free GPUs it takes),   >= 33
 *   a node whose GPUs are all free   33 - (its GPU count)
 * so a pod fills used GPUs first, then busy nodes, and opens an idle node
 * (the smallest first) only when it must. Pods without GPU score 0
 * everywhere (the lowest node id wins). The GPUs are
 * gp_engine_pick_default's, which are the ones the reference scores. */
#include "engine/policy.h"

static double gpu_packing_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                                const struct gp_pod *pod, struct gp_pick *pick)
{
    (void)state;
    (void)e;
    if (gp_engine_pick_default(node, pod, pick) != 0 || pick->ngpus == 0 ||
        pod->spec.gpu_milli == 0)
        return 0;
    int64_t whole_free = node->gpus_whole_free;
    if (whole_free == node->spec.gpu_count) {
        int64_t score = GP_POLICY_MAX_SCORE / 3 - whole_free;
        return (double)(score > whole_free ? score : whole_free);
    }
    int64_t whole_used = 0, free_pct = 0;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t milli = node->gpu[pick->gpu[i]].milli_free;
        whole_used += milli == GP_GPU_MILLI;
        free_pct += (int64_t)milli * 100 / GP_GPU_MILLI;
    }
    if (whole_used > 0) {
        int64_t score = GP_POLICY_MAX_SCORE / 2 - whole_used;
        return (double)(score > GP_POLICY_MAX_SCORE / 3 ? score : GP_POLICY_MAX_SCORE / 3);
    }
    int64_t score = GP_POLICY_MAX_SCORE - free_pct / 10;
    return (double)(score > GP_POLICY_MAX_SCORE / 2 ? score : GP_POLICY_MAX_SCORE / 2);
}

const struct gp_policy_ops gp_policy_gpu_packing = {
    .name = "gpu-packing",
    .summary = "partly used GPUs first, then busy nodes, then idle ones (FGD paper baseline)",
    .score = gpu_packing_score,
    .node_local = true,
};
