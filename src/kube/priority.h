/* priority.h - PriorityClasses (scheduling.k8s.io/v1) as an informer
 * delivers them, and a pod's priority resolved from them as the API
 * server's Priority admission plugin resolves it when the pod is created
 * (kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/):
 * spec.priority, when the API filled it, is the pod's and nothing here
 * changes it; else spec.priorityClassName's class gives its value and
 * preemptionPolicy; a pod naming no class gets the globalDefault class's
 * (with several, the smallest value, as the PriorityClass API reference
 * says of globalDefault), else 0. A class the pod names that does not
 * exist (the API would have refused the pod) gives 0. */
#ifndef GP_KUBE_PRIORITY_H
#define GP_KUBE_PRIORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kube/watch.h"

struct gp_kube_prio_class {
    char *name;
    int32_t value;
    bool preempt_never; /* preemptionPolicy: Never */
    bool global_default;
};

struct gp_kube_priorities {
    struct gp_kube_prio_class *v;
    size_t n, cap;
};

void gp_kube_priorities_init(struct gp_kube_priorities *t);
void gp_kube_priorities_free(struct gp_kube_priorities *t);

/* An informer's change (ADDED and MODIFIED set the class, DELETED takes
 * it out); true when what a pod would be given changed. A class without
 * an integer value is ignored. */
bool gp_kube_priorities_change(struct gp_kube_priorities *t, enum gp_kube_event_type type,
                               const json_t *obj);

/* The pod's priority and whether it may preempt, as admission resolves
 * them; true when a class gave them (the pod had no spec.priority). The
 * pod's own spec.preemptionPolicy, when set, is kept. */
bool gp_kube_priorities_resolve(const struct gp_kube_priorities *t, const json_t *pod,
                                int32_t *priority, bool *preempt_never);

#endif
