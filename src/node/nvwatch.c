/* nvwatch.c - NVML kept while the agent runs (node/nvwatch.h): discovery
 * again on a period, the XID thread, lost and gone GPUs kept unhealthy,
 * NVML failing kept as the last inventory and opened again with back-off,
 * health restored for the GPUs that are back. */
#include "node/nvwatch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "node/nvml.h"

struct gp_node_nvwatch {
    struct gp_node_nvwatch_opts o;
    double period_s, backoff_first_s, backoff_max_s;
    struct gp_nvml *nv; /* NULL while NVML is down; changed by the poller only */
    pthread_t xid_thread;
    bool xid_running;
    atomic_bool quit;
    pthread_mutex_t mu;               /* what follows, shared with the XID thread */
    struct gp_node_inventory cur;     /* served: index == position */
    int nvml_index[GP_NODE_MAX_GPUS]; /* NVML's index of each position now; -1 gone */
    bool gone[GP_NODE_MAX_GPUS];      /* lost or no longer listed */
    struct gp_node_health health;
    struct gp_node_health_change pending[GP_NODE_NVWATCH_MAX_CHANGES];
    size_t n_pending, dropped;
    bool rediscover; /* the event wait failed: discover at the next poll */
    /* the poller's */
    struct gp_node_inventory before; /* cur at the start of a poll */
    double next_s, retry_s;
    double sample_s, sample_next_s; /* utilisation and memory used (gp_node_sample) */
    unsigned attempts;
    unsigned long discoveries, failures, retries;
    size_t lost_at_start;
};

