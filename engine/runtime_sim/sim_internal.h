/* nanobench simulated NPU: internals shared by the loader, the kernels and the ACL layer. */
#ifndef NB_SIM_INTERNAL_H
#define NB_SIM_INTERNAL_H

#include <math.h>
#include <string.h>

#include "nb/sim.h"
#include "nb/tensor.h"

/* the decode table (numerics.c), filled once nb_sim_numerics_init ran (nb_sim_load) */
extern float nb_sim_f16_tbl[65536];
#define F16V(h) ((double)nb_sim_f16_tbl[(uint16_t)(h)])

/* aclDataType codes */
enum { DT_FLOAT = 0, DT_F16 = 1, DT_I8 = 2, DT_I32 = 3, DT_U8 = 4, DT_I16 = 6, DT_U64 = 10,
       DT_BOOL = 12, DT_I4 = 29 };
/* aclFormat codes */
enum { FMT_NCHW = 0, FMT_NHWC = 1, FMT_ND = 2, FMT_NC1HWC0 = 3, FMT_FZ = 4, FMT_NZ = 29 };
/* task roles */
enum { ROLE_IN = 0, ROLE_OUT = 1, ROLE_ACT = 2, ROLE_W = 3 };

/* kernel ids (share/doc/exeom.md) */
enum {
    K_QUANT = 1, K_DEQUANT, K_TRANSDATA, K_CAST, K_CONV, K_CONVT, K_MATMUL, K_GEMM, K_LSTM,
    K_GRU, K_ADD, K_SUB, K_MUL, K_DIV, K_POW, K_MAX, K_MIN, K_RELU, K_LEAKY, K_SIGMOID,
    K_TANH, K_EXP, K_LOG, K_ABS, K_NEG, K_CLIP, K_SQRT, K_RESHAPE, K_IDENTITY, K_SQUEEZE,
    K_UNSQUEEZE, K_FLATTEN, K_TRANSPOSE, K_CONCAT, K_SLICE, K_MAXPOOL, K_GAP, K_GMP,
    K_RMEAN, K_RMAX, K_RMIN, K_RSUM, K_SOFTMAX, K_GREATER, K_EQUAL, K_OR, K_AND, K_WHERE,
    K_PRELU, K_ELU, K_BN, K_IN, K_PAD, K_ROUND, K_RL2, K_GATHER, K_TILE, K_S2D, K_ARGMAX,
    K_IF, K_CPU_ONNX, K_COUNT
};

/* A task as the kernels run it: operands resolved, parameters decoded and checked. */
typedef struct sim_task {
    int kid;
    int n_in, n_out;
    int in[NB_EXEOM_MAX_IN], out[NB_EXEOM_MAX_OUT]; /* tensor indices, -1 absent */
    /* decoded parameters */
    float f[4];        /* quant: scale, offset; leaky/elu alpha; clip lo, hi; eps */
    int clip_rt;       /* clip: bit 0 / 1: min / max from the run-time tensor of input 1 / 2 */
    int bits;          /* quant: 8 / 16 */
    int act;           /* dequant: fused activation */
    int deq;           /* dequant: tensor of its deq_scale; -1 */
    int chan_axis;     /* dequant: axis of the output channels in its logical dims */
    int kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, group, ceil_mode; /* conv, pool */
    int x_off, b_off;  /* cube: zero points of x and of a run-time B (their AscendQuant) */
    int trans_a;       /* Gemm */
    int hidden, reverse, lbr, step, seq; /* LSTM, GRU */
    float h_scale, h_offset; /* GRU: the state's quantization (its step's AscendQuant) */
    int axis;          /* softmax, concat (normalized) */
    int perm[6];       /* transpose */
    int n_sl, sl_axis[3], sl_start[3], sl_step[3]; /* slice: the sliced axes */
    int g_axis, g_n, g_idx[6]; /* gather: axis, the constant indices (normalized) */
    int pad_mode, pad_begin[6]; /* pad: 0 constant (f[0] its value), 1 reflect, 2 edge */
    int mask, keepdims; /* reduce; argmax: keepdims (axis in axis) */
    int last;          /* argmax: select_last_index */
    int if_then;       /* if (a CPU task): the branch of then_branch, 0 or 1 */
    int if_first[2], if_count[2]; /* if: each branch's tasks (count 0: not known) */
    int skip_if;       /* a task of an If's branch that only that branch reads: the If task
                          whose condition decides whether it runs; -1 always runs */
    int skip_br;       /* and its branch, 0 or 1 */
    int64_t M, N, K, batch; /* matmul */
    int64_t b_batch;        /* a run-time B's batch count: 1 (shared) or batch */
    float *wf;         /* conv: the weights as an fp32 [Kg x Cout] matrix (Kg = taps x lanes)
                          for the exact fp32 GEMM path; NULL when sums could reach 2^24 */
    int lanes;         /* conv: input channels per C0 row taken into Kg */
    int16_t *wt;       /* conv s16 x s8, s8 x s4, grouped: the weights [Co][Kg], (the
                          group's ci, kh, kw) along Kg, built at the first execution */
    int16_t *wpk;      /* conv s8 x s8 and s16 x s8 on AVX2: the weights packed for the
                          16-bit multiply-add GEMM, [Co/16][Kp/2][16][2] with Kp = Kg rounded
                          up to even and (kh, kw, ci) along Kg, zeros past Co and Kg; built at
                          the first execution when every sum fits int32. pk_state 2: instead
                          the block of sim_vnni_pack_s8 (conv) or sim_vnni_pack_mm (MatMul),
                          cube_simd.h */
    int pk_state;      /* 0 not decided, 1 wpk built, 2 wpk is a VNNI block, -1 the path does
                          not apply */
    struct nb_model *cpu_m; /* CpuOnnx: its node's one-node model, loaded at load time */
    struct nb_exec *cpu_x;  /* and the reference's executor of it */
} sim_task;

