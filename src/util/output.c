/* output.c - a run's output files, all new or all old (output.h): the
 * checks before the run, the staged temporaries, the commit and its
 * rollback, the signal handler that removes a run's temporaries, and the
 * recovery of what a dead run left behind. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "util/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAG       ".gpuplane-"
#define MAX_LINKS 40
/* a longer name gets a shortened temporary; its undo record is then never
 * restored by another run (the inode check below fails), only removed */
#define MAX_BASE 200

/* ---- the temporaries a signal removes ------------------------------------ */

static char **reg; /* the paths (owned by the outputs) */
static size_t nreg, reg_cap;
static pid_t reg_pid; /* the process they belong to (a forked worker removes nothing) */
static bool reg_hooked;
static const int reg_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIGNALS (sizeof reg_signals / sizeof reg_signals[0])

static void signals_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NSIGNALS; i++)
        sigaddset(&set, reg_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void signals_restore(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

static void reg_unlink_all(void)
{
    if (getpid() != reg_pid)
        return;
    for (size_t i = 0; i < nreg; i++)
        unlink(reg[i]);
}

static void on_signal(int sig)
{
    reg_unlink_all();
    signal(sig, SIG_DFL);
    raise(sig); /* delivered, with the default action, when this returns */
}

static void reg_hook(void)
{
    if (reg_hooked)
        return;
    reg_hooked = true;
    atexit(reg_unlink_all);
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction old, sa;
        if (sigaction(reg_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue; /* ignored (nohup) or someone else's: left alone */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(reg_signals[i], &sa, NULL);
    }
}

static bool reg_add(char *path)
{
    sigset_t old;
    signals_block(&old);
    bool ok = true;
    if (nreg == reg_cap) {
        size_t cap = reg_cap ? reg_cap * 2 : 16;
        char **p = realloc(reg, cap * sizeof *p);
        if (p) {
            reg = p;
            reg_cap = cap;
        } else {
            ok = false;
        }
    }
    if (ok) {
        reg[nreg++] = path;
        reg_pid = getpid();
        reg_hook();
    }
    signals_restore(&old);
    return ok;
}

static void reg_remove(const char *path)
{
    sigset_t old;
    signals_block(&old);
    for (size_t i = 0; i < nreg; i++)
        if (reg[i] == path) {
            reg[i] = reg[--nreg];
            break;
        }
    signals_restore(&old);
}

/* ---- names ----------------------------------------------------------------- */

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* path's directory ("." when it has none) */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return str_printf(".");
    if (slash == path)
        return str_printf("/");
    return str_printf("%.*s", (int)(slash - path), path);
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    return str_printf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

/* "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: descriptor N */
static bool fd_name(const char *p, int *fd)
{
    const char *num = NULL;
    if (strcmp(p, "-") == 0 || strcmp(p, "/dev/stdout") == 0) {
        *fd = 1;
        return true;
    }
    if (strcmp(p, "/dev/stderr") == 0) {
        *fd = 2;
        return true;
    }
    if (strncmp(p, "/dev/fd/", 8) == 0)
        num = p + 8;
    else if (strncmp(p, "/proc/self/fd/", 14) == 0)
        num = p + 14;
    if (!num || !*num || strlen(num) > 6)
        return false;
    int v = 0;
    for (const char *c = num; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        v = v * 10 + (*c - '0');
    }
    *fd = v;
    return true;
}

/* ---- adding an output ------------------------------------------------------ */

void gp_output_set_init(struct gp_output_set *s)
{
    memset(s, 0, sizeof *s);
}

static void output_release(struct gp_output *o)
{
    if (o->kind == GP_OUTPUT_FILE && o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp) {
        if (!o->renamed)
            unlink(o->tmp);
        reg_remove(o->tmp);
    }
    if (o->undo)
        unlink(o->undo);
    free(o->tmp);
    free(o->undo);
    free(o->target);
    free(o->dir);
    free(o->canonical);
    o->tmp = o->undo = o->target = o->dir = o->canonical = NULL;
}

void gp_output_set_free(struct gp_output_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        output_release(&s->items[i]);
    free(s->items);
    memset(s, 0, sizeof *s);
}

static enum gp_err nomem(const struct gp_output *o, struct gp_diag *d)
{
    return gp_diag_set(d, GP_ENOMEM, "%s %s: out of memory", o->flag, o->path);
}

/* Follows path's symlinks to the file written: an existing non-link, a
 * path that does not exist yet, or a descriptor (fd_name). */
static enum gp_err resolve(struct gp_output *o, struct stat *st, bool *exists, struct gp_diag *d)
{
    char *cur = str_printf("%s", o->path);
    for (int hops = 0; cur; hops++) {
        int fd;
        if (fd_name(cur, &fd)) {
            free(cur);
            o->kind = GP_OUTPUT_FD;
            o->fd = fd;
            return GP_OK;
        }
        if (lstat(cur, st) != 0) {
            if (errno != ENOENT && errno != ENOTDIR) {
                enum gp_err err =
                    gp_diag_set(d, GP_EUSAGE, "%s %s: %s", o->flag, o->path, strerror(errno));
                free(cur);
                return err;
            }
            *exists = false;
            break;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = true;
            break;
        }
        char link[PATH_MAX];
        ssize_t k = hops < MAX_LINKS ? readlink(cur, link, sizeof link - 1) : -1;
        if (k < 0) {
            enum gp_err err =
                gp_diag_set(d, GP_EUSAGE, "%s %s: cannot follow the link: %s", o->flag, o->path,
                            hops < MAX_LINKS ? strerror(errno) : "too many levels of links");
            free(cur);
            return err;
        }
        link[k] = '\0';
        char *next;
        if (link[0] == '/') {
            next = str_printf("%s", link);
        } else {
            char *dir = dir_of(cur);
            next = dir ? join(dir, link) : NULL;
            free(dir);
        }
        free(cur);
        cur = next;
    }
    if (!cur)
        return nomem(o, d);
    o->target = cur;
    return GP_OK;
}

static enum gp_err same_as(const struct gp_output *o, const struct gp_output *p, struct gp_diag *d)
{
    return gp_diag_set(d, GP_EUSAGE, "%s %s: the same file as %s %s; give each output its own",
                       o->flag, o->path, p->flag, p->path);
}

static enum gp_err check_distinct(const struct gp_output_set *s, const struct gp_output *o,
                                  struct gp_diag *d)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct gp_output *p = &s->items[i];
        if (p->kind != o->kind)
            continue;
        if (o->kind == GP_OUTPUT_FD && p->fd == o->fd)
            return same_as(o, p, d);
        if (o->kind == GP_OUTPUT_DEVICE && p->dev == o->dev && p->ino == o->ino) {
            struct stat st;
            if (stat(o->target, &st) == 0 && S_ISCHR(st.st_mode))
                continue; /* /dev/null twice takes nothing from anyone */
            return same_as(o, p, d);
        }
        if (o->kind == GP_OUTPUT_FILE &&
            (strcmp(p->canonical, o->canonical) == 0 ||
             (o->existed && p->existed && p->dev == o->dev && p->ino == o->ino)))
            return same_as(o, p, d);
    }
    return GP_OK;
}

/* Creates the temporary ".NAME.gpuplane-PID-SEQ.tmp" beside the target. */
static enum gp_err stage_create(struct gp_output *o, mode_t mode, struct gp_diag *d)
{
    static unsigned seq;
    const char *base = base_of(o->target);
    int blen = strlen(base) > MAX_BASE ? MAX_BASE : (int)strlen(base);
    for (int tries = 0; tries < 1000; tries++) {
        char *name = str_printf("."
                                "%.*s" TAG "%ld-%u.tmp",
                                blen, base, (long)getpid(), seq++);
        char *tmp = name ? join(o->dir, name) : NULL;
        free(name);
        if (!tmp)
            return nomem(o, d);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0) {
            int e = errno;
            free(tmp);
            if (e == EEXIST)
                continue;
            return gp_diag_set(d, GP_EUSAGE, "%s %s: cannot create a file in '%s': %s", o->flag,
                               o->path, o->dir, strerror(e));
        }
        struct stat st;
        if (fstat(fd, &st) != 0 || !reg_add(tmp)) {
            close(fd);
            unlink(tmp);
            free(tmp);
            return nomem(o, d);
        }
        if (o->existed)
            fchmod(fd, mode); /* the old file's permissions, umask aside */
        o->fd = fd;
        o->tmp = tmp;
        o->tmp_ino = st.st_ino;
        return GP_OK;
    }
    return gp_diag_set(d, GP_EUSAGE, "%s %s: cannot find a free temporary name in '%s'", o->flag,
                       o->path, o->dir);
}

