/* sched.c - the scheduler's records of the API's Pods and Nodes, the
 * state machine a pod change drives (sched_internal.h, enum sp_state),
 * the engine kept in step, and the cycle. A pod the API shows bound is
 * placed in the engine, and the engine's whole state rebuilt from the API
 * (a restart, a new leader, a node that changed), by sched_rebuild.c. The
 * decisions are written by sched_cycle.c; the audit is audit.c; records
 * left unused are freed by sched_records.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/events.h"
#include "kube/sched_internal.h"

/* jansson's iterators and reference counts take non-const pointers; the
 * objects are only read (or their count kept) here. */
static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

void gp_kube_sched_opts_default(struct gp_kube_sched_opts *o)
{
    *o = (struct gp_kube_sched_opts){
        .scheduler_name = "gpuplane",
        .identity = "gpuplane",
        .policy = NULL,
        .backoff_initial_s = 1,
        .backoff_max_s = 10,
        .bind_events = true,
        .binders = 8,
        .seed = 1,
        .record_max_bytes = 256ull << 20,
        .allocating_timeout_s = 120,
        .bind_timeout_s = 600,
    };
}

/* kube-scheduler's pod back-off: initial, doubled per failure, capped. */
double gp_ks_backoff_s(const struct gp_kube_sched *s, unsigned attempts)
{
    double b = s->o.backoff_initial_s;
    for (unsigned i = 1; i < attempts && b < s->o.backoff_max_s; i++)
        b *= 2;
    return b < s->o.backoff_max_s ? b : s->o.backoff_max_s;
}

enum gp_err gp_kube_sched_new(struct gp_kube_client *c, const struct gp_kube_sched_opts *o,
                              struct gp_kube_sched **out, struct gp_diag *d)
{
    /* best-fit by default, as gpuplane sim */
    const struct gp_policy_ops *policy = gp_policy_find("best-fit");
    if (o->policy && !(policy = gp_policy_find(o->policy)))
        return gp_diag_set(d, GP_EUSAGE, "--policy: no policy \"%s\"", o->policy);
    struct gp_kube_sched *s = calloc(1, sizeof *s);
    if (!s)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    gp_arena_init(&s->spent);
    gp_idtab_init(&s->by_eng, sizeof(struct spod *), 6);
    s->c = c;
    s->o = *o;
    s->policy = policy;
    s->pod_index = json_object();
    s->node_index = json_object();
    s->group_index = json_object();
    s->group_wait = json_object();
    s->ns_index = json_object();
    s->dirty = true;
    if (o->record_path) {
        enum gp_err err = gp_evlog_open(o->record_path, o->record_max_bytes, o->scheduler_name,
                                        o->identity, &s->rec, d);
        if (err != GP_OK) {
            gp_kube_sched_free(s);
            return err;
        }
    }
    *out = s;
    return GP_OK;
}

/* A spec's strings the engine was given: the engine keeps borrowing them
 * in its request shapes (and a node's until the rebuild that follows its
 * change) after the pod or node left it, so they are kept in s->spent until
 * the engine itself is freed, never freed under it. */
static void spec_retire(struct gp_kube_sched *s, struct gp_arena *a)
{
    size_t block_size = a->block_size;
    if (s->e && a->head) {
        gp_arena_adopt(&s->spent, a);
        s->spent_specs++;
    } else
        gp_arena_free(a);
    gp_arena_init(a);
    a->block_size = block_size;
}

static void pod_free(struct gp_kube_sched *s, struct spod *p)
{
    gp_ks_volumes_forget(s, p);
    free(p->key);
    free(p->wait_group);
    json_decref(p->obj);
    spec_retire(s, &p->arena);
    free(p->last_message);
    free(p);
}

void gp_ks_node_free(struct gp_kube_sched *s, struct snode *n)
{
    free(n->name);
    json_decref(n->obj);
    spec_retire(s, &n->arena); /* the engine may borrow its spec until the next rebuild */
    free(n->book);
    free(n);
}

void gp_kube_sched_free(struct gp_kube_sched *s)
{
    if (!s)
        return;
    gp_kube_sched_stop_binders(s); /* no binder reads the opts or flags below then */
    gp_engine_free(s->e);          /* first: nothing borrows the specs below then */
    s->e = NULL;
    gp_evlog_close(s->rec);
    gp_arena_free(&s->spent);
    gp_kube_priorities_free(&s->prio);
    for (size_t i = 0; i < s->npods; i++)
        pod_free(s, s->pods[i]);
    for (size_t i = 0; i < s->nnodes; i++)
        gp_ks_node_free(s, s->nodes[i]); /* (no engine: its arena freed) */
    for (size_t i = 0; i < s->ngroups; i++)
        free(s->groups[i].key);
    free(s->groups);
    json_decref(s->group_index);
    json_decref(s->group_wait);
    json_decref(s->ns_index);
    for (size_t i = 0; i < s->nnss; i++) {
        free(s->nss[i]->pods);
        free(s->nss[i]->name);
        free(s->nss[i]);
    }
    free(s->nss);
    free(s->pods);
    free(s->nodes);
    free(s->kick);
    gp_idtab_free(&s->by_eng);
    free(s->dec);
    free(s->gang);
    json_decref(s->pod_index);
    json_decref(s->node_index);
    gp_ks_pdb_free(s);
    gp_ks_volumes_free(s);
    json_decref(s->namespaces);
    free(s);
}

