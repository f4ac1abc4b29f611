/* oww_npu: openWakeWord's streaming pipeline (melspectrogram -> embedding_model -> a wake-word
 * model) on nanobench's simulated Nano NPU, three exeoms chained through the ACL
 * C API (<acl/acl.h>); the float reference is oww_float.js, with the same framing:
 *   - audio: 16 kHz mono raw s16le, taken as int16 values in float (openWakeWord's input);
 *   - one frame per 1280 samples (80 ms); frame f runs the melspectrogram exeom on the 1760
 *     samples [1280 f, 1280 f + 1760) (1280 new, 480 of history; compiled for [1,1760]),
 *     which gives 8 mel frames [1,1,8,32], transformed on the host as openWakeWord does
 *     (mel / 10 + 2) and appended to a buffer of the last 76 (which starts as ones);
 *   - the embedding exeom on the last 76 mel frames [1,76,32,1] every frame: one embedding
 *     of 96 values, appended to a buffer of the last 16;
 *   - the wake-word exeom on the last 16 embeddings [1,16,96] once there are 16 (from the
 *     16th frame on): its score (hey_jarvis compiled whole: its output, the If's branch
 *     picked on the MCU's CPU).
 *
 * usage: oww_npu [--scores] [--mel-from DIR] MEL.exeom EMBEDDING.exeom WAKEWORD.exeom CLIP.raw ...
 *
 * Per clip it prints
 *   clip PATH frames F scored S peak P at FRAME cycles_per_frame C sat MEL/EMB/WW
 * (with --scores, a line `score FRAME P` per scored frame before it): the peak score, the
 * NPU cycles of one frame with all three models, and the fp16 results clamped at +-65504 in
 * each model over the clip (share/doc/npu-numerics.md). At the end, the cycles per 80 ms
 * frame, model by model, and the time at 64 MHz against the 80 ms real-time budget.
 * --mel-from DIR takes each clip's mel frames from DIR/CLIP.mel (CLIP: the clip's file name
 * without .raw; raw float32, 8 x 32 per frame, already mel / 10 + 2: oww_float.js --mel-out)
 * instead of running the melspectrogram exeom: the embedding and wake-word exeoms on the float
 * pipeline's features, which tells their error from the melspectrogram's.
 *
 * Inputs and outputs go through the ACL API only (fp16 ND buffers, aclFloatToFloat16); the
 * cycle and saturation counts come from the simulator behind a model id (nb_acl_sim_model,
 * include/nb/sim.h: nanobench's extension, as `nanobench run` reads them).
 *
 * Exit status: 0 when every clip ran, 1 on a runtime failure, 2 for a bad command line,
 * exeom or clip.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl.h>
#include <nb/sim.h>

#define FRAME 1280          /* new samples per frame (80 ms at 16 kHz) */
#define WIN (FRAME + 480)   /* melspectrogram input: the frame and 480 samples of history */
#define MEL_BANDS 32
#define MEL_NEW 8           /* mel frames per melspectrogram run on WIN samples */
#define EMB_FRAMES 76       /* mel frames per embedding */
#define EMB 96              /* values per embedding */
#define WW_FRAMES 16        /* embeddings per wake-word run */
#define MHZ 64.0            /* the Nano's clock for the budget */
#define FRAME_MS 80.0

typedef struct model {
    const char *path;
    const char *role;
    uint32_t id;
    int loaded;
    aclmdlDesc *desc;
    aclmdlDataset *in, *out;
    aclDataBuffer *in_buf, *out_buf;
    void *in_mem, *out_mem;
    size_t in_n, out_n;  /* elements */
    uint64_t cycles;     /* of the last execution */
    uint64_t sat;        /* fp16 saturations of the last execution */
} model;

static int failed(aclError ret, const char *what, const char *path)
{
    if (ret == ACL_SUCCESS)
        return 0;
    fprintf(stderr, "oww_npu: %s%s%s failed: error %d: %s\n", what, path ? " " : "",
            path ? path : "", ret, aclGetRecentErrMsg());
    return 1;
}

/* Loads m->path, checks that it has one fp16 ND input of in_n values and one fp16 ND output
 * of out_n, and makes its datasets. Returns 0, 1 (runtime) or 2 (not the expected model). */
