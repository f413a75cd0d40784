/* test_kube_replay.c - the scheduler's event log (`gpuplane schedule
 * --record`, io/eventlog.h) replayed through the engine (`gpuplane sim
 * --replay`, sim/replay.h), issue 14 item 8:
 *  - the real scheduler against the API server double, a seeded workload
 *    (whole GPUs, GPU shares, a gang, priorities that preempt, a pod that
 *    fits nowhere, deletions, a node cordoned and uncordoned: rebuilds),
 *    recorded, replayed: every decision the same;
 *  - one recorded decision edited: the replay reports it, with both sides,
 *    and only it;
 *  - bad input: a torn last line and a torn line before a new run (warned,
 *    skipped), a wrong field type, an unknown event kind, a line that is
 *    not JSON, no header, an engine event before a reset, an unknown
 *    version, a missing file: each one line naming the file, line, field;
 *  - the size cap: the log rotated to FILE.1, each file replaying alone;
 *  - the threaded loop (gp_kube_run: informers, binders, faults that roll
 *    decisions back), pods arriving while it runs: its log replays to the
 *    same decisions, whatever the timing was. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "kube/run.h"
#include "sim/replay.h"
#include "util/fs.h"
#include "util/rng.h"

static char tmpdir[64];

static int dir_setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gp-replay-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return kd_start(state);
}

static int dir_teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        return -1;
    return kd_stop(state);
}

static void warned(void *ctx, const char *line)
{
    snprintf(ctx, 600, "%s", line);
}

/* (not inlined: gcc 12 at -O3 takes the returned text for a pointer to
 * the local `text` itself, -Wdangling-pointer) */
__attribute__((noinline)) static char *slurp(const char *path, size_t *len)
{
    char *text = NULL;
    struct gp_diag d = {""};
    if (gp_fs_read(path, &text, len, &d) != GP_OK)
        fail_msg("%s", d.msg);
    return text;
}

static void spill(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void share_pod(struct world *w, const char *name, unsigned milli)
{
    char meta[128];
    snprintf(meta, sizeof meta, ",\"annotations\":{\"gpuplane.io/gpu-milli\":\"%u\"}", milli);
    w_pod_full(w, name, 0, 0, "gpuplane", meta);
}

static void cordon(struct world *w, const char *node, bool on)
{
    char path[96], body[64];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    snprintf(body, sizeof body, "{\"spec\":{\"unschedulable\":%s}}", on ? "true" : "null");
    kd_call(w->admin, "PATCH", path, body, 200);
}

static void delete_pod(struct world *w, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(w->admin, "DELETE", path, NULL, NULL, &r, &d), GP_OK);
    gp_kube_response_free(&r);
}

