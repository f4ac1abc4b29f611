/* nanobench bring-up (include/nb/bringup.h): the pipeline, step by step, in process.
 *
 * estimate -> calibrate -> atc -> run (K evaluation inputs) -> infer (the float reference on
 * the same inputs) -> compare (per layer, the evaluation input of the lowest output SQNR),
 * the fp16 fix, summary.json and report.html. Each step is recorded as a child of the step
 * before it (the first: the bringup's own run), so `nanobench history show BRINGUP_RUN`
 * lists the chain. */
#define _POSIX_C_SOURCE 200809L
#include <sys/file.h>
#include <fcntl.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bu.h"
#include "nb/accucmp.h"
#include "nb/ir.h"
#include "nb/json.h"
#include "nb/report.h"

nb_err nb_bringup_check(const nb_bringup_opts *o, nb_status *st)
{
    if (!o->model || !*o->model)
        return nb_fail(st, NB_ERR_ARG, "no model given");
    if (o->cpu_nodes && o->auto_place)
        return nb_fail(st, NB_ERR_ARG, "--cpu_nodes and --auto_place are either / or: the "
                       "placement is given, or calibrate's advice is taken");
    if ((!o->data_dir || !*o->data_dir) && !bu_model_is_qdq(o->model, o->input_shape))
        return nb_fail(st, NB_ERR_ARG, "--data_dir is required (the calibration data, one "
                       "folder per input; a Q/DQ model needs none)");
    if (o->calibration_config && o->batch_num)
        return nb_fail(st, NB_ERR_ARG, "--calibration_config and --batch_num are exclusive "
                       "(the config holds batch_num)");
    if (o->eval_count < 0 || o->eval_count > NB_BRINGUP_MAX_EVAL)
        return nb_fail(st, NB_ERR_ARG, "--eval_count is a whole number from 1 to %d, not %d",
                       NB_BRINGUP_MAX_EVAL, o->eval_count);
    if (o->has_target && !(o->target_sqnr > -100 && o->target_sqnr < 200))
        return nb_fail(st, NB_ERR_ARG, "--target_sqnr is an SQNR in dB (from -100 to 200), "
                       "not %g", o->target_sqnr);
    if (o->target_outputs && !o->has_target)
        return nb_fail(st, NB_ERR_ARG, "--target_outputs names the outputs --target_sqnr "
                       "holds: give --target_sqnr too");
    if (o->search_max_cycles != 0 && !(o->has_target && o->search_max_cycles >= 1))
        return nb_fail(st, NB_ERR_ARG, "--search_max_cycles is a cycle count (1 or more) for "
                       "the search: give --target_sqnr too");
    if (o->search_baseline && !o->has_target)
        return nb_fail(st, NB_ERR_ARG, "--search_baseline needs --target_sqnr");
    if (o->has_fail_cos && !(o->fail_under_cosine >= -1 && o->fail_under_cosine <= 1))
        return nb_fail(st, NB_ERR_ARG, "--fail-under-cosine is a cosine from -1 to 1, not %g",
                       o->fail_under_cosine);
    if (o->threshold) { /* compare's own check, before anything runs */
        nb_cmp_thresholds th;
        nb_cmp_thresholds_default(&th);
        if (nb_cmp_thresholds_parse(o->threshold, &th, st))
            return nb_prefix(st, "--threshold");
    }
    /* the longest folder whose derived paths (fix/<try>/run/<k>/<output>.npy, the dumps'
       <time>/0/<model>/1/0/...) stay within PATH_MAX: 1,400 to 2,000 passed this check and
       failed after three steps */
    if (o->out && (!*o->out || strlen(o->out) > 1200))
        return nb_fail(st, NB_ERR_ARG, "--out needs a folder (up to 1200 characters)");
    /* paths travel through summary.json and the steps' JSON, which hold UTF-8 text only (a
       folder 'x\xe9y' came back as 'x?y' and its run's files were not found) */
    const char *what[4] = {"the model's path", "--out", "--data_dir", "--eval_dir"};
    const char *path[4] = {o->model, o->out, o->data_dir, o->eval_dir};
    for (int i = 0; i < 4; i++)
        if (path[i] && !nb_utf8_valid(path[i]))
            return nb_fail(st, NB_ERR_ARG, "%s is not UTF-8 text (summary.json and the run "
                           "history hold paths as UTF-8): rename the file or folder", what[i]);
    return NB_OK;
}

