/* nanobench accuracy comparison (engine/accucmp, issue 7): the vendor's per-tensor metrics
 * (msaccucmp's ten, in its column order, plus SQNR and NaN/Inf/saturation counts; every
 * definition and edge case in share/doc/metrics.md) and the dump files both sides write
 * (share/proto/dump.proto: the simulator's, and the reference executor's golden dumps).
 */
#ifndef NB_ACCUCMP_H
#define NB_ACCUCMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb/json.h"
#include "nb/status.h"
#include "nb/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x: the NPU's values, y: golden. NAN where a metric is not defined (see metrics.md). */
typedef struct nb_cmp_metrics {
    int64_t n;             /* elements compared (pairs where both sides are finite) */
    double cos;            /* CosineSimilarity */
    double max_abs;        /* MaxAbsoluteError */
    double acc_rel;        /* AccumulatedRelativeError: sum |x/y - 1|, |y| <= eps counted 0 */
    double red;            /* RelativeEuclideanDistance: ||x - y|| / ||y|| */
    double kl;             /* KullbackLeiblerDivergence of min-max normalised distributions */
    double mean_x, std_x, mean_y, std_y; /* StandardDeviation: (mean;std) of each side */
    double mae;            /* MeanAbsoluteError */
    double rmse;           /* RootMeanSquareError */
    double max_rel;        /* MaxRelativeError (|y| <= eps counted 0) */
    double mean_rel;       /* MeanRelativeError (|y| <= eps counted 0) */
    double sqnr_db;        /* 10 log10(sum y^2 / sum (x - y)^2); +inf when equal */
    int64_t nan_x, inf_x, nan_y, inf_y; /* non-finite values on each side (left out) */
    int64_t sat_x;         /* NPU values at +-65504, the fp16 limit */
    char note[160];        /* why a metric is NaN ("all the data is zero in ...", "scalar") */
} nb_cmp_metrics;

/* Computes every metric of x against y (n values each, in any order, the same on both
 * sides). Pairs with a NaN or an infinity on either side are counted and left out. */
void nb_cmp_metrics_compute(const double *x, const double *y, int64_t n, nb_cmp_metrics *m);

/* The thresholds of the vendor's analyser: a layer fails when any is crossed. */
typedef struct nb_cmp_thresholds {
    double cos_min;      /* 0.99 */
    double red_max;      /* 0.05 */
    double kl_max;       /* 0.005 */
    double rmse_max;     /* 1.0 */
    double mean_rel_max; /* 1.0 */
} nb_cmp_thresholds;

void nb_cmp_thresholds_default(nb_cmp_thresholds *t);
/* Parses "cos=0.99,red=0.05,kl=0.005,rmse=1,mre=1" (any subset) into t. Errors: NB_ERR_ARG
 * naming the bad item. */
nb_err nb_cmp_thresholds_parse(const char *s, nb_cmp_thresholds *t, nb_status *st);
/* Which thresholds m crosses, as "cos, rmse" into why ("" when it passes); true if any.
 * A NaN metric does not count as crossing. */
bool nb_cmp_fails(const nb_cmp_metrics *m, const nb_cmp_thresholds *t, char *why, size_t len);

/* ---- one layer in detail (nanobench compare layer) ----
 * x is the NPU's tensor, y the golden one: n doubles each, the same logical element order
 * (NCHW / ND, row-major) on both sides, as nb_dump_tensor.v holds them. */

/* The k elements with the largest absolute error |x[i] - y[i]|: their flat indices into
 * idx (room for k), the largest error first, ties to the lower index. A pair with a NaN or
 * an infinity on either side ranks above every finite pair (its error counts as +inf).
 * Returns how many were written, min(k, n) (0 when k <= 0 or n <= 0). O(n k), no
 * allocation: meant for small k (ten). */
int nb_cmp_worst_k(const double *x, const double *y, int64_t n, int k, int64_t *idx);

#define NB_CMP_MAX_BINS 100000
/* Histogram of the error e = x[i] - y[i] (NPU minus golden, in the tensor's units) over the
 * pairs where both sides are finite, in bins equal-width bins, as numpy.histogram(e, bins)
 * gives it: edges (bins + 1 values) = numpy.linspace(min e, max e, bins + 1); bin b counts
 * edges[b] <= e < edges[b + 1], the last bin also e = edges[bins]; when every e is the same
 * value v the range is [v - 0.5, v + 0.5], and with no finite pair [0, 1] (all counts 0).
 * counts has room for bins; *left_out (when left_out is not NULL) takes the number of pairs
 * left out for a NaN or an infinity. Errors: NB_ERR_ARG when bins is not in
 * 1..NB_CMP_MAX_BINS (nothing written). */
