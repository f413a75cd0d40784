/* bind.c - the engine's BIND decisions made durable and bound, in
 * parallel. A plain job (one pod bound now, most are) is one write: its
 * Binding carries the decision's annotations with the uid and the
 * resourceVersion the decision was made on as preconditions, and the API
 * server applies both in one update or neither (jobs_run). A job that
 * waits or is a gang's (its members annotated, then bound when their
 * nodes' slots free and all are written) is the annotation patch (the
 * pod's resourceVersion a precondition) then the Binding (uid and the
 * patched resourceVersion preconditions), and on a failure the
 * annotations cleared before anything else (job_run). Jobs are carried
 * out by a pool of binder threads, each on a client of its own (a kept
 * HTTP/1.1 connection each, written and read by http1.c), or on the
 * scheduling thread itself when there is no pool.
 * A job's own requests stay in order; jobs run side by side. A binder
 * never touches the engine or the scheduler's records: it works on copies
 * of the strings it needs and hands its result back through a queue, and
 * the scheduling thread applies it (the assumption kept, or released and
 * the pod backed off). A binder stops writing as soon as its replica is no
 * longer the leader (only a leader binds): what it leaves half-finished
 * (annotated, not bound) a leader's rebuild resumes or takes back.
 * kube-scheduler binds asynchronously too (its binding cycle runs in a
 * goroutine per pod after the scheduling cycle assumed it:
 * pkg/scheduler/schedule_one.go). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/metrics.h"
#include "kube/sched_internal.h"

enum bind_outcome {
    BO_BOUND,     /* 201 (or, without an answer, the pod read back bound) */
    BO_FAILED,    /* taken back: what was written cleared (unknown: maybe not) */
    BO_GONE,      /* 404 on the patch: the pod is gone */
    BO_ABANDONED, /* no longer the leader: left for a leader's rebuild */
    BO_ANNOTATED, /* annotated only: it waits for its node's slot (a gang's member) */
    BO_UNSURE,    /* the Binding may have gone through and the pod could not be read:
                   * kept as it is (annotations, assumption, slot), asked again later */
    BO_KEPT,      /* a gang's member shown not bound while its gang is on its nodes
                   * (keep): its annotations and assumption kept, bound again later */
};

struct bind_member {
    struct spod *p; /* the scheduling thread's; NULL once its record went */
    const char *key, *ns, *name, *uid, *rv, *node, *gpus, *mig; /* copies, in the job */
    bool annotate; /* false: annotated already (resumed after a rebuild, or waiting) */
    bool bind;     /* false: annotated only, its node's slot being taken (sched_slot.c) */
    bool check;    /* only read back: maybe bound (BO_UNSURE before) */
    bool phase;    /* gpuplane.io/phase written: it asks a GPU (gp_ks_asks_gpu) */
    /* keys the pod carries that this decision does not write (copied from
     * a running pod, or left by a decision taken back): removed by the
     * patch (null), which a Binding cannot do, so never a plain job */
    bool drop_phase, drop_mig;
    /* a gang's member past the point of no return (its gang's decision
     * written and a member bound, or maybe bound): a failure that shows it
     * not bound keeps it (BO_KEPT), never takes it back */
    bool keep;
    const char *group; /* "ns/name" of its PodGroup; "" for none */
    /* the result, written by whoever runs the job */
    enum bind_outcome out;
    long patch_st, bind_st; /* -1: not sent */
    bool unknown;           /* a clearing got no answer: the annotations may remain */
    bool unbound;           /* read back not bound anywhere */
    char rv_now[64];        /* the version it has: its patch's once answered 200 (job_run) */
    json_t *got;            /* the pod read back after a Binding without an answer */
    double bind_s;          /* the patch's start to the Binding's answer */
};

struct bind_job {
    struct bind_job *next;
    unsigned events; /* Events created (or queued: gp_kube_sched_set_events) */
    size_t n;
    struct bind_member m[];
};

/* Who runs a job: a client and what the Events need. */
struct binder {
    struct gp_kube_sched *s; /* only its opts, leader flag and Event counter are read */
    struct gp_kube_client *c;
    struct gp_ks_pool *pool;
    pthread_t th;
};

struct gp_ks_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, done_cv;
    struct bind_job *todo, *todo_tail, *done, *done_tail;
    size_t ntodo; /* jobs in todo */
    bool stop;
    struct binder *b;
    size_t nb;
    void (*wake)(void *);
    void *wake_ctx;
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Leading, and the Lease's renew deadline not passed (sched.h
 * gp_kube_sched_set_leader_until): a binder writes nothing after it even
 * while the scheduling thread still waits on a renewal. */
static bool leading(const struct gp_kube_sched *s)
{
    return gp_ks_leading(s);
}

/* --- a job, run by a binder or the scheduling thread -------------------- */

static void path_of(const struct bind_member *m, const char *sub, char *buf, size_t n)
{
    const char *v[] = {"/api/v1/namespaces/", m->ns, "/pods/", m->name, sub};
    gp_kube_str_join(buf, n, v, 5);
}

