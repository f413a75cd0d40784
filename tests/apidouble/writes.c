/* writes.c - create (409 AlreadyExists), PUT (resourceVersion required,
 * 409 when stale), merge patch (a resourceVersion in it is a
 * precondition; "" is none, version 0: the registry's Update is then
 * unconditional where the kind allows it), status only through /status, delete, and Binding (201
 * with a Status; 409 when bound, being deleted, or uid/resourceVersion do
 * not match), as kube-apiserver v1.28 answers them. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apidouble.h"

/* --- writes ------------------------------------------------------------ */

/* obj's member k replaced by a shallow copy of itself (an empty object when
 * it is none), so that it can be changed without changing what it was
 * shared with. */
static json_t *fresh_child(json_t *obj, const char *k)
{
    json_t *v = json_object_get(obj, k);
    json_t *c = json_is_object(v) ? json_copy(v) : json_object();
    json_object_set_new_nocheck(obj, k, c); /* k: the caller's constant */
    return c;
}

/* obj's member k set to v (a new reference) unless it has one. */
static void set_default(json_t *obj, const char *k, json_t *v)
{
    if (!json_object_get(obj, k))
        json_object_set(obj, k, v);
    json_decref(v);
}

/* obj's member k set to the string s (ASCII, the caller's constant) unless
 * it has one: the value is made only when it is set (a pod names most of
 * them itself, or not: a create made and freed every default before). */
static void set_default_str(json_t *obj, const char *k, const char *s)
{
    if (!json_object_get(obj, k))
        json_object_set_new_nocheck(obj, k, json_stringn_nocheck(s, strlen(s)));
}

/* A toleration {key, operator: Exists, effect: NoExecute,
 * tolerationSeconds: 300} (the members in that order), as
 * DefaultTolerationSeconds adds it; the bytes json_pack made of it. */
static json_t *no_execute_toleration(const char *key)
{
    json_t *t = json_object();
    json_object_set_new_nocheck(t, "key", json_string_nocheck(key));
    json_object_set_new_nocheck(t, "operator", json_stringn_nocheck("Exists", 6));
    json_object_set_new_nocheck(t, "effect", json_stringn_nocheck("NoExecute", 9));
    json_object_set_new_nocheck(t, "tolerationSeconds", json_integer(300));
    return t;
}

/* Whether tolerations already tolerate key:NoExecute, as the
 * DefaultTolerationSeconds plugin asks it: the key or none, NoExecute or
 * every effect. */
static bool tolerates_no_execute(const json_t *tolerations, const char *key)
{
    size_t i;
    json_t *t;
    json_array_foreach(tolerations, i, t)
    {
        const char *k = json_string_value(json_object_get(t, "key"));
        const char *eff = json_string_value(json_object_get(t, "effect"));
        if ((!k || !k[0] || strcmp(k, key) == 0) && (!eff || !eff[0] || !strcmp(eff, "NoExecute")))
            return true;
    }
    return false;
}

/* What kube-apiserver v1.28 fills into a new Pod (recorded:
 * ../shared/k8s/samples/recorded-apiserver-v1.28/pod-create.json): the
 * defaults of pkg/apis/core/v1/defaults.go (restartPolicy,
 * terminationGracePeriodSeconds, dnsPolicy, securityContext,
 * schedulerName, enableServiceLinks; per container requests from limits,
 * terminationMessagePath and -Policy, imagePullPolicy), the admission
 * plugins' DefaultTolerationSeconds (not-ready and unreachable, NoExecute,
 * 300 s, unless tolerated already), Priority (priority and
 * preemptionPolicy from priorityClassName's class, or the global default
 * one, else 0; a class not stored is left to the scheduler, where the
 * server would refuse the pod) and ServiceAccount (its name; not the
 * token volume). */
