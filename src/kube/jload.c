/* jload.c - the lean JSON scanner (see jload.h): a subset of JSON read
 * straight into jansson's values, everything else left to json_loadb. */
#include "kube/jload.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define JL_MAX_DEPTH 64

struct jl {
    const char *p, *end;
    char *tmp; /* a string's bytes with its escapes undone */
    size_t tmpcap;
    char *keep; /* escaped names kept while their values are read (a stack) */
    size_t nkeep, keepcap;
    int depth;
    /* gp_kube_jload_reuse (ru NULL: none): the previous version once its
     * metadata was read (prev), its marks (pm), and whether it was asked */
    struct gp_kube_jreuse *ru;
    const json_t *prev;
    const struct gp_kube_jmark *pm;
    size_t npm;
    bool asked;
    uint64_t gen; /* the parse's number on its thread (jl_kidtab) */
};

/* Where an object is read (gp_kube_jload_reuse): anywhere else; the
 * object's (first) metadata; the root whose member ru->at is the object;
 * the object; a member of it. */
enum jl_level { JL_PLAIN, JL_META, JL_DOC, JL_TARGET, JL_MEMBER };

static uint64_t jl_le64(const unsigned char *b)
{
    uint64_t x;
    memcpy(&x, b, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

static void jl_ws_run(struct jl *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

static inline void jl_ws(struct jl *s)
{
    if (s->p < s->end && (unsigned char)*s->p > ' ')
        return; /* most often: the API server writes no white space */
    jl_ws_run(s);
}

static bool jl_tmp_fit(struct jl *s, size_t n)
{
    if (n <= s->tmpcap)
        return true;
    size_t cap = s->tmpcap ? s->tmpcap : 256;
    while (cap < n)
        cap *= 2;
    char *t = realloc(s->tmp, cap);
    if (!t)
        return false;
    s->tmp = t;
    s->tmpcap = cap;
    return true;
}

/* [k, k + n) (a name undone into s->tmp) copied to the top of s->keep,
 * where the strings of its value do not overwrite it: its offset there in
 * *at (the stack may move as it grows: the name is s->keep + *at). */
static bool jl_keep(struct jl *s, const char *k, size_t n, size_t *at)
{
    if (s->nkeep + n > s->keepcap) {
        size_t cap = s->keepcap ? s->keepcap : 256;
        while (cap < s->nkeep + n)
            cap *= 2;
        char *t = realloc(s->keep, cap);
        if (!t)
            return false;
        s->keep = t;
        s->keepcap = cap;
    }
    memcpy(s->keep + s->nkeep, k, n);
    *at = s->nkeep;
    s->nkeep += n;
    return true;
}

/* The escapes undone into s->tmp from b (the string's first byte) to its
 * closing quote; false for a \u escape, a byte outside printable ASCII or
 * no closing quote. */
static bool jl_unescape(struct jl *s, const char *b, const char **out, size_t *n)
{
    size_t len = 0;
    for (const char *q = b; q < s->end; q++) {
        unsigned char c = (unsigned char)*q;
        if (c == '"') {
            *out = s->tmp;
            *n = len;
            s->p = q + 1;
            return true;
        }
        if (c < 0x20 || c >= 0x80)
            return false;
        if (!jl_tmp_fit(s, len + 1))
            return false;
        if (c == '\\') {
            if (++q >= s->end)
                return false;
            switch (*q) {
            case '"':
            case '\\':
            case '/':
                c = (unsigned char)*q;
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'n':
                c = '\n';
                break;
            case 'r':
                c = '\r';
                break;
            case 't':
                c = '\t';
                break;
            default:
                return false; /* \u (jansson's) or a bad escape (jansson's verdict) */
            }
        }
        s->tmp[len++] = (char)c;
    }
    return false;
}

/* The first byte from q on that a string's reader must look at (a quote,
 * a backslash, a control character or a byte over 0x7f), or end: sixteen
 * bytes at a time where SSE2 is (every x86-64; a signed compare with 0x20
 * takes the control characters and the bytes over 0x7f both), then eight
 * (gp_kube_json_special_mask8's lowest bit), then one. */
static inline __attribute__((always_inline)) const char *jl_plain_run(const char *q,
                                                                      const char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    for (; end - q >= 16; q += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                 _mm_cmplt_epi8(x, space));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (bits)
            return q + __builtin_ctz(bits);
    }
#endif
    for (; end - q >= 8; q += 8) {
        uint64_t m = gp_kube_json_special_mask8(jl_le64((const unsigned char *)q));
        if (m)
            return q + __builtin_ctzll(m) / 8;
    }
    while (q < end && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x80 && *q != '"' &&
           *q != '\\')
        q++;
    return q;
}

/* jl_string past its plain bytes [b, q): an escape (undone into s->tmp),
 * else a byte the scanner leaves to jansson, or the text's end. */
static __attribute__((noinline)) bool jl_string_rest(struct jl *s, const char *b, const char *q,
                                                     const char **out, size_t *n, bool *esc)
{
    if (q < s->end && *q == '\\') {
        *esc = true;
        return jl_unescape(s, b, out, n);
    }
    return false; /* a control character, a byte over 0x7f or no closing quote */
}

/* A string at s->p (its opening quote): its bytes in [*out, *out + *n),
 * pointing into the text, or into s->tmp when it had escapes (and *esc). */
static inline __attribute__((always_inline)) bool jl_string(struct jl *s, const char **out,
                                                            size_t *n, bool *esc)
{
    const char *b = ++s->p, *q = jl_plain_run(b, s->end);
    if (q < s->end && *q == '"') {
        *out = b;
        *n = (size_t)(q - b);
        *esc = false;
        s->p = q + 1;
        return true;
    }
    return jl_string_rest(s, b, q, out, n, esc);
}

/* A string at s->p read as jl_string reads it (the same verdicts), its
 * escapes only looked at, not undone: a value left out. */
static bool jl_string_skip(struct jl *s)
{
    const char *q = s->p + 1;
    for (;;) {
        q = jl_plain_run(q, s->end);
        if (q >= s->end)
            return false;
        if (*q == '"') {
            s->p = q + 1;
            return true;
        }
        if (*q != '\\' || ++q >= s->end || !strchr("\"\\/bfnrt", *q) || !*q)
            return false; /* a control character, a byte over 0x7f, \u or a bad escape */
        q++;
    }
}

/* An integer as jansson reads one (json_integer) in *out; false for a
 * fraction, an exponent, a leading zero, more than 18 digits or no digit. */
static bool jl_number_read(struct jl *s, json_int_t *out)
{
    const char *q = s->p;
    bool neg = q < s->end && *q == '-';
    if (neg)
        q++;
    if (q >= s->end || *q < '0' || *q > '9')
        return false;
    if (*q == '0' && q + 1 < s->end && q[1] >= '0' && q[1] <= '9')
        return false;
    uint64_t v = 0;
    int nd = 0;
    while (q < s->end && *q >= '0' && *q <= '9') {
        if (++nd > 18)
            return false;
        v = v * 10 + (uint64_t)(*q - '0');
        q++;
    }
    if (q < s->end && (*q == '.' || *q == 'e' || *q == 'E'))
        return false;
    s->p = q;
    *out = neg ? -(json_int_t)v : (json_int_t)v;
    return true;
}

static json_t *jl_number(struct jl *s)
{
    json_int_t v;
    return jl_number_read(s, &v) ? json_integer(v) : NULL;
}

static json_t *jl_value(struct jl *s, const struct gp_kube_jskip *sk);
static json_t *jl_object(struct jl *s, const struct gp_kube_jskip *sk, enum jl_level lvl,
                         const json_t *pp);

/* sk's kids by name: a table per skip table, kept per thread for the
 * last ones used (JL_KT_WAYS, found by the skip table's address), so a
 * member's name is looked up by a hash of it instead of against every kid.
 * A table is used only while the skip table has the same kids (the same
 * array, count and key pointers: a skip table's keys are not rewritten in
 * place, jload.h); else it is made again. A table may be taken for
 * another skip table while a member's value is read: its reader looks
 * again after each value. */
#define JL_KT_SLOTS 128 /* a power of two, over twice the 64 kids looked at */
#define JL_KT_WAYS  32  /* a power of two */

struct jl_kidtab {
    const struct gp_kube_jskip *sk, *kids;
    size_t nk;
    uint64_t gen; /* the parse that last looked at it */
    const char *keys[64];
    size_t len[64];
    uint8_t slot[JL_KT_SLOTS]; /* a kid's index + 1 by its name's hash; 0: none */
};

static _Thread_local struct jl_kidtab jl_kt[JL_KT_WAYS];
static _Thread_local uint64_t jl_gen; /* the parses begun on this thread */

static inline size_t jl_kt_hash(const char *k, size_t n)
{
    uint32_t h = (uint32_t)n * UINT32_C(0x9e3779b1);
    if (n)
        h ^= (uint32_t)(unsigned char)k[0] * UINT32_C(0x85ebca77) ^
             (uint32_t)(unsigned char)k[n - 1] * UINT32_C(0xc2b2ae3d) ^
             (uint32_t)(unsigned char)k[n / 2] * UINT32_C(0x27d4eb2f);
    return (size_t)(h ^ (h >> 15)) & (JL_KT_SLOTS - 1);
}

/* The kid of kt named [k, k + n): its index, or -1. The first of the kids
 * of one name is found first (put first on its probe path). */
static inline int jl_kt_find(const struct jl_kidtab *kt, const char *k, size_t n)
{
    for (size_t i = jl_kt_hash(k, n); kt->slot[i]; i = (i + 1) & (JL_KT_SLOTS - 1)) {
        int j = kt->slot[i] - 1;
        if (kt->len[j] == n && memcmp(kt->keys[j], k, n) == 0)
            return j;
    }
    return -1;
}

static bool jl_kt_holds(const struct jl_kidtab *kt, const struct gp_kube_jskip *sk, size_t nk)
{
    if (kt->sk != sk || kt->kids != sk->kids || kt->nk != nk)
        return false;
    for (size_t i = 0; i < nk; i++)
        if (kt->keys[i] != sk->kids[i].key)
            return false;
    return true;
}

/* sk's table (sk not NULL; only its first 64 kids, jload.h), looked at
 * once a parse (gen: the parse's number on this thread; the skip tables do
 * not change while one is read). */
static const struct jl_kidtab *jl_kidtab(const struct gp_kube_jskip *sk, uint64_t gen)
{
    size_t nk = sk->nkids < 64 ? sk->nkids : 64;
    size_t home = (size_t)(((uint64_t)(uintptr_t)sk * UINT64_C(0x9e3779b97f4a7c15)) >> 40);
    struct jl_kidtab *kt = NULL;
    for (size_t w = 0; w < 4; w++) {
        struct jl_kidtab *t = &jl_kt[(home + w) & (JL_KT_WAYS - 1)];
        if (t->sk == sk && t->gen == gen)
            return t;
        if (jl_kt_holds(t, sk, nk)) {
            t->gen = gen;
            return t;
        }
        if (!kt && !t->sk)
            kt = t;
    }
    if (!kt)
        kt = &jl_kt[home & (JL_KT_WAYS - 1)];
    kt->sk = sk;
    kt->kids = sk->kids;
    kt->nk = nk;
    kt->gen = gen;
    memset(kt->slot, 0, sizeof kt->slot);
    for (size_t i = 0; i < nk; i++) {
        kt->keys[i] = sk->kids[i].key;
        kt->len[i] = strlen(sk->kids[i].key);
        size_t at = jl_kt_hash(kt->keys[i], kt->len[i]);
        while (kt->slot[at])
            at = (at + 1) & (JL_KT_SLOTS - 1);
        kt->slot[at] = (uint8_t)(i + 1);
    }
    return kt;
}

/* The kid of kt (NULL: none) named [k, k + n); NULL: none. */
static inline const struct gp_kube_jskip *jl_kid(const struct jl_kidtab *kt, const char *k,
                                                 size_t n, size_t *at)
{
    int i = kt ? jl_kt_find(kt, k, n) : -1;
    if (i < 0)
        return NULL;
    *at = (size_t)i;
    return &kt->sk->kids[i];
}

static bool jl_word(struct jl *s, const char *w, size_t n)
{
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return false;
    s->p += n;
    return true;
}

#define JL_SKIP_KEYS 32 /* an object's keys compared for a duplicate while skipping */

static int jl_skip(struct jl *s);

/* Its keys compared undone (as jansson compares them): an escaped one kept
 * on s->keep while the object is read. */
static int jl_skip_object(struct jl *s)
{
    struct {
        const char *k; /* NULL: kept, at off */
        size_t n, off;
    } keys[JL_SKIP_KEYS];
    size_t nk = 0, base = s->nkeep;
    int r = 0;
    s->p++; /* '{' */
    jl_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 1;
    }
    for (;;) {
        const char *k;
        size_t kl;
        bool esc;
        if (s->p >= s->end || *s->p != '"' || !jl_string(s, &k, &kl, &esc))
            break;
        size_t off = 0;
        if (esc && !jl_keep(s, k, kl, &off))
            break;
        if (esc)
            k = s->keep + off;
        size_t i;
        for (i = 0; i < nk; i++)
            if (keys[i].n == kl &&
                memcmp(keys[i].k ? keys[i].k : s->keep + keys[i].off, k, kl) == 0)
                break;
        if (i < nk)
            break; /* a duplicate: jansson's verdict, as jl_object's */
        if (nk == JL_SKIP_KEYS) {
            r = -1;
            break;
        }
        keys[nk].k = esc ? NULL : k;
        keys[nk].off = off;
        keys[nk++].n = kl;
        jl_ws(s);
        if (s->p >= s->end || *s->p != ':')
            break;
        s->p++;
        jl_ws(s);
        if ((r = jl_skip(s)) != 1)
            break;
        r = 0;
        jl_ws(s);
        if (s->p >= s->end)
            break;
        if (*s->p == '}') {
            s->p++;
            r = 1;
            break;
        }
        if (*s->p != ',')
            break;
        s->p++;
        jl_ws(s);
    }
    s->nkeep = base;
    return r;
}

static int jl_skip_array(struct jl *s)
{
    s->p++; /* '[' */
    jl_ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return 1;
    }
    for (;;) {
        int r = jl_skip(s);
        if (r != 1)
            return r;
        jl_ws(s);
        if (s->p >= s->end)
            return 0;
        if (*s->p == ']') {
            s->p++;
            return 1;
        }
        if (*s->p != ',')
            return 0;
        s->p++;
        jl_ws(s);
    }
}

