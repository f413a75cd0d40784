/* plan_out.c - what `gpuplane plan` prints and writes (docs/plan.md,
 * "Outputs"): the ranked table, why the winner wins against the runner-up
 * (near-ties within the prices' uncertainty said as such), the spot
 * sensitivity; the JSON (candidates ranked, each with provider, pools,
 * monthly_usd, limits_met and a sim summary; winner); the report page with
 * the top candidates side by side. Fixed formats: the same plan gives the
 * same bytes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan_internal.h"

static const char *state_name(enum gp_plan_state s)
{
    switch (s) {
    case GP_PLAN_PRUNED_INFEASIBLE:
        return "pruned: its pools cannot hold the work";
    case GP_PLAN_PRUNED_BUDGET:
        return "pruned: its lower bound is over the budget";
    case GP_PLAN_PRUNED_BOUND:
        return "pruned: its lower bound is above the winner's cost";
    case GP_PLAN_SIMULATED:
        break;
    }
    return "simulated";
}

static void duration(char *buf, size_t size, double s)
{
    if (s < 10 && s != 0)
        snprintf(buf, size, "%.2f s", s);
    else if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%.1f min", s / 60);
    else
        snprintf(buf, size, "%.1f h", s / 3600);
}

double gp_plan_usd_shown(double usd)
{
    return usd > -0.5 && usd < 0.5 ? 0.0 : usd;
}

static double idle_pct(const struct gp_plan_cand *c)
{
    return c->sim.gpu_hours_total > 0 ? 100 * c->sim.gpu_hours_idle / c->sim.gpu_hours_total : 0;
}

/* "met", or what is missed and by how much. */
static void limits_text(const struct gp_plan *p, const struct gp_plan_cand *c, char *buf,
                        size_t size)
{
    char d[32], lim[32];
    size_t n = 0;
    buf[0] = '\0';
    if (c->limits_met) {
        duration(d, sizeof d, c->queue_margin_s);
        snprintf(buf, size, "met, p95 %s under", d);
        return;
    }
    if (!c->all_scheduled)
        n +=
            (size_t)snprintf(buf + n, size - n, "%llu pods never run",
                             (unsigned long long)(c->sim.pods_never_fit + c->sim.pods_pending_end));
    if (c->queue_margin_s < 0 && n < size) {
        duration(d, sizeof d, -c->queue_margin_s);
        duration(lim, sizeof lim, gp_plan_queue_limit_s(p->limits));
        n += (size_t)snprintf(buf + n, size - n, "%sp95 delay %s over %s", n ? ", " : "", d, lim);
    }
    if (c->latency_margin_s < 0 && n < size) {
        duration(d, sizeof d, -c->latency_margin_s);
        n += (size_t)snprintf(buf + n, size - n, "%sservice p99 latency %s over", n ? ", " : "", d);
    }
    if (c->budget_margin_usd < 0 && n < size)
        snprintf(buf + n, size - n, "%s$%.0f over budget", n ? ", " : "", -c->budget_margin_usd);
}

static bool near_tie(const struct gp_plan *p, const struct gp_plan_cand *a,
                     const struct gp_plan_cand *b)
{
    return a->state == GP_PLAN_SIMULATED && b->state == GP_PLAN_SIMULATED && a->limits_met &&
           b->limits_met &&
           b->monthly_usd - a->monthly_usd <=
               a->monthly_usd * p->limits->price_uncertainty_pct / 100;
}

void gp_plan_table(const struct gp_plan *p, size_t top, struct gp_sbuf *out)
{
    gp_sbuf_printf(out, "  %-4s %-12s %9s %6s %9s  %-34s %s\n", "rank", "provider", "$/month",
                   "idle", "p95 delay", "limits", "candidate");
    for (size_t i = 0; i < p->ncands && i < top; i++) {
        const struct gp_plan_cand *c = &p->cands[i];
        if (c->state != GP_PLAN_SIMULATED)
            break;
        char d[32], lim[160];
        duration(d, sizeof d, c->sim.queue_p95_s);
        limits_text(p, c, lim, sizeof lim);
        if (i > 0 && near_tie(p, &p->cands[0], c))
            strncat(lim, ", near-tie", sizeof lim - strlen(lim) - 1);
        gp_sbuf_printf(out, "  %-4zu %-12s %9.0f %5.1f%% %9s  %-34s %s\n", i + 1, c->provider->id,
                       c->monthly_usd, idle_pct(c), d, lim, c->what);
    }
}

