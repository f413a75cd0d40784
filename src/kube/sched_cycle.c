/* sched_cycle.c - the engine's decisions written to the API server: a BIND
 * as the annotation patch (the pod's resourceVersion a precondition) then
 * the Binding (uid and the patched resourceVersion preconditions), rolled
 * back on any failure (annotations cleared first, then the engine's
 * assumption released, then a back-off); an EVICT as a graceful delete of
 * the victim, its preemptor bound once the victims are gone; an
 * UNSCHEDULABLE as PodScheduled=False through /status and a
 * FailedScheduling Event; and the Events themselves (events.k8s.io/v1, as
 * kube-scheduler records them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/metrics.h"
#include "kube/sched_internal.h"

static void micro_time(char *buf, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char b[32];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%.20s.%06dZ", b, (int)(ts.tv_nsec / 1000 % 1000000));
}

static void rfc3339(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One request with a JSON body (stolen); the answer's status, or 0 when
 * no answer came. *out (when not NULL) gets the parsed answer. */
static long send_json(struct gp_kube_sched *s, const char *method, const char *path, json_t *body,
                      const char *ctype, json_t **out)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    enum gp_err err = gp_kube_request(s->c, method, path, text, ctype, &r, &d);
    free(text);
    if (out)
        *out = NULL;
    if (err != GP_OK)
        return 0;
    long status = r.status;
    if (out)
        *out = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    return status;
}

static void pod_path(const struct spod *p, const char *sub, char *buf, size_t n)
{
    snprintf(buf, n, "/api/v1/namespaces/%s/pods/%s%s", p->info.ns, p->info.name, sub);
}

void gp_ks_event(struct gp_kube_sched *s, const char *kind, const char *ns, const char *name,
                 const char *uid, const char *type, const char *reason, const char *action,
                 const char *note)
{
    if (!s->leader || !s->c)
        return;
    const char *evns = ns && ns[0] ? ns : "default";
    char ev_name[320], t[40], path[320], n[1024];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(ev_name, sizeof ev_name, "%.250s.%llx%04llx", name,
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
             (unsigned long long)(++s->event_seq & 0xffff));
    micro_time(t, sizeof t);
    snprintf(n, sizeof n, "%s", note); /* events.k8s.io: a note is at most 1024 bytes */
    json_t *reg = json_pack("{s:s,s:s,s:s}", "apiVersion", "v1", "kind", kind, "name", name);
    if (ns && ns[0])
        json_object_set_new(reg, "namespace", json_string(ns));
    if (uid && uid[0])
        json_object_set_new(reg, "uid", json_string(uid));
    json_t *ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "apiVersion",
                           "events.k8s.io/v1", "kind", "Event", "metadata", "name", ev_name,
                           "namespace", evns, "eventTime", t, "reportingController",
                           s->o.scheduler_name, "reportingInstance", s->o.identity, "action",
                           action, "reason", reason, "note", n, "type", type, "regarding", reg);
    snprintf(path, sizeof path, "/apis/events.k8s.io/v1/namespaces/%s/events", evns);
    if (send_json(s, "POST", path, ev, "application/json", NULL) == 201)
        s->st.events++;
}

/* Removes gpuplane's device annotations (no precondition: only our keys).
 * False when no answer came (they may still be there). */
static bool clear_annotations(struct gp_kube_sched *s, struct spod *p)
{
    char path[600];
    pod_path(p, "", path, sizeof path);
    json_t *body = json_pack("{s:{s:{s:n,s:n,s:n}}}", "metadata", "annotations", GP_KUBE_ANN_NODE,
                             GP_KUBE_ANN_GPUS, GP_KUBE_ANN_PHASE);
    long st = send_json(s, "PATCH", path, body, "application/merge-patch+json", NULL);
    return st != 0 && st != 429 && st < 500;
}

/* Takes a decision back: what was written cleared first (the GPUs must not
 * look booked to a restarted scheduler), then the engine's assumption,
 * then the back-off. When the clearing got no answer the state is rebuilt
 * from the API before the next decision. */
static void rollback(struct gp_kube_sched *s, struct spod *p, bool written)
{
    if (written && !clear_annotations(s, p))
        s->dirty = true;
    gp_ks_engine_drop(s, p);
    p->st = SP_BACKOFF;
    p->resume = false;
    p->attempts++;
    p->retry_at = s->now_s + gp_ks_backoff_s(s, p->attempts);
    s->st.rollbacks++;
    gp_ks_audit_pod(s, p, false);
}

static const char *status_message(const json_t *st)
{
    const char *m = json_string_value(json_object_get(st, "message"));
    return m ? m : "no answer";
}

