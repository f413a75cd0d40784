/* policy_dot_product.c - "dot-product": Tetris-style alignment between the
 * node's free (CPU, GPU) vector and the pod's demand, the FGD authors'
 * DotProductScore with "-dimext merge -norm max": the GPU dimensions are
 * merged into one (the node's total free GPU-milli, the pod's gpu_count x
 * gpu_milli), both dimensions are divided by the largest node (128 cores, 8
 * GPUs), and the score is 1 - dot/2, so a smaller product (a fuller node)
 * scores higher. With merged dimensions the reference leaves the GPU choice
 * to its GPU-share plugin's best fit, which is gp_engine_pick_default. */
#include <math.h>

#include "engine/policy.h"

static double dot_product_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                                const struct gp_pod *pod, struct gp_pick *pick)
{
    (void)state;
    (void)e;
    gp_engine_pick_default(node, pod, pick);
    double node_cpu = (double)node->cpu_free_milli / GP_POLICY_MAX_CPU_MILLI;
    double node_gpu = (double)node->gpu_milli_free / GP_POLICY_MAX_GPU_MILLI;
    double pod_cpu = (double)pod->spec.cpu_milli / GP_POLICY_MAX_CPU_MILLI;
    double pod_gpu =
        (double)pod->spec.gpu_milli * (double)pod->spec.gpu_count / GP_POLICY_MAX_GPU_MILLI;
    double dot = 0;
    dot += node_cpu * pod_cpu;
    dot += node_gpu * pod_gpu;
    dot /= 2; /* the number of dimensions: [0, 1] on nodes up to the max spec */
    return trunc(GP_POLICY_MAX_SCORE * (1 - dot));
}

const struct gp_policy_ops gp_policy_dot_product = {
    .name = "dot-product",
    .summary = "smallest dot product of free (CPU, GPU) and demand (FGD paper baseline)",
    .score = dot_product_score,
    .node_local = true,
};
