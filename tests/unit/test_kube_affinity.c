/* test_kube_affinity.c - the live scheduler (kube/sched.h) against the API
 * server double filters with a pod's spec.affinity and
 * spec.topologySpreadConstraints as kube-scheduler's NodeAffinity,
 * InterPodAffinity and PodTopologySpread do (issue 14, the review's R8;
 * kube/objects_affinity.c reads them into the engine's constraints):
 *  - required node affinity places a pod in the zone it names, and one
 *    no node matches is NodeAffinity's "didn't match Pod's node
 *    affinity/selector", preemption not helpful; preferred terms steer a
 *    best-fit placement;
 *  - required pod anti-affinity keeps pods of one app on distinct nodes;
 *    a pod of another scheduler, bound by it, holds its own required
 *    anti-affinity against ours ("didn't satisfy existing pods
 *    anti-affinity rules") while pods it does not select still go there;
 *  - required pod affinity waits for the pod it wants, then joins its zone;
 *  - DoNotSchedule spreading holds a zone's count to maxSkew, a node
 *    without the key "(missing required label)", not helped by preemption;
 *  - matchLabelKeys merged with the pod's labels; a value that does not
 *    read leaves the pod unreadable with one line naming the field;
 *  - a namespaceSelector selects by the Namespaces' labels (the Namespace
 *    informer, kube/namespaces.c; the double serves namespaces as the API
 *    server does: the kubernetes.io/metadata.name label, Active), and a
 *    label changed is seen by the next cycle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/rbac.h"
#include "kube_double.h"
#include "kube_world.h"

static void label(struct world *w, const char *node, const char *key, const char *value)
{
    char path[128], body[256];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    snprintf(body, sizeof body, "{\"metadata\":{\"labels\":{\"%s\":\"%s\"}}}", key, value);
    kd_call(w->admin, "PATCH", path, body, 200);
}

/* A node of gpus GPUs in zone (NULL: no zone label). */
static void znode(struct world *w, const char *name, unsigned gpus, const char *zone)
{
    w_node(w, name, gpus);
    if (zone)
        label(w, name, "topology.kubernetes.io/zone", zone);
}

/* A pod of scheduler sched asking one GPU, with labels (JSON members,
 * NULL: none) and more spec members (",\"affinity\":{...}", NULL: none). */
static void apod(struct world *w, const char *name, const char *sched, const char *labels,
                 const char *spec)
{
    char b[4096];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},\"spec\":{\"schedulerName\":"
             "\"%s\"%s,\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
             "\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/"
             "gpu\":\"1\"}}}]}}",
             name, labels ? labels : "", sched, spec ? spec : "");
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

static const char *message_of(struct world *w, const char *name)
{
    static char out[2048];
    json_t *p = w_pod_get(w, name);
    json_t *c = json_array_get(json_object_get(json_object_get(p, "status"), "conditions"), 0);
    const char *m = json_string_value(json_object_get(c, "message"));
    snprintf(out, sizeof out, "%s", m ? m : "");
    json_decref(p);
    return out;
}

#define ZONE_IN(op, values)                                                                        \
    ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"        \
    "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\","      \
    "\"operator\":\"" op "\",\"values\":[" values "]}]}]}}}"

static void test_node_affinity(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    znode(&w, "na", 4, "a");
    znode(&w, "nb", 4, "b");
    apod(&w, "in-b", "gpuplane", NULL, ZONE_IN("In", "\"b\""));
    apod(&w, "not-a", "gpuplane", NULL, ZONE_IN("NotIn", "\"a\""));
    apod(&w, "nowhere", "gpuplane", NULL, ZONE_IN("NotIn", "\"a\",\"b\""));
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "in-b", NULL), "nb");
    assert_string_equal(w_node_of(&w, "not-a", NULL), "nb");
    assert_string_equal(w_node_of(&w, "nowhere", NULL), "");
    assert_string_equal(message_of(&w, "nowhere"),
                        "0/2 nodes are available: 2 node(s) didn't match Pod's node "
                        "affinity/selector. preemption: 0/2 nodes are available: 2 Preemption "
                        "is not helpful for scheduling..");
    /* preferred: best-fit would pack both onto one node; each goes where
     * its heavier preference points */
    static const char pref[] =
        ",\"affinity\":{\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":["
        "{\"weight\":100,\"preference\":{\"matchExpressions\":[{\"key\":"
        "\"topology.kubernetes.io/zone\",\"operator\":\"In\",\"values\":[\"%s\"]}]}}]}}";
    char spec[512];
    snprintf(spec, sizeof spec, pref, "a");
    apod(&w, "pref-a", "gpuplane", NULL, spec);
    w_cycle(&w);
    snprintf(spec, sizeof spec, pref, "b");
    apod(&w, "pref-b", "gpuplane", NULL, spec);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "pref-a", NULL), "na");
    assert_string_equal(w_node_of(&w, "pref-b", NULL), "nb");
    w_close(&w);
}

