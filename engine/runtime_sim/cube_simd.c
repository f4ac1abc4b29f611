/* nanobench simulated NPU: the cube's AVX-512 VNNI kernels and the cube path's choice
 * (cube_simd.h). Compiled for any x86-64: the VNNI functions carry their own target
 * attribute and run only when sim_cube_path() says the CPU has them; elsewhere (another
 * architecture, an old compiler) they are stubs never called. */
#include "cube_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* sim_cube_path's answer (-1: not asked yet), forgotten in a fork's child
   (pthread_atfork), which reads the environment again */
static int cube_known = -1;
static void cube_forget(void) { cube_known = -1; }

int sim_cube_path(void)
{
    static int registered;
    if (cube_known >= 0)
        return cube_known;
    if (!registered)
        registered = 1, pthread_atfork(NULL, NULL, cube_forget);
    int best = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    /* by CPUID and XGETBV, as kernels.c's have_f16c (clang 14's __builtin_cpu_supports knows
       neither "f16c" nor "avx512vnni": the fuzz build, compiled by clang, failed) */
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 27 & 1) && (c >> 29 & 1)) { /* OSXSAVE, F16C */
        unsigned lo, hi;
        __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        if ((lo & 6) == 6 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
            if (b >> 5 & 1) /* AVX2 */
                best = 1;
            /* AVX512F, BW, VL (EBX 16, 30, 31), VNNI (ECX 11); the OS saves the opmask and
               ZMM state (XCR0 bits 5, 6, 7) */
            if (best && (b >> 16 & 1) && (b >> 30 & 1) && (b >> 31 & 1) && (c >> 11 & 1) &&
                (lo & 0xe6) == 0xe6)
                best = 2;
        }
    }
#endif
    const char *cap = getenv("NANOBENCH_SIM_CUBE");
    if (cap) {
        int c = !strcmp(cap, "portable") ? 0 : !strcmp(cap, "avx2") ? 1 : 2;
        best = c < best ? c : best;
    }
    if (getenv("NANOBENCH_SIM_SCALAR"))
        best = 0;
    cube_known = best;
    return cube_known;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* How sim_vnni_conv_s8 reads x (and so how the weights are packed): 1 the taps of one output
   pixel are KH segments of KW x C consecutive bytes in a padded copy of x [N][H][W][C]
   (dilation 1 along w), 2 one segment of KH x C bytes in a copy [N][W][H][C] (KW 1,
   dilation 1 along h), 0 an im2col of one segment of Kg bytes. */
static int conv_mode(const sim_conv_geom *g)
{
    if (g->dw == 1)
        return 1;
    if (g->KW == 1 && g->dh == 1)
        return 2;
    return 0;
}

/* the segments of a pixel's taps (nseg) and the bytes of each (seg), by conv_mode */
static void conv_segs(const sim_conv_geom *g, int64_t *nseg, int64_t *seg)
{
    int mode = conv_mode(g);
    *nseg = mode == 1 ? g->KH : 1;
    *seg = mode == 1 ? g->KW * g->C : g->KH * g->KW * g->C;
}

void *sim_vnni_pack_s8(const sim_conv_geom *g, const int8_t *w, const int32_t *bias)
{
    int64_t nseg, seg, Co = g->Co, Kg = g->KH * g->KW * g->C;
    conv_segs(g, &nseg, &seg);
    int64_t Cb = cdiv(Co, 16), Kq = nseg * cdiv(seg, 4), sq = cdiv(seg, 4) * 4;
    size_t bytes = (size_t)(Cb * 16 * 4 + Cb * Kq * 64);
    uint8_t *blk = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!blk)
        return NULL;
    memset(blk, 0, bytes);
    int32_t *start = (int32_t *)(void *)blk;
    int8_t *pk = (int8_t *)(blk + Cb * 16 * 4);
    for (int64_t co = 0; co < Co; co++) {
        /* modulo 2^32 (unsigned): the final sum is exact, the caller's bound */
        uint32_t s = (uint32_t)bias[co];
        for (int64_t kg = 0; kg < Kg; kg++) {
            int8_t v = w[co * Kg + kg];
            int64_t k = kg / seg * sq + kg % seg; /* segments padded to 4 bytes */
            s -= 128u * (uint32_t)(int32_t)v;
            pk[((co / 16 * Kq + k / 4) * 16 + co % 16) * 4 + k % 4] = v;
        }
        memcpy(start + co, &s, 4);
    }
    return blk;
}