static enum gp_err add_file(const struct gp_output_set *s, struct gp_output *o,
                            const struct stat *st, struct gp_diag *d)
{
    const char *base = base_of(o->target);
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return gp_diag_set(d, GP_EUSAGE, "%s %s: expected a file name, not a directory", o->flag,
                           o->path);
    if (!(o->dir = dir_of(o->target)))
        return nomem(o, d);
    struct stat dst;
    if (stat(o->dir, &dst) != 0 || !S_ISDIR(dst.st_mode))
        return gp_diag_set(d, GP_EUSAGE, "%s %s: no directory '%s'", o->flag, o->path, o->dir);
    if (access(o->dir, W_OK | X_OK) != 0)
        return gp_diag_set(d, GP_EUSAGE, "%s %s: cannot write in '%s': %s", o->flag, o->path,
                           o->dir, strerror(errno));
    if (o->existed && access(o->target, W_OK) != 0)
        return gp_diag_set(d, GP_EUSAGE, "%s %s: cannot write '%s': %s", o->flag, o->path,
                           o->target, strerror(errno));
    char *real = realpath(o->dir, NULL);
    o->canonical = real ? join(real, base) : NULL;
    free(real);
    if (!o->canonical)
        return nomem(o, d);
    if (o->existed) {
        o->dev = st->st_dev;
        o->ino = st->st_ino;
    }
    enum gp_err err = check_distinct(s, o, d);
    if (err != GP_OK)
        return err;
    bool seen = false; /* one recovery pass per directory */
    for (size_t i = 0; i < s->n && !seen; i++)
        seen = s->items[i].dir && strcmp(s->items[i].dir, o->dir) == 0;
    if (!seen)
        gp_output_recover_dir(o->dir);
    return stage_create(o, o->existed ? (st->st_mode & 07777) : 0666, d);
}