/* Appends s as a JSON string to *p, escaped as jansson's json_dumps
 * escapes it (quote, backslash, \b \f \n \r \t; other control characters \u00XX;
 * everything else as it is): the bodies below are the bytes json_pack and
 * json_dumps made, without building a tree for a fixed shape. *p has room
 * for 6 bytes per byte of s and 2 more. */
static void put_str(char **p, const char *s)
{
    char *o = *p;
    *o++ = '"';
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        static const char hex[] = "0123456789ABCDEF";
        const char *esc = *c == '"'    ? "\\\""
                          : *c == '\\' ? "\\\\"
                          : *c == '\b' ? "\\b"
                          : *c == '\f' ? "\\f"
                          : *c == '\n' ? "\\n"
                          : *c == '\r' ? "\\r"
                          : *c == '\t' ? "\\t"
                                       : NULL;
        if (esc) {
            *o++ = esc[0];
            *o++ = esc[1];
        } else if (*c < 0x20) {
            memcpy(o, "\\u00", 4);
            o[4] = hex[*c >> 4];
            o[5] = hex[*c & 15];
            o += 6;
        } else {
            *o++ = (char)*c;
        }
    }
    *o++ = '"';
    *p = o;
}

static void put_raw(char **p, const char *s)
{
    size_t n = strlen(s);
    memcpy(*p, s, n);
    *p += n;
}

/* A body of up to n strings and the fixed text between them: room for all. */
static char *body_alloc(const char *const *v, size_t n)
{
    size_t need = 512; /* the fixed text of the longest body (an annotated Binding) and more */
    for (size_t i = 0; i < n; i++)
        need += 6 * strlen(v[i]) + 2;
    return malloc(need);
}

/* What a request with a JSON body came to (err and r as gp_kube_request
 * gives them; r freed): its status (0: no answer); the answer parsed into
 * *ans only when the status is not `fast` (a 201 Binding's Status is not
 * read), and, with rv, the answer's metadata.resourceVersion read from its
 * text (gp_kube_scan_rv; the whole parsed when the scan cannot say). */
static long lean_take(enum gp_err err, struct gp_kube_response *r, long fast, char *rv, size_t rvn,
                      json_t **ans)
{
    *ans = NULL;
    if (err != GP_OK)
        return 0;
    long st = r->status;
    int scan = rv ? gp_kube_scan_rv(r->body, r->len, rv, rvn) : -1;
    if (scan == 0)
        rv[0] = '\0';
    if (st != fast || (rv && scan < 0)) {
        *ans = json_loadb(r->body, r->len, 0, NULL);
        const char *v = rv ? gp_kube_meta(*ans, "resourceVersion") : NULL;
        if (rv)
            gp_kube_str_copy(rv, rvn, v ? v : "");
    }
    gp_kube_response_free(r);
    return st;
}

/* A request with a JSON body (text, freed), read by lean_take. */
static long send_lean(struct gp_kube_client *c, const char *method, const char *path, char *text,
                      const char *ctype, long fast, char *rv, size_t rvn, json_t **ans)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    enum gp_err err = text ? gp_kube_request(c, method, path, text, ctype, &r, &d) : GP_ENOMEM;
    free(text);
    return lean_take(err, &r, fast, rv, rvn, ans);
}

/* The decision's annotations as a JSON member, "annotations":{...}
 * (DESIGN.md section 7): the node, the devices, the phase for a pod that
 * asks a GPU (a pod asking none is never marked by an Allocate:
 * sched_slot.c) and the MIG slices. */
static void put_annotations(char **p, const struct bind_member *m)
{
    put_raw(p, "\"annotations\":{\"" GP_KUBE_ANN_NODE "\":");
    put_str(p, m->node);
    put_raw(p, ",\"" GP_KUBE_ANN_GPUS "\":");
    put_str(p, m->gpus);
    if (m->phase)
        put_raw(p, ",\"" GP_KUBE_ANN_PHASE "\":\"allocating\"");
    if (m->mig[0]) {
        put_raw(p, ",\"" GP_KUBE_ANN_MIG "\":");
        put_str(p, m->mig);
    }
    if (m->drop_phase) /* (a merge patch's null removes a key: RFC 7386) */
        put_raw(p, ",\"" GP_KUBE_ANN_PHASE "\":null");
    if (m->drop_mig)
        put_raw(p, ",\"" GP_KUBE_ANN_MIG "\":null");
    put_raw(p, "}");
}

/* The annotation patch's body (malloc'd; NULL: out of memory). */
static char *annotate_text(const struct bind_member *m)
{
    const char *v[] = {m->rv, m->node, m->gpus, m->mig};
    char *body = body_alloc(v, 4), *p = body;
    if (body) { /* {"metadata":{"resourceVersion":RV,"annotations":{...}}} */
        put_raw(&p, "{\"metadata\":{\"resourceVersion\":");
        put_str(&p, m->rv);
        put_raw(&p, ",");
        put_annotations(&p, m);
        put_raw(&p, "}}");
        *p = '\0';
    }
    return body;
}

