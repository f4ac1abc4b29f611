/* nanobench calibrate: the result as JSON (include/nb/quant.h), what `calibrate --json`
 * prints, the workbench and bringup read back and the Python module returns. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nb/json.h"
#include "nb/quant.h"

/* the layers' activation algorithms, each once, in layer order ("ifmr,hfmg"); "none (no
   layer)" for a model without one */
static const char *algorithms(const nb_calibrate_result *r)
{
    static _Thread_local char buf[256];
    buf[0] = 0;
    for (int i = 0; i < r->n_layers; i++) {
        const char *al = nb_act_algo_name(r->layers[i].algo);
        bool seen = false;
        for (const char *p = buf; *p && !seen;) {
            size_t n = strcspn(p, ",");
            seen = n == strlen(al) && !strncmp(p, al, n);
            p += n + (p[n] == ',');
        }
        if (!seen && strlen(buf) + strlen(al) + 2 < sizeof buf)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? "," : "", al);
    }
    return buf[0] ? buf : "none (no layer)";
}

/* the 3 layers of lowest SQNR alone (the layer on fake-quantized operands against its float
   output), lowest first */
static json_t *worst_layers(const nb_calibrate_result *r)
{
    int order[3] = {-1, -1, -1};
    for (int i = 0; i < r->n_layers; i++) {
        double s = r->layers[i].out_sqnr;
        if (isnan(s) || !r->layers[i].evaluated)
            continue;
        for (int q = 0; q < 3; q++)
            if (order[q] < 0 || s < r->layers[order[q]].out_sqnr) {
                for (int z = 2; z > q; z--)
                    order[z] = order[z - 1];
                order[q] = i;
                break;
            }
    }
    json_t *a = json_array();
    for (int q = 0; q < 3 && order[q] >= 0; q++) {
        const nb_calib_layer_report *l = &r->layers[order[q]];
        json_t *x = json_object();
        json_object_set_new(x, "layer", nb_json_string(l->name));
        json_object_set_new(x, "op_type", nb_json_string(l->op_type));
        json_object_set_new(x, "sqnr_db", nb_json_num(l->out_sqnr));
        json_object_set_new(x, "cosine", nb_json_num(l->out_cos));
        json_array_append_new(a, x);
    }
    return a;
}

/* the placement advice with the layers that gave it: {nodes, layers: [{layer,
   zeroed_int16_worst_input, zeroed_int16_inputs_over}]}, or null */
static json_t *cpu_advice(const nb_calibrate_result *r)
{
    if (!r->cpu_nodes || !*r->cpu_nodes)
        return json_null();
    json_t *a = json_object(), *ls = json_array();
    json_object_set_new(a, "nodes", nb_json_string(r->cpu_nodes));
    for (int i = 0; i < r->n_layers; i++) {
        const nb_calib_layer_report *l = &r->layers[i];
        if (!l->suggests_cpu)
            continue;
        json_t *x = json_object();
        json_object_set_new(x, "layer", nb_json_string(l->name));
        json_object_set_new(x, "zeroed_int16_worst_input", nb_json_num(l->zeroed16));
        json_object_set_new(x, "zeroed_int16_inputs_over", json_integer(l->zeroed16_over));
        json_array_append_new(ls, x);
    }
    json_object_set_new(a, "layers", ls);
    return a;
}

