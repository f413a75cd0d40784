/* metrics.c - the metrics registry and its Prometheus text exposition
 * (format 0.0.4), and the scheduler's metrics defined on it (metrics.h). */
#include "kube/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_metric_series {
    struct gp_metric *metric;
    char *value;                 /* the label value; NULL without a label */
    double v;                    /* a counter's or gauge's value, a histogram's sum */
    unsigned long long count;    /* a histogram's observations */
    unsigned long long *buckets; /* a histogram's per-bucket counts (not cumulative) */
};

struct gp_metric {
    struct gp_metrics *reg;
    char *name, *help, *label;
    enum gp_metric_type type;
    char **fixed; /* the fixed label values (NULL: any, up to max_series) */
    size_t nfixed, max_series;
    double bounds[GP_METRICS_MAX_BUCKETS];
    size_t nbounds;
    struct gp_metric_series *series; /* max_series, allocated up front: pointers stay */
    size_t nseries;
    unsigned long long *counts; /* max_series * nbounds */
};

struct gp_metrics {
    pthread_mutex_t mu;
    struct gp_metric **metrics;
    size_t n, cap;
};

enum gp_err gp_metrics_new(struct gp_metrics **out, struct gp_diag *diag)
{
    struct gp_metrics *m = calloc(1, sizeof *m);
    if (!m || pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        *out = NULL;
        return gp_diag_set(diag, GP_ENOMEM, "metrics: out of memory");
    }
    *out = m;
    return GP_OK;
}

static void metric_free(struct gp_metric *mt)
{
    if (!mt)
        return;
    for (size_t i = 0; i < mt->nseries; i++)
        free(mt->series[i].value);
    for (size_t i = 0; i < mt->nfixed; i++)
        free(mt->fixed[i]);
    free(mt->fixed);
    free(mt->series);
    free(mt->counts);
    free(mt->name);
    free(mt->help);
    free(mt->label);
    free(mt);
}