/* The model file and every data and evaluation folder can be read, and each folder holds
 * batch files: the messages the estimate and calibrate steps would give; --target_outputs
 * names outputs of the model (with --out_nodes: checked once compiled). */
static nb_err precheck(bu *b)
{
    struct stat sb;
    if (stat(b->o->model, &sb))
        return nb_fail(b->st, NB_ERR_IO, "estimate failed: %s: %s", b->o->model,
                       strerror(errno));
    for (const char *p = b->o->target_outputs; p && !b->o->out_nodes;) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *name = strndup(p, n);
        bool ok = name && n && bu_model_output(b->model, b->o->input_shape, name);
        bool twice = ok && end && nb_list_has(end + 1, name, n);
        free(name);
        if (!ok || twice)
            return nb_fail(b->st, NB_ERR_ARG, "--target_outputs: '%.*s' is %s", (int)(n > 200 ? 200 : n),
                           p, twice ? "given twice" : n ? "not an output of the model"
                                                        : "empty (\"a;b\": output names)");
        if (!end)
            break;
        p = end + 1;
    }
    const char *flags[2] = {"--data_dir", "--eval_dir"};
    const char *dirs[2] = {b->o->data_dir, b->o->eval_dir};
    for (int k = 0; k < 2; k++) {
        if (!dirs[k] || !*dirs[k])
            continue;
        char *copy = strdup(dirs[k]), *save = NULL;
        if (!copy)
            return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        nb_err e = NB_OK;
        for (char *d = strtok_r(copy, ";", &save); d && !e; d = strtok_r(NULL, ";", &save)) {
            char **files = NULL, first[64];
            int skipped = 0;
            int n = nb_list_batches(d, &files, &skipped, first, sizeof first);
            if (n < 0)
                e = nb_fail(b->st, NB_ERR_IO, "calibrate failed: %s %s: %s", flags[k], d,
                            strerror(errno));
            else if (n == 0)
                e = nb_fail(b->st, NB_ERR_ARG, "calibrate failed: %s: no batch files (.npy or "
                            ".bin) in the folder", d);
            nb_files_free(files, n > 0 ? n : 0);
        }
        free(copy);
        if (e)
            return e;
    }
    return NB_OK;
}

/* The options taken, the names made (the model's stem, safe for ATC's --output), the folder
 * made and cleared of a previous bring-up's summary, report and fix tries. */
