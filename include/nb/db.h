/* nanobench run store: every run recorded in one SQLite database (schema: db/schema.sql).
 *
 * A run is recorded in two steps: nb_run_begin() writes a 'running' row at once (so a run
 * whose process dies stays visible, and shows as 'crashed'), then nb_run_end() writes its
 * parameters, metrics, per-layer results and artifacts and its final status in one
 * transaction. Several processes may record at once: WAL journal, a busy timeout, and
 * write transactions taken with BEGIN IMMEDIATE.
 *
 * Errors: NB_ERR_DB (locked beyond the busy timeout, read-only, corrupt, or from a newer
 * nanobench), NB_ERR_ARG (bad filter or run id), NB_ERR_IO (a file to hash cannot be read),
 * NB_ERR_NOMEM. Messages name the database file.
 */
#ifndef NB_DB_H
#define NB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nb/json.h"
#include "nb/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Schema version this build writes (the last migration in db/schema.sql). */
#define NB_DB_SCHEMA_VERSION 2

typedef struct nb_db nb_db;
typedef struct nb_run nb_run;

/* The database path when none is given: $NANOBENCH_DB, else $XDG_DATA_HOME/nanobench/
 * runs.db, else $HOME/.local/share/nanobench/runs.db. Errors: NB_ERR_DB (no HOME). */
nb_err nb_db_default_path(char *buf, size_t len, nb_status *st);

/* Opens (creating it and its folder when missing) the database at path (NULL: the default
 * path), sets WAL, foreign keys and the busy timeout ($NANOBENCH_DB_TIMEOUT_MS, default
 * 10000 ms), and migrates it forward to NB_DB_SCHEMA_VERSION. A database of a newer
 * version is refused and left untouched. */
nb_err nb_db_open(const char *path, nb_db **out, nb_status *st);
/* As nb_db_open, but migrates only up to version (for tests of the migrations). */
nb_err nb_db_open_version(const char *path, int version, nb_db **out, nb_status *st);
void nb_db_close(nb_db *db);
const char *nb_db_path(const nb_db *db);
/* True when path is the database's own file, or its -wal or -shm file (same device and
 * inode; links followed): an export must not be written over it. False when path does not
 * exist. */
bool nb_db_owns_file(const nb_db *db, const char *path);
/* PRAGMA user_version of the open database. */
int nb_db_version(const nb_db *db);

/* ---- recording ---- */

/* Starts a run of kind ('info', 'infer', 'estimate', 'calibrate', 'compile', 'run',
 * 'compare', 'bringup') on model_path (may be NULL; the file is hashed, and a file that
 * cannot be read leaves the model unset), child of parent_id (0: none), with params_json
 * (a JSON object; NULL for "{}"). Writes the 'running' row with this host and pid. */
nb_err nb_run_begin(nb_db *db, const char *kind, const char *model_path, int64_t parent_id,
                    const char *params_json, nb_run **out, nb_status *st);
int64_t nb_run_id(const nb_run *r);
/* Replaces the run's parameters (a JSON object, copied); written by nb_run_end. */
nb_err nb_run_set_params(nb_run *r, const char *params_json, nb_status *st);
/* What loading the model taught: opset and the inputs/outputs as JSON arrays; written by
 * nb_run_end into the model's row. */
nb_err nb_run_set_model_info(nb_run *r, int opset, const char *inputs_json,
                             const char *outputs_json, nb_status *st);
/* A figure of the run (value NaN is stored as NULL); a name given twice keeps the last. */
nb_err nb_run_metric(nb_run *r, const char *name, double value, const char *unit,
                     nb_status *st);
/* One layer of the run's report, in order: n metrics (names[i] = values[i]). */
nb_err nb_run_layer(nb_run *r, const char *layer, const char *op_type, int n,
                    const char *const *names, const double *values, nb_status *st);
/* A file the run read or wrote; its SHA-256 and size are taken now (a folder, e.g. a dump
 * tree, is recorded by path with no hash nor size). */
