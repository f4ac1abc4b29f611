/* nanobench TUI: the frame. The main loop (keys with a 100 ms timeout, the running job
 * polled in between), the bring-up sidebar with each step's state, the main pane (drawn by
 * the current screen), the status line, the htop-like function-key bar, help, settings,
 * resize and mouse, colour with a monochrome fallback (NO_COLOR respected). */
#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ncursesw/panel.h>

#include "nb/accucmp.h"
#include "nb/db.h"
#include "tui.h"

static const tui_screen *const screens[STEP_N] = {
    &scr_model, &scr_estimate, &scr_quantize, &scr_compile, &scr_run, &scr_compare, &scr_history,
};

/* what only the frame keeps between draws */
static struct {
    int side_sel;          /* the sidebar's cursor */
    int side_row[STEP_N];  /* the sidebar row each step was drawn at, -1 when not shown */
    int lines, cols;       /* the size the windows were made for */
    int nkeys;             /* the key bar's click targets */
    struct {
        int x0, x1, key;
    } keys[12];
} F;

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
}

bool tui_hangup(void)
{
    if (g_signal)
        return true;
    /* a closed terminal: reads fail at once (getch returns ERR without waiting), and
       SIGHUP may have gone to another process group */
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&p, 1, 0) < 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* ---- small helpers ---- */

static int sidebar_width(int cols)
{
    return cols >= 120 ? 26 : cols >= 100 ? 22 : 16;
}

static int attr_pair(const tui *t, int pair, int mono)
{
    return t->color ? (int)COLOR_PAIR(pair) : mono;
}

static bool job_running(const tui *t)
{
    return t->job && !t->job->done;
}

/* mkdir -p; false with errno set on failure */
static bool mkdirs(const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    size_t n = strlen(p);
    if (!n)
        return false;
    for (size_t i = 1; i <= n; i++)
        if (p[i] == '/' || p[i] == 0) {
            char c = p[i];
            p[i] = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return false;
            struct stat st;
            if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
                errno = ENOTDIR;
                return false;
            }
            p[i] = c;
        }
    return true;
}

/* ---- public frame calls ---- */

void tui_status(tui *t, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->status, sizeof t->status, fmt, ap);
    va_end(ap);
    for (char *c = t->status; *c; c++) /* one line */
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    t->status_error = error;
}

void tui_set_state(tui *t, int step, tui_state s, const char *note)
{
    if (step < 0 || step >= STEP_N)
        return;
    t->state[step] = s;
    snprintf(t->state_note[step], sizeof t->state_note[step], "%s", note ? note : "");
}

static bool run_job(tui *t, int step, int64_t parent, char *const argv[], int (*fn)(void *),
                    void *arg, const char *title)
{
    if (t->job) {
        tui_status(t, true, "%s is running: wait for it or cancel it with Esc", t->job->title);
        return false;
    }
    char err[512];
    tui_job *j = fn ? tui_job_start_fn(fn, arg, title, err, sizeof err)
                    : tui_job_start(t->db, parent, argv, title, err, sizeof err);
    if (!j) {
        tui_status(t, true, "%s: %s", title ? title : "job", err);
        tui_set_state(t, step, ST_FAILED, "not started");
        return false;
    }
    j->step = step;
    t->job = j;
    tui_set_state(t, step, ST_RUNNING, "running");
    tui_status(t, false, "running %s (Esc cancels)", j->title);
    return true;
}

bool tui_run(tui *t, int step, int64_t parent, char *const argv[], const char *title)
{
    return run_job(t, step, parent, argv, NULL, NULL, title);
}

bool tui_run_fn(tui *t, int step, int (*fn)(void *arg), void *arg, const char *title)
{
    return run_job(t, step, 0, NULL, fn, arg, title);
}

void tui_goto(tui *t, int step)
{
    if (step < 0 || step >= STEP_N)
        return;
    if (step != t->step) { /* another screen's message does not stay */
        if (job_running(t))
            tui_status(t, false, "%s is running (Esc cancels)", t->job->title);
        else
            tui_status(t, false, "%s", "");
    }
    t->step = step;
    F.side_sel = step;
    if (screens[step]->enter)
        screens[step]->enter(t);
}

