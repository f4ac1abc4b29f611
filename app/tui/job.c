/* nanobench TUI: child processes (stub until written). */
#include <stdio.h>
#include "tui.h"

tui_job *tui_job_start(const char *db, int64_t parent, char *const argv[], const char *title,
                       char *err, size_t errlen)
{
    (void)db, (void)parent, (void)argv, (void)title;
    snprintf(err, errlen, "not written yet");
    return NULL;
}
bool tui_job_poll(tui_job *j) { (void)j; return true; }
void tui_job_wait(tui_job *j) { (void)j; }
void tui_job_cancel(tui_job *j) { (void)j; }
void tui_job_free(tui_job *j) { (void)j; }
const char *tui_job_error(const tui_job *j) { (void)j; return ""; }