/* The patch's status as annotate says it, from its answer's version. */
static long annotate_take(long st, const char *new_rv, json_t *ans, char *rv, size_t rvn)
{
    if (st == 200 && new_rv[0])
        gp_kube_str_copy(rv, rvn, new_rv);
    else if (st == 200)
        st = 0; /* an answer without a version: as good as none */
    json_decref(ans);
    return st;
}

/* The annotation patch: 200 and the new resourceVersion in rv. */
static long annotate(struct gp_kube_client *c, struct bind_member *m, char *rv, size_t rvn)
{
    char path[600];
    path_of(m, "", path, sizeof path);
    json_t *ans;
    char new_rv[64];
    long st = send_lean(c, "PATCH", path, annotate_text(m), "application/merge-patch+json", 200,
                        new_rv, sizeof new_rv, &ans);
    return annotate_take(st, new_rv, ans, rv, rvn);
}

static const char *status_message(const json_t *st)
{
    const char *m = json_string_value(json_object_get(st, "message"));
    return m ? m : "no answer";
}

/* The pod read back after a Binding that may have gone through: bound at
 * m->node (BO_BOUND), bound elsewhere (BO_FAILED, its annotations left:
 * never cleared on a pod that may be bound), not bound (BO_FAILED, its
 * annotations cleared with the version read as the precondition, so that
 * a Binding landing meanwhile keeps them), gone or another pod of the
 * name (BO_GONE), or not readable (BO_UNSURE: left as it is, asked
 * again after a back-off). */
static void settle(struct binder *b, struct bind_member *m)
{
    char get[600];
    path_of(m, "", get, sizeof get);
    json_t *now;
    long gs = gp_ks_send(b->c, "GET", get, NULL, NULL, &now);
    const char *uid = gp_kube_meta(now, "uid");
    if (gs == 404 || (gs == 200 && uid && strcmp(uid, m->uid) != 0)) {
        json_decref(now);
        m->out = BO_GONE;
        return;
    }
    if (gs != 200 || !now) {
        json_decref(now);
        m->out = BO_UNSURE;
        return;
    }
    m->got = now;
    const char *nn = json_string_value(json_object_get(json_object_get(now, "spec"), "nodeName"));
    if (nn && strcmp(nn, m->node) == 0) {
        m->out = BO_BOUND;
        return;
    }
    m->out = BO_FAILED;
    if (!nn || !nn[0]) {
        m->unbound = true;
        /* a gang's member kept (its annotations still naming its node) */
        json_t *ann = json_object_get(json_object_get(now, "metadata"), "annotations");
        const char *an = json_string_value(json_object_get(ann, GP_KUBE_ANN_NODE));
        if (m->keep && an && strcmp(an, m->node) == 0) {
            m->out = BO_KEPT;
            return;
        }
        if (an || json_object_get(ann, GP_KUBE_ANN_GPUS)) /* (a Binding carrying them wrote
                                                           * them with the node or not at all) */
            m->unknown = !gp_ks_clear_annotations(b->c, m->ns, m->name,
                                                  gp_kube_meta(now, "resourceVersion"));
    }
}

/* The Binding's body (malloc'd; NULL: out of memory), with the decision's
 * annotations when `annotated` (the one write of a plain job: jobs_run). */
