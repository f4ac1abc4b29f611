/* nanobench bring-up: the precision and placement search (issue 40).
 *
 * Given a target (the pooled SQNR, in dB, of each target output over the evaluation inputs,
 * measured on the simulated NPU against the float reference), the search looks for the
 * cheapest configuration that meets it. A configuration is a set of changes to the bring-up's
 * own: INT16 activations on a layer (the cube's s16 x s8; the calibration config's
 * override_layer_configs dst_type INT16) and runs of nodes on the MCU's CPU (atc's
 * --cpu_nodes, float32; calibrate leaves them float). Each configuration is calibrated,
 * compiled by atc (so only what the compiler accepts) and run on every evaluation input;
 * nothing is extrapolated. The fp16 fix's --nb_input_scale, when it found one, holds in
 * every try.
 *   1. sensitivity: each change alone, measured (the gain in dB over the bring-up's own, and
 *      its cost in cycles and bytes);
 *   2. greedy: changes in order of gain per cost, each added configuration measured, until
 *      the target holds;
 *   3. pruning: each chosen change (the most costly first) dropped when the target holds
 *      without it.
 * With opts->search_baseline, the ESP-PPQ-style rule is measured too: INT16 layer by layer in
 * sensitivity order until the target. Every configuration measured is a point of the Pareto
 * table (SQNR against cycles and exeom size). The tries are not recorded in the run history
 * (their logs are under OUT/log/8-search-*); the chosen configuration is run once more,
 * recorded, with the bringup's run as the parent of its calibrate, atc and runs.
 */
#define _XOPEN_SOURCE 700 /* nftw, strdup */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bu.h"
#include "nb/ir.h"
#include "nb/quant.h"
#include "nb/tensor.h"

enum { C_INT16, C_CPU, C_ALL16, C_ADA };
enum { MAX_CAND = 64 };

typedef struct cand {
    int kind;
    char *what;     /* INT16: the layer; CPU: "a;b" the nodes */
    bool ok;        /* measured alone */
    double sqnr, cycles;
    int64_t bytes;
    double gain;    /* sqnr over the configuration it was added to (dB) */
    bool alone_ok;  /* round 0: the change alone */
    double alone_sqnr, alone_cycles;
    char err[300];
} cand;

typedef struct meas {
    bool ok;
    char err[600];
    double sqnr;        /* the lowest pooled SQNR over the target outputs (dB) */
    double cycles;      /* NPU + CPU + switches, mean over the evaluation inputs */
    double cycles_max;
    double npu_cycles, cpu_cycles, switches;
    int64_t bytes;      /* the exeom's size */
    json_t *outs;       /* bu_output_metrics' */
} meas;

typedef struct search {
    bu *b;
    double target;
    int n;
    cand c[MAX_CAND];
    json_t *points;     /* every configuration measured */
    int tries;
    const char *scale;  /* the fp16 fix's --nb_input_scale, or the bring-up's */
    int batch_num;      /* the calibration's batches (the config's batch_num) */
    int skipped;        /* changes not tried: a name the config or --cpu_nodes cannot hold */
    meas base;
    meas ref;           /* the configuration a round measures each change on top of */
    char dir[3100];
} search;

static const char *kind_name(int k)
{
    return k == C_INT16 ? "int16" : k == C_CPU ? "cpu" : k == C_ALL16 ? "int16 on every layer"
                                                                      : "adaround weights";
}

/* a change named by its kind alone (no layer or node after it) */
static bool whole_model(int k) { return k == C_ALL16 || k == C_ADA; }

/* ---- names into a calibration config: protobuf text format's string ---- */

/* s can be a protobuf text string (the config's parser takes the escapes \" \\ \n \t and
 * no other control character) */
static bool pb_ok(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f)
            return false;
    return true;
}

/* s as a protobuf text string's body into f (\" \\ \n \t escaped; pb_ok(s) holds) */
static void pb_write(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"')
            fputs("\\\"", f);
        else if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (*s == '\t')
            fputs("\\t", f);
        else
            fputc(*s, f);
    }
}

