/* nanobench infer's pipeline, the golden side of a comparison (include/nb/accucmp.h):
 * inputs bound from specs or tensors, the float32 reference run, the outputs (and with
 * dump_all every value) written as .npy files with a manifest, the golden dumps. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nb/accucmp.h"
#include "nb/ir.h"
#include "nb/ref.h"

/* ---- the output folder ---- */

/* True for a file name this step writes: nb_safe_name() characters, ending in .npy. */
static bool our_file_name(const char *f)
{
    size_t n = strlen(f);
    if (n < 5 || strcmp(f + n - 4, ".npy") != 0 || f[0] == '.')
        return false;
    for (const char *p = f; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return false;
    return true;
}

/* Calls fn(user, name, file) for each row of DIR/manifest.tsv (name unescaped) until it
 * returns true; false when the manifest cannot be read or no row was taken. */
static bool manifest_rows(const char *dir, bool (*fn)(void *, const char *, const char *),
                          void *user)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    struct stat sb;
    FILE *f = nb_fopen_regular(path, &sb);
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    bool taken = false;
    while (!taken && getline(&line, &cap, f) > 0) {
        char *file = strchr(line, '\t');
        if (!file)
            continue;
        *file++ = 0;
        char *end = strchr(file, '\t');
        if (!end)
            continue;
        *end = 0;
        nb_unescape(line);
        taken = fn(user, line, file);
    }
    free(line);
    fclose(f);
    return taken;
}

typedef struct name_list {
    char **v;
    int n, cap;
} name_list;

static bool collect_ours(void *user, const char *name, const char *file)
{
    (void)name;
    name_list *l = user;
    if (!our_file_name(file))
        return false;
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 64;
        char **nv = realloc(l->v, sizeof(char *) * (size_t)nc);
        if (!nv)
            return true; /* stop: what was collected is removed, the rest stays */
        l->v = nv;
        l->cap = nc;
    }
    if (!(l->v[l->n] = strdup(file)))
        return true;
    l->n++;
    return false;
}

typedef struct find_ctx {
    const char *dir, *name;
    char *path;
    size_t len;
} find_ctx;

static bool find_row(void *user, const char *name, const char *file)
{
    find_ctx *c = user;
    if (strcmp(name, c->name) != 0)
        return false;
    snprintf(c->path, c->len, "%s/%s", c->dir, file);
    return true;
}

bool nb_infer_manifest_file(const char *dir, const char *name, char *path, size_t len)
{
    find_ctx c = {dir, name, path, len};
    return manifest_rows(dir, find_row, &c);
}

static nb_err add_file(nb_infer_result *r, nb_name_set *names, const char *name, const nb_tensor *t,
                       const char *kind, nb_status *st)
{
    if (nb_name_set_has(names, name))
        return NB_OK;
    if (r->n_files == r->files_cap) {
        int nc = r->files_cap ? r->files_cap * 2 : 32;
        nb_infer_file *f = realloc(r->files, sizeof *f * (size_t)nc);
        if (!f)
            return nb_fail(st, NB_ERR_NOMEM, "out of memory");
        r->files = f;
        r->files_cap = nc;
    }
    nb_infer_file *f = &r->files[r->n_files];
    *f = (nb_infer_file){.name = strdup(name), .t = t, .kind = kind};
    if (!f->name || !nb_name_set_add(names, f->name)) {
        free(f->name);
        return nb_fail(st, NB_ERR_NOMEM, "out of memory");
    }
    r->n_files++;
    return NB_OK;
}

