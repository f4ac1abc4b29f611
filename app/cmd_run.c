/* nanobench run: executes a NAME.exeom on the simulated NPU through the ACL API (issue 6),
 * as an app on the Nano would: init, device, context, stream, load, datasets, execute.
 * Inputs come from .npy / .bin files and are converted to the model's input type and layout
 * (fp16 ND from atc) at the ACL boundary; outputs are written as float32 .npy. --profile
 * prints the cycle model's per-task table and the totals at 64 and 200 MHz. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "acl/acl.h"
#include "cli.h"
#include "nb/sim.h"

#define MAX_IO 64

static void help(void)
{
    printf("usage: nanobench run NAME.exeom [--input NAME=FILE.npy|FILE.bin|random[:SEED] ...]\n"
           "                     [--output-dir DIR] [--dump acl.json] [--profile] [--json]\n"
           "Runs a compiled model on nanobench's simulated Nano NPU through the ACL API\n"
           "(include/acl/acl.h). Each input is a .npy (any numeric dtype, the input's shape)\n"
           "or a raw float32 .bin of the input's shape, converted to the model's input type\n"
           "(fp16); random[:SEED] gives infer's uniform [-1,1) values of that seed for a float\n"
           "input. NAME is the ONNX input name (from NAME.dbg next to the exeom) or its index;\n"
           "with one input NAME= may be left out; no --input at all runs zeros. Outputs are\n"
           "written to DIR (default .) as <output name>.npy in float32. --dump takes the\n"
           "seed's acl.json with a \"dump\" section (dump files per task, share/proto/\n"
           "dump.proto). --profile prints every task's cycles (share/doc/cycle-model.md).\n"
           "--json prints one JSON object on stdout instead of the text: outputs (name, file,\n"
           "shape, dtype, npu_dtype, min, max, mean, first 8 values), cycles, ms_64mhz,\n"
           "ms_200mhz, every task's profile, the fp16 saturations, and the dump folder and\n"
           "file count with --dump; warnings stay on stderr.\n");
}

/* exit status of an ACL error: 1 for resource and internal errors, else 2 (bad input) */
static int acl_fail(const char *what, aclError e)
{
    int status = (e >= 200000 && e < 300000) || e >= 500000 ? 1 : 2;
    const char *msg = aclGetRecentErrMsg();
    if (!what || !strncmp(msg, what, strlen(what))) /* the message names it already */
        return cli_fail(status, "%s (ACL error %d)", msg, e);
    return cli_fail(status, "%s: %s (ACL error %d)", what, msg, e);
}

/* Reads FILE into the logical elements of input t (n values, float), or fails (exit 2). */
static int read_input(const char *file, const nb_exeom_tensor *t, float **vals)
{
    int64_t n = nb_sim_numel(t);
    size_t fl = strlen(file);
    nb_status st = {0};
    nb_tensor *x = NULL;
    uint32_t seed;
    int r = cli_random_seed(file, file, &seed);
    if (r > 0)
        return r;
    if (r == 0) { /* the values infer's random:SEED gives a float32 input of this shape */
        int64_t dims[6];
        for (int i = 0; i < t->rank; i++)
            dims[i] = t->dims[i];
        if (nb_tensor_new(NB_FLOAT, t->rank, dims, &x, &st))
            return cli_fail(2, "%s", st.msg);
        nb_tensor_fill_uniform(x, seed, -1.0, 1.0);
    } else if (fl > 4 && !strcmp(file + fl - 4, ".npy")) {
        if (nb_npy_read(file, &x, &st))
            return cli_fail(2, "%s", st.msg);
    } else {
        int64_t dims[6];
        for (int i = 0; i < t->rank; i++)
            dims[i] = t->dims[i];
        if (nb_bin_read(file, NB_FLOAT, t->rank, dims, &x, &st))
            return cli_fail(2, "%s", st.msg);
    }
    bool same = x->numel == n;
    if (same && fl > 4 && !strcmp(file + fl - 4, ".npy")) { /* a .npy has the input's shape */
        same = x->rank == t->rank;
        for (int i = 0; same && i < t->rank; i++)
            same = x->dims[i] == t->dims[i];
    }
    if (!same) {
        char have[128], want[128];
        int64_t dims[6];
        for (int i = 0; i < t->rank; i++)
            dims[i] = t->dims[i];
        nb_shape_str(x->rank, x->dims, ',', have, sizeof have);
        nb_shape_str(t->rank, dims, ',', want, sizeof want);
        nb_tensor_free(x);
        return cli_fail(2, "%s: shape %s, the model's input is %s", file, have, want);
    }
    *vals = malloc(sizeof(float) * ((size_t)n + 1));
    if (!*vals) {
        nb_tensor_free(x);
        return cli_fail(1, "out of memory");
    }
    for (int64_t i = 0; i < n; i++)
        (*vals)[i] = (float)nb_tensor_get_f64(x, i);
    nb_tensor_free(x);
    return 0;
}

