/* watch.h - a watch stream read as the API server sends it: chunks cut
 * into lines (one JSON document each, a line longer than the cap is an
 * error, not an allocation), and each line parsed into an event: ADDED,
 * MODIFIED, DELETED, BOOKMARK or ERROR (a Status inside a 200 stream; 410
 * Expired means the resourceVersion is too old and a re-list must
 * follow). */
#ifndef GP_KUBE_WATCH_H
#define GP_KUBE_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util/err.h"

#define GP_KUBE_LINE_MAX_DEFAULT ((size_t)16 << 20) /* one object in a watch */

/* Called with each complete line (without its '\n', NUL-terminated);
 * non-zero stops the feed (gp_kube_lines_feed returns GP_ESTATE). */
typedef int (*gp_kube_line_fn)(const char *line, size_t len, void *ctx);

struct gp_kube_lines {
    char *buf; /* the partial line so far */
    size_t len, cap, max;
};

void gp_kube_lines_init(struct gp_kube_lines *l, size_t max_line);
void gp_kube_lines_free(struct gp_kube_lines *l);
/* Feeds n bytes. Empty lines are skipped. GP_ELIMIT when a line would
 * pass the cap (diag says so), GP_ENOMEM, GP_ESTATE when fn stopped it (diag untouched). */
enum gp_err gp_kube_lines_feed(struct gp_kube_lines *l, const char *data, size_t n,
                               gp_kube_line_fn fn, void *ctx, struct gp_diag *diag);

enum gp_kube_event_type {
    GP_KUBE_ADDED,
    GP_KUBE_MODIFIED,
    GP_KUBE_DELETED,
    GP_KUBE_BOOKMARK,
    GP_KUBE_ERROR,
};

const char *gp_kube_event_type_name(enum gp_kube_event_type t);

struct gp_kube_event {
    enum gp_kube_event_type type;
    json_t *object;      /* owned reference */
    const char *ns;      /* metadata.namespace ("" for cluster-scoped), borrowed from object */
    const char *name;    /* metadata.name ("" for a BOOKMARK or ERROR) */
    const char *rv;      /* metadata.resourceVersion ("" for an ERROR) */
    long code;           /* an ERROR's Status code (410: too old), else 0 */
    const char *message; /* an ERROR's Status message, else "" */
};

/* Parses one line. ADDED, MODIFIED and DELETED need metadata.name and
 * metadata.resourceVersion; a BOOKMARK needs the resourceVersion. */
enum gp_err gp_kube_event_parse(const char *line, size_t len, struct gp_kube_event *ev,
                                struct gp_diag *diag);
/* gp_kube_event_parse, the members sk names left out of the event's
 * document (its root: {"type", "object"}; gp_kube_jload_skip), e.g. an
 * object's fields no caller reads. sk NULL: none left out. */
struct gp_kube_jskip;
struct gp_kube_jreuse;
enum gp_err gp_kube_event_parse_skip(const char *line, size_t len, const struct gp_kube_jskip *sk,
                                     struct gp_kube_event *ev, struct gp_diag *diag);
/* gp_kube_event_parse_skip, the object's members taken from its previous
 * version as ru says (jload.h's gp_kube_jload_reuse; ru->at "object"). */
enum gp_err gp_kube_event_parse_reuse(const char *line, size_t len, const struct gp_kube_jskip *sk,
                                      struct gp_kube_jreuse *ru, struct gp_kube_event *ev,
                                      struct gp_diag *diag);
void gp_kube_event_clear(struct gp_kube_event *ev);

/* The metadata strings of an object (NULL when absent or not strings). */
const char *gp_kube_meta(const json_t *obj, const char *field);
/* The same of an object's metadata already looked up (NULL: none). */
const char *gp_kube_meta_of(const json_t *meta, const char *field);

/* An object's names and version, each NULL when absent or not a string. */
struct gp_kube_ids {
    const char *ns, *name, *uid, *rv;
};
/* The four from its metadata (NULL: none) walked once: what four
 * gp_kube_meta_of give, without hashing four keys (a watch event's
 * metadata is read by the parse, the informer and the scheduler). */
void gp_kube_meta_ids(const json_t *meta, struct gp_kube_ids *ids);

/* "ns/name" (ns NULL: "") in key[n], cut where snprintf(key, n, "%s/%s")
 * would cut it; the length snprintf would answer. The stores' and the
 * scheduler's key of an object, made for every watch event: without
 * printf's format walk. */
size_t gp_kube_key_make(const char *ns, const char *name, char *key, size_t n);

/* src in dst[n], cut where snprintf(dst, n, "%s", src) would cut it. */
void gp_kube_str_copy(char *dst, size_t n, const char *src);

/* parts[0..count) one after another in dst[n], cut where snprintf(dst,
 * n, "%s%s...") would cut them; the length snprintf would answer (the
 * binders' request paths and copies, a few a pod, without printf's
 * format walk). */
size_t gp_kube_str_join(char *dst, size_t n, const char *const *parts, size_t count);

/* metadata.resourceVersion of a JSON object's text, read without building
 * a tree (an answer of which only that is needed: a patch's): 1 and the
 * version in rv; 0 when the document has none (or not as a string); -1
 * when the scan cannot say (not one well-formed object, an escape in the
 * version, a version longer than n - 1): parse the whole then. */
int gp_kube_scan_rv(const char *text, size_t len, char *rv, size_t n);

#endif