nb_err nb_run_artifact(nb_run *r, const char *role, const char *path, nb_status *st);
/* Ends the run: status 'ok' or 'error' (with error, one line), finished time, wall time,
 * and everything added since nb_run_begin, in one transaction. Frees r in every case. */
nb_err nb_run_end(nb_run *r, bool ok, const char *error, nb_status *st);
/* Frees r without writing: the row stays 'running' (then 'crashed' once the process is
 * gone). */
void nb_run_abandon(nb_run *r);

/* ---- reading ---- */

typedef struct nb_run_row {
    int64_t id, parent_id; /* parent 0: none */
    char kind[16];
    char status[16];       /* 'running', 'ok', 'error', or derived: 'crashed' (a 'running'
                              row whose process is gone), 'interrupted' (an 'error' row
                              ended by a signal: its error "interrupted (SIGINT)...") */
    char started[32], finished[32];
    double wall_ms;        /* NaN while running */
    char *model_path, *model_sha256; /* NULL when no model */
    char *params, *error, *version, *host;
    int64_t pid;
} nb_run_row;

typedef struct nb_run_filter {
    const char *kind;  /* NULL: any */
    const char *model; /* a path (matched after realpath) or a SHA-256 prefix (>= 6 hex) */
    const char *since; /* 'YYYY-MM-DD' or 'YYYY-MM-DDTHH:MM[:SS]' (UTC) */
    int limit;         /* <= 0: no limit */
    const int64_t *ids; /* n_ids > 0: only these runs (a set no other filter can express, e.g.
                           a model's runs with every run derived from them) */
    int n_ids;
} nb_run_filter;

/* Runs matching f, newest first. Errors: NB_ERR_ARG for a malformed since or kind. */
nb_err nb_db_list(nb_db *db, const nb_run_filter *f, nb_run_row **rows, int *n,
                  nb_status *st);
/* One run; NB_ERR_ARG when no run has that id. */
nb_err nb_db_get(nb_db *db, int64_t id, nb_run_row *row, nb_status *st);
void nb_run_rows_free(nb_run_row *rows, int n);
/* Frees the strings of one row filled by nb_db_get. */
void nb_run_row_clear(nb_run_row *r);

typedef struct nb_metric_row {
    char *name, *unit;
    double value; /* NaN for NULL */
} nb_metric_row;
nb_err nb_db_metrics(nb_db *db, int64_t run, nb_metric_row **rows, int *n, nb_status *st);
void nb_metric_rows_free(nb_metric_row *rows, int n);

typedef struct nb_layer_row {
    char *layer, *op_type;
    int n;
    nb_metric_row *m; /* unit empty */
} nb_layer_row;
nb_err nb_db_layers(nb_db *db, int64_t run, nb_layer_row **rows, int *n, nb_status *st);
void nb_layer_rows_free(nb_layer_row *rows, int n);

typedef struct nb_artifact_row {
    char *role, *path, *sha256; /* sha256 NULL for a folder */
    int64_t bytes;              /* -1 for a folder */
} nb_artifact_row;
nb_err nb_db_artifacts(nb_db *db, int64_t run, nb_artifact_row **rows, int *n,
                       nb_status *st);
void nb_artifact_rows_free(nb_artifact_row *rows, int n);

/* Lineage of a run: ancestors (parent first, then its parent...) and descendants (breadth
 * first), as run ids. */
nb_err nb_db_lineage(nb_db *db, int64_t run, int64_t **up, int *n_up, int64_t **down,
                     int *n_down, nb_status *st);

/* ---- lookups the front ends share (db/lookup.c) ---- */

/* The value of run's metric name into *value; false when the run has none, its value is
 * NULL, or the database cannot be read. */
bool nb_db_metric(nb_db *db, int64_t run, const char *name, double *value);
/* The path of run's first artifact of role into path (len bytes); live: only when the file
 * can still be read. False when there is none. */
bool nb_db_artifact_path(nb_db *db, int64_t run, const char *role, bool live, char *path,
                         size_t len);