nb_err nb_cmp_error_histogram(const double *x, const double *y, int64_t n, int bins,
                              double *edges, int64_t *counts, int64_t *left_out,
                              nb_status *st);

/* The multi-index of the flat (row-major) element index flat in a tensor of rank dims
 * (NCHW for a 4-D activation): idx[0..rank), idx[rank - 1] varying fastest. flat must be
 * below the product of dims; a dim <= 0 is taken as 1. */
void nb_cmp_unravel(int64_t flat, int rank, const int64_t *dims, int64_t *idx);

/* ---- dump files ---- */

typedef struct nb_dump_tensor {
    int index;            /* the operand's slot */
    bool output;
    char *original_name;  /* the ONNX value ("" if none) */
    bool network_output;  /* golden dumps: the value is an output of the model's graph */
    char *dtype, *format;
    int rank;
    int64_t dims[6];
    double *v;            /* the logical values (NCHW / ND order, fp16 widened), in the ONNX
                             value's units ((data - value_offset) / value_scale); NULL for
                             a stats-only dump */
    double value_scale, value_offset; /* what the data holds of the value (atc
                             --nb_input_scale): 1, 0 unless scaled */
    int64_t numel;
    uint64_t saturated;   /* values at +-65504 (from the file's stats) */
} nb_dump_tensor;

typedef struct nb_dump {
    char *path;
    char *op_name, *op_type, *source;
    uint32_t task_id;
    bool inserted;
    uint64_t cycles, saturations;
    char **covers;
    int n_covers;
    nb_dump_tensor *t;
    int n_t;
    uint32_t *in_ids, *out_ids; /* NPU dumps: the exeom tensor of each input and output slot
                             (UINT32_MAX: none), whatever nb_dump_read kept; NULL when the
                             dump does not say (golden dumps, dumps of nanobench < 0.35) */
    int n_in_ids, n_out_ids;
} nb_dump;

/* What nb_dump_read keeps: inputs, outputs (values decoded for those kept). */
#define NB_DUMP_INPUTS 1
#define NB_DUMP_OUTPUTS 2
/* Reads a dump file, keeping the tensors of want (NB_DUMP_INPUTS | NB_DUMP_OUTPUTS).
 * Errors: NB_ERR_IO, NB_ERR_FORMAT (not a dump: another kind of file), NB_ERR_DATA (a dump
 * with a bad version, dtype, format, shape, or data that does not fill its shape in its
 * format), NB_ERR_NOMEM. */
nb_err nb_dump_read(const char *path, int want, nb_dump *d, nb_status *st);
/* The same from len bytes in memory (path names them in messages and in d->path). */
nb_err nb_dump_parse(const uint8_t *buf, size_t len, const char *path, int want, nb_dump *d,
                     nb_status *st);
void nb_dump_free(nb_dump *d);

/* Writes a golden dump (source "golden") of one ONNX node: its float outputs (names and
 * tensors, n of them) as FLOAT ND, named {op_type}.{op_name}.{index}.0.{timestamp} in dir
 * (the name cleaned as the simulator's). Errors: NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_dump_write_golden(const char *dir, const char *op_name, const char *op_type,
                            uint32_t index, const char *const *names,
                            const nb_tensor *const *ts, int n, nb_status *st);

/* ---- one network output over K inputs (bringup's evaluation) ----
 * The NPU's values x against the float reference's y of one output, input by input: each
 * input's metrics, and over the K: the mean and the worst cosine and SQNR, the largest
 * absolute error, the metrics of the K inputs pooled into one vector, and the output's
 * cosine for the verdict ("gate"): the pooled cosine for a score (one value per input,
 * whose own cosine is always 1), else the worst. A NaN cosine on any input makes the mean
 * and the worst NaN. */
typedef struct nb_cmp_over_inputs {
    int n_inputs;            /* K, given to init: the means divide by it */
    int added;
    int64_t numel;           /* values per input (the last added) */
    double cos_mean, cos_worst, sqnr_mean, sqnr_worst, max_abs;
    double pooled_cos, pooled_sqnr, gate;
    double fp16_steps;       /* the largest |x - y| in fp16 steps at the pair's magnitude
                                (nb_fp16_step), NaN when a value is NaN */
    bool cos_nan;
    double *px, *py;         /* the pooled values (internal) */
    int64_t pn;
} nb_cmp_over_inputs;

