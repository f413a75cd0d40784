/* podcount.c - the pods holding each GPU of this node, from the node's
 * pods as the API has them (podcount.h). */
#include "node/podcount.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/objects.h"

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

uint64_t gp_node_podcount_holds(const json_t *pod, const char *node)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const json_t *ann = json_object_get(meta, "annotations");
    const char *on = str(ann, GP_KUBE_ANN_NODE), *phase = str(ann, GP_KUBE_ANN_PHASE);
    const char *gpus = str(ann, GP_KUBE_ANN_GPUS);
    const char *bound = str(json_object_get(pod, "spec"), "nodeName");
    const char *st = str(json_object_get(pod, "status"), "phase");
    if (!on || strcmp(on, node) != 0 || (bound && bound[0] && strcmp(bound, node) != 0) || !phase ||
        strcmp(phase, "allocated") != 0 || !gpus)
        return 0;
    if (st && (strcmp(st, "Succeeded") == 0 || strcmp(st, "Failed") == 0))
        return 0; /* ended: its containers hold nothing */
    struct gp_pick pick;
    if (!gp_kube_pick_parse(gpus, &pick))
        return 0;
    uint64_t mask = 0;
    for (size_t i = 0; i < pick.ngpus; i++)
        mask |= (uint64_t)1 << pick.gpu[i];
    return mask;
}

void gp_node_podcount_init(struct gp_node_podcount *pc, const char *node)
{
    memset(pc, 0, sizeof *pc);
    pc->node = node;
    pc->retry_s = 1.0;
    pthread_mutex_init(&pc->mu, NULL);
}

void gp_node_podcount_free(struct gp_node_podcount *pc)
{
    if (pc->running) {
        atomic_store(&pc->quit, true);
        gp_kube_client_cancel(pc->client);
        pthread_join(pc->thread, NULL);
        pc->running = false;
    }
    gp_kube_informer_free(pc->inf);
    gp_kube_client_free(pc->client);
    pc->inf = NULL;
    pc->client = NULL;
    free(pc->pods);
    pc->pods = NULL;
    pc->n = pc->cap = 0;
    pthread_mutex_destroy(&pc->mu);
}

void gp_node_podcount_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx)
{
    struct gp_node_podcount *pc = ctx;
    (void)old;
    const json_t *meta = json_object_get(obj, "metadata");
    char key[320];
    snprintf(key, sizeof key, "%s/%s", str(meta, "namespace") ? str(meta, "namespace") : "",
             str(meta, "name") ? str(meta, "name") : "");
    uint64_t gpus = type == GP_KUBE_DELETED ? 0 : gp_node_podcount_holds(obj, pc->node);
    pthread_mutex_lock(&pc->mu);
    size_t i = 0;
    while (i < pc->n && strcmp(pc->pods[i].key, key) != 0)
        i++;
    if (gpus == 0 && i < pc->n) {
        pc->pods[i] = pc->pods[--pc->n];
    } else if (gpus != 0 && i < pc->n) {
        pc->pods[i].gpus = gpus;
    } else if (gpus != 0) {
        if (pc->n == pc->cap) {
            size_t cap = pc->cap ? pc->cap * 2 : 32;
            struct gp_node_podcount_entry *p = realloc(pc->pods, cap * sizeof *p);
            if (!p) { /* the count stays short by one: said by nothing better */
                pthread_mutex_unlock(&pc->mu);
                return;
            }
            pc->pods = p;
            pc->cap = cap;
        }
        memcpy(pc->pods[pc->n].key, key, sizeof key);
        pc->pods[pc->n++].gpus = gpus;
    }
    pthread_mutex_unlock(&pc->mu);
}

void gp_node_podcount_get(struct gp_node_podcount *pc, unsigned *pods, size_t n)
{
    memset(pods, 0, n * sizeof *pods);
    pthread_mutex_lock(&pc->mu);
    for (size_t i = 0; i < pc->n; i++)
        for (size_t g = 0; g < n && g < 64; g++)
            pods[g] += (unsigned)(pc->pods[i].gpus >> g & 1);
    pthread_mutex_unlock(&pc->mu);
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* List, then watch while it lasts; a failure waits retry_s and lists
 * again unless it was only a dropped connection. */
static void *watch_main(void *arg)
{
    struct gp_node_podcount *pc = arg;
    bool listed = false;
    while (!atomic_load(&pc->quit)) {
        struct gp_diag d = {""};
        enum gp_err e =
            listed ? gp_kube_informer_watch(pc->inf, 60, &d) : gp_kube_informer_list(pc->inf, &d);
        if (e == GP_OK) {
            listed = true;
            continue;
        }
        if (atomic_load(&pc->quit))
            break;
        if (e != GP_EIO)
            listed = false;
        for (double t = 0; t < pc->retry_s && !atomic_load(&pc->quit); t += 0.1)
            nap(0.1);
    }
    return NULL;
}

enum gp_err gp_node_podcount_start(struct gp_node_podcount *pc, const struct gp_kube_config *cfg,
                                   struct gp_diag *diag)
{
    struct gp_kube_client_opts co;
    gp_kube_client_opts_default(&co);
    char path[512];
    /* the pods bound here (the kubelet's own selector); holds() checks
     * the node again, whatever the server filtered */
    snprintf(path, sizeof path, "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", pc->node);
    enum gp_err e = gp_kube_client_new(cfg, &co, &pc->client, diag);
    if (e == GP_OK)
        e = gp_kube_informer_new(pc->client, path, 500, gp_node_podcount_change, pc, &pc->inf,
                                 diag);
    if (e != GP_OK)
        return e;
    if (pthread_create(&pc->thread, NULL, watch_main, pc) != 0)
        return gp_diag_set(diag, GP_ENOMEM, "cannot start the node's pod watch");
    pc->running = true;
    return GP_OK;
}
