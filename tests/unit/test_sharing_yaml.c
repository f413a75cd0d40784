/* test_sharing_yaml.c - the Cluster spec's per-pool `sharing:` object
 * (io/cluster_yaml.c): the example file field by field, defaults, named
 * mig-parted configs, the nodes' pointer to their pool's spec, and one test
 * per error with the exact one-line message users see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/mig.h"
#include "engine/sharing.h"
#include "io/cluster.h"

/* A cluster with one pool whose `sharing:` is on line 12; its fields start
 * on line 13, column 7. */
#define POOL(gpu)                                                                                  \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata:\n  name: demo\nspec:\n  nodePools:\n"    \
    "  - name: p\n"                                                                                \
    "    gpu: " gpu "\n"                                                                           \
    "    cpu: \"8\"\n"                                                                             \
    "    memory: 64Gi\n"                                                                           \
    "    count: 2\n"                                                                               \
    "    sharing:\n"
#define A100 POOL("{model: A100-80GB, count: 8, memory: 80Gi}")
#define L4   POOL("{model: L4, count: 4, memory: 24Gi}")
#define PATH "cluster.yaml:"

struct parsed {
    struct gp_arena arena;
    struct gp_cluster c;
    struct gp_diag diag;
    enum gp_err err;
};

static struct parsed *parse(const char *text)
{
    struct parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    gp_arena_init(&p->arena);
    p->err = gp_cluster_parse_yaml(text, strlen(text), "cluster.yaml", &p->arena, &p->c, &p->diag);
    if (p->err == GP_OK)
        p->err = gp_cluster_expand(&p->c, &p->arena, &p->diag);
    return p;
}

static void done(struct parsed *p)
{
    gp_arena_free(&p->arena);
    free(p);
}

static const struct gp_sharing_spec *ok_sharing(struct parsed *p)
{
    if (p->err != GP_OK)
        fail_msg("unexpected error: %s", p->diag.msg);
    assert_true(p->c.npools >= 1);
    return &p->c.pools[0].sharing;
}

static void expect_error(const char *text, const char *msg)
{
    struct parsed *p = parse(text);
    if (p->err != GP_EINVALID || strcmp(p->diag.msg, msg) != 0)
        print_error("got %d \"%s\"\nwant \"%s\"\n", p->err, p->diag.msg, msg);
    assert_int_equal(p->err, GP_EINVALID);
    assert_string_equal(p->diag.msg, msg);
    assert_null(p->c.pools);
    done(p);
}

static const char *fmt_layout(const struct gp_sharing_spec *s, char *buf, size_t size)
{
    return gp_mig_layout_format(s->mig.model, &s->mig.layout, buf, size);
}

static void test_example(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_cluster_load(GP_EXAMPLES_DIR "/cluster-sharing.yaml", &a, &c, &d);
    if (err != GP_OK)
        fail_msg("%s", d.msg);
    assert_int_equal(c.npools, 4);
    char buf[200];

    const struct gp_pool_spec *mig = &c.pools[0];
    assert_string_equal(mig->name, "a100-mig");
    assert_int_equal(mig->sharing.mode, GP_SHARE_MIG);
    assert_int_equal(mig->sharing.replicas, 1);
    assert_int_equal(mig->sharing.mig.strategy, GP_MIG_MIXED);
    assert_string_equal(mig->sharing.mig.model->id, "A100-80GB");
    assert_null(mig->sharing.mig.config);
    assert_false(mig->sharing.mig.dynamic);
    assert_string_equal(fmt_layout(&mig->sharing, buf, sizeof buf),
                        "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3");

    const struct gp_pool_spec *ts = &c.pools[1];
    assert_int_equal(ts->sharing.mode, GP_SHARE_TIMESLICE);
    assert_int_equal(ts->sharing.replicas, 4);
    assert_false(ts->sharing.rename_by_default);
    assert_true(ts->sharing.fail_requests_greater_than_one);
    assert_false(ts->sharing.oversubscribe);

    const struct gp_pool_spec *mps = &c.pools[2];
    assert_int_equal(mps->sharing.mode, GP_SHARE_MPS);
    assert_int_equal(mps->sharing.replicas, 4);
    assert_int_equal(mps->sharing.mps.active_thread_pct, 25);
    assert_int_equal(mps->sharing.mps.pinned_mem_mib, 6 * 1024);
    assert_true(mps->sharing.fail_requests_greater_than_one);

    const struct gp_pool_spec *ex = &c.pools[3];
    assert_int_equal(ex->sharing.mode, GP_SHARE_EXCLUSIVE);

    /* nodes point at their pool's spec, exclusive ones too */
    assert_int_equal(c.nnodes, 2 + 1 + 2 + 1);
    assert_ptr_equal(c.nodes[0].sharing, &mig->sharing);
    assert_ptr_equal(c.nodes[1].sharing, &mig->sharing);
    assert_ptr_equal(c.nodes[2].sharing, &ts->sharing);
    assert_ptr_equal(c.nodes[3].sharing, &mps->sharing);
    assert_ptr_equal(c.nodes[5].sharing, &ex->sharing);
    gp_arena_free(&a);
}

