/* podreq.h - a pod's effective request as Kubernetes computes it, one rule
 * for the manifest reader (io/manifest_pod.c) and the live scheduler's pod
 * reader (kube/objects.c): k8s.io/component-helpers resource/helpers.go
 * PodRequests (AggregateContainerRequests) and KEP-753 (sidecar
 * containers, "Exposing Pod Resource Requirements"):
 *
 *   sum      = every app container + every restartable init container
 *              (a sidecar: restartPolicy Always) - they run side by side
 *   init(i)  = init container i + the sidecars before it (for a sidecar:
 *              the sidecars before it and itself)
 *   request  = max(sum, max over i of init(i)), per resource
 *
 * The containers may be fed in any order between the two lists, but the
 * init containers in spec order (the sidecars so far depend on it). The
 * pod's overhead, when read, is added by the caller. */
#ifndef GP_IO_PODREQ_H
#define GP_IO_PODREQ_H

#include <stdbool.h>
#include <stdint.h>

/* The resources the readers count. */
enum gp_podreq_res {
    GP_PODREQ_CPU_MILLI,
    GP_PODREQ_MEM_MIB,
    GP_PODREQ_GPUS,   /* nvidia.com/gpu */
    GP_PODREQ_SHARED, /* nvidia.com/gpu.shared */
    GP_PODREQ_MIG,    /* nvidia.com/mig-<profile> (one profile per pod) */
    GP_PODREQ_COUNT,
};

struct gp_podreq {
    int64_t sum[GP_PODREQ_COUNT];  /* app containers and sidecars */
    int64_t side[GP_PODREQ_COUNT]; /* the sidecars so far */
    int64_t init[GP_PODREQ_COUNT]; /* the largest init(i) */
    int64_t one[GP_PODREQ_COUNT];  /* the largest one container's own need */
};

/* An app container (spec.containers[]) asking need[]. */
void gp_podreq_app(struct gp_podreq *r, const int64_t need[GP_PODREQ_COUNT]);
/* The next init container (spec.initContainers[], in order) asking
 * need[]; sidecar: its restartPolicy is Always. */
void gp_podreq_init(struct gp_podreq *r, const int64_t need[GP_PODREQ_COUNT], bool sidecar);
/* The request of resource k so far: max(sum, init). */
int64_t gp_podreq_total(const struct gp_podreq *r, enum gp_podreq_res k);
/* The most of resource k one container asks (an init, sidecar or app
 * container alike): what the kubelet's device manager sends a device
 * plugin in one container's Allocate (it calls Allocate per container,
 * devicemanager allocateContainerResources), and what NVIDIA's
 * failRequestsGreaterThanOne checks (k8s-device-plugin internal/rm,
 * ValidateRequest: the request of one container). */
int64_t gp_podreq_container_max(const struct gp_podreq *r, enum gp_podreq_res k);

#endif
