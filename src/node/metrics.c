/* metrics.c - the node agent's per-GPU metrics (node/metrics.h). */
#include "node/metrics.h"

#include <string.h>

static const struct {
    const char *name, *help;
    enum gp_metric_type type;
} defs[] = {
    {GP_NM_UTIL, "GPU utilisation over NVML's last sample period, percent", GP_METRIC_GAUGE},
    {GP_NM_MEM_USED, "GPU framebuffer memory in use, bytes", GP_METRIC_GAUGE},
    {GP_NM_MEM_TOTAL, "GPU framebuffer memory, bytes", GP_METRIC_GAUGE},
    {GP_NM_PODS, "Pods holding the GPU or a replica of it (allocated, not ended)", GP_METRIC_GAUGE},
    {GP_NM_HEALTHY, "1 when the GPU is healthy, 0 while an XID keeps it out", GP_METRIC_GAUGE},
    {GP_NM_LAST_XID, "The last XID seen on the GPU, 0 for none", GP_METRIC_GAUGE},
    {GP_NM_XIDS_APP, "XIDs of the application class (ignored) seen on the GPU", GP_METRIC_COUNTER},
    {GP_NM_XIDS_REC, "XIDs of the recoverable class seen on the GPU", GP_METRIC_COUNTER},
    {GP_NM_XIDS_FATAL, "XIDs of the fatal class seen on the GPU", GP_METRIC_COUNTER},
    {GP_NM_XIDS_RESET, "XIDs of the reset class (out until a GPU reset) seen on the GPU",
     GP_METRIC_COUNTER},
};

enum gp_err gp_node_metrics_init(struct gp_node_metrics *nm, struct gp_diag *diag)
{
    memset(nm, 0, sizeof *nm);
    enum gp_err err = gp_metrics_new(&nm->reg, diag);
    if (err != GP_OK)
        return err;
    struct gp_metric **slots[] = {&nm->util,    &nm->mem_used, &nm->mem_total, &nm->pods,
                                  &nm->healthy, &nm->last_xid, &nm->xids[0],   &nm->xids[1],
                                  &nm->xids[2], &nm->xids[3]};
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        struct gp_metric_def d = {.name = defs[i].name,
                                  .help = defs[i].help,
                                  .type = defs[i].type,
                                  .label = "gpu",
                                  .max_series = GP_NM_MAX_SERIES};
        if ((err = gp_metrics_define(nm->reg, &d, slots[i], diag)) != GP_OK) {
            gp_node_metrics_free(nm);
            return err;
        }
    }
    return GP_OK;
}

void gp_node_metrics_free(struct gp_node_metrics *nm)
{
    gp_metrics_free(nm->reg);
    nm->reg = NULL;
}

static void set(struct gp_metric *m, const char *uuid, double v)
{
    gp_metrics_set(gp_metrics_series(m, uuid), v);
}

void gp_node_metrics_update(struct gp_node_metrics *nm, const struct gp_node_inventory *inv,
                            const struct gp_node_health *h, const unsigned *pods, size_t n_pods)
{
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const struct gp_node_gpu *g = &inv->gpus[i];
        const char *u = g->uuid;
        if (!u[0])
            continue;
        set(nm->util, u, g->util_percent);
        set(nm->mem_used, u, (double)g->memory_used_mib * 1048576.0);
        set(nm->mem_total, u, (double)g->memory_mib * 1048576.0);
        set(nm->pods, u, pods && g->index < n_pods ? pods[g->index] : 0);
        bool ok = g->healthy;
        unsigned last = g->last_xid;
        if (h && g->index < h->n_gpus && g->index < GP_NODE_MAX_GPUS) {
            const struct gp_node_gpu_health *s = &h->gpus[g->index];
            ok = s->state == GP_NODE_HEALTHY;
            last = s->last_xid;
            if (strcmp(nm->seen_uuid[g->index], u) != 0) { /* another GPU at this index */
                memcpy(nm->seen_uuid[g->index], u, sizeof nm->seen_uuid[g->index]);
                memset(nm->seen[g->index], 0, sizeof nm->seen[g->index]);
            }
            for (int c = 0; c < GP_XID_CLASS_COUNT; c++) {
                struct gp_metric_series *sr = gp_metrics_series(nm->xids[c], u);
                if (s->xids[c] > nm->seen[g->index][c])
                    gp_metrics_inc(sr, (double)(s->xids[c] - nm->seen[g->index][c]));
                else
                    gp_metrics_inc(sr, 0); /* the series shown from the start */
                nm->seen[g->index][c] = s->xids[c];
            }
        }
        set(nm->healthy, u, ok ? 1 : 0);
        set(nm->last_xid, u, last);
    }
}
