/* test_kube_kubeconfig.c - the kubeconfig reader and the in-cluster service
 * account (kube/kubeconfig.c): a table of good files and what they give, a
 * table of bad files and the one line each must give (the field at fault),
 * base64, relative paths, the service account's files and environment. */
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

/* "-----BEGIN CERTIFICATE-----\nX\n" in base64 */
#define PEM_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClgK"
#define PEM     "-----BEGIN CERTIFICATE-----\nX\n"

#define HEAD                                                                                       \
    "apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster:\n"                            \
    "    server: https://10.0.0.1:6443/\n    certificate-authority-data: " PEM_B64 "\n"            \
    "- name: c2\n  cluster:\n    server: https://c2.example:443\n"                                 \
    "    certificate-authority: ca.pem\n    insecure-skip-tls-verify: true\n"

static void test_good(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_config c;
    struct gp_diag d = {""};
    const char *text = HEAD "users:\n- name: u1\n  user:\n    client-certificate-data: " PEM_B64
                            "\n    client-key-data: " PEM_B64 "\n"
                            "- name: u2\n  user:\n    token: abc.def\n"
                            "- name: u3\n  user:\n    tokenFile: tok\n"
                            "contexts:\n- name: x1\n  context: {cluster: c1, user: u1}\n"
                            "- name: x2\n  context:\n    cluster: c2\n    user: u2\n"
                            "    namespace: team-a\n"
                            "- name: x3\n  context: {cluster: c2, user: u3}\n"
                            "current-context: x1\npreferences: {}\n";
    assert_int_equal(gp_kube_config_parse(text, strlen(text), "kc", "/etc/k", NULL, &a, &c, &d),
                     GP_OK);
    assert_string_equal(c.server, "https://10.0.0.1:6443"); /* trailing / dropped */
    assert_string_equal(c.ns, "default");
    assert_string_equal(c.context, "x1");
    assert_string_equal(c.ca.data, PEM);
    assert_int_equal(c.ca.len, strlen(PEM));
    assert_null(c.ca.file);
    assert_string_equal(c.cert.data, PEM);
    assert_string_equal(c.key.data, PEM);
    assert_null(c.token);
    assert_false(c.insecure); /* only when set */

    assert_int_equal(gp_kube_config_parse(text, strlen(text), "kc", "/etc/k", "x2", &a, &c, &d),
                     GP_OK);
    assert_string_equal(c.server, "https://c2.example:443");
    assert_string_equal(c.ns, "team-a");
    assert_string_equal(c.ca.file, "/etc/k/ca.pem"); /* relative to the file */
    assert_true(c.insecure);
    assert_string_equal(c.token, "abc.def");
    assert_null(c.cert.data);

    assert_int_equal(gp_kube_config_parse(text, strlen(text), "kc", "/etc/k", "x3", &a, &c, &d),
                     GP_OK);
    assert_string_equal(c.token_file, "/etc/k/tok");
    gp_arena_free(&a);
}

struct bad {
    const char *text; /* appended to HEAD unless it starts with '!' */
    const char *ctx;  /* the context asked for */
    enum gp_err err;
    const char *expect; /* the whole message */
};

static const struct bad bad_files[] = {
    {"contexts:\n- name: x\n  context: {cluster: c1}\n", NULL, GP_EINVALID,
     "kc: current-context: not set (and no context was asked for)"},
    {"contexts:\n- name: x\n  context: {cluster: c1}\ncurrent-context: y\n", NULL, GP_EINVALID,
     "kc:16:18: current-context: no context named \"y\" in contexts"},
    {"contexts:\n- name: x\n  context: {cluster: c9}\ncurrent-context: x\n", NULL, GP_EINVALID,
     "kc:15:22: contexts[0].context.cluster: no cluster named \"c9\" in clusters"},
    {"contexts:\n- name: x\n  context: {cluster: c1, user: nobody}\ncurrent-context: x\n", NULL,
     GP_EINVALID, "kc:15:32: contexts[0].context.user: no user named \"nobody\" in users"},
    {"users:\n- name: u\n  user:\n    client-key-data: '@@@'\n", NULL, GP_EINVALID,
     "kc:16:22: users[0].user.client-key-data: not valid base64"},
    {"users:\n- name: u\n  user:\n    exec: {command: aws}\n", NULL, GP_EUNSUPPORTED,
     "kc:16:12: users[0].user.exec: credential plugins are not supported; give a token, a token "
     "file or a client certificate and key"},
    {"users:\n- name: u\n  user:\n    client-certificate: a.pem\n"
     "contexts:\n- name: x\n  context: {cluster: c1, user: u}\ncurrent-context: x\n",
     NULL, GP_EINVALID, "kc: users[\"u\"].user: client-certificate is set without client-key"},
    {"!clusters:\n- name: c\n  cluster: {server: ftp://x}\ncontexts:\n- name: x\n"
     "  context: {cluster: c}\ncurrent-context: x\n",
     NULL, GP_EINVALID,
     "kc: clusters[\"c\"].cluster.server: expected an https:// or http:// URL, got \"ftp://x\""},
    {"!clusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: yes}\n", NULL, GP_EINVALID,
     "kc:3:39: clusters[0].cluster.insecure-skip-tls-verify: expected true or false, got "
     "\"yes\""},
    {"!clusters:\n- cluster: {server: https://x}\n", NULL, GP_EINVALID,
     "kc:2:3: clusters[0]: missing required field \"name\""},
    {"!clusters: [\n", NULL, GP_EPARSE, NULL},
    {"!", NULL, GP_EINVALID, "kc: an empty kubeconfig (no clusters, contexts or current-context)"},
    {"contexts:\n- name: x\n  context: {cluster: c1}\ncurrent-context: x\n", "nope", GP_EINVALID,
     "kc: contexts: no context named \"nope\""},
};

