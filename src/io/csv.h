/* csv.h - a small CSV tokenizer for the trace readers (openb, Philly, and
 * any later CSV reader): RFC 4180 records with quoted fields ("" inside a
 * quoted field is one quote, and a quoted field may span lines), LF, CRLF or
 * CR line ends, a header row mapped to column indexes by name, and line
 * numbers for every diagnostic. Departures from RFC 4180, all deliberate:
 * spaces and tabs around an unquoted field are trimmed (the Philly machine
 * list writes "a, b"), lines that are empty or blank are skipped, a UTF-8
 * byte order mark is skipped, and a NUL byte is an error.
 *
 * Usage:
 *   struct gp_csv c;
 *   gp_csv_init(&c, text, len, "pods.csv");
 *   int idx[N];
 *   err = gp_csv_header(&c, cols, N, 0, idx, diag);   // first record
 *   while ((err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
 *       err = gp_csv_int(&c, idx[0], "cpu_milli", 0, INT64_MAX, &v, diag);
 *       ...
 *   }
 *   gp_csv_free(&c);
 *
 * The text is borrowed and need not be NUL-terminated. Fields are copied,
 * unquoted and NUL-terminated, into a buffer the tokenizer owns; they are
 * valid until the next gp_csv_next. Nothing is printed; errors go to diag
 * as "NAME:LINE: what was expected". */
#ifndef GP_IO_CSV_H
#define GP_IO_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct gp_csv {
    const char *name; /* borrowed; used in diagnostics */
    const char *p;    /* cursor into the borrowed text */
    const char *end;
    unsigned long line;      /* line on which the current record starts (1-based) */
    unsigned long next_line; /* line the cursor is on */
    size_t expect;           /* fields each record must have; 0 = any */
    /* the current record: nfields NUL-terminated fields inside buf */
    const char **fields; /* owned */
    size_t nfields, fields_cap;
    char *buf; /* owned */
    size_t buf_len, buf_cap;
    size_t *offs; /* owned; field start offsets into buf while a record is read */
    size_t offs_cap;
};

/* One column a reader knows. A header naming a column that is not in the
 * list is an error unless GP_CSV_ALLOW_UNKNOWN is given. */
struct gp_csv_col {
    const char *name;
    bool required;
};

#define GP_CSV_ALLOW_UNKNOWN 1u

void gp_csv_init(struct gp_csv *c, const char *text, size_t len, const char *name);
void gp_csv_free(struct gp_csv *c);

/* Reads the next record. *got is false at the end of the input. Errors:
 * GP_EPARSE for an unterminated quote, text after a closing quote, a quote
 * inside an unquoted field, a NUL byte, or (once a header was read) a record
 * whose field count differs from the header's; GP_ENOMEM. */
enum gp_err gp_csv_next(struct gp_csv *c, bool *got, struct gp_diag *diag);

/* Reads the first record as the header and sets index[i] to the field
 * index of cols[i], or -1 when the column is absent. Names match exactly
 * after trimming. Afterwards every record must have as many fields as the
 * header. Errors: an empty input, an unknown or repeated column, a missing
 * required column (all GP_EPARSE). */
enum gp_err gp_csv_header(struct gp_csv *c, const struct gp_csv_col *cols, size_t ncols,
                          unsigned flags, int *index, struct gp_diag *diag);

/* Field idx of the current record; "" when idx is negative or past the end. */
const char *gp_csv_field(const struct gp_csv *c, int idx);

/* Typed field readers. col names the column in the diagnostic, e.g.
 *   pods.csv:7: column 'gpu_milli': expected an integer 0..1000, got "abc"
 * gp_csv_int takes optional leading '-' and decimal digits only;
 * gp_csv_number takes a finite decimal number ("66.0", "1e3"). Errors are
 * GP_EINVALID. An empty field is an error too; readers that allow one test
 * gp_csv_field(c, idx)[0] first. */
enum gp_err gp_csv_int(const struct gp_csv *c, int idx, const char *col, int64_t min, int64_t max,
                       int64_t *out, struct gp_diag *diag);
enum gp_err gp_csv_number(const struct gp_csv *c, int idx, const char *col, double min, double max,
                          double *out, struct gp_diag *diag);

/* Sets diag to "NAME:LINE: column 'COL': expected WHAT, got "FIELD"" with
 * the field quoted and escaped (control bytes as \xNN, long values cut)
 * and returns err. */
enum gp_err gp_csv_bad(const struct gp_csv *c, enum gp_err err, int idx, const char *col,
                       const char *what, struct gp_diag *diag);

/* Sets diag to "NAME:LINE: " followed by the formatted message and returns
 * err. */
enum gp_err gp_csv_fail(const struct gp_csv *c, enum gp_err err, struct gp_diag *diag,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Writes s into out (size n >= 4) for a message: printable ASCII as is,
 * '"' and '\\' escaped, other bytes as \xNN, cut with "..." past ~40 bytes. */
void gp_csv_quote(const char *s, char *out, size_t n);

/* A string -> index map with open addressing, for readers that need to
 * find repeated names (duplicate nodes) or group rows (pool shapes). Keys
 * are borrowed and must outlive the map. */
struct gp_csv_map {
    const char **keys; /* owned array; NULL = empty slot */
    uint32_t *vals;    /* owned */
    size_t cap, len;
};

void gp_csv_map_free(struct gp_csv_map *m);
/* The value stored for key, if any. */
bool gp_csv_map_get(const struct gp_csv_map *m, const char *key, uint32_t *out);
/* Looks key up; when absent, inserts it with value val. *found tells which
 * happened, *out is the stored value. GP_ENOMEM when it cannot grow. */
enum gp_err gp_csv_map_put(struct gp_csv_map *m, const char *key, uint32_t val, bool *found,
                           uint32_t *out);

/* A row's name that must be unique in the file: copies raw into arena a,
 * records it in names with the current line, and sets *out. A repeat is
 * GP_EINVALID "NAME:LINE: column 'COL': NOUN "raw" is already VERB on line
 * N"; GP_ENOMEM when out of memory. */
struct gp_arena;
enum gp_err gp_csv_unique_name(const struct gp_csv *c, struct gp_csv_map *names, struct gp_arena *a,
                               const char *raw, const char *col, const char *noun, const char *verb,
                               const char **out, struct gp_diag *diag);

#endif
