/* nanobench TUI: the curses workbench (`nanobench` with no arguments, or `nanobench
 * MODEL.onnx`). It drives the same engine as the CLI by running the nanobench binary
 * itself as a child process (`nanobench --db DB --parent RUN estimate ... --json`), or, for
 * the whole bring-up (bringup_job.c), a forked worker calling nb_bringup with its options
 * as a structure; it reads the machine-readable output and the recorded run (run history,
 * db/), and never computes results on its own: the view-model (vm.h) only sorts, formats
 * and draws.
 *
 * Files: frame.c (main loop, sidebar, status line, function-key bar, help, settings,
 * resize, mouse, colour), widgets.c (table view, forms, dialogs, file picker), job.c
 * (child processes), scr_*.c (one screen per bring-up step). */
#ifndef NB_TUI_H
#define NB_TUI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ncursesw/curses.h>

#include "../job.h"
#include "tui_main.h"
#include "vm.h"

/* The least terminal size the screens are drawn for; below it a "terminal too small"
 * message is shown in their place (frame.c). */
#define TUI_MIN_COLS 80
#define TUI_MIN_LINES 24

/* The bring-up steps, in sidebar order. */
typedef enum {
    STEP_MODEL, STEP_ESTIMATE, STEP_QUANTIZE, STEP_COMPILE, STEP_RUN, STEP_COMPARE,
    STEP_HISTORY, STEP_N
} tui_step;

typedef enum { ST_NOT_RUN, ST_RUNNING, ST_OK, ST_WARN, ST_FAILED } tui_state;

/* Colour pairs (monochrome: attributes only). */
enum { CP_NORMAL = 1, CP_TITLE, CP_SEL, CP_GOOD, CP_WARN, CP_BAD, CP_DIM, CP_BAR, CP_KEY };

/* child processes: job.h */

/* ---- the application ---- */

typedef struct tui tui;

typedef struct tui_keyhelp {
    const char *key, *what;
} tui_keyhelp;

typedef struct tui_screen {
    const char *title;                      /* sidebar text */
    void (*enter)(tui *t);                  /* becoming the main pane (reload data) */
    void (*draw)(tui *t, WINDOW *w);        /* the main pane; w is cleared before */
    bool (*key)(tui *t, int ch);            /* a key for the main pane; true if used */
    void (*run)(tui *t);                    /* F5 / 'r': run the step */
    void (*job_done)(tui *t, tui_job *j);   /* a job this step started ended */
    void (*mouse)(tui *t, int y, int x);    /* a click at (y, x) in the pane */
    const tui_keyhelp *help;                /* this screen's keys, {NULL, NULL}-terminated */
    void (*cleanup)(tui *t);                /* at exit: frees t->scr[step] (may be NULL) */
    void (*reread)(tui *t);                 /* a job of another step ended: reread what the
                                               screen lists from the database (may be NULL) */
} tui_screen;

extern const tui_screen scr_model, scr_estimate, scr_quantize, scr_compile, scr_run,
    scr_compare, scr_history;

struct tui {
    /* the model being brought up */
    char model[PATH_MAX];        /* "" until opened */
    char input_shape[512];       /* --input_shape for dynamic dims, "" when none */
    char model_inputs[512];      /* ";"-separated input names (from info --json) */
    /* where the bring-up's files go: WORK/<model stem>/{quant,run,npu_dump,golden,compare} */
    char work[PATH_MAX];
    char db[PATH_MAX];           /* the run database */
    /* what the steps produced, for the next steps */
    char deploy_model[PATH_MAX]; /* calibrate's PREFIX_deploy_model.onnx */
    char exeom[PATH_MAX];        /* atc's NAME.exeom */
    char run_input[PATH_MAX];    /* the input file of the last run ("" = random) */
    char npu_dump[PATH_MAX];     /* run --dump folder */
    char golden_dump[PATH_MAX];  /* infer --dump folder */
    int64_t run_id[STEP_N];      /* the last recorded run of each step, 0 when none */
    tui_state state[STEP_N];
    char state_note[STEP_N][96]; /* e.g. "2 not on NPU", "31 over": at most 13 characters,
                                    the sidebar's room at 80 columns */
    /* settings (F2) */
    char soc_version[16];        /* Ascend035A */
    char thresholds[128];        /* compare's --threshold, "" = defaults */
    /* screen state */
    int step;                    /* the step shown in the main pane */
    int focus;                   /* 0 sidebar, 1 main pane */
    tui_job *job;                /* the running job, NULL when idle */
    char status[256];            /* the status line */
    bool status_error;
    bool color, utf8;
    bool quit;
    WINDOW *side, *main, *statusw, *keys;
    void *scr[STEP_N];           /* each screen's own data */
};


