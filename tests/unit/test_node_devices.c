/* test_node_devices.c - the device plugin's resources, IDs, preferred
 * allocations and Allocate answers (src/node/devices.c), without gRPC:
 * NVIDIA's names under each sharing mode and MIG strategy, NVLink-aligned
 * preferences, the refusals (duplicates, two replicas of one GPU,
 * failRequestsGreaterThanOne, a choice that does not match), the
 * scheduler's choice winning over the kubelet's IDs, MPS limits, the
 * exact MIG instances of gpuplane.io/mig, and the inventory file's bad
 * input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "node/devices.h"
#include "node/inventory_file.h"

static void inv_make(struct gp_node_inventory *inv, size_t n)
{
    memset(inv, 0, sizeof *inv);
    inv->n_gpus = n;
    for (size_t g = 0; g < n; g++) {
        struct gp_node_gpu *x = &inv->gpus[g];
        x->index = (unsigned)g;
        snprintf(x->uuid, sizeof x->uuid, "GPU-%zu", g);
        x->memory_mib = 81920;
        x->healthy = true;
    }
}

static void nvlink(struct gp_node_inventory *inv, unsigned a, unsigned b)
{
    inv->gpus[a].nvlink_peers |= (uint64_t)1 << b;
    inv->gpus[b].nvlink_peers |= (uint64_t)1 << a;
}

static void test_names(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    inv_make(&inv, 2);
    struct gp_node_sharing sh = {.mode = GP_NODE_SHARE_NONE, .replicas = 1};
    struct gp_node_devset s;
    struct gp_diag d;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_int_equal(s.n_resources, 1);
    assert_string_equal(s.res[0].name, "nvidia.com/gpu");
    assert_string_equal(s.res[0].socket, "nvidia-gpu.sock");
    assert_int_equal(s.res[0].n, 2);
    assert_string_equal(s.res[0].devs[1].id, "GPU-1");
    gp_node_devset_free(&s);

    sh = (struct gp_node_sharing){
        .mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 3, .rename_by_default = true};
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_string_equal(s.res[0].name, "nvidia.com/gpu.shared");
    assert_string_equal(s.res[0].socket, "nvidia-gpu.shared.sock");
    assert_int_equal(s.res[0].n, 6);
    assert_string_equal(s.res[0].devs[4].id, "GPU-1::1");
    assert_string_equal(s.res[0].devs[4].uuid, "GPU-1");
    gp_node_devset_free(&s);

    /* MIG mixed: GPU 0 in MIG mode, GPU 1 whole */
    inv.gpus[0].mig_enabled = true;
    inv.gpus[0].n_migs = 2;
    snprintf(inv.gpus[0].migs[0].uuid, GP_NODE_UUID_LEN, "MIG-a");
    snprintf(inv.gpus[0].migs[0].profile, 32, "3g.40gb");
    snprintf(inv.gpus[0].migs[1].uuid, GP_NODE_UUID_LEN, "MIG-b");
    snprintf(inv.gpus[0].migs[1].profile, 32, "1g.10gb");
    sh = (struct gp_node_sharing){.replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_int_equal(s.n_resources, 3);
    assert_string_equal(s.res[0].name, "nvidia.com/gpu");
    assert_int_equal(s.res[0].n, 1);
    assert_string_equal(s.res[1].name, "nvidia.com/mig-3g.40gb");
    assert_string_equal(s.res[2].socket, "nvidia-mig-1g.10gb.sock");
    gp_node_devset_free(&s);
    /* single over two profiles, and MPS with MIG: refused */
    sh.mig_strategy = GP_NODE_MIG_SINGLE;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "mig strategy single"));
    sh = (struct gp_node_sharing){
        .mode = GP_NODE_SHARE_MPS, .replicas = 2, .mig_strategy = GP_NODE_MIG_MIXED};
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "MPS"));
    /* none: MIG ignored, both GPUs whole */
    sh = (struct gp_node_sharing){.replicas = 1, .mig_strategy = GP_NODE_MIG_NONE};
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_int_equal(s.n_resources, 1);
    assert_int_equal(s.res[0].n, 2);
    gp_node_devset_free(&s);
}

