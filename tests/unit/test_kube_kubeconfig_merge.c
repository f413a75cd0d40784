/* test_kube_kubeconfig_merge.c - $KUBECONFIG's files merged as kubectl
 * merges them (kube/kubeconfig.c, gp_kube_config_load_list; the rules of
 * "Organizing Cluster Access Using kubeconfig Files", kubernetes.io):
 * cases worked by hand over three files in two directories: empty names
 * and missing files skipped, the first file to name a cluster, user or
 * context wins it whole (the later one's other fields discarded, the
 * doc's red-user example), current-context from the first file that sets
 * it, relative paths from each file's own directory, a bad file an error
 * naming it, a name twice in one file an error, and gp_kube_config_find
 * reading $KUBECONFIG. */
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

#include "kube/kubeconfig.h"
#include "util/arena.h"

static char root[64];
static char pa[128], pb[128], pc[128], pbad[128], pdup[128];

/* A: a cluster "shared", the red-user with a token, ctx-a; no current-context. */
static const char A[] = "apiVersion: v1\nkind: Config\n"
                        "clusters:\n- name: shared\n  cluster:\n"
                        "    server: https://a.example:6443\n    certificate-authority: ca-a.pem\n"
                        "users:\n- name: red-user\n  user: {token: red-a}\n"
                        "contexts:\n- name: ctx-a\n"
                        "  context: {cluster: shared, user: red-user, namespace: team-a}\n";
/* B: "shared" again (discarded), only-b, red-user again with a certificate
 * (discarded whole, though A's red-user sets no certificate), blue-user,
 * ctx-a again (discarded), ctx-b; the first current-context. */
static const char B[] = "apiVersion: v1\nkind: Config\n"
                        "clusters:\n- name: shared\n  cluster:\n"
                        "    server: https://b.example:6443\n    insecure-skip-tls-verify: true\n"
                        "- name: only-b\n  cluster:\n"
                        "    server: https://only-b:443/\n    certificate-authority: ca-b.pem\n"
                        "users:\n- name: red-user\n"
                        "  user: {client-certificate: b.crt, client-key: b.key}\n"
                        "- name: blue-user\n  user: {tokenFile: blue.tok}\n"
                        "contexts:\n- name: ctx-a\n  context: {cluster: only-b, user: blue-user}\n"
                        "- name: ctx-b\n  context: {cluster: only-b, user: red-user}\n"
                        "- name: ctx-blue\n  context: {cluster: shared, user: blue-user}\n"
                        "current-context: ctx-b\n";