/* Writes r's files into dir (the rules at nb_infer). */
static nb_err write_outputs(const char *dir, nb_infer_result *r, nb_status *st)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/.nb-infer.%ld", dir, (long)getpid());
    if (mkdir(tmp, 0777) != 0)
        return nb_fail(st, NB_ERR_IO, "%s: cannot create a folder in the output folder: %s", tmp,
                       strerror(errno));
    char *manifest = NULL;
    size_t mlen = 0;
    FILE *mf = open_memstream(&manifest, &mlen);
    nb_err e = mf ? NB_OK : nb_fail(st, NB_ERR_NOMEM, "out of memory");
    if (mf)
        fputs("name\tfile\tkind\tdtype\tshape\n", mf);
    char **fname = calloc((size_t)r->n_files + 1, sizeof(char *));
    if (!fname && !e)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    /* files of an earlier run (its manifest lists them) may be replaced; any other file
       in the folder (the user's input.npy, say) is never written over */
    name_list old = {0};
    manifest_rows(dir, collect_ours, &old);
    nb_name_set taken = {0}, earlier = {0};
    for (int j = 0; j < old.n && !e; j++)
        if (!nb_name_set_add(&earlier, old.v[j]))
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < r->n_files && !e; i++) {
        nb_infer_file *f = &r->files[i];
        char base[200], fn[240];
        nb_safe_name(f->name, base, sizeof base);
        snprintf(fn, sizeof fn, "%s.npy", base);
        for (int k = 2;; k++) {
            bool clash = !strcmp(fn, "manifest.tsv") || nb_name_set_has(&taken, fn);
            if (!clash) {
                char ep[4400];
                struct stat sb;
                snprintf(ep, sizeof ep, "%s/%s", dir, fn);
                clash = !nb_name_set_has(&earlier, fn) && lstat(ep, &sb) == 0;
            }
            if (!clash)
                break;
            snprintf(fn, sizeof fn, "%s_%d.npy", base, k);
        }
        size_t pl = strlen(dir) + strlen(fn) + 2;
        if (!(fname[i] = strdup(fn)) || !nb_name_set_add(&taken, fname[i]) ||
            !(f->path = malloc(pl))) {
            e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(f->path, pl, "%s/%s", dir, fn);
        char tp[4400], sh[160];
        snprintf(tp, sizeof tp, "%s/%s", tmp, fn);
        if ((e = nb_npy_write(tp, f->t, st)))
            break;
        nb_put_escaped(mf, f->name);
        fprintf(mf, "\t%s\t%s\t%s\t%s\n", fn, f->kind, nb_dtype_name(f->t->dtype),
                nb_shape_str(f->t->rank, f->t->dims, ',', sh, sizeof sh));
    }
    if (mf && fclose(mf) != 0 && !e)
        e = nb_fail(st, NB_ERR_NOMEM, "out of memory");
    char tp[4400], mp[4096];
    if (!e) {
        snprintf(tp, sizeof tp, "%s/manifest.tsv", tmp);
        e = nb_write_file_atomic(tp, manifest, mlen, st);
    }
    /* nothing moves unless every destination can take a file (a folder in the way would
       fail halfway and leave the folder mixed) */
    for (int i = 0; i <= r->n_files && !e; i++) {
        struct stat sb;
        if (i == r->n_files)
            snprintf(mp, sizeof mp, "%s/manifest.tsv", dir);
        else
            snprintf(mp, sizeof mp, "%s", r->files[i].path);
        if (lstat(mp, &sb) == 0 && S_ISDIR(sb.st_mode))
            e = nb_fail(st, NB_ERR_IO, "%s: a folder is in the way of an output file; nothing "
                        "was written", mp);
    }
    /* move in: the .npy files, then the manifest that lists them */
    snprintf(mp, sizeof mp, "%s/manifest.tsv", dir);
    for (int i = 0; i <= r->n_files && !e; i++) {
        snprintf(tp, sizeof tp, "%s/%s", tmp, i < r->n_files ? fname[i] : "manifest.tsv");
        const char *to = i < r->n_files ? r->files[i].path : mp;
        if (rename(tp, to) != 0)
            e = nb_fail(st, NB_ERR_IO, "%s: cannot write: %s", to, strerror(errno));
    }
    for (int k = 0; k < old.n; k++) {
        if (!e && !nb_name_set_has(&taken, old.v[k])) {
            snprintf(mp, sizeof mp, "%s/%s", dir, old.v[k]);
            remove(mp);
        }
        free(old.v[k]);
    }
    free(old.v);
    free(taken.slot);
    free(earlier.slot);
    /* whatever is left in the temporary folder (after a failure) goes */
    for (int i = 0; i < r->n_files && fname; i++) {
        if (fname[i]) {
            snprintf(tp, sizeof tp, "%s/%s", tmp, fname[i]);
            remove(tp);
        }
        free(fname[i]);
    }
    free(fname);
    snprintf(tp, sizeof tp, "%s/manifest.tsv", tmp);
    remove(tp);
    rmdir(tmp);
    free(manifest);
    return e;
}

