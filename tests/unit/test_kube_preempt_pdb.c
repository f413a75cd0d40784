/* test_kube_preempt_pdb.c - PodDisruptionBudgets counted per budget by the
 * live scheduler (src/kube/pdb.c: each budget given to the engine under
 * its id with its status.disruptionsAllowed, each pod the ids of the
 * budgets its disruption counts against), as kube-scheduler's
 * filterPodsWithPDBViolation counts them (pkg/scheduler/framework/
 * plugins/defaultpreemption/default_preemption.go, v1.28): on a node the
 * candidate victims take one from each of their budgets, and a victim
 * violates when one goes below zero. Against the API server double.
 *
 * The world: n-a holds a1 and a2 (priority 0, app=keep), n-b holds b1 and
 * b2 (priority 1, no budget), every GPU used; a pod of priority 100 asking
 * two GPUs preempts. A budget on app=keep allowing one disruption: each of
 * a1, a2 judged alone keeps it (the old per-pod verdict: n-a's cheaper
 * victims go), evicting both breaks it once, so n-b's pods go (n-a has one
 * violation, n-b none). Allowing two: neither node breaks it and n-a's
 * lower priorities decide. The budgets and links follow a budget's status
 * update, a pod's label change, a budget's delete, the API's disruptedPods,
 * a rebuilt engine (a leader change) and a new scheduler (a restart); the
 * --record log replays to the same victims only with its pdb_set and
 * pod_pdbs lines, and an older log's pod_pdb lines still steer a replay.
 * Its :shared run checks every object written (the budgets, their status
 * with disruptedPods) against the published schemas. */
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
#include "shared_data.h"
#include "kube_world.h"
#include "io/eventlog.h"
#include "sim/replay.h"
#include "util/arena.h"

enum twist {
    PLAIN,     /* the budget as created */
    STATUS,    /* created allowing 2, its status then patched to `allowed` */
    LABELS,    /* a2 created as app=spare, its labels then changed to app=keep */
    DELETED,   /* the budget deleted before the preemptor comes */
    DISRUPTED, /* a2 in the budget's status.disruptedPods (the API counted it) */
    REBUILD,   /* the engine rebuilt (leadership lost and regained) after the budget */
    RESTART,   /* a new scheduler, its budgets listed before its first engine */
};

static bool deleting(struct world *w, const char *name)
{
    json_t *o = w_pod_get(w, name);
    bool yes = json_object_get(json_object_get(o, "metadata"), "deletionTimestamp") != NULL;
    json_decref(o);
    return yes;
}

static void budget(struct world *w, int allowed)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
             "{\"name\":\"keep\",\"namespace\":\"default\"},\"spec\":{\"minAvailable\":1,"
             "\"selector\":{\"matchLabels\":{\"app\":\"keep\"}}},\"status\":{\"disruptionsAllowed\""
             ":%d,\"currentHealthy\":2,\"desiredHealthy\":1,\"expectedPods\":2}}",
             allowed);
    kd_call(w->admin, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", b, 201);
}

#define BUDGET_PATH "/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep"

static void budget_informer(struct world *w, struct gp_kube_client **ic,
                            struct gp_kube_informer **pdbs)
{
    struct gp_diag d = {""};
    *ic = kd_client();
    assert_int_equal(gp_kube_informer_new(*ic, "/apis/policy/v1/poddisruptionbudgets", 0,
                                          gp_kube_sched_pdb_change, w->s, pdbs, &d),
                     GP_OK);
}

static void budget_list(struct gp_kube_informer *pdbs)
{
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_list(pdbs, &d), GP_OK);
}

/* The world with the budget (allowed, twisted), the preemptor's cycle;
 * whether n-a's pods (a1 and a2) were the victims, else n-b's (b1, b2:
 * checked). record: the --record log, NULL for GP_TEST_RECORD's (the
 * build's :replay run) or none. */