static nb_err setup(bu *b, const nb_bringup_opts *o)
{
    b->model = o->model, b->data_dir = o->data_dir && *o->data_dir ? o->data_dir : NULL;
    b->shape = o->input_shape, b->types = o->data_types, b->cfg = o->calibration_config;
    b->batch = o->batch_num, b->algo = o->algo, b->eval_dir = o->eval_dir;
    b->soc = o->soc_version, b->fp16 = o->input_fp16_nodes, b->otype = o->output_type;
    b->out_nodes = o->out_nodes, b->in_scale = o->nb_input_scale, b->threshold = o->threshold;
    b->cpu_nodes = o->cpu_nodes;
    b->eval_count = o->eval_count ? o->eval_count : 5;
    const char *base = strrchr(b->model, '/');
    base = base ? base + 1 : b->model;
    char stem[256];
    snprintf(stem, sizeof stem, "%s", base);
    size_t sl = strlen(stem);
    if (sl > 5 && !strcmp(stem + sl - 5, ".onnx"))
        stem[sl - 5] = 0;
    nb_safe_name(stem, b->stem, sizeof b->stem);
    if (o->out) {
        snprintf(b->outdir, sizeof b->outdir, "%s", o->out);
        size_t ol = strlen(b->outdir);
        while (ol > 1 && b->outdir[ol - 1] == '/')
            b->outdir[--ol] = 0;
    } else {
        snprintf(b->outdir, sizeof b->outdir, "bringup_%s", b->stem);
    }
    snprintf(b->save, sizeof b->save, "%s/quant/%s", b->outdir, b->stem);
    /* what would stop the bring-up at once (a model or folder not there) is said before any
       folder is made (a missing --data_dir left an empty OUT/log/ behind) */
    nb_err pe = precheck(b);
    if (pe)
        return pe;
    char dir[3400];
    snprintf(dir, sizeof dir, "%s/log", b->outdir);
    if (nb_mkdir_p(dir))
        return nb_fail(b->st, NB_ERR_IO, "%s: cannot make the folder: %s", b->outdir,
                       strerror(errno));
    /* one bring-up at a time in a folder (two at once mixed their files and each printed
       the other's numbers: a breaker's find); the lock goes with the process */
    char lp[3400];
    snprintf(lp, sizeof lp, "%s/.bringup.lock", b->outdir);
    b->lock_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (b->lock_fd < 0)
        return nb_fail(b->st, NB_ERR_IO, "%s: cannot write: %s", lp, strerror(errno));
    if (flock(b->lock_fd, LOCK_EX | LOCK_NB))
        return nb_fail(b->st, NB_ERR_ARG, "%s is in use by another bring-up: give another --out, "
                       "or wait for it", b->outdir);
    /* a summary.json that is not a bring-up's: the user's own folder, not replaced */
    char sp[3400];
    struct stat ssb;
    snprintf(sp, sizeof sp, "%s/summary.json", b->outdir);
    json_t *prev = NULL;
    nb_status ignore = {0};
    if (!stat(sp, &ssb) && nb_report_load_summary(b->outdir, &prev, &ignore))
        return nb_fail(b->st, NB_ERR_ARG, "%s is not a bring-up's summary: the folder is not "
                       "replaced (give another --out)", sp);
    json_decref(prev);
    /* (precheck ran before: a typo in --data_dir once deleted run 810's summary and report
       before it failed) */
    char why[600] = "";
    long long by = nb_report_folder_clear(b->outdir, why, sizeof why);
    if (by > 0)
        bu_note(b, "bringup: %s holds bringup %lld's files: they are replaced (its numbers "
                "stay in the history: nanobench history show %lld)", b->outdir, by, by);
    else if (by == 0)
        bu_note(b, "bringup: %s holds an unrecorded bringup's files: they are replaced",
                b->outdir);
    if (why[0] && b->h && b->h->warn)
        b->h->warn(b->h->user, why);
    bu_fix_clear(b);
    bu_search_clear(b);
    return NB_OK;
}

/* calibrate (or the QAT import); --auto_place: calibrate's own placement advice taken, the
 * calibration done again with those nodes float (the estimate again too) */
static nb_err stage_calibrate(bu *b)
{
    char detail[160] = "";
    if (b->qat)
        snprintf(detail, sizeof detail, "(QAT: the model's own scales, no calibration)");
    else if (b->batch)
        snprintf(detail, sizeof detail, "(%s batch%s)", b->batch, strcmp(b->batch, "1") ? "es" : "");
    else if (!b->cfg)
        snprintf(detail, sizeof detail, "(every batch)");
    for (;;) {
        b->stage = "calibrate";
        bu_step(b, 1, detail, "");
        int64_t parent = b->id_est > 0 ? b->id_est : b->o->run ? nb_run_id(b->o->run) : 0;
        nb_err e = bu_calibrate(b, parent, detail);
        if (e)
            return e;
        if (!b->advice && json_is_object(json_object_get(b->cal, "cpu_advice")))
            b->advice = json_incref(json_object_get(b->cal, "cpu_advice"));
        const char *advice = json_string_value(json_object_get(b->cal, "suggested_cpu_nodes"));
        if (!b->o->auto_place || b->cpu_nodes || !advice || !*advice)
            break;
        if (!(b->auto_cpu = strdup(advice)))
            return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
        b->cpu_nodes = b->auto_cpu;
        if (bu_cancelled(b))
            return bu_interrupted(b);
        if ((e = bu_estimate(b, "(the placement)"))) /* what atc will now compile */
            return e;
        snprintf(detail, sizeof detail, "(again, --auto_place: %.80s%s on the CPU)", advice,
                 strlen(advice) > 80 ? "..." : "");
    }
    bu_step_done(b, 1, detail);
    return bu_pick_eval(b);
}

