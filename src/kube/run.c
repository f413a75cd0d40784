/* run.c - the scheduler's threads (run.h): informer threads feeding a
 * queue, the Lease's thread, and the scheduling thread that drains the
 * queue, applies the ConfigMap's versions (config.h) and the Lease's
 * verdicts between cycles, runs cycles and the metrics. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/config.h"
#include "kube/events.h"
#include "kube/httpd.h"
#include "kube/informer.h"
#include "kube/jalloc.h"
#include "kube/jload.h"
#include "kube/metrics.h"
#include "kube/objects.h"
#include "kube/retry.h"
#include "kube/run.h"

struct change {
    struct change *next;
    int kind;
    enum gp_kube_event_type type;
    json_t *obj; /* a reference to the informer's object, which no thread modifies once
                  * parsed: jansson's reference counts are atomic and read-only access
                  * from several threads is safe (its "Thread safety" notes), so the
                  * object is shared, not copied */
};

struct runq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct change *head, *tail;
    volatile int stop;
    int woken; /* a binder's result is ready */
};

/* A binder's result is ready: the scheduling thread wakes (sched.h). */
static void wake(void *ctx)
{
    struct runq *q = ctx;
    pthread_mutex_lock(&q->mu);
    q->woken = 1;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

struct feed {
    struct runq *q;
    int kind;      /* 0 pods, 1 nodes, 2 PodGroups (either API group), 3 PriorityClasses, 4 the
                    * ConfigMap, 5 PodDisruptionBudgets, 6 PersistentVolumeClaims,
                    * 7 PersistentVolumes, 8 StorageClasses */
    bool optional; /* a resource that may not exist (a CRD): 404 counts as listed */
    const char *path;
    struct gp_kube_client *c;
    struct gp_kube_informer *inf;
    pthread_t th;
    int synced; /* under q->mu */
    bool started;
    bool listed; /* listed before its thread starts (the ConfigMap): it watches first */
    /* its failures (feed_main): said on f->log, the first of a spell and
     * then at most one line per back-off cap (10 s); counted */
    FILE *log;
    const char *resource;            /* gp_km_informer_names' */
    struct gp_metric_series *errors; /* NULL: no metrics */
    unsigned long fails;             /* in a row, 0 once it succeeds */
    double said_s;                   /* when the last line was written */
    char last[512];                  /* the last failure (under q->mu) */
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

static void on_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old, void *ctx)
{
    (void)old;
    struct feed *f = ctx;
    struct change *c = malloc(sizeof *c);
    if (!c)
        return;
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = obj}; /* a reference taken, nothing modified */
    *c = (struct change){NULL, f->kind, type, json_incref(u.m)};
    pthread_mutex_lock(&f->q->mu);
    if (f->q->tail)
        f->q->tail->next = c;
    else
        f->q->head = c;
    f->q->tail = c;
    pthread_cond_signal(&f->q->cv);
    pthread_mutex_unlock(&f->q->mu);
}

/* A list or watch of f failed: counted; the first failure of a spell on
 * f->log, then at most one line per back-off cap while it keeps failing
 * (client-go's reflector logs each "failed to list"/"failed to watch"
 * through the rate-limited utilruntime.HandleError). The diag names the
 * request, the HTTP status and the server's message. */
static void feed_failed(struct feed *f, bool watching, const struct gp_diag *d)
{
    gp_metrics_inc(f->errors, 1);
    pthread_mutex_lock(&f->q->mu);
    snprintf(f->last, sizeof f->last, "%s", d->msg[0] ? d->msg : "failed");
    pthread_mutex_unlock(&f->q->mu);
    double now = mono();
    if (f->log && (f->fails == 0 || now - f->said_s >= 10)) {
        if (f->fails == 0)
            fprintf(f->log, "gpuplane schedule: the %s informer failed to %s: %s\n", f->resource,
                    watching ? "watch" : "list", d->msg[0] ? d->msg : "failed");
        else
            fprintf(f->log,
                    "gpuplane schedule: the %s informer failed to %s: %s (%lu failures in a "
                    "row, retrying)\n",
                    f->resource, watching ? "watch" : "list", d->msg[0] ? d->msg : "failed",
                    f->fails + 1);
        fflush(f->log);
        f->said_s = now;
    }
    f->fails++;
}

/* List, then watch for as long as it runs; a failure waits a back-off
 * (0.1 s doubling to 10 s) and tries again from where the store is. */
