/* eventlog_write.c - the event log's writer (eventlog.h): one JSON object
 * a line for each engine call the live scheduler makes, the specs as the
 * engine was given them, each cycle's decisions; a flush per cycle; the
 * size cap and the rotation to FILE.1. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/sharing.h"
#include "io/eventlog_internal.h"

#define NAMES(a)                                                                                   \
    {                                                                                              \
        a, sizeof a / sizeof a[0]                                                                  \
    }
static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
static const char *const kinds[] = {"bind", "unschedulable", "evict"};
static const char *const gangs[] = {"none", "members", "no-room", "never-fits"};
static const char *const evicts[] = {"none", "preempted", "reclaimed"};
static const char *const modes[] = {"exclusive", "timeslice", "mps", "mig"};
static const char *const events[] = {
    "log",       "change",    "reset",      "queue_set",    "node_add",   "node_drain",
    "group_add", "pod_add",   "pod_assign", "pod_finished", "pod_forget", "cycle",
    "decision",  "cycle_end", "pod_pdb",    "namespace",    "pdb_set",    "pod_pdbs",
};
static const char *const match_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
const struct gp_evl_names gp_evl_effects = NAMES(effects);
const struct gp_evl_names gp_evl_kinds = NAMES(kinds);
const struct gp_evl_names gp_evl_gangs = NAMES(gangs);
const struct gp_evl_names gp_evl_evicts = NAMES(evicts);
const struct gp_evl_names gp_evl_modes = NAMES(modes);
const struct gp_evl_names gp_evl_events = NAMES(events);
const struct gp_evl_names gp_evl_match_ops = NAMES(match_ops);

int gp_evl_name_find(const struct gp_evl_names *t, const char *name)
{
    for (size_t i = 0; name && i < t->n; i++)
        if (strcmp(t->names[i], name) == 0)
            return (int)i;
    return -1;
}

static const char *name_of(const struct gp_evl_names *t, unsigned v)
{
    return v < t->n ? t->names[v] : "?";
}

struct gp_evlog {
    FILE *f;
    char *path;
    char *scheduler, *identity;
    uint64_t max_bytes, bytes;
    uint64_t cycle; /* cycles written, the next one's number - 1 */
    unsigned part;  /* files rotated away */
    bool awaiting_reset;
    char error[512];
};

/* --- JSON of the engine's types ------------------------------------------ */

static void set_int(json_t *o, const char *k, json_int_t v)
{
    if (v)
        json_object_set_new(o, k, json_integer(v));
}

static void set_real(json_t *o, const char *k, double v)
{
    if (v != 0)
        json_object_set_new(o, k, json_real(v));
}

static void set_bool(json_t *o, const char *k, bool v)
{
    if (v)
        json_object_set_new(o, k, json_true());
}

static void set_str(json_t *o, const char *k, const char *v)
{
    if (v)
        json_object_set_new(o, k, json_string(v));
}

/* [item(v[0]), ..., item(v[n - 1])]: an array of the engine's as JSON, in
 * order, each item by its writer */
static json_t *array_json(const void *v, size_t n, size_t size, json_t *(*item)(const void *))
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, item((const char *)v + i * size));
    return a;
}
#define ARRAY_JSON(v, n, item) array_json(v, n, sizeof *(v), item)

/* [key, value] (a value may be null) */
static json_t *kv_json(const void *item)
{
    const struct gp_kv *kv = item;
    return json_pack("[s?,s?]", kv->key, kv->value);
}

static void set_kv(json_t *o, const char *k, const struct gp_kv *kv, size_t n)
{
    if (n)
        json_object_set_new(o, k, ARRAY_JSON(kv, n, kv_json));
}

/* [name, amount] */
static json_t *scalar_json(const void *item)
{
    const struct gp_scalar *s = item;
    return json_pack("[s?,I]", s->name, (json_int_t)s->amount);
}

/* [ip, port, protocol] */
static json_t *port_json(const void *item)
{
    const struct gp_host_port *h = item;
    return json_pack("[s?,i,i]", h->ip, (int)h->port, (int)h->protocol);
}

/* [key, rwop] */
static json_t *claim_json(const void *item)
{
    const struct gp_claim_use *c = item;
    return json_pack("[s?,b]", c->key, c->rwop);
}