const char *tui_stem(const tui *t, char *buf, size_t len)
{
    const char *base = strrchr(t->model, '/');
    base = base ? base + 1 : t->model;
    snprintf(buf, len, "%s", *base ? base : "unnamed");
    size_t sl = strlen(buf);
    if (sl > 5 && !strcmp(buf + sl - 5, ".onnx"))
        buf[sl - 5] = 0;
    /* ATC's name rule (it refuses other file names): letters, digits, '_', '-', '.' */
    for (char *c = buf; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-' || *c == '.'))
            *c = '_';
    if (!buf[0] || !strcmp(buf, ".") || !strcmp(buf, ".."))
        snprintf(buf, len, "unnamed");
    return buf;
}

const char *tui_workdir(tui *t, const char *sub, char *buf, size_t len)
{
    char stem[256];
    tui_stem(t, stem, sizeof stem);
    /* <stem>-<8 hex of the model's path> (FNV-1a): two models of the same file name in
       different folders get folders of their own */
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)t->model; *c; c++)
        h = (h ^ *c) * 16777619u;
    if (sub && *sub)
        snprintf(buf, len, "%s/%s-%08x/%s", t->work, stem, (unsigned)h, sub);
    else
        snprintf(buf, len, "%s/%s-%08x", t->work, stem, (unsigned)h);
    if (!mkdirs(buf))
        tui_status(t, true, "cannot make %s: %s", buf, strerror(errno));
    return buf;
}

int tui_esc_follow(void)
{
    /* a key within ~50 ms after Esc: Alt+key, or a function key the terminfo does not name
       (TERM=vt100: F5 is ESC [ 1 5 ~) - never a cancel */
    wtimeout(stdscr, 50);
    int c = wgetch(stdscr), key = ERR;
    if (c == ERR) {
        key = 27; /* Esc alone */
    } else if (c == '[' || c == 'O') {
        char seq[16];
        int n = 0;
        int d;
        while (n < (int)sizeof seq - 1 && (d = wgetch(stdscr)) != ERR) {
            seq[n++] = (char)d;
            if (d >= 0x40 && d <= 0x7e && !(c == '[' && n == 1 && d == '['))
                break;
        }
        seq[n] = 0;
        static const int fkeys[] = {0, 1, 2, 3, 4, 5, 0, 6, 7, 8, 9, 10, 0, 11, 12};
        int num;
        char fin;
        if (c == 'O' && n == 1 && seq[0] >= 'P' && seq[0] <= 'S')
            key = KEY_F(1 + seq[0] - 'P');
        else if (c == '[' && n == 2 && seq[0] == '[' && seq[1] >= 'A' && seq[1] <= 'E')
            key = KEY_F(1 + seq[1] - 'A'); /* the Linux console's F1-F5 */
        else if (c == '[' && sscanf(seq, "%d%c", &num, &fin) == 2 && fin == '~' && num >= 11 &&
                 num <= 24 && fkeys[num - 10])
            key = KEY_F(fkeys[num - 10]);
    } else {
        wtimeout(stdscr, 0); /* Alt+key: the rest of a UTF-8 character too */
        int d;
        while ((d = wgetch(stdscr)) != ERR && d >= 0x80 && d <= 0xbf)
            ;
        if (d != ERR)
            ungetch(d);
    }
    wtimeout(stdscr, 100);
    return key;
}

void tui_tick(tui *t)
{
    if (t->job && !t->job->done)
        tui_job_poll(t->job);
}

/* ---- layout and drawing ---- */

static void free_windows(tui *t)
{
    WINDOW **ws[] = {&t->side, &t->main, &t->statusw, &t->keys};
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
        if (*ws[i]) {
            delwin(*ws[i]);
            *ws[i] = NULL;
        }
}

/* (re)makes the four windows for the terminal's size */
static void layout(tui *t)
{
    free_windows(t);
    int H, W;
    getmaxyx(stdscr, H, W);
    F.lines = H;
    F.cols = W;
    if (H < 3 || W < 20)
        return;
    int sw = sidebar_width(W);
    if (sw > W / 3)
        sw = W / 3;
    t->side = newwin(H - 2, sw, 0, 0);
    t->main = newwin(H - 2, W - sw, 0, sw);
    t->statusw = newwin(1, W, H - 2, 0);
    t->keys = newwin(1, W, H - 1, 0);
    if (!t->side || !t->main || !t->statusw || !t->keys)
        free_windows(t);
    clearok(curscr, TRUE);
}

static const char *state_mark(tui_state s)
{
    switch (s) {
    case ST_RUNNING:
        return "..";
    case ST_OK:
        return "ok";
    case ST_WARN:
        return "!!";
    case ST_FAILED:
        return "XX";
    default:
        return "  ";
    }
}

