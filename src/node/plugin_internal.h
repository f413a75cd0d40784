/* plugin_internal.h - what plugin.c (servers, registration, the watching
 * thread, device-set changes) and plugin_rpc.c (the DevicePlugin calls)
 * share. */
#ifndef GP_NODE_PLUGIN_INTERNAL_H
#define GP_NODE_PLUGIN_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <grpc/grpc.h>

#include "node/devices.h"
#include "node/plugin.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

struct gp_plugin;
struct call;

/* One resource's server. */
struct srv {
    struct gp_plugin *p;
    size_t ri; /* its resource in p->set */
    char path[PATH_MAX];
    grpc_server *server;
    grpc_completion_queue *cq;
    pthread_t thread;
    bool running;
    atomic_bool stopping;
    bool registered;
    double next_register_s; /* monotonic: the next try */
    /* guarded by p->mu */
    bool retiring;        /* its resource has no devices left: stopped at retire_at_s */
    double retire_at_s;   /* after its empty list was streamed (monotonic) */
    bool closing;         /* being stopped: its slot is freed next */
    unsigned long gen;    /* bumped on every change of the device list */
    struct call *streams; /* open ListAndWatch calls */
    unsigned workers;     /* Allocate threads not yet done with the queue */
};

struct gp_plugin {
    struct gp_plugin_opts o;
    char dir[PATH_MAX];
    char kubelet[PATH_MAX];
    pthread_mutex_t mu;       /* the device set, gens, stats, stream lists */
    pthread_cond_t cv;        /* workers leaving */
    pthread_mutex_t alloc_mu; /* one Allocate at a time on the node */
    struct gp_node_inventory inv;
    /* set.res[i] is srv[i]'s resource, a slot that keeps its place while
     * its server runs; a slot with name "" is free. Slots are made and
     * freed by the monitor thread only (a device-set change queues the
     * new resources in adds); their device lists change under mu. */
    struct gp_node_devset set;
    size_t n_adds; /* resources of a device-set change waiting for a server */
    struct gp_node_resource adds[GP_NODE_MAX_RESOURCES];
    struct srv srv[GP_NODE_MAX_RESOURCES];
    pthread_t monitor;
    atomic_bool quit;
    bool kubelet_seen;
    unsigned long kubelet_dev, kubelet_ino;
    struct gp_plugin_stats st;
};

double gp_plugin_now_s(void);
void gp_plugin_log(struct gp_plugin *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* plugin_rpc.c: serves s until it is asked to stop (the server thread). */
void *gp_plugin_serve(void *arg);

#endif