void gp_plan_why(const struct gp_plan *p, struct gp_sbuf *out)
{
    if (p->ncands == 0) {
        gp_sbuf_add(out, "no provider the limits allow offers every need (one cluster, one "
                         "provider); who offers each:\n");
        for (size_t c = 0; c < p->demand->nneeds; c++)
            gp_sbuf_printf(out, "  need %zu (%s): %s\n", c, p->demand->needs[c].label,
                           *p->need_providers[c] ? p->need_providers[c] : "none");
        return;
    }
    if (p->cands[0].state != GP_PLAN_SIMULATED) {
        gp_sbuf_add(out, "no candidate could be simulated: the pools of every one are too "
                         "small or too dear for the work (see --json, state)\n");
        return;
    }
    const struct gp_plan_cand *w = &p->cands[0];
    if (!w->limits_met) {
        char lim[160];
        limits_text(p, w, lim, sizeof lim);
        gp_sbuf_printf(out, "no candidate meets the limits; the closest, %s %s, %s\n",
                       w->provider->id, w->what, lim);
        return;
    }
    gp_sbuf_printf(out, "winner: %s %s, $%.0f a month", w->provider->id, w->what, w->monthly_usd);
    if (w->plain)
        gp_sbuf_add(out, "; a plain rented instance: the workload fits one machine, so no "
                         "Kubernetes control plane is worth paying for");
    gp_sbuf_add(out, "\n");
    const struct gp_plan_cand *r = p->ncands > 1 ? &p->cands[1] : NULL;
    if (!r || r->state != GP_PLAN_SIMULATED) {
        gp_sbuf_add(out, "no runner-up was simulated (every other candidate was pruned)\n");
        return;
    }
    if (!r->limits_met) {
        char lim[160];
        limits_text(p, r, lim, sizeof lim);
        gp_sbuf_printf(out, "the runner-up, %s %s, misses the limits: %s\n", r->provider->id,
                       r->what, lim);
        return;
    }
    double diff = r->monthly_usd - w->monthly_usd, k = GP_PLAN_MONTH_H / (w->sim.horizon_s / 3600);
    if (near_tie(p, w, r))
        gp_sbuf_printf(out,
                       "a near-tie: the runner-up, %s %s, costs $%.0f more (%.1f %%), within the "
                       "prices' %.0f %% uncertainty; choose on what the table does not price\n",
                       r->provider->id, r->what, diff,
                       w->monthly_usd > 0 ? 100 * diff / w->monthly_usd : 0,
                       p->limits->price_uncertainty_pct);
    else
        gp_sbuf_printf(
            out, "it beats the runner-up, %s %s, by $%.0f a month (%.1f %%):", r->provider->id,
            r->what, diff, w->monthly_usd > 0 ? 100 * diff / w->monthly_usd : 0);
    if (!near_tie(p, w, r)) {
        gp_sbuf_printf(
            out, " GPUs in use $%.0f against $%.0f, idle GPUs $%.0f against $%.0f",
            gp_plan_usd_shown(w->sim.gpu_used_usd * k), gp_plan_usd_shown(r->sim.gpu_used_usd * k),
            gp_plan_usd_shown(w->sim.gpu_idle_usd * k), gp_plan_usd_shown(r->sim.gpu_idle_usd * k));
        if (w->sim.control_plane_usd != r->sim.control_plane_usd)
            gp_sbuf_printf(out, ", control plane $%.0f against $%.0f", w->sim.control_plane_usd * k,
                           r->sim.control_plane_usd * k);
        if (w->billing_rounding_usd >= 0.5 || r->billing_rounding_usd >= 0.5)
            gp_sbuf_printf(out,
                           ", billing rounded up ($%.0f against $%.0f: each started node's time "
                           "to the provider's granularity)",
                           w->billing_rounding_usd, r->billing_rounding_usd);
        if (w->sim.spot_savings_usd > 0 || r->sim.spot_savings_usd > 0)
            gp_sbuf_printf(out, ", spot savings $%.0f against $%.0f", w->sim.spot_savings_usd * k,
                           r->sim.spot_savings_usd * k);
        gp_sbuf_add(out, "\n");
    }
}