struct spod *gp_ks_pod_find(struct gp_kube_sched *s, const char *key)
{
    json_t *i = json_object_get(s->pod_index, key);
    return i ? s->pods[json_integer_value(i)] : NULL;
}

static struct spod *pod_add(struct gp_kube_sched *s, const char *key)
{
    if (s->npods == s->cappods) {
        size_t cap = s->cappods ? s->cappods * 2 : 256;
        struct spod **v = realloc(s->pods, cap * sizeof *v);
        if (!v)
            return NULL;
        s->pods = v;
        s->cappods = cap;
    }
    struct spod *p = calloc(1, sizeof *p);
    if (!p || !(p->key = strdup(key))) {
        free(p);
        return NULL;
    }
    gp_arena_init(&p->arena);
    p->arena.block_size = 1024;
    p->eng = SP_NONE;
    p->node = SP_NONE;
    if (!gp_ks_ns_add(s, p)) {
        free(p->key);
        free(p);
        return NULL;
    }
    json_object_set_new(s->pod_index, key, json_integer((json_int_t)s->npods));
    s->pods[s->npods++] = p;
    return p;
}

static void pod_remove(struct gp_kube_sched *s, struct spod *p)
{
    gp_ks_bind_orphan(p); /* a bind still running for it finds no record */
    gp_ks_group_unwait(s, p);
    gp_ks_ns_remove(s, p);
    size_t i = (size_t)json_integer_value(json_object_get(s->pod_index, p->key));
    json_object_del(s->pod_index, p->key);
    s->pods[i] = s->pods[--s->npods];
    if (i < s->npods)
        json_object_set_new(s->pod_index, s->pods[i]->key, json_integer((json_int_t)i));
    pod_free(s, p);
}

struct snode *gp_ks_node_get(struct gp_kube_sched *s, const char *name, bool create)
{
    json_t *i = json_object_get(s->node_index, name);
    if (i)
        return s->nodes[json_integer_value(i)];
    if (!create)
        return NULL;
    if (s->nnodes == s->capnodes) {
        size_t cap = s->capnodes ? s->capnodes * 2 : 64;
        struct snode **v = realloc(s->nodes, cap * sizeof *v);
        if (!v)
            return NULL;
        s->nodes = v;
        s->capnodes = cap;
    }
    struct snode *n = calloc(1, sizeof *n);
    if (!n || !(n->name = strdup(name))) {
        free(n);
        return NULL;
    }
    gp_arena_init(&n->arena);
    n->arena.block_size = 2048;
    n->eng = n->eng_mig = SP_NONE;
    json_object_set_new(s->node_index, name, json_integer((json_int_t)s->nnodes));
    s->nodes[s->nnodes++] = n;
    return n;
}

static struct snode *node_of_eng(struct gp_kube_sched *s, uint32_t eng)
{
    const struct gp_node *n = gp_engine_node(s->e, eng);
    return n ? gp_ks_node_get(s, n->spec.name, false) : NULL;
}

/* --- the engine -------------------------------------------------------- */

/* The engine group of a gang member's PodGroup: GP_ESTATE while unknown. */
static enum gp_err pod_group(struct gp_kube_sched *s, struct spod *p)
{
    p->spec.group = 0;
    if (!p->info.group) {
        gp_ks_group_unwait(s, p); /* (its label gone) */
        return GP_OK;
    }
    char key[600];
    snprintf(key, sizeof key, "%s/%s", p->info.ns, p->info.group);
    json_t *i = json_object_get(s->group_index, key);
    if (!i) {
        gp_ks_group_wait(s, p, key); /* let in when it comes (gp_ks_group_admit) */
        return GP_ESTATE;
    }
    gp_ks_group_unwait(s, p);
    struct sgroup *g = &s->groups[json_integer_value(i)];
    if (!g->eng) {
        struct gp_group_spec gs = {.name = g->key, .min_member = g->min_member};
        enum gp_err err = gp_engine_group_add(s->e, &gs, &g->eng);
        gp_evlog_group_add(s->rec, &gs, err, g->eng);
        if (err != GP_OK)
            return err;
    }
    p->spec.group = g->eng;
    return GP_OK;
}

void gp_kube_sched_priority_change(enum gp_kube_event_type type, const json_t *obj,
                                   const json_t *old, void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    gp_kube_priorities_change(&s->prio, type, obj);
}