static int state_attr(const tui *t, tui_state s)
{
    switch (s) {
    case ST_RUNNING:
        return attr_pair(t, CP_BAR, A_BOLD) | A_BOLD;
    case ST_OK:
        return tui_tag_attr(t, VM_TAG_GOOD) | A_BOLD;
    case ST_WARN:
        return tui_tag_attr(t, VM_TAG_WARN) | A_BOLD;
    case ST_FAILED:
        return tui_tag_attr(t, VM_TAG_BAD) | A_BOLD;
    default:
        return 0;
    }
}

static void draw_sidebar(tui *t)
{
    WINDOW *w = t->side;
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    int cw = wd - 1; /* the last column is the separator */
    wattr_on(w, (attr_t)attr_pair(t, CP_DIM, 0), NULL);
    mvwvline(w, 0, wd - 1, ACS_VLINE, h);
    wattr_off(w, (attr_t)attr_pair(t, CP_DIM, 0), NULL);
    tui_put(t, w, 0, 1, cw - 1, attr_pair(t, CP_TITLE, 0) | A_BOLD, "nanobench");
    char stem[256] = "(no model)";
    if (t->model[0]) {
        const char *b = strrchr(t->model, '/');
        b = b ? b + 1 : t->model;
        size_t l = strlen(b);
        int room = cw - 1, head = (room - 3) / 2;
        bool ascii = true;
        for (size_t i = 0; i < l && ascii; i++)
            ascii = (unsigned char)b[i] < 0x80;
        /* a long name keeps its head and its tail (the version, ".onnx") with "..." between */
        if (ascii && room >= 9 && (int)l > room)
            snprintf(stem, sizeof stem, "%.*s...%s", head, b, b + l - (size_t)(room - 3 - head));
        else
            snprintf(stem, sizeof stem, "%s", b);
    }
    tui_put(t, w, 1, 1, cw - 1, tui_tag_attr(t, VM_TAG_DIM), stem);
    bool notes = h >= 3 + 2 * STEP_N;
    int y = 3;
    if (h < 3 + STEP_N)
        y = h - STEP_N > 0 ? h - STEP_N : 0;
    for (int s = 0; s < STEP_N; s++) {
        F.side_row[s] = -1;
        if (y >= h)
            continue;
        F.side_row[s] = y;
        bool cur = s == t->step, sel = s == F.side_sel && t->focus == 0;
        int base = sel ? attr_pair(t, CP_SEL, A_REVERSE) | (t->color ? 0 : A_REVERSE) : 0;
        if (cur)
            base |= A_BOLD;
        /* ">1 Quantize  ok" */
        wattr_on(w, (attr_t)base, NULL);
        mvwhline(w, y, 0, ' ', cw);
        wattr_off(w, (attr_t)base, NULL);
        char line[64];
        snprintf(line, sizeof line, "%c%d %s", cur ? '>' : ' ', s + 1, screens[s]->title ? screens[s]->title : "?");
        tui_put(t, w, y, 0, cw - 3, base, line);
        int ma = sel ? base : state_attr(t, t->state[s]) | base;
        tui_put(t, w, y, cw - 2, 2, ma, state_mark(t->state[s]));
        y++;
        if (notes) { /* from the second cell: 14 cells at 80 columns ("exeom 5.48 KiB") */
            if (t->state_note[s][0] && y < h)
                tui_put(t, w, y, 1, cw - 1, tui_tag_attr(t, VM_TAG_DIM), t->state_note[s]);
            y++;
        }
    }
    wnoutrefresh(w);
}

static void draw_status(tui *t)
{
    WINDOW *w = t->statusw;
    int wd = getmaxx(w);
    werase(w);
    int right = 0;
    if (job_running(t)) {
        char info[160];
        double el = 0;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        el = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - t->job->started;
        if (t->job->progress_total > 0)
            snprintf(info, sizeof info, " %s %lld/%lld  %.0f s ", t->job->progress_what,
                     (long long)t->job->progress_done, (long long)t->job->progress_total, el);
        else
            snprintf(info, sizeof info, " %s  %.1f s ", t->job->title, el);
        right = (int)strlen(info);
        if (right > wd / 2)
            right = wd / 2;
        tui_put(t, w, 0, wd - right, right, attr_pair(t, CP_BAR, A_REVERSE) | (t->color ? A_REVERSE : 0), info);
    }
    int attr = t->status_error ? tui_tag_attr(t, VM_TAG_BAD) | A_BOLD : 0;
    tui_put(t, w, 0, 0, wd - right - 1, attr, t->status);
    wnoutrefresh(w);
}

