/* kube_double.h - for tests of src/kube/: start the API server double
 * (GP_APIDOUBLE) on a free loopback port, stop it by its PID, make a
 * client for it and make requests that must answer a given status.
 * Included by one test file each (static functions). */
#ifndef GP_TEST_KUBE_DOUBLE_H
#define GP_TEST_KUBE_DOUBLE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "kube/client.h"
#include "shared_data.h"

static pid_t kd_pid;
static char kd_server[64];
static const char *kd_schemas; /* set: the double checks writes against these schemas */
/* more arguments for the double (--tls-cert ..., --tokens ...), NULL-ended;
 * with --tls-cert kd_server is https:// */
static const char *kd_extra[12];
static const char *kd_token; /* kd_client's bearer token (a double started with --tokens) */
/* schema refusals a test makes on purpose (its probes), which kd_stop allows; kd_start resets it */
static long kd_schema_errors_meant;

static int kd_start(void **state)
{
    (void)state;
    kd_schema_errors_meant = 0;
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t parent = getpid();
    kd_pid = fork();
    if (kd_pid == 0) {
        /* the double ends with the test: a test that aborts (an assertion,
         * ASan) must not leave it holding ctest's output pipe open, which
         * would hang the suite */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        dup2(fd[1], 1);
        close(fd[0]);
        const char *argv[24] = {GP_APIDOUBLE, "--port", "0", "--bookmark-ms", "100"};
        size_t n = 5;
        if (kd_schemas) {
            argv[n++] = "--schemas";
            argv[n++] = kd_schemas;
        }
        for (size_t i = 0; kd_extra[i] && n < 23; i++)
            argv[n++] = kd_extra[i];
        execv(GP_APIDOUBLE, (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    unsigned port = 0;
    if (!f || fscanf(f, "port %u", &port) != 1)
        return -1;
    fclose(f);
    bool tls = false;
    for (size_t i = 0; kd_extra[i]; i++)
        tls = tls || strcmp(kd_extra[i], "--tls-cert") == 0;
    snprintf(kd_server, sizeof kd_server, "%s://127.0.0.1:%u", tls ? "https" : "http", port);
    return 0;
}

static long kd_schema_errors(void);

/* Stops the double; with the schemas loaded, fails (-1) when the double
 * found an object written that they refuse (a refusal the code under test
 * shrugged off, an Event say, still fails the test). */
static int kd_stop(void **state)
{
    (void)state;
    long bad = kd_schemas ? kd_schema_errors() - kd_schema_errors_meant : 0;
    if (bad != 0)
        print_error(
            "the double refused %ld object(s) against the schemas (its stderr says which)\n", bad);
    kill(kd_pid, SIGTERM);
    int st;
    waitpid(kd_pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && bad == 0 ? 0 : -1;
}

__attribute__((unused)) static struct gp_kube_client *kd_client(void)
{
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default", .token = kd_token};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.backoff_base_s = 0.01;
    o.request_timeout_s = 5;
    o.qps = 0;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    return c;
}

/* The double's count of writes the schemas refused (-1 when it cannot be read). */
static long kd_schema_errors(void)
{
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default", .token = kd_token};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.request_timeout_s = 30;
    o.qps = 0;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    if (gp_kube_client_new(&cfg, &o, &c, &d) != GP_OK)
        return -1;
    struct gp_kube_response r;
    long n = -1;
    if (gp_kube_request(c, "GET", "/_control/stats", NULL, NULL, &r, &d) == GP_OK) {
        json_t *j = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
        json_t *v = json_object_get(j, "schema_errors");
        if (json_is_integer(v))
            n = (long)json_integer_value(v);
        json_decref(j);
        gp_kube_response_free(&r);
    }
    gp_kube_client_free(c);
    return n;
}

/* A request that must answer `status`; nothing kept. */
__attribute__((unused)) static void kd_call(struct gp_kube_client *c, const char *method,
                                            const char *path, const char *body, long status)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    const char *ct = !body                          ? NULL
                     : strcmp(method, "PATCH") == 0 ? "application/merge-patch+json"
                                                    : "application/json";
    enum gp_err err = gp_kube_request(c, method, path, body, ct, &r, &d);
    if (err != GP_OK || r.status != status)
        fail_msg("%s %s: %s, HTTP %ld: %s", method, path, d.msg, r.status, r.body);
    gp_kube_response_free(&r);
}

/* A test file's main, for files whose tests all run against the double:
 * runs `tests` (with the group's setup and teardown, NULL for none); with
 * the argument "shared" (the build's NAME:shared run, registered for files
 * that include shared_data.h themselves) runs them again with the double
 * checking every object written against the published schemas
 * (../shared/k8s/schemas), where a write they refuse is a 422 that fails
 * the test, or skips (77) without them. */
#define KD_SCHEMAS GP_SHARED_DIR "/k8s/schemas"
#define kd_main(argc, argv, tests, setup, teardown)                                                \
    (gp_shared_mode((argc), (argv))                                                                \
         ? (gp_shared_have(KD_SCHEMAS "/api__v1_openapi.json")                                     \
                ? (kd_schemas = KD_SCHEMAS, gp_shared_exit(cmocka_run_group_tests_name(            \
                                                "schemas", (tests), (setup), (teardown))))         \
                : GP_SHARED_SKIP_EXIT)                                                             \
         : cmocka_run_group_tests((tests), (setup), (teardown)))

#endif