int cmd_run(int argc, char **argv)
{
    const char *exeom = NULL, *outdir = ".", *dump = NULL;
    const char *inputs[MAX_IO];
    int n_inputs = 0;
    bool profile = false, json = false;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            help();
            return 0;
        }
        if ((r = cli_opt(argc, argv, &i, "--input", &v))) {
            if (r < 0)
                return cli_usage_error("run", "--input needs NAME=FILE");
            if (n_inputs == MAX_IO)
                return cli_usage_error("run", "more than %d --input", MAX_IO);
            inputs[n_inputs++] = v;
        } else if ((r = cli_opt(argc, argv, &i, "--output-dir", &v))) {
            if (r < 0)
                return cli_usage_error("run", "--output-dir needs a folder");
            outdir = v;
        } else if ((r = cli_opt(argc, argv, &i, "--dump", &v))) {
            if (r < 0)
                return cli_usage_error("run", "--dump needs an acl.json");
            dump = v;
        } else if (!strcmp(argv[i], "--profile")) {
            profile = true;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if ((r = cli_model_arg("run", argv[i], &exeom))) {
            return r;
        }
    }
    if (!exeom)
        return cli_usage_error("run", "no NAME.exeom given");
    int rc = rec_start("run", exeom, argc, argv);
    if (rc)
        return rc;
    rec_param("output_dir", "%s", outdir);
    if (dump)
        rec_param("dump", "%s", dump);
    const char *lvl = getenv("NANOBENCH_NDRV_LOG");
    if (!lvl || !*lvl)
        uapi_npu_dlog_setlevel(0x10, 4, 0); /* errors come back as one line below */
    aclError e;
    if ((e = aclInit(NULL)))
        return acl_fail("aclInit", e);
    if (dump && ((e = aclmdlInitDump()) || (e = aclmdlSetDump(dump)))) {
        aclFinalize();
        return acl_fail(dump, e);
    }
    aclrtContext ctx = NULL;
    aclrtStream stream = NULL;
    uint32_t id = 0;
    aclmdlDesc *desc = NULL;
    aclmdlDataset *in = NULL, *out = NULL;
    json_t *jo = NULL;
    float *vals[MAX_IO] = {0};
    void *inbuf[MAX_IO] = {0};
    rc = 0;
    if ((e = aclrtSetDevice(0)) || (e = aclrtCreateContext(&ctx, 0)) ||
        (e = aclrtCreateStream(&stream))) {
        rc = acl_fail("runtime", e);
        goto done;
    }
    if ((e = aclmdlLoadFromFile(exeom, &id))) {
        rc = acl_fail(exeom, e);
        goto done;
    }
    if (nb_acl_dbg_note(id)[0])
        fprintf(stderr, "nanobench: warning: %s: not used (inputs and outputs go by index)\n",
                nb_acl_dbg_note(id));
    if (nb_acl_dump_note(id)[0])
        fprintf(stderr, "nanobench: warning: %s: %s\n", dump, nb_acl_dump_note(id));
    desc = aclmdlCreateDesc();
    if (!desc || (e = aclmdlGetDesc(desc, id))) {
        rc = desc ? acl_fail(exeom, e) : cli_fail(1, "out of memory");
        goto done;
    }
    const nb_sim_model *sim = nb_acl_sim_model(id);
    const nb_exeom *x = nb_sim_exeom(sim);
    size_t ni = aclmdlGetNumInputs(desc), no = aclmdlGetNumOutputs(desc);
    if (ni > MAX_IO || no > MAX_IO) {
        rc = cli_fail(2, "%s: %zu inputs and %zu outputs (nanobench run takes %d)", exeom, ni,
                      no, MAX_IO);
        goto done;
    }
    /* which --input feeds which model input */
    const char *file_of[MAX_IO] = {0};
    for (int a = 0; a < n_inputs; a++) {
        const char *eq = strchr(inputs[a], '=');
        if (!eq) {
            if (ni != 1) {
                rc = cli_usage_error("run", "--input %s: the model has %zu inputs, give NAME=FILE",
                                     inputs[a], ni);
                goto done;
            }
            if (file_of[0]) {
                rc = cli_usage_error("run", "--input %s: the input is given twice", inputs[a]);
                goto done;
            }
            file_of[0] = inputs[a];
            continue;
        }
        size_t kl = (size_t)(eq - inputs[a]);
        int hit = -1;
        for (size_t i = 0; i < ni && hit < 0; i++) {
            const char *nm = aclmdlGetInputNameByIndex(desc, i);
            char idx[16];
            snprintf(idx, sizeof idx, "%zu", i);
            if ((strlen(nm) == kl && !strncmp(nm, inputs[a], kl)) ||
                (strlen(idx) == kl && !strncmp(idx, inputs[a], kl)))
                hit = (int)i;
        }
        if (hit < 0) {
            bool named = false;
            for (size_t i = 0; i < ni; i++)
                named |= aclmdlGetInputNameByIndex(desc, i)[0] != 0;
            rc = cli_usage_error("run", "--input %.*s: no such model input%s", (int)kl, inputs[a],
                                 named ? "" : " (no NAME.dbg next to the exeom names them: give "
                                 "inputs by index, 0=FILE)");
            goto done;
        }
        if (file_of[hit]) {
            rc = cli_usage_error("run", "--input %.*s: input %d given twice", (int)kl, inputs[a],
                                 hit);
            goto done;
        }
        file_of[hit] = eq + 1;
    }
    in = aclmdlCreateDataset();
    out = aclmdlCreateDataset();
    if (!in || !out) {
        rc = cli_fail(1, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ni; i++) {
        const nb_exeom_tensor *t = &x->t[nb_sim_input_tensor(sim, (int)i)];
        size_t bytes = aclmdlGetInputSizeByIndex(desc, i);
        if ((e = aclrtMalloc(&inbuf[i], bytes ? bytes : 1, ACL_MEM_MALLOC_NORMAL_ONLY))) {
            rc = acl_fail("input", e);
            goto done;
        }
        memset(inbuf[i], 0, bytes);
        if (file_of[i]) {
            if ((rc = read_input(file_of[i], t, &vals[i])))
                goto done;
            for (int64_t j = 0; j < nb_sim_numel(t); j++)
                nb_sim_set(t, inbuf[i], j, vals[i][j]);
            rec_param(aclmdlGetInputNameByIndex(desc, i)[0] ? aclmdlGetInputNameByIndex(desc, i)
                                                            : "input", "%s", file_of[i]);
        }
        aclDataBuffer *b = aclCreateDataBuffer(inbuf[i], bytes);
        if (!b || (e = aclmdlAddDatasetBuffer(in, b))) {
            rc = b ? acl_fail("input", e) : cli_fail(1, "out of memory");
            goto done;
        }
    }
    for (size_t i = 0; i < no; i++) { /* (NULL, 0): the runtime allocates them */
        aclDataBuffer *b = aclCreateDataBuffer(NULL, 0);
        if (!b || (e = aclmdlAddDatasetBuffer(out, b))) {
            rc = b ? acl_fail("output", e) : cli_fail(1, "out of memory");
            goto done;
        }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (nb_acl_dump_root()[0]) /* Ctrl-C: the execution's dump folder, not yet published */
        cli_cleanup_add_sweep(nb_acl_dump_root());
    e = aclmdlExecuteV2(id, in, out, stream, NULL);
    cli_cleanup_clear();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (e) {
        rc = acl_fail(exeom, e);
        goto done;
    }
    double host_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    /* --json: the object built as the text would be printed, printed at the end */
    jo = json ? json_object() : NULL;
    json_t *jouts = json ? json_array() : NULL;
    if (jo) {
        json_object_set_new(jo, "exeom", nb_json_string(exeom));
        json_object_set_new(jo, "outputs", jouts);
    }
    if (nb_mkdir_p(outdir)) {
        rc = cli_fail(2, "%s: cannot make the output folder: %s", outdir, strerror(errno));
        goto done;
    }
    static char used[MAX_IO][256], written[MAX_IO][1400];
    for (size_t i = 0; i < no; i++) {
        const nb_exeom_tensor *t = &x->t[nb_sim_output_tensor(sim, (int)i)];
        aclDataBuffer *b = aclmdlGetDatasetBuffer(out, i);
        int64_t dims[6];
        for (int d = 0; d < t->rank; d++)
            dims[d] = t->dims[d];
        nb_status st = {0};
        nb_tensor *y = NULL;
        if (nb_tensor_new(NB_FLOAT, t->rank, dims, &y, &st)) {
            rc = cli_error(&st);
            goto done;
        }
        float *yp = y->data;
        double mn = 0, mx = 0, sum = 0;
        for (int64_t j = 0; j < y->numel; j++) {
            yp[j] = (float)nb_sim_get(t, aclGetDataBufferAddr(b), j);
            mn = j == 0 || yp[j] < mn ? yp[j] : mn;
            mx = j == 0 || yp[j] > mx ? yp[j] : mx;
            sum += yp[j];
        }
        const char *nm = aclmdlGetOutputNameByIndex(desc, i);
        char base[256], path[1400];
        if (nm && *nm)
            cli_safe_name(nm, base, sizeof base);
        else
            snprintf(base, sizeof base, "output%zu", i);
        /* two outputs whose names clean up alike: the later one gets its index */
        for (size_t j = 0; j < i; j++)
            if (!strcmp(used[j], base)) {
                size_t bl = strlen(base);
                snprintf(base + (bl > 200 ? 200 : bl), sizeof base - 200, "_%zu", i);
                break;
            }
        snprintf(used[i], sizeof used[i], "%s", base);
        snprintf(path, sizeof path, "%s/%s.npy", outdir, base);
        cli_cleanup_add_tmp(path); /* an earlier run's PATH stays until the rename */
        nb_err we = nb_npy_write(path, y, &st);
        cli_cleanup_clear();
        char shape[128];
        nb_shape_str(t->rank, dims, 'x', shape, sizeof shape);
        char shown[256];
        snprintf(shown, sizeof shown, "%s", nm && *nm ? nm : base);
        if (jouts) {
            json_t *jt = json_object(), *sh = json_array(), *first = json_array();
            for (int d = 0; d < t->rank; d++)
                json_array_append_new(sh, json_integer(dims[d]));
            for (int64_t j = 0; j < y->numel && j < 8; j++)
                json_array_append_new(first, cli_jnum(yp[j]));
            json_object_set_new(jt, "name", nb_json_string(nm && *nm ? nm : base));
            json_object_set_new(jt, "file", nb_json_string(path));
            json_object_set_new(jt, "shape", sh);
            json_object_set_new(jt, "dtype", json_string(nb_dtype_name(NB_FLOAT)));
            json_object_set_new(jt, "npu_dtype", json_string(nb_sim_dtype_name(t->dtype)));
            json_object_set_new(jt, "min", y->numel ? cli_jnum(mn) : json_null());
            json_object_set_new(jt, "max", y->numel ? cli_jnum(mx) : json_null());
            json_object_set_new(jt, "mean", y->numel ? cli_jnum(sum / (double)y->numel)
                                                     : json_null());
            json_object_set_new(jt, "first", first);
            json_array_append_new(jouts, jt);
        } else {
            printf("output %s [%s]: min %.6g max %.6g mean %.6g, first:", cli_plain(shown),
                   shape, mn, mx, y->numel ? sum / (double)y->numel : 0.0);
            for (int64_t j = 0; j < y->numel && j < 6; j++)
                printf(" %.6g", yp[j]);
            printf("\n");
        }
        nb_tensor_free(y);
        aclrtFree(aclGetDataBufferAddr(b));
        aclUpdateDataBuffer(b, NULL, 0);
        if (we) {
            rc = cli_error(&st);
            for (size_t j = 0; j < i; j++) /* no partial set of outputs */
                unlink(written[j]);
            goto done;
        }
        snprintf(written[i], sizeof written[i], "%s", path);
        rec_artifact("output", path);
        if (!jo)
            printf("wrote %s\n", path);
    }
    if (dump) {
        uint32_t n_files = 0;
        const char *ddir = nb_acl_last_dump(id, &n_files);
        if (jo) {
            json_t *jd = json_object();
            json_object_set_new(jd, "folder", n_files ? nb_json_string(ddir) : json_null());
            json_object_set_new(jd, "files", json_integer(n_files));
            json_object_set_new(jo, "dump", jd);
        }
        if (n_files) {
            char shown_dir[2048];
            snprintf(shown_dir, sizeof shown_dir, "%s", ddir);
            if (!jo)
                printf("dumped %u file(s) in %s\n", n_files, cli_plain(shown_dir));
            rec_artifact("dump", ddir);
        }
    }
    /* fp16 saturation, which the outputs alone may hide: named, task by task */
    uint64_t sat_total = 0;
    int sat_tasks = 0;
    char sat_list[600] = "";
    json_t *jsat = jo ? json_array() : NULL;
    for (uint32_t k = 0; k < x->n_tasks; k++) {
        uint64_t n_sat = nb_sim_task_saturations(sim, (int)k);
        if (!n_sat)
            continue;
        sat_total += n_sat;
        if (jsat) {
            const char *tn = NULL, *op = NULL;
            nb_acl_task_info(id, (int)k, &tn, &op);
            json_t *js = json_object();
            json_object_set_new(js, "index", json_integer(k));
            json_object_set_new(js, "name", nb_json_string(tn));
            json_object_set_new(js, "op_type", nb_json_string(op));
            json_object_set_new(js, "count", json_integer((json_int_t)n_sat));
            json_array_append_new(jsat, js);
        }
        if (sat_tasks++ < 4) {
            const char *tn = NULL, *op = NULL;
            nb_acl_task_info(id, (int)k, &tn, &op);
            size_t at = strlen(sat_list);
            snprintf(sat_list + at, sizeof sat_list - at, "%s%.80s (%s, %llu)", at ? ", " : "",
                     tn, op, (unsigned long long)n_sat);
        }
    }
    if (sat_tasks) {
        fprintf(stderr, "nanobench: warning: fp16 saturation: %llu result(s) clamped at "
                "+-65504 in %d task(s): %s%s; the NPU's output can differ from the float "
                "model's there (share/doc/npu-numerics.md)\n", (unsigned long long)sat_total,
                sat_tasks, cli_plain(sat_list), sat_tasks > 4 ? ", ..." : "");
    }
    rec_metric("fp16_saturations", (double)sat_total, "");
    uint64_t cyc = nb_sim_total_cycles(sim);
    nb_cycle_params cp;
    nb_cycle_params_default(&cp);
    if (jo) {
        double ms64 = (double)cyc / (cp.clock_mhz[0] * 1e3), ms200 = (double)cyc / (cp.clock_mhz[1] * 1e3);
        json_object_set_new(jo, "cycles", json_integer((json_int_t)cyc));
        json_object_set_new(jo, "ms_64mhz", json_real(ms64));
        json_object_set_new(jo, "ms_200mhz", json_real(ms200));
        json_object_set_new(jo, "macs", json_integer((json_int_t)nb_sim_total_macs(sim)));
        json_object_set_new(jo, "host_ms", json_real(host_ms));
        json_t *jsum = json_object(), *jtasks = json_array();
        json_object_set_new(jsum, "total", json_integer((json_int_t)sat_total));
        json_object_set_new(jsum, "tasks", jsat);
        json_object_set_new(jo, "saturation", jsum);
        for (uint32_t k = 0; k < x->n_tasks; k++) {
            const nb_sim_task_profile *p = nb_sim_profile(sim, (int)k);
            const char *name = NULL, *op = NULL;
            nb_acl_task_info(id, (int)k, &name, &op);
            json_t *jt = json_object();
            json_object_set_new(jt, "index", json_integer(k));
            json_object_set_new(jt, "name", nb_json_string(name));
            json_object_set_new(jt, "op_type", nb_json_string(op));
            json_object_set_new(jt, "cycles", json_integer((json_int_t)p->cycles));
            json_object_set_new(jt, "compute", json_integer((json_int_t)p->compute));
            json_object_set_new(jt, "movement", json_integer((json_int_t)p->movement));
            json_object_set_new(jt, "macs", json_integer((json_int_t)p->macs));
            json_object_set_new(jt, "saturations",
                                json_integer((json_int_t)nb_sim_task_saturations(sim, (int)k)));
            json_array_append_new(jtasks, jt);
        }
        json_object_set_new(jo, "tasks", jtasks);
        if (!dump)
            json_object_set_new(jo, "dump", json_null());
    }
    if (profile && !jo) {
        printf("cycles per task = %g + max(compute, movement) (share/doc/cycle-model.md; the "
               "model is fitted to the seed's table within 2x)\n",
               cp.task_overhead);
        printf("%5s  %-44s %-16s %10s %10s %10s %10s %8s\n", "task", "name", "op", "cycles",
               "compute", "movement", "MACs", "fp16 sat");
    }
    if (profile) {
        for (uint32_t k = 0; k < x->n_tasks; k++) {
            const nb_sim_task_profile *p = nb_sim_profile(sim, (int)k);
            const char *name = NULL, *op = NULL;
            nb_acl_task_info(id, (int)k, &name, &op);
            char nm_safe[45];
            snprintf(nm_safe, sizeof nm_safe, "%s", name);
            if (!jo)
                printf("%5u  %-44.44s %-16.16s %10llu %10llu %10llu %10llu %8llu\n", k,
                       cli_plain(nm_safe), op, (unsigned long long)p->cycles,
                       (unsigned long long)p->compute, (unsigned long long)p->movement,
                       (unsigned long long)p->macs,
                       (unsigned long long)nb_sim_task_saturations(sim, (int)k));
            double vals2[3] = {(double)p->cycles, (double)p->macs,
                               (double)nb_sim_task_saturations(sim, (int)k)};
            const char *names2[3] = {"cycles", "macs", "fp16_saturations"};
            rec_layer(name, op, 3, names2, vals2);
        }
    }
    if (!jo)
        printf("NPU: %llu cycles = %.3f ms at %.0f MHz, %.3f ms at %.0f MHz; %llu MACs; %u tasks "
               "(host %.1f ms)\n", (unsigned long long)cyc, (double)cyc / (cp.clock_mhz[0] * 1e3),
               cp.clock_mhz[0], (double)cyc / (cp.clock_mhz[1] * 1e3), cp.clock_mhz[1],
               (unsigned long long)nb_sim_total_macs(sim), x->n_tasks, host_ms);
    rec_metric("cycles", (double)cyc, "cycles");
    rec_metric("npu_ms_64mhz", (double)cyc / (cp.clock_mhz[0] * 1e3), "ms");
    rec_metric("npu_ms_200mhz", (double)cyc / (cp.clock_mhz[1] * 1e3), "ms");
    rec_metric("host_ms", host_ms, "ms");
    if (jo) {
        rc = cli_json_out("run", jo);
        jo = NULL;
    }
done:
    json_decref(jo);
    if (in) {
        for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(in); i++)
            aclDestroyDataBuffer(aclmdlGetDatasetBuffer(in, i));
        aclmdlDestroyDataset(in);
    }
    if (out) {
        for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(out); i++) {
            aclDataBuffer *b = aclmdlGetDatasetBuffer(out, i);
            if (aclGetDataBufferAddr(b))
                aclrtFree(aclGetDataBufferAddr(b));
            aclDestroyDataBuffer(b);
        }
        aclmdlDestroyDataset(out);
    }
    for (int i = 0; i < MAX_IO; i++) {
        free(vals[i]);
        if (inbuf[i])
            aclrtFree(inbuf[i]);
    }
    if (desc)
        aclmdlDestroyDesc(desc);
    if (id)
        aclmdlUnload(id);
    if (stream)
        aclrtDestroyStream(stream);
    if (ctx)
        aclrtDestroyContext(ctx);
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}
