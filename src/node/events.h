/* events.h - Events about the Node the agent runs on: the Node's uid read
 * through the API client (GET /api/v1/nodes/NAME, metadata.uid) and
 * events.k8s.io/v1 Events posted regarding the Node with that uid
 * (docs/node.md, "Events on the Node"). Health changes (node/health.h) and
 * NVML failing or coming back (node/agent.c) are posted through here. */
#ifndef GP_NODE_EVENTS_H
#define GP_NODE_EVENTS_H

#include <stddef.h>

#include "util/err.h"

#define GP_NODE_EVENT_CONTROLLER "gpuplane.io/node-agent" /* reportingController */
#define GP_NODE_UID_LEN          64 /* a uid is 36 characters; room to spare */

struct gp_kube_client;

/* One Event to post. */
struct gp_node_event {
    const char *type;   /* "Normal" or "Warning" */
    const char *reason; /* "GPUUnhealthy", "NVMLUnavailable", ... (CamelCase) */
    const char *action; /* "XID", "Recover", "Discover" */
    const char *note;   /* the human-readable line (at most 1 kB is kept) */
    const char *tag;    /* a word in the Event's name, "gpu0", "nvml" */
};

/* The Node's metadata.uid into uid[n] (n >= GP_NODE_UID_LEN). GP_ENOTFOUND
 * when the Node does not exist (404), the client's or the status's error
 * otherwise, with a one-line diag; uid is "" on error. */
enum gp_err gp_node_event_uid(struct gp_kube_client *c, const char *node, char *uid, size_t n,
                              struct gp_diag *diag);

/* Posts ev as an events.k8s.io/v1 Event in "default" regarding the Node
 * (apiVersion v1, kind Node, name node, uid node_uid when not NULL or
 * ""), reportingController GP_NODE_EVENT_CONTROLLER, reportingInstance
 * instance (node when NULL), eventTime now. GP_OK once the server
 * answered 201. */
enum gp_err gp_node_event_post(struct gp_kube_client *c, const char *node, const char *node_uid,
                               const char *instance, const struct gp_node_event *ev,
                               struct gp_diag *diag);

#endif
