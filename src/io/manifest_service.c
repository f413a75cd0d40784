/* manifest_service.c - the InferenceService object (gpuplane.io/v1, its
 * format in docs/serve.md): the Deployment whose pods are the replicas,
 * the serving model (requests/s per replica, or an LLM model from a
 * preset of data/serving-models.json and/or its coefficients), the cold
 * start, the load (constant, diurnal, spikes, a CSV series or a request
 * trace, files relative to the manifest) and the autoscaler (the HPA with
 * its behavior, or the concurrency autoscaler), and a rolling update of the
 * Deployment (its time and strategy). Every mapping is read
 * strictly: an unknown field is an error naming the ones expected. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/manifest_internal.h"
#include "io/service.h"
#include "util/fs.h"
#include "util/units.h"

#define MAX_FILE_BYTES ((size_t)256 << 20)
#define MAX_RPS        1e9
#define DAY_S          86400.0

struct svc_in {
    struct gp_service s;
    struct fy_node *rps_node, *llm_node, *load_node, *scaler_node;
    int nload;                    /* load kinds given */
    int nscaler;                  /* autoscalers given */
    struct fy_node *rollout_node; /* spec.rollout or spec.rollouts */
    struct gp_service_rollout rollouts[GP_SERVICE_MAX_ROLLOUTS];
};

static enum gp_err duration(struct gp_yaml *y, struct fy_node *v, double min_s, double max_s,
                            double *out)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && (!gp_units_duration_s(s, out) || *out < min_s || *out > max_s)) {
        char what[96];
        snprintf(what, sizeof what, "a duration from %gs to %gs (\"90s\", \"5m\", \"1h\")", min_s,
                 max_s);
        err = gp_manifest_bad_value(y, v, what);
    }
    return err;
}

static enum gp_err boolean(struct gp_yaml *y, struct fy_node *v, bool *out)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "true or false", &s);
    if (err == GP_OK && strcmp(s, "true") != 0 && strcmp(s, "false") != 0)
        err = gp_manifest_bad_value(y, v, "true or false");
    *out = err == GP_OK && strcmp(s, "true") == 0;
    return err;
}

/* --- the model ----------------------------------------------------------- */

static enum gp_err llm_preset(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    const char *name;
    enum gp_err err = gp_yaml_string(y, v, &name);
    if (err != GP_OK)
        return err;
    const struct gp_serve_preset *p = gp_serve_preset_find(name);
    if (!p) {
        char list[512] = "";
        for (size_t i = 0; i < gp_serve_npresets; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     gp_serve_presets[i].name);
        char what[600];
        snprintf(what, sizeof what, "one of the presets of data/serving-models.json (%s)", list);
        return gp_manifest_bad_value(y, v, what);
    }
    in->s.preset = p->name;
    return GP_OK;
}

static const struct gp_yaml_field llm_fields[] = {
    GP_YCUSTOM("preset", llm_preset, 0),
    GP_YFIELD("itlBaseSeconds", GP_YT_NUMBER, struct svc_in, s.model.itl_a_s, 0, 0, 60),
    GP_YFIELD("itlPerBatchSeconds", GP_YT_NUMBER, struct svc_in, s.model.itl_b_s, 0, 0, 60),
    GP_YFIELD("ttftBaseSeconds", GP_YT_NUMBER, struct svc_in, s.model.ttft_c_s, 0, 0, 3600),
    GP_YFIELD("ttftPerTokenSeconds", GP_YT_NUMBER, struct svc_in, s.model.ttft_d_s, 0, 0, 1),
    GP_YFIELD("maxBatch", GP_YT_U32, struct svc_in, s.model.max_batch, 0, 1, 65536),
    GP_YFIELD("kvCacheTokens", GP_YT_NUMBER, struct svc_in, s.model.kv_tokens, 0, 1, 1e12),
    GP_YFIELD("inputTokens", GP_YT_NUMBER, struct svc_in, s.in_tokens, 0, 0, 1e7),
    GP_YFIELD("outputTokens", GP_YT_NUMBER, struct svc_in, s.out_tokens, 0, 1, 1e7),
};

