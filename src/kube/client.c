/* client.c - HTTP(S) requests to the API server with libcurl: the
 * credentials of a struct gp_kube_config, timeouts, retries, the size cap
 * and the token bucket (see client.h). A request's exchange is written and
 * read by http1.c over a kept connection libcurl opened; watch streams,
 * and every request when opts.curl_http is set, go through libcurl's own
 * HTTP layer. */
#include "kube/client.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <curl/curl.h>

#include "kube/http1.h"
#include "kube/retry.h"
#include "util/fs.h"
#include "util/rng.h"

struct gp_kube_client {
    CURL *curl;
    struct gp_kube_client_opts o;
    char *server;                  /* the server's URL as the kubeconfig gives it (messages) */
    char *base;                    /* what request URLs start with (server_name_set) */
    char *host_hdr;                /* "Host: ..." of the server's URL when base differs */
    struct curl_slist *connect_to; /* tls-server-name's redirection, or NULL */
    char *trust;      /* whom the server's certificate must be signed by, for messages */
    char *token;      /* the current bearer token, or NULL */
    char *token_file; /* or NULL */
    struct timespec token_mtime;
    ino_t token_ino;
    off_t token_size;
    struct gp_kube_bucket bucket; /* when o.limiter is NULL */
    struct gp_rng rng;
    atomic_int cancelled;
    /* the request headers, built once per content type and token (a
     * request reuses them: no list made and freed per request) */
    struct curl_slist *hdr[4]; /* none, JSON, merge patch, other (rebuilt when it differs) */
    char *hdr_other;           /* the content type of hdr[3] */
    char *hdr_token;           /* the token the lists were built with */
    char *url;                 /* the last request's URL buffer */
    size_t urlcap;
    /* requests by http1.c: its connections' handles copied from tmpl */
    CURL *tmpl;
    struct gp_http1 *h1;         /* NULL: opts.curl_http */
    char *h1_host;               /* the Host header's value */
    size_t h1_prefix_len;        /* the path of the server's URL, before each request's */
    atomic_ulong pipelined;      /* requests sent in batches */
    double stream_retry_after_s; /* the last gp_kube_stream's Retry-After (-1: none) */
    /* the stream in progress' idle limit (0: none, or no stream), when its
     * last byte came, and whether the limit ended it (on_progress) */
    double stream_idle_s, stream_rx_s;
    bool stream_idle_over;
};

/* what a transfer writes into */
struct sink {
    struct gp_kube_client *c;
    char *buf;
    size_t len, cap, max;
    bool over;
    /* streams */
    struct gp_kube_lines *lines;
    gp_kube_line_fn fn;
    void *ctx;
    bool stopped;
    enum gp_err line_err;
    struct gp_diag *diag;
};

void gp_kube_client_opts_default(struct gp_kube_client_opts *o)
{
    o->connect_timeout_s = 10;
    o->request_timeout_s = 30;
    o->max_retries = 5;
    o->backoff_base_s = 0.2;
    o->backoff_max_s = 30;
    o->retry_after_max_s = 60;
    o->max_response_bytes = (size_t)64 << 20;
    o->max_line_bytes = GP_KUBE_LINE_MAX_DEFAULT;
    o->qps = 50;
    o->burst = 100;
    o->limiter = NULL;
    o->watch_idle_s = 120;
    o->tcp_keepalive_s = 30;
    o->seed = 1;
    o->curl_http = false;
}

