/* policy_random.c - "random": a feasible node chosen uniformly at random,
 * and for a share a GPU chosen uniformly among those it fits on (the FGD
 * authors' RandomScore with gpuSelMethod "random"). Whole GPUs are the
 * lowest-indexed free ones. Every draw comes from the engine's seeded
 * generator, so a seed always gives the same placements. */
#include "engine/policy.h"

/* Each feasible node draws a uniform number and the largest wins: the
 * winner is uniform over the feasible nodes whatever their count, without
 * knowing the count in advance. */
static double random_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                           const struct gp_pod *pod, struct gp_pick *pick)
{
    (void)state;
    struct gp_rng *rng = gp_engine_rng(e);
    double score = gp_rng_unit(rng);
    gp_policy_pick_share_random(node, pod, rng, pick);
    return score;
}

const struct gp_policy_ops gp_policy_random = {
    .name = "random",
    .summary = "a feasible node uniformly at random (FGD paper baseline)",
    .score = random_score,
    .node_local = false, /* every score is a draw: the draws must all happen */
};
