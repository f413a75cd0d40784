/* test_kube_preempt_room.c - a preemptor waiting on its nominated node
 * while its victims stop (their grace period, 30 s, outlasts the test)
 * takes room that opens beside them on that node at once, as
 * kube-scheduler evaluates the nominated node first at each attempt with
 * the victims still counted (schedule_one.go findNodesThatFitPod /
 * evaluateNominatedNode, v1.28): when another pod there ends, the
 * preemptor is bound on the GPU it freed, its victim stopping on and its
 * GPU still its own (kube/sched_room.c, sched_cycle.c waiting_moves);
 * where the room beside the victims is too small, it waits for them; on
 * time-sliced GPUs it takes a replica freed beside its victim's, on MIG
 * an instance freed beside its victim's. The
 * audit runs after every cycle (kube_world.h w_cycle); the run recorded
 * with --record replays to the same decisions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"
#include "sim/replay.h"

static bool deleting(struct world *w, const char *name)
{
    json_t *o = w_pod_get(w, name);
    bool yes = json_object_get(json_object_get(o, "metadata"), "deletionTimestamp") != NULL;
    json_decref(o);
    return yes;
}

static const char *nominated(struct world *w, const char *name)
{
    static char b[64];
    json_t *o = w_pod_get(w, name);
    const char *n =
        json_string_value(json_object_get(json_object_get(o, "status"), "nominatedNodeName"));
    snprintf(b, sizeof b, "%s", n ? n : "");
    json_decref(o);
    return b;
}

static void pod_ends(struct world *w, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status", name);
    kd_call(w->admin, "PATCH", path, "{\"status\":{\"phase\":\"Succeeded\"}}", 200);
}

/* n1's two GPUs: low on the first, keep (priority 200, not preemptable)
 * on the second; high (100) preempts low and waits for it on n1. keep
 * ends: high's next attempt (after its back-off) binds it on keep's GPU
 * while low still stops, on n1 (its nomination stays: it holds), low's
 * GPU untouched; once low is gone its GPU goes to the next pod. Without
 * the own-node try high waits out low's grace period; without low's GPU
 * booked for the try, the engine's first free GPU is low's, and high
 * waits too. */
static void own_room_case(const char *record, bool deleted)
{
    struct world w;
    w_open_record(&w, true, record);
    w_node(&w, "n1", 2);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    w.now += 1;
    w_pod_full(&w, "keep", 1, 200, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 1);
    const char *g;
    char keep_gpu[16], low_gpu[16];
    w_node_of(&w, "keep", &g);
    snprintf(keep_gpu, sizeof keep_gpu, "%s", g);
    w_node_of(&w, "low", &g);
    snprintf(low_gpu, sizeof low_gpu, "%s", g);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    assert_string_equal(nominated(&w, "high"), "n1");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* nothing free beside low yet: it waits */
    assert_string_equal(w_node_of(&w, "high", NULL), "");
    if (deleted) /* (gone at once: no grace period) */
        kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/keep?gracePeriodSeconds=0",
                NULL, 200);
    else
        pod_ends(&w, "keep");
    for (int i = 0; i < 12 && strcmp(w_node_of(&w, "high", NULL), "") == 0; i++) {
        w.now += 0.25;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", &g), "n1");
    assert_string_equal(g, keep_gpu); /* the GPU keep freed, not low's */
    assert_true(deleting(&w, "low")); /* still stopping */
    assert_string_equal(nominated(&w, "high"), "n1");
    assert_int_equal(gp_kube_sched_stats(w.s).evictions, 1);
    w_check_distinct(&w);
    w_pod(&w, "next", 1); /* low's GPU is not free yet */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "next", &g), "n1");
    assert_string_equal(g, low_gpu);
    w_check_distinct(&w);
    w_close(&w);
}

static void test_own_node_room(void **state)
{
    (void)state;
    own_room_case(getenv("GP_TEST_RECORD"), false);
}

/* keep deleted instead of ending: the same */
static void test_own_node_room_deleted(void **state)
{
    (void)state;
    own_room_case(getenv("GP_TEST_RECORD"), true);
}

/* The same run recorded: `gpuplane sim --replay` makes every decision
 * again the same (the preemptor's own-node try, its bookings of low's
 * GPU, are in the log as the engine calls they were). */
static void test_own_node_replay(void **state)
{
    (void)state;
    char path[] = "/tmp/gp-own-room-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    own_room_case(path, false);
    struct gp_replay_result r;
    struct gp_diag d = {""};
    if (gp_replay_file(path, NULL, NULL, &r, &d) != GP_OK)
        fail_msg("replay: %s", d.msg);
    if (r.has_diff)
        fail_msg("%s at line %zu:\n  recorded %s\n  replayed %s", r.first.what, r.first.line,
                 r.first.recorded, r.first.replayed);
    assert_true(r.decisions >= 4); /* keep, low, the eviction and high's, next */
    assert_int_equal(r.matched, r.decisions);
    unlink(path);
}

