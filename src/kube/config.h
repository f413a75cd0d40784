/* config.h - gpuplane schedule's configuration as a ConfigMap that it
 * lists and watches (run.c; docs/kube.md, "Configuration"): the keys of
 * its data read into one struct, checked whole (a bad value is one line
 * naming the key and what was expected, and nothing of that version is
 * used), and applied to a running scheduler between two cycles, so that
 * no cycle decides under two configurations.
 *
 * Keys (data, all optional; a key absent takes the value of the flag):
 *   schedulerName             the pods' spec.schedulerName (a DNS-1123
 *                             subdomain); needs a restart
 *   policy                    the placement policy (gpuplane sim --help);
 *                             live: the engine is rebuilt with it
 *   podInitialBackoffSeconds  kube-scheduler's names and rule: > 0, and
 *   podMaxBackoffSeconds      max >= initial; live: the next back-off
 *                             computed uses them
 * Any other key is refused (as kube-scheduler's strict decoding refuses
 * an unknown field of its KubeSchedulerConfiguration). */
#ifndef GP_KUBE_CONFIG_H
#define GP_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "kube/sched.h"
#include "util/err.h"

struct gp_kube_conf {
    char scheduler_name[254];
    char policy[64];
    double backoff_initial_s, backoff_max_s;
};

/* What differs between two configurations (gp_kube_conf_diff). */
enum {
    GP_KCONF_SCHEDULER_NAME = 1u << 0, /* restart */
    GP_KCONF_POLICY = 1u << 1,
    GP_KCONF_BACKOFF = 1u << 2,
    GP_KCONF_RESTART = GP_KCONF_SCHEDULER_NAME, /* what a running scheduler cannot take */
};

/* The configuration the flags give (o's scheduler_name, policy - NULL:
 * best-fit - and back-offs). */
void gp_kube_conf_from_opts(const struct gp_kube_sched_opts *o, struct gp_kube_conf *out);

/* The configuration ConfigMap cm gives over base (the flags'): cm NULL
 * (none, or deleted) gives base. GP_EINVALID for a bad key or value, the
 * line naming the ConfigMap (ns/name) and the key: "ConfigMap NS/NAME:
 * data.policy: expected one of random, best-fit, ..., got \"x\"";
 * *out is then untouched. */
enum gp_err gp_kube_conf_parse(const json_t *cm, const struct gp_kube_conf *base,
                               struct gp_kube_conf *out, struct gp_diag *diag);

unsigned gp_kube_conf_diff(const struct gp_kube_conf *a, const struct gp_kube_conf *b);

/* "policy=best-fit podInitialBackoffSeconds=1 podMaxBackoffSeconds=10
 * schedulerName=gpuplane" (the keys of what), for logs and Events. */
void gp_kube_conf_describe(const struct gp_kube_conf *c, unsigned what, char *buf, size_t n);

/* The list/watch path of one ConfigMap: its namespace's configmaps with
 * fieldSelector=metadata.name=NAME (what an RBAC rule with resourceNames
 * allows for list and watch). False when it does not fit n. */
bool gp_kube_conf_path(const char *ns, const char *name, char *buf, size_t n);

/* Applies c's live settings (policy, back-offs) to s - call it between
 * cycles, on the scheduling thread - and returns what changed of them;
 * the settings that need a restart are left as they are. A new policy
 * rebuilds the engine at the next cycle (decisions in flight were made
 * under the old one and finish). */
unsigned gp_kube_sched_conf_apply(struct gp_kube_sched *s, const struct gp_kube_conf *c);

/* An Event about the ConfigMap (the leader's only, as all its Events). */
void gp_kube_sched_conf_event(struct gp_kube_sched *s, const char *ns, const char *name,
                              const char *uid, const char *type, const char *reason,
                              const char *note);

#endif