static char *binding_text(const struct bind_member *m, const char *rv, bool annotated)
{
    const char *v[] = {m->name, m->ns, m->uid, rv, m->node, m->node, m->gpus, m->mig};
    char *body = body_alloc(v, annotated ? 8 : 5), *p = body;
    if (body) {
        put_raw(&p, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":");
        put_str(&p, m->name);
        put_raw(&p, ",\"namespace\":");
        put_str(&p, m->ns);
        put_raw(&p, ",\"uid\":");
        put_str(&p, m->uid);
        put_raw(&p, ",\"resourceVersion\":");
        put_str(&p, rv);
        if (annotated) {
            put_raw(&p, ",");
            put_annotations(&p, m);
        }
        put_raw(&p, "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
        put_str(&p, m->node);
        put_raw(&p, "}}");
        *p = '\0';
    }
    return body;
}

/* The Binding. Only a refusal (a 4xx but 409 and 429) proves that it did
 * not go through: no answer, a 5xx or 429 (the client retries a POST on
 * those, and an attempt before may have been applied) and a 409 (what
 * such a retry gets) have the pod read back (settle). A refused one is
 * taken back, its annotations cleared from the version it was bound with
 * when a patch wrote them (`patched`); a Binding that carried them is
 * refused whole, and its 404 says the pod is gone (the API server's
 * GuaranteedUpdate finds no pod: pkg/registry/core/pod/storage/storage.go
 * setPodHostAndAnnotations). What the Binding's answer (m->bind_st, ans
 * taken) makes of m. */
static void bind_take(struct binder *b, struct bind_job *j, struct bind_member *m, const char *rv,
                      bool patched, json_t *ans)
{
    const struct gp_kube_sched_opts *o = &b->s->o;
    if (m->bind_st == 201) {
        json_decref(ans);
        m->out = BO_BOUND;
        if (o->bind_events) {
            char note[700];
            snprintf(note, sizeof note, "Successfully assigned %s to %s", m->key, m->node);
            j->events += gp_ks_event_send(b->s, b->c, "Pod", m->ns, m->name, m->uid, "Normal",
                                          "Scheduled", "Binding", note);
        }
        return;
    }
    long st = m->bind_st;
    bool refused = st >= 400 && st < 500 && st != 409 && st != 429;
    if (refused && !patched && st == 404) {
        m->out = BO_GONE;
    } else if (refused) {
        m->out = m->keep ? BO_KEPT : BO_FAILED;
        m->unbound = true;
        if (!m->keep && patched)
            m->unknown = !gp_ks_clear_annotations(b->c, m->ns, m->name, rv);
    } else {
        settle(b, m);
    }
    if ((m->out == BO_FAILED || m->out == BO_KEPT) && st != 0) {
        char note[1200];
        if (m->out == BO_KEPT)
            snprintf(note, sizeof note,
                     "Binding rejected: %s; a member of gang %s, whose members are bound: its "
                     "GPUs on %s stay booked and its Binding is retried",
                     status_message(ans), m->group, m->node);
        else
            snprintf(note, sizeof note, "Binding rejected: %s", status_message(ans));
        j->events += gp_ks_event_send(b->s, b->c, "Pod", m->ns, m->name, m->uid, "Warning",
                                      "FailedScheduling", "Scheduling", note);
    }
    json_decref(ans);
}

/* A gang's job whose member i was shown not bound before any member was
 * on a node: every other member taken back too (their annotations
 * cleared), so that the gang is bound all or none. */
static void job_back(struct binder *b, struct bind_job *j, size_t i)
{
    for (size_t e = 0; e < j->n; e++) {
        struct bind_member *m = &j->m[e];
        if (e == i || (e < i && m->out != BO_ANNOTATED))
            continue;
        m->out = BO_FAILED;
        if (m->patch_st == 200 || m->patch_st == 0 || !m->annotate)
            m->unknown = !gp_ks_clear_annotations(b->c, m->ns, m->name, NULL);
    }
}

static void bind(struct binder *b, struct bind_job *j, struct bind_member *m, const char *rv)
{
    char path[600];
    path_of(m, "/binding", path, sizeof path);
    json_t *ans;
    m->bind_st = send_lean(b->c, "POST", path, binding_text(m, rv, false), "application/json", 201,
                           NULL, 0, &ans);
    bind_take(b, j, m, rv, true, ans);
}

/* A job: every member annotated, then (all written) every member bound;
 * one annotation refused takes every member back, the written ones
 * cleared first. A gang's members are bound in turn: one shown not bound
 * before any member is on a node takes them all back (job_back); once one
 * is (or may be) on its node, a member shown not bound is kept (BO_KEPT:
 * a bound pod cannot be unbound, so the gang goes forward, never back). A
 * member that is kept already (keep) is never taken back by a failure
 * that shows it not bound, its own annotation patch's included. */
static void job_run(struct binder *b, struct bind_job *j)
{
    size_t failed = j->n;
    double t0 = mono_s();
    for (size_t i = 0; i < j->n; i++) {
        struct bind_member *m = &j->m[i];
        gp_kube_str_copy(m->rv_now, sizeof m->rv_now, m->rv);
        m->patch_st = m->bind_st = -1;
        if (failed < j->n || !m->annotate || m->check)
            continue;
        if (!leading(b->s)) {
            failed = i;
            break;
        }
        if (!m->rv[0]) { /* no version to condition it on: never sent without (refused) */
            m->patch_st = 422;
            failed = i;
            break;
        }
        m->patch_st = annotate(b->c, m, m->rv_now, sizeof m->rv_now);
        if (m->patch_st != 200)
            failed = i;
    }
    bool placed = false; /* a member bound, or maybe bound: the gang is on its nodes */
    for (size_t i = 0; i < j->n; i++) {
        struct bind_member *m = &j->m[i];
        if (!leading(b->s)) {
            m->out = BO_ABANDONED; /* half-finished: a leader's rebuild sees to it */
        } else if (failed < j->n && m->keep && !(i == failed && m->patch_st == 404)) {
            m->out = BO_KEPT; /* (a job of one member: a kept one is never taken back) */
        } else if (failed < j->n) {
            m->out = i == failed && m->patch_st == 404 ? BO_GONE : BO_FAILED;
            /* cleared where it was (or may have been) written */
            if (m->out == BO_FAILED && (m->patch_st == 200 || m->patch_st == 0 || !m->annotate))
                m->unknown = !gp_ks_clear_annotations(b->c, m->ns, m->name, NULL);
        } else if (m->check) {
            settle(b, m);
        } else if (!m->bind) {
            m->out = BO_ANNOTATED;
        } else {
            m->keep = m->keep || placed;
            bind(b, j, m, m->rv_now);
            m->bind_s = mono_s() - t0;
            placed = placed || m->out == BO_BOUND || m->out == BO_UNSURE ||
                     (m->out == BO_FAILED && !m->unbound); /* (bound elsewhere) */
            if (j->n > 1 && !placed && m->out == BO_FAILED && m->unbound) {
                job_back(b, j, i);
                break;
            }
        }
    }
}

/* A job of one pod that is annotated then bound now, not a kept gang
 * member, with no key of ours to remove (most are): one of a batch. */
static bool job_plain(const struct bind_job *j)
{
    const struct bind_member *m = &j->m[0];
    return j->n == 1 && m->annotate && m->bind && !m->check && !m->keep && !m->drop_phase &&
           !m->drop_mig;
}

/* Plain jobs js[0..k) side by side on one connection, each one write:
 * its Binding carrying the decision's annotations, conditioned on the uid
 * and the resourceVersion the decision was made on. The API server applies
 * a Binding's annotations with the node in one update, or neither
 * (pkg/registry/core/pod/storage/storage.go BindingREST.Create,
 * setPodHostAndAnnotations: its preconditions are the Binding's uid and
 * resourceVersion, its annotations merged into the pod's), so the record
 * is as durable as the patch's and never half-finished (annotated, not
 * bound): a stale version is refused (409) and nothing was written. The
 * Bindings are pipelined; each answer is taken as bind_take takes it. */
static void jobs_run(struct binder *b, struct bind_job *const *js, size_t k)
{
    char paths[GP_KUBE_BATCH_MAX][600];
    char *texts[GP_KUBE_BATCH_MAX];
    struct gp_kube_call calls[GP_KUBE_BATCH_MAX];
    size_t who[GP_KUBE_BATCH_MAX], nc = 0;
    double t0 = mono_s();
    bool lead = leading(b->s);
    for (size_t i = 0; i < k; i++) {
        struct bind_member *m = &js[i]->m[0];
        gp_kube_str_copy(m->rv_now, sizeof m->rv_now, m->rv);
        m->patch_st = m->bind_st = -1;
        if (!lead) {
            m->out = BO_ABANDONED; /* nothing written: a leader decides it anew */
            continue;
        }
        if (!m->rv[0]) { /* never written without its precondition (refused) */
            m->patch_st = 422;
            m->out = BO_FAILED;
            continue;
        }
        path_of(m, "/binding", paths[i], sizeof paths[i]);
        if (!(texts[nc] = binding_text(m, m->rv, true))) {
            m->bind_st = 0; /* out of memory: as no answer (send_lean) */
            bind_take(b, js[i], m, m->rv, false, NULL);
            m->bind_s = mono_s() - t0;
            continue;
        }
        calls[nc] = (struct gp_kube_call){.method = "POST",
                                          .path = paths[i],
                                          .body = texts[nc],
                                          .content_type = "application/json"};
        who[nc++] = i;
    }
    gp_kube_request_many(b->c, calls, nc);
    for (size_t c = 0; c < nc; c++) {
        size_t i = who[c];
        struct bind_member *m = &js[i]->m[0];
        json_t *ans;
        m->bind_st = lean_take(calls[c].err, &calls[c].r, 201, NULL, 0, &ans);
        free(texts[c]);
        bind_take(b, js[i], m, m->rv, false, ans);
        m->bind_s = mono_s() - t0;
    }
}

/* --- the pool ----------------------------------------------------------- */

/* A binder takes its share of the jobs waiting (at most a batch): the
 * plain ones run as a batch (jobs_run), the others one by one. */
static void *binder_main(void *arg)
{
    struct binder *b = arg;
    struct gp_ks_pool *q = b->pool;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->todo && !q->stop)
            pthread_cond_wait(&q->work, &q->mu);
        if (q->stop)
            break;
        size_t nb = q->nb ? q->nb : 1, share = (q->ntodo + nb - 1) / nb, k = 0, np = 0;
        if (share > GP_KUBE_BATCH_MAX)
            share = GP_KUBE_BATCH_MAX;
        struct bind_job *js[GP_KUBE_BATCH_MAX], *plain[GP_KUBE_BATCH_MAX];
        while (q->todo && k < share) {
            struct bind_job *j = q->todo;
            q->todo = j->next;
            q->ntodo--;
            js[k++] = j;
        }
        if (!q->todo)
            q->todo_tail = NULL;
        pthread_mutex_unlock(&q->mu);
        for (size_t i = 0; i < k; i++)
            if (job_plain(js[i]))
                plain[np++] = js[i];
            else
                job_run(b, js[i]);
        if (np > 0)
            jobs_run(b, plain, np);
        pthread_mutex_lock(&q->mu);
        bool first = !q->done; /* results waiting: the scheduling thread was woken for them */
        for (size_t i = 0; i < k; i++) {
            js[i]->next = NULL;
            if (q->done_tail)
                q->done_tail->next = js[i];
            else
                q->done = js[i];
            q->done_tail = js[i];
        }
        if (first)
            pthread_cond_broadcast(&q->done_cv);
        if (first && q->wake) {
            pthread_mutex_unlock(&q->mu);
            q->wake(q->wake_ctx);
            pthread_mutex_lock(&q->mu);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

enum gp_err gp_kube_sched_start_binders(struct gp_kube_sched *s, struct gp_kube_client *const *cs,
                                        size_t n, void (*wake)(void *), void *wake_ctx,
                                        struct gp_diag *d)
{
    if (s->pool || n == 0)
        return GP_OK;
    struct gp_ks_pool *q = calloc(1, sizeof *q);
    struct binder *b = calloc(n, sizeof *b);
    if (!q || !b) {
        free(q);
        free(b);
        return gp_diag_set(d, GP_ENOMEM, "out of memory (binders)");
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->done_cv, NULL);
    q->b = b;
    q->wake = wake;
    q->wake_ctx = wake_ctx;
    s->pool = q;
    for (size_t i = 0; i < n; i++) {
        b[i] = (struct binder){s, cs[i], q, 0};
        if (pthread_create(&b[i].th, NULL, binder_main, &b[i]) != 0) {
            gp_kube_sched_stop_binders(s);
            return gp_diag_set(d, GP_ENOMEM, "cannot start binder thread %zu", i + 1);
        }
        q->nb++;
    }
    return GP_OK;
}

static void job_free(struct bind_job *j)
{
    for (size_t i = 0; i < j->n; i++)
        json_decref(j->m[i].got);
    free(j);
}

/* A pod's record goes while its job runs: the result finds no one. */
void gp_ks_bind_orphan(struct spod *p)
{
    struct bind_job *j = p->job;
    for (size_t i = 0; j && i < j->n; i++)
        if (j->m[i].p == p)
            j->m[i].p = NULL;
    p->job = NULL;
}

void gp_kube_sched_stop_binders(struct gp_kube_sched *s)
{
    struct gp_ks_pool *q = s->pool;
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->mu);
    for (size_t i = 0; i < q->nb; i++)
        pthread_join(q->b[i].th, NULL);
    s->pool = NULL;
    /* jobs never run and results never applied: their pods' decisions are
     * left as they are (a leader's rebuild sees to them) */
    struct bind_job *lists[2] = {q->todo, q->done};
    for (int l = 0; l < 2; l++)
        for (struct bind_job *j = lists[l], *next; j; j = next) {
            next = j->next;
            for (size_t i = 0; i < j->n; i++)
                if (j->m[i].p) {
                    j->m[i].p->job = NULL;
                    j->m[i].p->binding = NULL;
                    gp_ks_slot_update(s, j->m[i].p, false);
                }
            s->in_flight--;
            job_free(j);
        }
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->done_cv);
    free(q->b);
    free(q);
}

