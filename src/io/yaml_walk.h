/* yaml_walk.h - the helpers the YAML readers (cluster_yaml.c, manifest.c)
 * share on top of libfyaml's document API: a stream loader that keeps
 * libfyaml quiet and turns its first syntax error into one diag line, a
 * field path ("spec.nodePools[0].gpu.count") kept while walking, node
 * positions, typed scalar readers and a table-driven mapping walker.
 *
 * Used by the readers of src/io and by src/kube/kubeconfig.c (the layers
 * above). Every message has the form
 *   NAME:LINE:COL: PATH: what was expected, got "VALUE"
 * and strings the readers keep are copied into the caller's arena. */
#ifndef GP_IO_YAML_WALK_H
#define GP_IO_YAML_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libfyaml.h>

#include "engine/model.h"
#include "util/arena.h"
#include "util/err.h"

/* Limits the readers enforce, so that no input can ask for unbounded memory. */
#define GP_CLUSTER_MAX_POOLS   10000    /* node pools in one cluster */
#define GP_CLUSTER_MAX_NODES   100000   /* nodes in one cluster, all pools */
#define GP_WORKLOAD_MAX_REPEAT 10000000 /* sim.gpuplane.io/repeat */

/* One walk over one file: where messages point and where strings go. */
struct gp_yaml {
    const char *name; /* the file name in messages (borrowed) */
    struct gp_arena *arena;
    struct gp_diag *diag;
    char path[320]; /* the current field path, NUL-terminated */
    size_t plen;
    int line, col; /* 1-based position of the innermost key, a fallback
                    * for nodes that have none (an empty mapping, null) */
};

/* What a push saved, to be given back to gp_yaml_pop. */
struct gp_yaml_saved {
    size_t plen;
    int line, col;
};

void gp_yaml_init(struct gp_yaml *y, const char *name, struct gp_arena *a, struct gp_diag *diag);

/* Replaces the path with a fixed root (e.g. "Job/train"). */
void gp_yaml_set_root(struct gp_yaml *y, const char *root);
/* Appends ".key" (or "key" at the root) and remembers the key's position. */
struct gp_yaml_saved gp_yaml_push_key(struct gp_yaml *y, const char *key, struct fy_node *keynode);
/* Appends "[i]" and remembers the item's position. */
struct gp_yaml_saved gp_yaml_push_index(struct gp_yaml *y, size_t i, struct fy_node *item);
void gp_yaml_pop(struct gp_yaml *y, struct gp_yaml_saved s);

/* The 1-based line and column where a node starts: a scalar's own token,
 * a mapping's first key, a sequence's first item. False when it has none. */
bool gp_yaml_node_mark(struct fy_node *n, int *line, int *col);

/* Sets diag to "NAME:LINE:COL: PATH: MESSAGE" at node `at` (or at the
 * innermost key when `at` has no position) and returns err. */
enum gp_err gp_yaml_fail(struct gp_yaml *y, struct fy_node *at, enum gp_err err, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));

/* Calls fn on the root of each document of a YAML stream, in order. Empty
 * documents (no content, or a bare null) are skipped. A syntax error
 * stops the stream with GP_EPARSE and "NAME:LINE:COL: MESSAGE". libfyaml
 * never prints: its diagnostics are collected and the first one is used. */
typedef enum gp_err (*gp_yaml_doc_fn)(struct gp_yaml *y, struct fy_node *root, void *ctx);
enum gp_err gp_yaml_each_document(struct gp_yaml *y, const char *text, size_t len,
                                  gp_yaml_doc_fn fn, void *ctx);

/* --- scalars ---------------------------------------------------------- */

/* True for a missing value, "", "~" and plain null/Null/NULL. */
bool gp_yaml_is_null(struct fy_node *n);
/* "a mapping", "a list", "a string", "a number", "null", ... for messages. */
const char *gp_yaml_describe(struct fy_node *n);
/* Writes the node's text, shortened and with control characters replaced,
 * into buf for a message. */
const char *gp_yaml_quote(struct fy_node *n, char *buf, size_t size);

/* The scalar's text copied into the arena. Fails (with a message naming
 * `what`, e.g. "a string") for mappings, lists, aliases and text with a
 * NUL byte. */
enum gp_err gp_yaml_text(struct gp_yaml *y, struct fy_node *n, const char *what, const char **out);
/* A non-empty string. */
enum gp_err gp_yaml_string(struct gp_yaml *y, struct fy_node *n, const char **out);
/* Exactly the string `want` (an apiVersion or a kind): anything else fails
 * with "expected \"want\", got \"...\"". */