/* The seeded workload, recorded into path: returns the decisions' lines. */
static void run_workload(const char *path)
{
    struct world w;
    w_open_record(&w, true, path);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    w_node(&w, "n3", 8);
    kd_call(w.admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
            "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
            "\"metadata\":{\"name\":\"train\"},\"spec\":{\"minMember\":3}}",
            201);
    struct gp_rng rng;
    gp_rng_seed(&rng, 7);
    char name[32];
    unsigned made = 0;
    for (int round = 0; round < 24; round++) {
        unsigned n = 1 + (unsigned)gp_rng_below(&rng, 3);
        for (unsigned k = 0; k < n; k++) {
            snprintf(name, sizeof name, "p%u", made++);
            if (gp_rng_below(&rng, 4) == 0)
                share_pod(&w, name, 250 * (1 + (unsigned)gp_rng_below(&rng, 3)));
            else
                w_pod(&w, name, 1 + (unsigned)gp_rng_below(&rng, 3));
        }
        if (round == 4) {
            for (int g = 1; g <= 3; g++) {
                snprintf(name, sizeof name, "g%d", g);
                w_pod_full(&w, name, 2, 0, "gpuplane",
                           ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"train\"}");
            }
            w_pod(&w, "huge", 16); /* fits nowhere */
        }
        if (round == 10)
            cordon(&w, "n2", true);
        if (round == 14)
            cordon(&w, "n2", false);
        { /* one of the older pods ends */
            snprintf(name, sizeof name, "p%u", (unsigned)gp_rng_below(&rng, made));
            delete_pod(&w, name);
        }
        kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
        w.now += 1;
        w_cycle(&w);
    }
    /* preemption, once nothing else waits (a victim's GPUs taken by another
     * pending pod in the cycle that evicts it is a double booking the
     * audit finds: docs/kube.md, "What comes next") */
    json_t *list = w_get(&w, "/api/v1/pods"), *p;
    size_t i;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        if (!json_object_get(json_object_get(p, "spec"), "nodeName"))
            delete_pod(&w,
                       json_string_value(json_object_get(json_object_get(p, "metadata"), "name")));
    }
    json_decref(list);
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    w_cycle(&w);
    w_pod_full(&w, "vip", 4, 100, "gpuplane", NULL);
    for (int round = 0; round < 4; round++) {
        w.now += 1;
        w_cycle(&w);
        kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    }
    assert_string_not_equal(w_node_of(&w, "vip", NULL), "");
    w_close(&w); /* (no w_check_distinct: shares name one GPU; the audit ran every cycle) */
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_record_replay(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/events.jsonl", tmpdir);
    run_workload(path);
    size_t len;
    char *text = slurp(path, &len);
    /* the workload reached every kind of decision the scheduler takes */
    assert_true(count(text, "\"kind\":\"bind\"") >= 20);
    assert_true(count(text, "\"kind\":\"unschedulable\"") >= 1);
    assert_true(count(text, "\"kind\":\"evict\"") >= 1);
    assert_true(count(text, "\"group\":1") >= 3); /* the gang's members */
    assert_true(count(text, "\"gpu_milli\":250") + count(text, "\"gpu_milli\":500") >= 1);
    assert_true(count(text, "\"ev\":\"reset\"") >= 3); /* a cordon and an uncordon rebuild */
    assert_true(count(text, "\"ev\":\"change\"") >= 40);
    free(text);

    struct gp_replay_result r;
    struct gp_diag d = {""};
    char warning[600] = "";
    assert_int_equal(gp_replay_file(path, warned, warning, &r, &d), GP_OK);
    if (r.has_diff)
        fail_msg("%s at line %zu:\n  recorded %s\n  replayed %s", r.first.what, r.first.line,
                 r.first.recorded, r.first.replayed);
    assert_string_equal(warning, "");
    assert_int_equal(r.warnings, 0);
    assert_true(r.decisions >= 30);
    assert_int_equal(r.matched, r.decisions);
    assert_int_equal(r.differing, 0);
    assert_true(r.cycles >= 24);
    assert_true(r.resets >= 3);
}

/* The first bind decision's first GPU moved: the replay finds it, says
 * both sides, and nothing else differs (the replay's engine keeps its own
 * decision, so what follows agrees again). */
static void test_edited_decision(void **state)
{
    (void)state;
    char path[128], edited[128];
    snprintf(path, sizeof path, "%s/events.jsonl", tmpdir);
    snprintf(edited, sizeof edited, "%s/edited.jsonl", tmpdir);
    run_workload(path);
    size_t len;
    char *text = slurp(path, &len);
    char *at = strstr(text, "\"kind\":\"bind\"");
    assert_non_null(at);
    char *start = at, *end = strchr(at, '\n');
    while (start > text && start[-1] != '\n')
        start--;
    size_t lineno = 1;
    for (const char *p = text; p < start; p++)
        lineno += *p == '\n';
    json_t *dec = json_loadb(start, (size_t)(end - start), 0, NULL);
    assert_non_null(dec);
    json_t *gpus = json_object_get(json_object_get(dec, "pick"), "gpus");
    json_int_t g = json_integer_value(json_array_get(gpus, 0));
    json_array_set_new(gpus, 0, json_integer(g == 0 ? 1 : 0));
    char *line = json_dumps(dec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(dec);
    FILE *f = fopen(edited, "w");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(start - text), f);
    fputs(line, f);
    fwrite(end, 1, len - (size_t)(end - text), f);
    fclose(f);

    struct gp_replay_result r;
    struct gp_diag d = {""};
    assert_int_equal(gp_replay_file(edited, NULL, NULL, &r, &d), GP_OK);
    assert_true(r.has_diff);
    assert_int_equal(r.differing, 1);
    assert_int_equal(r.matched + 1, r.decisions);
    assert_int_equal(r.first.line, lineno);
    assert_string_equal(r.first.recorded, line);
    char want[32];
    snprintf(want, sizeof want, "\"gpus\":[%d", (int)g);
    assert_non_null(strstr(r.first.replayed, want));
    assert_non_null(strstr(r.first.what, ", decision "));
    free(line);
    free(text);
}

/* --- bad input ------------------------------------------------------------ */

