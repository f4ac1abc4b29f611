/* nanobench: one status type for every engine.
 *
 * Every fallible engine function returns an nb_err (NB_OK = 0) and, on failure, fills an
 * nb_status whose message names the file, node or layer concerned:
 *   "<path or layer>: <what is wrong> [<hint>]"
 * Engines never call exit(); the application maps the code to an exit status with
 * nb_exit_code(): 2 for bad input, 1 for internal failure.
 */
#ifndef NB_STATUS_H
#define NB_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nb_err {
    NB_OK = 0,
    NB_ERR_IO,          /* a file cannot be opened, read or written */
    NB_ERR_FORMAT,      /* not a valid file of its kind: empty, random bytes, text, truncated */
    NB_ERR_OPSET,       /* opset of the default domain outside 11..18, or unknown domain used */
    NB_ERR_GRAPH,       /* cycle, input that nothing produces, duplicate producer */
    NB_ERR_SHAPE,       /* negative, overflowing or inconsistent dimensions */
    NB_ERR_DATA,        /* tensor payload inconsistent with its dims (e.g. short raw_data) */
    NB_ERR_EXTERNAL,    /* external data location invalid or outside the model's folder */
    NB_ERR_ATTR,        /* invalid or missing attribute (e.g. Conv stride 0) */
    NB_ERR_UNSUPPORTED, /* operator, dtype or feature not implemented */
    NB_ERR_ARG,         /* wrong user argument: flag syntax, input that does not match the model */
    NB_ERR_DB,          /* run database locked, read-only, corrupt or from a newer nanobench */
    NB_ERR_NOMEM,       /* allocation failed */
    NB_ERR_INTERNAL,    /* a bug in nanobench */
    NB_ERR_CANCELLED    /* stopped on request (a front end's cancel flag): nothing half-written */
} nb_err;

typedef struct nb_status {
    nb_err code;
    char msg[1024];
} nb_status;

/* Sets st (if not NULL) to code and a printf-style message; returns code. Control
 * characters in the message (from names in a model or path) become '?': one line always. */
nb_err nb_fail(nb_status *st, nb_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "<prefix>: " to the message already in st (used to add a node or file name
 * as an error travels up). Returns st->code. */
nb_err nb_prefix(nb_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears st to NB_OK with an empty message. */
void nb_status_clear(nb_status *st);

/* Short name of an error code, e.g. "format", "graph", for messages and tests. */
const char *nb_err_name(nb_err code);

/* Process exit status for an error code: 0 for NB_OK, 1 for NB_ERR_NOMEM and
 * NB_ERR_INTERNAL, 130 for NB_ERR_CANCELLED (as SIGINT), 2 for every bad-input code. */
int nb_exit_code(nb_err code);

/* The engines' callbacks to a front end: a warning (one line, without a "warning:" prefix
 * or a newline) and progress (pass, e.g. "calibrate", done of total). */
typedef void (*nb_warn_fn)(void *user, const char *msg);
typedef void (*nb_progress_fn)(void *user, const char *pass, int done, int total);
/* Formats a warning (at most 1 KB) and calls fn with it; nothing when fn is NULL. */
void nb_warnf(nb_warn_fn fn, void *user, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif
