/* nanobench TUI: the History screen (stub until written). */
#include "tui.h"

const tui_screen scr_history = {.title = "History"};
