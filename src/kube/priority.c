/* priority.c - the PriorityClass table and a pod's priority resolved from
 * it as the Priority admission plugin would (see priority.h). */
#include "kube/priority.h"

#include <stdlib.h>
#include <string.h>

void gp_kube_priorities_init(struct gp_kube_priorities *t)
{
    memset(t, 0, sizeof *t);
}

void gp_kube_priorities_free(struct gp_kube_priorities *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].name);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static struct gp_kube_prio_class *find(const struct gp_kube_priorities *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0)
            return &t->v[i];
    return NULL;
}

bool gp_kube_priorities_change(struct gp_kube_priorities *t, enum gp_kube_event_type type,
                               const json_t *obj)
{
    const char *name = gp_kube_meta(obj, "name");
    if (!name)
        return false;
    struct gp_kube_prio_class *c = find(t, name);
    if (type == GP_KUBE_DELETED) {
        if (!c)
            return false;
        free(c->name);
        *c = t->v[--t->n];
        return true;
    }
    json_t *value = json_object_get(obj, "value");
    if (!json_is_integer(value))
        return false;
    const char *pp = json_string_value(json_object_get(obj, "preemptionPolicy"));
    struct gp_kube_prio_class now = {NULL, (int32_t)json_integer_value(value),
                                     pp && strcmp(pp, "Never") == 0,
                                     json_is_true(json_object_get(obj, "globalDefault"))};
    if (c) {
        bool same = c->value == now.value && c->preempt_never == now.preempt_never &&
                    c->global_default == now.global_default;
        now.name = c->name;
        *c = now;
        return !same;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        struct gp_kube_prio_class *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return false;
        t->v = v;
        t->cap = cap;
    }
    if (!(now.name = strdup(name)))
        return false;
    t->v[t->n++] = now;
    return true;
}

bool gp_kube_priorities_resolve(const struct gp_kube_priorities *t, const json_t *pod,
                                int32_t *priority, bool *preempt_never)
{
    json_t *spec = json_object_get(pod, "spec");
    if (json_is_integer(json_object_get(spec, "priority")))
        return false; /* filled by the API: the pod's */
    const char *want = json_string_value(json_object_get(spec, "priorityClassName"));
    const struct gp_kube_prio_class *c = NULL;
    if (want && want[0]) {
        c = find(t, want);
    } else {
        for (size_t i = 0; i < t->n; i++)
            if (t->v[i].global_default && (!c || t->v[i].value < c->value))
                c = &t->v[i];
    }
    const char *own = json_string_value(json_object_get(spec, "preemptionPolicy"));
    *priority = c ? c->value : 0;
    *preempt_never = own ? strcmp(own, "Never") == 0 : (c && c->preempt_never);
    return true;
}