static nb_err stage_compile(bu *b, int64_t *parent)
{
    b->stage = "atc";
    bu_step(b, 2, "", "");
    snprintf(b->deploy, sizeof b->deploy, "%s_deploy_model.onnx", b->save);
    char output[3400];
    snprintf(output, sizeof output, "%s/%s", b->outdir, b->stem);
    snprintf(b->exeom, sizeof b->exeom, "%s.exeom", output);
    *parent = b->id_cal > 0 ? b->id_cal : b->id_est > 0 ? b->id_est
              : b->o->run ? nb_run_id(b->o->run) : 0;
    double t0 = bu_now();
    nb_err e = bu_compile(b, output, b->in_scale, *parent, "3-atc", &b->id_atc, &b->atc_warn);
    b->step_ms[2] += (bu_now() - t0) * 1e3;
    if (e)
        return bu_step_failed(b, "atc");
    for (size_t i = 0; i < json_array_size(b->atc_warn); i++)
        bu_atc_advice(b, json_string_value(json_array_get(b->atc_warn, i)));
    struct stat sb;
    if (stat(b->exeom, &sb))
        return nb_fail(b->st, NB_ERR_INTERNAL, "atc wrote no %s", b->exeom);
    bu_step_done(b, 2, "");
    if (b->id_atc > 0)
        *parent = b->id_atc;
    return NB_OK;
}

/* the dump config of the run that dumps: every task's output of the model, into npu_dump */
static nb_err write_acl(bu *b, const char *acl)
{
    char npu_dump[3400];
    snprintf(npu_dump, sizeof npu_dump, "%s/npu_dump", b->outdir);
    json_t *entry = json_object(), *list = json_array(), *d = json_object(),
           *root = json_object();
    json_object_set_new(entry, "model_name", nb_json_string(b->stem));
    json_array_append_new(list, entry);
    json_object_set_new(d, "dump_list", list);
    json_object_set_new(d, "dump_path", nb_json_string(npu_dump));
    json_object_set_new(d, "dump_mode", json_string("output"));
    json_object_set_new(d, "dump_op_switch", json_string("off"));
    json_object_set_new(d, "dump_data", json_string("tensor"));
    json_object_set_new(root, "dump", d);
    nb_status st = {0};
    nb_err w = nb_json_write_atomic(root, acl, JSON_INDENT(2) | JSON_PRESERVE_ORDER, &st);
    json_decref(root);
    if (w)
        return nb_fail(b->st, NB_ERR_IO, "cannot write the dump config: %s", st.msg);
    return NB_OK;
}

/* every evaluation input on the simulator (step 3) or the float reference (step 4) */
static nb_err stage_eval(bu *b, int stepno, int64_t parent, bool dump_all)
{
    char detail[128];
    snprintf(detail, sizeof detail, "%s (%d input%s)",
             stepno == 3 ? "on the simulator" : "float reference", b->n_eval,
             b->n_eval == 1 ? "" : "s");
    b->stage = nb_bringup_step_name[stepno];
    bu_step(b, stepno, detail, "");
    if (stepno == 3 && !b->runs && !(b->runs = json_array()))
        return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < b->n_eval; k++) {
        char od[3400], ln[32];
        double t0 = bu_now();
        nb_err e;
        if (bu_cancelled(b))
            return bu_interrupted(b);
        if (stepno == 3) {
            json_t *o = NULL;
            snprintf(od, sizeof od, "%s/run/%d", b->outdir, k);
            snprintf(ln, sizeof ln, "4-run-%d", k);
            if (!(e = bu_run(b, b->exeom, k, od, NULL, parent, ln, &o, &b->id_run[k])))
                json_array_append_new(b->runs, o);
        } else {
            snprintf(od, sizeof od, "%s/reference/%d", b->outdir, k);
            snprintf(ln, sizeof ln, "5-infer-%d", k);
            e = bu_infer(b, k, od, dump_all, NULL, b->id_run[k] > 0 ? b->id_run[k] : parent, ln,
                         &b->id_inf[k]);
        }
        b->step_ms[stepno] += (bu_now() - t0) * 1e3;
        if (e)
            return bu_step_failed(b, nb_bringup_step_name[stepno]);
        if (k + 1 < b->n_eval) {
            char p[32];
            snprintf(p, sizeof p, "%d/%d", k + 1, b->n_eval);
            bu_step(b, stepno, detail, p);
        }
    }
    bu_step_done(b, stepno, detail);
    return NB_OK;
}

/* the golden dumps' folder: golden_dump/<time>, a new one */
static void golden_folder(bu *b)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tmv;
    strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", localtime_r(&now, &tmv));
    snprintf(b->gold, sizeof b->gold, "%s/golden_dump/%s", b->outdir, stamp);
    for (int k = 2; access(b->gold, F_OK) == 0 && k < 1000; k++)
        snprintf(b->gold, sizeof b->gold, "%s/golden_dump/%s_%d", b->outdir, stamp, k);
}