#define HDR   "{\"ev\":\"log\",\"format\":\"gpuplane-events\",\"version\":1}\n"
#define RESET "{\"ev\":\"reset\",\"policy\":\"best-fit\",\"seed\":1}\n"
#define QUEUE "{\"ev\":\"queue_set\",\"id\":0,\"queue\":{\"name\":\"default\"}}\n"
#define NODE                                                                                       \
    "{\"ev\":\"node_add\",\"id\":0,\"node\":{\"name\":\"n1\",\"gpu_model\":\"A100\","              \
    "\"cpu_milli\":64000,\"mem_mib\":524288,\"gpu_count\":4}}\n"
#define POD                                                                                        \
    "{\"ev\":\"pod_add\",\"id\":0,\"t\":100.0,\"pod\":{\"name\":\"default/p\",\"cpu_milli\":1000," \
    "\"mem_mib\":1024,\"gpu_count\":1,\"gpu_milli\":1000}}\n"
#define CYCLE "{\"ev\":\"cycle\",\"cycle\":1,\"t\":100.0,\"cap\":2}\n"
#define DEC                                                                                        \
    "{\"ev\":\"decision\",\"cycle\":1,\"i\":0,\"kind\":\"bind\",\"pod\":0,\"node\":0,"             \
    "\"pick\":{\"gpus\":[0]}}\n"
#define END  "{\"ev\":\"cycle_end\",\"cycle\":1,\"decisions\":1}\n"
#define GOOD HDR RESET QUEUE NODE POD CYCLE DEC END

/* text replayed from a file: the error, the result, the message */
static enum gp_err replay_text(const char *text, struct gp_replay_result *r, char *msg,
                               char *warning)
{
    char path[128];
    snprintf(path, sizeof path, "%s/log.jsonl", tmpdir);
    spill(path, text, strlen(text));
    struct gp_diag d = {""};
    warning[0] = '\0';
    enum gp_err err = gp_replay_file(path, warned, warning, r, &d);
    /* the messages name the file as tmpdir/log.jsonl: shown as F */
    size_t n = strlen(path);
    if (strncmp(d.msg, path, n) == 0)
        snprintf(msg, 512, "F%s", d.msg + n);
    else
        snprintf(msg, 512, "%s", d.msg);
    if (strncmp(warning, path, n) == 0)
        memmove(warning + 1, warning + n, strlen(warning + n) + 1), warning[0] = 'F';
    return err;
}

