/* nanobench TUI: helpers shared by the Model, Estimate, Quantize and Compile screens: the
 * argument list of a job, the JSON a job printed, the recorded run's metrics, text drawn
 * into a width, the lineage parent of a step. Nothing here computes a result. */
#ifndef NB_TUI_SCR_UTIL_H
#define NB_TUI_SCR_UTIL_H

#include <jansson.h>

#include "nb/db.h"

#include "tui.h"

/* A child's argument list: each entry malloc'd, NULL-terminated (v[n] == NULL). */
#define SU_MAX_ARGS 48
typedef struct su_argv {
    char *v[SU_MAX_ARGS + 1];
    int n;
    bool oom; /* an entry could not be added */
} su_argv;

/* Appends one argument (printf-style). Past SU_MAX_ARGS or out of memory: sets oom. */
void su_arg(su_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void su_argv_free(su_argv *a);

/* The JSON object a job printed on stdout; NULL with err set (a one-line reason) when the
 * job failed, was cancelled or printed no JSON object. The caller json_decref()s it. */
json_t *su_job_json(const tui_job *j, char *err, size_t errlen);

/* The run id to pass as --parent for step: the last recorded run of the nearest earlier
 * step that has one, 0 when none. */
int64_t su_parent(const tui *t, int step);

/* A metric of a recorded run (nb_db_metrics on t->db); false when the run, the database
 * or the metric is missing, or its value is NULL. */
bool su_db_metric(const tui *t, int64_t run, const char *name, double *value);
/* The path of a recorded run's artifact with this role ("deploy_model", "exeom"); false
 * when none. */
bool su_db_artifact(const tui *t, int64_t run, const char *role, char *path, size_t len);


/* A model opened again picks up what earlier sessions made of it, from the run database:
 * the newest ok calibrate, compile and run runs among the model's runs and their
 * descendants (nb_db_model_runs) whose files are still there set t->deploy_model, t->exeom,
 * t->npu_dump (the run's dump folder) and the steps' run ids, states and notes; an empty
 * t->input_shape takes the one of the model's newest info or estimate run; the newest
 * estimate run's id, state and note for Estimate (its screen shows it again, scr_estimate.c).
 * what (len) takes "Estimate, Quantize, Compile, Run" (the steps taken up), "" when none. */
void su_resume(tui *t, char *what, size_t len);

/* The string value of option opt ("--data_dir" or "--data_dir=...") in a recorded run's
 * argv (its params' "argv" array); NULL when absent. */
const char *su_argv_opt(const json_t *params, const char *opt);

/* The file name of path without its folder and without suffix (".onnx"), into buf. */
const char *su_stem(const char *path, const char *suffix, char *buf, size_t len);

/* A JSON shape array as "[1,76,32,1]" (symbolic dims as their name, "?" when unnamed;
 * "(unknown rank)" for null). Returns true when every dim is a known number. */
bool su_shape(const json_t *shape, char *buf, size_t len);

/* A JSON number (integer or real) as a double; NAN when missing or not a number. */
double su_num(const json_t *o, const char *key);
/* A JSON string member, "" when missing. */
const char *su_str(const json_t *o, const char *key);

/* Text at (y, x) in at most width cells with attribute attr; bytes that are not printable
 * ASCII show as '?' unless the terminal is UTF-8. Returns the cells written. */
int su_put(const tui *t, WINDOW *w, int y, int x, int width, int attr, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* A box around (y, x, h, wd) with a title in the top border. */
void su_box(const tui *t, WINDOW *w, int y, int x, int h, int wd, const char *title);
/* Word-wraps text into width: at most max lines at rows y.. (the last one ends in "..."
 * when the text does not fit). Returns the lines drawn. */
int su_wrap(const tui *t, WINDOW *w, int y, int x, int width, int max, int attr,
            const char *text);

/* The length of the folder-like prefix ("model/") that every name of names[n] shares, to
 * leave out where room is short; 0 when none. */
size_t su_common_prefix(const char *const *names, int n);

/* A layer or task name for a narrow table: without its first prefix bytes (the "model/"
 * every name shares) and without a last component that repeats the row's op type
 * ("conv2d_8/Conv2D" for "model/conv2d_8/Conv2D/AscendDequant" of an AscendDequant), so
 * that names that differ only in the middle keep the difference at their end. Into buf;
 * returns buf. */
const char *su_short_name(const char *name, size_t prefix, const char *op, char *buf,
                          size_t len);

/* Sets the width of column flex of tb to what is left of total (one space between
 * columns), at least minw; columns after flex that no longer fit keep their width (the
 * table draws what fits). */
void su_fit_cols(vm_table *tb, int flex, int total, int minw);

/* The rows of table tb that a pane of height h shows below its header (h - 1, at least
 * 1). */
int su_page(int h);

/* Selects the table row under a click at pane row y, given where the table was drawn
 * (its header at row top_y, h rows in all). Returns true when a row was hit. */
bool su_table_click(vm_table *tb, int y, int top_y, int h);

/* The model's float inputs, ';'-separated (from the Model screen's info; "" when it has
 * none), NULL before info ran: the default of atc's --input_fp16_nodes. */
const char *scr_model_float_inputs(const tui *t);

#endif
