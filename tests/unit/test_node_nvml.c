/* test_node_nvml.c - discovery (src/node/nvml.c) against the fake
 * libnvidia-ml.so.1 (tests/fakenvml/): plain GPUs, NVLink peers, MIG
 * devices with and without their GPU instance's info, no driver, NVML
 * failing at init, at each call of a discovery in turn (the last good
 * inventory kept), a GPU lost (failing a discovery, or skipped by
 * gp_node_discover_lost), the fake's live configuration (NVML failing
 * and back on a handle left open), and XID events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>

#include "node/health.h"
#include "node/nvml.h"
#include "node/nvwatch.h"

static char dir[64], conf[128], xids[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gp-fakenvml-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(conf, sizeof conf, "%s/nvml.conf", dir);
    snprintf(xids, sizeof xids, "%s/xids", dir);
    setenv("GPUPLANE_FAKE_NVML", conf, 1);
    unsetenv(GP_NVML_ENV);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(conf);
    unlink(xids);
    char sets[160]; /* the fake's count of event sets (tests/fakenvml) */
    snprintf(sets, sizeof sets, "%s.sets", xids);
    unlink(sets);
    rmdir(dir);
    return 0;
}

static void write_conf(const char *text)
{
    FILE *f = fopen(conf, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void append_xid(const char *line)
{
    FILE *f = fopen(xids, "a");
    assert_non_null(f);
    fputs(line, f);
    fclose(f);
}

static const char two_l4[] =
    "# two L4s, no MIG\n"
    "driver 550.54.15\n"
    "cuda 12040\n"
    "gpu name=\"NVIDIA L4\" uuid=GPU-aaaa pci=00000000:01:00.0 pciid=0x27B810DE memory=23034 "
    "used=512 cc=8.9 util=37 persistence=1\n"
    "gpu name=\"NVIDIA L4\" uuid=GPU-bbbb pci=00000000:02:00.0 pciid=0x27B810DE memory=23034 "
    "used=0 cc=8.9 util=0 persistence=0\n";

static void discover_ok(struct gp_node_inventory *inv)
{
    struct gp_diag d = {""};
    enum gp_err err = gp_node_discover_path(GP_FAKENVML, inv, &d);
    if (err != GP_OK)
        fail_msg("discover: %s", d.msg);
}

static void test_plain_gpus(void **state)
{
    (void)state;
    write_conf(two_l4);
    static struct gp_node_inventory inv;
    discover_ok(&inv);
    assert_string_equal(inv.driver_version, "550.54.15");
    assert_int_equal(inv.cuda_driver_version, 12040);
    assert_int_equal(inv.n_gpus, 2);
    const struct gp_node_gpu *g = &inv.gpus[0];
    assert_int_equal(g->index, 0);
    assert_string_equal(g->uuid, "GPU-aaaa");
    assert_string_equal(g->name, "NVIDIA L4");
    assert_string_equal(g->pci_bus_id, "00000000:01:00.0");
    assert_int_equal(g->memory_mib, 23034);
    assert_int_equal(g->memory_used_mib, 512);
    assert_int_equal(g->cc_major, 8);
    assert_int_equal(g->cc_minor, 9);
    assert_false(g->mig_capable);
    assert_false(g->mig_enabled);
    assert_int_equal(g->n_migs, 0);
    assert_int_equal(g->util_percent, 37);
    assert_true(g->persistence_mode);
    assert_true(g->healthy);
    assert_int_equal(g->last_xid, 0);
    assert_int_equal(g->nvlink_peers, 0);
    assert_int_equal(inv.gpus[1].index, 1);
    assert_string_equal(inv.gpus[1].uuid, "GPU-bbbb");
    assert_false(inv.gpus[1].persistence_mode);
}

/* The path comes from GPUPLANE_NVML when none is given. */
static void test_env_path(void **state)
{
    (void)state;
    write_conf(two_l4);
    setenv(GP_NVML_ENV, GP_FAKENVML, 1);
    static struct gp_node_inventory inv;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_discover_path(NULL, &inv, &d), GP_OK);
    assert_int_equal(inv.n_gpus, 2);
    unsetenv(GP_NVML_ENV);
}

/* Four H100s: 0-1 and 2-3 linked twice each, one link down, one to an
 * NVSwitch (a bus id no GPU has), domain spelt with 4 digits. */
static void test_nvlink_peers(void **state)
{
    (void)state;
    write_conf("driver 535.104.05\ncuda 12020\n"
               "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-0 pci=00000000:18:00.0 memory=81559 "
               "cc=9.0 mig=0\n"
               "nvlink link=0 peer=00000000:2A:00.0\nnvlink link=1 peer=0000:2a:00.0\n"
               "nvlink link=2 peer=00000000:3A:00.0 down\n"
               "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-1 pci=00000000:2A:00.0 memory=81559 "
               "cc=9.0 mig=0\n"
               "nvlink link=0 peer=00000000:18:00.0\n"
               "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-2 pci=00000000:3A:00.0 memory=81559 "
               "cc=9.0 mig=0\n"
               "nvlink link=5 peer=00000000:5D:00.0\nnvlink link=6 peer=00000000:99:00.0\n"
               "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-3 pci=00000000:5D:00.0 memory=81559 "
               "cc=9.0 mig=0\n"
               "nvlink link=17 peer=00000000:3a:00.0\n");
    static struct gp_node_inventory inv;
    discover_ok(&inv);
    assert_int_equal(inv.n_gpus, 4);
    assert_int_equal(inv.gpus[0].nvlink_peers, 1u << 1); /* the down link to 2 not counted */
    assert_int_equal(inv.gpus[1].nvlink_peers, 1u << 0);
    assert_int_equal(inv.gpus[2].nvlink_peers, 1u << 3);
    assert_int_equal(inv.gpus[3].nvlink_peers, 1u << 2);
    assert_true(inv.gpus[0].mig_capable);
    assert_false(inv.gpus[0].mig_enabled);
    assert_false(inv.gpus[0].persistence_mode); /* not supported: off */
}

/* An A100-80GB in MIG mode: profiles by NVML's profile id, and from the
 * tables by slices and memory when the GPU instance's info is refused;
 * a compute instance smaller than its GPU instance. */
static void test_mig(void **state)
{
    (void)state;
    write_conf("driver 535.104.05\ncuda 12020\n"
               "gpu name=\"NVIDIA A100-SXM4-80GB\" uuid=GPU-a100 pci=00000000:07:00.0 "
               "pciid=0x20B210DE memory=81920 used=0 cc=8.0 util=55 mig=1 persistence=1\n"
               "mig uuid=MIG-aaaa gi=7 ci=0 profile=9 start=4 size=4 memory=40192 sms=42 "
               "gislices=3 cislices=3 copy=3 dec=2 jpeg=0 ofa=0\n"
               "mig uuid=MIG-bbbb gi=9 ci=0 profile=19 start=2 size=1 memory=9728 sms=14 "
               "gislices=1 cislices=1 copy=1\n"
               "mig uuid=MIG-cccc gi=11 ci=0 memory=9728 gislices=1 cislices=1 noinfo\n"
               "mig uuid=MIG-dddd gi=3 ci=1 profile=14 start=0 size=2 memory=19968 "
               "gislices=2 cislices=1\n"
               "gpu name=\"NVIDIA A100-SXM4-80GB\" uuid=GPU-off pci=00000000:0F:00.0 "
               "pciid=0x20B210DE memory=81920 cc=8.0 mig=0 util=5\n");
    static struct gp_node_inventory inv;
    discover_ok(&inv);
    assert_int_equal(inv.n_gpus, 2);
    const struct gp_node_gpu *g = &inv.gpus[0];
    assert_true(g->mig_capable);
    assert_true(g->mig_enabled);
    assert_int_equal(g->util_percent, 0); /* NVML does not sample a MIG-enabled GPU */
    assert_int_equal(g->n_migs, 4);
    const struct gp_node_mig *m = &g->migs[0];
    assert_string_equal(m->uuid, "MIG-aaaa");
    assert_string_equal(m->profile, "3g.40gb");
    assert_int_equal(m->gi_id, 7);
    assert_int_equal(m->ci_id, 0);
    assert_int_equal(m->start, 4);
    assert_int_equal(m->size, 4);
    assert_int_equal(m->memory_mib, 40192);
    assert_int_equal(m->multiprocessors, 42);
    assert_int_equal(m->gi_slices, 3);
    assert_int_equal(m->ci_slices, 3);
    assert_int_equal(m->engines_copy, 3);
    assert_int_equal(m->engines_decoder, 2);
    assert_string_equal(g->migs[1].profile, "1g.10gb");
    assert_int_equal(g->migs[1].start, 2);
    /* no GPU instance info: 1 slice and 9728 MiB is 1g.10gb in the table */
    assert_string_equal(g->migs[2].profile, "1g.10gb");
    assert_int_equal(g->migs[2].size, 1);
    assert_string_equal(g->migs[3].profile, "1c.2g.20gb");
    assert_false(inv.gpus[1].mig_enabled);
    assert_true(inv.gpus[1].mig_capable);
    assert_int_equal(inv.gpus[1].util_percent, 5);
}

/* A GPU the tables do not know: the name is built as NVML builds it. */
static void test_mig_unknown_model(void **state)
{
    (void)state;
    write_conf("driver 580.65.06\ncuda 13000\n"
               "gpu name=\"NVIDIA Future GPU\" uuid=GPU-f pci=00000000:07:00.0 pciid=0x99990DE "
               "memory=200000 mig=1\n"
               "mig uuid=MIG-f gi=1 ci=0 profile=77 start=0 size=2 memory=46592 gislices=2 "
               "cislices=2\n");
    static struct gp_node_inventory inv;
    discover_ok(&inv);
    assert_string_equal(inv.gpus[0].migs[0].profile, "2g.46gb");
}

static void test_no_driver(void **state)
{
    (void)state;
    struct gp_nvml *nv = NULL;
    struct gp_diag d = {""};
    enum gp_err err = gp_nvml_open("/nonexistent/libnvidia-ml.so.1", &nv, &d);
    assert_int_equal(err, GP_ENOTFOUND);
    assert_null(nv);
    assert_int_equal(gp_nvml_exit_code(err), GP_NVML_EXIT_NO_DRIVER);
    assert_int_equal(GP_NVML_EXIT_NO_DRIVER, 3);
    assert_non_null(strstr(d.msg, "/nonexistent/libnvidia-ml.so.1"));
    /* the default soname, where this machine has no driver: the one line */
    void *real = dlopen(GP_NVML_LIB, RTLD_NOW | RTLD_LOCAL);
    if (real) {
        dlclose(real);
        return;
    }
    d.msg[0] = '\0';
    assert_int_equal(gp_nvml_open(NULL, &nv, &d), GP_ENOTFOUND);
    assert_string_equal(d.msg, GP_NVML_NO_DRIVER_MSG);
    assert_string_equal(d.msg,
                        "NVML: libnvidia-ml.so.1 not found: is the NVIDIA driver installed?");
}

/* A library without NVML's calls is refused, naming the first missing. */
static void test_not_nvml(void **state)
{
    (void)state;
    struct gp_nvml *nv = NULL;
    struct gp_diag d = {""};
    assert_int_equal(gp_nvml_open("libm.so.6", &nv, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "lacks nvmlInit_v2"));
}

static void test_init_fails(void **state)
{
    (void)state;
    static struct gp_node_inventory inv;
    struct gp_diag d = {""};
    write_conf("init-fail 9\n"); /* DRIVER_NOT_LOADED: no driver, for a script */
    enum gp_err err = gp_node_discover_path(GP_FAKENVML, &inv, &d);
    assert_int_equal(err, GP_ENOTFOUND);
    assert_int_equal(gp_nvml_exit_code(err), GP_NVML_EXIT_NO_DRIVER);
    assert_non_null(strstr(d.msg, "Driver Not Loaded"));
    write_conf("init-fail 999\n");
    err = gp_node_discover_path(GP_FAKENVML, &inv, &d);
    assert_int_equal(err, GP_EIO);
    assert_int_equal(gp_nvml_exit_code(err), 1);
    assert_string_equal(d.msg, "NVML: nvmlInit_v2: Unknown Error");
    write_conf("gpu bogus=1\n"); /* the fake's own config refused: init fails */
    assert_int_equal(gp_node_discover_path(GP_FAKENVML, &inv, &d), GP_EIO);
}

static const char mixed[] =
    "driver 535.104.05\ncuda 12020\n"
    "gpu name=\"NVIDIA A100-SXM4-80GB\" uuid=GPU-0 pci=00000000:07:00.0 pciid=0x20B210DE "
    "memory=81920 cc=8.0 mig=1 persistence=1\n"
    "mig uuid=MIG-0 gi=1 ci=0 profile=19 start=0 size=1 memory=9728 gislices=1 cislices=1\n"
    "mig uuid=MIG-1 gi=2 ci=0 profile=19 start=1 size=1 memory=9728 gislices=1 cislices=1\n"
    "nvlink link=0 peer=00000000:0F:00.0\n"
    "gpu name=\"NVIDIA A100-SXM4-80GB\" uuid=GPU-1 pci=00000000:0F:00.0 pciid=0x20B210DE "
    "memory=81920 used=2048 cc=8.0 mig=0 util=12 persistence=0\n"
    "nvlink link=0 peer=00000000:07:00.0\n";

/* NVML failing at every call of a discovery in turn (the fake's
 * fail-after N): each failure is GP_EIO with NVML's words, and the
 * inventory from the discovery before it is left as it was; the first N
 * that lets a whole discovery through gives the full inventory. */
static void test_fail_each_call(void **state)
{
    (void)state;
    write_conf(mixed);
    static struct gp_node_inventory good, inv;
    discover_ok(&good);
    assert_int_equal(good.n_gpus, 2);
    assert_int_equal(good.gpus[0].n_migs, 2);
    char text[4096];
    unsigned failures = 0;
    for (long n = 1;; n++) {
        snprintf(text, sizeof text, "%sfail-after %ld 999\n", mixed, n);
        write_conf(text);
        struct gp_nvml *nv = NULL;
        struct gp_diag d = {""};
        enum gp_err err = gp_nvml_open(GP_FAKENVML, &nv, &d); /* nvmlInit_v2: call 1 */
        assert_int_equal(err, GP_OK);
        inv = good;
        inv.gpus[0].last_xid = 42; /* a mark the failed discovery must leave */
        err = gp_node_discover(nv, &inv, &d);
        gp_nvml_close(nv);
        if (err == GP_OK) {
            inv.gpus[0].last_xid = 0;
            assert_memory_equal(&inv, &good, sizeof inv);
            break;
        }
        failures++;
        assert_int_equal(err, GP_EIO);
        assert_non_null(strstr(d.msg, "NVML: nvml"));
        assert_non_null(strstr(d.msg, "Unknown Error"));
        assert_int_equal(inv.gpus[0].last_xid, 42);
        inv.gpus[0].last_xid = 0;
        assert_memory_equal(&inv, &good, sizeof inv);
        assert_true(n < 1000);
    }
    assert_true(failures > 20); /* every call of the discovery was failed once */
}

/* Mid-run: one good discovery, then NVML fails; the agent keeps the first. */
static void test_mid_run_failure(void **state)
{
    (void)state;
    write_conf("driver 535.104.05\ncuda 12020\n"
               "gpu name=\"NVIDIA L4\" uuid=GPU-aaaa pci=00000000:01:00.0 memory=23034 cc=8.9\n"
               "fail-after 40 999\n"); /* init and one discovery (31 calls) pass */
    struct gp_nvml *nv = NULL;
    struct gp_diag d = {""};
    assert_int_equal(gp_nvml_open(GP_FAKENVML, &nv, &d), GP_OK);
    static struct gp_node_inventory inv, kept;
    assert_int_equal(gp_node_discover(nv, &inv, &d), GP_OK);
    kept = inv;
    assert_int_equal(gp_node_discover(nv, &inv, &d), GP_EIO);
    assert_memory_equal(&inv, &kept, sizeof inv);
    gp_nvml_close(nv);
}

static void test_one_call_fails(void **state)
{
    (void)state;
    static struct gp_node_inventory inv;
    struct gp_diag d = {""};
    char text[2048];
    snprintf(text, sizeof text, "%sfail-call nvmlDeviceGetMemoryInfo 999\n", two_l4);
    write_conf(text);
    assert_int_equal(gp_node_discover_path(GP_FAKENVML, &inv, &d), GP_EIO);
    assert_string_equal(d.msg, "NVML: nvmlDeviceGetMemoryInfo on GPU 0: Unknown Error");
    /* an optional call NVML does not support is not a failure */
    snprintf(text, sizeof text, "%sfail-call nvmlDeviceGetPersistenceMode 3\n", two_l4);
    write_conf(text);
    assert_int_equal(gp_node_discover_path(GP_FAKENVML, &inv, &d), GP_OK);
    assert_false(inv.gpus[0].persistence_mode);
    /* no libcuda.so.1: the CUDA driver version is unknown, not an error */
    write_conf("driver 535.104.05\ncuda none\n");
    assert_int_equal(gp_node_discover_path(GP_FAKENVML, &inv, &d), GP_OK);
    assert_int_equal(inv.cuda_driver_version, 0);
    assert_int_equal(inv.n_gpus, 0);
}

static void test_gpu_lost(void **state)
{
    (void)state;
    write_conf("driver 535.104.05\ncuda 12020\n"
               "gpu name=\"NVIDIA L4\" uuid=GPU-aaaa pci=00000000:01:00.0 memory=23034\n"
               "gpu name=\"NVIDIA L4\" uuid=GPU-bbbb pci=00000000:02:00.0 memory=23034 lost\n");
    static struct gp_node_inventory inv;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_discover_path(GP_FAKENVML, &inv, &d), GP_EIO);
    assert_string_equal(d.msg, "NVML: nvmlDeviceGetHandleByIndex_v2 on GPU 1: GPU is lost");
    /* which GPU, for health; the event set still watches the other */
    struct gp_nvml *nv = NULL;
    assert_int_equal(gp_nvml_open(GP_FAKENVML, &nv, &d), GP_OK);
    assert_int_equal(gp_nvml_lost_gpu(nv), -1);
    assert_int_equal(gp_node_discover(nv, &inv, &d), GP_EIO);
    assert_int_equal(gp_nvml_lost_gpu(nv), 1);
    unsigned n = 0;
    assert_int_equal(gp_nvml_events_open(nv, &n, &d), GP_OK);
    assert_int_equal(n, 1);
    gp_nvml_close(nv);
    /* another failure: no GPU named lost */
    char text[1024];
    snprintf(text, sizeof text, "%sfail-call nvmlDeviceGetName 999\n", two_l4);
    write_conf(text);
    assert_int_equal(gp_nvml_open(GP_FAKENVML, &nv, &d), GP_OK);
    assert_int_equal(gp_node_discover(nv, &inv, &d), GP_EIO);
    assert_int_equal(gp_nvml_lost_gpu(nv), -1);
    gp_nvml_close(nv);
}

