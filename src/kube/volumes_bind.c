/* volumes_bind.c - the claims gpuplane provisions for a pod it placed:
 * kube-scheduler's VolumeBinding PreBind for dynamic provisioning
 * (pkg/scheduler/framework/plugins/volumebinding/binder.go, v1.28:
 * AssumePodVolumes, BindPodVolumes, bindAPIUpdate, checkBindings;
 * volume_binding.go PreBind, bindTimeoutSeconds 600), with the PV
 * controller's side (pkg/controller/volume/persistentvolume: the
 * annotation AnnSelectedNode, volume.kubernetes.io/selected-node, that
 * asks the external provisioner for a volume reachable from that node,
 * and rescheduleProvisioning, which takes it off when provisioning fails).
 *
 * A pod of ours decided on node N whose claims of a WaitForFirstConsumer
 * class are not bound (volumes.c gave the engine their conditions: the
 * class's allowedTopologies, or the node the annotation names) is held
 * before its annotation patch and Binding (gp_ks_volumes_bind_hold, from
 * bind.c's dispatch): each such claim without the annotation gets it
 * (bindAPIUpdate: a merge patch conditioned on the claim's
 * resourceVersion, where upstream sends an Update of the cached object,
 * both refused with 409 when the claim changed), and the pod stays
 * ASSUMED, its resources held in the engine, no binder busy, while the
 * provisioner works. Each cycle (gp_ks_resume) looks at the claims as the
 * informer shows them (checkBindings): every claim bound (spec.volumeName
 * and pv.kubernetes.io/bind-completed) to a volume whose node affinity N
 * meets (volume.CheckNodeAffinity: N's labels), the pod goes on to its
 * annotation patch and Binding as any other; the annotation gone or
 * naming another node (the provisioner gave up: "provisioning failed for
 * PVC"), the volume's node affinity not met, the patch refused, or
 * bind_timeout_s passed ("binding volumes: timed out waiting for the
 * condition"), the decision is taken back: a Warning FailedScheduling
 * Event in kube-scheduler's words for a failed PreBind, the pod backed
 * off and tried again. As upstream (revertAssumedPVCs restores only the
 * scheduler's cache), gpuplane does not take the annotation off a claim:
 * the provisioner does when it cannot provision (rescheduleProvisioning),
 * and while it is on the retried pod may go to that node alone (volumes.c,
 * FindPodVolumes' fast path).
 *
 * A gang's decision is held whole (gang_hold): every member's claims made
 * ready for its node before any member is annotated or bound, one
 * member's failure taking every member's decision back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"
#include "kube/volumes_internal.h"
#include "util/units.h"

#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"

static const char *str_of(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* The class's volumeBindingMode is WaitForFirstConsumer. */
static bool delayed(const struct gp_kube_sched *s, const json_t *pvc)
{
    const char *mode = str_of(json_object_get(s->scs, gp_ks_claim_class(pvc)), "volumeBindingMode");
    return mode && strcmp(mode, "WaitForFirstConsumer") == 0;
}

enum step { ST_READY, ST_WAIT, ST_FAIL };

/* The volumes chosen for claims already (binder.go's assume cache: a
 * volume assumed for a claim is no other claim's): those of p's other
 * claims and of every other pod waiting for its claims, as an object of
 * names (NULL when out of memory); *same, the volume another such pod
 * chose for claim `key` itself (a claim two pods use), or NULL. */
static json_t *chosen(const struct gp_kube_sched *s, const struct spod *p, const char *key,
                      const json_t **same)
{
    json_t *t = json_object();
    *same = NULL;
    for (size_t i = 0; t && i <= s->nvpods; i++) {
        const struct spod *q = i < s->nvpods ? s->vpods[i] : p; /* (p's own last) */
        if (q == p ? i < s->nvpods : !(q->st == SP_ASSUMED && q->prov_at > 0))
            continue;
        const char *k;
        json_t *b;
        json_object_foreach(q->vol_pvs, k, b)
        {
            if (q != p && strcmp(k, key) == 0)
                *same = b;
            if (json_object_set_new(t, str_of(b, "pv"), json_true()) != 0) {
                json_decref(t);
                return NULL;
            }
        }
    }
    return t;
}

