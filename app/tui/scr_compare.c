/* nanobench TUI: the Compare screen (stub until written). */
#include "tui.h"

const tui_screen scr_compare = {.title = "Compare"};