struct nb_sim_model {
    uint8_t *buf;  /* the file (owned) */
    size_t len;
    nb_exeom x;
    sim_task *k;
    nb_sim_task_profile *prof;
    uint64_t total_cycles, total_macs; /* every task's (the static model) */
    uint64_t last_cycles, last_macs;   /* the tasks that ran in the last execution */
    uint8_t *ran;          /* per task: it ran in the last execution (1), or was the branch
                              not taken (0) */
    bool ran_once;         /* an execution completed: the last_ totals hold */
    int *in_t, *out_t;   /* binding -> tensor */
    uint8_t *arena;
    const uint8_t **bound; /* tensor -> caller buffer for inputs / outputs (during execute) */
    int executing;
    uint64_t *sat;         /* per task: fp16 saturations in the last execution */
    uint64_t *logz;        /* per task: Log's inputs of 0 (-inf, written as -65504) */
    int *writer;           /* per tensor: the last task (so far, while loading) writing it */
    double *scratch;       /* kernels' work space (grown on demand) */
    int64_t **off;         /* per tensor, per dim d: the physical offset of index v along d
                              (every layout here is a sum of per-dim terms) */
    int64_t *offbuf;
    int16_t **w16;         /* per tensor: int8 FRACTAL_Z weights widened to int16 (the host's
                              multiply-add of 16-bit pairs), made at load */
    size_t scratch_n;
};

/* element size in bits */
int sim_bits(int dtype);
int sim_c0(int dtype);
/* the host has AVX2 and F16C (and NANOBENCH_SIM_SCALAR is not set): the kernels' fast paths */
int sim_have_avx2(void);
/* physical element index of the logical multi-index idx of t */
int64_t sim_phys(const nb_exeom_tensor *t, const int64_t *idx);
/* element e (physical) of a buffer of dtype, as double / written from double (fp16 rounded
   and saturated, integers saturated, bool != 0) */
double sim_load(int dtype, const uint8_t *p, int64_t e);
void sim_store(int dtype, uint8_t *p, int64_t e, double v);
/* the bytes of tensor t during execution (writable for activations and outputs) */
uint8_t *sim_ptr(nb_sim_model *m, int t);

/* physical element index of idx in tensor t (the per-dim tables) */
static inline int64_t sim_ph(const nb_sim_model *m, const nb_exeom_tensor *t, const int64_t *idx)
{
    int64_t *const *o = m->off + 6 * (t - m->x.t);
    int64_t e = 0;
    for (int d = 0; d < t->rank; d++)
        e += o[d][idx[d]];
    return e;
}

/* fp16 results clamped at +-65504 (values IEEE would round to infinity, and infinities)
   since the task began: the saturation the seed warns of, counted per task (numerics.c) */
extern _Thread_local uint64_t nb_sim_saturations;
/* Log's inputs of exactly 0 in the running task: -inf, which fp16 holds as -65504; counted
   apart from the saturations (no range or scale removes it) */
extern _Thread_local uint64_t nb_sim_log_zeros;