/* The binding of claim `key` to volume pvn (made at version rv) kept in
 * p->vol_pvs; false when out of memory. */
static bool keep_binding(struct spod *p, const char *key, const char *pvn, json_int_t rv)
{
    if (!p->vol_pvs && !(p->vol_pvs = json_object()))
        return false;
    return json_object_set_new(p->vol_pvs, key, json_pack("{s:s,s:I}", "pv", pvn, "rv", rv)) == 0;
}

/* bindAPIUpdate for a static binding (binder.go, with GetBindVolumeToClaim):
 * volume pvn's spec.claimRef set to claim pvc (its reference: kind,
 * apiVersion, namespace, name, uid, resourceVersion), with
 * pv.kubernetes.io/bound-by-controller when the volume was not claimRef'd
 * to it already, by a merge patch whose precondition is the volume's
 * resourceVersion as the informer has it (upstream sends an Update of
 * its cached object: refused with 409 alike when the volume changed). */
static enum step bind_static(struct gp_kube_sched *s, struct spod *p, const char *key,
                             const json_t *pvc, const char *pvn, char *msg, size_t size)
{
    const json_t *pv = json_object_get(s->pvs, pvn);
    const json_t *meta = json_object_get(pvc, "metadata");
    const char *rv = gp_kube_meta(pv, "resourceVersion");
    const char *name = str_of(meta, "name"), *ns = str_of(meta, "namespace");
    const char *uid = str_of(meta, "uid"), *crv = str_of(meta, "resourceVersion");
    if (!rv || !rv[0]) { /* "" in a merge patch is no precondition: nothing sent */
        snprintf(msg, size,
                 "binding volumes: persistentvolume \"%.200s\" has no metadata.resourceVersion",
                 pvn);
        return ST_FAIL;
    }
    json_t *ref = json_pack("{s:s,s:s,s:s,s:s}", "kind", "PersistentVolumeClaim", "apiVersion",
                            "v1", "namespace", ns ? ns : "default", "name", name ? name : "");
    json_t *md = json_pack("{s:s}", "resourceVersion", rv);
    if (ref && uid)
        json_object_set_new(ref, "uid", json_string(uid));
    if (ref && crv)
        json_object_set_new(ref, "resourceVersion", json_string(crv));
    if (md && !gp_ks_pv_bound_to(pv, pvc))
        json_object_set_new(md, "annotations",
                            json_pack("{s:s}", "pv.kubernetes.io/bound-by-controller", "yes"));
    json_t *body =
        ref && md ? json_pack("{s:O,s:{s:O}}", "metadata", md, "spec", "claimRef", ref) : NULL;
    json_decref(ref);
    json_decref(md);
    if (!body) {
        snprintf(msg, size, "binding volumes: out of memory");
        return ST_FAIL;
    }
    char path[700];
    snprintf(path, sizeof path, "/api/v1/persistentvolumes/%s", pvn);
    json_t *ans = NULL;
    long st = gp_ks_leading(s) && s->c
                  ? gp_ks_send(s->c, "PATCH", path, body, "application/merge-patch+json", &ans)
                  : (json_decref(body), 0);
    const char *nrv = gp_kube_meta(ans, "resourceVersion");
    json_int_t made = nrv ? (json_int_t)strtoull(nrv, NULL, 10) : 0;
    json_decref(ans);
    if (st == 200 && keep_binding(p, key, pvn, made))
        return ST_WAIT;
    if (st == 200)
        snprintf(msg, size, "binding volumes: out of memory");
    else if (st == 409)
        snprintf(msg, size,
                 "Operation cannot be fulfilled on persistentvolumes \"%.200s\": the object has "
                 "been modified; please apply your changes to the latest version and try again",
                 pvn);
    else
        snprintf(msg, size, "updating persistentvolume \"%.200s\": status %ld", pvn, st);
    return ST_FAIL;
}

