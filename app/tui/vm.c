/* nanobench TUI view-model (stub until written). */
#include "vm.h"
