/* policy_best_fit.c - "best-fit": the node with the least CPU and GPU left
 * after placing the pod, both normalised by the largest node (128 cores, 8
 * GPUs) and weighted 0.5/0.5 - the FGD authors' BestFitScore. The GPUs
 * inside the node are gp_engine_pick_default's (best fit for a share). */
#include <math.h>

#include "engine/policy.h"

static double best_fit_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                             const struct gp_pod *pod, struct gp_pick *pick)
{
    (void)state;
    (void)e;
    gp_engine_pick_default(node, pod, pick);
    double cpu_free = (double)node->cpu_free_milli, cpu_req = (double)pod->spec.cpu_milli;
    double gpu_free = (double)node->gpu_milli_free;
    double gpu_req = (double)pod->spec.gpu_milli * (double)pod->spec.gpu_count;
    /* leftover in [0, 1] on nodes up to the max spec, lower is better; the
     * operations are in the reference's order so that its integer scores,
     * and therefore its ties, come out the same */
    double left = 0;
    left += (cpu_free - cpu_req) / GP_POLICY_MAX_CPU_MILLI * 0.5;
    left += (gpu_free - gpu_req) / GP_POLICY_MAX_GPU_MILLI * 0.5;
    return trunc((1.0 - left) * GP_POLICY_MAX_SCORE);
}

const struct gp_policy_ops gp_policy_best_fit = {
    .name = "best-fit",
    .summary = "least CPU+GPU left over after placement (FGD paper baseline)",
    .score = best_fit_score,
    .node_local = true,
};
