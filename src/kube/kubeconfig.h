/* kubeconfig.h - where the API server is and how to prove who we are: a
 * kubeconfig file (clusters, users, contexts, current-context, namespace;
 * client certificate and key as data or files, bearer token or token file,
 * CA as data or file, insecure-skip-tls-verify only when it is set) or the
 * in-cluster service account (its token, ca.crt and namespace, and
 * KUBERNETES_SERVICE_HOST/PORT). Exec plugins and auth providers are
 * refused by name. Strings live in the caller's arena. */
#ifndef GP_KUBE_KUBECONFIG_H
#define GP_KUBE_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"
#include "util/err.h"

/* The service account's directory in a pod. */
#define GP_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* A PEM blob: from *-data (decoded from base64) or read from a file. */
struct gp_kube_pem {
    const char *file; /* the path, as given or made absolute; NULL if data */
    const char *data; /* PEM text, NUL-terminated; NULL if a file */
    size_t len;
};

struct gp_kube_config {
    const char *server;    /* "https://host:port", no trailing '/' */
    const char *ns;        /* the context's namespace, "default" if unset */
    const char *context;   /* the context used; "in-cluster" for the service account */
    const char *source;    /* the file that gave the cluster, or the service account directory */
    struct gp_kube_pem ca; /* neither set: the system's CA bundle */
    struct gp_kube_pem cert, key;
    const char *token;      /* a static bearer token, or NULL */
    const char *token_file; /* a token file, re-read when it changes, or NULL */
    const char *tls_server_name;
    bool insecure; /* insecure-skip-tls-verify: true, and only then */
};

/* Parses kubeconfig text (name: the file in messages; dir: where relative
 * paths are resolved, NULL for the current directory). context: the
 * context to use, NULL for current-context. Errors name the field:
 * "FILE:LINE:COL: users[1].user.client-key-data: not valid base64". */
enum gp_err gp_kube_config_parse(const char *text, size_t len, const char *name, const char *dir,
                                 const char *context, struct gp_arena *a,
                                 struct gp_kube_config *out, struct gp_diag *diag);

/* Reads and parses a kubeconfig file. */
enum gp_err gp_kube_config_load(const char *path, const char *context, struct gp_arena *a,
                                struct gp_kube_config *out, struct gp_diag *diag);

/* The in-cluster configuration: sa_dir (GP_KUBE_SA_DIR in a pod) holds
 * token, ca.crt and namespace; host and port come from
 * KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT. */
enum gp_err gp_kube_config_in_cluster(const char *sa_dir, struct gp_arena *a,
                                      struct gp_kube_config *out, struct gp_diag *diag);

/* A colon-separated list of kubeconfig files ($KUBECONFIG) merged as
 * kubectl merges them ("Organizing Cluster Access Using kubeconfig Files",
 * kubernetes.io/docs/concepts/configuration/organize-cluster-access-
 * kubeconfig/#merging-kubeconfig-files): empty names ignored, missing
 * files skipped (client-go's loader), a file that cannot be read or parsed
 * an error; the first file to define a cluster, user or context by name
 * wins whole (a later file's entry of that name is discarded, even its
 * fields the first did not set); current-context from the first file that
 * sets it; each file's relative paths taken from its own directory. */
enum gp_err gp_kube_config_load_list(const char *list, const char *context, struct gp_arena *a,
                                     struct gp_kube_config *out, struct gp_diag *diag);

/* Where kubectl looks: path if given (no merging); else in-cluster when
 * KUBERNETES_SERVICE_HOST is set and no $KUBECONFIG; else $KUBECONFIG's
 * files merged (gp_kube_config_load_list); else ~/.kube/config. */
enum gp_err gp_kube_config_find(const char *path, const char *context, struct gp_arena *a,
                                struct gp_kube_config *out, struct gp_diag *diag);

/* Decodes standard base64 (padding optional, whitespace skipped) into a
 * NUL-terminated arena copy; false on a bad character or length. */
bool gp_kube_base64_decode(const char *in, size_t len, struct gp_arena *a, char **out,
                           size_t *out_len);

#endif
