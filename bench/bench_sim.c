/* bench_sim: median host time of one execution of an exeom on the simulated NPU
 * (nb_sim_execute, one thread), every float input x[i] = sin(0.1 i) as bench/sim_ort.js
 * feeds ONNX Runtime. Prints "<exeom> <median ms> <runs> <NPU cycles>".
 * usage: bench_sim NAME.exeom [MIN_SECONDS] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "nb/sim.h"
#include "nb/tensor.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sim NAME.exeom [MIN_SECONDS]\n");
        return 2;
    }
    double secs = argc > 2 ? atof(argv[2]) : 2;
    uint8_t *buf;
    size_t len;
    nb_status st = {0};
    nb_sim_model *m;
    if (nb_read_file(argv[1], &buf, &len, &st) || nb_sim_load(buf, len, NULL, &m, &st)) {
        fprintf(stderr, "bench_sim: %s\n", st.msg);
        return 2;
    }
    const nb_exeom *x = nb_sim_exeom(m);
    void *in[64], *out[64];
    if (x->n_inputs > 64 || x->n_outputs > 64)
        return 2;
    for (uint32_t i = 0; i < x->n_inputs; i++) {
        const nb_exeom_tensor *t = &x->t[nb_sim_input_tensor(m, (int)i)];
        in[i] = calloc(1, t->bytes + 1);
        for (int64_t j = 0; j < nb_sim_numel(t); j++)
            nb_sim_set(t, in[i], j, sin(0.1 * (double)j));
    }
    for (uint32_t i = 0; i < x->n_outputs; i++)
        out[i] = calloc(1, x->t[nb_sim_output_tensor(m, (int)i)].bytes + 1);
    double *times = malloc(sizeof(double) * 100000);
    int n = 0;
    for (int w = 0; w < 3; w++)
        nb_sim_execute(m, (const void *const *)in, out, NULL, NULL, &st);
    double start = now_ms();
    while ((now_ms() - start < secs * 1e3 || n < 20) && n < 100000) {
        double t0 = now_ms();
        if (nb_sim_execute(m, (const void *const *)in, out, NULL, NULL, &st)) {
            fprintf(stderr, "bench_sim: %s\n", st.msg);
            return 1;
        }
        times[n++] = now_ms() - t0;
    }
    qsort(times, (size_t)n, sizeof *times, cmp_d);
    printf("%s %.4f %d %llu\n", argv[1], times[n / 2], n,
           (unsigned long long)nb_sim_total_cycles(m));
    return 0;
}