/* the user's config's text (or ""), malloc'd; NULL with b->st */
static char *read_text(bu *b, const char *path)
{
    if (!path)
        return strdup("");
    FILE *f = fopen(path, "rb");
    if (!f) {
        nb_fail(b->st, NB_ERR_IO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t n;
    while (m && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    if (m)
        fclose(m);
    return buf;
}

/* The calibration config of a configuration: the user's own, then one
 * override_layer_configs per INT16 layer (the algorithm's message: the bring-up's --algo,
 * else IFMR's, as AMCT's default). 0, or an error with b->st. */
static nb_err write_config(search *s, const unsigned char *on, const char *path)
{
    bu *b = s->b;
    char *base = read_text(b, b->o->calibration_config);
    if (!base)
        return b->st->code;
    FILE *f = fopen(path, "w");
    if (!f) {
        free(base);
        return nb_fail(b->st, NB_ERR_IO, "%s: %s", path, strerror(errno));
    }
    fputs(base, f);
    free(base);
    if (!b->o->calibration_config) /* the bring-up's batches, so that the file alone gives them */
        fprintf(f, "batch_num: %d\n", s->batch_num);
    const char *algo = b->algo && !strcmp(b->algo, "hfmg") ? "hfmg_quantize" : "ifmr_quantize";
    fputs("\n# the search's changes (nanobench bringup --target_sqnr)\n", f);
    bool all = false;
    for (int i = 0; i < s->n; i++)
        all = all || (on[i] && s->c[i].kind == C_ALL16);
    for (int i = 0; i < s->n; i++) {
        if (!(on[i] || all) || s->c[i].kind != C_INT16)
            continue;
        fputs("override_layer_configs {\n  layer_name: \"", f);
        pb_write(f, s->c[i].what);
        fprintf(f, "\"\n  calibration_config {\n    %s { dst_type: INT16 }\n  }\n}\n", algo);
    }
    if (fclose(f))
        return nb_fail(b->st, NB_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    return NB_OK;
}

/* the nodes of list appended to l (each once) */
static void append_nodes(char *l, const char *list)
{
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ';');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k && !nb_list_has(l, p, k)) {
            if (*l)
                strcat(l, ";");
            strncat(l, p, k);
        }
        p += k + (e ? 1 : 0);
    }
}

/* the CPU nodes of a configuration: the bring-up's own, then each CPU change's, each node
 * once (malloc'd) */
static char *cpu_list(const search *s, const unsigned char *on)
{
    size_t len = 1 + (s->b->cpu_nodes ? strlen(s->b->cpu_nodes) + 1 : 0);
    for (int i = 0; i < s->n; i++)
        if (on[i] && s->c[i].kind == C_CPU)
            len += strlen(s->c[i].what) + 1;
    char *l = calloc(len, 1);
    if (!l)
        return NULL;
    if (s->b->cpu_nodes)
        append_nodes(l, s->b->cpu_nodes);
    for (int i = 0; i < s->n; i++)
        if (on[i] && s->c[i].kind == C_CPU)
            append_nodes(l, s->c[i].what);
    return l;
}

/* ---- one configuration, measured ---- */

static bool is_target(const bu *b, const char *name)
{
    const char *t = b->o->target_outputs;
    return !t || !*t || nb_list_has(t, name, strlen(name));
}

/* the lowest pooled SQNR over the target outputs; NaN when none is defined */
static double target_sqnr(const bu *b, const json_t *outs)
{
    double w = INFINITY;
    bool any = false;
    for (size_t i = 0; i < json_array_size(outs); i++) {
        const json_t *o = json_array_get(outs, i);
        if (!is_target(b, nb_json_str_of(o, "name")))
            continue;
        double v = nb_json_num_of(o, "pooled_sqnr_db");
        if (isnan(v))
            continue;
        any = true;
        if (v < w)
            w = v;
    }
    return any ? w : NAN;
}

/* cycles over the runs: the mean and the largest of the total, the means of its parts */
static void run_costs(const json_t *runs, meas *m)
{
    size_t n = json_array_size(runs);
    m->cycles = m->cycles_max = m->npu_cycles = m->cpu_cycles = m->switches = 0;
    for (size_t k = 0; k < n; k++) {
        const json_t *r = json_array_get(runs, k);
        double c = nb_json_num_of(r, "cycles");
        m->cycles += c;
        if (c > m->cycles_max)
            m->cycles_max = c;
        m->npu_cycles += nb_json_num_of(r, "npu_cycles");
        m->cpu_cycles += nb_json_num_of(r, "cpu_cycles");
        m->switches += nb_json_num_of(r, "switches");
    }
    if (n) {
        m->cycles /= (double)n;
        m->npu_cycles /= (double)n;
        m->cpu_cycles /= (double)n;
        m->switches /= (double)n;
    }
}

/* The fields of b a configuration replaces, kept to be put back. */
typedef struct saved {
    const char *save_p, *cfg, *cpu, *batch;
    const nb_bringup_opts *o;
    json_t *cal;
    int64_t id_cal;
    bool quiet, adaround;
    char save[3400], deploy[3400];
} saved;

static void swap_in(bu *b, saved *sv, const char *save, const char *cfg, const char *cpu,
                    const nb_bringup_opts *o)
{
    sv->cfg = b->cfg, sv->cpu = b->cpu_nodes, sv->batch = b->batch, sv->o = b->o;
    sv->cal = b->cal, sv->id_cal = b->id_cal, sv->quiet = b->quiet, sv->adaround = b->adaround;
    memcpy(sv->save, b->save, sizeof sv->save);
    memcpy(sv->deploy, b->deploy, sizeof sv->deploy);
    b->cfg = cfg, b->cpu_nodes = cpu, b->o = o, b->cal = NULL, b->quiet = true;
    snprintf(b->save, sizeof b->save, "%s", save);
    snprintf(b->deploy, sizeof b->deploy, "%s_deploy_model.onnx", save);
}

static void swap_out(bu *b, saved *sv)
{
    json_decref(b->cal);
    b->cfg = sv->cfg, b->cpu_nodes = sv->cpu, b->batch = sv->batch, b->o = sv->o;
    b->cal = sv->cal, b->id_cal = sv->id_cal, b->quiet = sv->quiet, b->adaround = sv->adaround;
    memcpy(b->save, sv->save, sizeof sv->save);
    memcpy(b->deploy, sv->deploy, sizeof sv->deploy);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path) && errno != ENOENT ? -1 : 0;
}

/* true for an error that ends the search (cancelled, out of memory), not the try */
static bool fatal(nb_err e) { return e == NB_ERR_NOMEM || e == NB_ERR_CANCELLED; }

/* calibrate, atc and every evaluation input of the configuration on (into s->dir/tag);
 * recorded in the run history when record (parent: the bringup's run). 0 with m filled
 * (m->ok false with m->err when a step refused it), or a fatal error with b->st. */
