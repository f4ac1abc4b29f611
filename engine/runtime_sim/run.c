/* nb_run_exeom: one execution of an exeom through the ACL API (include/nb/run.h), the pipeline
 * behind `nanobench run` and the Python module's run(). The ACL calls are the ones an app on
 * the Nano makes (the vendor's sample flow: aclInit, aclrtSetDevice, aclrtCreateContext,
 * aclrtCreateStream, aclmdlLoadFromFile, datasets, aclmdlExecuteV2), so this file is also
 * the reference user of include/acl/acl.h. */
#define _POSIX_C_SOURCE 200809L
#include "nb/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "nb/sim.h"

/* The message of ACL error e after what, as the CLI has always printed it; the code: 1-type
 * (resource, internal: 2xxxxx, 5xxxxx) or bad input. */
static nb_err acl_err(nb_status *st, const char *what, aclError e)
{
    nb_err code = (e >= 200000 && e < 300000) || e >= 500000 ? NB_ERR_INTERNAL : NB_ERR_ARG;
    const char *msg = aclGetRecentErrMsg();
    if (!what || !strncmp(msg, what, strlen(what)))
        return nb_fail(st, code, "%s (ACL error %d)", msg, e);
    return nb_fail(st, code, "%s: %s (ACL error %d)", what, msg, e);
}

static void io_of(uint32_t id, const nb_sim_model *sim, int index, int t, nb_run_io *io)
{
    const nb_exeom_tensor *et = &nb_sim_exeom(sim)->t[t];
    memset(io, 0, sizeof *io);
    io->index = index;
    const char *nm = nb_acl_tensor_onnx(id, t);
    io->name = strdup(nm ? nm : "");
    io->rank = et->rank;
    for (int d = 0; d < et->rank && d < 6; d++)
        io->dims[d] = et->dims[d];
    io->npu_dtype = nb_sim_dtype_name(et->dtype);
}

/* Which model input each opts->inputs[a] feeds (bind[i] = a, or -1), or an NB_ERR_ARG. */
static nb_err bind_inputs(const nb_run_opts *o, const nb_run_result *r, int *bind, nb_status *st)
{
    for (int i = 0; i < r->n_inputs; i++)
        bind[i] = -1;
    bool named = false;
    for (int i = 0; i < r->n_inputs; i++)
        named |= r->inputs[i].name[0] != 0;
    for (int a = 0; a < o->n_inputs; a++) {
        const char *nm = o->inputs[a].name;
        const char *label = o->inputs[a].label ? o->inputs[a].label : nm;
        int hit = -1;
        if (!nm) {
            if (r->n_inputs != 1)
                return nb_fail(st, NB_ERR_ARG, "--input %s: the model has %d inputs, give "
                               "NAME=FILE", label ? label : "", r->n_inputs);
            hit = 0;
        }
        for (int i = 0; nm && i < r->n_inputs && hit < 0; i++) {
            char idx[16];
            snprintf(idx, sizeof idx, "%d", i);
            if (!strcmp(r->inputs[i].name, nm) || !strcmp(idx, nm))
                hit = i;
        }
        if (hit < 0)
            return nb_fail(st, NB_ERR_ARG, "--input %s: no such model input%s", nm,
                           named ? "" : " (no NAME.dbg next to the exeom names them: give "
                           "inputs by index, 0=FILE)");
        if (bind[hit] >= 0)
            return nb_fail(st, NB_ERR_ARG, "--input %s: input %d given twice", nm ? nm : label,
                           hit);
        bind[hit] = a;
    }
    return NB_OK;
}

/* The values of input io from opts->inputs[a], checked against io's shape, into the NPU
 * buffer buf (converted: fp16 rounded to nearest even, integers saturated). */