static void test_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; i++) {
        const struct bad *b = &bad_files[i];
        struct gp_arena a;
        gp_arena_init(&a);
        char text[4096];
        if (b->text[0] == '!')
            snprintf(text, sizeof text, "%s", b->text + 1);
        else
            snprintf(text, sizeof text, "%s%s", HEAD, b->text);
        struct gp_kube_config c;
        struct gp_diag d = {""};
        enum gp_err err = gp_kube_config_parse(text, strlen(text), "kc", NULL, b->ctx, &a, &c, &d);
        if (err != b->err || (b->expect && strcmp(d.msg, b->expect) != 0))
            fail_msg("case %zu: got %s \"%s\"", i, gp_strerror(err), d.msg);
        assert_non_null(d.msg[0] ? d.msg : NULL);
        assert_null(strchr(d.msg, '\n'));
        assert_null(c.server);
        gp_arena_free(&a);
    }
}

static void test_base64(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    char *out;
    size_t n;
    assert_true(gp_kube_base64_decode("aGVsbG8=", 8, &a, &out, &n));
    assert_string_equal(out, "hello");
    assert_true(gp_kube_base64_decode("aGVsbG8", 7, &a, &out, &n)); /* padding optional */
    assert_string_equal(out, "hello");
    assert_true(gp_kube_base64_decode("aGVs\nbG8h", 9, &a, &out, &n));
    assert_string_equal(out, "hello!");
    assert_true(gp_kube_base64_decode("aA==", 4, &a, &out, &n));
    assert_string_equal(out, "h");
    assert_false(gp_kube_base64_decode("a", 1, &a, &out, &n));
    assert_false(gp_kube_base64_decode("aA=A", 4, &a, &out, &n));
    assert_false(gp_kube_base64_decode("aA===", 5, &a, &out, &n));
    assert_false(gp_kube_base64_decode("a-b_", 4, &a, &out, &n)); /* not the URL alphabet */
    gp_arena_free(&a);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_in_cluster(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp-sa-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[256];
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_config c;
    struct gp_diag d = {""};
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(gp_kube_config_in_cluster(dir, &a, &c, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "KUBERNETES_SERVICE_HOST"));
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(gp_kube_config_in_cluster(dir, &a, &c, &d), GP_ENOTFOUND); /* no token */
    snprintf(p, sizeof p, "%s/token", dir);
    write_file(p, "eyJtoken\n");
    assert_int_equal(gp_kube_config_in_cluster(dir, &a, &c, &d), GP_OK);
    assert_string_equal(c.server, "https://10.96.0.1:443");
    assert_string_equal(c.ns, "default");
    assert_string_equal(c.token_file, p);
    snprintf(p, sizeof p, "%s/namespace", dir);
    write_file(p, "gpuplane-system\n");
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(gp_kube_config_in_cluster(dir, &a, &c, &d), GP_OK);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    assert_string_equal(c.ns, "gpuplane-system");
    snprintf(p, sizeof p, "%s/ca.crt", dir);
    assert_string_equal(c.ca.file, p);
    /* gp_kube_config_find: in-cluster only without KUBECONFIG */
    snprintf(p, sizeof p, "%s/kc", dir);
    write_file(p, HEAD "contexts:\n- {name: x, context: {cluster: c2}}\ncurrent-context: x\n");
    setenv("KUBECONFIG", p, 1);
    assert_int_equal(gp_kube_config_find(NULL, NULL, &a, &c, &d), GP_OK);
    assert_string_equal(c.server, "https://c2.example:443");
    assert_string_equal(c.ca.file + strlen(dir), "/ca.pem");
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    gp_arena_free(&a);
    const char *names[] = {"token", "namespace", "kc"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_in_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