static enum gp_err spec_llm(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->llm_node = v;
    in->s.llm = true;
    /* the preset first, then the fields written over it */
    struct fy_node *pn =
        fy_node_is_mapping(v) ? fy_node_mapping_lookup_by_string(v, "preset", FY_NT) : NULL;
    if (pn && !gp_yaml_is_null(pn)) {
        struct gp_yaml_saved s = gp_yaml_push_key(y, "preset", gp_yaml_key_node(v, "preset"));
        enum gp_err err = llm_preset(y, pn, obj);
        gp_yaml_pop(y, s);
        if (err != GP_OK)
            return err;
        const struct gp_serve_preset *p = gp_serve_preset_find(in->s.preset);
        in->s.model = p->model;
        in->s.in_tokens = p->in_tokens;
        in->s.out_tokens = p->out_tokens;
    }
    return gp_yaml_object(y, v, llm_fields, sizeof llm_fields / sizeof llm_fields[0], obj, true);
}

static enum gp_err spec_rps(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->rps_node = v;
    return gp_yaml_number(y, v, 1e-9, MAX_RPS, &in->s.rps_per_replica);
}

static enum gp_err spec_cold(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && !gp_dist_parse(s, &in->s.cold_start))
        err = gp_manifest_bad_value(y, v,
                                    "a duration or a distribution (\"2m\", \"exp(1m)\", "
                                    "\"uniform(30s,3m)\", \"lognormal(1m,0.5)\")");
    in->s.has_cold_start = err == GP_OK;
    return err;
}

/* --- the load ------------------------------------------------------------ */

static enum gp_err load_constant(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->nload++;
    in->s.load.kind = GP_LOAD_CONSTANT;
    return gp_yaml_number(y, v, 0, MAX_RPS, &in->s.load.rps);
}

static enum gp_err dur_peak(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 0, 365 * DAY_S, &((struct svc_in *)obj)->s.load.peak_s);
}
static enum gp_err dur_period(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 60, 365 * DAY_S, &((struct svc_in *)obj)->s.load.period_s);
}
static enum gp_err dur_every(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 1, 365 * DAY_S, &((struct svc_in *)obj)->s.load.every_s);
}
static enum gp_err dur_length(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 1, 365 * DAY_S, &((struct svc_in *)obj)->s.load.length_s);
}
static enum gp_err dur_first(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 0, 365 * DAY_S, &((struct svc_in *)obj)->s.load.first_s);
}

static const struct gp_yaml_field diurnal_fields[] = {
    GP_YFIELD("mean", GP_YT_NUMBER, struct svc_in, s.load.rps, GP_YF_REQUIRED, 0, MAX_RPS),
    GP_YFIELD("amplitude", GP_YT_NUMBER, struct svc_in, s.load.amplitude, 0, 0, 1),
    GP_YCUSTOM("peak", dur_peak, 0),
    GP_YCUSTOM("period", dur_period, 0),
};

static enum gp_err load_diurnal(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->nload++;
    in->s.load.kind = GP_LOAD_DIURNAL;
    in->s.load.amplitude = 0.5;
    in->s.load.peak_s = 14 * 3600.0;
    in->s.load.period_s = DAY_S;
    return gp_yaml_object(y, v, diurnal_fields, sizeof diurnal_fields / sizeof diurnal_fields[0],
                          obj, true);
}

static const struct gp_yaml_field spikes_fields[] = {
    GP_YFIELD("base", GP_YT_NUMBER, struct svc_in, s.load.rps, GP_YF_REQUIRED, 0, MAX_RPS),
    GP_YFIELD("height", GP_YT_NUMBER, struct svc_in, s.load.spike_rps, GP_YF_REQUIRED, 0, MAX_RPS),
    GP_YCUSTOM("every", dur_every, 0),
    GP_YCUSTOM("length", dur_length, GP_YF_REQUIRED),
    GP_YCUSTOM("first", dur_first, 0),
};