/* The report from the summary in memory, then summary.json, each written whole under a
 * temporary name and renamed (issue 35: summary.json was written in place twice around the
 * report; a kill left a cut summary, or a whole one with no report), then the bringup's own
 * run's figures. A cancel during the report: NB_ERR_CANCELLED, neither published. */
static nb_err write_summary(bu *b, nb_bringup_result *res, json_t *outs, double worst,
                            json_t *sat, double sat_total, json_t *fix, json_t *srch)
{
    struct stat sb;
    int64_t exeom_bytes = stat(b->exeom, &sb) ? 0 : (int64_t)sb.st_size;
    res->worst_cosine = worst;
    res->below = b->o->has_fail_cos && (isnan(worst) || worst < b->o->fail_under_cosine);
    double wall = bu_now() - b->t0;
    json_t *s = bu_summary_json(b, outs, worst, sat, exeom_bytes, wall, res->below);
    json_object_set_new(s, "saturation_fix", fix ? fix : json_null());
    if (srch)
        json_object_set_new(s, "search", srch);
    res->summary = s;
    snprintf(res->summary_path, sizeof res->summary_path, "%s/summary.json", b->outdir);
    const char *sp = res->summary_path;
    snprintf(res->report_path, sizeof res->report_path, "%s/report.html", b->outdir);
    json_object_set_new(s, "report", nb_json_string(res->report_path));
    nb_report_src rs = {.dir = b->outdir, .label = b->stem,
                        .run_id = b->o->run ? nb_run_id(b->o->run) : 0, .summary = s};
    nb_report_opts ro = {&rs, NULL, NULL, res->report_path, b->h ? b->h->cancel : NULL};
    nb_status st;
    nb_err e = nb_report_write(&ro, NULL, &st);
    if (e == NB_ERR_CANCELLED || (b->h && b->h->cancel && *b->h->cancel)) {
        snprintf(res->stage, sizeof res->stage, "report");
        return nb_fail(b->st, NB_ERR_CANCELLED, "interrupted during the report");
    }
    if (e) {
        if (b->h && b->h->warn) {
            char w[1100];
            snprintf(w, sizeof w, "report: %s", st.msg);
            b->h->warn(b->h->user, w);
        }
        res->report_path[0] = 0; /* the bring-up itself stands */
        json_object_set_new(s, "report", json_null());
    }
    if (nb_json_write_atomic(s, sp, JSON_INDENT(2) | JSON_PRESERVE_ORDER, &st) && b->h &&
        b->h->warn) {
        char w[1100];
        snprintf(w, sizeof w, "cannot write the summary: %s", st.msg);
        b->h->warn(b->h->user, w);
    }
    bu_record_summary(b, json_object_get(s, "outputs"), worst, sat_total, exeom_bytes, wall, sp,
                      res->report_path);
    (void)outs;
    return NB_OK;
}

/* the network outputs over the K inputs, the layer comparison on the worst, the fix, the
 * summary */
static nb_err stage_compare(bu *b, nb_bringup_result *res, int64_t parent, bool dump_all)
{
    char acl[3400];
    snprintf(acl, sizeof acl, "%s/acl.json", b->outdir);
    double worst = NAN, sat_total = 0;
    json_t *outs = bu_output_metrics(b, b->runs, &worst);
    if (!outs)
        return b->st->code;
    nb_err e = bu_dump_worst(b, outs, acl, dump_all, parent);
    if (!e && bu_cancelled(b))
        e = bu_interrupted(b);
    if (!e) {
        b->stage = "compare";
        bu_step(b, 5, "", "");
        double t0 = bu_now();
        e = bu_compare(b, b->id_dump_inf > 0 ? b->id_dump_inf : parent);
        b->step_ms[5] += (bu_now() - t0) * 1e3;
    }
    if (e) {
        json_decref(outs);
        return e;
    }
    bu_step_done(b, 5, "");
    json_t *sat = bu_saturation_json(b, &sat_total), *fix = NULL;
    if (sat_total > 0 && !(fix = bu_saturation_fix(b, sat_total, parent))) {
        json_decref(outs);
        json_decref(sat);
        if (b->st->code == NB_ERR_CANCELLED || bu_cancelled(b))
            return bu_interrupted(b);
        return b->st->code ? b->st->code
                           : nb_fail(b->st, NB_ERR_INTERNAL, "the fp16 fix stopped with no "
                                     "reason (a bug in nanobench)");
    }
    json_t *srch = NULL;
    if (b->o->has_target) {
        const json_t *sc = json_object_get(fix, "nb_input_scale");
        b->fix_scale = json_is_string(sc) ? json_string_value(sc) : NULL;
        if (!(srch = bu_search(b, outs))) {
            json_decref(outs);
            json_decref(sat);
            json_decref(fix);
            return b->st->code ? b->st->code
                               : nb_fail(b->st, NB_ERR_INTERNAL, "the search stopped with no "
                                         "reason (a bug in nanobench)");
        }
    }
    return write_summary(b, res, outs, worst, sat, sat_total, fix, srch);
}

