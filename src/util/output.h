/* output.h - the output files of one run, written all new or all old.
 *
 * Each output is checked when it is added, before the run: "-" (and
 * /dev/stdout, /dev/stderr, /dev/fd/N) is written to that descriptor; a
 * character device or a FIFO (/dev/null, a named pipe) is opened and
 * written directly; anything else is a regular file, reached through any
 * symlinks (the link is kept and its target replaced). A file is staged in
 * a temporary beside its target, created at once (that is the check that
 * the directory is writable), named ".NAME.gpuplane-PID-SEQ.tmp" so two
 * runs never share one; SIGINT, SIGTERM and SIGHUP remove a run's
 * temporaries, and the next run removes those of a dead process. The
 * commit renames every staged file into place with the signals blocked;
 * if a rename fails the files already renamed get their old content back
 * (from a hard link ".NAME.gpuplane-PID-SEQ-INO.old", or removed when they
 * did not exist, marked ".NAME.gpuplane-PID-SEQ-INO.new"), and a run
 * killed during the commit is rolled back by the next run from the same
 * records. Two outputs naming one file, or an output naming an input, are
 * refused. */
#ifndef GP_UTIL_OUTPUT_H
#define GP_UTIL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/err.h"

enum gp_output_kind {
    GP_OUTPUT_FILE,   /* a regular file (or a new one), replaced by rename */
    GP_OUTPUT_DEVICE, /* a character device or a FIFO, written in place */
    GP_OUTPUT_FD,     /* an open descriptor: "-", /dev/stdout, /dev/fd/N */
};

struct gp_output {
    const char *flag; /* "--json", in messages (borrowed) */
    const char *path; /* as given (borrowed) */
    enum gp_output_kind kind;
    int fd;          /* FD: the descriptor; FILE: the staged temporary while open; else -1 */
    char *target;    /* FILE, DEVICE: the path written, symlinks followed */
    char *dir;       /* FILE: the target's directory */
    char *canonical; /* FILE: realpath of the directory + "/" + name */
    char *tmp;       /* FILE: the staged temporary */
    char *undo;      /* FILE, during the commit: the undo record; NULL = none */
    bool existed;    /* FILE: the target existed before the run */
    bool written;    /* put succeeded */
    bool renamed;    /* FILE: the temporary replaced the target */
    dev_t dev;       /* the existing target's identity (FILE, DEVICE) */
    ino_t ino;
    ino_t tmp_ino; /* FILE: the temporary's inode (the new target's after rename) */
};

struct gp_output_set {
    struct gp_output *items;
    size_t n, cap;
};

void gp_output_set_init(struct gp_output_set *s);
/* Removes every temporary not committed and frees the set. */
void gp_output_set_free(struct gp_output_set *s);

/* Checks path (named by flag in messages) and adds it; a file's temporary
 * is created now. Errors (GP_EUSAGE): an empty path, a missing or
 * unwritable directory, a directory or block device as the target, a
 * descriptor that is not open for writing, the same file as an earlier
 * output. *index (if not NULL) gets the output's index. */
enum gp_err gp_output_add(struct gp_output_set *s, const char *flag, const char *path,
                          size_t *index, struct gp_diag *diag);

/* Refuses an input (what names it: "--cluster") that is one of the
 * outputs. A directory input refuses outputs directly inside it whose
 * name reads(name) accepts (NULL: every name). A missing input is not an
 * error here (its reader says so). */
enum gp_err gp_output_check_input(const struct gp_output_set *s, const char *what, const char *path,
                                  bool (*reads)(const char *name), struct gp_diag *diag);

/* Output i's content: a file is written to its temporary (and synced);
 * a device or descriptor is written now. */
enum gp_err gp_output_put(struct gp_output_set *s, size_t i, const char *data, size_t len,
                          struct gp_diag *diag);

/* Renames every written file into place, all or none (see above). */
enum gp_err gp_output_commit(struct gp_output_set *s, struct gp_diag *diag);

/* True if some output is the descriptor fd (1: standard output). */
bool gp_output_uses_fd(const struct gp_output_set *s, int fd);

/* Rolls back and removes what a dead run left in dir: its temporaries,
 * and the undo records of a commit it did not finish. Called by
 * gp_output_add for each output's directory; exposed for tests. */
void gp_output_recover_dir(const char *dir);

#endif