/* gp_node_discover_lost: a lost GPU skipped and named, the others read. */
static void test_discover_lost(void **state)
{
    (void)state;
    write_conf("driver 535.104.05\ncuda 12020\n"
               "gpu name=\"NVIDIA L4\" uuid=GPU-aaaa pci=00000000:01:00.0 memory=23034\n"
               "gpu name=\"NVIDIA L4\" uuid=GPU-bbbb pci=00000000:02:00.0 memory=23034 lost\n"
               "gpu name=\"NVIDIA L4\" uuid=GPU-cccc pci=00000000:03:00.0 memory=23034\n");
    static struct gp_node_inventory inv;
    struct gp_diag d = {""};
    struct gp_nvml *nv = NULL;
    assert_int_equal(gp_nvml_open(GP_FAKENVML, &nv, &d), GP_OK);
    uint64_t lost = 0;
    assert_int_equal(gp_node_discover_lost(nv, &inv, &lost, &d), GP_OK);
    assert_int_equal(lost, 2);
    assert_int_equal(inv.n_gpus, 2);
    assert_string_equal(inv.gpus[0].uuid, "GPU-aaaa");
    assert_int_equal(inv.gpus[1].index, 2);
    assert_string_equal(inv.gpus[1].uuid, "GPU-cccc");
    /* another failure still fails it */
    char text[1024];
    snprintf(text, sizeof text, "%sfail-call nvmlDeviceGetName 999\n", two_l4);
    write_conf(text);
    gp_nvml_close(nv);
    assert_int_equal(gp_nvml_open(GP_FAKENVML, &nv, &d), GP_OK);
    assert_int_equal(gp_node_discover_lost(nv, &inv, &lost, &d), GP_EIO);
    assert_int_equal(lost, 0);
    assert_string_equal(inv.gpus[1].uuid, "GPU-cccc"); /* untouched */
    gp_nvml_close(nv);
}