void gp_metrics_free(struct gp_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        metric_free(m->metrics[i]);
    free(m->metrics);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* (colon: metric names only) */
static bool valid_name(const char *s, bool colon)
{
    if (!s || !*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || (colon && c == ':');
        if (!ok)
            return false;
    }
    return true;
}

static bool name_clash(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* Whether the names def would expose clash with mt's. */
static bool metric_clash(const struct gp_metric *mt, const char *name, enum gp_metric_type type)
{
    static const char *const suffixes[] = {"", "_bucket", "_sum", "_count"};
    char a[512], b[512];
    size_t na = type == GP_METRIC_HISTOGRAM ? 4 : 1;
    size_t nb = mt->type == GP_METRIC_HISTOGRAM ? 4 : 1;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            snprintf(a, sizeof a, "%s%s", name, suffixes[i]);
            snprintf(b, sizeof b, "%s%s", mt->name, suffixes[j]);
            if (name_clash(a, b))
                return true;
        }
    return false;
}

static enum gp_err check_def(const struct gp_metrics *m, const struct gp_metric_def *def,
                             struct gp_diag *d)
{
    const char *n = def->name ? def->name : "(null)";
    if (!valid_name(def->name, true) || strlen(def->name) > 200)
        return gp_diag_set(d, GP_EINVALID, "metrics: %s: not a valid metric name", n);
    if (def->label && (!valid_name(def->label, false) || strncmp(def->label, "__", 2) == 0 ||
                       (def->type == GP_METRIC_HISTOGRAM && strcmp(def->label, "le") == 0)))
        return gp_diag_set(d, GP_EINVALID, "metrics: %s: label '%s' is not a valid label name", n,
                           def->label);
    if (def->values && !def->label)
        return gp_diag_set(d, GP_EINVALID, "metrics: %s: label values without a label", n);
    size_t nfixed = 0;
    for (const char *const *v = def->values; v && *v; v++)
        nfixed++;
    if (def->max_series > GP_METRICS_MAX_SERIES || nfixed > GP_METRICS_MAX_SERIES ||
        (def->max_series && def->max_series < nfixed) ||
        (def->label && !nfixed && !def->max_series))
        return gp_diag_set(d, GP_EINVALID, "metrics: %s: a label needs 1 to %d values", n,
                           GP_METRICS_MAX_SERIES);
    if (def->type == GP_METRIC_HISTOGRAM) {
        if (def->nbuckets == 0 || def->nbuckets > GP_METRICS_MAX_BUCKETS || !def->buckets)
            return gp_diag_set(d, GP_EINVALID, "metrics: %s: a histogram needs 1 to %d buckets", n,
                               GP_METRICS_MAX_BUCKETS);
        for (size_t i = 0; i < def->nbuckets; i++)
            if (!isfinite(def->buckets[i]) || (i && def->buckets[i] <= def->buckets[i - 1]))
                return gp_diag_set(d, GP_EINVALID,
                                   "metrics: %s: buckets must be finite and increasing", n);
    } else if (def->nbuckets) {
        return gp_diag_set(d, GP_EINVALID, "metrics: %s: buckets on a metric not a histogram", n);
    }
    for (size_t i = 0; i < m->n; i++)
        if (metric_clash(m->metrics[i], def->name, def->type))
            return gp_diag_set(d, GP_EINVALID, "metrics: %s: clashes with metric %s", n,
                               m->metrics[i]->name);
    return GP_OK;
}

static char *dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Makes the next series of mt (room checked by the caller). */
static struct gp_metric_series *series_make(struct gp_metric *mt, const char *v)
{
    struct gp_metric_series *s = &mt->series[mt->nseries];
    memset(s, 0, sizeof *s);
    s->metric = mt;
    if (v && !(s->value = strdup(v)))
        return NULL;
    if (mt->type == GP_METRIC_HISTOGRAM)
        s->buckets = mt->counts + mt->nseries * mt->nbounds;
    mt->nseries++;
    return s;
}

enum gp_err gp_metrics_define(struct gp_metrics *m, const struct gp_metric_def *def,
                              struct gp_metric **out, struct gp_diag *diag)
{
    if (out)
        *out = NULL;
    pthread_mutex_lock(&m->mu);
    enum gp_err err = check_def(m, def, diag);
    struct gp_metric *mt = NULL;
    if (err != GP_OK)
        goto done;
    err = gp_diag_set(diag, GP_ENOMEM, "metrics: out of memory");
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        struct gp_metric **p = realloc(m->metrics, cap * sizeof *p);
        if (!p)
            goto done;
        m->metrics = p;
        m->cap = cap;
    }
    if (!(mt = calloc(1, sizeof *mt)))
        goto done;
    mt->reg = m;
    mt->type = def->type;
    for (const char *const *v = def->values; v && *v; v++)
        mt->nfixed++;
    mt->max_series = def->max_series ? def->max_series : mt->nfixed ? mt->nfixed : 1;
    mt->nbounds = def->type == GP_METRIC_HISTOGRAM ? def->nbuckets : 0;
    for (size_t i = 0; i < mt->nbounds; i++)
        mt->bounds[i] = def->buckets[i];
    mt->name = dup(def->name);
    mt->help = dup(def->help ? def->help : "");
    mt->label = dup(def->label);
    mt->series = calloc(mt->max_series, sizeof *mt->series);
    mt->fixed = mt->nfixed ? calloc(mt->nfixed, sizeof *mt->fixed) : NULL;
    mt->counts = mt->nbounds ? calloc(mt->max_series * mt->nbounds, sizeof *mt->counts) : NULL;
    if (!mt->name || !mt->help || (def->label && !mt->label) || !mt->series ||
        (mt->nfixed && !mt->fixed) || (mt->nbounds && !mt->counts))
        goto done;
    for (size_t i = 0; i < mt->nfixed; i++)
        if (!(mt->fixed[i] = strdup(def->values[i])) || !series_make(mt, def->values[i]))
            goto done;
    if (!def->label && !series_make(mt, NULL))
        goto done;
    m->metrics[m->n++] = mt;
    if (out)
        *out = mt;
    mt = NULL;
    err = GP_OK;
    if (diag)
        diag->msg[0] = '\0';
done:
    metric_free(mt);
    pthread_mutex_unlock(&m->mu);
    return err;
}

struct gp_metric_series *gp_metrics_series(struct gp_metric *mt, const char *v)
{
    if (!mt || (v == NULL) != (mt->label == NULL))
        return NULL;
    struct gp_metric_series *s = NULL;
    pthread_mutex_lock(&mt->reg->mu);
    for (size_t i = 0; i < mt->nseries && !s; i++)
        if (!v || strcmp(mt->series[i].value, v) == 0)
            s = &mt->series[i];
    if (!s && !mt->nfixed && mt->nseries < mt->max_series)
        s = series_make(mt, v);
    pthread_mutex_unlock(&mt->reg->mu);
    return s;
}

