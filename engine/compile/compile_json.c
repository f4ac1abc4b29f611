/* nanobench atc: the compile's result as JSON (include/nb/exeom.h), what `atc --json` prints
 * and the Python module's compile returns. */
#include "nb/exeom.h"
#include "nb/json.h"

json_t *nb_compile_result_json(const nb_compile_result *r)
{
    const nb_npu_graph *g = &r->est.g;
    int cpu = 0, cube = 0;
    for (int i = 0; i < g->n_k; i++)
        cpu += g->k[i].unit == NB_TASK_CPU, cube += g->k[i].unit == NB_TASK_CUBE;
    json_t *j = json_object();
    json_object_set_new(j, "exeom", nb_json_string(r->exeom));
    json_object_set_new(j, "dbg", nb_json_string(r->dbg));
    json_object_set_new(j, "input", json_string(r->form == 1   ? "deploy model"
                                                : r->form == 2 ? "Q/DQ model"
                                                               : "float"));
    json_object_set_new(j, "quantized_layers", json_integer(r->n_quantized));
    json_object_set_new(j, "tasks", json_integer(g->n_k));
    json_object_set_new(j, "cube_tasks", json_integer(cube));
    json_object_set_new(j, "cpu_tasks", json_integer(cpu));
    json_object_set_new(j, "tensors", json_integer(g->n_t));
    json_object_set_new(j, "TOTAL_WEIGHT_SIZE", json_integer(r->est.weight_bytes));
    json_object_set_new(j, "TOTAL_MEM_SIZE", json_integer(r->est.mem_bytes));
    json_object_set_new(j, "TOTAL_EXEOM_SIZE", json_integer(r->exeom_bytes));
    json_object_set_new(j, "ms", nb_json_num(r->ms));
    json_t *notes = json_array();
    for (int i = 0; i < r->plan.n_notes; i++)
        json_array_append_new(notes, nb_json_string(r->plan.notes[i]));
    json_object_set_new(j, "nb_input_scale_changes", notes);
    return j;
}
