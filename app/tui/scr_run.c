/* nanobench TUI: the Run screen (stub until written). */
#include "tui.h"

const tui_screen scr_run = {.title = "Run"};