static nb_err feed(const nb_run_opts *o, int a, const nb_run_io *io, const nb_exeom_tensor *t,
                   void *buf, nb_status *st)
{
    const nb_run_input *in = &o->inputs[a];
    const char *label = in->label ? in->label : in->name ? in->name : "input";
    nb_tensor *owned = NULL;
    const nb_tensor *v = in->value;
    if (!v) {
        if (!o->load)
            return nb_fail(st, NB_ERR_ARG, "%s: no values given", label);
        if (o->load(o->load_user, a, io, &owned, st))
            return st->code;
        v = owned;
    }
    bool same = v && v->rank == io->rank;
    for (int d = 0; same && d < io->rank; d++)
        same = v->dims[d] == io->dims[d];
    if (!same) {
        char have[128] = "", want[128];
        if (v)
            nb_shape_str(v->rank, v->dims, ',', have, sizeof have);
        nb_shape_str(io->rank, io->dims, ',', want, sizeof want);
        nb_tensor_free(owned);
        return nb_fail(st, NB_ERR_ARG, "%s: shape %s, the model's input is %s", label, have,
                       want);
    }
    /* an int32 input (an ONNX int64 or int32 one): integers within int32, never rounded or
       saturated into another value */
    if (t->dtype == 3 && !nb_dtype_is_float(v->dtype) && v->dtype != NB_BOOL) {
        for (int64_t j = 0; j < v->numel; j++) {
            double x = nb_tensor_get_f64(v, j);
            if (x < -2147483648.0 || x > 2147483647.0 || x != x) {
                nb_tensor_free(owned);
                return nb_fail(st, NB_ERR_ARG, "%s: value %.17g (element %lld) is beyond int32, "
                               "the NPU's type for this integer input", label, x, (long long)j);
            }
        }
    } else if (t->dtype == 3) {
        nb_fail(st, NB_ERR_ARG, "%s: the input is an integer one (int32 on the NPU), the file "
                "holds %s", label, nb_dtype_name(v->dtype));
        nb_tensor_free(owned);
        return st->code;
    }
    for (int64_t j = 0; j < v->numel; j++)
        nb_sim_set(t, buf, j, nb_tensor_get_f64(v, j));
    nb_tensor_free(owned);
    return NB_OK;
}

/* The result's task table, saturation totals and warning. */
static void profile(const nb_run_opts *o, uint32_t id, const nb_sim_model *sim, nb_run_result *r)
{
    const nb_exeom *x = nb_sim_exeom(sim);
    char list[600] = "";
    for (int k = 0; k < r->n_tasks; k++) {
        const nb_sim_task_profile *p = nb_sim_profile(sim, k);
        nb_run_task *rt = &r->tasks[k];
        const char *name = NULL, *op = NULL;
        nb_acl_task_info(id, k, &name, &op);
        snprintf(rt->name, sizeof rt->name, "%s", name ? name : "");
        snprintf(rt->op_type, sizeof rt->op_type, "%s", op ? op : "");
        rt->unit = p->unit;
        rt->skipped = !nb_sim_task_ran(sim, k);
        if (!rt->skipped) {
            rt->cycles = p->cycles;
            rt->compute = p->compute;
            rt->movement = p->movement;
            rt->macs = p->macs;
            rt->switch_cycles = p->switch_cycles;
            r->switch_cycles += p->switch_cycles;
            r->switches += p->switch_cycles > 0;
            *(p->unit == 2 ? &r->cpu_cycles : &r->npu_cycles) += p->cycles - p->switch_cycles;
        }
        rt->saturations = nb_sim_task_saturations(sim, k);
        rt->log_zeros = nb_sim_task_log_zeros(sim, k);
        r->log_zeros += rt->log_zeros;
        if (!rt->saturations)
            continue;
        r->saturations += rt->saturations;
        if (r->saturated_tasks++ < 4) {
            size_t at = strlen(list);
            snprintf(list + at, sizeof list - at, "%s%.80s (%s, %llu)", at ? ", " : "",
                     rt->name, rt->op_type, (unsigned long long)rt->saturations);
        }
    }
    (void)x;
    if (r->saturated_tasks)
        nb_warnf(o->warn, o->user, "fp16 saturation: %llu result(s) clamped at +-65504 in %d "
                 "task(s): %s%s; the NPU's output can differ from the float model's there "
                 "(share/doc/npu-numerics.md)", (unsigned long long)r->saturations,
                 r->saturated_tasks, list, r->saturated_tasks > 4 ? ", ..." : "");
    if (r->log_zeros)
        nb_warnf(o->warn, o->user, "the log of 0: %llu Log input(s) of 0 gave -inf, written as "
                 "fp16's -65504 (no input scale removes it: the values before the Log round to "
                 "0)", (unsigned long long)r->log_zeros);
    nb_cycle_params cp;
    nb_cycle_params_default(&cp);
    r->cycles = nb_sim_total_cycles(sim);
    r->macs = nb_sim_total_macs(sim);
    r->task_overhead = cp.task_overhead;
    r->cpu_task_overhead = cp.cpu_task_overhead;
    r->switch_cost = cp.switch_cycles;
    for (int c = 0; c < 2; c++) {
        r->clock_mhz[c] = cp.clock_mhz[c];
        r->ms[c] = (double)r->cycles / (cp.clock_mhz[c] * 1e3);
    }
}

