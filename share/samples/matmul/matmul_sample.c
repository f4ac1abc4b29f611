/* matmul_sample: the vendor's teaching sample "cascaded MatMul", on nanobench's simulated
 * Nano NPU through the ACL C API (<acl/acl.h>) only.
 *
 * usage: matmul_sample MODEL.exeom [ACL_CONFIG.json]
 *
 * The model (tests/make_fixture.c, kind matmul_sample) is y = (x . W1) . W2, x FLOAT [1,4],
 * two MatMul nodes "matmul_1" and "matmul_2", with integer weights:
 *
 *        W1 = |127 -127  64    0|        W2 = |  1  127|
 *             |127 -127  64    0|             | -1    0|
 *             |  1    0 127   -1|             |  2   -1|
 *             |  0    2   0  127|             |127    1|
 *
 * Every column's largest |w| is 127, so ARQ's weight scales are exactly 1 (scale_w = 127 /
 * 127) and the int8 weights are the float ones. run_test.sh calibrates it with MinMax on two
 * batches, x = [-128, 127, 0, 0] and x = [0, 0, 4, -4]:
 *   matmul_1's input x spans [-128, 127]: scale_d = 255 / 255 = 1, offset_d = -128 -
 *     (-128 / 1) = 0;
 *   matmul_2's input h = x . W1 is [-127, 127, -64, 0] (rows 0 and 1 of W1 are equal) and
 *     [4, -8, 508, -512]: it spans [-512, 508], scale_d = 1020 / 255 = 4, offset_d = 0.
 * So deq_scale = scale_d * scale_w is 1 for matmul_1 and 4 for matmul_2, the biases that
 * fold -offset_d * sum(w) are 0, and the NPU computes, with x in fp16:
 *   q1 = x (AscendQuant: round_half_even(x * 1) + 0; integers in [-128, 127]);
 *   h = fp16(q1 . W1) (cube int8 x int8 -> int32; AscendDequant * 1: exact below 2048);
 *   q2 = saturate(round_half_even(h * 0.25) + 0) to [-128, 127];
 *   y = fp16(4 * (q2 . W2)) (round to nearest even; the vector unit saturates at 65504).
 *
 * Run 1, x = [2, -1, 3, -2] (a tie in AscendQuant, fp16 rounding of the outputs):
 *   h  = [2*127 - 127 + 3*1,  -2*127 + 127 - 2*2,  2*64 - 64 + 3*127,  -3*1 - 2*127]
 *      = [130, -131, 445, -257]
 *   h/4 = [32.5, -32.75, 111.25, -64.25] -> q2 = [32 (tie to even), -33, 111, -64]
 *   q2 . W2 = [32 + 33 + 222 - 64*127,  32*127 - 111 - 64] = [-7841, 3889]
 *   * 4 = [-31364, 15556] -> fp16: -31364 is 1960.25 steps of 16 -> -31360; 15556 is
 *   1944.5 steps of 8, a tie -> 1944 * 8 = 15552.         y = [-31360, 15552]
 *   (the float model gives [-31488, 15808])
 * Run 2, x = [1, 2, 3, 4] (int8 saturation in AscendQuant, fp16 saturation):
 *   h  = [127 + 254 + 3,  -127 - 254 + 8,  64 + 128 + 381,  -3 + 508] = [384, -373, 573, 505]
 *   h/4 = [96, -93.25, 143.25, 126.25] -> q2 = [96, -93, 127 (143 saturated), 126]
 *   q2 . W2 = [96 + 93 + 254 + 126*127,  96*127 - 127 + 126] = [16445, 12191]
 *   * 4 = [65780, 48764] -> fp16: 65780 > 65504 saturates to 65504; 48764 is 1523.875
 *   steps of 32 -> 1524 * 32 = 48768.                    y = [65504, 48768]
 *   (the float model gives [66038, 48700])
 *
 * Exit status: 0 when every output equals its expected value exactly, 1 otherwise (an ACL
 * error, a wrong model description or a wrong value), 2 for a bad command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl.h>

#define N_IN 4  /* elements of x [1,4] */
#define N_OUT 2 /* elements of y [1,2] */
#define N_RUNS 2