void nb_cmp_over_inputs_init(nb_cmp_over_inputs *a, int n_inputs);
/* fp16's step (one unit in the last place) at magnitude |v|: 2^(e - 10) for a normal value
 * in [2^(e-1), 2^e), 2^-24 in the subnormal range below 2^-14 (IEEE 754 binary16). */
double nb_fp16_step(double v);
/* Adds one input's n values; its own metrics into m. Errors: NB_ERR_NOMEM. */
nb_err nb_cmp_over_inputs_add(nb_cmp_over_inputs *a, const double *x, const double *y,
                              int64_t n, nb_cmp_metrics *m, nb_status *st);
/* The pooled metrics and the gate, once every input is added. */
void nb_cmp_over_inputs_finish(nb_cmp_over_inputs *a);
void nb_cmp_over_inputs_free(nb_cmp_over_inputs *a);

/* One network output over K inputs, from files: the NPU's and the reference's .npy of each
 * input (run --output and infer write them), compared value by value (nb_cmp_over_inputs).
 * The rule of an fp16 output (issue 26): when npu_dtype is "FLOAT16" and no value is more
 * than 2 of fp16's steps (nb_fp16_step) from the reference, the output agrees at fp16's own
 * resolution whatever its SQNR (hey_mycroft's score 1.19e-7 against 2e-10, -51 dB, is 2
 * steps of fp16's subnormal 5.96e-8), and its gate is 1. */
typedef struct nb_cmp_output_files_opts {
    int n_inputs;                  /* K >= 1 */
    const char *const *npu;        /* K .npy paths: the NPU's output of each input */
    const char *const *reference;  /* K .npy paths: the float reference's */
    const char *npu_dtype;         /* the NPU's dtype of the output ("FLOAT16", ...), or NULL */
} nb_cmp_output_files_opts;

typedef struct nb_cmp_output_files_result {
    char shape[128];               /* the NPU file's shape, "1x16x96" */
    nb_cmp_metrics *per_input;     /* K: each input's metrics (malloc'd) */
    nb_cmp_over_inputs acc;        /* finished: means, worst, pooled; numel */
    bool fp16_resolution;          /* the fp16 rule above holds */
    double gate;                   /* the cosine a fail-under threshold takes: 1 under the
                                      fp16 rule, else acc.gate; NaN when not defined */
} nb_cmp_output_files_result;

/* Compares the K pairs of files. Errors: NB_ERR_IO / NB_ERR_FORMAT (a file that cannot be
 * read as .npy, named), NB_ERR_DATA ("output 'x' of input k: N values from the NPU, M from
 * the reference"), NB_ERR_ARG (K < 1), NB_ERR_NOMEM. The result is freed by
 * nb_cmp_output_files_free, also after an error. */
nb_err nb_cmp_output_files(const nb_cmp_output_files_opts *o, nb_cmp_output_files_result *r,
                           nb_status *st);
void nb_cmp_output_files_free(nb_cmp_output_files_result *r);
/* The result as bringup's summary.json keeps each output: shape, numel, the means, worst and
 * pooled metrics over the K inputs (cosine, sqnr_db in dB, max_abs_error), worst_cosine (the
 * gate), npu_dtype, max_fp16_steps, agrees_at_fp16_resolution, and per_input [{npu,
 * reference, cosine, sqnr_db, max_abs_error, note}]. NaN is null. A new object
 * (engine/accucmp/cmp_json.c). */
json_t *nb_cmp_output_files_json(const nb_cmp_output_files_opts *o,
                                 const nb_cmp_output_files_result *r);

/* ---- file_compare: two dump sets matched and compared (engine/accucmp/compare.c) ---- */

/* Reads every dump under the comma-separated files and folders of spec (a file named as a
 * dump must parse; other files in the folders are passed over; ".tmp" files and
 * manifest.tsv are skipped), the tensors of want, by workers threads (0: one per core, at
 * most 4). Returns the count (> 0) with the dumps in *out (nb_dump_free each, then free),
 * or -1 with the error in st: NB_ERR_IO (a path that cannot be read), NB_ERR_FORMAT /
 * NB_ERR_DATA (a damaged dump, named), NB_ERR_ARG ("no dump file"), NB_ERR_NOMEM. */