static nb_err measure_in(search *s, const unsigned char *on, const char *tag, bool record,
                         meas *m)
{
    bu *b = s->b;
    memset(m, 0, sizeof *m);
    m->sqnr = NAN;
    if (bu_cancelled(b))
        return bu_interrupted(b);
    char dir[3400], cfg[3500], save[3500], output[3500], exeom[3600], ln[96];
    snprintf(dir, sizeof dir, "%s/%s", s->dir, tag);
    snprintf(cfg, sizeof cfg, "%s/quant.cfg", dir);
    snprintf(save, sizeof save, "%s/quant/%s", dir, b->stem);
    snprintf(output, sizeof output, "%s/%s", dir, b->stem);
    snprintf(exeom, sizeof exeom, "%s.exeom", output);
    if (nb_mkdir_p(dir))
        return nb_fail(b->st, NB_ERR_IO, "%s: cannot make the folder: %s", dir, strerror(errno));
    nb_err e = write_config(s, on, cfg);
    if (e)
        return e;
    char *cpu = cpu_list(s, on);
    if (!cpu)
        return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
    nb_bringup_opts quiet_o = *b->o;
    if (!record)
        quiet_o.db = NULL; /* a try: not in the run history */
    saved sv;
    swap_in(b, &sv, save, cfg, *cpu ? cpu : NULL, &quiet_o);
    for (int i = 0; i < s->n; i++)
        b->adaround = b->adaround || (on[i] && s->c[i].kind == C_ADA);
    if (record)
        b->o = sv.o;
    int64_t parent = sv.o->run ? nb_run_id(sv.o->run) : 0, id = 0;
    json_t *runs = json_array();
    snprintf(ln, sizeof ln, "8-search-%s", tag);
    e = bu_calibrate(b, parent, ln);
    if (!e) {
        snprintf(ln, sizeof ln, "8-search-%s-atc", tag);
        e = bu_compile(b, output, s->scale, b->id_cal > 0 ? b->id_cal : parent, ln, &id, NULL);
    }
    for (int k = 0; !e && k < b->n_eval; k++) {
        char od[3700];
        snprintf(od, sizeof od, "%s/run/%d", dir, k);
        snprintf(ln, sizeof ln, "8-search-%s-run-%d", tag, k);
        json_t *o = NULL;
        int64_t rid = 0;
        if (bu_cancelled(b))
            e = bu_interrupted(b);
        else if (!(e = bu_run(b, exeom, k, od, NULL, id > 0 ? id : parent, ln, &o, &rid)))
            json_array_append_new(runs, o);
    }
    swap_out(b, &sv);
    free(cpu);
    s->tries++;
    if (e) {
        json_decref(runs);
        if (fatal(e))
            return e;
        snprintf(m->err, sizeof m->err, "%s", b->st->msg);
        *b->st = (nb_status){0};
        return NB_OK;
    }
    double worst;
    m->outs = bu_output_metrics(b, runs, &worst);
    if (!m->outs) {
        json_decref(runs);
        if (fatal(b->st->code))
            return b->st->code;
        snprintf(m->err, sizeof m->err, "%s", b->st->msg);
        *b->st = (nb_status){0};
        return NB_OK;
    }
    run_costs(runs, m);
    json_decref(runs);
    struct stat sb;
    m->bytes = stat(exeom, &sb) ? 0 : (int64_t)sb.st_size;
    m->sqnr = target_sqnr(b, m->outs);
    m->ok = !isnan(m->sqnr);
    if (!m->ok)
        snprintf(m->err, sizeof m->err, "no target output's SQNR is defined");
    return NB_OK;
}

/* measure_in, then a try's files removed (60 tries of a 1 MB model held 200 MB); its logs
 * stay under OUT/log, the chosen configuration's files under OUT/search/chosen */
