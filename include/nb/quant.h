/* nanobench post-training quantization (engine/quant): AMCT's calibration config, the
 * activation calibration algorithms over histograms, and the weight quantizer (ARQ).
 *
 * Conventions are AMCT's (../shared/docs/facts/quant.md section 1.1): fake quantization is
 * q = clip(round(x / scale) + offset, qmin, qmax), x' = (q - offset) * scale, with
 * [qmin, qmax] = [-2^(n-1), 2^(n-1) - 1]; weights are symmetric (offset 0).
 */
#ifndef NB_QUANT_H
#define NB_QUANT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb/status.h"
#include "nb/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the calibration config (AMCT's AMCTConfig, protobuf text format) ---- */

typedef enum nb_act_algo {
    NB_ACT_IFMR,       /* AMCT's default: clip search around percentile points, least L2 */
    NB_ACT_HFMG,       /* AMCT: merged histogram, tail trimming, analytic L2 cost */
    NB_ACT_MINMAX,     /* peers: the observed range */
    NB_ACT_PERCENTILE, /* peers (ONNX Runtime): the 99.999 % points */
    NB_ACT_KL,         /* peers (TensorRT): least KL divergence, 2048 bins to 128 levels */
    NB_ACT_AUTO        /* per layer, the method with the best layer SQNR */
} nb_act_algo;

/* How the weights are rounded to ARQ's levels (the scale is ARQ's either way). */
typedef enum nb_weight_round {
    NB_ROUND_NEAREST,  /* ARQ's round to nearest (ties to even): the default */
    NB_ROUND_ADAROUND  /* AdaRound: up or down as learned on the layer's calibration inputs
                          (AMCT's ada_quantize; nb_adaround) */
} nb_weight_round;

/* AdaRound's settings (AMCT's ada_quantize fields, quant.md 1.4). iters: Adam steps per
 * layer (AMCT's num_iteration is 10000; nanobench's default 500, with lr 0.03 in place of
 * the paper's 1e-3, keeps a layer under a second); reg: lambda (reg_param, 0.01); beta from
 * beta_start (20) to beta_end (2); warm: the share of the steps before the regularizer
 * starts (warm_start, 0.2). */
typedef struct nb_ada_params {
    int iters;
    float reg, beta_start, beta_end, warm, lr;
} nb_ada_params;

/* One CalibrationConfig: the weight and activation algorithms of a layer. Every field has
 * AMCT's default after nb_calib_defaults(). */
typedef struct nb_calib_cfg {
    bool channel_wise;     /* arq_quantize.channel_wise (true): a scale per output channel */
    int weight_bits;       /* arq_quantize.quant_bits: 8, or 4 for the cube's s8 x s4 */
    nb_act_algo act;       /* ifmr_quantize / hfmg_quantize present, or --algo */
    float search_range_start, search_range_end, search_step; /* IFMR: 0.7, 1.3, 0.01 */
    float max_percentile, min_percentile;                    /* IFMR: 0.999999 each */
    int num_of_bins;       /* HFMG: 4096 (1024, 2048, 4096 or 8192) */
    int asymmetric;        /* -1: the global activation_offset; 0 or 1 set for the layer */
    int act_bits;          /* dst_type: 8 (INT8) or 16 (INT16: the cube's s16 x s8) */
    nb_weight_round weight_round; /* weight_round: NEAREST | ADAROUND, or ada_quantize { } */
    bool weight_round_given; /* set in this override's own calibration_config (an override
                                of it wins over nb_calibrate_opts.weight_round) */
    nb_ada_params ada;     /* ada_quantize's fields */
} nb_calib_cfg;

typedef struct nb_calib_override {
    char *key;             /* layer type or layer name */
    nb_calib_cfg cfg;
    int line;              /* where it was given, for messages */
} nb_calib_override;

typedef struct nb_quant_config {
    int batch_num;             /* 1 unless given */
    bool batch_num_set;
    bool activation_offset;    /* true: asymmetric activations (AMCT's default) */
    bool force_fp16_quant;     /* fakequant_precision_mode: FORCE_FP16_QUANT */
    bool do_fusion;            /* Conv + BatchNormalization folded before quantizing (true) */
    int n_skip_layers, n_skip_types, n_skip_fusion;
    char **skip_layers, **skip_layer_types, **skip_fusion_layers;
    nb_calib_cfg common;       /* common_config */
    int n_by_type, n_by_name;
    nb_calib_override *by_type; /* override_layer_types */
    nb_calib_override *by_name; /* override_layer_configs */
} nb_quant_config;