/* checkBindings for a static binding b ({pv, rv}) of claim pvc, on node
 * `node` (labels its labels): the volume as the informer shows it older
 * than the version our patch made is waited for; its node affinity not
 * met, its claimRef reset (or naming another claim) fail; the claim bound
 * (spec.volumeName and pv.kubernetes.io/bind-completed, the PV
 * controller's work) is ready. */
static enum step check_static(struct gp_kube_sched *s, const json_t *pvc, const json_t *b,
                              const char *node, const json_t *labels, char *msg, size_t size)
{
    const char *pvn = str_of(b, "pv");
    const json_t *pv = json_object_get(s->pvs, pvn ? pvn : "");
    if (!pv) {
        snprintf(msg, size,
                 "binding volumes: failed to check binding: could not find v1.PersistentVolume "
                 "\"%.200s\"",
                 pvn ? pvn : "");
        return ST_FAIL;
    }
    const char *have = gp_kube_meta(pv, "resourceVersion");
    json_int_t made = json_integer_value(json_object_get(b, "rv"));
    if (have && (json_int_t)strtoull(have, NULL, 10) < made)
        return ST_WAIT;
    if (!gp_ks_pv_fits(pv, labels)) {
        snprintf(msg, size,
                 "binding volumes: pv \"%.200s\" node affinity doesn't match node \"%.200s\": "
                 "no matching NodeSelectorTerms",
                 pvn, node);
        return ST_FAIL;
    }
    const char *ruid = str_of(json_object_get(json_object_get(pv, "spec"), "claimRef"), "uid");
    if (!ruid || !ruid[0]) {
        snprintf(msg, size, "binding volumes: ClaimRef got reset for pv \"%.200s\"", pvn);
        return ST_FAIL;
    }
    if (!gp_ks_pv_bound_to(pv, pvc)) { /* (upstream waits for its timeout) */
        snprintf(msg, size, "binding volumes: pv \"%.200s\" was claimed by another claim", pvn);
        return ST_FAIL;
    }
    const json_t *meta = json_object_get(pvc, "metadata");
    const char *vn = str_of(json_object_get(pvc, "spec"), "volumeName");
    bool bound =
        vn && vn[0] && json_object_get(json_object_get(meta, "annotations"), ANN_BIND_COMPLETED);
    return bound ? ST_READY : ST_WAIT;
}

/* The class has a provisioner (checkVolumeProvisions: not "" nor
 * kubernetes.io/no-provisioner). */
static bool provisioned(const json_t *sc)
{
    const char *prov = str_of(sc, "provisioner");
    return prov && prov[0] && strcmp(prov, "kubernetes.io/no-provisioner") != 0;
}

/* One claim of the pod, for node `node` (labels its labels): ready (bound,
 * its volume's affinity met; or not one to provision), waiting, or failed
 * (why in msg). A claim to bind or annotate is written (write): to the
 * volume plan (plan_claims) names for it, else annotated to be provisioned. */