void gp_kube_response_free(struct gp_kube_response *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A token for one request (attempt) from the client's bucket or the
 * limiter it shares: how long to wait before sending it. */
static double throttle_s(struct gp_kube_client *c)
{
    return c->o.limiter ? gp_kube_limiter_take(c->o.limiter, now_s())
                        : gp_kube_bucket_take(&c->bucket, now_s());
}

/* Sleeps s seconds in slices, stopping early when cancelled. */
static void nap(struct gp_kube_client *c, double s)
{
    double end = now_s() + s;
    for (double left = s; left > 0 && !atomic_load(&c->cancelled); left = end - now_s()) {
        double slice = left < 0.05 ? left : 0.05;
        struct timespec ts = {(time_t)slice, (long)((slice - (double)(time_t)slice) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static enum gp_err token_refresh(struct gp_kube_client *c, struct gp_diag *diag)
{
    if (!c->token_file)
        return GP_OK;
    struct stat st;
    if (stat(c->token_file, &st) != 0)
        return c->token ? GP_OK /* keep the last one through a rotation's gap */
                        : gp_diag_set(diag, GP_ENOTFOUND, "%s: cannot read the token file",
                                      c->token_file);
    if (c->token && st.st_ino == c->token_ino && st.st_size == c->token_size &&
        st.st_mtim.tv_sec == c->token_mtime.tv_sec && st.st_mtim.tv_nsec == c->token_mtime.tv_nsec)
        return GP_OK;
    char *text;
    size_t len;
    enum gp_err err = gp_fs_read(c->token_file, &text, &len, diag);
    if (err != GP_OK)
        return c->token ? GP_OK : err;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = '\0';
    if (len == 0 || strpbrk(text, "\r\n")) {
        free(text);
        return c->token ? GP_OK : gp_diag_set(diag, GP_EINVALID, "%s: not a token", c->token_file);
    }
    free(c->token);
    c->token = text;
    c->token_ino = st.st_ino;
    c->token_size = st.st_size;
    c->token_mtime = st.st_mtim;
    return GP_OK;
}

static enum gp_err set_pem(CURL *curl, CURLoption file_opt, CURLoption blob_opt,
                           const struct gp_kube_pem *p)
{
    if (p->file)
        return curl_easy_setopt(curl, file_opt, p->file) == CURLE_OK ? GP_OK : GP_EUNSUPPORTED;
    if (p->data) {
        struct curl_blob blob = {(void *)(uintptr_t)p->data, p->len, CURL_BLOB_COPY};
        return curl_easy_setopt(curl, blob_opt, &blob) == CURLE_OK ? GP_OK : GP_EUNSUPPORTED;
    }
    return GP_OK;
}

/* The kubeconfig's tls-server-name: the name the server's certificate is
 * checked against (and sent as SNI) in place of the URL's host, as
 * client-go's TLSClientConfig.ServerName (k8s.io/client-go/rest/config.go)
 * does. libcurl checks the URL's host, so requests go to
 * https://NAME:PORT/..., the connection redirected to the server's own host
 * and port with CURLOPT_CONNECT_TO (which changes where it connects, not
 * the name TLS checks: curl's docs), and the Host header is the server
 * URL's, as Go's client sends it. Plain http: nothing to do. */
static enum gp_err server_name_set(struct gp_kube_client *c, const struct gp_kube_config *cfg,
                                   struct gp_diag *diag)
{
    const char *name = cfg->tls_server_name, *srv = cfg->server;
    if (!name || !name[0] || strncmp(srv, "https://", 8) != 0)
        return GP_OK;
    if (strpbrk(name, ":/[]@ \t\r\n?#%"))
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: tls-server-name: \"%s\" is not a host name (no port, no scheme)",
                           cfg->source ? cfg->source : "kubeconfig", name);
    const char *auth = srv + 8, *path = auth + strcspn(auth, "/");
    const char *colon = NULL; /* the port's, after an IPv6 address's ']' */
    const char *close = auth[0] == '[' ? memchr(auth, ']', (size_t)(path - auth)) : NULL;
    for (const char *p = close ? close : auth; p < path; p++)
        if (*p == ':')
            colon = p;
    int hostlen = (int)((colon ? colon : path) - auth);
    const char *port = colon ? colon + 1 : "443";
    int portlen = colon ? (int)(path - colon - 1) : 3;
    size_t n = strlen(srv) + strlen(name) + 32;
    c->base = malloc(n);
    c->host_hdr = malloc(n);
    char *ct = malloc(n * 2);
    if (!c->base || !c->host_hdr || !ct) {
        free(ct);
        return gp_diag_set(diag, GP_ENOMEM, "kube client: out of memory");
    }
    snprintf(c->base, n, "https://%s:%.*s%s", name, portlen, port, path);
    snprintf(c->host_hdr, n, "Host: %.*s", (int)(path - auth), auth);
    snprintf(ct, n * 2, "%s:%.*s:%.*s:%.*s", name, portlen, port, hostlen, auth, portlen, port);
    c->connect_to = curl_slist_append(NULL, ct);
    free(ct);
    if (!c->connect_to)
        return gp_diag_set(diag, GP_ENOMEM, "kube client: out of memory");
    curl_easy_setopt(c->curl, CURLOPT_CONNECT_TO, c->connect_to);
    return GP_OK;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un);

/* http1.c's side: a copy of the configured handle its connections' are
 * made from (cancel seen while connecting), the Host header's value (the
 * server URL's host and port, or tls-server-name's redirection's) and the
 * server URL's path, which every request's path follows. */
static enum gp_err h1_set(struct gp_kube_client *c, struct gp_diag *diag)
{
    const char *base = c->base ? c->base : c->server;
    const char *auth = strstr(base, "://");
    auth = auth ? auth + 3 : base;
    size_t alen = strcspn(auth, "/?#");
    c->h1_prefix_len = strlen(auth + alen);
    c->tmpl = curl_easy_duphandle(c->curl);
    c->h1_host = c->host_hdr ? strdup(c->host_hdr + 6) : strndup(auth, alen);
    if (c->tmpl) {
        curl_easy_setopt(c->tmpl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c->tmpl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c->tmpl, CURLOPT_XFERINFODATA, c);
        c->h1 = gp_http1_new(c->tmpl, base);
    }
    return c->h1 && c->h1_host ? GP_OK : gp_diag_set(diag, GP_ENOMEM, "kube client: out of memory");
}

enum gp_err gp_kube_client_new(const struct gp_kube_config *cfg,
                               const struct gp_kube_client_opts *opts, struct gp_kube_client **out,
                               struct gp_diag *diag)
{
    static atomic_int global_done;
    if (atomic_exchange(&global_done, 1) == 0)
        curl_global_init(CURL_GLOBAL_DEFAULT);
    *out = NULL;
    struct gp_kube_client *c = calloc(1, sizeof *c);
    if (!c)
        return gp_diag_set(diag, GP_ENOMEM, "kube client: out of memory");
    c->stream_retry_after_s = -1;
    if (opts)
        c->o = *opts;
    else
        gp_kube_client_opts_default(&c->o);
    c->curl = curl_easy_init();
    c->server = strdup(cfg->server);
    const char *src = cfg->source ? cfg->source : "the kubeconfig";
    size_t tn = strlen(src) + (cfg->ca.file ? strlen(cfg->ca.file) : 0) + 64;
    c->trust = malloc(tn);
    if (c->trust && cfg->ca.file)
        snprintf(c->trust, tn, "%s", cfg->ca.file);
    else if (c->trust && cfg->ca.data)
        snprintf(c->trust, tn, "the certificate-authority-data of %s", src);
    else if (c->trust)
        snprintf(c->trust, tn, "the system's CA bundle");
    c->token = cfg->token ? strdup(cfg->token) : NULL;
    c->token_file = cfg->token_file ? strdup(cfg->token_file) : NULL;
    if (!c->curl || !c->server || !c->trust || (cfg->token && !c->token) ||
        (cfg->token_file && !c->token_file)) {
        gp_kube_client_free(c);
        return gp_diag_set(diag, GP_ENOMEM, "kube client: out of memory");
    }
    gp_rng_seed(&c->rng, c->o.seed);
    gp_kube_bucket_init(&c->bucket, c->o.qps, c->o.burst, now_s());
    CURL *h = c->curl;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, cfg->insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, cfg->insecure ? 0L : 2L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->o.connect_timeout_s * 1000));
    if (c->o.tcp_keepalive_s > 0) { /* on c->curl: h1_set's template and so http1.c's
                                     * connections (curl_easy_duphandle) have it too */
        long ka = c->o.tcp_keepalive_s >= 1 ? (long)c->o.tcp_keepalive_s : 1L;
        curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, ka);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, ka);
    }
    enum gp_err err = set_pem(h, CURLOPT_CAINFO, CURLOPT_CAINFO_BLOB, &cfg->ca);
    if (err == GP_OK && (cfg->cert.file || cfg->cert.data)) {
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
        err = set_pem(h, CURLOPT_SSLCERT, CURLOPT_SSLCERT_BLOB, &cfg->cert);
        if (err == GP_OK)
            err = set_pem(h, CURLOPT_SSLKEY, CURLOPT_SSLKEY_BLOB, &cfg->key);
    }
    if (err != GP_OK) {
        gp_kube_client_free(c);
        return gp_diag_set(diag, err, "%s: this libcurl cannot take PEM data in memory",
                           cfg->source ? cfg->source : "kubeconfig");
    }
    err = server_name_set(c, cfg, diag);
    if (err == GP_OK && !c->o.curl_http)
        err = h1_set(c, diag);
    if (err == GP_OK)
        err = token_refresh(c, diag);
    if (err != GP_OK) {
        gp_kube_client_free(c);
        return err;
    }
    *out = c;
    return GP_OK;
}