static nb_err measure(search *s, const unsigned char *on, const char *tag, bool record,
                      meas *m)
{
    nb_err e = measure_in(s, on, tag, record, m);
    if (!record) {
        char dir[3400];
        struct stat sb;
        snprintf(dir, sizeof dir, "%s/%s", s->dir, tag);
        if (!lstat(dir, &sb) && S_ISDIR(sb.st_mode))
            nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    return e;
}

/* ---- the candidates ---- */

static bool have(const search *s, int kind, const char *what)
{
    for (int i = 0; i < s->n; i++)
        if (s->c[i].kind == kind && !strcmp(s->c[i].what, what))
            return true;
    return false;
}

static void add(search *s, int kind, const char *what)
{
    if (!what || !*what || s->n >= MAX_CAND || have(s, kind, what))
        return;
    if (kind == C_INT16 && !pb_ok(what)) { /* a name the config cannot hold */
        s->skipped++;
        return;
    }
    char *w = strdup(what);
    if (!w)
        return;
    s->c[s->n++] = (cand){.kind = kind, .what = w};
}

/* the nodes a compare row covers ("a;b"), or its layer (malloc'd) */
static char *row_nodes(search *s, const json_t *row)
{
    const json_t *cv = json_object_get(row, "covers");
    size_t len = strlen(nb_json_str_of(row, "layer")) + 2;
    for (size_t i = 0; i < json_array_size(cv); i++) {
        const char *n = json_string_value(json_array_get(cv, i));
        len += (n ? strlen(n) : 0) + 1;
    }
    char *l = calloc(len, 1);
    if (!l)
        return NULL;
    bool bad = false;
    for (size_t i = 0; i < json_array_size(cv) && !bad; i++) {
        const char *n = json_string_value(json_array_get(cv, i));
        if (!n || !*n)
            continue;
        bad = strchr(n, ';') != NULL; /* --cpu_nodes cannot name it */
        if (*l)
            strcat(l, ";");
        strcat(l, n);
    }
    if (!*l && !bad) {
        bad = strchr(nb_json_str_of(row, "layer"), ';') != NULL;
        strcat(l, nb_json_str_of(row, "layer"));
    }
    if (bad) {
        s->skipped++;
        l[0] = 0;
    }
    return l;
}

/* runs of nodes on the CPU: the compare row at index r, then with each row after it, up to
 * len rows (a saturating Mul's run reaches the Log that takes its range back: silero_vad's
 * Mul by 2^20, Add, Log; the Mul alone hands the NPU values beyond fp16 again) */
static void add_cpu_run(search *s, const json_t *rows, size_t r, size_t len)
{
    char *run = NULL;
    for (size_t k = 0; k < len && r + k < json_array_size(rows); k++) {
        char *n = row_nodes(s, json_array_get(rows, r + k));
        if (!n || !*n) {
            free(n);
            break;
        }
        size_t l = (run ? strlen(run) + 1 : 0) + strlen(n) + 1;
        char *both = malloc(l);
        if (!both) {
            free(n);
            break;
        }
        snprintf(both, l, "%s%s%s", run ? run : "", run ? ";" : "", n);
        free(n);
        free(run);
        run = both;
        add(s, C_CPU, run);
    }
    free(run);
}

/* the compare row of a layer (by its name), or -1 */
static long row_of(const json_t *rows, const char *layer)
{
    for (size_t i = 0; layer && *layer && i < json_array_size(rows); i++)
        if (!strcmp(nb_json_str_of(json_array_get(rows, i), "layer"), layer))
            return (long)i;
    return -1;
}

/* INT16 on every calibrated layer at 8 bits; the CPU for the layers the comparison and the
 * run name: the first over threshold, the largest SQNR drop, every task that clamped at
 * fp16's range, calibrate's own placement advice, each alone and with the task after it */
static void candidates(search *s)
{
    bu *b = s->b;
    const json_t *ls = json_object_get(b->cal, "layers");
    /* a layer the user's config overrides by name keeps its setting (a second
       override_layer_configs of it is refused as "given twice") */
    nb_quant_config uc;
    nb_quant_config_init(&uc);
    nb_status ignore = {0};
    bool have_uc = b->o->calibration_config &&
                   !nb_quant_config_load(b->o->calibration_config, &uc, &ignore);
    for (size_t i = 0; i < json_array_size(ls); i++) {
        const json_t *l = json_array_get(ls, i);
        bool user = false;
        for (int k = 0; have_uc && k < uc.n_by_name && !user; k++)
            user = !strcmp(uc.by_name[k].key, nb_json_str_of(l, "layer"));
        if (nb_json_num_of(l, "act_bits") == 8 && !user)
            add(s, C_INT16, nb_json_str_of(l, "layer"));
    }
    if (have_uc)
        nb_quant_config_free(&uc);
    int n16 = s->n;
    if (n16 > 1) /* the ceiling of activations' precision */
        add(s, C_ALL16, "every layer");
    if (json_array_size(ls) > 0) /* the int8 weights rounded as learned on the calibration data */
        add(s, C_ADA, "every layer");
    /* a cube layer in float32 on the CPU: the first two (fed by the model's inputs, where
       the input's and the weights' rounding weigh most) and calibrate's three worst (each
       of the others alone cost embedding_model 8 to 17 million cycles and under 1 dB) */
    const json_t *worst = json_object_get(b->cal, "worst_layers");
    for (size_t i = 0; i < json_array_size(ls); i++) {
        const char *name = nb_json_str_of(json_array_get(ls, i), "layer");
        bool pick = i < 2;
        for (size_t k = 0; k < json_array_size(worst) && !pick; k++)
            pick = !strcmp(nb_json_str_of(json_array_get(worst, k), "layer"), name);
        if (pick && strchr(name, ';'))
            s->skipped++; /* --cpu_nodes cannot name it */
        else if (pick)
            add(s, C_CPU, name);
    }
    const json_t *rows = json_object_get(b->cmp, "rows");
    const char *named[2] = {nb_json_str_of(json_object_get(b->cmp, "first_over_threshold"), "layer"),
                            nb_json_str_of(json_object_get(b->cmp, "largest_sqnr_drop"), "layer")};
    for (int q = 0; q < 2; q++) {
        long r = row_of(rows, named[q]);
        if (r >= 0)
            add_cpu_run(s, rows, (size_t)r, 2);
    }
    for (size_t k = 0; k < json_array_size(b->runs); k++) {
        const json_t *ts = json_object_get(json_object_get(json_array_get(b->runs, k),
                                                           "saturation"), "tasks");
        for (size_t i = 0; i < json_array_size(ts); i++) {
            long r = row_of(rows, nb_json_str_of(json_array_get(ts, i), "name"));
            if (r >= 0)
                add_cpu_run(s, rows, (size_t)r, 4);
        }
    }
    const char *adv = nb_json_str_of(b->advice, "nodes");
    if (*adv && !b->auto_cpu)
        add(s, C_CPU, adv);
}

/* ---- the search ---- */


static json_t *changes_json(const search *s, const unsigned char *on)
{
    json_t *a = json_array();
    for (int i = 0; i < s->n; i++)
        if (on[i]) {
            json_t *c = json_object();
            json_object_set_new(c, "change", json_string(kind_name(s->c[i].kind)));
            if (!whole_model(s->c[i].kind))
                json_object_set_new(c, s->c[i].kind != C_CPU ? "layer" : "nodes",
                                    nb_json_string(s->c[i].what));
            json_array_append_new(a, c);
        }
    return a;
}

/* beyond --search_max_cycles (the mean over the evaluation inputs) */
static bool over_budget(const search *s, double cycles)
{
    return s->b->o->search_max_cycles > 0 && cycles > s->b->o->search_max_cycles;
}

/* a measured configuration into the table (the Pareto front marked at the end) */
static json_t *point(search *s, const char *label, const unsigned char *on, const meas *m)
{
    json_t *p = json_object();
    json_object_set_new(p, "label", nb_json_string(label));
    json_object_set_new(p, "changes", changes_json(s, on));
    if (m->ok) {
        json_object_set_new(p, "sqnr_db", nb_json_num(m->sqnr));
        json_object_set_new(p, "cycles", json_real(m->cycles));
        json_object_set_new(p, "cycles_max", json_real(m->cycles_max));
        json_object_set_new(p, "npu_cycles", json_real(m->npu_cycles));
        json_object_set_new(p, "cpu_cycles", json_real(m->cpu_cycles));
        json_object_set_new(p, "switches", json_real(m->switches));
        json_object_set_new(p, "exeom_bytes", json_integer(m->bytes));
        json_object_set_new(p, "meets_target", json_boolean(m->sqnr >= s->target));
        if (over_budget(s, m->cycles))
            json_object_set_new(p, "over_cycle_budget", json_true());
    } else {
        json_object_set_new(p, "error", nb_json_string(m->err));
    }
    json_array_append_new(s->points, p);
    return p;
}

static void note_meas(const search *s, const char *what, const meas *m)
{
    if (m->ok)
        bu_note(s->b, "search %d: %s: %.1f dB, %.0f cycles, %lld bytes", s->tries, what,
                m->sqnr, m->cycles, (long long)m->bytes);
    else
        bu_note(s->b, "search %d: %s: refused: %s", s->tries, what, m->err);
}

/* relative cost of a change alone: cycles and size over the bring-up's own (>= 0.001) */
static double rel_cost(const search *s, const cand *c)
{
    double dc = (c->cycles - s->ref.cycles) / fmax(s->ref.cycles, 1);
    double db = (double)(c->bytes - s->ref.bytes) / fmax((double)s->ref.bytes, 1);
    return fmax(dc + 0.25 * db, 0.001);
}

/* one configuration measured (a try: not recorded), its note and its row of the table */
static nb_err try_config(search *s, const unsigned char *on, const char *tag, const char *label,
                         meas *m)
{
    nb_err e = measure(s, on, tag, false, m);
    if (e)
        return e;
    note_meas(s, label, m);
    point(s, label, on, m);
    return NB_OK;
}

/* 1. each change not in pick, added to it alone (round 0: pick empty, each change alone);
 * its gain and costs against ref (pick's own measure) */
static nb_err sensitivity(search *s, const unsigned char *pick, int round, unsigned char *on)
{
    for (int i = 0; i < s->n; i++) {
        cand *c = &s->c[i];
        c->ok = false;
        if (pick[i] || (round > 0 && c->err[0])) /* in, or refused by atc before */
            continue;
        bool all16 = false;
        for (int k = 0; k < s->n; k++)
            all16 = all16 || (pick[k] && s->c[k].kind == C_ALL16);
        if (all16 && c->kind == C_INT16)
            continue; /* no change */
        char tag[32], label[4200];
        snprintf(tag, sizeof tag, "r%d-%d", round, i);
        snprintf(label, sizeof label, "%s%s%s%s", round ? "+ " : "", kind_name(c->kind),
                 whole_model(c->kind) ? "" : " ", whole_model(c->kind) ? "" : c->what);
        memcpy(on, pick, (size_t)s->n);
        on[i] = 1;
        meas m;
        nb_err e = try_config(s, on, tag, label, &m);
        if (e)
            return e;
        c->ok = m.ok;
        if (m.ok) {
            c->sqnr = m.sqnr, c->cycles = m.cycles, c->bytes = m.bytes;
            c->gain = m.sqnr - s->ref.sqnr;
        } else {
            snprintf(c->err, sizeof c->err, "%s", m.err);
        }
        json_decref(m.outs);
    }
    return NB_OK;
}

/* the order of the changes: gain per relative cost (cost-aware), or gain alone (the rule);
 * changes with no gain left out. n of them into order. */
static int ranked(const search *s, bool by_cost, bool int16_only, int *order)
{
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        const cand *c = &s->c[i];
        /* below 0.2 dB: the noise of a calibration (the rule takes every layer, in order) */
        if (!c->ok || (by_cost && c->gain < 0.2) || (int16_only && c->kind != C_INT16) ||
            over_budget(s, c->cycles))
            continue;
        double key = by_cost ? c->gain / rel_cost(s, c) : c->gain;
        int at = n++;
        while (at > 0) {
            const cand *p = &s->c[order[at - 1]];
            double pk = by_cost ? p->gain / rel_cost(s, p) : p->gain;
            if (pk >= key)
                break;
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    return n;
}

/* 2. changes added in order, each configuration measured, until the target holds. The
 * configuration into on, its measure into best (the last measured); *met. */
static nb_err greedy(search *s, const int *order, int n, const char *prefix,
                     unsigned char *on, meas *best, bool *met)
{
    *met = false;
    bool all16 = false;
    for (int k = 0; k < s->n; k++)
        all16 = all16 || (on[k] && s->c[k].kind == C_ALL16);
    for (int q = 0; q < n && !*met; q++) {
        const cand *c = &s->c[order[q]];
        if (all16 && c->kind == C_INT16)
            continue; /* INT16 on every layer holds it already: no try */
        all16 = all16 || c->kind == C_ALL16;
        on[order[q]] = 1;
        char tag[48], label[128];
        snprintf(tag, sizeof tag, "%s-%d", prefix, q + 1);
        snprintf(label, sizeof label, "%s: the first %d change%s", prefix, q + 1,
                 q ? "s" : "");
        meas m;
        nb_err e = try_config(s, on, tag, label, &m);
        if (e)
            return e;
        if (!m.ok) { /* the compiler refused the set: this change out */
            on[order[q]] = 0;
            json_decref(m.outs);
            continue;
        }
        if (over_budget(s, m.cycles)) { /* this change out: beyond the budget */
            on[order[q]] = 0;
            json_decref(m.outs);
            continue;
        }
        if (!best->ok || m.sqnr > best->sqnr || m.sqnr >= s->target) {
            json_decref(best->outs);
            *best = m;
        } else {
            json_decref(m.outs);
        }
        *met = best->ok && best->sqnr >= s->target && !over_budget(s, best->cycles);
    }
    return NB_OK;
}

/* 3. every chosen change, the most costly first, dropped when the target holds without it
 * (a target not reached: when the best reached loses no more than 0.1 dB without it) */
static nb_err prune(search *s, unsigned char *on, meas *best, bool met)
{
    const double bar = met ? s->target : best->sqnr - 0.1;
    for (;;) {
        int drop = -1;
        double worst = -1;
        for (int i = 0; i < s->n; i++) /* the next to try: the most costly not tried */
            if (on[i] == 1 && rel_cost(s, &s->c[i]) > worst)
                worst = rel_cost(s, &s->c[i]), drop = i;
        if (drop < 0)
            break;
        on[drop] = 0;
        char tag[32], label[4200];
        snprintf(tag, sizeof tag, "prune-%d", drop);
        snprintf(label, sizeof label, "without %s%s%s", kind_name(s->c[drop].kind),
                 whole_model(s->c[drop].kind) ? "" : " ",
                 whole_model(s->c[drop].kind) ? "" : s->c[drop].what);
        meas m;
        nb_err e = try_config(s, on, tag, label, &m);
        if (e)
            return e;
        if (m.ok && m.sqnr >= bar && !over_budget(s, m.cycles)) {
            json_decref(best->outs);
            *best = m; /* dropped */
        } else {
            on[drop] = 2; /* kept (tried) */
            json_decref(m.outs);
        }
    }
    for (int i = 0; i < s->n; i++)
        on[i] = on[i] ? 1 : 0;
    return NB_OK;
}

/* the Pareto front among the measured points: not beaten on SQNR, cycles and size at once */
static void mark_pareto(json_t *points)
{
    for (size_t i = 0; i < json_array_size(points); i++) {
        json_t *p = json_array_get(points, i);
        if (json_object_get(p, "error"))
            continue;
        double q = nb_json_num_of(p, "sqnr_db"), c = nb_json_num_of(p, "cycles"), z = nb_json_num_of(p, "exeom_bytes");
        bool dominated = false;
        for (size_t j = 0; j < json_array_size(points) && !dominated; j++) {
            const json_t *o = json_array_get(points, j);
            if (j == i || json_object_get(o, "error"))
                continue;
            double oq = nb_json_num_of(o, "sqnr_db"), oc = nb_json_num_of(o, "cycles"),
                   oz = nb_json_num_of(o, "exeom_bytes");
            /* an equal point counts once: the first measured */
            dominated = oq >= q && oc <= c && oz <= z &&
                        (oq > q || oc < c || oz < z || j < i);
        }
        json_object_set_new(p, "pareto", json_boolean(!dominated));
    }
}

/* the chosen configuration for a user: the config file's text and atc's flags */
static void chosen_json(search *s, json_t *js, const unsigned char *on, const meas *m)
{
    bu *b = s->b;
    json_object_set_new(js, "chosen", changes_json(s, on));
    json_object_set_new(js, "chosen_sqnr_db", nb_json_num(m->sqnr));
    json_object_set_new(js, "chosen_cycles", json_real(m->cycles));
    json_object_set_new(js, "chosen_cycles_max", json_real(m->cycles_max));
    json_object_set_new(js, "chosen_exeom_bytes", json_integer(m->bytes));
    json_object_set_new(js, "chosen_outputs", json_incref(m->outs));
    char path[3400];
    snprintf(path, sizeof path, "%s/chosen/quant.cfg", s->dir);
    json_object_set_new(js, "calibration_config", nb_json_string(path));
    snprintf(path, sizeof path, "%s/chosen/%s.exeom", s->dir, b->stem);
    json_object_set_new(js, "exeom", nb_json_string(path));
    json_t *flags = json_array();
    char *cpu = cpu_list(s, on);
    if (cpu && *cpu) {
        json_array_append_new(flags, json_string("--cpu_nodes"));
        json_array_append_new(flags, nb_json_string(cpu));
    }
    free(cpu);
    if (s->scale) {
        json_array_append_new(flags, json_string("--nb_input_scale"));
        json_array_append_new(flags, nb_json_string(s->scale));
    }
    json_object_set_new(js, "atc_flags", flags);
}

void bu_search_clear(const bu *b)
{
    char p[3400];
    struct stat sb;
    snprintf(p, sizeof p, "%s/search", b->outdir);
    if (!lstat(p, &sb) && S_ISDIR(sb.st_mode) && nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS))
        bu_warn(b, "%s: cannot remove a previous search: %s", p, strerror(errno));
}


/* OUT/search/chosen/reproduce.sh: the chosen configuration's calibrate and atc commands as
 * they ran, each word shell-quoted (names and paths are data: quoted, never interpreted) */
static void write_reproduce(search *s, json_t *js, const json_t *argvs)
{
    char path[3400];
    snprintf(path, sizeof path, "%s/chosen/reproduce.sh", s->dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        bu_warn(s->b, "%s: cannot write: %s", path, strerror(errno));
        return;
    }
    fputs("#!/bin/sh\n# nanobench bringup --target_sqnr: the chosen configuration's calibrate and "
          "atc, as they ran (from the folder the bring-up ran in: its paths are as given)\n"
          "set -e\n", f);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd)) {
        fputs("cd", f);
        nb_shell_word(f, cwd, true);
        fputc('\n', f);
    }
    for (size_t i = 0; i < json_array_size(argvs); i++) {
        const json_t *a = json_array_get(argvs, i);
        const char *verb = json_string_value(json_array_get(a, 1));
        if (!verb || (strcmp(verb, "calibrate") && strcmp(verb, "atc")))
            continue;
        for (size_t k = 0; k < json_array_size(a); k++) {
            const char *w = json_string_value(json_array_get(a, k));
            if (w && (!strcmp(w, "--json") || !strcmp(w, "--progress")))
                continue;
            nb_shell_word(f, w, k > 0);
        }
        fputc('\n', f);
    }
    if (fclose(f))
        bu_warn(s->b, "%s: cannot write: %s", path, strerror(errno));
    else
        json_object_set_new(js, "reproduce", nb_json_string(path));
}