static enum step claim_step(struct gp_kube_sched *s, struct spod *p, const char *key,
                            const char *node, const json_t *labels, bool write, const json_t *plan,
                            char *msg, size_t size)
{
    const json_t *pvc = json_object_get(s->pvcs, key);
    if (!pvc) {
        snprintf(msg, size,
                 "binding volumes: failed to check provisioning pvc: persistentvolumeclaim "
                 "\"%s\" not found",
                 key);
        return ST_FAIL;
    }
    const json_t *meta = json_object_get(pvc, "metadata");
    const json_t *ann = json_object_get(meta, "annotations");
    const char *vn = str_of(json_object_get(pvc, "spec"), "volumeName");
    const char *name = str_of(meta, "name");
    const json_t *b = json_object_get(p->vol_pvs, key);
    if (b) /* bound to an existing volume for this decision */
        return check_static(s, pvc, b, node, labels, msg, size);
    if (vn && vn[0] && !str_of(ann, GP_KUBE_ANN_SELECTED_NODE))
        return ST_READY; /* bound before: its volume was a filter's (boundClaims) */
    if (vn && vn[0]) {   /* provisioned for a node: bound (or being bound) by the PV controller */
        const json_t *pv = json_object_get(s->pvs, vn);
        if (!pv)
            return ST_WAIT; /* (not seen yet: checkBindings waits too) */
        if (!gp_ks_pv_fits(pv, labels)) {
            snprintf(msg, size,
                     "binding volumes: pv \"%s\" node affinity doesn't match node \"%s\": "
                     "no matching NodeSelectorTerms",
                     vn, node);
            return ST_FAIL;
        }
        return json_object_get(ann, ANN_BIND_COMPLETED) ? ST_READY : ST_WAIT;
    }
    if (!delayed(s, pvc))
        return ST_READY; /* (volumes.c refused it else) */
    const char *sel = str_of(ann, GP_KUBE_ANN_SELECTED_NODE);
    if (write && !sel) {
        /* the volume plan_claims chose for it, else provisioned (plan_claims
         * found the class can provision it on the node) */
        const json_t *same = NULL;
        json_t *skip = chosen(s, p, key, &same);
        json_decref(skip);
        if (!skip) {
            snprintf(msg, size, "binding volumes: out of memory");
            return ST_FAIL;
        }
        if (same) { /* another pod binds the claim: its binding this pod's too */
            if (!keep_binding(p, key, str_of(same, "pv"),
                              json_integer_value(json_object_get(same, "rv")))) {
                snprintf(msg, size, "binding volumes: out of memory");
                return ST_FAIL;
            }
            return check_static(s, pvc, json_object_get(p->vol_pvs, key), node, labels, msg, size);
        }
        const json_t *sc = json_object_get(s->scs, gp_ks_claim_class(pvc));
        const char *pvn = str_of(plan, key);
        if (pvn)
            return bind_static(s, p, key, pvc, pvn, msg, size);
        if (!json_object_get(plan, key) || !provisioned(sc) || !gp_ks_topology_fits(sc, labels)) {
            snprintf(msg, size,
                     "binding volumes: pvc \"%.200s\": no available persistent volume reaches "
                     "node \"%.200s\" and none can be provisioned there",
                     name ? name : key, node);
            return ST_FAIL;
        }
    }
    /* checkBindings: a claim to provision that the informer shows older
     * than our patches made it is waited for (versioner.
     * CompareResourceVersion against the assume cache's copy). Only such
     * a claim: a claim bound before is ready whatever its version, though
     * it is older than another claim's patch (prov_rv is the pod's
     * newest) */
    const char *have = gp_kube_meta(pvc, "resourceVersion");
    if (p->prov_rv && have && strtoull(have, NULL, 10) < p->prov_rv)
        return ST_WAIT;
    if (sel && strcmp(sel, node) == 0)
        return ST_WAIT;
    if (sel || !write) { /* taken off, or another node's: the provisioner gave up */
        snprintf(msg, size, "binding volumes: provisioning failed for PVC \"%.200s\"",
                 name ? name : key);
        return ST_FAIL;
    }
    /* bindAPIUpdate: the annotation, the claim as the informer has it the
     * precondition */
    const char *ns = str_of(meta, "namespace"), *rv = str_of(meta, "resourceVersion");
    if (!rv || !rv[0]) { /* "" in a merge patch is no precondition: nothing sent */
        snprintf(msg, size,
                 "binding volumes: persistentvolumeclaim \"%.200s\" has no "
                 "metadata.resourceVersion",
                 name ? name : key);
        return ST_FAIL;
    }
    char path[700];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/persistentvolumeclaims/%s",
             ns ? ns : "default", name ? name : "");
    json_t *body = json_pack("{s:{s:s,s:{s:s}}}", "metadata", "resourceVersion", rv, "annotations",
                             GP_KUBE_ANN_SELECTED_NODE, node);
    json_t *ans = NULL;
    long st = gp_ks_leading(s) && s->c
                  ? gp_ks_send(s->c, "PATCH", path, body, "application/merge-patch+json", &ans)
                  : (json_decref(body), 0);
    s->st.claim_patches++;
    const char *nrv = gp_kube_meta(ans, "resourceVersion");
    unsigned long long made = nrv ? strtoull(nrv, NULL, 10) : 0;
    json_decref(ans);
    if (st == 200) {
        p->prov_rv = made > p->prov_rv ? made : p->prov_rv;
        return ST_WAIT;
    }
    if (st == 409)
        snprintf(
            msg, size,
            "Operation cannot be fulfilled on persistentvolumeclaims \"%.200s\": the object has "
            "been modified; please apply your changes to the latest version and try again",
            name ? name : key);
    else
        snprintf(msg, size, "updating persistentvolumeclaim \"%.200s\": status %ld",
                 name ? name : key, st);
    return ST_FAIL;
}