void gp_kube_client_free(struct gp_kube_client *c)
{
    if (!c)
        return;
    gp_http1_free(c->h1);
    if (c->tmpl)
        curl_easy_cleanup(c->tmpl);
    free(c->h1_host);
    if (c->curl)
        curl_easy_cleanup(c->curl);
    for (size_t i = 0; i < 4; i++)
        curl_slist_free_all(c->hdr[i]);
    curl_slist_free_all(c->connect_to);
    free(c->base);
    free(c->host_hdr);
    free(c->hdr_other);
    free(c->hdr_token);
    free(c->url);
    free(c->server);
    free(c->trust);
    free(c->token);
    free(c->token_file);
    free(c);
}

void gp_kube_client_cancel(struct gp_kube_client *c)
{
    atomic_store(&c->cancelled, 1);
}

const char *gp_kube_client_server(const struct gp_kube_client *c)
{
    return c->server;
}

unsigned long gp_kube_client_pipelined(const struct gp_kube_client *c)
{
    return atomic_load(&c->pipelined);
}

unsigned long gp_kube_client_connects(const struct gp_kube_client *c)
{
    return c->h1 ? gp_http1_connects(c->h1) : 0;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t n = size * nmemb;
    if (s->lines) {
        s->c->stream_rx_s = now_s();
        long code = 0;
        curl_easy_getinfo(s->c->curl, CURLINFO_RESPONSE_CODE, &code);
        if (code == 200) {
            s->line_err = gp_kube_lines_feed(s->lines, data, n, s->fn, s->ctx, s->diag);
            if (s->line_err == GP_ESTATE) {
                s->stopped = true;
                return 0;
            }
            return s->line_err == GP_OK ? n : 0;
        }
    }
    if (n > s->max - s->len) {
        s->over = true;
        return 0;
    }
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 8192;
        while (cap < s->len + n + 1)
            cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) {
            s->over = true;
            return 0;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = '\0';
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    struct gp_kube_client *c = ud;
    if (atomic_load(&c->cancelled))
        return 1;
    /* a stream's idle limit: libcurl calls this about once a second while
     * nothing comes (CURLOPT_XFERINFOFUNCTION), so the limit is kept to
     * about a second; client-go's HTTP/2 health check plays this part for
     * its watches (k8s.io/apimachinery/pkg/util/net/http.go,
     * configureHTTP2Transport: a PING after readIdleTimeoutSeconds 30 s
     * without a frame, the connection closed when none is answered in
     * pingTimeoutSeconds 15 s); over HTTP/1.1 no ping exists, so silence
     * itself is the sign, past the server's bookmark period */
    if (c->stream_idle_s > 0 && now_s() - c->stream_rx_s > c->stream_idle_s) {
        c->stream_idle_over = true;
        return 1;
    }
    return 0;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    double *retry_after = ud;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n > sizeof name && strncasecmp(data, name, sizeof name - 1) == 0) {
        char v[32];
        size_t vl = n - (sizeof name - 1) < sizeof v - 1 ? n - (sizeof name - 1) : sizeof v - 1;
        memcpy(v, data + sizeof name - 1, vl);
        v[vl] = '\0';
        *retry_after = gp_kube_retry_after_parse(v);
    }
    return n;
}