/* Rounds: each change measured on top of the configuration so far (round 1: alone), then
 * added by gain per cost until the target holds; a round that gains under 0.2 dB ends the
 * search (silero_vad: the Log's run on the CPU first, then the Convs after it, whose int16
 * showed nothing while the saturation dominated). The configuration into pick, its measure
 * into *best, *met; round 1's INT16 ranking (the rule's order) into ro, *rn. */
static nb_err search_rounds(search *s, unsigned char *pick, meas *best_out, bool *met_out,
                            int *ro, int *rn)
{
    unsigned char on[MAX_CAND] = {0};
    s->ref = s->base;
    meas best = {0};
    bool met = false;
    nb_err e = NB_OK;
    for (int round = 0; round < 3 && !met; round++) {
        if ((e = sensitivity(s, pick, round, on)))
            break;
        if (round == 0) { /* the rule's order, and each change alone, kept */
            *rn = ranked(s, false, true, ro);
            for (int i = 0; i < s->n; i++)
                s->c[i].alone_ok = s->c[i].ok, s->c[i].alone_sqnr = s->c[i].sqnr,
                s->c[i].alone_cycles = s->c[i].cycles;
        }
        int order[MAX_CAND], n = ranked(s, true, false, order);
        double before = best.ok ? best.sqnr : s->base.sqnr;
        char prefix[32];
        snprintf(prefix, sizeof prefix, round ? "round %d" : "greedy", round + 1);
        if (!n || (e = greedy(s, order, n, prefix, pick, &best, &met)))
            break;
        if (!met && !(best.ok && best.sqnr >= before + 0.2))
            break;
        if (!met) { /* the next round from the best so far */
            json_decref(s->ref.outs);
            s->ref = best;
            s->ref.outs = NULL;
        }
    }
    if (s->ref.outs != s->base.outs)
        json_decref(s->ref.outs);
    *best_out = best;
    *met_out = met;
    return e;
}

