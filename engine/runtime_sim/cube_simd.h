/* nanobench simulated NPU: the cube's int8 SIMD kernels (AVX-512 VNNI) and the choice of
 * the cube path at run time. Plain arrays in, so that kernels.c owns the tasks and layouts.
 * Every sum is an exact int32 (the caller's bound: Kg x max|x| x max|w| + max|bias| < 2^31),
 * so each path's results are bit-identical to the portable loops'. */
#ifndef NB_SIM_CUBE_SIMD_H
#define NB_SIM_CUBE_SIMD_H

#include <stdbool.h>
#include <stdint.h>

/* the cube path of this process: 0 portable (the plain loops), 1 AVX2 (16-bit multiply-add),
   2 AVX-512 VNNI (vpdpbusd / vpdpwssd on 512-bit registers); the best the CPU has (CPUID
   with the OS's register state, by __builtin_cpu_supports), capped by NANOBENCH_SIM_CUBE
   ("portable", "avx2" or "vnni"; read once per process) and 0 under NANOBENCH_SIM_SCALAR */
int sim_cube_path(void);

/* A convolution's geometry: x [N, C, H, W] in NC1HWC0 (c0 lanes per row, int8 when i8 else
   int16), y [N, Co, OH, OW] int32 in NC1HWC0 with C0 16; 1-D convolutions have H = OH = KH
   = 1. zp: x's zero point, read for taps outside x. */
typedef struct sim_conv_geom {
    int64_t N, C, H, W, Co, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw;
    int32_t zp;
    int c0;
    bool i8;
} sim_conv_geom;

/* The weights of an s8 x s8 convolution of geometry g, one group, packed for
   sim_vnni_conv_s8: w [Co][Kg] int8 with Kg = KH x KW x C in (kh, kw, c) order, bias [Co]
   int32. One malloc'd block (free() it): the per-channel start of each sum, bias - 128 x sum
   of the row (x is fed as x + 128, unsigned), then the weights as [Co/16][Kq][16][4], the
   taps in the segments the kernel reads (per kh when dw is 1, else one), each padded to a
   multiple of 4 bytes, zeros past Co and past each segment. NULL when out of memory. */
void *sim_vnni_pack_s8(const sim_conv_geom *g, const int8_t *w, const int32_t *bias);

/* y = conv(x, pk) + bias on AVX-512 VNNI, s8 x s8 (g->i8, zp within int8), x fed as x + 128
   (unsigned bytes): with dilation 1 along w (or a kernel width of 1 and dilation 1 along
   h) from a padded copy of x without im2col, else from an im2col of 64 output pixels at a
   time; 8 pixels x 32 (or 16) output channels per vpdpbusd loop. y's lanes past Co are left
   as they were. -1 when out of memory, else 0. Only when sim_cube_path() is 2. */
int sim_vnni_conv_s8(const sim_conv_geom *g, const void *pk, const uint8_t *xp, uint8_t *yp);

/* rows 0..11 of the int16 im2col block A (Kp each, Kp even) against one 16-channel block of
   16-bit weight pairs b ([Kp/2][16][2]), plus bias[16], into out[12][16] (vpdpwssd). Only
   when sim_cube_path() is 2. */
void sim_vnni_gemm16_12x16(const int16_t *A, int64_t Kp, const int16_t *b, const int32_t *bias,
                           int32_t *out);

/* The weights of an s8 x s8 MatMul packed for sim_vnni_matmul_s8: w as the cube reads it,
   element (n, k) at (n / 16) 512 + (n % 16) 32 + (k / 32) N1 512 + k % 32 (N1 = N / 16
   rounded up, K1 blocks of 32 along k, their pad lanes included), bias [N] int32. One
   malloc'd block (free() it): per channel bias - 128 x the row's sum, then [N1][K1 x 8][16][4].
   NULL when out of memory. */
void *sim_vnni_pack_mm(const int8_t *w, const int32_t *bias, int64_t N, int64_t K1);

/* out[b M + i][n] = bias[n] + sum over the K1 x 32 lanes of x(b, i, k) w(n, k) on AVX-512
   VNNI, x int8 as the cube reads it: (b, i, k) at ((b K1 + k / 32) M1 + i / 16) 512 +
   (i % 16) 32 + k % 32. out holds B x M rows of N. -1 when out of memory, else 0. Only when
   sim_cube_path() is 2, and under the caller's bound (every sum within int32). */
int sim_vnni_matmul_s8(const uint8_t *xp, int64_t B, int64_t M, int64_t M1, int64_t K1,
                       const void *pk, int64_t N, int32_t *out);

#endif
