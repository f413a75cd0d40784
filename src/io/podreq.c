/* podreq.c - a pod's effective request (podreq.h): Kubernetes'
 * PodRequests with sidecars (KEP-753), for manifests and the API alike. */
#include "io/podreq.h"

static void one(struct gp_podreq *r, const int64_t need[GP_PODREQ_COUNT])
{
    for (int k = 0; k < GP_PODREQ_COUNT; k++)
        if (need[k] > r->one[k])
            r->one[k] = need[k];
}

void gp_podreq_app(struct gp_podreq *r, const int64_t need[GP_PODREQ_COUNT])
{
    for (int k = 0; k < GP_PODREQ_COUNT; k++)
        r->sum[k] += need[k];
    one(r, need);
}

void gp_podreq_init(struct gp_podreq *r, const int64_t need[GP_PODREQ_COUNT], bool sidecar)
{
    /* AggregateContainerRequests: a restartable init container joins the
     * running sum and the sidecars so far, and its own init need is those
     * sidecars (itself included); a plain one needs itself and the
     * sidecars started before it */
    for (int k = 0; k < GP_PODREQ_COUNT; k++) {
        int64_t mine;
        if (sidecar) {
            r->sum[k] += need[k];
            r->side[k] += need[k];
            mine = r->side[k];
        } else {
            mine = need[k] + r->side[k];
        }
        if (mine > r->init[k])
            r->init[k] = mine;
    }
    one(r, need);
}

int64_t gp_podreq_total(const struct gp_podreq *r, enum gp_podreq_res k)
{
    return r->sum[k] > r->init[k] ? r->sum[k] : r->init[k];
}

int64_t gp_podreq_container_max(const struct gp_podreq *r, enum gp_podreq_res k)
{
    return r->one[k];
}
