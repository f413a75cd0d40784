/* test_sim_topology.c - topology in the engine and the simulator, with
 * answers worked out by hand: a multi-GPU pod gets GPUs of one NVLink
 * domain when one holds them, a gang placed across topology domains runs
 * its PodGroup's slowdown slower, and gangs placed after their schedule
 * timeout are counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "sim/sim.h"
#include "util/arena.h"

static struct gp_pod_spec gpus_pod(uint32_t n)
{
    struct gp_pod_spec p = {0};
    p.name = "p";
    p.cpu_milli = 1000;
    p.mem_mib = 1024;
    p.gpu_count = n;
    p.gpu_milli = 1000;
    return p;
}

static struct gp_decision place(struct gp_engine *e, const struct gp_pod_spec *spec)
{
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, spec, 0, &id), GP_OK);
    struct gp_decision d;
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    return d;
}

/* Eight GPUs in two NVLink quads: 0-3 and 4-7. */
static void test_nvlink_domains(void **state)
{
    (void)state;
    for (int exclusive = 0; exclusive <= 1; exclusive++) {
        struct gp_sharing_spec ex = {0};
        struct gp_node_spec n = {0};
        n.name = "n";
        n.gpu_model = "H100-80GB";
        n.gpu_count = 8;
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 192000;
        n.mem_mib = 2097152;
        n.nvlink_gpus = 4;
        n.sharing = exclusive ? &ex : NULL;
        struct gp_engine *e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        struct gp_pod_spec one = gpus_pod(1), two = gpus_pod(2), four = gpus_pod(4);
        struct gp_decision d = place(e, &one); /* both quads free: the first */
        assert_int_equal(d.pick.gpu[0], 0);
        d = place(e, &four); /* quad 0 has 3 free: the whole quad 1 */
        assert_int_equal(d.pick.gpu[0], 4);
        assert_int_equal(d.pick.gpu[3], 7);
        d = place(e, &two); /* inside quad 0 */
        assert_int_equal(d.pick.gpu[0], 1);
        assert_int_equal(d.pick.gpu[1], 2);
        gp_engine_free(e);

        /* two GPUs free in each quad: a 4-GPU pod must span them */
        e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        uint32_t id[4];
        for (int k = 0; k < 4; k++) { /* 0-1, 2-3, 4-5, 6-7 */
            assert_int_equal(gp_engine_pod_add(e, &two, 0, &id[k]), GP_OK);
            assert_int_equal(gp_engine_schedule_pod(e, id[k], &d), GP_OK);
            assert_int_equal(d.pick.gpu[0], 2 * k);
        }
        assert_int_equal(gp_engine_pod_finished(e, id[0]), GP_OK);
        assert_int_equal(gp_engine_pod_finished(e, id[2]), GP_OK);
        d = place(e, &four);
        assert_int_equal(d.pick.ngpus, 4);
        assert_int_equal(d.pick.gpu[0], 0);
        assert_int_equal(d.pick.gpu[1], 1);
        assert_int_equal(d.pick.gpu[2], 4);
        assert_int_equal(d.pick.gpu[3], 5);
        gp_engine_free(e);
    }
}

/* Two racks of one 4-GPU node. */
static void racks(struct gp_node_spec n[2], struct gp_kv labels[2])
{
    for (int i = 0; i < 2; i++) {
        memset(&n[i], 0, sizeof n[i]);
        n[i].name = i ? "b" : "a";
        n[i].gpu_model = "A100-80GB";
        n[i].gpu_count = 4;
        n[i].gpu_mem_mib = 81920;
        n[i].cpu_milli = 64000;
        n[i].mem_mib = 524288;
        labels[i] = (struct gp_kv){"rack", i ? "r2" : "r1"};
        n[i].labels = &labels[i];
        n[i].nlabels = 1;
    }
}

/* A gang of two members of `gpus` GPUs each, preferring one rack. */
static struct gp_item gang(const char *name, double t, uint32_t gpus, double timeout_s)
{
    struct gp_item it = {0};
    it.name = name;
    it.source = name;
    it.kind = GP_ITEM_JOB;
    it.completions = 2;
    it.parallelism = 2;
    it.pod = gpus_pod(gpus);
    it.pod.name = name;
    it.arrival_s = t;
    it.repeat = 1;
    it.has_duration = true;
    it.duration.kind = GP_DIST_FIXED;
    it.duration.a = 3600;
    it.group_name = name;
    it.gang_min = 2;
    it.topology_key = "rack";
    it.topology_slowdown = 1.5;
    it.gang_timeout_s = timeout_s;
    return it;
}

static void run(struct gp_node_spec *n, struct gp_item *items, size_t nitems,
                struct gp_sim_result *r, struct gp_arena *a)
{
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    struct gp_cluster cl = {.name = "t", .source = "t", .nodes = n, .nnodes = 2};
    struct gp_workload w = {.items = items, .nitems = nitems, .cap = nitems};
    struct gp_diag d = {{0}};
    enum gp_err err = gp_sim_run(&c, &cl, &w, a, r, &d);
    if (err != GP_OK)
        print_message("gp_sim_run: %s\n", d.msg);
    assert_int_equal(err, GP_OK);
}

static void test_gang_across_domains(void **state)
{
    (void)state;
    struct gp_node_spec n[2];
    struct gp_kv labels[2];
    racks(n, labels);
    struct gp_arena a;
    struct gp_sim_result r;
    /* 2 x 2 GPUs fit one rack: an hour */
    struct gp_item items[2] = {gang("small", 0, 2, 0)};
    gp_arena_init(&a);
    run(n, items, 1, &r, &a);
    assert_int_equal(r.gangs_across_domains, 0);
    assert_true(r.jct_s.mean > 3599.99 && r.jct_s.mean < 3600.01);
    gp_arena_free(&a);
    /* 2 x 4 GPUs need both racks: 1.5 hours */
    items[0] = gang("big", 0, 4, 0);
    gp_arena_init(&a);
    run(n, items, 1, &r, &a);
    assert_int_equal(r.gangs_across_domains, 1);
    assert_true(r.jct_s.mean > 5399.99 && r.jct_s.mean < 5400.01);
    gp_arena_free(&a);
}

static void test_gang_timeout(void **state)
{
    (void)state;
    struct gp_node_spec n[2];
    struct gp_kv labels[2];
    racks(n, labels);
    /* b waits for a (1.5 h across racks) with a 1 h timeout: placed late,
     * counted; c's 2 h timeout is not exceeded */
    struct gp_item items[3] = {gang("a", 0, 4, 0), gang("b", 60, 4, 3600), gang("c", 60, 4, 7200)};
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(n, items, 2, &r, &a);
    assert_int_equal(r.gangs_over_timeout, 1);
    gp_arena_free(&a);
    gp_arena_init(&a);
    items[1] = items[2];
    run(n, items, 2, &r, &a);
    assert_int_equal(r.gangs_over_timeout, 0);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvlink_domains),
        cmocka_unit_test(test_gang_across_domains),
        cmocka_unit_test(test_gang_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
