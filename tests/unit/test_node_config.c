/* test_node_config.c - NVIDIA k8s-device-plugin's configuration file
 * (src/node/config.c): the examples of NVIDIA's README read into the
 * agent's options ("As a configuration file", "With CUDA Time-Slicing",
 * "With CUDA MPS"), the defaults NVIDIA gives (MPS fails requests of more
 * than one unless told otherwise), keys NVIDIA has that the agent does not
 * use accepted, rename and devices warned about, and bad files refused
 * with one line naming the file, line, column and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "node/config.h"

static struct gp_arena arena;
static struct gp_node_config cfg;
static struct gp_diag diag;

static enum gp_err parse(const char *text)
{
    memset(&diag, 0, sizeof diag);
    return gp_node_config_parse(text, strlen(text), "dp.yaml", &arena, &cfg, &diag);
}

static int setup(void **state)
{
    (void)state;
    gp_arena_init(&arena);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gp_arena_free(&arena);
    return 0;
}

/* README, "As a configuration file" (and the helm chart's "Single Config
 * File Example"). */
static void test_readme_flags(void **state)
{
    (void)state;
    assert_int_equal(parse("version: v1\n"
                           "flags:\n"
                           "  migStrategy: \"none\"\n"
                           "  failOnInitError: true\n"
                           "  nvidiaDriverRoot: \"/\"\n"
                           "  plugin:\n"
                           "    passDeviceSpecs: false\n"
                           "    deviceListStrategy: \"envvar\"\n"
                           "    deviceIDStrategy: \"uuid\"\n"),
                     GP_OK);
    assert_true(cfg.has_mig_strategy);
    assert_int_equal(cfg.mig_strategy, GP_NODE_MIG_NONE);
    assert_true(cfg.has_fail_on_init_error);
    assert_true(cfg.fail_on_init_error);
    assert_string_equal(cfg.driver_root, "/");
    assert_null(cfg.mps_root);
    assert_false(cfg.has_sharing);
    /* flags.mpsRoot: where the MPS pipe and shm mounts come from */
    assert_int_equal(parse("flags:\n  mpsRoot: /var/run/mps\n"), GP_OK);
    assert_string_equal(cfg.mps_root, "/var/run/mps");
    assert_int_equal(cfg.n_warnings, 0);
    /* mixed, as JSON (NVIDIA reads YAML or JSON) */
    assert_int_equal(parse("{\"version\": \"v1\", \"flags\": {\"migStrategy\": \"mixed\"}}"),
                     GP_OK);
    assert_int_equal(cfg.mig_strategy, GP_NODE_MIG_MIXED);
    /* an empty file: nothing set */
    assert_int_equal(parse(""), GP_OK);
    assert_false(cfg.has_mig_strategy);
}

