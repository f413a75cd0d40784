/* test_node_health.c - GPU health (src/node/health.c): the XID classes,
 * every state of the state machine under every input, the quiet period,
 * and the change posted as an Event on the Node to the API server double
 * (with the published schemas in the shared run). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "kube_double.h"
#include "node/health.h"
#include "shared_data.h"

static void test_classes(void **state)
{
    (void)state;
    /* the catalog's RESTART_APP and IGNORE rows: application errors (13, 31,
     * 43, 45 and 68 are also on NVIDIA k8s-device-plugin's ignore list) */
    static const unsigned app[] = {8, 11, 13, 31, 43, 45, 63, 68, 69, 94, 121};
    for (size_t i = 0; i < sizeof app / sizeof app[0]; i++)
        assert_int_equal(gp_node_xid_class(app[i]), GP_XID_APPLICATION);
    /* RESET_GPU, and 48 (WORKFLOW_XID_48 ends in a reset): until a reset;
     * 109 too, although the device plugin's default list ignores it (the
     * catalog wins) */
    static const unsigned rst[] = {46, 48, 62, 64, 95, 109, 110, 119, 120, 136, 140, 143};
    for (size_t i = 0; i < sizeof rst / sizeof rst[0]; i++)
        assert_int_equal(gp_node_xid_class(rst[i]), GP_XID_RESET);
    /* the other WORKFLOW_ buckets and the rest: recoverable */
    static const unsigned rec[] = {54, 61, 74, 154};
    for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++)
        assert_int_equal(gp_node_xid_class(rec[i]), GP_XID_RECOVERABLE);
    /* RESTART_BM and RESTART_VM: fatal */
    assert_int_equal(gp_node_xid_class(79), GP_XID_FATAL);
    assert_int_equal(gp_node_xid_class(151), GP_XID_FATAL);
    assert_int_equal(gp_node_xid_class(160), GP_XID_FATAL);
    /* not in the table, and NVML's "unknown": recoverable, never ignored */
    assert_int_equal(gp_node_xid_class(999), GP_XID_RECOVERABLE);
    assert_int_equal(gp_node_xid_class(4242), GP_XID_RECOVERABLE);
    assert_int_equal(gp_node_xid_class(0), GP_XID_RECOVERABLE);
    assert_string_equal(gp_node_xid_text(79), "GPU has fallen off the bus");
    assert_null(gp_node_xid_text(4242));
    assert_string_equal(gp_node_xid_class_name(GP_XID_APPLICATION), "application");
    assert_string_equal(gp_node_xid_class_name(GP_XID_RECOVERABLE), "recoverable");
    assert_string_equal(gp_node_xid_class_name(GP_XID_FATAL), "fatal");
    assert_string_equal(gp_node_xid_class_name(GP_XID_RESET), "reset");
}

enum input {
    APP_XID,
    REC_XID,
    FATAL_XID,
    LOST,
    RESET,
    TICK_EARLY,
    TICK_QUIET,
    RELOAD,
    RESET_XID,
    N_INPUTS
};

#define H GP_NODE_HEALTHY
#define R GP_NODE_UNHEALTHY_RECOVERABLE
#define F GP_NODE_UNHEALTHY_FATAL
#define X GP_NODE_UNHEALTHY_RESET

/* next[state][input]: the whole transition table. */
static const enum gp_node_health_state next[4][N_INPUTS] = {
    /*        app rec fatal lost reset early quiet reload reset-xid */
    [H] = {H, R, F, F, H, H, H, H, X},
    [R] = {R, R, F, F, H, R, H, H, X},
    [F] = {F, F, F, F, F, F, F, H, F},
    [X] = {X, X, F, F, H, X, X, H, X}, /* the quiet period does not bring it back */
};

static const double quiet = 100;

