/* nanobench simulated NPU: the dump config (the seed's "dump" JSON section) and the dump
 * files (share/proto/dump.proto), named and laid out as the vendor's dump tool does
 * (../shared/docs/facts/accucmp.md, "Dump file naming"). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "dbg.pb-c.h"
#include "dump.pb-c.h"
#include "nb/tensor.h"
#include "sim_dump.h"

void sim_dump_cfg_free(sim_dump_cfg *c)
{
    for (int i = 0; i < c->n_models; i++) {
        free(c->models[i].name);
        for (int j = 0; j < c->models[i].n_layers; j++)
            free(c->models[i].layers[j]);
        free(c->models[i].layers);
    }
    free(c->models);
    free(c->path);
    memset(c, 0, sizeof *c);
}

static char *dupstr(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

int sim_dump_cfg_parse(const json_t *dump, sim_dump_cfg *c, char *why, size_t len)
{
    memset(c, 0, sizeof *c);
    if (!json_is_object(dump)) {
        snprintf(why, len, "\"dump\" is not an object");
        return -1;
    }
    const json_t *path = json_object_get(dump, "dump_path");
    const json_t *list = json_object_get(dump, "dump_list");
    const json_t *mode = json_object_get(dump, "dump_mode");
    const json_t *op_switch = json_object_get(dump, "dump_op_switch");
    const json_t *data = json_object_get(dump, "dump_data");
    if (!json_is_string(path) || !json_string_value(path)[0]) {
        snprintf(why, len, "dump_path (required) is not a non-empty string");
        return -1;
    }
    if (!json_is_array(list)) {
        snprintf(why, len, "dump_list (required) is not a list");
        return -1;
    }
    c->mode = SIM_DUMP_OUTPUT;
    if (mode) {
        const char *s = json_is_string(mode) ? json_string_value(mode) : "";
        if (!strcmp(s, "output"))
            c->mode = SIM_DUMP_OUTPUT;
        else if (!strcmp(s, "input"))
            c->mode = SIM_DUMP_INPUT;
        else if (!strcmp(s, "all"))
            c->mode = SIM_DUMP_ALL;
        else {
            snprintf(why, len, "dump_mode '%s' (output, input or all)", s);
            return -1;
        }
    }
    if (op_switch) {
        const char *s = json_is_string(op_switch) ? json_string_value(op_switch) : "";
        if (strcmp(s, "on") && strcmp(s, "off")) {
            snprintf(why, len, "dump_op_switch '%s' (on or off)", s);
            return -1;
        }
        c->op_switch = !strcmp(s, "on");
    }
    if (data) {
        const char *s = json_is_string(data) ? json_string_value(data) : "";
        if (strcmp(s, "tensor") && strcmp(s, "stats")) {
            snprintf(why, len, "dump_data '%s' (tensor or stats)", s);
            return -1;
        }
        c->stats_only = !strcmp(s, "stats");
    }
    c->path = dupstr(json_string_value(path));
    size_t n = json_array_size(list);
    c->models = calloc(n + 1, sizeof *c->models);
    if (!c->path || !c->models) {
        snprintf(why, len, "out of memory");
        sim_dump_cfg_free(c);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(list, i);
        const json_t *name = json_object_get(e, "model_name");
        const json_t *layers = json_object_get(e, "layer");
        if (!json_is_object(e) || !json_is_string(name) || (layers && !json_is_array(layers))) {
            snprintf(why, len, "dump_list[%zu]: needs \"model_name\" (string) and an optional "
                     "\"layer\" list", i);
            sim_dump_cfg_free(c);
            return -1;
        }
        sim_dump_model *dm = &c->models[c->n_models++];
        dm->name = dupstr(json_string_value(name));
        size_t nl = layers ? json_array_size(layers) : 0;
        dm->layers = calloc(nl + 1, sizeof *dm->layers);
        if (!dm->name || !dm->layers) {
            snprintf(why, len, "out of memory");
            sim_dump_cfg_free(c);
            return -1;
        }
        for (size_t j = 0; j < nl; j++) {
            const json_t *l = json_array_get(layers, j);
            if (!json_is_string(l)) {
                snprintf(why, len, "dump_list[%zu].layer[%zu] is not a string", i, j);
                sim_dump_cfg_free(c);
                return -1;
            }
            dm->layers[dm->n_layers] = dupstr(json_string_value(l));
            if (!dm->layers[dm->n_layers++]) {
                snprintf(why, len, "out of memory");
                sim_dump_cfg_free(c);
                return -1;
            }
        }
    }
    c->enabled = 1;
    return 0;
}

/* ---- NAME.dbg ---- */

