/* volumes.c - PersistentVolumeClaims, PersistentVolumes and StorageClasses
 * as kube-scheduler's VolumeBinding and VolumeZone plugins read them
 * (pkg/scheduler/framework/plugins/volumebinding: volume_binding.go
 * PreFilter/podHasPVCs, binder.go GetPodVolumeClaims/checkBoundClaims;
 * .../volumezone/volume_zone.go; kubernetes v1.28): the objects kept from
 * their informers (claims by "namespace/name", volumes and classes by
 * name), as the listers those plugins ask, and for a pending pod of ours
 * what they decide (docs/kube.md, "Volumes"):
 *  - PreFilter (podHasPVCs, GetPodVolumeClaims, VolumeZone's getPVbyPod),
 *    the pod refused on every node with the plugin's message: a claim not
 *    found ('persistentvolumeclaim "x" not found'; an ephemeral volume's
 *    'waiting for ephemeral volume controller to create the
 *    persistentvolumeclaim "x"'), Lost, being deleted, an ephemeral claim
 *    the pod does not own, an unbound claim of an Immediate class ("pod
 *    has unbound immediate PersistentVolumeClaims"), a bound claim's
 *    volume not found ('persistentvolume "x" not found');
 *  - Filter: each bound claim's PersistentVolume spec.nodeAffinity
 *    required terms (volume.CheckNodeAffinity: the node's labels alone -
 *    its name is not given, so a matchFields term reads ""), "node(s) had
 *    volume node affinity conflict"; its topology labels (beta and GA
 *    zone and region, values split at "__"), "node(s) had no available
 *    volume zone", a node with none of the four labels passing, a beta
 *    key read from the node's GA label when it lacks the beta one;
 *  - VolumeRestrictions' ReadWriteOncePod (volumerestrictions/
 *    volume_restrictions.go readWriteOncePodPVCsForPod, v1.28): which of
 *    the pod's claims are of that access mode, marked in its spec.claims
 *    (model.h struct gp_claim_use); the engine refuses every node while
 *    another bound pod uses one (engine/claims.c), preemption may evict
 *    the holder.
 * They reach the engine as the pod's volume conditions (model.h, struct
 * gp_volume_terms; a PreFilter refusal is one condition no node passes),
 * so the event log replays them. An unbound claim of a
 * WaitForFirstConsumer class is bound to an existing volume or
 * provisioned for the node chosen (provision_condition here, with the
 * volumes volumes_match.c finds; the claimRef or the claim's annotation
 * and the wait before the Binding in volumes_bind.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"
#include "kube/volumes_internal.h"

/* jansson's setters take no const object (nothing here changes one) */
static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

/* --- what the plugins decide for a pod ---------------------------------- */

#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"

/* The topology labels VolumeZone reads, and the GA key of each. */
static const char *const zone_keys[4] = {
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};
static const char *const zone_ga[4] = {
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region"};

struct vrd {
    struct gp_kube_sched *s;
    struct gp_arena *a;
    struct gp_volume_terms *g; /* the conditions, binding ones first */
    size_t n, cap;
    char msg[512]; /* a PreFilter refusal; "" none */
    /* bit i: the pod's i-th persistentVolumeClaim volume's claim holds
     * ReadWriteOncePod (its spec.claims[i].rwop; VolumeRestrictions) */
    uint64_t rwop;
    bool oom;
};

static const char *str_of(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void *vr_alloc(struct vrd *r, size_t size)
{
    void *p = size ? gp_arena_alloc(r->a, size) : NULL;
    r->oom = r->oom || (size && !p);
    return p;
}

/* A new condition of nterms terms (*terms, zeroed, to fill in); NULL when
 * out of room or memory. */
static struct gp_volume_terms *vr_group(struct vrd *r, size_t nterms, bool zone,
                                        struct gp_node_term **terms)
{
    if (r->n == r->cap || r->oom)
        return NULL;
    struct gp_volume_terms *v = &r->g[r->n++];
    struct gp_node_term *t = vr_alloc(r, nterms * sizeof *t);
    *v = (struct gp_volume_terms){t, r->oom ? 0 : nterms, zone, false};
    if (terms)
        *terms = t;
    return r->oom ? NULL : v;
}

static const char *vr_str(struct vrd *r, const char *x)
{
    const char *c = gp_arena_strdup(r->a, x);
    r->oom = r->oom || !c;
    return c;
}

/* metav1.IsControlledBy(pvc, pod): a controller owner reference of the pod's uid. */
bool gp_ks_pvc_owned_by(const json_t *pvc, const char *uid)
{
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(json_object_get(pvc, "metadata"), "ownerReferences"), i, o)
    {
        const char *ou = str_of(o, "uid");
        if (json_is_true(json_object_get(o, "controller")) && uid && ou && strcmp(uid, ou) == 0)
            return true;
    }
    return false;
}

/* The claims of the pod's volumes in order: name[i] and whether it is an
 * ephemeral volume's (pod name + "-" + volume name); at most 32 (total:
 * how many the pod has; a pod of more is refused, decide). */
struct claims {
    size_t n, total;
    char name[32][256];
    bool ephemeral[32];
    bool provision[32]; /* unbound, of a WaitForFirstConsumer class (decide) */
};

static void claims_of(const json_t *pod, const char *pod_name, struct claims *c)
{
    c->n = c->total = 0;
    size_t i;
    json_t *vol;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, vol)
    {
        const json_t *pc = json_object_get(vol, "persistentVolumeClaim");
        bool eph = json_object_get(vol, "ephemeral") != NULL;
        c->total += pc || eph;
        if ((!pc && !eph) || c->n == sizeof c->name / sizeof c->name[0])
            continue;
        if (pc) {
            const char *cn = str_of(pc, "claimName");
            snprintf(c->name[c->n], sizeof c->name[0], "%s", cn ? cn : "");
        } else {
            const char *vn = str_of(vol, "name");
            snprintf(c->name[c->n], sizeof c->name[0], "%s-%s", pod_name, vn ? vn : "");
        }
        c->provision[c->n] = false;
        c->ephemeral[c->n++] = eph && !pc;
    }
}