static struct curl_slist *headers_make(const char *content_type, const char *token,
                                       const char *host)
{
    struct curl_slist *hdr = curl_slist_append(NULL, "Accept: application/json");
    char line[4096];
    if (hdr) { /* in the list, not CURLOPT_USERAGENT: libcurl formats that anew per request */
        struct curl_slist *n = curl_slist_append(hdr, "User-Agent: gpuplane/" GP_VERSION);
        if (!n)
            curl_slist_free_all(hdr);
        hdr = n;
    }
    if (hdr && host) {
        struct curl_slist *n = curl_slist_append(hdr, host);
        if (!n)
            curl_slist_free_all(hdr);
        hdr = n;
    }
    if (hdr && content_type) {
        snprintf(line, sizeof line, "Content-Type: %s", content_type);
        struct curl_slist *n = curl_slist_append(hdr, line);
        if (!n)
            curl_slist_free_all(hdr);
        hdr = n;
    }
    if (hdr && token) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", token);
        struct curl_slist *n = curl_slist_append(hdr, line);
        if (!n)
            curl_slist_free_all(hdr);
        hdr = n;
    }
    return hdr;
}

/* The headers of a request: Accept, the content type, the bearer token;
 * kept on the client until the token changes. NULL: out of memory. */
static struct curl_slist *headers(struct gp_kube_client *c, const char *content_type)
{
    if ((c->token == NULL) != (c->hdr_token == NULL) ||
        (c->token && strcmp(c->token, c->hdr_token) != 0)) { /* a new token: new lists */
        for (size_t i = 0; i < 4; i++) {
            curl_slist_free_all(c->hdr[i]);
            c->hdr[i] = NULL;
        }
        free(c->hdr_token);
        c->hdr_token = c->token ? strdup(c->token) : NULL;
        if (c->token && !c->hdr_token)
            return NULL;
    }
    size_t k = !content_type                                               ? 0
               : strcmp(content_type, "application/json") == 0             ? 1
               : strcmp(content_type, "application/merge-patch+json") == 0 ? 2
                                                                           : 3;
    if (k == 3 && c->hdr[3] && strcmp(c->hdr_other, content_type) != 0) {
        curl_slist_free_all(c->hdr[3]);
        c->hdr[3] = NULL;
    }
    if (!c->hdr[k]) {
        if (k == 3) {
            free(c->hdr_other);
            if (!(c->hdr_other = strdup(content_type)))
                return NULL;
        }
        c->hdr[k] = headers_make(content_type, c->token, c->host_hdr);
    }
    return c->hdr[k];
}

