/* nanobench TUI: the Compile screen. A form with ATC's flags (defaults from the model:
 * every float input fp16, FP16 outputs), then `nanobench atc --mode=30 --framework=5
 * --soc_version=V --model=DEPLOY --output=WORK/<stem>/<stem> --input_fp16_nodes=...
 * --output_type=FP16 [--input_shape] [--out_nodes] --log=info`; shows the pass log
 * (scrollable), the sizes, and on failure the message with the layers it names, the ops the
 * NPU cannot run listed one per line. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scr_util.h"

#define MAX_NAMED 64

typedef struct c_data {
    char model[PATH_MAX];     /* the model (t->model) the form and results belong to */
    char deploy_seen[PATH_MAX]; /* t->deploy_model when the form was filled */
    char shape_seen[512];       /* t->input_shape when the form was filled */
    /* the form */
    char in_model[PATH_MAX], soc[16], fp16[512], otype[16], shape[512], out_nodes[1024];
    bool form_set;
    bool fp16_from_info;      /* input_fp16_nodes came from the model's info */
    char output[PATH_MAX];    /* --output of the last run */
    /* the result */
    bool ran, failed;
    char *log;                /* stdout then stderr, the lines below point into it */
    char **lines;
    int nlines, top, left;   /* the log's first line and first column shown */
    double weights, mem, exeom, arena; /* NaN when unknown */
    char error[4096];         /* the failure's message */
    char *named[MAX_NAMED];   /* names the message quotes, or the unsupported ops */
    int nnamed;
    bool unsupported;         /* named[] lists ops the NPU cannot run */
    int log_y, log_h;
} c_data;

static c_data *data(tui *t)
{
    c_data *d = t->scr[STEP_COMPILE];
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d)
            return NULL;
        t->scr[STEP_COMPILE] = d;
    }
    return d;
}

static void clear_results(c_data *d)
{
    free(d->log);
    free(d->lines);
    d->log = NULL;
    d->lines = NULL;
    d->nlines = d->top = d->left = 0;
    for (int i = 0; i < d->nnamed; i++)
        free(d->named[i]);
    d->nnamed = 0;
    d->unsupported = d->ran = d->failed = false;
    d->weights = d->mem = d->exeom = d->arena = NAN;
    d->error[0] = 0;
}

static void c_enter(tui *t)
{
    c_data *d = data(t);
    if (!d)
        return;
    if (strcmp(d->model, t->model)) {
        clear_results(d);
        d->form_set = false;
        snprintf(d->model, sizeof d->model, "%s", t->model);
    }
    if (!d->form_set || strcmp(d->deploy_seen, t->deploy_model)) {
        /* the defaults: the deploy model of Quantize, every float input fp16, FP16 out */
        snprintf(d->deploy_seen, sizeof d->deploy_seen, "%s", t->deploy_model);
        snprintf(d->in_model, sizeof d->in_model, "%s", t->deploy_model);
        if (!d->form_set) {
            const char *f = scr_model_float_inputs(t);
            snprintf(d->soc, sizeof d->soc, "%s", t->soc_version[0] ? t->soc_version : "Ascend035A");
            snprintf(d->fp16, sizeof d->fp16, "%s", f ? f : t->model_inputs);
            d->fp16_from_info = f != NULL;
            snprintf(d->otype, sizeof d->otype, "FP16");
            snprintf(d->shape, sizeof d->shape, "%s", t->input_shape);
            d->out_nodes[0] = 0;
        }
        d->form_set = true;
    }
    if (strcmp(d->shape_seen, t->input_shape)) { /* edited on the Model step */
        snprintf(d->shape_seen, sizeof d->shape_seen, "%s", t->input_shape);
        snprintf(d->shape, sizeof d->shape, "%s", t->input_shape);
    }
    const char *f = scr_model_float_inputs(t);
    if (f && !d->fp16_from_info) { /* the Model step ran since: every float input */
        snprintf(d->fp16, sizeof d->fp16, "%s", f);
        d->fp16_from_info = true;
    }
}