static void *feed_main(void *arg)
{
    struct feed *f = arg;
    bool listed = f->listed;
    double wait = 0.1;
    gp_kube_jalloc_thread(true); /* its trees from the slabs (jalloc.h; it dumps none) */
    while (!f->q->stop) {
        struct gp_diag d = {""};
        enum gp_err err =
            listed ? gp_kube_informer_watch(f->inf, 300, &d) : gp_kube_informer_list(f->inf, &d);
        if (err == GP_ENOTFOUND && f->optional && !listed) { /* not installed: look again later */
            pthread_mutex_lock(&f->q->mu);
            f->synced = 1;
            pthread_cond_signal(&f->q->cv);
            pthread_mutex_unlock(&f->q->mu);
            for (int i = 0; i < 300 && !f->q->stop; i++)
                nap(0.1);
            continue;
        }
        if (err == GP_OK) {
            if (!listed) {
                listed = true;
                pthread_mutex_lock(&f->q->mu);
                f->synced = 1;
                pthread_cond_signal(&f->q->cv);
                pthread_mutex_unlock(&f->q->mu);
            }
            if (f->fails > 0 && f->log) {
                fprintf(f->log, "gpuplane schedule: the %s informer works again (%lu failures)\n",
                        f->resource, f->fails);
                fflush(f->log);
            }
            f->fails = 0;
            wait = 0.1;
            continue;
        }
        if (f->q->stop)
            break;
        feed_failed(f, listed, &d);
        if (err != GP_EIO)
            listed = false; /* anything but a drop or a 429/5xx on the watch: list again */
        /* the server's Retry-After when a watch was throttled, else the
         * back-off; in steps, so that a stop is not kept waiting */
        double ra = listed ? gp_kube_informer_retry_after_s(f->inf) : -1;
        double until = mono() + (ra > wait ? ra : wait);
        while (!f->q->stop && mono() < until)
            nap(fmin(0.1, until - mono() > 0 ? until - mono() : 0));
        wait = wait * 2 < 10 ? wait * 2 : 10;
    }
    return NULL;
}

/* Pods that have not ended, as kube-scheduler lists and watches them
 * (pkg/scheduler/scheduler.go newPodInformer: the field selector
 * "status.phase!=Succeeded,status.phase!=Failed"): a pod that ends leaves
 * the watch as a DELETED event and its record and store entry are freed,
 * so that memory follows the live pods, not every pod ever seen (ended
 * Job pods stay in the API until the pod GC's threshold, 12,500). */
#define GP_RUN_PODS_PATH                                                                           \
    "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"

/* f's failures said on o->log and counted in km (NULL: not) as resource. */
static void feed_report(struct feed *f, const struct gp_kube_run_opts *o,
                        struct gp_kube_metrics *km, enum gp_km_informer resource)
{
    f->log = o->log;
    f->resource = gp_km_informer_names[resource];
    f->errors = km ? km->informer_errors[resource] : NULL;
}

/* co: the run's client options, its shared limiter in them (binders_start) */
static enum gp_err feed_start(struct feed *f, struct runq *q, int kind, const char *path,
                              const struct gp_kube_run_opts *o,
                              const struct gp_kube_client_opts *co, struct gp_diag *d)
{
    f->q = q;
    f->kind = kind;
    f->optional = kind == 2;
    f->path = path;
    enum gp_err err = gp_kube_client_new(o->cfg, co, &f->c, d);
    if (err == GP_OK)
        err = gp_kube_informer_new(f->c, path, 500, on_change, f, &f->inf, d);
    if (err == GP_OK && kind == 0)
        gp_kube_informer_skip(f->inf, &gp_kube_pod_unread); /* objects_unread.c */
    if (err != GP_OK)
        return err;
    if (pthread_create(&f->th, NULL, feed_main, f) != 0)
        return gp_diag_set(d, GP_ENOMEM, "cannot start the %s informer", path);
    f->started = true;
    return GP_OK;
}

static void feed_stop(struct feed *f)
{
    if (f->started) {
        gp_kube_client_cancel(f->c);
        pthread_join(f->th, NULL);
    }
    gp_kube_informer_free(f->inf);
    gp_kube_client_free(f->c);
}

static bool stopping(const struct gp_kube_run_opts *o, double t0)
{
    return (o->stop && *o->stop) || (o->max_s > 0 && mono() - t0 >= o->max_s);
}

static bool feed_synced(struct feed *f)
{
    pthread_mutex_lock(&f->q->mu);
    bool synced = f->synced;
    pthread_mutex_unlock(&f->q->mu);
    return synced;
}

/* The ConfigMap (config.h): the flags' configuration, the one in effect
 * (its schedulerName the one the scheduler started with), the ConfigMap's
 * last good version, and their metrics. */
struct run_config {
    const struct gp_kube_run_opts *o;
    struct gp_kube_conf flags, running, wanted;
    struct gp_metric_series *applied, *invalid, *ok, *restart;
    uint64_t napplied, ninvalid;
};

#define GP_KM_CONFIG_RELOADS "gpuplane_scheduler_config_reloads_total"
#define GP_KM_CONFIG_OK      "gpuplane_scheduler_config_last_reload_successful"
#define GP_KM_CONFIG_RESTART "gpuplane_scheduler_config_restart_required"

