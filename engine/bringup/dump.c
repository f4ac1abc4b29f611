/* nanobench bring-up: the evaluation input compared layer by layer (the lowest output
 * SQNR, or a score's largest error: the layer that broke accuracy shows there, not on a
 * loud input where all is well),
 * run again with every task dumped, and its golden dumps. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bu.h"

/* A score output (a wake-word or class score: at most 4 values): its SQNR on a near-zero
 * score (1e-10 against 1.2e-7) says little; its absolute error is what moves a decision. */
static bool score_output(const json_t *o) { return nb_json_num_of(o, "numel") <= 4; }

/* The evaluation input compared layer by layer (issue 37): the lowest SQNR over the outputs
 * that are not scores; when every output is a score, the largest absolute error. *rule says
 * which picked it. */
static int worst_input(const bu *b, const json_t *outs, const char **rule)
{
    bool tensors = false;
    for (size_t o = 0; o < json_array_size(outs); o++)
        tensors |= !score_output(json_array_get(outs, o));
    *rule = tensors ? "the lowest output SQNR" : "the largest score error";
    int at = 0;
    double best = tensors ? INFINITY : -INFINITY;
    for (int k = 0; k < b->n_eval; k++) {
        double q = tensors ? INFINITY : -INFINITY;
        for (size_t o = 0; o < json_array_size(outs); o++) {
            const json_t *out = json_array_get(outs, o);
            if (tensors == score_output(out))
                continue;
            const json_t *pk = json_array_get(json_object_get(out, "per_input"), (size_t)k);
            double v = nb_json_num_of(pk, tensors ? "sqnr_db" : "max_abs_error");
            if (!isnan(v) && (tensors ? v < q : v > q))
                q = v;
        }
        if (tensors ? q < best : q > best)
            best = q, at = k;
    }
    return at;
}

nb_err bu_dump_worst(bu *b, const json_t *outs, const char *acl, bool dump_all, int64_t parent)
{
    int k = b->cmp_input = worst_input(b, outs, &b->cmp_rule);
    char detail[160], od[3400];
    snprintf(detail, sizeof detail, "evaluation input %d run again, every task dumped", k + 1);
    b->stage = "compare";
    bu_step(b, 5, detail, ""); /* part of the comparison: [6/6] */
    snprintf(od, sizeof od, "%s/run/dumped", b->outdir);
    double t0 = bu_now();
    json_t *o = NULL;
    nb_err e = bu_run(b, b->exeom, k, od, acl, parent, "4-run-dump", &o, &b->id_dump_run);
    b->step_ms[3] += (bu_now() - t0) * 1e3;
    if (e)
        return bu_step_failed(b, "compare");
    snprintf(b->dumped, sizeof b->dumped, "%s", nb_json_str_of(json_object_get(o, "dump"), "folder"));
    json_decref(o);
    bu_step_done(b, 5, detail);
    if (!b->dumped[0])
        return nb_fail(b->st, NB_ERR_INTERNAL, "run dumped no files into %s/npu_dump", b->outdir);
    if (bu_cancelled(b))
        return bu_interrupted(b);
    snprintf(detail, sizeof detail, "float reference of input %d, golden dumps", k + 1);
    bu_step(b, 5, detail, "");
    snprintf(od, sizeof od, "%s/reference/dumped", b->outdir);
    t0 = bu_now();
    e = bu_infer(b, k, od, dump_all, b->gold, b->id_dump_run > 0 ? b->id_dump_run : parent,
                 "5-infer-dump", &b->id_dump_inf);
    b->step_ms[4] += (bu_now() - t0) * 1e3;
    if (e)
        return bu_step_failed(b, "compare");
    bu_step_done(b, 5, detail);
    return NB_OK;
}