static enum gp_err load_spikes(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->nload++;
    in->s.load.kind = GP_LOAD_SPIKES;
    return gp_yaml_object(y, v, spikes_fields, sizeof spikes_fields / sizeof spikes_fields[0], obj,
                          true);
}

/* A file relative to the manifest, read and parsed. */
static enum gp_err load_file(struct gp_yaml *y, struct fy_node *v, struct svc_in *in, bool trace)
{
    const char *rel;
    enum gp_err err = gp_yaml_string(y, v, &rel);
    if (err != GP_OK)
        return err;
    in->nload++;
    in->s.load.kind = trace ? GP_LOAD_TRACE : GP_LOAD_SERIES;
    const char *slash = strrchr(y->name, '/');
    int dl = rel[0] == '/' || !slash ? 0 : (int)(slash - y->name) + 1;
    char *path = gp_arena_printf(y->arena, "%.*s%s", dl, y->name, rel);
    if (!path)
        return gp_manifest_oom(y);
    char q[80];
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > MAX_FILE_BYTES)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected a readable regular file of at most 256 MiB, got \"%s\" (%s)",
                            gp_yaml_quote(v, q, sizeof q), path);
    char *text = NULL;
    size_t len = 0;
    struct gp_diag d = {""};
    if ((err = gp_fs_read(path, &text, &len, &d)) == GP_OK)
        err = trace ? gp_load_parse_trace(text, len, path, 1.0, y->arena, &in->s.load, &d)
                    : gp_load_parse_series(text, len, path, y->arena, &in->s.load, &d);
    free(text);
    return err == GP_OK ? GP_OK : gp_yaml_fail(y, v, err, "%s", d.msg);
}

static enum gp_err load_series(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return load_file(y, v, obj, false);
}
static enum gp_err load_trace(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return load_file(y, v, obj, true);
}

static const struct gp_yaml_field load_fields[] = {
    GP_YCUSTOM("constant", load_constant, 0),
    GP_YCUSTOM("diurnal", load_diurnal, 0),
    GP_YCUSTOM("spikes", load_spikes, 0),
    GP_YCUSTOM("series", load_series, 0),
    GP_YCUSTOM("trace", load_trace, 0),
    GP_YFIELD("scale", GP_YT_NUMBER, struct svc_in, s.load.scale, 0, 0, 1e6),
};

static enum gp_err spec_load(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->load_node = v;
    in->s.load.scale = 1;
    enum gp_err err =
        gp_yaml_object(y, v, load_fields, sizeof load_fields / sizeof load_fields[0], obj, true);
    if (err == GP_OK && in->nload != 1)
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "expected exactly one of constant, diurnal, spikes, series, trace");
    return err;
}

/* --- the autoscalers ----------------------------------------------------- */

struct rules_ctx {
    struct gp_hpa_rules *r;
};

static enum gp_err policy_type(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_hpa_policy *p = obj;
    const char *s;
    enum gp_err err = gp_yaml_string(y, v, &s);
    if (err != GP_OK)
        return err;
    if (strcmp(s, "Pods") == 0)
        p->type = GP_HPA_PODS;
    else if (strcmp(s, "Percent") == 0)
        p->type = GP_HPA_PERCENT;
    else
        return gp_manifest_bad_value(y, v, "Pods or Percent");
    return GP_OK;
}

static const struct gp_yaml_field policy_fields[] = {
    GP_YCUSTOM("type", policy_type, GP_YF_REQUIRED),
    GP_YFIELD("value", GP_YT_I32, struct gp_hpa_policy, value, GP_YF_REQUIRED, 1, 1e9),
    GP_YFIELD("periodSeconds", GP_YT_I32, struct gp_hpa_policy, period_s, GP_YF_REQUIRED, 1,
              GP_HPA_MAX_PERIOD_S),
};

static enum gp_err one_policy(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct gp_hpa_rules *r = ctx;
    if (i >= GP_HPA_MAX_POLICIES)
        return gp_yaml_fail(y, item, GP_EINVALID, "at most %d policies", GP_HPA_MAX_POLICIES);
    r->policies[i] = (struct gp_hpa_policy){0};
    r->npolicies = (uint32_t)i + 1;
    return gp_yaml_object(y, item, policy_fields, sizeof policy_fields / sizeof policy_fields[0],
                          &r->policies[i], true);
}