static void test_defaults(void **state)
{
    (void)state;
    /* no sharing at all: exclusive, one replica */
    struct parsed *p = parse(
        "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: d}\nspec:\n  nodePools:\n"
        "  - {name: p, gpu: {model: L4, count: 1}, cpu: '1', memory: 1Gi, count: 1}\n");
    const struct gp_sharing_spec *s = ok_sharing(p);
    assert_int_equal(s->mode, GP_SHARE_EXCLUSIVE);
    assert_ptr_equal(p->c.nodes[0].sharing, s);
    done(p);

    p = parse(A100 "      {}\n");
    s = ok_sharing(p);
    assert_int_equal(s->mode, GP_SHARE_EXCLUSIVE);
    assert_int_equal(s->replicas, 1);
    done(p);

    p = parse(A100 "      mode: timeslice\n      replicas: 10\n      renameByDefault: true\n"
                   "      oversubscribe: true\n");
    s = ok_sharing(p);
    assert_int_equal(s->mode, GP_SHARE_TIMESLICE);
    assert_int_equal(s->replicas, 10);
    assert_true(s->rename_by_default);
    assert_false(s->fail_requests_greater_than_one);
    assert_true(s->oversubscribe);
    char res[64];
    assert_string_equal(gp_sharing_resource(s, -1, res, sizeof res), "nvidia.com/gpu.shared");
    assert_ptr_equal(p->c.nodes[1].sharing, s);
    done(p);

    /* MPS defaults: what NVIDIA's device plugin gives each client */
    p = parse(L4 "      mode: mps\n      replicas: 3\n");
    s = ok_sharing(p);
    assert_int_equal(s->mps.active_thread_pct, 33);
    assert_int_equal(s->mps.pinned_mem_mib, 8192);
    assert_true(s->fail_requests_greater_than_one);
    assert_string_equal(gp_sharing_resource(s, -1, res, sizeof res), "nvidia.com/gpu");
    done(p);
    /* without the GPU's memory the limit is unknown (0) */
    p = parse(POOL("{model: L4, count: 4}") "      mode: mps\n      replicas: 48\n"
                                            "      mps: {pinnedMemoryLimit: 500Mi}\n");
    s = ok_sharing(p);
    assert_int_equal(s->mps.active_thread_pct, 2);
    assert_int_equal(s->mps.pinned_mem_mib, 500);
    done(p);
}