/* AMCT's defaults for one layer (IFMR, channel-wise int8 weights, int8 activations). */
void nb_calib_defaults(nb_calib_cfg *c);
/* An empty config: every default, batch_num 1. */
void nb_quant_config_init(nb_quant_config *c);

/* Parses the protobuf text format of AMCT's config: the fields batch_num,
 * activation_offset, skip_layers, skip_layer_types, fakequant_precision_mode
 * (FORCE_FP16_QUANT), do_fusion, skip_fusion_layers, common_config, override_layer_types
 * { layer_type calibration_config }, override_layer_configs { layer_name
 * calibration_config }; in a calibration_config: arq_quantize { channel_wise quant_bits },
 * ada_quantize { num_iteration reg_param beta_range_start beta_range_end warm_start
 * channel_wise quant_bits } (AMCT's AdaRound: ARQ's scales, learned rounding; one choice
 * with arq_quantize), weight_round: NEAREST | ADAROUND (nanobench's: ARQ's rounding, or
 * AdaRound with ada_quantize's defaults; next to arq_quantize, not to ada_quantize),
 * ifmr_quantize { search_range_start search_range_end search_step max_percentile
 * min_percentile asymmetric dst_type }, hfmg_quantize { num_of_bins asymmetric dst_type }.
 * Syntax: "field: value" or "field { ... }" / "field: { ... }", '#' comments, optional ','
 * or ';' between fields, strings in double or single quotes. An override starts from
 * common_config (wherever common_config appears in the file) and replaces what it sets.
 * Errors: NB_ERR_FORMAT "path:line:col: message" for a syntax error, an unknown field, a
 * bad value or a repeated singular field. */
nb_err nb_quant_config_parse(const char *text, size_t len, const char *path,
                             nb_quant_config *c, nb_status *st);
/* Reads and parses a config file. Errors: NB_ERR_IO naming the file, and the above. */
nb_err nb_quant_config_load(const char *path, nb_quant_config *c, nb_status *st);
void nb_quant_config_free(nb_quant_config *c);

/* The config of a layer: override_layer_configs for its name, else override_layer_types
 * for its op type, else common_config (AMCT's priority rule). */
const nb_calib_cfg *nb_quant_config_for(const nb_quant_config *c, const char *layer,
                                        const char *op_type);
/* True when the layer is in skip_layers or its type in skip_layer_types. */
bool nb_quant_config_skips(const nb_quant_config *c, const char *layer, const char *op_type);
const char *nb_act_algo_name(nb_act_algo a);
/* The algorithm named name (ifmr, hfmg, minmax, percentile, kl, auto) into *a; false when
 * name is none of them. */
bool nb_act_algo_parse(const char *name, nb_act_algo *a);

/* ---- activation statistics: one histogram per tensor, merged across batches ---- */

typedef struct nb_hist {
    int bins;
    double lo, hi;     /* the range the bins cover (lo == hi: every value seen was lo) */
    double *count;     /* bins counts (fractional after a re-spread) */
    double total;      /* samples counted */
    double min, max;   /* the extremes seen */
} nb_hist;

/* An empty histogram of bins bins (>= 2). Errors: NB_ERR_NOMEM, NB_ERR_ARG. */
nb_err nb_hist_init(nb_hist *h, int bins, nb_status *st);
void nb_hist_free(nb_hist *h);
/* Adds n float32 samples. When they fall outside the range, the range widens to the union
 * and the old counts are re-spread over the new bins, each bin's mass taken as uniform and
 * split in proportion to its overlap (AMCT HFMG's merge; ../shared/docs/facts/quant.md
 * 1.3). A NaN or an infinity is NB_ERR_DATA (the caller names the tensor). */
nb_err nb_hist_add(nb_hist *h, const float *x, int64_t n, nb_status *st);
/* The value below which a fraction q (0..1) of the samples lie, interpolated inside the
 * bin (uniform mass per bin). */
double nb_hist_quantile(const nb_hist *h, double q);

/* ---- scale and offset (AMCT CalScaleOffset) ---- */

typedef struct nb_qparams {
    double clip_min, clip_max; /* the range the algorithm chose */
    float scale;               /* scale_d */
    int offset;                /* offset_d: 0 when symmetric */
    int bits;                  /* 8 or 16 (activations), 8 or 4 (weights) */
    bool asymmetric;
} nb_qparams;

/* Scale and offset of the range [lo, hi] on bits bits (AMCT, quant.md 1.1): symmetric,
 * M = the bound of larger magnitude, scale = M / (2^(n-1) - 1) when M > 0, else
 * |M| / 2^(n-1), offset 0; asymmetric, the range widened to hold 0, scale = (hi - lo) /
 * (2^n - 1), offset = -2^(n-1) - round(lo / scale). A scale below 1.192092896e-07 becomes
 * 1. */