static enum gp_err rules_policies(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_hpa_rules *r = obj;
    r->npolicies = 0;
    enum gp_err err = gp_yaml_list(y, v, one_policy, r);
    if (err == GP_OK && r->npolicies == 0)
        err = gp_yaml_fail(y, v, GP_EINVALID, "expected at least one policy");
    return err;
}

static enum gp_err rules_select(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_hpa_rules *r = obj;
    const char *s;
    enum gp_err err = gp_yaml_string(y, v, &s);
    if (err != GP_OK)
        return err;
    if (strcmp(s, "Max") == 0)
        r->select = GP_HPA_SELECT_MAX;
    else if (strcmp(s, "Min") == 0)
        r->select = GP_HPA_SELECT_MIN;
    else if (strcmp(s, "Disabled") == 0)
        r->select = GP_HPA_SELECT_DISABLED;
    else
        return gp_manifest_bad_value(y, v, "Max, Min or Disabled");
    return GP_OK;
}

static const struct gp_yaml_field rules_fields[] = {
    GP_YFIELD("stabilizationWindowSeconds", GP_YT_I32, struct gp_hpa_rules, window_s, 0, 0,
              GP_HPA_MAX_WINDOW_S),
    GP_YCUSTOM("selectPolicy", rules_select, 0),
    GP_YCUSTOM("policies", rules_policies, 0),
    {"tolerance", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static enum gp_err behavior_up(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_hpa_spec *h = obj;
    return gp_yaml_object(y, v, rules_fields, sizeof rules_fields / sizeof rules_fields[0], &h->up,
                          true);
}
static enum gp_err behavior_down(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_hpa_spec *h = obj;
    return gp_yaml_object(y, v, rules_fields, sizeof rules_fields / sizeof rules_fields[0],
                          &h->down, true);
}

static const struct gp_yaml_field behavior_fields[] = {
    GP_YCUSTOM("scaleUp", behavior_up, 0),
    GP_YCUSTOM("scaleDown", behavior_down, 0),
};

static enum gp_err hpa_behavior(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    return gp_yaml_object(y, v, behavior_fields, sizeof behavior_fields / sizeof behavior_fields[0],
                          &in->s.hpa, true);
}

static enum gp_err hpa_metric(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    const char *s;
    enum gp_err err = gp_yaml_string(y, v, &s);
    if (err != GP_OK)
        return err;
    if (strcmp(s, "utilization") == 0)
        in->s.hpa_metric = GP_HPA_UTILIZATION;
    else if (strcmp(s, "rps") == 0)
        in->s.hpa_metric = GP_HPA_RPS;
    else if (strcmp(s, "concurrency") == 0)
        in->s.hpa_metric = GP_HPA_CONCURRENCY;
    else
        return gp_manifest_bad_value(y, v, "utilization, rps or concurrency");
    return GP_OK;
}

static const struct gp_yaml_field hpa_fields[] = {
    GP_YFIELD("minReplicas", GP_YT_I32, struct svc_in, s.hpa.min_replicas, 0, 1, 100000),
    GP_YFIELD("maxReplicas", GP_YT_I32, struct svc_in, s.hpa.max_replicas, GP_YF_REQUIRED, 1,
              100000),
    GP_YCUSTOM("metric", hpa_metric, 0),
    GP_YFIELD("target", GP_YT_NUMBER, struct svc_in, s.hpa.target, 0, 1e-9, 1e9),
    GP_YFIELD("tolerance", GP_YT_NUMBER, struct svc_in, s.hpa.tolerance, 0, 0, 1),
    GP_YCUSTOM("behavior", hpa_behavior, 0),
};

static enum gp_err scaler_hpa(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->nscaler++;
    in->s.scaler = GP_SCALER_HPA;
    gp_serve_hpa_spec_default(&in->s.hpa, 1, 1, 70.0);
    in->s.hpa_metric = GP_HPA_UTILIZATION;
    in->s.hpa.target = 0; /* by metric, below */
    enum gp_err err =
        gp_yaml_object(y, v, hpa_fields, sizeof hpa_fields / sizeof hpa_fields[0], obj, true);
    if (err == GP_OK && in->s.hpa.max_replicas < in->s.hpa.min_replicas)
        err = gp_yaml_fail(y, v, GP_EINVALID, "maxReplicas (%d) must be at least minReplicas (%d)",
                           (int)in->s.hpa.max_replicas, (int)in->s.hpa.min_replicas);
    if (err == GP_OK && !(in->s.hpa.target > 0)) {
        if (in->s.hpa_metric == GP_HPA_UTILIZATION)
            in->s.hpa.target = 70;
        else
            err = gp_yaml_fail(y, v, GP_EINVALID,
                               "a target is required for metric rps or "
                               "concurrency (a value per pod)");
    }
    return err;
}

static enum gp_err kpa_window(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    double s;
    enum gp_err err = duration(y, v, 6, GP_KPA_MAX_WINDOW_S, &s);
    in->s.kpa.stable_s = (int32_t)s;
    return err;
}
static enum gp_err kpa_grace(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 0, DAY_S, &((struct svc_in *)obj)->s.kpa.grace_s);
}
static enum gp_err kpa_zero(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return boolean(y, v, &((struct svc_in *)obj)->s.kpa.scale_to_zero);
}
static enum gp_err kpa_thresh(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    double pct;
    enum gp_err err = gp_yaml_number(y, v, 110, 1000, &pct);
    ((struct svc_in *)obj)->s.kpa.panic_thresh = pct / 100.0;
    return err;
}

static const struct gp_yaml_field kpa_fields[] = {
    GP_YFIELD("target", GP_YT_NUMBER, struct svc_in, s.kpa.target, 0, 1e-3, 1e6),
    GP_YFIELD("minScale", GP_YT_I32, struct svc_in, s.kpa.min_scale, 0, 0, 100000),
    GP_YFIELD("maxScale", GP_YT_I32, struct svc_in, s.kpa.max_scale, 0, 0, 100000),
    GP_YCUSTOM("stableWindow", kpa_window, 0),
    GP_YFIELD("panicWindowPercentage", GP_YT_NUMBER, struct svc_in, s.kpa.panic_pct, 0, 1, 100),
    GP_YCUSTOM("panicThresholdPercentage", kpa_thresh, 0),
    GP_YCUSTOM("scaleToZeroGracePeriod", kpa_grace, 0),
    GP_YCUSTOM("scaleToZero", kpa_zero, 0),
};

static enum gp_err scaler_kpa(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->nscaler++;
    in->s.scaler = GP_SCALER_CONCURRENCY;
    gp_serve_kpa_spec_default(&in->s.kpa);
    enum gp_err err =
        gp_yaml_object(y, v, kpa_fields, sizeof kpa_fields / sizeof kpa_fields[0], obj, true);
    if (err == GP_OK && in->s.kpa.max_scale > 0 && in->s.kpa.max_scale < in->s.kpa.min_scale)
        err = gp_yaml_fail(y, v, GP_EINVALID, "maxScale (%d) must be at least minScale (%d)",
                           (int)in->s.kpa.max_scale, (int)in->s.kpa.min_scale);
    return err;
}

static const struct gp_yaml_field scaler_fields[] = {
    GP_YCUSTOM("hpa", scaler_hpa, 0),
    GP_YCUSTOM("concurrency", scaler_kpa, 0),
};

static enum gp_err spec_scaler(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    in->scaler_node = v;
    enum gp_err err = gp_yaml_object(y, v, scaler_fields,
                                     sizeof scaler_fields / sizeof scaler_fields[0], obj, true);
    if (err == GP_OK && in->nscaler != 1)
        err = gp_yaml_fail(y, v, GP_EINVALID, "expected exactly one of hpa, concurrency");
    return err;
}

/* --- the object ---------------------------------------------------------- */

/* --- the rolling update --------------------------------------------------- */

/* An IntOrString of the strategy: "25%" or a count (apps/v1 RollingUpdateDeployment) */
static enum gp_err int_or_percent(struct gp_yaml *y, struct fy_node *v, struct gp_rollout_value *o)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a count or a percent (\"25%\")", &s);
    if (err != GP_OK)
        return err;
    char *end = NULL;
    long x = strtol(s, &end, 10);
    bool pct = end && *end == '%' && end[1] == '\0';
    if (end == s || !(pct || *end == '\0') || x < 0 || x > (pct ? 100 : 1000000))
        return gp_manifest_bad_value(y, v, "a count from 0 or a percent from 0% to 100% (\"25%\")");
    *o = (struct gp_rollout_value){(int32_t)x, pct};
    return GP_OK;
}