static void test_bad_input(void **state)
{
    (void)state;
    struct gp_replay_result r;
    char msg[512], warning[600];
    assert_int_equal(replay_text(GOOD, &r, msg, warning), GP_OK);
    assert_false(r.has_diff);
    assert_int_equal(r.matched, 1);
    assert_int_equal(r.calls, 3);
    /* a torn last line: skipped, warned */
    assert_int_equal(replay_text(GOOD "{\"ev\":\"cycle\",\"cyc", &r, msg, warning), GP_OK);
    assert_false(r.has_diff);
    assert_int_equal(r.warnings, 1);
    assert_string_equal(warning, "F:9: a torn line (the end of a run that stopped while "
                                 "writing it) ignored");
    /* a run that stopped mid-line, then a new one appended: the same */
    assert_int_equal(replay_text(HDR RESET QUEUE NODE "{\"ev\":\"pod_a\n" GOOD, &r, msg, warning),
                     GP_OK);
    assert_false(r.has_diff);
    assert_int_equal(r.resets, 2);
    assert_string_equal(warning, "F:5: a torn line (the end of a run that stopped while "
                                 "writing it) ignored");
    /* a cycle cut short by the end: its decisions so far compared, warned */
    assert_int_equal(replay_text(HDR RESET QUEUE NODE POD CYCLE, &r, msg, warning), GP_OK);
    assert_int_equal(r.warnings, 1);
    assert_string_equal(warning, "F:6: cycle 1 has no end (the run stopped in it): its first 0 "
                                 "decisions compared");
    /* a wrong field type */
    assert_int_equal(replay_text(HDR RESET QUEUE NODE
                                 "{\"ev\":\"pod_add\",\"id\":0,\"t\":100.0,\"pod\":{\"cpu_milli\":"
                                 "\"1000\"}}\n",
                                 &r, msg, warning),
                     GP_EINVALID);
    assert_string_equal(msg, "F:5: pod.cpu_milli: expected an integer");
    assert_int_equal(
        replay_text(HDR RESET QUEUE NODE POD CYCLE
                    "{\"ev\":\"decision\",\"cycle\":1,\"i\":0,\"kind\":\"bind\",\"pod\":0,"
                    "\"node\":0,\"pick\":{\"gpus\":\"0\"}}\n",
                    &r, msg, warning),
        GP_EINVALID);
    assert_string_equal(msg, "F:7: pick.gpus: expected an array");
    /* what the engine takes as valid, checked as the Cluster spec's reader
     * checks it (the fuzz target found both) */
    assert_int_equal(replay_text(HDR RESET QUEUE
                                 "{\"ev\":\"node_add\",\"id\":0,\"node\":{\"name\":\"m\","
                                 "\"sharing\":{\"mode\":\"mig\",\"mig_model\":\"A100-80GB\"}}}\n",
                                 &r, msg, warning),
                     GP_EINVALID);
    assert_string_equal(msg, "F:4: node.sharing: sharing needs GPUs (gpu_count is 0)");
    assert_int_equal(replay_text(HDR RESET QUEUE
                                 "{\"ev\":\"node_add\",\"id\":0,\"node\":{\"name\":\"m\","
                                 "\"gpu_count\":1,\"sharing\":{\"mode\":\"mig\"}}}\n",
                                 &r, msg, warning),
                     GP_EINVALID);
    assert_string_equal(msg, "F:4: node.sharing.mig_model: missing (mode mig)");
    /* a string of the log quoted in a message stays on one line */
    assert_int_equal(replay_text(HDR "{\"ev\":\"a\\nb\"}\n", &r, msg, warning), GP_EINVALID);
    assert_string_equal(msg, "F:2: ev: unknown event kind \"a?b\"");
    /* an unknown event kind */
    assert_int_equal(replay_text(HDR "{\"ev\":\"frobnicate\"}\n", &r, msg, warning), GP_EINVALID);
    assert_string_equal(msg, "F:2: ev: unknown event kind \"frobnicate\"");
    assert_int_equal(replay_text(HDR RESET "{\"ev\":\"decision\",\"cycle\":1,\"i\":0,\"kind\":"
                                           "\"bound\",\"pod\":0}\n",
                                 &r, msg, warning),
                     GP_EINVALID);
    assert_string_equal(msg, "F:3: kind: expected one of bind, unschedulable or evict");
    /* not JSON, and not torn (a line follows that is no header) */
    assert_int_equal(replay_text(HDR "not json\n" RESET, &r, msg, warning), GP_EPARSE);
    assert_string_equal(msg, "F:2: not a JSON object: '[' or '{' expected near 'not'");
    /* no header; an engine event before a reset; an unknown version */
    assert_int_equal(replay_text(RESET, &r, msg, warning), GP_EINVALID);
    assert_string_equal(msg, "F:1: ev: a log begins with its header (\"ev\":\"log\")");
    assert_int_equal(replay_text(HDR NODE, &r, msg, warning), GP_EINVALID);
    assert_string_equal(msg, "F:2: ev: an engine event before the run's reset");
    assert_int_equal(replay_text("{\"ev\":\"log\",\"format\":\"gpuplane-events\",\"version\":2}\n",
                                 &r, msg, warning),
                     GP_EINVALID);
    assert_string_equal(msg, "F:1: version: a version this gpuplane does not read (it reads 1)");
    /* a decision line missing from its cycle */
    assert_int_equal(replay_text(HDR RESET QUEUE NODE POD CYCLE END, &r, msg, warning),
                     GP_EINVALID);
    assert_string_equal(msg, "F:7: decisions: 1, but the cycle recorded 0 decision lines");
    /* a missing file */
    struct gp_diag d = {""};
    assert_int_equal(gp_replay_file("/nonexistent/events.jsonl", NULL, NULL, &r, &d), GP_ENOTFOUND);
    assert_string_equal(d.msg, "--replay: /nonexistent/events.jsonl: No such file or directory");
}

/* The size cap: past it the log is rotated at the next cycle, the
 * scheduler rebuilds its engine so the new file starts from a reset, and
 * both files replay on their own to the same decisions. */