static bool cand_spot(const struct gp_plan_cand *c)
{
    for (size_t i = 0; i < c->npools; i++)
        if (c->pools[i].spot)
            return true;
    return false;
}

static void sens_text(const struct gp_plan *p, struct gp_sbuf *out)
{
    double k = GP_PLAN_MONTH_H / (p->demand->horizon_s / 3600);
    if (p->nsens == 0) { /* the winner has no spot: say what the best spot one lost */
        for (size_t i = 1; i < p->ncands && p->cands[i].state == GP_PLAN_SIMULATED; i++) {
            const struct gp_plan_cand *c = &p->cands[i];
            if (!cand_spot(c) || c->sim.spot_node_hours <= 0)
                continue;
            char lim[160] = "";
            if (!c->limits_met)
                limits_text(p, c, lim, sizeof lim);
            gp_sbuf_printf(out,
                           "spot does not pay: the best spot candidate (rank %zu, %s) costs $%.0f "
                           "a month%s%s, its lost work $%.0f against spot savings of $%.0f\n",
                           i + 1, c->what, c->monthly_usd, lim[0] ? " and misses the limits: " : "",
                           lim, c->sim.lost_work_usd * k, c->sim.spot_savings_usd * k);
            break;
        }
        return;
    }
    const struct gp_plan_cand *w = &p->cands[0];
    gp_sbuf_printf(out,
                   "spot: %.3g interruptions per node-hour%s; expected lost work $%.0f a month, "
                   "simulated $%.0f, against spot savings of $%.0f\n",
                   w->spot_rate, w->spot_rate_assumed ? " (assumed: no rate given)" : "",
                   w->spot_expected_lost_usd,
                   w->sim.lost_work_usd * GP_PLAN_MONTH_H / (w->sim.horizon_s / 3600),
                   w->sim.spot_savings_usd * GP_PLAN_MONTH_H / (w->sim.horizon_s / 3600));
    for (size_t i = 0; i < p->nsens; i++)
        gp_sbuf_printf(out, "  at %.3g per node-hour: $%.0f a month, limits %s\n", p->sens[i].rate,
                       p->sens[i].monthly_usd, p->sens[i].limits_met ? "met" : "missed");
}

void gp_plan_summary(const struct gp_plan *p, size_t top, struct gp_sbuf *out)
{
    const struct gp_plan_demand *d = p->demand;
    gp_sbuf_printf(out,
                   "gpuplane plan: %zu candidates, %zu simulated, %zu pruned by their bounds\n",
                   p->ncands, p->nsimulated, p->npruned);
    for (size_t c = 0; c < d->nneeds; c++) {
        const struct gp_plan_need *nd = &d->needs[c];
        if (nd->mig) { /* its instances, not GPUs */
            double h = 0, peak = 0;
            for (size_t k = 0; k < nd->nmig; k++) {
                h += nd->mig_profiles[k].inst_hours;
                peak += nd->mig_profiles[k].peak;
            }
            gp_sbuf_printf(out, "  need %zu  %-28s %7.1f MIG instance-h, peak %.0f instances\n", c,
                           nd->label, h, peak);
            continue;
        }
        gp_sbuf_printf(out, "  need %zu  %-28s %7.1f GPU-h whole, %6.1f shared, peak %.0f GPUs\n",
                       c, nd->label, nd->gpu_hours + nd->frac_pod_hours, nd->share_hours,
                       nd->peak_gpus);
    }
    gp_sbuf_add(out, "\n");
    gp_plan_table(p, top, out);
    gp_sbuf_add(out, "\n");
    gp_plan_why(p, out);
    sens_text(p, out);
}

static void jstr(struct gp_sbuf *b, const char *s)
{
    gp_sbuf_addc(b, '"');
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            gp_sbuf_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            gp_sbuf_printf(b, "\\u%04x", ch);
        else
            gp_sbuf_addc(b, (char)ch);
    }
    gp_sbuf_addc(b, '"');
}