/* [driver, name] */
static json_t *csi_volume_json(const void *item)
{
    const struct gp_csi_volume *v = item;
    return json_pack("[s?,s?]", v->driver, v->name);
}

/* [driver, max] */
static json_t *csi_limit_json(const void *item)
{
    const struct gp_csi_limit *l = item;
    return json_pack("[s?,I]", l->driver, (json_int_t)l->max);
}

static void set_scalars(json_t *o, const struct gp_scalar *s, size_t n)
{
    if (n)
        json_object_set_new(o, "scalars", ARRAY_JSON(s, n, scalar_json));
}

static json_t *string_json(const void *item)
{
    const char *const *s = item;
    return *s ? json_string(*s) : json_null();
}

/* mig: the MIG fields written (a pick of the engine on a node without MIG
 * carries whatever mig_profile: it means nothing there) */
static json_t *pick_json(const struct gp_pick *p, bool mig)
{
    json_t *o = json_object(), *g = json_array();
    for (unsigned i = 0; i < p->ngpus && i < GP_MAX_GPUS_PER_NODE; i++)
        json_array_append_new(g, json_integer(p->gpu[i]));
    json_object_set_new(o, "gpus", g);
    if (mig) {
        json_object_set_new(o, "mig_profile", json_integer(p->mig_profile));
        json_t *s = json_array();
        for (unsigned i = 0; i < p->ngpus && i < GP_MAX_GPUS_PER_NODE; i++)
            json_array_append_new(s, json_integer(p->mig_start[i]));
        json_object_set_new(o, "mig_start", s);
    }
    set_int(o, "reconfigured", p->reconfigured);
    return o;
}

/* [[profile, start], ...] */
static json_t *layout_json(const struct gp_mig_layout *l)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < l->n && i < GP_MIG_MAX_INSTANCES; i++)
        json_array_append_new(a, json_pack("[i,i]", l->inst[i].profile, l->inst[i].start));
    return a;
}

/* gpus: the node's GPUs (each has a layout of gpu_layouts when set) */
static json_t *sharing_json(const struct gp_sharing_spec *s, uint32_t gpus)
{
    json_t *o = json_object();
    json_object_set_new(o, "mode", json_string(name_of(&gp_evl_modes, s->mode)));
    set_int(o, "replicas", s->replicas);
    set_bool(o, "rename_by_default", s->rename_by_default);
    set_bool(o, "fail_requests_greater_than_one", s->fail_requests_greater_than_one);
    set_bool(o, "distinct_replicas", s->distinct_replicas);
    set_bool(o, "oversubscribe", s->oversubscribe);
    set_int(o, "mps_active_thread_pct", s->mps.active_thread_pct);
    set_int(o, "mps_pinned_mem_mib", s->mps.pinned_mem_mib);
    if (s->mode == GP_SHARE_MIG || s->mig.model) {
        set_str(o, "mig_strategy", gp_mig_strategy_name(s->mig.strategy));
        set_str(o, "mig_model", s->mig.model ? s->mig.model->id : NULL);
        set_str(o, "mig_config", s->mig.config);
        json_object_set_new(o, "mig_layout", layout_json(&s->mig.layout));
        json_t *own = s->mig.gpu_layouts ? json_array() : NULL;
        for (uint32_t g = 0; own && g < gpus && g < GP_MAX_GPUS_PER_NODE; g++)
            json_array_append_new(own, layout_json(&s->mig.gpu_layouts[g]));
        if (own)
            json_object_set_new(o, "mig_gpu_layouts", own);
        set_bool(o, "mig_dynamic", s->mig.dynamic);
        set_real(o, "mig_reconfigure_s", s->mig.reconfigure_s);
    }
    return o;
}

/* [key, value, effect] */
static json_t *taint_json(const void *item)
{
    const struct gp_taint *t = item;
    return json_pack("[s?,s?,s]", t->key, t->value, name_of(&gp_evl_effects, t->effect));
}