static void c_run(tui *t)
{
    c_data *d = data(t);
    if (!d)
        return;
    if (!t->model[0]) {
        tui_status(t, true, "no model open: open one on the Model step first (o)");
        return;
    }
    c_enter(t);
    tui_field f[] = {
        {"Model", d->in_model, sizeof d->in_model,
         "The quantized model: Quantize's deploy model, or a model with QuantizeLinear / "
         "DequantizeLinear pairs. A float Conv/MatMul is refused: calibrate first.", NULL},
        {"soc_version", d->soc, sizeof d->soc, "Ascend035A or Ascend035B (mode 30: the Nano).", NULL},
        {"input_fp16_nodes", d->fp16, sizeof d->fp16,
         "Every float input, ';'-separated: they arrive as fp16 (ATC requires all of them).", NULL},
        {"output_type", d->otype, sizeof d->otype, "FP16: the Nano's float outputs leave as fp16.", NULL},
        {"input_shape", d->shape, sizeof d->shape,
         "name:n,c,h,w;name2:... for dynamic dims (from the Model step); empty when static.", NULL},
        {"out_nodes", d->out_nodes, sizeof d->out_nodes,
         "Cut the graph at these outputs (node:0;node2:0): the first stage of a model whose "
         "tail the NPU cannot run. Empty: the model's outputs.", NULL},
    };
    if (!tui_form(t, "Compile: ATC flags (mode 30, ONNX)", f, (int)(sizeof f / sizeof f[0])))
        return;
    if (!d->in_model[0]) {
        tui_status(t, true, "no model to compile: run Quantize first (its deploy model is the "
                   "default), or name a Q/DQ model");
        return;
    }
    if (access(d->in_model, R_OK)) {
        tui_status(t, true, "cannot read %s", d->in_model);
        return;
    }
    char dir[PATH_MAX], abs[PATH_MAX], stem[256];
    if (!tui_workdir(t, "quant", dir, sizeof dir) || !dir[0]) {
        tui_status(t, true, "cannot make the work folder");
        return;
    }
    /* WORK/<stem>/<stem>: the quant folder's parent, absolute (the job's cwd is ours) */
    char *slash = strrchr(dir, '/');
    if (slash && !strcmp(slash, "/quant"))
        *slash = 0;
    if (realpath(dir, abs))
        snprintf(dir, sizeof dir, "%s", abs);
    tui_stem(t, stem, sizeof stem);
    snprintf(d->output, sizeof d->output, "%s/%s", dir, stem);
    su_argv a = {0};
    su_arg(&a, "atc");
    su_arg(&a, "--mode=30");
    su_arg(&a, "--framework=5");
    su_arg(&a, "--soc_version=%s", d->soc);
    su_arg(&a, "--model=%s", d->in_model);
    su_arg(&a, "--output=%s", d->output);
    if (d->fp16[0])
        su_arg(&a, "--input_fp16_nodes=%s", d->fp16);
    if (d->otype[0])
        su_arg(&a, "--output_type=%s", d->otype);
    if (d->shape[0])
        su_arg(&a, "--input_shape=%s", d->shape);
    if (d->out_nodes[0])
        su_arg(&a, "--out_nodes=%s", d->out_nodes);
    su_arg(&a, "--log=info");
    if (a.oom) {
        tui_status(t, true, "out of memory");
    } else if (tui_run(t, STEP_COMPILE, su_parent(t, STEP_COMPILE), a.v, "atc")) {
        clear_results(d);
        t->exeom[0] = 0;
        tui_status(t, false, "compiling %s", su_stem(d->in_model, NULL, stem, sizeof stem));
    }
    su_argv_free(&a);
}

/* A number after "KEY:" at the start of a line of text, NaN when none. */
static double printed(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, key, kl) && p[kl] == ':')
            return strtod(p + kl + 1, NULL);
    return NAN;
}

/* The names a failure's message names: the ops the NPU cannot run ("...: name (op):
 * reason; name2 (op): reason"), else every '...' it quotes. */
static void find_named(c_data *d)
{
    const char *m = d->error, *list = strstr(m, " the NPU cannot run (");
    if (list && (list = strstr(list, "):"))) {
        d->unsupported = true;
        list += 2;
        while (*list && d->nnamed < MAX_NAMED) {
            while (*list == ' ' || *list == ';')
                list++;
            const char *end = strstr(list, "; ");
            size_t n = end ? (size_t)(end - list) : strlen(list);
            if (n && (d->named[d->nnamed] = strndup(list, n)))
                d->nnamed++;
            list += n;
        }
        return;
    }
    for (const char *p = strchr(m, '\''); p && d->nnamed < MAX_NAMED;) {
        const char *e = strchr(p + 1, '\'');
        if (!e)
            break;
        if (e > p + 1 && (d->named[d->nnamed] = strndup(p + 1, (size_t)(e - p - 1))))
            d->nnamed++;
        p = strchr(e + 1, '\'');
    }
}

