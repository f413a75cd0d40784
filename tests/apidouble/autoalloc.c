/* autoalloc.c - the node agent's part of the per-node protocol, played by
 * the double for tests and benchmarks that run no agent (--auto-allocate
 * MS, or POST /_control/auto_allocate {"ms":MS}; -1: off, the default): MS
 * milliseconds after a pod's Binding, when the pod is still the same one
 * (uid), bound, and its gpuplane.io/phase annotation is "allocating" for
 * the node it is bound to, the phase is set to "allocated" as the agent's
 * merge patch would (src/node/protocol.c; docs/node.md, "Which pod an
 * Allocate serves"): a new resourceVersion and a MODIFIED watch event.
 * With MS 0 the patch follows the Binding at once, in the same write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apidouble.h"

#define ANN_NODE  "gpuplane.io/node"
#define ANN_PHASE "gpuplane.io/phase"

struct due {
    struct object *o;
    char uid[80];
    double at; /* mono() */
};

static long auto_ms = -1;
static struct due *dues;
static size_t ndues, capdues;
static long auto_done; /* pods marked allocated */

void autoalloc_set(long ms)
{
    auto_ms = ms;
    if (ms < 0)
        ndues = 0;
}

long autoalloc_count(void)
{
    return auto_done;
}

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(obj, a), b));
}

/* The pod marked allocated, if it is still the one bound and allocating. */
static void mark(struct object *o, const char *uid)
{
    json_t *cur = o->cur;
    if (!cur)
        return;
    json_t *meta = json_object_get(cur, "metadata");
    const char *have_uid = json_string_value(json_object_get(meta, "uid"));
    const char *node = str_at(cur, "spec", "nodeName");
    json_t *ann = json_object_get(meta, "annotations");
    const char *an = json_string_value(json_object_get(ann, ANN_NODE));
    const char *ph = json_string_value(json_object_get(ann, ANN_PHASE));
    if (!have_uid || strcmp(have_uid, uid) != 0 || !node || !an || strcmp(an, node) != 0 || !ph ||
        strcmp(ph, "allocating") != 0)
        return;
    /* copied on write, as every write of the double: the stored version
     * is never modified */
    json_t *next = json_copy(cur), *nm = json_copy(meta), *na = json_copy(ann);
    json_object_set_new_nocheck(na, ANN_PHASE, json_stringn_nocheck("allocated", 9));
    json_object_set_new_nocheck(nm, "annotations", na);
    json_object_set_new_nocheck(next, "metadata", nm);
    record(o, "MODIFIED", next);
    auto_done++;
}

void autoalloc_bound(struct object *o)
{
    if (auto_ms < 0 || !o->cur)
        return;
    const char *uid = str_at(o->cur, "metadata", "uid");
    if (!uid)
        return;
    if (auto_ms == 0) {
        mark(o, uid);
        return;
    }
    if (ndues == capdues) {
        size_t cap = capdues ? capdues * 2 : 256;
        struct due *v = realloc(dues, cap * sizeof *v);
        if (!v)
            return;
        dues = v;
        capdues = cap;
    }
    struct due *d = &dues[ndues++];
    d->o = o;
    snprintf(d->uid, sizeof d->uid, "%s", uid);
    d->at = mono() + (double)auto_ms / 1000.0;
}

void autoalloc_run(void)
{
    double now = mono();
    size_t keep = 0;
    for (size_t i = 0; i < ndues; i++) {
        if (dues[i].at <= now)
            mark(dues[i].o, dues[i].uid);
        else
            dues[keep++] = dues[i];
    }
    ndues = keep;
}