/* A value read as jl_value reads it (the same subset, depth and verdicts)
 * with nothing built: 1 read, 0 what jl_value refuses, -1 an object of
 * more than JL_SKIP_KEYS keys (its duplicates are not looked for here). */
static int jl_skip(struct jl *s)
{
    if (s->p >= s->end)
        return 0;
    switch (*s->p) {
    case '"':
        return jl_string_skip(s);
    case '{':
    case '[': {
        if (++s->depth > JL_MAX_DEPTH) {
            s->depth--;
            return 0;
        }
        int r = *s->p == '{' ? jl_skip_object(s) : jl_skip_array(s);
        s->depth--;
        return r;
    }
    case 't':
        return jl_word(s, "true", 4);
    case 'f':
        return jl_word(s, "false", 5);
    case 'n':
        return jl_word(s, "null", 4);
    default: {
        json_int_t v;
        return jl_number_read(s, &v);
    }
    }
}

/* A value left out (sk's leaf): read as it would be, then dropped, so the
 * text's verdict is the same; scanned without building it (jl_skip), or,
 * for an object of many keys inside, built and freed. */
static bool jl_drop(struct jl *s)
{
    const char *at = s->p;
    size_t nkeep = s->nkeep;
    int depth = s->depth, r = jl_skip(s);
    if (r >= 0)
        return r == 1;
    s->p = at;
    s->depth = depth;
    s->nkeep = nkeep;
    json_t *v = jl_value(s, NULL);
    json_decref(v);
    return v != NULL;
}