__attribute__((format(printf, 2, 3))) static void config_log(const struct run_config *cw,
                                                             const char *fmt, ...)
{
    if (!cw->o->log)
        return;
    fprintf(cw->o->log, "gpuplane schedule: ConfigMap %s/%s: ", cw->o->config_ns,
            cw->o->config_name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(cw->o->log, fmt, ap);
    va_end(ap);
    fputc('\n', cw->o->log);
    fflush(cw->o->log);
}

/* A version of the ConfigMap (or its deletion), on the scheduling thread
 * between two cycles: checked whole; what can change live applied, what
 * cannot reported as needing a restart; a bad version changes nothing. */
static void config_change(struct run_config *cw, struct gp_kube_sched *s,
                          enum gp_kube_event_type type, const json_t *obj)
{
    const char *ns = cw->o->config_ns, *name = cw->o->config_name;
    const char *uid = type == GP_KUBE_DELETED ? NULL : gp_kube_meta(obj, "uid");
    struct gp_kube_conf next;
    struct gp_diag d = {""};
    char msg[1024];
    if (gp_kube_conf_parse(type == GP_KUBE_DELETED ? NULL : obj, &cw->flags, &next, &d) != GP_OK) {
        cw->ninvalid++;
        gp_metrics_inc(cw->invalid, 1);
        gp_metrics_set(cw->ok, 0);
        config_log(cw, "%s; the last good configuration is kept", d.msg);
        snprintf(msg, sizeof msg, "%s; the last good configuration is kept", d.msg);
        gp_kube_sched_conf_event(s, ns, name, uid, "Warning", "InvalidConfiguration", msg);
        return;
    }
    gp_metrics_set(cw->ok, 1);
    unsigned before = gp_kube_conf_diff(&cw->running, &cw->wanted) & GP_KCONF_RESTART;
    unsigned moved = gp_kube_conf_diff(&cw->wanted, &next) & GP_KCONF_RESTART;
    unsigned live = gp_kube_sched_conf_apply(s, &next);
    cw->wanted = next;
    snprintf(cw->running.policy, sizeof cw->running.policy, "%s", next.policy);
    cw->running.backoff_initial_s = next.backoff_initial_s;
    cw->running.backoff_max_s = next.backoff_max_s;
    char what[300];
    if (live) {
        cw->napplied++;
        gp_metrics_inc(cw->applied, 1);
        gp_kube_conf_describe(&next, live, what, sizeof what);
        const char *why = type == GP_KUBE_DELETED ? " (deleted: the flags' values)" : "";
        config_log(cw, "applied%s: %s", why, what);
        snprintf(msg, sizeof msg, "applied%s: %s", why, what);
        gp_kube_sched_conf_event(s, ns, name, uid, "Normal", "ConfigurationApplied", msg);
    }
    unsigned restart = gp_kube_conf_diff(&cw->running, &next) & GP_KCONF_RESTART;
    gp_metrics_set(cw->restart, restart ? 1 : 0);
    if (restart && moved) {
        gp_kube_conf_describe(&next, restart, what, sizeof what);
        char now[300];
        gp_kube_conf_describe(&cw->running, restart, now, sizeof now);
        config_log(cw, "%s needs a restart; running with %s", what, now);
        snprintf(msg, sizeof msg, "%s needs a restart; running with %s", what, now);
        gp_kube_sched_conf_event(s, ns, name, uid, "Warning", "RestartRequired", msg);
    } else if (!restart && before) {
        config_log(cw, "back to what runs (schedulerName=%s)", cw->running.scheduler_name);
    }
}

/* Applies what the informers sent; false when nothing came. */
static bool drain(struct runq *q, struct gp_kube_sched *s, struct run_config *cw, double wait_until)
{
    pthread_mutex_lock(&q->mu);
    while (!q->head && !q->stop && !q->woken) {
        double now = mono();
        if (now >= wait_until)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double dt = wait_until - now < 0.2 ? wait_until - now : 0.2;
        long ns = ts.tv_nsec + (long)(dt * 1e9);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&q->cv, &q->mu, &ts);
        break;
    }
    struct change *c = q->head;
    q->head = q->tail = NULL;
    q->woken = 0;
    pthread_mutex_unlock(&q->mu);
    bool any = c != NULL;
    while (c) {
        struct change *next = c->next;
        if (s && c->kind == 4)
            config_change(cw, s, c->type, c->obj);
        else if (s && c->kind == 1)
            gp_kube_sched_node_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 2)
            gp_kube_sched_group_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 3)
            gp_kube_sched_priority_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 5)
            gp_kube_sched_pdb_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 6)
            gp_kube_sched_pvc_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 7)
            gp_kube_sched_pv_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 8)
            gp_kube_sched_sc_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 9)
            gp_kube_sched_namespace_change(c->type, c->obj, NULL, s);
        else if (s && c->kind == 10)
            gp_kube_sched_csinode_change(c->type, c->obj, NULL, s);
        else if (s)
            gp_kube_sched_pod_change(c->type, c->obj, NULL, s);
        json_decref(c->obj);
        free(c);
        c = next;
    }
    return any;
}

/* The Lease's thread (client-go's LeaderElector.Run: the renew loop in a
 * goroutine of its own, every RetryPeriod, whatever the scheduling
 * goroutines do): it ticks the Lease on the Lease's own client and
 * publishes leadership and the renew deadline under mu - the deadline at
 * once into the scheduler's atomics (gp_kube_sched_lead_until), which
 * every write checks, so that a long cycle neither lets the Lease lapse
 * nor writes past it; leadership itself (the rebuild on becoming leader)
 * the scheduling thread takes between cycles (lease_apply). */
struct lease_run {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    bool started, stop;
    bool lead;        /* the last tick's answer */
    double until_s;   /* its renew deadline (-INFINITY: not leading) */
    uint64_t seq;     /* ticks published */
    uint64_t seen;    /* the last the scheduling thread applied */
    double renewed_s; /* the last tick that found this replica leading */
};

