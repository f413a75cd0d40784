/* events.c - the Node's uid read through the API client and Events posted
 * regarding the Node (node/events.h). */
#include "node/events.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/client.h"

enum gp_err gp_node_event_uid(struct gp_kube_client *c, const char *node, char *uid, size_t n,
                              struct gp_diag *diag)
{
    uid[0] = '\0';
    char path[320];
    snprintf(path, sizeof path, "/api/v1/nodes/%.253s", node);
    struct gp_kube_response r = {0};
    enum gp_err err = gp_kube_request(c, "GET", path, NULL, NULL, &r, diag);
    if (err == GP_OK && r.status == 404)
        err = gp_diag_set(diag, GP_ENOTFOUND, "GET %s: node %s not found", path, node);
    else if (err == GP_OK)
        err = gp_kube_status_err(r.status, r.body, "GET", path, diag);
    if (err == GP_OK) {
        json_t *o = json_loads(r.body ? r.body : "", 0, NULL);
        const char *u = json_string_value(json_object_get(json_object_get(o, "metadata"), "uid"));
        if (u && *u && strlen(u) < n)
            snprintf(uid, n, "%s", u);
        else
            err = gp_diag_set(diag, GP_EIO, "GET %s: no metadata.uid in the answer", path);
        json_decref(o);
    }
    gp_kube_response_free(&r);
    return err;
}

/* RFC 3339 with microseconds, UTC: an Event's eventTime (MicroTime). */
static void micro_time(const struct timespec *ts, char *buf, size_t n)
{
    struct tm tm;
    gmtime_r(&ts->tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%.19s.%06uZ", base, (unsigned)(ts->tv_nsec / 1000) % 1000000u);
}

enum gp_err gp_node_event_post(struct gp_kube_client *c, const char *node, const char *node_uid,
                               const char *instance, const struct gp_node_event *ev,
                               struct gp_diag *diag)
{
    char name[320], t[40], note[1024];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* unique per post: the node, the tag and the time in nanoseconds */
    snprintf(name, sizeof name, "%.240s.%.16s.%llx", node, ev->tag ? ev->tag : "node",
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    micro_time(&ts, t, sizeof t);
    snprintf(note, sizeof note, "%s", ev->note ? ev->note : "");
    json_t *reg = json_pack("{s:s,s:s,s:s}", "apiVersion", "v1", "kind", "Node", "name", node);
    if (reg && node_uid && node_uid[0])
        json_object_set_new(reg, "uid", json_string(node_uid));
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "apiVersion",
                          "events.k8s.io/v1", "kind", "Event", "metadata", "name", name,
                          "namespace", "default", "eventTime", t, "reportingController",
                          GP_NODE_EVENT_CONTROLLER, "reportingInstance",
                          instance && instance[0] ? instance : node, "action", ev->action, "reason",
                          ev->reason, "note", note, "type", ev->type, "regarding", reg);
    if (!o)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory building an Event");
    char *body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!body)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory building an Event");
    const char *path = "/apis/events.k8s.io/v1/namespaces/default/events";
    struct gp_kube_response r = {0};
    enum gp_err err = gp_kube_request(c, "POST", path, body, "application/json", &r, diag);
    free(body);
    if (err == GP_OK)
        err = gp_kube_status_err(r.status, r.body, "POST", path, diag);
    gp_kube_response_free(&r);
    return err;
}