int nb_dumps_read(const char *spec, int want, int workers, nb_dump **out, nb_status *st);

/* One row of the comparison: an output tensor of an NPU task, and the golden tensor it is
 * compared with (share/doc/metrics.md, "Matching"). */
typedef struct nb_cmp_row {
    int di, ti;                  /* the NPU dump (index into md) and its tensor */
    const nb_dump *npu;          /* that dump */
    const nb_dump_tensor *x;     /* that output */
    const nb_dump *gold;         /* the golden node's dump it is compared with, or NULL */
    const nb_dump_tensor *y;     /* its tensor, or NULL */
    char ground[512];            /* the CSV's GroundTruth: the golden node(s) */
    nb_cmp_metrics m;
    bool compared, fails;        /* compared: m holds the metrics; fails: over threshold */
    char reason[256];            /* why not compared, what crossed, or a metric's note */
    int step;                    /* an unrolled RNN step's row ("<layer>/t<s>"): s; else -1 */
    int64_t slice_off, slice_n;  /* the values compared: all (0, numel), or a step's slice of
                                    Y [seq, dirs, batch, hidden] */
    double step0_sqnr_db;        /* a step's row: SQNR of the same output at t0 (NaN else) */
    /* Tanh, Sigmoid: the share of the golden values whose input lies within +-1/16 (one table
       segment around 0, where the table's 8-bit fraction is coarse; the input recovered as
       atanh(y) or ln(y / (1 - y))); NaN for other ops */
    double table_small;
} nb_cmp_row;

typedef struct nb_compare_opts {
    const char *npu_dumps;       /* nanobench run --dump's folder (or files), comma-separated;
                                    a path that exists as given is taken whole */
    const char *golden_dumps;    /* nanobench infer --dump's folder: one reference run */
    nb_cmp_thresholds th;        /* nb_cmp_thresholds_default unless given */
    const char *keep_layer;      /* NULL, or a layer whose NPU values stay (nb_cmp_pick_layer) */
    int workers;                 /* reading threads; 0: one per core, at most 4 */
} nb_compare_opts;

/* The comparison and its verdict, as the vendor's analyser gives it (facts/accucmp.md). */
typedef struct nb_comparison {
    nb_dump *gd, *md;            /* golden dumps (sorted by node), NPU dumps */
    int ng, nm;
    void *golden_index;          /* the golden values by name (internal) */
    nb_cmp_row *rows;            /* one per NPU task output, in task order */
    int nr;
    nb_cmp_thresholds th;
    int n_compared, n_over;
    /* "global_consistency" (no row over threshold), "problem_node" (a network output is
       over too: a row whose golden tensor is marked network_output, else the last compared
       row) or "single_point_error"; with its sentence. A task
       that clamped values at fp16's 65504, when any row is over threshold, ranks above
       both: "fp16_saturation", its sentence naming that task and its count (issue 26:
       hey_mycroft's Pow_5 saturated and ReduceMean_2 was named) */
    const char *verdict, *verdict_text;
    char verdict_buf[512];
    int first_bad;               /* the first row over threshold, or -1 */
    int prev;                    /* the compared row before it, or -1 */
    /* first_bad's error: "accumulated" (prev, within every threshold as any row before
       first_bad, is within 3 dB of SQNR), else "introduced" */
    const char *origin;
    int worst, worst_prev;       /* the largest SQNR fall of a compared row from its own
                                    inputs (worst_prev: the compared row that writes the input
                                    of the lowest SQNR; a fused task's inputs are its group's),
                                    when first_bad exists and the fall is >= 6 dB; or -1
                                    (issue 37: it was measured from the row before in task
                                    order, a scalar ReduceMean at 86 dB for a Sub at 49) */
    int first_sat;               /* the first row whose task clamped results at fp16's 65504
                                    (or whose output holds such values), or -1 */
} nb_comparison;

/* Reads o->golden_dumps (golden dumps of one reference run: two of one node refused) and
 * o->npu_dumps (NPU dumps: each output matched to its golden tensor as it is read, through
 * the last node a fused task covers, else the ONNX value it holds; compared; its values
 * then freed but for o->keep_layer's), rows in task order, and the verdict above. A row
 * with NaN or infinity in the NPU output fails whatever the thresholds. No row compared
 * is not an error here (n_compared 0: the caller says so). Errors: those of
 * nb_dumps_read, and NB_ERR_ARG for a golden folder holding NPU dumps or the reverse.
 * c is freed on error. */