static void jnum(struct gp_sbuf *b, const char *key, double v, bool comma)
{
    gp_sbuf_printf(b, "\"%s\": ", key);
    if (isfinite(v))
        gp_sbuf_printf(b, "%.6g", v);
    else
        gp_sbuf_add(b, "null");
    if (comma)
        gp_sbuf_add(b, ", ");
}

static void json_pools(struct gp_sbuf *b, const struct gp_plan_cand *c)
{
    gp_sbuf_add(b, "\"pools\": [");
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_plan_pool *pl = &c->pools[i];
        gp_sbuf_add(b, i ? ", {" : "{");
        gp_sbuf_add(b, "\"offer\": ");
        if (pl->row) {
            char o[256];
            snprintf(o, sizeof o, "%s/%s", pl->row->provider->id, pl->row->offer->instance);
            jstr(b, o);
            gp_sbuf_add(b, ", \"gpu\": ");
            jstr(b, pl->model);
        } else {
            gp_sbuf_add(b, "null, \"gpu\": null");
        }
        gp_sbuf_printf(b, ", \"gpus_per_node\": %u, \"min_nodes\": %u, \"max_nodes\": %u, ",
                       pl->gpus_per_node, pl->min_nodes, pl->max_nodes);
        gp_sbuf_printf(b, "\"spot\": %s, \"sharing\": ", pl->spot ? "true" : "false");
        if (pl->mig)
            gp_sbuf_add(b, "\"mig\", ");
        else if (pl->replicas)
            gp_sbuf_printf(b, "\"%s x%u\", ", pl->mps ? "mps" : "timeslice", pl->replicas);
        else
            gp_sbuf_add(b, pl->row ? "\"exclusive\", " : "null, ");
        jnum(b, "usd_per_node_hour", pl->node_usd_per_hour, false);
        gp_sbuf_add(b, "}");
    }
    gp_sbuf_add(b, "]");
}

static void json_cand(struct gp_sbuf *b, const struct gp_plan *p, const struct gp_plan_cand *c,
                      size_t rank)
{
    gp_sbuf_printf(b, "    {\"rank\": %zu, \"id\": %zu, \"provider\": ", rank, c->id);
    jstr(b, c->provider->id);
    gp_sbuf_add(b, ", \"kind\": ");
    jstr(b, c->plain ? "plain instance" : "kubernetes");
    gp_sbuf_add(b, ", \"what\": ");
    jstr(b, c->what);
    gp_sbuf_add(b, ", ");
    json_pools(b, c);
    gp_sbuf_add(b, ", ");
    jnum(b, "lower_bound_monthly_usd",
         c->bound_usd < 0 ? NAN : c->bound_usd * GP_PLAN_MONTH_H / (p->demand->horizon_s / 3600),
         true);
    gp_sbuf_add(b, "\"state\": ");
    jstr(b, state_name(c->state));
    if (c->state != GP_PLAN_SIMULATED) {
        gp_sbuf_add(b, ", \"monthly_usd\": null, \"limits_met\": null, \"sim\": null}");
        return;
    }
    gp_sbuf_add(b, ", ");
    jnum(b, "monthly_usd", c->monthly_usd, true);
    gp_sbuf_printf(b, "\"limits_met\": %s, ", c->limits_met ? "true" : "false");
    gp_sbuf_printf(b, "\"all_scheduled\": %s, ", c->all_scheduled ? "true" : "false");
    jnum(b, "queue_p95_margin_s", c->queue_margin_s, true);
    if (p->limits->latency_p99_s >= 0)
        jnum(b, "latency_p99_margin_s", c->latency_margin_s, true);
    if (p->limits->monthly_budget_usd >= 0)
        jnum(b, "budget_margin_usd", c->budget_margin_usd, true);
    jnum(b, "spot_expected_lost_usd_month", c->spot_expected_lost_usd, true);
    jnum(b, "billing_granularity_s", c->billing_s > 0 ? c->billing_s : NAN, true);
    jnum(b, "billing_rounding_usd_month", c->billing_rounding_usd, true);
    const struct gp_plan_sim *s = &c->sim;
    gp_sbuf_add(b, "\"sim\": {");
    jnum(b, "cost_usd", s->cost_usd, true);
    jnum(b, "horizon_s", s->horizon_s, true);
    jnum(b, "gpu_used_usd", s->gpu_used_usd, true);
    jnum(b, "gpu_idle_usd", s->gpu_idle_usd, true);
    jnum(b, "control_plane_usd", s->control_plane_usd, true);
    jnum(b, "other_usd", s->other_usd, true);
    jnum(b, "spot_savings_usd", s->spot_savings_usd, true);
    jnum(b, "lost_work_usd", s->lost_work_usd, true);
    gp_sbuf_printf(b, "\"node_expirations\": %llu, ", (unsigned long long)s->node_expirations);
    jnum(b, "idle_pct", idle_pct(c), true);
    jnum(b, "queue_delay_p95_s", s->queue_p95_s, true);
    jnum(b, "queue_delay_max_s", s->queue_max_s, true);
    jnum(b, "jct_p95_s", s->jct_p95_s, true);
    jnum(b, "service_latency_p99_s", s->latency_p99_s >= 0 ? s->latency_p99_s : NAN, true);
    gp_sbuf_printf(b,
                   "\"pods_submitted\": %llu, \"pods_scheduled\": %llu, \"pods_never_fit\": %llu, "
                   "\"pods_pending_end\": %llu, \"spot_interruptions\": %llu}}",
                   (unsigned long long)s->pods_submitted, (unsigned long long)s->pods_scheduled,
                   (unsigned long long)s->pods_never_fit, (unsigned long long)s->pods_pending_end,
                   (unsigned long long)s->spot_interruptions);
}

