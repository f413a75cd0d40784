/* main.c - the API server double's HTTP server (libmicrohttpd, 127.0.0.1
 * only: a pool of --threads threads, each with its own epoll(7) set, where
 * nothing blocks: a watch with nothing to send and a request under a delay
 * or late-answer fault are suspended (park.c) and resumed by a write or by
 * the reaper): bodies read and parsed, faults applied, requests routed to
 * lists, watches and writes; "port N" printed once listening; SIGTERM
 * stops it. */
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apidouble.h"
#include "kube/jalloc.h"
#include "kube/jload.h"

struct state S = {.mu = PTHREAD_MUTEX_INITIALIZER};
/* S.cv is set up in main (on CLOCK_MONOTONIC, the clock of mono()). */
static struct auth AUTH;

/* --- the server -------------------------------------------------------- */

/* A request's own state, from its first call of on_request to on_done. */
struct upload {
    char *buf;
    size_t len;
    bool over;
    enum {
        FRESH,   /* not routed yet */
        DELAYED, /* its delay fault (fault) taken: routed once resumed */
        LATE,    /* applied: its answer (held, stream) goes once resumed */
    } phase;
    struct fault fault;
    struct answer held;
    struct MHD_Response *stream;
    struct parked park;
};

static enum MHD_Result send_answer(struct MHD_Connection *c, struct answer *a)
{
    static char empty[1];
    if (!a->body) /* out of memory making it */
        a->status = 500;
    size_t n = a->body ? strlen(a->body) : 0;
    struct MHD_Response *resp =
        a->body ? MHD_create_response_from_buffer(n, a->body, MHD_RESPMEM_MUST_FREE)
                : MHD_create_response_from_buffer(0, empty, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (a->retry_after)
        MHD_add_response_header(resp, "Retry-After", a->retry_after);
    enum MHD_Result ret = MHD_queue_response(c, a->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Routes the request (lock held); false when it must first wait out the
 * delay fault it took (up->fault; routed again once resumed). */
static bool route_request(struct MHD_Connection *c, const char *url, const char *method,
                          json_t *body, struct answer *a, struct MHD_Response **stream,
                          struct upload *up)
{
    struct route r;
    if (!parse_route(url, &r)) {
        answer_status(a, 404, "NotFound", NULL, NULL,
                      "the server could not find the requested "
                      "resource");
        return true;
    }
    const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
    bool is_watch = watch && (strcmp(watch, "1") == 0 || strcmp(watch, "true") == 0);
    struct fault f = up->fault;
    if (up->phase == FRESH) {
        f = take_fault(url, is_watch && !r.item && strcmp(method, "GET") == 0);
        if (f.delay_ms > 0) {
            up->fault = f;
            return false;
        }
    }
    a->late_ms = f.late_ms;
    if (f.status == 429) {
        static char ra[32];
        snprintf(ra, sizeof ra, "%ld", f.retry_after_s >= 0 ? f.retry_after_s : 1);
        a->retry_after = f.retry_after_s >= 0 ? ra : NULL;
        answer_status(a, 429, "TooManyRequests", NULL, NULL,
                      "the server has received too many requests and has asked us to try again "
                      "later");
        return true;
    }
    if (f.status >= 400) {
        answer_status(a, (unsigned)f.status, "InternalError", NULL, NULL,
                      "an error on the server (\"injected\") has prevented the request from "
                      "succeeding");
        return true;
    }
    bool get = strcmp(method, "GET") == 0;
    struct fsel fs;
    if (!r.item && get &&
        !fsel_parse(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fieldSelector"), r.res,
                    &fs, a))
        return true;
    if (!r.item && get && is_watch) {
        const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
        const char *bm =
            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "allowWatchBookmarks");
        const char *to = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeoutSeconds");
        *stream = do_watch(c, &r, &fs, rv, bm && strcmp(bm, "true") == 0, to ? atol(to) : 0,
                           f.drop_after, f.stall_after);
    } else if (!r.item && get) {
        const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
        const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
        do_list(&r, &fs, lim ? atol(lim) : 0, cont, a);
    } else if (!r.item && strcmp(method, "POST") == 0) {
        do_create(&r, body, a);
    } else if (r.item && get && !r.sub[0]) {
        struct object *o = target(&r, a);
        if (o)
            answer_object(a, 200, o);
    } else if (r.item && strcmp(method, "POST") == 0 && strcmp(r.sub, "binding") == 0 &&
               strcmp(r.res, "pods") == 0) {
        do_binding(&r, body, a);
    } else if (r.item && (strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0) &&
               (!r.sub[0] || strcmp(r.sub, "status") == 0)) {
        bool patch = strcmp(method, "PATCH") == 0;
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (patch && (!ct || (strcmp(ct, "application/merge-patch+json") != 0 &&
                              strcmp(ct, "application/strategic-merge-patch+json") != 0))) {
            answer_status(a, 415, "UnsupportedMediaType", NULL, NULL,
                          "the body of the request was in an unknown format - accepted media "
                          "types include: application/merge-patch+json, "
                          "application/strategic-merge-patch+json");
            return true;
        }
        do_update(&r, body,
                  !patch ? UPDATE_PUT
                  : strcmp(ct, "application/strategic-merge-patch+json") == 0
                      ? UPDATE_STRATEGIC_PATCH
                      : UPDATE_MERGE_PATCH,
                  a);
    } else if (r.item && strcmp(method, "DELETE") == 0 && !r.sub[0]) {
        do_delete(&r, body,
                  MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "gracePeriodSeconds"), a);
    } else {
        answer_status(a, 405, "MethodNotAllowed", NULL, NULL,
                      "the server does not allow this method on the requested resource");
    }
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *data_size, void **con_cls)
{
    (void)cls, (void)version;
    gp_kube_jalloc_thread(true); /* the pool's threads: jansson's blocks from the slabs */
    struct upload *up = *con_cls;
    if (!up) {
        *con_cls = calloc(1, sizeof *up);
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*data_size > 0) {
        if (up->len + *data_size > MAX_BODY) {
            up->over = true;
        } else {
            up->buf = realloc(up->buf, up->len + *data_size + 1);
            memcpy(up->buf + up->len, data, *data_size);
            up->len += *data_size;
            up->buf[up->len] = '\0';
        }
        *data_size = 0;
        return MHD_YES;
    }
    if (up->phase == LATE) { /* resumed: the late answer goes now */
        struct MHD_Response *stream = up->stream;
        struct answer a = up->held;
        up->stream = NULL;
        up->held.body = NULL;
        up->phase = FRESH;
        if (stream) {
            enum MHD_Result ret = MHD_queue_response(c, 200, stream);
            MHD_destroy_response(stream);
            return ret;
        }
        return send_answer(c, &a);
    }
    struct answer a = {0};
    struct MHD_Response *stream = NULL;
    json_t *body = NULL;
    if (up->over) {
        answer_status(&a, 413, "RequestEntityTooLarge", NULL, NULL,
                      "the request body is larger than %zu bytes", MAX_BODY);
        return send_answer(c, &a);
    }
    if (up->len > 0) {
        json_error_t jerr;
        body = gp_kube_jload(up->buf, up->len, 0, &jerr);
        if (!body) {
            answer_status(&a, 400, "BadRequest", NULL, NULL, "the body is not JSON: %s", jerr.text);
            return send_answer(c, &a);
        }
    }
    char user[64];
    bool control = strncmp(url, "/_control/", 10) == 0;
    if (!control && !auth_check(&AUTH, c, user, sizeof user)) {
        json_decref(body);
        answer_status(&a, 401, "Unauthorized", NULL, NULL, "Unauthorized");
        return send_answer(c, &a);
    }
    pthread_mutex_lock(&S.mu);
    if (control) {
        do_control(url + 10, method, body, &a);
    } else {
        if (up->phase == FRESH) { /* counted once, not again after its delay */
            const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
            log_request(user, method, url, w && (strcmp(w, "1") == 0 || strcmp(w, "true") == 0),
                        MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fieldSelector"));
            S.requests++;
            S.writes += strcmp(method, "GET") != 0;
        }
        if (!route_request(c, url, method, body, &a, &stream, up)) {
            /* its delay, suspended: routed when the reaper resumes it */
            if (park(&up->park, c, NULL, mono() + (double)up->fault.delay_ms / 1000)) {
                up->phase = DELAYED;
                pthread_mutex_unlock(&S.mu);
                json_decref(body);
                return MHD_YES;
            }
            up->phase = DELAYED; /* stopping: no wait */
            route_request(c, url, method, body, &a, &stream, up);
        }
        /* applied; the answer comes late (suspended until then) */
        if (a.late_ms > 0 && park(&up->park, c, NULL, mono() + (double)a.late_ms / 1000)) {
            up->phase = LATE;
            up->held = a;
            up->stream = stream;
            pthread_mutex_unlock(&S.mu);
            json_decref(body);
            return MHD_YES;
        }
    }
    pthread_mutex_unlock(&S.mu);
    json_decref(body);
    if (stream) {
        enum MHD_Result ret = MHD_queue_response(c, 200, stream);
        MHD_destroy_response(stream);
        return ret;
    }
    return send_answer(c, &a);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    struct upload *up = *con_cls;
    if (up) {
        if (up->park.on) { /* not expected: a suspended connection is not closed */
            pthread_mutex_lock(&S.mu);
            park_drop(&up->park);
            pthread_mutex_unlock(&S.mu);
        }
        if (up->stream)
            MHD_destroy_response(up->stream);
        free(up->held.body);
        free(up->buf);
        free(up);
    }
    *con_cls = NULL;
}

/* Ends graceful deletions when their time comes (every 10 ms) and resumes
 * the parked connections whose time has come (park.c), at that time. */
static void *reaper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&S.mu);
    while (!S.stopping) {
        finish_deletions(false);
        autoalloc_run();
        provision_run();
        double now = mono(), until = now + 0.010, first = park_run_due(now);
        if (first < until)
            until = first;
        S.reaper_until_s = until;
        struct timespec ts = {(time_t)until, (long)((until - (double)(time_t)until) * 1e9)};
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&S.cv, &S.mu, &ts);
    }
    pthread_mutex_unlock(&S.mu);
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: apidouble [--port N] [--bookmark-ms MS] [--watch-batch-ms MS]\n"
                    "                 [--schemas DIR]\n"
                    "                 [--tls-cert PEM --tls-key PEM [--client-ca PEM]] "
                    "[--tokens FILE]\n"
                    "                 [--auto-allocate MS] [--threads N]\n"
                    "  serves on 127.0.0.1 (port 0: any free port); prints \"port N\" once "
                    "listening; SIGTERM stops it\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long port = 0;
    const char *cert = NULL, *key = NULL, *client_ca = NULL, *tokens = NULL;
    S.bookmark_ms = 1000;
    S.watch_batch_ms = 1;
    S.grace_ms = -1;
    /* the store only grows (every version is kept for watches): heaps grown
     * 16 MiB at a time and never trimmed, where glibc's defaults grew each
     * thread's arena 128 KiB at a time (an mprotect each) and gave memory
     * back only to fault it in again */
    mallopt(M_TOP_PAD, 16 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    /* one heap for every thread (nearly all the work is under S.mu anyway):
     * grown by brk 16 MiB at a time, where a thread's own arena grew a
     * few pages at a time, an mprotect each (about 0.3 a pod in bench_kube) */
    mallopt(M_ARENA_MAX, 1);
    /* jansson's small blocks from size-class slabs with a cache per thread
     * (src/kube/jalloc.h, as the scheduler's informers): every write builds
     * a version of ~100 blocks and the oldest kept version is freed, so
     * glibc's 7-entry tcache bins were empty at each malloc (_int_malloc,
     * a sixth of the double's instructions); the pool's threads turn it on
     * in on_request, the others keep malloc */
    gp_kube_jalloc_install();
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&S.cv, &ca);
    pthread_condattr_destroy(&ca);
    unsigned threads = 1; /* nearly all the work is under S.mu: more threads contend for it */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atol(argv[++i]);
        else if (strcmp(argv[i], "--schemas") == 0 && i + 1 < argc) {
            if (!schema_load(argv[++i]))
                return 2;
        } else if (strcmp(argv[i], "--bookmark-ms") == 0 && i + 1 < argc)
            S.bookmark_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--watch-batch-ms") == 0 && i + 1 < argc)
            S.watch_batch_ms = atol(argv[++i]) > 0 ? atol(argv[i]) : 0;
        else if (strcmp(argv[i], "--tls-cert") == 0 && i + 1 < argc)
            cert = argv[++i];
        else if (strcmp(argv[i], "--tls-key") == 0 && i + 1 < argc)
            key = argv[++i];
        else if (strcmp(argv[i], "--client-ca") == 0 && i + 1 < argc)
            client_ca = argv[++i];
        else if (strcmp(argv[i], "--tokens") == 0 && i + 1 < argc)
            tokens = argv[++i];
        else if (strcmp(argv[i], "--auto-allocate") == 0 && i + 1 < argc)
            autoalloc_set(atol(argv[++i]));
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && atol(argv[i + 1]) > 0 &&
                 atol(argv[i + 1]) <= 64)
            threads = (unsigned)atol(argv[++i]);
        else
            usage();
    }
    if (!auth_load(&AUTH, cert, key, client_ca, tokens))
        return 2;
    if (port < 0 || port > 65535)
        usage();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the server's threads inherit the mask */
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* a pool of threads, each waiting in epoll(7) for any of its
     * connections (no FD_SETSIZE bound on them), where a thread per
     * connection cost two polls, a wake-up and a context switch a request;
     * nothing may block in them, so what waits is suspended (park.c:
     * MHD_ALLOW_SUSPEND_RESUME, which brings the inter-thread channel that
     * wakes a pool thread for a resumed connection) */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    struct MHD_Daemon *d;
    if (AUTH.cert_pem && AUTH.ca_pem) /* HTTPS asking for a client certificate */
        d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_request, NULL,
                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                             MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED,
                             on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 0u,
                             MHD_OPTION_HTTPS_MEM_CERT, AUTH.cert_pem, MHD_OPTION_HTTPS_MEM_KEY,
                             AUTH.key_pem, MHD_OPTION_HTTPS_MEM_TRUST, AUTH.ca_pem, MHD_OPTION_END);
    else if (AUTH.cert_pem)
        d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_request, NULL,
                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                             MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED,
                             on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 0u,
                             MHD_OPTION_HTTPS_MEM_CERT, AUTH.cert_pem, MHD_OPTION_HTTPS_MEM_KEY,
                             AUTH.key_pem, MHD_OPTION_END);
    else
        d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
                             (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE, threads,
                             MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
                             MHD_OPTION_CONNECTION_TIMEOUT, 0u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "apidouble: cannot listen on 127.0.0.1:%ld: %s\n", port, strerror(errno));
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", info ? (unsigned)info->port : (unsigned)port);
    fflush(stdout);
    pthread_t reap;
    pthread_create(&reap, NULL, reaper, NULL);
    int sig;
    sigwait(&set, &sig);
    pthread_mutex_lock(&S.mu);
    S.stopping = 1;
    pthread_cond_broadcast(&S.cv);
    park_wake_all(); /* MHD_stop_daemon must find no suspended connection */
    pthread_mutex_unlock(&S.mu);
    pthread_join(reap, NULL);
    MHD_stop_daemon(d);
    return 0;
}
