/* test_kube_tls.c - the API client over HTTPS, end to end against the API
 * server double (tests/apidouble) serving TLS with a test CA made here at
 * run time (tests/apidouble/mkcerts.sh, the openssl CLI): the kubeconfig's
 * certificate-authority as a file and as data verified, a wrong CA (and
 * the system bundle) refused with one line and not retried,
 * insecure-skip-tls-verify honoured only when true; client certificate and
 * key as files and as data accepted, none or one from another CA refused
 * by the double (401); a bearer token accepted, a wrong one refused; the
 * in-cluster service account (token, ca.crt, namespace) over TLS, its token
 * re-read when it rotates; tls-server-name the name checked in place of
 * the URL's host. Skipped (77) without openssl. */
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

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube_double.h"
#include "util/arena.h"
#include "util/fs.h"

static char dir[64];

static char *path_of(const char *file)
{
    static char p[8][128];
    static int i;
    i = (i + 1) % 8;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, file);
    return p[i];
}

static void put(const char *file, const char *text)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path_of(file));
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path_of(file)), 0); /* atomic, as the kubelet writes */
}

/* The file in base64, in the arena. */
static char *b64_of(struct gp_arena *a, const char *file)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *text;
    size_t len;
    struct gp_diag d = {""};
    assert_int_equal(gp_fs_read(path_of(file), &text, &len, &d), GP_OK);
    char *out = malloc(len / 3 * 4 + 8);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned char)text[i] << 16;
        if (i + 1 < len)
            v |= (unsigned char)text[i + 1] << 8;
        if (i + 2 < len)
            v |= (unsigned char)text[i + 2];
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    free(text);
    char *copy = gp_arena_strdup(a, out);
    free(out);
    return copy;
}

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/gp-kube-tls-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "bash %s %s", GP_MKCERTS, dir);
    int rc = system(cmd);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
        printf("openssl absent: skipped\n");
        exit(77);
    }
    if (rc != 0)
        return -1;
    put("tokens", "admin-token,admin\nsa-token-1,system:serviceaccount:gpuplane-system:gpuplane\n");
    static char cert[128], key[128], ca[128], tokens[128];
    snprintf(cert, sizeof cert, "%s", path_of("server.crt"));
    snprintf(key, sizeof key, "%s", path_of("server.key"));
    snprintf(ca, sizeof ca, "%s", path_of("ca.crt"));
    snprintf(tokens, sizeof tokens, "%s", path_of("tokens"));
    const char *extra[] = {"--tls-cert", cert,       "--tls-key", key, "--client-ca",
                           ca,           "--tokens", tokens,      NULL};
    memcpy(kd_extra, extra, sizeof extra);
    return kd_start(state);
}

static int teardown(void **state)
{
    int rc = kd_stop(state);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = -1;
    return rc;
}

/* A kubeconfig for the double: cluster and user lines as given. */
static enum gp_err client_of(const char *cluster, const char *user, struct gp_arena *a,
                             struct gp_kube_client **c, struct gp_diag *d)
{
    char *text = gp_arena_printf(a,
                                 "apiVersion: v1\nkind: Config\nclusters:\n- name: double\n"
                                 "  cluster:\n    server: %s\n%s"
                                 "users:\n- name: u\n  user:\n%s"
                                 "contexts:\n- name: x\n  context: {cluster: double, user: u}\n"
                                 "current-context: x\n",
                                 kd_server, cluster, user);
    struct gp_kube_config cfg;
    enum gp_err err = gp_kube_config_parse(text, strlen(text), "kc", dir, NULL, a, &cfg, d);
    assert_int_equal(err, GP_OK);
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.backoff_base_s = 0.01;
    o.request_timeout_s = 5;
    o.qps = 0;
    return gp_kube_client_new(&cfg, &o, c, d);
}

/* GET /api/v1/nodes: the status (0 when no answer came), the diag. */
static long get_nodes(struct gp_kube_client *c, struct gp_diag *d, unsigned *attempts)
{
    struct gp_kube_response r;
    enum gp_err err = gp_kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, &r, d);
    if (attempts)
        *attempts = r.attempts;
    long status = err == GP_OK ? r.status : 0;
    if (err == GP_OK && status != 200)
        gp_kube_status_err(r.status, r.body, "GET", "/api/v1/nodes", d);
    gp_kube_response_free(&r);
    return status;
}

/* Who the double says made the last request. */
static char *last_user(struct gp_kube_client *c)
{
    static char user[96];
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/_control/requests", NULL, NULL, &r, &d), GP_OK);
    json_t *doc = json_loads(r.body, 0, NULL);
    json_t *reqs = json_object_get(doc, "requests");
    json_t *last = json_array_get(reqs, json_array_size(reqs) - 1);
    snprintf(user, sizeof user, "%s", json_string_value(json_object_get(last, "user")));
    json_decref(doc);
    gp_kube_response_free(&r);
    return user;
}

