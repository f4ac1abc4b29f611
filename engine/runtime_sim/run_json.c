/* nanobench run: the execution's result as JSON (include/nb/run.h), what `run --json`
 * prints, the workbench reads back and the Python module returns. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nb/json.h"
#include "nb/run.h"

static json_t *output_json(const nb_run_output *ro, int i)
{
    const nb_tensor *y = ro->value;
    const float *yp = y->data;
    json_t *jt = json_object(), *first = json_array();
    for (int64_t j = 0; j < y->numel && j < 8; j++)
        json_array_append_new(first, nb_json_num(yp[j]));
    char base[32];
    snprintf(base, sizeof base, "output%d", i);
    json_object_set_new(jt, "name", nb_json_string(ro->io.name[0] ? ro->io.name : base));
    json_object_set_new(jt, "shape", nb_json_int_array(y->dims, y->rank));
    json_object_set_new(jt, "dtype", json_string(nb_dtype_name(NB_FLOAT)));
    json_object_set_new(jt, "npu_dtype", json_string(ro->io.npu_dtype));
    json_object_set_new(jt, "min", y->numel ? nb_json_num(ro->min) : json_null());
    json_object_set_new(jt, "max", y->numel ? nb_json_num(ro->max) : json_null());
    json_object_set_new(jt, "mean", y->numel ? nb_json_num(ro->mean) : json_null());
    json_object_set_new(jt, "first", first);
    if (ro->file[0])
        json_object_set_new(jt, "file", nb_json_string(ro->file));
    return jt;
}

static json_t *task_json(const nb_run_task *p, int k)
{
    json_t *jt = json_object();
    json_object_set_new(jt, "index", json_integer(k));
    json_object_set_new(jt, "name", nb_json_string(p->name));
    json_object_set_new(jt, "op_type", nb_json_string(p->op_type));
    json_object_set_new(jt, "cycles", json_integer((json_int_t)p->cycles));
    json_object_set_new(jt, "compute", json_integer((json_int_t)p->compute));
    json_object_set_new(jt, "movement", json_integer((json_int_t)p->movement));
    json_object_set_new(jt, "macs", json_integer((json_int_t)p->macs));
    json_object_set_new(jt, "unit", json_string(p->unit == 2   ? "cpu"
                                                : p->unit == 1 ? "cube"
                                                               : "vector"));
    json_object_set_new(jt, "switch_cycles", json_integer((json_int_t)p->switch_cycles));
    json_object_set_new(jt, "skipped", json_boolean(p->skipped));
    json_object_set_new(jt, "saturations", json_integer((json_int_t)p->saturations));
    json_object_set_new(jt, "log_zeros", json_integer((json_int_t)p->log_zeros));
    return jt;
}

json_t *nb_run_result_json(const nb_run_opts *o, const nb_run_result *r)
{
    json_t *jo = json_object(), *outs = json_array();
    json_object_set_new(jo, "exeom", nb_json_string(o->exeom));
    for (int i = 0; i < r->n_outputs; i++)
        json_array_append_new(outs, output_json(&r->outputs[i], i));
    json_object_set_new(jo, "outputs", outs);
    json_t *jd = json_null();
    if (o->dump_config) {
        jd = json_object();
        json_object_set_new(jd, "folder", r->dump_files ? nb_json_string(r->dump_dir)
                                                         : json_null());
        json_object_set_new(jd, "files", json_integer(r->dump_files));
    }
    json_object_set_new(jo, "dump", jd);
    json_object_set_new(jo, "cycles", json_integer((json_int_t)r->cycles));
    json_object_set_new(jo, "ms_64mhz", json_real(r->ms[0]));
    json_object_set_new(jo, "ms_200mhz", json_real(r->ms[1]));
    json_object_set_new(jo, "macs", json_integer((json_int_t)r->macs));
    json_object_set_new(jo, "npu_cycles", json_integer((json_int_t)r->npu_cycles));
    json_object_set_new(jo, "cpu_cycles", json_integer((json_int_t)r->cpu_cycles));
    json_object_set_new(jo, "switches", json_integer(r->switches));
    json_object_set_new(jo, "switch_cycles", json_integer((json_int_t)r->switch_cycles));
    json_object_set_new(jo, "host_ms", json_real(r->host_ms));
    json_t *jsum = json_object(), *jsat = json_array(), *jtasks = json_array();
    for (int k = 0; k < r->n_tasks; k++) {
        const nb_run_task *p = &r->tasks[k];
        if (p->saturations) {
            json_t *js = json_object();
            json_object_set_new(js, "index", json_integer(k));
            json_object_set_new(js, "name", nb_json_string(p->name));
            json_object_set_new(js, "op_type", nb_json_string(p->op_type));
            json_object_set_new(js, "count", json_integer((json_int_t)p->saturations));
            json_array_append_new(jsat, js);
        }
        json_array_append_new(jtasks, task_json(p, k));
    }
    json_object_set_new(jsum, "total", json_integer((json_int_t)r->saturations));
    json_object_set_new(jsum, "tasks", jsat);
    json_object_set_new(jo, "saturation", jsum);
    json_object_set_new(jo, "log_of_zero", json_integer((json_int_t)r->log_zeros));
    json_object_set_new(jo, "tasks", jtasks);
    return jo;
}

nb_err nb_run_write_outputs(nb_run_result *r, const char *dir, nb_status *st)
{
    if (!*dir)
        return nb_fail(st, NB_ERR_ARG, "the output folder's name is empty");
    char (*used)[208] = calloc((size_t)r->n_outputs + 1, sizeof *used);
    if (!used)
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    nb_err e = NB_OK;
    /* the names: a file name of at most 200 characters (with ".npy" and a writer's
       ".tmp.PID.tmp.PID" it stays under NAME_MAX); colliding ones get _2, _3, ... (the
       first free), as infer names its files */
    for (int i = 0; i < r->n_outputs && !e; i++) {
        nb_run_output *ro = &r->outputs[i];
        char base[201], cand[208];
        if (ro->io.name[0])
            nb_safe_name(ro->io.name, base, sizeof base);
        else
            snprintf(base, sizeof base, "output%d", i);
        snprintf(cand, sizeof cand, "%s", base);
        for (int k = 2;; k++) {
            bool taken = false;
            for (int j = 0; j < i && !taken; j++)
                taken = !strcmp(used[j], cand);
            if (!taken)
                break;
            snprintf(cand, sizeof cand, "%.195s_%d", base, k);
        }
        snprintf(used[i], sizeof used[i], "%s", cand);
        int n = snprintf(ro->file, sizeof ro->file, "%s/%s.npy", dir, cand);
        if (n < 0 || (size_t)n + 24 >= sizeof ro->file) /* room for ".tmp.PID" twice */
            e = nb_fail(st, NB_ERR_ARG, "%.200s...: the output folder's path is too long for "
                        "its output files (%zu characters)", dir, strlen(dir));
    }
    if (!e && nb_mkdir_p(dir)) /* made once the names fit */
        e = nb_fail(st, NB_ERR_IO, "%s: cannot make the output folder: %s", dir, strerror(errno));
    /* no output in the way (a folder where a file goes): refused before anything is written */
    for (int i = 0; i < r->n_outputs && !e; i++) {
        struct stat sb;
        if (lstat(r->outputs[i].file, &sb) == 0 && !S_ISREG(sb.st_mode))
            e = nb_fail(st, NB_ERR_IO, "%s: exists and is not a regular file",
                        r->outputs[i].file);
    }
    /* all or none: each written beside its place (NAME.npy.tmp.PID), then every one renamed
       over its place; a failed write leaves the earlier files as they were */
    char (*stage)[1400] = e ? NULL : calloc((size_t)r->n_outputs + 1, sizeof *stage);
    if (!e && !stage)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    int written = 0;
    for (int i = 0; i < r->n_outputs && !e; i++, written++) {
        snprintf(stage[i], sizeof stage[i], "%s.tmp.%ld", r->outputs[i].file, (long)getpid());
        e = nb_npy_write(stage[i], r->outputs[i].value, st);
    }
    if (!e) { /* every one renamed with the signals held: the old set or the new one */
        const char **final = malloc(sizeof(char *) * 2 * ((size_t)r->n_outputs + 1));
        const char **from = final ? final + r->n_outputs + 1 : NULL;
        if (!final)
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
        for (int i = 0; final && i < r->n_outputs; i++)
            final[i] = r->outputs[i].file, from[i] = stage[i];
        if (final)
            e = nb_publish_files(from, final, r->n_outputs, st);
        free(final);
        written = 0; /* renamed, or removed by nb_publish_files */
    }
    if (e) {
        for (int i = 0; stage && i < written; i++)
            unlink(stage[i]);
        for (int i = 0; i < r->n_outputs; i++)
            r->outputs[i].file[0] = 0;
    }
    free(stage);
    free(used);
    return e;
}