static void draw_keys(tui *t)
{
    WINDOW *w = t->keys;
    int wd = getmaxx(w);
    werase(w);
    struct {
        const char *k, *label;
        int key;
    } items[] = {
        {"F1", "Help", KEY_F(1)},  {"F2", "Setup", KEY_F(2)}, {"F5", "Run", KEY_F(5)},
        {"F10", "Quit", KEY_F(10)}, {"Tab", "Pane", '\t'},    {"/", "Search", '/'},
        {"1-7", "Step", 0},        {"Esc", "Cancel", 27},
    };
    int x = 0;
    F.nkeys = 0;
    int ka = A_BOLD, la = attr_pair(t, CP_KEY, A_REVERSE);
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        if (items[i].key == 27 && !job_running(t))
            continue;
        char label[16];
        snprintf(label, sizeof label, "%-6s", items[i].label);
        if (strlen(label) == strlen(items[i].label)) /* a long label: one space after it */
            snprintf(label, sizeof label, "%s ", items[i].label);
        int n = (int)(strlen(items[i].k) + strlen(label));
        if (x + n > wd)
            break;
        tui_put(t, w, 0, x, wd - x, ka, items[i].k);
        tui_put(t, w, 0, x + (int)strlen(items[i].k), wd - x, la, label);
        if (F.nkeys < (int)(sizeof F.keys / sizeof F.keys[0])) {
            F.keys[F.nkeys].x0 = x;
            F.keys[F.nkeys].x1 = x + n - 1;
            F.keys[F.nkeys].key = items[i].key;
            F.nkeys++;
        }
        x += n;
    }
    /* the rest of the bar in the label colour, as htop */
    if (t->color && x < wd) {
        wattr_on(w, (attr_t)la, NULL);
        mvwhline(w, 0, x, ' ', wd - x);
        wattr_off(w, (attr_t)la, NULL);
    }
    wnoutrefresh(w);
}

/* the base windows into the virtual screen (no doupdate) */
static void draw_base(tui *t)
{
    if (LINES != F.lines || COLS != F.cols)
        layout(t);
    if (!t->main || COLS < TUI_MIN_COLS || LINES < TUI_MIN_LINES) {
        /* below the least size every screen is drawn for (issue 38: values cut at 60x15):
           a message in place of the screens, which keep their state until it grows */
        char msg[96];
        snprintf(msg, sizeof msg, "terminal too small: need %dx%d, have %dx%d", TUI_MIN_COLS,
                 TUI_MIN_LINES, COLS, LINES);
        werase(stdscr);
        int len = (int)strlen(msg), y = LINES / 2 - 1, x = (COLS - len) / 2;
        if (y < 0)
            y = 0;
        if (x < 0)
            x = 0;
        tui_put(t, stdscr, y, x, COLS - x, A_BOLD, msg);
        if (y + 1 < LINES)
            tui_put(t, stdscr, y + 1, COLS > 27 ? (COLS - 27) / 2 : 0, COLS, 0,
                    "enlarge it, or F10 to quit");
        wnoutrefresh(stdscr);
        return;
    }
    draw_sidebar(t);
    werase(t->main);
    if (screens[t->step]->draw)
        screens[t->step]->draw(t, t->main);
    wnoutrefresh(t->main);
    draw_status(t);
    draw_keys(t);
}

void tui_redraw(tui *t)
{
    draw_base(t);
    /* modal panels on top: touched so that they are copied over the base again */
    for (PANEL *p = panel_above(NULL); p; p = panel_above(p))
        touchwin(panel_window(p));
    update_panels();
    doupdate();
}

/* ---- colour ---- */

static void colors(tui *t)
{
    const char *nc = getenv("NO_COLOR");
    t->color = false;
    if ((nc && *nc) || !has_colors() || start_color() != OK)
        return;
    int bg = -1;
    if (use_default_colors() != OK)
        bg = COLOR_BLACK;
    short dim = COLORS >= 16 ? 8 : COLOR_BLUE;
    init_pair(CP_NORMAL, -1 == bg ? -1 : COLOR_WHITE, (short)bg);
    init_pair(CP_TITLE, COLOR_CYAN, (short)bg);
    init_pair(CP_SEL, COLOR_BLACK, COLOR_CYAN);
    init_pair(CP_GOOD, COLOR_GREEN, (short)bg);
    init_pair(CP_WARN, COLOR_YELLOW, (short)bg);
    init_pair(CP_BAD, COLOR_RED, (short)bg);
    init_pair(CP_DIM, dim, (short)bg);
    init_pair(CP_BAR, COLOR_CYAN, (short)bg);
    init_pair(CP_KEY, COLOR_BLACK, COLOR_CYAN);
    t->color = true;
}

