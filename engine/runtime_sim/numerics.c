/* nanobench simulated NPU: the fp16 arithmetic of the vector unit, the table functions, and
 * AscendQuant / AscendDequant of one element (include/nb/sim.h; the rules, with worked
 * examples, in share/doc/npu-numerics.md). */
#include <math.h>
#include <string.h>

#include "nb/sim.h"

/* binary16 bits -> float, for every bit pattern (built by nb_sim_numerics_init). */
float nb_sim_f16_tbl[65536];
static int f16_ready;

static float f16_decode(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v;
    if (exp == 0)
        v = ldexpf((float)man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 1024), exp - 25);
    return sign ? -v : v;
}

static void tables_init(void);

void nb_sim_numerics_init(void)
{
    if (f16_ready)
        return;
    for (uint32_t i = 0; i < 65536; i++)
        nb_sim_f16_tbl[i] = f16_decode((uint16_t)i);
    f16_ready = 1;
    tables_init();
}

float nb_sim_f16_value(uint16_t h)
{
    nb_sim_numerics_init();
    return nb_sim_f16_tbl[h];
}

uint16_t nb_sim_f16(double x)
{
    /* on the bits of the double: one rounding, to nearest even */
    uint64_t u;
    memcpy(&u, &x, 8);
    uint16_t sign = (uint16_t)(u >> 48) & 0x8000;
    int e = (int)(u >> 52) & 0x7FF;
    uint64_t man = u & 0xFFFFFFFFFFFFFull;
    if (e == 0x7FF)
        return man ? 0x7E00 : (uint16_t)(sign | 0x7BFF); /* NaN; infinity saturates */
    int he = e - 1023 + 15; /* the half's biased exponent */
    if (he >= 31)
        return sign | 0x7BFF;
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
    if (bits >= 0x7C00)
        return sign | 0x7BFF; /* rounded past 65504 */
    return sign | (uint16_t)bits;
}

/* ---- table functions ---- */
#define TBL_N 512
#define TBL_LO (-16.0)
#define TBL_STEP (1.0 / 16.0)
static uint16_t tanh_tbl[TBL_N + 1], sigm_tbl[TBL_N + 1];

static void tables_init(void)
{
    f16_ready = 1; /* nb_sim_f16 below needs no table; the decode table is built */
    for (int i = 0; i <= TBL_N; i++) {
        double x = TBL_LO + i * TBL_STEP;
        tanh_tbl[i] = nb_sim_f16(tanh(x));
        sigm_tbl[i] = nb_sim_f16(1.0 / (1.0 + exp(-x)));
    }
}

static uint16_t table(const uint16_t *t, uint16_t xh)
{
    float x = nb_sim_f16_value(xh);
    if (isnan(x))
        return 0x7E00;
    double pos = ((double)x - TBL_LO) / TBL_STEP;
    if (pos <= 0)
        return t[0];
    if (pos >= TBL_N)
        return t[TBL_N];
    int i = (int)pos;
    /* the fraction within the step, truncated to 8 bits */
    float f = (float)floor((pos - i) * 256.0) / 256.0f;
    float a = nb_sim_f16_value(t[i]), b = nb_sim_f16_value(t[i + 1]);
    float y = a + f * (b - a); /* fp32 */
    return nb_sim_f16(y);
}

uint16_t nb_sim_table_tanh(uint16_t x)
{
    nb_sim_numerics_init();
    return table(tanh_tbl, x);
}

uint16_t nb_sim_table_sigmoid(uint16_t x)
{
    nb_sim_numerics_init();
    return table(sigm_tbl, x);
}

int32_t nb_sim_quant(uint16_t xh, float scale, float offset, int bits)
{
    float x = nb_sim_f16_value(xh);
    int32_t lo = bits == 16 ? -32768 : -128, hi = bits == 16 ? 32767 : 127;
    if (isnan(x))
        return 0; /* NaN enters the cube as 0 (documented) */
    float p = x * scale; /* fp32, round to nearest even */
    float r = nearbyintf(p) + offset;
    if (r < (float)lo)
        return lo;
    if (r > (float)hi)
        return hi;
    return (int32_t)r;
}

uint16_t nb_sim_dequant(int32_t acc, float deq_scale, int act, float alpha)
{
    float y = (float)acc * deq_scale; /* int32 -> fp32 (nearest even), fp32 product */
    uint16_t h = nb_sim_f16(y);
    if (act == 1 && (h & 0x8000) && (h & 0x7FFF) <= 0x7C00)
        return 0; /* Relu: negatives (and -0) to +0 */
    if (act == 2 && (h & 0x8000))
        return nb_sim_f16((double)nb_sim_f16_value(h) * alpha);
    return h;
}