static json_t *node_json(const struct gp_node_spec *n)
{
    json_t *o = json_object();
    set_str(o, "name", n->name);
    set_str(o, "pool", n->pool);
    set_str(o, "gpu_model", n->gpu_model);
    set_int(o, "cpu_milli", n->cpu_milli);
    set_int(o, "mem_mib", n->mem_mib);
    set_int(o, "gpu_count", n->gpu_count);
    set_int(o, "gpu_mem_mib", n->gpu_mem_mib);
    set_int(o, "nvlink_gpus", n->nvlink_gpus);
    set_kv(o, "labels", n->labels, n->nlabels);
    if (n->ntaints)
        json_object_set_new(o, "taints", ARRAY_JSON(n->taints, n->ntaints, taint_json));
    set_real(o, "price_per_hour_usd", n->price_per_hour_usd);
    if (n->sharing)
        json_object_set_new(o, "sharing", sharing_json(n->sharing, n->gpu_count));
    set_int(o, "driver_version", n->driver_version);
    if (n->pods_limited)
        json_object_set_new(o, "pods_max", json_integer(n->pods_max));
    set_scalars(o, n->scalars, n->nscalars);
    if (n->ncsi_limits)
        json_object_set_new(o, "csi_limits",
                            ARRAY_JSON(n->csi_limits, n->ncsi_limits, csi_limit_json));
    return o;
}

/* [key, op, values] */
static json_t *expr_json(const void *item)
{
    const struct gp_match_expr *x = item;
    return json_pack("[s?,s,o]", x->key, name_of(&gp_evl_match_ops, x->op),
                     ARRAY_JSON(x->values, x->nvalues, string_json));
}

static json_t *node_term_json(const void *item)
{
    const struct gp_node_term *t = item;
    return json_pack("{s:o,s:o,s:i}", "labels", ARRAY_JSON(t->labels, t->nlabels, expr_json),
                     "fields", ARRAY_JSON(t->fields, t->nfields, expr_json), "weight",
                     (json_int_t)t->weight);
}

static json_t *selector_json(const struct gp_label_selector *s)
{
    if (!s->set)
        return json_null();
    return json_pack("{s:o,s:o}", "labels", ARRAY_JSON(s->labels, s->nlabels, kv_json), "exprs",
                     ARRAY_JSON(s->exprs, s->nexprs, expr_json));
}

static json_t *pod_term_json(const void *item)
{
    const struct gp_pod_term *t = item;
    return json_pack("{s:o,s:o,s:o,s:s?,s:i}", "selector", selector_json(&t->selector),
                     "namespaces", ARRAY_JSON(t->namespaces, t->nnamespaces, string_json),
                     "ns_selector", selector_json(&t->ns_selector), "topology_key", t->topology_key,
                     "weight", (json_int_t)t->weight);
}

static json_t *spread_json(const void *item)
{
    const struct gp_spread *s = item;
    return json_pack("{s:i,s:s?,s:b,s:o,s:i,s:b,s:b}", "max_skew", (json_int_t)s->max_skew,
                     "topology_key", s->topology_key, "schedule_anyway", s->schedule_anyway,
                     "selector", selector_json(&s->selector), "min_domains",
                     (json_int_t)s->min_domains, "ignore_affinity", s->ignore_affinity,
                     "honor_taints", s->honor_taints);
}

/* {zone, terms} and bind when true */
static json_t *volume_json(const void *item)
{
    const struct gp_volume_terms *v = item;
    json_t *o = json_pack("{s:b,s:o}", "zone", v->zone, "terms",
                          ARRAY_JSON(v->terms, v->nterms, node_term_json));
    if (v->bind)
        json_object_set_new(o, "bind", json_true());
    return o;
}

static json_t *constraints_json(const struct gp_pod_constraints *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "node_required",
                        ARRAY_JSON(c->node_required, c->nnode_required, node_term_json));
    json_object_set_new(o, "node_preferred",
                        ARRAY_JSON(c->node_preferred, c->nnode_preferred, node_term_json));
    json_object_set_new(o, "affinity", ARRAY_JSON(c->affinity, c->naffinity, pod_term_json));
    json_object_set_new(o, "affinity_preferred",
                        ARRAY_JSON(c->affinity_preferred, c->naffinity_preferred, pod_term_json));
    json_object_set_new(o, "anti", ARRAY_JSON(c->anti, c->nanti, pod_term_json));
    json_object_set_new(o, "anti_preferred",
                        ARRAY_JSON(c->anti_preferred, c->nanti_preferred, pod_term_json));
    json_object_set_new(o, "spread", ARRAY_JSON(c->spread, c->nspread, spread_json));
    if (c->nvolumes) /* (a pod's volumes, kube/volumes.c: none in older logs) */
        json_object_set_new(o, "volumes", ARRAY_JSON(c->volumes, c->nvolumes, volume_json));
    return o;
}