/* ---- help and settings ---- */

static void show_help(tui *t)
{
    const tui_screen *s = screens[t->step];
    size_t cap = 8192, n = 0;
    char *txt = malloc(cap);
    if (!txt)
        return;
#define ADD(...)                                                                                  \
    do {                                                                                          \
        if (n < cap)                                                                              \
            n += (size_t)snprintf(txt + n, cap - n, __VA_ARGS__);                                 \
    } while (0)
    ADD("Global keys\n");
    ADD("  F1  ?         this help\n");
    ADD("  F2  S         settings: work folder, database, soc_version, thresholds\n");
    ADD("  F5  r         run this step\n");
    ADD("  F10 q         quit (asks first while a job runs)\n");
    ADD("  Esc           cancel the running job\n");
    ADD("  Tab           switch between the sidebar and the main pane\n");
    ADD("  1-7           go to a step\n");
    ADD("  Up/Down j/k   in the sidebar: choose a step; Enter opens it\n");
    ADD("  mouse         click a step, a row of the pane, or a key of the bottom bar\n");
    ADD("\nTables\n");
    ADD("  Up/Down j/k   move;  PgUp/PgDn  a page;  Home/End  first/last\n");
    ADD("  < >           sort by the previous / next column;  s  reverse the sort\n");
    ADD("  /  n  N       search (any cell, any case); next / previous match\n");
    if (s->help && s->help[0].key) {
        ADD("\n%s\n", s->title ? s->title : "This screen");
        for (const tui_keyhelp *k = s->help; k->key; k++)
            ADD("  %-13s %s\n", k->key, k->what ? k->what : "");
    }
    ADD("\nSidebar marks: \"ok\" done, \"!!\" warnings, \"XX\" failed, \"..\" running, blank not run\n");
    ADD("Database: %s\nWork folder: %s\n", t->db, t->work);
#undef ADD
    char title[64];
    snprintf(title, sizeof title, "Help: %s", s->title ? s->title : "");
    tui_show_wrapped(t, title, txt);
    free(txt);
}

/* The Thresholds field: empty, or what compare's --threshold accepts (its own parser). */
static bool check_thresholds(const char *value, char *err, size_t errlen)
{
    if (!*value)
        return true;
    nb_cmp_thresholds th;
    nb_status st = {0};
    nb_cmp_thresholds_default(&th);
    if (nb_cmp_thresholds_parse(value, &th, &st) == NB_OK)
        return true;
    snprintf(err, errlen, "%s", st.msg[0] ? st.msg : "not NAME=NUMBER,...");
    return false;
}

/* a leading ~ (alone or ~/...) as $HOME, as the file picker reads it */
static void expand_home(char *v, size_t len)
{
    const char *home = getenv("HOME");
    if (v[0] != '~' || (v[1] && v[1] != '/') || !home || !*home)
        return;
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s%s", home, v + 1);
    snprintf(v, len, "%s", tmp);
}

