/* nanobench report (db/report.c): one self-contained HTML page per bring-up (issue 23), or two
 * side by side — the export of a bring-up that the run store keeps, next to the CSV and JSON
 * exports of nb/db.h. The page is made from what the bring-up folder holds (summary.json and
 * the steps' JSON under log/, the dump folders its compare read); plots are drawn by
 * gnuplot's SVG terminal (when it is on PATH) and inlined, each with its data as a table (the
 * plot's text alternative); colours are the Okabe-Ito palette. No printing, no exit. */
#ifndef NB_REPORT_H
#define NB_REPORT_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "nb/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct json_t;

/* One bring-up to show: its folder (the bringup's --out), a caption ("bringup 45"), and from
 * the run history when known its parameters and metrics (JSON objects, or NULL). */
typedef struct nb_report_src {
    const char *dir;
    const char *label;
    long long run_id; /* the bringup's run id when it came from the history, else 0: a
                         folder whose summary.json is another bringup's (a later one wrote
                         over it) is then not shown as this run's */
    const struct json_t *params;  /* {"flag": value, ...}: the command line's options */
    const struct json_t *metrics; /* {"name": number, ...} */
    const struct json_t *summary; /* NULL: DIR/summary.json; else this summary object (the
                                     bring-up's, written after the page so that a page and
                                     its summary are published together) */
} nb_report_src;

typedef struct nb_report_opts {
    const nb_report_src *a;  /* required */
    const nb_report_src *b;  /* NULL: a alone; else both on the same axes and a table of
                                what changed (parameters, sizes, cycles, metrics) */
    const char *pipeline;    /* NULL, or the pipeline check's per-clip JSON
                                (share/examples/openwakeword/report.js pipeline: {threshold,
                                clips, agree_npu, max_diff_npu, rows: [{clip, label,
                                float_peak, npu_peak, ...}]}) shown as a section of its own */
    const char *out;         /* the .html written (through out.tmp.PID, renamed when whole) */
    const volatile sig_atomic_t *cancel; /* NULL, or a flag (a signal handler's): when set,
                                            gnuplot is stopped and the page not published */
} nb_report_opts;

typedef struct nb_report_result {
    int n_plots;        /* SVG plots inlined (0 without gnuplot) */
    bool gnuplot;       /* gnuplot was not found missing (true when no plot was tried) */
    int n_gone;         /* sections whose files are gone (each says so in its place) */
} nb_report_result;

/* Writes the page. Errors: NB_ERR_ARG ("<dir>: no summary.json (is it a bringup folder?)"
 * when a's folder holds no summary.json and a has no metrics either), NB_ERR_IO (out or the
 * scratch folder cannot be written; no partial out is left), NB_ERR_CANCELLED (the cancel
 * flag was set or gnuplot died of SIGINT/SIGTERM/SIGHUP: nothing published, nothing left). */
nb_err nb_report_write(const nb_report_opts *o, nb_report_result *r, nb_status *st);

/* The temporaries nb_report_write makes for out, for a caller's cleanup on a signal: the
 * page's part "OUT.tmp.PID" and gnuplot's scratch folder "OUT.tmp.PID.d" (both removed by
 * the next write of out once this process is gone: nb_remove_stale_tmps). */
void nb_report_tmp_paths(const char *out, char *part, size_t part_len, char *scratch,
                         size_t scratch_len);

/* The bring-up's one-screen text summary (79 columns, an 11-column label per line) from its
 * summary.json object s: the model and wall time, the five estimate items, the calibration
 * (algorithm, batches, fake-quant output SQNR, the worst layers, the INT16 advice), the
 * exeom and atc's warnings, the NPU's cycles, the placement on the MCU's CPU, fp16
 * saturation and its fix, each output against float over the evaluation inputs, compare's
 * verdict and first layer over threshold with its cause, the runs' ids and the files
 * (db/report_text.c). Keys missing from s print as empty or NaN, never crash. */
void nb_report_text(const struct json_t *s, FILE *f);
/* A bring-up folder's summary.json: read only from a regular file, a JSON object with a model
 * and an estimate section. Errors: NB_ERR_ARG naming the file and what is wrong (missing,
 * not a regular file, not JSON, not a summary). */
nb_err nb_report_load_summary(const char *dir, struct json_t **out, nb_status *st);
/* The bringup run id a summary.json was written by (its runs.bringup), or 0 when it was not
 * recorded (--no-record) or the key is missing. */
long long nb_report_summary_run(const struct json_t *s);
/* Clears a bring-up folder for a new bring-up: its summary.json and report.html removed (a
 * run that stops half-way leaves no summary speaking for another). Returns the bringup run
 * id that had written the summary, 0 for an unrecorded one, -1 when there was none; why
 * (len bytes) names a file that could not be removed, else "". */
long long nb_report_folder_clear(const char *dir, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif
