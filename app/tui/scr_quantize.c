/* nanobench TUI: the Quantize screen (stub until written). */
#include "tui.h"

const tui_screen scr_quantize = {.title = "Quantize"};