/* each change alone, on the bring-up's own configuration: summary search.candidates */
static json_t *candidates_json(const search *s)
{
    json_t *cands = json_array();
    for (int i = 0; i < s->n; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "change", json_string(kind_name(s->c[i].kind)));
        if (!whole_model(s->c[i].kind))
            json_object_set_new(c, s->c[i].kind != C_CPU ? "layer" : "nodes",
                                nb_json_string(s->c[i].what));
        if (s->c[i].alone_ok) { /* alone, on the bring-up's own configuration */
            json_object_set_new(c, "sqnr_db", nb_json_num(s->c[i].alone_sqnr));
            json_object_set_new(c, "gain_db", nb_json_num(s->c[i].alone_sqnr - s->base.sqnr));
            json_object_set_new(c, "cycles", json_real(s->c[i].alone_cycles));
        } else {
            json_object_set_new(c, "error", nb_json_string(s->c[i].err));
        }
        json_array_append_new(cands, c);
    }
    return cands;
}

/* --search_baseline: the ESP-PPQ-style rule, INT16 layer by layer in sensitivity order
 * (order, n: round 1's ranking) until the target; summary search.baseline_rule */
static nb_err baseline_rule(search *s, json_t *js, const int *order, int n)
{
    unsigned char on[MAX_CAND] = {0};
    meas rb = {0};
    bool rmet = false;
    nb_err e = greedy(s, order, n, "rule", on, &rb, &rmet);
    if (e)
        return e;
    json_t *r = json_object();
    json_object_set_new(r, "reached", json_boolean(rmet));
    json_object_set_new(r, "changes", changes_json(s, on));
    json_object_set_new(r, "sqnr_db", rb.ok ? nb_json_num(rb.sqnr) : json_null());
    json_object_set_new(r, "cycles", rb.ok ? json_real(rb.cycles) : json_null());
    json_object_set_new(r, "exeom_bytes", rb.ok ? json_integer(rb.bytes) : json_null());
    json_object_set_new(js, "baseline_rule", r);
    json_decref(rb.outs);
    return NB_OK;
}