#define ANTI_WEB                                                                                   \
    ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"    \
    "\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},\"topologyKey\":"                       \
    "\"kubernetes.io/hostname\"}]}}"

static void test_pod_anti_affinity(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    znode(&w, "n1", 4, "a");
    znode(&w, "n2", 4, "a");
    apod(&w, "web0", "gpuplane", "\"app\":\"web\"", ANTI_WEB);
    w_cycle(&w);
    apod(&w, "web1", "gpuplane", "\"app\":\"web\"", ANTI_WEB);
    w_cycle(&w);
    apod(&w, "web2", "gpuplane", "\"app\":\"web\"", ANTI_WEB);
    w_cycle(&w);
    char a[16], b[16];
    snprintf(a, sizeof a, "%s", w_node_of(&w, "web0", NULL));
    snprintf(b, sizeof b, "%s", w_node_of(&w, "web1", NULL));
    assert_true(a[0] && b[0] && strcmp(a, b) != 0); /* best-fit alone would pack them */
    assert_string_equal(w_node_of(&w, "web2", NULL), "");
    assert_string_equal(message_of(&w, "web2"),
                        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity "
                        "rules. preemption: 0/2 nodes are available: 2 No preemption victims "
                        "found for incoming pod..");
    w_close(&w);
}

/* A pod another scheduler bound carries required anti-affinity against
 * app=ml: kube-scheduler's InterPodAffinity honours every existing pod's
 * terms, whoever scheduled it. */
static void test_existing_anti_affinity(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    znode(&w, "n1", 4, "a");
    apod(&w, "theirs", "default-scheduler", "\"app\":\"db\"",
         ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
         "[{\"labelSelector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\","
         "\"values\":[\"ml\"]}]},\"topologyKey\":\"topology.kubernetes.io/zone\"}]}}");
    w_bind(&w, "theirs", "n1");
    w_cycle(&w);
    apod(&w, "ml", "gpuplane", "\"app\":\"ml\"", NULL);
    apod(&w, "other", "gpuplane", "\"app\":\"other\"", NULL);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "ml", NULL), "");
    assert_string_equal(w_node_of(&w, "other", NULL), "n1");
    assert_string_equal(message_of(&w, "ml"),
                        "0/1 nodes are available: 1 node(s) didn't satisfy existing pods "
                        "anti-affinity rules. preemption: 0/1 nodes are available: 1 No "
                        "preemption victims found for incoming pod..");
    w_close(&w);
}

/* Required pod affinity to app=db in its zone: nothing matches and the pod
 * does not match itself, so it waits (not helped by preemption); once a db
 * pod is bound in zone b, it goes to zone b. */
static void test_pod_affinity(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    znode(&w, "na", 4, "a");
    znode(&w, "nb", 2, "b");
    znode(&w, "nb2", 4, "b");
    apod(&w, "app", "gpuplane", "\"app\":\"front\"",
         ",\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
         "\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":"
         "\"topology.kubernetes.io/zone\"}]}}");
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "app", NULL), "");
    assert_string_equal(message_of(&w, "app"),
                        "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. "
                        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
                        "scheduling..");
    apod(&w, "db", "default-scheduler", "\"app\":\"db\"", NULL);
    w_bind(&w, "db", "nb");
    w_cycle(&w);
    w.now += 5;
    w_cycle(&w);
    const char *at = w_node_of(&w, "app", NULL);
    assert_true(strcmp(at, "nb") == 0 || strcmp(at, "nb2") == 0);
    w_close(&w);
}