void *sim_vnni_pack_mm(const int8_t *w, const int32_t *bias, int64_t N, int64_t K1)
{
    int64_t N1 = cdiv(N, 16), Kq = K1 * 8;
    size_t bytes = (size_t)(N1 * 16 * 4 + N1 * Kq * 64);
    uint8_t *blk = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!blk)
        return NULL;
    memset(blk, 0, bytes);
    int32_t *start = (int32_t *)(void *)blk;
    int8_t *pk = (int8_t *)(blk + N1 * 16 * 4);
    for (int64_t n = 0; n < N; n++) {
        uint32_t s = (uint32_t)bias[n]; /* modulo 2^32, as sim_vnni_pack_s8 */
        for (int64_t k = 0; k < K1 * 32; k++) {
            int8_t v = w[(n / 16) * 512 + (n % 16) * 32 + (k / 32) * N1 * 512 + k % 32];
            s -= 128u * (uint32_t)(int32_t)v;
            pk[((n / 16 * Kq + k / 4) * 16 + n % 16) * 4 + k % 4] = v;
        }
        memcpy(start + n, &s, 4);
    }
    return blk;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define NB_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* 4 bytes at any address (no alignment assumed) */
static inline int32_t ld32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* 8 rows of A (unsigned bytes; row r at A + r lda, nseg segments of 4 Kq bytes, segment s
   at + s sstep) against two 16-channel weight blocks w0, w1 ([nseg Kq][16][4] each; w1
   NULL: one block): acc[r][b] = s[b] + sum A[r][k] w_b[k][ch] */
NB_VNNI static void gemm_u8_8x32(const uint8_t *A, int64_t lda, int64_t nseg, int64_t sstep,
                                 int64_t Kq, const int8_t *w0, const int8_t *w1,
                                 const int32_t *s0, const int32_t *s1, __m512i acc[8][2])
{
    __m512i a00 = _mm512_loadu_si512(s0), a01 = w1 ? _mm512_loadu_si512(s1) : a00;
    __m512i a10 = a00, a11 = a01, a20 = a00, a21 = a01, a30 = a00, a31 = a01;
    __m512i a40 = a00, a41 = a01, a50 = a00, a51 = a01, a60 = a00, a61 = a01;
    __m512i a70 = a00, a71 = a01;
    for (int64_t sg = 0; sg < nseg; sg++, A += sstep, w0 += 64 * Kq, w1 = w1 ? w1 + 64 * Kq : w1) {
#define NB_BC(r) _mm512_set1_epi32(ld32(A + (r) * lda + 4 * kq))
        if (w1)
            for (int64_t kq = 0; kq < Kq; kq++) {
                __m512i b0 = _mm512_loadu_si512(w0 + 64 * kq), b1 = _mm512_loadu_si512(w1 + 64 * kq);
                __m512i x;
#define NB_TWO(r, c0, c1) \
    (x = NB_BC(r), c0 = _mm512_dpbusd_epi32(c0, x, b0), c1 = _mm512_dpbusd_epi32(c1, x, b1))
                NB_TWO(0, a00, a01), NB_TWO(1, a10, a11), NB_TWO(2, a20, a21);
                NB_TWO(3, a30, a31), NB_TWO(4, a40, a41), NB_TWO(5, a50, a51);
                NB_TWO(6, a60, a61), NB_TWO(7, a70, a71);
#undef NB_TWO
            }
        else
            for (int64_t kq = 0; kq < Kq; kq++) {
                __m512i b0 = _mm512_loadu_si512(w0 + 64 * kq);
                a00 = _mm512_dpbusd_epi32(a00, NB_BC(0), b0);
                a10 = _mm512_dpbusd_epi32(a10, NB_BC(1), b0);
                a20 = _mm512_dpbusd_epi32(a20, NB_BC(2), b0);
                a30 = _mm512_dpbusd_epi32(a30, NB_BC(3), b0);
                a40 = _mm512_dpbusd_epi32(a40, NB_BC(4), b0);
                a50 = _mm512_dpbusd_epi32(a50, NB_BC(5), b0);
                a60 = _mm512_dpbusd_epi32(a60, NB_BC(6), b0);
                a70 = _mm512_dpbusd_epi32(a70, NB_BC(7), b0);
            }
    }
#undef NB_BC
    acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
    acc[2][0] = a20, acc[2][1] = a21, acc[3][0] = a30, acc[3][1] = a31;
    acc[4][0] = a40, acc[4][1] = a41, acc[5][0] = a50, acc[5][1] = a51;
    acc[6][0] = a60, acc[6][1] = a61, acc[7][0] = a70, acc[7][1] = a71;
}

