/* test_render.c - `gpuplane render`'s writers (io/render.c): every file
 * parses back with libfyaml, with YAML 1.2 core types and no YAML 1.1
 * booleans, into exactly the intended structure; the ConfigMaps carry the
 * same configs; the mig-parted file has the structure of mig-parted's own
 * default file with profile names valid for each pool's GPU; names YAML
 * could misread are quoted; a spec that cannot be rendered is an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared_data.h"
#include <jansson.h>
#include <libfyaml.h>

#include "engine/mig.h"
#include "io/cluster.h"
#include "io/render.h"

/* --- YAML to JSON with the core schema ------------------------------------ */

static bool all_digits(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static bool word_nocase(const char *s, const char *w)
{
    for (; *s && *w; s++, w++)
        if ((*s | 0x20) != *w)
            return false;
    return !*s && !*w;
}

static json_t *to_json(struct fy_node *n)
{
    if (!n)
        return json_null();
    if (fy_node_is_mapping(n)) {
        json_t *o = json_object();
        void *it = NULL;
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(n, &it)) != NULL) {
            json_t *k = to_json(fy_node_pair_key(p));
            if (!json_is_string(k))
                fail_msg("a mapping key that is not a string");
            if (json_object_get(o, json_string_value(k)))
                fail_msg("duplicate key %s", json_string_value(k));
            json_object_set_new(o, json_string_value(k), to_json(fy_node_pair_value(p)));
            json_decref(k);
        }
        return o;
    }
    if (fy_node_is_sequence(n)) {
        json_t *a = json_array();
        void *it = NULL;
        struct fy_node *item;
        while ((item = fy_node_sequence_iterate(n, &it)) != NULL)
            json_array_append_new(a, to_json(item));
        return a;
    }
    const char *s = fy_node_get_scalar0(n);
    assert_non_null(s);
    if (fy_node_get_style(n) != FYNS_PLAIN)
        return json_string(s);
    if (!*s || !strcmp(s, "~") || word_nocase(s, "null"))
        return json_null();
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        return json_true();
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        return json_false();
    static const char *const yaml11[] = {"yes", "no", "on", "off", "y", "n"};
    for (size_t i = 0; i < sizeof yaml11 / sizeof yaml11[0]; i++)
        if (word_nocase(s, yaml11[i]))
            fail_msg("plain '%s' is a boolean to YAML 1.1 readers", s);
    if (all_digits(s))
        return json_integer(strtoll(s, NULL, 10));
    char *end;
    double d = strtod(s, &end);
    if (*end == '\0' && s[0] != '.' && strchr("0123456789+-", s[0]))
        return json_real(d);
    return json_string(s);
}

static json_t *yaml_json(const char *text)
{
    struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET};
    struct fy_document *doc = fy_document_build_from_string(&cfg, text, FY_NT);
    if (!doc)
        fail_msg("does not parse:\n%s", text);
    json_t *j = to_json(fy_document_root(doc));
    fy_document_destroy(doc);
    return j;
}

static void expect_json(const char *yaml, const char *want_json)
{
    json_error_t e;
    json_t *want = json_loads(want_json, 0, &e);
    if (!want)
        fail_msg("bad expected JSON: %s", e.text);
    json_t *got = yaml_json(yaml);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
        char *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
        print_error("got  %s\nwant %s\n", g, w);
        free(g);
        free(w);
        fail();
    }
    json_decref(got);
    json_decref(want);
}

/* --- rendering a spec ---------------------------------------------------------- */

struct rendered {
    struct gp_arena arena;
    struct gp_cluster c;
    struct gp_render r;
};

static struct rendered *render_text(const char *text)
{
    struct rendered *x = calloc(1, sizeof *x);
    assert_non_null(x);
    gp_arena_init(&x->arena);
    struct gp_diag d = {""};
    enum gp_err err =
        gp_cluster_parse_yaml(text, strlen(text), "cluster.yaml", &x->arena, &x->c, &d);
    if (err == GP_OK)
        err = gp_render_cluster(&x->c, &x->r, &d);
    if (err != GP_OK)
        fail_msg("%s", d.msg);
    return x;
}