void gp_metrics_inc(struct gp_metric_series *s, double v)
{
    if (!s || s->metric->type == GP_METRIC_HISTOGRAM || isnan(v) ||
        (s->metric->type == GP_METRIC_COUNTER && v < 0))
        return;
    pthread_mutex_lock(&s->metric->reg->mu);
    s->v += v;
    pthread_mutex_unlock(&s->metric->reg->mu);
}

void gp_metrics_set(struct gp_metric_series *s, double v)
{
    if (!s || s->metric->type != GP_METRIC_GAUGE)
        return;
    pthread_mutex_lock(&s->metric->reg->mu);
    s->v = v;
    pthread_mutex_unlock(&s->metric->reg->mu);
}

void gp_metrics_observe(struct gp_metric_series *s, double v)
{
    if (!s || s->metric->type != GP_METRIC_HISTOGRAM || isnan(v))
        return;
    const struct gp_metric *mt = s->metric;
    size_t i = 0;
    while (i < mt->nbounds && v > mt->bounds[i])
        i++;
    pthread_mutex_lock(&mt->reg->mu);
    if (i < mt->nbounds)
        s->buckets[i]++;
    s->count++;
    s->v += v;
    pthread_mutex_unlock(&mt->reg->mu);
}

double gp_metrics_value(const struct gp_metric_series *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->metric->reg->mu);
    double v = s->v;
    pthread_mutex_unlock(&s->metric->reg->mu);
    return v;
}

unsigned long long gp_metrics_count(const struct gp_metric_series *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->metric->reg->mu);
    unsigned long long n = s->count;
    pthread_mutex_unlock(&s->metric->reg->mu);
    return n;
}

/* Go's strconv.FormatFloat(v, 'g', -1, 64): the fewest significant
 * digits that read back as v, in %e form when the decimal exponent is
 * below -4 or at least 6 (shortest 'g' decides on precision 6), else in
 * %f form. */
const char *gp_metrics_format_value(double v, char buf[32])
{
    if (isnan(v))
        return strcpy(buf, "NaN");
    if (isinf(v))
        return strcpy(buf, v > 0 ? "+Inf" : "-Inf");
    int p = 1;
    for (; p < 17; p++) {
        snprintf(buf, 32, "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    snprintf(buf, 32, "%.*e", p - 1, v);
    const char *e = strchr(buf, 'e');
    int exp = e ? atoi(e + 1) : 0;
    if (exp < -4 || exp >= 6)
        return buf;
    int decimals = p - 1 - exp;
    snprintf(buf, 32, "%.*f", decimals > 0 ? decimals : 0, v);
    return buf;
}

static void add_escaped(struct gp_sbuf *out, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            gp_sbuf_add(out, "\\\\");
        else if (*s == '\n')
            gp_sbuf_add(out, "\\n");
        else if (quote && *s == '"')
            gp_sbuf_add(out, "\\\"");
        else
            gp_sbuf_addc(out, *s);
    }
}

/* NAME[SUFFIX]{label="value"[,le="LE"]} VALUE\n */
static void add_sample(struct gp_sbuf *out, const struct gp_metric_series *s, const char *suffix,
                       const char *le, const char *value)
{
    const struct gp_metric *mt = s->metric;
    gp_sbuf_add(out, mt->name);
    gp_sbuf_add(out, suffix);
    if (s->value || le) {
        gp_sbuf_addc(out, '{');
        if (s->value) {
            gp_sbuf_printf(out, "%s=\"", mt->label);
            add_escaped(out, s->value, true);
            gp_sbuf_addc(out, '"');
        }
        if (le)
            gp_sbuf_printf(out, "%sle=\"%s\"", s->value ? "," : "", le);
        gp_sbuf_addc(out, '}');
    }
    gp_sbuf_printf(out, " %s\n", value);
}

static void expose_series(struct gp_sbuf *out, const struct gp_metric_series *s)
{
    const struct gp_metric *mt = s->metric;
    char v[32], le[32];
    if (mt->type != GP_METRIC_HISTOGRAM) {
        add_sample(out, s, "", NULL, gp_metrics_format_value(s->v, v));
        return;
    }
    unsigned long long cum = 0;
    for (size_t i = 0; i < mt->nbounds; i++) {
        cum += s->buckets[i];
        snprintf(v, sizeof v, "%llu", cum);
        add_sample(out, s, "_bucket", gp_metrics_format_value(mt->bounds[i], le), v);
    }
    snprintf(v, sizeof v, "%llu", s->count);
    add_sample(out, s, "_bucket", "+Inf", v);
    add_sample(out, s, "_sum", NULL, gp_metrics_format_value(s->v, le));
    add_sample(out, s, "_count", NULL, v);
}

void gp_metrics_expose(struct gp_metrics *m, struct gp_sbuf *out)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        const struct gp_metric *mt = m->metrics[i];
        gp_sbuf_printf(out, "# HELP %s ", mt->name);
        add_escaped(out, mt->help, false);
        gp_sbuf_printf(out, "\n# TYPE %s %s\n", mt->name, types[mt->type]);
        for (size_t j = 0; j < mt->nseries; j++)
            expose_series(out, &mt->series[j]);
    }
    pthread_mutex_unlock(&m->mu);
}