/* one output pixel's im2col row of x + 128 (Kp4 bytes; the zero point outside x, zeros
   past Kg); xs: x's one channel as dense unsigned bytes (C 1, dilation 1), else NULL */
NB_VNNI static void im2col_u8(const sim_conv_geom *g, const uint8_t *xp, const uint8_t *xs,
                              int64_t n, int64_t oh, int64_t ow, int64_t Kp4, uint8_t *row)
{
    const uint8_t zpu = (uint8_t)(g->zp + 128);
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    int64_t C = g->C, H = g->H, W = g->W, C1 = cdiv(C, 32);
    uint8_t *r0 = row;
    for (int64_t kh = 0; kh < g->KH; kh++) {
        int64_t ih = oh * g->sh - g->pt + kh * g->dh;
        bool in_h = ih >= 0 && ih < H;
        if (xs) { /* the taps in range copied, the zero point around them */
            int64_t iw0 = ow * g->sw - g->pl, KW = g->KW;
            int64_t lo = iw0 < 0 ? -iw0 : 0, hi = W - iw0 < KW ? W - iw0 : KW;
            if (!in_h || hi <= lo)
                lo = hi = 0;
            memset(row, zpu, (size_t)lo);
            if (hi > lo)
                memcpy(row + lo, xs + (n * H + ih) * W + iw0 + lo, (size_t)(hi - lo));
            memset(row + hi, zpu, (size_t)(KW - hi));
            row += KW;
            continue;
        }
        for (int64_t kw = 0; kw < g->KW; kw++, row += C) {
            int64_t iw = ow * g->sw - g->pl + kw * g->dw;
            if (!in_h || iw < 0 || iw >= W) {
                memset(row, zpu, (size_t)C);
                continue;
            }
            for (int64_t c1 = 0; c1 < C1; c1++) {
                const uint8_t *xr = xp + (((n * C1 + c1) * H + ih) * W + iw) * 32;
                int64_t nl = C - c1 * 32 < 32 ? C - c1 * 32 : 32;
                __mmask32 mk = nl == 32 ? 0xFFFFFFFFu : (1u << nl) - 1;
                __m256i v = _mm256_xor_si256(_mm256_maskz_loadu_epi8(mk, xr), flip);
                _mm256_mask_storeu_epi8(row + c1 * 32, mk, v);
            }
        }
    }
    memset(row, 0, (size_t)(Kp4 - (row - r0)));
}