static bool a_evicted(int allowed, enum twist t, const char *record)
{
    struct world w;
    record = record ? record : getenv("GP_TEST_RECORD");
    w_open_record(&w, true, record);
    struct gp_kube_client *ic;
    struct gp_kube_informer *pdbs;
    budget_informer(&w, &ic, &pdbs);
    w_node(&w, "n-a", 2);
    w_node(&w, "n-b", 2);
    w_pod_full(&w, "a1", 1, 0, "gpuplane", ",\"labels\":{\"app\":\"keep\"}");
    w_pod_full(&w, "a2", 1, 0, "gpuplane",
               t == LABELS ? ",\"labels\":{\"app\":\"spare\"}" : ",\"labels\":{\"app\":\"keep\"}");
    assert_int_equal(w_cycle(&w), 2);
    char an[64];
    snprintf(an, sizeof an, "%s", w_node_of(&w, "a1", NULL));
    assert_string_equal(w_node_of(&w, "a2", NULL), an); /* packed together */
    w.now += 1;
    w_pod_full(&w, "b1", 1, 1, "gpuplane", ",\"labels\":{\"app\":\"other\"}");
    w_pod_full(&w, "b2", 1, 1, "gpuplane", ",\"labels\":{\"app\":\"other\"}");
    assert_int_equal(w_cycle(&w), 2);
    assert_string_not_equal(w_node_of(&w, "b1", NULL), an);
    budget(&w, t == STATUS ? 2 : allowed);
    budget_list(pdbs);
    if (t == STATUS) {
        char b[128];
        snprintf(b, sizeof b, "{\"status\":{\"disruptionsAllowed\":%d}}", allowed);
        kd_call(w.admin, "PATCH", BUDGET_PATH "/status", b, 200);
    } else if (t == LABELS) {
        kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/a2",
                "{\"metadata\":{\"labels\":{\"app\":\"keep\"}}}", 200);
    } else if (t == DELETED) {
        kd_call(w.admin, "DELETE", BUDGET_PATH, NULL, 200);
    } else if (t == DISRUPTED) {
        kd_call(w.admin, "PATCH", BUDGET_PATH "/status",
                "{\"status\":{\"disruptedPods\":{\"a2\":\"2024-01-01T00:00:00Z\"}}}", 200);
    } else if (t == REBUILD) {
        gp_kube_sched_set_leader(w.s, false);
        gp_kube_sched_set_leader(w.s, true);
    } else if (t == RESTART) {
        gp_kube_informer_free(pdbs);
        gp_kube_client_free(ic);
        w_close(&w);
        w_open_record(&w, true, record);
        budget_informer(&w, &ic, &pdbs);
    }
    budget_list(pdbs);
    w_sync(&w);
    uint64_t rebuilds = gp_kube_sched_stats(w.s).rebuilds;
    if (t == RESTART)
        assert_int_equal(rebuilds, 0); /* the budget came before its first engine */
    w_pod_full(&w, "high", 2, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    if (t == REBUILD || t == RESTART)
        assert_true(gp_kube_sched_stats(w.s).rebuilds > rebuilds);
    bool a = deleting(&w, "a1");
    assert_int_equal(deleting(&w, "a2"), a);
    assert_int_equal(deleting(&w, "b1"), !a);
    assert_int_equal(deleting(&w, "b2"), !a);
    assert_int_equal(gp_kube_sched_stats(w.s).evictions, 2);
    gp_kube_informer_free(pdbs);
    gp_kube_client_free(ic);
    w_close(&w);
    return a;
}

/* Allowing one: two victims of the budget on n-a break it, so n-b's pods
 * go (judged alone, each of a1 and a2 keeps it: n-a's lower priorities
 * would win). */
static void test_counted_per_budget(void **state)
{
    (void)state;
    assert_false(a_evicted(1, PLAIN, NULL));
}

/* Allowing two: no node breaks it, n-a's pods go. */
static void test_budget_allows_both(void **state)
{
    (void)state;
    assert_true(a_evicted(2, PLAIN, NULL));
}

/* A status update (2 -> 1) reaches the engine as the budget's count. */
static void test_status_update(void **state)
{
    (void)state;
    assert_false(a_evicted(1, STATUS, NULL));
}

/* a2's labels changed into the budget: it counts against it now. */
static void test_label_change(void **state)
{
    (void)state;
    assert_false(a_evicted(1, LABELS, NULL));
}

/* The budget deleted: its pods count against nothing. */
static void test_budget_deleted(void **state)
{
    (void)state;
    assert_true(a_evicted(1, DELETED, NULL));
}

