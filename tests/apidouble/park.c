/* park.c - connections parked while they wait (libmicrohttpd's
 * MHD_suspend_connection, so that no thread of the server's epoll pool
 * blocks): a watch with nothing to send until a write to its resource or
 * its time (the end of its batching window, its next bookmark, its
 * timeoutSeconds), and a request under a delay or late-answer fault until
 * its time. record() resumes the watches of its resource, the reaper those
 * whose time has come (park_run_due). Everything here runs with S.mu held.
 *
 * libmicrohttpd's rules (microhttpd.h and its manual's "Flow control"
 * chapter, 0.9.75 as Debian bookworm ships it): a connection is suspended
 * only from its access handler or content reader (a content reader that
 * suspends returns 0: "no data yet"), may be resumed from any thread, and
 * resuming one that is not suspended is undefined: p->on says which is
 * which, and both calls happen under S.mu, so a resume never comes before
 * its suspend. MHD_stop_daemon must not find a suspended connection
 * (park_wake_all, once S.stopping is set; nothing parks after that). */
#include <math.h>
#include <string.h>

#include "apidouble.h"

static struct parked *head; /* every parked connection */

static void unlink_parked(struct parked *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        head = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->prev = p->next = NULL;
    p->on = false;
}

bool park(struct parked *p, struct MHD_Connection *c, const char *res, double due_s)
{
    if (S.stopping || p->on)
        return false;
    p->c = c;
    p->res = res;
    p->due_s = due_s;
    p->on = true;
    p->prev = NULL;
    p->next = head;
    if (head)
        head->prev = p;
    head = p;
    MHD_suspend_connection(c);
    /* the reaper is woken only when it would be more than a batching
     * window late: a watch parks for its window after every chunk, and a
     * wake-up each time (a signal, the reaper's wake-up, the lock taken
     * from under the pool thread: four futex calls) cost more than the
     * poll of a thread per connection did */
    if (due_s > 0 && due_s + (double)S.watch_batch_ms / 1000 < S.reaper_until_s)
        pthread_cond_signal(&S.cv);
    return true;
}

void park_wake(struct parked *p)
{
    if (!p->on)
        return;
    unlink_parked(p);
    MHD_resume_connection(p->c);
}

void park_drop(struct parked *p)
{
    if (p->on)
        unlink_parked(p);
}

void park_wake_resource(const char *res)
{
    for (struct parked *p = head, *next; p; p = next) {
        next = p->next;
        if (p->res && strcmp(p->res, res) == 0)
            park_wake(p);
    }
}

double park_run_due(double now_s)
{
    double first = INFINITY;
    for (struct parked *p = head, *next; p; p = next) {
        next = p->next;
        if (p->due_s <= 0)
            continue;
        if (p->due_s <= now_s)
            park_wake(p);
        else if (p->due_s < first)
            first = p->due_s;
    }
    return first;
}

void park_wake_all(void)
{
    while (head)
        park_wake(head);
}