/* --- members taken from the previous version (gp_kube_jload_reuse) ---- */

#define JL_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define JL_SIPROUND                                                                                \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = JL_ROTL(v1, 13);                                                                      \
        v1 ^= v0;                                                                                  \
        v0 = JL_ROTL(v0, 32);                                                                      \
        v2 += v3;                                                                                  \
        v3 = JL_ROTL(v3, 16);                                                                      \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = JL_ROTL(v3, 21);                                                                      \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = JL_ROTL(v1, 17);                                                                      \
        v1 ^= v2;                                                                                  \
        v2 = JL_ROTL(v2, 32);                                                                      \
    } while (0)

/* SipHash-c-d: c rounds a word, d at the end. */
static inline uint64_t jl_siphash(int c, int d, const uint8_t key[16], const void *data, size_t len)
{
    const unsigned char *p = data, *end = p + (len & ~(size_t)7);
    uint64_t k0 = jl_le64(key), k1 = jl_le64(key + 8);
    uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575), v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261), v3 = k1 ^ UINT64_C(0x7465646279746573);
    for (; p < end; p += 8) {
        uint64_t m = jl_le64(p);
        v3 ^= m;
        for (int i = 0; i < c; i++)
            JL_SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = 0; i < (len & 7); i++)
        b |= (uint64_t)p[i] << (8 * i);
    v3 ^= b;
    for (int i = 0; i < c; i++)
        JL_SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < d; i++)
        JL_SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t gp_kube_siphash(const uint8_t key[16], const void *data, size_t len)
{
    return jl_siphash(2, 4, key, data, len);
}