/* Only the resources the sharing names are replicated, and renamed, as
 * NVIDIA's plugin replicates the ReplicatedResources of its config: under
 * the mixed strategy with nvidia.com/gpu time-sliced (the flags, or a file
 * naming it) the whole GPUs are replicas (nvidia.com/gpu.shared with
 * renameByDefault) and the MIG devices stay whole, one ID each on
 * nvidia.com/mig-<profile>; a file naming the profile replicates it. */
static void test_named_only(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    inv_make(&inv, 2);
    inv.gpus[0].mig_enabled = true;
    inv.gpus[0].n_migs = 2;
    snprintf(inv.gpus[0].migs[0].uuid, GP_NODE_UUID_LEN, "MIG-a");
    snprintf(inv.gpus[0].migs[0].profile, 32, "3g.40gb");
    snprintf(inv.gpus[0].migs[1].uuid, GP_NODE_UUID_LEN, "MIG-b");
    snprintf(inv.gpus[0].migs[1].profile, 32, "1g.10gb");
    struct gp_node_sharing sh = {.mode = GP_NODE_SHARE_TIME_SLICING,
                                 .replicas = 4,
                                 .rename_by_default = true,
                                 .mig_strategy = GP_NODE_MIG_MIXED};
    struct gp_node_devset s;
    struct gp_diag d;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_int_equal(s.n_resources, 3);
    assert_string_equal(s.res[0].name, "nvidia.com/gpu.shared");
    assert_string_equal(s.res[0].socket, "nvidia-gpu.shared.sock");
    assert_int_equal(s.res[0].n, 4); /* GPU 1, four replicas */
    assert_string_equal(s.res[0].devs[3].id, "GPU-1::3");
    assert_true(s.res[0].shared);
    for (size_t i = 1; i < 3; i++) {
        assert_int_equal(s.res[i].n, 1);
        assert_false(s.res[i].shared);
        assert_null(strstr(s.res[i].name, ".shared"));
        assert_null(strstr(s.res[i].devs[0].id, "::"));
    }
    assert_string_equal(s.res[1].name, "nvidia.com/mig-3g.40gb");
    assert_string_equal(s.res[2].devs[0].id, "MIG-b");
    gp_node_devset_free(&s);
    /* a file naming nvidia.com/gpu alone: the same */
    sh.n_named = 1;
    snprintf(sh.named[0], sizeof sh.named[0], "nvidia.com/gpu");
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_string_equal(s.res[2].name, "nvidia.com/mig-1g.10gb");
    assert_int_equal(s.res[2].n, 1);
    gp_node_devset_free(&s);
    /* naming a MIG profile as well replicates (and renames) it alone */
    sh.n_named = 2;
    snprintf(sh.named[1], sizeof sh.named[1], "nvidia.com/mig-1g.10gb");
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_string_equal(s.res[1].name, "nvidia.com/mig-3g.40gb");
    assert_int_equal(s.res[1].n, 1);
    assert_string_equal(s.res[2].name, "nvidia.com/mig-1g.10gb.shared");
    assert_int_equal(s.res[2].n, 4);
    assert_string_equal(s.res[2].devs[1].id, "MIG-b::1");
    gp_node_devset_free(&s);
}

static void test_prefer(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    inv_make(&inv, 8);
    nvlink(&inv, 1, 6); /* GPUs 1 and 6 NVLinked, 2-3-4 a linked triangle */
    nvlink(&inv, 2, 3);
    nvlink(&inv, 3, 4);
    nvlink(&inv, 2, 4);
    struct gp_node_sharing sh = {.replicas = 1};
    struct gp_node_devset s;
    struct gp_diag d;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    const char *all[8];
    for (size_t i = 0; i < 8; i++)
        all[i] = s.res[0].devs[i].id;
    size_t out[8];
    assert_int_equal(gp_node_dev_prefer(&s.res[0], &inv, all, 8, NULL, 0, 3, NULL, out), 3);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[2], 4);
    const char *must[] = {"GPU-6"};
    assert_int_equal(gp_node_dev_prefer(&s.res[0], &inv, all, 8, must, 1, 2, NULL, out), 2);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 6);
    /* a choice is followed */
    struct gp_node_choice ch = {.set = true, .n = 2, .index = {0, 7}};
    assert_int_equal(gp_node_dev_prefer(&s.res[0], &inv, all, 8, NULL, 0, 2, &ch, out), 2);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 7);
    gp_node_devset_free(&s);

    /* replicas: distinct GPUs, never two of one */
    sh = (struct gp_node_sharing){.mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4};
    inv_make(&inv, 2);
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    const char *avail[] = {"GPU-0::0", "GPU-0::1", "GPU-0::2", "GPU-1::3"};
    assert_int_equal(gp_node_dev_prefer(&s.res[0], &inv, avail, 4, NULL, 0, 2, NULL, out), 2);
    assert_int_not_equal(s.res[0].devs[out[0]].gpu, s.res[0].devs[out[1]].gpu);
    assert_int_equal(gp_node_dev_prefer(&s.res[0], &inv, avail, 3, NULL, 0, 2, NULL, out), 1);
    gp_node_devset_free(&s);
}

