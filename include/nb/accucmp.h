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