static void pod_defaults(json_t *pod)
{
    json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec))
        return;
    set_default_str(spec, "restartPolicy", "Always");
    if (!json_object_get(spec, "terminationGracePeriodSeconds"))
        json_object_set_new_nocheck(spec, "terminationGracePeriodSeconds", json_integer(30));
    set_default_str(spec, "dnsPolicy", "ClusterFirst");
    if (!json_object_get(spec, "securityContext"))
        json_object_set_new_nocheck(spec, "securityContext", json_object());
    set_default_str(spec, "schedulerName", "default-scheduler");
    if (!json_object_get(spec, "enableServiceLinks"))
        json_object_set_new_nocheck(spec, "enableServiceLinks", json_true());
    set_default_str(spec, "serviceAccountName", "default");
    if (!json_object_get(spec, "serviceAccount"))
        json_object_set_new_nocheck(spec, "serviceAccount",
                                    json_copy(json_object_get(spec, "serviceAccountName")));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        json_t *res = json_object_get(c, "resources"), *lim = json_object_get(res, "limits");
        if (json_object_size(lim)) {
            json_t *req = json_object_get(res, "requests");
            if (!json_is_object(req))
                json_object_set_new(res, "requests", req = json_object());
            const char *k;
            json_t *v;
            json_object_foreach(lim, k, v) set_default(req, k, json_copy(v));
        }
        set_default_str(c, "terminationMessagePath", "/dev/termination-log");
        set_default_str(c, "terminationMessagePolicy", "File");
        if (!json_object_get(c, "imagePullPolicy")) {
            const char *image = json_string_value(json_object_get(c, "image"));
            const char *tag = image ? strrchr(image, ':') : NULL;
            bool latest = !tag || strchr(tag, '/') || strcmp(tag, ":latest") == 0;
            if (image && strchr(image, '@'))
                latest = false; /* by digest */
            set_default_str(c, "imagePullPolicy", latest ? "Always" : "IfNotPresent");
        }
    }
    json_t *tol = json_object_get(spec, "tolerations");
    static const char *const keys[] = {"node.kubernetes.io/not-ready",
                                       "node.kubernetes.io/unreachable"};
    for (size_t k = 0; k < 2; k++)
        if (!tolerates_no_execute(tol, keys[k])) {
            if (!json_is_array(tol))
                json_object_set_new(spec, "tolerations", tol = json_array());
            json_array_append_new(tol, no_execute_toleration(keys[k]));
        }
    const char *want = json_string_value(json_object_get(spec, "priorityClassName"));
    json_t *cls = NULL;
    if (want && want[0]) {
        struct object *o = find("scheduling.k8s.io/priorityclasses", "", want);
        if (!o || !o->cur)
            return;
        cls = o->cur;
    } else {
        /* the PriorityClasses among the objects (S.objs only grows: each
         * object looked at once, not once a pod) */
        static struct object **pcs;
        static size_t npcs, seen;
        for (; seen < S.nobjs; seen++)
            if (strcmp(S.objs[seen]->res, "scheduling.k8s.io/priorityclasses") == 0) {
                struct object **v = realloc(pcs, (npcs + 1) * sizeof *v);
                if (!v)
                    break;
                pcs = v;
                pcs[npcs++] = S.objs[seen];
            }
        for (size_t j = 0; j < npcs; j++) {
            struct object *o = pcs[j];
            if (o->cur && json_is_true(json_object_get(o->cur, "globalDefault")) &&
                (!cls || json_integer_value(json_object_get(o->cur, "value")) <
                             json_integer_value(json_object_get(cls, "value"))))
                cls = o->cur;
        }
    }
    if (cls && !json_object_get(spec, "priorityClassName"))
        json_object_set(spec, "priorityClassName",
                        json_object_get(json_object_get(cls, "metadata"), "name"));
    if (!json_object_get(spec, "priority"))
        json_object_set_new(
            spec, "priority",
            json_integer(cls ? json_integer_value(json_object_get(cls, "value")) : 0));
    if (!json_object_get(spec, "preemptionPolicy")) {
        json_t *pp = cls ? json_object_get(cls, "preemptionPolicy") : NULL;
        if (json_is_string(pp)) /* a stored string: valid UTF-8 already */
            json_object_set_new(spec, "preemptionPolicy", json_string(json_string_value(pp)));
        else
            set_default_str(spec, "preemptionPolicy", "PreemptLowerPriority");
    }
}