/* The texts' hash: SipHash-1-3 (the same function, fewer rounds: what
 * Rust's HashMap hashes its keys with against chosen collisions), about
 * half SipHash-2-4's instructions. */
static uint64_t jl_text_hash(const uint8_t key[16], const char *text, size_t len)
{
    return jl_siphash(1, 3, key, text, len);
}

static uint8_t jl_key[16];
static bool jl_keyed;
static pthread_once_t jl_key_once = PTHREAD_ONCE_INIT;

static void jl_key_draw(void)
{
    jl_keyed = getrandom(jl_key, sizeof jl_key, 0) == (ssize_t)sizeof jl_key;
}

static void jl_mark(struct jl *s, const json_t *v, const json_t *parent, uint64_t h, size_t len)
{
    struct gp_kube_jmarks *o = &s->ru->out;
    if (o->n < GP_KUBE_JMARKS)
        o->m[o->n++] = (struct gp_kube_jmark){v, parent, h, len};
}

/* The member [k, k + kl) whose value (an object or an array) is at s->p:
 * the previous version's when the text here is, for that version's length,
 * the text that version was read from (a container ends at its bracket, so
 * the same bytes are the same value, ending there), else read (at
 * JL_TARGET an object is read as JL_MEMBER, so that its own members may be
 * taken); marked either way. pp: the previous version of the object it is
 * a member of (NULL: none); parent: the new one, when marked. */