static struct rendered *render_file(const char *path)
{
    struct rendered *x = calloc(1, sizeof *x);
    assert_non_null(x);
    gp_arena_init(&x->arena);
    struct gp_diag d = {""};
    enum gp_err err = gp_cluster_load(path, &x->arena, &x->c, &d);
    if (err == GP_OK)
        err = gp_render_cluster(&x->c, &x->r, &d);
    if (err != GP_OK)
        fail_msg("%s", d.msg);
    return x;
}

static void rendered_free(struct rendered *x)
{
    gp_render_free(&x->r);
    gp_arena_free(&x->arena);
    free(x);
}

static const char *file(const struct rendered *x, const char *name)
{
    for (size_t i = 0; i < x->r.nfiles; i++)
        if (strcmp(x->r.files[i].name, name) == 0)
            return gp_sbuf_str(&x->r.files[i].text);
    fail_msg("no file %s", name);
    return NULL;
}

#define DP_NONE  "{\"version\":\"v1\",\"flags\":{\"migStrategy\":\"none\"}}"
#define DP_MIXED "{\"version\":\"v1\",\"flags\":{\"migStrategy\":\"mixed\"}}"
#define DP_TS4                                                                                     \
    "{\"version\":\"v1\",\"flags\":{\"migStrategy\":\"none\"},\"sharing\":{\"timeSlicing\":{"      \
    "\"renameByDefault\":false,\"failRequestsGreaterThanOne\":true,\"resources\":[{\"name\":"      \
    "\"nvidia.com/gpu\",\"replicas\":4}]}}}"
#define DP_MPS4                                                                                    \
    "{\"version\":\"v1\",\"flags\":{\"migStrategy\":\"none\"},\"sharing\":{\"mps\":{"              \
    "\"renameByDefault\":false,\"failRequestsGreaterThanOne\":true,\"resources\":[{\"name\":"      \
    "\"nvidia.com/gpu\",\"replicas\":4}]}}}"
#define MIG_PARTED                                                                                 \
    "{\"version\":\"v1\",\"mig-configs\":{\"all-disabled\":[{\"devices\":\"all\","                 \
    "\"mig-enabled\":false}],\"a100-mig\":[{\"devices\":\"all\",\"mig-enabled\":true,"             \
    "\"mig-devices\":{\"1g.10gb\":2,\"2g.20gb\":1,\"3g.40gb\":1}}]}}"

