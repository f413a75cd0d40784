/* kubeconfig.c - kubeconfig files (one, or the list of $KUBECONFIG merged
 * as kubectl merges it) and the in-cluster service account read into one
 * struct gp_kube_config (see kubeconfig.h). */
#include "kube/kubeconfig.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/yaml_walk.h"
#include "util/fs.h"

#define KC_MAX_ENTRIES 4096 /* clusters, users or contexts in one file */

/* Every entry keeps the file it came from (messages) and that file's
 * directory (its relative paths), so that entries of merged files resolve
 * as they would alone. */
struct kc_cluster {
    const char *name, *server, *ca_file, *tls_server_name;
    char *ca_data;
    size_t ca_len;
    bool insecure;
    const char *file, *dir;
};

struct kc_user {
    const char *name, *cert_file, *key_file, *token, *token_file;
    char *cert_data, *key_data;
    size_t cert_len, key_len;
    const char *file, *dir;
};

struct kc_context {
    const char *name, *cluster, *user, *ns;
    size_t index;                     /* in its file's contexts */
    const char *cluster_at, *user_at; /* "FILE:LINE:COL" of its cluster and user, for messages */
};

struct kc_file {
    struct kc_cluster *clusters;
    struct kc_user *users;
    struct kc_context *contexts;
    size_t nclusters, nusers, ncontexts;
    const char *current;
    const char *current_at; /* "FILE:LINE:COL" */
    const char *dir;        /* relative paths are resolved here, or NULL */
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

/* "FILE:LINE:COL" of a node (or of the innermost key when it has none). */
static const char *kc_at(struct gp_yaml *y, struct fy_node *n)
{
    int line = y->line, col = y->col;
    if (n)
        gp_yaml_node_mark(n, &line, &col);
    return gp_arena_printf(y->arena, "%s:%d:%d", y->name, line, col);
}

/* A name given twice in one file is an error, as client-go's conversion
 * of the lists into maps makes it ("duplicate name"). */
static enum gp_err kc_unique(struct gp_yaml *y, struct fy_node *item, const char *list,
                             const char *name, const char *earlier, size_t j)
{
    if (!earlier || strcmp(earlier, name) != 0)
        return GP_OK;
    return gp_yaml_fail(y, fy_node_by_path(item, "name", FY_NT, FYNWF_DONT_FOLLOW), GP_EINVALID,
                        "the name \"%s\" is given twice (also %s[%zu]); names are unique in a file",
                        name, list, j);
}

static enum gp_err cluster_each(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct kc_file *f = ctx;
    f->nclusters = i + 1;
    struct kc_cluster *c = &f->clusters[i];
    c->file = y->name;
    c->dir = f->dir;
    enum gp_err err = gp_yaml_object(y, item, cluster_item, 2, c, false);
    for (size_t j = 0; err == GP_OK && j < i; j++)
        err = kc_unique(y, item, "clusters", c->name, f->clusters[j].name, j);
    return err;
}

static enum gp_err user_each(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct kc_file *f = ctx;
    f->nusers = i + 1;
    struct kc_user *u = &f->users[i];
    u->file = y->name;
    u->dir = f->dir;
    enum gp_err err = gp_yaml_object(y, item, user_item, 2, u, false);
    for (size_t j = 0; err == GP_OK && j < i; j++)
        err = kc_unique(y, item, "users", u->name, f->users[j].name, j);
    return err;
}

static enum gp_err context_each(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct kc_file *f = ctx;
    f->ncontexts = i + 1;
    struct kc_context *cx = &f->contexts[i];
    cx->index = i;
    enum gp_err err = gp_yaml_object(y, item, context_item, 2, cx, false);
    for (size_t j = 0; err == GP_OK && j < i; j++)
        err = kc_unique(y, item, "contexts", cx->name, f->contexts[j].name, j);
    if (err != GP_OK)
        return err;
    cx->cluster_at = kc_at(y, fy_node_by_path(item, "context/cluster", FY_NT, FYNWF_DONT_FOLLOW));
    cx->user_at = kc_at(y, fy_node_by_path(item, "context/user", FY_NT, FYNWF_DONT_FOLLOW));
    return GP_OK;
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
    f->current_at = kc_at(y, v);
    enum gp_err err = gp_yaml_string(y, v, &f->current);
    if (err == GP_OK && f->current && !f->current[0])
        f->current = NULL; /* "" sets nothing: a later file's may count */
    return err;
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

/* The entry named `name` of a list: the first one (with merged files,
 * the first file's: kubectl's "the first file to set a map key wins"). */
static const struct kc_cluster *find_cluster(const struct kc_file *f, const char *name)
{
    for (size_t i = 0; i < f->nclusters; i++)
        if (strcmp(f->clusters[i].name, name) == 0)
            return &f->clusters[i];
    return NULL;
}

static const struct kc_user *find_user(const struct kc_file *f, const char *name)
{
    for (size_t i = 0; i < f->nusers; i++)
        if (strcmp(f->users[i].name, name) == 0)
            return &f->users[i];
    return NULL;
}

static const struct kc_context *find_context(const struct kc_file *f, const char *name)
{
    for (size_t i = 0; i < f->ncontexts; i++)
        if (strcmp(f->contexts[i].name, name) == 0)
            return &f->contexts[i];
    return NULL;
}

static enum gp_err kc_user_out(const struct kc_user *us, struct gp_arena *a,
                               struct gp_kube_config *o, struct gp_diag *diag)
{
    o->cert.file = kc_path(a, us->dir, us->cert_file);
    o->cert.data = us->cert_data;
    o->cert.len = us->cert_len;
    o->key.file = kc_path(a, us->dir, us->key_file);
    o->key.data = us->key_data;
    o->key.len = us->key_len;
    o->token = us->token;
    o->token_file = kc_path(a, us->dir, us->token_file);
    bool has_cert = o->cert.file || o->cert.data, has_key = o->key.file || o->key.data;
    if (has_cert != has_key)
        return gp_diag_set(diag, GP_EINVALID, "%s: users[\"%s\"].user: %s is set without %s",
                           us->file, us->name, has_cert ? "client-certificate" : "client-key",
                           has_cert ? "client-key" : "client-certificate");
    if ((us->cert_file && us->cert_data) || (us->key_file && us->key_data))
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: users[\"%s\"].user: both client-%s and client-%s-data are "
                           "set; keep one",
                           us->file, us->name,
                           us->cert_file && us->cert_data ? "certificate" : "key",
                           us->cert_file && us->cert_data ? "certificate" : "key");
    return GP_OK;
}

/* The configuration of context `want` (NULL: current-context) of f, which
 * holds one file's entries or several files' in their order; name: the
 * file or the list, in messages. */
static enum gp_err kc_resolve(const struct kc_file *f, const char *name, const char *want_in,
                              struct gp_arena *a, struct gp_kube_config *o, struct gp_diag *diag)
{
    const char *want = want_in ? want_in : f->current;
    if (!want)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: current-context: not set (and no context was asked for)", name);
    const struct kc_context *cx = find_context(f, want);
    if (!cx && want_in)
        return gp_diag_set(diag, GP_EINVALID, "%s: contexts: no context named \"%s\"", name, want);
    if (!cx)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: current-context: no context named \"%s\" in contexts",
                           f->current_at, want);
    const struct kc_cluster *cl = find_cluster(f, cx->cluster);
    if (!cl)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: contexts[%zu].context.cluster: no cluster named \"%s\" in "
                           "clusters",
                           cx->cluster_at, cx->index, cx->cluster);
    const struct kc_user *us = cx->user ? find_user(f, cx->user) : NULL;
    if (cx->user && !us)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: contexts[%zu].context.user: no user named \"%s\" in users",
                           cx->user_at, cx->index, cx->user);
    size_t sl = strlen(cl->server);
    while (sl > 0 && cl->server[sl - 1] == '/')
        sl--;
    if (strncmp(cl->server, "https://", 8) != 0 && strncmp(cl->server, "http://", 7) != 0)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: clusters[\"%s\"].cluster.server: expected an https:// or http:// "
                           "URL, got \"%s\"",
                           cl->file, cl->name, cl->server);
    o->server = gp_arena_strndup(a, cl->server, sl);
    o->ns = cx->ns ? cx->ns : "default";
    o->context = cx->name;
    o->source = gp_arena_strdup(a, cl->file);
    o->ca.file = kc_path(a, cl->dir, cl->ca_file);
    o->ca.data = cl->ca_data;
    o->ca.len = cl->ca_len;
    o->insecure = cl->insecure;
    o->tls_server_name = cl->tls_server_name;
    if (cl->ca_file && cl->ca_data)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: clusters[\"%s\"].cluster: both certificate-authority and "
                           "certificate-authority-data are set; keep one",
                           cl->file, cl->name);
    return us ? kc_user_out(us, a, o, diag) : GP_OK;
}