void gp_kube_sched_group_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                                void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    const char *ns = gp_kube_meta(obj, "namespace"), *name = gp_kube_meta(obj, "name");
    if (!name)
        return;
    json_t *mm = json_object_get(json_object_get(mut(obj), "spec"), "minMember");
    uint32_t min =
        json_is_integer(mm) && json_integer_value(mm) > 0 ? (uint32_t)json_integer_value(mm) : 1;
    char key[600];
    snprintf(key, sizeof key, "%s/%s", ns ? ns : "", name);
    json_t *i = json_object_get(s->group_index, key);
    if (type == GP_KUBE_DELETED) {
        /* a gang's members still count as one until they go: freed once
         * no pod names it (sched_records.c) */
        if (i) {
            gp_evlog_change(s->rec, s->now_s, "podgroup", "DELETED", key,
                            gp_kube_meta(obj, "resourceVersion"));
            s->groups[json_integer_value(i)].deleted = true;
            s->groups_gone = true;
        }
        return;
    }
    if (i) {
        struct sgroup *g = &s->groups[json_integer_value(i)];
        g->deleted = false; /* (made again before its record went) */
        if (g->min_member != min) {
            g->min_member = min;
            s->dirty = true;
        }
        return;
    }
    if (s->ngroups == s->capgroups) {
        size_t cap = s->capgroups ? s->capgroups * 2 : 16;
        struct sgroup *v = realloc(s->groups, cap * sizeof *v);
        if (!v)
            return;
        s->groups = v;
        s->capgroups = cap;
    }
    char *k = strdup(key);
    if (!k)
        return;
    s->groups[s->ngroups] = (struct sgroup){k, min, 0, false, false};
    json_object_set_new(s->group_index, key, json_integer((json_int_t)s->ngroups++));
    /* its members waited outside the engine until now: let in, as
     * scheduler-plugins' coscheduling has a PodGroup's Add move them back
     * to the active queue (pkg/coscheduling/coscheduling.go
     * EventsToRegister), not a rebuild (the review's R13); without an
     * engine yet the first rebuild brings them */
    if (s->e && !s->dirty)
        gp_ks_group_admit(s, key);
}

/* A pod into the engine; a gang member only once its PodGroup is known,
 * unless any_group (a pod already on a node counts whatever its gang). */
enum gp_err gp_ks_engine_add_any(struct gp_kube_sched *s, struct spod *p, bool any_group)
{
    uint32_t id;
    enum gp_err gerr = pod_group(s, p);
    if (gerr == GP_ESTATE && any_group)
        p->spec.group = 0;
    else if (gerr != GP_OK)
        return gerr;
    enum gp_err err = gp_engine_pod_add(s->e, &p->spec, s->now_s, &id);
    gp_evlog_pod_add(s->rec, &p->spec, s->now_s, err, id);
    if (err != GP_OK)
        return err;
    /* the record under the same id (ids are dense: one issued per pod the
     * engine took since the rebuild; any skipped is released at once) */
    struct spod **r = NULL;
    uint32_t mine = 0;
    while (s->by_eng.n <= id && (r = gp_idtab_add(&s->by_eng, &mine)) && mine != id)
        gp_idtab_release(&s->by_eng, mine);
    if (!r || mine != id) {
        gp_engine_pod_finished(s->e, id);
        gp_engine_pod_forget(s->e, id);
        gp_evlog_pod_finished(s->rec, id);
        gp_evlog_pod_forget(s->rec, id);
        return GP_ENOMEM;
    }
    *r = p;
    p->eng = id;
    gp_ks_pdb_enter(s, p); /* the PodDisruptionBudgets it counts against (pdb.c) */
    return GP_OK;
}

enum gp_err gp_ks_engine_add(struct gp_kube_sched *s, struct spod *p)
{
    /* a gated pod waits out of the queue, as kube-scheduler's SchedulingGates
     * PreEnqueue plugin keeps it (and the API server refuses its Binding:
     * pod/storage/storage.go setPodHostAndAnnotations); its MODIFIED event
     * without gates brings it in (gp_kube_sched_pod_change) */
    if (p->info.gated)
        return GP_ESTATE;
    return gp_ks_engine_add_any(s, p, false);
}

/* The pod leaves the engine (released if bound, dropped if pending). */
void gp_ks_engine_drop(struct gp_kube_sched *s, struct spod *p)
{
    if (s->e && p->eng != SP_NONE) {
        const struct gp_pod *ep = gp_engine_pod(s->e, p->eng);
        if (ep && ep->state != GP_POD_DONE) {
            gp_engine_pod_finished(s->e, p->eng);
            gp_evlog_pod_finished(s->rec, p->eng);
        }
        /* the engine frees its record (bounded by the pods alive); the
         * spec's strings stay in s->spent while its shapes may borrow them */
        if (ep) {
            gp_engine_pod_forget(s->e, p->eng);
            gp_evlog_pod_forget(s->rec, p->eng);
        }
        gp_idtab_release(&s->by_eng, p->eng);
    }
    p->eng = SP_NONE;
    p->node = SP_NONE;
    p->prov_at = 0; /* (out of the engine: no claim provisioned for its decision) */
    p->prov_rv = 0;
}

/* --- nodes ------------------------------------------------------------- */