#define SPREAD_ZONE                                                                                \
    ",\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":"                              \
    "\"topology.kubernetes.io/zone\",\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":"   \
    "{\"matchLabels\":{\"app\":\"s\"}}}]"

/* Zone a has 2 GPUs, zone b 4, and a node of 4 without the zone label:
 * five pods of maxSkew 1 go 2 and 3; the sixth would make b 4 against a's
 * 2. Best-fit alone would put them anywhere there is room. */
static void test_spread(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    znode(&w, "na", 2, "a");
    znode(&w, "nb", 4, "b");
    znode(&w, "nx", 4, NULL);
    char name[16];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "s%d", i);
        apod(&w, name, "gpuplane", "\"app\":\"s\"", SPREAD_ZONE);
        w_cycle(&w);
    }
    int in_a = 0, in_b = 0;
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "s%d", i);
        const char *at = w_node_of(&w, name, NULL);
        in_a += strcmp(at, "na") == 0;
        in_b += strcmp(at, "nb") == 0;
    }
    assert_int_equal(in_a, 2);
    assert_int_equal(in_b, 3);
    assert_string_equal(w_node_of(&w, "s5", NULL), "");
    assert_string_equal(message_of(&w, "s5"),
                        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) "
                        "didn't match pod topology spread constraints, 1 node(s) didn't match pod "
                        "topology spread constraints (missing required label). preemption: 0/3 "
                        "nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
                        "preemption victims found for incoming pod..");
    w_close(&w);
}

/* The reader itself: matchLabelKeys and mismatchLabelKeys merged with the
 * pod's labels (a key it lacks ignored), an empty affinity read as none,
 * and what does not read named. */
static void read_pod(const char *spec, const char **err, struct gp_pod_spec *s, struct gp_arena *a)
{
    char b[4096];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"labels\":{\"app\":\"x\","
             "\"pod-template-hash\":\"h1\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]%s}}",
             spec);
    json_t *j = json_loads(b, 0, NULL);
    assert_non_null(j);
    struct gp_kube_pod_info info;
    static struct gp_diag d;
    d.msg[0] = '\0';
    enum gp_err e = gp_kube_pod_read(j, a, s, &info, &d);
    *err = e == GP_OK ? NULL : d.msg;
    json_decref(j);
}

