/* nanobench simulated NPU: the fp16 arithmetic of the vector unit, the table functions, and
 * AscendQuant / AscendDequant of one element (include/nb/sim.h; the rules, with worked
 * examples, in share/doc/npu-numerics.md). */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* binary16 bits -> float, for every bit pattern (built by nb_sim_numerics_init). */
float nb_sim_f16_tbl[65536];
_Thread_local uint64_t nb_sim_saturations;
_Thread_local uint64_t nb_sim_log_zeros;
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

uint16_t nb_sim_f16(double x) { return sim_f16(x); }

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
    nb_sim_numerics_init();
    return sim_quant(xh, scale, offset, bits);
}

uint16_t nb_sim_dequant(int32_t acc, float deq_scale, int act, float alpha)
{
    nb_sim_numerics_init();
    return sim_dequant(acc, deq_scale, act, alpha);
}