void *sim_dbg_read(const char *path, uint32_t exeom_bytes, uint32_t exeom_crc, char *why,
                   size_t len)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    nb_status st = {0};
    if (nb_read_file(path, &buf, &n, &st)) {
        snprintf(why, len, "%s", st.msg);
        return NULL;
    }
    Nanobench__Dbg__Dbg *d = nanobench__dbg__dbg__unpack(NULL, n, buf);
    free(buf);
    if (!d) {
        snprintf(why, len, "%s: not a NAME.dbg file", path);
        return NULL;
    }
    if (d->exeom_bytes != exeom_bytes || d->exeom_crc32 != exeom_crc) {
        snprintf(why, len, "%s: written for another exeom (size or CRC-32 differs)", path);
        nanobench__dbg__dbg__free_unpacked(d, NULL);
        return NULL;
    }
    return d;
}

void sim_dbg_free(void *dbg)
{
    if (dbg)
        nanobench__dbg__dbg__free_unpacked(dbg, NULL);
}

static const Nanobench__Dbg__Task *dbg_task(const void *dbg, int k)
{
    const Nanobench__Dbg__Dbg *d = dbg;
    return d && (size_t)k < d->n_tasks && d->tasks[k]->index == (uint32_t)k ? d->tasks[k] : NULL;
}

static const Nanobench__Dbg__Tensor *dbg_tensor(const void *dbg, int t)
{
    const Nanobench__Dbg__Dbg *d = dbg;
    return d && (size_t)t < d->n_tensors && d->tensors[t]->index == (uint32_t)t ? d->tensors[t]
                                                                                : NULL;
}

int sim_dbg_task_covers(const void *dbg, int k, int i, const char **node)
{
    const Nanobench__Dbg__Task *t = dbg_task(dbg, k);
    *node = t && i >= 0 && (size_t)i < t->n_covers ? t->covers[i] : "";
    return t ? (int)t->n_covers : 0;
}

int sim_dbg_task_names(const void *dbg, int k, const char **name, const char **op_type)
{
    const Nanobench__Dbg__Task *t = dbg_task(dbg, k);
    if (!t)
        return -1;
    *name = t->name;
    *op_type = t->op_type;
    return 0;
}

const char *sim_dbg_tensor_onnx(const void *dbg, int t)
{
    const Nanobench__Dbg__Tensor *x = dbg_tensor(dbg, t);
    return x ? x->onnx_value : "";
}

void sim_dbg_tensor_scale(const void *dbg, int t, double *scale, double *offset)
{
    const Nanobench__Dbg__Tensor *x = dbg_tensor(dbg, t);
    bool set = x && x->value_scale != 0 && isfinite(x->value_scale) && isfinite(x->value_offset);
    *scale = set ? x->value_scale : 1;
    *offset = set ? x->value_offset : 0;
}

/* Does task k match a layer name of the list (its own name, its ONNX node or any node it
   covers)? */
static bool layer_selected(const sim_dump_model *dm, const void *dbg, int k)
{
    if (dm->n_layers == 0)
        return true;
    const Nanobench__Dbg__Task *t = dbg_task(dbg, k);
    char own[32];
    snprintf(own, sizeof own, "task%d", k);
    for (int i = 0; i < dm->n_layers; i++) {
        const char *l = dm->layers[i];
        if (!strcmp(l, own))
            return true;
        if (!t)
            continue;
        if (!strcmp(l, t->name) || !strcmp(l, t->onnx_node))
            return true;
        for (size_t c = 0; c < t->n_covers; c++)
            if (!strcmp(l, t->covers[c]))
                return true;
    }
    return false;
}

bool sim_dump_selects(const sim_dump_cfg *c, const char *model_name, const void *dbg, int k)
{
    if (!c->enabled)
        return false;
    for (int i = 0; i < c->n_models; i++)
        if (!strcmp(c->models[i].name, model_name))
            return layer_selected(&c->models[i], dbg, k);
    return false;
}

void sim_dump_check(const sim_dump_cfg *c, const char *model_name, const void *dbg,
                    int n_tasks, char *out, size_t len)
{
    out[0] = 0;
    if (!c->enabled)
        return;
    const sim_dump_model *dm = NULL;
    for (int i = 0; i < c->n_models && !dm; i++)
        if (!strcmp(c->models[i].name, model_name))
            dm = &c->models[i];
    if (!dm) {
        snprintf(out, len, "dump: the dump list names no model '%s' (model_name is the exeom's "
                 "file name without .exeom)", model_name);
        return;
    }
    for (int l = 0; l < dm->n_layers; l++) {
        sim_dump_model one = {dm->name, &dm->layers[l], 1};
        bool hit = false;
        for (int k = 0; k < n_tasks && !hit; k++)
            hit = layer_selected(&one, dbg, k);
        if (!hit) {
            size_t at = strlen(out);
            snprintf(out + at, len - at, "%s'%.100s'", at ? ", " : "dump: no task or ONNX node "
                     "named ", dm->layers[l]);
        }
    }
}