/* VolumeBinding's podHasPVCs: the first claim refused, in r->msg. */
static bool has_pvcs(struct vrd *r, const struct claims *c, const char *ns, const char *pod_name,
                     const char *uid)
{
    for (size_t i = 0; i < c->n; i++) {
        char key[600];
        gp_kube_key_make(ns, c->name[i], key, sizeof key);
        const json_t *pvc = json_object_get(r->s->pvcs, key);
        const char *cn = c->name[i];
        if (!pvc) {
            if (c->ephemeral[i])
                snprintf(r->msg, sizeof r->msg,
                         "waiting for ephemeral volume controller to create the "
                         "persistentvolumeclaim \"%s\"",
                         cn);
            else
                snprintf(r->msg, sizeof r->msg, "persistentvolumeclaim \"%s\" not found", cn);
            return false;
        }
        const char *phase = str_of(json_object_get(pvc, "status"), "phase");
        const char *vn = str_of(json_object_get(pvc, "spec"), "volumeName");
        if (phase && strcmp(phase, "Lost") == 0) {
            snprintf(r->msg, sizeof r->msg,
                     "persistentvolumeclaim \"%s\" bound to non-existent persistentvolume \"%s\"",
                     cn, vn ? vn : "");
            return false;
        }
        if (json_object_get(json_object_get(pvc, "metadata"), "deletionTimestamp")) {
            snprintf(r->msg, sizeof r->msg, "persistentvolumeclaim \"%s\" is being deleted", cn);
            return false;
        }
        if (c->ephemeral[i] && !gp_ks_pvc_owned_by(pvc, uid)) {
            snprintf(r->msg, sizeof r->msg,
                     "PVC %s/%s was not created for pod %s/%s (pod is not owner)", ns, cn, ns,
                     pod_name);
            return false;
        }
    }
    return true;
}

/* The class's volumeBindingMode is WaitForFirstConsumer (IsDelayBindingMode:
 * no class, or one not found, binds at once). */
static bool delay_binding(const struct gp_kube_sched *s, const json_t *pvc)
{
    const char *cls = gp_ks_claim_class(pvc);
    const json_t *sc = cls && cls[0] ? json_object_get(s->scs, cls) : NULL;
    const char *mode = str_of(sc, "volumeBindingMode");
    return mode && strcmp(mode, "WaitForFirstConsumer") == 0;
}

/* A NodeSelectorTerm of a volume's node affinity, read against a node known
 * by its labels alone (CheckNodeAffinity): a matchFields requirement is
 * decided on "" now. false: the term matches no node (a requirement false
 * or one that does not parse: MatchNodeSelectorTerms skips such a term);
 * *all: it matches every node (nothing left of it but true fields). */
static bool pv_term(struct vrd *r, const json_t *o, struct gp_node_term *t, bool *all)
{
    struct gp_diag d = {""};
    *all = false;
    enum gp_err err = gp_kube_node_term_read(o, r->a, t, &d);
    if (err != GP_OK) {
        r->oom = r->oom || err == GP_ENOMEM;
        return false;
    }
    bool had = t->nlabels || t->nfields;
    for (size_t i = 0; i < t->nfields; i++) {
        bool in = false;
        for (size_t k = 0; k < t->fields[i].nvalues; k++)
            in = in || t->fields[i].values[k][0] == '\0';
        if (in != (t->fields[i].op == GP_MATCH_IN))
            return false;
    }
    t->fields = NULL;
    t->nfields = 0;
    *all = had && t->nlabels == 0;
    return had;
}

/* The volume's node affinity terms that some node may match, appended at
 * t[*k] (room for each of its terms): true when it reaches every node (no
 * required terms, or a term every node matches). */
static bool pv_append(struct vrd *r, const json_t *pv, struct gp_node_term *t, size_t *k)
{
    const json_t *req =
        json_object_get(json_object_get(json_object_get(pv, "spec"), "nodeAffinity"), "required");
    if (!req)
        return true;
    const json_t *terms = json_object_get(req, "nodeSelectorTerms");
    for (size_t i = 0; i < json_array_size(terms); i++) {
        bool all;
        if (pv_term(r, json_array_get(terms, i), &t[*k], &all))
            (*k)++;
        if (all)
            return true;
    }
    return false;
}