/* --- results, on the scheduling thread ----------------------------------- */

static void apply_member(struct gp_kube_sched *s, struct bind_member *m, size_t *bound)
{
    struct spod *p = m->p;
    if (m->patch_st == 409)
        s->st.patch_conflicts++;
    if (m->bind_st >= 0 && m->bind_st != 201) {
        long st = m->bind_st;
        s->st.bind_failures++;
        s->st.bind_conflicts += st == 409;
        s->st.bind_rejected += st >= 400 && st < 500 && st != 409 && st != 429;
        s->st.bind_errors += st == 0 || st == 429 || st >= 500;
    }
    if (m->out == BO_BOUND) {
        s->st.binds++;
        (*bound)++;
        if (s->km && !m->check)
            gp_metrics_observe(s->km->bind_s, m->bind_s);
    }
    if (m->unknown)
        s->dirty = true; /* annotations may remain: the state comes from the API again */
    if (!p)
        return;
    p->job = NULL;
    p->rebind_at = 0;
    struct snode *at = p->binding ? p->binding : gp_ks_node_get(s, m->node, false);
    p->binding = NULL;
    /* a patch answered 200 proves the pod unbound then; a Binding that
     * went (or may have gone) through holds its node's slot until the API
     * shows the pod there (sched_slot.c) */
    if (m->patch_st == 200 || m->unbound)
        p->bound_to = NULL;
    if (m->out == BO_BOUND || m->out == BO_UNSURE)
        p->bound_to = at;
    /* the pod read back, when the informer brought nothing newer since
     * the job was made (else it is the older one; and once cleared, the
     * clearing is newer: the informer brings both) */
    if (m->got && !m->unbound && p->info.rv && strcmp(p->info.rv, m->rv) == 0)
        gp_kube_sched_pod_change(GP_KUBE_MODIFIED, m->got, NULL, s);
    if (p->st != SP_ASSUMED) { /* it changed meanwhile (deleted, ended, bound elsewhere) */
        gp_ks_slot_update(s, p, false);
        return;
    }
    switch (m->out) {
    case BO_BOUND:
        p->st = SP_BOUND;
        p->attempts = 0;
        p->resume_rv[0] = '\0';
        break;
    case BO_ANNOTATED: /* its decision is durable: bound once its node's slot frees */
        p->resume = true;
        gp_kube_str_copy(p->resume_rv, sizeof p->resume_rv, m->rv_now);
        gp_ks_slot_wait(s, p);
        break;
    case BO_UNSURE: /* kept: its GPUs stay booked and its node's slot held */
        p->attempts++;
        p->recheck_at = s->now_s + gp_ks_backoff_s(s, p->attempts);
        s->maybe_resume = s->maybe_recheck = true;
        break;
    case BO_KEPT: /* a gang's member: its GPUs stay booked (its siblings hold theirs) and its
                   * annotations stay; its Binding tried again after a back-off, as kube-
                   * scheduler retries a pod, until it binds, is deleted or its node goes
                   * (a rebuild then decides it anew: sched.c) */
        s->st.gang_kept++;
        p->attempts++;
        p->rebind_at = s->now_s + gp_ks_backoff_s(s, p->attempts);
        p->resume_rv[0] = '\0';
        s->maybe_resume = s->maybe_recheck = true;
        break;
    case BO_FAILED:
        gp_ks_release(s, p);
        break;
    case BO_GONE: /* its DELETED event follows */
        gp_ks_engine_drop(s, p);
        p->st = SP_DONE;
        break;
    case BO_ABANDONED:
        gp_ks_engine_drop(s, p);
        p->st = SP_BACKOFF;
        s->maybe_backoff = true;
        p->retry_at = s->now_s;
        s->dirty = true;
        gp_ks_audit_pod(s, p, false);
        break;
    }
    gp_ks_slot_update(s, p, false);
}

