/* eventlog_internal.h - what the event log's writer and reader share: the
 * names of enum values as the log spells them. Internal to src/io. */
#ifndef GP_IO_EVENTLOG_INTERNAL_H
#define GP_IO_EVENTLOG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "io/eventlog.h"

/* A table of names, indexed by the enum's value. */
struct gp_evl_names {
    const char *const *names;
    size_t n;
};

extern const struct gp_evl_names gp_evl_effects;   /* enum gp_taint_effect */
extern const struct gp_evl_names gp_evl_kinds;     /* enum gp_decision_kind */
extern const struct gp_evl_names gp_evl_gangs;     /* enum gp_gang_wait */
extern const struct gp_evl_names gp_evl_evicts;    /* enum gp_evict_reason */
extern const struct gp_evl_names gp_evl_modes;     /* enum gp_share_mode */
extern const struct gp_evl_names gp_evl_events;    /* enum gp_evlog_kind */
extern const struct gp_evl_names gp_evl_match_ops; /* enum gp_match_op */

/* The index of name in t; -1 when it is not there. */
int gp_evl_name_find(const struct gp_evl_names *t, const char *name);

/* A decision as a JSON object (names of the pod and node read from e when
 * it is not NULL). */
json_t *gp_evl_decision_json(const struct gp_engine *e, uint64_t cycle, uint32_t index,
                             const struct gp_decision *d);

/* --- the reader's values (eventlog_specs.c) ------------------------------- */

/* Where a line is ("FILE:LINE"), the arena its values go to, the message. */
struct gp_evl_rd {
    const char *where;
    struct gp_arena *a;
    struct gp_diag *d;
};

/* GP_EINVALID with "WHERE: FIELD: WHAT". */
enum gp_err gp_evl_bad(struct gp_evl_rd *r, const char *field, const char *what);
/* o[key] (field named base.key): absent gives 0 (or NULL) unless required. */
enum gp_err gp_evl_int(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                       int64_t min, int64_t max, bool required, int64_t *out);
enum gp_err gp_evl_real(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                        bool required, double *out);
enum gp_err gp_evl_str(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                       bool required, const char **out);
#define GP_EVL_U32(r, o, base, key, req, dst)                                                      \
    do {                                                                                           \
        int64_t v_;                                                                                \
        enum gp_err e_ = gp_evl_int(r, o, base, key, 0, UINT32_MAX, req, &v_);                     \
        if (e_ != GP_OK)                                                                           \
            return e_;                                                                             \
        (dst) = (uint32_t)v_;                                                                      \
    } while (0)

enum gp_err gp_evl_pick(struct gp_evl_rd *r, const json_t *o, const char *field, struct gp_pick *p);
enum gp_err gp_evl_node(struct gp_evl_rd *r, const json_t *o, struct gp_node_spec *n);
enum gp_err gp_evl_pod(struct gp_evl_rd *r, const json_t *o, struct gp_pod_spec *p);
enum gp_err gp_evl_queue(struct gp_evl_rd *r, const json_t *o, struct gp_queue_spec *q);
enum gp_err gp_evl_group(struct gp_evl_rd *r, const json_t *o, struct gp_group_spec *g);
/* A [[key, value], ...] member `key` of o (absent: none). */
enum gp_err gp_evl_kv(struct gp_evl_rd *r, const json_t *o, const char *key,
                      const struct gp_kv **out, size_t *n);
/* A decision line's decision and its index (ev->index). */
enum gp_err gp_evl_decision(struct gp_evl_rd *r, const json_t *o, struct gp_evlog_event *ev);

#endif