/* the steps in order; every stage checks the cancel flag before it starts */
static nb_err pipeline(bu *b, nb_bringup_result *res)
{
    nb_err e;
    b->stage = "estimate";
    if ((e = bu_estimate(b, "")))
        return e;
    bu_step_done(b, 0, "");
    if ((e = bu_model_inputs(b)))
        return e;

    if (bu_cancelled(b))
        return bu_interrupted(b);
    if ((e = stage_calibrate(b)))
        return e;
    b->id_run = calloc((size_t)b->n_eval + 1, sizeof *b->id_run);
    b->id_inf = calloc((size_t)b->n_eval + 1, sizeof *b->id_inf);
    if (!b->id_run || !b->id_inf)
        return nb_fail(b->st, NB_ERR_NOMEM, "out of memory");
    int64_t parent = 0;
    if (bu_cancelled(b))
        return bu_interrupted(b);
    if ((e = stage_compile(b, &parent)))
        return e;
    char acl[3400];
    snprintf(acl, sizeof acl, "%s/acl.json", b->outdir);
    if ((e = write_acl(b, acl)) || (e = stage_eval(b, 3, parent, false)))
        return e;
    /* an NPU output that is not a model output (--out_nodes) is an intermediate: every
       tensor of the reference is written */
    bool dump_all = false;
    const json_t *outs0 = json_object_get(json_array_get(b->runs, 0), "outputs");
    for (size_t i = 0; i < json_array_size(outs0) && !dump_all; i++)
        dump_all = !bu_model_output(b->model, b->shape, nb_json_str_of(json_array_get(outs0, i), "name"));
    golden_folder(b);
    if ((e = stage_eval(b, 4, parent, dump_all)))
        return e;
    if (bu_cancelled(b))
        return bu_interrupted(b);
    return stage_compare(b, res, parent, dump_all);
}

static void bu_free(bu *b)
{
    json_decref(b->est);
    json_decref(b->cal);
    json_decref(b->advice);
    json_decref(b->cmp);
    json_decref(b->runs);
    json_decref(b->atc_warn);
    json_decref(b->suggest);
    free(b->suggest_spec);
    free(b->auto_cpu);
    free(b->shape_auto);
    for (int i = 0; i < b->n_in; i++)
        free(b->in_name[i]);
    for (int k = 0; b->eval && k < b->n_eval * b->n_in; k++)
        free(b->eval[k]);
    free(b->eval);
    free(b->id_run);
    free(b->id_inf);
}

nb_err nb_bringup(const nb_bringup_opts *opts, const nb_bringup_hooks *hooks,
                  nb_bringup_result *res, nb_status *st)
{
    memset(res, 0, sizeof *res);
    res->worst_cosine = NAN;
    nb_err e = nb_bringup_check(opts, st);
    if (e)
        return e;
    bu B, *b = &B;
    memset(b, 0, sizeof B);
    b->lock_fd = -1;
    b->o = opts, b->h = hooks, b->st = st, b->t0 = bu_now();
    e = setup(b, opts);
    snprintf(res->out, sizeof res->out, "%s", b->outdir);
    if (!e)
        e = pipeline(b, res);
    if (e)
        snprintf(res->stage, sizeof res->stage, "%s", b->stage ? b->stage : "");
    if (b->lock_fd >= 0)
        close(b->lock_fd); /* the folder's lock let go */
    bu_free(b);
    return e;
}

void nb_bringup_result_free(nb_bringup_result *r)
{
    if (!r)
        return;
    json_decref(r->summary);
    r->summary = NULL;
}
