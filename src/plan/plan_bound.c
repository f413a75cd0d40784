/* plan_bound.c - a lower bound on a candidate's cost over the horizon
 * (docs/plan.md, "Pruning"): a linear programme solved with GLPK.
 *
 *   minimise  sum_p price_p x_p                      (x_p: node-hours of pool p)
 *   s.t.      sum_{p serves c} z_cp = 1              for every need c
 *             sum_c h_cp z_cp <= gpus_p x_p          for every GPU pool p
 *             min_p H <= x_p <= max_p H
 *
 * h_cp is the GPU-hours need c asks of pool p (its whole-GPU pods' GPU-
 * hours, its fractional pods' pod-hours on exclusive GPUs or their shares
 * on time-sliced and MPS ones, with a pod never under one replica; a MIG
 * need's instance-hours of each profile over the instances of it one GPU
 * of the pool's layout holds, the largest: the slices its pods take, as
 * the layout cuts them), z_cp the part
 * of c's work p takes, H the horizon in hours. Any run that does the
 * work within the horizon pays at least this for its GPU nodes: nodes are
 * billed whether busy or not, and every GPU-hour of work is some pool's.
 * The control plane's fee and the CPU pool's minimum are added. No
 * feasible point (a need no pool can serve, or more work than the pools
 * hold at their maximum) is reported as -1. */
#include <glpk.h>
#include <math.h>
#include <stdlib.h>

#include "plan/plan_internal.h"

double gp_plan_need_hours(const struct gp_plan_need *nd, const struct gp_plan_pool *p)
{
    if (nd->mig) {
        double h = 0;
        for (size_t k = 0; k < nd->nmig && p->mig; k++)
            if (p->mig_counts[k])
                h = fmax(h, nd->mig_profiles[k].inst_hours / p->mig_counts[k]);
        return h;
    }
    uint32_t r = p->replicas;
    if (!r)
        return nd->gpu_hours + nd->frac_pod_hours;
    double frac = nd->frac_pod_hours / r;
    return nd->gpu_hours / r + (nd->share_hours > frac ? nd->share_hours : frac);
}

enum gp_err gp_plan_bound(const struct gp_plan_cand *c, const struct gp_plan_demand *d, double *usd,
                          struct gp_diag *diag)
{
    double H = d->horizon_s / 3600.0, fixed = c->control_plane_usd_per_hour * H;
    size_t np = c->npools, nn = d->nneeds;
    /* columns: x_p (1..np), then z_cp for the pairs that serve */
    int *ia = malloc((1 + 3 * np * nn + np) * sizeof *ia);
    int *ja = malloc((1 + 3 * np * nn + np) * sizeof *ja);
    double *ar = malloc((1 + 3 * np * nn + np) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia);
        free(ja);
        free(ar);
        return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
    }
    int old = glp_term_out(GLP_OFF);
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MIN);
    glp_add_rows(P, (int)(nn + np));
    glp_add_cols(P, (int)np);
    int ne = 0;
    bool feasible = true;
    for (size_t p = 0; p < np; p++) {
        const struct gp_plan_pool *pl = &c->pools[p];
        int j = (int)p + 1;
        double lo = pl->min_nodes * H, hi = pl->max_nodes * H;
        glp_set_col_bnds(P, j, hi > lo ? GLP_DB : GLP_FX, lo, hi);
        glp_set_obj_coef(P, j, pl->node_usd_per_hour);
        glp_set_row_bnds(P, (int)(nn + p) + 1, GLP_UP, 0, 0);
        if (pl->row) { /* GPU capacity */
            ia[++ne] = (int)(nn + p) + 1;
            ja[ne] = j;
            ar[ne] = -(double)pl->gpus_per_node;
        }
    }
    for (size_t k = 0; k < nn; k++) {
        const struct gp_plan_need *nd = &d->needs[k];
        glp_set_row_bnds(P, (int)k + 1, GLP_FX, 1, 1);
        bool any = false;
        for (size_t p = 0; p < np; p++) {
            if (!gp_plan_serves(c, &c->pools[p], d, k))
                continue;
            any = true;
            int j = glp_add_cols(P, 1);
            glp_set_col_bnds(P, j, GLP_DB, 0, 1);
            ia[++ne] = (int)k + 1;
            ja[ne] = j;
            ar[ne] = 1;
            ia[++ne] = (int)(nn + p) + 1;
            ja[ne] = j;
            ar[ne] = gp_plan_need_hours(nd, &c->pools[p]);
        }
        double mig_h = 0;
        for (size_t q = 0; q < nd->nmig; q++)
            mig_h += nd->mig_profiles[q].inst_hours;
        feasible &= any || (nd->gpu_hours + nd->frac_pod_hours + mig_h) <= 0;
        if (!any)
            glp_set_row_bnds(P, (int)k + 1, GLP_FR, 0, 0);
    }
    double obj = -1;
    if (feasible) {
        glp_load_matrix(P, ne, ia, ja, ar);
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        int rc = glp_simplex(P, &parm);
        if (rc == 0 && glp_get_status(P) == GLP_OPT)
            obj = glp_get_obj_val(P);
    }
    glp_delete_prob(P);
    glp_term_out(old);
    free(ia);
    free(ja);
    free(ar);
    *usd = obj < 0 ? -1 : obj + fixed;
    return GP_OK;
}
