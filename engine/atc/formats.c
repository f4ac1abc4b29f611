/* nanobench: NPU tensor formats and their padded sizes (include/nb/atc.h). */
#include "nb/atc.h"
#include "nb/ir.h"

int nb_npu_bits(nb_dtype t)
{
    if (t == NB_NPU_INT4)
        return 4;
    return 8 * (int)nb_dtype_size(t);
}

int nb_c0(nb_dtype t)
{
    switch (nb_npu_bits(t)) {
    case 4: return 64;
    case 8: return 32;
    case 16: return 16;
    case 32: return 16;
    default: return 0;
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* elements x bits / 8, rounded up to a byte; -1 on overflow. */
static int64_t bytes_of(int64_t elems, nb_dtype t)
{
    int64_t bits;
    if (elems < 0 || !nb_mul_ok(elems, nb_npu_bits(t), &bits))
        return -1;
    return ceil_div(bits, 8);
}

/* Product of n factors (each >= 0), -1 on overflow or a negative factor. */
static int64_t product(int n, const int64_t *f)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        if (f[i] < 0 || !nb_mul_ok(p, f[i], &p))
            return -1;
    return p;
}

int64_t nb_nc1hwc0_bytes(int rank, const int64_t *nchw, nb_dtype t)
{
    int c0 = nb_c0(t);
    if (c0 == 0 || (rank != 3 && rank != 4))
        return -1;
    for (int i = 0; i < rank; i++)
        if (nchw[i] < 0)
            return -1;
    int64_t h = rank == 4 ? nchw[2] : 1, w = rank == 4 ? nchw[3] : nchw[2];
    int64_t f[5] = {nchw[0], ceil_div(nchw[1], c0), h, w, c0};
    return bytes_of(product(5, f), t);
}

int64_t nb_fractal_z_bytes(int64_t cout, int64_t cin, int64_t kh, int64_t kw, nb_dtype t)
{
    int c0 = nb_c0(t);
    if (c0 == 0 || cout < 0 || cin < 0 || kh < 0 || kw < 0)
        return -1;
    int64_t f[6] = {ceil_div(cin, c0), kh, kw, ceil_div(cout, 16), 16, c0};
    return bytes_of(product(6, f), t);
}

int64_t nb_fractal_nz_bytes(int rank, const int64_t *dims, nb_dtype t)
{
    int c0 = nb_c0(t);
    if (c0 == 0 || rank < 0)
        return -1;
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0)
            return -1;
    int64_t h = rank >= 2 ? dims[rank - 2] : 1, w = rank >= 1 ? dims[rank - 1] : 1;
    int64_t batch = product(rank >= 2 ? rank - 2 : 0, dims);
    int64_t f[5] = {batch, ceil_div(w, c0), ceil_div(h, 16), 16, c0};
    return bytes_of(product(5, f), t);
}