enum gp_err gp_output_add(struct gp_output_set *s, const char *flag, const char *path,
                          size_t *index, struct gp_diag *d)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        struct gp_output *p = realloc(s->items, cap * sizeof *p);
        if (!p)
            return gp_diag_set(d, GP_ENOMEM, "%s: out of memory", flag);
        s->items = p;
        s->cap = cap;
    }
    struct gp_output *o = &s->items[s->n];
    memset(o, 0, sizeof *o);
    o->flag = flag;
    o->path = path ? path : "";
    o->fd = -1;
    o->kind = GP_OUTPUT_FILE;
    if (!*o->path)
        return gp_diag_set(d, GP_EUSAGE, "%s: expected a file name", flag);
    struct stat st;
    bool exists = false;
    enum gp_err err = resolve(o, &st, &exists, d);
    if (err == GP_OK && o->kind == GP_OUTPUT_FD) {
        int fl = fcntl(o->fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
            err = gp_diag_set(d, GP_EUSAGE, "%s %s: descriptor %d is not open for writing", flag,
                              o->path, o->fd);
        else
            err = check_distinct(s, o, d);
    } else if (err == GP_OK && exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        o->kind = GP_OUTPUT_DEVICE;
        o->dev = st.st_dev;
        o->ino = st.st_ino;
        if (access(o->target, W_OK) != 0)
            err = gp_diag_set(d, GP_EUSAGE, "%s %s: cannot write '%s': %s", flag, o->path,
                              o->target, strerror(errno));
        else
            err = check_distinct(s, o, d);
    } else if (err == GP_OK && exists && S_ISDIR(st.st_mode)) {
        err =
            gp_diag_set(d, GP_EUSAGE, "%s %s: is a directory; expected a file name", flag, o->path);
    } else if (err == GP_OK && exists && !S_ISREG(st.st_mode)) {
        err = gp_diag_set(d, GP_EUSAGE,
                          "%s %s: neither a regular file, a character device nor a FIFO; "
                          "refusing to write it",
                          flag, o->path);
    } else if (err == GP_OK) {
        o->existed = exists;
        err = add_file(s, o, &st, d);
    }
    if (err != GP_OK) {
        output_release(o);
        return err;
    }
    if (index)
        *index = s->n;
    s->n++;
    return GP_OK;
}

enum gp_err gp_output_check_input(const struct gp_output_set *s, const char *what, const char *path,
                                  bool (*reads)(const char *name), struct gp_diag *d)
{
    struct stat in;
    if (!path || stat(path, &in) != 0)
        return GP_OK;
    for (size_t i = 0; i < s->n; i++) {
        const struct gp_output *o = &s->items[i];
        if (S_ISDIR(in.st_mode)) {
            struct stat dst;
            if (o->kind == GP_OUTPUT_FILE && stat(o->dir, &dst) == 0 && dst.st_dev == in.st_dev &&
                dst.st_ino == in.st_ino && (!reads || reads(base_of(o->target))))
                return gp_diag_set(d, GP_EUSAGE,
                                   "%s %s: inside the input directory %s %s, whose next read "
                                   "would take it for input",
                                   o->flag, o->path, what, path);
        } else if ((o->kind == GP_OUTPUT_DEVICE || (o->kind == GP_OUTPUT_FILE && o->existed)) &&
                   o->dev == in.st_dev && o->ino == in.st_ino && !S_ISCHR(in.st_mode)) {
            return gp_diag_set(d, GP_EUSAGE, "%s %s: the same file as the input %s %s", o->flag,
                               o->path, what, path);
        }
    }
    return GP_OK;
}