/* One transfer: *code is the status (0 when none came). */
static CURLcode perform(struct gp_kube_client *c, const char *method, const char *path,
                        const char *body, const char *content_type, double timeout_s,
                        struct sink *s, double *retry_after, long *code, char *errbuf)
{
    CURL *h = c->curl;
    const char *base = c->base ? c->base : c->server;
    size_t need = strlen(base) + strlen(path) + 1;
    if (need > c->urlcap) {
        char *u = realloc(c->url, need);
        if (!u)
            return CURLE_OUT_OF_MEMORY;
        c->url = u;
        c->urlcap = need;
    }
    char *url = c->url;
    strcpy(url, base);
    strcat(url, path);
    struct curl_slist *hdr = headers(c, content_type);
    if (!hdr)
        return CURLE_OUT_OF_MEMORY;
    if (c->h1 && !s->lines) { /* the exchange by http1.c */
        struct gp_http1_req rq = {.method = method,
                                  .target = url + strlen(base) - c->h1_prefix_len,
                                  .host = c->h1_host,
                                  .hdr = hdr,
                                  .body = body,
                                  .body_len = body ? strlen(body) : 0,
                                  .timeout_s = timeout_s,
                                  .cancelled = &c->cancelled,
                                  .on_body = on_write,
                                  .body_ud = s,
                                  .max_body = s->max,
                                  .on_header = on_header,
                                  .header_ud = retry_after};
        *retry_after = -1;
        return gp_http1_exchange(c->h1, &rq, code, errbuf);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") == 0 ? NULL : method);
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, retry_after);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, s->lines ? (curl_off_t)0 : (curl_off_t)s->max);
    errbuf[0] = '\0';
    *retry_after = -1;
    CURLcode rc = curl_easy_perform(h);
    *code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    return rc;
}

static const char *curl_why(CURLcode rc, const char *errbuf)
{
    return errbuf[0] ? errbuf : curl_easy_strerror(rc);
}

/* TLS failures that another attempt will not mend (not retried). */
static bool tls_refused(CURLcode rc)
{
    return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
           rc == CURLE_SSL_CERTPROBLEM;
}

