/* events.c - the Event sender (events.h): a FIFO of at most cap Events
 * (path and body text), one thread that sends them in turn on its own
 * client, counters for what was sent, refused and dropped. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/events.h"

struct ev_item {
    struct ev_item *next;
    char *body;
    char path[]; /* NUL-terminated */
};

struct gp_kube_events {
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    struct ev_item *head, *tail;
    size_t n, cap;
    bool busy;      /* an Event is being sent */
    bool stop;      /* stopping: no more posts */
    bool joined;    /* the thread is gone */
    double stop_at; /* stopping: what is still queued then is dropped */
    struct gp_kube_events_stats st;
    struct gp_kube_client *c;
    pthread_t th;
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void item_free(struct ev_item *it)
{
    free(it->body);
    free(it);
}

static void *sender_main(void *arg)
{
    struct gp_kube_events *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop)
            pthread_cond_wait(&q->work, &q->mu);
        if (!q->head || (q->stop && mono_s() >= q->stop_at))
            break;
        struct ev_item *it = q->head;
        q->head = it->next;
        if (!q->head)
            q->tail = NULL;
        q->n--;
        q->busy = true;
        pthread_mutex_unlock(&q->mu);
        struct gp_kube_response r;
        struct gp_diag d = {""};
        enum gp_err err =
            gp_kube_request(q->c, "POST", it->path, it->body, "application/json", &r, &d);
        bool ok = err == GP_OK && r.status == 201;
        if (err == GP_OK)
            gp_kube_response_free(&r);
        item_free(it);
        pthread_mutex_lock(&q->mu);
        q->busy = false;
        if (ok)
            q->st.sent++;
        else
            q->st.failed++;
        if (!q->head)
            pthread_cond_broadcast(&q->idle);
    }
    /* stopped: what is left is dropped */
    for (struct ev_item *it = q->head, *next; it; it = next) {
        next = it->next;
        item_free(it);
        q->st.dropped++;
    }
    q->head = q->tail = NULL;
    q->n = 0;
    pthread_cond_broadcast(&q->idle);
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

enum gp_err gp_kube_events_start(struct gp_kube_client *c, size_t cap, struct gp_kube_events **out,
                                 struct gp_diag *d)
{
    *out = NULL;
    struct gp_kube_events *q = calloc(1, sizeof *q);
    if (!q)
        return gp_diag_set(d, GP_ENOMEM, "out of memory (the Event sender)");
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->idle, NULL);
    q->cap = cap ? cap : GP_KUBE_EVENTS_CAP;
    q->c = c;
    if (pthread_create(&q->th, NULL, sender_main, q) != 0) {
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->work);
        pthread_cond_destroy(&q->idle);
        free(q);
        return gp_diag_set(d, GP_ENOMEM, "cannot start the Event sender's thread");
    }
    *out = q;
    return GP_OK;
}

bool gp_kube_events_post(struct gp_kube_events *q, const char *path, char *body)
{
    size_t pl = strlen(path) + 1;
    struct ev_item *it = body ? malloc(sizeof *it + pl) : NULL;
    pthread_mutex_lock(&q->mu);
    bool take = it && !q->stop && q->n < q->cap;
    if (take) {
        it->next = NULL;
        it->body = body;
        memcpy(it->path, path, pl);
        if (q->tail)
            q->tail->next = it;
        else
            q->head = it;
        q->tail = it;
        q->n++;
        q->st.queued++;
        pthread_cond_signal(&q->work);
    } else {
        q->st.dropped++;
    }
    pthread_mutex_unlock(&q->mu);
    if (!take) {
        free(it);
        free(body);
    }
    return take;
}

bool gp_kube_events_flush(struct gp_kube_events *q, double wait_s)
{
    double end = mono_s() + wait_s;
    pthread_mutex_lock(&q->mu);
    while ((q->head || q->busy) && mono_s() < end) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts); /* the condition's clock */
        ts.tv_nsec += 20 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&q->idle, &q->mu, &ts);
    }
    bool done = !q->head && !q->busy;
    pthread_mutex_unlock(&q->mu);
    return done;
}

struct gp_kube_events_stats gp_kube_events_stats(struct gp_kube_events *q)
{
    pthread_mutex_lock(&q->mu);
    struct gp_kube_events_stats st = q->st;
    pthread_mutex_unlock(&q->mu);
    return st;
}

void gp_kube_events_stop(struct gp_kube_events *q, double drain_s)
{
    if (!q || q->joined)
        return;
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    q->stop_at = mono_s() + drain_s;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->mu);
    /* the request in flight past the drain's end is cancelled */
    bool done = gp_kube_events_flush(q, drain_s);
    if (!done)
        gp_kube_client_cancel(q->c);
    pthread_join(q->th, NULL);
    q->joined = true;
}

void gp_kube_events_free(struct gp_kube_events *q)
{
    if (!q)
        return;
    gp_kube_events_stop(q, 0);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
    free(q);
}