static uint64_t fnv(const char *str, uint64_t h)
{
    for (; *str; str++)
        h = (h ^ (unsigned char)*str) * 1099511628211u;
    return h;
}

/* Labels documented as a timestamp re-stamped on a loop, which no
 * scheduling decision can sensibly read: NVIDIA GPU Feature Discovery's
 * nvidia.com/gfd.timestamp, rewritten on every labelling pass (its
 * --sleep-interval, 60 s by default; k8s-device-plugin's
 * docs/gpu-feature-discovery/README.md, "Catalog of Labels"). Left out
 * of node_print, so that such a pass does not rebuild the engine. Every
 * other label stays in: a nodeSelector or node affinity may name any. */
static const char *const volatile_labels[] = {"nvidia.com/gfd.timestamp"};

/* What the engine reads of a node, hashed: labels (but volatile_labels),
 * taints, allocatable, capacity, cordon and readiness (heartbeats change
 * none of it). */
static uint64_t node_print(const json_t *obj, bool schedulable)
{
    json_t *m = json_object_get(obj, "metadata"), *st = json_object_get(obj, "status");
    json_t *labels = json_object_get(m, "labels"), *own = NULL;
    for (size_t i = 0; i < sizeof volatile_labels / sizeof *volatile_labels; i++) {
        if (!json_object_get(labels, volatile_labels[i]))
            continue;
        if (!own && !(own = json_copy(labels))) /* shallow: the values stay shared */
            return 0;
        json_object_del(own, volatile_labels[i]);
    }
    json_t *v = json_pack("{s:O?,s:O?,s:O?,s:O?,s:b}", "labels", own ? own : labels, "taints",
                          json_object_get(json_object_get(obj, "spec"), "taints"), "allocatable",
                          json_object_get(st, "allocatable"), "capacity",
                          json_object_get(st, "capacity"), "schedulable", schedulable);
    json_decref(own);
    char *text = v ? json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    uint64_t h = text ? fnv(text, 1469598103934665603u) : 0;
    free(text);
    json_decref(v);
    return h;
}

void gp_kube_sched_node_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                               void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    const char *name = gp_kube_meta(obj, "name");
    if (!name)
        return;
    struct snode *n = gp_ks_node_get(s, name, type != GP_KUBE_DELETED);
    if (!n)
        return;
    if (type == GP_KUBE_DELETED) {
        gp_evlog_change(s->rec, s->now_s, "node", "DELETED", name,
                        gp_kube_meta(obj, "resourceVersion"));
        json_decref(n->obj);
        n->obj = NULL;
        n->agent = false;
        n->unread_said = false;
        s->dirty = true; /* its pods are gone or going; the engine forgets it */
        gp_ks_audit_node(s, n);
        s->nodes_gone = true; /* its record freed once its pods are gone (sched_records.c) */
        return;
    }
    struct gp_arena a;
    gp_arena_init(&a);
    a.block_size = 2048;
    struct gp_node_spec spec;
    struct gp_kube_node_info info;
    struct gp_diag d = {""};
    uint64_t csi_print = 0; /* its CSINode's limits (volumes_limits.c) */
    enum gp_err err = gp_kube_node_read(obj, &a, &spec, &info, &d);
    if (err == GP_OK && gp_ks_csi_node(s, name, &a, &spec, &csi_print) != GP_OK)
        err = gp_diag_set(&d, GP_ENOMEM, "out of memory (CSINode)");
    if (err != GP_OK) {
        gp_arena_free(&a);     /* kept as it was: its pods still count */
        if (!n->unread_said) { /* once a spell: a line and a Warning Event, as pod_read */
            n->unread_said = true;
            const char *then = n->obj ? "kept as it was last read" : "no pods go there";
            fprintf(stderr, "gpuplane schedule: %s; %s until it is readable\n", d.msg, then);
            char note[700];
            snprintf(note, sizeof note,
                     "gpuplane cannot read the node: %s; %s until it is readable", d.msg, then);
            gp_ks_event(s, "Node", "", name, gp_kube_meta(obj, "uid"), "Warning", "FailedToRead",
                        "Scheduling", note);
        }
        return;
    }
    n->unread_said = false;
    uint64_t print = node_print(obj, info.schedulable) ^ csi_print;
    bool known = n->obj != NULL, changed = print != n->print;
    bool agent = n->agent;
    json_decref(n->obj);
    n->obj = json_incref(mut(obj));
    n->agent = gp_ks_obj_agent(n->obj);
    if (agent != n->agent)
        gp_ks_slot_node_changed(s, n); /* sched_slot.c: its agent came or went */
    if (known && !changed) {
        gp_arena_free(&a);
    } else {
        gp_evlog_change(s->rec, s->now_s, "node", gp_kube_event_type_name(type), name,
                        gp_kube_meta(obj, "resourceVersion"));
        spec_retire(s, &n->arena);
        n->arena = a;
        n->spec = spec;
        n->model_mig = spec.gpu_model ? gp_mig_model_find(spec.gpu_model) : NULL;
        n->info = info;
        n->info.name = n->spec.name;
        n->print = print;
        if (!s->e || s->dirty || known || n->nbook > 0 || gp_ks_node_add(s, n) != GP_OK)
            s->dirty = true;
    }
    gp_ks_audit_node(s, n);
}