static void test_example_files(void **state)
{
    (void)state;
    struct rendered *x = render_file(GP_EXAMPLES_DIR "/cluster-sharing.yaml");
    static const char *const names[] = {
        "device-plugin-a100-mig.yaml",  "device-plugin-h100-ts.yaml",
        "device-plugin-l4-mps.yaml",    "device-plugin-a100-train.yaml",
        "configmap-device-plugin.yaml", "mig-parted.yaml",
        "configmap-mig-parted.yaml",    "node-labels.yaml",
    };
    assert_int_equal(x->r.nfiles, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < x->r.nfiles; i++)
        assert_string_equal(x->r.files[i].name, names[i]);

    expect_json(file(x, "device-plugin-a100-mig.yaml"), DP_MIXED);
    expect_json(file(x, "device-plugin-h100-ts.yaml"), DP_TS4);
    expect_json(file(x, "device-plugin-l4-mps.yaml"), DP_MPS4);
    expect_json(file(x, "device-plugin-a100-train.yaml"), DP_NONE);
    expect_json(file(x, "mig-parted.yaml"), MIG_PARTED);
    expect_json(file(x, "node-labels.yaml"), "{\"a100-mig\":{\"gpuplane.io/pool\":\"a100-mig\","
                                             "\"nvidia.com/device-plugin.config\":\"a100-mig\","
                                             "\"nvidia.com/mig.config\":\"a100-mig\"},"
                                             "\"h100-ts\":{\"gpuplane.io/pool\":\"h100-ts\","
                                             "\"nvidia.com/device-plugin.config\":\"h100-ts\","
                                             "\"nvidia.com/mig.config\":\"all-disabled\","
                                             "\"gpuplane.io/fail-requests-greater-than-one\":"
                                             "\"true\"},"
                                             "\"l4-mps\":{\"gpuplane.io/pool\":\"l4-mps\","
                                             "\"nvidia.com/device-plugin.config\":\"l4-mps\","
                                             "\"gpuplane.io/fail-requests-greater-than-one\":"
                                             "\"true\"},"
                                             "\"a100-train\":{\"gpuplane.io/pool\":\"a100-train\","
                                             "\"nvidia.com/device-plugin.config\":\"a100-train\","
                                             "\"nvidia.com/mig.config\":\"all-disabled\"}}");

    /* the ConfigMaps: Kubernetes objects whose data holds the same configs */
    json_t *cm = yaml_json(file(x, "configmap-device-plugin.yaml"));
    assert_string_equal(json_string_value(json_object_get(cm, "apiVersion")), "v1");
    assert_string_equal(json_string_value(json_object_get(cm, "kind")), "ConfigMap");
    json_t *meta = json_object_get(cm, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "name")),
                        GP_RENDER_DEVICE_PLUGIN_CM);
    assert_string_equal(json_string_value(json_object_get(meta, "namespace")), "gpu-operator");
    json_t *data = json_object_get(cm, "data");
    assert_int_equal(json_object_size(data), 4);
    static const struct {
        const char *key, *json;
    } keys[] = {
        {"a100-mig", DP_MIXED}, {"h100-ts", DP_TS4}, {"l4-mps", DP_MPS4}, {"a100-train", DP_NONE}};
    for (size_t i = 0; i < 4; i++) {
        const char *text = json_string_value(json_object_get(data, keys[i].key));
        assert_non_null(text);
        expect_json(text, keys[i].json);
    }
    json_decref(cm);
    cm = yaml_json(file(x, "configmap-mig-parted.yaml"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(cm, "metadata"), "name")),
                        GP_RENDER_MIG_PARTED_CM);
    data = json_object_get(cm, "data");
    assert_int_equal(json_object_size(data), 1);
    expect_json(json_string_value(json_object_get(data, "config.yaml")), MIG_PARTED);
    json_decref(cm);

    /* the stream: every file as one document, in order, each named */
    struct gp_sbuf s;
    gp_sbuf_init(&s);
    gp_render_stream(&x->r, &s);
    struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET};
    struct fy_parser *fyp = fy_parser_create(&cfg);
    assert_non_null(fyp);
    assert_int_equal(fy_parser_set_string(fyp, gp_sbuf_str(&s), s.len), 0);
    size_t ndocs = 0;
    struct fy_document *doc;
    while ((doc = fy_parse_load_document(fyp)) != NULL) {
        assert_true(ndocs < x->r.nfiles);
        json_t *a = to_json(fy_document_root(doc));
        json_t *b = yaml_json(gp_sbuf_str(&x->r.files[ndocs].text));
        assert_true(json_equal(a, b));
        json_decref(a);
        json_decref(b);
        fy_parse_document_destroy(fyp, doc);
        ndocs++;
    }
    assert_int_equal(ndocs, x->r.nfiles);
    fy_parser_destroy(fyp);
    char want[128];
    snprintf(want, sizeof want, "---\n# file: %s\n", x->r.files[0].name);
    assert_memory_equal(gp_sbuf_str(&s), want, strlen(want));
    assert_non_null(strstr(gp_sbuf_str(&s), "---\n# file: node-labels.yaml\n"));
    gp_sbuf_free(&s);
    rendered_free(x);
}

#define HEADER                                                                                     \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n  nodePools:\n"

