/* http1_parse.c - an HTTP/1.1 answer read from bytes in pieces (see
 * http1_parse.h): lines (a bare LF ends one too, RFC 9112 §2.2), the
 * status line (§4), field lines (§5: no whitespace before the colon, an
 * obs-fold line ignored unless it continues a framing field), the body's
 * length (§6.3: Transfer-Encoding chunked over Content-Length, which then
 * keeps the connection from reuse; Content-Length values all the same;
 * 1xx, 204, 304 and a HEAD's answer without a body; else to the end of the
 * connection) and the chunked coding (§7.1). */
#include "kube/http1_parse.h"

#include <string.h>
#include <strings.h>

enum phase {
    PH_HEAD,    /* the lines of a head */
    PH_LEN,     /* a body of Content-Length bytes: left of them */
    PH_CSIZE,   /* a chunk-size line */
    PH_CDATA,   /* a chunk's data: left of it */
    PH_CEND,    /* the line end after a chunk's data */
    PH_TRAILER, /* the trailer section's lines */
    PH_EOF,     /* a body to the connection's end */
    PH_FINAL,   /* verdict said */
};

#define LEN_MAX ((1ULL << 62) - 1) /* a Content-Length's largest */

static const char NOT_HTTP[] = "not an HTTP/1.1 answer";
static const char BAD_BODY[] = "a badly framed answer body";

void gp_http1_parse_init(struct gp_http1_parse *p, bool head_only, size_t max_body)
{
    memset(p, 0, sizeof *p);
    p->head_only = head_only;
    p->max_body = max_body;
    p->phase = PH_HEAD;
}

static enum gp_http1_verdict final(struct gp_http1_parse *p, enum gp_http1_verdict v,
                                   const char *why)
{
    p->phase = PH_FINAL;
    p->verdict = v;
    p->why = why;
    return v;
}

/* A whole answer: the connection kept unless the server closes it or the
 * framing was in doubt. */