static enum gp_err roll_at(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 0, 3650 * DAY_S, &((struct gp_service_rollout *)obj)->at_s);
}
static enum gp_err roll_surge(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return int_or_percent(y, v, &((struct gp_service_rollout *)obj)->max_surge);
}
static enum gp_err roll_unavailable(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return int_or_percent(y, v, &((struct gp_service_rollout *)obj)->max_unavailable);
}

static const struct gp_yaml_field rollout_fields[] = {
    GP_YCUSTOM("at", roll_at, GP_YF_REQUIRED),
    GP_YCUSTOM("maxSurge", roll_surge, 0),
    GP_YCUSTOM("maxUnavailable", roll_unavailable, 0),
};

/* One rollout, after those before it in time. */
static enum gp_err one_rollout(struct gp_yaml *y, struct fy_node *v, size_t i, void *obj)
{
    struct svc_in *in = obj;
    if (i >= GP_SERVICE_MAX_ROLLOUTS)
        return gp_yaml_fail(y, v, GP_EINVALID, "at most %d rollouts", GP_SERVICE_MAX_ROLLOUTS);
    struct gp_service_rollout *ro = &in->rollouts[i];
    /* the Deployment's defaults: 25 % and 25 % */
    *ro = (struct gp_service_rollout){.max_surge = {25, true}, .max_unavailable = {25, true}};
    in->s.nrollouts = i + 1;
    enum gp_err err = gp_yaml_object(y, v, rollout_fields,
                                     sizeof rollout_fields / sizeof rollout_fields[0], ro, true);
    if (err == GP_OK && i > 0 && !(ro->at_s > in->rollouts[i - 1].at_s)) {
        struct fy_node *at = fy_node_mapping_lookup_by_string(v, "at", FY_NT);
        struct gp_yaml_saved sv = gp_yaml_push_key(y, "at", gp_yaml_key_node(v, "at"));
        err = gp_yaml_fail(y, at ? at : v, GP_EINVALID,
                           "%gs is not after rollouts[%zu].at (%gs): rollouts must be in "
                           "increasing time",
                           ro->at_s, i - 1, in->rollouts[i - 1].at_s);
        gp_yaml_pop(y, sv);
    }
    return err;
}

