/* jsonout.h - the double's JSON text (jsonout.c): json_dumps(v,
 * JSON_COMPACT)'s bytes, made without its per-call loop check. */
#ifndef GP_APIDOUBLE_JSONOUT_H
#define GP_APIDOUBLE_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A JSON text being written by hand (jt_*): zero it to start; jt_end
 * gives the text, which the caller frees. */
struct jtext {
    char *b;
    size_t len, cap;
    bool failed; /* out of memory: jt_end gives NULL */
};

/* n bytes as they are (JSON the caller vouches for). */
void jt_raw(struct jtext *t, const char *s, size_t n);
/* s quoted and escaped as json_text escapes a string; a byte that begins
 * no valid UTF-8 sequence written as U+FFFD. */
void jt_string(struct jtext *t, const char *s);
void jt_int(struct jtext *t, long long v);
/* The text, NUL-terminated (malloc'd; NULL when out of memory), its length
 * in *len when len is not NULL. */
char *jt_end(struct jtext *t, size_t *len);

/* A container of a version (depth 1 to SPAN_DEPTH below its root) and
 * where its text lies in the version's text. */
#define SPAN_DEPTH 3
#define SPAN_MAX   64
struct span {
    const json_t *v;
    uint32_t off, len;
};

/* A version's compact JSON text (json_text's bytes) with the spans of its
 * containers, in preorder. A version shares what a write leaves alone with
 * the one before (copied on write; a stored version is never modified):
 * a container the next version or a list item shares is copied from this
 * text rather than written again. The text holds a reference to the
 * version, so a container a span names stays alive (its address is never
 * another's) and unchanged. Counted references; not thread-safe (the
 * double's one mutex). */
struct text {
    unsigned refs;
    json_t *root;
    char *b; /* NUL-terminated */
    size_t len;
    struct span *spans;
    size_t nspans;
};

/* v's text (NULL when out of memory); what v shares with prev's version
 * (NULL: nothing) copied from prev's text. One reference, the caller's. */
struct text *text_make(json_t *v, const struct text *prev);
struct text *text_ref(struct text *t); /* t (NULL allowed), one reference more */
void text_unref(struct text *t);       /* NULL allowed; freed with its last reference */

/* v written into t as json_text writes it, what it shares with prev's
 * version copied from prev's text (prev NULL: nothing). */
void jt_value(struct jtext *t, json_t *v, const struct text *prev);
/* The object obj's opening brace and its members but those named in skip
 * (NULL-terminated; NULL none), as jt_value writes them; the caller adds
 * members and the closing brace. Whether any member was written (the
 * next one after a comma). */
bool jt_members(struct jtext *t, json_t *obj, const struct text *prev, const char *const *skip);

/* v as compact JSON (malloc'd; NULL when out of memory), its length in
 * *len when len is not NULL. */
char *json_text(json_t *v, size_t *len);

#endif