/* The fake's "live" configuration, read again when the file changes: NVML
 * failing (fail-all) and answering again on a handle left open. */
static void test_live_config(void **state)
{
    (void)state;
    char text[1024], tmp[160];
    snprintf(text, sizeof text, "live\n%s", two_l4);
    write_conf(text);
    static struct gp_node_inventory inv;
    struct gp_diag d = {""};
    struct gp_nvml *nv = NULL;
    assert_int_equal(gp_nvml_open(GP_FAKENVML, &nv, &d), GP_OK);
    assert_int_equal(gp_node_discover(nv, &inv, &d), GP_OK);
    assert_int_equal(inv.n_gpus, 2);
    snprintf(tmp, sizeof tmp, "%s.new", conf);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fprintf(f, "live\nfail-all 999\n%s", two_l4);
    fclose(f);
    assert_int_equal(rename(tmp, conf), 0);
    assert_int_equal(gp_node_discover(nv, &inv, &d), GP_EIO);
    assert_string_equal(d.msg, "NVML: nvmlSystemGetDriverVersion: Unknown Error");
    f = fopen(tmp, "w");
    assert_non_null(f);
    fprintf(f, "live\n%.*s", (int)(strstr(two_l4, "gpu name=\"NVIDIA L4\" uuid=GPU-bbbb") - two_l4),
            two_l4);
    fclose(f);
    assert_int_equal(rename(tmp, conf), 0);
    assert_int_equal(gp_node_discover(nv, &inv, &d), GP_OK);
    assert_int_equal(inv.n_gpus, 1); /* the file as it is now */
    gp_nvml_close(nv);
}