/* [key, value, exists, effect] ("" for any effect) */
static json_t *toleration_json(const void *item)
{
    const struct gp_toleration *t = item;
    return json_pack("[s?,s?,b,s]", t->key, t->value, t->op_exists,
                     t->any_effect ? "" : name_of(&gp_evl_effects, t->effect));
}

static json_t *pod_json(const struct gp_pod_spec *p)
{
    json_t *o = json_object();
    set_str(o, "name", p->name);
    set_int(o, "cpu_milli", p->cpu_milli);
    set_int(o, "mem_mib", p->mem_mib);
    set_int(o, "gpu_count", p->gpu_count);
    set_int(o, "gpu_milli", p->gpu_milli);
    set_int(o, "gpu_mem_mib", p->gpu_mem_mib);
    set_int(o, "queue", p->queue);
    if (p->ngpu_models)
        json_object_set_new(o, "gpu_models",
                            ARRAY_JSON(p->gpu_models, p->ngpu_models, string_json));
    set_kv(o, "node_selector", p->node_selector, p->nnode_selector);
    if (p->ntolerations)
        json_object_set_new(o, "tolerations",
                            ARRAY_JSON(p->tolerations, p->ntolerations, toleration_json));
    set_int(o, "priority", p->priority);
    set_bool(o, "preempt_never", p->preempt_never);
    set_int(o, "group", p->group);
    set_real(o, "duration_hint_s", p->duration_hint_s);
    set_int(o, "share_modes", p->share_modes);
    set_str(o, "mig_profile", p->mig_profile);
    set_int(o, "gpu_resource", p->gpu_resource);
    set_int(o, "gpu_container_max", p->gpu_container_max);
    set_str(o, "namespace", p->namespace_name);
    set_kv(o, "labels", p->labels, p->nlabels);
    if (p->constraints)
        json_object_set_new(o, "constraints", constraints_json(p->constraints));
    set_int(o, "cuda_driver_min", p->cuda_driver_min);
    set_str(o, "cuda_version", p->cuda_version);
    set_scalars(o, p->scalars, p->nscalars);
    if (p->nhost_ports)
        json_object_set_new(o, "host_ports", ARRAY_JSON(p->host_ports, p->nhost_ports, port_json));
    if (p->nclaims)
        json_object_set_new(o, "claims", ARRAY_JSON(p->claims, p->nclaims, claim_json));
    if (p->ncsi_volumes)
        json_object_set_new(o, "csi_volumes",
                            ARRAY_JSON(p->csi_volumes, p->ncsi_volumes, csi_volume_json));
    return o;
}

static void quota_set(json_t *o, const char *k, const struct gp_quota *q)
{
    if (q->guaranteed || q->borrow_limit || q->limited)
        json_object_set_new(o, k,
                            json_pack("[I,I,b]", (json_int_t)q->guaranteed,
                                      (json_int_t)q->borrow_limit, q->limited));
}

/* [model, guaranteed, borrow_limit, limited] */
static json_t *model_json(const void *item)
{
    const struct gp_model_quota *m = item;
    return json_pack("[s?,I,I,b]", m->model, (json_int_t)m->gpu_milli.guaranteed,
                     (json_int_t)m->gpu_milli.borrow_limit, m->gpu_milli.limited);
}

static json_t *queue_json(const struct gp_queue_spec *q)
{
    json_t *o = json_object();
    set_str(o, "name", q->name);
    set_int(o, "parent", q->parent);
    set_real(o, "weight", q->weight);
    quota_set(o, "gpu_milli", &q->gpu_milli);
    quota_set(o, "cpu_milli", &q->cpu_milli);
    quota_set(o, "mem_mib", &q->mem_mib);
    if (q->nmodels)
        json_object_set_new(o, "models", ARRAY_JSON(q->models, q->nmodels, model_json));
    set_bool(o, "no_preempt_within", q->no_preempt_within);
    set_bool(o, "not_reclaimable", q->not_reclaimable);
    set_real(o, "min_runtime_s", q->min_runtime_s);
    return o;
}

static json_t *group_json(const struct gp_group_spec *g)
{
    json_t *o = json_object();
    set_str(o, "name", g->name);
    set_int(o, "min_member", g->min_member);
    set_str(o, "topology_key", g->topology_key);
    set_bool(o, "topology_required", g->topology_required);
    return o;
}