/* A health of 2 GPUs with GPU 1 put in state s at time 0. */
static void make(struct gp_node_health *h, enum gp_node_health_state s)
{
    struct gp_node_health_opts o = {.quiet_s = quiet};
    gp_node_health_init(h, 2, &o);
    if (s == R)
        assert_true(gp_node_health_xid(h, 1, 74, 0, NULL));
    if (s == X)
        assert_true(gp_node_health_xid(h, 1, 95, 0, NULL));
    if (s == F)
        assert_true(gp_node_health_xid(h, 1, 79, 0, NULL));
    assert_int_equal(h->gpus[1].state, s);
}

static bool apply(struct gp_node_health *h, enum input in, struct gp_node_health_change *ch)
{
    struct gp_node_health_change many[4];
    size_t n = 0;
    switch (in) {
    case APP_XID:
        return gp_node_health_xid(h, 1, 13, 10, ch);
    case REC_XID:
        return gp_node_health_xid(h, 1, 74, 10, ch);
    case FATAL_XID:
        return gp_node_health_xid(h, 1, 79, 10, ch);
    case LOST:
        return gp_node_health_lost(h, 1, 10, ch);
    case RESET:
        return gp_node_health_reset(h, 1, 10, ch);
    case TICK_EARLY:
        n = gp_node_health_tick(h, quiet - 1, many, 4);
        break;
    case TICK_QUIET:
        n = gp_node_health_tick(h, quiet, many, 4);
        break;
    case RELOAD:
        n = gp_node_health_driver_reload(h, 10, many, 4);
        break;
    case RESET_XID:
        return gp_node_health_xid(h, 1, 95, 10, ch);
    default:
        fail();
    }
    assert_true(n <= 1);
    if (n)
        *ch = many[0];
    return n == 1;
}

static void test_transitions(void **state)
{
    (void)state;
    static const enum gp_node_health_cause cause[N_INPUTS] = {
        GP_NODE_CAUSE_XID,   GP_NODE_CAUSE_XID,           GP_NODE_CAUSE_XID,
        GP_NODE_CAUSE_LOST,  GP_NODE_CAUSE_RESET,         GP_NODE_CAUSE_QUIET,
        GP_NODE_CAUSE_QUIET, GP_NODE_CAUSE_DRIVER_RELOAD, GP_NODE_CAUSE_XID};
    for (int s = H; s <= X; s++)
        for (int in = 0; in < N_INPUTS; in++) {
            struct gp_node_health h;
            make(&h, (enum gp_node_health_state)s);
            struct gp_node_health_change ch = {.gpu = 99};
            bool changed = apply(&h, (enum input)in, &ch);
            enum gp_node_health_state want = next[s][in];
            if (h.gpus[1].state != want || changed != (want != (enum gp_node_health_state)s))
                fail_msg("state %d input %d: got %d (changed %d), want %d", s, in, h.gpus[1].state,
                         changed, want);
            assert_int_equal(h.gpus[0].state, H); /* the other GPU untouched */
            if (!changed) {
                assert_int_equal(ch.gpu, 99); /* *ch not written */
                continue;
            }
            assert_int_equal(ch.gpu, 1);
            assert_int_equal(ch.from, s);
            assert_int_equal(ch.to, want);
            assert_int_equal(ch.cause, cause[in]);
            if (ch.cause == GP_NODE_CAUSE_XID)
                assert_int_equal(ch.xid, in == REC_XID ? 74 : in == RESET_XID ? 95 : 79);
            assert_int_equal(gp_node_health_ok(&h, 1), want == H);
        }
}

/* The XIDs whose catalog action is a GPU reset (95 uncontained ECC, 48
 * double-bit ECC, RESET_GPU's rows) stay unhealthy however long it is
 * quiet: only a reset seen brings the GPU back (the review: they came back
 * after 600 s without one). */