/* --- pods -------------------------------------------------------------- */

/* The record brought to obj: info re-read; the spec only while the pod is
 * not in the engine (the engine holds the spec it was given; a pod's spec
 * is immutable but for images, activeDeadlineSeconds, added tolerations
 * and terminationGracePeriodSeconds: Kubernetes' "Pod update and
 * replacement", none of which the engine reads). */
static void pod_read(struct gp_kube_sched *s, struct spod *p, const json_t *obj)
{
    json_t *was = p->obj; /* p->info is its info; held until the info is read again */
    p->obj = json_incref(mut(obj));
    if (p->eng != SP_NONE) { /* the spec would be thrown away: info alone */
        /* a spec or status the watch shared with the version before
         * (gp_kube_jload_reuse) is that version's value: its part of the
         * info kept, not read again */
        gp_kube_pod_info_reread(obj, was, &p->info);
        json_decref(was);
        p->ours = strcmp(p->info.scheduler_name, s->o.scheduler_name) == 0;
        return;
    }
    json_decref(was);
    struct gp_arena a;
    gp_arena_init(&a);
    a.block_size = 1024;
    struct gp_pod_spec spec;
    struct gp_diag d = {""};
    bool ok = gp_kube_pod_read(obj, &a, &spec, &p->info, &d) == GP_OK;
    if (ok) /* no spec.priority: its PriorityClass's, as admission gives it */
        gp_kube_priorities_resolve(&s->prio, obj, &spec.priority, &spec.preempt_never);
    p->ours = strcmp(p->info.scheduler_name, s->o.scheduler_name) == 0;
    if (ok && p->ours && !p->info.node_name && !p->info.rv[0])
        /* every decision is written conditioned on the pod's version (an
         * empty one would be no precondition at all: bind.c) */
        ok = gp_diag_set(&d, GP_EINVALID,
                         "metadata.resourceVersion: missing (the API server gives every object "
                         "one)") == GP_OK;
    if (ok && p->ours) /* its claims' conditions (volumes.c: docs/kube.md, "Volumes") */
        ok = gp_ks_volumes_apply(s, p, obj, &a, &spec, &d) == GP_OK;
    if (ok && gp_ks_csi_pod(s, obj, &p->info, &a, &spec) != GP_OK) /* every pod's CSI volumes */
        ok = gp_diag_set(&d, GP_ENOMEM, "out of memory (CSI volumes)") == GP_OK;
    spec_retire(s, &p->arena);
    p->arena = a;
    p->spec = spec;
    p->readable = ok;
    if (ok || p->info.ended) {
        p->unread_said = false;
    } else if (!p->unread_said) { /* once a spell: a line, and an Event on a pod of ours */
        p->unread_said = true;
        fprintf(stderr, "gpuplane schedule: pod %s: %s; %s\n", p->key, d.msg,
                p->info.node_name ? "its node takes no new pods until it is readable or ends"
                : p->ours         ? "not scheduled"
                                  : "not counted until it is bound");
        if (p->ours) {
            char note[600];
            snprintf(note, sizeof note, "gpuplane cannot read the pod: %s", d.msg);
            gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning",
                        "FailedScheduling", "Scheduling", note);
        }
    }
}

void gp_ks_pod_reread(struct gp_kube_sched *s, struct spod *p)
{
    if (!p->ours || p->info.node_name || (s->e && p->st != SP_WAITING && p->st != SP_BACKOFF))
        return; /* (before the first rebuild: the spec alone, which the rebuild takes) */
    if (!s->e) {
        json_t *obj = json_incref(p->obj);
        pod_read(s, p, obj);
        json_decref(obj);
        return;
    }
    bool waiting = p->st == SP_WAITING;
    gp_ks_engine_drop(s, p);           /* (a pod backing off is in no engine) */
    json_t *obj = json_incref(p->obj); /* pod_read lets go of p->obj first */
    pod_read(s, p, obj);
    json_decref(obj);
    if (!p->readable)
        p->st = SP_IGNORED;
    else if (waiting && gp_ks_engine_add(s, p) != GP_OK)
        p->st = SP_IGNORED;
}

/* The engine node(s) of n take no new pods (its pods stay). */
void gp_ks_node_drain(struct gp_kube_sched *s, const struct snode *n)
{
    uint32_t id[2] = {n->eng, n->eng_mig};
    for (int k = 0; k < 2; k++) {
        const struct gp_node *e = s->e && id[k] != SP_NONE ? gp_engine_node(s->e, id[k]) : NULL;
        if (e && e->state == GP_NODE_READY) {
            gp_engine_node_drain(s->e, id[k]);
            gp_evlog_node_drain(s->rec, id[k]);
        }
    }
}