/* The key ("namespace/name") of the claim of volume vol of pod p (a
 * persistentVolumeClaim's, or an ephemeral volume's: pod name + "-" +
 * volume name); false when vol has none. */
static bool claim_key(const struct spod *p, const json_t *vol, char *key, size_t size)
{
    const json_t *pc = json_object_get(vol, "persistentVolumeClaim");
    const char *ns = p->info.ns ? p->info.ns : "default";
    char cn[300];
    if (pc)
        snprintf(cn, sizeof cn, "%s", str_of(pc, "claimName") ? str_of(pc, "claimName") : "");
    else if (json_object_get(vol, "ephemeral"))
        snprintf(cn, sizeof cn, "%s-%s", p->info.name,
                 str_of(vol, "name") ? str_of(vol, "name") : "");
    else
        return false;
    gp_kube_key_make(ns, cn, key, size);
    return true;
}

/* A claim's requested storage in bytes (0 when none or it does not parse:
 * volumes_match.c refuses such a claim every volume). */
static int64_t request_bytes(const json_t *pvc)
{
    const char *q = str_of(
        json_object_get(json_object_get(json_object_get(pvc, "spec"), "resources"), "requests"),
        "storage");
    int64_t b = 0;
    if (q && gp_units_quantity(q, 0, 0, INT64_MAX, &b) != GP_UNITS_QTY_OK)
        b = 0;
    return b;
}

/* findMatchingVolumes for the node decided, before anything is written
 * (binder.go FindPodVolumes/findMatchingVolumes, v1.28): the pod's claims
 * to bind (unbound, of a WaitForFirstConsumer class, not annotated for a
 * node, not one another waiting pod binds already) sorted by requested
 * size, smallest first (byPVCSize; equals in the pod's order), each given
 * the volume FindMatchingVolume finds among those not chosen yet
 * (chosenPVs: this pod's earlier claims' and every waiting pod's), else,
 * its class having a provisioner whose allowedTopologies the node meets,
 * provisioned (checkVolumeProvisions). *plan: claim key -> the volume's
 * name, or null to provision (the caller's). A claim neither serves fails
 * the plan (ST_FAIL, why in msg) with no claim or volume written: a
 * claimRef, once patched, is the PV controller's to bind, so a node that
 * holds a volume for one claim of the pod but not for another takes
 * nothing (the decision taken back). */