/* a name in a file name: [A-Za-z0-9_-], others '_', at most max characters */
static void clean(char *dst, size_t len, const char *s, size_t max)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < len && i < max; i++) {
        char ch = s[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                  ch == '_' || ch == '-';
        dst[i] = ok ? ch : '_';
    }
    dst[i] = 0;
}

void nb_sim_dump_file_name(char *out, size_t len, const char *dir, const char *op_type,
                           const char *op_name, uint32_t task, uint64_t us)
{
    /* within NAME_MAX (255) with room for ".tmp.PID": a long layer name is cut (the task
       id keeps names apart) */
    char a[64], b[160];
    clean(a, sizeof a, op_type, 48);
    clean(b, sizeof b, op_name, 150);
    snprintf(out, len, "%s/%s.%s.%u.0.%016llu", dir, a, b, task, (unsigned long long)us);
}

static int mkdirs(const char *dir) { return nb_mkdir_p(dir); }

int sim_dump_dir(const sim_dump_cfg *c, const char *model_name, uint32_t model_id,
                 uint32_t iteration, char *tmp, char *final, size_t len)
{
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    char now_s[32];
    strftime(now_s, sizeof now_s, "%Y%m%d%H%M%S", &tmv);
    /* the run's folder, DIR/<time>: an earlier process's of the same second is not replaced,
       this one takes <time>_2, _3, ...; this process's executions of that second share
       theirs (told apart by iteration) */
    static char last[32], stamp[48];
    if (strcmp(last, now_s)) {
        snprintf(last, sizeof last, "%s", now_s);
        snprintf(stamp, sizeof stamp, "%s", now_s);
        for (int k = 2; k < 1000; k++) {
            char probe[4200];
            struct stat sb;
            snprintf(probe, sizeof probe, "%s/%s", c->path, stamp);
            if (lstat(probe, &sb) != 0)
                break;
            snprintf(stamp, sizeof stamp, "%s_%d", now_s, k);
        }
    }
    char name[256];
    clean(name, sizeof name, model_name, sizeof name);
    snprintf(final, len, "%s/%s/0/%s/%u/%u", c->path, stamp, name, model_id, iteration);
    nb_tmp_path(final, tmp, len);
    if (mkdirs(tmp))
        return -1;
    return 0;
}

int sim_dump_finish(const sim_dump_cfg *c, const char *tmp, const char *final, bool ok,
                    char *why, size_t len)
{
    if (ok) {
        nb_status st = {0};
        if (nb_publish_dir(tmp, final, NULL, &st) == NB_OK) /* replaced whole */
            return 0;
        snprintf(why, len, "%s", st.msg);
    } else {
        nb_remove_tree(tmp);
    }
    /* the parents made for it, when nothing else is in them: rmdir removes only empty ones */
    char p[4096];
    snprintf(p, sizeof p, "%s", final);
    size_t root = strlen(c->path);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(p, '/');
        if (!slash || (size_t)(slash - p) <= root)
            break;
        *slash = 0;
        if (rmdir(p) != 0)
            break;
    }
    return ok ? -1 : 0;
}

static void fill_tensor(Nanobench__Dump__Tensor *o, Nanobench__Dump__Stats *s,
                        const nb_sim_model *m, const void *dbg, int slot, int t, bool stats_only)
{
    const nb_exeom_tensor *d = &nb_sim_exeom(m)->t[t];
    const uint8_t *data = nb_sim_tensor_data(m, t);
    nanobench__dump__tensor__init(o);
    nanobench__dump__stats__init(s);
    o->index = (uint32_t)slot;
    o->dtype = (char *)nb_sim_dtype_name(d->dtype);
    o->format = (char *)nb_sim_format_name(d->format);
    o->n_shape = d->rank;
    o->shape = malloc(sizeof(int64_t) * (d->rank + 1));
    for (int i = 0; o->shape && i < d->rank; i++)
        o->shape[i] = d->dims[i];
    if (!o->shape)
        o->n_shape = 0;
    o->original_name = (char *)sim_dbg_tensor_onnx(dbg, t);
    const Nanobench__Dbg__Tensor *dt = dbg_tensor(dbg, t);
    o->tensor_name = dt ? dt->name : "";
    double vs, vo; /* --nb_input_scale: in what units data holds the value */
    sim_dbg_tensor_scale(dbg, t, &vs, &vo);
    if (vs != 1 || vo != 0)
        o->value_scale = vs, o->value_offset = vo;
    o->exeom_tensor = (uint32_t)t;
    if (!stats_only && data) {
        o->data.data = (uint8_t *)data;
        o->data.len = d->bytes;
    }
    int64_t n = nb_sim_numel(d);
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    uint64_t finite = 0;
    s->count = (uint64_t)n;
    /* the values in one pass over the layout (nb_sim_get per element divides per index) */
    double *all = data && n > 0 ? malloc((size_t)n * sizeof *all) : NULL;
    if (all)
        nb_sim_get_all(d, data, all);
    for (int64_t i = 0; data && i < n; i++) {
        double v = all ? all[i] : nb_sim_get(d, data, i);
        if (isnan(v))
            s->nan_count++;
        else if (isinf(v))
            s->inf_count++;
        else {
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            sum += v;
            finite++;
        }
        if (d->dtype == 1 && fabs(v) == 65504.0)
            s->saturated++;
    }
    free(all);
    s->min = finite ? mn : 0;
    s->max = finite ? mx : 0;
    s->mean = finite ? sum / (double)finite : 0;
    o->stats = s;
}