/* How many terms pv_append may append for the volume. */
static size_t pv_nterms(const json_t *pv)
{
    return json_array_size(json_object_get(
        json_object_get(json_object_get(json_object_get(pv, "spec"), "nodeAffinity"), "required"),
        "nodeSelectorTerms"));
}

/* A bound claim's volume: its node affinity (one condition) and its
 * topology labels (one condition each). */
static void pv_conditions(struct vrd *r, const json_t *pv)
{
    if (json_object_get(json_object_get(json_object_get(pv, "spec"), "nodeAffinity"), "required")) {
        size_t k = 0;
        struct gp_node_term *t = NULL;
        struct gp_volume_terms *g = vr_group(r, pv_nterms(pv), false, &t);
        if (g && pv_append(r, pv, t, &k))
            r->n--; /* a term every node matches: no condition */
        else if (g)
            g->nterms = k;
    }
    const json_t *labels = json_object_get(json_object_get(pv, "metadata"), "labels");
    for (int z = 0; z < 4; z++) {
        const char *v = str_of(labels, zone_keys[z]);
        if (!v)
            continue;
        /* LabelZonesToSet: split at "__", each trimmed; an empty one: the label ignored */
        const char *vals[64];
        size_t nv = 0;
        bool bad = false;
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *at = buf; at && !bad && nv < 64;) {
            char *sep = strstr(at, "__");
            if (sep)
                *sep = '\0';
            while (*at == ' ' || *at == '\t' || *at == '\n')
                at++;
            size_t len = strlen(at);
            while (len && (at[len - 1] == ' ' || at[len - 1] == '\t' || at[len - 1] == '\n'))
                at[--len] = '\0';
            bad = len == 0;
            if (!bad)
                vals[nv++] = vr_str(r, at);
            at = sep ? sep + 2 : NULL;
        }
        if (bad || r->oom)
            continue;
        bool beta = strcmp(zone_keys[z], zone_ga[z]) != 0;
        struct gp_node_term *t = NULL;
        struct gp_volume_terms *g = vr_group(r, beta ? 3 : 2, true, &t);
        const char **vv = vr_alloc(r, nv * sizeof *vv);
        struct gp_match_expr *x = vr_alloc(r, 8 * sizeof *x);
        if (!g || !vv || !x)
            return;
        memcpy(vv, vals, nv * sizeof *vv);
        /* the node has none of the topology labels: it passes */
        for (int k = 0; k < 4; k++)
            x[k] = (struct gp_match_expr){zone_keys[k], GP_MATCH_DOES_NOT_EXIST, NULL, 0};
        t[0] = (struct gp_node_term){x, 4, NULL, 0, 0};
        /* its value of the key is one of the volume's */
        x[4] = (struct gp_match_expr){zone_keys[z], GP_MATCH_IN, vv, nv};
        t[1] = (struct gp_node_term){&x[4], 1, NULL, 0, 0};
        if (beta) { /* the beta key absent on the node: its GA key's value */
            x[5] = (struct gp_match_expr){zone_keys[z], GP_MATCH_DOES_NOT_EXIST, NULL, 0};
            x[6] = (struct gp_match_expr){zone_ga[z], GP_MATCH_IN, vv, nv};
            t[2] = (struct gp_node_term){&x[5], 2, NULL, 0, 0};
        }
    }
}

/* VolumeRestrictions' readWriteOncePodPVCsForPod (volume_restrictions.go,
 * v1.28): which of the pod's persistentVolumeClaim volumes (in order, as
 * gp_kube_pod_read lists them in spec.claims) name a claim whose
 * spec.accessModes hold ReadWriteOncePod. A claim not found is
 * VolumeBinding's refusal already. */
static uint64_t rwop_of(const struct gp_kube_sched *s, const json_t *pod, const char *ns)
{
    uint64_t bits = 0;
    size_t i, k = 0;
    json_t *vol;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "volumes"), i, vol)
    {
        const json_t *pc = json_object_get(vol, "persistentVolumeClaim");
        if (!pc)
            continue;
        char key[600];
        const char *cn = str_of(pc, "claimName");
        gp_kube_key_make(ns, cn ? cn : "", key, sizeof key);
        const json_t *modes =
            json_object_get(json_object_get(json_object_get(s->pvcs, key), "spec"), "accessModes");
        size_t j;
        json_t *m;
        json_array_foreach(modes, j, m)
        {
            if (k < 64 && json_string_value(m) &&
                strcmp(json_string_value(m), "ReadWriteOncePod") == 0)
                bits |= (uint64_t)1 << k;
        }
        k++;
    }
    return bits;
}

/* The class's allowedTopologies as node terms at t[0..n) (n its terms). */
static void topo_terms(struct vrd *r, const json_t *topo, struct gp_node_term *t)
{
    for (size_t i = 0; i < json_array_size(topo); i++) {
        const json_t *exprs = json_object_get(json_array_get(topo, i), "matchLabelExpressions");
        size_t ne = json_array_size(exprs);
        struct gp_match_expr *x = vr_alloc(r, ne * sizeof *x);
        for (size_t k = 0; x && k < ne; k++) {
            const json_t *e = json_array_get(exprs, k), *vals = json_object_get(e, "values");
            size_t nv = json_array_size(vals);
            const char **v = vr_alloc(r, nv * sizeof *v);
            for (size_t j = 0; v && j < nv; j++)
                v[j] = vr_str(r, json_string_value(json_array_get(vals, j))
                                     ? json_string_value(json_array_get(vals, j))
                                     : "");
            const char *key = str_of(e, "key");
            x[k] = (struct gp_match_expr){vr_str(r, key ? key : ""), GP_MATCH_IN, v, v ? nv : 0};
        }
        /* (a term of no expressions matches no node, as the engine's empty term) */
        t[i] = (struct gp_node_term){x, x ? ne : 0, NULL, 0, 0};
    }
}