static void apply(struct gp_kube_sched *s, struct bind_job *j, size_t *bound)
{
    s->st.events += j->events;
    for (size_t i = 0; i < j->n; i++)
        apply_member(s, &j->m[i], bound);
    job_free(j);
    s->in_flight--;
}

void gp_ks_bind_collect(struct gp_kube_sched *s, bool wait_all, size_t *bound)
{
    struct gp_ks_pool *q = s->pool;
    if (!q)
        return;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (wait_all && !q->done && s->in_flight > 0)
            pthread_cond_wait(&q->done_cv, &q->mu);
        struct bind_job *j = q->done;
        q->done = q->done_tail = NULL;
        pthread_mutex_unlock(&q->mu);
        if (!j)
            return;
        for (struct bind_job *next; j; j = next) {
            next = j->next;
            apply(s, j, bound);
        }
        if (!wait_all || s->in_flight == 0)
            return;
    }
}

bool gp_kube_sched_results_ready(struct gp_kube_sched *s)
{
    struct gp_ks_pool *q = s->pool;
    if (!q)
        return false;
    pthread_mutex_lock(&q->mu);
    bool ready = q->done != NULL;
    pthread_mutex_unlock(&q->mu);
    return ready;
}

/* --- dispatch ------------------------------------------------------------ */

