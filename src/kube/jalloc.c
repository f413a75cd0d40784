/* jalloc.c - jansson's small blocks from size-class slabs with a cache per
 * thread and a depot per class between threads (see jalloc.h).
 *
 * One region of JA_REGION bytes is reserved at install (PROT_NONE, no
 * memory); slabs of JA_SLAB bytes are made read-write from it in order,
 * each for one size class (multiples of 16 up to 512 bytes), and never
 * given back. A block is the region's when its address falls inside it
 * (one comparison), and its class is its slab's (a byte a slab), so a
 * block needs no header and a pointer malloc gave is told apart: free
 * takes it. jansson calls its functions through plain pointers
 * (src/memory.c: json_set_alloc_funcs sets do_malloc and do_free;
 * jsonp_malloc(0) never calls them), so what is set is used by every
 * thread; only the threads that turn the slabs on take blocks from them. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE (mmap(2)) */
#include "kube/jalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <jansson.h>

#if defined(__SANITIZE_ADDRESS__)
#define JA_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JA_SANITIZED 1
#endif
#endif
#ifndef JA_SANITIZED
#define JA_SANITIZED 0
#endif

#define JA_GRAIN  16
#define JA_MAX    512
#define JA_NCLASS (JA_MAX / JA_GRAIN) /* class c holds blocks of c * 16 bytes, 1..32 */
#define JA_BATCH  64                  /* blocks moved between a cache and a depot at once */
#define JA_SLAB   ((size_t)256 << 10)
#define JA_REGION ((size_t)4 << 30)
#define JA_NSLABS (JA_REGION / JA_SLAB)

struct ja_block {
    struct ja_block *next;
};

struct ja_depot {
    pthread_mutex_t mu;
    struct ja_block *head; /* blocks given back by the caches */
    size_t n;
    char *bump, *end; /* the class's slab being carved */
};

struct ja_cache {
    struct ja_block *head[JA_NCLASS + 1];
    uint32_t n[JA_NCLASS + 1];
    bool on;    /* gp_kube_jalloc_thread */
    bool keyed; /* its exit gives its blocks back (ja_thread_end) */
};

static char *region; /* NULL: not installed */
static atomic_size_t region_used;
static uint8_t slab_class[JA_NSLABS];
static struct ja_depot depot[JA_NCLASS + 1];
static pthread_key_t cache_key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Thread_local struct ja_cache tc;

/* A new slab for class c (its depot's lock held): false when the region
 * is used up or cannot be made writable (malloc serves then). */
static bool slab_new(size_t c)
{
    size_t off = atomic_fetch_add(&region_used, JA_SLAB);
    if (off + JA_SLAB > JA_REGION || mprotect(region + off, JA_SLAB, PROT_READ | PROT_WRITE) != 0)
        return false;
    slab_class[off / JA_SLAB] = (uint8_t)c;
    depot[c].bump = region + off;
    depot[c].end = region + off + JA_SLAB;
    return true;
}

static void cache_keyed(void)
{
    if (!tc.keyed && pthread_setspecific(cache_key, &tc) == 0)
        tc.keyed = true;
}

/* The cache of class c empty: up to JA_BATCH blocks from the depot, or
 * carved from the class's slab. NULL: none to be had. */
static __attribute__((noinline)) struct ja_block *refill(size_t c)
{
    struct ja_depot *d = &depot[c];
    size_t size = c * JA_GRAIN, k = 0;
    struct ja_block *head = NULL;
    pthread_mutex_lock(&d->mu);
    if (d->n > 0) {
        head = d->head;
        struct ja_block *last = head;
        for (k = 1; k < JA_BATCH && k < d->n; k++)
            last = last->next;
        d->head = last->next;
        d->n -= k;
        last->next = NULL;
    } else if ((size_t)(d->end - d->bump) >= size || slab_new(c)) {
        struct ja_block **at = &head;
        for (; k < JA_BATCH && (size_t)(d->end - d->bump) >= size; k++, d->bump += size) {
            *at = (struct ja_block *)(void *)d->bump;
            at = &(*at)->next;
        }
        *at = NULL;
    }
    pthread_mutex_unlock(&d->mu);
    if (!head)
        return NULL;
    cache_keyed();
    tc.head[c] = head;
    tc.n[c] = (uint32_t)k;
    return head;
}

/* The first k blocks of the cache's class c to the depot. */
static __attribute__((noinline)) void flush(size_t c, uint32_t k)
{
    if (k == 0)
        return;
    struct ja_block *first = tc.head[c], *last = first;
    for (uint32_t i = 1; i < k; i++)
        last = last->next;
    tc.head[c] = last->next;
    tc.n[c] -= k;
    struct ja_depot *d = &depot[c];
    pthread_mutex_lock(&d->mu);
    last->next = d->head;
    d->head = first;
    d->n += k;
    pthread_mutex_unlock(&d->mu);
}

static void ja_thread_end(void *arg)
{
    (void)arg;
    for (size_t c = 1; c <= JA_NCLASS; c++)
        flush(c, tc.n[c]);
}

static void *ja_malloc(size_t size)
{
    if (!tc.on || size > JA_MAX)
        return malloc(size);
    size_t c = (size + JA_GRAIN - 1) / JA_GRAIN;
    struct ja_block *b = tc.head[c];
    if (!b && !(b = refill(c)))
        return malloc(size);
    tc.head[c] = b->next;
    tc.n[c]--;
    return b;
}

static void ja_free(void *p)
{
    uintptr_t off = (uintptr_t)p - (uintptr_t)region;
    if (off >= JA_REGION) { /* malloc's (NULL included) */
        free(p);
        return;
    }
    size_t c = slab_class[off / JA_SLAB];
    struct ja_block *b = p;
    b->next = tc.head[c];
    tc.head[c] = b;
    if (++tc.n[c] >= 2 * JA_BATCH) {
        cache_keyed();
        flush(c, JA_BATCH);
    }
}

static void ja_init(void)
{
    if (JA_SANITIZED)
        return;
    void *m = mmap(NULL, JA_REGION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return;
    if (pthread_key_create(&cache_key, ja_thread_end) != 0) {
        munmap(m, JA_REGION);
        return;
    }
    for (size_t c = 1; c <= JA_NCLASS; c++)
        pthread_mutex_init(&depot[c].mu, NULL);
    region = m;
    json_set_alloc_funcs(ja_malloc, ja_free);
}

bool gp_kube_jalloc_install(void)
{
    pthread_once(&once, ja_init);
    return region != NULL;
}

void gp_kube_jalloc_thread(bool on)
{
    tc.on = on && region != NULL;
}

void gp_kube_jalloc_stats(struct gp_kube_jalloc_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!region)
        return;
    size_t used = atomic_load(&region_used);
    st->slab_bytes = used < JA_REGION ? used : JA_REGION;
    for (size_t c = 1; c <= JA_NCLASS; c++) {
        pthread_mutex_lock(&depot[c].mu);
        st->depot_blocks += depot[c].n;
        pthread_mutex_unlock(&depot[c].mu);
    }
}
