/* test_node_cdi.c - the node's CDI spec: golden (tests/golden/node-cdi.json)
 * for two GPUs, one with MIG devices, on a fake driver root; checked by the
 * validator of the CDI specification's rules, which in turn refuses specs
 * breaking each rule; written atomically into the CDI directory. */
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

#include "node/cdi.h"
#include "util/fs.h"

#define GOLDEN GP_TEST_DATA "/../golden/node-cdi.json"

static char root[64];

static void touch(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    close(fd);
}

static void write_file(const char *rel, const char *text)
{
    touch(rel);
    char p[512];
    snprintf(p, sizeof p, "%s%s", root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int fake_root(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/gp-cdi-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    touch("/dev/nvidia0");
    touch("/dev/nvidia1");
    touch("/dev/nvidiactl");
    touch("/dev/nvidia-uvm");
    touch("/dev/nvidia-uvm-tools");
    touch("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15");
    touch("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
    touch("/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.550.54.15");
    touch("/usr/lib/x86_64-linux-gnu/libcuda.so.1");               /* a link: not mounted */
    touch("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05"); /* another driver's */
    touch("/usr/lib/x86_64-linux-gnu/libz.so.550.54.15");          /* not NVIDIA's */
    touch("/usr/bin/nvidia-smi");
    write_file("/proc/driver/nvidia-caps/mig-minors", "config 1\nmonitor 2\n"
                                                      "gpu1/gi1/access 147\n"
                                                      "gpu1/gi1/ci0/access 148\n"
                                                      "gpu1/gi2/access 156\n"
                                                      "gpu1/gi2/ci0/access 157\n");
    return 0;
}

static int rm_root(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static struct gp_node_inventory inv;

static void two_gpus(void)
{
    memset(&inv, 0, sizeof inv);
    snprintf(inv.driver_version, sizeof inv.driver_version, "550.54.15");
    inv.cuda_driver_version = 12040;
    inv.n_gpus = 2;
    for (unsigned i = 0; i < 2; i++) {
        inv.gpus[i].index = i;
        snprintf(inv.gpus[i].uuid, sizeof inv.gpus[i].uuid,
                 "GPU-%u1f0e4b2-9c3a-4d5e-8f70-a1b2c3d4e5f6", i);
        snprintf(inv.gpus[i].name, sizeof inv.gpus[i].name, "NVIDIA H100 80GB HBM3");
    }
    struct gp_node_gpu *g = &inv.gpus[1];
    g->mig_enabled = true;
    g->n_migs = 2;
    for (unsigned k = 0; k < 2; k++) {
        snprintf(g->migs[k].uuid, sizeof g->migs[k].uuid,
                 "MIG-%u6c1d2e3-4f50-5a6b-7c8d-9e0f1a2b3c4d", k);
        snprintf(g->migs[k].profile, sizeof g->migs[k].profile, "3g.40gb");
        g->migs[k].gi_id = k + 1;
        g->migs[k].ci_id = 0;
    }
}

/* spec with the root replaced by "{root}" */
static char *relative(const char *spec)
{
    size_t rl = strlen(root), n = 0;
    char *o = malloc(strlen(spec) + 1);
    for (const char *p = spec; *p;)
        if (strncmp(p, root, rl) == 0) {
            memcpy(o + n, "{root}", 6);
            n += 6;
            p += rl;
        } else {
            o[n++] = *p++;
        }
    o[n] = '\0';
    return o;
}

static void test_golden(void **state)
{
    (void)state;
    two_gpus();
    struct gp_node_cdi_opts o = {root, NULL};
    char *spec;
    struct gp_diag d = {""};
    if (gp_node_cdi_build(&inv, &o, &spec, &d) != GP_OK)
        fail_msg("build: %s", d.msg);
    char *rel = relative(spec);
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *f = fopen(GOLDEN, "w");
        fputs(rel, f);
        fclose(f);
    }
    char *want;
    size_t len;
    assert_int_equal(gp_fs_read(GOLDEN, &want, &len, &d), GP_OK);
    assert_string_equal(rel, want);
    assert_int_equal(gp_node_cdi_validate(spec, &d), GP_OK);
    free(want);
    free(rel);
    free(spec);
}

static void test_mig_minors_needed(void **state)
{
    (void)state;
    two_gpus();
    struct gp_node_cdi_opts o = {"/nonexistent-root", NULL};
    char *spec;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_cdi_build(&inv, &o, &spec, &d), GP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "mig-minors"));
    inv.gpus[1].migs[1].gi_id = 9; /* not in the table */
    o.root = root;
    assert_int_equal(gp_node_cdi_build(&inv, &o, &spec, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "gpu1/gi9/access"));
    inv.n_gpus = 0;
    assert_int_equal(gp_node_cdi_build(&inv, &o, &spec, &d), GP_EINVALID);
}

/* Each rule of the validator refuses a spec that breaks it. */
static void test_validator_rules(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"[]", "not a JSON object"},
        {"{\"cdiVersion\":\"0.2.0\",\"kind\":\"a.com/b\",\"devices\":[]}", "cdiVersion"},
        {"{\"kind\":\"a.com/b\",\"devices\":[]}", "cdiVersion"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com\",\"devices\":[]}", "kind"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"-nvidia.com/gpu\",\"devices\":[]}", "kind"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu-\",\"devices\":[]}", "kind"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/g/pu\",\"devices\":[]}", "kind"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[]}", "at least one"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a b\","
         "\"containerEdits\":{\"env\":[\"A=1\"]}}]}",
         "name must"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"x:\","
         "\"containerEdits\":{\"env\":[\"A=1\"]}}]}",
         "name must"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\"}]}",
         "containerEdits is required"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\","
         "\"containerEdits\":{}}]}",
         "no edit"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\","
         "\"containerEdits\":{\"env\":[\"A=1\"]}},{\"name\":\"a\",\"containerEdits\":{\"env\":["
         "\"A=1\"]}}]}",
         "used twice"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\","
         "\"containerEdits\":{\"env\":[\"NOEQUALS\"]}}]}",
         "KEY=VALUE"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\","
         "\"containerEdits\":{\"deviceNodes\":[{\"path\":\"dev/nvidia0\"}]}}]}",
         "absolute"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\","
         "\"containerEdits\":{\"mounts\":[{\"hostPath\":\"/x\"}]}}]}",
         "containerPath"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\","
         "\"containerEdits\":{\"hooks\":[{\"hookName\":\"preStart\",\"path\":\"/h\"}]}}]}",
         "hookName"},
        {"{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"a\","
         "\"containerEdits\":{\"hooks\":[{\"hookName\":\"poststop\"}]}}]}",
         "path is required"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct gp_diag d = {""};
        if (gp_node_cdi_validate(bad[i].spec, &d) != GP_EINVALID || !strstr(d.msg, bad[i].msg))
            fail_msg("case %zu: expected '%s', got '%s'", i, bad[i].msg, d.msg);
    }
    struct gp_diag d = {""};
    assert_int_equal(gp_node_cdi_validate("{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\","
                                          "\"devices\":[{\"name\":\"0\",\"containerEdits\":{"
                                          "\"deviceNodes\":[{\"path\":\"/dev/nvidia0\"}]}}]}",
                                          &d),
                     GP_OK);
}