/* C: only a current-context (a later one: ignored) and an empty one first. */
static const char C[] = "current-context: ctx-a\n";

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/gp-kc-merge-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    char d[128];
    snprintf(d, sizeof d, "%s/da", root);
    mkdir(d, 0700);
    snprintf(d, sizeof d, "%s/db", root);
    mkdir(d, 0700);
    snprintf(pa, sizeof pa, "%s/da/a.yaml", root);
    snprintf(pb, sizeof pb, "%s/db/b.yaml", root);
    snprintf(pc, sizeof pc, "%s/c.yaml", root);
    snprintf(pbad, sizeof pbad, "%s/bad.yaml", root);
    snprintf(pdup, sizeof pdup, "%s/dup.yaml", root);
    put(pa, A);
    put(pb, B);
    put(pc, C);
    put(pbad, "clusters:\n- name: x\n  cluster: {server: [7]}\n");
    put(pdup, "users:\n- name: u\n  user: {token: a}\n- name: v\n  user: {}\n"
              "- name: u\n  user: {token: b}\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

static char *list_of(struct gp_arena *a, const char *const *paths, size_t n)
{
    char *s = gp_arena_strdup(a, "");
    for (size_t i = 0; i < n; i++)
        s = gp_arena_printf(a, "%s%s%s", s, i ? ":" : "", paths[i]);
    return s;
}

static void test_merged(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_config c;
    struct gp_diag d = {""};
    char missing[160];
    snprintf(missing, sizeof missing, "%s/nowhere.yaml", root);
    /* an empty name first, a missing file, two empty names, then C */
    const char *order[] = {"", pa, missing, pb, "", "", pc};
    char *list = list_of(&a, order, 7);
    assert_int_equal(gp_kube_config_load_list(list, NULL, &a, &c, &d), GP_OK);
    /* current-context: B's (the first file to set it; C's comes later) */
    assert_string_equal(c.context, "ctx-b");
    assert_string_equal(c.server, "https://only-b:443");
    assert_string_equal(c.ns, "default");
    /* B's relative path, from B's directory */
    assert_string_equal(c.ca.file, gp_arena_printf(&a, "%s/db/ca-b.pem", root));
    assert_string_equal(c.source, pb);
    /* the red-user is A's, whole: B's certificate is not added to it */
    assert_string_equal(c.token, "red-a");
    assert_null(c.cert.file);
    assert_null(c.key.file);

    /* ctx-a: A's (B's ctx-a discarded), A's cluster "shared" (not B's,
     * whose insecure-skip-tls-verify A does not set and is not taken) */
    assert_int_equal(gp_kube_config_load_list(list, "ctx-a", &a, &c, &d), GP_OK);
    assert_string_equal(c.server, "https://a.example:6443");
    assert_false(c.insecure);
    assert_string_equal(c.ca.file, gp_arena_printf(&a, "%s/da/ca-a.pem", root));
    assert_string_equal(c.ns, "team-a");
    assert_string_equal(c.token, "red-a");
    assert_string_equal(c.source, pa);

    /* a context of B that names A's cluster and B's user: entries from two
     * files, each resolved from its own directory */
    assert_int_equal(gp_kube_config_load_list(list, "ctx-blue", &a, &c, &d), GP_OK);
    assert_string_equal(c.server, "https://a.example:6443");
    assert_string_equal(c.token_file, gp_arena_printf(&a, "%s/db/blue.tok", root));
    assert_null(c.token);

    /* C first: its current-context wins now, and ctx-a is still A's */
    const char *c_first[] = {pc, pb, pa};
    list = list_of(&a, c_first, 3);
    assert_int_equal(gp_kube_config_load_list(list, NULL, &a, &c, &d), GP_OK);
    assert_string_equal(c.context, "ctx-a");
    /* B before A now: B's ctx-a (only-b, blue-user) */
    assert_string_equal(c.server, "https://only-b:443");
    assert_string_equal(c.token_file, gp_arena_printf(&a, "%s/db/blue.tok", root));

    /* B before A: B's red-user, a certificate and no token */
    const char *b_first[] = {pb, pa};
    list = list_of(&a, b_first, 2);
    assert_int_equal(gp_kube_config_load_list(list, NULL, &a, &c, &d), GP_OK);
    assert_null(c.token);
    assert_string_equal(c.cert.file, gp_arena_printf(&a, "%s/db/b.crt", root));

    /* a context asked for that no file has */
    assert_int_equal(gp_kube_config_load_list(list, "nope", &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, gp_arena_printf(&a,
                                               "KUBECONFIG=%s: contexts: no context named "
                                               "\"nope\"",
                                               list));
    gp_arena_free(&a);
}

static void test_merge_errors(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_config c;
    struct gp_diag d = {""};
    /* no file exists */
    char *list = gp_arena_printf(&a, "%s/x.yaml::%s/y.yaml", root, root);
    assert_int_equal(gp_kube_config_load_list(list, NULL, &a, &c, &d), GP_ENOTFOUND);
    assert_string_equal(d.msg,
                        gp_arena_printf(&a, "KUBECONFIG=%s: none of these files exists", list));
    /* a file that cannot be read as a kubeconfig is an error, naming it */
    const char *with_bad[] = {pa, pbad, pb};
    list = list_of(&a, with_bad, 3);
    assert_int_equal(gp_kube_config_load_list(list, NULL, &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, gp_arena_printf(&a,
                                               "%s:3:22: clusters[0].cluster.server: expected a "
                                               "string, got a list",
                                               pbad));
    /* a name twice in one file */
    const char *with_dup[] = {pdup, pa};
    list = list_of(&a, with_dup, 2);
    assert_int_equal(gp_kube_config_load_list(list, NULL, &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        gp_arena_printf(&a,
                                        "%s:6:9: users[2]: the name \"u\" is given twice (also "
                                        "users[0]); names are unique in a file",
                                        pdup));
    /* C's current-context (first) names a context only B has: with B
     * absent, the message points at C's line */
    const char *c_alone[] = {pc};
    list = list_of(&a, c_alone, 1);
    assert_int_equal(gp_kube_config_load_list(list, NULL, &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, gp_arena_printf(&a,
                                               "%s:1:18: current-context: no context named "
                                               "\"ctx-a\" in contexts",
                                               pc));
    gp_arena_free(&a);
}

static void test_find_reads_kubeconfig(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_config c;
    struct gp_diag d = {""};
    setenv("KUBECONFIG", gp_arena_printf(&a, "%s:%s", pa, pb), 1);
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(gp_kube_config_find(NULL, NULL, &a, &c, &d), GP_OK);
    assert_string_equal(c.context, "ctx-b"); /* merged: A alone has no current-context */
    assert_string_equal(c.token, "red-a");
    /* an explicit path: that file only, no merging */
    assert_int_equal(gp_kube_config_find(pb, NULL, &a, &c, &d), GP_OK);
    assert_string_equal(c.cert.file, gp_arena_printf(&a, "%s/db/b.crt", root));
    unsetenv("KUBECONFIG");
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merged),
        cmocka_unit_test(test_merge_errors),
        cmocka_unit_test(test_find_reads_kubeconfig),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
