/* bench_calib: calibration against forward passes of the same model, interleaved in one
 * process (issue 22: a ratio taken side by side holds on a busy machine). Each round runs
 * (A) K float forward passes of the reference on the K calibration inputs, then (B)
 * nb_calibrate on the same K inputs in memory (its own clock: K forward passes with the
 * statistics, the algorithm's search, ARQ and the bias correction; not loading, not the
 * files, not the evaluation). Prints one line per round and
 *   "ratio MEDIAN MIN..MAX calib_ms MEDIAN forward_ms MEDIAN"
 * with the ratio calibration / K forward passes per round.
 * usage: bench_calib MODEL.onnx DATA_DIR K ROUNDS [ALGO [INPUT_SHAPE]]   (DATA_DIR: K raw
 * float32 .bin files of the model's one input, in name order; ALGO "-" for the default) */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "nb/quant.h"
#include "nb/ref.h"

static int cmp_s(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s MODEL.onnx DATA_DIR K ROUNDS [ALGO]\n", argv[0]);
        return 2;
    }
    int k = atoi(argv[3]), rounds = atoi(argv[4]);
    nb_status st = {0};
    nb_model *m;
    const char *shape = argc > 6 ? argv[6] : NULL;
    nb_load_opts lo = {.input_shape = shape};
    if (k < 1 || rounds < 1 || nb_ref_load(argv[1], &lo, &m, &st)) {
        fprintf(stderr, "bench_calib: %s\n", st.msg[0] ? st.msg : "K and ROUNDS are >= 1");
        return 2;
    }
    const nb_value *in = &m->graph->values[m->graph->inputs[0]];
    DIR *d = opendir(argv[2]);
    char *files[4096];
    int nf = 0;
    for (struct dirent *e; d && (e = readdir(d)) && nf < 4096;)
        if (strstr(e->d_name, ".bin"))
            files[nf++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(files, (size_t)nf, sizeof files[0], cmp_s);
    if (nf < k) {
        fprintf(stderr, "bench_calib: %s has %d .bin files, %d wanted\n", argv[2], nf, k);
        return 2;
    }
    nb_tensor **x = calloc((size_t)k, sizeof *x);
    for (int i = 0; i < k; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", argv[2], files[i]);
        if (nb_bin_read(p, in->dtype, in->rank, in->dims, &x[i], &st)) {
            fprintf(stderr, "bench_calib: %s\n", st.msg);
            return 2;
        }
    }
    nb_exec *ex;
    if (nb_exec_create(m, NULL, &ex, &st)) {
        fprintf(stderr, "bench_calib: %s\n", st.msg);
        return 2;
    }
    const char *names[1] = {in->name};
    char save[] = "/tmp/bench_calib.XXXXXX";
    if (!mkdtemp(save))
        return 2;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/m", save);
    double *ratio = calloc((size_t)rounds, sizeof(double)), *cal = calloc((size_t)rounds, sizeof(double)),
           *fwd = calloc((size_t)rounds, sizeof(double));
    /* one warm-up of each side: OpenBLAS opened, pages touched */
    for (int r = -1; r < rounds; r++) {
        double t0 = now_ms();
        for (int i = 0; i < k; i++)
            if (nb_exec_run(ex, 1, names, &x[i], &st)) {
                fprintf(stderr, "bench_calib: %s\n", st.msg);
                return 2;
            }
        double f = now_ms() - t0;
        nb_calibrate_opts o = {.model = argv[1], .save_path = prefix, .input_shape = shape,
                               .batches = (const nb_tensor *const *)x, .n_batches = k};
        if (argc > 5 && strcmp(argv[5], "-") && !(o.algo_set = nb_act_algo_parse(argv[5], &o.algo)))
            return 2;
        nb_calibrate_result res;
        if (nb_calibrate(&o, &res, &st)) {
            fprintf(stderr, "bench_calib: %s\n", st.msg);
            return 2;
        }
        if (r >= 0) {
            fwd[r] = f, cal[r] = res.calibration_ms, ratio[r] = res.calibration_ms / f;
            printf("round %d: calibration %.3f ms, %d forward passes %.3f ms, ratio %.2f\n", r,
                   cal[r], k, f, ratio[r]);
        }
        nb_calibrate_result_free(&res);
    }
    qsort(ratio, (size_t)rounds, sizeof(double), cmp_d);
    qsort(cal, (size_t)rounds, sizeof(double), cmp_d);
    qsort(fwd, (size_t)rounds, sizeof(double), cmp_d);
    printf("ratio %.3f %.3f..%.3f calib_ms %.3f forward_ms %.3f\n", ratio[rounds / 2], ratio[0],
           ratio[rounds - 1], cal[rounds / 2], fwd[rounds / 2]);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", save);
    return system(cmd) == 0 ? 0 : 1;
}