nb_err nb_compare(const nb_compare_opts *o, nb_comparison *c, nb_status *st);
void nb_comparison_free(nb_comparison *c);

/* The cause of row i as the comparison tells it: fp16 saturation at an earlier row
 * (c->first_sat) ranks above any threshold crossing after it -- everything downstream
 * inherits the clamped values (issue 26: hey_mycroft's Pow_5 saturated, ReduceMean_2 was
 * named) -- else nb_cmp_likely_cause's. Into buf; returns it. */
const char *nb_cmp_cause(const nb_comparison *c, int i, char *buf, size_t len);
/* The likely cause of a row's error, one line: of a layer over threshold (over) or of the
 * largest SQNR drop. In order: fp16 saturation (the task's clamp count or values at 65504;
 * a Log's -inf told apart), "none clear" when only RMSE or relative error (scale-dependent)
 * crosses at an SQNR of 30 dB or more, the Tanh/Sigmoid table (only when a quarter or more of
 * its inputs fall where the table is coarse: r->table_small; hey_mycroft's Sigmoid_28 on
 * inputs near -15.6 was named for it), accumulated RNN error, else quantization noise. buf holds the text when it has numbers in it; returns the text. */
const char *nb_cmp_likely_cause(const nb_cmp_row *r, bool over, char *buf, size_t len);

/* The row of layer name: the task of that name (its first compared output), else the first
 * row compared with the ONNX node of that name, else the last compared row of a task
 * covering that node. Errors: NB_ERR_ARG naming the layer (not compared, with the reason;
 * or no such layer in where). */
nb_err nb_cmp_pick_layer(const nb_comparison *c, const char *name, const char *where,
                         int *row, nb_status *st);
/* The NPU tasks of d's layer: d and every task covering a node d covers, in task order,
 * as indices into c->md (idx has room for c->nm). Returns their count. */
int nb_cmp_layer_tasks(const nb_comparison *c, const nb_dump *d, int *idx);

/* Claims a result file of its own in dir, result_{YYYYMMDDhhmmss}.csv (or _2, _3, ... in
 * the same second), created empty with O_EXCL; the name into path. Errors: NB_ERR_IO. */
nb_err nb_cmp_csv_claim(const char *dir, char *path, size_t len, nb_status *st);
/* Writes the vendor's CSV (facts/accucmp.md: Index, OpType, NPUDump, DataType,
 * GroundTruth, DataType, TensorIndex, Shape, OverFlow, the ten metrics, SQNR,
 * CompareFailReason) of c's rows to path (written to path.tmp.PID, renamed over it: never a
 * half CSV). Errors: NB_ERR_IO. */
nb_err nb_cmp_write_csv(const nb_comparison *c, const char *path, nb_status *st);

/* --isolate: a layer of the exeom run on the simulator with the golden values of its
 * first task's inputs, its output compared with the golden output. */
typedef struct nb_cmp_isolation {
    int k0, k1;                  /* the layer's first task and the one writing its output */
    nb_cmp_metrics m;            /* on golden input */
    const nb_cmp_row *chain;     /* the row of task k1 in c (the NPU's own input), or NULL */
    bool inherited;              /* chain's SQNR is over 3 dB below m's */
} nb_cmp_isolation;
/* Errors: NB_ERR_ARG (no NAME.dbg names the layers, no task computes layer, no golden dump
 * of its input or output), the ACL's (NB_ERR_FORMAT naming the error). Uses the ACL
 * runtime (aclInit .. aclFinalize) itself. */
nb_err nb_cmp_isolate(const nb_comparison *c, const char *layer, const char *exeom,
                      nb_cmp_isolation *iso, nb_status *st);

/* ---- the comparison as JSON, and one layer in detail (engine/accucmp/cmp_json.c) ---- */

/* The comparison as `compare file_compare --json` prints it (and the workbench and the Python
 * module read it): npu_dumps, golden_dumps, thresholds, verdict, verdict_text, the counts,
 * first_over_threshold (with origin and likely_cause), largest_sqnr_drop, first_saturation,
 * isolate (iso's result for iso_layer, when iso is not NULL) and rows (nb_cmp_row_json each).
 * NaN and infinite metrics are null. A new object the caller frees (json_decref). */