/* The one line of a failed transfer. */
static enum gp_err transfer_failed(struct gp_kube_client *c, const char *method, const char *path,
                                   CURLcode rc, const char *errbuf, bool retried,
                                   struct gp_diag *diag)
{
    if (rc == CURLE_PEER_FAILED_VERIFICATION)
        return gp_diag_set(diag, GP_EIO,
                           "%s %s%s: the server's certificate is not signed by the CA trusted "
                           "(%s), or not for this host: %s",
                           method, c->server, path, c->trust, curl_why(rc, errbuf));
    if (rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM)
        return gp_diag_set(diag, GP_EINVALID, "%s %s%s: %s: %s", method, c->server, path,
                           rc == CURLE_SSL_CERTPROBLEM ? "the client certificate or key is unusable"
                                                       : "the CA is unusable",
                           curl_why(rc, errbuf));
    return gp_diag_set(diag, rc == CURLE_OUT_OF_MEMORY ? GP_ENOMEM : GP_EIO, "%s %s%s: %s%s",
                       method, c->server, path, curl_why(rc, errbuf),
                       retried ? " (after retries)" : "");
}

/* What attempt `attempt` of a request came to: true, the request is over
 * (*err, and r when GP_OK; s->buf taken or freed); false, it is tried
 * again after *backoff_s (s->buf freed). */
static bool attempt_over(struct gp_kube_client *c, const char *method, const char *path,
                         unsigned attempt, struct sink *s, CURLcode rc, long code,
                         double retry_after, const char *errbuf, struct gp_kube_response *r,
                         enum gp_err *err, double *backoff_s, struct gp_diag *diag)
{
    r->attempts = attempt + 1;
    if (s->over || rc == CURLE_FILESIZE_EXCEEDED) {
        free(s->buf);
        *err = gp_diag_set(diag, GP_ELIMIT, "%s %s%s: the answer is larger than %zu bytes", method,
                           c->server, path, c->o.max_response_bytes);
        return true;
    }
    if (atomic_load(&c->cancelled)) {
        free(s->buf);
        *err = gp_diag_set(diag, GP_ESTATE, "%s %s%s: cancelled", method, c->server, path);
        return true;
    }
    bool retry;
    if (rc != CURLE_OK)
        retry = strcmp(method, "GET") == 0 && !tls_refused(rc);
    else
        retry = gp_kube_status_retryable(code);
    if (!retry || attempt >= c->o.max_retries) {
        if (rc != CURLE_OK) {
            free(s->buf);
            *err = transfer_failed(c, method, path, rc, errbuf, attempt > 0, diag);
            return true;
        }
        r->status = code;
        r->body = s->buf ? s->buf : strdup("");
        r->len = s->len;
        *err = r->body ? GP_OK : gp_diag_set(diag, GP_ENOMEM, "out of memory");
        return true;
    }
    free(s->buf);
    double d = gp_kube_backoff_s(c->o.backoff_base_s, c->o.backoff_max_s, attempt + 1, &c->rng);
    if (rc == CURLE_OK && code == 429 && retry_after >= 0)
        d = retry_after < c->o.retry_after_max_s ? retry_after : c->o.retry_after_max_s;
    *backoff_s = d;
    return false;
}

/* A request's attempts from `first` on (r as it is: its waits add up). */
static enum gp_err request_from(struct gp_kube_client *c, const char *method, const char *path,
                                const char *body, const char *content_type, unsigned first,
                                struct gp_kube_response *r, struct gp_diag *diag)
{
    for (unsigned attempt = first;; attempt++) {
        enum gp_err err = token_refresh(c, diag);
        if (err != GP_OK)
            return err;
        double wait = throttle_s(c);
        if (wait > 0) {
            nap(c, wait);
            r->waited_s += wait;
        }
        struct sink s = {.c = c, .max = c->o.max_response_bytes};
        double retry_after, backoff_s = 0;
        long code;
        char errbuf[CURL_ERROR_SIZE];
        CURLcode rc = perform(c, method, path, body, content_type, c->o.request_timeout_s, &s,
                              &retry_after, &code, errbuf);
        if (attempt_over(c, method, path, attempt, &s, rc, code, retry_after, errbuf, r, &err,
                         &backoff_s, diag))
            return err;
        nap(c, backoff_s);
        r->waited_s += backoff_s;
    }
}