void gp_plan_json(const struct gp_plan *p, const char *workload, struct gp_sbuf *b)
{
    gp_sbuf_add(b, "{\n  \"workload\": ");
    jstr(b, workload);
    gp_sbuf_add(b, ",\n  \"limits\": {");
    jnum(b, "queue_delay_p95_s", gp_plan_queue_limit_s(p->limits), true);
    jnum(b, "latency_p99_s", p->limits->latency_p99_s >= 0 ? p->limits->latency_p99_s : NAN, true);
    jnum(b, "monthly_budget_usd",
         p->limits->monthly_budget_usd >= 0 ? p->limits->monthly_budget_usd : NAN, true);
    jnum(b, "price_uncertainty_pct", p->limits->price_uncertainty_pct, false);
    gp_sbuf_printf(b, "},\n  \"horizon_s\": %.6g,\n  \"simulated\": %zu,\n  \"pruned\": %zu,\n",
                   p->demand->horizon_s, p->nsimulated, p->npruned);
    gp_sbuf_add(b, "  \"candidates\": [\n");
    for (size_t i = 0; i < p->ncands; i++) {
        json_cand(b, p, &p->cands[i], i + 1);
        gp_sbuf_add(b, i + 1 < p->ncands ? ",\n" : "\n");
    }
    gp_sbuf_add(b, "  ],\n  \"winner\": ");
    bool win = p->ncands && p->cands[0].state == GP_PLAN_SIMULATED && p->cands[0].limits_met;
    if (win) {
        const struct gp_plan_cand *w = &p->cands[0];
        gp_sbuf_printf(b, "{\"rank\": 1, \"id\": %zu, \"provider\": ", w->id);
        jstr(b, w->provider->id);
        gp_sbuf_add(b, ", \"what\": ");
        jstr(b, w->what);
        gp_sbuf_add(b, ", ");
        jnum(b, "monthly_usd", w->monthly_usd, true);
        gp_sbuf_printf(b, "\"near_tie\": %s}",
                       p->ncands > 1 && near_tie(p, w, &p->cands[1]) ? "true" : "false");
    } else
        gp_sbuf_add(b, "null");
    gp_sbuf_add(b, ",\n  \"spot_sensitivity\": [");
    for (size_t i = 0; i < p->nsens; i++) {
        gp_sbuf_add(b, i ? ", {" : "{");
        jnum(b, "interruptions_per_node_hour", p->sens[i].rate, true);
        jnum(b, "monthly_usd", p->sens[i].monthly_usd, true);
        jnum(b, "queue_delay_p95_s", p->sens[i].queue_p95_s, true);
        gp_sbuf_printf(b, "\"limits_met\": %s}", p->sens[i].limits_met ? "true" : "false");
    }
    gp_sbuf_add(b, "]\n}\n");
}