static void test_modes(void **state)
{
    (void)state;
    struct rendered *x = render_text(
        HEADER "  - name: ts\n    gpu: {model: T4, count: 4, memory: 16Gi}\n    cpu: '8'\n"
               "    memory: 8Gi\n    count: 1\n"
               "    sharing: {mode: timeslice, replicas: 10, renameByDefault: true}\n"
               "  - name: single\n    gpu: {model: H100-80GB, count: 8}\n    cpu: '8'\n"
               "    memory: 8Gi\n    count: 1\n"
               "    sharing: {mode: mig, mig: {strategy: single, layout: all-3g.40gb}}\n"
               "  - name: dyn\n    gpu: {model: H200, count: 8}\n    cpu: '8'\n"
               "    memory: 8Gi\n    count: 1\n"
               "    sharing: {mode: mig, mig: {dynamic: true}}\n"
               "  - name: cpu\n    cpu: '8'\n    memory: 8Gi\n    count: 1\n");
    expect_json(file(x, "device-plugin-ts.yaml"),
                "{\"version\":\"v1\",\"flags\":{\"migStrategy\":\"none\"},\"sharing\":{"
                "\"timeSlicing\":{\"renameByDefault\":true,\"failRequestsGreaterThanOne\":false,"
                "\"resources\":[{\"name\":\"nvidia.com/gpu\",\"replicas\":10}]}}}");
    expect_json(file(x, "device-plugin-single.yaml"),
                "{\"version\":\"v1\",\"flags\":{\"migStrategy\":\"single\"}}");
    expect_json(file(x, "device-plugin-dyn.yaml"), DP_MIXED);
    expect_json(file(x, "mig-parted.yaml"),
                "{\"version\":\"v1\",\"mig-configs\":{\"all-disabled\":[{\"devices\":\"all\","
                "\"mig-enabled\":false}],\"single\":[{\"devices\":\"all\",\"mig-enabled\":true,"
                "\"mig-devices\":{\"3g.40gb\":2}}],\"dyn\":[{\"devices\":\"all\","
                "\"mig-enabled\":true,\"mig-devices\":{}}]}}");
    expect_json(file(x, "node-labels.yaml"),
                "{\"ts\":{\"gpuplane.io/pool\":\"ts\",\"nvidia.com/device-plugin.config\":\"ts\","
                "\"gpuplane.io/fail-requests-greater-than-one\":\"false\"},"
                "\"single\":{\"gpuplane.io/pool\":\"single\","
                "\"nvidia.com/device-plugin.config\":\"single\","
                "\"nvidia.com/mig.config\":\"single\"},"
                "\"dyn\":{\"gpuplane.io/pool\":\"dyn\",\"nvidia.com/device-plugin.config\":\"dyn\","
                "\"nvidia.com/mig.config\":\"dyn\"},"
                "\"cpu\":{\"gpuplane.io/pool\":\"cpu\"}}");
    assert_non_null(strstr(file(x, "device-plugin-ts.yaml"),
                           "# A pod asking for nvidia.com/gpu.shared: 1 gets one replica; "
                           "nvidia.com/gpu.shared: N gets N (they may share a GPU).\n"));
    assert_non_null(strstr(file(x, "device-plugin-dyn.yaml"), "# Dynamic: gpuplane re-partitions"));
    rendered_free(x);

    /* MPS limits below the plugin's: the config says how to apply them */
    x = render_text(HEADER "  - name: m\n    gpu: {model: L4, count: 1, memory: 24Gi}\n"
                           "    cpu: '8'\n    memory: 8Gi\n    count: 1\n"
                           "    sharing: {mode: mps, replicas: 2, mps: {activeThreadPercentage: "
                           "30}}\n");
    const char *mps = file(x, "device-plugin-m.yaml");
    assert_non_null(strstr(mps, "holds each client to 50 % of the threads and 12288 MiB"));
    assert_non_null(strstr(mps, "gpuplane counts 30 % and 12288 MiB per client"));
    assert_non_null(strstr(mps, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
    rendered_free(x);

    /* CPU only: nothing for NVIDIA's tools, only the pool label */
    x = render_text(HEADER "  - {name: c, cpu: '8', memory: 8Gi, count: 1}\n");
    assert_int_equal(x->r.nfiles, 1);
    expect_json(file(x, "node-labels.yaml"), "{\"c\":{\"gpuplane.io/pool\":\"c\"}}");
    rendered_free(x);
}

/* Pool names that YAML would read as numbers or booleans stay strings. */
static void test_quoting(void **state)
{
    (void)state;
    struct rendered *x =
        render_text(HEADER "  - {name: 'on', gpu: {model: A30, count: 1}, cpu: '8', memory: 8Gi,"
                           " count: 1, sharing: {mode: mig, mig: {layout: all-1g.6gb}}}\n"
                           "  - {name: '123', gpu: {model: L4, count: 1}, cpu: '8', memory: 8Gi,"
                           " count: 1}\n"
                           "  - {name: 1e3, gpu: {model: L4, count: 1}, cpu: '8', memory: 8Gi,"
                           " count: 1}\n");
    json_t *labels = yaml_json(file(x, "node-labels.yaml"));
    assert_int_equal(json_object_size(labels), 3);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(labels, "on"), "nvidia.com/mig.config")),
        "on");
    assert_string_equal(json_string_value(json_object_get(json_object_get(labels, "123"),
                                                          "nvidia.com/device-plugin.config")),
                        "123");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(labels, "1e3"), "gpuplane.io/pool")),
        "1e3");
    json_decref(labels);
    json_t *cm = yaml_json(file(x, "configmap-device-plugin.yaml"));
    json_t *data = json_object_get(cm, "data");
    assert_non_null(json_object_get(data, "on"));
    assert_non_null(json_object_get(data, "123"));
    assert_non_null(json_object_get(data, "1e3"));
    json_decref(cm);
    json_t *mp = yaml_json(file(x, "mig-parted.yaml"));
    json_t *on = json_object_get(json_object_get(mp, "mig-configs"), "on");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_array_get(on, 0), "mig-devices"), "1g.6gb")),
                     4);
    json_decref(mp);
    rendered_free(x);
}