enum gp_err gp_kube_request(struct gp_kube_client *c, const char *method, const char *path,
                            const char *body, const char *content_type, struct gp_kube_response *r,
                            struct gp_diag *diag)
{
    memset(r, 0, sizeof *r);
    return request_from(c, method, path, body, content_type, 0, r, diag);
}

/* Calls that can go pipelined: on http1.c, header lists that stay put
 * while the batch is written (no content type of hdr[3]'s kind), at most
 * GP_KUBE_BATCH_MAX. */
static bool batchable(const struct gp_kube_client *c, const struct gp_kube_call *k, size_t n)
{
    if (!c->h1 || n < 2 || n > GP_KUBE_BATCH_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (k[i].content_type && strcmp(k[i].content_type, "application/json") != 0 &&
            strcmp(k[i].content_type, "application/merge-patch+json") != 0)
            return false;
    return true;
}

void gp_kube_request_many(struct gp_kube_client *c, struct gp_kube_call *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        memset(&k[i].r, 0, sizeof k[i].r);
        k[i].d.msg[0] = '\0';
    }
    if (!batchable(c, k, n)) {
        for (size_t i = 0; i < n; i++)
            k[i].err = request_from(c, k[i].method, k[i].path, k[i].body, k[i].content_type, 0,
                                    &k[i].r, &k[i].d);
        return;
    }
    enum gp_err err = token_refresh(c, &k[0].d);
    for (size_t i = 0; i < n; i++) {
        double wait = throttle_s(c);
        if (wait > 0) { /* the tokens taken one after another: the last one's wait */
            nap(c, wait);
            k[i].r.waited_s += wait;
        }
    }
    const char *base = c->base ? c->base : c->server;
    size_t prefix = strlen(base) - c->h1_prefix_len, room = 0;
    for (size_t i = 0; i < n; i++)
        room += c->h1_prefix_len + strlen(k[i].path) + 1;
    char *targets = err == GP_OK ? malloc(room) : NULL;
    struct gp_http1_req rq[GP_KUBE_BATCH_MAX];
    struct gp_http1_res res[GP_KUBE_BATCH_MAX];
    struct sink s[GP_KUBE_BATCH_MAX];
    double retry_after[GP_KUBE_BATCH_MAX];
    char *t = targets;
    for (size_t i = 0; targets && i < n; i++) {
        struct curl_slist *hdr = headers(c, k[i].content_type);
        if (!hdr) {
            free(targets);
            targets = NULL;
            break;
        }
        size_t pl = strlen(k[i].path);
        memcpy(t, base + prefix, c->h1_prefix_len);
        memcpy(t + c->h1_prefix_len, k[i].path, pl + 1);
        s[i] = (struct sink){.c = c, .max = c->o.max_response_bytes};
        retry_after[i] = -1;
        rq[i] = (struct gp_http1_req){.method = k[i].method,
                                      .target = t,
                                      .host = c->h1_host,
                                      .hdr = hdr,
                                      .body = k[i].body,
                                      .body_len = k[i].body ? strlen(k[i].body) : 0,
                                      .timeout_s = c->o.request_timeout_s,
                                      .cancelled = &c->cancelled,
                                      .on_body = on_write,
                                      .body_ud = &s[i],
                                      .max_body = s[i].max,
                                      .on_header = on_header,
                                      .header_ud = &retry_after[i]};
        t += c->h1_prefix_len + pl + 1;
    }
    if (!targets) {
        struct gp_diag why = k[0].d;
        for (size_t i = 0; i < n; i++)
            k[i].err = err != GP_OK ? gp_diag_set(&k[i].d, err, "%s", why.msg)
                                    : gp_diag_set(&k[i].d, GP_ENOMEM, "out of memory");
        return;
    }
    gp_http1_exchange_many(c->h1, rq, n, res);
    atomic_fetch_add(&c->pipelined, n);
    free(targets);
    for (size_t i = 0; i < n; i++) {
        struct gp_kube_call *ki = &k[i];
        double backoff_s = 0;
        if (res[i].unsent) { /* never read by the server: sent again, alone */
            free(s[i].buf);
            ki->err = request_from(c, ki->method, ki->path, ki->body, ki->content_type, 0, &ki->r,
                                   &ki->d);
            continue;
        }
        if (attempt_over(c, ki->method, ki->path, 0, &s[i], res[i].rc, res[i].status,
                         retry_after[i], res[i].errbuf, &ki->r, &ki->err, &backoff_s, &ki->d))
            continue;
        nap(c, backoff_s);
        ki->r.waited_s += backoff_s;
        ki->err =
            request_from(c, ki->method, ki->path, ki->body, ki->content_type, 1, &ki->r, &ki->d);
    }
}