static void test_mig_layouts(void **state)
{
    (void)state;
    char buf[200], res[64];
    struct parsed *p = parse(A100 "      mode: mig\n      mig:\n        layout: all-balanced\n");
    const struct gp_sharing_spec *s = ok_sharing(p);
    assert_string_equal(s->mig.config, "all-balanced");
    assert_string_equal(fmt_layout(s, buf, sizeof buf), "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3");
    assert_string_equal(gp_sharing_resource(s, s->mig.layout.inst[0].profile, res, sizeof res),
                        "nvidia.com/mig-3g.40gb");
    done(p);

    p = parse(A100 "      mode: mig\n      mig: {strategy: single, layout: all-1g.10gb}\n");
    s = ok_sharing(p);
    assert_int_equal(s->mig.strategy, GP_MIG_SINGLE);
    assert_int_equal(s->mig.layout.n, 7);
    assert_string_equal(gp_sharing_resource(s, 0, res, sizeof res), "nvidia.com/gpu");
    done(p);

    p = parse(A100 "      mode: mig\n      mig: {layout: all-1g.10gb.me}\n");
    s = ok_sharing(p);
    assert_string_equal(fmt_layout(s, buf, sizeof buf), "1g.10gb+me@6");
    done(p);

    /* dynamic: no layout, or an empty one, starts with no instances */
    p = parse(A100 "      mode: mig\n      mig: {dynamic: true}\n");
    s = ok_sharing(p);
    assert_true(s->mig.dynamic);
    assert_int_equal(s->mig.layout.n, 0);
    assert_true(s->mig.reconfigure_s == 0); /* the default */
    done(p);
    p = parse(A100 "      mode: mig\n      mig: {dynamic: true, reconfigureTime: 2m}\n");
    s = ok_sharing(p);
    assert_true(s->mig.reconfigure_s == 120);
    done(p);
    p = parse(A100 "      mode: mig\n      mig: {dynamic: true, layout: all-enabled}\n");
    s = ok_sharing(p);
    assert_int_equal(s->mig.layout.n, 0);
    done(p);
    p = parse(A100 "      mode: mig\n      mig:\n        dynamic: true\n"
                   "        layout: {\"4g.40gb\": 1, \"1g.10gb\": 0}\n");
    s = ok_sharing(p);
    assert_string_equal(fmt_layout(s, buf, sizeof buf), "4g.40gb@0");
    done(p);

    /* names as users write them map to the data's models */
    p = parse(POOL("{model: A100-SXM4-40GB, count: 8}") "      mode: mig\n"
                                                        "      mig: {layout: {\"1g.10gb\": 4}}\n");
    s = ok_sharing(p);
    assert_string_equal(s->mig.model->id, "A100-40GB");
    assert_string_equal(fmt_layout(s, buf, sizeof buf), "1g.10gb@6 1g.10gb@4 1g.10gb@0 1g.10gb@2");
    done(p);
    p = parse(
        POOL("{model: A30, count: 4}") "      mode: mig\n      mig: {layout: all-balanced}\n");
    s = ok_sharing(p);
    assert_string_equal(fmt_layout(s, buf, sizeof buf), "2g.12gb@0 1g.6gb@2 1g.6gb@3");
    done(p);
}

static void test_errors_mode(void **state)
{
    (void)state;
    expect_error(A100 "      mode: shared\n",
                 PATH "13:13: spec.nodePools[0].sharing.mode: expected exclusive, timeslice, mps "
                      "or mig, got \"shared\"");
    expect_error(A100 "      mode: timeslice\n",
                 PATH "13:7: spec.nodePools[0].sharing: missing required field \"replicas\" "
                      "(mode: timeslice)");
    expect_error(A100 "      mode: timeslice\n      replicas: 1\n",
                 PATH "14:17: spec.nodePools[0].sharing.replicas: expected an integer from 2 to "
                      "256, got \"1\"");
    expect_error(A100 "      mode: timeslice\n      replicas: \"4\"\n",
                 PATH "14:17: spec.nodePools[0].sharing.replicas: expected an integer from 2 to "
                      "256, got the string \"4\" (remove the quotes)");
    expect_error(A100 "      mode: timeslice\n      replicas: 4\n      renameByDefault: \"yes\"\n",
                 PATH "15:24: spec.nodePools[0].sharing.renameByDefault: expected true or false "
                      "without quotes, got \"yes\"");
    expect_error(A100 "      replicas: 4\n",
                 PATH "13:17: spec.nodePools[0].sharing.replicas: only with mode: timeslice or "
                      "mps; the pool's mode is exclusive");
    expect_error(A100 "      mode: timeslice\n      replicas: 4\n      share: all\n",
                 PATH "15:7: spec.nodePools[0].sharing.share: unknown field (expected one of: "
                      "mode, replicas, renameByDefault, failRequestsGreaterThanOne, "
                      "oversubscribe, mps, mig)");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: d}\nspec:\n"
                 "  nodePools:\n  - name: cpu\n    cpu: '8'\n    memory: 8Gi\n    count: 1\n"
                 "    sharing: {mode: timeslice, replicas: 2}\n",
                 PATH "10:21: spec.nodePools[0].sharing.mode: sharing needs GPUs; the pool has "
                      "no gpu");
}