/* Room beside the victims too small: high asks two GPUs of n1's three,
 * preempting low1 and low2; keep ends and frees one GPU - the engine
 * alone, the victims released, sees three free and would bind high onto
 * a GPU a victim still runs on (the audit's double booking). Counted with
 * the victims' GPUs, one is free: high waits until they are gone, then is
 * bound. */
static void test_own_node_too_small(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 3);
    w_pod_full(&w, "keep", 1, 200, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 1);
    w.now += 1;
    w_pod(&w, "low1", 1);
    w_pod(&w, "low2", 1);
    assert_int_equal(w_cycle(&w), 2);
    w_pod_full(&w, "high", 2, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low1"));
    assert_true(deleting(&w, "low2"));
    pod_ends(&w, "keep");
    for (int i = 0; i < 12; i++) {
        w.now += 0.25;
        assert_int_equal(w_cycle(&w), 0);
    }
    assert_string_equal(w_node_of(&w, "high", NULL), "");
    assert_true(deleting(&w, "low1"));
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

/* A node of `gpus` GPUs time-sliced `replicas` ways (nvidia.com/gpu
 * counts replicas), as GPU feature discovery labels it. */
static void w_sliced_node(struct world *w, const char *name, unsigned gpus, unsigned replicas)
{
    char b[1024], path[128];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.product\":"
             "\"NVIDIA-A100-SXM4-80GB-SHARED\",\"nvidia.com/gpu.memory\":\"81920\","
             "\"nvidia.com/gpu.count\":\"%u\",\"nvidia.com/gpu.replicas\":\"%u\","
             "\"nvidia.com/gpu.sharing-strategy\":\"time-slicing\"}},\"spec\":{}}",
             name, gpus, replicas);
    kd_call(w->admin, "POST", "/api/v1/nodes", b, 201);
    snprintf(b, sizeof b,
             "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":"
             "\"%u\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\","
             "\"nvidia.com/gpu\":\"%u\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\","
             "\"status\":\"True\"}]}}",
             gpus * replicas, gpus * replicas);
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    kd_call(w->admin, "PATCH", path, b, 200);
}

/* Time-sliced GPUs, two replicas each, two GPUs: low and keep1 share the
 * first, keep2 and keep3 (priority 200) the second; high (100, one
 * replica) preempts low and waits on its replica. `ends` ends, and high
 * takes the replica it freed while low still stops: on the first GPU
 * beside low (kube-scheduler and the audit count replicas: low's and
 * high's make two), or on the second, where without low's replica booked
 * the engine's fullest-fit choice would be the first GPU - low's, keep1's
 * and high's, three of two (the audit's violation). */