/* The convolutions of conv_mode 1 and 2, any strides: x + 128 copied once into a padded
   buffer [N][line][fast][C] (unsigned bytes, x's zero point + 128 in the padding; mode 1:
   line h, fast w; mode 2: line w, fast h), where the taps of an output pixel are nseg
   segments (one per kh in mode 1, dh lines apart) of consecutive bytes in the packed weights'
   (kh, kw, c) order, and the next pixel along the fast axis starts sf x C bytes further: the
   GEMM reads its rows there, with no im2col. The bytes past a segment (up to its multiple of
   4) meet zero weights; rows past a line are computed, never stored. */
NB_VNNI static int conv_direct(const sim_conv_geom *g, const void *pk, const uint8_t *xp,
                               uint8_t *yp)
{
    const bool along_w = conv_mode(g) == 1;
    int64_t nseg, seg;
    conv_segs(g, &nseg, &seg);
    int64_t C = g->C, N = g->N, Co = g->Co, Cb = cdiv(Co, 16), P = g->OH * g->OW;
    int64_t L = along_w ? g->H : g->W, F = along_w ? g->W : g->H;
    int64_t OL = along_w ? g->OH : g->OW, OF = along_w ? g->OW : g->OH;
    int64_t sl = along_w ? g->sh : g->sw, sf = along_w ? g->sw : g->sh;
    int64_t pl = along_w ? g->pt : g->pl, pf = along_w ? g->pl : g->pt;
    int64_t KL = along_w ? g->KH : 1, dl = along_w ? g->dh : 1, KF = along_w ? g->KW : g->KH;
    int64_t Kq = cdiv(seg, 4), Lp = pl + L, Fp = pf + F;
    if ((OL - 1) * sl + (KL - 1) * dl + 1 > Lp)
        Lp = (OL - 1) * sl + (KL - 1) * dl + 1;
    if ((OF - 1) * sf + KF > Fp)
        Fp = (OF - 1) * sf + KF;
    int64_t lda = sf * C, sstep = dl * Fp * C;
    size_t bytes = (size_t)(N * Lp * Fp * C + 8 * lda + 4 * Kq + 64);
    uint8_t *buf = malloc(bytes);
    if (!buf)
        return -1;
    memset(buf, (uint8_t)(g->zp + 128), bytes);
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    int64_t C1 = cdiv(C, 32);
    for (int64_t n = 0; n < N; n++)
        for (int64_t ih = 0; ih < g->H; ih++)
            for (int64_t iw = 0; iw < g->W; iw++) {
                int64_t li = along_w ? ih : iw, fi = along_w ? iw : ih;
                uint8_t *dst = buf + ((n * Lp + pl + li) * Fp + pf + fi) * C;
                if (C == 1) {
                    *dst = xp[((n * g->H + ih) * g->W + iw) * 32] ^ 0x80;
                    continue;
                }
                for (int64_t c1 = 0; c1 < C1; c1++) {
                    int64_t nl = C - c1 * 32 < 32 ? C - c1 * 32 : 32;
                    __mmask32 mk = nl == 32 ? 0xFFFFFFFFu : (1u << nl) - 1;
                    const uint8_t *xr = xp + (((n * C1 + c1) * g->H + ih) * g->W + iw) * 32;
                    _mm256_mask_storeu_epi8(dst + c1 * 32, mk,
                                            _mm256_xor_si256(_mm256_maskz_loadu_epi8(mk, xr), flip));
                }
            }
    const int32_t *start = pk;
    const int8_t *wq = (const int8_t *)pk + Cb * 16 * 4;
    __m512i acc[8][2];
    for (int64_t n = 0; n < N; n++)
        for (int64_t ol = 0; ol < OL; ol++) {
            const uint8_t *line = buf + (n * Lp + ol * sl) * Fp * C;
            for (int64_t cb = 0; cb < Cb; cb += 2) {
                bool two = cb + 1 < Cb;
                const int8_t *w0 = wq + cb * nseg * Kq * 64, *w1 = two ? w0 + nseg * Kq * 64 : NULL;
                for (int64_t q = 0; q < OF; q += 8) {
                    gemm_u8_8x32(line + q * lda, lda, nseg, sstep, Kq, w0, w1, start + cb * 16,
                                 two ? start + cb * 16 + 16 : NULL, acc);
                    for (int b = 0; b < (two ? 2 : 1); b++) {
                        int64_t nl = Co - (cb + b) * 16 < 16 ? Co - (cb + b) * 16 : 16;
                        __mmask16 mk = (__mmask16)(nl == 16 ? 0xFFFF : (1u << nl) - 1);
                        for (int64_t t = 0; t < 8 && q + t < OF; t++) {
                            int64_t p = along_w ? ol * g->OW + q + t : (q + t) * g->OW + ol;
                            _mm512_mask_storeu_epi32(yp + 4 * (((n * Cb + cb + b) * P + p) * 16),
                                                     mk, acc[t][b]);
                        }
                    }
                }
            }
        }
    free(buf);
    return 0;
}

