/* objects_unread.c - the members of a Pod that none of the scheduler's
 * readers reads, left out of the pods informer's trees (jload.h's
 * gp_kube_jload_skip; objects.h). A reader that comes to read one of them
 * takes it off this list; test_kube_podinfo's test_unread_left_out reads
 * a pod with every member here both ways. */
#include "kube/jload.h"
#include "kube/objects.h"

/* A Pod's members that nothing in the scheduler reads (objects.c,
 * objects_share.c, objects_mig.c, priority.c, pdb.c and sched*.c read
 * metadata's name, namespace, uid, resourceVersion, deletionTimestamp,
 * labels and annotations; the containers' name, resources, ports'
 * hostPort, hostIP and protocol, and an init container's restartPolicy;
 * whether a volume is a persistentVolumeClaim or ephemeral; nodeName, schedulerName,
 * nodeSelector, tolerations but their tolerationSeconds, priority, priorityClassName,
 * preemptionPolicy and overhead; status.phase, nominatedNodeName and each
 * containerStatuses' state): the API server's defaults
 * (pkg/apis/core/v1/defaults.go), the members admission and the kubelet
 * add (the service account's token volume, conditions, IPs, the
 * containers' images and ids), kubectl's last-applied copy of the object,
 * and metadata.managedFields, which kube-controller-manager's informers
 * also drop (cmd/kube-controller-manager/app/controllermanager.go,
 * CreateControllerContext's trim transform). Left out of the pods
 * informer's store: no tree, no memory for them. */
/* a port's number and name (hostPort, hostIP and protocol are NodePorts',
 * objects_scalar.c) */
static const struct gp_kube_jskip pod_port_unread[] = {
    {"containerPort", NULL, 0},
    {"name", NULL, 0},
};
static const struct gp_kube_jskip pod_ports_each[] = {{"[]", pod_port_unread, 2}};
static const struct gp_kube_jskip pod_container_unread[] = {
    {"args", NULL, 0},
    {"command", NULL, 0},
    {"env", NULL, 0},
    {"envFrom", NULL, 0},
    {"image", NULL, 0},
    {"imagePullPolicy", NULL, 0},
    {"lifecycle", NULL, 0},
    {"livenessProbe", NULL, 0},
    {"ports", pod_ports_each, 1},
    {"readinessProbe", NULL, 0},
    {"securityContext", NULL, 0},
    {"startupProbe", NULL, 0},
    {"terminationMessagePath", NULL, 0},
    {"terminationMessagePolicy", NULL, 0},
    {"volumeMounts", NULL, 0},
    {"workingDir", NULL, 0},
};
static const struct gp_kube_jskip pod_containers_each[] = {
    {"[]", pod_container_unread, sizeof pod_container_unread / sizeof *pod_container_unread},
};
/* a volume's kinds but the claims (objects.c reads whether a pod has a
 * persistentVolumeClaim or ephemeral volume, volumes.c its claims, an
 * ephemeral one's named after the volume): the common ones left out */
static const struct gp_kube_jskip pod_volume_unread[] = {
    {"configMap", NULL, 0}, {"downwardAPI", NULL, 0}, {"emptyDir", NULL, 0},
    {"hostPath", NULL, 0},  {"projected", NULL, 0},   {"secret", NULL, 0},
};
static const struct gp_kube_jskip pod_volumes_each[] = {
    {"[]", pod_volume_unread, sizeof pod_volume_unread / sizeof *pod_volume_unread}};
static const struct gp_kube_jskip pod_toleration_unread[] = {{"tolerationSeconds", NULL, 0}};
static const struct gp_kube_jskip pod_tolerations_each[] = {{"[]", pod_toleration_unread, 1}};
static const struct gp_kube_jskip pod_spec_unread[] = {
    {"containers", pod_containers_each, 1},
    {"initContainers", pod_containers_each, 1},
    {"tolerations", pod_tolerations_each, 1},
    {"dnsConfig", NULL, 0},
    {"dnsPolicy", NULL, 0},
    {"enableServiceLinks", NULL, 0},
    {"hostname", NULL, 0},
    {"imagePullSecrets", NULL, 0},
    {"readinessGates", NULL, 0},
    {"restartPolicy", NULL, 0},
    {"securityContext", NULL, 0},
    {"serviceAccount", NULL, 0},
    {"serviceAccountName", NULL, 0},
    {"subdomain", NULL, 0},
    {"terminationGracePeriodSeconds", NULL, 0},
    {"volumes", pod_volumes_each, 1},
};
static const struct gp_kube_jskip pod_container_status_unread[] = {
    {"containerID", NULL, 0},  {"image", NULL, 0},   {"imageID", NULL, 0},
    {"lastState", NULL, 0},    {"name", NULL, 0},    {"ready", NULL, 0},
    {"restartCount", NULL, 0}, {"started", NULL, 0}, {"volumeMounts", NULL, 0},
};
static const struct gp_kube_jskip pod_container_statuses_each[] = {
    {"[]", pod_container_status_unread,
     sizeof pod_container_status_unread / sizeof *pod_container_status_unread},
};
static const struct gp_kube_jskip pod_status_unread[] = {
    {"containerStatuses", pod_container_statuses_each, 1},
    {"conditions", NULL, 0},
    {"ephemeralContainerStatuses", NULL, 0},
    {"hostIP", NULL, 0},
    {"hostIPs", NULL, 0},
    {"initContainerStatuses", NULL, 0},
    {"podIP", NULL, 0},
    {"podIPs", NULL, 0},
    {"qosClass", NULL, 0},
    {"startTime", NULL, 0},
};
static const struct gp_kube_jskip pod_annotations_unread[] = {
    {"kubectl.kubernetes.io/last-applied-configuration", NULL, 0},
};
static const struct gp_kube_jskip pod_meta_unread[] = {
    {"annotations", pod_annotations_unread, 1},
    {"creationTimestamp", NULL, 0},
    {"generateName", NULL, 0},
    {"managedFields", NULL, 0},
};
static const struct gp_kube_jskip pod_unread_kids[] = {
    {"apiVersion", NULL, 0},
    {"kind", NULL, 0},
    {"metadata", pod_meta_unread, sizeof pod_meta_unread / sizeof *pod_meta_unread},
    {"spec", pod_spec_unread, sizeof pod_spec_unread / sizeof *pod_spec_unread},
    {"status", pod_status_unread, sizeof pod_status_unread / sizeof *pod_status_unread},
};
const struct gp_kube_jskip gp_kube_pod_unread = {NULL, pod_unread_kids,
                                                 sizeof pod_unread_kids / sizeof *pod_unread_kids};
