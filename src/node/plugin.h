/* plugin.h - the kubelet device plugin, API v1beta1
 * (src/node/proto/deviceplugin.proto) over gRPC C core: one server on a
 * unix socket of the kubelet's device-plugins directory for each resource
 * of the node (devices.h), each answering GetDevicePluginOptions,
 * ListAndWatch (the device list, again on every health change),
 * GetPreferredAllocation, Allocate and PreStartContainer, and registered
 * with Registration.Register on kubelet.sock. A thread watches the
 * directory: a kubelet that restarts (kubelet.sock removed and created
 * again, or our socket removed) gets every server restarted and
 * registered again, as the device plugin documentation asks
 * (kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/
 * device-plugins/, "Handling kubelet restarts"; NVIDIA's plugin does the
 * same on kubelet.sock's creation).
 *
 * Which pod an Allocate serves is the caller's business (the choice
 * callback: docs/node.md, "Which pod an Allocate serves"): Allocates are
 * serialised over the whole node, the choice asked, the answer made and
 * the done callback told, one at a time. */
#ifndef GP_NODE_PLUGIN_H
#define GP_NODE_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "node/devices.h"
#include "node/inventory.h"
#include "util/err.h"

#define GP_PLUGIN_DIR "/var/lib/kubelet/device-plugins"

/* The scheduler's choice for the pod the kubelet is admitting. wait
 * false: GetPreferredAllocation's look, nothing changes, out->set false
 * when none. wait true: Allocate's, waiting a while for the pod; an
 * error refuses the Allocate with diag's message. */
typedef enum gp_err (*gp_plugin_choice_fn)(void *ctx, const char *resource, size_t n_devices,
                                           bool wait, struct gp_node_choice *out,
                                           struct gp_diag *diag);
/* After an Allocate that used a choice was made (ok) or refused, before
 * the kubelet is answered: an error turns the answer into a refusal (the
 * pod could not be marked served, so the next Allocate would find it
 * again). */
typedef enum gp_err (*gp_plugin_done_fn)(void *ctx, const char *resource,
                                         const struct gp_node_choice *choice,
                                         const struct gp_node_alloc *alloc, bool ok,
                                         struct gp_diag *diag);

struct gp_plugin_opts {
    const char *dir;            /* GP_PLUGIN_DIR when NULL */
    const char *kubelet_socket; /* its name in dir: "kubelet.sock" when NULL */
    double poll_s;              /* how often the directory is looked at: 0.2 when 0 */
    gp_plugin_choice_fn choice; /* NULL: Allocate serves the kubelet's IDs as they are */
    gp_plugin_done_fn done;
    void *ctx;
    bool quiet; /* no log lines on stderr */
};

struct gp_plugin_stats {
    unsigned long registrations; /* Register calls the kubelet accepted */
    unsigned long restarts;      /* servers restarted for a kubelet restart */
    unsigned long allocations;   /* Allocate calls answered */
    unsigned long refusals;      /* Allocate calls refused */
    unsigned long streams;       /* ListAndWatch streams open now */
};

struct gp_plugin;

/* Builds the resources (GP_EINVALID: a configuration NVIDIA's plugin
 * refuses), starts their servers and the watching thread; registering
 * happens as soon as kubelet.sock is there. GP_EIO when a socket cannot
 * be bound. */
enum gp_err gp_plugin_start(const struct gp_plugin_opts *o, const struct gp_node_inventory *inv,
                            const struct gp_node_sharing *sh, struct gp_plugin **out,
                            struct gp_diag *diag);
/* Stops the servers and the thread, removes the sockets, frees. */
void gp_plugin_stop(struct gp_plugin *p);

/* New health from an inventory of the same GPUs: the devices that
 * changed are streamed to every ListAndWatch. */
void gp_plugin_update(struct gp_plugin *p, const struct gp_node_inventory *inv);

/* A new device set (GPUs added or gone, a MIG layout changed), updated in
 * place as the kubelet's device manager takes it (each ListAndWatch
 * response replaces the resource's devices: kubelet
 * pkg/kubelet/cm/devicemanager/manager.go, genericDeviceUpdateCallback):
 * a resource that remains streams its new list on the open streams, with
 * no new registration; a resource that appears gets a server and a
 * Register of its own; one whose devices are all gone streams an empty
 * list (its capacity 0 at once) and its server stops a second later.
 * GP_EINVALID when the new set cannot be built (gp_node_devset_build's
 * refusals): the old one is served on. */
enum gp_err gp_plugin_set_devices(struct gp_plugin *p, const struct gp_node_inventory *inv,
                                  struct gp_diag *diag);

void gp_plugin_get_stats(struct gp_plugin *p, struct gp_plugin_stats *st);
/* Each resource's devices and how many are healthy, for /metrics. */
struct gp_plugin_counts {
    const char *name;
    size_t devices, healthy;
};
size_t gp_plugin_counts(struct gp_plugin *p, struct gp_plugin_counts *out, size_t max);

/* The resources advertised (names), for logs. */
size_t gp_plugin_resources(struct gp_plugin *p, const char **names, size_t max);

#endif