static void settings(tui *t)
{
    char work[PATH_MAX], db[PATH_MAX], soc[sizeof t->soc_version], thr[sizeof t->thresholds];
    snprintf(work, sizeof work, "%s", t->work);
    snprintf(db, sizeof db, "%s", t->db);
    snprintf(soc, sizeof soc, "%s", t->soc_version);
    snprintf(thr, sizeof thr, "%s", t->thresholds);
    tui_field f[] = {
        {"Work folder", work, sizeof work,
         "Where a bring-up's files go: WORK/<model>/{quant,run,npu_dump,golden,compare,export}.",
         NULL},
        {"Database", db, sizeof db, "The run history (SQLite); every step is recorded in it.",
         NULL},
        {"soc_version", soc, sizeof soc, "atc --soc_version (the simulated Nano: Ascend035A).",
         NULL},
        {"Thresholds", thr, sizeof thr,
         "compare --threshold: NAME=NUMBER,... of cos, red, kl, rmse, mre (empty: the "
         "defaults cos=0.99,red=0.05,kl=0.005,rmse=1,mre=1).", check_thresholds},
    };
    if (!tui_form(t, "Settings", f, 4))
        return;
    if (!work[0] || !db[0] || !soc[0]) {
        tui_status(t, true, "settings: the work folder, database and soc_version cannot be empty");
        return;
    }
    expand_home(work, sizeof work);
    expand_home(db, sizeof db);
    bool db_changed = strcmp(db, t->db) != 0;
    if (db_changed && t->job) {
        /* its run goes to the old database: its id would be taken for one of the new */
        tui_status(t, true, "settings: %s is running: wait for it or cancel it (Esc) before "
                   "changing the database", t->job->title);
        return;
    }
    snprintf(t->work, sizeof t->work, "%s", work);
    snprintf(t->db, sizeof t->db, "%s", db);
    if (db_changed) {
        /* the run ids remembered are the old database's: --parent would name no run, or an
           unrelated one; the screens that list runs read the new one */
        for (int s = 0; s < STEP_N; s++)
            t->run_id[s] = 0;
        for (int s = 0; s < STEP_N; s++)
            if (screens[s]->reread)
                screens[s]->reread(t);
    }
    snprintf(t->soc_version, sizeof t->soc_version, "%s", soc);
    snprintf(t->thresholds, sizeof t->thresholds, "%s", thr);
    tui_status(t, false, "settings saved for this session");
}

/* ---- jobs ---- */

static void finish_job(tui *t)
{
    tui_job *j = t->job;
    t->job = NULL;
    int step = j->step;
    if (step >= 0 && step < STEP_N) {
        t->run_id[step] = j->run_id;
        /* "running X (Esc cancels)" ends with the job, whatever the screen says next
           (issue 38: it stayed after history show) */
        if (!strncmp(t->status, "running ", 8))
            tui_status(t, false, "%s: done", j->title);
        if (j->cancelled)
            tui_status(t, false, "%s: cancelled", j->title);
        if (screens[step]->job_done)
            screens[step]->job_done(t, j);
        bool again = t->job && t->job->step == step; /* the screen chained another job */
        if (!again && t->state[step] == ST_RUNNING) {
            if (j->cancelled)
                tui_set_state(t, step, ST_NOT_RUN, "cancelled");
            else if (j->status != 0)
                tui_set_state(t, step, ST_FAILED, "failed"); /* the why: the status line */
            else
                tui_set_state(t, step, ST_OK, "");
        }
        if (j->cancelled && !strstr(t->status, "cancel"))
            tui_status(t, false, "%s: cancelled", j->title);
        else if (!j->cancelled && j->status != 0 && !again && !t->status_error)
            tui_status(t, true, "%s", tui_job_error(j));
        /* the child could not record its run (locked, read-only or corrupt database): a
           warning, never a silent ok; a chained job carries it on */
        if (!j->cancelled && j->not_recorded[0]) {
            if (again) {
                if (!t->job->not_recorded[0])
                    snprintf(t->job->not_recorded, sizeof t->job->not_recorded, "%s",
                             j->not_recorded);
            } else if (j->status == 0) {
                if (t->state[step] == ST_OK || t->state[step] == ST_WARN ||
                    t->state[step] == ST_RUNNING)
                    tui_set_state(t, step, ST_WARN, "not recorded");
                tui_status(t, true, "%s: not recorded: %s", j->title, j->not_recorded);
            }
        }
        /* a run was recorded: the screens that list runs (History's count) reread them */
        for (int s = 0; s < STEP_N; s++)
            if (s != step && screens[s]->reread)
                screens[s]->reread(t);
    }
    tui_job_free(j);
}

static void cancel_job(tui *t)
{
    if (!t->job)
        return;
    tui_status(t, false, "cancelling %s...", t->job->title);
    tui_redraw(t);
    tui_job_cancel(t->job);
    if (t->job->killed) { /* its rows (a bringup's steps too) say cancelled, not crashed */
        nb_db *db = NULL;
        nb_status st = {0};
        if (!nb_db_open(t->db[0] ? t->db : NULL, &db, &st))
            nb_db_mark_killed(db, t->job->pid, "cancelled: killed after SIGINT did not stop "
                              "it within 3 s", &st);
        nb_db_close(db);
    }
    finish_job(t);
}

/* ---- keys ---- */

static void handle_key(tui *t, int ch);

