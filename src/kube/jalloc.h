/* jalloc.h - jansson's small blocks from size-class slabs with a cache per
 * thread, for the watch's trees: the informers' threads build a tree for
 * every watch event and the scheduling thread frees the old version, so
 * under glibc's malloc the builder's tcache is always empty and the
 * freer's always full (every call reaches _int_malloc / _int_free, 28 %
 * of the scheduler's instructions, and the non-main arenas grow and shrink
 * with mprotect). Here a block freed on any thread goes to that thread's
 * cache; past two batches a batch of JA_BATCH goes to the class's depot,
 * where a thread whose cache is empty takes it back (tcmalloc's transfer
 * cache: https://google.github.io/tcmalloc/design.html). */
#ifndef GP_KUBE_JALLOC_H
#define GP_KUBE_JALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* Sets jansson's allocation functions (json_set_alloc_funcs) once for the
 * process; true when they are set. Safe at any time: a block jansson took
 * from malloc before (or on a thread that has not turned the slabs on) is
 * given back to free. Not set under AddressSanitizer (its leak check sees
 * malloc's blocks only), nor when the address space cannot be reserved. */
bool gp_kube_jalloc_install(void);

/* The calling thread's jansson blocks of up to 512 bytes come from the
 * slabs (on) or from malloc (off, every thread's start). A thread that
 * turns it on must not free() what jansson hands over to be freed by the
 * caller (json_dumps' text): that text may be a slab's block. Without
 * gp_kube_jalloc_install nothing changes. */
void gp_kube_jalloc_thread(bool on);

struct gp_kube_jalloc_stats {
    size_t slab_bytes;   /* read-write slab memory so far (never given back) */
    size_t depot_blocks; /* blocks waiting in the depots */
};
void gp_kube_jalloc_stats(struct gp_kube_jalloc_stats *st);

#endif
