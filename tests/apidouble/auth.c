/* auth.c - the double's HTTPS and authentication, as kube-apiserver's
 * (kubernetes.io/docs/reference/access-authn-authz/authentication/): a
 * server certificate and key (--tls-cert, --tls-key), client certificates
 * verified against --client-ca (x509 client certs), bearer tokens listed
 * in --tokens (a static token file, re-read on every request so a test
 * can rotate them); with either set, a request that proves neither is
 * answered 401 Unauthorized. And the request log (every request's verb
 * and path, for the RBAC test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "apidouble.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    else
        buf[len] = '\0';
    return buf;
}

bool auth_load(struct auth *au, const char *cert, const char *key, const char *client_ca,
               const char *tokens)
{
    if (!cert != !key) {
        fprintf(stderr, "apidouble: --tls-cert and --tls-key go together\n");
        return false;
    }
    if (client_ca && !cert) {
        fprintf(stderr, "apidouble: --client-ca needs --tls-cert\n");
        return false;
    }
    const char *paths[3] = {cert, key, client_ca};
    char **into[3] = {&au->cert_pem, &au->key_pem, &au->ca_pem};
    for (int i = 0; i < 3; i++) {
        if (paths[i] && !(*into[i] = slurp(paths[i]))) {
            fprintf(stderr, "apidouble: %s: cannot read\n", paths[i]);
            return false;
        }
    }
    au->tokens_file = tokens;
    au->required = client_ca || tokens;
    return true;
}

/* Whether the connection's client certificate verifies against the client CA. */
static bool cert_ok(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return false;
    gnutls_session_t s = (gnutls_session_t)ci->tls_session;
    unsigned list_size = 0;
    if (!gnutls_certificate_get_peers(s, &list_size) || list_size == 0)
        return false;
    unsigned status = 0;
    return gnutls_certificate_verify_peers2(s, &status) == GNUTLS_E_SUCCESS && status == 0;
}

/* The token's user from the token file: lines "TOKEN,USER[,...]" as
 * kube-apiserver's --token-auth-file (a line without a user: "token"). */
static bool token_ok(const struct auth *au, const char *header, char *user, size_t n)
{
    static const char bearer[] = "Bearer ";
    if (!au->tokens_file || !header || strncmp(header, bearer, sizeof bearer - 1) != 0)
        return false;
    const char *tok = header + sizeof bearer - 1;
    char *list = slurp(au->tokens_file);
    bool ok = false;
    for (char *save = NULL, *line = list ? strtok_r(list, "\n", &save) : NULL; line && !ok;
         line = strtok_r(NULL, "\n", &save)) {
        char *comma = strchr(line, ',');
        size_t tl = comma ? (size_t)(comma - line) : strlen(line);
        if (tl == 0 || strlen(tok) != tl || strncmp(line, tok, tl) != 0)
            continue;
        ok = true;
        const char *u = comma ? comma + 1 : "token";
        const char *end = strchr(u, ',');
        snprintf(user, n, "%.*s", (int)(end ? (size_t)(end - u) : strlen(u)), u);
    }
    free(list);
    return ok;
}

bool auth_check(const struct auth *au, struct MHD_Connection *c, char *user, size_t n)
{
    if (n > 0) /* none yet (no printf a request) */
        user[0] = '\0';
    if (!au->required)
        return true;
    if (au->ca_pem && cert_ok(c)) {
        snprintf(user, n, "%s", "x509");
        return true;
    }
    return token_ok(au, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"), user, n);
}

void log_request(const char *user, const char *method, const char *url, bool watch,
                 const char *field_selector)
{
    struct logged *e;
    if (S.nlog == LOG_MAX) { /* full: the oldest goes (the log is bounded) */
        e = &S.log[S.log_from];
        S.log_from = (S.log_from + 1) % LOG_MAX;
    } else {
        if (S.nlog == S.caplog) {
            size_t cap = S.caplog ? S.caplog * 2 : 1024;
            cap = cap < LOG_MAX ? cap : LOG_MAX;
            struct logged *l = realloc(S.log, cap * sizeof *l);
            if (!l)
                return;
            S.log = l;
            S.caplog = cap;
        }
        e = &S.log[S.nlog++];
        e->path = NULL;
    }
    /* cut as snprintf would cut them, without a printf a request */
    size_t ml = strnlen(method, sizeof e->method - 1), ul = strnlen(user, sizeof e->user - 1);
    memcpy(e->method, method, ml);
    e->method[ml] = '\0';
    memcpy(e->user, user, ul);
    e->user[ul] = '\0';
    size_t len = strlen(url), fl = field_selector ? strlen(field_selector) : 0;
    size_t n = len + (watch ? 11 : 0) + (field_selector ? 15 + fl : 0) + 1;
    char *p = realloc(e->path, n);
    if (p) {
        memcpy(p, url, len);
        if (watch) {
            memcpy(p + len, "?watch=true", 11);
            len += 11;
        }
        if (field_selector) { /* (a name needs no %-encoding) */
            memcpy(p + len, watch ? "&fieldSelector=" : "?fieldSelector=", 15);
            memcpy(p + len + 15, field_selector, fl);
            len += 15 + fl;
        }
        p[len] = '\0';
    } else {
        free(e->path);
    }
    e->path = p;
}

json_t *log_json(void)
{
    json_t *arr = json_array();
    for (size_t k = 0; k < S.nlog; k++) {
        const struct logged *e = &S.log[(S.log_from + k) % LOG_MAX];
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "user", e->user, "method", e->method,
                                             "path", e->path ? e->path : ""));
    }
    return json_pack("{s:o}", "requests", arr);
}