static enum gp_err spec_rollout(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    if (in->rollout_node)
        return gp_yaml_fail(y, v, GP_EINVALID, "give rollout (one) or rollouts (a list), not both");
    in->rollout_node = v;
    return one_rollout(y, v, 0, obj);
}

static enum gp_err spec_rollouts(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct svc_in *in = obj;
    if (in->rollout_node)
        return gp_yaml_fail(y, v, GP_EINVALID, "give rollout (one) or rollouts (a list), not both");
    in->rollout_node = v;
    return gp_yaml_list(y, v, one_rollout, obj);
}

static enum gp_err spec_limit(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, 1e-6, 86400, &((struct svc_in *)obj)->s.latency_limit_s);
}

static const struct gp_yaml_field spec_fields[] = {
    GP_YFIELD("deployment", GP_YT_STRING, struct svc_in, s.deployment, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("requestsPerSecond", spec_rps, 0),
    GP_YCUSTOM("llm", spec_llm, 0),
    GP_YCUSTOM("coldStart", spec_cold, 0),
    GP_YCUSTOM("load", spec_load, GP_YF_REQUIRED),
    GP_YCUSTOM("autoscaler", spec_scaler, 0),
    GP_YCUSTOM("rollout", spec_rollout, 0),
    GP_YCUSTOM("rollouts", spec_rollouts, 0),
    GP_YCUSTOM("latencyLimit", spec_limit, 0),
};

static enum gp_err obj_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, spec_fields, sizeof spec_fields / sizeof spec_fields[0], obj, true);
}