static enum step plan_claims(struct gp_kube_sched *s, const struct spod *p, const char *node,
                             const json_t *labels, json_t **plan, char *msg, size_t size)
{
    enum step res = ST_FAIL;
    json_t *keys = json_array(), *skip = NULL;
    *plan = json_object();
    snprintf(msg, size, "binding volumes: out of memory");
    if (!keys || !*plan)
        goto done;
    size_t i;
    json_t *vol;
    json_array_foreach(json_object_get(json_object_get(p->obj, "spec"), "volumes"), i, vol)
    {
        char key[600];
        if (!claim_key(p, vol, key, sizeof key))
            continue;
        const json_t *pvc = json_object_get(s->pvcs, key), *same = NULL;
        const char *vn = str_of(json_object_get(pvc, "spec"), "volumeName");
        if (!pvc || (vn && vn[0]) || !delayed(s, pvc) || json_object_get(*plan, key) ||
            str_of(json_object_get(json_object_get(pvc, "metadata"), "annotations"),
                   GP_KUBE_ANN_SELECTED_NODE))
            continue; /* (claim_step reads it) */
        json_t *t = chosen(s, p, key, &same);
        json_decref(t);
        if (!t)
            goto done;
        if (same)
            continue; /* another pod's binding, this pod's too (claim_step) */
        /* (insertion by size, after its equals) */
        int64_t b = request_bytes(pvc);
        size_t at = json_array_size(keys);
        while (at > 0 && request_bytes(json_object_get(
                             s->pvcs, json_string_value(json_array_get(keys, at - 1)))) > b)
            at--;
        if (json_array_insert_new(keys, at, json_string(key)) != 0 ||
            json_object_set_new(*plan, key, json_null()) != 0)
            goto done;
    }
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *key = json_string_value(k), *pn;
        const json_t *pvc = json_object_get(s->pvcs, key), *same = NULL, *v;
        json_decref(skip);
        if (!(skip = chosen(s, p, key, &same)))
            goto done;
        json_object_foreach(*plan, pn, v) /* chosenPVs */
        {
            if (json_is_string(v) && json_object_set_new(skip, json_string_value(v), json_true()))
                goto done;
        }
        bool pre = false;
        const char *pvn = gp_ks_pv_find(s->pvs, pvc, labels, skip, &pre);
        const json_t *sc = json_object_get(s->scs, gp_ks_claim_class(pvc));
        const char *name = str_of(json_object_get(pvc, "metadata"), "name");
        if (pvn) {
            if (json_object_set_new(*plan, key, json_string(pvn)) != 0)
                goto done;
        } else if (pre) { /* claimRef'd to a volume the node does not reach (volumes.c) */
            snprintf(msg, size,
                     "binding volumes: pvc \"%.200s\" is claimed by a persistent volume that "
                     "does not reach node \"%.200s\"",
                     name ? name : key, node);
            goto done;
        } else if (!provisioned(sc) || !gp_ks_topology_fits(sc, labels)) {
            snprintf(msg, size,
                     "binding volumes: pvc \"%.200s\": no available persistent volume reaches "
                     "node \"%.200s\" and none can be provisioned there",
                     name ? name : key, node);
            goto done;
        }
    }
    msg[0] = '\0';
    res = ST_READY;
done:
    json_decref(keys);
    json_decref(skip);
    return res;
}

/* Where pod p's claims stand for its decision (p->prov_at 0: a new one,
 * its bindings planned (plan_claims), then chosen and its claims
 * annotated now; else looked at as the informers show them), its wait
 * begun (prov_at) or past bind_timeout_s; why a failure, in msg. Nothing
 * is cleared here (wait_end). */