/* The annotation patch; the new resourceVersion in rv. 0 written, 1 taken
 * back (or gone), 2 no answer. */
static int annotate(struct gp_kube_sched *s, struct spod *p, char *rv, size_t rvn)
{
    char path[600], gpus[64];
    pod_path(p, "", path, sizeof path);
    const struct gp_node *n = gp_engine_node(s->e, p->node);
    gp_kube_pick_format(&p->pick, gpus, sizeof gpus);
    json_t *body = json_pack("{s:{s:s,s:{s:s,s:s,s:s}}}", "metadata", "resourceVersion", p->info.rv,
                             "annotations", GP_KUBE_ANN_NODE, n->spec.name, GP_KUBE_ANN_GPUS, gpus,
                             GP_KUBE_ANN_PHASE, "allocating");
    json_t *ans;
    long st = send_json(s, "PATCH", path, body, "application/merge-patch+json", &ans);
    const char *new_rv = gp_kube_meta(ans, "resourceVersion");
    if (st == 200 && new_rv) {
        snprintf(rv, rvn, "%s", new_rv);
        json_decref(ans);
        return 0;
    }
    if (st == 409)
        s->st.patch_conflicts++;
    json_decref(ans);
    if (st == 404) { /* gone: its DELETED event follows */
        gp_ks_engine_drop(s, p);
        p->st = SP_DONE;
        return 1;
    }
    rollback(s, p, st == 0); /* no answer: it may have been written */
    return st == 0 ? 2 : 1;
}

/* The Binding. True when answered 201. */
static bool bind(struct gp_kube_sched *s, struct spod *p, const char *rv, size_t *bound)
{
    char path[600];
    pod_path(p, "/binding", path, sizeof path);
    const struct gp_node *n = gp_engine_node(s->e, p->node);
    json_t *body = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s},s:{s:s,s:s,s:s}}", "apiVersion", "v1",
                             "kind", "Binding", "metadata", "name", p->info.name, "namespace",
                             p->info.ns, "uid", p->info.uid, "resourceVersion", rv, "target",
                             "apiVersion", "v1", "kind", "Node", "name", n->spec.name);
    json_t *ans;
    long st = send_json(s, "POST", path, body, "application/json", &ans);
    if (st == 201) {
        json_decref(ans);
        p->st = SP_BOUND;
        p->attempts = 0;
        s->st.binds++;
        (*bound)++;
        if (s->o.bind_events) {
            char note[700];
            snprintf(note, sizeof note, "Successfully assigned %s to %s", p->key, n->spec.name);
            gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Normal", "Scheduled",
                        "Binding", note);
        }
        return true;
    }
    s->st.bind_failures++;
    s->st.bind_conflicts += st == 409;
    s->st.bind_rejected += st >= 400 && st < 500 && st != 409 && st != 429;
    s->st.bind_errors += st == 0 || st == 429 || st >= 500;
    if (st == 0) { /* it may have been bound: ask */
        char get[600];
        pod_path(p, "", get, sizeof get);
        json_t *now;
        long gs = send_json(s, "GET", get, NULL, NULL, &now);
        if (gs == 200 && now) {
            gp_kube_sched_pod_change(GP_KUBE_MODIFIED, now, NULL, s);
            json_decref(now);
            if (p->st == SP_BOUND) {
                s->st.binds++;
                (*bound)++;
                return true;
            }
        } else {
            json_decref(now);
        }
    } else {
        char note[1200];
        snprintf(note, sizeof note, "Binding rejected: %s", status_message(ans));
        gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning", "FailedScheduling",
                    "Scheduling", note);
    }
    json_decref(ans);
    if (p->st == SP_ASSUMED)
        rollback(s, p, true);
    return false;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An assumed pod made durable and bound. */
static void commit(struct gp_kube_sched *s, struct spod *p, size_t *bound)
{
    double t0 = s->km ? mono_s() : 0;
    char rv[64];
    snprintf(rv, sizeof rv, "%s", p->info.rv);
    if (!p->resume && annotate(s, p, rv, sizeof rv) != 0)
        return;
    if (p->resume)
        s->st.resumed++;
    p->resume = false;
    if (bind(s, p, rv, bound) && s->km)
        gp_metrics_observe(s->km->bind_s, mono_s() - t0);
}

void gp_ks_resume(struct gp_kube_sched *s, size_t *bound)
{
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        if (p->st == SP_PREEMPTING && p->victims == 0) {
            p->st = SP_ASSUMED; /* the room is free now */
            gp_ks_audit_pod(s, p, false);
            commit(s, p, bound);
        } else if (p->st == SP_ASSUMED && p->resume) {
            commit(s, p, bound);
        }
    }
}

