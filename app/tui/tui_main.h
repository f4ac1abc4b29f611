/* nanobench TUI: the entry point, for app/main.c (no curses needed to call it). */
#ifndef NB_TUI_MAIN_H
#define NB_TUI_MAIN_H

/* The curses workbench: argv after the program name (an optional MODEL.onnx, then
 * --input_shape S), db_path from --db (NULL: $NANOBENCH_DB or the default). Returns the exit
 * status: 0, or 2 for bad arguments or when stdin/stdout is not a terminal. */
int tui_main(int argc, char **argv, const char *db_path);

#endif
