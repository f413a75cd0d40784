/* httpd.c - /metrics, /healthz and /readyz over libmicrohttpd (httpd.h). */
#include "kube/httpd.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#define TEXT_PLAIN "text/plain; charset=utf-8"

struct gp_httpd {
    struct MHD_Daemon *daemon;
    struct gp_metrics *metrics;
    bool leader_election;
    gp_httpd_ready_fn ready;
    void *ready_ctx;
    gp_httpd_ready_fn healthy;
    void *healthy_ctx;
    atomic_bool synced;
    atomic_int role;
    unsigned port;
};

bool gp_httpd_parse_addr(const char *addr, char *host, size_t hostn, unsigned *port)
{
    if (!addr || hostn == 0)
        return false;
    const char *colon;
    size_t hl;
    const char *h = addr;
    if (*addr == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':')
            return false;
        h = addr + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
        if (hl == 0)
            return false;
    } else {
        colon = strrchr(addr, ':');
        if (!colon || memchr(addr, ':', (size_t)(colon - addr)))
            return false; /* no port, or an IPv6 address without brackets */
        hl = (size_t)(colon - addr);
    }
    const char *p = colon + 1;
    if (!*p || strlen(p) > 5)
        return false;
    unsigned v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (unsigned)(*p - '0');
    }
    if (v > 65535 || hl >= hostn)
        return false;
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = v;
    return true;
}

bool gp_httpd_ready(struct gp_httpd *h, char *why, size_t n)
{
    if (!atomic_load(&h->synced)) {
        snprintf(why, n, "informers not synced");
        return false;
    }
    if (h->leader_election) {
        int role = atomic_load(&h->role);
        if (role != GP_HTTPD_ROLE_LEADER && role != GP_HTTPD_ROLE_STANDBY) {
            snprintf(why, n, "leader election: neither leader nor standby");
            return false;
        }
    }
    if (h->ready && !h->ready(h->ready_ctx, why, n))
        return false;
    return true;
}

bool gp_httpd_healthy(struct gp_httpd *h, char *why, size_t n)
{
    return !h->healthy || h->healthy(h->healthy_ctx, why, n);
}

void gp_httpd_set_synced(struct gp_httpd *h, bool synced)
{
    atomic_store(&h->synced, synced);
}

void gp_httpd_set_role(struct gp_httpd *h, enum gp_httpd_role role)
{
    atomic_store(&h->role, (int)role);
}

unsigned gp_httpd_port(const struct gp_httpd *h)
{
    return h->port;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
                              struct MHD_Response *r)
{
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
                                                             MHD_RESPMEM_MUST_COPY);
    return answer(c, status, TEXT_PLAIN, r);
}

static enum MHD_Result answer_metrics(struct gp_httpd *h, struct MHD_Connection *c)
{
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    if (h->metrics)
        gp_metrics_expose(h->metrics, &b);
    if (b.oom) {
        gp_sbuf_free(&b);
        return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    struct MHD_Response *r;
    if (b.len == 0)
        r = MHD_create_response_from_buffer(0, (void *)(uintptr_t) "", MHD_RESPMEM_PERSISTENT);
    else
        r = MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_FREE);
    if (!r)
        gp_sbuf_free(&b);
    return answer(c, MHD_HTTP_OK, GP_METRICS_CONTENT_TYPE, r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    struct gp_httpd *h = cls;
    if (!*con_cls) { /* the headers: answer on the next call, once a body is read */
        *con_cls = h;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* a body is not read */
        return MHD_YES;
    }
    bool get =
        strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    bool known =
        strcmp(url, "/metrics") == 0 || strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0;
    if (!known)
        return answer_text(c, MHD_HTTP_NOT_FOUND, "404 page not found\n");
    if (!get)
        return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strcmp(url, "/metrics") == 0)
        return answer_metrics(h, c);
    char why[200] = "", text[256];
    if (strcmp(url, "/healthz") == 0) {
        if (gp_httpd_healthy(h, why, sizeof why))
            return answer_text(c, MHD_HTTP_OK, "ok\n");
        snprintf(text, sizeof text, "unhealthy: %s\n", why);
        return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, text);
    }
    if (gp_httpd_ready(h, why, sizeof why))
        return answer_text(c, MHD_HTTP_OK, "ok\n");
    snprintf(text, sizeof text, "not ready: %s\n", why);
    return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, text);
}

static enum gp_err resolve(const char *addr, struct sockaddr_storage *sa, struct gp_diag *d)
{
    char host[256];
    unsigned port;
    if (!gp_httpd_parse_addr(addr, host, sizeof host, &port))
        return gp_diag_set(d, GP_EUSAGE, "%s: expected HOST:PORT, [IPv6]:PORT or :PORT",
                           addr ? addr : "(null)");
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = *host ? AF_UNSPEC : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[8];
    snprintf(ps, sizeof ps, "%u", port);
    int rc = getaddrinfo(*host ? host : NULL, ps, &hints, &res);
    if (rc != 0 || !res)
        return gp_diag_set(d, GP_EUSAGE, "%s: cannot resolve '%s': %s", addr, host,
                           gai_strerror(rc));
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return GP_OK;
}

enum gp_err gp_httpd_start(const struct gp_httpd_opts *o, struct gp_httpd **out,
                           struct gp_diag *diag)
{
    *out = NULL;
    struct sockaddr_storage sa;
    enum gp_err err = resolve(o->addr, &sa, diag);
    if (err != GP_OK)
        return err;
    struct gp_httpd *h = calloc(1, sizeof *h);
    if (!h)
        return gp_diag_set(diag, GP_ENOMEM, "httpd: out of memory");
    h->metrics = o->metrics;
    h->leader_election = o->leader_election;
    h->ready = o->ready;
    h->ready_ctx = o->ready_ctx;
    h->healthy = o->healthy;
    h->healthy_ctx = o->healthy_ctx;
    atomic_init(&h->synced, false);
    atomic_init(&h->role, GP_HTTPD_ROLE_NONE);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (sa.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
                                 (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                                 MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_END);
    if (!h->daemon) {
        free(h);
        return gp_diag_set(diag, GP_EIO, "%s: cannot listen (address in use, or not this host's)",
                           o->addr);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : 0;
    *out = h;
    return GP_OK;
}

void gp_httpd_stop(struct gp_httpd *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->daemon);
    free(h);
}