static void test_reset_class(void **state)
{
    (void)state;
    struct gp_node_health h;
    gp_node_health_init(&h, 3, NULL); /* the default quiet period, 600 s */
    struct gp_node_health_change ch[4];
    assert_true(gp_node_health_xid(&h, 0, 95, 0, &ch[0]));
    assert_int_equal(ch[0].to, GP_NODE_UNHEALTHY_RESET);
    assert_int_equal(ch[0].cls, GP_XID_RESET);
    assert_true(gp_node_health_xid(&h, 1, 48, 0, &ch[0]));
    assert_true(gp_node_health_xid(&h, 2, 74, 0, &ch[0])); /* recoverable: the quiet period */
    assert_true(gp_node_health_next_s(&h) == 600);         /* GPU 2's; none for 0 and 1 */
    assert_int_equal(gp_node_health_tick(&h, 600, ch, 4), 1);
    assert_int_equal(ch[0].gpu, 2);
    assert_true(gp_node_health_next_s(&h) < 0);
    assert_int_equal(gp_node_health_tick(&h, 1e9, ch, 4), 0);
    assert_false(gp_node_health_ok(&h, 0));
    assert_false(gp_node_health_ok(&h, 1));
    /* a recoverable XID does not turn a reset-bound GPU into a quiet-bound one */
    assert_false(gp_node_health_xid(&h, 0, 74, 10, ch));
    assert_int_equal(gp_node_health_tick(&h, 1e9, ch, 4), 0);
    assert_int_equal(h.gpus[0].state, GP_NODE_UNHEALTHY_RESET);
    /* a reset seen: back, with its cause */
    assert_true(gp_node_health_reset(&h, 0, 2000, &ch[0]));
    assert_int_equal(ch[0].from, GP_NODE_UNHEALTHY_RESET);
    assert_int_equal(ch[0].cause, GP_NODE_CAUSE_RESET);
    assert_true(gp_node_health_ok(&h, 0));
    assert_false(gp_node_health_reset(&h, 0, 2001, &ch[0])); /* healthy: nothing */
    char note[256];
    struct gp_node_health_change x = {.gpu = 1,
                                      .from = GP_NODE_HEALTHY,
                                      .to = GP_NODE_UNHEALTHY_RESET,
                                      .cause = GP_NODE_CAUSE_XID,
                                      .xid = 48,
                                      .cls = GP_XID_RESET};
    gp_node_health_note(&x, NULL, note, sizeof note);
    assert_string_equal(note, "GPU 1: XID 48 (reset: double bit ECC error): unhealthy until a GPU "
                              "reset is seen");
    assert_string_equal(gp_node_health_state_name(GP_NODE_UNHEALTHY_RESET),
                        "unhealthy (until a reset)");
}

static void test_quiet_period(void **state)
{
    (void)state;
    struct gp_node_health h;
    struct gp_node_health_opts o = {.quiet_s = 100};
    gp_node_health_init(&h, 3, &o);
    assert_true(gp_node_health_next_s(&h) < 0);
    struct gp_node_health_change ch[4];
    assert_true(gp_node_health_xid(&h, 0, 74, 0, &ch[0]));
    assert_false(gp_node_health_xid(&h, 0, 74, 60, &ch[0])); /* restarts the quiet period */
    assert_true(gp_node_health_xid(&h, 2, 54, 30, &ch[0]));
    assert_true(gp_node_health_next_s(&h) == 130);
    assert_int_equal(gp_node_health_tick(&h, 129, ch, 4), 0);
    assert_int_equal(gp_node_health_tick(&h, 130, ch, 4), 1);
    assert_int_equal(ch[0].gpu, 2);
    assert_int_equal(ch[0].cause, GP_NODE_CAUSE_QUIET);
    assert_true(gp_node_health_next_s(&h) == 160);
    assert_int_equal(gp_node_health_tick(&h, 159, ch, 4), 0);
    assert_int_equal(gp_node_health_tick(&h, 160, ch, 4), 1);
    assert_int_equal(ch[0].gpu, 0);
    assert_true(gp_node_health_ok(&h, 0));
    /* an application XID never makes it unhealthy, nor restarts a period */
    assert_false(gp_node_health_xid(&h, 1, 13, 200, ch));
    assert_true(gp_node_health_ok(&h, 1));
    /* the counts, by class, and the last XID of any class */
    assert_int_equal(h.gpus[0].xids[GP_XID_RECOVERABLE], 2);
    assert_int_equal(h.gpus[1].xids[GP_XID_APPLICATION], 1);
    assert_int_equal(h.gpus[1].last_xid, 13);
    /* a fatal XID on a recoverable GPU: no quiet period brings it back */
    assert_true(gp_node_health_xid(&h, 1, 74, 300, ch));
    assert_true(gp_node_health_xid(&h, 1, 79, 310, ch));
    assert_int_equal(ch[0].from, R);
    assert_int_equal(gp_node_health_tick(&h, 1e9, ch, 4), 0);
    assert_true(gp_node_health_next_s(&h) < 0);
    /* the cap: all change, cap written */
    assert_true(gp_node_health_xid(&h, 0, 79, 400, ch));
    assert_true(gp_node_health_xid(&h, 2, 79, 400, ch));
    assert_int_equal(gp_node_health_driver_reload(&h, 500, ch, 1), 3);
    assert_int_equal(ch[0].gpu, 0);
    for (unsigned g = 0; g < 3; g++)
        assert_true(gp_node_health_ok(&h, g));
}

