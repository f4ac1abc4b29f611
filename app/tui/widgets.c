/* nanobench TUI: widgets (stub until written). */
#include "tui.h"

void tui_draw_table(tui *t, WINDOW *w, const vm_table *tb, int y, int x, int h, int wd)
{
    (void)t, (void)w, (void)tb, (void)y, (void)x, (void)h, (void)wd;
}
bool tui_table_key(tui *t, vm_table *tb, int ch, int page) { (void)t, (void)tb, (void)ch, (void)page; return false; }
bool tui_form(tui *t, const char *title, tui_field *fields, int n) { (void)t, (void)title, (void)fields, (void)n; return false; }
bool tui_prompt(tui *t, const char *label, char *buf, size_t len) { (void)t, (void)label, (void)buf, (void)len; return false; }
bool tui_pick_file(tui *t, const char *title, const char *start, const char *suffix, bool save,
                   char *path, size_t len)
{
    (void)t, (void)title, (void)start, (void)suffix, (void)save, (void)path, (void)len;
    return false;
}
void tui_show_text(tui *t, const char *title, const char *text) { (void)t, (void)title, (void)text; }
bool tui_confirm(tui *t, const char *question) { (void)t, (void)question; return false; }
int tui_tag_attr(const tui *t, int tag) { (void)t, (void)tag; return 0; }
