/* strdist.h - how far apart two names are (an edit distance), and the
 * nearest of a list of names, for "did you mean ...?" in messages. */
#ifndef GP_UTIL_STRDIST_H
#define GP_UTIL_STRDIST_H

#include <stdbool.h>
#include <stddef.h>

/* Names longer than this are compared on their first GP_STRDIST_MAX bytes. */
#define GP_STRDIST_MAX 64

/* The optimal-string-alignment distance between a and b: the number of
 * insertions, deletions, substitutions and swaps of two adjacent bytes
 * that turn one into the other ("resource" to "resources" is 1,
 * "nodeSelecter" to "nodeSelector" 1, "limtis" to "limits" 1). */
unsigned gp_strdist(const char *a, const char *b);

/* The same, or max + 1 as soon as the distance is known to exceed max
 * (cheaper for a yes-or-no "within max edits"). */
unsigned gp_strdist_max(const char *a, const char *b, unsigned max);

/* The index of the name nearest to key among n items of `stride` bytes
 * each, every item starting with its name (a const char *); ties go to
 * the first. *dist gets the distance (may be NULL). n must be > 0. */
size_t gp_strdist_nearest(const char *key, const void *items, size_t n, size_t stride,
                          unsigned *dist);

/* Whether a distance is small enough for a suggestion: one edit in a key
 * of 3 bytes or more, else at most 3 edits and one per 4 bytes ("9g.1gb"
 * is not close to "1g.6gb"). */
bool gp_strdist_close(const char *key, unsigned dist);

#endif