double gp_node_nvwatch_backoff_s(unsigned attempt, double first_s, double max_s)
{
    double s = first_s;
    for (unsigned i = 0; i < attempt && s < max_s; i++)
        s *= 2;
    return s < max_s ? s : max_s;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A change kept for the next poll (mu held). */
static void queue(struct gp_node_nvwatch *w, const struct gp_node_health_change *ch)
{
    if (w->n_pending < GP_NODE_NVWATCH_MAX_CHANGES)
        w->pending[w->n_pending++] = *ch;
    else
        w->dropped++;
}

/* XID events into health. A failed wait (a GPU lost, NVML gone) asks the
 * poller for a discovery, which finds out which; the thread waits on,
 * slower while the wait keeps failing. */
static void *xid_loop(void *arg)
{
    struct gp_node_nvwatch *w = arg;
    unsigned fails = 0;
    while (!atomic_load(&w->quit)) {
        bool got = false;
        struct gp_nvml_xid ev;
        struct gp_diag d;
        if (gp_nvml_events_wait(w->nv, 200, &got, &ev, &d) != GP_OK) {
            pthread_mutex_lock(&w->mu);
            w->rediscover = true;
            pthread_mutex_unlock(&w->mu);
            sleep_s(gp_node_nvwatch_backoff_s(fails < 8 ? fails : 8, 0.01, 0.2));
            fails++;
            continue;
        }
        fails = 0;
        if (!got)
            continue;
        pthread_mutex_lock(&w->mu);
        struct gp_node_health_change ch;
        for (size_t g = 0; g < w->cur.n_gpus; g++)
            if (w->nvml_index[g] == (int)ev.gpu_index &&
                gp_node_health_xid(&w->health, (unsigned)g, ev.xid, mono_s(), &ch))
                queue(w, &ch);
        /* a reset-class XID: a discovery now, to see the row remapping it
         * leaves pending before the reset that does it (merge) */
        if (gp_node_xid_class((unsigned)ev.xid) == GP_XID_RESET)
            w->rediscover = true;
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

static void xid_start(struct gp_node_nvwatch *w)
{
    unsigned reg = 0;
    struct gp_diag d;
    atomic_store(&w->quit, false);
    if (gp_nvml_events_open(w->nv, &reg, &d) != GP_OK)
        return; /* no XID events: health from discovery only */
    if (pthread_create(&w->xid_thread, NULL, xid_loop, w) == 0)
        w->xid_running = true;
}

static void xid_stop(struct gp_node_nvwatch *w)
{
    atomic_store(&w->quit, true);
    if (w->xid_running)
        pthread_join(w->xid_thread, NULL);
    w->xid_running = false;
}

/* Whether two GPUs advertise the same devices (MIG mode and devices). */
static bool same_devices(const struct gp_node_gpu *a, const struct gp_node_gpu *b)
{
    if (a->mig_enabled != b->mig_enabled || a->n_migs != b->n_migs)
        return false;
    for (size_t k = 0; k < a->n_migs; k++)
        if (strcmp(a->migs[k].uuid, b->migs[k].uuid) != 0 ||
            strcmp(a->migs[k].profile, b->migs[k].profile) != 0)
            return false;
    return true;
}

static void change(struct gp_node_nvwatch *w, bool moved, const struct gp_node_health_change *ch)
{
    if (moved)
        queue(w, ch);
}

/* A fresh discovery merged into what is served (mu held): GPUs matched by
 * UUID keep their position and health; new ones are added; those not
 * listed, or listed lost, are kept and marked lost. reload: NVML was
 * opened again (or the driver version changed), so every GPU listed is
 * healthy again; else a GPU that was gone and is listed again is back. */
static void merge(struct gp_node_nvwatch *w, const struct gp_node_inventory *fresh, uint64_t lost,
                  bool reload, double now, struct gp_node_nvwatch_report *rep)
{
    struct gp_node_health_change ch;
    bool seen[GP_NODE_MAX_GPUS] = {false};
    if (strcmp(fresh->driver_version, w->cur.driver_version) != 0 && w->cur.n_gpus)
        reload = true; /* another driver: a reload (docs/node.md, "Health") */
    snprintf(w->cur.driver_version, sizeof w->cur.driver_version, "%s", fresh->driver_version);
    w->cur.cuda_driver_version = fresh->cuda_driver_version;
    for (size_t k = 0; k < fresh->n_gpus; k++) {
        const struct gp_node_gpu *f = &fresh->gpus[k];
        size_t pos = w->cur.n_gpus;
        for (size_t g = 0; g < w->cur.n_gpus; g++)
            if (strcmp(w->cur.gpus[g].uuid, f->uuid) == 0)
                pos = g;
        bool existed = pos < w->cur.n_gpus;
        if (pos == w->cur.n_gpus) {
            if (pos >= GP_NODE_MAX_GPUS)
                continue;
            w->cur.n_gpus++;
            gp_node_health_grow(&w->health, w->cur.n_gpus);
            rep->devices_changed = true;
        } else if (!same_devices(&w->cur.gpus[pos], f)) {
            rep->devices_changed = true;
        }
        /* a row remapping pending before and done now: the GPU was reset
         * (NVML: "a reset will be required to actually remap the row") */
        bool reset_seen = existed && w->cur.gpus[pos].remap_pending == 1 && f->remap_pending == 0 &&
                          w->nvml_index[pos] >= 0;
        w->cur.gpus[pos] = *f;
        w->cur.gpus[pos].index = (unsigned)pos;
        w->nvml_index[pos] = (int)f->index;
        seen[pos] = true;
        if (f->index < 64 && (lost >> f->index & 1)) {
            change(w, gp_node_health_lost(&w->health, (unsigned)pos, now, &ch), &ch);
            w->gone[pos] = true;
            continue;
        }
        if (reload || w->gone[pos])
            change(w,
                   gp_node_health_back(&w->health, (unsigned)pos,
                                       reload ? GP_NODE_CAUSE_DRIVER_RELOAD : GP_NODE_CAUSE_BACK,
                                       now, &ch),
                   &ch);
        else if (reset_seen) /* what a reset-class XID waits for (node/health.h) */
            change(w, gp_node_health_reset(&w->health, (unsigned)pos, now, &ch), &ch);
        w->gone[pos] = false;
    }
    for (size_t g = 0; g < w->cur.n_gpus; g++) { /* NVLink peers: NVML indexes to positions */
        uint64_t peers = seen[g] ? w->cur.gpus[g].nvlink_peers : 0, mapped = 0;
        for (size_t p = 0; peers && p < w->cur.n_gpus && p < 64; p++)
            if (seen[p] && w->nvml_index[p] >= 0 && w->nvml_index[p] < 64 &&
                (peers >> w->nvml_index[p] & 1))
                mapped |= 1ull << p;
        if (seen[g])
            w->cur.gpus[g].nvlink_peers = mapped;
    }
    for (size_t g = 0; g < w->cur.n_gpus; g++) {
        if (seen[g])
            continue;
        w->nvml_index[g] = -1;
        w->gone[g] = true;
        change(w, gp_node_health_lost(&w->health, (unsigned)g, now, &ch), &ch);
    }
    rep->discovered = true;
}

static size_t count_lost(uint64_t lost)
{
    size_t n = 0;
    for (; lost; lost &= lost - 1)
        n++;
    return n;
}

enum gp_err gp_node_nvwatch_start(const struct gp_node_nvwatch_opts *o,
                                  struct gp_node_nvwatch **out, struct gp_diag *diag)
{
    *out = NULL;
    struct gp_node_nvwatch *w = calloc(1, sizeof *w);
    struct gp_node_inventory *fresh = malloc(sizeof *fresh);
    if (!w || !fresh) {
        free(w);
        free(fresh);
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    }
    w->o = *o;
    w->period_s = o->period_s > 0 ? o->period_s : GP_NODE_NVWATCH_PERIOD_S;
    w->sample_s = o->sample_s > 0 ? o->sample_s : GP_NODE_NVWATCH_SAMPLE_S;
    w->backoff_max_s = o->backoff_max_s > 0 ? o->backoff_max_s : GP_NODE_NVWATCH_BACKOFF_MAX_S;
    w->backoff_first_s = w->period_s < 1 ? w->period_s : 1;
    if (w->backoff_max_s < w->backoff_first_s)
        w->backoff_max_s = w->backoff_first_s;
    uint64_t lost = 0;
    enum gp_err e = gp_nvml_open(o->nvml_path, &w->nv, diag);
    if (e == GP_OK)
        e = gp_node_discover_lost(w->nv, fresh, &lost, diag);
    if (e != GP_OK) {
        gp_nvml_close(w->nv);
        free(w);
        free(fresh);
        return e;
    }
    pthread_mutex_init(&w->mu, NULL);
    gp_node_health_init(&w->health, 0, o->health);
    struct gp_node_nvwatch_report *rep = calloc(1, sizeof *rep);
    if (rep)
        merge(w, fresh, 0, false, mono_s(), rep); /* all new: nothing to report */
    free(rep);
    free(fresh);
    w->discoveries = 1;
    w->lost_at_start = count_lost(lost); /* lost at start: left out, it cannot be named */
    w->next_s = mono_s() + w->period_s;
    w->sample_next_s = mono_s() + w->sample_s;
    xid_start(w);
    *out = w;
    return GP_OK;
}

void gp_node_nvwatch_stop(struct gp_node_nvwatch *w)
{
    if (!w)
        return;
    xid_stop(w);
    gp_nvml_close(w->nv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* NVML failed mid-run: the inventory is kept as it is, NVML closed, an
 * attempt to open it again scheduled. */
static void go_down(struct gp_node_nvwatch *w, double now, const char *why,
                    struct gp_node_nvwatch_report *rep)
{
    xid_stop(w);
    gp_nvml_close(w->nv);
    w->nv = NULL;
    w->failures++;
    w->attempts = 0;
    w->retry_s = now + gp_node_nvwatch_backoff_s(0, w->backoff_first_s, w->backoff_max_s);
    rep->went_down = true;
    pthread_mutex_lock(&w->mu);
    size_t n = w->cur.n_gpus;
    pthread_mutex_unlock(&w->mu);
    snprintf(rep->msg, sizeof rep->msg,
             "%.400s: serving the last inventory (%zu GPUs) and opening NVML again with back-off",
             why, n);
}

static void rediscover(struct gp_node_nvwatch *w, double now, struct gp_node_nvwatch_report *rep)
{
    w->sample_next_s = now + w->sample_s; /* a discovery samples too */
    struct gp_node_inventory *fresh = malloc(sizeof *fresh);
    if (!fresh)
        return;
    uint64_t lost = 0;
    struct gp_diag d;
    if (gp_node_discover_lost(w->nv, fresh, &lost, &d) != GP_OK) {
        go_down(w, now, d.msg, rep);
    } else {
        w->discoveries++;
        pthread_mutex_lock(&w->mu);
        merge(w, fresh, lost, false, now, rep);
        pthread_mutex_unlock(&w->mu);
    }
    free(fresh);
    w->next_s = now + w->period_s;
}

static void reopen(struct gp_node_nvwatch *w, double now, struct gp_node_nvwatch_report *rep)
{
    struct gp_node_inventory *fresh = malloc(sizeof *fresh);
    if (!fresh)
        return;
    w->retries++;
    uint64_t lost = 0;
    struct gp_diag d;
    enum gp_err e = gp_nvml_open(w->o.nvml_path, &w->nv, &d);
    if (e == GP_OK && (e = gp_node_discover_lost(w->nv, fresh, &lost, &d)) != GP_OK) {
        gp_nvml_close(w->nv);
        w->nv = NULL;
    }
    if (e != GP_OK) {
        w->attempts++;
        w->retry_s =
            now + gp_node_nvwatch_backoff_s(w->attempts, w->backoff_first_s, w->backoff_max_s);
        free(fresh);
        return;
    }
    w->discoveries++;
    pthread_mutex_lock(&w->mu);
    size_t before = w->n_pending + w->dropped;
    merge(w, fresh, lost, true, now, rep);
    size_t back = w->n_pending + w->dropped - before;
    size_t n = w->cur.n_gpus, gone = 0;
    for (size_t g = 0; g < n; g++)
        gone += w->gone[g];
    pthread_mutex_unlock(&w->mu);
    rep->came_back = true;
    snprintf(rep->msg, sizeof rep->msg,
             "NVML answers again after %u attempts: %zu GPUs listed, %zu health changes, %zu "
             "still lost or gone",
             w->attempts + 1, n - gone, back, gone);
    free(fresh);
    w->next_s = now + w->period_s;
    xid_start(w);
}

/* Between discoveries: utilisation and memory used sampled again into the
 * inventory served, so /metrics is at most sample_s old, not a discovery
 * period (a failure is left to the next discovery, asked at once). */
static void sample(struct gp_node_nvwatch *w, double now)
{
    w->sample_next_s = now + w->sample_s;
    struct gp_node_inventory *inv = malloc(sizeof *inv);
    if (!inv)
        return;
    pthread_mutex_lock(&w->mu);
    *inv = w->cur;
    pthread_mutex_unlock(&w->mu);
    struct gp_diag d;
    if (gp_node_sample(w->nv, inv, &d) != GP_OK) {
        w->rediscover = true;
        free(inv);
        return;
    }
    pthread_mutex_lock(&w->mu);
    for (size_t g = 0; g < w->cur.n_gpus && g < inv->n_gpus; g++) {
        if (strcmp(w->cur.gpus[g].uuid, inv->gpus[g].uuid) != 0)
            continue;
        w->cur.gpus[g].util_percent = inv->gpus[g].util_percent;
        w->cur.gpus[g].memory_used_mib = inv->gpus[g].memory_used_mib;
    }
    pthread_mutex_unlock(&w->mu);
    free(inv);
}

void gp_node_nvwatch_poll(struct gp_node_nvwatch *w, double now_s,
                          struct gp_node_nvwatch_report *rep)
{
    memset(rep, 0, sizeof *rep);
    pthread_mutex_lock(&w->mu);
    memcpy(&w->before, &w->cur, sizeof w->before);
    bool asked = w->rediscover;
    w->rediscover = false;
    pthread_mutex_unlock(&w->mu);
    if (!w->nv && now_s >= w->retry_s)
        reopen(w, now_s, rep);
    else if (w->nv && (asked || now_s >= w->next_s))
        rediscover(w, now_s, rep);
    else if (w->nv && now_s >= w->sample_next_s)
        sample(w, now_s);
    pthread_mutex_lock(&w->mu);
    struct gp_node_health_change tick[GP_NODE_MAX_GPUS];
    size_t n = gp_node_health_tick(&w->health, now_s, tick, GP_NODE_MAX_GPUS);
    for (size_t i = 0; i < n && i < GP_NODE_MAX_GPUS; i++)
        queue(w, &tick[i]);
    for (size_t i = 0; i < w->n_pending; i++)
        rep->changes[rep->n_changes++] = w->pending[i];
    rep->dropped = w->dropped;
    w->n_pending = 0;
    w->dropped = 0;
    rep->changed = rep->n_changes > 0 || memcmp(&w->before, &w->cur, sizeof w->before) != 0;
    pthread_mutex_unlock(&w->mu);
}

void gp_node_nvwatch_inventory(struct gp_node_nvwatch *w, struct gp_node_inventory *out)
{
    pthread_mutex_lock(&w->mu);
    *out = w->cur;
    gp_node_health_apply(&w->health, out);
    pthread_mutex_unlock(&w->mu);
}

void gp_node_nvwatch_present(struct gp_node_nvwatch *w, struct gp_node_inventory *out)
{
    pthread_mutex_lock(&w->mu);
    *out = w->cur;
    gp_node_health_apply(&w->health, out);
    size_t n = 0;
    for (size_t g = 0; g < w->cur.n_gpus; g++) {
        if (w->gone[g] || w->nvml_index[g] < 0)
            continue;
        out->gpus[n] = out->gpus[g];
        out->gpus[n].index = (unsigned)w->nvml_index[g];
        n++;
    }
    out->n_gpus = n;
    pthread_mutex_unlock(&w->mu);
}

void gp_node_nvwatch_health(struct gp_node_nvwatch *w, struct gp_node_health *out)
{
    pthread_mutex_lock(&w->mu);
    *out = w->health;
    pthread_mutex_unlock(&w->mu);
}

void gp_node_nvwatch_stats(struct gp_node_nvwatch *w, struct gp_node_nvwatch_stats *out)
{
    memset(out, 0, sizeof *out);
    out->up = w->nv != NULL;
    out->discoveries = w->discoveries;
    out->failures = w->failures;
    out->retries = w->retries;
    out->next_retry_s = w->nv ? 0 : w->retry_s;
    out->lost_at_start = w->lost_at_start;
    pthread_mutex_lock(&w->mu);
    for (size_t g = 0; g < w->cur.n_gpus; g++)
        out->lost += w->gone[g];
    pthread_mutex_unlock(&w->mu);
}
