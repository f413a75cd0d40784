/* apidouble.h - the kube-apiserver double's shared state and the
 * functions its files give one another (docs/kube.md): store.c (objects,
 * resourceVersions, answers, routes), listwatch.c (lists and watches),
 * fields.c (field selectors),
 * writes.c (create, update, patch, delete, binding), control.c (faults and
 * /_control/), jsonout.c (JSON text), park.c (suspended connections), main.c (the HTTP
 * server). One mutex (S.mu) guards it all. */
#ifndef GP_APIDOUBLE_H
#define GP_APIDOUBLE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <microhttpd.h>

#include "jsonout.h"

#define MAX_BODY   ((size_t)3 << 20) /* the real server's request limit */
#define MAX_SNAPS  64
#define MAX_FAULTS 16

/* A connection suspended until a write to res (NULL: none) or due_s
 * (mono(); 0: none), whichever comes first (park.c). */
struct parked {
    struct MHD_Connection *c;
    const char *res;
    double due_s;
    bool on; /* suspended now */
    struct parked *prev, *next;
};

struct object {
    char *res, *ns, *name; /* res: "pods", "scheduling.k8s.io/priorityclasses" */
    json_t *cur;           /* NULL once deleted */
    struct text *text;     /* cur's text (a reference; NULL when none could be made) */
    struct object *hnext;  /* the next in its hash bucket */
    size_t last_event;     /* 1 + the index in S.events of its last event; 0: none */
    double delete_at;      /* graceful deletion: when it goes (mono()); 0 none */
};

#define EVENT_TEXTS 4096   /* the last events whose object is kept as text too */
#define LOG_MAX     100000 /* the request log keeps the last this many */

struct event {
    long rv;
    const char *type;
    struct object *o;
    json_t *obj;       /* the object as it was at rv */
    json_t *prev;      /* as it was before (NULL for ADDED): a field selector's watch tells
                        * from the two whether the object came into its view or left it */
    struct text *text; /* obj's text (made once: the write's answer and every watch's line;
                        * a reference), for the last EVENT_TEXTS events; NULL before */
    size_t before;     /* 1 + the index of the event that recorded prev (0: none) */
    long seen_by;      /* the watch (listwatch.c's number; 0 none) whose field selector */
    bool seen;         /* ... was last matched against obj: whether it matched */
};

/* A list's item: a stored version (a reference; a list shows it without
 * kind and apiVersion) and its text (a reference; NULL when none). */
struct snap_item {
    json_t *obj;
    struct text *text;
};

struct snapshot {
    long rv;
    char *res, *ns;
    struct snap_item *items; /* in key order */
    size_t n;
    bool live; /* false once free */
    unsigned id;
};

struct fault {
    long status; /* 429, 500, ...: answer this; 0: no status fault */
    long retry_after_s;
    long delay_ms;    /* wait before answering */
    long late_ms;     /* apply the request, then wait this long before answering (a lost answer) */
    long drop_after;  /* watches: close the connection after this many events; -1 none */
    long stall_after; /* watches: after this many events send nothing more (no event, no
                       * bookmark), the stream kept open until its timeoutSeconds (a peer gone
                       * without a FIN or RST); -1 none */
    long count;       /* requests (or watches) it applies to */
    char match[128];  /* only paths containing this */
};

/* One request as the log keeps it (GET /_control/requests). */
struct logged {
    char user[64]; /* who the token or certificate says ("" without authentication) */
    char method[8];
    char *path; /* the URL's path, "?watch=true" added for a watch */
};

/* HTTPS and who may ask (auth.c). */
struct auth {
    char *cert_pem, *key_pem, *ca_pem; /* NULL: plain HTTP; no client certificates */
    const char *tokens_file;           /* bearer tokens, "TOKEN,USER" a line; NULL none */
    bool required;                     /* a client CA or tokens: 401 without one */
};

struct state {
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* the reaper's (CLOCK_MONOTONIC): signalled when stopping or
                            * when a connection parks until before reaper_until_s */
    double reaper_until_s; /* when the reaper wakes next (mono()) */
    long rv;               /* the last resourceVersion given */
    long compacted;        /* watches from before this are 410 */
    struct object **objs;
    size_t nobjs, capobjs;
    struct object **table; /* by res/ns/name, chained; nbuckets a power of 2 */
    size_t nbuckets;
    size_t graceful; /* objects in a graceful deletion */
    long grace_ms;   /* graceful deletions take min(grace, this); < 0: the grace itself */
    struct event *events;
    size_t nevents, capevents;
    struct snapshot snaps[MAX_SNAPS];
    unsigned snap_id;
    struct fault faults[MAX_FAULTS];
    size_t nfaults;
    long bookmark_ms;
    long watch_batch_ms; /* a watch sends a chunk at most this often (0: every event at once) */
    long requests, watches, bindings, writes, schema_errors;
    long uid;
    struct logged *log; /* a ring of LOG_MAX: the last requests, oldest at log_from */
    size_t nlog, caplog, log_from;
    volatile sig_atomic_t stopping;
};

extern struct state S;

struct answer {
    unsigned status;
    char *body; /* malloc'd */
    const char *retry_after;
    long late_ms; /* wait this long after the request was applied, before answering */
};

#define FSEL_MAX 8 /* terms in a field selector */

/* A field selector (fields.c): every term must hold. */
struct fsel {
    struct fsel_term {
        char label[64], value[256];
        bool neq;          /* != */
        const void *field; /* the kind's field (fields.c) */
    } t[FSEL_MAX];
    size_t n; /* 0: everything */
};