bool gp_output_uses_fd(const struct gp_output_set *s, int fd)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == GP_OUTPUT_FD && s->items[i].fd == fd)
            return true;
    return false;
}

/* ---- writing ----------------------------------------------------------------- */

static bool write_full(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return false;
        }
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* A device or descriptor: written in place, a closed reader an error (not
 * SIGPIPE, which would leave the temporaries behind). */
static enum gp_err put_direct(struct gp_output *o, const char *data, size_t len, struct gp_diag *d)
{
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    fflush(NULL); /* what stdio holds goes first */
    int fd = o->kind == GP_OUTPUT_FD ? o->fd : open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    bool ok = fd >= 0 && write_full(fd, data, len);
    int e = errno;
    if (o->kind == GP_OUTPUT_DEVICE && fd >= 0 && close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    sigaction(SIGPIPE, &old, NULL);
    if (!ok)
        return gp_diag_set(d, GP_EIO, "%s %s: write failed: %s", o->flag, o->path, strerror(e));
    return GP_OK;
}

enum gp_err gp_output_put(struct gp_output_set *s, size_t i, const char *data, size_t len,
                          struct gp_diag *d)
{
    struct gp_output *o = &s->items[i];
    if (o->kind != GP_OUTPUT_FILE) {
        enum gp_err err = put_direct(o, data, len, d);
        o->written = err == GP_OK;
        return err;
    }
    if (o->fd < 0)
        return gp_diag_set(d, GP_ESTATE, "%s %s: written twice", o->flag, o->path);
    bool ok = write_full(o->fd, data, len) && fsync(o->fd) == 0;
    int e = errno;
    if (close(o->fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    o->fd = -1;
    if (!ok)
        return gp_diag_set(d, GP_EIO, "%s %s: write failed: %s", o->flag, o->path, strerror(e));
    o->written = true;
    return GP_OK;
}

/* ---- the commit ---------------------------------------------------------------- */

/* Copies the file at from into a new file at to (where a hard link cannot
 * be made). */
static bool copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return false;
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = out >= 0;
    char buf[65536];
    ssize_t k;
    while (ok && (k = read(in, buf, sizeof buf)) != 0)
        ok = (k > 0 && write_full(out, buf, (size_t)k)) || (k < 0 && errno == EINTR);
    ok = ok && fsync(out) == 0;
    if (out >= 0 && close(out) != 0)
        ok = false;
    close(in);
    if (!ok && out >= 0)
        unlink(to);
    return ok;
}

/* The undo record of a file output: "<tmp less .tmp>-INO.old", the old
 * content (a hard link, else a copy), or "-INO.new" when there was none;
 * INO is the temporary's inode, so a rollback touches the target only
 * while it is still this run's file. */
static enum gp_err make_undo(struct gp_output *o, struct gp_diag *d)
{
    size_t n = strlen(o->tmp) - 4;
    struct stat st;
    bool old = lstat(o->target, &st) == 0;
    if (old && !S_ISREG(st.st_mode))
        return gp_diag_set(d, GP_EIO, "%s %s: '%s' is no longer a regular file", o->flag, o->path,
                           o->target);
    o->undo = str_printf("%.*s-%llu.%s", (int)n, o->tmp, (unsigned long long)o->tmp_ino,
                         old ? "old" : "new");
    if (!o->undo)
        return nomem(o, d);
    bool ok;
    if (old) {
        ok = link(o->target, o->undo) == 0 || copy_file(o->target, o->undo);
    } else {
        int fd = open(o->undo, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ok = fd >= 0 && close(fd) == 0;
    }
    if (!ok) {
        int e = errno;
        free(o->undo);
        o->undo = NULL;
        return gp_diag_set(d, GP_EIO, "%s %s: cannot keep the old file to restore on failure: %s",
                           o->flag, o->path, strerror(e));
    }
    return GP_OK;
}

/* Puts back what was at o's target before its rename. */
static void undo_rename(struct gp_output *o)
{
    struct stat st;
    bool ours = lstat(o->target, &st) == 0 && st.st_ino == o->tmp_ino;
    size_t n = strlen(o->undo);
    bool old = n > 4 && strcmp(o->undo + n - 4, ".old") == 0;
    if (ours && old && rename(o->undo, o->target) == 0) {
        free(o->undo);
        o->undo = NULL;
    } else if (ours && !old) {
        unlink(o->target);
    }
}

enum gp_err gp_output_commit(struct gp_output_set *s, struct gp_diag *d)
{
    enum gp_err err = GP_OK;
    sigset_t mask;
    signals_block(&mask);
    for (size_t i = 0; i < s->n && err == GP_OK; i++) {
        struct gp_output *o = &s->items[i];
        if (o->kind == GP_OUTPUT_FILE && o->written)
            err = make_undo(o, d);
    }
    for (size_t i = 0; i < s->n && err == GP_OK; i++) {
        struct gp_output *o = &s->items[i];
        if (o->kind != GP_OUTPUT_FILE || !o->written)
            continue;
        if (rename(o->tmp, o->target) != 0)
            err = gp_diag_set(d, GP_EIO, "%s %s: cannot replace '%s': %s; no file was changed",
                              o->flag, o->path, o->target, strerror(errno));
        else
            o->renamed = true;
    }
    for (size_t i = 0; i < s->n; i++) {
        struct gp_output *o = &s->items[i];
        if (err != GP_OK && o->renamed && o->undo) {
            undo_rename(o);
            o->renamed = false;
            o->written = false;
        }
        if (o->undo) {
            unlink(o->undo);
            free(o->undo);
            o->undo = NULL;
        }
    }
    signals_restore(&mask);
    return err;
}

/* ---- recovery ------------------------------------------------------------------ */

/* Parses "<digits>" at *p, advancing; false if none. */
static bool parse_num(const char **p, unsigned long long *v)
{
    const char *c = *p;
    *v = 0;
    if (*c < '0' || *c > '9')
        return false;
    for (; *c >= '0' && *c <= '9'; c++) {
        if (*v > (ULLONG_MAX - 9) / 10)
            return false;
        *v = *v * 10 + (unsigned long long)(*c - '0');
    }
    *p = c;
    return true;
}

/* A temporary or undo record of gpuplane's: ".BASE.gpuplane-PID-SEQ.tmp",
 * ".BASE.gpuplane-PID-SEQ-INO.old" or ".new". kind: 't', 'o' or 'n'. */
static bool parse_record(const char *name, size_t *base_len, unsigned long long *pid,
                         unsigned long long *ino, char *kind)
{
    size_t n = strlen(name);
    if (name[0] != '.' || n < 5)
        return false;
    const char *ext = name + n - 4;
    *kind = strcmp(ext, ".tmp") == 0   ? 't'
            : strcmp(ext, ".old") == 0 ? 'o'
            : strcmp(ext, ".new") == 0 ? 'n'
                                       : 0;
    const char *tag = NULL;
    for (const char *p = strstr(name, TAG); p; p = strstr(p + 1, TAG))
        tag = p;
    if (!*kind || !tag || tag == name)
        return false;
    *base_len = (size_t)(tag - name - 1);
    const char *p = tag + strlen(TAG);
    unsigned long long seq;
    if (!parse_num(&p, pid) || *p++ != '-' || !parse_num(&p, &seq))
        return false;
    if (*kind != 't' && (*p++ != '-' || !parse_num(&p, ino)))
        return false;
    return p == ext;
}

static bool pid_alive(unsigned long long pid)
{
    if (pid == 0 || pid > INT32_MAX)
        return false;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

void gp_output_recover_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        size_t blen;
        unsigned long long pid, ino = 0;
        char kind;
        if (!parse_record(e->d_name, &blen, &pid, &ino, &kind))
            continue;
        if ((pid_t)pid == getpid() || pid_alive(pid))
            continue;
        char *rec = join(dir, e->d_name);
        char *base = str_printf("%.*s", (int)blen, e->d_name + 1);
        char *target = base ? join(dir, base) : NULL;
        struct stat st;
        bool ours = target && lstat(target, &st) == 0 && S_ISREG(st.st_mode) &&
                    (unsigned long long)st.st_ino == ino;
        if (rec && kind == 'o' && ours && rename(rec, target) == 0) {
            /* the interrupted commit had replaced it: the old file is back */
        } else if (rec) {
            if (kind == 'n' && ours)
                unlink(target);
            unlink(rec);
        }
        free(rec);
        free(base);
        free(target);
    }
    closedir(dp);
}
