/* embedding_sample: openWakeWord's embedding model (speech features [1,76,32,1] -> a
 * 96-value embedding) compiled by `nanobench atc`, run on nanobench's simulated Nano NPU
 * through the ACL C API (<acl/acl.h>) only.
 *
 * usage: embedding_sample MODEL.exeom [INPUT.bin] [--golden Y.npy|Y.bin] [--min-cosine C]
 *        embedding_sample --write-input FILE.bin [SEED]
 *
 * INPUT.bin is the model input as raw little-endian float32 [1,76,32,1] (9728 bytes; the
 * speech features of share/examples/openwakeword); without it a deterministic input is made
 * (the one --write-input writes for SEED 0). The sample shows, besides the usual flow:
 *   - aclmdlQuerySize and aclmdlQueryExeOMDesc on the file (the partitions must add up to
 *     the file's size);
 *   - aclmdlLoadFromMem: the file is read into memory and loaded from there;
 *   - an output buffer created as (NULL, 0), which aclmdlExecute allocates (freed with
 *     aclrtFree, then detached with aclUpdateDataBuffer).
 * It prints the output's dims, the 96 values' min / max / mean and the first 8. With
 * --golden (the float model's output, e.g. `nanobench infer`'s conv2d_19.npy for the same
 * input) it prints the cosine similarity and the largest difference, and fails below
 * --min-cosine (default 0.99).
 * --write-input writes the deterministic input for SEED (default 0) and exits: calibration
 * data when the real speech features are not there.
 *
 * Exit status: 0 when the run succeeds with 96 finite outputs (and the cosine is met),
 * 1 otherwise, 2 for a bad command line or input file.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl.h>

#define IN_N (76 * 32) /* elements of input_1 [1,76,32,1] */
#define OUT_N 96       /* elements of the embedding */

/* Prints a failed call's code and the runtime's last message; returns 1 when ret failed. */
static int failed(aclError ret, const char *call)
{
    if (ret == ACL_SUCCESS)
        return 0;
    fprintf(stderr, "embedding_sample: %s failed: error %d: %s\n", call, ret,
            aclGetRecentErrMsg());
    return 1;
}

#define CHECK(call)                                                                          \
    do {                                                                                     \
        if (failed((call), #call))                                                           \
            goto out;                                                                        \
    } while (0)

/* Reads a whole file into a malloc'ed buffer (*len its bytes); NULL (with a message) when
 * it cannot be read or is empty. */
static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "embedding_sample: cannot open %s\n", path);
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 1 << 16;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                fprintf(stderr, "embedding_sample: out of memory reading %s\n", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int err = ferror(f);
    fclose(f);
    if (err || n == 0) {
        fprintf(stderr, "embedding_sample: cannot read %s%s\n", path, err ? "" : ": empty");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* Little-endian float32 at p (the files are little-endian whatever the host). */
static float le_f32(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                 (uint32_t)p[3] << 24;
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Whether the n bytes at p hold the string s (memmem is not C11). */
static int has_bytes(const uint8_t *p, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(p + i, s, k))
            return 1;
    return 0;
}

/* Reads n float32 values from a raw .bin of exactly 4n bytes, or a version 1/2 .npy of
 * '<f4' holding n values. Returns 0, or 2 with a message. */
static int read_floats(const char *path, float *out, size_t n)
{
    size_t len = 0;
    uint8_t *buf = read_file(path, &len);
    if (!buf)
        return 2;
    size_t at = 0;
    if (len >= 10 && !memcmp(buf, "\x93NUMPY", 6)) {
        size_t hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                      : len >= 12 ? (size_t)buf[8] | (size_t)buf[9] << 8 |
                                        (size_t)buf[10] << 16 | (size_t)buf[11] << 24
                                  : len;
        at = (buf[6] == 1 ? 10 : 12) + hlen;
        if (at > len || !has_bytes(buf, at, "'<f4'") || has_bytes(buf, at, "True")) {
            fprintf(stderr, "embedding_sample: %s: not a C-order float32 .npy\n", path);
            free(buf);
            return 2;
        }
    }
    if (len - at != n * 4) {
        fprintf(stderr, "embedding_sample: %s: %zu data bytes, expected %zu (%zu float32)\n",
                path, len - at, n * 4, n);
        free(buf);
        return 2;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = le_f32(buf + at + 4 * i);
    free(buf);
    return 0;
}

/* The deterministic input for seed: a smooth pattern over time (76 frames) and mel bands
 * (32), plus a little noise from a 32-bit LCG, in [3, 11] like openWakeWord's features. */
static void make_input(float *x, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 12345u;
    for (int t = 0; t < 76; t++)
        for (int f = 0; f < 32; f++) {
            s = s * 1664525u + 1013904223u;
            double noise = (double)(s >> 8) / 16777216.0 - 0.5; /* [-0.5, 0.5) */
            double v = 7.0 + 2.5 * sin(0.31 * t + 0.17 * f + 0.7 * seed) *
                                 cos(0.05 * f * (1 + seed % 3)) + noise;
            x[t * 32 + f] = (float)v;
        }
}

/* Writes the deterministic input for seed to path as raw little-endian float32. */
static int write_input(const char *path, uint32_t seed)
{
    static float x[IN_N];
    make_input(x, seed);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "embedding_sample: cannot create %s\n", path);
        return 2;
    }
    int ok = 1;
    for (int i = 0; i < IN_N && ok; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
        ok = fwrite(b, 1, 4, f) == 4;
    }
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "embedding_sample: cannot write %s\n", path);
        return 2;
    }
    return 0;
}