static void test_bounds_and_apply(void **state)
{
    (void)state;
    struct gp_node_health h;
    gp_node_health_init(&h, 1000, NULL);
    assert_int_equal(h.n_gpus, GP_NODE_MAX_GPUS);
    assert_true(h.o.quiet_s == 600);
    gp_node_health_init(&h, 2, NULL);
    struct gp_node_health_change ch;
    assert_false(gp_node_health_xid(&h, 2, 79, 0, &ch));
    assert_false(gp_node_health_lost(&h, 2, 0, &ch));
    assert_false(gp_node_health_reset(&h, 7, 0, &ch));
    assert_false(gp_node_health_ok(&h, 2));
    assert_true(gp_node_health_xid(&h, 1, 79, 0, &ch));
    static struct gp_node_inventory inv;
    inv.n_gpus = 3;
    for (unsigned i = 0; i < 3; i++) {
        inv.gpus[i].index = i;
        inv.gpus[i].healthy = true;
    }
    gp_node_health_apply(&h, &inv);
    assert_true(inv.gpus[0].healthy);
    assert_false(inv.gpus[1].healthy);
    assert_int_equal(inv.gpus[1].last_xid, 79);
    assert_true(inv.gpus[2].healthy); /* past h's GPUs: left */
}

static void test_note(void **state)
{
    (void)state;
    struct gp_node_gpu gpu = {.index = 0};
    snprintf(gpu.uuid, sizeof gpu.uuid, "GPU-1234");
    char note[512];
    const char *type;
    struct gp_node_health_change ch = {
        .gpu = 0, .from = H, .to = F, .cause = GP_NODE_CAUSE_XID, .xid = 79, .cls = GP_XID_FATAL};
    assert_string_equal(gp_node_health_reason(&ch, &type), "GPUUnhealthy");
    assert_string_equal(type, "Warning");
    gp_node_health_note(&ch, &gpu, note, sizeof note);
    assert_string_equal(note, "GPU 0 (GPU-1234): XID 79 (fatal: GPU has fallen off the bus): "
                              "unhealthy until the driver is reloaded");
    ch = (struct gp_node_health_change){.gpu = 3,
                                        .from = H,
                                        .to = R,
                                        .cause = GP_NODE_CAUSE_XID,
                                        .xid = 4242,
                                        .cls = GP_XID_RECOVERABLE};
    gp_node_health_note(&ch, NULL, note, sizeof note);
    assert_string_equal(note, "GPU 3: XID 4242 (recoverable: not in the catalog table): "
                              "unhealthy until a GPU reset or a quiet period");
    ch = (struct gp_node_health_change){.gpu = 0, .from = R, .to = H, .cause = GP_NODE_CAUSE_RESET};
    assert_string_equal(gp_node_health_reason(&ch, &type), "GPUHealthy");
    assert_string_equal(type, "Normal");
    gp_node_health_note(&ch, &gpu, note, sizeof note);
    assert_string_equal(note, "GPU 0 (GPU-1234): healthy again: a GPU reset was seen");
}