static void test_errors_mps(void **state)
{
    (void)state;
    expect_error(L4 "      mode: mps\n      replicas: 64\n",
                 PATH "14:17: spec.nodePools[0].sharing.replicas: MPS allows at most 48 clients "
                      "per GPU (Volta and newer), got 64");
    expect_error(L4 "      mode: mps\n      replicas: 4\n      oversubscribe: true\n",
                 PATH "15:22: spec.nodePools[0].sharing.oversubscribe: only with mode: timeslice; "
                      "the pool's mode is mps (MPS enforces each client's memory limit)");
    expect_error(L4 "      mode: mps\n      replicas: 4\n      mig: {strategy: mixed}\n",
                 PATH "15:13: spec.nodePools[0].sharing.mig: only with mode: mig; the pool's mode "
                      "is mps (MPS cannot run on a GPU in MIG mode)");
    expect_error(L4 "      mode: mps\n      replicas: 4\n      failRequestsGreaterThanOne: false\n",
                 PATH "15:35: spec.nodePools[0].sharing.failRequestsGreaterThanOne: NVIDIA's "
                      "device plugin always refuses MPS requests for more than one replica; "
                      "remove the field or set it to true");
    expect_error(L4 "      mode: mps\n      replicas: 4\n      mps:\n"
                    "        activeThreadPercentage: 50\n",
                 PATH "16:33: spec.nodePools[0].sharing.mps.activeThreadPercentage: 50 is more "
                      "than the 25 % NVIDIA's device plugin gives each of 4 MPS clients (100 / "
                      "replicas); a client can only lower it");
    expect_error(L4 "      mode: mps\n      replicas: 4\n      mps:\n"
                    "        pinnedMemoryLimit: 10Gi\n",
                 PATH "16:28: spec.nodePools[0].sharing.mps.pinnedMemoryLimit: 10Gi is more than "
                      "the 6144Mi NVIDIA's device plugin gives each of 4 MPS clients (the GPU's "
                      "memory / replicas); a client can only lower it");
    expect_error(L4 "      mode: mps\n      replicas: 4\n      mps: {pinnedMemoryLimit: 0}\n",
                 PATH "15:32: spec.nodePools[0].sharing.mps.pinnedMemoryLimit: expected a memory "
                      "quantity from 1Mi to 4Pi, got \"0\"");
    expect_error(L4 "      mode: mps\n      replicas: 4\n      mps: {activeThreadPercentage: 0}\n",
                 PATH "15:37: spec.nodePools[0].sharing.mps.activeThreadPercentage: expected an "
                      "integer from 1 to 100, got \"0\"");
    expect_error(A100 "      mode: timeslice\n      replicas: 4\n      mps: {}\n",
                 PATH "15:7: spec.nodePools[0].sharing.mps: only with mode: mps; the pool's mode "
                      "is timeslice");
}

