/* jload.h - JSON text read into a jansson tree without jansson's parser
 * where that is safe: the API server's objects (ASCII strings with plain
 * escapes, integers, objects and arrays) are read by a scanner of our own
 * that builds the same tree jansson would build, about a fifth of
 * jansson's instructions (its parser reads through a stream a byte at a
 * time); anything else is left to jansson, which gives the verdict and the
 * error message. */
#ifndef GP_KUBE_JLOAD_H
#define GP_KUBE_JLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The bytes of x (eight of a text, loaded little-endian: the first byte
 * the lowest) that are a quote, a backslash, a control character or over
 * 0x7f, each such byte's high bit set (the bytes a JSON string's reader
 * must look at; the rest it passes eight at a time). Exact in its lowest
 * bit set: each test can only be wrong in a byte above one that truly is
 * such a byte (a borrow), so the first such byte of the eight is the
 * lowest bit's, and none is missed. gp_kube_json_special8: whether any. */
static inline uint64_t gp_kube_json_special_mask8(uint64_t x)
{
    const uint64_t lo = UINT64_C(0x0101010101010101), hi = UINT64_C(0x8080808080808080);
    uint64_t quote = x ^ (lo * '"'), bslash = x ^ (lo * '\\');
    uint64_t m = ((quote - lo) & ~quote) | ((bslash - lo) & ~bslash) | ((x - lo * 0x20) & ~x) | x;
    return m & hi;
}

static inline bool gp_kube_json_special8(uint64_t x)
{
    return gp_kube_json_special_mask8(x) != 0;
}

/* The document in text[0, len), an object or an array, as a new reference:
 * the tree json_loadb(text, len, flags) would give (members in the text's
 * order), or NULL when the scanner cannot say. It cannot say for text
 * outside its subset: a string (a key too) with a byte >= 0x80 or a \u
 * escape; a number with a fraction, an exponent or more than 18 digits; a
 * duplicate key (keys compared with their escapes undone, as jansson's);
 * nesting deeper than 64; and for every text jansson refuses. So a tree it gives is always
 * jansson's tree, and NULL means: ask jansson. */
json_t *gp_kube_jload_lean(const char *text, size_t len);

/* gp_kube_jload_lean, then json_loadb(text, len, flags, err) when it cannot
 * say: the same answer as json_loadb, err set only on that path (NULL
 * allowed). flags: json_loadb's (JSON_REJECT_DUPLICATES, ...). */
json_t *gp_kube_jload(const char *text, size_t len, size_t flags, json_error_t *err);

/* Members left out of a document: a tree of member names from the root
 * (the root's own key unused), "[]" for each element of an array; a node
 * without kids (nkids 0) is a member left out with its value. At most 64
 * kids a node; of kids of one name the first counts. Static tables,
 * borrowed: a node's kids are looked up through a table the reader keeps
 * per thread, known by the node's address, its kids' and their keys'
 * addresses, so a key's text must not change at its address (string
 * literals, or text written once) and a node not while a document is read
 * with it. */
struct gp_kube_jskip {
    const char *key;
    const struct gp_kube_jskip *kids;
    size_t nkids;
};

/* gp_kube_jload, the members sk names left out (sk NULL: none): the tree
 * json_loadb would give with those members deleted, or its NULL and err.
 * A member left out is read as it would be (its verdict on the text is
 * jansson's) but not built: what a caller never reads costs no tree. */
json_t *gp_kube_jload_skip(const char *text, size_t len, size_t flags, json_error_t *err,
                           const struct gp_kube_jskip *sk);

/* SipHash-2-4 of data[0, len) under the 16-byte key (Aumasson and
 * Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed hash whose
 * collisions cannot be made without the key. */
uint64_t gp_kube_siphash(const uint8_t key[16], const void *data, size_t len);

/* One object or array of a version of an object and its text's hash: the
 * text it was read from, its length and SipHash-1-3 (gp_kube_siphash's
 * function with one round a word and three at the end) under a key drawn
 * once a process (getrandom). parent: the object it is a member of when that is
 * itself marked, else NULL. */
struct gp_kube_jmark {
    const json_t *v, *parent;
    uint64_t hash;
    size_t len;
};

#define GP_KUBE_JMARKS 16 /* marks a version keeps at most */

struct gp_kube_jmarks {
    struct gp_kube_jmark m[GP_KUBE_JMARKS];
    size_t n;
};

/* Members of an object taken from its previous version instead of built
 * again (gp_kube_jload_reuse): an object or array that is a member of the
 * object (depth 1, but metadata) or of such a member (depth 2) and whose
 * text is byte for byte the text its previous version was read from (the
 * same length and hash) is that version's value, with a reference, and its
 * text is only scanned for its end. The object is the root's member `at`
 * (NULL: the root); once its metadata is read, prev(metadata, ctx, &marks,
 * &nmarks) gives the previous version (borrowed) and its marks, or NULL. The tree
 * is the one gp_kube_jload_skip gives, with the same skip list at the same
 * place, as long as the previous version was read with that skip list. */
struct gp_kube_jreuse {
    const char *at;
    const json_t *(*prev)(const json_t *meta, void *ctx, const struct gp_kube_jmark **marks,
                          size_t *nmarks);
    void *ctx;
    struct gp_kube_jmarks out; /* the new version's marks (n 0 when jansson read the text) */
    size_t reused;             /* values taken from the previous version */
    /* meta_read: the scanner read the object's metadata (set before prev
     * is asked; false when jansson read the text): its name, namespace,
     * uid and resourceVersion here, what watch.h's gp_kube_meta_ids gives
     * (string members, NULL: none; pointing into the new tree) */
    const char *meta_ns, *meta_name, *meta_uid, *meta_rv;
    bool meta_read;
};

/* gp_kube_jload_skip, with members taken from the previous version as ru
 * says (ru NULL: gp_kube_jload_skip). */
json_t *gp_kube_jload_reuse(const char *text, size_t len, size_t flags, json_error_t *err,
                            const struct gp_kube_jskip *sk, struct gp_kube_jreuse *ru);

/* gp_kube_jload_reuse for a document of which only some of the root's
 * members are wanted (a watch event's type and object): the root's
 * members named in names[0, n) in vals[0, n), new references (NULL: not
 * there, left out by sk, or the root not an object), and true; false (and
 * err, as gp_kube_jload_reuse sets it) when the document is refused. The
 * answer is gp_kube_jload_reuse's, its members looked up by name; the root
 * itself is not built where the scanner reads the text and the root has
 * no member of another name. */
bool gp_kube_jload_members(const char *text, size_t len, size_t flags, json_error_t *err,
                           const struct gp_kube_jskip *sk, struct gp_kube_jreuse *ru,
                           const char *const *names, size_t n, json_t **vals);

#endif
