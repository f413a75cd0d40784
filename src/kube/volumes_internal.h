/* volumes_internal.h - what volumes.c, volumes_bind.c and volumes_match.c
 * share: which existing PersistentVolume an unbound claim may be bound to
 * (volumes_match.c). Internal to src/kube. Every object is borrowed. */
#ifndef GP_KUBE_VOLUMES_INTERNAL_H
#define GP_KUBE_VOLUMES_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

struct gp_arena;
struct gp_kube_sched;
struct gp_pod_constraints;
struct spod;

/* volumes.c: p's constraints with its volumes' conditions decided again
 * from the claims, volumes and classes as they are now (a decision moved
 * elsewhere, sched_unblock.c: a claim provisioned or bound for the old
 * node keeps the pod where its volume reaches), in *out (in a, the
 * caller's; p's own, maybe NULL, when it has no claims); false when out
 * of memory. */
bool gp_ks_volumes_now(struct gp_kube_sched *s, const struct spod *p, struct gp_arena *a,
                       const struct gp_pod_constraints **out);

/* The claim's class (GetPersistentVolumeClaimClass: the beta annotation,
 * else spec.storageClassName; "" when none). */
const char *gp_ks_claim_class(const json_t *pvc);

/* IsVolumeBoundToClaim: pv's spec.claimRef names pvc (its namespace and
 * name, and its uid when the reference has one). */
bool gp_ks_pv_bound_to(const json_t *pv, const json_t *pvc);

/* How pv stands for unbound claim pvc, whatever the node (FindMatchingVolume
 * before the node affinity): GP_PVM_PREBOUND, its claimRef names the claim
 * (chosen first: it alone, where it fits); GP_PVM_YES, a candidate
 * (Available, of the claim's class, not claimed, enough capacity, the same
 * volumeMode, the claim's access modes and selector met, not being
 * deleted); GP_PVM_NO. */
enum gp_pvm { GP_PVM_NO, GP_PVM_YES, GP_PVM_PREBOUND };
enum gp_pvm gp_ks_pv_match(const json_t *pvc, const json_t *pv);

/* volume.CheckNodeAffinity: pv's spec.nodeAffinity required terms (ORed)
 * against a node's labels alone (a matchFields requirement compares "").
 * No required terms: every node. */
bool gp_ks_pv_fits(const json_t *pv, const json_t *labels);

/* metav1.IsControlledBy(pvc, pod): pvc has a controller owner reference
 * of uid (a generic ephemeral volume's claim is its pod's). */
bool gp_ks_pvc_owned_by(const json_t *pvc, const char *uid);

/* FindMatchingVolume for a node of these labels: among pvs (name -> PV)
 * the volume claimRef'd to pvc when there is one (NULL when it does not
 * fit the node), else the candidate of the least capacity that fits (the
 * first by name among equals), none of those named in skip (an object of
 * names; NULL: none). NULL: none matches; *prebound, whether a volume
 * claimRef'd to pvc decided it. */
const char *gp_ks_pv_find(const json_t *pvs, const json_t *pvc, const json_t *labels,
                          const json_t *skip, bool *prebound);

/* MatchTopologySelectorTerms: the class's allowedTopologies (its terms
 * ORed, a term's matchLabelExpressions ANDed, each the label's value one
 * of the values; none: every node) against a node's labels. */
bool gp_ks_topology_fits(const json_t *sc, const json_t *labels);

#endif