/* README, "With CUDA Time-Slicing" and "With CUDA MPS". */
static void test_readme_sharing(void **state)
{
    (void)state;
    assert_int_equal(parse("version: v1\n"
                           "sharing:\n"
                           "  timeSlicing:\n"
                           "    resources:\n"
                           "    - name: nvidia.com/gpu\n"
                           "      replicas: 10\n"),
                     GP_OK);
    assert_true(cfg.has_sharing);
    assert_int_equal(cfg.mode, GP_NODE_SHARE_TIME_SLICING);
    assert_int_equal(cfg.replicas, 10);
    assert_false(cfg.rename_by_default);
    assert_false(cfg.fail_requests_greater_than_one);
    assert_int_equal(parse("version: v1\n"
                           "sharing:\n"
                           "  timeSlicing:\n"
                           "    renameByDefault: true\n"
                           "    failRequestsGreaterThanOne: true\n"
                           "    resources:\n"
                           "    - name: nvidia.com/gpu\n"
                           "      replicas: 10\n"),
                     GP_OK);
    assert_true(cfg.rename_by_default);
    assert_true(cfg.fail_requests_greater_than_one);
    /* MPS: failRequestsGreaterThanOne true whatever the file says, as
     * NVIDIA's plugin v0.15.0-rc.2..v0.17.x forces it (config.go) */
    assert_int_equal(parse("version: v1\n"
                           "sharing:\n"
                           "  mps:\n"
                           "    resources:\n"
                           "    - name: nvidia.com/gpu\n"
                           "      replicas: 10\n"),
                     GP_OK);
    assert_int_equal(cfg.mode, GP_NODE_SHARE_MPS);
    assert_true(cfg.fail_requests_greater_than_one);
    assert_int_equal(parse("sharing:\n"
                           "  mps:\n"
                           "    renameByDefault: true\n"
                           "    failRequestsGreaterThanOne: false\n"
                           "    resources:\n"
                           "    - name: nvidia.com/gpu\n"
                           "      replicas: 4\n"),
                     GP_OK);
    assert_true(cfg.fail_requests_greater_than_one); /* false is not honoured */
    assert_true(cfg.rename_by_default);
    /* the mixed strategy's resources may be time-sliced */
    assert_int_equal(parse("flags: {migStrategy: mixed}\n"
                           "sharing:\n"
                           "  timeSlicing:\n"
                           "    resources:\n"
                           "    - {name: nvidia.com/gpu, replicas: 2}\n"
                           "    - {name: nvidia.com/mig-1g.10gb, replicas: 2}\n"),
                     GP_OK);
    assert_int_equal(cfg.replicas, 2);
    /* the resources named are the ones shared (NVIDIA replicates only
     * those): both here, nvidia.com/gpu alone in the README's example */
    assert_int_equal(cfg.n_named, 2);
    assert_string_equal(cfg.named[0], "nvidia.com/gpu");
    assert_string_equal(cfg.named[1], "nvidia.com/mig-1g.10gb");
    assert_int_equal(parse("flags: {migStrategy: mixed}\n"
                           "sharing:\n"
                           "  timeSlicing:\n"
                           "    resources:\n"
                           "    - {name: nvidia.com/gpu, replicas: 4}\n"
                           "    - {name: nvidia.com/gpu, replicas: 4}\n"),
                     GP_OK);
    assert_int_equal(cfg.n_named, 1); /* named twice: once */
    assert_string_equal(cfg.named[0], "nvidia.com/gpu");
}

/* Keys of NVIDIA's v1 the agent does not use, and rename / devices. */
static void test_accepted_and_warned(void **state)
{
    (void)state;
    assert_int_equal(parse("version: v1\n"
                           "flags:\n"
                           "  migStrategy: single\n"
                           "  gdsEnabled: false\n"
                           "  mofedEnabled: false\n"
                           "  plugin:\n"
                           "    deviceListStrategy: [envvar, cdi-cri]\n"
                           "    cdiAnnotationPrefix: cdi.k8s.io/\n"
                           "    nvidiaCTKPath: /usr/bin/nvidia-ctk\n"
                           "  gfd:\n"
                           "    oneshot: false\n"
                           "    sleepInterval: 60s\n"
                           "imex:\n"
                           "  channelIDs: []\n"
                           "sharing:\n"
                           "  timeSlicing:\n"
                           "    resources:\n"
                           "    - name: nvidia.com/gpu\n"
                           "      rename: nvidia.com/gpu-0\n"
                           "      devices: [\"0\", 1, \"0:1\", "
                           "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763]\n"
                           "      replicas: 8\n"),
                     GP_OK);
    assert_int_equal(cfg.mig_strategy, GP_NODE_MIG_SINGLE);
    assert_int_equal(cfg.replicas, 8);
    assert_int_equal(cfg.n_warnings, 2);
    assert_non_null(strstr(cfg.warnings[0], "dp.yaml: sharing.timeSlicing.resources[0].rename: "));
    assert_non_null(strstr(cfg.warnings[1], "resources[0].devices: choosing the devices"));
    assert_int_equal(parse("sharing:\n  timeSlicing:\n    resources:\n"
                           "    - {name: nvidia.com/gpu, replicas: 3, devices: all}\n"),
                     GP_OK);
    assert_int_equal(cfg.n_warnings, 0);
}

struct bad {
    const char *text, *msg;
};

