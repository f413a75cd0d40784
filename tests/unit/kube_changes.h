/* kube_changes.h - for the informer tests: the changes an informer
 * delivers, logged as "TYPE NAME" lines and taken whole for comparison,
 * and a plain pod made in the API double. Included after kube_double.h by
 * one test file each (static functions). */
#ifndef GP_TEST_KUBE_CHANGES_H
#define GP_TEST_KUBE_CHANGES_H

#include <stdio.h>
#include <string.h>

#include "kube/watch.h"
#include "kube_double.h"

struct kc_log {
    char text[8192];
    size_t len;
};

/* One change appended ("ADDED p1\n"); ADDED exactly when there is no old one. */
__attribute__((unused)) static void kc_add(struct kc_log *l, enum gp_kube_event_type type,
                                           const json_t *obj, const json_t *old)
{
    const char *name = gp_kube_meta(obj, "name");
    assert_true((type == GP_KUBE_ADDED) == (old == NULL));
    int n = snprintf(l->text + l->len, sizeof l->text - l->len, "%s %s\n",
                     gp_kube_event_type_name(type), name ? name : "?");
    assert_true(n > 0 && (size_t)n < sizeof l->text - l->len);
    l->len += (size_t)n;
}

/* The log so far (a static copy), emptied. */
__attribute__((unused)) static const char *kc_take(struct kc_log *l)
{
    static char out[sizeof l->text];
    memcpy(out, l->text, l->len + 1);
    l->len = 0;
    l->text[0] = '\0';
    return out;
}

/* A pod of one container in namespace default. */
__attribute__((unused)) static void kc_pod(struct gp_kube_client *c, const char *name)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"x\"}]}}",
             name);
    kd_call(c, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

#endif