static void test_write_atomic(void **state)
{
    (void)state;
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/cdi", root);
    struct gp_diag d = {""};
#define SPEC(dev)                                                                                  \
    "{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"" dev "\","    \
    "\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia0\"}]}}]}\n"
    assert_int_equal(gp_node_cdi_write(dir, SPEC("0"), &d), GP_ENOTFOUND); /* no directory */
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(gp_node_cdi_write(dir, SPEC("a"), &d), GP_OK);
    assert_int_equal(gp_node_cdi_write(dir, SPEC("b"), &d), GP_OK);
    snprintf(path, sizeof path, "%s/" GP_NODE_CDI_FILE, dir);
    char *text;
    size_t len;
    assert_int_equal(gp_fs_read(path, &text, &len, &d), GP_OK);
    assert_string_equal(text, SPEC("b"));
    free(text);
    /* a spec CDI refuses is never written: the one before stays */
    assert_int_equal(gp_node_cdi_write(dir, SPEC("-bad"), &d), GP_EINVALID);
    assert_int_equal(gp_node_cdi_write(dir, "{\"a\":1}\n", &d), GP_EINVALID);
    assert_int_equal(gp_fs_read(path, &text, &len, &d), GP_OK);
    assert_string_equal(text, SPEC("b"));
    free(text);
    /* nothing but the spec is left in the directory */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_mig_minors_needed),
        cmocka_unit_test(test_validator_rules),
        cmocka_unit_test(test_write_atomic),
    };
    return cmocka_run_group_tests(tests, fake_root, rm_root);
}