static void test_bad(void **state)
{
    (void)state;
    static const struct bad cases[] = {
        {"version: v2\n", "dp.yaml:1:10: version: unknown version \"v2\": expected v1"},
        {"flags:\n  migStratgy: none\n",
         "dp.yaml:2:3: flags.migStratgy: unknown field (expected one of: migStrategy, "},
        {"flags:\n  migStrategy: some\n",
         "dp.yaml:2:16: flags.migStrategy: expected none, single or mixed, got \"some\""},
        {"flags:\n  failOnInitError: \"yes\"\n",
         "dp.yaml:2:20: flags.failOnInitError: expected true or false without quotes"},
        {"flags:\n  plugin:\n    deviceListStrategy: volume-mounts\n",
         "dp.yaml:3:25: flags.plugin.deviceListStrategy: \"volume-mounts\" is not supported"},
        {"flags:\n  plugin:\n    deviceListStrategy: [envvar, bogus]\n",
         "dp.yaml:3:34: flags.plugin.deviceListStrategy[1]: expected envvar, volume-mounts"},
        {"flags:\n  mpsRoot: run/mps\n",
         "dp.yaml:2:12: flags.mpsRoot: expected an absolute path under 256 bytes, got \"run/mps\""},
        {"flags:\n  plugin:\n    deviceIDStrategy: index\n",
         "dp.yaml:3:23: flags.plugin.deviceIDStrategy: \"index\" is not supported"},
        {"flags:\n  plugin:\n    passDeviceSpecs: true\n",
         "dp.yaml:3:22: flags.plugin.passDeviceSpecs: true is not supported"},
        {"sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: "
         "1\n",
         "dp.yaml:5:17: sharing.timeSlicing.resources[0].replicas: number of replicas must be >= "
         "2, got 1"},
        {"sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n",
         "dp.yaml:4:7: sharing.timeSlicing.resources[0]: missing required field \"replicas\""},
        {"sharing:\n  timeSlicing:\n    resources: []\n",
         "sharing.timeSlicing.resources: no resources specified"},
        {"sharing:\n  timeSlicing:\n    renameByDefault: true\n",
         "sharing.timeSlicing: missing required field \"resources\""},
        {"sharing:\n  mps:\n    resources:\n    - {name: nvidia.com/mig-1g.10gb, replicas: 2}\n",
         "sharing.mps.resources[0].name: expected nvidia.com/gpu (MPS shares full GPUs only)"},
        {"sharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 4}\n"
         "    - {name: nvidia.com/mig-1g.10gb, replicas: 2}\n",
         "sharing.timeSlicing.resources[1].replicas: 2 replicas where an earlier resource has 4"},
        {"sharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 2}\n"
         "  mps:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 2}\n",
         "sharing.mps: timeSlicing and mps are both set"},
        {"sharing:\n  timeSlicing:\n    resources:\n"
         "    - {name: nvidia.com/gpu, replicas: 2, devices: some}\n",
         "sharing.timeSlicing.resources[0].devices: expected \"all\", a count or a list"},
        {"sharing:\n  timeSlicing:\n    resources:\n"
         "    - {name: nvidia.com/gpu, replicas: 2, devices: [\"x\"]}\n",
         "sharing.timeSlicing.resources[0].devices[0]: expected a GPU index"},
        {"sharing:\n  timeSlicing:\n    resources:\n"
         "    - {name: amd.com/gpu, replicas: 2}\n",
         "sharing.timeSlicing.resources[0].name: expected nvidia.com/gpu or "
         "nvidia.com/mig-<profile>, got \"amd.com/gpu\""},
        {"version: v1\n---\nversion: v1\n", "a second document"},
        {"flags: [\n", "dp.yaml:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum gp_err e = parse(cases[i].text);
        if (e == GP_OK || !strstr(diag.msg, cases[i].msg) || strchr(diag.msg, '\n'))
            fail_msg("case %zu: %s\nwanted: %s\ngot (%d): %s", i, cases[i].text, cases[i].msg,
                     (int)e, diag.msg);
        assert_int_equal(gp_err_exit_code(e), 2);
        assert_false(cfg.has_sharing);
    }
}

static void test_read(void **state)
{
    (void)state;
    assert_int_equal(gp_node_config_read("/nonexistent/dp.yaml", &arena, &cfg, &diag),
                     GP_ENOTFOUND);
    assert_non_null(strstr(diag.msg, "/nonexistent/dp.yaml: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_flags),
        cmocka_unit_test(test_readme_sharing),
        cmocka_unit_test(test_accepted_and_warned),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