/* Status line text (printf-style); error=true shows it in the error colour. */
void tui_status(tui *t, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sets a step's sidebar state and its short note. */
void tui_set_state(tui *t, int step, tui_state s, const char *note);
/* Starts a job for step (refused with a status message while another runs). argv is
 * NULL-terminated, without the program. Returns true when started. */
bool tui_run(tui *t, int step, int64_t parent, char *const argv[], const char *title);
/* After an Esc read from stdscr: 27 when no key follows within ~50 ms (a real Esc); the
 * function key of an escape sequence the terminfo does not name (ESC [ 1 5 ~: F5); ERR for
 * Alt+key and other sequences (swallowed). Leaves stdscr's timeout at 100 ms. */
int tui_esc_follow(void);
/* As tui_run, with a forked worker running fn(arg) in place of a nanobench command
 * (tui_job_start_fn). */
bool tui_run_fn(tui *t, int step, int (*fn)(void *arg), void *arg, const char *title);
/* The whole bring-up in one job (bringup_job.c): a form for the data folders, then
 * nb_bringup in a worker; done: the steps it ran taken up, the verdict on the status line. */
bool tui_bringup_start(tui *t);
void tui_bringup_done(tui *t, tui_job *j);
/* Switches the main pane to step. */
void tui_goto(tui *t, int step);
/* The current model's file name without .onnx, every character but letters, digits, '_',
 * '-' and '.' as '_' (ATC's rule for file names). */
const char *tui_stem(const tui *t, char *buf, size_t len);
/* The work folder of the current model: WORK/<stem>-<8 hex of the model path's hash>/sub,
 * created; buf takes the path. */
const char *tui_workdir(tui *t, const char *sub, char *buf, size_t len);
/* True once the terminal has closed or SIGINT/SIGTERM/SIGHUP arrived: every loop waiting
 * for a key must give up (modal widgets then act as on Esc, the main loop quits). */
bool tui_hangup(void);
/* Redraws everything now (e.g. before a blocking dialog). */
void tui_redraw(tui *t);
/* Reads what the running job wrote so far, without finishing it (the main loop does that):
 * dialogs call it while they wait for a key, so that a child never blocks on a full pipe. */
void tui_tick(tui *t);

/* ---- widgets (widgets.c) ---- */

/* Draws table tb in w at rows y..y+h-1, columns x..x+wd-1: a header row (the sort column
 * marked after a space, vm_header), then rows from tb->top, the selection highlighted, row
 * and cell tags coloured (monochrome: BAD rows bold, selection reverse); a keep_tail
 * column's long names cut at the start (vm_fit_tail). The columns as vm_table_layout lays
 * them out from tb->left (never a number cut); when some are left out, a hint at the header's
 * right ("Right: more columns", or "<->"); tb->left and tb->more_right are updated. */
void tui_draw_table(tui *t, WINDOW *w, vm_table *tb, int y, int x, int h, int wd);
/* The common table keys: arrows/j/k, PgUp/PgDn, Home/End, '<' '>' sort column, 's'
 * reverse sort, '/' search (prompts on the status line), 'n'/'N' next/previous match,
 * Left/Right the columns left out (unused, false, at either end). page is
 * the visible row count. Returns true when used. */
bool tui_table_key(tui *t, vm_table *tb, int ch, int page);
/* A modal form (libform): fields with labels and initial values; Enter/F10 accepts (once
 * every field's check passes), Esc cancels. values[i] (len each) take the edited text,
 * without leading and trailing blanks. Returns true when accepted. */
typedef struct tui_field {
    const char *label;
    char *value;   /* in: initial, out: edited */
    size_t len;
    const char *hint; /* shown under the form when the field is focused */
    /* NULL, or checks the (trimmed) text when the form is accepted: false with err set
       keeps the form open on this field with err shown in place of the hint */
    bool (*check)(const char *value, char *err, size_t errlen);
} tui_field;
bool tui_form(tui *t, const char *title, tui_field *fields, int n);
/* A one-line prompt on the status line; true when accepted (Enter), false on Esc. */
bool tui_prompt(tui *t, const char *label, char *buf, size_t len);
/* Picks a file under start (libmenu list; Enter opens a folder or picks a file, Backspace
 * goes up); suffix filters files (".onnx"), NULL for all. save=true allows typing a new
 * name. Returns true with path set. */
bool tui_pick_file(tui *t, const char *title, const char *start, const char *suffix, bool save,
                   char *path, size_t len);
/* A modal text window (panel) over the main pane: lines, scrollable, any key but arrows
 * closes. */
void tui_show_text(tui *t, const char *title, const char *text);
/* As tui_show_text, with lines longer than the window wrapped at blanks, continuations
 * indented under the line's text (help, layer details, paths). */
void tui_show_wrapped(tui *t, const char *title, const char *text);
/* Yes/no question; true for yes. */
bool tui_confirm(tui *t, const char *question);

/* Colour pair attribute for a VM_TAG_* (A_BOLD etc. when monochrome). */
int tui_tag_attr(const tui *t, int tag);
/* Text s at (y, x) of w in at most width cells with attribute attr; control bytes (and
 * anything not ASCII when the terminal is not UTF-8) show as '?'. Returns the cells drawn. */
int tui_put(const tui *t, WINDOW *w, int y, int x, int width, int attr, const char *s);


#endif
