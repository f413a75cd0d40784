/* control.c - the tests' levers (/_control/): faults on demand (a status
 * such as 429 with Retry-After or 5xx, a delay, watches cut or stalled
 * after N events), compaction, the bookmark period, and the request counters. */
#include <sys/resource.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apidouble.h"

/* --- control ----------------------------------------------------------- */

static long jint(json_t *o, const char *k, long dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

void do_control(const char *what, const char *method, json_t *body, struct answer *a)
{
    if (strcmp(what, "fault") == 0 && strcmp(method, "POST") == 0) {
        if (S.nfaults == MAX_FAULTS) {
            answer_status(a, 400, "BadRequest", NULL, NULL, "too many faults");
            return;
        }
        struct fault *f = &S.faults[S.nfaults++];
        f->status = jint(body, "status", 0);
        f->retry_after_s = jint(body, "retry_after_s", -1);
        f->delay_ms = jint(body, "delay_ms", 0);
        f->late_ms = jint(body, "late_ms", 0);
        f->drop_after = jint(body, "drop_after", -1);
        f->stall_after = jint(body, "stall_after", -1);
        f->count = jint(body, "count", 1);
        const char *m = json_string_value(json_object_get(body, "match"));
        snprintf(f->match, sizeof f->match, "%s", m ? m : "");
    } else if (strcmp(what, "clear") == 0) {
        S.nfaults = 0;
    } else if (strcmp(what, "compact") == 0) {
        S.compacted = S.rv;
    } else if (strcmp(what, "grace_ms") == 0) {
        S.grace_ms = jint(body, "ms", S.grace_ms);
    } else if (strcmp(what, "finish_deletions") == 0) {
        finish_deletions(true);
    } else if (strcmp(what, "auto_allocate") == 0) {
        autoalloc_set(jint(body, "ms", -1));
    } else if (strcmp(what, "provisioner") == 0) {
        provision_set(jint(body, "ms", -1));
    } else if (strcmp(what, "bookmark_ms") == 0) {
        S.bookmark_ms = jint(body, "ms", S.bookmark_ms);
    } else if (strcmp(what, "requests") == 0) {
        answer_json(a, 200, log_json());
        return;
    } else if (strcmp(what, "stats") != 0) {
        answer_status(a, 404, "NotFound", NULL, NULL, "no control %s", what);
        return;
    }
    struct rusage ru; /* the double's own CPU time, so that a benchmark can tell it apart */
    getrusage(RUSAGE_SELF, &ru);
    double cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    answer_json(a, 200,
                json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f}", "requests", (int)S.requests,
                          "watches", (int)S.watches, "bindings", (int)S.bindings, "resourceVersion",
                          (int)S.rv, "compacted", (int)S.compacted, "writes", (int)S.writes,
                          "schema_errors", (int)S.schema_errors, "cpu_s", cpu_s));
}

/* The fault for this request, if any (its count is taken). */
struct fault take_fault(const char *url, bool watch)
{
    struct fault none = {.drop_after = -1, .stall_after = -1};
    for (size_t i = 0; i < S.nfaults; i++) {
        struct fault *f = &S.faults[i];
        if (f->count <= 0 || (f->match[0] && !strstr(url, f->match)))
            continue;
        if ((f->drop_after >= 0 || f->stall_after >= 0) && !watch)
            continue;
        f->count--;
        return *f;
    }
    return none;
}