enum gp_err gp_yaml_expect(struct gp_yaml *y, struct fy_node *n, const char *want);
/* An unquoted integer in [min, max]. */
enum gp_err gp_yaml_int(struct gp_yaml *y, struct fy_node *n, int64_t min, int64_t max,
                        int64_t *out);
/* An unquoted decimal number in [min, max]. */
enum gp_err gp_yaml_number(struct gp_yaml *y, struct fy_node *n, double min, double max,
                           double *out);
/* Kubernetes quantities, quoted or not: cpu to millicores, memory to MiB. */
enum gp_err gp_yaml_cpu_milli(struct gp_yaml *y, struct fy_node *n, int64_t *out);
enum gp_err gp_yaml_mem_mib(struct gp_yaml *y, struct fy_node *n, int64_t *out);

/* Kubernetes name syntax, for messages and checks. */
bool gp_yaml_label_value_ok(const char *s);    /* "", or <= 63 of [A-Za-z0-9_.-], alnum ends */
bool gp_yaml_qualified_name_ok(const char *s); /* [prefix/]name, as label and taint keys */
bool gp_yaml_dns_label_ok(const char *s);      /* <= 63 of [a-z0-9-], alnum ends */

/* --- mappings --------------------------------------------------------- */

enum gp_yaml_type {
    GP_YT_STRING,    /* const char *, non-empty, in the arena */
    GP_YT_U32,       /* uint32_t in [min, max] */
    GP_YT_I32,       /* int32_t in [min, max] */
    GP_YT_NUMBER,    /* double in [min, max] */
    GP_YT_CPU_MILLI, /* int64_t, a CPU quantity, > 0 unless min is 0 */
    GP_YT_MEM_MIB,   /* int64_t, a memory quantity */
    GP_YT_MEM_MIB32, /* uint32_t, a memory quantity that fits 32 bits */
    GP_YT_CUSTOM,    /* fn(y, value, obj) */
    GP_YT_IGNORE,    /* accepted and not read */
};

#define GP_YF_REQUIRED 1u

typedef enum gp_err (*gp_yaml_field_fn)(struct gp_yaml *y, struct fy_node *value, void *obj);

/* One known field of a mapping: where its value goes in obj. */
struct gp_yaml_field {
    const char *key;
    enum gp_yaml_type type;
    size_t offset;
    unsigned flags;
    double min, max;     /* numeric types */
    gp_yaml_field_fn fn; /* GP_YT_CUSTOM */
};

/* Table rows: GP_YFIELD(key, type, struct, member, flags, min, max) and
 * GP_YCUSTOM(key, fn, flags). */
#define GP_YFIELD(key, type, st, member, flags, min, max)                                          \
    {                                                                                              \
        (key), (type), offsetof(st, member), (flags), (min), (max), NULL                           \
    }
#define GP_YCUSTOM(key, fn, flags)                                                                 \
    {                                                                                              \
        (key), GP_YT_CUSTOM, 0, (flags), 0, 0, (fn)                                                \
    }

/* Walks mapping `n` against a table of fields (at most 64): each known key
 * is read into obj (a null value counts as absent); a missing required
 * field is an error; an unknown key is an error naming the expected ones
 * when strict, and is skipped otherwise. Non-mappings are an error. */
enum gp_err gp_yaml_object(struct gp_yaml *y, struct fy_node *n, const struct gp_yaml_field *fields,
                           size_t nfields, void *obj, bool strict);

/* A mapping of strings to strings (labels, nodeSelector) as an arena array;
 * keys must be qualified names and values label values when `labels`. */
enum gp_err gp_yaml_kv_map(struct gp_yaml *y, struct fy_node *n, bool labels,
                           const struct gp_kv **out, size_t *count);

/* The key node of `key` in mapping n, for pointing at it; NULL if absent. */
struct fy_node *gp_yaml_key_node(struct fy_node *n, const char *key);

/* Iterates a list: calls fn(y, item, index, ctx) with "[i]" pushed.
 * A null value is an empty list; anything else but a list is an error. */
typedef enum gp_err (*gp_yaml_item_fn)(struct gp_yaml *y, struct fy_node *item, size_t i,
                                       void *ctx);
enum gp_err gp_yaml_list(struct gp_yaml *y, struct fy_node *n, gp_yaml_item_fn fn, void *ctx);

#endif