static void sliced_case(const char *ends)
{
    struct world w;
    w_open(&w, true);
    w_sliced_node(&w, "s1", 2, 2);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    w.now += 1;
    w_pod_full(&w, "keep1", 1, 200, "gpuplane", NULL);
    w_pod_full(&w, "keep2", 1, 200, "gpuplane", NULL);
    w_pod_full(&w, "keep3", 1, 200, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 3);
    const char *g;
    char low_gpu[16], keep1_gpu[16], ends_gpu[16];
    w_node_of(&w, "low", &g);
    snprintf(low_gpu, sizeof low_gpu, "%s", g);
    w_node_of(&w, "keep1", &g);
    snprintf(keep1_gpu, sizeof keep1_gpu, "%s", g);
    assert_string_equal(low_gpu, keep1_gpu); /* (the layout the case is about) */
    w_node_of(&w, ends, &g);
    snprintf(ends_gpu, sizeof ends_gpu, "%s", g);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* no replica free beside low yet */
    pod_ends(&w, ends);
    for (int i = 0; i < 12 && strcmp(w_node_of(&w, "high", NULL), "") == 0; i++) {
        w.now += 0.25;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", &g), "s1");
    assert_string_equal(g, ends_gpu);
    assert_true(deleting(&w, "low"));
    assert_string_equal(nominated(&w, "high"), "s1");
    w_close(&w);
}

static void test_own_node_sliced_beside(void **state)
{
    (void)state;
    sliced_case("keep1");
}

static void test_own_node_sliced_other(void **state)
{
    (void)state;
    sliced_case("keep2");
}

static const char *mig_of(struct world *w, const char *pod)
{
    static char out[128];
    json_t *o = w_pod_get(w, pod);
    const char *v = json_string_value(json_object_get(
        json_object_get(json_object_get(o, "metadata"), "annotations"), GP_KUBE_ANN_MIG));
    snprintf(out, sizeof out, "%s", v ? v : "");
    json_decref(o);
    return out;
}

/* An H100 of seven 1g.10gb instances under MIG's single strategy
 * (nvidia.com/gpu counts instances): low on one, keep1..keep6 (priority
 * 200) on the others; high preempts low. keep1 ends: high is bound on
 * keep1's instance while low still stops, low's instance booked for the
 * try (the audit counts MIG slices). */
static void test_own_node_mig(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    kd_call(w.admin, "POST", "/api/v1/nodes",
            "{\"metadata\":{\"name\":\"m1\",\"labels\":{\"nvidia.com/gpu.product\":"
            "\"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb\",\"nvidia.com/gpu.count\":\"7\","
            "\"nvidia.com/gpu.memory\":\"9984\",\"nvidia.com/mig.capable\":\"true\","
            "\"nvidia.com/mig.config\":\"all-1g.10gb\",\"nvidia.com/mig.config.state\":"
            "\"success\",\"nvidia.com/mig.strategy\":\"single\"}},\"spec\":{}}",
            201);
    kd_call(w.admin, "PATCH", "/api/v1/nodes/m1/status",
            "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\","
            "\"nvidia.com/gpu\":\"7\"},\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\","
            "\"pods\":\"110\",\"nvidia.com/gpu\":\"7\"},\"conditions\":[{\"type\":\"Ready\","
            "\"status\":\"True\"}]}}",
            200);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    w.now += 1;
    const char *keeps[6] = {"keep1", "keep2", "keep3", "keep4", "keep5", "keep6"};
    for (int i = 0; i < 6; i++)
        w_pod_full(&w, keeps[i], 1, 200, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 6);
    char low_mig[128], keep1_mig[128];
    snprintf(low_mig, sizeof low_mig, "%s", mig_of(&w, "low"));
    snprintf(keep1_mig, sizeof keep1_mig, "%s", mig_of(&w, "keep1"));
    assert_true(low_mig[0] && keep1_mig[0] && strcmp(low_mig, keep1_mig) != 0);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* every instance taken beside low's */
    pod_ends(&w, "keep1");
    for (int i = 0; i < 12 && strcmp(w_node_of(&w, "high", NULL), "") == 0; i++) {
        w.now += 0.25;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", NULL), "m1");
    assert_string_equal(mig_of(&w, "high"), keep1_mig);
    assert_true(deleting(&w, "low"));
    w_close(&w);
}

/* A pod of gpuplane's asking `gpus` GPUs and `cpu` cores. */
static void pod_cpu(struct world *w, const char *name, unsigned gpus, unsigned cpu, int priority)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priority\":%d,\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":"
             "\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"%u\",\"memory\":"
             "\"1Gi\",\"nvidia.com/gpu\":\"%u\"},\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}]}}",
             name, priority, cpu, gpus, gpus);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* Room of cpu: of n1's 64 cores low (30, priority 0) and keep (30, 200)
 * use 60; high (30 cores, no GPU) preempts low and waits, low's 30 held
 * until it is gone (victim_hold). keep ends: high is bound on the cores
 * keep freed while low still stops; no other pod fits beside them. */
static void test_own_node_cpu(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    pod_cpu(&w, "low", 0, 30, 0);
    pod_cpu(&w, "keep", 0, 30, 200);
    assert_int_equal(w_cycle(&w), 2);
    pod_cpu(&w, "high", 0, 30, 100);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* low's and keep's cores: no room */
    pod_ends(&w, "keep");
    for (int i = 0; i < 12 && strcmp(w_node_of(&w, "high", NULL), "") == 0; i++) {
        w.now += 0.25;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    assert_true(deleting(&w, "low"));
    pod_cpu(&w, "more", 0, 10, 0); /* 4 cores free beside low and high */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    w_close(&w);
}

/* After a restart the preemptor's claim is read back (gp_ks_nominated_claim:
 * placed on the room its victims leave by the engine's default choice of
 * GPUs); keep ends, the room beside the victims is too small, and the
 * preemptor is put back where it was, as it waited - recorded by the new
 * scheduler and replayed to the same decisions (its place written as a
 * plain node's pick). */
static void test_own_node_restart_replay(void **state)
{
    (void)state;
    char path[] = "/tmp/gp-own-restart-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 3);
    w_pod_full(&w, "keep", 1, 200, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 1);
    w.now += 1;
    w_pod(&w, "low1", 1);
    w_pod(&w, "low2", 1);
    assert_int_equal(w_cycle(&w), 2);
    w_pod_full(&w, "high", 2, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low1"));
    w_close(&w); /* the scheduler goes; its victims still stop */
    w_open_record(&w, true, path);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    pod_ends(&w, "keep");
    for (int i = 0; i < 12; i++) {
        w.now += 0.25;
        assert_int_equal(w_cycle(&w), 0);
    }
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
    struct gp_replay_result r;
    struct gp_diag d = {""};
    if (gp_replay_file(path, NULL, NULL, &r, &d) != GP_OK)
        fail_msg("replay: %s", d.msg);
    if (r.has_diff)
        fail_msg("%s at line %zu:\n  recorded %s\n  replayed %s", r.first.what, r.first.line,
                 r.first.recorded, r.first.replayed);
    assert_int_equal(r.matched, r.decisions);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_own_node_room, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_room_deleted, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_replay, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_too_small, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_sliced_beside, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_sliced_other, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_mig, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_cpu, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_own_node_restart_replay, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
