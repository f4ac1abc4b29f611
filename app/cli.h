/* nanobench CLI: shared helpers of the subcommands. */
#ifndef NB_APP_CLI_H
#define NB_APP_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nb/db.h"
#include "nb/ref.h"

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE"; on a match sets *val, advances
 * *i past the value and returns 1; returns -1 when the value is missing, 0 when argv[*i] is
 * another option. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* Prints "nanobench: <msg>" to stderr and returns the exit status of st. */
int cli_error(const nb_status *st);
/* A file next to path (in its folder) one or two edits from its name (Levenshtein: at most a
 * quarter of its length), when path names none: its path into buf. */
bool cli_did_you_mean(const char *path, char *buf, size_t len);
/* The positional argument of a one-model command: sets *model from arg, or returns the
 * usage error for an unknown option, a second model, or a path that is not there but one
 * typo from a file that is ("did you mean"; exit status 2); 0 when taken. */
int cli_model_arg(const char *cmd, const char *arg, const char **model);
/* Prints a usage error (exit status 2). */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));


/* Replaces stdout (out) and stderr (err) by streams that pass every byte through the
 * terminal filter of app/term.c (C0 controls but newline and tab, DEL and C1 controls become
 * '?'): call once, before a command writes (not for the workbench, not for an export's raw
 * CSV on stdout). cli_term_raw writes seq to stderr unfiltered (bringup's own progress
 * redraw, "\r\033[K", on a terminal). */
void cli_term_filter(bool out, bool err);
void cli_term_raw(const char *seq);

/* The supervisor (app/supervise.c). cli_supervised_child: in the command a supervisor
 * started, sets the pid its runs are recorded with to the supervisor's and returns 1; 0
 * elsewhere. cli_supervise: runs this command line again as a supervised child and returns
 * its exit status (dying of the signal the child died of, after ending its rows in db_path:
 * NULL the default database), or -1 when it cannot start one (the caller runs the command
 * itself). */
int cli_supervised_child(void);
int cli_supervise(char **argv, const char *db_path);

/* Makes s one line of plain text for the terminal, in place: control characters (< 32, 127)
 * of a layer or tensor name become '?'. Returns s. */
char *cli_plain(char *s);

/* An --input value "random" or "random:SEED" (uniform in [-1, 1), infer's and run's smoke
 * input): returns 0 with *seed set (0 for plain "random"), -1 when file is not one, 2 after
 * printing the error for a bad seed (spec names the option in the message). */
int cli_random_seed(const char *spec, const char *file, uint32_t *seed);

/* Prints "nanobench: <message>" to stderr (one line), keeps it as the run's error, and
 * returns status. */
int cli_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- machine-readable output (--json) ---- */
struct json_t;
/* Prints o to stdout as one indented JSON object and a newline, then frees it. Returns 0,
 * or exit status 2 after "cannot write to standard output" (o is freed either way). */
int cli_json_out(const char *cmd, struct json_t *o);

/* ---- run recording (record.c) ---- */
typedef struct cli_rec {
    const char *db_path;       /* --db, else NANOBENCH_DB or the default */
    bool no_record;            /* --no-record */
    bool require_record;       /* --require-record: no database, no run (exit 2) */
    int64_t parent;            /* --parent RUN: the run this one derives from */
    nb_db *db;
    nb_run *run;
    int64_t run_id;
    struct json_t *params;     /* the run's parameters, built by the command */
    char last_error[1024];     /* the last error line printed */
    int argc;                  /* the whole command line, global options included */
    char **argv;
} cli_rec;
extern cli_rec g_rec;

/* Opens the database and writes the 'running' row; returns 0, or 2 when recording is
 * required and impossible (the message printed). */
int rec_start(const char *kind, const char *model_path, int argc, char **argv);
/* Adds a string parameter (printf-style) / a jansson value (reference stolen). */
void rec_param(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rec_param_json(const char *key, void *json);
/* rec_start, then the parameters every model command has: model and --input_shape. */
int rec_start_model(const char *kind, const char *model, const char *shape, int argc,
                    char **argv);
void rec_metric(const char *name, double value, const char *unit);
void rec_artifact(const char *role, const char *path);
/* One row of the run's per-layer results (history show / diff / export --layers). */
void rec_layer(const char *layer, const char *op_type, int n, const char *const *names,
               const double *values);
/* The model's opset, inputs and outputs for its row. */
void rec_model(const nb_model *m);
void rec_error(const char *fmt, va_list ap);
/* Ends the run with rc's status; returns the exit status. */
int rec_finish(int rc);

/* What a command is writing: on SIGINT, SIGTERM or SIGHUP it is removed before the process
 * dies of the signal (app/cleanup.c); only what this process made, never a final output
 * that may be a previous run's. install once in main; clear once the outputs are renamed
 * into place or removed.
 * cli_cleanup_add: a file or folder this process creates itself (a scratch folder, a
 *   .part file, a name it claimed with O_EXCL), with its ".tmp" and ".tmp.PID";
 * cli_cleanup_add_tmp: the temporary FINAL.tmp.PID of an output FINAL (nb_tmp_path), and
 *   that temporary's own FINAL.tmp.PID.tmp.PID; FINAL itself is left;
 * cli_cleanup_add_sweep: under DIR (6 levels), every entry named "*.tmp.PID" of this
 *   process (a dump's folder, whose final name is known only as it is made). */
void cli_cleanup_install(void);
void cli_cleanup_add(const char *path);
void cli_cleanup_add_tmp(const char *final);
void cli_cleanup_add_sweep(const char *dir);
void cli_cleanup_clear(void);
/* An engine's progress callback (nb_progress_fn) around a folder it publishes: done 0 adds
 * the folder user (a path) as cli_cleanup_add_tmp does, done 1 clears. */
void cli_cleanup_tmp_progress(void *user, const char *pass, int done, int total);

int cmd_info(int argc, char **argv);
int cmd_infer(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_atc(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bringup(int argc, char **argv);
/* bringup after its flags (app/cmd_bringup.c): the bringup's own run begun (argc, argv: the
 * command line recorded), nb_bringup with opts (a structure: names and paths as data), the
 * step lines on stderr ("progress: STEP k/6" lines instead with progress_lines, for a job
 * runner), the summary on stdout (json: as JSON). Returns the exit status; the run is
 * ended by rec_finish. */
struct nb_bringup_opts;
int cli_bringup_exec(const struct nb_bringup_opts *opts, bool json, bool progress_lines,
                     int argc, char **argv);

#endif
