/* nanobench TUI: the Model screen (stub until written). */
#include "tui.h"

const tui_screen scr_model = {.title = "Model"};