/* What kube-apiserver v1.28 fills into a new claim, volume or class (the
 * status is the server's: pkg/registry/core/persistentvolumeclaim and
 * persistentvolume strategy.go PrepareForCreate reset it, the controllers
 * write it through /status; the defaults of pkg/apis/core/v1/defaults.go
 * SetDefaults_PersistentVolumeClaim/_PersistentVolume: phase Pending,
 * volumeMode Filesystem, persistentVolumeReclaimPolicy Retain; of
 * pkg/apis/storage/v1/defaults.go SetDefaults_StorageClass: reclaimPolicy
 * Delete, volumeBindingMode Immediate). */
static void volume_defaults(const struct route *r, json_t *obj)
{
    bool pvc = strcmp(r->res, "persistentvolumeclaims") == 0;
    bool pv = strcmp(r->res, "persistentvolumes") == 0;
    if (pvc || pv) {
        json_t *spec = json_object_get(obj, "spec");
        if (!json_is_object(spec))
            json_object_set_new(obj, "spec", spec = json_object());
        set_default(spec, "volumeMode", json_string("Filesystem"));
        if (pv)
            set_default(spec, "persistentVolumeReclaimPolicy", json_string("Retain"));
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Pending"));
    } else if (strcmp(r->res, "storage.k8s.io/storageclasses") == 0) {
        set_default(obj, "reclaimPolicy", json_string("Delete"));
        set_default(obj, "volumeBindingMode", json_string("Immediate"));
    }
}

/* A Namespace's label kubernetes.io/metadata.name is its name, on every
 * create and update whatever the body says (pkg/apis/core/v1/defaults.go
 * SetDefaults_Namespace, since 1.21); a new one is Active with the
 * "kubernetes" finalizer (pkg/registry/core/namespace/strategy.go
 * PrepareForCreate). m is obj's own metadata; its labels may be shared
 * with a stored version, so they are copied. */
static void namespace_defaults(const struct route *r, json_t *obj, json_t *m, bool create)
{
    if (strcmp(r->res, "namespaces") != 0)
        return;
    json_t *l = json_object_get(m, "labels");
    json_t *nl = json_is_object(l) ? json_copy(l) : json_object();
    json_object_set(nl, "kubernetes.io/metadata.name", json_object_get(m, "name"));
    json_object_set_new(m, "labels", nl);
    if (!create)
        return;
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec))
        json_object_set_new(obj, "spec", spec = json_object());
    if (!json_object_get(spec, "finalizers"))
        json_object_set_new(spec, "finalizers", json_pack("[s]", "kubernetes"));
    json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
}

/* "00000000-0000-4000-8000-%012ld" of n > 0 (at least twelve digits, more
 * when it has more) into b (48 bytes), with no printf a create. */
static void uid_text(char *b, long n)
{
    char d[24], *p = d + sizeof d;
    unsigned long u = n > 0 ? (unsigned long)n : 0;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t nd = (size_t)(d + sizeof d - p), pad = nd < 12 ? 12 - nd : 0;
    memcpy(b, "00000000-0000-4000-8000-", 24);
    memset(b + 24, '0', pad);
    memcpy(b + 24 + pad, p, nd);
    b[24 + pad + nd] = '\0';
}