static const char *put(char **cur, const char *v)
{
    size_t n = strlen(v) + 1;
    memcpy(*cur, v, n);
    const char *r = *cur;
    *cur += n;
    return r;
}

/* The job of pods m[0..k) (all ASSUMED, their engine picks set), with
 * copies of what its requests need. */
struct member_text {
    char gpus[64], mig[128], group[300];
    const char *node;
};

static struct bind_job *job_make(struct gp_kube_sched *s, struct spod *const *m, size_t k,
                                 const bool *bind_now)
{
    /* (a gang's members all in one job, whatever their number: R5) */
    struct member_text one, *tx = k == 1 ? &one : malloc(k * sizeof *tx);
    if (!tx)
        return NULL;
    size_t bytes = 0;
    for (size_t i = 0; i < k; i++) {
        const struct spod *p = m[i];
        const struct gp_node *nd = gp_engine_node(s->e, p->node);
        tx[i].node = nd->spec.name;
        struct gp_pick named; /* in the node's GPU indexes (sched_mig.c) */
        gp_ks_pick_to_node(s, p->node, &p->pick, &named);
        gp_kube_pick_format(&named, tx[i].gpus, sizeof tx[i].gpus);
        gp_kube_mig_format(&named, nd->mig_model >= 0 ? &gp_mig_models[nd->mig_model] : NULL,
                           tx[i].mig, sizeof tx[i].mig);
        const char *rv = p->resume_rv[0] ? p->resume_rv : p->info.rv;
        const char *gv[] = {p->info.group ? p->info.ns : "", p->info.group ? "/" : "",
                            p->info.group ? p->info.group : ""};
        gp_kube_str_join(tx[i].group, sizeof tx[i].group, gv, 3);
        bytes += strlen(p->key) + strlen(p->info.ns) + strlen(p->info.name) + strlen(p->info.uid) +
                 strlen(rv) + strlen(tx[i].node) + strlen(tx[i].gpus) + strlen(tx[i].mig) +
                 strlen(tx[i].group) + 9;
    }
    struct bind_job *j = calloc(1, sizeof *j + k * sizeof j->m[0] + bytes);
    if (!j) {
        if (tx != &one)
            free(tx);
        return NULL;
    }
    j->n = k;
    char *cur = (char *)&j->m[k];
    for (size_t i = 0; i < k; i++) {
        struct spod *p = m[i];
        struct bind_member *b = &j->m[i];
        b->p = p;
        b->key = put(&cur, p->key);
        b->ns = put(&cur, p->info.ns);
        b->name = put(&cur, p->info.name);
        b->uid = put(&cur, p->info.uid);
        b->rv = put(&cur, p->resume_rv[0] ? p->resume_rv : p->info.rv);
        b->node = put(&cur, tx[i].node);
        b->gpus = put(&cur, tx[i].gpus);
        b->mig = put(&cur, tx[i].mig);
        b->group = put(&cur, tx[i].group);
        b->check = p->recheck_at > 0;
        b->phase = gp_ks_asks_gpu(p);
        b->drop_phase = !b->phase && p->info.ann_phase;
        b->drop_mig = !tx[i].mig[0] && p->info.ann_mig;
        /* a kept gang member (BO_KEPT) is annotated again (the same values,
         * from the newest version seen), then bound */
        b->annotate = (!p->resume || p->rebind_at > 0) && !b->check;
        /* a gang's member annotated before (waiting, resumed, kept, or
         * maybe bound) is past the point of no return */
        b->keep = p->spec.group && (p->resume || p->rebind_at > 0 || b->check);
        b->bind = bind_now[i];
        if (p->resume && !b->check && b->bind)
            s->st.resumed++;
        p->resume = false;
        p->recheck_at = 0;
        p->rebind_at = 0;
        p->job = j;
    }
    if (tx != &one)
        free(tx);
    return j;
}