void nb_qparams_from_range(double lo, double hi, int bits, bool asymmetric, nb_qparams *q);
/* AMCT's fake quantization: q = clip(round(x / scale) + offset, -2^(n-1), 2^(n-1) - 1)
 * (round half to even, as AscendQuant's Round and ONNX QuantizeLinear), x' = (q - offset)
 * x scale. */
double nb_fake_quant(double x, const nb_qparams *q);
int32_t nb_quantize_value(double x, const nb_qparams *q);

/* ---- activation algorithms, all on the histogram of one tensor ---- */

/* Chooses the clip range and quantization parameters of an activation with algorithm a
 * (not NB_ACT_AUTO), on cfg's act_bits and asymmetric (-1 taken as activation_offset):
 * - IFMR (AMCT): clip_max_init and clip_min_init at the max_percentile and
 *   1 - min_percentile points of the cumulative histogram; candidates init x s for s from
 *   search_range_start to search_range_end by search_step (symmetric: of the larger
 *   magnitude; asymmetric: the max only, the min kept); the least sum of squared error of
 *   the fake-quantized histogram (bin centres) wins (quant.md 1.2);
 * - HFMG (AMCT, PyTorch's HistogramObserver): tails trimmed step by step (1e-5 of the mass),
 *   each candidate [l, r] scored by the analytic L2 error of re-quantizing the source
 *   bins into 2^bits levels (clipping included); stops when the error grows (quant.md
 *   1.3); unlike PyTorch the untrimmed range is the first candidate, so a sparse tail
 *   that costs more to clip than to quantize stays;
 * - MinMax: the range seen; Percentile: the 0.001 % and 99.999 % points (ONNX Runtime);
 * - KL: TensorRT's entropy calibration on |x| in 2048 bins to 128 levels, threshold of
 *   least KL(P || Q), symmetric; non-negative data with asymmetric activations takes
 *   [0, T] on 256 levels.
 * Errors: NB_ERR_DATA when the histogram is empty. */
nb_err nb_act_calibrate(const nb_hist *h, nb_act_algo a, const nb_calib_cfg *cfg,
                        bool activation_offset, nb_qparams *out, nb_status *st);

/* 10 log10(signal / noise) of the histogram's data (bin centres) against its fake
 * quantization with q: INFINITY when nothing is lost. */
double nb_hist_sqnr(const nb_hist *h, const nb_qparams *q);

/* ---- weights: ARQ ---- */

/* AMCT ARQ (quant.md 1.4): symmetric weights, one scale per output channel (channel_wise)
 * or one for the tensor; scale = max|w| / (2^(bits-1) - 1) (1 when the channel is all
 * zero). The weights are addressed as w[(o * channels + c) * inner + i] for channel c:
 * Conv [Cout, Cin, k..] is outer 1, inner Cin x k; MatMul B [K, N] is outer K, inner 1.
 * Writes scales[channels] (all equal when per tensor) and q (the integers, in
 * [-(2^(bits-1) - 1), 2^(bits-1) - 1]). bits is 8 or 4. Errors: NB_ERR_DATA for a NaN or
 * an infinity (naming the flat index), NB_ERR_ARG. */
nb_err nb_arq_quantize(const float *w, int64_t outer, int64_t channels, int64_t inner,
                       int bits, bool channel_wise, float *scales, int8_t *q, nb_status *st);

/* nanobench's AdaRound settings (nb_ada_params above). */
void nb_ada_defaults(nb_ada_params *a);
/* AdaRound (Nagel et al. 2020; AMCT's ada_quantize, quant.md 1.4) of one layer's weights
 * as a matrix w [cout, k] (float, row c = output channel c's weights, k = what one output
 * reads: Cin x kernel for a Conv, K for a Gemm), on its per-row scales scale[cout] (ARQ's,
 * kept): the integers q [cout, k] in [-(2^(bits-1) - 1), 2^(bits-1) - 1], each weight
 * rounded down or up as minimizes sum over the p samples of (xq_p . q_c scale_c - x_p .
 * w_c)^2 -- x [p, k] the layer's float inputs as rows (a Conv's im2col patches), xq [p, k]
 * the same quantized as the layer sees them (may be x) -- plus the rounding regularizer,
 * by pr->iters Adam steps on the rectified sigmoid h(V) (zeta 1.1, gamma -0.1). A row whose
 * learned rounding is not better than round-to-nearest on the samples keeps nearest, so
 * the layer's loss on the samples is never above nearest's. *n_changed (or NULL): the
 * weights rounded otherwise than to nearest. Deterministic. bits 8 or 4. Errors:
 * NB_ERR_ARG (no rows, samples or weights), NB_ERR_NOMEM. */
