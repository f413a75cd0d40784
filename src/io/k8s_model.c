/* k8s_model.c - the one table of what gpuplane does with each field
 * Kubernetes defines for the kinds it reads: modelled (the reader reads it;
 * its own fields are classified in turn), inert (it does not change where
 * or when pods run: silent) or warned about (it does, and the simulation
 * does not model it: one warning line saying what is assumed instead).
 * Also gpuplane's own annotation and label keys. Modelling a field is
 * changing its row here (and reading it in the reader); the unit tests
 * check that every field of a modelled type has a row, that every row
 * names a field of data/k8s-fields.txt, and that the rows are sorted. */
#include <string.h>

#include "io/k8s_schema.h"

/* Sorted by type, then field, bytewise (tests/unit/test_k8s_schema.c). */
const struct gp_k8s_model gp_k8s_model[] = {
    {"Affinity", "nodeAffinity", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Affinity", "podAffinity", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Affinity", "podAntiAffinity", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Container", "args", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "command", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "env", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "envFrom", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "image", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Container", "imagePullPolicy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "lifecycle", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "livenessProbe", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the simulation assumes the probe always succeeds"},
    {"Container", "name", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "ports", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Container", "readinessProbe", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the simulation assumes the pod is ready as soon as it runs"},
    {"Container", "resizePolicy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "resources", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Container", "restartPolicy", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Container", "restartPolicyRules", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "securityContext", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the container is taken to be admitted with these settings"},
    {"Container", "startupProbe", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the simulation assumes the probe always succeeds"},
    {"Container", "stdin", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "stdinOnce", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "terminationMessagePath", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "terminationMessagePolicy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "tty", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "volumeDevices", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "volumeMounts", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Container", "workingDir", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ContainerPort", "containerPort", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ContainerPort", "hostIP", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ContainerPort", "hostPort", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "host ports are not simulated: pods that use the same one may share a node"},
    {"ContainerPort", "name", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ContainerPort", "protocol", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Deployment", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Deployment", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Deployment", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Deployment", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Deployment", "status", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "minReadySeconds", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "paused", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "progressDeadlineSeconds", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "replicas", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "revisionHistoryLimit", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "selector", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "strategy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"DeploymentSpec", "template", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Job", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Job", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Job", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Job", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Job", "status", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "activeDeadlineSeconds", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "backoffLimit", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "backoffLimitPerIndex", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "failures count against spec.backoffLimit, not per index"},
    {"JobSpec", "completionMode", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "completions", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "managedBy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "manualSelector", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "maxFailedIndexes", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "failures count against spec.backoffLimit, not per index"},
    {"JobSpec", "parallelism", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "podFailurePolicy", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "every pod failure counts against spec.backoffLimit"},
    {"JobSpec", "podReplacementPolicy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "selector", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "successPolicy", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the Job succeeds when spec.completions pods have succeeded"},
    {"JobSpec", "suspend", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the Job runs from its arrival, as if never suspended"},
    {"JobSpec", "template", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"JobSpec", "ttlSecondsAfterFinished", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"LabelSelector", "matchExpressions", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"LabelSelector", "matchLabels", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"LabelSelectorRequirement", "key", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"LabelSelectorRequirement", "operator", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"LabelSelectorRequirement", "values", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"List", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"List", "items", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"List", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"List", "metadata", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"NodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", GP_K8S_MODELLED,
     GP_K8S_CHECK_NONE, NULL},
    {"NodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", GP_K8S_MODELLED,
     GP_K8S_CHECK_NONE, NULL},
    {"NodeSelector", "nodeSelectorTerms", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"NodeSelectorRequirement", "key", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"NodeSelectorRequirement", "operator", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"NodeSelectorRequirement", "values", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"NodeSelectorTerm", "matchExpressions", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"NodeSelectorTerm", "matchFields", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "annotations", GP_K8S_MODELLED, GP_K8S_CHECK_ANNOTATIONS, NULL},
    {"ObjectMeta", "creationTimestamp", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "deletionGracePeriodSeconds", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "deletionTimestamp", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "finalizers", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "generateName", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "generation", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "labels", GP_K8S_MODELLED, GP_K8S_CHECK_LABELS, NULL},
    {"ObjectMeta", "managedFields", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "name", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "namespace", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "ownerReferences", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "resourceVersion", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "selfLink", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"ObjectMeta", "uid", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"Pod", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Pod", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Pod", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Pod", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Pod", "status", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodAffinity", "preferredDuringSchedulingIgnoredDuringExecution", GP_K8S_MODELLED,
     GP_K8S_CHECK_NONE, NULL},
    {"PodAffinity", "requiredDuringSchedulingIgnoredDuringExecution", GP_K8S_MODELLED,
     GP_K8S_CHECK_NONE, NULL},
    {"PodAffinityTerm", "labelSelector", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodAffinityTerm", "matchLabelKeys", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodAffinityTerm", "mismatchLabelKeys", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodAffinityTerm", "namespaceSelector", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodAffinityTerm", "namespaces", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodAffinityTerm", "topologyKey", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", GP_K8S_MODELLED,
     GP_K8S_CHECK_NONE, NULL},
    {"PodAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", GP_K8S_MODELLED,
     GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "activeDeadlineSeconds", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "a Pod runs for its sim.gpuplane.io/duration whatever its deadline (a Job's "
     "spec.activeDeadlineSeconds is simulated)"},
    {"PodSpec", "affinity", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "automountServiceAccountToken", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "containers", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "dnsConfig", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "dnsPolicy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "enableServiceLinks", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "ephemeralContainers", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "hostAliases", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "hostIPC", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "hostNetwork", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "hostPID", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "hostUsers", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "hostname", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "hostnameOverride", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "imagePullSecrets", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "initContainers", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "nodeName", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the simulation schedules the pod: it is not bound to the node named"},
    {"PodSpec", "nodeSelector", GP_K8S_MODELLED, GP_K8S_CHECK_SELECTOR, NULL},
    {"PodSpec", "os", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "overhead", GP_K8S_MODELLED, GP_K8S_CHECK_RESOURCES, NULL},
    {"PodSpec", "preemptionPolicy", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "priority", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "priorityClassName", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "readinessGates", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "resourceClaims", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "dynamic resource allocation is not simulated: the claims' devices are not counted"},
    {"PodSpec", "resources", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "pod-level resources are not simulated: the pod asks for what its containers ask"},
    {"PodSpec", "restartPolicy", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "runtimeClassName", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the RuntimeClass's node selector, tolerations and overhead are not applied"},
    {"PodSpec", "schedulerName", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "schedulingGates", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the gates are taken as removed: the pod is scheduled when it arrives"},
    {"PodSpec", "securityContext", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the pod is taken to be admitted with these settings"},
    {"PodSpec", "serviceAccount", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "serviceAccountName", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "setHostnameAsFQDN", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "shareProcessNamespace", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "subdomain", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "terminationGracePeriodSeconds", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "an evicted pod stops at once (no grace period)"},
    {"PodSpec", "tolerations", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "topologySpreadConstraints", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodSpec", "volumes", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "every volume is taken to be available on every node"},
    {"PodSpec", "workloadRef", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "Workload objects are not read: gangs come from PodGroups"},
    {"PodTemplateSpec", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PodTemplateSpec", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PreferredSchedulingTerm", "preference", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PreferredSchedulingTerm", "weight", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PriorityClass", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PriorityClass", "description", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"PriorityClass", "globalDefault", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PriorityClass", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PriorityClass", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PriorityClass", "preemptionPolicy", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"PriorityClass", "value", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"ResourceRequirements", "claims", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "resource claims are not simulated: their devices are not counted"},
    {"ResourceRequirements", "limits", GP_K8S_MODELLED, GP_K8S_CHECK_RESOURCES, NULL},
    {"ResourceRequirements", "requests", GP_K8S_MODELLED, GP_K8S_CHECK_RESOURCES, NULL},
    {"Toleration", "effect", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Toleration", "key", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Toleration", "operator", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"Toleration", "tolerationSeconds", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "a toleration of a NoExecute taint lasts for ever"},
    {"Toleration", "value", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "labelSelector", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "matchLabelKeys", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "maxSkew", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "minDomains", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "nodeAffinityPolicy", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "nodeTaintsPolicy", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "topologyKey", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"TopologySpreadConstraint", "whenUnsatisfiable", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"WeightedPodAffinityTerm", "podAffinityTerm", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"WeightedPodAffinityTerm", "weight", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue", "status", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec", "borrowingLimit", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec", "gpuModels", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec", "guaranteed", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec", "parent", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec", "preemption", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec", "reclaimable", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec", "weight", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec.gpuModels", "borrowingLimit", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec.gpuModels", "guaranteed", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec.gpuModels", "model", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec.preemption", "minRuntime", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"gpuplane.Queue.spec.preemption", "withinQueue", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"resources", "ephemeral-storage", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "local storage is not simulated: every node is taken to have enough"},
    {"resources", "hugepages-", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "huge pages are not simulated: every node is taken to have enough"},
    {"volcano.PodGroup", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.PodGroup", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.PodGroup", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.PodGroup", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.PodGroup", "status", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"volcano.PodGroup.spec", "minMember", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.PodGroup.spec", "minResources", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the gang starts when minMember pods fit; minResources is not checked"},
    {"volcano.PodGroup.spec", "minTaskMember", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the gang starts when minMember pods fit, whatever their tasks"},
    {"volcano.PodGroup.spec", "networkTopology", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "network tiers are not simulated (gpuplane.io/topology-key on the PodGroup is)"},
    {"volcano.PodGroup.spec", "priorityClassName", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the gang's pods keep their own priority"},
    {"volcano.PodGroup.spec", "queue", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.PodGroup.spec", "subGroupPolicy", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the gang starts when minMember pods fit, whatever their sub-groups"},
    {"volcano.Queue", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue", "status", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec", "affinity", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the queue's node-group affinity is not applied"},
    {"volcano.Queue.spec", "capability", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec", "deserved", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec", "extendClusters", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the simulation has one cluster"},
    {"volcano.Queue.spec", "guarantee", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec", "parent", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec", "priority", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "queues are ordered by fair share, not by priority"},
    {"volcano.Queue.spec", "reclaimable", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec", "type", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec", "weight", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"volcano.Queue.spec.guarantee", "resource", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"x-k8s.PodGroup", "apiVersion", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"x-k8s.PodGroup", "kind", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"x-k8s.PodGroup", "metadata", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"x-k8s.PodGroup", "spec", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"x-k8s.PodGroup", "status", GP_K8S_INERT, GP_K8S_CHECK_NONE, NULL},
    {"x-k8s.PodGroup.spec", "minMember", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
    {"x-k8s.PodGroup.spec", "minResources", GP_K8S_WARN, GP_K8S_CHECK_NONE,
     "the gang starts when minMember pods fit; minResources is not checked"},
    {"x-k8s.PodGroup.spec", "scheduleTimeoutSeconds", GP_K8S_MODELLED, GP_K8S_CHECK_NONE, NULL},
};
const size_t gp_k8s_nmodel = sizeof gp_k8s_model / sizeof gp_k8s_model[0];
_Static_assert(sizeof gp_k8s_model / sizeof gp_k8s_model[0] <= GP_WORKLOAD_WARN_WORDS * 64,
               "GP_WORKLOAD_WARN_WORDS is too small for the model table");

static int row_cmp(const char *type, const char *field, const struct gp_k8s_model *m)
{
    int c = strcmp(type, m->type);
    return c ? c : strcmp(field, m->field);
}

void gp_k8s_model_rows(const char *type, size_t *first, size_t *count)
{
    size_t lo = 0, hi = gp_k8s_nmodel;
    while (lo < hi) { /* the first row of the type, or where it would be */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(gp_k8s_model[mid].type, type) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < gp_k8s_nmodel && strcmp(gp_k8s_model[end].type, type) == 0)
        end++;
    *first = lo;
    *count = end - lo;
}

const struct gp_k8s_model *gp_k8s_model_field(size_t first, size_t count, const char *field)
{
    size_t lo = first, hi = first + count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(field, gp_k8s_model[mid].field);
        if (c == 0)
            return &gp_k8s_model[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const struct gp_k8s_model *gp_k8s_model_find(const char *type, const char *field)
{
    size_t lo = 0, hi = gp_k8s_nmodel;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = row_cmp(type, field, &gp_k8s_model[mid]);
        if (c == 0)
            return &gp_k8s_model[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* The reader's annotations (manifest.c) and labels; a key here that the
 * reader does not read is caught by tests/unit/test_k8s_schema.c. */
const struct gp_k8s_key gp_k8s_keys[] = {
    {"gpuplane.io/cuda", GP_K8S_POD_ANNOTATION},
    {"gpuplane.io/gpu-memory", GP_K8S_POD_ANNOTATION},
    {"gpuplane.io/gpu-milli", GP_K8S_POD_ANNOTATION},
    {"gpuplane.io/gpu-model", GP_K8S_POD_ANNOTATION},
    {"gpuplane.io/queue", GP_K8S_POD_LABEL},
    {"gpuplane.io/sharing", GP_K8S_POD_ANNOTATION},
    {"gpuplane.io/topology-key", GP_K8S_PODGROUP_ANNOTATION},
    {"gpuplane.io/topology-policy", GP_K8S_PODGROUP_ANNOTATION},
    {"gpuplane.io/topology-slowdown", GP_K8S_PODGROUP_ANNOTATION},
    {"sim.gpuplane.io/arrival", GP_K8S_POD_ANNOTATION},
    {"sim.gpuplane.io/checkpoint-interval", GP_K8S_POD_ANNOTATION},
    {"sim.gpuplane.io/duration", GP_K8S_POD_ANNOTATION},
    {"sim.gpuplane.io/failure-probability", GP_K8S_POD_ANNOTATION},
    {"sim.gpuplane.io/failure-rate", GP_K8S_POD_ANNOTATION},
    {"sim.gpuplane.io/interarrival", GP_K8S_POD_ANNOTATION},
    {"sim.gpuplane.io/repeat", GP_K8S_POD_ANNOTATION},
    {"sim.gpuplane.io/retries", GP_K8S_POD_ANNOTATION},
};
const size_t gp_k8s_nkeys = sizeof gp_k8s_keys / sizeof gp_k8s_keys[0];