static json_t *jl_member(struct jl *s, const struct gp_kube_jskip *kid, enum jl_level lvl,
                         const json_t *pp, json_t *parent, const char *k, size_t kl)
{
    const char *b = s->p;
    const json_t *pv = pp && jl_keyed ? json_object_getn(pp, k, kl) : NULL;
    uint64_t h0 = 0; /* the hash of [b, b + l0) if l0 (compared and not the same) */
    size_t l0 = 0;
    for (size_t i = 0; pv && i < s->npm; i++) {
        const struct gp_kube_jmark *m = &s->pm[i];
        if (m->v != pv)
            continue;
        /* the text that long must end in the bracket that closes it, or
         * it is not the same text: no hash needed to tell */
        if (m->len < 2 || m->len > (size_t)(s->end - b) || b[m->len - 1] != (*b == '{' ? '}' : ']'))
            break;
        h0 = jl_text_hash(jl_key, b, m->len);
        l0 = m->len;
        if (h0 != m->hash)
            break;
        s->p = b + m->len;
        s->ru->reused++;
        jl_mark(s, pv, parent, m->hash, m->len);
        for (size_t j = 0; lvl == JL_TARGET && j < s->npm; j++)
            if (s->pm[j].parent == pv) /* its own members' marks hold: it is the same tree */
                jl_mark(s, s->pm[j].v, pv, s->pm[j].hash, s->pm[j].len);
        return json_incref((json_t *)(uintptr_t)pv);
    }
    json_t *v;
    if (lvl == JL_TARGET && *b == '{') {
        if (++s->depth > JL_MAX_DEPTH)
            return NULL;
        v = jl_object(s, kid, JL_MEMBER, json_is_object(pv) ? pv : NULL);
        s->depth--;
    } else {
        v = jl_value(s, kid);
    }
    if (v && jl_keyed) {
        size_t len = (size_t)(s->p - b);
        jl_mark(s, v, lvl == JL_MEMBER ? parent : NULL,
                len == l0 ? h0 : jl_text_hash(jl_key, b, len), len);
    }
    return v;
}

/* A string member of the metadata: kept in ru if it is one of the four
 * gp_kube_meta_ids gives (watch.h; the scanner reads no key twice). */
static void jl_meta_id(struct gp_kube_jreuse *ru, const char *k, size_t kl, const char *v)
{
    const char **to = kl == 4 && memcmp(k, "name", 4) == 0                ? &ru->meta_name
                      : kl == 9 && memcmp(k, "namespace", 9) == 0         ? &ru->meta_ns
                      : kl == 3 && memcmp(k, "uid", 3) == 0               ? &ru->meta_uid
                      : kl == 15 && memcmp(k, "resourceVersion", 15) == 0 ? &ru->meta_rv
                                                                          : NULL;
    if (to)
        *to = v;
}