json_t *gp_evl_decision_json(const struct gp_engine *e, uint64_t cycle, uint32_t index,
                             const struct gp_decision *d)
{
    json_t *o = json_pack("{s:s,s:I,s:I,s:s,s:I}", "ev", "decision", "cycle", (json_int_t)cycle,
                          "i", (json_int_t)index, "kind", name_of(&gp_evl_kinds, d->kind), "pod",
                          (json_int_t)d->pod);
    const struct gp_pod *p = e ? gp_engine_pod(e, d->pod) : NULL;
    if (p && p->spec.name)
        json_object_set_new(o, "pod_name", json_string(p->spec.name));
    if (d->kind == GP_DECISION_UNSCHEDULABLE) {
        json_object_set_new(o, "nodes", json_integer(d->explain.nodes_total));
        json_t *r = json_object();
        for (unsigned f = 0; f < GP_FILTER_COUNT; f++)
            if (d->explain.rejected[f])
                json_object_set_new(r, gp_filter_name((enum gp_filter)f),
                                    json_integer(d->explain.rejected[f]));
        json_object_set_new(o, "rejected", r);
        if (d->gang != GP_GANG_NONE)
            json_object_set_new(o, "gang", json_string(name_of(&gp_evl_gangs, d->gang)));
        if (d->quota_queue != GP_QUEUE_NONE)
            json_object_set_new(o, "quota_queue", json_integer(d->quota_queue));
        return o;
    }
    json_object_set_new(o, "node", json_integer(d->node));
    const struct gp_node *n = e ? gp_engine_node(e, d->node) : NULL;
    if (n && n->spec.name)
        json_object_set_new(o, "node_name", json_string(n->spec.name));
    json_object_set_new(o, "pick",
                        pick_json(&d->pick, n ? n->mig_model >= 0 : d->pick.mig_profile != -1));
    if (d->kind == GP_DECISION_EVICT) {
        json_object_set_new(o, "reason", json_string(name_of(&gp_evl_evicts, d->evict)));
        json_object_set_new(o, "by", json_integer(d->by));
    }
    return o;
}

char *gp_evlog_decision_text(const struct gp_engine *e, uint64_t cycle, uint32_t index,
                             const struct gp_decision *d)
{
    json_t *o = gp_evl_decision_json(e, cycle, index, d);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return s;
}

bool gp_evlog_decision_same(const struct gp_engine *e, const struct gp_decision *a,
                            const struct gp_decision *b)
{
    json_t *x = gp_evl_decision_json(e, 0, 0, a), *y = gp_evl_decision_json(e, 0, 0, b);
    bool same = x && y && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return same;
}

/* --- the file ------------------------------------------------------------- */

static void fail(struct gp_evlog *w, const char *what)
{
    if (!w->error[0])
        snprintf(w->error, sizeof w->error, "%s: %s: %s", w->path, what, strerror(errno));
}

/* o written as one line (o stolen). */
static void put(struct gp_evlog *w, json_t *o)
{
    if (!o) {
        errno = ENOMEM;
        fail(w, "cannot record");
        return;
    }
    char *s = w->error[0] ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s) {
        if (!w->error[0]) {
            errno = ENOMEM;
            fail(w, "cannot record");
        }
        return;
    }
    size_t len = strlen(s);
    if (fwrite(s, 1, len, w->f) != len || fputc('\n', w->f) == EOF)
        fail(w, "write failed");
    else
        w->bytes += len + 1;
    free(s);
}

/* An engine event: only on an engine the log has seen reset. */
static bool engine_event(struct gp_evlog *w)
{
    return w && !w->error[0] && !w->awaiting_reset;
}