/* An unbound claim of a WaitForFirstConsumer class, which gpuplane binds
 * to an existing volume or provisions for the node chosen (volumes_bind.c):
 * FindPodVolumes' claimsToBind (binder.go, v1.28). One condition,
 * "node(s) didn't find available persistent volumes to bind" where it
 * fails:
 *  - the claim's volume.kubernetes.io/selected-node set (the fast path: a
 *    bind before, only that node; the claim is one to provision): that
 *    node, when it meets the class's allowedTopologies too
 *    (checkVolumeProvisions), no node when the class has no provisioner;
 *  - else findMatchingVolumes: a node passes where one of the claim's
 *    candidate volumes (volumes_match.c) reaches it (their node affinity
 *    terms ORed), or, the class having a provisioner, where the class's
 *    allowedTopologies allow (MatchTopologySelectorTerms; none: every
 *    node): the claim is provisioned there when no volume matches
 *    (checkVolumeProvisions). A volume claimRef'd to the claim is the only
 *    one: where it does not reach, upstream's FindMatchingVolume finds
 *    nothing and the claim would be provisioned, but the PV controller
 *    binds a claim to the volume claimRef'd to it whatever the node
 *    (syncUnboundClaim), so gpuplane lets only its nodes pass.
 * A gang's member alike: its gang's decision waits for every member's
 * claims before any member is written (volumes_bind.c gang_hold). */
static void provision_condition(struct vrd *r, const json_t *pvc)
{
    const json_t *sc = json_object_get(r->s->scs, gp_ks_claim_class(pvc));
    const char *prov = str_of(sc, "provisioner");
    bool can_provision = prov && prov[0] && strcmp(prov, "kubernetes.io/no-provisioner") != 0;
    const char *sel = str_of(json_object_get(json_object_get(pvc, "metadata"), "annotations"),
                             GP_KUBE_ANN_SELECTED_NODE);
    const json_t *topo = json_object_get(sc, "allowedTopologies");
    struct gp_node_term *t = NULL;
    struct gp_volume_terms *g;
    if (sel) { /* metadata.name In [sel]; the class's topology still ANDed
                * (FindPodVolumes puts the claim in claimsToProvision, which
                * checkVolumeProvisions reads as any other) */
        if (!(g = vr_group(r, can_provision ? 1 : 0, false, &t)))
            return;
        g->bind = true;
        if (!can_provision)
            return; /* no node */
        struct gp_match_expr *x = vr_alloc(r, sizeof *x);
        const char **v = vr_alloc(r, sizeof *v);
        if (!x || !v)
            return;
        v[0] = vr_str(r, sel);
        *x = (struct gp_match_expr){"metadata.name", GP_MATCH_IN, v, 1};
        t[0] = (struct gp_node_term){NULL, 0, x, 1, 0};
        size_t n = json_array_size(topo);
        if (n == 0)
            return; /* every node */
        if (!(g = vr_group(r, n, false, &t)))
            return;
        g->bind = true;
        topo_terms(r, topo, t);
        return;
    }
    /* the candidate volumes (a claimRef'd one alone), then the class's topology */
    const json_t *pre = NULL, *pv;
    const char *pvn;
    size_t nt = 0;
    bool every = false;
    json_object_foreach(r->s->pvs, pvn, pv)
    {
        enum gp_pvm m = gp_ks_pv_match(pvc, pv);
        if (m == GP_PVM_PREBOUND) {
            pre = pv;
            break;
        }
        if (m == GP_PVM_YES) {
            nt += pv_nterms(pv);
            every = every ||
                    !json_object_get(json_object_get(json_object_get(pv, "spec"), "nodeAffinity"),
                                     "required");
        }
    }
    if (pre) {
        nt = pv_nterms(pre);
        every = !json_object_get(json_object_get(json_object_get(pre, "spec"), "nodeAffinity"),
                                 "required");
        can_provision = false;
    }
    if (can_provision) {
        nt += json_array_size(topo);
        every = every || json_array_size(topo) == 0;
    }
    if (every)
        return; /* every node */
    if (!(g = vr_group(r, nt, false, &t)))
        return;
    g->bind = true;
    size_t k = 0;
    json_object_foreach(r->s->pvs, pvn, pv)
    {
        if ((pre && pv != pre) || (!pre && gp_ks_pv_match(pvc, pv) != GP_PVM_YES))
            continue;
        if (pv_append(r, pv, t, &k)) {
            r->n--; /* a term every node matches: no condition */
            return;
        }
    }
    if (can_provision) {
        topo_terms(r, topo, t + k);
        k += json_array_size(topo);
    }
    g->nterms = k;
}

