/* jsonout.h - the double's JSON text (jsonout.c): json_dumps(v,
 * JSON_COMPACT)'s bytes, made without its per-call loop check. */
#ifndef GP_APIDOUBLE_JSONOUT_H
#define GP_APIDOUBLE_JSONOUT_H

#include <stddef.h>

#include <jansson.h>

/* v as compact JSON (malloc'd; NULL when out of memory), its length in
 * *len when len is not NULL. */
char *json_text(json_t *v, size_t *len);

#endif
