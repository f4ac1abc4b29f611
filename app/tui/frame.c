/* nanobench TUI: the frame (stub until written). */
#include <stdio.h>
#include "tui.h"

int tui_main(int argc, char **argv, const char *db_path)
{
    (void)argc, (void)argv, (void)db_path;
    fprintf(stderr, "nanobench: the workbench is not written yet\n");
    return 2;
}
void tui_status(tui *t, bool error, const char *fmt, ...) { (void)t, (void)error, (void)fmt; }
void tui_set_state(tui *t, int step, tui_state s, const char *note) { (void)t, (void)step, (void)s, (void)note; }
bool tui_run(tui *t, int step, int64_t parent, char *const argv[], const char *title)
{
    (void)t, (void)step, (void)parent, (void)argv, (void)title;
    return false;
}
void tui_goto(tui *t, int step) { (void)t, (void)step; }
const char *tui_workdir(tui *t, const char *sub, char *buf, size_t len) { (void)t, (void)sub, (void)len; return buf; }
void tui_redraw(tui *t) { (void)t; }