/* The Events in the double about a Node: "reason|type|note" joined by ";". */
static const char *node_events(struct gp_kube_client *c, const char *node)
{
    static char out[4096];
    out[0] = '\0';
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/apis/events.k8s.io/v1/events", NULL, NULL, &r, &d),
                     GP_OK);
    assert_int_equal(r.status, 200);
    json_t *list = json_loads(r.body, 0, NULL);
    gp_kube_response_free(&r);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(list, "items"), i, e)
    {
        json_t *reg = json_object_get(e, "regarding");
        if (strcmp(json_string_value(json_object_get(reg, "kind")), "Node") != 0 ||
            strcmp(json_string_value(json_object_get(reg, "name")), node) != 0)
            continue;
        size_t len = strlen(out);
        snprintf(out + len, sizeof out - len, "%s%s|%s|%s|%s", len ? ";" : "",
                 json_string_value(json_object_get(e, "reason")),
                 json_string_value(json_object_get(e, "type")),
                 json_string_value(json_object_get(e, "reportingController")),
                 json_string_value(json_object_get(e, "note")));
    }
    json_decref(list);
    return out;
}

static void test_event(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    struct gp_node_health h;
    gp_node_health_init(&h, 1, NULL);
    struct gp_node_gpu gpu = {.index = 0};
    snprintf(gpu.uuid, sizeof gpu.uuid, "GPU-1234");
    struct gp_node_health_change ch;
    struct gp_diag d = {""};
    assert_true(gp_node_health_xid(&h, 0, 48, 0, &ch));
    assert_int_equal(gp_node_health_event(c, "gpu-node-1", NULL, "agent-1", &ch, &gpu, &d), GP_OK);
    assert_true(gp_node_health_reset(&h, 0, 5, &ch));
    assert_int_equal(gp_node_health_event(c, "gpu-node-1", "uid-1", NULL, &ch, &gpu, &d), GP_OK);
    assert_string_equal(node_events(c, "gpu-node-1"),
                        "GPUUnhealthy|Warning|gpuplane.io/node-agent|GPU 0 (GPU-1234): XID 48 "
                        "(reset: double bit ECC error): unhealthy until a GPU reset is seen;"
                        "GPUHealthy|Normal|gpuplane.io/node-agent|GPU 0 (GPU-1234): healthy "
                        "again: a GPU reset was seen");
    gp_kube_client_free(c);
    /* no server: the client's error, one line */
    struct gp_kube_config cfg = {.server = "http://127.0.0.1:1", .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.max_retries = 0;
    o.connect_timeout_s = 1;
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    assert_int_equal(gp_node_health_event(c, "gpu-node-1", NULL, "a", &ch, &gpu, &d), GP_EIO);
    assert_non_null(d.msg[0] ? d.msg : NULL);
    gp_kube_client_free(c);
}

#define SCHEMAS GP_SHARED_DIR "/k8s/schemas"

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_quiet_period),
        cmocka_unit_test(test_reset_class),
        cmocka_unit_test(test_bounds_and_apply),
        cmocka_unit_test(test_note),
        cmocka_unit_test_setup_teardown(test_event, kd_start, kd_stop),
    };
    if (gp_shared_mode(argc, argv)) { /* the Events checked against the published schemas */
        if (!gp_shared_have(SCHEMAS "/apis__events.k8s.io__v1_openapi.json"))
            return GP_SHARED_SKIP_EXIT;
        kd_schemas = SCHEMAS;
        const struct CMUnitTest schema_tests[] = {
            cmocka_unit_test_setup_teardown(test_event, kd_start, kd_stop),
        };
        return gp_shared_exit(cmocka_run_group_tests_name("schemas", schema_tests, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
