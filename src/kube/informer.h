/* informer.h - one resource kept in step with the API server: a list
 * (paginated with limit/continue) then a watch from its resourceVersion
 * (with bookmarks), each change handed to a callback and kept in a store
 * by namespace/name. A stale watch (an ERROR event with a 410 Status) is
 * followed by a re-list diffed against the store, so that what changed in
 * the gap arrives as ADDED, MODIFIED or DELETED and nothing is delivered
 * twice; a dropped watch resumes from the last resourceVersion. The
 * list whose continue token expires between its pages (410) is made again
 * whole, in one answer, as client-go's pager does. The
 * resource is a path: "/api/v1/nodes", "/api/v1/pods",
 * "/apis/scheduling.k8s.io/v1/priorityclasses",
 * "/apis/scheduling.x-k8s.io/v1alpha1/podgroups". One informer is driven
 * by one thread, on a client of its own. */
#ifndef GP_KUBE_INFORMER_H
#define GP_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "kube/client.h"
#include "kube/watch.h"

/* A change: type is ADDED, MODIFIED or DELETED; obj the object now (the
 * last known one for DELETED), old the one before (NULL for ADDED). The
 * objects are borrowed for the call. */
typedef void (*gp_kube_change_fn)(enum gp_kube_event_type type, const json_t *obj,
                                  const json_t *old, void *ctx);

struct gp_kube_informer_stats {
    unsigned long lists, pages, watches, relists_410, drops, bookmarks, events;
    unsigned long watch_retries; /* watches answered 429 or 5xx (retried, not re-listed) */
    /* lists made whole after a later page's continue token expired (410) */
    unsigned long full_lists;
    /* members of a watch event's object taken from the version stored
     * before it, their text unchanged (jload.h's gp_kube_jload_reuse) */
    unsigned long reused;
};

struct gp_kube_informer;

/* page_limit: items per list page (0: 500). */
enum gp_err gp_kube_informer_new(struct gp_kube_client *c, const char *path, unsigned page_limit,
                                 gp_kube_change_fn fn, void *ctx, struct gp_kube_informer **out,
                                 struct gp_diag *diag);
void gp_kube_informer_free(struct gp_kube_informer *inf);

/* Members of each object the store leaves out from now on (in lists and
 * watch events alike; jload.h gp_kube_jload_skip, the tree rooted at the
 * object, at least one kid): fields no change function reads, so they
 * cost no tree and no memory. sk borrowed (a static table); NULL: none. */
struct gp_kube_jskip;
void gp_kube_informer_skip(struct gp_kube_informer *inf, const struct gp_kube_jskip *sk);

/* Lists the resource and brings the store to it (changes delivered). */
enum gp_err gp_kube_informer_list(struct gp_kube_informer *inf, struct gp_diag *diag);

/* One watch from the last resourceVersion, for at most timeout_s: GP_OK
 * when the server ended it (or it went stale and the re-list is done),
 * GP_EIO when the connection dropped or the watch was answered 429 or 5xx
 * (call again to resume from the same resourceVersion, after
 * gp_kube_informer_retry_after_s), other errors as they come. */
enum gp_err gp_kube_informer_watch(struct gp_kube_informer *inf, double timeout_s,
                                   struct gp_diag *diag);

/* The resourceVersion the store is at ("" before the first list). */
const char *gp_kube_informer_rv(const struct gp_kube_informer *inf);
size_t gp_kube_informer_count(const struct gp_kube_informer *inf);
/* The stored object, or NULL ("" namespace for cluster-scoped ones). */
const json_t *gp_kube_informer_get(const struct gp_kube_informer *inf, const char *ns,
                                   const char *name);
struct gp_kube_informer_stats gp_kube_informer_stats(const struct gp_kube_informer *inf);

/* How long the server asked to wait (Retry-After) before the next watch,
 * when the last one was answered 429 or 5xx with one; else -1. The
 * caller waits at least this, or its own back-off when -1 (client-go:
 * the rest client honours Retry-After on 429/5xx, with_retry.go
 * checkWait, and the reflector backs off and watches again on a 429,
 * reflector.go isWatchErrorRetriable; a re-list only on 410). */
double gp_kube_informer_retry_after_s(const struct gp_kube_informer *inf);

#endif