/* --- the scheduler's metrics ------------------------------------------ */

const char *const gp_km_result_names[] = {"scheduled", "unschedulable", "error", NULL};
const char *const gp_km_bind_failure_names[] = {"conflict", "rejected", "error", NULL};
const char *const gp_km_queue_names[] = {"active", "backoff", "unschedulable", NULL};
const char *const gp_km_audit_names[] = {"gpu", "mig", "memory", NULL};
const char *const gp_km_informer_names[] = {"pods",
                                            "nodes",
                                            "podgroups.scheduling.x-k8s.io",
                                            "podgroups.scheduling.volcano.sh",
                                            "priorityclasses",
                                            "configmaps",
                                            "poddisruptionbudgets",
                                            "persistentvolumeclaims",
                                            "persistentvolumes",
                                            "storageclasses",
                                            "namespaces",
                                            "csinodes",
                                            NULL};
const double gp_km_duration_buckets_s[15] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
                                             0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};

#define NB (sizeof gp_km_duration_buckets_s / sizeof gp_km_duration_buckets_s[0])

static const struct gp_metric_def km_defs[] = {
    {GP_KM_DECISIONS, "Scheduling attempts by result.", GP_METRIC_COUNTER, "result",
     gp_km_result_names, 0, NULL, 0},
    {GP_KM_SCHEDULING_S,
     "Time of one scheduling attempt, from the queue to a decision, in seconds.",
     GP_METRIC_HISTOGRAM, NULL, NULL, 0, gp_km_duration_buckets_s, NB},
    {GP_KM_BIND_S,
     "Time to make a decision durable and bind it (annotation patch and Binding), in seconds.",
     GP_METRIC_HISTOGRAM, NULL, NULL, 0, gp_km_duration_buckets_s, NB},
    {GP_KM_BIND_FAILURES, "Annotation patches or Bindings that failed, by reason.",
     GP_METRIC_COUNTER, "reason", gp_km_bind_failure_names, 0, NULL, 0},
    {GP_KM_PREEMPTIONS, "Pods deleted to make room for a preemptor.", GP_METRIC_COUNTER, NULL, NULL,
     0, NULL, 0},
    {GP_KM_PENDING, "Pending pods by scheduling queue.", GP_METRIC_GAUGE, "queue",
     gp_km_queue_names, 0, NULL, 0},
    {GP_KM_GPU_ALLOCATED, "GPUs allocated to pods, by node pool.", GP_METRIC_GAUGE, "pool", NULL,
     GP_KM_MAX_POOLS, NULL, 0},
    {GP_KM_GPU_CAPACITY, "GPUs on ready nodes, by node pool.", GP_METRIC_GAUGE, "pool", NULL,
     GP_KM_MAX_POOLS, NULL, 0},
    {GP_KM_AUDIT_VIOLATIONS, "Devices the audit found booked twice, by resource.",
     GP_METRIC_COUNTER, "resource", gp_km_audit_names, 0, NULL, 0},
    {GP_KM_LEADER, "1 when this replica holds the leader Lease, else 0.", GP_METRIC_GAUGE, NULL,
     NULL, 0, NULL, 0},
    {GP_KM_ALLOC_TIMEOUTS,
     "Pods bound with gpuplane.io/phase still allocating past the timeout (no node agent "
     "served their Allocate).",
     GP_METRIC_COUNTER, NULL, NULL, 0, NULL, 0},
    {GP_KM_SLOT_WAITING,
     "Pods decided and waiting for their node's allocating slot (one pod allocating per node).",
     GP_METRIC_GAUGE, NULL, NULL, 0, NULL, 0},
    {GP_KM_INFORMER_ERRORS,
     "Lists and watches of the API server that failed (not reached, refused, 4xx, 5xx, a "
     "dropped watch), by the informer's resource.",
     GP_METRIC_COUNTER, "resource", gp_km_informer_names, 0, NULL, 0},
    {GP_KM_CLAIM_PATCHES,
     "PersistentVolumeClaims of a WaitForFirstConsumer class given the node of their pod "
     "(volume.kubernetes.io/selected-node) for provisioning.",
     GP_METRIC_COUNTER, NULL, NULL, 0, NULL, 0},
    {GP_KM_PREBIND_FAILURES,
     "Decisions taken back because their claims were not provisioned for the node (the "
     "annotation refused or taken off, the volume's node affinity not met, the bind timeout).",
     GP_METRIC_COUNTER, NULL, NULL, 0, NULL, 0},
    {GP_KM_EVENTS_LOST,
     "Events not created: refused or unanswered, or dropped while the Event sender's queue was "
     "full (at most 1000 waiting) or left when it stopped.",
     GP_METRIC_COUNTER, NULL, NULL, 0, NULL, 0},
};

