/* http1.h - one HTTP/1.1 request and its answer, written and read here
 * over a keep-alive connection that libcurl opened (CURLOPT_CONNECT_ONLY:
 * libcurl's connect, proxy tunnel, TLS and its verification, client
 * certificates; then curl_easy_send and curl_easy_recv). The client's
 * non-streaming requests go this way: libcurl's own HTTP layer parses the
 * URL, looks the connection up and formats the request byte by byte on
 * every transfer (about 83,000 instructions a request, callgrind,
 * bench/RESULTS.md), where this writes the request in one buffer and
 * reads an answer framed by Content-Length, chunked encoding (RFC 9112
 * §7.1) or the connection's end (http1_parse.h: a pure function of the
 * bytes, fuzzed). A dead kept connection is found before a
 * request is sent (readable while idle: closed or garbage), and a request
 * on a reused connection that got no byte back is sent once more on a new
 * one, as libcurl does (a server closing an idle connection races with
 * the request; no byte back means no answer was begun). */
#ifndef GP_KUBE_HTTP1_H
#define GP_KUBE_HTTP1_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

struct gp_http1;

/* A connection holder; tmpl is the configured handle each connection's
 * handle is duplicated from (kept by the caller while this lives), url
 * where to connect ("https://host:port/..."). NULL: out of memory. */
struct gp_http1 *gp_http1_new(CURL *tmpl, const char *url);
void gp_http1_free(struct gp_http1 *x);

struct gp_http1_req {
    const char *method, *target;  /* "PATCH", "/api/v1/..." (the path and query) */
    const char *host;             /* the Host header's value */
    const struct curl_slist *hdr; /* more header lines ("Name: value") */
    const char *body;             /* or NULL */
    size_t body_len;
    double timeout_s;            /* the whole exchange, a connect included */
    const atomic_int *cancelled; /* stops it soon when set (or NULL) */
    /* the answer's body as it comes (decoded), libcurl's write callback's
     * contract: fewer bytes taken than given stops it (CURLE_WRITE_ERROR) */
    size_t max_body; /* a longer body stops it (CURLE_FILESIZE_EXCEEDED); 0: no cap */
    size_t (*on_body)(char *data, size_t size, size_t nmemb, void *ud);
    void *body_ud;
    /* each header line of the answer (interim 1xx heads' too, as libcurl
     * gives them), the status line first, its line end included (libcurl's
     * header callback's contract) */
    size_t (*on_header)(char *data, size_t size, size_t nmemb, void *ud);
    void *header_ud;
};

/* The exchange: CURLE_OK and *status once a whole answer came; else the
 * failure (connect errors as libcurl gives them, CURLE_GOT_NOTHING,
 * CURLE_PARTIAL_FILE, CURLE_FILESIZE_EXCEEDED, CURLE_WEIRD_SERVER_REPLY, CURLE_RECV_ERROR,
 * CURLE_SEND_ERROR, CURLE_OPERATION_TIMEDOUT, CURLE_ABORTED_BY_CALLBACK,
 * CURLE_WRITE_ERROR, CURLE_OUT_OF_MEMORY) with a line in errbuf
 * (CURL_ERROR_SIZE) and *status the answer's status when its head came. */
CURLcode gp_http1_exchange(struct gp_http1 *x, const struct gp_http1_req *rq, long *status,
                           char *errbuf);

/* A request's outcome in a pipelined exchange: rc, status and errbuf as
 * gp_http1_exchange gives them; unsent: no answer, and the server never
 * read the request (it ended the connection after an earlier answer,
 * RFC 9112 §9.6): safe to send again, whatever its method. */
struct gp_http1_res {
    CURLcode rc;
    long status;
    bool unsent;
    char errbuf[CURL_ERROR_SIZE];
};

/* Requests rq[0..n) written at once on one connection (pipelining, RFC
 * 9112 §9.3.2: one send) and their answers read in order, the bytes after
 * one answer the next one's; each answer to its own callbacks. They must
 * not depend on each other's answers. The whole under the longest
 * timeout. A kept connection that gives no byte back has them sent once
 * more on a new one, as gp_http1_exchange; when one answer fails (cut,
 * badly framed, timed out) the connection is closed and those after it
 * get CURLE_GOT_NOTHING (applied or not: unknown). */
void gp_http1_exchange_many(struct gp_http1 *x, const struct gp_http1_req *rq, size_t n,
                            struct gp_http1_res *res);

/* Connections opened so far (tests: keep-alive reuse). */
unsigned long gp_http1_connects(const struct gp_http1 *x);

#endif
