/* nanobench: OpenBLAS, opened at the first matrix product (ref_internal.h).
 *
 * Linked normally, OpenBLAS starts its thread pool and buffers before main() on every run,
 * about 6 ms and a spinning thread per process, which estimate, info and history never use
 * (measured: `nanobench --version` 9.6 ms with it, 2.8 ms without). So the kernels call
 * these wrappers, which dlopen the library the first time. If it cannot be opened, a plain
 * C loop computes the same products (slowly) after one warning line. An executor whose
 * graph has a matrix op opens it when it is created (nb_blas_open), so that the first run
 * is not a few milliseconds slower than the next.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                         blasint, blasint, float, const float *, blasint, const float *,
                         blasint, float, float *, blasint);
typedef void (*sgemv_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, blasint, blasint, float,
                         const float *, blasint, const float *, blasint, float, float *, blasint);

static sgemm_fn p_sgemm;
static sgemv_fn p_sgemv;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_blas(void)
{
    /* NANOBENCH_BLAS names another library ("none": the fallback, for its test) */
    const char *env = getenv("NANOBENCH_BLAS");
    const char *names[] = {NB_OPENBLAS_PATH, "libopenblas.so.0", "libblas.so.3"};
    size_t n_names = sizeof names / sizeof names[0];
    if (env && *env) {
        names[0] = env;
        n_names = 1;
    }
    for (size_t i = 0; i < n_names && !p_sgemm && strcmp(names[i], "none"); i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
            continue;
        /* POSIX: a function pointer through a void * */
        *(void **)&p_sgemm = dlsym(h, "cblas_sgemm");
        *(void **)&p_sgemv = dlsym(h, "cblas_sgemv");
        if (!p_sgemm || !p_sgemv)
            p_sgemm = NULL, p_sgemv = NULL;
    }
    if (!p_sgemm && !(env && !strcmp(env, "none")))
        fprintf(stderr, "nanobench: warning: OpenBLAS cannot be opened (%s); matrix products "
                "run on a slow fallback\n", env && *env ? env : NB_OPENBLAS_PATH);
}

static float at(const float *m, blasint ld, bool trans, blasint r, blasint c)
{
    return trans ? m[(size_t)c * (size_t)ld + (size_t)r] : m[(size_t)r * (size_t)ld + (size_t)c];
}

void nb_cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                    blasint m, blasint n, blasint k, float alpha, const float *a, blasint lda,
                    const float *b, blasint ldb, float beta, float *c, blasint ldc)
{
    pthread_once(&once, open_blas);
    if (p_sgemm) {
        p_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    /* the kernels use row-major only */
    for (blasint i = 0; i < m; i++)
        for (blasint j = 0; j < n; j++) {
            double s = 0;
            for (blasint p = 0; p < k; p++)
                s += (double)at(a, lda, ta == CblasTrans, i, p) *
                     at(b, ldb, tb == CblasTrans, p, j);
            float *y = &c[(size_t)i * (size_t)ldc + (size_t)j];
            *y = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * *y));
        }
}

void nb_cblas_sgemv(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans, blasint m, blasint n,
                    float alpha, const float *a, blasint lda, const float *x, blasint incx,
                    float beta, float *y, blasint incy)
{
    pthread_once(&once, open_blas);
    if (p_sgemv) {
        p_sgemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
        return;
    }
    blasint rows = trans == CblasTrans ? n : m, cols = trans == CblasTrans ? m : n;
    for (blasint i = 0; i < rows; i++) {
        double s = 0;
        for (blasint j = 0; j < cols; j++)
            s += (double)at(a, lda, trans == CblasTrans, i, j) * x[(size_t)j * (size_t)incx];
        float *o = &y[(size_t)i * (size_t)incy];
        *o = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * *o));
    }
}

void nb_blas_open(void)
{
    pthread_once(&once, open_blas);
}

/* include/nb/ref.h */
void nb_sgemm_rm(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                 float *c, int ldc)
{
    nb_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
                   0.0f, c, ldc);
}