static void run_step(tui *t)
{
    const tui_screen *s = screens[t->step];
    if (t->job) {
        tui_status(t, true, "%s is running: wait for it or cancel it with Esc", t->job->title);
        return;
    }
    if (!s->run) {
        tui_status(t, false, "%s has nothing to run", s->title);
        return;
    }
    s->run(t);
}

static void quit(tui *t)
{
    if (job_running(t)) {
        char q[200];
        snprintf(q, sizeof q, "%s is running. Cancel it and quit?", t->job->title);
        if (!tui_confirm(t, q))
            return;
        cancel_job(t);
    }
    t->quit = true;
}

static void mouse(tui *t)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
#ifdef BUTTON5_PRESSED
    if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        int k = ev.bstate & BUTTON4_PRESSED ? KEY_UP : KEY_DOWN;
        if (t->main && wenclose(t->main, ev.y, ev.x)) {
            if (screens[t->step]->key)
                for (int i = 0; i < 3; i++)
                    screens[t->step]->key(t, k);
        } else if (t->side && wenclose(t->side, ev.y, ev.x))
            handle_key(t, k == KEY_UP ? 'k' : 'j');
        return;
    }
#endif
    if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED)))
        return;
    if (t->side && wenclose(t->side, ev.y, ev.x)) {
        /* the step drawn at that row or just above it (its note) */
        int y = ev.y - getbegy(t->side), hit = -1;
        for (int s = 0; s < STEP_N; s++)
            if (F.side_row[s] >= 0 && F.side_row[s] <= y)
                hit = s;
        if (hit >= 0 && y <= F.side_row[hit] + 1) { /* opened: the pane takes the keys */
            tui_goto(t, hit);
            t->focus = 1;
        } else
            t->focus = 0;
    } else if (t->main && wenclose(t->main, ev.y, ev.x)) {
        t->focus = 1;
        if (screens[t->step]->mouse)
            screens[t->step]->mouse(t, ev.y - getbegy(t->main), ev.x - getbegx(t->main));
    } else if (t->keys && wenclose(t->keys, ev.y, ev.x)) {
        int x = ev.x - getbegx(t->keys);
        for (int i = 0; i < F.nkeys; i++)
            if (x >= F.keys[i].x0 && x <= F.keys[i].x1 && F.keys[i].key) {
                handle_key(t, F.keys[i].key);
                return;
            }
    }
}

static void handle_key(tui *t, int ch)
{
    const tui_screen *s = screens[t->step];
    switch (ch) {
    case ERR:
        return;
    case KEY_RESIZE:
        layout(t);
        return;
    case KEY_MOUSE:
        mouse(t);
        return;
    case KEY_F(1):
    case '?':
        show_help(t);
        return;
    case KEY_F(2):
    case 'S':
        settings(t);
        return;
    case KEY_F(5):
    case 'r':
        run_step(t);
        return;
    case KEY_F(10):
    case 'q':
        quit(t);
        return;
    case 27: /* Esc */
        if (t->job)
            cancel_job(t);
        else if (t->focus == 1 && s->key && s->key(t, ch))
            return;
        return;
    case '\t':
    case KEY_BTAB:
        t->focus = !t->focus;
        if (t->focus == 0)
            F.side_sel = t->step;
        return;
    default:
        break;
    }
    if (ch >= '1' && ch < '1' + STEP_N) {
        tui_goto(t, ch - '1');
        t->focus = 1;
        return;
    }
    if (t->focus == 0) {
        switch (ch) {
        case KEY_UP:
        case 'k':
            F.side_sel = F.side_sel > 0 ? F.side_sel - 1 : 0;
            return;
        case KEY_DOWN:
        case 'j':
            F.side_sel = F.side_sel < STEP_N - 1 ? F.side_sel + 1 : STEP_N - 1;
            return;
        case KEY_HOME:
        case 'g':
            F.side_sel = 0;
            return;
        case KEY_END:
        case 'G':
            F.side_sel = STEP_N - 1;
            return;
        case '\n':
        case '\r':
        case KEY_ENTER:
        case KEY_RIGHT:
        case 'l':
            tui_goto(t, F.side_sel);
            t->focus = 1;
            return;
        default:
            break;
        }
    }
    if (s->key && s->key(t, ch))
        return;
    if (t->focus == 1 && ch == KEY_LEFT) { /* unused by the screen: back to the sidebar */
        t->focus = 0;
        F.side_sel = t->step;
    }
}

/* ---- entry ---- */

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "nanobench: %s%s%s\n", msg, arg ? arg : "", arg ? "'" : "");
    return 2;
}