static enum step pod_step(struct gp_kube_sched *s, struct spod *p, char *msg, size_t size)
{
    const struct gp_node *nd = gp_engine_node(s->e, p->node);
    const char *node = nd ? nd->spec.name : NULL;
    struct snode *sn = node ? gp_ks_node_get(s, node, false) : NULL;
    if (!node)
        return ST_READY;
    const json_t *labels =
        json_object_get(json_object_get(sn ? sn->obj : NULL, "metadata"), "labels");
    enum step worst = ST_READY;
    json_t *plan = NULL;
    if (p->prov_at == 0) { /* a new decision: its bindings chosen anew */
        json_decref(p->vol_pvs);
        p->vol_pvs = NULL;
        worst = plan_claims(s, p, node, labels, &plan, msg, size);
    }
    size_t i;
    json_t *vol;
    json_array_foreach(json_object_get(json_object_get(p->obj, "spec"), "volumes"), i, vol)
    {
        char key[600];
        if (worst == ST_FAIL || !claim_key(p, vol, key, sizeof key))
            continue;
        enum step st = claim_step(s, p, key, node, labels, p->prov_at == 0, plan, msg, size);
        worst = st > worst ? st : worst;
    }
    json_decref(plan);
    if (worst == ST_WAIT && p->prov_at == 0)
        p->prov_at = s->now_s > 0 ? s->now_s : 1e-9;
    if (worst == ST_WAIT && s->now_s >= p->prov_at + s->o.bind_timeout_s) {
        worst = ST_FAIL; /* BindPodVolumes' wait.PollUntilContextTimeout */
        snprintf(msg, size, "binding volumes: timed out waiting for the condition");
    }
    return worst;
}

/* p's wait for its claims over (ready, or its decision taken back). */
static void wait_end(struct spod *p)
{
    p->prov_at = 0;
    p->prov_rv = 0;
    p->prov_gang = 0;
    json_decref(p->vol_pvs);
    p->vol_pvs = NULL;
}

/* PreBind failed: the pod's words (schedule_one.go bindingCycle:
 * "running PreBind plugin ...") */
static void prebind_failed(struct gp_kube_sched *s, const struct spod *p, const char *msg)
{
    char note[1200];
    snprintf(note, sizeof note, "running PreBind plugin \"VolumeBinding\": %s", msg);
    gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning", "FailedScheduling",
                "Scheduling", note);
}

static bool holds_claims(const struct gp_kube_sched *s, const struct spod *p)
{
    return p->ours && p->info.claims && s->e && p->node != SP_NONE;
}

/* One pod's decision (not a gang's): held while its claims are
 * provisioned or bound, taken back when that fails. */
static bool pod_hold(struct gp_kube_sched *s, struct spod *p)
{
    if (!holds_claims(s, p))
        return false;
    if (p->prov_at == 0)
        p->prov_gang = 0; /* (a pod's own wait) */
    char msg[1024] = "";
    enum step worst = pod_step(s, p, msg, sizeof msg);
    if (worst == ST_WAIT) {
        s->maybe_resume = true; /* looked at again by gp_ks_resume */
        return true;
    }
    wait_end(p);
    if (worst == ST_READY)
        return false;
    prebind_failed(s, p, msg); /* and its decision taken back */
    s->st.claim_failures++;
    gp_ks_release(s, p);
    return true;
}

/* Gang member p (its decision taken back, as every other member's) told why. */
static void gang_back(struct gp_kube_sched *s, struct spod *p, const char *why)
{
    gp_ks_gang_event(s, p, why);
    s->st.claim_failures++;
    wait_end(p);
    gp_ks_release(s, p);
}

/* A gang's decision, its members m[0..k): kube-scheduler's coscheduling
 * holds every member at Permit until all are assumed
 * (scheduler-plugins pkg/coscheduling/coscheduling.go Permit), then each
 * member's binding cycle runs PreBind, VolumeBinding's included, before
 * its Binding; a member failing there is unreserved, and Unreserve
 * rejects the members still waiting and denies the PodGroup for a while
 * (AddDeniedPodGroup), the gang tried again. gpuplane binds a gang all or
 * none, so every member's claims are provisioned or bound for its node
 * (pod_step, member by member: its claims annotated, its volumes
 * claimRef'd) before any member is annotated or bound, the members held
 * meanwhile (prov_at, the same for all; prov_gang, their number): their
 * GPUs booked in the engine, nothing written to a pod. One member's
 * failure (a patch refused, the provisioner giving up, a volume's node
 * affinity not met, the gang's bind_timeout_s passed) or a member gone or
 * changed while they wait takes every member's decision back: the failed
 * member's PreBind words, the others' a gang Event, all backed off; as for
 * one pod, what was written to the claims and volumes stays. */
