/* events.h - Events sent off the decisions' path: a bounded queue and one
 * thread on a client of its own. kube-scheduler sends its Events through a
 * clientset of their own (cmd/kube-scheduler/app/options/options.go,
 * createClients: eventClient, its own token bucket of the same QPS and
 * burst) from a broadcaster that queues them (client-go
 * tools/events/event_broadcaster.go: at most maxQueuedEvents, 1000, and
 * watch.DropIfChannelFull: what comes while the queue is full is dropped).
 * So here: a decision never waits for an Event's answer, a burst of
 * Events never takes the decisions' rate, and the memory they hold is
 * bounded. The queue sends in the order Events were posted. */
#ifndef GP_KUBE_EVENTS_H
#define GP_KUBE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "util/err.h"

#define GP_KUBE_EVENTS_CAP 1000 /* client-go's maxQueuedEvents */

struct gp_kube_events;

struct gp_kube_events_stats {
    uint64_t queued;  /* posted and taken into the queue */
    uint64_t sent;    /* answered 201 */
    uint64_t failed;  /* answered otherwise, or not at all (after the client's retries) */
    uint64_t dropped; /* posted while the queue was full, or left when it stopped */
};

/* Starts the sender on c (borrowed: the caller frees it after
 * gp_kube_events_stop), its queue at most cap Events (0: the default). */
enum gp_err gp_kube_events_start(struct gp_kube_client *c, size_t cap, struct gp_kube_events **out,
                                 struct gp_diag *d);

/* Queues a POST of body (JSON text, owned by the queue from here on,
 * freed whatever happens) to path (copied). false: dropped (full, or
 * stopping). Safe from any thread. */
bool gp_kube_events_post(struct gp_kube_events *q, const char *path, char *body);

/* Waits until every Event posted so far was answered, or wait_s passed;
 * true: none left. */
bool gp_kube_events_flush(struct gp_kube_events *q, double wait_s);

struct gp_kube_events_stats gp_kube_events_stats(struct gp_kube_events *q);

/* Sends what is queued for at most drain_s more (the request in flight
 * then cancelled), drops the rest and stops the thread; q's stats stay
 * readable, and a post after it is dropped. Once only. */
void gp_kube_events_stop(struct gp_kube_events *q, double drain_s);

/* Frees q (stopped first, without a drain, if it was not; NULL: no-op). */
void gp_kube_events_free(struct gp_kube_events *q);

#endif