static void default_work(char *buf, size_t len)
{
    const char *w = getenv("NANOBENCH_WORK");
    if (w && *w) {
        snprintf(buf, len, "%s", w);
        return;
    }
    const char *x = getenv("XDG_CACHE_HOME");
    if (x && *x == '/') {
        snprintf(buf, len, "%s/nanobench/work", x);
        return;
    }
    const char *h = getenv("HOME");
    snprintf(buf, len, "%s/.cache/nanobench/work", h && *h ? h : "/tmp");
}

int tui_main(int argc, char **argv, const char *db_path)
{
    setlocale(LC_ALL, "");
    const char *model = NULL, *shape = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--input_shape")) {
            if (i + 1 >= argc)
                return usage_error("--input_shape needs a value", NULL);
            shape = argv[++i];
        } else if (!strncmp(a, "--input_shape=", 14))
            shape = a + 14;
        else if (a[0] == '-' && a[1])
            return usage_error("unknown workbench option '", a);
        else if (!model)
            model = a;
        else
            return usage_error("the workbench opens one model; extra argument '", a);
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "nanobench: the workbench needs a terminal (stdin and stdout); "
                        "see 'nanobench --help' for the commands\n");
        return 2;
    }
    tui *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "nanobench: out of memory\n");
        return 2;
    }
    if (db_path && *db_path)
        snprintf(t->db, sizeof t->db, "%s", db_path);
    else if (getenv("NANOBENCH_DB") && *getenv("NANOBENCH_DB"))
        snprintf(t->db, sizeof t->db, "%s", getenv("NANOBENCH_DB"));
    else {
        nb_status st = {0};
        if (nb_db_default_path(t->db, sizeof t->db, &st) != NB_OK) {
            fprintf(stderr, "nanobench: no database path: give --db PATH (no HOME)\n");
            free(t);
            return 2;
        }
    }
    default_work(t->work, sizeof t->work);
    snprintf(t->soc_version, sizeof t->soc_version, "Ascend035A");
    if (model) {
        char abs[PATH_MAX];
        snprintf(t->model, sizeof t->model, "%s", realpath(model, abs) ? abs : model);
    }
    if (shape)
        snprintf(t->input_shape, sizeof t->input_shape, "%s", shape);
    const char *cs = nl_langinfo(CODESET);
    t->utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
    t->focus = 1;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term, old_hup;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    /* newterm, not initscr: an unknown terminal returns here instead of exiting */
    const char *term = getenv("TERM");
    SCREEN *scr = term && *term ? newterm(NULL, stdout, stdin) : NULL;
    const char *cup = scr ? tigetstr("cup") : NULL;
    if (!scr || !cup || cup == (char *)-1) {
        if (scr) {
            endwin();
            delscreen(scr);
        }
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        fprintf(stderr,
                "nanobench: the terminal '%s' cannot run the workbench (needs cursor "
                "addressing; try TERM=xterm-256color)\n",
                term ? term : "");
        free(t);
        return 2;
    }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    colors(t);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
                  | BUTTON5_PRESSED
#endif
              ,
              NULL);
    mouseinterval(0);
    refresh();
    layout(t);
    for (int s = 0; s < STEP_N; s++)
        F.side_row[s] = -1;

    tui_goto(t, STEP_MODEL);
    if (t->model[0]) {
        tui_redraw(t);
        if (screens[STEP_MODEL]->run)
            screens[STEP_MODEL]->run(t);
    } else
        tui_status(t, false, "open a model to begin (F1 for help)");

    wtimeout(stdscr, 100);
    while (!t->quit) {
        if (tui_hangup()) {
            g_signal = 0;
            if (t->job)
                cancel_job(t);
            t->quit = true;
            break;
        }
        tui_redraw(t);
        int ch = wgetch(stdscr);
        if (t->job && tui_job_poll(t->job))
            finish_job(t);
        if (ch == 13 || ch == KEY_ENTER) /* nonl: Enter arrives as CR */
            ch = '\n';
        if (ch == 27)
            ch = tui_esc_follow();
        handle_key(t, ch);
    }

    if (t->job) {
        tui_job_cancel(t->job);
        tui_job_free(t->job);
        t->job = NULL;
    }
    for (int s = 0; s < STEP_N; s++)
        if (screens[s]->cleanup)
            screens[s]->cleanup(t);
    free_windows(t);
    endwin();
    delscreen(scr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    free(t);
    return 0;
}