nb_err nb_run_exeom(const nb_run_opts *o, nb_run_result *r, nb_status *st)
{
    memset(r, 0, sizeof *r);
    aclError e;
    if ((e = aclInit(NULL)))
        return acl_err(st, "aclInit", e);
    if (o->dump_config && ((e = aclmdlInitDump()) || (e = aclmdlSetDump(o->dump_config)))) {
        acl_err(st, o->dump_config, e);
        aclFinalize();
        return st->code;
    }
    aclrtContext ctx = NULL;
    aclrtStream stream = NULL;
    uint32_t id = 0;
    aclmdlDataset *in = NULL, *out = NULL;
    int *bind = NULL;
    nb_err rc = NB_OK;
    if ((e = aclrtSetDevice(0)) || (e = aclrtCreateContext(&ctx, 0)) ||
        (e = aclrtCreateStream(&stream))) {
        rc = acl_err(st, "runtime", e);
        goto done;
    }
    if ((e = aclmdlLoadFromFile(o->exeom, &id))) {
        rc = acl_err(st, o->exeom, e);
        goto done;
    }
    if (nb_acl_dbg_note(id)[0])
        nb_warnf(o->warn, o->user, "%s: not used (inputs and outputs go by index)",
                 nb_acl_dbg_note(id));
    if (nb_acl_dump_note(id)[0])
        nb_warnf(o->warn, o->user, "%s: %s", o->dump_config, nb_acl_dump_note(id));
    const nb_sim_model *sim = nb_acl_sim_model(id);
    const nb_exeom *x = nb_sim_exeom(sim);
    r->n_inputs = (int)x->n_inputs;
    r->n_outputs = (int)x->n_outputs;
    r->n_tasks = (int)x->n_tasks;
    r->inputs = calloc((size_t)r->n_inputs + 1, sizeof *r->inputs);
    r->input_labels = calloc((size_t)r->n_inputs + 1, sizeof *r->input_labels);
    r->outputs = calloc((size_t)r->n_outputs + 1, sizeof *r->outputs);
    r->tasks = calloc((size_t)r->n_tasks + 1, sizeof *r->tasks);
    bind = calloc((size_t)r->n_inputs + 1, sizeof *bind);
    in = aclmdlCreateDataset();
    out = aclmdlCreateDataset();
    if (!r->inputs || !r->input_labels || !r->outputs || !r->tasks || !bind || !in || !out) {
        rc = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < r->n_inputs; i++)
        io_of(id, sim, i, nb_sim_input_tensor(sim, i), &r->inputs[i]);
    if ((rc = bind_inputs(o, r, bind, st)))
        goto done;
    for (int i = 0; i < r->n_inputs; i++) {
        const nb_exeom_tensor *t = &x->t[nb_sim_input_tensor(sim, i)];
        size_t bytes = (size_t)t->bytes;
        void *buf = NULL;
        if ((e = aclrtMalloc(&buf, bytes ? bytes : 1, ACL_MEM_MALLOC_NORMAL_ONLY))) {
            rc = acl_err(st, "input", e);
            goto done;
        }
        memset(buf, 0, bytes);
        aclDataBuffer *b = aclCreateDataBuffer(buf, bytes);
        if (!b || (e = aclmdlAddDatasetBuffer(in, b))) {
            aclrtFree(buf);
            if (b)
                aclDestroyDataBuffer(b);
            rc = b ? acl_err(st, "input", e) : nb_fail(st, NB_ERR_NOMEM, "out of memory");
            goto done;
        }
        if (bind[i] >= 0) {
            const nb_run_input *gi = &o->inputs[bind[i]];
            r->input_labels[i] = gi->label ? gi->label : gi->name ? gi->name : "";
            if ((rc = feed(o, bind[i], &r->inputs[i], t, buf, st)))
                goto done;
        }
    }
    for (int i = 0; i < r->n_outputs; i++) { /* (NULL, 0): the runtime allocates them */
        aclDataBuffer *b = aclCreateDataBuffer(NULL, 0);
        if (!b || (e = aclmdlAddDatasetBuffer(out, b))) {
            if (b)
                aclDestroyDataBuffer(b);
            rc = b ? acl_err(st, "output", e) : nb_fail(st, NB_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    struct timespec t0, t1;
    if (o->progress)
        o->progress(o->user, "execute", 0, 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    e = aclmdlExecuteV2(id, in, out, stream, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (o->progress)
        o->progress(o->user, "execute", 1, 1);
    if (e) {
        rc = acl_err(st, o->exeom, e);
        goto done;
    }
    r->host_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    for (int i = 0; i < r->n_outputs; i++) {
        int ti = nb_sim_output_tensor(sim, i);
        const nb_exeom_tensor *t = &x->t[ti];
        nb_run_output *ro = &r->outputs[i];
        io_of(id, sim, i, ti, &ro->io);
        if ((rc = nb_tensor_new(NB_FLOAT, ro->io.rank, ro->io.dims, &ro->value, st)))
            goto done;
        const uint8_t *data = aclGetDataBufferAddr(aclmdlGetDatasetBuffer(out, (size_t)i));
        float *yp = ro->value->data;
        double sum = 0;
        for (int64_t j = 0; j < ro->value->numel; j++) {
            yp[j] = (float)nb_sim_get(t, data, j);
            ro->min = j == 0 || yp[j] < ro->min ? yp[j] : ro->min;
            ro->max = j == 0 || yp[j] > ro->max ? yp[j] : ro->max;
            sum += yp[j];
        }
        ro->mean = ro->value->numel ? sum / (double)ro->value->numel : 0.0;
    }
    if (o->dump_config) {
        const char *dd = nb_acl_last_dump(id, &r->dump_files);
        if (r->dump_files)
            snprintf(r->dump_dir, sizeof r->dump_dir, "%s", dd);
    }
    profile(o, id, sim, r);
done:
    for (size_t i = 0; in && i < aclmdlGetDatasetNumBuffers(in); i++) {
        aclDataBuffer *b = aclmdlGetDatasetBuffer(in, i);
        aclrtFree(aclGetDataBufferAddr(b));
        aclDestroyDataBuffer(b);
    }
    for (size_t i = 0; out && i < aclmdlGetDatasetNumBuffers(out); i++) {
        aclDataBuffer *b = aclmdlGetDatasetBuffer(out, i);
        if (aclGetDataBufferAddr(b))
            aclrtFree(aclGetDataBufferAddr(b));
        aclDestroyDataBuffer(b);
    }
    if (in)
        aclmdlDestroyDataset(in);
    if (out)
        aclmdlDestroyDataset(out);
    free(bind);
    if (id)
        aclmdlUnload(id);
    if (stream)
        aclrtDestroyStream(stream);
    if (ctx)
        aclrtDestroyContext(ctx);
    aclrtResetDevice(0);
    if (o->dump_config)
        aclmdlFinalizeDump();
    aclFinalize();
    return rc;
}

void nb_run_result_free(nb_run_result *r)
{
    if (!r)
        return;
    for (int i = 0; r->outputs && i < r->n_outputs; i++) {
        nb_tensor_free(r->outputs[i].value);
        free(r->outputs[i].io.name);
    }
    for (int i = 0; r->inputs && i < r->n_inputs; i++)
        free(r->inputs[i].name);
    free(r->outputs);
    free(r->inputs);
    free(r->input_labels);
    free(r->tasks);
    memset(r, 0, sizeof *r);
}