void do_create(const struct route *r, json_t *body, struct answer *a)
{
    json_t *meta = json_object_get(body, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (!json_is_object(body) || !name || !name[0]) {
        answer_status(a, 422, "Invalid", NULL, NULL,
                      "%s \"\" is invalid: metadata.name: Required value: name or generateName "
                      "is required",
                      kind_of(r->res));
        return;
    }
    if (r->namespaced && ns && strcmp(ns, r->ns) != 0) {
        answer_status(a, 400, "BadRequest", NULL, NULL,
                      "the namespace of the provided object does not match the namespace sent "
                      "on the request");
        return;
    }
    if (schema_refuse(r, body, name, a))
        return;
    struct object *o = find(r->res, r->namespaced ? r->ns : "", name);
    if (o && o->cur) {
        char q[200];
        qualified(r, q, sizeof q);
        answer_status(a, 409, "AlreadyExists", name, plural_kind(r), "%s \"%s\" already exists", q,
                      name);
        return;
    }
    if (!o)
        o = obj_new(r->res, r->namespaced ? r->ns : "", name);
    /* the body is the request's own tree (main.c read it for this request
     * alone and drops its reference after): filled in, it becomes the
     * stored version itself, where a deep copy of it was made before (a
     * quarter of a create's instructions); a body someone else holds too
     * is still copied */
    json_t *obj = body->refcount == 1 ? json_incref(body) : json_deep_copy(body);
    meta = json_object_get(obj, "metadata");
    char uid[48], ts[32];
    S.uid++;
    uid_text(uid, S.uid);
    now_rfc3339(ts, sizeof ts);
    /* (the uid, the time and the kind are ASCII; the namespace and the
     * version come from the URL and are checked) */
    json_object_set_new_nocheck(meta, "uid", json_string_nocheck(uid));
    json_object_set_new_nocheck(meta, "creationTimestamp", json_string_nocheck(ts));
    if (r->namespaced)
        json_object_set_new_nocheck(meta, "namespace", json_string(r->ns));
    json_object_set_new_nocheck(obj, "kind", json_string_nocheck(kind_of(r->res)));
    json_object_set_new_nocheck(obj, "apiVersion", json_string(r->api_version));
    if (strcmp(r->res, "pods") == 0) { /* status is the server's to write */
        json_t *st = json_object();
        json_object_set_new_nocheck(st, "phase", json_stringn_nocheck("Pending", 7));
        /* a pod created with scheduling gates: PodScheduled False, reason
         * SchedulingGated (pkg/registry/core/pod/strategy.go PrepareForCreate,
         * applySchedulingGatedCondition); an update keeps the status
         * (PrepareForUpdate), so the condition stays until a scheduler's
         * status patch or the Binding replaces it */
        if (json_array_size(json_object_get(json_object_get(obj, "spec"), "schedulingGates")) > 0)
            json_object_set_new(st, "conditions",
                                json_pack("[{s:s,s:s,s:s,s:s,s:n,s:s}]", "type", "PodScheduled",
                                          "status", "False", "reason", "SchedulingGated", "message",
                                          "Scheduling is blocked due to non-empty scheduling gates",
                                          "lastProbeTime", "lastTransitionTime", ts));
        json_object_set_new_nocheck(obj, "status", st);
        pod_defaults(obj);
    }
    volume_defaults(r, obj);
    namespace_defaults(r, obj, json_object_get(obj, "metadata"), true);
    normalize(obj);
    record(o, "ADDED", obj);
    answer_recorded(a, 201);
}

/* The stored object for a write, or an answer (404). */
struct object *target(const struct route *r, struct answer *a)
{
    struct object *o = find(r->res, r->namespaced ? r->ns : "", r->name);
    if (!o || !o->cur) {
        char q[200];
        qualified(r, q, sizeof q);
        answer_status(a, 404, "NotFound", r->name, plural_kind(r), "%s \"%s\" not found", q,
                      r->name);
        return NULL;
    }
    return o;
}

bool stale(const struct route *r, struct object *o, json_t *body, bool required, struct answer *a)
{
    const char *want =
        json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
    const char *have =
        json_string_value(json_object_get(json_object_get(o->cur, "metadata"), "resourceVersion"));
    if ((!want || !want[0]) && required) {
        answer_status(a, 422, "Invalid", r->name, plural_kind(r),
                      "%s \"%s\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must "
                      "be specified for an update",
                      kind_of(r->res), r->name);
        return true;
    }
    if (want && want[0] && strcmp(want, have) != 0) { /* "": none (version 0) */
        char q[200];
        qualified(r, q, sizeof q);
        answer_status(a, 409, "Conflict", r->name, plural_kind(r),
                      "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                      "please apply your changes to the latest version and try again",
                      q, r->name);
        return true;
    }
    return false;
}

/* A new version from body (PUT) or patch (PATCH): status only through
 * /status, and nothing but status through it. */
/* Every element of small is in big (json_equal). */
static bool all_in(json_t *small, json_t *big)
{
    size_t i, j;
    json_t *x, *y;
    json_array_foreach(small, i, x)
    {
        bool found = false;
        json_array_foreach(big, j, y)
        {
            found = found || json_equal(x, y);
        }
        if (!found)
            return false;
    }
    return true;
}

/* Containers alike but for their image (a pod's one changeable field of them). */
static bool same_but_images(json_t *a, json_t *b)
{
    if (json_array_size(a) != json_array_size(b))
        return false;
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        const char *k;
        json_t *v;
        json_object_foreach(x, k, v)
        {
            if (strcmp(k, "image") != 0 && !json_equal(v, json_object_get(y, k)))
                return false;
        }
        json_object_foreach(y, k, v)
        {
            if (strcmp(k, "image") != 0 && !json_object_get(x, k))
                return false;
        }
    }
    return true;
}