static enum gp_err start_file(struct gp_evlog *w, struct gp_diag *d)
{
    w->f = fopen(w->path, "a+");
    if (!w->f) {
        fail(w, "cannot open");
        return gp_diag_set(d, GP_EIO, "--record: %s: %s", w->path, strerror(errno));
    }
    struct stat st;
    w->bytes = fstat(fileno(w->f), &st) == 0 ? (uint64_t)st.st_size : 0;
    if (w->bytes > 0 && fseek(w->f, -1, SEEK_END) == 0) { /* a torn line of before: ended */
        int c = fgetc(w->f);
        fseek(w->f, 0, SEEK_END);
        if (c != '\n' && fputc('\n', w->f) != EOF)
            w->bytes++;
    }
    w->awaiting_reset = true;
    put(w, json_pack("{s:s,s:s,s:i,s:s?,s:s?,s:i}", "ev", "log", "format", GP_EVLOG_FORMAT,
                     "version", GP_EVLOG_VERSION, "scheduler", w->scheduler, "identity",
                     w->identity, "part", (int)w->part));
    if (fflush(w->f) != 0)
        fail(w, "write failed");
    if (w->error[0])
        return gp_diag_set(d, GP_EIO, "--record: %s", w->error);
    return GP_OK;
}

enum gp_err gp_evlog_open(const char *path, uint64_t max_bytes, const char *scheduler,
                          const char *identity, struct gp_evlog **out, struct gp_diag *d)
{
    *out = NULL;
    struct gp_evlog *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path)) || (scheduler && !(w->scheduler = strdup(scheduler))) ||
        (identity && !(w->identity = strdup(identity)))) {
        gp_evlog_close(w);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    w->max_bytes = max_bytes;
    enum gp_err err = start_file(w, d);
    if (err != GP_OK) {
        gp_evlog_close(w);
        return err;
    }
    *out = w;
    return GP_OK;
}

void gp_evlog_close(struct gp_evlog *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    free(w->path);
    free(w->scheduler);
    free(w->identity);
    free(w);
}

bool gp_evlog_rotate_due(const struct gp_evlog *w)
{
    return w && !w->error[0] && w->max_bytes > 0 && w->bytes >= w->max_bytes;
}

enum gp_err gp_evlog_rotate(struct gp_evlog *w, struct gp_diag *d)
{
    if (!w)
        return GP_OK;
    fclose(w->f);
    w->f = NULL;
    size_t n = strlen(w->path) + 3;
    char *old = malloc(n);
    if (!old)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    snprintf(old, n, "%s.1", w->path);
    int rc = rename(w->path, old);
    free(old);
    if (rc != 0) {
        fail(w, "cannot rotate");
        return gp_diag_set(d, GP_EIO, "--record: %s", w->error);
    }
    w->part++;
    return start_file(w, d);
}

const char *gp_evlog_error(const struct gp_evlog *w)
{
    return w ? w->error : "";
}

uint64_t gp_evlog_bytes(const struct gp_evlog *w)
{
    return w ? w->bytes : 0;
}

/* --- the events ------------------------------------------------------------ */

void gp_evlog_change(struct gp_evlog *w, double t_s, const char *obj, const char *type,
                     const char *key, const char *rv)
{
    if (w && !w->error[0])
        put(w, json_pack("{s:s,s:f,s:s,s:s,s:s?,s:s?}", "ev", "change", "t", t_s, "obj", obj,
                         "type", type, "key", key, "rv", rv));
}

void gp_evlog_reset(struct gp_evlog *w, const char *policy, uint64_t seed)
{
    if (!w || w->error[0])
        return;
    w->awaiting_reset = false;
    put(w, json_pack("{s:s,s:s,s:I}", "ev", "reset", "policy", policy, "seed", (json_int_t)seed));
}

/* {"ev": ev, "id": id} or {"ev": ev, "err": "..."} */
static json_t *call(const char *ev, enum gp_err err, uint32_t id)
{
    json_t *o = json_pack("{s:s}", "ev", ev);
    if (err == GP_OK)
        json_object_set_new(o, "id", json_integer(id));
    else
        json_object_set_new(o, "err", json_string(gp_strerror(err)));
    return o;
}

/* o (a call) written with `key`: spec (both stolen) */
static void put_spec(struct gp_evlog *w, json_t *o, const char *key, json_t *spec)
{
    json_object_set_new(o, key, spec);
    put(w, o);
}

void gp_evlog_queue_set(struct gp_evlog *w, const struct gp_queue_spec *q, enum gp_err err,
                        uint32_t id)
{
    if (engine_event(w))
        put_spec(w, call("queue_set", err, id), "queue", queue_json(q));
}

void gp_evlog_node_add(struct gp_evlog *w, const struct gp_node_spec *n, enum gp_err err,
                       uint32_t id)
{
    if (engine_event(w))
        put_spec(w, call("node_add", err, id), "node", node_json(n));
}

