/* policy_spread.c - "spread": least allocated, the opposite of best-fit.
 * The node with the largest share of its own capacity still free after
 * placing the pod wins, averaged over CPU, memory and, for GPU pods, GPU
 * (the node's free GPU-milli over its GPU count x 1000). Capacity is the
 * node's own, unlike best-fit's fixed largest node, so a half-empty small
 * node and a half-empty big one count alike. A share goes to the emptiest
 * GPU it fits on (worst fit), whole GPUs to the lowest-indexed free ones.
 * Replicas of a service land on different nodes and GPUs, which is what
 * inference wants for availability and for less contention. gpuplane's own,
 * not from the FGD paper. */
#include "engine/policy.h"

/* What share of cap stays free once req is taken from free; 0 when cap is. */
static double left_ratio(double free, double req, double cap)
{
    return cap > 0 ? (free - req) / cap : 0;
}

static double spread_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                           const struct gp_pod *pod, struct gp_pick *pick)
{
    (void)state;
    (void)e;
    gp_policy_pick_share_worst(node, pod, pick);
    double sum = 0;
    unsigned dims = 0;
    if (node->spec.cpu_milli > 0) {
        sum += left_ratio((double)node->cpu_free_milli, (double)pod->spec.cpu_milli,
                          (double)node->spec.cpu_milli);
        dims++;
    }
    if (node->spec.mem_mib > 0) {
        sum += left_ratio((double)node->mem_free_mib, (double)pod->spec.mem_mib,
                          (double)node->spec.mem_mib);
        dims++;
    }
    if (pod->spec.gpu_count > 0 && node->spec.gpu_count > 0) {
        sum += left_ratio((double)node->gpu_milli_free,
                          (double)pod->spec.gpu_milli * (double)pod->spec.gpu_count,
                          (double)node->spec.gpu_count * GP_GPU_MILLI);
        dims++;
    }
    return dims ? GP_POLICY_MAX_SCORE * sum / dims : 0;
}

const struct gp_policy_ops gp_policy_spread = {
    .name = "spread",
    .summary = "most capacity left after placement, emptiest GPU for shares (spreads load)",
    .score = spread_score,
    .node_local = true,
};