nb_err nb_adaround(const float *w, const float *scale, int64_t cout, int64_t k, const float *x,
                   const float *xq, int64_t p, int bits, const nb_ada_params *pr, int8_t *q,
                   int64_t *n_changed, nb_status *st);
/* "nearest" / "adaround" (lower case; the config takes NEAREST / ADAROUND). */
const char *nb_weight_round_name(nb_weight_round r);
/* true when name (any case) is nearest or adaround */
bool nb_weight_round_parse(const char *name, nb_weight_round *r);

/* ---- the fake-quant model ---- */

/* One quantized layer as the model writers take it. */
typedef struct nb_qlayer {
    const char *node;        /* the layer's node name (in the model or an If branch) */
    int act_bits;            /* 8, or 16 (the cube's s16 x s8) */
    int weight_bits;         /* 8, or 4 (stored as int8 values in [-7, 7]) */
    float scale_d;
    int offset_d;
    int64_t channels;        /* scale_w entries: 1 per tensor */
    const float *scale_w;
    const int8_t *w_q;       /* the quantized weights, in the initializer's layout */
    int w_rank;
    const int64_t *w_dims;
    int64_t w_numel;
    int64_t w_axis;          /* the output-channel axis of the weights */
    const float *bias;       /* channels float biases (bias-corrected) replacing the layer's,
                                or NULL to keep it (Conv, ConvTranspose, Gemm only) */
    /* LSTM and GRU (r_q not NULL; one direction): W is [1, G x H, I] and channels = G x H
       gate rows (axis 1); the recurrent weights R [1, G x H, H] per gate row as W, and the
       hidden state h entering the recurrent product, int8 per tensor (symmetric:
       offset_h 0), AMCT's record fields scale_h/offset_h/scale_r/offset_r. */
    const int8_t *r_q;
    const float *scale_r;
    const int64_t *r_dims;
    int64_t r_numel;
    float scale_h;
    int offset_h;
    /* LSTM and GRU: the float bias B of 2 x channels values (W's gate rows, then R's) as
       calibrate read it, folded (a Cast of an fp16 initializer, a Constant node), or NULL
       to read the model's initializer */
    const float *rnn_bias;
    /* Conv + BatchNormalization fused (AMCT's do_fusion): w_q and bias are the folded ones;
       the writers remove the BatchNormalization that alone reads the Conv's output and give
       its output to the Conv */
    bool fused_bn;
    /* a MatMul of two activations (attention's Q x K^T and weights x V): no weights (w_q
       NULL, channels 1, scale_w[0] 1); its second operand B is quantized per tensor like
       x, int8 with scale_b and offset_b (AMCT's record has no such field: written as
       scale_b and offset_b). The deploy model quantizes B by an AscendQuant of its own
       ("<layer>/AscendQuant_b"); both zero points are taken off at run time. */
    bool act_b;
    float scale_b;
    int offset_b;
} nb_qlayer;

/* Writes dst: the model src with, for each layer, its input activation through
 * QuantizeLinear -> DequantizeLinear (scale_d; zero point offset_d, int8: the same rounding
 * and saturation as AscendQuant) and its weights replaced by DequantizeLinear(int8 w_q,
 * scale_w, zero point 0, axis = w_axis), so that ONNX Runtime runs what the NPU computes up
 * to the int32 accumulation. A MatMul's weights are the same dequantized values as a float
 * initializer (through an Identity): with DequantizeLinear on both operands ONNX Runtime
 * fuses MatMulIntegerToFloat, which saturates on weights near +-127. An LSTM or GRU also
 * reads R through DequantizeLinear(int8 r_q, scale_r, axis 1) and its initial_h through
 * QuantizeLinear -> DequantizeLinear (scale_h): the standard op cannot quantize the state
 * of later steps, which nanobench's own evaluation does (nb_kctx.rnn_cube_h). An int16
 * activation (the cube's s16 x s8; QuantizeLinear takes
 * int16 only from opset 21) is the same arithmetic in float ops: Div, Round, Add, Clip,
 * Sub, Mul. fp16_scales: scale_d rounded to fp16 (AMCT's FORCE_FP16_QUANT). Written to
 * dst.tmp and renamed. Errors: NB_ERR_UNSUPPORTED below opset 13, NB_ERR_GRAPH for a layer
 * not in the model, NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_write_fake_quant(const char *src, const char *dst, const nb_qlayer *ls, int n,
                           bool fp16_scales, nb_status *st);

/* Writes AMCT's record file (protobuf text, quant.md 1.7): per layer record { key: "<node>"
 * value { scale_d offset_d scale_w... offset_w: 0... [LSTM/GRU: scale_h offset_h
 * scale_r... offset_r: 0...] act_type wts_type } }, through
 * path.tmp and a rename. Errors: NB_ERR_IO. */