static void c_job_done(tui *t, tui_job *j)
{
    c_data *d = data(t);
    if (!d)
        return;
    clear_results(d);
    d->ran = true;
    /* the log: stdout, then stderr without the run id line */
    size_t ol = j->out ? j->out_len : 0, el = j->err ? j->err_len : 0;
    d->log = malloc(ol + el + 2);
    if (d->log) {
        memcpy(d->log, j->out ? j->out : "", ol);
        size_t n = ol;
        if (n && d->log[n - 1] != '\n')
            d->log[n++] = '\n';
        memcpy(d->log + n, j->err ? j->err : "", el);
        d->log[n + el] = 0;
        int cap = 1;
        for (char *p = d->log; *p; p++)
            cap += *p == '\n';
        d->lines = calloc((size_t)cap + 1, sizeof *d->lines);
        for (char *p = d->log, *save = NULL, *l = d->lines ? strtok_r(p, "\n", &save) : NULL; l;
             l = strtok_r(NULL, "\n", &save))
            if (strncmp(l, "recorded as run ", 16) && strncmp(l, "progress: ", 10))
                d->lines[d->nlines++] = l;
    }
    if (j->cancelled) {
        tui_set_state(t, STEP_COMPILE, ST_NOT_RUN, "cancelled");
        tui_status(t, false, "compile cancelled: no exeom written");
        d->failed = true;
        snprintf(d->error, sizeof d->error, "cancelled");
        return;
    }
    if (j->status != 0) {
        d->failed = true;
        /* the whole "nanobench: ..." message (tui_job_error keeps 600 bytes of it) */
        const char *msg = NULL;
        for (int i = 0; i < d->nlines; i++)
            if (!strncmp(d->lines[i], "nanobench: ", 11))
                msg = d->lines[i] + 11;
        if (!msg)
            msg = tui_job_error(j);
        size_t ml = strlen(d->in_model); /* "MODEL: ..." without the path shown above */
        if (!strncmp(msg, d->in_model, ml) && !strncmp(msg + ml, ": ", 2))
            msg += ml + 2;
        snprintf(d->error, sizeof d->error, "%s", msg);
        find_named(d);
        char note[96];
        if (d->unsupported)
            snprintf(note, sizeof note, "%d not on NPU", d->nnamed);
        else
            snprintf(note, sizeof note, "failed");
        tui_set_state(t, STEP_COMPILE, ST_FAILED, note);
        if (d->unsupported)
            tui_status(t, true, "atc: %d op%s the NPU cannot run: cut %s away with out_nodes "
                       "(F5)", d->nnamed, d->nnamed == 1 ? "" : "s",
                       d->nnamed == 1 ? "it" : "them");
        else
            tui_status(t, true, "atc: %s", d->error);
        return;
    }
    t->run_id[STEP_COMPILE] = j->run_id;
    if (!su_db_artifact(t, j->run_id, "exeom", t->exeom, sizeof t->exeom))
        snprintf(t->exeom, sizeof t->exeom, "%s.exeom", d->output);
    const char *out = j->out ? j->out : "";
    d->weights = printed(out, "TOTAL_WEIGHT_SIZE");
    d->mem = printed(out, "TOTAL_MEM_SIZE");
    if (!su_db_metric(t, j->run_id, "exeom_bytes", &d->exeom))
        d->exeom = printed(out, "TOTAL_EXEOM_SIZE");
    if (!su_db_metric(t, t->run_id[STEP_ESTIMATE], "arena", &d->arena))
        d->arena = NAN;
    char note[96], sz[32];
    vm_fmt_bytes(sz, sizeof sz, d->exeom);
    snprintf(note, sizeof note, "exeom %s", isnan(d->exeom) ? "?" : sz);
    tui_set_state(t, STEP_COMPILE, ST_OK, note);
    char stem[256];
    tui_status(t, false, "compiled %s (%s); Run is next", su_stem(t->exeom, NULL, stem, sizeof stem),
               isnan(d->exeom) ? "?" : sz);
}

