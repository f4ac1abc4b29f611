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
} nb_dump;

/* What nb_dump_read keeps: inputs, outputs (values decoded for those kept). */
#define NB_DUMP_INPUTS 1
#define NB_DUMP_OUTPUTS 2
/* Reads a dump file, keeping the tensors of want (NB_DUMP_INPUTS | NB_DUMP_OUTPUTS).
 * Errors: NB_ERR_IO, NB_ERR_FORMAT (not a dump: another kind of file), NB_ERR_DATA (a dump
 * with a bad version, dtype, format, shape, or data that does not fill its shape in its
 * format), NB_ERR_NOMEM. */
nb_err nb_dump_read(const char *path, int want, nb_dump *d, nb_status *st);
void nb_dump_free(nb_dump *d);

/* Writes a golden dump (source "golden") of one ONNX node: its float outputs (names and
 * tensors, n of them) as FLOAT ND, named {op_type}.{op_name}.{index}.0.{timestamp} in dir
 * (the name cleaned as the simulator's). Errors: NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_dump_write_golden(const char *dir, const char *op_name, const char *op_type,
                            uint32_t index, const char *const *names,
                            const nb_tensor *const *ts, int n, nb_status *st);

#ifdef __cplusplus
}
#endif
#endif