struct route {
    char res[160], ns[256], name[256], sub[32];
    char api_version[96];
    bool namespaced, item;
};

/* store.c */
void now_rfc3339(char *buf, size_t n);
struct object *find(const char *res, const char *ns, const char *name);
/* A new object (no version yet) in the index. */
struct object *obj_new(const char *res, const char *ns, const char *name);
const char *kind_of(const char *res);
void set_rv(json_t *obj, long rv);
void record(struct object *o, const char *type, json_t *obj);
/* The answer to a write: the object of the event just recorded (its text). */
void answer_recorded(struct answer *a, unsigned status);
/* RFC 7386 merge patch: a new value sharing what the patch leaves alone
 * with target, which is not changed (stored versions are never modified). */
json_t *merge_patch(json_t *target, json_t *patch);
/* smpatch.c: a strategic merge patch (lists merged on their Go types'
 * patchMergeKey) of target, which is not changed; NULL with err set for a
 * directive it does not implement or a list element without its key. */
json_t *strategic_patch(json_t *target, json_t *patch, char *err, size_t n);
/* how do_update changes an object */
enum update_kind { UPDATE_PUT, UPDATE_MERGE_PATCH, UPDATE_STRATEGIC_PATCH };
void normalize(json_t *obj);
void answer_json(struct answer *a, unsigned status, json_t *doc);
/* The answer to a GET: the object's current version (its text). */
void answer_object(struct answer *a, unsigned status, const struct object *o);
void answer_status(struct answer *a, unsigned code, const char *reason, const char *name,
                   const char *kind, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
bool parse_route(const char *url, struct route *r);
const char *plural_kind(const struct route *r);
void qualified(const struct route *r, char *b, size_t n);
bool in_scope(const struct object *o, const struct route *r);

/* fields.c */
/* sel (the fieldSelector parameter; NULL or "" for none) for resource res
 * into fs; false with the server's 400 answer in a. */
bool fsel_parse(const char *sel, const char *res, struct fsel *fs, struct answer *a);
/* Whether obj (NULL: none) has what fs asks. */
bool fsel_match(const struct fsel *fs, json_t *obj);

/* listwatch.c */
double mono(void);
struct snapshot *snap_new(const struct route *r, const struct fsel *fs);
void snap_free(struct snapshot *s);
void do_list(const struct route *r, const struct fsel *fs, long limit, const char *cont,
             struct answer *a);
struct MHD_Response *do_watch(struct MHD_Connection *c, const struct route *r,
                              const struct fsel *fs, const char *rv_s, bool bookmarks,
                              long timeout_s, long drop_after, long stall_after);

/* park.c (lock held) */
/* Suspends c until a write to res (NULL: none) or due_s (mono(); 0: none);
 * false (nothing done) once stopping. */
bool park(struct parked *p, struct MHD_Connection *c, const char *res, double due_s);
void park_wake(struct parked *p);         /* resumes p's connection if parked */
void park_drop(struct parked *p);         /* forgets p without resuming it */
void park_wake_resource(const char *res); /* record(): the watches of res */
double park_run_due(double now_s); /* resumes those due; the first due left (INFINITY none) */
void park_wake_all(void);

/* writes.c */
void do_create(const struct route *r, json_t *body, struct answer *a);
struct object *target(const struct route *r, struct answer *a);
bool stale(const struct route *r, struct object *o, json_t *body, bool required, struct answer *a);
void do_update(const struct route *r, json_t *body, enum update_kind how, struct answer *a);
void do_delete(const struct route *r, json_t *body, const char *grace_q, struct answer *a);
void finish_deletions(bool all);
void do_binding(const struct route *r, json_t *body, struct answer *a);

/* schema.c */
bool schema_load(const char *dir);
bool schema_enabled(void);
/* Whether obj, written to route r, is valid; the field and reason in err. */
bool schema_check(const struct route *r, json_t *obj, char *err, size_t n);
/* 422 Invalid for an object that fails schema_check (counted). */
bool schema_refuse(const struct route *r, json_t *obj, const char *name, struct answer *a);
/* A body checked against the named schema (a DELETE's DeleteOptions). */
bool schema_check_as(const char *schema, json_t *obj, char *err, size_t n);

/* auth.c */
bool auth_load(struct auth *au, const char *cert, const char *key, const char *client_ca,
               const char *tokens);
/* Whether the request proves who it is (or none is asked); the user in user. */
bool auth_check(const struct auth *au, struct MHD_Connection *c, char *user, size_t n);
/* url with "?watch=true" for a watch and "fieldSelector=SEL" when given
 * (what RBAC names a list or watch by: kube/rbac.h) */
void log_request(const char *user, const char *method, const char *url, bool watch,
                 const char *field_selector);
json_t *log_json(void); /* {"requests":[{"user","method","path"}...]} */

/* autoalloc.c: the agent's "allocated" patch after a Binding (-1: off) */
void autoalloc_set(long ms);
void autoalloc_bound(struct object *o);
void autoalloc_run(void);
long autoalloc_count(void);
/* provision.c: the PV controller and a provisioner for claims annotated
 * with a selected node (-1: off; 0 the default: at once) */
void provision_set(long ms);
void provision_written(struct object *o);
void provision_run(void);
long provision_count(void);

/* control.c */
void do_control(const char *what, const char *method, json_t *body, struct answer *a);
struct fault take_fault(const char *url, bool watch);

#endif