/* Whether a pod's spec may go from old to next, as ValidatePodUpdate
 * (pkg/apis/core/validation/validation.go) allows: only the containers'
 * and init containers' images, activeDeadlineSeconds,
 * terminationGracePeriodSeconds, tolerations added to, and schedulingGates
 * removed (PodSchedulingReadiness); nodeName, schedulerName, resources and
 * the rest are fixed once the pod is made. */
static bool pod_spec_update_ok(json_t *old, json_t *next)
{
    if (old == next) /* a patch that left the spec alone shares it */
        return true;
    static const char *const free_keys[] = {"activeDeadlineSeconds",
                                            "terminationGracePeriodSeconds"};
    const char *k;
    json_t *v;
    for (int pass = 0; pass < 2; pass++) {
        json_t *from = pass ? next : old, *to = pass ? old : next;
        json_object_foreach(from, k, v)
        {
            if (strcmp(k, free_keys[0]) == 0 || strcmp(k, free_keys[1]) == 0)
                continue;
            json_t *w = json_object_get(to, k);
            if (strcmp(k, "containers") == 0 || strcmp(k, "initContainers") == 0) {
                if (!same_but_images(v, w))
                    return false;
            } else if (strcmp(k, "tolerations") == 0) {
                if (!all_in(json_object_get(old, k), json_object_get(next, k)))
                    return false;
            } else if (strcmp(k, "schedulingGates") == 0) {
                if (!all_in(json_object_get(next, k), json_object_get(old, k)))
                    return false;
            } else if (!json_equal(v, w)) {
                return false;
            }
        }
    }
    return true;
}