/* ---- the inputs ---- */

static bool later_spec(const char *spec) /* random and .bin inputs take dims from .npy ones */
{
    const char *tail = strrchr(spec, '=');
    tail = tail ? tail + 1 : spec;
    size_t tl = strlen(tail);
    return !strncmp(tail, "random", 6) || (tl > 4 && !strcmp(tail + tl - 4, ".bin"));
}

/* random[:SEED] into *seed; NB_ERR_ARG for a seed that is not an integer 0..2^32-1 */
static nb_err parse_seed(const char *spec, const char *file, uint32_t *seed, nb_status *st)
{
    *seed = 0;
    if (file[6] != ':')
        return NB_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(file + 7, &end, 10);
    if (!file[7] || *end || errno || file[7] == '-' || file[7] == '+' ||
        (file[7] < '0' || file[7] > '9') || v > UINT32_MAX)
        return nb_fail(st, NB_ERR_ARG, "--input %s: the seed must be an integer from 0 to "
                       "4294967295 (random:SEED)", spec);
    *seed = (uint32_t)v;
    return NB_OK;
}

/* Binds the spec of input i (names[i], tins[i], r->input_files[i]); order: the specs bound
 * before it (their dims fix a symbolic dim it shares). */
static nb_err bind_spec(const nb_infer_opts *o, nb_infer_result *r, const int *order, int oi,
                        const char **names, nb_tensor **tins, nb_status *st)
{
    const nb_graph *g = r->model->graph;
    const int i = order[oi];
    const char *spec = o->inputs[i], *eq = strchr(spec, '='), *file = spec;
    int id = -1;
    char *nm = NULL;
    for (const char *q = eq; q && id < 0; q = strchr(q + 1, '=')) {
        free(nm);
        nm = strndup(spec, (size_t)(q - spec));
        id = nm ? nb_graph_find(g, nm) : -1;
        if (id >= 0 && g->values[id].is_input)
            file = q + 1;
        else
            id = -1;
    }
    if (id < 0 && g->n_inputs == 1 && (!eq || access(spec, F_OK) == 0))
        id = g->inputs[0];
    int named = nm ? nb_graph_find(g, nm) : -1;
    nb_err e = NB_OK;
    if (id < 0 && named >= 0 && g->values[named].const_val)
        e = nb_fail(st, NB_ERR_ARG, "--input %s: '%s' is an initializer (a graph input with a "
                    "stored value); nanobench runs with the stored value", spec, nm);
    else if (id < 0 || !g->values[id].is_input) {
        char names[512] = "";
        size_t l = 0;
        for (int k = 0; k < g->n_inputs && l + 4 < sizeof names; k++)
            l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", k ? ", " : "",
                                  g->values[g->inputs[k]].name);
        e = nb_fail(st, NB_ERR_ARG, "--input %s: %s%s%s is not an input of %s (its input%s: %s)",
                    spec, nm && *nm ? "'" : "", nm ? (*nm ? nm : "an empty name") : spec,
                    nm && *nm ? "'" : "", o->model, g->n_inputs == 1 ? "" : "s", names);
    }
    free(nm);
    if (e)
        return e;
    const nb_value *v = &g->values[id];
    for (int ok = 0; ok < oi; ok++)
        if (names[order[ok]] == v->name)
            return nb_fail(st, NB_ERR_ARG, "--input %s: input '%s' is given twice", spec, v->name);
    names[i] = v->name;
    size_t fl = strlen(file);
    if (fl == 0)
        return nb_fail(st, NB_ERR_ARG, "--input %s: no file given for input '%s' (NAME=FILE)",
                       spec, v->name);
    bool bin = fl > 4 && !strcmp(file + fl - 4, ".bin");
    bool random = !strcmp(file, "random") || !strncmp(file, "random:", 7);
    r->input_files[i] = random ? NULL : file;
    int64_t vdims[NB_MAX_RANK];
    for (int k = 0; k < v->rank; k++) {
        vdims[k] = v->dims[k];
        /* a dynamic dim whose symbol an input read before has fixed */
        for (int ok = 0; ok < oi && vdims[k] < 0 && v->dim_params[k]; ok++) {
            const nb_value *w = &g->values[nb_graph_find(g, names[order[ok]])];
            for (int d = 0; d < w->rank && d < tins[order[ok]]->rank; d++)
                if (w->dim_params[d] && !strcmp(w->dim_params[d], v->dim_params[k]))
                    vdims[k] = tins[order[ok]]->dims[d];
        }
    }
    if (bin || random) {
        bool known = v->rank >= 0;
        for (int k = 0; known && k < v->rank; k++)
            known = vdims[k] >= 0;
        if (!known)
            return nb_fail(st, NB_ERR_ARG, "%s: input '%s' has dynamic dims; give --input_shape "
                           "or a .npy file", file, v->name);
    }
    if (random) {
        if (!nb_dtype_is_float(v->dtype))
            return nb_fail(st, NB_ERR_ARG, "--input %s: random inputs are for float inputs; "
                           "input '%s' is %s: give a .npy or .bin file", spec, v->name,
                           nb_dtype_name(v->dtype));
        uint32_t seed;
        if ((e = parse_seed(spec, file, &seed, st)))
            return e;
        if (nb_tensor_new(v->dtype, v->rank, vdims, &tins[i], st))
            return nb_prefix(st, "--input %s", spec);
        nb_tensor_fill_uniform(tins[i], seed, -1.0, 1.0);
        return NB_OK;
    }
    if (bin)
        return nb_bin_read(file, v->dtype, v->rank, vdims, &tins[i], st);
    if ((e = nb_npy_read(file, &tins[i], st)))
        return e;
    char a[320] = "[", b[160]; /* the input's shape, a symbolic dim by its name */
    for (int k = 0; k < v->rank; k++) {
        size_t l = strlen(a);
        if (v->dims[k] >= 0)
            snprintf(a + l, sizeof a - l, "%s%lld", k ? "," : "", (long long)v->dims[k]);
        else
            snprintf(a + l, sizeof a - l, "%s%.40s", k ? "," : "",
                     v->dim_params[k] ? v->dim_params[k] : "?");
    }
    snprintf(a + strlen(a), sizeof a - strlen(a), "]");
    bool ok = v->rank < 0 || v->rank == tins[i]->rank;
    for (int k = 0; ok && v->rank >= 0 && k < v->rank; k++)
        ok = v->dims[k] < 0 || v->dims[k] == tins[i]->dims[k];
    if (v->dtype != NB_UNDEFINED && v->dtype != tins[i]->dtype)
        return nb_fail(st, NB_ERR_ARG, "%s: input '%s' must be %s, the file holds %s", file,
                       v->name, nb_dtype_name(v->dtype), nb_dtype_name(tins[i]->dtype));
    if (!ok)
        return nb_fail(st, NB_ERR_ARG, "%s: input '%s' must have shape %s, the file has %s",
                       file, v->name, a, nb_shape_str(tins[i]->rank, tins[i]->dims, ',', b,
                                                      sizeof b));
    return NB_OK;
}