static json_t *jl_object(struct jl *s, const struct gp_kube_jskip *sk, enum jl_level lvl,
                         const json_t *pp)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const struct jl_kidtab *kt = sk ? jl_kidtab(sk, s->gen) : NULL;
    uint64_t dropped = 0; /* sk's leaves met in this object */
    size_t nset = 0;      /* members set in o */
    s->p++;               /* '{' */
    jl_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return o;
    }
    for (;;) {
        const char *k;
        size_t kl;
        bool esc;
        if (s->p >= s->end || *s->p != '"' || !jl_string(s, &k, &kl, &esc))
            break;
        size_t koff = 0; /* an escaped name: kept (s->tmp is the value's next) */
        if (esc && !jl_keep(s, k, kl, &koff))
            break;
        jl_ws(s);
        if (s->p >= s->end || *s->p != ':')
            break;
        s->p++;
        jl_ws(s);
        size_t at = 0;
        if (kt && kt->sk != sk) /* a value read since took its place: made again */
            kt = jl_kidtab(sk, s->gen);
        const struct gp_kube_jskip *kid = jl_kid(kt, k, kl, &at);
        if (kid && strcmp(kid->key, "[]") == 0)
            kid = NULL;           /* a member named "[]": "[]" is an array's elements */
        if (kid && !kid->nkids) { /* left out; twice: jansson's verdict */
            if (dropped & (UINT64_C(1) << at) || !jl_drop(s))
                break;
            dropped |= UINT64_C(1) << at;
            goto next;
        }
        json_t *v;
        bool meta = lvl == JL_TARGET && kl == 8 && memcmp(k, "metadata", 8) == 0;
        char c = s->p < s->end ? *s->p : '\0'; /* the value's first byte */
        if (lvl == JL_DOC && kl == strlen(s->ru->at) && memcmp(k, s->ru->at, kl) == 0 && c == '{') {
            if (++s->depth > JL_MAX_DEPTH)
                break;
            v = jl_object(s, kid, JL_TARGET, NULL);
            s->depth--;
        } else if (lvl >= JL_TARGET && !meta && (c == '{' || c == '[')) {
            v = jl_member(s, kid, lvl, lvl == JL_TARGET ? s->prev : pp, lvl == JL_MEMBER ? o : NULL,
                          k, kl);
        } else if (meta && c == '{' && !s->asked) {
            if (++s->depth > JL_MAX_DEPTH)
                break;
            v = jl_object(s, kid, JL_META, NULL);
            s->depth--;
            s->ru->meta_read = v != NULL;
        } else {
            v = jl_value(s, kid);
        }
        if (esc) { /* the kept name, where the stack is now */
            k = s->keep + koff;
            s->nkeep = koff;
        }
        if (lvl == JL_META && v && json_is_string(v))
            jl_meta_id(s->ru, k, kl, json_string_value(v));
        if (meta && v && !s->asked && s->ru->prev) {
            s->asked = true;
            s->prev = s->ru->prev(v, s->ru->ctx, &s->pm, &s->npm);
            if (!s->prev)
                s->npm = 0;
        }
        if (!v || json_object_setn_new_nocheck(o, k, kl, v) != 0 || json_object_size(o) != ++nset)
            break; /* a duplicate key: jansson's rule (last wins, or refused) */
    next:
        if (esc)
            s->nkeep = koff;
        jl_ws(s);
        if (s->p >= s->end)
            break;
        if (*s->p == '}') {
            s->p++;
            return o;
        }
        if (*s->p != ',')
            break;
        s->p++;
        jl_ws(s);
    }
    json_decref(o);
    return NULL;
}

static json_t *jl_array(struct jl *s, const struct gp_kube_jskip *sk)
{
    size_t at;
    const struct gp_kube_jskip *each = jl_kid(sk ? jl_kidtab(sk, s->gen) : NULL, "[]", 2, &at);
    json_t *a = json_array();
    if (!a)
        return NULL;
    s->p++; /* '[' */
    jl_ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return a;
    }
    for (;;) {
        if (json_array_append_new(a, jl_value(s, each)) != 0)
            break; /* NULL appended: refused, nothing kept */
        jl_ws(s);
        if (s->p >= s->end)
            break;
        if (*s->p == ']') {
            s->p++;
            return a;
        }
        if (*s->p != ',')
            break;
        s->p++;
        jl_ws(s);
    }
    json_decref(a);
    return NULL;
}