NB_VNNI int sim_vnni_conv_s8(const sim_conv_geom *g, const void *pk, const uint8_t *xp, uint8_t *yp)
{
    if (conv_mode(g))
        return conv_direct(g, pk, xp, yp);
    enum { BLK = 64, MR = 8 };
    int64_t N = g->N, H = g->H, W = g->W, Co = g->Co, P = g->OH * g->OW;
    int64_t Kg = g->KH * g->KW * g->C, Kp4 = cdiv(Kg, 4) * 4, Cb = cdiv(Co, 16);
    const int32_t *start = pk;
    const int8_t *wq = (const int8_t *)pk + Cb * 16 * 4;
    uint8_t *A = malloc((size_t)(BLK * Kp4 + 64)), *xs = NULL;
    if (!A)
        return -1;
    if (g->C == 1 && g->dw == 1) { /* one channel (a 1-D filter bank): dense, once */
        xs = malloc((size_t)(N * H * W + 1));
        if (!xs) {
            free(A);
            return -1;
        }
        for (int64_t i = 0; i < N * H * W; i++)
            xs[i] = (uint8_t)(xp[i * 32] ^ 0x80);
    }
    __m512i acc[MR][2];
    for (int64_t n = 0; n < N; n++)
        for (int64_t p0 = 0; p0 < P; p0 += BLK) {
            int64_t np = P - p0 < BLK ? P - p0 : BLK, npad = cdiv(np, MR) * MR;
            for (int64_t q = 0; q < npad; q++) {
                if (q < np)
                    im2col_u8(g, xp, xs, n, (p0 + q) / g->OW, (p0 + q) % g->OW, Kp4, A + q * Kp4);
                else /* rows past the block: computed, never stored */
                    memset(A + q * Kp4, 0, (size_t)Kp4);
            }
            for (int64_t cb = 0; cb < Cb; cb += 2) {
                bool two = cb + 1 < Cb;
                const int8_t *w0 = wq + cb * (Kp4 / 4) * 64, *w1 = two ? w0 + (Kp4 / 4) * 64 : NULL;
                for (int64_t q = 0; q < np; q += MR) {
                    gemm_u8_8x32(A + q * Kp4, Kp4, 1, 0, Kp4 / 4, w0, w1, start + cb * 16,
                                 two ? start + cb * 16 + 16 : NULL, acc);
                    for (int b = 0; b < (two ? 2 : 1); b++) {
                        int64_t nl = Co - (cb + b) * 16 < 16 ? Co - (cb + b) * 16 : 16;
                        __mmask16 mk = (__mmask16)(nl == 16 ? 0xFFFF : (1u << nl) - 1);
                        for (int64_t t = 0; t < MR && q + t < np; t++)
                            _mm512_mask_storeu_epi32(
                                yp + 4 * (((n * Cb + cb + b) * P + p0 + q + t) * 16), mk,
                                acc[t][b]);
                    }
                }
            }
        }
    free(A), free(xs);
    return 0;
}