/* Every model input given once, a symbolic dim of one size across the inputs (silero_vad's
 * 'batch' in input, h and c). */
static nb_err check_inputs(const nb_infer_opts *o, const nb_graph *g, const char **names,
                           nb_tensor *const *tins, nb_status *st)
{
    char missing[1024] = "";
    size_t mo = 0;
    for (int k = 0; k < g->n_inputs; k++) {
        bool given = false;
        for (int i = 0; i < o->n_inputs; i++)
            given |= names[i] == g->values[g->inputs[k]].name;
        if (!given && mo < sizeof missing - 2)
            mo += (size_t)snprintf(missing + mo, sizeof missing - mo, "%s%s", mo ? ", " : "",
                                   g->values[g->inputs[k]].name);
    }
    if (mo)
        return nb_fail(st, NB_ERR_ARG, "%s: no --input for %s", o->model, missing);
    for (int i = 0; i < o->n_inputs; i++) {
        const nb_value *vi = &g->values[nb_graph_find(g, names[i])];
        for (int a = 0; a < vi->rank && a < tins[i]->rank; a++) /* within the input itself */
            for (int b = a + 1; b < vi->rank && b < tins[i]->rank; b++)
                if (vi->dim_params[a] && vi->dim_params[b] &&
                    !strcmp(vi->dim_params[a], vi->dim_params[b]) &&
                    tins[i]->dims[a] != tins[i]->dims[b])
                    return nb_fail(st, NB_ERR_ARG, "%s: input '%s': dim '%s' is both %lld and "
                                   "%lld in the data given", o->model, vi->name,
                                   vi->dim_params[a], (long long)tins[i]->dims[a],
                                   (long long)tins[i]->dims[b]);
        for (int k = i + 1; k < o->n_inputs; k++) {
            const nb_value *vk = &g->values[nb_graph_find(g, names[k])];
            for (int a = 0; a < vi->rank && a < tins[i]->rank; a++)
                for (int b = 0; b < vk->rank && b < tins[k]->rank; b++)
                    if (vi->dim_params[a] && vk->dim_params[b] &&
                        !strcmp(vi->dim_params[a], vk->dim_params[b]) &&
                        tins[i]->dims[a] != tins[k]->dims[b])
                        return nb_fail(st, NB_ERR_ARG, "%s: dim '%s' is %lld in input '%s' and "
                                       "%lld in input '%s'", o->model, vi->dim_params[a],
                                       (long long)tins[i]->dims[a], vi->name,
                                       (long long)tins[k]->dims[b], vk->name);
        }
    }
    return NB_OK;
}