/* run itself when it is of kind, else its nearest ancestor of kind, into *id (0: none). */
nb_err nb_db_ancestor_of_kind(nb_db *db, int64_t run, const char *kind, int64_t *id,
                              nb_status *st);
/* Every run recorded for model (nb_run_filter's model) and every run derived from one of
 * them (its descendants), ascending ids, malloc'ed into *ids; the count, or -1 with st. */
int nb_db_model_runs(nb_db *db, const char *model, int64_t **ids, nb_status *st);

/* Two runs side by side (history diff, the report's "what changed"): their rows, the union
 * of their parameters (text as stored; NULL where a run lacks one), of their metrics (NaN
 * where a run lacks one) and of their layers matched by name (the metrics both have). */
typedef struct nb_diff_param {
    char *key, *a, *b;
    bool same;
} nb_diff_param;
typedef struct nb_diff_metric {
    char *name, *unit;
    double a, b;
} nb_diff_metric;
typedef struct nb_diff_layer {
    char *layer;
    int in;           /* 1: only in A, 2: only in B, 3: both */
    int n;            /* the metrics both runs have for it */
    nb_diff_metric *m;
} nb_diff_layer;
typedef struct nb_run_diff {
    nb_run_row run[2];
    nb_diff_param *params;
    int n_params;
    nb_diff_metric *metrics;
    int n_metrics;
    nb_diff_layer *layers; /* A's order, then B's own */
    int n_layers;
    bool layers_a, layers_b; /* which runs have per-layer rows */
} nb_run_diff;
/* Errors: NB_ERR_ARG (no such run), NB_ERR_DB, NB_ERR_NOMEM. */
nb_err nb_db_diff(nb_db *db, int64_t a, int64_t b, nb_run_diff *d, nb_status *st);
void nb_run_diff_free(nb_run_diff *d);

/* The runs of a process another one had to kill (the workbench's cancel, when the step did
 * not stop on SIGINT within its grace time): every row of process pid on this host still
 * 'running', and every row still 'running' below it in the lineage (a bringup's steps),
 * becomes 'error' with why as its error and finished now, instead of showing as 'crashed'.
 * Rows already ended are left as they are. Errors: NB_ERR_DB. */
nb_err nb_db_mark_killed(nb_db *db, int64_t pid, const char *why, nb_status *st);

/* The pid nb_run_begin records from now on, instead of getpid(): the supervising process's
 * (app/supervise.c), which outlives this one and marks its rows when it dies of a signal;
 * 0 restores getpid(). */
void nb_db_set_run_pid(int64_t pid);

/* Deletes a run with its metrics, layers and artifact rows (not the files); its children
 * keep their rows with no parent. */
nb_err nb_db_remove(nb_db *db, int64_t run, nb_status *st);

/* Writes the runs matching f to out: CSV (RFC 4180, header row; one row per run, one column
 * per metric name "name [unit]"; layers as rows "run_id,layer,op_type,metric..." when
 * layers is set) or JSON (an array of runs, each with params parsed, metrics, layers and
 * artifacts). */
nb_err nb_db_export_csv(nb_db *db, const nb_run_filter *f, bool layers, FILE *out,
                        nb_status *st);
nb_err nb_db_export_json(nb_db *db, const nb_run_filter *f, FILE *out, nb_status *st);
/* The export into a file: format "csv" (layers: the per-layer rows) or "json", built in
 * memory and written whole (written as PATH.tmp.PID, renamed over path), or nothing. A link
 * is followed and its target replaced. Errors: NB_ERR_ARG when path is the run database
 * itself, or not a regular file (a device or a pipe: write to standard output instead),
 * the export's, NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_db_export_file(nb_db *db, const nb_run_filter *f, const char *format, bool layers,
                         const char *path, nb_status *st);


/* Lowercase hex SHA-256 (65 bytes with NUL) and size of a file. Errors: NB_ERR_IO. */
nb_err nb_sha256_file(const char *path, char hex[65], int64_t *bytes, nb_status *st);

#ifdef __cplusplus
}
#endif
#endif