struct kc_read {
    struct kc_file *f;
    bool seen; /* a document was read: only the first counts */
};

static enum gp_err kc_doc(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    struct kc_read *r = ctx;
    if (r->seen)
        return GP_OK;
    r->seen = true;
    return gp_yaml_object(y, root, root_fields, sizeof root_fields / sizeof *root_fields, r->f,
                          false);
}

/* One file's entries, not resolved; false in *any when it has none. */
static enum gp_err kc_read_file(const char *text, size_t len, const char *name, const char *dir,
                                struct gp_arena *a, struct kc_file *f, bool *any,
                                struct gp_diag *diag)
{
    struct gp_yaml y;
    memset(f, 0, sizeof *f);
    gp_yaml_init(&y, gp_arena_strdup(a, name), a, diag);
    f->dir = dir;
    struct kc_read r = {f, false};
    enum gp_err err = gp_yaml_each_document(&y, text, len, kc_doc, &r);
    *any = f->nclusters || f->nusers || f->ncontexts || f->current;
    return err;
}

enum gp_err gp_kube_config_parse(const char *text, size_t len, const char *name, const char *dir,
                                 const char *context, struct gp_arena *a,
                                 struct gp_kube_config *out, struct gp_diag *diag)
{
    struct kc_file f;
    bool any;
    memset(out, 0, sizeof *out);
    enum gp_err err = kc_read_file(text, len, name, dir, a, &f, &any, diag);
    if (err == GP_OK && !any)
        err = gp_diag_set(diag, GP_EINVALID,
                          "%s: an empty kubeconfig (no clusters, contexts or "
                          "current-context)",
                          name);
    if (err == GP_OK)
        err = kc_resolve(&f, name, context, a, out, diag);
    if (err != GP_OK)
        memset(out, 0, sizeof *out);
    return err;
}