/* A bound pod gpuplane cannot read (a request it refuses) holds what its
 * node gave it, which gpuplane does not know: the node takes no new pods
 * until the pod is readable again or ends (then a rebuild brings it
 * back), rather than be counted free (the audit's finding A5). */
static void pod_unreadable(struct gp_kube_sched *s, struct spod *p, bool gone)
{
    const struct gp_kube_pod_info *in = &p->info;
    struct snode *want = !gone && !p->readable && in->node_name && !in->ended
                             ? gp_ks_node_get(s, in->node_name, true)
                             : NULL;
    if (want == p->unread_on)
        return;
    if (p->unread_on && --p->unread_on->unread == 0)
        s->dirty = true; /* the rebuild makes it ready again */
    p->unread_on = want;
    if (want && want->unread++ == 0)
        gp_ks_node_drain(s, want);
}

/* The pods the API shows on node n that the engine left out for want of
 * room there (SP_UNCOUNTED: another scheduler bound one while gpuplane's
 * decision was written, a race only one of them wins at the kubelet),
 * placed again once a pod on n has freed what it held: an uncounted pod
 * really holds its GPUs, so they must not go to the next pod of ours (the
 * review's R11; kube-scheduler's cache counts every bound pod,
 * pkg/scheduler/internal/cache: AddPod whatever the node's room). */
static void node_recount(struct gp_kube_sched *s, struct snode *n)
{
    if (!n || !s->e)
        return;
    for (size_t i = 0; i < n->nbook; i++) {
        struct spod *q = n->book[i];
        if (q->st == SP_UNCOUNTED && q->readable && q->info.node_name && !q->info.ended &&
            strcmp(q->info.node_name, n->name) == 0)
            gp_ks_engine_place(s, q, n->name); /* counted when it fits now, else still uncounted */
    }
}

void gp_kube_sched_pod_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                              void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    struct gp_kube_ids id; /* the metadata walked once */
    gp_kube_meta_ids(json_object_get(obj, "metadata"), &id);
    const char *ns = id.ns, *name = id.name, *uid = id.uid;
    if (!name)
        return;
    char key[600];
    gp_kube_key_make(ns, name, key, sizeof key);
    struct spod *p = gp_ks_pod_find(s, key);
    gp_evlog_change(s->rec, s->now_s, "pod", gp_kube_event_type_name(type), key,
                    s->rec ? id.rv : NULL);
    if (p && p->booked && !p->booked->obj)
        s->nodes_gone = true; /* its node's record may be left unused (sched_records.c) */
    if (p && uid && strcmp(p->info.uid, uid) != 0 && type != GP_KUBE_DELETED) {
        gp_kube_sched_pod_change(GP_KUBE_DELETED, p->obj, NULL, s); /* a new pod, same name */
        p = NULL;
    }
    /* where it held engine room: freed below, that node's uncounted pods
     * are counted again (node_recount) */
    struct snode *held_on = p && p->eng != SP_NONE ? p->booked : NULL;
    if (type == GP_KUBE_DELETED) {
        if (!p)
            return;
        if (p->st == SP_EVICTED && p->preemptor && p->preemptor->victims > 0)
            p->preemptor->victims--;
        if (p->st == SP_EVICTED && s->nstopping > 0)
            s->nstopping--;
        if (p->victims > 0 || p->st == SP_PREEMPTING)
            for (size_t i = 0; i < s->npods; i++) /* a preemptor's victims forget it */
                if (s->pods[i]->preemptor == p)
                    s->pods[i]->preemptor = NULL;
        gp_ks_kept_gone(s, p);
        if (p->info.group)
            s->groups_gone = s->groups_gone || gp_ks_group_deleted(s, &p->info);
        gp_ks_engine_drop(s, p);
        gp_ks_audit_pod(s, p, true);
        gp_ks_slot_update(s, p, true);
        pod_unreadable(s, p, true);
        pod_remove(s, p);
        node_recount(s, held_on); /* (node records outlive a pod: sched_records.c) */
        return;
    }
    if (!p && !(p = pod_add(s, key)))
        return;
    pod_read(s, p, obj);
    pod_unreadable(s, p, false);
    gp_ks_pdb_mark(s, p); /* its labels may have changed (pdb.c) */
    const struct gp_kube_pod_info *in = &p->info;
    if (!s->e) { /* before the first rebuild: the rebuild places it */
        gp_ks_audit_pod(s, p, false);
        gp_ks_slot_update(s, p, false);
        return;
    }
    if (in->ended || (in->terminating && !in->node_name)) {
        /* ended (the kubelet writes the phase before the final delete):
         * its GPUs are free now, its preemptor waits for it no more */
        if (p->st == SP_EVICTED && p->preemptor && p->preemptor->victims > 0)
            p->preemptor->victims--;
        if (p->st == SP_EVICTED)
            p->preemptor = NULL;
        if (p->st == SP_EVICTED && s->nstopping > 0)
            s->nstopping--;
        gp_ks_kept_gone(s, p);
        gp_ks_engine_drop(s, p); /* it holds nothing now */
        p->st = SP_DONE;
    } else if (in->node_name) {
        switch (p->st) {
        case SP_BOUND:
        case SP_UNCOUNTED:
        case SP_EVICTED:
        case SP_DONE:
            break; /* a pod's node never changes */
        case SP_ASSUMED:
        case SP_PREEMPTING: {
            struct snode *n = node_of_eng(s, p->node);
            if (n && strcmp(n->name, in->node_name) == 0) {
                p->st = SP_BOUND; /* our Binding, seen */
                break;
            }
            /* bound elsewhere than the engine assumed (another replica, a
             * user): the API is right; the assumption goes */
            gp_ks_event(s, "Pod", in->ns, in->name, in->uid, "Warning", "NodeMismatch",
                        "Scheduling", "bound to another node than gpuplane chose");
            gp_ks_engine_drop(s, p);
            gp_ks_engine_place(s, p, in->node_name);
            break;
        }
        case SP_WAITING:
        case SP_BACKOFF:
        case SP_IGNORED:
            gp_ks_engine_drop(s, p);
            gp_ks_engine_place(s, p, in->node_name);
            break;
        }
    } else if (!p->ours || !p->readable) {
        p->st = SP_IGNORED;
    } else if (p->st == SP_IGNORED || p->st == SP_DONE) {
        if (gp_ks_engine_add(s, p) == GP_OK)
            p->st = SP_WAITING;
    }
    gp_ks_audit_pod(s, p, false);
    gp_ks_slot_update(s, p, false);
    if (held_on && (p->eng == SP_NONE || p->booked != held_on)) /* freed there */
        node_recount(s, held_on);
}

