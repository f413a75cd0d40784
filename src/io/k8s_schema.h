/* k8s_schema.h - manifests checked as the API server checks them with
 * fieldValidation=Strict (kubectl's default): the fields Kubernetes
 * defines for every kind the manifest reader accepts (a tree compiled from
 * data/k8s-fields.txt, generated from the Kubernetes OpenAPI and the
 * PodGroup CRDs), what gpuplane does with each field (the model table,
 * k8s_model.c: modelled, inert or warned about), and the walk that checks
 * one object against them before the reader reads it.
 *
 * Internal to src/io. Errors are one line, "FILE:LINE:COL: PATH: unknown
 * field; did you mean "resources"?"; warnings go to the workload
 * (gp_workload.warnings), one per model row, for the command to print. */
#ifndef GP_IO_K8S_SCHEMA_H
#define GP_IO_K8S_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/workload.h"
#include "io/yaml_walk.h"

/* --- the field tree (k8s_fields.c, generated at build time) ------------ */

enum gp_k8s_kind {
    GP_K8S_SCALAR,  /* a string, number, boolean, quantity or time */
    GP_K8S_SCALARS, /* a list of scalars */
    GP_K8S_OBJECT,  /* a mapping with the fields of `type` */
    GP_K8S_LIST,    /* a list of `type` objects */
    GP_K8S_MAP,     /* a mapping of free-form keys to scalars (labels, requests) */
    GP_K8S_MAPOF,   /* a mapping of free-form keys to `type` objects */
    GP_K8S_ANY,     /* not checked (free-form, or checked on its own: List items) */
};

struct gp_k8s_field {
    const char *name; /* first: gp_strdist_nearest reads it */
    enum gp_k8s_kind kind;
    unsigned type; /* OBJECT, LIST, MAPOF: index in gp_k8s_types */
};

/* A type's fields are gp_k8s_fields[first .. first + count), sorted by name. */
struct gp_k8s_type {
    const char *name; /* "PodSpec", "x-k8s.PodGroup.spec", ... */
    unsigned first, count;
};

/* The root type of each kind and apiVersion the reader accepts. */
struct gp_k8s_root {
    const char *kind, *api_version;
    unsigned type;
};

extern const struct gp_k8s_field gp_k8s_fields[];
extern const struct gp_k8s_type gp_k8s_types[]; /* sorted by name */
extern const struct gp_k8s_root gp_k8s_roots[];
extern const size_t gp_k8s_ntypes, gp_k8s_nroots;

/* The type named `name`, or -1. */
int gp_k8s_type_find(const char *name);
/* The field `name` of type t, or NULL. */
const struct gp_k8s_field *gp_k8s_field_find(unsigned t, const char *name);

/* --- the model table (k8s_model.c) ------------------------------------- */

/* What gpuplane does with a field Kubernetes defines. */
enum gp_k8s_class {
    GP_K8S_MODELLED, /* read by gpuplane; its fields are classified in turn */
    GP_K8S_INERT,    /* does not change where or when pods run: silent */
    GP_K8S_WARN,     /* changes scheduling and is not simulated: one warning */
};

/* A check beyond the field tree, on a modelled map's keys. */
enum gp_k8s_check {
    GP_K8S_CHECK_NONE,
    GP_K8S_CHECK_ANNOTATIONS, /* gpuplane's annotation keys and domains */
    GP_K8S_CHECK_LABELS,      /* gpuplane's label keys and domains */
    GP_K8S_CHECK_SELECTOR,    /* node label keys: gpuplane's domains spelt right */
    GP_K8S_CHECK_RESOURCES,   /* resource names Kubernetes or gpuplane knows */
};

/* One row: a field of a type (a type of k8s-fields.txt), or of the
 * pseudo-type "resources" (resource names that are not simulated). */
struct gp_k8s_model {
    const char *type, *field;
    enum gp_k8s_class cls;
    enum gp_k8s_check check;
    const char *assumes; /* GP_K8S_WARN: what the simulation assumes instead */
};

/* Sorted by type, then field (bytewise). */
extern const struct gp_k8s_model gp_k8s_model[];
extern const size_t gp_k8s_nmodel;

/* The row of (type, field), or NULL. */
const struct gp_k8s_model *gp_k8s_model_find(const char *type, const char *field);
/* The rows of one type: gp_k8s_model[*first .. *first + *count). */
void gp_k8s_model_rows(const char *type, size_t *first, size_t *count);
/* The row of `field` among the rows [first, first + count), or NULL. */
const struct gp_k8s_model *gp_k8s_model_field(size_t first, size_t count, const char *field);

/* Where a gpuplane key may be written. */
enum gp_k8s_place {
    GP_K8S_POD_ANNOTATION = 1,      /* a Pod's, Job's or Deployment's, or their template's */
    GP_K8S_POD_LABEL = 2,           /* the same objects' labels */
    GP_K8S_PODGROUP_ANNOTATION = 4, /* a PodGroup's (both CRDs) */
};

struct gp_k8s_key {
    const char *key; /* first: gp_strdist_nearest reads it */
    unsigned places; /* enum gp_k8s_place bits */
};

/* Every gpuplane.io/ and sim.gpuplane.io/ key the reader knows. */
extern const struct gp_k8s_key gp_k8s_keys[];
extern const size_t gp_k8s_nkeys;

/* --- the walk ------------------------------------------------------------ */

/* Checks object n (a mapping whose kind and apiVersion the reader
 * accepts; anything else is left to the reader) against its kind's field
 * tree: an unknown field, a misspelt gpuplane annotation or label (or its
 * domain), an unknown resource name, or a second object of the same kind,
 * namespace and name (in this or an earlier file) is an error; a field
 * gpuplane does not simulate adds a warning to w, once per model row.
 * y's path is restored on return. */
enum gp_err gp_k8s_validate(struct gp_yaml *y, struct fy_node *n, struct gp_workload *w);

/* What gp_k8s_validate added to w, to take back when a file fails. */
struct gp_k8s_mark {
    size_t nobjects, nwarnings;
    uint64_t warned[GP_WORKLOAD_WARN_WORDS];
};

struct gp_k8s_mark gp_k8s_mark(const struct gp_workload *w);
void gp_k8s_restore(struct gp_workload *w, const struct gp_k8s_mark *m);

#endif