static void test_xid_events(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, "%sxids %s\n", two_l4, xids);
    write_conf(text);
    append_xid(""); /* the file exists, empty */
    struct gp_nvml *nv = NULL;
    struct gp_diag d = {""};
    assert_int_equal(gp_nvml_open(GP_FAKENVML, &nv, &d), GP_OK);
    bool got = true;
    struct gp_nvml_xid ev;
    assert_int_equal(gp_nvml_events_wait(nv, 0, &got, &ev, &d), GP_ESTATE); /* not open */
    unsigned n = 0;
    assert_int_equal(gp_nvml_events_open(nv, &n, &d), GP_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gp_nvml_events_wait(nv, 10, &got, &ev, &d), GP_OK);
    assert_false(got);
    append_xid("1 79\n0 13 3 0\n9 48\n");
    assert_int_equal(gp_nvml_events_wait(nv, 100, &got, &ev, &d), GP_OK);
    assert_true(got);
    assert_int_equal(ev.gpu_index, 1);
    assert_int_equal(ev.xid, 79);
    assert_int_equal(ev.gi_id, UINT32_MAX);
    assert_int_equal(gp_nvml_events_wait(nv, 100, &got, &ev, &d), GP_OK);
    assert_true(got);
    assert_int_equal(ev.gpu_index, 0);
    assert_int_equal(ev.xid, 13);
    assert_int_equal(ev.gi_id, 3);
    assert_int_equal(ev.ci_id, 0);
    /* GPU 9 does not exist: skipped; then nothing */
    assert_int_equal(gp_nvml_events_wait(nv, 10, &got, &ev, &d), GP_OK);
    assert_false(got);
    append_xid("lost 0\n");
    assert_int_equal(gp_nvml_events_wait(nv, 100, &got, &ev, &d), GP_ENOTFOUND);
    assert_string_equal(d.msg, "NVML: nvmlEventSetWait_v2: GPU is lost");
    gp_nvml_close(nv);
}

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_live(const char *remap)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.new", conf);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fprintf(f,
            "live\nxids %s\ndriver 550.54.15\ncuda 12040\n"
            "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-h0 pci=00000000:01:00.0 "
            "pciid=0x233010DE memory=81559 used=0 cc=9.0 util=0 persistence=1 remap=%s\n",
            xids, remap);
    fclose(f);
    assert_int_equal(rename(tmp, conf), 0);
}

