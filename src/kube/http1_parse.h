/* http1_parse.h - an HTTP/1.1 answer read from bytes given in pieces, as
 * they come (no socket, no allocation): the status line and header lines
 * (RFC 9112 §4, §5), interim 1xx answers skipped, the body framed by
 * Transfer-Encoding: chunked (§7.1: extensions and trailers read and
 * dropped), Content-Length (§6.3) or the connection's end, its decoded
 * bytes handed on as they come under a size cap; whether the connection
 * may carry another request. http1.c reads its answers with it; the
 * verdict does not depend on how the bytes are split. */
#ifndef GP_KUBE_HTTP1_PARSE_H
#define GP_KUBE_HTTP1_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* An answer's head, a chunk-size line, the trailer section: at most this
 * many bytes each (a longer one is bad). */
#define GP_HTTP1_HEAD_MAX ((size_t)64 << 10)

enum gp_http1_verdict {
    GP_HTTP1_MORE,    /* all of it used, or the unused rest wanted again with more */
    GP_HTTP1_DONE,    /* a whole answer; the bytes after it are not its */
    GP_HTTP1_BAD,     /* not an HTTP/1.x answer, or badly framed (why says how) */
    GP_HTTP1_OVER,    /* its body is longer than max_body */
    GP_HTTP1_REFUSED, /* on_body took fewer bytes than it was given */
    GP_HTTP1_CUT,     /* (gp_http1_parse_end) the end came within the answer */
    GP_HTTP1_NOTHING, /* (gp_http1_parse_end) the end came before any byte */
};

struct gp_http1_parse {
    /* set by the caller (gp_http1_parse_init) */
    bool head_only;  /* the answer to a HEAD: no body whatever the head says */
    size_t max_body; /* the decoded body's cap in bytes; 0: none */
    /* each line of each head (interim ones too), its line end included
     * (libcurl's header callback's contract; what it returns is ignored) */
    size_t (*on_header)(char *data, size_t size, size_t nmemb, void *ud);
    void *header_ud;
    /* the decoded body as it comes, in pieces (libcurl's write callback's
     * contract: fewer bytes taken than given stops it) */
    size_t (*on_body)(char *data, size_t size, size_t nmemb, void *ud);
    void *body_ud;
    /* the answer, once its final head came */
    long status;     /* 0 until then */
    bool keep;       /* (DONE) the connection may carry another request */
    bool close;      /* (DONE) the server ends the connection after it (Connection: close,
                      * HTTP/1.0 without keep-alive, or a body to the end): it reads no
                      * request sent after the one this answers (RFC 9112 §9.6) */
    const char *why; /* (BAD and the others) what was wrong, one line */
    /* the parser's own */
    int phase, verdict;
    bool any;  /* a byte came */
    long code; /* the status line's, of the head being read */
    bool http10, chunked, has_len, keepalive, framing_line;
    bool mixed; /* Transfer-Encoding and Content-Length both: not kept */
    unsigned long long len, left, body_bytes; /* Content-Length; what is left; what came */
    size_t head_bytes;                        /* of the head or trailer section so far */
    size_t seen;                              /* the unused rest's bytes known to hold no LF */
};

/* Ready for an answer; callbacks NULL: nothing handed on. */
void gp_http1_parse_init(struct gp_http1_parse *p, bool head_only, size_t max_body);

/* Reads buf[0..n): *used bytes of it were taken. MORE: buf[*used..n) was
 * not (a line not whole yet) and must begin the next call's bytes, more
 * after it. DONE: buf[*used..n) belongs to what comes after the answer.
 * A verdict other than MORE is final (called again, it answers the same
 * and takes nothing). buf is only read (not const: the callbacks'
 * contract), never past n; on_header and on_body are given pointers into
 * it. */
enum gp_http1_verdict gp_http1_parse_feed(struct gp_http1_parse *p, char *buf, size_t n,
                                          size_t *used);

/* The connection ended: DONE for a body framed by the end (keep false),
 * NOTHING when no byte came, CUT within an answer; a final verdict stays. */
enum gp_http1_verdict gp_http1_parse_end(struct gp_http1_parse *p);

#endif