static void test_unrenderable(void **state)
{
    (void)state;
    const char *text = HEADER "  - {name: all-disabled, gpu: {model: A30, count: 1}, cpu: '8',"
                              " memory: 8Gi, count: 1, sharing: {mode: mig, mig: {layout: "
                              "all-balanced}}}\n";
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    struct gp_diag d = {""};
    assert_int_equal(gp_cluster_parse_yaml(text, strlen(text), "cluster.yaml", &a, &c, &d), GP_OK);
    struct gp_render r;
    assert_int_equal(gp_render_cluster(&c, &r, &d), GP_EINVALID);
    assert_string_equal(d.msg, "cluster.yaml: pool all-disabled: a MIG pool cannot be named like "
                               "mig-parted's all-disabled config; rename the pool");
    assert_int_equal(r.nfiles, 0);
    assert_null(r.files);
    gp_arena_free(&a);
}

/* The mig-parted file against mig-parted's own default config: the same
 * top-level keys and version, config entries with the keys and value types
 * mig-parted uses, and profile names that mig-parted also uses and that are
 * profiles of each pool's GPU. */
static void collect_spec_keys(json_t *configs, json_t *keys, json_t *profiles)
{
    const char *name;
    json_t *specs;
    json_object_foreach(configs, name, specs)
    {
        size_t i;
        json_t *spec;
        json_array_foreach(specs, i, spec)
        {
            const char *k;
            json_t *v;
            json_object_foreach(spec, k, v) json_object_set_new(keys, k, json_true());
            json_t *devs = json_object_get(spec, "mig-devices");
            json_object_foreach(devs, k, v) json_object_set_new(profiles, k, json_true());
        }
    }
}