static const struct gp_yaml_field meta_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct svc_in, s.name, GP_YF_REQUIRED, 0, 0),
    {"namespace", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"labels", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"annotations", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static enum gp_err obj_meta(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, meta_fields, sizeof meta_fields / sizeof meta_fields[0], obj, true);
}

static const struct gp_yaml_field obj_fields[] = {
    {"apiVersion", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"kind", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    GP_YCUSTOM("metadata", obj_meta, GP_YF_REQUIRED),
    GP_YCUSTOM("spec", obj_spec, GP_YF_REQUIRED),
};

enum gp_err gp_manifest_read_service(struct gp_yaml *y, struct fy_node *n,
                                     struct manifest_stream *st, int line)
{
    struct svc_in in;
    memset(&in, 0, sizeof in);
    /* the name first, so that every path names the object */
    struct fy_node *meta = fy_node_mapping_lookup_by_string(n, "metadata", FY_NT);
    struct fy_node *nm = meta && fy_node_is_mapping(meta)
                             ? fy_node_mapping_lookup_by_string(meta, "name", FY_NT)
                             : NULL;
    size_t len = 0;
    const char *text = nm && fy_node_is_scalar(nm) ? fy_node_get_scalar(nm, &len) : NULL;
    char root[160];
    if (text && len > 0 && len <= 100)
        snprintf(root, sizeof root, "InferenceService/%.*s", (int)len, text);
    else
        snprintf(root, sizeof root, "InferenceService");
    gp_yaml_set_root(y, root);
    enum gp_err err =
        gp_yaml_object(y, n, obj_fields, sizeof obj_fields / sizeof obj_fields[0], &in, true);
    if (err != GP_OK)
        return err;
    struct fy_node *spec = fy_node_mapping_lookup_by_string(n, "spec", FY_NT);
    gp_yaml_set_root(y, root);
    struct gp_yaml_saved sv = gp_yaml_push_key(y, "spec", NULL);
    if ((in.rps_node != NULL) == (in.llm_node != NULL))
        err = gp_yaml_fail(y, spec, GP_EINVALID,
                           "expected exactly one of requestsPerSecond (a plain model) and llm");
    else if (in.s.llm && !(in.s.model.itl_a_s > 0 || in.s.model.itl_b_s > 0))
        err = gp_yaml_fail(y, in.llm_node, GP_EINVALID,
                           "an llm model needs a preset or itlBaseSeconds/itlPerBatchSeconds");
    else if (in.s.llm && !(in.s.out_tokens >= 1))
        err = gp_yaml_fail(y, in.llm_node, GP_EINVALID,
                           "an llm model needs outputTokens (mean tokens generated) or a preset");
    gp_yaml_pop(y, sv);
    if (err != GP_OK)
        return err;
    if (in.s.scaler == GP_SCALER_NONE)
        in.s.sync_s = GP_HPA_SYNC_S;
    else
        in.s.sync_s = in.s.scaler == GP_SCALER_HPA ? GP_HPA_SYNC_S : GP_KPA_TICK_S;
    if (in.s.nrollouts > 0) {
        struct gp_service_rollout *ro = gp_arena_alloc(y->arena, in.s.nrollouts * sizeof *ro);
        if (!ro)
            return gp_manifest_oom(y);
        memcpy(ro, in.rollouts, in.s.nrollouts * sizeof *ro);
        in.s.rollouts = ro;
    }
    in.s.source = gp_arena_printf(y->arena, "%s:%d", y->name, line);
    if (!in.s.source || gp_workload_add_service(st->w, y->arena, &in.s) != GP_OK)
        return gp_manifest_oom(y);
    return GP_OK;
}