nb_err nb_write_record(const char *path, const nb_qlayer *ls, int n, nb_status *st);

/* ---- QAT import ---- */

typedef struct nb_qdq_model {
    int n;
    nb_qlayer *l; /* owned: node names, scale_w, w_q, w_dims */
} nb_qdq_model;

/* Reads a model exported from QAT (PyTorch's QuantizeLinear/DequantizeLinear pairs): each
 * Conv, ConvTranspose, MatMul and Gemm (If branches included: a branch's layer may read
 * Q/DQ nodes and constants of the graphs around it) must read DequantizeLinear(QuantizeLinear(x)) (one
 * scale and zero point: scale_d, offset_d; a uint8 zero point z is offset z - 128, an int16
 * one makes int16 activations) and DequantizeLinear of int8 constant weights (or of
 * QuantizeLinear of float weights) with zero point 0 (scale_w per tensor or per output
 * channel). Writes stripped: the model with those Q/DQ nodes removed (the layers read x and
 * the weights' source), for the deploy writer. Errors: NB_ERR_GRAPH for a layer that is not
 * so quantized or has no name, NB_ERR_UNSUPPORTED for asymmetric or non-int8 weights, a
 * per-channel activation scale, LSTM/GRU; NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_read_qdq(const char *src, const char *stripped, nb_qdq_model *out, nb_status *st);
void nb_qdq_model_free(nb_qdq_model *m);
/* Whether g (or one of its subgraphs) holds a QuantizeLinear or DequantizeLinear node: a
 * model exported from QAT (or quantized by ONNX Runtime's tools), whose scales are in the
 * file. calibrate refuses it (its scales would be calibrated over); bringup imports it with
 * nb_qat_import; atc compiles it as it is. */
struct nb_graph;
bool nb_graph_has_qdq(const struct nb_graph *g);
/* Rewrites the ONNX file path with its graph inputs' shapes as shape ("name:d0,d1;...",
 * --input_shape's syntax) gives them (dim_params replaced by values): the deploy and
 * fake-quant models carry the shapes they were calibrated with, so that atc needs no
 * --input_shape again. Inputs shape does not name, or of another rank, are left as they
 * are. Errors: those of the parser and the reader; NB_ERR_IO. */
nb_err nb_write_input_shapes(const char *path, const char *shape, nb_status *st);

/* What the model writers need of src, checked before any file is written: each layer's
 * node name names exactly one node (an unnamed node has a name only in nanobench's IR),
 * and no tensor or node is named as one the writers add ("<layer>/scale_d", ...).
 * Errors: NB_ERR_UNSUPPORTED naming the layer, NB_ERR_IO, NB_ERR_FORMAT. */
nb_err nb_check_layers(const char *src, const nb_qlayer *ls, int n, nb_status *st);

/* ---- the compiler's input ---- */

/* One quantized cube op of the compiler's input, as the deploy model holds it. */
typedef struct nb_npu_layer {
    char *node;             /* the node's name */
    float quant_scale;      /* its AscendQuant: scale (1 / scale_d), offset, dst_bits */
    float quant_offset;
    int act_bits;
    int weight_bits;        /* 8, or 4 (s8 x s4: the deploy node's weight_bits attribute;
                               its int8 values within [-8, 7]) */
    int w_rank;             /* the int8 weights in the initializer's layout */
    int64_t w_dims[NB_MAX_RANK];
    int64_t w_numel;
    int8_t *w;
    int64_t channels;       /* bias and deq_scale entries */
    int32_t *bias;          /* int32 bias (the activation offset folded in) */
    uint64_t *deq_scale;    /* fp32 bits in the low 32 (AscendDequant's) */
    /* LSTM, GRU (r not NULL): W above is [1, G x H, I], bias and deq_scale are W's; R
       [1, G x H, H] int8 with its own int32 bias and deq_scale; the state's quantization
       (h_scale = 1 / scale_h, h_offset) */
    int8_t *r;
    int64_t r_dims[3], r_numel;
    int32_t *bias_r;
    uint64_t *deq_r;
    float h_scale, h_offset;
    /* a MatMul of two activations: the second operand's AscendQuant (b_scale = 1 / its
       scale_d, b_offset; 0 when the layer has constant weights). The calibration does not
       produce such layers yet; the compiler and the simulator take them. */
    float b_scale, b_offset;
} nb_npu_layer;