static bool gang_hold(struct gp_kube_sched *s, struct spod *const *m, size_t k)
{
    size_t held = 0, bad = k;
    double since = 0; /* the gang's wait began */
    for (size_t i = 0; i < k; i++)
        if (m[i]->prov_at > 0) {
            held += m[i]->prov_gang == k;
            since = since == 0 || m[i]->prov_at < since ? m[i]->prov_at : since;
        }
    char msg[1024] = "", why[1400];
    if (since > 0 && held != k) { /* a member went (deleted, bound elsewhere, decided anew) */
        for (size_t i = 0; i < k; i++)
            gang_back(s, m[i],
                      "a member of its gang left while the gang's claims were provisioned: "
                      "every member's decision taken back");
        return true;
    }
    enum step worst = ST_READY;
    for (size_t i = 0; i < k && worst != ST_FAIL; i++) {
        if (!holds_claims(s, m[i]))
            continue;
        enum step st = pod_step(s, m[i], msg, sizeof msg);
        worst = st > worst ? st : worst;
        bad = st == ST_FAIL ? i : bad;
        if (st == ST_WAIT && since == 0)
            since = m[i]->prov_at;
    }
    if (worst == ST_WAIT) {
        for (size_t i = 0; i < k; i++) {
            m[i]->prov_at = since;
            m[i]->prov_gang = k;
        }
        s->maybe_resume = true; /* looked at again by gp_ks_resume (gp_ks_volumes_gang_resume) */
        return true;
    }
    if (worst == ST_READY) {
        for (size_t i = 0; i < k; i++)
            wait_end(m[i]);
        return false;
    }
    prebind_failed(s, m[bad], msg);
    s->st.claim_failures++;
    wait_end(m[bad]);
    gp_ks_release(s, m[bad]);
    snprintf(why, sizeof why,
             "its gang's member %.300s failed its PreBind (\"VolumeBinding\": %.900s): every "
             "member's decision taken back, none bound",
             m[bad]->info.name, msg);
    for (size_t i = 0; i < k; i++)
        if (i != bad)
            gang_back(s, m[i], why);
    return true;
}

bool gp_ks_volumes_bind_hold(struct gp_kube_sched *s, struct spod *const *m, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (m[i]->recheck_at > 0 || m[i]->rebind_at > 0 || m[i]->resume)
            return false; /* written before (its claims were ready then), or maybe bound */
    if (k == 0)
        return false;
    return k > 1 || m[0]->prov_gang > 0 ? gang_hold(s, m, k) : pod_hold(s, m[0]);
}

/* q is held with p's gang (gang_hold). */
static bool gang_held(const struct spod *q, const struct spod *p)
{
    const struct gp_kube_pod_info *a = &q->info, *b = &p->info;
    return q->st == SP_ASSUMED && q->prov_at > 0 && q->prov_gang > 0 && !q->job && !q->wait_on &&
           a->group && b->group && strcmp(a->group, b->group) == 0 && a->ns && b->ns &&
           strcmp(a->ns, b->ns) == 0;
}

void gp_ks_volumes_gang_resume(struct gp_kube_sched *s, struct spod *p, size_t *bound)
{
    size_t k = 0;
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *q = s->pods[i];
        if (!gang_held(q, p))
            continue;
        if (k == 0 && q != p)
            return; /* a member before it in s->pods did it this pass */
        if (k == s->capgang) {
            size_t cap = s->capgang ? s->capgang * 2 : 64;
            struct spod **v = realloc(s->gang, cap * sizeof *v);
            if (!v)
                return; /* (out of memory) looked at again next pass */
            s->gang = v;
            s->capgang = cap;
        }
        s->gang[k++] = q;
    }
    if (k > 0)
        gp_ks_bind_dispatch(s, s->gang, k, bound);
}