/* Prints the file's sizes from aclmdlQuerySize and aclmdlQueryExeOMDesc; returns 0 when the
 * calls succeed and the partitions add up to the file's size (file_size). */
static int query_sizes(const char *path, size_t file_size)
{
    size_t work = 0, weight = 0;
    aclmdlExeOMDesc d;
    if (failed(aclmdlQuerySize(path, &work, &weight), "aclmdlQuerySize") ||
        failed(aclmdlQueryExeOMDesc(path, &d), "aclmdlQueryExeOMDesc"))
        return 1;
    printf("aclmdlQuerySize: work %zu bytes, weight %zu bytes\n", work, weight);
    printf("aclmdlQueryExeOMDesc: weight %zu, modelDesc %zu, kernel %zu, kernelArgs %zu, "
           "staticTask %zu, dynamicTask %zu, fifoTask %zu\n",
           d.weightSize, d.modelDescSize, d.kernelSize, d.kernelArgsSize, d.staticTaskSize,
           d.dynamicTaskSize, d.fifoTaskSize);
    size_t sum = d.weightSize + d.modelDescSize + d.kernelSize + d.kernelArgsSize +
                 d.staticTaskSize + d.dynamicTaskSize + d.fifoTaskSize;
    printf("partitions add up to %zu bytes; the file has %zu\n", sum, file_size);
    if (sum != file_size || d.weightSize != weight) {
        fprintf(stderr, "embedding_sample: the partition sizes do not match the file\n");
        return 1;
    }
    return 0;
}