typedef struct nb_npu_input {
    uint8_t *onnx;   /* the model in float form (serialized ONNX) for the lowering */
    size_t len;
    int n_layers;    /* the quantized cube ops */
    nb_npu_layer *layers;
    int form;        /* 0: float, 1: deploy model (AscendQuant / AscendDequant), 2: Q/DQ */
} nb_npu_input;

/* Reads what the compiler takes (issue 5): a deploy model (AscendQuant -> cube op in the
 * NPU domain -> AscendDequant, nb_write_deploy) or a Q/DQ model (read as nb_read_qdq and
 * converted to the deploy form), collapsed into the standard ops the lowering reads (the
 * cube op on x and its integer constants as float), the names of the quantized layers in
 * out->layers; a float model is passed through (form 0, no layers). out_nodes (ATC's
 * "node:index;...", or NULL) cuts the graph: those outputs become the graph's, the nodes and
 * inputs they do not need are removed. work_dir: a private folder for the Q/DQ conversion's
 * two files (removed again). Every constant a layer reads must hold its dims' data and its
 * AscendQuant a positive finite scale, an integer offset and 8 or 16 bits. Errors: those of the readers; NB_ERR_GRAPH for an
 * NPU op without its AscendQuant/AscendDequant; NB_ERR_ARG (E10001 message) for a bad
 * --out_nodes entry; NB_ERR_NOMEM. The file passes the importer's gate (nb_onnx_decode)
 * before anything here reads it; a float or Q/DQ model (no op of the NPU domain) is loaded
 * whole by the importer first (nb_model_load with input_shape, NULL for the declared
 * shapes), so that it meets every check every other command makes. */
nb_err nb_read_npu_input(const char *src, const char *input_shape, const char *out_nodes,
                         const char *work_dir, nb_npu_input *out, nb_status *st);
void nb_npu_input_free(nb_npu_input *in);

/* ---- calibrate and QAT import: the steps as entry points (engine/quant/calibrate.c) ---- */

struct nb_model; /* nb/ir.h */


typedef struct nb_calibrate_opts {
    const char *model;        /* the float ONNX model */
    const char *input_shape;  /* "x:1,16,96;..." for dynamic dims (and the data order), or NULL */
    const char *save_path;    /* DIR/PREFIX: PREFIX_quant_record.txt, PREFIX_fake_quant_model.onnx,
                                 PREFIX_deploy_model.onnx (AMCT's names) */
    const char *data_dirs;    /* "dir_x;dir_y": one folder per input, one file per batch in
                                 name order (.npy, or raw .bin of the input's shape) */
    const char *data_types;   /* "float32;int64", one per input, or NULL (each model input's own dtype) */
    const char *eval_dirs;    /* a separate evaluation set as data_dirs, or NULL (the first 8
                                 calibration batches) */
    /* in memory instead of folders (the Python module): batches[b * n_inputs + i] is batch
       b of input i (in the model's input order, or input_shape's), n_batches of them;
       eval_batches likewise (NULL: the first 8 calibration batches). data_dirs is then
       NULL and batch_num 0 (every batch given) */
    const nb_tensor *const *batches;
    int n_batches;
    const nb_tensor *const *eval_batches;
    int n_eval_batches;
    const char *config_path;  /* AMCT's protobuf text config, or NULL */
    int batch_num;            /* 0: the config's (1 when none); > 0: that many; -1: every file
                                 (the fewest over the folders) */
    bool algo_set;            /* algo replaces the config's activation algorithm */
    nb_act_algo algo;
    bool no_bias_correction;
    /* weight_round_set: weight_round replaces the config's common_config and
       override_layer_types rounding; an override_layer_configs / override_layer_types
       entry that sets weight_round (or ada_quantize) itself keeps its own */
    bool weight_round_set;
    nb_weight_round weight_round;
    const char *cpu_nodes;    /* "a;b": nodes the MCU's CPU runs (atc --cpu_nodes): their cube
                                 ops stay float, not calibrated; NULL: none */
    nb_progress_fn progress;  /* or NULL */
    nb_warn_fn warn;          /* or NULL */
    /* a front end's cancel flag, or NULL: nonzero before a calibration or evaluation batch
       stops the step with NB_ERR_CANCELLED, its .part files removed */
    const volatile sig_atomic_t *cancel;
    /* called once the model is loaded and checked (before any batch), or NULL */
    void (*on_model)(void *user, const struct nb_model *m);
    void *user;
} nb_calibrate_opts;

/* One quantized layer, as the report shows it. SQNRs in dB against float (NaN when not
 * evaluated, +inf when exact). */