/* a2 in status.disruptedPods: the API counted it, kube-scheduler does not
 * again, so a1 alone takes the one disruption allowed. */
static void test_disrupted_pods(void **state)
{
    (void)state;
    assert_true(a_evicted(1, DISRUPTED, NULL));
}

/* A rebuilt engine and a new scheduler get the links (allowing one:
 * without them nothing counts, n-a's pods go) and the budgets (allowing
 * two: without them a budget allows none, n-a breaks it twice and n-b's
 * pods go). */
static void test_rebuild_links(void **state)
{
    (void)state;
    assert_false(a_evicted(1, REBUILD, NULL));
}

static void test_rebuild_budgets(void **state)
{
    (void)state;
    assert_true(a_evicted(2, REBUILD, NULL));
}

static void test_restart_links(void **state)
{
    (void)state;
    assert_false(a_evicted(1, RESTART, NULL));
}

static void test_restart_budgets(void **state)
{
    (void)state;
    assert_true(a_evicted(2, RESTART, NULL));
}

/* --- the --record log ----------------------------------------------------- */

static void replay(const char *path, struct gp_replay_result *r)
{
    struct gp_diag d = {""};
    if (gp_replay_file(path, NULL, NULL, r, &d) != GP_OK)
        fail_msg("%s", d.msg);
}

/* The log rewritten line by line: each line's object given to edit, which
 * returns the line to write (NULL: dropped). */
static void rewrite(const char *from, const char *to, json_t *(*edit)(json_t *o))
{
    FILE *in = fopen(from, "r"), *out = fopen(to, "w");
    assert_non_null(in);
    assert_non_null(out);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        assert_non_null(o);
        json_t *e = edit(o);
        if (e) {
            char *s = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
            fprintf(out, "%s\n", s);
            free(s);
            json_decref(e);
        }
    }
    free(line);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static bool is_ev(const json_t *o, const char *ev)
{
    const char *k = json_string_value(json_object_get(o, "ev"));
    return k && strcmp(k, ev) == 0;
}

static json_t *drop_budgets(json_t *o)
{
    if (is_ev(o, "pdb_set") || is_ev(o, "pod_pdbs")) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* An older gpuplane's log of the same run: a pod's verdict judged alone
 * (pod_pdb) where this one links it to its budgets; every budget here
 * allows none, so each linked pod breaks its budget alone. */
static json_t *to_old(json_t *o)
{
    if (is_ev(o, "pdb_set")) {
        json_decref(o);
        return NULL;
    }
    if (!is_ev(o, "pod_pdbs"))
        return o;
    json_t *n = json_pack("{s:s,s:O,s:b}", "ev", "pod_pdb", "pod", json_object_get(o, "pod"),
                          "violating", json_array_size(json_object_get(o, "pdbs")) > 0);
    json_decref(o);
    return n;
}

static size_t count_ev(const char *path, const char *ev)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0, n = 0;
    char want[64];
    snprintf(want, sizeof want, "\"ev\":\"%s\"", ev);
    while (getline(&line, &cap, f) > 0)
        n += strstr(line, want) != NULL;
    free(line);
    fclose(f);
    return n;
}

/* A run whose victims the per-budget count chose (n-b's), recorded across
 * a rebuild: `gpuplane sim --replay` makes every decision the same; the
 * same log without its pdb_set and pod_pdbs lines does not (the replay's
 * engine counts no budget and takes n-a's pods). */
static void test_replay(void **state)
{
    (void)state;
    char path[] = "/tmp/gp-pdbs-replay-XXXXXX", bare[64];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(bare, sizeof bare, "%s.bare", path);
    assert_false(a_evicted(1, REBUILD, path));
    assert_true(count_ev(path, "pdb_set") >= 2);  /* the budget, given to each engine */
    assert_true(count_ev(path, "pod_pdbs") >= 4); /* a1 and a2 linked in each */
    struct gp_replay_result r;
    replay(path, &r);
    if (r.has_diff)
        fail_msg("%s at line %zu:\n  recorded %s\n  replayed %s", r.first.what, r.first.line,
                 r.first.recorded, r.first.replayed);
    assert_true(r.decisions >= 7); /* four binds, two evictions, the preemptor's bind */
    assert_int_equal(r.matched, r.decisions);
    rewrite(path, bare, drop_budgets);
    replay(bare, &r);
    assert_true(r.has_diff);
    assert_true(r.matched < r.decisions);
    unlink(bare);
    unlink(path);
}

