/* test_node_doctor.c - the node doctor's checks on fake roots and hand-made
 * inventories: a node where every check passes, then one breach per check
 * (no driver, a driver upgrade half done, CUDA too new, no toolkit, a
 * runtime without the nvidia runtime or CDI, no kubelet directory, the
 * wrong MIG layout, persistence off, no MPS control daemon or pipe), with
 * the exit code each gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/doctor.h"

static char root[64];
static struct gp_node_inventory inv;

static void put(const char *rel, const char *text, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(chmod(p, mode), 0);
}

static void rm(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    unlink(p);
}

/* A healthy node: driver 550.54.15, toolkit, containerd with CDI, kubelet. */
static int healthy(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/gp-doctor-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    put("/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC "
        "2024\nGCC version:  gcc version 12.3.0\n",
        0644);
    put("/usr/bin/nvidia-ctk", "#!/bin/sh\n", 0755);
    put("/etc/containerd/config.toml",
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  enable_cdi = true\n", 0644);
    put("/var/lib/kubelet/device-plugins/kubelet.sock", "", 0644);
    memset(&inv, 0, sizeof inv);
    snprintf(inv.driver_version, sizeof inv.driver_version, "550.54.15");
    inv.cuda_driver_version = 12040;
    inv.n_gpus = 2;
    for (unsigned i = 0; i < 2; i++) {
        inv.gpus[i].index = i;
        snprintf(inv.gpus[i].name, sizeof inv.gpus[i].name, "NVIDIA H100 80GB HBM3");
        inv.gpus[i].persistence_mode = true;
    }
    return 0;
}

static int cleanup(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static struct gp_node_doctor r;

static const struct gp_node_check *run(const char *cuda, const char *mig, const char *want,
                                       enum gp_node_verdict v)
{
    struct gp_node_doctor_opts o = {
        root, "/usr/local/bin:/usr/bin", &inv, NULL, cuda, NULL, mig, false, NULL};
    struct gp_diag d = {""};
    if (gp_node_doctor_run(&o, &r, &d) != GP_OK)
        fail_msg("doctor: %s", d.msg);
    assert_int_equal(r.n, GP_NODE_DOCTOR_CHECKS);
    for (size_t i = 0; i < r.n; i++)
        if (strcmp(r.checks[i].name, want) == 0) {
            if (r.checks[i].verdict != v)
                fail_msg("%s: %s, expected %s: %s", want, gp_node_verdict_name(r.checks[i].verdict),
                         gp_node_verdict_name(v), r.checks[i].detail);
            if (v == GP_NODE_FAIL || v == GP_NODE_WARN)
                assert_true(r.checks[i].fix[0] != '\0'); /* every failure says its fix */
            return &r.checks[i];
        }
    fail_msg("no check %s", want);
    return NULL;
}

static void test_all_pass(void **state)
{
    (void)state;
    run("12.4", "none", "driver", GP_NODE_PASS);
    for (size_t i = 0; i < r.n; i++) /* mps: no --mps, skipped (test_mps) */
        assert_int_equal(r.checks[i].verdict,
                         strcmp(r.checks[i].name, "mps") == 0 ? GP_NODE_SKIP : GP_NODE_PASS);
    assert_int_equal(gp_node_doctor_exit(&r), 0);
    run(NULL, NULL, "cuda", GP_NODE_SKIP); /* nothing asked: skipped, still exit 0 */
    assert_non_null(strstr(r.checks[1].detail, "12.4"));
    run(NULL, NULL, "mig", GP_NODE_SKIP);
    assert_int_equal(gp_node_doctor_exit(&r), 0);
}

static void test_no_driver(void **state)
{
    (void)state;
    rm("/proc/driver/nvidia/version");
    const struct gp_node_check *c = run(NULL, NULL, "driver", GP_NODE_FAIL);
    assert_non_null(strstr(c->detail, "no NVIDIA kernel module"));
    assert_true(r.no_driver);
    assert_int_equal(gp_node_doctor_exit(&r), 3);
    put("/proc/driver/nvidia/version", "garbage\n", 0644);
    run(NULL, NULL, "driver", GP_NODE_FAIL);
    assert_int_equal(gp_node_doctor_exit(&r), 3);
}

static void test_driver_mismatch(void **state)
{
    (void)state;
    snprintf(inv.driver_version, sizeof inv.driver_version, "550.90.07");
    const struct gp_node_check *c = run(NULL, NULL, "driver", GP_NODE_FAIL);
    assert_non_null(strstr(c->detail, "550.90.07"));
    assert_int_equal(gp_node_doctor_exit(&r), 1);
    snprintf(inv.driver_version, sizeof inv.driver_version, "550.54.15");
    /* no NVML at all */
    struct gp_node_doctor_opts o = {root, "/usr/bin", NULL, "NVML: not found", NULL, NULL,
                                    NULL, false,      NULL};
    struct gp_diag d = {""};
    assert_int_equal(gp_node_doctor_run(&o, &r, &d), GP_OK);
    assert_int_equal(r.checks[0].verdict, GP_NODE_FAIL);
    assert_non_null(strstr(r.checks[0].detail, "NVML: not found"));
    assert_int_equal(gp_node_doctor_exit(&r), 1);
}

static void test_cuda(void **state)
{
    (void)state;
    const struct gp_node_check *c = run("12.6", NULL, "cuda", GP_NODE_WARN); /* minor compat */
    assert_non_null(strstr(c->fix, "upgrade the driver"));
    assert_int_equal(gp_node_doctor_exit(&r), 0);
    run("11.8", NULL, "cuda", GP_NODE_PASS);
    struct gp_node_doctor_opts o = {root, "/usr/bin", &inv,  NULL, "twelve",
                                    NULL, NULL,       false, NULL};
    struct gp_diag d = {""};
    assert_int_equal(gp_node_doctor_run(&o, &r, &d), GP_EUSAGE);
    o.cuda = NULL;
    o.image = "nvcr.io/nvidia/pytorch:24.05-py3";
    assert_int_equal(gp_node_doctor_run(&o, &r, &d), GP_OK);
    assert_int_equal(r.checks[1].verdict, GP_NODE_PASS);
    put("/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.57.02\n", 0644);
    snprintf(inv.driver_version, sizeof inv.driver_version, "470.57.02");
    run("12.4", NULL, "cuda", GP_NODE_FAIL);
    assert_int_equal(gp_node_doctor_exit(&r), 1);
}

static void test_toolkit(void **state)
{
    (void)state;
    rm("/usr/bin/nvidia-ctk");
    run(NULL, NULL, "toolkit", GP_NODE_FAIL);
    assert_int_equal(gp_node_doctor_exit(&r), 1);
    put("/usr/local/bin/nvidia-container-runtime", "", 0644); /* not executable */
    run(NULL, NULL, "toolkit", GP_NODE_FAIL);
    put("/usr/local/bin/nvidia-container-runtime", "", 0755);
    run(NULL, NULL, "toolkit", GP_NODE_PASS);
}

static void test_runtime(void **state)
{
    (void)state;
    put("/etc/containerd/config.toml", "version = 2\n  # enable_cdi = true\n", 0644);
    run(NULL, NULL, "runtime", GP_NODE_FAIL);
    assert_int_equal(gp_node_doctor_exit(&r), 1);
    put("/etc/containerd/config.toml",
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
        "  runtime_type = \"io.containerd.runc.v2\"\n",
        0644);
    run(NULL, NULL, "runtime", GP_NODE_PASS);
    put("/etc/containerd/config.toml", "version = 3\n", 0644); /* containerd 2.x: CDI on */
    run(NULL, NULL, "runtime", GP_NODE_PASS);
    put("/etc/containerd/config.toml", "version = 3\nenable_cdi = false\n", 0644);
    run(NULL, NULL, "runtime", GP_NODE_FAIL);
    rm("/etc/containerd/config.toml");
    const struct gp_node_check *c = run(NULL, NULL, "runtime", GP_NODE_FAIL);
    assert_non_null(strstr(c->detail, "no containerd"));
    put("/etc/crio/crio.conf", "[crio.runtime]\n", 0644);
    run(NULL, NULL, "runtime", GP_NODE_PASS);
}

static void test_device_plugins(void **state)
{
    (void)state;
    rm("/var/lib/kubelet/device-plugins/kubelet.sock");
    run(NULL, NULL, "device-plugins", GP_NODE_WARN);
    assert_int_equal(gp_node_doctor_exit(&r), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/var/lib/kubelet/device-plugins", root);
    rmdir(p);
    run(NULL, NULL, "device-plugins", GP_NODE_FAIL);
    assert_int_equal(gp_node_doctor_exit(&r), 1);
}

static void add_mig(struct gp_node_gpu *g, const char *profile)
{
    g->mig_enabled = true;
    snprintf(g->migs[g->n_migs++].profile, sizeof g->migs[0].profile, "%s", profile);
}

static void test_mig(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 2; i++) {
        add_mig(&inv.gpus[i], "3g.40gb");
        add_mig(&inv.gpus[i], "3g.40gb");
    }
    run(NULL, "3g.40gb=2", "mig", GP_NODE_PASS);
    const struct gp_node_check *c = run(NULL, "none", "mig", GP_NODE_FAIL);
    assert_non_null(strstr(c->detail, "GPU 0 has MIG mode on"));
    c = run(NULL, "3g.40gb=1,1g.10gb=3", "mig", GP_NODE_FAIL);
    assert_non_null(strstr(c->detail, "GPU 0 has 2 MIG devices 3g.40gb, the layout 1"));
    inv.gpus[1].mig_enabled = false;
    c = run(NULL, "3g.40gb=2", "mig", GP_NODE_FAIL);
    assert_non_null(strstr(c->detail, "GPU 1 has MIG mode off"));
    assert_int_equal(gp_node_doctor_exit(&r), 1);
    static const char *const bad[] = {"3g.40gb", "=2", "3g.40gb=0", "3g.40gb=2,", "a=2x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct gp_node_doctor_opts o = {root, "/usr/bin", &inv,  NULL, NULL,
                                        NULL, bad[i],     false, NULL};
        struct gp_diag d = {""};
        if (gp_node_doctor_run(&o, &r, &d) != GP_EUSAGE)
            fail_msg("--mig %s accepted", bad[i]);
    }
}

static void test_persistence(void **state)
{
    (void)state;
    inv.gpus[1].persistence_mode = false;
    const struct gp_node_check *c = run(NULL, NULL, "persistence", GP_NODE_WARN);
    assert_non_null(strstr(c->detail, "GPU 1"));
    assert_non_null(strstr(c->fix, "nvidia-persistenced"));
    assert_int_equal(gp_node_doctor_exit(&r), 0);
}

/* --mps: NVIDIA's MPS control daemon running (/proc/PID/cmdline) and its
 * control pipe in <mpsRoot>/nvidia.com/<resource>/pipe; no --mps: skip. */
static void test_mps(void **state)
{
    (void)state;
    struct gp_node_doctor_opts o = {root, "/usr/bin", &inv, NULL, NULL, NULL, NULL, true, NULL};
    struct gp_diag d = {""};
    const struct gp_node_check *c;
#define MPS_CHECK(v)                                                                               \
    do {                                                                                           \
        assert_int_equal(gp_node_doctor_run(&o, &r, &d), GP_OK);                                   \
        assert_int_equal(r.n, GP_NODE_DOCTOR_CHECKS);                                              \
        c = &r.checks[r.n - 1];                                                                    \
        assert_string_equal(c->name, "mps");                                                       \
        if (c->verdict != (v))                                                                     \
            fail_msg("mps: %s: %s", gp_node_verdict_name(c->verdict), c->detail);                  \
        if ((v) == GP_NODE_FAIL)                                                                   \
            assert_true(c->fix[0] != '\0');                                                        \
    } while (0)
    MPS_CHECK(GP_NODE_FAIL); /* no daemon */
    assert_non_null(strstr(c->detail, "no nvidia-cuda-mps-control process"));
    assert_non_null(strstr(c->fix, "CUDA_MPS_PIPE_DIRECTORY=/run/nvidia/mps/nvidia.com/gpu/pipe"));
    assert_int_equal(gp_node_doctor_exit(&r), 1);
    put("/proc/1/cmdline", "/sbin/init\0splash", 0644);
    put("/proc/731/cmdline", "/usr/bin/nvidia-cuda-mps-control\0-d", 0644);
    MPS_CHECK(GP_NODE_FAIL); /* running, no pipe directory */
    assert_non_null(strstr(c->detail, "pid 731"));
    assert_non_null(strstr(c->detail, "does not exist"));
    put("/run/nvidia/mps/nvidia.com/gpu/pipe/log", "", 0644);
    MPS_CHECK(GP_NODE_FAIL); /* the directory, without the daemon's control pipe */
    assert_non_null(strstr(c->detail, "/run/nvidia/mps/nvidia.com/gpu/pipe has no control pipe"));
    put("/run/nvidia/mps/nvidia.com/gpu/pipe/control", "", 0644);
    MPS_CHECK(GP_NODE_PASS);
    assert_non_null(strstr(c->detail, "listening in /run/nvidia/mps/nvidia.com/gpu/pipe"));
    assert_int_equal(gp_node_doctor_exit(&r), 0);
    o.mps_root = "/var/mps"; /* the agent's flags.mpsRoot elsewhere */
    MPS_CHECK(GP_NODE_FAIL);
    assert_non_null(strstr(c->fix, "/var/mps/nvidia.com/gpu/pipe"));
    o.mps_root = NULL;
    add_mig(&inv.gpus[0], "3g.40gb"); /* MPS with MIG: refused */
    MPS_CHECK(GP_NODE_FAIL);
    assert_non_null(strstr(c->detail, "GPU 0 is in MIG mode"));
    o.mps = false;
    MPS_CHECK(GP_NODE_SKIP);
#undef MPS_CHECK
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_all_pass, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_no_driver, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_driver_mismatch, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_cuda, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_toolkit, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_runtime, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_device_plugins, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_mig, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_persistence, healthy, cleanup),
        cmocka_unit_test_setup_teardown(test_mps, healthy, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