/* The job of m[0..k), now[i] and at[i] said (gp_ks_bind_dispatch),
 * handed to a binder or run here; false: out of memory. */
static bool job_dispatch(struct gp_kube_sched *s, struct spod *const *m, size_t k, const bool *now,
                         struct snode *const *at, size_t *bound)
{
    struct bind_job *j = job_make(s, m, k, now);
    if (!j)
        return false;
    for (size_t i = 0; i < k; i++) {
        m[i]->binding = now[i] && !j->m[i].check ? at[i] : NULL;
        gp_ks_slot_update(s, m[i], false);
    }
    s->in_flight++;
    struct gp_ks_pool *q = s->pool;
    if (!q) { /* no pool: run here, now */
        struct binder b = {s, s->c, NULL, 0};
        if (job_plain(j))
            jobs_run(&b, &j, 1);
        else
            job_run(&b, j);
        apply(s, j, bound);
        return true;
    }
    pthread_mutex_lock(&q->mu);
    if (q->todo_tail)
        q->todo_tail->next = j;
    else
        q->todo = j;
    q->todo_tail = j;
    q->ntodo++;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    return true;
}

void gp_ks_bind_dispatch(struct gp_kube_sched *s, struct spod *const *m, size_t k, size_t *bound)
{
    if (k == 0)
        return;
    /* a pod's claims provisioned for its node first, a gang's every
     * member's before any is written (volumes_bind.c) */
    if (gp_ks_volumes_bind_hold(s, m, k))
        return;
    /* which members are bound now: those whose node's slot is free, one
     * per node (a re-check only reads); a gang's members all in one job,
     * whatever their number (the review's R5) */
    bool now1, *now = k == 1 ? &now1 : malloc(k * sizeof *now);
    struct snode *at1, **at = k == 1 ? &at1 : malloc(k * sizeof *at);
    bool ok = now && at;
    for (size_t i = 0; ok && i < k; i++) {
        at[i] = gp_ks_slot_node(s, m[i]);
        bool taken = false;
        for (size_t e = 0; e < i && at[i]; e++)
            taken |= now[e] && at[e] == at[i];
        now[i] = m[i]->recheck_at > 0 || (!taken && gp_ks_slot_free(s, m[i]));
    }
    if (ok && k == 1 && !now[0]) /* waits, not annotated yet (or annotated before) */
        gp_ks_slot_wait(s, m[0]);
    else if (!ok || !job_dispatch(s, m, k, now, at, bound))
        for (size_t i = 0; i < k; i++) /* out of memory: taken back, tried after a back-off */
            gp_ks_release(s, m[i]);
    if (k > 1) {
        free(now);
        free(at);
    }
}