/* An older log's pod_pdb line still reads and steers the replay: a budget
 * allowing none (n-a's pods each break it alone, n-b's go), written as an
 * older gpuplane wrote it, replays to the recorded victims; without its
 * pod_pdb lines it does not. And the line itself parses as before. */
static void test_old_pod_pdb_line(void **state)
{
    (void)state;
    const char *line = "{\"ev\":\"pod_pdb\",\"pod\":3,\"violating\":true}";
    struct gp_evlog_event ev;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {""};
    assert_int_equal(gp_evlog_parse_line(line, strlen(line), "x:1", &a, &ev, &d), GP_OK);
    assert_int_equal(ev.kind, GP_EVLOG_POD_PDB);
    assert_int_equal(ev.pod, 3);
    assert_true(ev.violating);
    gp_arena_free(&a);

    char path[] = "/tmp/gp-pdb-old-XXXXXX", old[64], bare[64];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(old, sizeof old, "%s.old", path);
    snprintf(bare, sizeof bare, "%s.bare", path);
    assert_false(a_evicted(0, PLAIN, path));
    rewrite(path, old, to_old);
    assert_int_equal(count_ev(old, "pod_pdbs"), 0);
    assert_true(count_ev(old, "pod_pdb") >= 2);
    struct gp_replay_result r;
    replay(old, &r);
    if (r.has_diff)
        fail_msg("%s at line %zu:\n  recorded %s\n  replayed %s", r.first.what, r.first.line,
                 r.first.recorded, r.first.replayed);
    assert_int_equal(r.matched, r.decisions);
    rewrite(path, bare, drop_budgets);
    replay(bare, &r);
    assert_true(r.has_diff);
    unlink(bare);
    unlink(old);
    unlink(path);
}

/* Bad pdb_set and pod_pdbs lines: one message naming the field. */
static void test_bad_lines(void **state)
{
    (void)state;
    static const struct {
        const char *line, *msg;
    } bad[] = {
        {"{\"ev\":\"pdb_set\",\"allowed\":1,\"ok\":true}", "x:1: pdb: missing"},
        {"{\"ev\":\"pdb_set\",\"pdb\":1,\"ok\":true}", "x:1: allowed: missing"},
        {"{\"ev\":\"pdb_set\",\"pdb\":1,\"allowed\":1}", "x:1: ok: missing"},
        {"{\"ev\":\"pod_pdbs\",\"pod\":1,\"ok\":true}", "x:1: pdbs: missing"},
        {"{\"ev\":\"pod_pdbs\",\"pod\":1,\"pdbs\":[0,-1],\"ok\":true}", "x:1: pdbs[1]: expected"},
        {"{\"ev\":\"pod_pdbs\",\"pod\":1,\"pdbs\":{},\"ok\":true}", "x:1: pdbs: expected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct gp_evlog_event ev;
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_diag d = {""};
        assert_int_not_equal(
            gp_evlog_parse_line(bad[i].line, strlen(bad[i].line), "x:1", &a, &ev, &d), GP_OK);
        if (strncmp(d.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
            fail_msg("%s: %s", bad[i].line, d.msg);
        gp_arena_free(&a);
    }
    const char *ok = "{\"ev\":\"pod_pdbs\",\"pod\":4,\"pdbs\":[2,7],\"ok\":true}";
    struct gp_evlog_event ev;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {""};
    assert_int_equal(gp_evlog_parse_line(ok, strlen(ok), "x:1", &a, &ev, &d), GP_OK);
    assert_int_equal(ev.kind, GP_EVLOG_POD_PDBS);
    assert_int_equal(ev.npdbs, 2);
    assert_int_equal(ev.pdbs[1], 7);
    gp_arena_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counted_per_budget, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_budget_allows_both, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_status_update, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_label_change, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_budget_deleted, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_disrupted_pods, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_rebuild_links, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_rebuild_budgets, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_restart_links, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_restart_budgets, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_replay, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_old_pod_pdb_line, kd_start, kd_stop),
        cmocka_unit_test(test_bad_lines),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