/* ---- the pipeline ---- */

static nb_err collect(const nb_infer_opts *o, nb_infer_result *r, nb_status *st)
{
    const nb_graph *g = r->model->graph;
    nb_name_set names = {0};
    nb_err e = NB_OK;
    for (int i = 0; i < g->n_outputs && !e; i++) {
        const char *nm = g->values[g->outputs[i]].name;
        e = add_file(r, &names, nm, nb_exec_get(r->exec, nm), "output", st);
    }
    r->n_outputs = r->n_files;
    for (int v = 0; o->dump_all && v < g->n_values && !e; v++) {
        const nb_tensor *t = nb_exec_get(r->exec, g->values[v].name);
        if (!t || g->values[v].is_initializer)
            continue;
        const char *kind = g->values[v].is_input    ? "input"
                           : g->values[v].const_val ? "constant"
                                                    : "intermediate";
        e = add_file(r, &names, g->values[v].name, t, kind, st);
    }
    const char *sname;
    const nb_tensor *sv;
    for (int i = 0; o->dump_all && !e && (sv = nb_exec_subgraph_value(r->exec, i, &sname)); i++)
        e = add_file(r, &names, sname, sv, "subgraph", st);
    free(names.slot);
    return e;
}

nb_err nb_infer(const nb_infer_opts *o, nb_infer_result *r, nb_status *st)
{
    memset(r, 0, sizeof *r);
    int n = o->n_inputs;
    if (n < 0 || n > 4096 || (n && !o->inputs && !o->tensors))
        return nb_fail(st, NB_ERR_ARG, "infer: %d inputs given", n);
    if (o->golden_dir) /* a killed run's dump folder, first: this run may fail */
        nb_remove_stale_tmps(o->golden_dir);
    nb_tensor **tins = calloc((size_t)n + 1, sizeof *tins);
    const char **names = calloc((size_t)n + 1, sizeof *names);
    int *order = calloc((size_t)n + 1, sizeof *order);
    r->input_files = calloc((size_t)n + 1, sizeof *r->input_files);
    nb_err e = tins && names && order && r->input_files ? NB_OK
                                                        : nb_fail(st, NB_ERR_NOMEM, "out of memory");
    nb_load_opts lo = {.input_shape = o->input_shape};
    if (!e)
        e = nb_ref_load(o->model, &lo, &r->model, st);
    const nb_graph *g = r->model ? r->model->graph : NULL;
    if (!e && o->tensors) { /* in the graph's input order */
        if (n != g->n_inputs)
            e = nb_fail(st, NB_ERR_ARG, "%s: %d inputs, %d given", o->model, g->n_inputs, n);
        for (int i = 0; i < n && !e; i++)
            names[i] = g->values[g->inputs[i]].name;
    } else if (!e) {
        /* .npy inputs first: their shapes fix dim symbols (silero_vad's 'batch') that a
           random or .bin input sharing the symbol then takes */
        int no = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < n; i++)
                if (later_spec(o->inputs[i]) == (pass == 1))
                    order[no++] = i;
        for (int oi = 0; oi < n && !e; oi++)
            e = bind_spec(o, r, order, oi, names, tins, st);
        if (!e)
            e = check_inputs(o, g, names, tins, st);
    }
    nb_exec_opts eo = {.keep_all = o->dump_all || o->golden_dir};
    if (!e)
        e = nb_exec_create(r->model, &eo, &r->exec, st);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!e)
        e = nb_exec_run(r->exec, n, names,
                        o->tensors ? (nb_tensor *const *)o->tensors : (nb_tensor *const *)tins, st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (!e)
        e = collect(o, r, st);
    struct stat gsb;
    if (!e && o->golden_dir && stat(o->golden_dir, &gsb) == 0 && !S_ISDIR(gsb.st_mode))
        e = nb_fail(st, NB_ERR_IO, "%s: exists and is not a folder (--dump); nothing was written",
                    o->golden_dir);
    if (!e && o->golden_dir) { /* its parent must take the folder: checked before any output */
        char parent[4096]; /* the nearest folder that exists above it */
        snprintf(parent, sizeof parent, "%s", o->golden_dir);
        do {
            char *slash = strrchr(parent, '/');
            if (slash && slash != parent)
                *slash = 0;
            else
                snprintf(parent, sizeof parent, "%s", slash ? "/" : ".");
        } while (stat(parent, &gsb) != 0 && strcmp(parent, ".") && strcmp(parent, "/"));
        if (access(parent, W_OK) != 0)
            e = nb_fail(st, NB_ERR_IO, "%s: cannot write the golden dump folder there: %s; "
                        "nothing was written", o->golden_dir, strerror(errno));
    }
    if (!e && o->output_dir) {
        if (nb_mkdir_p(o->output_dir) != 0)
            e = nb_fail(st, NB_ERR_IO, "%s: cannot create output folder: %s", o->output_dir,
                        strerror(errno));
        else
            e = write_outputs(o->output_dir, r, st);
    }
    if (!e && o->golden_dir) { /* one golden dump per node, its float outputs, graph order */
        if (o->progress)
            o->progress(o->user, "golden_dump", 0, 1);
        e = nb_dump_golden_run(r->model, r->exec, o->golden_dir, &r->golden_dumps, st);
        if (o->progress)
            o->progress(o->user, "golden_dump", 1, 1);
    }
    for (int i = 0; i < n && tins; i++)
        nb_tensor_free(tins[i]);
    free(tins);
    free(names);
    free(order);
    if (e)
        nb_infer_result_free(r);
    return e;
}