/* The pod's claims that joint_condition matches together: one candidate
 * volume's node terms (pv_append's; every: it reaches every node). */
struct jvol {
    struct gp_node_term *t;
    size_t n;
    bool every;
};
struct joint {
    struct vrd *r;
    size_t k;             /* claims */
    struct jvol *vol[32]; /* claim i's candidates, nv[i] of them */
    size_t nv[32];
    const json_t *pv[32][64]; /* (which volume each candidate is) */
    const json_t *used[32];   /* the volumes chosen on the path */
    const struct gp_match_expr *acc[32 * 8];
    size_t nacc, steps;
    struct gp_node_term out[256];
    size_t nout;
    bool every, big;
};

/* The assignments of distinct volumes to claims i.. (the path's label
 * expressions in acc), each one term: its volumes' terms ANDed. */
static void joint_walk(struct joint *j, size_t i)
{
    if (j->every || j->big || ++j->steps > 4096) {
        j->big = j->big || !j->every;
        return;
    }
    if (i == j->k) {
        if (j->nacc == 0) { /* volumes that reach every node */
            j->every = true;
            return;
        }
        struct gp_match_expr *x = vr_alloc(j->r, j->nacc * sizeof *x);
        if (!x || j->nout == 256) {
            j->big = true;
            return;
        }
        for (size_t a = 0; a < j->nacc; a++)
            x[a] = *j->acc[a];
        j->out[j->nout++] = (struct gp_node_term){x, j->nacc, NULL, 0, 0};
        return;
    }
    for (size_t v = 0; v < j->nv[i]; v++) {
        bool taken = false;
        for (size_t u = 0; u < i; u++)
            taken = taken || j->used[u] == j->pv[i][v];
        if (taken)
            continue;
        j->used[i] = j->pv[i][v];
        const struct jvol *jv = &j->vol[i][v];
        for (size_t t = 0; t < (jv->every ? 1 : jv->n); t++) {
            size_t before = j->nacc, nl = jv->every ? 0 : jv->t[t].nlabels;
            if (before + nl > sizeof j->acc / sizeof j->acc[0]) {
                j->big = true;
                return;
            }
            for (size_t l = 0; l < nl; l++)
                j->acc[j->nacc++] = &jv->t[t].labels[l];
            joint_walk(j, i + 1);
            j->nacc = before;
        }
    }
}

/* findMatchingVolumes matches a pod's unbound claims together (binder.go,
 * v1.28: each claim, smallest first, excluding the volumes chosen for the
 * pod's claims before it, chosenPVs): the claims of classes without a
 * provisioner (no volume, no node; not annotated for a node, not
 * claimRef'd to by a volume) get one condition, a node passing where
 * distinct candidate volumes reach it for all of them - the terms of
 * every assignment of distinct volumes to the claims, each the ANDed
 * node terms of its volumes, ORed. It is a matching's condition where
 * upstream matches greedily (a node where only another order finds
 * volumes passes here; volumes_bind.c's plan then refuses it, writing
 * nothing). joined[i]: claim i is in it (its own condition not made);
 * more than 256 terms (or a long search): none joined, each claim its
 * own condition as before. */
static void joint_condition(struct vrd *r, const char *ns, const struct claims *c, bool *joined)
{
    struct joint *j = calloc(1, sizeof *j);
    size_t idx[32];
    if (!j) {
        r->oom = true;
        return;
    }
    j->r = r;
    for (size_t i = 0; i < c->n; i++) {
        char key[600];
        gp_kube_key_make(ns, c->name[i], key, sizeof key);
        const json_t *pvc = json_object_get(r->s->pvcs, key);
        const json_t *sc = json_object_get(r->s->scs, gp_ks_claim_class(pvc));
        const char *prov = str_of(sc, "provisioner");
        bool dup = false;
        for (size_t u = 0; u < i; u++)
            dup = dup || strcmp(c->name[u], c->name[i]) == 0;
        if (!c->provision[i] || dup ||
            (prov && prov[0] && strcmp(prov, "kubernetes.io/no-provisioner") != 0) ||
            str_of(json_object_get(json_object_get(pvc, "metadata"), "annotations"),
                   GP_KUBE_ANN_SELECTED_NODE))
            continue;
        const char *pvn;
        const json_t *pv;
        bool pre = false;
        size_t nv = 0;
        json_object_foreach(r->s->pvs, pvn, pv)
        {
            enum gp_pvm m = gp_ks_pv_match(pvc, pv);
            pre = pre || m == GP_PVM_PREBOUND;
            nv += m == GP_PVM_YES;
        }
        if (pre || nv > 64)
            goto done; /* (a claimRef'd claim, or too many: each its own) */
        struct jvol *jv = vr_alloc(r, nv * sizeof *jv);
        size_t v = 0;
        json_object_foreach(r->s->pvs, pvn, pv)
        {
            if (!jv || gp_ks_pv_match(pvc, pv) != GP_PVM_YES)
                continue;
            jv[v].t = vr_alloc(r, pv_nterms(pv) * sizeof *jv[v].t);
            jv[v].n = 0;
            jv[v].every = pv_nterms(pv) == 0 || pv_append(r, pv, jv[v].t, &jv[v].n);
            j->pv[j->k][v++] = pv;
        }
        if (r->oom)
            goto done;
        j->vol[j->k] = jv;
        j->nv[j->k] = nv;
        idx[j->k++] = i;
    }
    if (j->k < 2)
        goto done; /* (one claim: its own condition says as much) */
    joint_walk(j, 0);
    if (j->big || r->oom)
        goto done;
    for (size_t i = 0; i < j->k; i++)
        joined[idx[i]] = true;
    if (j->every)
        goto done; /* every node */
    struct gp_node_term *t = NULL;
    struct gp_volume_terms *g = vr_group(r, j->nout, false, &t);
    if (g) { /* (no assignment: no term, no node) */
        g->bind = true;
        if (j->nout)
            memcpy(t, j->out, j->nout * sizeof *t);
    }
done:
    free(j);
}