static const float run_input[N_RUNS][N_IN] = {{2, -1, 3, -2}, {1, 2, 3, 4}};
/* worked by hand in the comment at the top */
static const float run_expected[N_RUNS][N_OUT] = {{-31360, 15552}, {65504, 48768}};

/* Prints a failed call's code and the runtime's last message; returns 1 when ret failed. */
static int failed(aclError ret, const char *call)
{
    if (ret == ACL_SUCCESS)
        return 0;
    fprintf(stderr, "matmul_sample: %s failed: error %d: %s\n", call, ret,
            aclGetRecentErrMsg());
    return 1;
}

#define CHECK(call)                                                                          \
    do {                                                                                     \
        if (failed((call), #call))                                                           \
            goto out;                                                                        \
    } while (0)

/* Prints one tensor's description (name, dims, data type, format, bytes); returns 0 when
 * it is what the sample was written for: fp16 ND of the given dims. */
static int describe(const char *what, size_t index, const aclmdlIODims *d, aclDataType dt,
                    aclFormat fmt, size_t bytes, const int64_t *want, size_t rank)
{
    printf("%s %zu: name '%s', dims [", what, index, d->name);
    for (size_t i = 0; i < d->dimCount; i++)
        printf("%s%lld", i ? "," : "", (long long)d->dims[i]);
    printf("], data type %d, format %d, %zu bytes\n", (int)dt, (int)fmt, bytes);
    int ok = dt == ACL_FLOAT16 && fmt == ACL_FORMAT_ND && d->dimCount == rank;
    size_t n = 1;
    for (size_t i = 0; ok && i < rank; i++) {
        ok = d->dims[i] == want[i];
        n *= (size_t)want[i];
    }
    if (!ok || bytes != n * aclDataTypeSize(ACL_FLOAT16)) {
        fprintf(stderr, "matmul_sample: %s %zu is not fp16 ND [", what, index);
        for (size_t i = 0; i < rank; i++)
            fprintf(stderr, "%s%lld", i ? "," : "", (long long)want[i]);
        fprintf(stderr, "]: is this the matmul_sample model?\n");
        return 1;
    }
    return 0;
}

/* The flow of the vendor's sample: init, device, context, stream, load, describe, datasets,
 * execute (twice), check, then release everything in reverse order. */
int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: matmul_sample MODEL.exeom [ACL_CONFIG.json]\n");
        return 2;
    }
    int status = 1, inited = 0, device = 0, loaded = 0;
    aclrtContext context = NULL;
    aclrtStream stream = NULL;
    uint32_t model_id = 0;
    aclmdlDesc *desc = NULL;
    aclmdlDataset *input = NULL, *output = NULL;
    aclDataBuffer *in_buf = NULL, *out_buf = NULL;
    void *in_mem = NULL, *out_mem = NULL;
    aclmdlIODims in_dims, out_dims;
    size_t in_size = 0, out_size = 0;
    const int64_t want_in[] = {1, N_IN}, want_out[] = {1, N_OUT};
    int wrong = 0;

    CHECK(aclInit(argc > 2 ? argv[2] : NULL));
    inited = 1;
    CHECK(aclrtSetDevice(0));
    device = 1;
    CHECK(aclrtCreateContext(&context, 0));
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclmdlLoadFromFile(argv[1], &model_id));
    loaded = 1;
    printf("loaded %s as model %u\n", argv[1], model_id);

    /* what the model takes and gives */
    desc = aclmdlCreateDesc();
    if (!desc) {
        fprintf(stderr, "matmul_sample: aclmdlCreateDesc failed: %s\n", aclGetRecentErrMsg());
        goto out;
    }
    CHECK(aclmdlGetDesc(desc, model_id));
    if (aclmdlGetNumInputs(desc) != 1 || aclmdlGetNumOutputs(desc) != 1) {
        fprintf(stderr, "matmul_sample: the model has %zu inputs and %zu outputs, not 1 and 1\n",
                aclmdlGetNumInputs(desc), aclmdlGetNumOutputs(desc));
        goto out;
    }
    CHECK(aclmdlGetInputDims(desc, 0, &in_dims));
    CHECK(aclmdlGetOutputDims(desc, 0, &out_dims));
    in_size = aclmdlGetInputSizeByIndex(desc, 0);
    out_size = aclmdlGetOutputSizeByIndex(desc, 0);
    if (describe("input", 0, &in_dims, aclmdlGetInputDataType(desc, 0),
                 aclmdlGetInputFormat(desc, 0), in_size, want_in, 2) ||
        describe("output", 0, &out_dims, aclmdlGetOutputDataType(desc, 0),
                 aclmdlGetOutputFormat(desc, 0), out_size, want_out, 2))
        goto out;

    /* one buffer per input and output, in device memory (the host's on the Nano) */
    CHECK(aclrtMalloc(&in_mem, in_size, ACL_MEM_MALLOC_NORMAL_ONLY));
    CHECK(aclrtMalloc(&out_mem, out_size, ACL_MEM_MALLOC_NORMAL_ONLY));
    input = aclmdlCreateDataset();
    output = aclmdlCreateDataset();
    in_buf = aclCreateDataBuffer(in_mem, in_size);
    out_buf = aclCreateDataBuffer(out_mem, out_size);
    if (!input || !output || !in_buf || !out_buf) {
        fprintf(stderr, "matmul_sample: cannot create the datasets: %s\n", aclGetRecentErrMsg());
        goto out;
    }
    CHECK(aclmdlAddDatasetBuffer(input, in_buf));
    CHECK(aclmdlAddDatasetBuffer(output, out_buf));

    for (int r = 0; r < N_RUNS; r++) {
        aclFloat16 *x = in_mem;
        const aclFloat16 *y = out_mem;
        for (int i = 0; i < N_IN; i++)
            x[i] = aclFloatToFloat16(run_input[r][i]);
        CHECK(aclmdlExecute(model_id, input, output));
        CHECK(aclrtSynchronizeStream(stream));
        printf("run %d: x = [%g, %g, %g, %g] -> y = [", r + 1, run_input[r][0],
               run_input[r][1], run_input[r][2], run_input[r][3]);
        for (int i = 0; i < N_OUT; i++)
            printf("%s%g", i ? ", " : "", aclFloat16ToFloat(y[i]));
        printf("], expected [%g, %g]\n", run_expected[r][0], run_expected[r][1]);
        for (int i = 0; i < N_OUT; i++)
            if (aclFloat16ToFloat(y[i]) != run_expected[r][i]) {
                fprintf(stderr, "matmul_sample: run %d: y[%d] is %g (fp16 0x%04x), expected %g\n",
                        r + 1, i, aclFloat16ToFloat(y[i]), y[i], run_expected[r][i]);
                wrong = 1;
            }
    }
    status = wrong;
    printf("%s\n", wrong ? "FAILED: the outputs differ from the expected values"
                         : "PASSED: every output is the expected value");

out:
    /* release in reverse order; every call is checked, and a failure fails the sample */
    if (in_buf && failed(aclDestroyDataBuffer(in_buf), "aclDestroyDataBuffer(input)"))
        status = 1;
    if (out_buf && failed(aclDestroyDataBuffer(out_buf), "aclDestroyDataBuffer(output)"))
        status = 1;
    if (input && failed(aclmdlDestroyDataset(input), "aclmdlDestroyDataset(input)"))
        status = 1;
    if (output && failed(aclmdlDestroyDataset(output), "aclmdlDestroyDataset(output)"))
        status = 1;
    if (in_mem && failed(aclrtFree(in_mem), "aclrtFree(input)"))
        status = 1;
    if (out_mem && failed(aclrtFree(out_mem), "aclrtFree(output)"))
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
    return status;
}