/* /healthz (httpd.h): unhealthy when the scheduling loop has not come
 * round, nor a cycle written anything, for GP_RUN_STALL_S (a long cycle
 * writes as it goes; an idle loop comes round each second), or when this
 * replica believes it leads but has not renewed the Lease for
 * leaseDurationSeconds + GP_RUN_LEASE_TOLERANCE_S (the Lease's thread
 * stuck) - client-go's
 * leaderelection HealthzAdaptor (healthzadaptor.go, Check: "failed
 * election to renew leadership on lease"), which kube-scheduler adds to
 * its /healthz with a tolerance of 20 s (cmd/kube-scheduler/app/options,
 * NewLeaderHealthzAdaptor(time.Second * 20)). The rendered Deployment's
 * livenessProbe (10 s period, 3 failures) then restarts the pod. */
#define GP_RUN_STALL_S           60.0
#define GP_RUN_LEASE_TOLERANCE_S 20.0

struct run_state {
    struct runq q;
    struct lease_run lr;
    const struct gp_kube_run_opts *o;
    _Atomic double beat_s; /* the scheduling loop's last round (CLOCK_MONOTONIC) */
    struct feed nodes, pods, groups;
    struct feed volcano, prios; /* Volcano's PodGroups; PriorityClasses */
    struct feed config;         /* the ConfigMap (kind 4) */
    struct feed pdbs;           /* PodDisruptionBudgets (kind 5): preemption's victims */
    struct feed pvcs, pvs, scs; /* claims, volumes, classes (kinds 6-8): volumes.c */
    struct feed nss;            /* Namespaces (kind 9): their labels, namespaces.c */
    struct feed csinodes;       /* CSINodes (kind 10): volume limits, volumes_limits.c */
    struct run_config cw;
    /* o->client with the run's one rate limit in it: every client but the
     * Lease's borrows it (limits_make) */
    struct gp_kube_client_opts co;
    struct gp_kube_limiter *limiter; /* NULL: none made (qps 0, or the caller's own) */
    struct gp_kube_client *c, *lc;
    struct gp_kube_client *ec;  /* the Event sender's (events_start) */
    struct gp_kube_events *ev;  /* the Event sender */
    struct gp_kube_client **bc; /* the binders' clients */
    size_t nbc;
    struct gp_kube_sched *s;
    struct gp_kube_lease *lease;
    struct gp_kube_metrics km;
    bool km_ok;
    struct gp_httpd *h;
};

static void *lease_main(void *arg)
{
    struct run_state *r = arg;
    struct lease_run *lr = &r->lr;
    pthread_mutex_lock(&lr->mu);
    while (!lr->stop) {
        pthread_mutex_unlock(&lr->mu);
        double now = mono();
        bool lead = gp_kube_lease_tick(r->lease, now); /* bounded: lease.h */
        double until = lead ? gp_kube_lease_deadline(r->lease) : -INFINITY;
        pthread_mutex_lock(&lr->mu);
        lr->lead = lead;
        lr->until_s = until;
        if (lead)
            lr->renewed_s = now;
        lr->seq++;
        /* a leader's writes see the new deadline now, mid-cycle; a replica
         * that is not leading (yet, as the scheduling thread knows it)
         * writes nothing whatever the deadline says (sched.c) */
        gp_kube_sched_lead_until(r->s, until);
        if (r->h)
            gp_httpd_set_role(r->h, lead ? GP_HTTPD_ROLE_LEADER : GP_HTTPD_ROLE_STANDBY);
        pthread_mutex_unlock(&lr->mu);
        wake(&r->q);
        pthread_mutex_lock(&lr->mu);
        double next = now + r->o->lease.retry_period_s;
        while (!lr->stop && mono() < next) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            double dt = next - mono();
            dt = dt < 0 ? 0 : dt > 0.2 ? 0.2 : dt;
            long ns = ts.tv_nsec + (long)(dt * 1e9);
            ts.tv_sec += ns / 1000000000L;
            ts.tv_nsec = ns % 1000000000L;
            pthread_cond_timedwait(&lr->cv, &lr->mu, &ts);
        }
    }
    pthread_mutex_unlock(&lr->mu);
    return NULL;
}

/* What the Lease's thread published since the last call, applied on the
 * scheduling thread (under the thread's lock, so that it never puts back
 * an older deadline); true when there was something. */
static bool lease_apply(struct run_state *r)
{
    struct lease_run *lr = &r->lr;
    pthread_mutex_lock(&lr->mu);
    bool fresh = lr->seq != lr->seen;
    if (fresh) {
        lr->seen = lr->seq;
        gp_kube_sched_set_leader_until(r->s, lr->lead, lr->until_s);
    }
    pthread_mutex_unlock(&lr->mu);
    return fresh;
}