/* What the plugins decide for the pod: r->msg (a refusal) or r->g. */
static void decide(struct vrd *r, const json_t *pod, const struct gp_kube_pod_info *in)
{
    struct claims *c = malloc(sizeof *c);
    if (!c) {
        r->oom = true;
        return;
    }
    const char *ns = in->ns ? in->ns : "default";
    r->rwop = rwop_of(r->s, pod, ns);
    claims_of(pod, in->name, c);
    if (c->total > c->n) {
        /* claims past the 32nd would go unread (their volumes' filters,
         * VolumeRestrictions' ReadWriteOncePod bits, volumes_bind.c's
         * provisioning): refused in gpuplane's words instead */
        snprintf(r->msg, sizeof r->msg,
                 "pod has %zu persistentVolumeClaim and ephemeral volumes (spec.volumes): "
                 "gpuplane reads at most %zu",
                 c->total, c->n);
        c->n = 0;
    } else if (!has_pvcs(r, c, ns, in->name, in->uid)) {
        c->n = 0; /* refused: nothing more read */
    }
    /* GetPodVolumeClaims: an unbound claim of an Immediate class (or one
     * prebound, volumeName set without bind-completed) refuses the pod;
     * one of a WaitForFirstConsumer class is the scheduler's to bind */
    bool immediate = false;
    for (size_t i = 0; i < c->n; i++) {
        char key[600];
        gp_kube_key_make(ns, c->name[i], key, sizeof key);
        const json_t *pvc = json_object_get(r->s->pvcs, key);
        const json_t *meta = json_object_get(pvc, "metadata");
        const char *vn = str_of(json_object_get(pvc, "spec"), "volumeName");
        bool bound = vn && vn[0] &&
                     json_object_get(json_object_get(meta, "annotations"), ANN_BIND_COMPLETED);
        if (bound)
            continue;
        if (delay_binding(r->s, pvc) && !(vn && vn[0]))
            c->provision[i] = true;
        else
            immediate = true;
    }
    if (r->msg[0]) {
        /* (has_pvcs said) */
    } else if (immediate) {
        snprintf(r->msg, sizeof r->msg, "pod has unbound immediate PersistentVolumeClaims");
    } else {
        /* the claims to provision: their conditions first (FindPodVolumes
         * checks the bound claims, then the unbound ones; the first
         * condition a node fails names it, and either is VolumeBinding's) */
        bool joined[32] = {false};
        joint_condition(r, ns, c, joined);
        for (size_t i = 0; i < c->n && !r->msg[0]; i++) {
            char key[600];
            gp_kube_key_make(ns, c->name[i], key, sizeof key);
            if (c->provision[i] && !joined[i])
                provision_condition(r, json_object_get(r->s->pvcs, key));
        }
    }
    if (!r->msg[0]) {
        /* VolumeZone's PreFilter and both Filters: the bound claims' volumes
         * (persistentVolumeClaim volumes; an ephemeral one's claim is read by
         * VolumeBinding alone) */
        for (size_t i = 0; i < c->n && !r->msg[0]; i++) {
            if (c->provision[i])
                continue; /* (its condition above) */
            char key[600];
            gp_kube_key_make(ns, c->name[i], key, sizeof key);
            const char *vn =
                str_of(json_object_get(json_object_get(r->s->pvcs, key), "spec"), "volumeName");
            const json_t *pv = json_object_get(r->s->pvs, vn ? vn : "");
            if (!pv && !c->ephemeral[i])
                snprintf(r->msg, sizeof r->msg, "persistentvolume \"%s\" not found", vn ? vn : "");
            else if (!pv) /* VolumeBinding's Filter: no node has it */
                snprintf(r->msg, sizeof r->msg,
                         "node(s) unavailable due to one or more pvc(s) bound to non-existent "
                         "pv(s)");
        }
        /* the node affinities first (VolumeBinding), then the zones */
        for (int pass = 0; pass < 2 && !r->msg[0]; pass++)
            for (size_t i = 0; i < c->n; i++) {
                if (c->provision[i])
                    continue;
                char key[600];
                gp_kube_key_make(ns, c->name[i], key, sizeof key);
                const char *vn =
                    str_of(json_object_get(json_object_get(r->s->pvcs, key), "spec"), "volumeName");
                const json_t *pv = json_object_get(r->s->pvs, vn ? vn : "");
                size_t before = r->n;
                pv_conditions(r, pv);
                /* keep this pass's kind of condition only */
                size_t k = before;
                for (size_t j = before; j < r->n; j++)
                    if (r->g[j].zone == (pass == 1) && (pass == 0 || !c->ephemeral[i]))
                        r->g[k++] = r->g[j];
                r->n = k;
            }
    }
    free(c);
    if (r->msg[0]) { /* refused: one condition no node passes */
        r->n = 0;
        vr_group(r, 0, false, NULL);
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* A hash of what was decided: the pod is queued again only when it changes. */
static uint64_t print_of(const struct vrd *r)
{
    uint64_t h = fnv_str(1469598103934665603u, r->msg);
    h = fnv(h, &r->rwop, sizeof r->rwop);
    for (size_t i = 0; i < r->n; i++) {
        h = fnv(h, &r->g[i].zone, sizeof r->g[i].zone);
        h = fnv(h, &r->g[i].bind, sizeof r->g[i].bind);
        h = fnv(h, &r->g[i].nterms, sizeof r->g[i].nterms);
        for (size_t j = 0; j < r->g[i].nterms; j++) {
            const struct gp_node_term *t = &r->g[i].terms[j];
            h = fnv(h, &t->nlabels, sizeof t->nlabels);
            for (size_t k = 0; k < t->nlabels; k++) {
                h = fnv_str(h, t->labels[k].key);
                h = fnv(h, &t->labels[k].op, sizeof t->labels[k].op);
                for (size_t v = 0; v < t->labels[k].nvalues; v++)
                    h = fnv_str(h, t->labels[k].values[v]);
                h = fnv(h, "|", 1);
            }
            for (size_t k = 0; k < t->nfields; k++)
                for (size_t v = 0; v < t->fields[k].nvalues; v++)
                    h = fnv_str(h, t->fields[k].values[v]);
        }
    }
    return h;
}

static bool evaluate(struct gp_kube_sched *s, const json_t *pod, const struct gp_kube_pod_info *in,
                     struct gp_arena *a, struct vrd *r)
{
    size_t nvol = json_array_size(json_object_get(json_object_get(pod, "spec"), "volumes"));
    *r = (struct vrd){.s = s, .a = a};
    r->cap = 5 * nvol + 1;
    r->g = vr_alloc(r, r->cap * sizeof *r->g);
    if (!r->oom)
        decide(r, pod, in);
    return !r->oom;
}

/* The pods kept in s->vpods (index + 1 in vpod_at). */
static void vpod_add(struct gp_kube_sched *s, struct spod *p)
{
    if (p->vpod_at)
        return;
    if (s->nvpods == s->capvpods) {
        size_t cap = s->capvpods ? 2 * s->capvpods : 16;
        struct spod **v = realloc(s->vpods, cap * sizeof *v);
        if (!v)
            return;
        s->vpods = v;
        s->capvpods = cap;
    }
    s->vpods[s->nvpods++] = p;
    p->vpod_at = s->nvpods;
}

void gp_ks_volumes_forget(struct gp_kube_sched *s, struct spod *p)
{
    if (p->vpod_at) {
        size_t i = p->vpod_at - 1;
        s->vpods[i] = s->vpods[--s->nvpods];
        if (i < s->nvpods)
            s->vpods[i]->vpod_at = i + 1;
        p->vpod_at = 0;
    }
    free(p->vol_msg);
    p->vol_msg = NULL;
    json_decref(p->vol_pvs);
    p->vol_pvs = NULL;
}

enum gp_err gp_ks_volumes_apply(struct gp_kube_sched *s, struct spod *p, const json_t *pod,
                                struct gp_arena *a, struct gp_pod_spec *spec, struct gp_diag *d)
{
    free(p->vol_msg);
    p->vol_msg = NULL;
    p->vol_print = 0;
    if (!p->info.claims || p->info.node_name) /* a bound pod's volumes were the binder's */
        return GP_OK;
    vpod_add(s, p);
    struct vrd r;
    if (!evaluate(s, pod, &p->info, a, &r))
        return gp_diag_set(d, GP_ENOMEM, "out of memory (volumes)");
    p->vol_print = print_of(&r) ^ gp_ks_csi_print(s, pod, &p->info); /* (volumes_limits.c) */
    if (r.msg[0] && !(p->vol_msg = strdup(r.msg)))
        return gp_diag_set(d, GP_ENOMEM, "out of memory (volumes)");
    if (r.rwop && spec->nclaims) { /* the claims marked (a copy: the reader's is const) */
        struct gp_claim_use *u = gp_arena_alloc(a, spec->nclaims * sizeof *u);
        if (!u)
            return gp_diag_set(d, GP_ENOMEM, "out of memory (volumes)");
        for (size_t i = 0; i < spec->nclaims; i++) {
            u[i] = spec->claims[i];
            u[i].rwop = i < 64 && (r.rwop >> i & 1);
        }
        spec->claims = u;
    }
    if (r.n == 0)
        return GP_OK;
    struct gp_pod_constraints *c = gp_arena_alloc(a, sizeof *c); /* zeroed */
    if (!c)
        return gp_diag_set(d, GP_ENOMEM, "out of memory (volumes)");
    if (spec->constraints)
        *c = *spec->constraints;
    c->volumes = r.g;
    c->nvolumes = r.n;
    spec->constraints = c;
    return GP_OK;
}

bool gp_ks_volumes_now(struct gp_kube_sched *s, const struct spod *p, struct gp_arena *a,
                       const struct gp_pod_constraints **out)
{
    const struct gp_pod_constraints *own = p->spec.constraints;
    *out = own;
    if (!p->info.claims)
        return true;
    struct vrd r;
    struct gp_pod_constraints *c = gp_arena_alloc(a, sizeof *c); /* zeroed */
    if (!c || !evaluate(s, p->obj, &p->info, a, &r))
        return false;
    if (own)
        *c = *own;
    c->volumes = r.g;
    c->nvolumes = r.n;
    *out = c;
    return true;
}

/* A claim, volume or class changed: the pending pods of ours whose
 * decision changes with it (of namespace ns; NULL: any) queued again with
 * the new one, as kube-scheduler's VolumeBinding and VolumeZone ask their
 * unschedulable pods to be tried again on such events (EventsToRegister). */
static void recheck(struct gp_kube_sched *s, const char *ns)
{
    for (size_t i = 0; i < s->nvpods; i++) {
        struct spod *p = s->vpods[i];
        if (!p->ours || !p->readable || p->info.node_name ||
            (s->e && p->st != SP_WAITING && p->st != SP_BACKOFF) ||
            (ns && strcmp(ns, p->info.ns ? p->info.ns : "default") != 0))
            continue;
        struct gp_arena a;
        gp_arena_init(&a);
        struct vrd r;
        bool ok = evaluate(s, p->obj, &p->info, &a, &r);
        uint64_t print = ok ? print_of(&r) ^ gp_ks_csi_print(s, p->obj, &p->info) : 0;
        gp_arena_free(&a);
        if (ok && print != p->vol_print)
            gp_ks_pod_reread(s, p); /* sched.c (p keeps its place in s->vpods) */
    }
}

/* obj kept under key in *map (made on first use), or taken out when
 * deleted; false when out of memory. */
static bool keep(json_t **map, const char *key, enum gp_kube_event_type type, const json_t *obj)
{
    if (!*map && !(*map = json_object()))
        return false;
    if (type == GP_KUBE_DELETED) {
        json_object_del(*map, key); /* (not kept: nothing to take out) */
        return true;
    }
    return json_object_set(*map, key, mut(obj)) == 0;
}

static void recheck(struct gp_kube_sched *s, const char *ns);

static void change(struct gp_kube_sched *s, json_t **map, const char *kind, bool namespaced,
                   enum gp_kube_event_type type, const json_t *obj)
{
    const char *ns = gp_kube_meta(obj, "namespace"), *name = gp_kube_meta(obj, "name");
    if (!name)
        return;
    char key[600];
    if (namespaced)
        gp_kube_key_make(ns, name, key, sizeof key);
    else
        snprintf(key, sizeof key, "%s", name);
    gp_evlog_change(s->rec, s->now_s, kind, gp_kube_event_type_name(type), key,
                    gp_kube_meta(obj, "resourceVersion"));
    keep(map, key, type, obj);
    recheck(s, namespaced ? (ns ? ns : "") : NULL);
}

void gp_kube_sched_pvc_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                              void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    change(s, &s->pvcs, "persistentvolumeclaim", true, type, obj);
}

void gp_kube_sched_pv_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    change(s, &s->pvs, "persistentvolume", false, type, obj);
}