static nb_err run_search(search *s, json_t *js, const json_t *outs)
{
    bu *b = s->b;
    unsigned char on[MAX_CAND] = {0}, pick[MAX_CAND] = {0};
    s->base.sqnr = target_sqnr(b, outs);
    run_costs(b->runs, &s->base);
    struct stat sb;
    s->base.bytes = stat(b->exeom, &sb) ? 0 : (int64_t)sb.st_size;
    s->base.ok = !isnan(s->base.sqnr);
    point(s, "as is", on, &s->base);
    if (b->fix_scale) {
        /* the fp16 fix found a scale, which every try keeps: the search starts from the
           bring-up with it (hey_mycroft: -37.6 dB as is, -26.8 with it; "no change" must
           read as its start, not as a change of its own) */
        meas m;
        nb_err e = try_config(s, on, "fixed", "as is with the fp16 fix's --nb_input_scale", &m);
        if (e)
            return e;
        if (m.ok) {
            json_object_set_new(js, "as_is_without_fix_sqnr_db", nb_json_num(s->base.sqnr));
            s->base = m;
            json_decref(s->base.outs);
            s->base.outs = NULL;
        }
    }
    json_object_set_new(js, "as_is_sqnr_db", nb_json_num(s->base.sqnr));
    if (!s->base.ok) {
        json_object_set_new(js, "result", json_string("no target output's SQNR is defined as is"));
        return NB_OK;
    }
    if (s->base.sqnr >= s->target) {
        /* the changes only add cycles: one over the budget as is stays over it */
        json_object_set_new(js, "result", json_string(over_budget(s, s->base.cycles)
                                                          ? "met as is, but over the cycle "
                                                            "budget (no change lowers cycles)"
                                                          : "met as is"));
        json_object_set_new(js, "reached", json_boolean(!over_budget(s, s->base.cycles)));
        return NB_OK;
    }
    if (b->qat) { /* --from_qdq takes the model's scales: no calibration to change */
        json_object_set_new(js, "result", json_string("not searched: a Q/DQ model carries its "
                                                      "own scales (its INT16, weights and "
                                                      "placement are the model's)"));
        json_object_set_new(js, "reached", json_false());
        return NB_OK;
    }
    candidates(s);
    bu_note(b, "search: %.1f dB as is, target %.1f dB: %d change%s to measure alone", s->base.sqnr,
            s->target, s->n, s->n == 1 ? "" : "s");
    if (s->skipped) {
        bu_warn(b, "search: %d change%s not tried: a layer or node name that the calibration "
                "config cannot hold (a control character) or that --cpu_nodes cannot name (';')",
                s->skipped, s->skipped == 1 ? "" : "s");
        json_object_set_new(js, "not_tried", json_integer(s->skipped));
    }
    meas best = {0};
    bool met = false;
    int ro[MAX_CAND], rn = 0;
    nb_err e = search_rounds(s, pick, &best, &met, ro, &rn);
    if (!e && best.ok)
        e = prune(s, pick, &best, met);
    if (e) {
        json_decref(best.outs);
        return e;
    }
    if (b->o->search_baseline && (e = baseline_rule(s, js, ro, rn))) {
        json_decref(best.outs);
        return e;
    }
    json_object_set_new(js, "candidates", candidates_json(s));
    json_object_set_new(js, "reached", json_boolean(met));
    if (!met) { /* where the error comes from, as the bring-up's own comparison measured it */
        const json_t *wd = json_object_get(b->cmp, "largest_sqnr_drop");
        json_object_set_new(js, "limiting_layer", json_is_object(wd)
                                                      ? nb_json_string(nb_json_str_of(wd, "layer"))
                                                      : json_null());
    }
    if (!best.ok) {
        json_object_set_new(js, "result", json_string(b->o->search_max_cycles > 0
                                                          ? "no change within the cycle budget "
                                                            "raised the target outputs' SQNR"
                                                          : "no change raised the target "
                                                            "outputs' SQNR"));
        return NB_OK;
    }
    /* the chosen (or, unmet, the best reached) configuration, recorded */
    meas rec;
    b->argv_kept = json_array(); /* the commands that give it, as recorded */
    e = measure(s, pick, "chosen", true, &rec);
    if (!e) {
        note_meas(s, "the chosen configuration, recorded", &rec);
        write_reproduce(s, js, b->argv_kept);
    }
    json_object_set_new(js, "commands", b->argv_kept);
    b->argv_kept = NULL;
    if (e) {
        json_decref(best.outs);
        return e;
    }
    chosen_json(s, js, pick, rec.ok ? &rec : &best);
    json_object_set_new(js, "result", json_string(met ? "reached" : "not reached: the best "
                                                  "configuration measured is chosen"));
    json_decref(best.outs);
    json_decref(rec.outs);
    return NB_OK;
}