static void test_errors_mig(void **state)
{
    (void)state;
    expect_error(L4 "      mode: mig\n      mig: {layout: all-balanced}\n",
                 PATH "13:13: spec.nodePools[0].sharing.mode: mode mig needs a GPU model with MIG "
                      "(A30-24GB, A100-40GB, A100-80GB, H100-80GB, H100-94GB, GH200-96GB, "
                      "GH200-144GB, H200-141GB, B200-180GB, GB200-186GB); gpu.model L4 has none");
    expect_error(A100 "      mode: mig\n",
                 PATH "13:7: spec.nodePools[0].sharing: missing required field \"mig\" (mode: "
                      "mig)");
    expect_error(A100 "      mode: mig\n      mps: {activeThreadPercentage: 10}\n",
                 PATH "14:13: spec.nodePools[0].sharing.mps: only with mode: mps; the pool's mode "
                      "is mig (MPS cannot run on a GPU in MIG mode)");
    expect_error(A100 "      mode: mig\n      replicas: 2\n      mig: {layout: all-balanced}\n",
                 PATH "14:17: spec.nodePools[0].sharing.replicas: only with mode: timeslice or "
                      "mps; the pool's mode is mig (a MIG instance is not shared further)");
    expect_error(A100 "      mode: mig\n      mig:\n        layout: {\"1g.5gb\": 7}\n",
                 PATH "15:18: spec.nodePools[0].sharing.mig.layout[\"1g.5gb\"]: \"1g.5gb\" is not "
                      "a MIG profile of A100-80GB (expected one of: 1g.10gb, 1g.10gb+me, 1g.20gb, "
                      "2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)");
    expect_error(A100 "      mode: mig\n      mig:\n        layout: {\"4g.40gb\": 2}\n",
                 PATH "15:18: spec.nodePools[0].sharing.mig.layout: \"4g.40gb\": 2 instances, at "
                      "most 1 on A100-80GB");
    expect_error(A100 "      mode: mig\n      mig:\n        layout:\n"
                      "          \"3g.40gb\": 2\n          \"2g.20gb\": 1\n",
                 PATH "16:11: spec.nodePools[0].sharing.mig.layout: \"2g.20gb\": no room for "
                      "instance 1 of 1 beside the larger ones: the layout needs 10 memory "
                      "slices, A100-80GB has 8");
    expect_error(A100 "      mode: mig\n      mig:\n        strategy: single\n"
                      "        layout: all-balanced\n",
                 PATH "16:17: spec.nodePools[0].sharing.mig.layout: strategy single needs every "
                      "instance to be the same profile, the layout has 3g.40gb and 2g.20gb (use "
                      "strategy: mixed)");
    expect_error(A100 "      mode: mig\n      mig: {strategy: single, dynamic: true, layout: "
                      "all-3g.40gb}\n",
                 PATH "14:40: spec.nodePools[0].sharing.mig.dynamic: dynamic MIG needs strategy: "
                      "mixed (single advertises every instance as nvidia.com/gpu, so pods cannot "
                      "ask for a profile)");
    expect_error(A100 "      mode: mig\n      mig: {layout: all-balanced, reconfigureTime: 1m}\n",
                 PATH "14:52: spec.nodePools[0].sharing.mig.reconfigureTime: only with dynamic: "
                      "true (a static layout is never re-partitioned)");
    expect_error(A100 "      mode: mig\n      mig: {strategy: none}\n",
                 PATH "14:23: spec.nodePools[0].sharing.mig.strategy: expected single or mixed, "
                      "got \"none\"");
    expect_error(A100 "      mode: mig\n      mig: {strategy: mixed}\n",
                 PATH "14:13: spec.nodePools[0].sharing.mig: missing layout: no GPU instances, so "
                      "the GPUs could not be used; give a layout like {\"1g.10gb\": 7} or set "
                      "dynamic: true");
    expect_error(A100 "      mode: mig\n      mig: {layout: {}}\n",
                 PATH "14:13: spec.nodePools[0].sharing.mig.layout: an empty layout: no GPU "
                      "instances, so the GPUs could not be used; give a layout like {\"1g.10gb\": "
                      "7} or set dynamic: true");
    expect_error(A100 "      mode: mig\n      mig: {layout: all-disabled}\n",
                 PATH "14:21: spec.nodePools[0].sharing.mig.layout: all-disabled turns MIG off; "
                      "use mode: exclusive");
    expect_error(A100 "      mode: mig\n      mig: {layout: all-1g.5gb}\n",
                 PATH "14:21: spec.nodePools[0].sharing.mig.layout: \"all-1g.5gb\" is not a "
                      "mig-parted config for A100-80GB (expected a map like {\"1g.10gb\": 7}, "
                      "all-balanced, or all-<profile> with a profile of: 1g.10gb, 1g.10gb+me, "
                      "1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)");
    expect_error(A100 "      mode: mig\n      mig: {layout: [\"1g.10gb\"]}\n",
                 PATH "14:22: spec.nodePools[0].sharing.mig.layout: expected a map of MIG "
                      "profiles to counts like {\"1g.10gb\": 7} or a mig-parted config name like "
                      "all-1g.10gb, got a list");
    expect_error(A100 "      mode: mig\n      mig: {layout: {\"1g.10gb\": -1}}\n",
                 PATH "14:33: spec.nodePools[0].sharing.mig.layout[\"1g.10gb\"]: expected a "
                      "non-negative integer up to 64, got \"-1\"");
    expect_error(A100
                 "      mode: timeslice\n      replicas: 2\n      mig: {layout: all-balanced}\n",
                 PATH "15:13: spec.nodePools[0].sharing.mig: only with mode: mig; the pool's mode "
                      "is timeslice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example),     cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_mig_layouts), cmocka_unit_test(test_errors_mode),
        cmocka_unit_test(test_errors_mps),  cmocka_unit_test(test_errors_mig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