/* Loads the exeom from memory, runs it on x and checks the output (see the top). */
int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--write-input")) {
        if (argc < 3 || argc > 4) {
            fprintf(stderr, "usage: embedding_sample --write-input FILE.bin [SEED]\n");
            return 2;
        }
        char *end = NULL;
        unsigned long seed = argc > 3 ? strtoul(argv[3], &end, 10) : 0;
        if (argc > 3 && (*end || seed > 0xFFFFFFFFul)) {
            fprintf(stderr, "embedding_sample: bad seed '%s'\n", argv[3]);
            return 2;
        }
        return write_input(argv[2], (uint32_t)seed);
    }
    const char *model_path = NULL, *input_path = NULL, *golden_path = NULL;
    double min_cosine = 0.99;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--golden") && i + 1 < argc) {
            golden_path = argv[++i];
        } else if (!strcmp(argv[i], "--min-cosine") && i + 1 < argc) {
            char *end = NULL;
            min_cosine = strtod(argv[++i], &end);
            if (*end || !(min_cosine >= -1 && min_cosine <= 1)) {
                fprintf(stderr, "embedding_sample: bad --min-cosine '%s'\n", argv[i]);
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            model_path = NULL; /* an unknown or incomplete option: usage */
            break;
        } else if (!model_path) {
            model_path = argv[i];
        } else if (!input_path) {
            input_path = argv[i];
        } else {
            model_path = NULL;
            break;
        }
    }
    if (!model_path) {
        fprintf(stderr, "usage: embedding_sample MODEL.exeom [INPUT.bin] [--golden Y.npy|Y.bin]"
                        " [--min-cosine C]\n"
                        "       embedding_sample --write-input FILE.bin [SEED]\n");
        return 2;
    }

    static float x[IN_N], golden[OUT_N];
    if (input_path) {
        if (read_floats(input_path, x, IN_N))
            return 2;
    } else {
        make_input(x, 0);
    }
    if (golden_path && read_floats(golden_path, golden, OUT_N))
        return 2;
    size_t model_len = 0;
    uint8_t *model_bytes = read_file(model_path, &model_len);
    if (!model_bytes)
        return 2;

    int status = 1, inited = 0, device = 0, loaded = 0;
    aclrtContext context = NULL;
    aclrtStream stream = NULL;
    uint32_t model_id = 0;
    aclmdlDesc *desc = NULL;
    aclmdlDataset *input = NULL, *output = NULL;
    aclDataBuffer *in_buf = NULL, *out_buf = NULL;
    void *in_mem = NULL, *out_mem = NULL;
    aclmdlIODims in_dims, out_dims;
    size_t in_size = 0, out_size = 0, out_elems = 1;

    CHECK(aclInit(NULL));
    inited = 1;
    CHECK(aclrtSetDevice(0));
    device = 1;
    CHECK(aclrtCreateContext(&context, 0));
    CHECK(aclrtCreateStream(&stream));
    if (query_sizes(model_path, model_len))
        goto out;
    CHECK(aclmdlLoadFromMem(model_bytes, model_len, &model_id));
    loaded = 1;
    free(model_bytes); /* the runtime keeps its own copy */
    model_bytes = NULL;
    printf("loaded %s from memory (%zu bytes) as model %u\n", model_path, model_len, model_id);

    desc = aclmdlCreateDesc();
    if (!desc) {
        fprintf(stderr, "embedding_sample: aclmdlCreateDesc failed: %s\n", aclGetRecentErrMsg());
        goto out;
    }
    CHECK(aclmdlGetDesc(desc, model_id));
    if (aclmdlGetNumInputs(desc) != 1 || aclmdlGetNumOutputs(desc) != 1) {
        fprintf(stderr, "embedding_sample: the model has %zu inputs and %zu outputs, not 1 and 1\n",
                aclmdlGetNumInputs(desc), aclmdlGetNumOutputs(desc));
        goto out;
    }
    CHECK(aclmdlGetInputDims(desc, 0, &in_dims));
    CHECK(aclmdlGetOutputDims(desc, 0, &out_dims));
    in_size = aclmdlGetInputSizeByIndex(desc, 0);
    out_size = aclmdlGetOutputSizeByIndex(desc, 0);
    printf("input '%s' [", in_dims.name);
    for (size_t i = 0; i < in_dims.dimCount; i++)
        printf("%s%lld", i ? "," : "", (long long)in_dims.dims[i]);
    printf("] %zu bytes; output '%s' [", in_size, out_dims.name);
    for (size_t i = 0; i < out_dims.dimCount; i++) {
        printf("%s%lld", i ? "," : "", (long long)out_dims.dims[i]);
        out_elems *= out_dims.dims[i] > 0 ? (size_t)out_dims.dims[i] : 0;
    }
    printf("] %zu bytes\n", out_size);
    if (aclmdlGetInputDataType(desc, 0) != ACL_FLOAT16 ||
        aclmdlGetOutputDataType(desc, 0) != ACL_FLOAT16 ||
        aclmdlGetInputFormat(desc, 0) != ACL_FORMAT_ND ||
        aclmdlGetOutputFormat(desc, 0) != ACL_FORMAT_ND || in_size != IN_N * sizeof(aclFloat16) ||
        out_elems != OUT_N || out_size != OUT_N * sizeof(aclFloat16)) {
        fprintf(stderr, "embedding_sample: expected an fp16 ND input of %d values and output of "
                        "%d (atc --input_fp16_nodes=input_1 --output_type=FP16)\n",
                IN_N, OUT_N);
        goto out;
    }

    CHECK(aclrtMalloc(&in_mem, in_size, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < IN_N; i++)
        ((aclFloat16 *)in_mem)[i] = aclFloatToFloat16(x[i]);
    input = aclmdlCreateDataset();
    output = aclmdlCreateDataset();
    in_buf = aclCreateDataBuffer(in_mem, in_size);
    out_buf = aclCreateDataBuffer(NULL, 0); /* allocated by aclmdlExecute */
    if (!input || !output || !in_buf || !out_buf) {
        fprintf(stderr, "embedding_sample: cannot create the datasets: %s\n", aclGetRecentErrMsg());
        goto out;
    }
    CHECK(aclmdlAddDatasetBuffer(input, in_buf));
    CHECK(aclmdlAddDatasetBuffer(output, out_buf));
    CHECK(aclmdlExecuteV2(model_id, input, output, stream, NULL));
    CHECK(aclrtSynchronizeStream(stream));
    out_mem = aclGetDataBufferAddr(out_buf);
    if (!out_mem || aclGetDataBufferSizeV2(out_buf) != out_size) {
        fprintf(stderr, "embedding_sample: the runtime gave an output buffer of %zu bytes at %p,"
                        " expected %zu\n",
                aclGetDataBufferSizeV2(out_buf), out_mem, out_size);
        goto out;
    }

    const aclFloat16 *y16 = out_mem;
    double mn = INFINITY, mx = -INFINITY, sum = 0, dot = 0, yy = 0, gg = 0, maxdiff = 0;
    int finite = 0;
    for (int i = 0; i < OUT_N; i++) {
        double v = aclFloat16ToFloat(y16[i]);
        finite += isfinite(v) != 0;
        mn = fmin(mn, v);
        mx = fmax(mx, v);
        sum += v;
        if (golden_path) {
            dot += v * golden[i];
            yy += v * v;
            gg += (double)golden[i] * golden[i];
            maxdiff = fmax(maxdiff, fabs(v - golden[i]));
        }
    }
    printf("output: %d values, %d finite; min %.6g, max %.6g, mean %.6g\nfirst 8:", OUT_N,
           finite, mn, mx, sum / OUT_N);
    for (int i = 0; i < 8; i++)
        printf(" %.6g", aclFloat16ToFloat(y16[i]));
    printf("\n");
    status = finite == OUT_N ? 0 : 1;
    if (status)
        fprintf(stderr, "embedding_sample: %d of the %d outputs are not finite\n",
                OUT_N - finite, OUT_N);
    if (golden_path) {
        double cosine = yy > 0 && gg > 0 ? dot / sqrt(yy * gg) : 0;
        printf("against %s: cosine %.6f (at least %.6f), max |difference| %.6g\n", golden_path,
               cosine, min_cosine, maxdiff);
        if (!(cosine >= min_cosine)) {
            fprintf(stderr, "embedding_sample: cosine %.6f below %.6f\n", cosine, min_cosine);
            status = 1;
        }
    }

out:
    /* release in reverse order; every call is checked, and a failure fails the sample */
    if (in_buf && failed(aclDestroyDataBuffer(in_buf), "aclDestroyDataBuffer(input)"))
        status = 1;
    if (out_buf) {
        void *mem = aclGetDataBufferAddr(out_buf);
        if (mem && failed(aclrtFree(mem), "aclrtFree(output)"))
            status = 1;
        if (mem && failed(aclUpdateDataBuffer(out_buf, NULL, 0), "aclUpdateDataBuffer"))
            status = 1;
        if (failed(aclDestroyDataBuffer(out_buf), "aclDestroyDataBuffer(output)"))
            status = 1;
    }
    if (input && failed(aclmdlDestroyDataset(input), "aclmdlDestroyDataset(input)"))
        status = 1;
    if (output && failed(aclmdlDestroyDataset(output), "aclmdlDestroyDataset(output)"))
        status = 1;
    if (in_mem && failed(aclrtFree(in_mem), "aclrtFree(input)"))
        status = 1;
    if (desc && failed(aclmdlDestroyDesc(desc), "aclmdlDestroyDesc"))
        status = 1;
    if (loaded && failed(aclmdlUnload(model_id), "aclmdlUnload"))
        status = 1;
    if (stream && failed(aclrtDestroyStream(stream), "aclrtDestroyStream"))
        status = 1;
    if (context && failed(aclrtDestroyContext(context), "aclrtDestroyContext"))
        status = 1;
    if (device && failed(aclrtResetDevice(0), "aclrtResetDevice"))
        status = 1;
    if (inited && failed(aclFinalize(), "aclFinalize"))
        status = 1;
    free(model_bytes);
    return status;
}