json_t *bu_search(bu *b, const json_t *outs)
{
    search *s = calloc(1, sizeof *s);
    json_t *js = json_object();
    if (!s || !js) {
        free(s);
        json_decref(js);
        nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        return NULL;
    }
    double t0 = bu_now();
    const char *t = b->o->target_outputs; /* every name an output of the NPU's */
    for (const char *p = t; p && *p;) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        bool found = false;
        for (size_t i = 0; i < json_array_size(outs) && !found; i++) {
            const char *o = nb_json_str_of(json_array_get(outs, i), "name");
            found = strlen(o) == n && !strncmp(o, p, n);
        }
        if (!found) {
            free(s);
            json_decref(js);
            nb_fail(b->st, NB_ERR_ARG, "--target_outputs: '%.*s' is not an output of the "
                    "model as compiled", (int)(n > 200 ? 200 : n), p);
            return NULL;
        }
        p += n + (end ? 1 : 0);
    }
    s->b = b;
    s->target = b->o->target_sqnr;
    s->points = json_array();
    s->scale = b->fix_scale ? b->fix_scale : b->in_scale;
    s->batch_num = (int)nb_json_num_of(b->cal, "batches");
    snprintf(s->dir, sizeof s->dir, "%s/search", b->outdir);
    b->stage = "the search";
    json_object_set_new(js, "target_sqnr_db", json_real(s->target));
    json_object_set_new(js, "max_cycles", b->o->search_max_cycles > 0
                                              ? json_real(b->o->search_max_cycles) : json_null());
    json_object_set_new(js, "target_outputs", b->o->target_outputs
                                                 ? nb_json_string(b->o->target_outputs)
                                                 : json_null());
    nb_err e = run_search(s, js, outs);
    mark_pareto(s->points);
    json_object_set_new(js, "points", s->points);
    json_object_set_new(js, "tries", json_integer(s->tries));
    json_object_set_new(js, "wall_s", json_real(bu_now() - t0));
    for (int i = 0; i < s->n; i++)
        free(s->c[i].what);
    free(s);
    if (e) {
        json_decref(js);
        return NULL;
    }
    return js;
}