static bool run_healthy(void *ctx, char *why, size_t n)
{
    struct run_state *r = ctx;
    double now = mono();
    double stall = r->o->healthz_stall_s > 0 ? r->o->healthz_stall_s : GP_RUN_STALL_S;
    double tol = r->o->healthz_lease_tolerance_s > 0 ? r->o->healthz_lease_tolerance_s
                                                     : GP_RUN_LEASE_TOLERANCE_S;
    double beat = fmax(atomic_load(&r->beat_s), gp_kube_sched_beat_s(r->s));
    if (beat > 0 && now - beat > stall) {
        snprintf(why, n, "scheduling loop: no progress for %.1f s (at most %.0f s)", now - beat,
                 stall);
        return false;
    }
    if (!r->o->leader_elect)
        return true;
    struct lease_run *lr = &r->lr;
    pthread_mutex_lock(&lr->mu);
    bool lead = lr->lead;
    double since = now - lr->renewed_s;
    pthread_mutex_unlock(&lr->mu);
    if (lead && since > r->o->lease.duration_s + tol) {
        snprintf(why, n,
                 "leaderElection: failed election to renew leadership on lease %s/%s: not "
                 "renewed for %.0f s (leaseDuration + %.0f s)",
                 r->o->lease.ns, r->o->lease.name, since, tol);
        return false;
    }
    return true;
}

static void lease_stop(struct run_state *r)
{
    struct lease_run *lr = &r->lr;
    if (!lr->started)
        return;
    pthread_mutex_lock(&lr->mu);
    lr->stop = true;
    pthread_cond_broadcast(&lr->cv);
    pthread_mutex_unlock(&lr->mu);
    pthread_join(lr->th, NULL);
    lr->started = false;
}

/* The run ends before the informers synced: a stop asked (a signal) is
 * no error; --max-s running out is (nothing was scheduled), naming the
 * first informer not synced and its last failure. */
static enum gp_err not_synced(const struct gp_kube_run_opts *o, struct run_state *r,
                              struct gp_diag *d)
{
    if (o->stop && *o->stop)
        return GP_OK;
    struct feed *f[] = {&r->config, &r->groups, &r->volcano, &r->prios,    &r->pdbs,  &r->pvcs,
                        &r->pvs,    &r->scs,    &r->nss,     &r->csinodes, &r->nodes, &r->pods};
    pthread_mutex_lock(&r->q.mu);
    size_t i = 0;
    while (i + 1 < sizeof f / sizeof f[0] && f[i]->synced)
        i++;
    char last[512];
    snprintf(last, sizeof last, "%s", f[i]->last[0] ? f[i]->last : "no answer yet");
    pthread_mutex_unlock(&r->q.mu);
    return gp_diag_set(d, GP_EIO,
                       "schedule: the informers did not sync within --max-s %g s (the %s "
                       "informer: %s)",
                       o->max_s, f[i]->resource ? f[i]->resource : "?", last);
}

static enum gp_err run_loop(const struct gp_kube_run_opts *o, struct run_state *r, double t0,
                            struct gp_kube_run_result *res, struct gp_diag *d)
{
    for (;;) { /* both informers listed first */
        pthread_mutex_lock(&r->q.mu);
        bool synced = r->nodes.synced && r->pods.synced && r->groups.synced && r->volcano.synced &&
                      r->prios.synced && r->config.synced && r->pdbs.synced && r->pvcs.synced &&
                      r->pvs.synced && r->scs.synced && r->nss.synced && r->csinodes.synced;
        pthread_mutex_unlock(&r->q.mu);
        if (synced)
            break;
        if (stopping(o, t0))
            return not_synced(o, r, d);
        drain(&r->q, r->s, &r->cw, mono() + 0.05);
    }
    drain(&r->q, r->s, &r->cw, 0);
    res->synced_s = mono() - t0;
    if (r->h)
        gp_httpd_set_synced(r->h, true);
    double next_metrics = 0;
    bool stale = false; /* a cycle ran since the metrics were brought up to date */
    bool changed = true;
    if (!o->leader_elect)
        gp_kube_sched_set_leader(r->s, true);
    else if (pthread_create(&r->lr.th, NULL, lease_main, r) != 0) /* once synced, as
                                                                   * kube-scheduler */
        return gp_diag_set(d, GP_ENOMEM, "cannot start the Lease's thread");
    else
        r->lr.started = true;
    while (!stopping(o, t0)) {
        double now = mono();
        atomic_store(&r->beat_s, now);
        if (o->leader_elect && lease_apply(r))
            changed = true; /* a cycle each retry period, as before */
        if (changed || gp_kube_sched_next_retry_s(r->s) <= now ||
            gp_kube_sched_results_ready(r->s)) {
            size_t bound;
            enum gp_err err = gp_kube_sched_cycle(r->s, now, &bound, d);
            if (err != GP_OK)
                return err;
            if (bound) {
                double t = mono() - t0;
                if (res->first_bind_s < 0)
                    res->first_bind_s = t;
                res->last_bind_s = t;
            }
            stale = true;
        }
        if (stale && now >= next_metrics) { /* at most 4 times a second: it reads every pod */
            gp_kube_sched_metrics(r->s);
            next_metrics = now + 0.25;
            stale = false;
        }
        uint64_t binds, in_flight; /* the full stats walk every pod: only when they may stop */
        gp_kube_sched_progress(r->s, &binds, &in_flight);
        if (o->stop_after_binds && binds >= o->stop_after_binds)
            break;
        if (o->stop_when_idle && binds > 0 && in_flight == 0) {
            struct gp_kube_sched_stats st = gp_kube_sched_stats(r->s);
            if (st.assumed == 0 && st.waiting_backoff == 0 && st.pending == st.unschedulable_now)
                break;
        }
        double until = gp_kube_sched_next_retry_s(r->s); /* the Lease's thread wakes it too */
        until = fmin(until, stale ? next_metrics : mono() + 1);
        changed = drain(&r->q, r->s, &r->cw, until);
    }
    gp_kube_sched_metrics(r->s);
    return GP_OK;
}