/* "GET https://127.0.0.1:N/api/v1/nodes: WHY": one line, naming the URL. */
static void assert_refused_line(const struct gp_diag *d, const char *why)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "GET %s/api/v1/nodes: ", kd_server);
    if (strncmp(d->msg, prefix, strlen(prefix)) != 0 || !strstr(d->msg, why) ||
        strchr(d->msg, '\n'))
        fail_msg("not the line expected (%s...%s): %s", prefix, why, d->msg);
}

static void test_ca_file_and_data(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    /* a relative path, from the kubeconfig's directory */
    assert_int_equal(
        client_of("    certificate-authority: ca.crt\n", "    token: admin-token\n", &a, &c, &d),
        GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    assert_string_equal(last_user(c), "admin");
    gp_kube_client_free(c);
    char *ca = gp_arena_printf(&a, "    certificate-authority-data: %s\n", b64_of(&a, "ca.crt"));
    assert_int_equal(client_of(ca, "    token: admin-token\n", &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    gp_kube_client_free(c);
    gp_arena_free(&a);
}

static void test_wrong_ca_refused(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    unsigned attempts;
    /* a CA that did not sign the server's certificate */
    assert_int_equal(client_of("    certificate-authority: other-ca.crt\n",
                               "    token: admin-token\n", &a, &c, &d),
                     GP_OK);
    assert_int_equal(get_nodes(c, &d, &attempts), 0);
    assert_refused_line(&d, "the server's certificate is not signed by the CA trusted");
    assert_int_equal(attempts, 1); /* not retried: it will not get better */
    gp_kube_client_free(c);
    /* no CA named: the system's bundle, which does not hold the test CA */
    assert_int_equal(client_of("", "    token: admin-token\n", &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 0);
    assert_refused_line(&d, "the server's certificate is not signed by the CA trusted");
    gp_kube_client_free(c);
    /* insecure-skip-tls-verify: false is not true */
    assert_int_equal(client_of("    certificate-authority: other-ca.crt\n"
                               "    insecure-skip-tls-verify: false\n",
                               "    token: admin-token\n", &a, &c, &d),
                     GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 0);
    gp_kube_client_free(c);
    /* and true skips the check */
    assert_int_equal(
        client_of("    insecure-skip-tls-verify: true\n", "    token: admin-token\n", &a, &c, &d),
        GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    gp_kube_client_free(c);
    gp_arena_free(&a);
}

static void test_client_certificates(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    const char *ca = "    certificate-authority: ca.crt\n";
    assert_int_equal(client_of(ca,
                               "    client-certificate: client.crt\n    client-key: client.key\n",
                               &a, &c, &d),
                     GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    assert_string_equal(last_user(c), "x509");
    gp_kube_client_free(c);
    char *data = gp_arena_printf(&a, "    client-certificate-data: %s\n    client-key-data: %s\n",
                                 b64_of(&a, "client.crt"), b64_of(&a, "client.key"));
    assert_int_equal(client_of(ca, data, &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    assert_string_equal(last_user(c), "x509");
    gp_kube_client_free(c);
    /* a certificate from a CA the server does not trust proves nothing */
    assert_int_equal(client_of(ca,
                               "    client-certificate: other-client.crt\n"
                               "    client-key: other-client.key\n",
                               &a, &c, &d),
                     GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 401);
    assert_string_equal(d.msg, "GET /api/v1/nodes: HTTP 401: Unauthorized");
    gp_kube_client_free(c);
    /* no credentials at all */
    assert_int_equal(client_of(ca, "    {}\n", &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 401);
    gp_kube_client_free(c);
    gp_arena_free(&a);
}

static void test_tokens(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    const char *ca = "    certificate-authority: ca.crt\n";
    assert_int_equal(client_of(ca, "    token: not-a-token\n", &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 401);
    struct gp_kube_response r;
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(gp_kube_status_err(r.status, r.body, "GET", "/api/v1/nodes", &d), GP_EUSAGE);
    assert_int_equal(r.attempts, 1); /* a 401 is not retried */
    gp_kube_response_free(&r);
    gp_kube_client_free(c);
    put("tok", "sa-token-1\n");
    assert_int_equal(client_of(ca, "    tokenFile: tok\n", &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    assert_string_equal(last_user(c), "system:serviceaccount:gpuplane-system:gpuplane");
    gp_kube_client_free(c);
    gp_arena_free(&a);
}

/* tls-server-name: a second double whose certificate names only
 * kube-api.gpuplane.test, reached at https://127.0.0.1:PORT: accepted
 * with that name, refused without it or with another; and the first
 * double (a certificate for 127.0.0.1) refused under that name, so the
 * name checked is tls-server-name, not the URL's host. */
static void test_tls_server_name(void **state)
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    const char *ca = "    certificate-authority: ca.crt\n";
    const char *tok = "    token: admin-token\n";
    const char *named = "    certificate-authority: ca.crt\n"
                        "    tls-server-name: kube-api.gpuplane.test\n";
    /* the first double's certificate is for 127.0.0.1, not for the name */
    assert_int_equal(client_of(named, tok, &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 0);
    assert_refused_line(&d, "or not for this host");
    gp_kube_client_free(c);
    /* the second double, on named.crt */
    pid_t first_pid = kd_pid;
    char first[sizeof kd_server];
    memcpy(first, kd_server, sizeof first);
    static char cert[128], key[128], tokens[128];
    snprintf(cert, sizeof cert, "%s", path_of("named.crt"));
    snprintf(key, sizeof key, "%s", path_of("named.key"));
    snprintf(tokens, sizeof tokens, "%s", path_of("tokens"));
    const char *extra[] = {"--tls-cert", cert, "--tls-key", key, "--tokens", tokens, NULL};
    const char *saved[12];
    memcpy(saved, kd_extra, sizeof saved);
    memset(kd_extra, 0, sizeof kd_extra);
    memcpy(kd_extra, extra, sizeof extra);
    assert_int_equal(kd_start(state), 0);
    assert_int_equal(client_of(named, tok, &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    assert_string_equal(last_user(c), "admin");
    gp_kube_client_free(c);
    /* without the name: 127.0.0.1 is checked, and the certificate lacks it */
    assert_int_equal(client_of(ca, tok, &a, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 0);
    assert_refused_line(&d, "or not for this host");
    gp_kube_client_free(c);
    /* another name: refused too */
    assert_int_equal(client_of("    certificate-authority: ca.crt\n"
                               "    tls-server-name: other.gpuplane.test\n",
                               tok, &a, &c, &d),
                     GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 0);
    assert_refused_line(&d, "or not for this host");
    gp_kube_client_free(c);
    /* not a host name: one line at the client's making */
    struct gp_kube_config cfg = {.server = kd_server, .tls_server_name = "x:443", .source = "kc"};
    assert_int_equal(gp_kube_client_new(&cfg, NULL, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "kc: tls-server-name: \"x:443\" is not a host name (no port, no scheme)");
    assert_int_equal(kd_stop(state), 0);
    memcpy(kd_extra, saved, sizeof saved);
    kd_pid = first_pid;
    memcpy(kd_server, first, sizeof first);
    gp_arena_free(&a);
}

static void test_in_cluster_rotation(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    char sa[96];
    snprintf(sa, sizeof sa, "%s/sa", dir);
    assert_int_equal(mkdir(sa, 0700), 0);
    char *ca;
    size_t len;
    struct gp_diag d = {""};
    assert_int_equal(gp_fs_read(path_of("ca.crt"), &ca, &len, &d), GP_OK);
    put("sa/ca.crt", ca);
    free(ca);
    put("sa/namespace", "gpuplane-system");
    put("sa/token", "sa-token-1");
    unsigned port = 0;
    assert_int_equal(sscanf(kd_server, "https://127.0.0.1:%u", &port), 1);
    char ps[16];
    snprintf(ps, sizeof ps, "%u", port);
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", ps, 1);
    struct gp_kube_config cfg;
    assert_int_equal(gp_kube_config_in_cluster(sa, &a, &cfg, &d), GP_OK);
    assert_string_equal(cfg.server, kd_server);
    assert_string_equal(cfg.ns, "gpuplane-system");
    struct gp_kube_client *c;
    assert_int_equal(gp_kube_client_new(&cfg, NULL, &c, &d), GP_OK);
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    /* the kubelet rotates the token: the server knows only the new one */
    put("tokens", "admin-token,admin\nsa-token-2,system:serviceaccount:gpuplane-system:gpuplane\n");
    put("sa/token", "sa-token-2\n");
    assert_int_equal(get_nodes(c, &d, NULL), 200);
    assert_string_equal(last_user(c), "system:serviceaccount:gpuplane-system:gpuplane");
    /* the old token is refused now: the new one was read, not the old kept */
    struct gp_kube_config old = cfg;
    old.token_file = NULL;
    old.token = "sa-token-1";
    struct gp_kube_client *o;
    assert_int_equal(gp_kube_client_new(&old, NULL, &o, &d), GP_OK);
    assert_int_equal(get_nodes(o, &d, NULL), 401);
    gp_kube_client_free(o);
    gp_kube_client_free(c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ca_file_and_data),    cmocka_unit_test(test_wrong_ca_refused),
        cmocka_unit_test(test_client_certificates), cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_in_cluster_rotation), cmocka_unit_test(test_tls_server_name),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