static json_t *jl_value(struct jl *s, const struct gp_kube_jskip *sk)
{
    if (s->p >= s->end)
        return NULL;
    switch (*s->p) {
    case '"': {
        const char *b;
        size_t n;
        bool esc;
        return jl_string(s, &b, &n, &esc) ? json_stringn_nocheck(b, n) : NULL;
    }
    case '{':
    case '[': {
        if (++s->depth > JL_MAX_DEPTH)
            return NULL;
        json_t *v = *s->p == '{' ? jl_object(s, sk, JL_PLAIN, NULL) : jl_array(s, sk);
        s->depth--;
        return v;
    }
    case 't':
        return jl_word(s, "true", 4) ? json_true() : NULL;
    case 'f':
        return jl_word(s, "false", 5) ? json_false() : NULL;
    case 'n':
        return jl_word(s, "null", 4) ? json_null() : NULL;
    default:
        return jl_number(s);
    }
}

static json_t *jload_lean(const char *text, size_t len, const struct gp_kube_jskip *sk,
                          struct gp_kube_jreuse *ru)
{
    struct jl s = {.p = text, .end = text + len, .ru = ru, .gen = ++jl_gen};
    jl_ws(&s);
    json_t *v = NULL;
    if (ru && s.p < s.end && *s.p == '{') {
        s.depth++;
        v = jl_object(&s, sk, ru->at ? JL_DOC : JL_TARGET, NULL);
        s.depth--;
    } else if (s.p < s.end && (*s.p == '{' || *s.p == '['))
        v = jl_value(&s, sk);
    jl_ws(&s);
    if (v && s.p != s.end) { /* text after the document: jansson's verdict */
        json_decref(v);
        v = NULL;
    }
    free(s.tmp);
    free(s.keep);
    return v;
}

/* The root object's members named in names[0, n) into vals (new
 * references), the root not built: s->p at its '{'. Read as jl_object
 * reads the root (JL_DOC where ru->at is named: the object at JL_TARGET);
 * false (vals emptied) for a member of another name or one named twice,
 * as for what jl_object refuses: the caller reads the document then. */
static bool jl_members(struct jl *s, const struct gp_kube_jskip *sk, const char *const *names,
                       size_t n, json_t **vals)
{
    uint64_t seen = 0; /* names met (n <= 64) */
    s->p++;            /* '{' */
    jl_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return true;
    }
    const struct jl_kidtab *kt = sk ? jl_kidtab(sk, s->gen) : NULL;
    for (;;) {
        const char *k;
        size_t kl, i, at = 0;
        bool esc;
        if (s->p >= s->end || *s->p != '"' || !jl_string(s, &k, &kl, &esc) || esc)
            break;
        for (i = 0; i < n && (strlen(names[i]) != kl || memcmp(names[i], k, kl) != 0); i++)
            ;
        if (i == n || seen & (UINT64_C(1) << i))
            break;
        seen |= UINT64_C(1) << i;
        jl_ws(s);
        if (s->p >= s->end || *s->p != ':')
            break;
        s->p++;
        jl_ws(s);
        if (kt && kt->sk != sk)
            kt = jl_kidtab(sk, s->gen);
        const struct gp_kube_jskip *kid = jl_kid(kt, k, kl, &at);
        if (kid && strcmp(kid->key, "[]") == 0)
            kid = NULL;
        if (kid && !kid->nkids) { /* left out: read, not kept */
            if (!jl_drop(s))
                break;
        } else if (s->ru && s->ru->at && strcmp(names[i], s->ru->at) == 0 && s->p < s->end &&
                   *s->p == '{') {
            if (++s->depth > JL_MAX_DEPTH)
                break;
            vals[i] = jl_object(s, kid, JL_TARGET, NULL);
            s->depth--;
            if (!vals[i])
                break;
        } else if (!(vals[i] = jl_value(s, kid))) {
            break;
        }
        for (size_t j = i + 1; j < n; j++) /* a name asked for twice */
            if (strcmp(names[j], names[i]) == 0)
                vals[j] = json_incref(vals[i]);
        jl_ws(s);
        if (s->p >= s->end)
            break;
        if (*s->p == '}') {
            s->p++;
            return true;
        }
        if (*s->p != ',')
            break;
        s->p++;
        jl_ws(s);
    }
    for (size_t i = 0; i < n; i++) {
        json_decref(vals[i]);
        vals[i] = NULL;
    }
    return false;
}