static void test_allocate(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    inv_make(&inv, 4);
    struct gp_node_sharing sh = {.mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4};
    struct gp_node_devset s;
    struct gp_diag d;
    struct gp_node_alloc a;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    const struct gp_node_resource *r = &s.res[0];
    const char *dup[] = {"GPU-1::0", "GPU-1::0"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, dup, 2, NULL, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "asked twice"));
    const char *two[] = {"GPU-1::0", "GPU-1::1"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, two, 2, NULL, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "two replicas"));
    const char *pair[] = {"GPU-1::0", "GPU-2::1"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, pair, 2, NULL, &sh, &a, &d), GP_OK);
    assert_string_equal(a.visible, "GPU-1,GPU-2");
    assert_false(a.mps);
    sh.fail_requests_greater_than_one = true;
    assert_int_equal(gp_node_dev_allocate(r, &inv, pair, 2, NULL, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "maximum request size for shared resources is 1"));
    /* the scheduler chose GPU 3; the kubelet picked a replica of GPU 1 */
    struct gp_node_choice ch = {.set = true, .n = 1, .index = {3}, .pod = "default/p"};
    const char *one[] = {"GPU-1::2"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, one, 1, &ch, &sh, &a, &d), GP_OK);
    assert_string_equal(a.visible, "GPU-3");
    ch.n = 2;
    ch.index[1] = 0;
    assert_int_equal(gp_node_dev_allocate(r, &inv, one, 1, &ch, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "chose 2 GPU(s) for default/p"));
    const char *unknown[] = {"GPU-9::0"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, unknown, 1, NULL, &sh, &a, &d), GP_EINVALID);
    gp_node_devset_free(&s);

    /* MPS: 100/replicas of the threads, memory/replicas per device */
    sh = (struct gp_node_sharing){.mode = GP_NODE_SHARE_MPS, .replicas = 4};
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_int_equal(gp_node_dev_allocate(&s.res[0], &inv, pair, 2, NULL, &sh, &a, &d), GP_OK);
    assert_true(a.mps);
    assert_int_equal(a.mps_thread_percent, 25);
    assert_string_equal(a.mps_mem_limit, "0=20480M,1=20480M");
    /* the daemon's pipe and shm, as NVIDIA's plugin mounts them: the
     * container's /mps/<resource>/pipe from <mpsRoot>/<resource>/pipe,
     * /dev/shm from <mpsRoot>/shm; mpsRoot /run/nvidia/mps by default */
    assert_string_equal(a.mps_pipe_dir, "/mps/nvidia.com/gpu/pipe");
    assert_string_equal(a.mps_pipe_host, "/run/nvidia/mps/nvidia.com/gpu/pipe");
    assert_string_equal(a.mps_shm_host, "/run/nvidia/mps/shm");
    snprintf(sh.mps_root, sizeof sh.mps_root, "/var/mps/");
    assert_int_equal(gp_node_dev_allocate(&s.res[0], &inv, pair, 2, NULL, &sh, &a, &d), GP_OK);
    assert_string_equal(a.mps_pipe_dir, "/mps/nvidia.com/gpu/pipe");
    assert_string_equal(a.mps_pipe_host, "/var/mps/nvidia.com/gpu/pipe");
    assert_string_equal(a.mps_shm_host, "/var/mps/shm");
    gp_node_devset_free(&s);
    /* time-slicing: no MPS daemon to reach */
    sh = (struct gp_node_sharing){.mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4};
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_int_equal(gp_node_dev_allocate(&s.res[0], &inv, pair, 2, NULL, &sh, &a, &d), GP_OK);
    assert_false(a.mps);
    assert_string_equal(a.mps_pipe_dir, "");
    gp_node_devset_free(&s);
}

