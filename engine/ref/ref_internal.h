/* nanobench: kernel tables and helpers shared by engine/ref sources (not installed). */
#ifndef NB_REF_INTERNAL_H
#define NB_REF_INTERNAL_H

#include "nb/ref.h"

#include <cblas.h>
#include <stdbool.h>

/* cblas_sgemm / cblas_sgemv through OpenBLAS opened at the first call (blas.c): the kernels
 * call them by their cblas names. */
/* Opens the library now (once per process; later calls return at once). */
void nb_blas_open(void);
void nb_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                    blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                    const float *b, blasint ldb, float beta, float *c, blasint ldc);
void nb_cblas_sgemv(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans, blasint m, blasint n,
                    float alpha, const float *a, blasint lda, const float *x, blasint incx,
                    float beta, float *y, blasint incy);
#define cblas_sgemm nb_cblas_sgemm
#define cblas_sgemv nb_cblas_sgemv

/* Output 0 is input 0 with the inferred shape (Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity, Dropout): the executor makes a view; a kernel, if any, runs after it. Callers
 * read k->out[] after the kernel returns, so a kernel may replace an output it was given
 * (freeing it) when a view cannot hold the result (training-mode Dropout). */
/* A hot loop built twice, for AVX2 and for the baseline, the copy picked at load time
 * (GCC's target_clones, an ifunc): 8 floats per instruction where the CPU has them. AVX2
 * alone, not FMA: the same IEEE operations per element (a * b + c is not contracted), so
 * the values do not depend on the copy taken. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NB_REF_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NB_REF_AVX2_CLONES
#endif

#define NB_K_ALIAS 1u
/* The kernel creates its outputs itself (If): no inference or allocation beforehand. */
#define NB_K_CONTROL 2u

typedef struct nb_kernel_entry {
    const char *op;
    nb_kernel_fn fn;
    unsigned flags;
} nb_kernel_entry;

extern const nb_kernel_entry nb_kernels_elementwise[]; /* k_elementwise.c */
extern const nb_kernel_entry nb_kernels_tensor[];      /* k_tensor.c */
extern const nb_kernel_entry nb_kernels_nn[];          /* k_nn.c: conv, matmul, pools */
extern const nb_kernel_entry nb_kernels_norm[];        /* k_norm.c: norms, softmax, reduce, resize */
extern const nb_kernel_entry nb_kernels_rnn[];         /* k_rnn.c */
extern const nb_kernel_entry nb_kernels_quant[];       /* k_quant.c */
extern const nb_kernel_entry nb_kernels_control[];     /* exec.c (If) */

const nb_kernel_entry *nb_kernel_entry_lookup(const char *op_type);

/* Runs one subgraph (If branch) in the environment of the running graph k->env: binds
 * outer references, executes, and returns new references to its outputs in outs
 * (n = sub->n_outputs). */
nb_err nb_exec_subgraph(nb_kctx *k, const nb_graph *sub, nb_tensor **outs);

/* Iterates the multi-index of a broadcast: for output element i (row-major over
 * out_dims), the offsets into a and b. Precompute with nb_bcast_init; then call
 * nb_bcast_next after each element. */
typedef struct nb_bcast {
    int rank;
    int64_t dims[NB_MAX_RANK];
    int64_t sa[NB_MAX_RANK], sb[NB_MAX_RANK], sc[NB_MAX_RANK]; /* strides (0 = broadcast) */
    int64_t idx[NB_MAX_RANK];
    int64_t oa, ob, oc;
} nb_bcast;
/* Sets up iteration of out (rank r, dims) over up to three inputs (c may be NULL). */
void nb_bcast_init(nb_bcast *b, int r, const int64_t *dims, const nb_tensor *a,
                   const nb_tensor *bb, const nb_tensor *c);
static inline void nb_bcast_next(nb_bcast *b)
{
    for (int d = b->rank - 1; d >= 0; d--) {
        b->oa += b->sa[d];
        b->ob += b->sb[d];
        b->oc += b->sc[d];
        if (++b->idx[d] < b->dims[d])
            return;
        b->oa -= b->sa[d] * b->dims[d];
        b->ob -= b->sb[d] * b->dims[d];
        b->oc -= b->sc[d] * b->dims[d];
        b->idx[d] = 0;
    }
}

/* Row-major strides of a shape (elements). */
void nb_strides(int rank, const int64_t *dims, int64_t *strides);

#endif