json_t *nb_comparison_json(const nb_compare_opts *o, const nb_comparison *cs,
                           const char *iso_layer, const nb_cmp_isolation *iso);
/* One row: index, layer, op_type, task, tensor_index, golden_node, shape, dtypes, compared,
 * the metrics (nb_cmp_metrics_json), over, saturations, reason, the dump paths, covers. */
json_t *nb_cmp_row_json(const nb_cmp_row *r, int index, const nb_cmp_thresholds *th);
/* The ten metrics of a compared row into o under msaccucmp's names in snake case (cosine,
 * max_abs_error, ..., sqnr_db in dB, rmse, kl); null when not compared or not finite. */
void nb_cmp_metrics_json(json_t *o, const nb_cmp_row *r);
/* The --threshold names a compared row crosses (cos, red, kl, rmse, mre), and "nonfinite" for
 * a NaN or an infinity in the NPU output. */
json_t *nb_cmp_over_json(const nb_cmp_row *r, const nb_cmp_thresholds *th);
json_t *nb_cmp_thresholds_json(const nb_cmp_thresholds *th);

#define NB_CMP_WORST_K 10 /* the worst elements `compare layer` lists */
#define NB_CMP_FIRST_N 16 /* the first elements it shows side by side */
typedef struct nb_cmp_layer_opts {
    const char *npu_dumps, *golden_dumps; /* as nb_compare_opts */
    const char *layer;                    /* a task, or an ONNX node a task covers */
    nb_cmp_thresholds th;
    int bins;                             /* error histogram bins, 1..NB_CMP_MAX_BINS; 0: 20 */
} nb_cmp_layer_opts;
typedef struct nb_cmp_layer_detail {
    nb_comparison cs;       /* the whole comparison (the layer's values kept) */
    bool compared;          /* cs holds a comparison (freed by nb_cmp_layer_detail_free) */
    int row;                /* the layer's row in cs (nb_cmp_pick_layer) */
    int64_t off, n;         /* the compared elements: all, or an RNN step's slice of Y */
    int64_t worst[NB_CMP_WORST_K]; /* flat indices, largest |npu - golden| first */
    int n_worst;
    int bins;
    double *edges;          /* bins + 1 edges of the npu - golden histogram */
    int64_t *counts, left_out; /* per bin; NaN or infinite errors left out */
    int *tasks, n_tasks;    /* the layer's NPU tasks (nb_cmp_layer_tasks) */
} nb_cmp_layer_detail;
/* `compare layer`: the comparison of the two dump sets, the layer's row, its worst elements
 * and its error histogram. Errors: nb_compare's, nb_cmp_pick_layer's (NB_ERR_ARG naming the
 * layer), NB_ERR_ARG for bins out of range, NB_ERR_NOMEM. d is freed on error. */
nb_err nb_cmp_layer(const nb_cmp_layer_opts *o, nb_cmp_layer_detail *d, nb_status *st);
void nb_cmp_layer_detail_free(nb_cmp_layer_detail *d);
/* The detail as `compare layer --json` prints it: the row's identity and dumps, metrics,
 * thresholds, over, reason, tasks, worst (with error), first, histogram. */
json_t *nb_cmp_layer_json(const nb_cmp_layer_detail *d);

/* The golden dumps of one reference run (nanobench infer --dump): the model's float inputs
 * as "Input" dumps (what a first layer reads) and each node's float outputs, in graph
 * order (ex ran with keep_all), into the folder dir, written as dir.tmp.PID and published
 * whole (nb_publish_dir: an earlier golden dump there is replaced, a folder of the user's
 * files merged into). Stale temporaries of killed runs removed first. The node dumps'
 * count into *n (may be NULL). On error nothing is left under dir. Errors: NB_ERR_IO,
 * NB_ERR_NOMEM. */
struct nb_model;
struct nb_exec;
nb_err nb_dump_golden_run(const struct nb_model *m, const struct nb_exec *ex, const char *dir,
                          int *n, nb_status *st);