NB_VNNI int sim_vnni_matmul_s8(const uint8_t *xp, int64_t B, int64_t M, int64_t M1, int64_t K1,
                               const void *pk, int64_t N, int32_t *out)
{
    enum { MR = 8 };
    int64_t N1 = cdiv(N, 16), Kp4 = K1 * 32, rows = B * M;
    const int32_t *start = pk;
    const int8_t *wq = (const int8_t *)pk + N1 * 16 * 4;
    uint8_t *A = malloc((size_t)(MR * Kp4));
    if (!A)
        return -1;
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    __m512i acc[MR][2];
    for (int64_t r0 = 0; r0 < rows; r0 += MR) {
        for (int64_t t = 0; t < MR; t++) { /* row r0 + t of x, + 128 (past the rows: 0) */
            int64_t r = r0 + t, b = r / M, i = r % M;
            for (int64_t kb = 0; kb < K1; kb++) {
                __m256i v = _mm256_setzero_si256();
                if (r < rows)
                    v = _mm256_xor_si256(
                        _mm256_loadu_si256((const __m256i *)(const void *)(
                            xp + ((b * K1 + kb) * M1 + i / 16) * 512 + (i % 16) * 32)),
                        flip);
                _mm256_storeu_si256((__m256i *)(void *)(A + t * Kp4 + kb * 32), v);
            }
        }
        for (int64_t nb = 0; nb < N1; nb += 2) {
            bool two = nb + 1 < N1;
            const int8_t *w0 = wq + nb * K1 * 8 * 64, *w1 = two ? w0 + K1 * 8 * 64 : NULL;
            gemm_u8_8x32(A, Kp4, 1, 0, Kp4 / 4, w0, w1, start + nb * 16, two ? start + nb * 16 + 16 : NULL, acc);
            for (int b = 0; b < (two ? 2 : 1); b++) {
                int64_t nl = N - (nb + b) * 16 < 16 ? N - (nb + b) * 16 : 16;
                __mmask16 mk = (__mmask16)(nl == 16 ? 0xFFFF : (1u << nl) - 1);
                for (int64_t t = 0; t < MR && r0 + t < rows; t++)
                    _mm512_mask_storeu_epi32(out + (r0 + t) * N + (nb + b) * 16, mk, acc[t][b]);
            }
        }
    }
    free(A);
    return 0;
}

NB_VNNI void sim_vnni_gemm16_12x16(const int16_t *A, int64_t Kp, const int16_t *b,
                                   const int32_t *bias, int32_t *out)
{
    __m512i c[12];
    c[0] = _mm512_loadu_si512(bias);
    for (int r = 1; r < 12; r++)
        c[r] = c[0];
    for (int64_t kk = 0; kk < Kp; kk += 2, b += 32) {
        __m512i bv = _mm512_loadu_si512(b);
        for (int r = 0; r < 12; r++) {
            int32_t v;
            memcpy(&v, A + r * Kp + kk, 4);
            c[r] = _mm512_dpwssd_epi32(c[r], _mm512_set1_epi32(v), bv);
        }
    }
    for (int r = 0; r < 12; r++)
        _mm512_storeu_si512(out + 16 * r, c[r]);
}
#else
int sim_vnni_matmul_s8(const uint8_t *xp, int64_t B, int64_t M, int64_t M1, int64_t K1,
                       const void *pk, int64_t N, int32_t *out)
{
    (void)xp, (void)B, (void)M, (void)M1, (void)K1, (void)pk, (void)N, (void)out;
    return -1;
}

int sim_vnni_conv_s8(const sim_conv_geom *g, const void *pk, const uint8_t *xp, uint8_t *yp)
{
    (void)g, (void)pk, (void)xp, (void)yp;
    return -1;
}

void sim_vnni_gemm16_12x16(const int16_t *A, int64_t Kp, const int16_t *b, const int32_t *bias,
                           int32_t *out)
{
    (void)A, (void)Kp, (void)b, (void)bias, (void)out;
}
#endif