/* Two A100s in MIG mode, each 1g.10gb at slices 0, 1, 2 (MIG-<g>-<slice>),
 * the placement NVML gives (start, size). */
static void mig_inv(struct gp_node_inventory *inv)
{
    inv_make(inv, 2);
    for (unsigned g = 0; g < 2; g++) {
        struct gp_node_gpu *x = &inv->gpus[g];
        x->mig_capable = x->mig_enabled = true;
        x->n_migs = 3;
        for (unsigned m = 0; m < 3; m++) {
            snprintf(x->migs[m].uuid, GP_NODE_UUID_LEN, "MIG-%u-%u", g, m);
            snprintf(x->migs[m].profile, sizeof x->migs[m].profile, "1g.10gb");
            x->migs[m].start = m;
            x->migs[m].size = 1;
            x->migs[m].memory_mib = 9728;
        }
    }
}

static void test_mig_exact(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    mig_inv(&inv);
    struct gp_node_sharing sh = {.replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    struct gp_node_devset s;
    struct gp_diag d;
    struct gp_node_alloc a;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_int_equal(s.n_resources, 1);
    const struct gp_node_resource *r = &s.res[0];
    assert_string_equal(r->name, "nvidia.com/mig-1g.10gb");

    /* the annotation read: its instances, and the bad ones refused */
    struct gp_node_choice ch = {.set = true, .n = 2, .index = {1, 0}, .pod = "default/m"};
    assert_int_equal(gp_node_choice_mig_parse("1g.10gb:1@2,0@1", &ch, &d), GP_OK);
    assert_int_equal(ch.n_mig, 2);
    assert_string_equal(ch.mig_profile, "1g.10gb");
    assert_int_equal(ch.mig_gpu[0], 1);
    assert_int_equal(ch.mig_start[0], 2);
    struct gp_node_choice bad = ch;
    assert_int_equal(gp_node_choice_mig_parse("1g.10gb:1@2,1@2", &bad, &d), GP_EINVALID);
    assert_string_equal(d.msg, "gpuplane.io/mig \"1g.10gb:1@2,1@2\" names instance 1@2 twice");
    assert_int_equal(gp_node_choice_mig_parse("1g.10gb:3@0", &bad, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "names GPU 3, which gpuplane.io/gpus does not"));
    const char *junk[] = {"1g.10gb",      ":0@0",        "1g.10gb:0@",
                          "1g.10gb:0@0,", "1g.10gb:x@0", "1g.10gb:0@0;1@1"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        assert_int_equal(gp_node_choice_mig_parse(junk[i], &bad, &d), GP_EINVALID);
        assert_non_null(strstr(d.msg, "not PROFILE:GPU@SLICE"));
    }

    /* exactly the chosen instances are answered, by MIG UUID */
    const char *right[] = {"MIG-1-2", "MIG-0-1"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, right, 2, &ch, &sh, &a, &d), GP_OK);
    assert_string_equal(a.visible, "MIG-1-2,MIG-0-1");
    /* another instance of the same GPU is refused (the GPU alone matched
     * before), never swapped for the chosen one */
    const char *other[] = {"MIG-1-0", "MIG-0-1"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, other, 2, &ch, &sh, &a, &d), GP_EINVALID);
    assert_string_equal(d.msg, "nvidia.com/mig-1g.10gb: the kubelet's MIG device MIG-1-0 "
                               "(1g.10gb at GPU 1 slice 0) for default/m is not one of the "
                               "instances the scheduler chose (1g.10gb:2 instance(s))");
    const char *dup[] = {"MIG-1-2", "MIG-1-2"};
    assert_int_equal(gp_node_dev_allocate(r, &inv, dup, 2, &ch, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "asked twice"));

    /* the preference is the chosen instances the kubelet has, nothing else */
    const char *avail[] = {"MIG-0-0", "MIG-0-1", "MIG-0-2", "MIG-1-0", "MIG-1-1", "MIG-1-2"};
    size_t out[8];
    assert_int_equal(gp_node_dev_prefer(r, &inv, avail, 6, NULL, 0, 2, &ch, out), 2);
    assert_string_equal(r->devs[out[0]].id, "MIG-1-2");
    assert_string_equal(r->devs[out[1]].id, "MIG-0-1");
    const char *most[] = {"MIG-0-0", "MIG-0-2", "MIG-1-0", "MIG-1-2"};
    assert_int_equal(gp_node_dev_prefer(r, &inv, most, 4, NULL, 0, 2, &ch, out), 1);
    assert_string_equal(r->devs[out[0]].id, "MIG-1-2");

    /* a profile other than the annotation's is no chosen instance */
    struct gp_node_choice other_prof = ch;
    snprintf(other_prof.mig_profile, sizeof other_prof.mig_profile, "2g.20gb");
    assert_int_equal(gp_node_dev_allocate(r, &inv, right, 2, &other_prof, &sh, &a, &d),
                     GP_EINVALID);

    /* no placement from NVML: it cannot be matched, so it is refused */
    inv.gpus[1].migs[2].size = 0;
    assert_int_equal(gp_node_dev_allocate(r, &inv, right, 2, &ch, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "placement of MIG device MIG-1-2 on GPU 1 is unknown"));
    inv.gpus[1].migs[2].size = 1;
    gp_node_devset_free(&s);

    /* time-sliced MIG devices (the config names their resource): two
     * replicas of one instance refused */
    sh.mode = GP_NODE_SHARE_TIME_SLICING;
    sh.replicas = 2;
    sh.n_named = 1;
    snprintf(sh.named[0], sizeof sh.named[0], "nvidia.com/mig-1g.10gb");
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    const char *two[] = {"MIG-0-1::0", "MIG-0-1::1"};
    assert_int_equal(gp_node_dev_allocate(&s.res[0], &inv, two, 2, NULL, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "two replicas of MIG device MIG-0-1"));
    const char *rep[] = {"MIG-1-2::1", "MIG-0-1::0"};
    assert_int_equal(gp_node_dev_allocate(&s.res[0], &inv, rep, 2, &ch, &sh, &a, &d), GP_OK);
    assert_string_equal(a.visible, "MIG-1-2,MIG-0-1");
    gp_node_devset_free(&s);
}