static int line_attr(const tui *t, const char *l)
{
    if (!strncmp(l, "nanobench", 9))
        return tui_tag_attr(t, VM_TAG_BAD);
    if (strstr(l, "run success"))
        return tui_tag_attr(t, VM_TAG_GOOD) | A_BOLD;
    if (!strncmp(l, "[WARNING]", 9))
        return tui_tag_attr(t, VM_TAG_WARN);
    if (!strncmp(l, "[DEBUG]", 7))
        return tui_tag_attr(t, VM_TAG_DIM);
    return 0;
}

static void draw_log(tui *t, WINDOW *w, c_data *d, int y, int h, int wd)
{
    d->log_y = y;
    d->log_h = h;
    if (h < 2)
        return;
    int page = h - 1;
    if (d->top > d->nlines - page)
        d->top = d->nlines - page;
    if (d->top < 0)
        d->top = 0;
    su_put(t, w, y, 0, wd, A_BOLD, "Log (%d lines%s)", d->nlines,
           d->nlines > page ? "; arrows scroll" : "; Left/Right scroll");
    for (int i = 0; i < page && d->top + i < d->nlines; i++) {
        const char *l = d->lines[d->top + i];
        size_t n = strlen(l);
        su_put(t, w, y + 1 + i, 0, wd, line_attr(t, l), "%s",
               (size_t)d->left < n ? l + d->left : "");
    }
    if (d->nlines > page) {
        char pos[32];
        snprintf(pos, sizeof pos, "%d-%d/%d", d->top + 1,
                 d->top + page < d->nlines ? d->top + page : d->nlines, d->nlines);
        su_put(t, w, y, wd - (int)strlen(pos), (int)strlen(pos), tui_tag_attr(t, VM_TAG_DIM),
               "%s", pos);
    }
}

static void c_draw(tui *t, WINDOW *w)
{
    c_data *d = data(t);
    int h = getmaxy(w), wd = getmaxx(w), y = 0, dim = tui_tag_attr(t, VM_TAG_DIM);
    int bad = tui_tag_attr(t, VM_TAG_BAD);
    if (!d)
        return;
    c_enter(t);
    const char *base = strrchr(d->in_model, '/');
    su_put(t, w, y++, 0, wd, A_BOLD, "Compile  %s", d->ran ? (base ? base + 1 : d->in_model) : "");
    if (!t->model[0]) {
        su_wrap(t, w, 2, 0, wd, 3, 0, "No model open: open one on the Model step (o).");
        return;
    }
    if (t->job && t->job->step == STEP_COMPILE && !t->job->done) {
        su_put(t, w, ++y, 0, wd, 0, "Compiling (nanobench atc --log=info)...");
        return;
    }
    if (!d->ran) {
        y++;
        y += su_wrap(t, w, y, 0, wd, 4, 0,
                     "Press F5 to compile: a form with ATC's flags (soc_version, "
                     "input_fp16_nodes, output_type, input_shape, out_nodes), then the "
                     "compiler's pass log, the sizes and the exeom for Run.");
        y++;
        su_put(t, w, y++, 0, wd, d->in_model[0] ? 0 : bad, "model       %s",
               d->in_model[0] ? d->in_model : "(none yet: run Quantize first)");
        su_put(t, w, y++, 0, wd, dim, "soc_version %s  input_fp16_nodes %s  output_type %s",
               d->soc, d->fp16[0] ? d->fp16 : "-", d->otype);
        if (t->exeom[0] && t->run_id[STEP_COMPILE] > 0) { /* taken up from an earlier session */
            y++;
            su_put(t, w, y++, 0, wd, 0, "run %lld of an earlier session compiled:",
                   (long long)t->run_id[STEP_COMPILE]);
            su_put(t, w, y++, 2, wd - 2, 0, "%s", t->exeom);
        }
        return;
    }
    if (d->failed) {
        su_put(t, w, y++, 0, wd, bad | A_BOLD, "%s", d->unsupported ? "ATC refused the model:"
                                                                  : "ATC failed:");
        int maxl = d->unsupported ? 2 : 4;
        y += su_wrap(t, w, y, 0, wd, maxl, bad, d->error);
        if (d->nnamed) {
            int room = h - y - 6;
            if (room < 2)
                room = 2;
            su_put(t, w, y++, 0, wd, A_BOLD, "%s", d->unsupported
                                                     ? "Ops the NPU cannot run (layer (op): reason):"
                                                     : "Named:");
            /* each entry on up to 3 lines while the room lasts, then how many more */
            int per = d->nnamed * 3 <= room ? 3 : d->nnamed * 2 <= room ? 2 : 1;
            for (int i = 0; i < d->nnamed && room > 0; i++) {
                if (room == 1 && i < d->nnamed - 1) {
                    su_put(t, w, y++, 2, wd - 2, dim, "... %d more", d->nnamed - i);
                    break;
                }
                int n = su_wrap(t, w, y, 2, wd - 2, per < room ? per : room, bad | A_BOLD,
                                d->named[i]);
                y += n;
                room -= n;
            }
            if (d->unsupported)
                y += su_wrap(t, w, y, 0, wd, 2, tui_tag_attr(t, VM_TAG_WARN),
                             "Cut them away: F5 and set out_nodes to the outputs of the last "
                             "layers the NPU runs (node:0;...), then run the rest on the host.");
        }
    } else {
        char a[32], b[32], c[32], e[32];
        vm_fmt_bytes(a, sizeof a, d->exeom);
        vm_fmt_bytes(b, sizeof b, d->weights);
        vm_fmt_bytes(c, sizeof c, d->mem);
        vm_fmt_bytes(e, sizeof e, d->arena);
        int x = su_put(t, w, y, 0, wd, tui_tag_attr(t, VM_TAG_GOOD) | A_BOLD, "ok  ");
        char arena[64];
        snprintf(arena, sizeof arena, "arena %s%s", isnan(d->arena) ? "?" : e,
                 isnan(d->arena) ? " (Estimate first)" : " (est.)");
        char line[256];
        snprintf(line, sizeof line, "exeom %s  weights %s  mem %s", isnan(d->exeom) ? "?" : a,
                 isnan(d->weights) ? "?" : b, isnan(d->mem) ? "?" : c);
        if ((int)(strlen(line) + 2 + strlen(arena)) <= wd - x) {
            su_put(t, w, y++, x, wd - x, 0, "%s  %s", line, arena);
        } else { /* 80x24: the arena on a line of its own, never cut (issue 38) */
            su_put(t, w, y++, x, wd - x, 0, "%s", line);
            su_put(t, w, y++, x, wd - x, 0, "%s", arena);
        }
        if (wd >= 100)
            su_put(t, w, y++, 0, wd, dim, "exeom %.0f B, TOTAL_WEIGHT_SIZE %.0f B, TOTAL_MEM_SIZE "
                   "%.0f B", d->exeom, d->weights, d->mem);
        su_put(t, w, y++, 0, wd, dim, "exeom %s", t->exeom);
    }
    y++;
    draw_log(t, w, d, y, h - y, wd);
}