void do_update(const struct route *r, json_t *body, enum update_kind how, struct answer *a)
{
    bool patch = how != UPDATE_PUT;
    struct object *o = target(r, a);
    if (!o || stale(r, o, body, !patch, a))
        return;
    json_t *old = o->cur;
    /* a patch's new version shares what it leaves alone with the old one;
     * whatever is changed below is a fresh copy (stored versions are never
     * modified; normalize changes only numbers, which no stored version has) */
    char why[300] = "";
    json_t *next = how == UPDATE_STRATEGIC_PATCH ? strategic_patch(old, body, why, sizeof why)
                   : patch                       ? merge_patch(old, body)
                                                 : json_deep_copy(body);
    if (!next) {
        answer_status(a, 400, "BadRequest", NULL, NULL, "%s", why);
        return;
    }
    if (!json_is_object(next)) {
        json_decref(next);
        answer_status(a, 400, "BadRequest", NULL, NULL, "the body is not an object");
        return;
    }
    bool status_only = strcmp(r->sub, "status") == 0;
    json_t *keep = status_only ? json_copy(old) : next;
    if (status_only) {
        json_object_set(keep, "status", json_object_get(next, "status"));
        json_decref(next);
    } else if (json_object_get(old, "status")) {
        json_object_set(keep, "status", json_object_get(old, "status"));
    } else {
        json_object_del(keep, "status");
    }
    /* identity is the server's; metadata copied unless it is the write's
     * own already (a patch of it made a new one, a PUT's body is a copy) */
    json_t *m = json_object_get(keep, "metadata"), *om = json_object_get(old, "metadata");
    if (!json_is_object(m) || m == om)
        m = fresh_child(keep, "metadata");
    const char *fixed[] = {"name", "namespace", "uid", "creationTimestamp"};
    for (size_t i = 0; i < 4; i++)
        if (json_object_get(om, fixed[i]))
            json_object_set(m, fixed[i], json_object_get(om, fixed[i]));
    /* the deletion mark is the server's alone (BeforeUpdate keeps the old one) */
    static const char *const marks[] = {"deletionTimestamp", "deletionGracePeriodSeconds"};
    for (size_t i = 0; i < 2; i++) {
        if (json_object_get(om, marks[i]))
            json_object_set(m, marks[i], json_object_get(om, marks[i]));
        else
            json_object_del(m, marks[i]);
    }
    json_object_set_new(keep, "kind", json_string(kind_of(r->res)));
    json_object_set_new(keep, "apiVersion", json_string(r->api_version));
    namespace_defaults(r, keep, m, false);
    /* (patches only: a PUT's body lacks the defaults the server fills in
     * before it compares, which the double fills in on create only) */
    if (patch && !status_only && strcmp(r->res, "pods") == 0 &&
        !pod_spec_update_ok(json_object_get(old, "spec"), json_object_get(keep, "spec"))) {
        json_decref(keep);
        answer_status(a, 422, "Invalid", r->name, "pods",
                      "Pod \"%s\" is invalid: spec: Forbidden: pod updates may not change fields "
                      "other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
                      "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                      "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
                      "set to 1 if it was previously negative)",
                      r->name);
        return;
    }
    if (schema_refuse(r, keep, r->name, a)) {
        json_decref(keep);
        return;
    }
    normalize(keep);
    bool gone = strcmp(r->res, "pods") != 0 && json_object_get(m, "deletionTimestamp") &&
                json_array_size(json_object_get(m, "finalizers")) == 0;
    record(o, gone ? "DELETED" : "MODIFIED", keep); /* its last finalizer removed: deleted */
    answer_recorded(a, 200);
    provision_written(o); /* (provision.c: a claim annotated with its node) */
}

/* Ends a graceful deletion whose time has come (lock held). */
void finish_deletions(bool all)
{
    if (!S.graceful)
        return;
    double now = mono();
    for (size_t i = 0; i < S.nobjs; i++) {
        struct object *o = S.objs[i];
        if (o->cur && o->delete_at > 0 && (all || now >= o->delete_at)) {
            o->delete_at = 0;
            S.graceful--;
            record(o, "DELETED", json_deep_copy(o->cur));
        }
    }
}

/* DELETE: a pod on a node goes gracefully (pkg/registry/core/pod/strategy.go
 * CheckGracefulDelete: the grace of the DeleteOptions, else the pod's
 * terminationGracePeriodSeconds, else 30; 0 for a pod on no node or one that
 * has ended): deletionTimestamp and deletionGracePeriodSeconds set (MODIFIED),
 * and DELETED when the kubelet would have stopped it (after the grace, or
 * S.grace_ms when that is shorter). Anything else goes at once. */