static void test_health(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    inv_make(&inv, 2);
    struct gp_node_sharing sh = {.mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 2};
    struct gp_node_devset s;
    struct gp_diag d;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    assert_false(gp_node_devset_health(&s.res[0], &inv));
    inv.gpus[1].healthy = false;
    assert_true(gp_node_devset_health(&s.res[0], &inv));
    assert_true(s.res[0].devs[1].healthy);
    assert_false(s.res[0].devs[2].healthy);
    assert_false(s.res[0].devs[3].healthy);
    gp_node_devset_free(&s);
}

static void test_inventory_file(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    struct gp_diag d;
    const char *ok = "{\"driver\":\"535.104.05\",\"cuda\":12020,\"gpus\":[{\"uuid\":\"GPU-a\","
                     "\"memory_mib\":81920,\"cc\":\"8.0\",\"nvlink_peers\":[1]},{\"index\":1,"
                     "\"uuid\":\"GPU-b\",\"healthy\":false}]}";
    assert_int_equal(gp_node_inventory_parse(ok, strlen(ok), "inv.json", &inv, &d), GP_OK);
    assert_int_equal(inv.n_gpus, 2);
    assert_int_equal(inv.gpus[0].cc_major, 8);
    assert_int_equal(inv.gpus[0].nvlink_peers, 2);
    assert_true(inv.gpus[0].healthy);
    assert_false(inv.gpus[1].healthy);
    const char *typo = "{\"gpus\":[{\"uuid\":\"GPU-a\",\"healty\":false}]}";
    assert_int_equal(gp_node_inventory_parse(typo, strlen(typo), "inv.json", &inv, &d),
                     GP_EINVALID);
    assert_string_equal(d.msg, "inv.json: gpus[0].healty: unknown key");
    const char *twice = "{\"gpus\":[{\"uuid\":\"GPU-a\"},{\"uuid\":\"GPU-a\"}]}";
    assert_int_equal(gp_node_inventory_parse(twice, strlen(twice), "inv.json", &inv, &d),
                     GP_EINVALID);
    assert_non_null(strstr(d.msg, "gpus[1]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),     cmocka_unit_test(test_named_only),
        cmocka_unit_test(test_prefer),    cmocka_unit_test(test_allocate),
        cmocka_unit_test(test_health),    cmocka_unit_test(test_inventory_file),
        cmocka_unit_test(test_mig_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