enum gp_err gp_kube_stream(struct gp_kube_client *c, const char *path, double timeout_s,
                           gp_kube_line_fn fn, void *ctx, long *status, char **err_body,
                           struct gp_diag *diag)
{
    *status = 0;
    if (err_body)
        *err_body = NULL;
    enum gp_err err = token_refresh(c, diag);
    if (err != GP_OK)
        return err;
    /* no token taken: client-go does not rate limit watches
     * (k8s.io/client-go/rest/request.go, Request.Watch, v1.28: "We
     * specifically don't want to rate limit watches"), and a watch waiting
     * behind the binders' writes would leave its informer blind */
    struct gp_kube_lines lines;
    gp_kube_lines_init(&lines, c->o.max_line_bytes);
    struct sink s = {.c = c, .max = 65536, .lines = &lines, .fn = fn, .ctx = ctx, .diag = diag};
    double retry_after;
    char errbuf[CURL_ERROR_SIZE];
    c->stream_idle_s = c->o.watch_idle_s;
    c->stream_rx_s = now_s();
    c->stream_idle_over = false;
    CURLcode rc = perform(c, "GET", path, NULL, NULL, timeout_s, &s, &retry_after, status, errbuf);
    c->stream_idle_s = 0;
    c->stream_retry_after_s = retry_after < 0                        ? -1
                              : retry_after < c->o.retry_after_max_s ? retry_after
                                                                     : c->o.retry_after_max_s;
    gp_kube_lines_free(&lines);
    if (err_body)
        *err_body = s.buf;
    else
        free(s.buf);
    if (s.stopped || rc == CURLE_OK || rc == CURLE_OPERATION_TIMEDOUT)
        return (rc == CURLE_OPERATION_TIMEDOUT && *status == 0)
                   ? gp_diag_set(diag, GP_EIO, "GET %s%s: %s", c->server, path,
                                 curl_why(rc, errbuf))
                   : GP_OK;
    if (s.line_err != GP_OK)
        return s.line_err; /* diag set by the line feed */
    if (c->stream_idle_over && !atomic_load(&c->cancelled))
        return gp_diag_set(diag, GP_EIO,
                           "GET %s%s: nothing received for %g s (watch_idle_s): the connection "
                           "is taken as dropped",
                           c->server, path, c->o.watch_idle_s);
    if (atomic_load(&c->cancelled))
        return gp_diag_set(diag, GP_ESTATE, "GET %s%s: cancelled", c->server, path);
    return transfer_failed(c, "GET", path, rc, errbuf, false, diag);
}

double gp_kube_client_stream_retry_after(const struct gp_kube_client *c)
{
    return c->stream_retry_after_s;
}

enum gp_err gp_kube_status_err(long status, const char *body, const char *method, const char *path,
                               struct gp_diag *diag)
{
    if (status >= 200 && status < 300)
        return GP_OK;
    enum gp_err err = GP_EIO;
    if (status == 404)
        err = GP_ENOTFOUND;
    else if (status == 409 || status == 410)
        err = GP_ESTATE;
    else if (status == 400 || status == 422)
        err = GP_EINVALID;
    else if (status == 401 || status == 403)
        err = GP_EUSAGE;
    else if (status == 413 || status == 429)
        err = GP_ELIMIT;
    const char *msg = "";
    json_t *doc = body ? json_loads(body, 0, NULL) : NULL;
    json_t *m = json_object_get(doc, "message");
    if (json_is_string(m))
        msg = json_string_value(m);
    gp_diag_set(diag, err, "%s %s: HTTP %ld%s%s", method, path, status, msg[0] ? ": " : "", msg);
    json_decref(doc);
    return err;
}