void do_delete(const struct route *r, json_t *body, const char *grace_q, struct answer *a)
{
    struct object *o = target(r, a);
    if (!o)
        return;
    char err[600];
    if (body && !schema_check_as("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", body, err,
                                 sizeof err)) {
        S.schema_errors++;
        fprintf(stderr, "apidouble: schema: DeleteOptions %s: %s\n", r->name, err);
        answer_status(a, 400, "BadRequest", NULL, NULL, "DeleteOptions is invalid: %s", err);
        return;
    }
    /* preconditions (meta/v1 Preconditions): a uid or resourceVersion that
     * differs fails as a storage precondition, answered 409 Conflict
     * (apiserver registry InterpretDeleteError; the DeleteOptions schema:
     * "If not possible, a 409 Conflict status will be returned") */
    json_t *pre = json_object_get(body, "preconditions"), *om = json_object_get(o->cur, "metadata");
    const char *puid = json_string_value(json_object_get(pre, "uid"));
    const char *prv = json_string_value(json_object_get(pre, "resourceVersion"));
    const char *huid = json_string_value(json_object_get(om, "uid"));
    const char *hrv = json_string_value(json_object_get(om, "resourceVersion"));
    if (puid && (!huid || strcmp(puid, huid) != 0)) {
        answer_status(a, 409, "Conflict", r->name, plural_kind(r),
                      "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID in "
                      "precondition: %s, UID in object meta: %s",
                      plural_kind(r), r->name, puid, huid ? huid : "");
        return;
    }
    if (prv && (!hrv || strcmp(prv, hrv) != 0)) {
        answer_status(a, 409, "Conflict", r->name, plural_kind(r),
                      "Operation cannot be fulfilled on %s \"%s\": Precondition failed: "
                      "ResourceVersion in precondition: %s, ResourceVersion in object meta: %s",
                      plural_kind(r), r->name, prv, hrv ? hrv : "");
        return;
    }
    long grace = -1;
    json_t *g = json_object_get(body, "gracePeriodSeconds");
    if (json_is_integer(g))
        grace = (long)json_integer_value(g);
    else if (grace_q)
        grace = atol(grace_q);
    json_t *spec = json_object_get(o->cur, "spec");
    if (strcmp(r->res, "pods") == 0) {
        const char *node = json_string_value(json_object_get(spec, "nodeName"));
        const char *phase =
            json_string_value(json_object_get(json_object_get(o->cur, "status"), "phase"));
        if (grace < 0) {
            json_t *t = json_object_get(spec, "terminationGracePeriodSeconds");
            grace = json_is_integer(t) ? (long)json_integer_value(t) : 30;
        }
        if (!node || !node[0] ||
            (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
            grace = 0;
    } else {
        grace = 0;
    }
    if (grace > 0) {
        double wait = (double)grace;
        if (S.grace_ms >= 0 && (double)S.grace_ms / 1000 < wait)
            wait = (double)S.grace_ms / 1000;
        json_t *next = json_deep_copy(o->cur);
        json_t *m = json_object_get(next, "metadata");
        if (!json_object_get(m, "deletionTimestamp")) {
            char ts[32];
            time_t t = time(NULL) + grace;
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
            json_object_set_new(m, "deletionTimestamp", json_string(ts));
            json_object_set_new(m, "deletionGracePeriodSeconds", json_integer(grace));
            if (o->delete_at == 0)
                S.graceful++;
            o->delete_at = mono() + wait;
        }
        record(o, "MODIFIED", next);
        answer_recorded(a, 200);
        return;
    }
    /* an object (but a pod) with finalizers is only marked: deletionTimestamp
     * set (MODIFIED), and deleted once an update leaves it none
     * (k8s.io/apiserver registry/generic/registry/store.go: Delete's
     * updateForGracefulDeletionAndFinalizers, Update's
     * shouldDeleteDuringUpdate) - a claim in use keeps the
     * kubernetes.io/pvc-protection finalizer so */
    if (json_array_size(json_object_get(om, "finalizers")) > 0) {
        if (!json_object_get(om, "deletionTimestamp")) {
            json_t *next = json_deep_copy(o->cur);
            json_t *m = json_object_get(next, "metadata");
            char ts[32];
            now_rfc3339(ts, sizeof ts);
            json_object_set_new(m, "deletionTimestamp", json_string(ts));
            json_object_set_new(m, "deletionGracePeriodSeconds", json_integer(0));
            record(o, "MODIFIED", next);
            answer_recorded(a, 200);
        } else {
            a->status = 200;
            a->body = json_text(o->cur, NULL);
        }
        return;
    }
    if (o->delete_at > 0) {
        o->delete_at = 0;
        S.graceful--;
    }
    json_t *last = json_deep_copy(o->cur);
    record(o, "DELETED", last);
    answer_recorded(a, 200);
}

void do_binding(const struct route *r, json_t *body, struct answer *a)
{
    struct object *o = target(r, a);
    if (!o)
        return;
    if (schema_refuse(r, body, r->name, a))
        return;
    json_t *meta = json_object_get(body, "metadata"), *tg = json_object_get(body, "target");
    const char *bname = json_string_value(json_object_get(meta, "name"));
    const char *tkind = json_string_value(json_object_get(tg, "kind"));
    const char *node = json_string_value(json_object_get(tg, "name"));
    if (!bname || strcmp(bname, r->name) != 0) {
        answer_status(a, 400, "BadRequest", NULL, NULL,
                      "name in URL does not match name in Binding object");
        return;
    }
    if ((tkind && tkind[0] && strcmp(tkind, "Node") != 0) || !node || !node[0]) {
        answer_status(a, 422, "Invalid", r->name, "bindings",
                      "Binding \"%s\" is invalid: target: a Node with a name is required", r->name);
        return;
    }
    json_t *om = json_object_get(o->cur, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const char *have_uid = json_string_value(json_object_get(om, "uid"));
    const char *have_rv = json_string_value(json_object_get(om, "resourceVersion"));
    if ((uid && strcmp(uid, have_uid) != 0) || (rv && strcmp(rv, have_rv) != 0)) {
        answer_status(a, 409, "Conflict", r->name, "pods",
                      "Operation cannot be fulfilled on pods \"%s\": the object has been "
                      "modified; please apply your changes to the latest version and try again",
                      r->name);
        return;
    }
    json_t *spec = json_object_get(o->cur, "spec");
    const char *bound = json_string_value(json_object_get(spec, "nodeName"));
    if (bound && bound[0]) {
        answer_status(a, 409, "Conflict", r->name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                      "assigned to node \"%s\"",
                      r->name, r->name, bound);
        return;
    }
    /* a gated pod (PodSchedulingReadiness, on by default since v1.27) is
     * not bound: pkg/registry/core/pod/storage/storage.go
     * setPodHostAndAnnotations "pod %v has non-empty .spec.schedulingGates",
     * answered as its other refusals, 409 on pods/binding */
    if (json_array_size(json_object_get(spec, "schedulingGates")) > 0) {
        answer_status(a, 409, "Conflict", r->name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s has "
                      "non-empty .spec.schedulingGates",
                      r->name, r->name);
        return;
    }
    if (json_object_get(om, "deletionTimestamp")) {
        answer_status(a, 409, "Conflict", r->name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being "
                      "deleted, cannot be assigned to a host",
                      r->name, r->name);
        return;
    }
    /* the new version shares what it does not change with the old one
     * (copied on write: a stored version is never modified, every write
     * makes its own copy of what it changes) */
    json_t *next = json_copy(o->cur);
    json_t *nspec = fresh_child(next, "spec"), *nm = fresh_child(next, "metadata");
    json_object_set_new_nocheck(nspec, "nodeName", json_string(node));
    json_t *ann = json_object_get(meta, "annotations");
    if (json_is_object(ann))
        json_object_update(fresh_child(nm, "annotations"), ann);
    char ts[32];
    now_rfc3339(ts, sizeof ts);
    json_t *st = fresh_child(next, "status"), *cond = json_object(), *conds = json_array();
    json_object_set_new_nocheck(cond, "type", json_string_nocheck("PodScheduled"));
    json_object_set_new_nocheck(cond, "status", json_string_nocheck("True"));
    json_object_set_new_nocheck(cond, "lastProbeTime", json_null());
    json_object_set_new_nocheck(cond, "lastTransitionTime", json_string_nocheck(ts));
    json_array_append_new(conds, cond);
    json_object_set_new_nocheck(st, "conditions", conds);
    record(o, "MODIFIED", next);
    S.bindings++;
    autoalloc_bound(o); /* --auto-allocate: the agent's patch */
    answer_status(a, 201, "", NULL, NULL, "%s", "");
}