json_t *nb_calibrate_json(const nb_calibrate_result *r)
{
    json_t *o = json_object(), *arr = json_array(), *outs = json_array();
    for (int k = 0; k < r->n_outputs; k++) {
        const nb_calib_output *co = &r->outputs[k];
        json_t *j = json_object();
        json_object_set_new(j, "name", json_string(co->name));
        json_object_set_new(j, "sqnr_db", nb_json_num(co->compared ? co->sqnr_db : NAN));
        json_object_set_new(j, "cosine", nb_json_num(co->compared ? co->cosine : NAN));
        json_object_set_new(j, "max_abs_diff", nb_json_num(co->max_abs_diff));
        json_array_append_new(outs, j);
    }
    json_object_set_new(o, "record", nb_json_string(r->record));
    json_object_set_new(o, "fake_quant_model", nb_json_string(r->fake_quant));
    json_object_set_new(o, "deploy_model", nb_json_string(r->deploy));
    json_object_set_new(o, "batches", json_integer(r->batch_num));
    json_object_set_new(o, "output_sqnr_db", nb_json_num(r->output_sqnr_db));
    json_object_set_new(o, "output_cosine", nb_json_num(r->output_cosine));
    json_object_set_new(o, "output_worst_cosine", nb_json_num(r->output_worst_cosine));
    json_object_set_new(o, "output_max_abs_diff", nb_json_num(r->output_max_abs_diff));
    json_object_set_new(o, "outputs", outs);
    json_object_set_new(o, "eval_batches", json_integer(r->eval_batches));
    json_object_set_new(o, "eval_set", json_string(r->eval_set ? "eval_dir" : "calibration"));
    json_object_set_new(o, "calibration_ms", json_real(r->calibration_ms));
    json_object_set_new(o, "files_and_evaluation_ms", json_real(r->files_and_evaluation_ms));
    for (int i = 0; i < r->n_layers; i++) {
        const nb_calib_layer_report *l = &r->layers[i];
        json_t *j = json_object(), *sw = json_array();
        json_object_set_new(j, "layer", json_string(l->name));
        json_object_set_new(j, "op_type", json_string(l->op_type));
        if (l->fused_bn)
            json_object_set_new(j, "fused_batchnorm", json_string(l->fused_bn));
        json_object_set_new(j, "batches", json_integer(l->batches));
        json_object_set_new(j, "algorithm", json_string(nb_act_algo_name(l->algo)));
        json_object_set_new(j, "clip_min", json_real(l->clip_min));
        json_object_set_new(j, "clip_max", json_real(l->clip_max));
        json_object_set_new(j, "scale_d", json_real(l->scale_d));
        json_object_set_new(j, "offset_d", json_integer(l->offset_d));
        json_object_set_new(j, "act_bits", json_integer(l->act_bits));
        json_object_set_new(j, "weight_bits", json_integer(l->weight_bits));
        for (int64_t c = 0; c < l->channels; c++)
            json_array_append_new(sw, json_real(l->scale_w[c]));
        json_object_set_new(j, "scale_w", sw);
        json_object_set_new(j, "zeroed_fraction", nb_json_num(l->zeroed));
        json_object_set_new(j, "zeroed_int16_worst_input", nb_json_num(l->zeroed16));
        json_object_set_new(j, "zeroed_int16_inputs_over", json_integer(l->zeroed16_over));
        json_object_set_new(j, "suggests_cpu", json_boolean(l->suggests_cpu));
        json_object_set_new(j, "act_sqnr_db", nb_json_num(l->act_sqnr));
        json_object_set_new(j, "weight_sqnr_db", nb_json_num(l->w_sqnr));
        json_object_set_new(j, "output_sqnr_db", nb_json_num(l->out_sqnr));
        json_object_set_new(j, "weight_round", json_string(nb_weight_round_name(l->weight_round)));
        if (l->weight_round == NB_ROUND_ADAROUND) {
            json_object_set_new(j, "ada_changed", json_integer(l->ada_changed));
            json_object_set_new(j, "ada_samples", json_integer(l->ada_samples));
            json_object_set_new(j, "ada_ms", nb_json_num(l->ada_ms));
        }
        json_object_set_new(j, "output_cosine", nb_json_num(l->out_cos));
        if (l->act_b) { /* a MatMul of two activations: no weights, B quantized as x */
            json_object_set_new(j, "second_input_activation", json_true());
            json_object_set_new(j, "b_clip_min", json_real(l->b_clip_min));
            json_object_set_new(j, "b_clip_max", json_real(l->b_clip_max));
            json_object_set_new(j, "scale_b", json_real(l->scale_b));
            json_object_set_new(j, "offset_b", json_integer(l->offset_b));
            json_object_set_new(j, "b_sqnr_db", nb_json_num(l->b_sqnr));
        }
        if (l->rnn) {
            json_t *sr = json_array();
            for (int64_t c = 0; c < l->channels; c++)
                json_array_append_new(sr, json_real(l->scale_r[c]));
            json_object_set_new(j, "h_clip_min", json_real(l->h_clip_min));
            json_object_set_new(j, "h_clip_max", json_real(l->h_clip_max));
            json_object_set_new(j, "scale_h", json_real(l->scale_h));
            json_object_set_new(j, "offset_h", json_integer(l->offset_h));
            json_object_set_new(j, "h_sqnr_db", nb_json_num(l->h_sqnr));
            json_object_set_new(j, "scale_r", sr);
            json_object_set_new(j, "r_weight_sqnr_db", nb_json_num(l->r_sqnr));
        }
        json_array_append_new(arr, j);
    }
    json_object_set_new(o, "layers", arr);
    json_t *sug = json_array();
    for (int i = 0; i < r->n_layers; i++) {
        const nb_calib_layer_report *l = &r->layers[i];
        if (!l->suggests_int16)
            continue;
        json_t *j = json_object();
        json_object_set_new(j, "layer", json_string(l->name));
        json_object_set_new(j, "zeroed_fraction", nb_json_num(l->zeroed));
        json_object_set_new(j, "int8_step", nb_json_num(l->scale_d));
        json_object_set_new(j, "range", nb_json_num(l->clip_max - l->clip_min));
        json_object_set_new(j, "override", json_string(l->int16_override));
        json_array_append_new(sug, j);
    }
    json_object_set_new(o, "suggested_int16", sug);
    /* the placement advice: atc / bringup --cpu_nodes */
    json_object_set_new(o, "suggested_cpu_nodes", r->cpu_nodes ? nb_json_string(r->cpu_nodes)
                                                               : json_null());
    json_object_set_new(o, "algorithms", json_string(algorithms(r)));
    json_object_set_new(o, "worst_layers", worst_layers(r));
    json_object_set_new(o, "cpu_advice", cpu_advice(r));
    return o;
}

json_t *nb_qat_json(const char *model, const nb_qdq_model *q, const char *deploy,
                    const char *record)
{
    json_t *o = json_object(), *ls = json_array();
    json_object_set_new(o, "model", nb_json_string(model));
    json_object_set_new(o, "algorithm", json_string("qat"));
    json_object_set_new(o, "algorithms", json_string("qat"));
    json_object_set_new(o, "qat", json_true());
    for (int i = 0; i < q->n; i++) {
        json_t *l = json_object();
        json_object_set_new(l, "layer", nb_json_string(q->l[i].node));
        json_object_set_new(l, "algorithm", json_string("qat"));
        json_object_set_new(l, "scale_d", json_real(q->l[i].scale_d));
        json_object_set_new(l, "offset_d", json_integer(q->l[i].offset_d));
        json_object_set_new(l, "act_bits", json_integer(q->l[i].act_bits));
        json_object_set_new(l, "channels", json_integer(q->l[i].channels));
        json_array_append_new(ls, l);
    }
    json_object_set_new(o, "layers", ls);
    json_object_set_new(o, "worst_layers", json_array());
    json_object_set_new(o, "cpu_advice", json_null());
    json_object_set_new(o, "deploy_model", nb_json_string(deploy));
    json_object_set_new(o, "record", nb_json_string(record));
    return o;
}

