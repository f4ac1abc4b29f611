/* nanobench report: one self-contained HTML page per bring-up (issue 23), or two side by side.
 * The page is made from what the bring-up folder holds (summary.json and the steps' JSON under
 * log/); plots are drawn by gnuplot's SVG terminal and inlined, each with its data as a table. */
#ifndef NB_APP_REPORT_H
#define NB_APP_REPORT_H

#include <jansson.h>

/* One bring-up to show: its folder (the bringup's --out), a caption ("bringup 45"), and from
 * the run history when known its parameters and metrics (JSON objects, or NULL). */
typedef struct report_src {
    const char *dir;
    const char *label;
    const json_t *params;  /* {"flag": value, ...}: the command line's options */
    const json_t *metrics; /* {"name": number, ...} */
} report_src;

/* Writes out (through out.tmp, renamed when complete): the report of a, and with b (not
 * NULL) both on the same axes and a table of what changed. A section whose files are gone
 * says so in its place. Returns 0, or the exit status after a one-line error (2: out cannot
 * be written, or a's folder holds no summary.json and a has no metrics either). */
int report_write(const report_src *a, const report_src *b, const char *out);
/* The same with the pipeline check's per-clip table (share/examples/openwakeword/report.js
 * pipeline, written to $PIPELINE_JSON: {threshold, clips, agree_npu, max_diff_npu, rows:
 * [{clip, label, float_peak, npu_peak, ...}]}) as a section of its own; pipeline NULL: none. */
int report_write_pipeline(const report_src *a, const report_src *b, const char *pipeline,
                          const char *out);

#endif
