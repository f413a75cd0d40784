/* kubeconfig.c - kubeconfig files and the in-cluster service account read
 * into one struct gp_kube_config (see kubeconfig.h). */
#include "kube/kubeconfig.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yaml_walk.h"
#include "util/fs.h"

#define KC_MAX_ENTRIES 4096 /* clusters, users or contexts in one file */

struct kc_cluster {
    const char *name, *server, *ca_file, *tls_server_name;
    char *ca_data;
    size_t ca_len;
    bool insecure;
};

struct kc_user {
    const char *name, *cert_file, *key_file, *token, *token_file;
    char *cert_data, *key_data;
    size_t cert_len, key_len;
};

struct kc_context {
    const char *name, *cluster, *user, *ns;
    struct fy_node *at; /* the item, for messages */
};

struct kc_file {
    struct kc_cluster *clusters;
    struct kc_user *users;
    struct kc_context *contexts;
    size_t nclusters, nusers, ncontexts;
    const char *current;
    struct fy_node *current_at;
    const char *want; /* the context asked for, or NULL */
    const char *dir;  /* relative paths are resolved here, or NULL */
    struct gp_kube_config *out;
};

/* --- base64 ------------------------------------------------------------ */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

bool gp_kube_base64_decode(const char *in, size_t len, struct gp_arena *a, char **out,
                           size_t *out_len)
{
    char *buf = gp_arena_alloc(a, len / 4 * 3 + 4);
    if (!buf)
        return false;
    size_t o = 0, pad = 0, quad = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = b64_value(c);
        if (v < 0 || pad > 0)
            return false;
        acc = acc << 6 | (uint32_t)v;
        if (++quad == 4) {
            buf[o++] = (char)(acc >> 16);
            buf[o++] = (char)(acc >> 8 & 0xff);
            buf[o++] = (char)(acc & 0xff);
            quad = 0;
            acc = 0;
        }
    }
    if (quad == 1 || pad > 2 || (pad > 0 && (quad + pad) % 4 != 0))
        return false;
    if (quad == 2) {
        buf[o++] = (char)(acc >> 4);
    } else if (quad == 3) {
        buf[o++] = (char)(acc >> 10);
        buf[o++] = (char)(acc >> 2 & 0xff);
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    return true;
}

/* --- field readers ----------------------------------------------------- */

static enum gp_err read_b64(struct gp_yaml *y, struct fy_node *v, char **out, size_t *len)
{
    const char *s;
    enum gp_err err = gp_yaml_string(y, v, &s);
    if (err != GP_OK)
        return err;
    if (!gp_kube_base64_decode(s, strlen(s), y->arena, out, len) || *len == 0)
        return gp_yaml_fail(y, v, GP_EINVALID, "not valid base64");
    if (memchr(*out, '\0', *len))
        return gp_yaml_fail(y, v, GP_EINVALID, "decodes to binary data, expected PEM text");
    return GP_OK;
}

static enum gp_err read_bool(struct gp_yaml *y, struct fy_node *v, bool *out)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "true or false", &s);
    if (err != GP_OK)
        return err;
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0)
        *out = true;
    else if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0)
        *out = false;
    else
        return gp_yaml_fail(y, v, GP_EINVALID, "expected true or false, got \"%s\"", s);
    return GP_OK;
}

static enum gp_err cl_ca_data(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct kc_cluster *c = obj;
    return read_b64(y, v, &c->ca_data, &c->ca_len);
}

static enum gp_err cl_insecure(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return read_bool(y, v, &((struct kc_cluster *)obj)->insecure);
}

static const struct gp_yaml_field cluster_fields[] = {
    GP_YFIELD("server", GP_YT_STRING, struct kc_cluster, server, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("certificate-authority", GP_YT_STRING, struct kc_cluster, ca_file, 0, 0, 0),
    GP_YCUSTOM("certificate-authority-data", cl_ca_data, 0),
    GP_YCUSTOM("insecure-skip-tls-verify", cl_insecure, 0),
    GP_YFIELD("tls-server-name", GP_YT_STRING, struct kc_cluster, tls_server_name, 0, 0, 0),
};

static enum gp_err us_cert_data(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct kc_user *u = obj;
    return read_b64(y, v, &u->cert_data, &u->cert_len);
}

static enum gp_err us_key_data(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct kc_user *u = obj;
    return read_b64(y, v, &u->key_data, &u->key_len);
}

static enum gp_err us_refuse(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return gp_yaml_fail(y, v, GP_EUNSUPPORTED,
                        "credential plugins are not supported; give a token, a token file or a "
                        "client certificate and key");
}

static const struct gp_yaml_field user_fields[] = {
    GP_YFIELD("client-certificate", GP_YT_STRING, struct kc_user, cert_file, 0, 0, 0),
    GP_YCUSTOM("client-certificate-data", us_cert_data, 0),
    GP_YFIELD("client-key", GP_YT_STRING, struct kc_user, key_file, 0, 0, 0),
    GP_YCUSTOM("client-key-data", us_key_data, 0),
    GP_YFIELD("token", GP_YT_STRING, struct kc_user, token, 0, 0, 0),
    GP_YFIELD("tokenFile", GP_YT_STRING, struct kc_user, token_file, 0, 0, 0),
    GP_YCUSTOM("exec", us_refuse, 0),
    GP_YCUSTOM("auth-provider", us_refuse, 0),
};

static const struct gp_yaml_field context_fields[] = {
    GP_YFIELD("cluster", GP_YT_STRING, struct kc_context, cluster, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("user", GP_YT_STRING, struct kc_context, user, 0, 0, 0),
    GP_YFIELD("namespace", GP_YT_STRING, struct kc_context, ns, 0, 0, 0),
};

/* --- the lists --------------------------------------------------------- */

static enum gp_err cl_body(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, cluster_fields, sizeof cluster_fields / sizeof *cluster_fields, obj,
                          false);
}

static enum gp_err us_body(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, user_fields, sizeof user_fields / sizeof *user_fields, obj, false);
}

static enum gp_err cx_body(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, context_fields, sizeof context_fields / sizeof *context_fields, obj,
                          false);
}

static const struct gp_yaml_field cluster_item[] = {
    GP_YFIELD("name", GP_YT_STRING, struct kc_cluster, name, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("cluster", cl_body, GP_YF_REQUIRED),
};
static const struct gp_yaml_field user_item[] = {
    GP_YFIELD("name", GP_YT_STRING, struct kc_user, name, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("user", us_body, 0),
};
static const struct gp_yaml_field context_item[] = {
    GP_YFIELD("name", GP_YT_STRING, struct kc_context, name, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("context", cx_body, GP_YF_REQUIRED),
};

static enum gp_err list_count(struct gp_yaml *y, struct fy_node *v, size_t *n)
{
    *n = fy_node_is_sequence(v) ? (size_t)fy_node_sequence_item_count(v) : 0;
    if (*n > KC_MAX_ENTRIES)
        return gp_yaml_fail(y, v, GP_ELIMIT, "more than %d entries", KC_MAX_ENTRIES);
    return GP_OK;
}

static enum gp_err cluster_each(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct kc_file *f = ctx;
    f->nclusters = i + 1;
    return gp_yaml_object(y, item, cluster_item, 2, &f->clusters[i], false);
}

static enum gp_err user_each(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct kc_file *f = ctx;
    f->nusers = i + 1;
    return gp_yaml_object(y, item, user_item, 2, &f->users[i], false);
}

static enum gp_err context_each(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct kc_file *f = ctx;
    f->ncontexts = i + 1;
    f->contexts[i].at = item;
    return gp_yaml_object(y, item, context_item, 2, &f->contexts[i], false);
}

#define KC_LIST(fn_name, member, each)                                                             \
    static enum gp_err fn_name(struct gp_yaml *y, struct fy_node *v, void *obj)                    \
    {                                                                                              \
        struct kc_file *f = obj;                                                                   \
        size_t n;                                                                                  \
        enum gp_err err = list_count(y, v, &n);                                                    \
        if (err != GP_OK)                                                                          \
            return err;                                                                            \
        f->member = gp_arena_alloc(y->arena, (n + 1) * sizeof *f->member);                         \
        if (!f->member)                                                                            \
            return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);                  \
        return gp_yaml_list(y, v, each, f);                                                        \
    }
KC_LIST(read_clusters, clusters, cluster_each)
KC_LIST(read_users, users, user_each)
KC_LIST(read_contexts, contexts, context_each)

static enum gp_err read_current(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct kc_file *f = obj;
    f->current_at = v;
    return gp_yaml_string(y, v, &f->current);
}

static const struct gp_yaml_field root_fields[] = {
    GP_YCUSTOM("clusters", read_clusters, 0),
    GP_YCUSTOM("users", read_users, 0),
    GP_YCUSTOM("contexts", read_contexts, 0),
    GP_YCUSTOM("current-context", read_current, 0),
};

/* --- resolution -------------------------------------------------------- */

/* A path from the file, made relative to the file's directory. */
static const char *kc_path(struct gp_arena *a, const char *dir, const char *p)
{
    if (!p || p[0] == '/' || !dir || !dir[0])
        return p;
    return gp_arena_printf(a, "%s/%s", dir, p);
}

static enum gp_err kc_resolve(struct gp_yaml *y, struct kc_file *f)
{
    const char *want = f->want ? f->want : f->current;
    if (!want)
        return gp_diag_set(y->diag, GP_EINVALID,
                           "%s: current-context: not set (and no context was asked for)", y->name);
    const struct kc_context *cx = NULL;
    for (size_t i = 0; i < f->ncontexts; i++)
        if (strcmp(f->contexts[i].name, want) == 0)
            cx = &f->contexts[i];
    if (!cx && f->want)
        return gp_diag_set(y->diag, GP_EINVALID, "%s: contexts: no context named \"%s\"", y->name,
                           want);
    if (!cx) {
        gp_yaml_set_root(y, "current-context");
        return gp_yaml_fail(y, f->current_at, GP_EINVALID, "no context named \"%s\" in contexts",
                            want);
    }
    const struct kc_cluster *cl = NULL;
    for (size_t i = 0; i < f->nclusters; i++)
        if (strcmp(f->clusters[i].name, cx->cluster) == 0)
            cl = &f->clusters[i];
    size_t ci = (size_t)(cx - f->contexts);
    char at[64];
    snprintf(at, sizeof at, "contexts[%zu].context.cluster", ci);
    gp_yaml_set_root(y, at);
    if (!cl)
        return gp_yaml_fail(y, fy_node_by_path(cx->at, "context/cluster", FY_NT, FYNWF_DONT_FOLLOW),
                            GP_EINVALID, "no cluster named \"%s\" in clusters", cx->cluster);
    const struct kc_user *us = NULL;
    for (size_t i = 0; cx->user && i < f->nusers; i++)
        if (strcmp(f->users[i].name, cx->user) == 0)
            us = &f->users[i];
    snprintf(at, sizeof at, "contexts[%zu].context.user", ci);
    gp_yaml_set_root(y, at);
    if (cx->user && !us)
        return gp_yaml_fail(y, fy_node_by_path(cx->at, "context/user", FY_NT, FYNWF_DONT_FOLLOW),
                            GP_EINVALID, "no user named \"%s\" in users", cx->user);
    struct gp_kube_config *o = f->out;
    struct gp_arena *a = y->arena;
    size_t sl = strlen(cl->server);
    while (sl > 0 && cl->server[sl - 1] == '/')
        sl--;
    if (strncmp(cl->server, "https://", 8) != 0 && strncmp(cl->server, "http://", 7) != 0)
        return gp_diag_set(y->diag, GP_EINVALID,
                           "%s: clusters[\"%s\"].cluster.server: expected an https:// or http:// "
                           "URL, got \"%s\"",
                           y->name, cl->name, cl->server);
    o->server = gp_arena_strndup(a, cl->server, sl);
    o->ns = cx->ns ? cx->ns : "default";
    o->context = cx->name;
    o->ca.file = kc_path(a, f->dir, cl->ca_file);
    o->ca.data = cl->ca_data;
    o->ca.len = cl->ca_len;
    o->insecure = cl->insecure;
    o->tls_server_name = cl->tls_server_name;
    if (cl->ca_file && cl->ca_data)
        return gp_diag_set(y->diag, GP_EINVALID,
                           "%s: clusters[\"%s\"].cluster: both certificate-authority and "
                           "certificate-authority-data are set; keep one",
                           y->name, cl->name);
    if (us) {
        o->cert.file = kc_path(a, f->dir, us->cert_file);
        o->cert.data = us->cert_data;
        o->cert.len = us->cert_len;
        o->key.file = kc_path(a, f->dir, us->key_file);
        o->key.data = us->key_data;
        o->key.len = us->key_len;
        o->token = us->token;
        o->token_file = kc_path(a, f->dir, us->token_file);
        bool has_cert = o->cert.file || o->cert.data, has_key = o->key.file || o->key.data;
        if (has_cert != has_key)
            return gp_diag_set(y->diag, GP_EINVALID, "%s: users[\"%s\"].user: %s is set without %s",
                               y->name, us->name, has_cert ? "client-certificate" : "client-key",
                               has_cert ? "client-key" : "client-certificate");
        if ((us->cert_file && us->cert_data) || (us->key_file && us->key_data))
            return gp_diag_set(y->diag, GP_EINVALID,
                               "%s: users[\"%s\"].user: both client-%s and client-%s-data are "
                               "set; keep one",
                               y->name, us->name,
                               us->cert_file && us->cert_data ? "certificate" : "key",
                               us->cert_file && us->cert_data ? "certificate" : "key");
    }
    return GP_OK;
}

static enum gp_err kc_doc(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    struct kc_file *f = ctx;
    if (f->out->server)
        return GP_OK; /* only the first document counts */
    enum gp_err err =
        gp_yaml_object(y, root, root_fields, sizeof root_fields / sizeof *root_fields, f, false);
    if (err != GP_OK)
        return err;
    return kc_resolve(y, f);
}

enum gp_err gp_kube_config_parse(const char *text, size_t len, const char *name, const char *dir,
                                 const char *context, struct gp_arena *a,
                                 struct gp_kube_config *out, struct gp_diag *diag)
{
    struct gp_yaml y;
    struct kc_file f = {0};
    memset(out, 0, sizeof *out);
    gp_yaml_init(&y, name, a, diag);
    f.want = context;
    f.dir = dir;
    f.out = out;
    enum gp_err err = gp_yaml_each_document(&y, text, len, kc_doc, &f);
    if (err == GP_OK && !out->server)
        err = gp_diag_set(diag, GP_EINVALID,
                          "%s: an empty kubeconfig (no clusters, contexts or "
                          "current-context)",
                          name);
    if (err != GP_OK) {
        memset(out, 0, sizeof *out);
        return err;
    }
    out->source = gp_arena_strdup(a, name);
    return GP_OK;
}

enum gp_err gp_kube_config_load(const char *path, const char *context, struct gp_arena *a,
                                struct gp_kube_config *out, struct gp_diag *diag)
{
    char *text;
    size_t len;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err != GP_OK)
        return err;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? gp_arena_strndup(a, path, (size_t)(slash - path)) : NULL;
    if (dir && !dir[0])
        dir = gp_arena_strdup(a, "/");
    err = gp_kube_config_parse(text, len, path, dir, context, a, out, diag);
    free(text);
    return err;
}

/* A small file of the service account, whitespace trimmed, or NULL. */
static enum gp_err sa_read(const char *dir, const char *file, bool required, struct gp_arena *a,
                           const char **out, struct gp_diag *diag)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text;
    size_t len;
    struct gp_diag ignore;
    enum gp_err err = gp_fs_read(path, &text, &len, required ? diag : &ignore);
    if (err != GP_OK) {
        *out = NULL;
        return required ? err : GP_OK;
    }
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r'))
        len--;
    *out = gp_arena_strndup(a, text, len);
    free(text);
    return GP_OK;
}