static bool c_key(tui *t, int ch)
{
    c_data *d = data(t);
    if (!d)
        return false;
    int page = d->log_h - 1 > 1 ? d->log_h - 1 : 1;
    switch (ch) {
    case 'e':
        c_run(t);
        return true;
    case KEY_DOWN: case 'j':
        d->top++;
        return true;
    case KEY_UP: case 'k':
        d->top--;
        return true;
    case KEY_NPAGE: case ' ':
        d->top += page;
        return true;
    case KEY_PPAGE:
        d->top -= page;
        return true;
    case KEY_HOME: case 'g':
        d->top = d->left = 0;
        return true;
    case KEY_RIGHT: case 'l':
        d->left += 8;
        return true;
    case KEY_LEFT: case 'h':
        if (!d->left)
            return false; /* the frame's: back to the sidebar */
        d->left = d->left > 8 ? d->left - 8 : 0;
        return true;
    case KEY_END: case 'G':
        d->top = d->nlines;
        return true;
    }
    return false; /* the frame clamps nothing: draw_log does */
}

static void c_cleanup(tui *t)
{
    c_data *d = t->scr[STEP_COMPILE];
    if (!d)
        return;
    clear_results(d);
    free(d);
    t->scr[STEP_COMPILE] = NULL;
}

static const tui_keyhelp c_help[] = {
    {"F5 r e", "the ATC form, then compile (atc --log=info)"},
    {"Up/Down j/k", "scroll the log"},
    {"PgUp/PgDn", "scroll the log a page (Space too)"},
    {"Left/Right", "scroll the log sideways (h/l)"},
    {"Home/End", "the log's start / end (g/G)"},
    {NULL, NULL}};

const tui_screen scr_compile = {.title = "Compile",
                                .enter = c_enter,
                                .draw = c_draw,
                                .key = c_key,
                                .run = c_run,
                                .job_done = c_job_done,
                                .help = c_help,
                                .cleanup = c_cleanup};