/* Polls until a health change of GPU 0 to `to` is reported (true), or
 * wait_s pass (false); now_add moves the poller's clock on (a quiet
 * period past). */
static bool poll_for(struct gp_node_nvwatch *w, enum gp_node_health_state to, double now_add,
                     double wait_s, enum gp_node_health_cause *cause)
{
    static struct gp_node_nvwatch_report rep;
    double until = now_mono() + wait_s;
    while (now_mono() < until) {
        gp_node_nvwatch_poll(w, now_mono() + now_add, &rep);
        for (size_t i = 0; i < rep.n_changes; i++)
            if (rep.changes[i].gpu == 0 && rep.changes[i].to == to) {
                if (cause)
                    *cause = rep.changes[i].cause;
                return true;
            }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* An XID whose catalog action is a GPU reset (95) keeps the GPU out past
 * any quiet period; the reset is seen when NVML's pending row remapping
 * (nvmlDeviceGetRemappedRows) is done, and the GPU is healthy again. */
static void test_reset_seen(void **state)
{
    (void)state;
    append_xid("");
    write_live("0");
    struct gp_node_health_opts ho = {.quiet_s = 1};
    struct gp_node_nvwatch_opts o = {.nvml_path = GP_FAKENVML, .period_s = 0.05, .health = &ho};
    struct gp_node_nvwatch *w = NULL;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_nvwatch_start(&o, &w, &d), GP_OK);
    char sets[160];
    snprintf(sets, sizeof sets, "%s.sets", xids);
    for (int i = 0; i < 250 && access(sets, R_OK) != 0; i++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(access(sets, R_OK), 0); /* the agent's event set follows the file */
    write_live("1"); /* the uncontained ECC error leaves a row remapping pending */
    append_xid("0 95\n");
    enum gp_node_health_cause cause = GP_NODE_CAUSE_XID;
    assert_true(poll_for(w, GP_NODE_UNHEALTHY_RESET, 0, 5, &cause));
    assert_int_equal(cause, GP_NODE_CAUSE_XID);
    /* a day later with nothing new, ten discoveries on: still out (the
     * quiet period is 1 s) */
    assert_false(poll_for(w, GP_NODE_HEALTHY, 86400, 0.5, NULL));
    struct gp_node_health h;
    gp_node_nvwatch_health(w, &h);
    assert_int_equal(h.gpus[0].state, GP_NODE_UNHEALTHY_RESET);
    /* the GPU reset: the remapping done, the GPU back */
    write_live("0");
    assert_true(poll_for(w, GP_NODE_HEALTHY, 86400, 5, &cause)); /* the clock as above */
    assert_int_equal(cause, GP_NODE_CAUSE_RESET);
    gp_node_nvwatch_stop(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_gpus),        cmocka_unit_test(test_env_path),
        cmocka_unit_test(test_nvlink_peers),      cmocka_unit_test(test_mig),
        cmocka_unit_test(test_mig_unknown_model), cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_not_nvml),          cmocka_unit_test(test_init_fails),
        cmocka_unit_test(test_fail_each_call),    cmocka_unit_test(test_mid_run_failure),
        cmocka_unit_test(test_one_call_fails),    cmocka_unit_test(test_gpu_lost),
        cmocka_unit_test(test_discover_lost),     cmocka_unit_test(test_live_config),
        cmocka_unit_test(test_xid_events),        cmocka_unit_test(test_reset_seen),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