/* The ConfigMap listed (on a client of its own) before the scheduler is
 * made: its configuration over the flags' is the one the scheduler starts
 * with (so), and a bad one the error. Its thread watches on from the
 * version listed (config_watch). */
static enum gp_err config_list(const struct gp_kube_run_opts *o, struct run_state *r,
                               struct gp_kube_sched_opts *so, struct gp_diag *d)
{
    struct run_config *cw = &r->cw;
    struct feed *f = &r->config;
    cw->o = o;
    gp_kube_conf_from_opts(&o->sched, &cw->flags);
    cw->running = cw->wanted = cw->flags;
    f->synced = 1;
    if (!o->config_name)
        return GP_OK;
    char p[600];
    if (!o->config_ns || !o->config_ns[0] || !o->config_name[0] ||
        !gp_kube_conf_path(o->config_ns, o->config_name, p, sizeof p))
        return gp_diag_set(d, GP_EUSAGE,
                           "--config-namespace, --config-name: expected a "
                           "namespace and a ConfigMap name");
    f->q = &r->q;
    f->kind = 4;
    enum gp_err err = gp_kube_client_new(o->cfg, &r->co, &f->c, d);
    if (err == GP_OK) /* (the informer keeps a copy of the path) */
        err = gp_kube_informer_new(f->c, p, 0, on_change, f, &f->inf, d);
    if (err == GP_OK)
        err = gp_kube_informer_list(f->inf, d);
    if (err != GP_OK)
        return err;
    const json_t *cm = gp_kube_informer_get(f->inf, o->config_ns, o->config_name);
    if ((err = gp_kube_conf_parse(cm, &cw->flags, &cw->wanted, d)) != GP_OK)
        return err;
    cw->running = cw->wanted;
    f->listed = true;
    so->scheduler_name = cw->running.scheduler_name;
    so->policy = cw->running.policy;
    so->backoff_initial_s = cw->running.backoff_initial_s;
    so->backoff_max_s = cw->running.backoff_max_s;
    char what[400];
    gp_kube_conf_describe(&cw->running,
                          GP_KCONF_POLICY | GP_KCONF_BACKOFF | GP_KCONF_SCHEDULER_NAME, what,
                          sizeof what);
    config_log(cw, "%s: %s", cm ? "read" : "none (the flags' values)", what);
    return GP_OK;
}

static enum gp_err config_metrics(struct run_state *r, struct gp_diag *d)
{
    static const char *const results[] = {"applied", "invalid", NULL};
    const struct gp_metric_def defs[] = {
        {GP_KM_CONFIG_RELOADS,
         "Versions of gpuplane's ConfigMap read while running: applied (what runs changed) or "
         "invalid (refused, the last good configuration kept).",
         GP_METRIC_COUNTER, "result", results, 0, NULL, 0},
        {GP_KM_CONFIG_OK, "1 when the last version of gpuplane's ConfigMap read was valid, else 0.",
         GP_METRIC_GAUGE, NULL, NULL, 0, NULL, 0},
        {GP_KM_CONFIG_RESTART,
         "1 when gpuplane's ConfigMap holds a setting that takes a restart (schedulerName) other "
         "than the one running, else 0.",
         GP_METRIC_GAUGE, NULL, NULL, 0, NULL, 0},
    };
    struct gp_metric *m[3];
    for (size_t i = 0; i < 3; i++) {
        enum gp_err err = gp_metrics_define(r->km.reg, &defs[i], &m[i], d);
        if (err != GP_OK)
            return err;
    }
    r->cw.applied = gp_metrics_series(m[0], "applied");
    r->cw.invalid = gp_metrics_series(m[0], "invalid");
    r->cw.ok = gp_metrics_series(m[1], NULL);
    r->cw.restart = gp_metrics_series(m[2], NULL);
    gp_metrics_set(r->cw.ok, 1); /* the version listed at the start was (else no run) */
    return GP_OK;
}

static enum gp_err config_watch(struct run_state *r, struct gp_diag *d)
{
    struct feed *f = &r->config;
    if (!f->inf)
        return GP_OK;
    feed_report(f, r->cw.o, r->km_ok ? &r->km : NULL, GP_KM_INF_CONFIGMAP);
    if (pthread_create(&f->th, NULL, feed_main, f) != 0)
        return gp_diag_set(d, GP_ENOMEM, "cannot start the ConfigMap's informer");
    f->started = true;
    return GP_OK;
}

/* The run's client-side rate limit (--qps, --burst), one for the whole
 * process as kube-scheduler has one: its informers and its binding and
 * status writes come from one clientset (cmd/kube-scheduler/app/options/
 * options.go, Options.Config and createClients, v1.28), whose
 * NewForConfigAndClient makes one flowcontrol token bucket that every
 * client of the set shares (k8s.io/client-go/kubernetes/clientset.go).
 * Every client of the run borrows it (the ConfigMap's, the informers',
 * the scheduling thread's, the binders'), but the Lease's, which is made
 * with its own bucket of the same QPS and burst, as kube-scheduler's
 * leader election makes a clientset of its own (client-go
 * tools/leaderelection/resourcelock, NewFromKubeconfig). A limiter the
 * caller put in o->client is used as it is. */