typedef struct nb_calib_layer_report {
    const char *name;         /* the node */
    const char *op_type;      /* its op type */
    const char *fused_bn;     /* the BatchNormalization folded into it, or NULL */
    bool rnn;                 /* LSTM / GRU: the h_ and r_ fields hold the state's */
    nb_act_algo algo;         /* the activation algorithm that chose its clip range */
    double clip_min, clip_max, scale_d;
    int offset_d, act_bits, weight_bits;
    bool channel_wise;
    int64_t channels;
    const float *scale_w;     /* per channel (channels of them) */
    const float *bias;        /* the float bias the deploy model takes (channels of them):
                                 the model's (a folded BatchNormalization's), corrected for
                                 the weights' quantization error unless no_bias_correction;
                                 NULL for an LSTM/GRU */
    double act_sqnr, w_sqnr;  /* each tensor's fake quantization */
    double out_sqnr, out_cos; /* the layer alone on fake-quantized input and weights */
    bool evaluated;
    int batches;              /* calibration batches that reached it (fewer in an If branch) */
    double h_clip_min, h_clip_max, scale_h, h_sqnr, r_sqnr;
    int offset_h, h_bits;
    const float *scale_r;
    double zeroed;            /* the share of its nonzero input int8 rounds to 0 */
    bool suggests_int16;      /* zeroed over 20% at int8 (not an RNN); on the NPU int16 is
                                 the better, even where it is not enough (suggests_cpu) */
    double zeroed16;          /* per calibration input, the largest share of its nonzero input
                                 values an int16 step over the clip range rounds to 0 */
    int zeroed16_input;       /* that input (batch index) */
    int zeroed16_over;        /* the inputs that lose more than 20% at int16 */
    bool suggests_cpu;        /* one does: no quantization the cube takes holds the input */
    char int16_override[600]; /* the config line that calibrates it at INT16 */
    /* a MatMul of two activations: its second operand's range, scale, offset and SQNR
       (int8, the algorithm chosen for x); no weights (channels 1, scale_w 1) */
    bool act_b;
    double b_clip_min, b_clip_max, scale_b, b_sqnr;
    int offset_b;
    /* the weights' rounding applied (NEAREST when AdaRound was asked for a layer it does
       not take: ConvTranspose, a grouped Conv, an RNN, no samples), the weights it rounded
       otherwise than to nearest, the input rows it learned on, and its time in ms */
    nb_weight_round weight_round;
    int64_t ada_changed, ada_samples;
    double ada_ms;
} nb_calib_layer_report;

/* The network output's evaluation: the fake-quant model against float. */
typedef struct nb_calib_output {
    const char *name;
    nb_dtype dtype;
    bool compared;            /* a float output (others are not compared) */
    double sqnr_db, cosine, max_abs_diff;
} nb_calib_output;

typedef struct nb_calibrate_result {
    char record[4200], fake_quant[4200], deploy[4200]; /* the files written */
    int n_layers;
    nb_calib_layer_report *layers;
    int batch_num;            /* batches calibrated */
    bool batch_num_given;     /* by the options or the config (else AMCT's default 1) */
    int files_in_first_dir;   /* files in the first input's folder */
    int eval_batches;
    bool eval_set;            /* evaluated on eval_dirs, not the calibration batches */
    double output_sqnr_db, output_cosine, output_worst_cosine, output_max_abs_diff;
    int n_outputs;
    nb_calib_output *outputs;
    nb_act_algo algo;         /* the config's (or the options') activation algorithm */
    int act_bits, weight_bits;
    double calibration_ms, files_and_evaluation_ms;
    char *cpu_nodes;          /* calibrate's placement advice, for atc --cpu_nodes: the layers
                                 that suggest the CPU (suggests_cpu), the producers of their
                                 input back to the nearest cube op and the consumers of their
                                 output while the values are beyond fp16 (|x| > 65504 in the
                                 calibration data); ';'-separated in node order; NULL: none */
    void *internal;           /* what the report's pointers point into */
} nb_calibrate_result;

/* AMCT-style post-training calibration, the whole step: the model loaded and checked (the
 * data folders against its inputs: count, dtype, static shape), the layers found (Conv,
 * ConvTranspose, MatMul, Gemm, LSTM, GRU; If branches included; a Conv's following
 * BatchNormalization folded unless do_fusion is off), one float forward pass per batch
 * feeding each layer's input histogram, each activation's clip range chosen (IFMR, HFMG,
 * MinMax, Percentile, KL, or per layer the best with auto), the weights quantized (ARQ),
 * the bias corrected for the weights' error, the three files written as NAME.part and
 * evaluated (each layer alone, and the fake-quant model against float) before they are
 * renamed into place with the signals held; warnings (a range under the int8 floor, a
 * tensor quantized twice, int8 rounding over 20% of an input to 0) to o->warn. Rules:
 * facts/quant.md (AMCT's algorithms, config and record). On error nothing is left: no
 * .part, no file of the three. Errors: NB_ERR_ARG (a folder count, dtype, dynamic dim,
 * config naming no layer, If branches no batch takes, too few files), NB_ERR_IO,
 * NB_ERR_DATA (a batch of another shape, NaN), the importer's, NB_ERR_NOMEM.
 * nb_calibrate_result_free frees r (also after an error). */