static void test_mig_parted_structure(void **state)
{
    (void)state;
    const char *path = GP_SHARED_DIR "/data/mig-parted-config-default.yaml";
    GP_NEED_SHARED(path);
    struct fy_document *doc = fy_document_build_from_file(NULL, path);
    assert_non_null(doc);
    json_t *ref = to_json(fy_document_root(doc));
    fy_document_destroy(doc);

    /* every MIG-capable model, every profile alone at its maximum, and
     * all-balanced, in one cluster */
    char text[16384];
    size_t o = (size_t)snprintf(text, sizeof text, "%s", HEADER);
    for (size_t i = 0; i < gp_mig_nmodels; i++) {
        const struct gp_mig_model *m = &gp_mig_models[i];
        for (size_t p = 0; p <= m->nprofiles; p++) {
            char layout[64];
            if (p < m->nprofiles)
                snprintf(layout, sizeof layout, "{\"%s\": %u}", m->profiles[p].name,
                         m->profiles[p].max_instances);
            else
                snprintf(layout, sizeof layout, "all-balanced");
            o += (size_t)snprintf(text + o, sizeof text - o,
                                  "  - {name: m%zu-%zu, gpu: {model: %s, count: 8}, cpu: '8', "
                                  "memory: 8Gi, count: 1, sharing: {mode: mig, mig: {layout: "
                                  "%s}}}\n",
                                  i, p, m->id, layout);
            assert_true(o < sizeof text);
        }
    }
    struct rendered *x = render_text(text);
    json_t *ours = yaml_json(file(x, "mig-parted.yaml"));

    /* top level */
    assert_int_equal(json_object_size(ours), json_object_size(ref));
    const char *k;
    json_t *v;
    json_object_foreach(ref, k, v) assert_non_null(json_object_get(ours, k));
    assert_true(json_equal(json_object_get(ours, "version"), json_object_get(ref, "version")));
    json_t *ref_keys = json_object(), *ref_profiles = json_object();
    collect_spec_keys(json_object_get(ref, "mig-configs"), ref_keys, ref_profiles);
    json_t *our_keys = json_object(), *our_profiles = json_object();
    collect_spec_keys(json_object_get(ours, "mig-configs"), our_keys, our_profiles);
    json_object_foreach(our_keys, k, v)
    {
        if (!json_object_get(ref_keys, k))
            fail_msg("key %s is not one mig-parted uses", k);
    }
    json_object_foreach(our_profiles, k, v)
    {
        if (!json_object_get(ref_profiles, k))
            fail_msg("profile %s is not one mig-parted uses", k);
    }
    /* each entry: devices "all", mig-enabled a boolean, mig-devices a map of
     * the pool's GPU's profiles to positive counts */
    json_t *configs = json_object_get(ours, "mig-configs");
    assert_true(json_equal(json_object_get(configs, "all-disabled"),
                           json_object_get(json_object_get(ref, "mig-configs"), "all-disabled")));
    size_t checked = 0;
    for (size_t i = 0; i < x->c.npools; i++) {
        const struct gp_pool_spec *p = &x->c.pools[i];
        json_t *specs = json_object_get(configs, p->name);
        assert_int_equal(json_array_size(specs), 1);
        json_t *spec = json_array_get(specs, 0);
        assert_string_equal(json_string_value(json_object_get(spec, "devices")), "all");
        assert_true(json_is_true(json_object_get(spec, "mig-enabled")));
        json_t *devs = json_object_get(spec, "mig-devices");
        assert_true(json_object_size(devs) > 0);
        json_object_foreach(devs, k, v)
        {
            assert_true(gp_mig_profile_find(p->sharing.mig.model, k) >= 0);
            assert_true(json_is_integer(v) && json_integer_value(v) > 0);
        }
        checked++;
    }
    assert_int_equal(json_object_size(configs), checked + 1);
    json_decref(our_keys);
    json_decref(our_profiles);
    json_decref(ref_keys);
    json_decref(ref_profiles);
    json_decref(ours);
    json_decref(ref);
    rendered_free(x);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_files),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_quoting),
        cmocka_unit_test(test_unrenderable),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_mig_parted_structure),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