static void test_rotation(void **state)
{
    (void)state;
    char path[128], old[140];
    snprintf(path, sizeof path, "%s/rot.jsonl", tmpdir);
    snprintf(old, sizeof old, "%s.1", path);
    struct world w;
    memset(&w, 0, sizeof w);
    w.admin = kd_client();
    w.c = kd_client();
    w.ic = kd_client();
    struct gp_kube_sched_opts o;
    gp_kube_sched_opts_default(&o);
    struct gp_diag d = {""};
    o.record_path = "/dev/full"; /* a log that cannot be written: said at the start */
    assert_int_equal(gp_kube_sched_new(w.c, &o, &w.s, &d), GP_EIO);
    assert_string_equal(d.msg, "--record: /dev/full: write failed: No space left on device");
    o.record_path = path;
    o.record_max_bytes = 4096;
    assert_int_equal(gp_kube_sched_new(w.c, &o, &w.s, &d), GP_OK);
    assert_int_equal(gp_kube_informer_new(w.ic, "/api/v1/nodes", 0, gp_kube_sched_node_change, w.s,
                                          &w.nodes, &d),
                     GP_OK);
    assert_int_equal(
        gp_kube_informer_new(w.ic, "/api/v1/pods", 0, gp_kube_sched_pod_change, w.s, &w.pods, &d),
        GP_OK);
    assert_int_equal(gp_kube_informer_new(w.ic, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", 0,
                                          gp_kube_sched_group_change, w.s, &w.groups, &d),
                     GP_OK);
    gp_kube_sched_set_leader(w.s, true);
    w.now = 100;
    w_node(&w, "n1", 8);
    char name[16];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof name, "r%d", i);
        w_pod(&w, name, 1);
        w.now += 1;
        w_cycle(&w);
    }
    w_close(&w);
    struct gp_replay_result r1, r2;
    assert_int_equal(gp_replay_file(old, NULL, NULL, &r1, &d), GP_OK);
    assert_int_equal(gp_replay_file(path, NULL, NULL, &r2, &d), GP_OK);
    assert_false(r1.has_diff);
    assert_false(r2.has_diff);
    assert_true(r1.matched > 0);
    assert_true(r2.decisions > 0 || r2.cycles > 0);
    size_t len;
    char *text = slurp(path, &len);
    assert_non_null(strstr(text, "\"part\":"));
    char *first_engine = strstr(text, "\"ev\":\"reset\"");
    assert_non_null(first_engine); /* no engine event before the new file's reset */
    char *pod_add = strstr(text, "\"ev\":\"pod_add\"");
    assert_true(!pod_add || pod_add > first_engine);
    free(text);
    text = slurp(old, &len);
    assert_true(len >= 4096 && len < 4 * 4096);
    free(text);
}

static void *create_later(void *arg)
{
    struct world *w = arg;
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    for (int i = 5; i <= 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(w, name, i % 4 == 0 ? 2 : 1);
    }
    return NULL;
}

static void test_live_run(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/live.jsonl", tmpdir);
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 8);
    w_node(&w, "n2", 8);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":500,\"count\":3,\"match\":\"/pods/p\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":409,\"count\":2,\"match\":\"/binding\"}", 200);
    for (int i = 1; i <= 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, i % 4 == 0 ? 2 : 1);
    }
    pthread_t th;
    pthread_create(&th, NULL, create_later, &w);
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_kube_run_opts o;
    memset(&o, 0, sizeof o);
    o.cfg = &cfg;
    gp_kube_client_opts_default(&o.client);
    o.client.qps = 0;
    o.client.backoff_base_s = 0.01;
    gp_kube_sched_opts_default(&o.sched);
    o.sched.binders = 4;
    o.sched.backoff_initial_s = 0.1;
    o.sched.record_path = path;
    gp_kube_lease_opts_default(&o.lease);
    o.max_s = 20;
    o.stop_after_binds = 12;
    struct gp_kube_run_result res;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_run(&o, &res, &d), GP_OK);
    pthread_join(th, NULL);
    assert_int_equal(res.stats.binds, 12);
    assert_true(res.stats.rollbacks >= 1);
    w_close(&w);
    struct gp_replay_result r;
    assert_int_equal(gp_replay_file(path, NULL, NULL, &r, &d), GP_OK);
    if (r.has_diff)
        fail_msg("%s at line %zu:\n  recorded %s\n  replayed %s", r.first.what, r.first.line,
                 r.first.recorded, r.first.replayed);
    assert_true(r.decisions >= 12);
    assert_int_equal(r.matched, r.decisions);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_record_replay, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_edited_decision, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_rotation, dir_setup, dir_teardown),
        cmocka_unit_test_setup_teardown(test_live_run, dir_setup, dir_teardown),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