static void unschedulable(struct gp_kube_sched *s, struct spod *p, const struct gp_decision *d)
{
    char msg[1024];
    gp_kube_explain_text(&d->explain, msg, sizeof msg);
    if (d->gang == GP_GANG_MEMBERS)
        snprintf(msg, sizeof msg, "pod group has fewer members than its minMember");
    if (p->last_message && strcmp(p->last_message, msg) == 0)
        return; /* written already: kube-scheduler too writes a condition only when it changes */
    char path[600], ts[32];
    pod_path(p, "/status", path, sizeof path);
    rfc3339(ts, sizeof ts);
    json_t *body = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:n,s:s}]}}", "status", "conditions", "type",
                             "PodScheduled", "status", "False", "reason", "Unschedulable",
                             "message", msg, "lastProbeTime", "lastTransitionTime", ts);
    long st = send_json(s, "PATCH", path, body, "application/strategic-merge-patch+json", NULL);
    if (st == 200) {
        s->st.unschedulable++;
        free(p->last_message);
        p->last_message = strdup(msg);
    }
    gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning", "FailedScheduling",
                "Scheduling", msg);
    if (p->info.ann_node) /* a decision of before: not a booking */
        clear_annotations(s, p);
}

/* A victim deleted gracefully (its own terminationGracePeriodSeconds). */
static void evict(struct gp_kube_sched *s, struct spod *v, struct spod *by)
{
    v->st = SP_EVICTED;
    if (v->eng != SP_NONE)
        s->by_eng[v->eng] = NULL;
    v->eng = SP_NONE; /* the engine released it */
    v->preemptor = by;
    if (by)
        by->victims++;
    char path[600], note[700];
    pod_path(v, "", path, sizeof path);
    snprintf(note, sizeof note, "Preempted by pod %s", by ? by->key : "?");
    gp_ks_event(s, "Pod", v->info.ns, v->info.name, v->info.uid, "Normal", "Preempted",
                "Preempting", note);
    long st = send_json(s, "DELETE", path, NULL, NULL, NULL);
    s->st.evictions++;
    if (st == 404 && by) /* gone already */
        by->victims--;
}

enum gp_err gp_ks_write_decisions(struct gp_kube_sched *s, size_t n, size_t *bound)
{
    for (size_t i = 0; i < n; i++) {
        const struct gp_decision *d = &s->dec[i];
        struct spod *p = d->pod < s->cap_by_eng ? s->by_eng[d->pod] : NULL;
        if (!p)
            continue;
        switch (d->kind) {
        case GP_DECISION_EVICT:
            evict(s, p, d->by < s->cap_by_eng ? s->by_eng[d->by] : NULL);
            break;
        case GP_DECISION_BIND:
            p->node = d->node;
            p->pick = d->pick;
            p->st = p->victims > 0 ? SP_PREEMPTING : SP_ASSUMED;
            gp_ks_audit_pod(s, p, false);
            break;
        case GP_DECISION_UNSCHEDULABLE:
            unschedulable(s, p, d);
            break;
        }
    }
    /* then the writes, a gang's members together: all annotated first, and
     * bound only when every member's annotation is written */
    for (size_t i = 0; i < n; i++) {
        const struct gp_decision *d = &s->dec[i];
        struct spod *p = d->pod < s->cap_by_eng ? s->by_eng[d->pod] : NULL;
        if (d->kind != GP_DECISION_BIND || !p || p->st != SP_ASSUMED)
            continue;
        if (!p->spec.group) {
            commit(s, p, bound);
            continue;
        }
        size_t j = i;
        char rvs[64][64];
        struct spod *m[64];
        size_t k = 0;
        bool ok = true;
        for (; j < n && k < 64; j++) {
            const struct gp_decision *e = &s->dec[j];
            struct spod *q = e->pod < s->cap_by_eng ? s->by_eng[e->pod] : NULL;
            if (e->kind != GP_DECISION_BIND || !q || q->spec.group != p->spec.group ||
                q->st != SP_ASSUMED)
                continue;
            m[k] = q;
            snprintf(rvs[k], sizeof rvs[k], "%s", q->info.rv);
            if (ok && annotate(s, q, rvs[k], sizeof rvs[k]) != 0)
                ok = false;
            k++;
        }
        for (size_t x = 0; x < k; x++) {
            if (!ok && m[x]->st == SP_ASSUMED)
                rollback(s, m[x], true); /* none bound: all taken back */
            else if (ok)
                bind(s, m[x], rvs[x], bound);
        }
    }
    return GP_OK;
}