void gp_kube_sched_sc_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    change(s, &s->scs, "storageclass", false, type, obj);
}

void gp_ks_volumes_free(struct gp_kube_sched *s)
{
    json_decref(s->pvcs);
    json_decref(s->pvs);
    json_decref(s->scs);
    json_decref(s->csinodes);
    s->pvcs = s->pvs = s->scs = s->csinodes = NULL;
    free(s->vpods);
    s->vpods = NULL;
    s->nvpods = s->capvpods = 0;
}

bool gp_ks_volumes_words(struct gp_kube_sched *s, struct gp_ks_words *w, const struct spod *p,
                         const struct gp_explain *x, char *msg, size_t size)
{
    if (!p->vol_msg)
        return false;
    /* framework FitError.Error (types.go): a PreFilter's message after
     * "0/N nodes are available:" in " %v."; the same status on every
     * node, so DefaultPreemption finds each UnschedulableAndUnresolvable:
     * "Preemption is not helpful for scheduling" (preemption.go
     * nodesWherePreemptionMightHelp) */
    struct gp_explain nx = *x;
    struct gp_ks_reasons *kr = malloc(sizeof *kr);
    if (!kr)
        return false;
    gp_ks_words_nodes(s, w, p, &nx, kr);
    uint32_t nodes = kr->nodes;
    if (strncmp(p->vol_msg, "node(s) ", 8) == 0) /* VolumeBinding's Filter, on every node */
        snprintf(msg, size, "0/%u nodes are available: %u %s.", nodes, nodes, p->vol_msg);
    else
        snprintf(msg, size, "0/%u nodes are available: %s.", nodes, p->vol_msg);
    kr->nodes_words.n = 0;
    kr->victims.n = 0;
    gp_kube_reasons_add(&kr->victims, nodes, "Preemption is not helpful for scheduling");
    gp_ks_words_apply(kr, msg, size);
    free(kr);
    return true;
}