static enum gp_err limits_make(const struct gp_kube_run_opts *o, struct run_state *r,
                               struct gp_diag *d)
{
    r->co = o->client;
    if (r->co.limiter || r->co.qps <= 0)
        return GP_OK;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock client.c takes tokens by */
    r->limiter =
        gp_kube_limiter_new(r->co.qps, r->co.burst, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
    if (!r->limiter)
        return gp_diag_set(d, GP_ENOMEM, "out of memory (rate limiter)");
    r->co.limiter = r->limiter;
    return GP_OK;
}

/* The Event sender (events.h) on a client of its own with a bucket of
 * its own of the same QPS and burst, as kube-scheduler's eventClient is a
 * clientset of its own (cmd/kube-scheduler/app/options/options.go,
 * createClients): Events never wait for, nor take, the decisions' rate. */
static enum gp_err events_start(const struct gp_kube_run_opts *o, struct run_state *r,
                                struct gp_diag *d)
{
    struct gp_kube_client_opts co = o->client;
    co.limiter = NULL;
    co.seed = o->client.seed + 1000;
    enum gp_err err = gp_kube_client_new(o->cfg, &co, &r->ec, d);
    if (err == GP_OK)
        err = gp_kube_events_start(r->ec, 0, &r->ev, d);
    if (err == GP_OK)
        gp_kube_sched_set_events(r->s, r->ev);
    return err;
}

/* The binders, each on a client of its own (its own kept connection),
 * all on the run's one limiter (limits_make). */
static enum gp_err binders_start(const struct gp_kube_run_opts *o, struct run_state *r,
                                 struct gp_diag *d)
{
    unsigned n = o->sched.binders;
    if (n == 0)
        return GP_OK;
    r->bc = calloc(n, sizeof *r->bc);
    if (!r->bc)
        return gp_diag_set(d, GP_ENOMEM, "out of memory (binders)");
    struct gp_kube_client_opts co = r->co;
    for (unsigned i = 0; i < n; i++) {
        co.seed = o->client.seed + 1 + i;
        enum gp_err err = gp_kube_client_new(o->cfg, &co, &r->bc[i], d);
        if (err != GP_OK)
            return err;
        r->nbc++;
    }
    return gp_kube_sched_start_binders(r->s, r->bc, r->nbc, wake, &r->q, d);
}

enum gp_err gp_kube_run(const struct gp_kube_run_opts *o, struct gp_kube_run_result *res,
                        struct gp_diag *d)
{
    double t0 = mono();
    gp_kube_jalloc_install(); /* before the informers' threads start (jalloc.h) */
    memset(res, 0, sizeof *res);
    res->first_bind_s = res->last_bind_s = -1;
    struct run_state r;
    memset(&r, 0, sizeof r);
    r.o = o;
    pthread_mutex_init(&r.q.mu, NULL);
    pthread_cond_init(&r.q.cv, NULL);
    pthread_mutex_init(&r.lr.mu, NULL);
    pthread_cond_init(&r.lr.cv, NULL);
    struct gp_kube_sched_opts so = o->sched; /* the ConfigMap's values over the flags' */
    enum gp_err err = limits_make(o, &r, d);
    if (err == GP_OK)
        err = config_list(o, &r, &so, d);
    if (err == GP_OK)
        err = gp_kube_client_new(o->cfg, &r.co, &r.c, d);
    if (err == GP_OK)
        err = gp_kube_sched_new(r.c, &so, &r.s, d);
    struct gp_kube_client_opts lease_client = o->client; /* bounded by the renew deadline */
    lease_client.limiter = NULL;                         /* a bucket of its own (limits_make) */
    gp_kube_lease_client_opts(&o->lease, &lease_client);
    if (err == GP_OK && o->leader_elect &&
        (err = gp_kube_client_new(o->cfg, &lease_client, &r.lc, d)) == GP_OK)
        err = gp_kube_lease_new(r.lc, &o->lease, &r.lease, d);
    if (err == GP_OK)
        err = events_start(o, &r, d);
    if (err == GP_OK)
        err = binders_start(o, &r, d);
    if (err == GP_OK && (err = gp_kube_metrics_init(&r.km, d)) == GP_OK) {
        r.km_ok = true;
        gp_kube_sched_set_metrics(r.s, &r.km);
        if (o->config_name)
            err = config_metrics(&r, d);
    }
    if (err == GP_OK)
        err = config_watch(&r, d);
    if (err == GP_OK && o->metrics_addr) {
        struct gp_httpd_opts ho = {.addr = o->metrics_addr,
                                   .metrics = r.km.reg,
                                   .leader_election = o->leader_elect,
                                   .healthy = run_healthy,
                                   .healthy_ctx = &r};
        err = gp_httpd_start(&ho, &r.h, d);
        if (err == GP_OK && o->log) {
            fprintf(o->log, "gpuplane schedule: /metrics, /healthz and /readyz on port %u\n",
                    gp_httpd_port(r.h));
            fflush(o->log);
        }
    }
    struct gp_kube_metrics *km = r.km_ok ? &r.km : NULL;
    feed_report(&r.groups, o, km, GP_KM_INF_PODGROUPS);
    feed_report(&r.volcano, o, km, GP_KM_INF_VOLCANO);
    feed_report(&r.prios, o, km, GP_KM_INF_PRIORITIES);
    feed_report(&r.nodes, o, km, GP_KM_INF_NODES);
    feed_report(&r.pods, o, km, GP_KM_INF_PODS);
    feed_report(&r.pdbs, o, km, GP_KM_INF_PDBS);
    feed_report(&r.pvcs, o, km, GP_KM_INF_PVCS);
    feed_report(&r.pvs, o, km, GP_KM_INF_PVS);
    feed_report(&r.scs, o, km, GP_KM_INF_STORAGECLASSES);
    feed_report(&r.csinodes, o, km, GP_KM_INF_CSINODES);
    feed_report(&r.nss, o, km, GP_KM_INF_NAMESPACES);
    if (err == GP_OK) /* PodGroups first: a gang's members wait for theirs */
        err = feed_start(&r.groups, &r.q, 2, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", o,
                         &r.co, d);
    if (err == GP_OK)
        err = feed_start(&r.volcano, &r.q, 2, "/apis/scheduling.volcano.sh/v1beta1/podgroups", o,
                         &r.co, d);
    if (err == GP_OK) /* PriorityClasses listed before any pod is read */
        err = feed_start(&r.prios, &r.q, 3, "/apis/scheduling.k8s.io/v1/priorityclasses", o, &r.co,
                         d);
    while (err == GP_OK && !feed_synced(&r.prios) && !stopping(o, t0))
        nap(0.01);
    if (err == GP_OK)
        err = feed_start(&r.pdbs, &r.q, 5, "/apis/policy/v1/poddisruptionbudgets", o, &r.co, d);
    if (err == GP_OK) /* the volumes' objects (volumes.c), before the pods that name them */
        err = feed_start(&r.scs, &r.q, 8, "/apis/storage.k8s.io/v1/storageclasses", o, &r.co, d);
    if (err == GP_OK)
        err = feed_start(&r.pvs, &r.q, 7, "/api/v1/persistentvolumes", o, &r.co, d);
    if (err == GP_OK)
        err = feed_start(&r.pvcs, &r.q, 6, "/api/v1/persistentvolumeclaims", o, &r.co, d);
    if (err == GP_OK) /* the namespaces' labels (namespaces.c), for affinity's namespaceSelector */
        err = feed_start(&r.nss, &r.q, 9, "/api/v1/namespaces", o, &r.co, d);
    if (err == GP_OK) /* the nodes' CSI volume limits (volumes_limits.c), before the nodes */
        err = feed_start(&r.csinodes, &r.q, 10, "/apis/storage.k8s.io/v1/csinodes", o, &r.co, d);
    if (err == GP_OK)
        err = feed_start(&r.nodes, &r.q, 1, "/api/v1/nodes", o, &r.co, d);
    if (err == GP_OK)
        err = feed_start(&r.pods, &r.q, 0, GP_RUN_PODS_PATH, o, &r.co, d);
    if (err == GP_OK)
        err = run_loop(o, &r, t0, res, d);
    pthread_mutex_lock(&r.q.mu);
    r.q.stop = 1;
    pthread_mutex_unlock(&r.q.mu);
    feed_stop(&r.config);
    feed_stop(&r.groups);
    feed_stop(&r.volcano);
    feed_stop(&r.prios);
    feed_stop(&r.pdbs);
    feed_stop(&r.pvcs);
    feed_stop(&r.pvs);
    feed_stop(&r.scs);
    feed_stop(&r.csinodes);
    feed_stop(&r.nss);
    feed_stop(&r.nodes);
    feed_stop(&r.pods);
    drain(&r.q, NULL, NULL, 0); /* what came after the end: dropped */
    /* the binders finish the job each is on (none not begun is started) */
    if (r.s)
        gp_kube_sched_stop_binders(r.s);
    /* the Events queued sent for a short while more (the binders' last
     * ones among them), the rest dropped and counted */
    gp_kube_events_stop(r.ev, 2.0);
    if (r.s)
        gp_kube_sched_set_events(r.s, NULL); /* its counts kept (sched.h) */
    gp_kube_events_free(r.ev);
    lease_stop(&r); /* renewing until the binders are done */
    if (r.lease)
        gp_kube_lease_release(r.lease);
    if (r.s)
        res->stats = gp_kube_sched_stats(r.s);
    res->wall_s = mono() - t0;
    res->config_applied = r.cw.napplied;
    res->config_invalid = r.cw.ninvalid;
    if (r.h)
        gp_httpd_stop(r.h);
    gp_kube_sched_free(r.s);
    gp_kube_lease_free(r.lease);
    if (r.km_ok)
        gp_kube_metrics_free(&r.km);
    gp_kube_client_free(r.c);
    gp_kube_client_free(r.lc);
    gp_kube_client_free(r.ec);
    for (size_t i = 0; i < r.nbc; i++)
        gp_kube_client_free(r.bc[i]);
    free(r.bc);
    gp_kube_limiter_free(r.limiter); /* after every client that borrowed it */
    pthread_mutex_destroy(&r.q.mu);
    pthread_cond_destroy(&r.q.cv);
    pthread_mutex_destroy(&r.lr.mu);
    pthread_cond_destroy(&r.lr.cv);
    return err;
}
