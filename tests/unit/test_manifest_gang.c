/* test_manifest_gang.c - objects joined to their PodGroups
 * (io/manifest_gang.c): a PodGroup may be in another file than its pods,
 * before or after them, in a directory or in separate --workload files;
 * each gang learns how many pods can ever be its members, a minMember
 * above that is kept (a gang that can never start) and warned about, a
 * PodGroup whose pods come from several objects is warned about, and a
 * failed file takes its PodGroups back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/workload.h"

struct ws {
    struct gp_arena a;
    struct gp_workload w;
    struct gp_diag d;
};

static struct ws *ws_new(void)
{
    struct ws *x = calloc(1, sizeof *x);
    assert_non_null(x);
    gp_arena_init(&x->a);
    return x;
}

static enum gp_err add(struct ws *x, const char *name, const char *text)
{
    return gp_workload_parse_manifest(text, strlen(text), name, &x->a, &x->w, &x->d);
}

static void add_ok(struct ws *x, const char *name, const char *text)
{
    enum gp_err err = add(x, name, text);
    if (err != GP_OK)
        print_error("%s\n", x->d.msg);
    assert_int_equal(err, GP_OK);
}

static void ws_free(struct ws *x)
{
    gp_arena_free(&x->a);
    free(x);
}

#define GROUP(name, min)                                                                           \
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: " name "\n"      \
    "  annotations: {gpuplane.io/topology-key: rack}\nspec: {minMember: " min "}\n"
#define JOB(name, group, par)                                                                      \
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " name "\nspec:\n  parallelism: " par     \
    "\n  completions: " par "\n  template:\n    metadata:\n      labels: "                         \
    "{scheduling.x-k8s.io/pod-group: " group "}\n    spec:\n      containers: [{name: c}]\n"

static void test_group_in_another_file(void **state)
{
    (void)state;
    /* the pods first: joined when the PodGroup's file comes */
    struct ws *x = ws_new();
    add_ok(x, "jobs.yaml", JOB("train", "g", "4"));
    assert_int_equal(x->w.items[0].gang_min, 0);
    add_ok(x, "groups.yaml", GROUP("g", "4"));
    assert_int_equal(x->w.items[0].gang_min, 4);
    assert_string_equal(x->w.items[0].topology_key, "rack");
    assert_int_equal(gp_workload_finish(&x->w, &x->a, &x->d), GP_OK);
    assert_int_equal(x->w.items[0].gang_min, 4);
    assert_int_equal(x->w.items[0].gang_members, 4);
    assert_int_equal(x->w.nwarnings, 0);
    ws_free(x);
    /* the PodGroup first */
    x = ws_new();
    add_ok(x, "groups.yaml", GROUP("g", "4"));
    add_ok(x, "jobs.yaml", JOB("train", "g", "4"));
    assert_int_equal(x->w.items[0].gang_min, 4);
    assert_int_equal(gp_workload_finish(&x->w, &x->a, &x->d), GP_OK);
    ws_free(x);
    /* a failed file takes its PodGroups back */
    x = ws_new();
    add_ok(x, "jobs.yaml", JOB("train", "g", "4"));
    assert_int_equal(add(x, "groups.yaml", GROUP("g", "4") "---\nkind: Nope\napiVersion: v1\n"),
                     GP_EUNSUPPORTED);
    assert_int_equal(x->w.ngroups, 0);
    assert_int_equal(x->w.items[0].gang_min, 0);
    assert_int_equal(gp_workload_finish(&x->w, &x->a, &x->d), GP_EINVALID);
    assert_string_equal(x->d.msg,
                        "jobs.yaml:1: train names PodGroup \"g\", which no workload file defines");
    ws_free(x);
    /* one name in both CRDs: pods could not tell them apart */
    x = ws_new();
    add_ok(x, "a.yaml", GROUP("g", "2"));
    assert_int_equal(add(x, "b.yaml",
                         "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                         "metadata: {name: g}\nspec: {minMember: 2}\n"),
                     GP_EINVALID);
    assert_string_equal(x->d.msg, "b.yaml:1:1: PodGroup \"g\" is defined twice (also at "
                                  "a.yaml:1); pods name their PodGroup by name alone");
    ws_free(x);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

static void test_group_in_a_directory(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp-test-gang-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, "a-jobs.yaml", JOB("train", "g", "2"));
    write_file(dir, "b-groups.yaml", GROUP("g", "2"));
    struct ws *x = ws_new();
    assert_int_equal(gp_workload_load(dir, &x->a, &x->w, &x->d), GP_OK);
    assert_int_equal(gp_workload_finish(&x->w, &x->a, &x->d), GP_OK);
    assert_int_equal(x->w.nitems, 1);
    assert_int_equal(x->w.items[0].gang_min, 2);
    ws_free(x);
    remove_file(dir, "a-jobs.yaml");
    remove_file(dir, "b-groups.yaml");
    rmdir(dir);
}