/* msaccucmp's convert (compare convert): every tensor of the dump file or folder src as a
 * float32 .npy (bin: raw float32) named <dump file>.<input|output>.<i>.<shape>.<npy|bin>,
 * beside each dump file, or in the folder out: written as OUT.tmp.PID and published whole
 * (an earlier OUT's converted files replaced, nothing left on error). progress(user,
 * "convert", 0, 1) before the temporary folder exists and (1, 1) after (a Ctrl-C handler's
 * window), may be NULL. The files written into *written. Errors: nb_dumps_read's, NB_ERR_IO,
 * NB_ERR_ARG (a path too long), NB_ERR_NOMEM. */
nb_err nb_dump_convert(const char *src, bool bin, const char *out, nb_progress_fn progress,
                       void *user, int *written, nb_status *st);

/* ---- nanobench infer: the golden side of a comparison (engine/accucmp/golden.c) ---- */

/* What to run: the float32 reference on the model's inputs, each given either as a spec
 * "[NAME=]FILE" (FILE a .npy of the input's dtype and shape, a raw .bin of its dtype and
 * static shape, or random[:SEED], uniform in [-1,1), float inputs only; NAME= may be left out
 * with one model input; NAME is the shortest prefix before an '=' that names an input), or
 * as tensors in the graph's input order. */
typedef struct nb_infer_opts {
    const char *model;              /* .onnx */
    const char *input_shape;        /* "name:n,c,h,w;..." or NULL */
    int n_inputs;
    const char *const *inputs;      /* n_inputs specs, or NULL with tensors */
    const nb_tensor *const *tensors; /* n_inputs values in graph input order, or NULL */
    const char *output_dir;         /* each output as OUTPUT_DIR/<safe name>.npy and
                                       manifest.tsv; NULL: nothing written */
    bool dump_all;                  /* with output_dir: every input and intermediate too */
    const char *golden_dir;         /* one golden dump per node (nb_dump_golden_run), or NULL */
    /* called with ("golden_dump", 0, 1) before golden_dir is written and (.., 1, 1) after
       (a Ctrl-C handler's window), may be NULL */
    nb_progress_fn progress;
    void *user;
} nb_infer_opts;

typedef struct nb_infer_file {
    char *name;        /* the tensor's name */
    char *path;        /* OUTPUT_DIR/<file>.npy, or NULL when nothing was written */
    const char *kind;  /* "output", "input", "constant", "intermediate", "subgraph" */
    const nb_tensor *t; /* held by the result's exec */
} nb_infer_file;

typedef struct nb_infer_result {
    struct nb_model *model;  /* the loaded model (owned) */
    struct nb_exec *exec;    /* its execution, holding the files' tensors (owned) */
    nb_infer_file *files;    /* the outputs in graph order, then (dump_all) the rest */
    int n_files, n_outputs;
    int files_cap;           /* internal: files' capacity */
    double ms;               /* the reference run's wall time, ms */
    int golden_dumps;        /* node dumps written into golden_dir */
    const char **input_files; /* per opts input: the file read, NULL for random or tensors */
} nb_infer_result;

/* Runs the float32 reference on the given inputs and writes what opts asks. OUTPUT_DIR's
 * files are written into OUTPUT_DIR/.nb-infer.PID and moved in only when all are written,
 * then manifest.tsv (name, file, kind, dtype, shape; names escaped by nb_put_escaped);
 * files an earlier manifest listed and this run did not write are removed; any other file
 * in the folder is never written over (the name takes a _2, _3 suffix). Errors: NB_ERR_ARG
 * (an input that is not the model's, given twice or missing, a dtype or shape that does not
 * match, a symbolic dim of two sizes, random for a non-float input, a bad seed), the
 * loader's, the executor's, NB_ERR_IO (a folder in the way, a file not written: nothing is
 * moved in), NB_ERR_NOMEM. On error r holds nothing to free. */
nb_err nb_infer(const nb_infer_opts *o, nb_infer_result *r, nb_status *st);
void nb_infer_result_free(nb_infer_result *r);
/* The result as `infer --json` prints it: outputs [{name, file (or null), dtype, shape, min,
 * max, mean, first (8 values); values (every value) when values is set: the Python
 * module's}], tensors_written, golden_dumps, reference_ms. NaN is null. A new object
 * (engine/accucmp/cmp_json.c). */
json_t *nb_infer_result_json(const nb_infer_result *r, bool values);
/* The file DIR/manifest.tsv lists for tensor name, as DIR/FILE into path; false when the
 * manifest or the name is not there. */
bool nb_infer_manifest_file(const char *dir, const char *name, char *path, size_t len);

#ifdef __cplusplus
}
#endif
#endif
