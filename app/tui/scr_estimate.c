/* nanobench TUI: the Estimate screen (stub until written). */
#include "tui.h"

const tui_screen scr_estimate = {.title = "Estimate"};