static void test_reader(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_pod_spec s;
    const char *err;
    read_pod(",\"affinity\":{}", &err, &s, &a);
    assert_null(err);
    assert_null(s.constraints);
    read_pod(",\"topologySpreadConstraints\":[{\"maxSkew\":2,\"topologyKey\":\"zone\","
             "\"whenUnsatisfiable\":\"ScheduleAnyway\",\"labelSelector\":{\"matchLabels\":{"
             "\"app\":\"x\"}},\"matchLabelKeys\":[\"pod-template-hash\",\"absent\"],"
             "\"nodeTaintsPolicy\":\"Honor\"}],\"affinity\":{\"podAntiAffinity\":{"
             "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":7,"
             "\"podAffinityTerm\":{\"labelSelector\":{},\"mismatchLabelKeys\":[\"app\"],"
             "\"namespaces\":[\"a\",\"b\"],\"topologyKey\":\"kubernetes.io/hostname\"}}]}}",
             &err, &s, &a);
    assert_null(err);
    const struct gp_pod_constraints *c = s.constraints;
    assert_non_null(c);
    assert_int_equal(c->nspread, 1);
    assert_int_equal(c->spread[0].max_skew, 2);
    assert_true(c->spread[0].schedule_anyway);
    assert_true(c->spread[0].honor_taints);
    assert_false(c->spread[0].ignore_affinity);
    assert_int_equal(c->spread[0].selector.nexprs, 1); /* "absent" ignored */
    assert_string_equal(c->spread[0].selector.exprs[0].key, "pod-template-hash");
    assert_int_equal(c->spread[0].selector.exprs[0].op, GP_MATCH_IN);
    assert_string_equal(c->spread[0].selector.exprs[0].values[0], "h1");
    assert_int_equal(c->nanti_preferred, 1);
    assert_int_equal(c->anti_preferred[0].weight, 7);
    assert_int_equal(c->anti_preferred[0].nnamespaces, 2);
    assert_true(c->anti_preferred[0].selector.set);
    assert_int_equal(c->anti_preferred[0].selector.nexprs, 1);
    assert_int_equal(c->anti_preferred[0].selector.exprs[0].op, GP_MATCH_NOT_IN);
    assert_string_equal(c->anti_preferred[0].selector.exprs[0].values[0], "x");
    static const struct {
        const char *spec, *err;
    } bad[] = {
        {ZONE_IN("Near", "\"a\""),
         "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
         "nodeSelectorTerms[0].matchExpressions[0].operator: \"Near\" is not In, NotIn, Exists, "
         "DoesNotExist, Gt or Lt"},
        {ZONE_IN("Gt", "\"x\""),
         "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
         "nodeSelectorTerms[0].matchExpressions[0].values: for 'Gt', 'Lt' operators, the value "
         "must be an integer"},
        {",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
         "\"nodeSelectorTerms\":[]}}}",
         "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
         "nodeSelectorTerms: must have at least one node selector term"},
        {",\"affinity\":{\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
         "\"weight\":101,\"podAffinityTerm\":{\"topologyKey\":\"z\"}}]}}",
         "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
         "must be an integer from 1 to 100"},
        {",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
         "[{\"labelSelector\":{}}]}}",
         "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
         "topologyKey: Required value"},
        {",\"topologySpreadConstraints\":[{\"maxSkew\":0,\"topologyKey\":\"z\","
         "\"whenUnsatisfiable\":\"DoNotSchedule\"}]",
         "spec.topologySpreadConstraints[0].maxSkew: must be an integer from 1 to 2147483647"},
        {",\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"z\","
         "\"whenUnsatisfiable\":\"Sometimes\"}]",
         "spec.topologySpreadConstraints[0].whenUnsatisfiable: \"Sometimes\" is not "
         "DoNotSchedule or ScheduleAnyway"},
        {",\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"z\","
         "\"whenUnsatisfiable\":\"DoNotSchedule\",\"matchLabelKeys\":[\"app\"]}]",
         "spec.topologySpreadConstraints[0].matchLabelKeys: must not be specified when "
         "labelSelector is not set"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        read_pod(bad[i].spec, &err, &s, &a);
        assert_non_null(err);
        assert_string_equal(err, bad[i].err);
    }
    gp_arena_free(&a);
}

/* A pod of ours whose affinity does not read is not scheduled, with a
 * FailedScheduling Event naming the field. */
static void test_unreadable(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    znode(&w, "n1", 4, "a");
    apod(&w, "bad", "gpuplane", NULL,
         ",\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"z\","
         "\"whenUnsatisfiable\":\"Sometimes\"}]");
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "bad", NULL), "");
    assert_string_equal(w_events(&w, "FailedScheduling", "bad"),
                        "gpuplane cannot read the pod: spec.topologySpreadConstraints[0]."
                        "whenUnsatisfiable: \"Sometimes\" is not DoNotSchedule or ScheduleAnyway");
    w_close(&w);
}

/* A namespace with labels (JSON members). */
static void namespace(struct world *w, const char *name, const char *labels)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{%s}}}",
             name, labels);
    kd_call(w->admin, "POST", "/api/v1/namespaces", b, 201);
}

/* A pod of ours in namespace ns asking one GPU, labelled app=db. */
static void ns_pod(struct world *w, const char *ns, const char *name)
{
    char b[1024], path[128];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"db\"}},\"spec\":{"
             "\"schedulerName\":\"gpuplane\",\"containers\":[{\"name\":\"c\",\"image\":\"x\","
             "\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"},"
             "\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
             name);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    kd_call(w->admin, "POST", path, b, 201);
}

static const char *node_in(struct world *w, const char *ns, const char *name)
{
    static char out[64];
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    json_t *p = w_get(w, path);
    const char *n = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
    snprintf(out, sizeof out, "%s", n ? n : "");
    json_decref(p);
    return out;
}