/* --- the cycle --------------------------------------------------------- */

void gp_kube_sched_set_leader_until(struct gp_kube_sched *s, bool leader, double until_s)
{
    if (leader && !s->leader)
        s->dirty = true;
    s->leader = leader;
    atomic_store(&s->lead_until_s, leader ? until_s : -INFINITY);
    atomic_store(&s->leading, leader);
}

void gp_kube_sched_set_leader(struct gp_kube_sched *s, bool leader)
{
    gp_kube_sched_set_leader_until(s, leader, INFINITY);
}

void gp_kube_sched_lead_until(struct gp_kube_sched *s, double until_s)
{
    atomic_store(&s->lead_until_s, until_s);
}

static double mono_s(void);

double gp_kube_sched_beat_s(const struct gp_kube_sched *s)
{
    return atomic_load(&s->beat_s);
}

bool gp_ks_leading(const struct gp_kube_sched *s)
{
    return atomic_load(&s->leading) && mono_s() < atomic_load(&s->lead_until_s);
}

double gp_kube_sched_next_retry_s(const struct gp_kube_sched *s)
{
    double t = gp_ks_allocations_next(s); /* sched_alloc.c: pods left allocating */
    double u = gp_ks_slot_next(s);        /* sched_slot.c: decisions on blocked nodes */
    if (u < t)
        t = u;
    if (!s->maybe_backoff && !s->maybe_recheck && !s->maybe_resume)
        return t;
    for (size_t i = 0; i < s->npods; i++) {
        const struct spod *p = s->pods[i];
        if (p->st == SP_BACKOFF && p->retry_at < t)
            t = p->retry_at;
        if (s->leader && p->st == SP_PREEMPTING && p->retry_at > 0 && p->retry_at < t)
            t = p->retry_at; /* waiting: tried elsewhere again (sched_cycle.c waiting_moves) */
        if (p->st == SP_ASSUMED && p->recheck_at > 0 && p->recheck_at < t)
            t = p->recheck_at; /* maybe bound: asked about again (bind.c) */
        if (p->st == SP_ASSUMED && p->rebind_at > 0 && p->rebind_at < t)
            t = p->rebind_at; /* a gang's member kept: bound again (bind.c) */
        if (p->st == SP_ASSUMED && p->prov_at > 0 && p->prov_at + s->o.bind_timeout_s < t)
            t = p->prov_at + s->o.bind_timeout_s; /* its claims' wait ends (volumes_bind.c) */
    }
    return t;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --record's log at its cap: rotated, and the engine rebuilt so that the
 * new file starts from a reset and replays on its own (the writer drops
 * engine events until then). A failed write stops the recording, said
 * once on stderr; scheduling goes on. */
static void record_rotate(struct gp_kube_sched *s)
{
    if (!s->rec)
        return;
    if (gp_evlog_rotate_due(s->rec)) {
        struct gp_diag d = {""};
        if (gp_evlog_rotate(s->rec, &d) == GP_OK)
            s->dirty = true;
    }
    if (gp_evlog_error(s->rec)[0]) {
        fprintf(stderr, "gpuplane schedule: %s; recording stopped\n", gp_evlog_error(s->rec));
        gp_evlog_close(s->rec);
        s->rec = NULL;
    }
}

void gp_kube_sched_wait_binds(struct gp_kube_sched *s, size_t *bound)
{
    *bound = 0;
    gp_ks_bind_collect(s, true, bound);
}

enum gp_err gp_kube_sched_cycle(struct gp_kube_sched *s, double now_s, size_t *bound,
                                struct gp_diag *d)
{
    *bound = 0;
    if (now_s > s->now_s)
        s->now_s = now_s;
    gp_ks_bind_collect(s, false, bound); /* what the binders finished */
    gp_ks_records_sweep(s);              /* (a standby's too: it never rebuilds) */
    record_rotate(s);
    if (s->leader && mono_s() >= atomic_load(&s->lead_until_s))
        gp_kube_sched_set_leader(s, false); /* the Lease's renew deadline passed */
    if (!s->leader)
        return GP_OK;
    /* the specs kept for the engine's shapes outnumber the pods and nodes
     * alive: a new engine, so that memory follows what is alive */
    if (s->spent_specs > 1024 && s->spent_specs > 2 * (s->npods + s->nnodes))
        s->dirty = true;
    enum gp_err err;
    if (s->dirty || !s->e) {
        gp_ks_bind_collect(s, true, bound); /* a rebuild starts from no bind in flight */
        if ((err = gp_ks_rebuild(s, d)) != GP_OK)
            return err;
    }
    bool backoff = false;
    for (size_t i = 0; s->maybe_backoff && i < s->npods; i++) {
        struct spod *p = s->pods[i];
        if (p->st == SP_BACKOFF && p->retry_at <= s->now_s && gp_ks_engine_add(s, p) == GP_OK)
            p->st = SP_WAITING;
        backoff |= p->st == SP_BACKOFF;
    }
    s->maybe_backoff = backoff;
    gp_ks_resume(s, bound);
    gp_ks_allocations(s);         /* sched_alloc.c: pods left allocating */
    gp_ks_slot_unblock(s, bound); /* sched_slot.c: decisions for blocked nodes moved */
    gp_ks_slot_run(s, bound);     /* sched_slot.c: nodes whose allocating slot freed */
    struct gp_engine_totals t;
    gp_engine_totals(s->e, &t);
    size_t cap = gp_engine_pending_count(s->e) + (size_t)t.pods_bound + 1;
    if (cap > s->capdec) {
        struct gp_decision *v = realloc(s->dec, cap * sizeof *v);
        if (!v)
            return gp_diag_set(d, GP_ENOMEM, "out of memory (decisions)");
        s->dec = v;
        s->capdec = cap;
    }
    /* an attempt lasts from the cycle taking the pod from the queue to its
     * decision: the engine decides a cycle's pods at once */
    double t0 = s->km ? mono_s() : 0;
    size_t n = gp_engine_schedule(s->e, s->now_s, 0, s->dec, cap);
    gp_evlog_cycle(s->rec, s->e, s->now_s, cap, s->dec, n);
    err = gp_ks_write_decisions(s, n, s->km ? mono_s() - t0 : 0, bound);
    gp_ks_slot_unblock(s, bound); /* this cycle's decisions for a blocked node: moved at once */
    return err;
}

struct gp_kube_sched_stats gp_kube_sched_stats(const struct gp_kube_sched *s)
{
    struct gp_kube_sched_stats st = s->st;
    st.pending = st.waiting_backoff = st.assumed = 0;
    for (size_t i = 0; i < s->npods; i++) {
        enum sp_state x = s->pods[i]->st;
        st.pending += x == SP_WAITING;
        st.waiting_backoff += x == SP_BACKOFF;
        st.assumed += x == SP_ASSUMED || x == SP_PREEMPTING;
        st.unschedulable_now += x == SP_WAITING && s->pods[i]->last_message != NULL;
    }
    st.records = s->npods;
    st.binds_in_flight = s->in_flight;
    st.events_lost = atomic_load(&s->events_lost);
    if (s->events) {
        struct gp_kube_events_stats es = gp_kube_events_stats(s->events);
        st.events_lost += es.failed + es.dropped;
    }
    st.engine_pods_held = s->e ? gp_engine_pods_held(s->e) : 0;
    st.engine_ids_held = (uint64_t)s->by_eng.nchunks << s->by_eng.shift;
    st.retired_specs = s->spent_specs;
    st.node_records = s->nnodes;
    st.group_records = s->ngroups;
    st.slot_waiting = s->slot_waiting;
    st.volume_claims = json_object_size(s->pvcs);
    st.volumes = json_object_size(s->pvs);
    st.storage_classes = json_object_size(s->scs);
    return st;
}

void gp_kube_sched_progress(const struct gp_kube_sched *s, uint64_t *binds, uint64_t *in_flight)
{
    *binds = s->st.binds;
    *in_flight = s->in_flight;
}

const char *gp_kube_sched_audit_last(const struct gp_kube_sched *s)
{
    return s->audit_last;
}

size_t gp_kube_sched_audit_all(struct gp_kube_sched *s)
{
    size_t bad = 0;
    for (size_t i = 0; i < s->nnodes; i++)
        bad += gp_ks_audit_node(s, s->nodes[i]) ? 1 : 0;
    return bad;
}