static enum gp_http1_verdict done(struct gp_http1_parse *p)
{
    p->keep = !p->close && !p->mixed;
    return final(p, GP_HTTP1_DONE, NULL);
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* The next comma-separated element of v[*at..n), OWS trimmed: its start
 * and *len; false when none is left. Empty elements are skipped (RFC 9110
 * §5.6.1). */
static bool list_next(const char *v, size_t n, size_t *at, const char **el, size_t *len)
{
    while (*at < n) {
        size_t s = *at, e = s;
        while (e < n && v[e] != ',')
            e++;
        *at = e < n ? e + 1 : e;
        while (s < e && is_ows(v[s]))
            s++;
        while (e > s && is_ows(v[e - 1]))
            e--;
        if (e > s) {
            *el = v + s;
            *len = e - s;
            return true;
        }
    }
    return false;
}

static bool token_is(const char *t, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(t, word, n) == 0;
}

/* Content-Length: one decimal value, or a list of the same one (§6.3
 * item 5), the same as any before; below 2^62. */
static bool length_read(struct gp_http1_parse *p, const char *v, size_t n)
{
    size_t at = 0, k;
    const char *el;
    bool one = false;
    while (list_next(v, n, &at, &el, &k)) {
        unsigned long long x = 0;
        for (size_t i = 0; i < k; i++) {
            unsigned d = (unsigned)(el[i] - '0');
            if (el[i] < '0' || el[i] > '9' || x > (LEN_MAX - d) / 10)
                return false;
            x = x * 10 + d;
        }
        if ((p->has_len || one) && x != p->len)
            return false;
        p->len = x;
        one = true;
    }
    p->has_len |= one;
    return one;
}

/* The status line l[0..n) (its line end not counted). */
static bool status_read(struct gp_http1_parse *p, const char *l, size_t n)
{
    if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
        return false;
    if (l[9] < '1' || l[9] > '5' || l[10] < '0' || l[10] > '9' || l[11] < '0' || l[11] > '9')
        return false;
    if (n > 12 && l[12] != ' ')
        return false;
    p->http10 = l[7] == '0';
    p->code = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
    p->chunked = p->has_len = p->close = p->keepalive = p->framing_line = p->mixed = false;
    p->len = 0;
    return true;
}

/* A field line l[0..n) of a head (its line end not counted): NULL, or
 * what is wrong with it. */
static const char *field_read(struct gp_http1_parse *p, const char *l, size_t n)
{
    if (is_ows(l[0])) /* obs-fold (§5.2): not unfolded, so not ours to read */
        return p->framing_line ? "a folded Content-Length or Transfer-Encoding in the answer"
                               : NULL;
    const char *colon = memchr(l, ':', n);
    if (!colon || colon == l)
        return "a header line of the answer without a name";
    size_t nlen = (size_t)(colon - l);
    for (size_t i = 0; i < nlen; i++)
        if (is_ows(l[i]) || (unsigned char)l[i] < 0x20 || l[i] == 0x7f)
            return "a header name of the answer with whitespace or a control character";
    const char *v = colon + 1;
    size_t vn = n - nlen - 1;
    p->framing_line = false;
    if (token_is(l, nlen, "content-length")) {
        p->framing_line = true;
        if (!length_read(p, v, vn))
            return "a bad or conflicting Content-Length in the answer";
    } else if (token_is(l, nlen, "transfer-encoding")) {
        size_t at = 0, k;
        const char *el;
        p->framing_line = true;
        if (p->chunked || !list_next(v, vn, &at, &el, &k) || !token_is(el, k, "chunked") ||
            list_next(v, vn, &at, &el, &k))
            return "a transfer coding other than one chunked in the answer";
        p->chunked = true;
    } else if (token_is(l, nlen, "connection")) {
        size_t at = 0, k;
        const char *el;
        while (list_next(v, vn, &at, &el, &k)) {
            p->close |= token_is(el, k, "close");
            p->keepalive |= token_is(el, k, "keep-alive");
        }
    }
    return NULL;
}

/* The head's blank line came: the phase of what follows. */
static enum gp_http1_verdict head_end(struct gp_http1_parse *p)
{
    p->head_bytes = 0;
    if (p->code >= 100 && p->code < 200 && p->code != 101)
        return GP_HTTP1_MORE; /* an interim answer: the final one follows (§15.2) */
    p->status = p->code;
    if (p->code == 101)
        return final(p, GP_HTTP1_BAD, "an unasked protocol switch");
    if (p->http10 && !p->keepalive)
        p->close = true;
    if (p->head_only || p->code == 204 || p->code == 304) {
        return done(p);
    }
    if (p->chunked) {
        p->mixed = p->has_len; /* both: maybe a smuggling attempt (§6.3 item 3) */
        p->phase = PH_CSIZE;
    } else if (p->has_len) {
        if (p->max_body && p->len > p->max_body)
            return final(p, GP_HTTP1_OVER, "the answer is larger than the cap");
        if (p->len == 0) {
            return done(p);
        }
        p->left = p->len;
        p->phase = PH_LEN;
    } else {
        p->phase = PH_EOF;
        p->close = true;
    }
    return GP_HTTP1_MORE;
}

/* One whole line l[0..n) (its LF included) in PH_HEAD, PH_CSIZE or
 * PH_TRAILER. */
static enum gp_http1_verdict line_take(struct gp_http1_parse *p, char *l, size_t n)
{
    size_t k = n - 1; /* without its line end */
    if (k > 0 && l[k - 1] == '\r')
        k--;
    if (p->phase == PH_CSIZE) { /* hex digits, BWS, extensions after ';' (dropped) */
        if (n > GP_HTTP1_HEAD_MAX)
            return final(p, GP_HTTP1_BAD, BAD_BODY);
        unsigned long long size = 0;
        size_t i = 0;
        for (; i < k; i++) {
            char c = l[i];
            int v = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (v < 0)
                break;
            if (size >> 58)
                return final(p, GP_HTTP1_BAD, BAD_BODY);
            size = size * 16 + (unsigned)v;
        }
        size_t d = i;
        while (d < k && is_ows(l[d]))
            d++;
        if (i == 0 || (d < k && l[d] != ';'))
            return final(p, GP_HTTP1_BAD, BAD_BODY);
        if (size == 0) {
            p->phase = PH_TRAILER;
            p->head_bytes = 0;
            return GP_HTTP1_MORE;
        }
        if (p->max_body && size > p->max_body - p->body_bytes)
            return final(p, GP_HTTP1_OVER, "the answer is larger than the cap");
        p->left = size;
        p->phase = PH_CDATA;
        return GP_HTTP1_MORE;
    }
    p->head_bytes += n;
    if (p->head_bytes > GP_HTTP1_HEAD_MAX)
        return final(p, GP_HTTP1_BAD,
                     p->phase == PH_HEAD ? "an answer's head too long"
                                         : "an answer's trailer too long");
    if (p->phase == PH_TRAILER) { /* trailer fields: read past, not used */
        if (k > 0)
            return GP_HTTP1_MORE;
        return done(p);
    }
    bool first = p->head_bytes == n;
    if (first && !status_read(p, l, k))
        return final(p, GP_HTTP1_BAD, NOT_HTTP);
    if (p->on_header)
        p->on_header(l, 1, n, p->header_ud);
    if (first)
        return GP_HTTP1_MORE;
    if (k == 0)
        return head_end(p);
    const char *why = field_read(p, l, k);
    return why ? final(p, GP_HTTP1_BAD, why) : GP_HTTP1_MORE;
}

/* Body bytes d[0..n) decoded. */
static enum gp_http1_verdict deliver(struct gp_http1_parse *p, char *d, size_t n)
{
    if (n == 0)
        return GP_HTTP1_MORE;
    if (p->max_body && n > p->max_body - p->body_bytes)
        return final(p, GP_HTTP1_OVER, "the answer is larger than the cap");
    p->body_bytes += n;
    if (p->on_body && p->on_body(d, 1, n, p->body_ud) != n)
        return final(p, GP_HTTP1_REFUSED, "the answer's body was refused");
    return GP_HTTP1_MORE;
}

enum gp_http1_verdict gp_http1_parse_feed(struct gp_http1_parse *p, char *buf, size_t n,
                                          size_t *used)
{
    size_t at = 0;
    enum gp_http1_verdict v = GP_HTTP1_MORE;
    *used = 0;
    if (p->phase == PH_FINAL)
        return (enum gp_http1_verdict)p->verdict;
    p->any |= n > 0;
    while (v == GP_HTTP1_MORE && at < n) {
        size_t avail = n - at;
        switch ((enum phase)p->phase) {
        case PH_LEN:
        case PH_CDATA: {
            size_t k = avail < p->left ? avail : (size_t)p->left;
            v = deliver(p, buf + at, k);
            at += k;
            p->left -= k;
            if (v == GP_HTTP1_MORE && p->left == 0) {
                if (p->phase == PH_CDATA)
                    p->phase = PH_CEND;
                else
                    v = done(p);
            }
            break;
        }
        case PH_EOF:
            v = deliver(p, buf + at, avail);
            at = n;
            break;
        case PH_CEND: /* CRLF, or a bare LF */
            if (buf[at] == '\n' || (avail >= 2 && buf[at] == '\r' && buf[at + 1] == '\n')) {
                at += buf[at] == '\n' ? 1 : 2;
                p->phase = PH_CSIZE;
            } else if (buf[at] != '\r') {
                v = final(p, GP_HTTP1_BAD, BAD_BODY);
            } else if (avail >= 2) {
                v = final(p, GP_HTTP1_BAD, BAD_BODY);
            } else {
                *used = at; /* the CR again, with what follows */
                return GP_HTTP1_MORE;
            }
            break;
        case PH_HEAD:
        case PH_CSIZE:
        case PH_TRAILER: {
            if (p->seen > avail) /* given other bytes than asked: look again */
                p->seen = 0;
            char *nl = memchr(buf + at + p->seen, '\n', avail - p->seen);
            if (!nl) {
                size_t cap =
                    p->phase == PH_CSIZE ? GP_HTTP1_HEAD_MAX : GP_HTTP1_HEAD_MAX - p->head_bytes;
                if (avail > cap) {
                    v = final(p, GP_HTTP1_BAD,
                              p->phase == PH_HEAD      ? "an answer's head too long"
                              : p->phase == PH_TRAILER ? "an answer's trailer too long"
                                                       : BAD_BODY);
                    break;
                }
                p->seen = avail;
                *used = at;
                return GP_HTTP1_MORE;
            }
            size_t k = (size_t)(nl - (buf + at)) + 1;
            p->seen = 0;
            v = line_take(p, buf + at, k);
            at += k;
            break;
        }
        case PH_FINAL:
            v = (enum gp_http1_verdict)p->verdict;
            break;
        }
    }
    *used = at;
    return v;
}

enum gp_http1_verdict gp_http1_parse_end(struct gp_http1_parse *p)
{
    if (p->phase == PH_FINAL)
        return (enum gp_http1_verdict)p->verdict;
    if (p->phase == PH_EOF) {
        p->keep = false;
        return final(p, GP_HTTP1_DONE, NULL);
    }
    if (!p->any)
        return final(p, GP_HTTP1_NOTHING, "empty reply from server");
    return final(p, GP_HTTP1_CUT, "the connection ended within an answer");
}