/* nb_sim_f16, inlined in the kernels */
static inline uint16_t sim_f16(double x)
{
    /* on the bits of the double: one rounding, to nearest even */
    uint64_t u;
    memcpy(&u, &x, 8);
    uint16_t sign = (uint16_t)(u >> 48) & 0x8000;
    int e = (int)(u >> 52) & 0x7FF;
    uint64_t man = u & 0xFFFFFFFFFFFFFull;
    if (e == 0x7FF) {
        if (man)
            return 0x7E00; /* NaN */
        nb_sim_saturations++; /* infinity saturates */
        return (uint16_t)(sign | 0x7BFF);
    }
    int he = e - 1023 + 15; /* the half's biased exponent */
    if (he >= 31) {
        nb_sim_saturations++;
        return sign | 0x7BFF;
    }
    if (he <= 0) { /* subnormal half (or zero): the value in units of 2^-24 */
        if (he < -10)
            return sign; /* below half of the smallest subnormal: rounds to 0 */
        uint64_t full = man | (1ull << 52);
        int shift = 43 - he; /* value = full 2^(e - 1075), in units of 2^-24: full >> (1051 - e) */
        uint64_t q = full >> shift, rem = full & ((1ull << shift) - 1), half = 1ull << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return sign | (uint16_t)q; /* q = 1024 carries into the smallest normal: right */
    }
    uint64_t q = man >> 42, rem = man & ((1ull << 42) - 1), half = 1ull << 41;
    if (rem > half || (rem == half && (q & 1)))
        q++;
    uint32_t bits = ((uint32_t)he << 10) + (uint32_t)q; /* a carry moves into the exponent */
    if (bits >= 0x7C00) {
        nb_sim_saturations++;
        return sign | 0x7BFF; /* rounded past 65504 */
    }
    return sign | (uint16_t)bits;
}

/* The same rounding for an fp32 value (one rounding: fp32 -> fp16 directly), for results
   computed in fp32 (AscendDequant) or already exact (Max, Relu, ...). */
static inline uint16_t sim_f16f(float x)
{
    uint16_t h = nb_f32_to_f16_bits(x, 1);
    if ((h & 0x7FFF) == 0x7BFF && !(fabsf(x) < 65520.0f)) /* clamped, not rounded */
        nb_sim_saturations += x == x;
    return h;
}

static inline int32_t sim_quant(uint16_t xh, float scale, float offset, int bits)
{
    float x = nb_sim_f16_tbl[xh];
    int32_t lo = bits == 16 ? -32768 : -128, hi = bits == 16 ? 32767 : 127;
    if (isnan(x))
        return 0; /* NaN enters the cube as 0 (documented) */
    float p = x * scale; /* fp32, round to nearest even */
    /* round half to even without a libm call: adding and taking off 1.5 x 2^23 leaves the
       nearest integer (ties to even) for |p| < 2^22 (IEEE arithmetic: no -ffast-math here);
       larger values saturate below anyway */
    float q = fabsf(p) < 4194304.0f ? (p + 12582912.0f) - 12582912.0f : p;
    float r = q + offset;
    if (r < (float)lo)
        return lo;
    if (r > (float)hi)
        return hi;
    return (int32_t)r;
}

static inline uint16_t sim_dequant(int32_t acc, float deq_scale, int act, float alpha)
{
    float y = (float)acc * deq_scale; /* int32 -> fp32 (nearest even), fp32 product */
    uint16_t h = sim_f16f(y);
    if (act == 1 && (h & 0x8000) && (h & 0x7FFF) <= 0x7C00)
        return 0; /* Relu: negatives (and -0) to +0 */
    if (act == 2 && (h & 0x8000)) /* the vector unit's fp32 product, rounded to fp16 */
        return sim_f16f(nb_sim_f16_tbl[h] * alpha);
    return h;
}

/* kernels (kernels.c): run task k */
nb_err sim_run_task(nb_sim_model *m, int k, nb_status *st);
/* CpuOnnx (cpu_task.c): loads task ki's node model and its executor (checked against the
   task's operands: count, size, type); runs it (inputs converted from their exeom types to
   the node's, outputs back); frees them. Errors: NB_ERR_DATA naming the task, the
   importer's and the reference's. */
nb_err sim_cpu_load(nb_sim_model *m, int ki, nb_status *st);
nb_err sim_cpu_run(nb_sim_model *m, const sim_task *k, nb_status *st);
void sim_cpu_free(sim_task *k);
/* The cycle model of a CpuOnnx task (share/doc/cycle-model.md): compute = its node's MACs x
   cpu_mac, or its elements x the op's class cost, + the boundary conversions; no movement
   term (the loads are in the per-element costs); cycles = compute + cpu_task_overhead. */
void sim_cpu_profile(const nb_sim_model *m, const sim_task *k, const nb_cycle_params *cp,
                     nb_sim_task_profile *pr);


static inline uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline void wr16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline int32_t rd32(const uint8_t *p) { int32_t v; memcpy(&v, p, 4); return v; }
static inline void wr32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static inline float rdf(const uint8_t *p) { float v; memcpy(&v, p, 4); return v; }

#endif