/* The directory of a path ("/" for "/x", NULL for "x"). */
static char *kc_dir_of(struct gp_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? gp_arena_strndup(a, path, (size_t)(slash - path)) : NULL;
    if (dir && !dir[0])
        dir = gp_arena_strdup(a, "/");
    return dir;
}

enum gp_err gp_kube_config_load(const char *path, const char *context, struct gp_arena *a,
                                struct gp_kube_config *out, struct gp_diag *diag)
{
    char *text;
    size_t len;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err != GP_OK)
        return err;
    err = gp_kube_config_parse(text, len, path, kc_dir_of(a, path), context, a, out, diag);
    free(text);
    return err;
}

/* Appends src's entries to dst's (kept in file order, so that a lookup's
 * first match is the first file's) and takes its current-context if dst
 * has none yet. */
static bool kc_append(struct gp_arena *a, struct kc_file *dst, const struct kc_file *src)
{
#define KC_CAT(member, count)                                                                      \
    do {                                                                                           \
        if (src->count == 0)                                                                       \
            break;                                                                                 \
        __typeof__(dst->member) m =                                                                \
            gp_arena_alloc(a, (dst->count + src->count) * sizeof *dst->member);                    \
        if (!m)                                                                                    \
            return false;                                                                          \
        if (dst->count)                                                                            \
            memcpy(m, dst->member, dst->count * sizeof *m);                                        \
        memcpy(m + dst->count, src->member, src->count * sizeof *m);                               \
        dst->member = m;                                                                           \
        dst->count += src->count;                                                                  \
    } while (0)
    KC_CAT(clusters, nclusters);
    KC_CAT(users, nusers);
    KC_CAT(contexts, ncontexts);
#undef KC_CAT
    if (!dst->current && src->current) {
        dst->current = src->current;
        dst->current_at = src->current_at;
    }
    return true;
}

enum gp_err gp_kube_config_load_list(const char *list, const char *context, struct gp_arena *a,
                                     struct gp_kube_config *out, struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    struct kc_file merged = {0};
    size_t files = 0;
    for (const char *p = list; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char *path = gp_arena_strndup(a, p, n);
        p += n + (colon ? 1 : 0);
        if (!path)
            return gp_diag_set(diag, GP_ENOMEM, "KUBECONFIG: out of memory");
        if (!path[0])
            continue; /* "Ignore empty filenames." */
        struct stat st;
        if (stat(path, &st) != 0)
            continue; /* a missing file is skipped, as client-go's loader does */
        char *text;
        size_t len;
        enum gp_err err = gp_fs_read(path, &text, &len, diag);
        if (err != GP_OK)
            return err;
        struct kc_file f;
        bool any;
        err = kc_read_file(text, len, path, kc_dir_of(a, path), a, &f, &any, diag);
        free(text);
        if (err != GP_OK)
            return err; /* "Produce errors for files with content that cannot be deserialized." */
        if (!kc_append(a, &merged, &f))
            return gp_diag_set(diag, GP_ENOMEM, "KUBECONFIG: out of memory");
        files++;
    }
    const char *name = gp_arena_printf(a, "KUBECONFIG=%s", list);
    if (files == 0)
        return gp_diag_set(diag, GP_ENOTFOUND, "%s: none of these files exists", name);
    if (!merged.nclusters && !merged.nusers && !merged.ncontexts && !merged.current)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: empty kubeconfigs (no clusters, contexts or current-context)",
                           name);
    enum gp_err err = kc_resolve(&merged, name, context, a, out, diag);
    if (err != GP_OK)
        memset(out, 0, sizeof *out);
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
    if (env && env[0])
        return gp_kube_config_load_list(env, context, a, out, diag);
    const char *home = getenv("HOME");
    if (!home || !home[0])
        return gp_diag_set(diag, GP_ENOTFOUND,
                           "no kubeconfig: give --kubeconfig, set "
                           "KUBECONFIG or HOME, or run in a pod");
    return gp_kube_config_load(gp_arena_printf(a, "%s/.kube/config", home), context, a, out, diag);
}