enum gp_err gp_kube_metrics_init(struct gp_kube_metrics *km, struct gp_diag *diag)
{
    memset(km, 0, sizeof *km);
    struct gp_metric *mt[sizeof km_defs / sizeof km_defs[0]];
    enum gp_err err = gp_metrics_new(&km->reg, diag);
    for (size_t i = 0; i < sizeof km_defs / sizeof km_defs[0] && err == GP_OK; i++)
        err = gp_metrics_define(km->reg, &km_defs[i], &mt[i], diag);
    if (err != GP_OK) {
        gp_kube_metrics_free(km);
        return err;
    }
    for (int i = 0; i < GP_KM_RESULT_COUNT; i++)
        km->decisions[i] = gp_metrics_series(mt[0], gp_km_result_names[i]);
    km->scheduling_s = gp_metrics_series(mt[1], NULL);
    km->bind_s = gp_metrics_series(mt[2], NULL);
    for (int i = 0; i < GP_KM_BIND_FAILURE_COUNT; i++)
        km->bind_failures[i] = gp_metrics_series(mt[3], gp_km_bind_failure_names[i]);
    km->preemption_victims = gp_metrics_series(mt[4], NULL);
    for (int i = 0; i < GP_KM_QUEUE_COUNT; i++)
        km->pending[i] = gp_metrics_series(mt[5], gp_km_queue_names[i]);
    km->gpu_allocated = mt[6];
    km->gpu_capacity = mt[7];
    for (int i = 0; i < GP_KM_AUDIT_COUNT; i++)
        km->audit[i] = gp_metrics_series(mt[8], gp_km_audit_names[i]);
    km->leader = gp_metrics_series(mt[9], NULL);
    km->allocation_timeouts = gp_metrics_series(mt[10], NULL);
    km->slot_waiting = gp_metrics_series(mt[11], NULL);
    for (int i = 0; i < GP_KM_INFORMER_COUNT; i++)
        km->informer_errors[i] = gp_metrics_series(mt[12], gp_km_informer_names[i]);
    km->claim_patches = gp_metrics_series(mt[13], NULL);
    km->volume_binding_failures = gp_metrics_series(mt[14], NULL);
    km->events_lost = gp_metrics_series(mt[15], NULL);
    return GP_OK;
}

void gp_kube_metrics_free(struct gp_kube_metrics *km)
{
    gp_metrics_free(km->reg);
    memset(km, 0, sizeof *km);
}

bool gp_kube_metrics_pool(struct gp_kube_metrics *km, const char *pool, double allocated,
                          double capacity)
{
    struct gp_metric_series *a = gp_metrics_series(km->gpu_allocated, pool);
    struct gp_metric_series *c = gp_metrics_series(km->gpu_capacity, pool);
    gp_metrics_set(a, allocated);
    gp_metrics_set(c, capacity);
    return a && c;
}