/* A pod of another scheduler holds required anti-affinity against app=db
 * pods of the namespaces labelled env=prod: ours in team (env=prod) stay
 * off its node, ours in other (env=dev) go there; team relabelled
 * env=dev, the next cycle binds its pod. Without the Namespaces' labels a
 * namespaceSelector sees only kubernetes.io/metadata.name and team's pod
 * would go at once. */
static void test_namespace_selector(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    struct gp_kube_client *ic = kd_client();
    struct gp_kube_informer *nss;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(ic, "/api/v1/namespaces", 0,
                                          gp_kube_sched_namespace_change, w.s, &nss, &d),
                     GP_OK);
    namespace(&w, "team", "\"env\":\"prod\"");
    namespace(&w, "other", "\"env\":\"dev\",\"kubernetes.io/metadata.name\":\"wrong\"");
    /* the server's: the name label (whatever the body said), Active */
    json_t *o = w_get(&w, "/api/v1/namespaces/other");
    json_t *l = json_object_get(json_object_get(o, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(l, "kubernetes.io/metadata.name")),
                        "other");
    assert_string_equal(json_string_value(json_object_get(l, "env")), "dev");
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "status"), "phase")),
                        "Active");
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "Namespace");
    json_decref(o);
    assert_int_equal(gp_kube_informer_list(nss, &d), GP_OK);
    znode(&w, "n1", 4, "a");
    apod(&w, "theirs", "default-scheduler", "\"app\":\"guard\"",
         ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
         "[{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"namespaceSelector\":{"
         "\"matchLabels\":{\"env\":\"prod\"}},\"topologyKey\":\"kubernetes.io/hostname\"}]}}");
    w_bind(&w, "theirs", "n1");
    w_cycle(&w);
    ns_pod(&w, "team", "db-team");
    ns_pod(&w, "other", "db-other");
    w_cycle(&w);
    assert_string_equal(node_in(&w, "team", "db-team"), "");
    assert_string_equal(node_in(&w, "other", "db-other"), "n1");
    /* an update that leaves the labels alone (an annotation) changes nothing */
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/team",
            "{\"metadata\":{\"annotations\":{\"owner\":\"x\"}}}", 200);
    assert_int_equal(gp_kube_informer_watch(nss, 0.5, &d), GP_OK);
    w_cycle(&w);
    assert_string_equal(node_in(&w, "team", "db-team"), "");
    /* relabelled: the watch delivers it, the next cycle binds */
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/team",
            "{\"metadata\":{\"labels\":{\"env\":\"dev\"}}}", 200);
    o = w_get(&w, "/api/v1/namespaces/team"); /* the name label kept through a patch */
    l = json_object_get(json_object_get(o, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(l, "kubernetes.io/metadata.name")),
                        "team");
    json_decref(o);
    assert_int_equal(gp_kube_informer_watch(nss, 0.5, &d), GP_OK);
    w_cycle(&w);
    assert_string_equal(node_in(&w, "team", "db-team"), "n1");
    gp_kube_informer_free(nss);
    gp_kube_client_free(ic);
    w_close(&w);
}

/* render --self grants list and watch on namespaces, nothing more. */
static void test_namespace_rbac(void **state)
{
    (void)state;
    assert_true(gp_rbac_allows("list", "", "namespaces", NULL));
    assert_true(gp_rbac_allows("watch", "", "namespaces", NULL));
    const char *no[] = {"get", "create", "update", "patch", "delete"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (gp_rbac_allows(no[i], "", "namespaces", NULL))
            fail_msg("allowed: %s namespaces", no[i]);
    char why[256];
    assert_true(gp_rbac_allows_request("GET", "/api/v1/namespaces?watch=true", "gpuplane-system",
                                       why, sizeof why));
    assert_false(gp_rbac_allows_request("GET", "/api/v1/namespaces/team", "gpuplane-system", why,
                                        sizeof why));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_node_affinity, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_pod_anti_affinity, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_existing_anti_affinity, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_namespace_selector, kd_start, kd_stop),
        cmocka_unit_test(test_namespace_rbac),
        cmocka_unit_test_setup_teardown(test_pod_affinity, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_spread, kd_start, kd_stop),
        cmocka_unit_test(test_reader),
        cmocka_unit_test_setup_teardown(test_unreadable, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
