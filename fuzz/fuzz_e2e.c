/* fuzz_e2e.c - libFuzzer target for the whole path of `gpuplane sim`: the
 * input is a Cluster spec and a manifest, separated by a line "=====".
 * What parses (at most 32 nodes and 200 pods) is simulated for two hours
 * under every policy (fair share), every order with and without backfill
 * (best-fit), and once in static mode, and every output is written to
 * memory: the summary, the JSON (which must parse back), the CSV, the HTML
 * report, and the cluster's rendered configs. Any input fails with a
 * one-line diag or gives all of them; never a crash, a hang or a leak. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "io/cluster.h"
#include "io/render.h"
#include "io/workload.h"
#include "report/report.h"
#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NODES 32
#define MAX_PODS  200

static void one_line(const struct gp_diag *d)
{
    if (d->msg[0] == '\0' || strchr(d->msg, '\n'))
        __builtin_trap();
}

static void outputs(const struct gp_sim_result *r, const struct gp_cluster *c)
{
    const char *wl[] = {"fuzz.yaml"};
    struct gp_report_meta m = {"fuzz", "fuzz-cluster.yaml", wl, 1, c};
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_json(&b, r, &m);
    json_error_t jerr;
    json_t *doc = b.oom ? NULL : json_loadb(gp_sbuf_str(&b), b.len, 0, &jerr);
    if (!b.oom && !doc)
        __builtin_trap(); /* the JSON must parse back */
    json_decref(doc);
    gp_sbuf_free(&b);
    gp_sbuf_init(&b);
    gp_report_csv(&b, r);
    gp_sbuf_free(&b);
    gp_sbuf_init(&b);
    gp_report_html(&b, r, &m);
    gp_sbuf_free(&b);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        gp_report_summary(f, r, &m);
        fclose(f);
    }
    free(text);
}

static void simulate(const struct gp_cluster *c, const struct gp_workload *w, enum gp_sim_mode mode,
                     const struct gp_policy_ops *policy, enum gp_order order, bool backfill)
{
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.seed = 7;
    cfg.horizon_s = mode == GP_SIM_TIMED ? 7200 : 0;
    cfg.order = order;
    cfg.backfill = backfill;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    memset(&r, 0, sizeof r);
    struct gp_diag d = {""};
    if (gp_sim_run(&cfg, c, w, &a, &r, &d) == GP_OK)
        outputs(&r, c);
    else
        one_line(&d);
    gp_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *sep = NULL;
    for (size_t i = 0; i + 6 <= size; i++)
        if (memcmp(text + i, "\n=====", 6) == 0) {
            sep = text + i;
            break;
        }
    if (!sep)
        return 0;
    size_t clen = (size_t)(sep - text) + 1;
    const char *manifest = sep + 6;
    size_t mlen = size - (size_t)(manifest - text);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    struct gp_workload w;
    memset(&c, 0, sizeof c);
    memset(&w, 0, sizeof w);
    struct gp_diag d = {""};
    gp_workload_set_max_pods(MAX_PODS, NULL);
    enum gp_err err = gp_cluster_parse_yaml(text, clen, "fuzz-cluster.yaml", &a, &c, &d);
    uint64_t nodes = 0;
    for (size_t i = 0; err == GP_OK && i < c.npools; i++)
        nodes += c.pools[i].max_count > c.pools[i].count ? c.pools[i].max_count : c.pools[i].count;
    if (err == GP_OK && nodes > MAX_NODES) {
        gp_arena_free(&a);
        return 0;
    }
    if (err == GP_OK && !c.nodes)
        err = gp_cluster_expand(&c, &a, &d);
    if (err == GP_OK)
        err = gp_workload_parse_manifest(manifest, mlen, "fuzz.yaml", &a, &w, &d);
    if (err == GP_OK)
        err = gp_workload_check_budget(&w, &d);
    if (err != GP_OK) {
        one_line(&d);
        gp_arena_free(&a);
        return 0;
    }
    struct gp_render rendered;
    memset(&rendered, 0, sizeof rendered);
    if (gp_render_cluster(&c, &rendered, &d) != GP_OK)
        one_line(&d);
    gp_render_free(&rendered);
    for (size_t i = 0; gp_policies[i]; i++)
        simulate(&c, &w, GP_SIM_TIMED, gp_policies[i], GP_ORDER_FAIR, false);
    const struct gp_policy_ops *bf = gp_policy_find("best-fit");
    static const enum gp_order orders[] = {GP_ORDER_FAIR, GP_ORDER_FIFO, GP_ORDER_SJF};
    for (size_t o = 0; o < 3; o++)
        for (int backfill = o == 0; backfill <= 1; backfill++)
            simulate(&c, &w, GP_SIM_TIMED, bf, orders[o], backfill);
    simulate(&c, &w, GP_SIM_STATIC, bf, GP_ORDER_FAIR, false);
    gp_arena_free(&a);
    return 0;
}