json_t *gp_kube_jload_lean(const char *text, size_t len)
{
    return jload_lean(text, len, NULL, NULL);
}

/* sk's leaves taken out of v (a tree jansson gave), as the scanner leaves
 * them out: the first of the kids of one name, of the first 64 kids. */
static void jl_prune(json_t *v, const struct gp_kube_jskip *sk)
{
    size_t nk = sk->nkids < 64 ? sk->nkids : 64;
    for (size_t i = 0; i < nk; i++) {
        const struct gp_kube_jskip *kid = &sk->kids[i];
        size_t first = 0;
        while (strcmp(sk->kids[first].key, kid->key) != 0)
            first++;
        if (first < i)
            continue; /* a name given before: that kid's */
        if (strcmp(kid->key, "[]") == 0) {
            size_t j;
            json_t *e;
            json_array_foreach(v, j, e) jl_prune(e, kid); /* none unless an array */
        } else if (!kid->nkids)
            json_object_del(v, kid->key);
        else
            jl_prune(json_object_get(v, kid->key), kid);
    }
}

/* ru as a read begins: nothing taken, marked or read of the metadata */
static void jl_reuse_start(struct gp_kube_jreuse *ru)
{
    pthread_once(&jl_key_once, jl_key_draw);
    ru->out.n = 0;
    ru->reused = 0;
    ru->meta_ns = ru->meta_name = ru->meta_uid = ru->meta_rv = NULL;
    ru->meta_read = false;
}

json_t *gp_kube_jload_skip(const char *text, size_t len, size_t flags, json_error_t *err,
                           const struct gp_kube_jskip *sk)
{
    return gp_kube_jload_reuse(text, len, flags, err, sk, NULL);
}

json_t *gp_kube_jload_reuse(const char *text, size_t len, size_t flags, json_error_t *err,
                            const struct gp_kube_jskip *sk, struct gp_kube_jreuse *ru)
{
    if (ru)
        jl_reuse_start(ru);
    json_t *v = flags & JSON_DECODE_INT_AS_REAL ? NULL : jload_lean(text, len, sk, ru);
    if (v)
        return v;
    if (ru) /* jansson reads it: nothing taken, nothing marked, no ids */
        jl_reuse_start(ru);
    v = json_loadb(text, len, flags, err);
    if (v && sk)
        jl_prune(v, sk);
    return v;
}

json_t *gp_kube_jload(const char *text, size_t len, size_t flags, json_error_t *err)
{
    /* integers read as reals are jansson's alone */
    json_t *v = flags & JSON_DECODE_INT_AS_REAL ? NULL : gp_kube_jload_lean(text, len);
    return v ? v : json_loadb(text, len, flags, err);
}

bool gp_kube_jload_members(const char *text, size_t len, size_t flags, json_error_t *err,
                           const struct gp_kube_jskip *sk, struct gp_kube_jreuse *ru,
                           const char *const *names, size_t n, json_t **vals)
{
    for (size_t i = 0; i < n; i++)
        vals[i] = NULL;
    if (ru)
        jl_reuse_start(ru);
    if (n <= 64 && !(flags & JSON_DECODE_INT_AS_REAL)) {
        struct jl s = {.p = text, .end = text + len, .ru = ru, .gen = ++jl_gen};
        jl_ws(&s);
        bool read = false;
        if (s.p < s.end && *s.p == '{') {
            s.depth++;
            read = jl_members(&s, sk, names, n, vals);
            s.depth--;
            jl_ws(&s);
            if (read && s.p != s.end) { /* text after the document: jansson's verdict */
                for (size_t i = 0; i < n; i++) {
                    json_decref(vals[i]);
                    vals[i] = NULL;
                }
                read = false;
            }
        }
        free(s.tmp);
        free(s.keep);
        if (read)
            return true;
    }
    json_t *doc = gp_kube_jload_reuse(text, len, flags, err, sk, ru);
    if (!doc)
        return false;
    for (size_t i = 0; i < n; i++)
        vals[i] = json_incref(json_object_get(doc, names[i]));
    json_decref(doc);
    return true;
}