void nb_infer_result_free(nb_infer_result *r)
{
    for (int i = 0; i < r->n_files; i++) {
        free(r->files[i].name);
        free(r->files[i].path);
    }
    free(r->files);
    free(r->input_files);
    nb_exec_free(r->exec);
    nb_model_free(r->model);
    memset(r, 0, sizeof *r);
}

/* ---- compare convert ---- */

/* a file convert writes: <dump file>.<input|output>.<i>.<shape>.<npy|bin> */
static bool converted_name(const char *name)
{
    size_t n = strlen(name);
    return (n > 4 && (!strcmp(name + n - 4, ".npy") || !strcmp(name + n - 4, ".bin"))) &&
           (strstr(name, ".output.") || strstr(name, ".input."));
}

nb_err nb_dump_convert(const char *src, bool bin, const char *out, nb_progress_fn progress,
                       void *user, int *written, nb_status *st)
{
    *written = 0;
    nb_dump *d = NULL;
    int n = nb_dumps_read(src, NB_DUMP_INPUTS | NB_DUMP_OUTPUTS, 0, &d, st);
    if (n < 0)
        return st->code;
    nb_err e = NB_OK;
    char otmp[4400] = "";
    const char *final_out = out;
    if (out) {
        nb_remove_stale_tmps(out);
        nb_tmp_path(out, otmp, sizeof otmp);
        if (progress)
            progress(user, "convert", 0, 1);
        out = otmp;
        if (nb_mkdir_p(out))
            e = nb_fail(st, NB_ERR_IO, "%s: cannot make the folder: %s", final_out,
                        strerror(errno));
    }
    for (int i = 0; i < n && !e; i++)
        for (int k = 0; k < d[i].n_t && !e; k++) {
            const nb_dump_tensor *t = &d[i].t[k];
            if (!t->v)
                continue;
            char sh[128] = "", path[4096];
            for (int q = 0; q < t->rank; q++)
                snprintf(sh + strlen(sh), sizeof sh - strlen(sh), "%s%lld", q ? "x" : "",
                         (long long)t->dims[q]);
            if (!sh[0]) /* a scalar */
                snprintf(sh, sizeof sh, "scalar");
            const char *base = strrchr(d[i].path, '/');
            base = base ? base + 1 : d[i].path;
            int pl = out ? snprintf(path, sizeof path, "%s/%s.%s.%d.%s.%s", out, base,
                                    t->output ? "output" : "input", t->index, sh,
                                    bin ? "bin" : "npy")
                         : snprintf(path, sizeof path, "%s.%s.%d.%s.%s", d[i].path,
                                    t->output ? "output" : "input", t->index, sh,
                                    bin ? "bin" : "npy");
            if (pl < 0 || (size_t)pl >= sizeof path) {
                e = nb_fail(st, NB_ERR_ARG, "%s: the converted file's path is too long",
                            d[i].path);
                break;
            }
            int64_t dims[6];
            for (int q = 0; q < t->rank; q++)
                dims[q] = t->dims[q];
            nb_tensor *x = NULL;
            if ((e = nb_tensor_new(NB_FLOAT, t->rank, dims, &x, st)))
                break;
            for (int64_t j = 0; j < t->numel; j++)
                ((float *)x->data)[j] = (float)t->v[j];
            e = bin ? nb_bin_write(path, x, st) : nb_npy_write(path, x, st);
            nb_tensor_free(x);
            if (!e)
                (*written)++;
        }
    for (int i = 0; i < n; i++)
        nb_dump_free(&d[i]);
    free(d);
    if (otmp[0]) {
        if (e)
            nb_remove_tree(otmp);
        else
            e = nb_publish_dir(otmp, final_out, converted_name, st);
        if (progress)
            progress(user, "convert", 1, 1);
    }
    return e;
}