static int model_load(model *m, size_t in_n, size_t out_n)
{
    if (failed(aclmdlLoadFromFile(m->path, &m->id), "aclmdlLoadFromFile", m->path))
        return 2;
    m->loaded = 1;
    m->desc = aclmdlCreateDesc();
    if (!m->desc || failed(aclmdlGetDesc(m->desc, m->id), "aclmdlGetDesc", m->path))
        return 1;
    if (aclmdlGetNumInputs(m->desc) != 1 || aclmdlGetNumOutputs(m->desc) != 1) {
        fprintf(stderr, "oww_npu: %s (%s): %zu inputs and %zu outputs, expected 1 and 1\n",
                m->path, m->role, aclmdlGetNumInputs(m->desc), aclmdlGetNumOutputs(m->desc));
        return 2;
    }
    size_t in_size = aclmdlGetInputSizeByIndex(m->desc, 0);
    size_t out_size = aclmdlGetOutputSizeByIndex(m->desc, 0);
    if (aclmdlGetInputDataType(m->desc, 0) != ACL_FLOAT16 ||
        aclmdlGetOutputDataType(m->desc, 0) != ACL_FLOAT16 ||
        aclmdlGetInputFormat(m->desc, 0) != ACL_FORMAT_ND ||
        aclmdlGetOutputFormat(m->desc, 0) != ACL_FORMAT_ND ||
        in_size != in_n * sizeof(aclFloat16) || out_size != out_n * sizeof(aclFloat16)) {
        fprintf(stderr, "oww_npu: %s (%s): expected an fp16 ND input of %zu values and output of "
                "%zu (atc --input_fp16_nodes=... --output_type=FP16), got %zu and %zu bytes\n",
                m->path, m->role, in_n, out_n, in_size, out_size);
        return 2;
    }
    m->in_n = in_n;
    m->out_n = out_n;
    if (failed(aclrtMalloc(&m->in_mem, in_size, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc", NULL) ||
        failed(aclrtMalloc(&m->out_mem, out_size, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc", NULL))
        return 1;
    m->in = aclmdlCreateDataset();
    m->out = aclmdlCreateDataset();
    if (!m->in || !m->out)
        return failed(ACL_ERROR_BAD_ALLOC, "aclmdlCreateDataset", NULL);
    m->in_buf = aclCreateDataBuffer(m->in_mem, in_size);
    m->out_buf = aclCreateDataBuffer(m->out_mem, out_size);
    if (!m->in_buf || !m->out_buf)
        return failed(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer", NULL);
    if (failed(aclmdlAddDatasetBuffer(m->in, m->in_buf), "aclmdlAddDatasetBuffer", NULL) ||
        failed(aclmdlAddDatasetBuffer(m->out, m->out_buf), "aclmdlAddDatasetBuffer", NULL))
        return 1;
    return 0;
}

/* One execution of m on x (in_n floats, rounded to fp16 at the boundary) into y (out_n);
 * records its cycles and fp16 saturations. Returns 0 or 1. */
static int model_run(model *m, aclrtStream stream, const float *x, float *y)
{
    aclFloat16 *in = m->in_mem;
    for (size_t i = 0; i < m->in_n; i++)
        in[i] = aclFloatToFloat16(x[i]);
    if (failed(aclmdlExecuteV2(m->id, m->in, m->out, stream, NULL), "aclmdlExecuteV2", m->path) ||
        failed(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream", NULL))
        return 1;
    const aclFloat16 *out = m->out_mem;
    for (size_t i = 0; i < m->out_n; i++)
        y[i] = aclFloat16ToFloat(out[i]);
    const nb_sim_model *sim = nb_acl_sim_model(m->id);
    m->cycles = sim ? nb_sim_total_cycles(sim) : 0;
    m->sat = 0;
    if (sim)
        for (uint32_t k = 0; k < nb_sim_exeom(sim)->n_tasks; k++)
            m->sat += nb_sim_task_saturations(sim, (int)k);
    return 0;
}

static void model_free(model *m)
{
    if (m->in_buf)
        aclDestroyDataBuffer(m->in_buf);
    if (m->out_buf)
        aclDestroyDataBuffer(m->out_buf);
    if (m->in)
        aclmdlDestroyDataset(m->in);
    if (m->out)
        aclmdlDestroyDataset(m->out);
    if (m->in_mem)
        aclrtFree(m->in_mem);
    if (m->out_mem)
        aclrtFree(m->out_mem);
    if (m->desc)
        aclmdlDestroyDesc(m->desc);
    if (m->loaded)
        aclmdlUnload(m->id);
}

/* Reads a raw s16le clip (is_f32 0) or raw float32 (is_f32 1) file as floats (*n of them);
 * NULL with a message on failure or when there are fewer than min. */
static float *read_samples(const char *path, int is_f32, size_t min, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "oww_npu: cannot open %s\n", path);
        return NULL;
    }
    float *a = NULL;
    size_t cap = 0, len = 0;
    unsigned char b[4];
    size_t w = is_f32 ? 4 : 2;
    while (fread(b, 1, w, f) == w) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            float *na = realloc(a, cap * sizeof *a);
            if (!na) {
                fprintf(stderr, "oww_npu: out of memory reading %s\n", path);
                free(a);
                fclose(f);
                return NULL;
            }
            a = na;
        }
        if (is_f32) {
            uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                         (uint32_t)b[3] << 24;
            memcpy(&a[len++], &u, sizeof u);
        } else {
            a[len++] = (float)(int16_t)(uint16_t)(b[0] | b[1] << 8);
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err || len < min) {
        fprintf(stderr, "oww_npu: %s: %s (%zu values, at least %zu needed)\n", path,
                err ? "read error" : "too short", len, min);
        free(a);
        return NULL;
    }
    *n = len;
    return a;
}

int main(int argc, char **argv)
{
    int scores = 0, a = 1;
    const char *mel_from = NULL;
    for (; a < argc; a++) {
        if (!strcmp(argv[a], "--scores"))
            scores = 1;
        else if (!strcmp(argv[a], "--mel-from") && a + 1 < argc)
            mel_from = argv[++a];
        else
            break;
    }
    if (argc - a < 4 || argv[a][0] == '-') {
        fprintf(stderr, "usage: oww_npu [--scores] [--mel-from DIR] MEL.exeom EMBEDDING.exeom "
                        "WAKEWORD.exeom CLIP.raw ...\n");
        return 2;
    }
    model mel = {.path = argv[a], .role = "melspectrogram"};
    model emb = {.path = argv[a + 1], .role = "embedding"};
    model ww = {.path = argv[a + 2], .role = "wake word"};
    int status = 1, inited = 0, device = 0, rc;
    aclrtContext context = NULL;
    aclrtStream stream = NULL;
    float *audio = NULL, *mels = NULL;
    uint64_t cyc_mel = 0, cyc_emb = 0, cyc_ww = 0, cyc_frame_max = 0, frames_all = 0;

    if (failed(aclInit(NULL), "aclInit", NULL))
        goto out;
    inited = 1;
    if (failed(aclrtSetDevice(0), "aclrtSetDevice", NULL))
        goto out;
    device = 1;
    if (failed(aclrtCreateContext(&context, 0), "aclrtCreateContext", NULL) ||
        failed(aclrtCreateStream(&stream), "aclrtCreateStream", NULL))
        goto out;
    if ((rc = model_load(&mel, WIN, MEL_NEW * MEL_BANDS)) ||
        (rc = model_load(&emb, EMB_FRAMES * MEL_BANDS, EMB)) ||
        (rc = model_load(&ww, WW_FRAMES * EMB, 1))) {
        status = rc;
        goto out;
    }

    static float mel_buf[EMB_FRAMES * MEL_BANDS], spec[MEL_NEW * MEL_BANDS];
    static float feats[WW_FRAMES * EMB], e[EMB];
    for (int c = a + 3; c < argc; c++) {
        size_t n = 0;
        free(audio);
        if (!(audio = read_samples(argv[c], 0, WIN, &n))) {
            status = 2;
            goto out;
        }
        size_t frames = (n - (WIN - FRAME)) / FRAME;
        if (mel_from) {
            const char *base = strrchr(argv[c], '/') ? strrchr(argv[c], '/') + 1 : argv[c];
            size_t bl = strlen(base);
            if (bl > 4 && !strcmp(base + bl - 4, ".raw"))
                bl -= 4;
            char path[4096];
            snprintf(path, sizeof path, "%s/%.*s.mel", mel_from, (int)bl, base);
            size_t nm = 0;
            free(mels);
            if (!(mels = read_samples(path, 1, frames * MEL_NEW * MEL_BANDS, &nm))) {
                status = 2;
                goto out;
            }
        }
        for (int i = 0; i < EMB_FRAMES * MEL_BANDS; i++)
            mel_buf[i] = 1.0f; /* openWakeWord's initial mel buffer */
        int n_feats = 0, scored = 0;
        long peak_at = -1;
        float peak = -INFINITY;
        uint64_t sat_mel = 0, sat_emb = 0, sat_ww = 0, cyc_frame = 0;
        for (size_t f = 0; f < frames; f++) {
            memmove(mel_buf, mel_buf + MEL_NEW * MEL_BANDS,
                    (EMB_FRAMES - MEL_NEW) * MEL_BANDS * sizeof *mel_buf);
            float *mel_new = mel_buf + (EMB_FRAMES - MEL_NEW) * MEL_BANDS;
            if (mel_from) { /* the float pipeline's, already transformed */
                memcpy(mel_new, mels + f * MEL_NEW * MEL_BANDS, sizeof spec);
                mel.cycles = mel.sat = 0;
            } else {
                if (model_run(&mel, stream, audio + f * FRAME, spec))
                    goto out;
                for (int i = 0; i < MEL_NEW * MEL_BANDS; i++)
                    mel_new[i] = spec[i] / 10.0f + 2.0f;
            }
            if (model_run(&emb, stream, mel_buf, e))
                goto out;
            if (n_feats == WW_FRAMES)
                memmove(feats, feats + EMB, (WW_FRAMES - 1) * EMB * sizeof *feats);
            else
                n_feats++;
            memcpy(feats + (n_feats - 1) * EMB, e, sizeof e);
            sat_mel += mel.sat;
            sat_emb += emb.sat;
            if (n_feats < WW_FRAMES)
                continue;
            float s;
            if (model_run(&ww, stream, feats, &s))
                goto out;
            sat_ww += ww.sat;
            scored++;
            if (scores)
                printf("score %zu %.6f\n", f, s);
            if (s > peak) {
                peak = s;
                peak_at = (long)f;
            }
            /* a frame with all three models */
            cyc_frame = mel.cycles + emb.cycles + ww.cycles;
            if (cyc_frame > cyc_frame_max) {
                cyc_frame_max = cyc_frame;
                cyc_mel = mel.cycles;
                cyc_emb = emb.cycles;
                cyc_ww = ww.cycles;
            }
        }
        frames_all += frames;
        if (scored)
            printf("clip %s frames %zu scored %d peak %.6f at %ld cycles_per_frame %llu "
                   "sat %llu/%llu/%llu\n", argv[c], frames, scored, peak, peak_at,
                   (unsigned long long)cyc_frame, (unsigned long long)sat_mel,
                   (unsigned long long)sat_emb, (unsigned long long)sat_ww);
        else
            printf("clip %s frames %zu scored 0 peak nan at -1 cycles_per_frame 0 "
                   "sat %llu/%llu/0\n", argv[c], frames, (unsigned long long)sat_mel,
                   (unsigned long long)sat_emb);
        fflush(stdout);
    }
    if (mel_from)
        printf("npu: melspectrogram not run (--mel-from): no budget\n");
    else if (cyc_frame_max) {
        double ms = (double)cyc_frame_max / (MHZ * 1e3);
        printf("npu: %llu frames; cycles per 80 ms frame: melspectrogram %llu + embedding %llu + "
               "wake word %llu = %llu = %.2f ms at %.0f MHz, %.1f%% of the %.0f ms budget "
               "(margin %.2f ms)\n", (unsigned long long)frames_all,
               (unsigned long long)cyc_mel, (unsigned long long)cyc_emb,
               (unsigned long long)cyc_ww, (unsigned long long)cyc_frame_max, ms, MHZ,
               100.0 * ms / FRAME_MS, FRAME_MS, FRAME_MS - ms);
    }
    status = 0;

out:
    free(audio);
    free(mels);
    model_free(&ww);
    model_free(&emb);
    model_free(&mel);
    if (stream)
        aclrtDestroyStream(stream);
    if (context)
        aclrtDestroyContext(context);
    if (device)
        aclrtResetDevice(0);
    if (inited)
        aclFinalize();
    return status;
}