enum gp_err gp_kube_config_in_cluster(const char *sa_dir, struct gp_arena *a,
                                      struct gp_kube_config *out, struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !host[0] || !port || !port[0])
        return gp_diag_set(diag, GP_EINVALID,
                           "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must "
                           "both be set (not running in a pod?)");
    const char *tok;
    enum gp_err err = sa_read(sa_dir, "token", true, a, &tok, diag);
    if (err != GP_OK)
        return err;
    if (!tok[0])
        return gp_diag_set(diag, GP_EINVALID, "in-cluster: %s/token: empty", sa_dir);
    const char *ns;
    sa_read(sa_dir, "namespace", false, a, &ns, diag);
    bool v6 = strchr(host, ':') != NULL;
    out->server = gp_arena_printf(a, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
    out->ns = ns && ns[0] ? ns : "default";
    out->context = "in-cluster";
    out->source = gp_arena_strdup(a, sa_dir);
    out->token_file = gp_arena_printf(a, "%s/token", sa_dir);
    out->ca.file = gp_arena_printf(a, "%s/ca.crt", sa_dir);
    return GP_OK;
}

enum gp_err gp_kube_config_find(const char *path, const char *context, struct gp_arena *a,
                                struct gp_kube_config *out, struct gp_diag *diag)
{
    if (path)
        return gp_kube_config_load(path, context, a, out, diag);
    const char *env = getenv("KUBECONFIG");
    if ((!env || !env[0]) && getenv("KUBERNETES_SERVICE_HOST"))
        return gp_kube_config_in_cluster(GP_KUBE_SA_DIR, a, out, diag);
    if (env && env[0]) {
        const char *colon = strchr(env, ':');
        char *first = gp_arena_strndup(a, env, colon ? (size_t)(colon - env) : strlen(env));
        return gp_kube_config_load(first, context, a, out, diag);
    }
    const char *home = getenv("HOME");
    if (!home || !home[0])
        return gp_diag_set(diag, GP_ENOTFOUND,
                           "no kubeconfig: give --kubeconfig, set "
                           "KUBECONFIG or HOME, or run in a pod");
    return gp_kube_config_load(gp_arena_printf(a, "%s/.kube/config", home), context, a, out, diag);
}