void gp_evlog_node_drain(struct gp_evlog *w, uint32_t node)
{
    if (engine_event(w))
        put(w, json_pack("{s:s,s:I}", "ev", "node_drain", "node", (json_int_t)node));
}

void gp_evlog_group_add(struct gp_evlog *w, const struct gp_group_spec *g, enum gp_err err,
                        uint32_t id)
{
    if (engine_event(w))
        put_spec(w, call("group_add", err, id), "group", group_json(g));
}

void gp_evlog_pod_add(struct gp_evlog *w, const struct gp_pod_spec *p, double t_s, enum gp_err err,
                      uint32_t id)
{
    if (!engine_event(w))
        return;
    json_t *o = call("pod_add", err, id);
    json_object_set_new(o, "t", json_real(t_s));
    put_spec(w, o, "pod", pod_json(p));
}

void gp_evlog_pod_assign(struct gp_evlog *w, uint32_t pod, uint32_t node,
                         const struct gp_pick *pick, enum gp_err err)
{
    if (!engine_event(w))
        return;
    json_t *o = json_pack("{s:s,s:I,s:I}", "ev", "pod_assign", "pod", (json_int_t)pod, "node",
                          (json_int_t)node);
    if (pick)
        json_object_set_new(o, "pick", pick_json(pick, pick->mig_profile != -1));
    json_object_set_new(o, "ok", json_boolean(err == GP_OK));
    put(w, o);
}

void gp_evlog_pod_finished(struct gp_evlog *w, uint32_t pod)
{
    if (engine_event(w))
        put(w, json_pack("{s:s,s:I}", "ev", "pod_finished", "pod", (json_int_t)pod));
}

void gp_evlog_pod_forget(struct gp_evlog *w, uint32_t pod)
{
    if (engine_event(w))
        put(w, json_pack("{s:s,s:I}", "ev", "pod_forget", "pod", (json_int_t)pod));
}

void gp_evlog_pdb_set(struct gp_evlog *w, uint32_t pdb, int32_t allowed, enum gp_err err)
{
    if (engine_event(w))
        put(w, json_pack("{s:s,s:I,s:I,s:b}", "ev", "pdb_set", "pdb", (json_int_t)pdb, "allowed",
                         (json_int_t)allowed, "ok", err == GP_OK));
}

void gp_evlog_pod_pdbs(struct gp_evlog *w, uint32_t pod, const uint32_t *pdbs, size_t n,
                       enum gp_err err)
{
    if (!engine_event(w))
        return;
    json_t *l = json_array();
    for (size_t i = 0; l && i < n; i++)
        if (json_array_append_new(l, json_integer((json_int_t)pdbs[i])) != 0) {
            json_decref(l);
            l = NULL;
        }
    put(w, l ? json_pack("{s:s,s:I,s:o,s:b}", "ev", "pod_pdbs", "pod", (json_int_t)pod, "pdbs", l,
                         "ok", err == GP_OK)
             : NULL);
}

void gp_evlog_namespace(struct gp_evlog *w, const char *name, const struct gp_kv *labels, size_t n,
                        bool deleted)
{
    if (!engine_event(w))
        return;
    json_t *o = json_pack("{s:s,s:s}", "ev", "namespace", "name", name);
    if (deleted)
        json_object_set_new(o, "deleted", json_true());
    else
        json_object_set_new(o, "labels", ARRAY_JSON(labels, n, kv_json));
    put(w, o);
}

void gp_evlog_cycle(struct gp_evlog *w, const struct gp_engine *e, double t_s, size_t cap,
                    const struct gp_decision *dec, size_t n)
{
    if (!engine_event(w))
        return;
    uint64_t c = ++w->cycle;
    put(w, json_pack("{s:s,s:I,s:f,s:I}", "ev", "cycle", "cycle", (json_int_t)c, "t", t_s, "cap",
                     (json_int_t)cap));
    for (size_t i = 0; i < n; i++)
        put(w, gp_evl_decision_json(e, c, (uint32_t)i, &dec[i]));
    put(w, json_pack("{s:s,s:I,s:I}", "ev", "cycle_end", "cycle", (json_int_t)c, "decisions",
                     (json_int_t)n));
    if (!w->error[0] && fflush(w->f) != 0)
        fail(w, "write failed");
}