int sim_dump_task(const sim_dump_cfg *c, const char *dir, const char *model_name,
                  const nb_sim_model *m, const void *dbg, int k, bool inputs, bool outputs,
                  char *why, size_t len)
{
    const nb_exeom *x = nb_sim_exeom(m);
    const nb_exeom_task *tk = &x->k[k];
    const Nanobench__Dbg__Task *dt = dbg_task(dbg, k);
    char tname[32];
    snprintf(tname, sizeof tname, "task%d", k);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    uint64_t us = (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
    Nanobench__Dump__Dump d = NANOBENCH__DUMP__DUMP__INIT;
    d.version = 1;
    d.op_name = dt ? dt->name : tname;
    d.op_type = dt ? dt->op_type : (char *)nb_exeom_kernel_name(tk->kernel);
    d.task_id = (uint32_t)k;
    d.stream_id = 0;
    d.timestamp_us = us;
    d.model_name = (char *)model_name;
    d.n_covers = dt ? dt->n_covers : 0;
    d.covers = dt ? dt->covers : NULL;
    d.inserted = tk->flags & 1;
    d.cycles = nb_sim_profile(m, k)->cycles;
    d.saturations = nb_sim_task_saturations(m, k);
    d.source = "npu";
    Nanobench__Dump__Tensor ts[NB_EXEOM_MAX_IN + NB_EXEOM_MAX_OUT];
    Nanobench__Dump__Stats ss[NB_EXEOM_MAX_IN + NB_EXEOM_MAX_OUT];
    Nanobench__Dump__Tensor *in[NB_EXEOM_MAX_IN], *out[NB_EXEOM_MAX_OUT];
    uint32_t in_ids[NB_EXEOM_MAX_IN], out_ids[NB_EXEOM_MAX_OUT];
    for (int i = 0; i < tk->n_in && i < NB_EXEOM_MAX_IN; i++)
        in_ids[d.n_input_tensors++] = tk->in[i] == NB_EXEOM_NONE ? UINT32_MAX : (uint32_t)tk->in[i];
    for (int i = 0; i < tk->n_out && i < NB_EXEOM_MAX_OUT; i++)
        out_ids[d.n_output_tensors++] = tk->out[i] == NB_EXEOM_NONE ? UINT32_MAX
                                                                   : (uint32_t)tk->out[i];
    d.input_tensors = in_ids;
    d.output_tensors = out_ids;
    int nt = 0;
    for (int i = 0; inputs && i < tk->n_in; i++)
        if (tk->in[i] != NB_EXEOM_NONE) {
            fill_tensor(&ts[nt], &ss[nt], m, dbg, i, tk->in[i], c->stats_only);
            in[d.n_input++] = &ts[nt++];
        }
    for (int i = 0; outputs && i < tk->n_out; i++)
        if (tk->out[i] != NB_EXEOM_NONE) {
            fill_tensor(&ts[nt], &ss[nt], m, dbg, i, tk->out[i], c->stats_only);
            out[d.n_output++] = &ts[nt++];
        }
    d.input = in;
    d.output = out;
    size_t n = nanobench__dump__dump__get_packed_size(&d);
    uint8_t *buf = malloc(n + 1);
    int rc = 0;
    if (!buf) {
        snprintf(why, len, "[NDRV] malloc fail: %zu bytes of dump", n);
        rc = -1;
    } else {
        nanobench__dump__dump__pack(&d, buf);
        char path[2048];
        nb_sim_dump_file_name(path, sizeof path, dir, d.op_type, d.op_name, (uint32_t)k, us);
        nb_status st = {0};
        /* a signal during the write takes effect after the rename: no half-written dump */
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        if (nb_write_file_atomic(path, buf, n, &st)) {
            snprintf(why, len, "%s", st.msg);
            rc = -1;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    free(buf);
    for (int i = 0; i < nt; i++)
        free(ts[i].shape);
    return rc;
}
