/* nanobench TUI: the Compile screen (stub until written). */
#include "tui.h"

const tui_screen scr_compile = {.title = "Compile"};