static void test_members(void **state)
{
    (void)state;
    /* minMember above what its objects run at once: kept, and warned about */
    struct ws *x = ws_new();
    add_ok(x, "m.yaml", GROUP("g", "8") "---\n" JOB("train", "g", "4"));
    assert_int_equal(gp_workload_finish(&x->w, &x->a, &x->d), GP_OK);
    assert_int_equal(x->w.items[0].gang_min, 8);
    assert_int_equal(x->w.items[0].gang_members, 4);
    assert_int_equal(x->w.nwarnings, 1);
    assert_string_equal(x->w.warnings[0],
                        "m.yaml:1: PodGroup/g: minMember 8, but its object runs at most 4 pods "
                        "at once: the gang can never start, and its pods stay pending (as in "
                        "Kubernetes)");
    ws_free(x);
    /* a Job's parallelism is capped by its completions; a Deployment runs
     * its replicas; several objects add up */
    x = ws_new();
    add_ok(x, "m.yaml",
           GROUP("g", "6") "---\n"
                           "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                           "  parallelism: 8\n  completions: 2\n  template:\n    metadata:\n"
                           "      labels: {scheduling.x-k8s.io/pod-group: g}\n"
                           "    spec: {containers: [{name: c}]}\n---\n"
                           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
                           "  replicas: 3\n  template:\n    metadata:\n"
                           "      labels: {scheduling.x-k8s.io/pod-group: g}\n"
                           "    spec: {containers: [{name: c}]}\n---\n"
                           "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                           "  labels: {scheduling.x-k8s.io/pod-group: g}\n"
                           "spec: {containers: [{name: c}]}\n");
    assert_int_equal(gp_workload_finish(&x->w, &x->a, &x->d), GP_OK);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(x->w.items[i].gang_members, 6);
    assert_int_equal(x->w.nwarnings, 1);
    assert_string_equal(x->w.warnings[0],
                        "m.yaml:1: PodGroup/g gathers the pods of 3 objects: not simulated; each "
                        "submission of each object is a gang of its own pods (at least "
                        "minMember, or all of them when fewer)");
    ws_free(x);
    /* a Volcano PodGroup names the queue of pods that name none */
    x = ws_new();
    add_ok(x, "g.yaml",
           "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: v}\n"
           "spec: {minMember: 1, queue: research}\n");
    add_ok(x, "j.yaml",
           "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
           "  annotations: {scheduling.k8s.io/group-name: v}\n"
           "spec: {template: {spec: {containers: [{name: c}]}}}\n");
    assert_int_equal(gp_workload_finish(&x->w, &x->a, &x->d), GP_OK);
    assert_string_equal(x->w.items[0].queue, "research");
    assert_int_equal(x->w.nwarnings, 0);
    ws_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_in_another_file),
        cmocka_unit_test(test_group_in_a_directory),
        cmocka_unit_test(test_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