nb_err nb_calibrate(const nb_calibrate_opts *o, nb_calibrate_result *r, nb_status *st);
void nb_calibrate_result_free(nb_calibrate_result *r);
/* The result as `calibrate --json` prints it: the three files (record, fake_quant_model,
 * deploy_model), batches, the fake-quant model's output metrics against float (SQNR in dB,
 * cosine, worst cosine, max |diff|; per output under outputs), the evaluation set, the times
 * in ms, layers (each layer's clip range, scale_d/offset_d, bits, scale_w per channel, the
 * int8/int16 zeroed shares, the SQNRs in dB; an RNN's h and R, a MatMul's second input B),
 * suggested_int16 and suggested_cpu_nodes; and what a summary shows of it: algorithms (the
 * layers' algorithms, each once), worst_layers (the 3 layers of lowest SQNR alone: layer,
 * op_type, sqnr_db, cosine) and cpu_advice ({nodes, layers that gave it with their int16
 * zeroed shares}, or null). NaN and infinities are null. A new object
 * (engine/quant/calib_json.c). */
struct json_t *nb_calibrate_json(const nb_calibrate_result *r);
/* A QAT import (nb_qat_import) in the same form: model, algorithm "qat", each layer's
 * imported scale_d, offset_d, act_bits and weight channels, the two files written. */
struct json_t *nb_qat_json(const char *model, const nb_qdq_model *q, const char *deploy,
                           const char *record);

/* The QAT import (calibrate --from_qdq): a Q/DQ model (nb_read_qdq) into save_path's
 * PREFIX_deploy_model.onnx and PREFIX_quant_record.txt, both or none; the layers read into
 * q (nb_qdq_model_free). The model passes the importer first. Errors: those of
 * nb_model_load and nb_read_qdq, naming the user's file; NB_ERR_IO. */
nb_err nb_qat_import(const char *model, const char *save_path, nb_qdq_model *q, char *deploy,
                     char *record, size_t len, nb_status *st);

/* The ONNX domain of the NPU's own ops in the deploy model. */
#define NB_NPU_DOMAIN "com.nanobench.npu"

/* Writes dst, the model the compiler takes (AMCT's deploy model, in the domain
 * NB_NPU_DOMAIN): before each layer an AscendQuant (attributes scale = 1 / scale_d,
 * offset = offset_d, dst_bits), the layer itself in the NPU domain reading the int8 input,
 * int8 weights "<layer>/w_int8" and an int32 bias "<layer>/bias_int32" =
 * round(beta x b / deq_scale) - offset_d x (sum of the channel's int8 weights) (the
 * activation offset folded in; quant.md 1.8) and writing int32, then an AscendDequant
 * with "<layer>/deq_scale", uint64 per channel holding the fp32 bits of
 * alpha x scale_d x scale_w in the low 32 bits (GE's layout), into the layer's original
 * output. An LSTM or GRU (one fused cube + vector op, fp16 out) has no AscendDequant: the
 * NPU-domain op reads (x_int8, "<layer>/w_int8", "<layer>/r_int8", "<layer>/bias_w_int32",
 * "<layer>/bias_r_int32", "<layer>/deq_scale_w", "<layer>/deq_scale_r", sequence_lens,
 * initial_h, initial_c, P) and keeps its outputs; bias_w = round(Wb / (scale_d x
 * scale_w)) - offset_d x (row sum of W), bias_r = round(Rb / (scale_h x scale_r)),
 * deq_scale_w = scale_d x scale_w, deq_scale_r = scale_h x scale_r per gate row, and the
 * attributes h_scale = 1 / scale_h, h_offset = offset_h quantize the state each step.
 * ONNX Runtime cannot run it. Errors: NB_ERR_UNSUPPORTED for a bias that is not a
 * constant of the channels, NB_ERR_DATA for an int32 bias out of range, NB_ERR_GRAPH,
 * NB_ERR_IO, NB_ERR_NOMEM. */
nb_err nb_write_deploy(const char *src, const char *dst, const nb_qlayer *ls, int n,
                       nb_status *st);

#ifdef __cplusplus
}
#endif
#endif
