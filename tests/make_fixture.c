/* Test helper for test_cli.sh: writes small odd-but-loadable ONNX models that the
 * backend test data does not have.
 * usage: make_fixture KIND PATH
 *   dup_outputs  y = Relu(x), x FLOAT [2,3]; the graph lists y twice as an output
 *   odd_names    the output is named "a<TAB>b<NEWLINE>c\" (a name that breaks naive TSV)
 *   long_dim     x has a 3000-character dim_param; y = Relu(x)
 *   shared_dim   y = a + b, a and b FLOAT [N,3] sharing the symbol N
 *   conv_const   y = Conv(x, W), x FLOAT [1,3,8,8], W a constant [8,3,3,3] (zeros)
 *   conv         y = Relu(Conv(x, W)), x FLOAT [1,3,8,8], W [8,3,3,3] with W[i] =
 *                ((7 i) mod 11 - 5) / 8 (the workbench's end-to-end test, test_tui.sh)
 *   dyn_time     y = Relu(x), x FLOAT [1,T,16]: a dynamic dim that is not the batch
 *   ln_sat       y = LayerNorm(MatMul(x, I)) written out (ReduceMean, Sub, Pow "pow",
 *                ReduceMean, Add 1e-5, Sqrt, Div), x FLOAT [1,16]: the variance of inputs
 *                of +-1000 is beyond fp16 (bringup's --nb_input_scale fix)
 *   conv_unnamed conv_const with the Conv node's name left out
 *   lstm_bidir   Y = LSTM(x, W, R), x FLOAT [2,1,4], hidden 3, direction bidirectional
 *   lstm_nan_r   the same LSTM forward, with R[0,1,2] (element 5) NaN
 *   qdq_int32_b  onnxruntime quantize_static's Conv: y = Conv(DQ(Q(x, 0.05, 128)), DQ(W int8
 *                [3,2,1,1], ws [0.02, 0.01, 0.04], axis 0), DQ(B int32 [3] = [100, -40, 25],
 *                xs x ws, axis 0)), x FLOAT [1,2,4,4]: the bias a DequantizeLinear of int32
 *   colon_batch  y = Relu(x), x named "input_1:0" (tf2onnx's habit) FLOAT [N,3]
 *   lstm_const_b Y = LSTM(x, W, R, B), x FLOAT [2,1,4], hidden 3, forward, its bias B
 *                [1,24] = 0.05 (i mod 5) given by a Constant node (paddle's habit)
 *   conv_rt_bias y = Conv(x, W, b) with the bias b FLOAT [8] a graph input (x as conv_const)
 *   conv_bn      y = BatchNormalization(Conv(x, W), scale [2, 4], B [0.5, -1], mean [1, 0],
 *                var [0, 3], epsilon 1), x FLOAT [1,2,4,4], W [2,2,1,1] = [[1, -2], [0.5,
 *                0.25]]: folded, a = scale / sqrt(var + eps) = [2, 2], W' = [[2, -4], [1, 0.5]],
 *                b' = a (0 - mean) + B = [-1.5, -1]
 *   if_gemm      y = If(Greater(x[0,0], 0)) then Gemm(x, W [2,2], transB, b) else x,
 *                x FLOAT [1,2]: a matrix layer ("g") inside an If branch
 *   sum_sat      y = ReduceSum(x [1,256]) -> [1,1]: saturates fp16 for large x
 *   tanh_tiny    y = Tanh(x [1,64]): the table's small-input error
 *   sigmoid_tiny y = Sigmoid(x [1,64]): the same for Sigmoid
 *   stft_db      melspectrogram's shape of graph on int16-scaled samples x FLOAT [1,1,64]:
 *                Conv "stft" (W [4,1,16], stride 16, w[c][k] = cos(pi c k / 8)) -> Transpose
 *                (0,2,1) -> Pow 2 -> MatMul "mel" (W [4,2] of 0.5 and 0.25) -> Clip(1e-10,
 *                inf) -> Log -> Mul 10 -> Div ln 10 -> Sub 0 -> y [1,4,2] (dB): the STFT and
 *                power of loud audio are beyond fp16 (atc --nb_input_scale)
 *   hostile      every name as data (issue 36): inputs "in;put:1=a,b c" and 10,000 'N's
 *                then "=;:, x" (FLOAT [1,3,8,8] each), s = Add (node "add;1:2=3,4 5"), c =
 *                Conv(s, W as conv's) (its node and output named by 10,000 'C's), outputs
 *                Relu(c) "out;put:1=a,b c" and Sigmoid(c) 10,000 'O's then ";=:, y"
 *   long_names   two outputs of x FLOAT [1,4], Relu and Sigmoid, named by 300 'L's and then A
 *                or B: names longer than 255 that differ only at the end
 *   esc_name     y = Relu(x), the node named "r" ESC "[31mred" (a terminal escape sequence)
 *   sub2         y = Sub(p, q), p and q FLOAT [1,4]: two inputs that a name must tell apart
 *   conv_add2    y = Add(Conv(x, W), z), x FLOAT [1,3,8,8], W conv's, z FLOAT [1,8,6,6]: two
 *                inputs and a layer to calibrate (the Python module's hostile arguments)
 *   payload_name y = Sub(P, q), P and q FLOAT [1,4], P's name 1000 bytes: a;b=c"d'e, ESC
 *                "[31mred", ESC "]0;title" BEL, then 'n' up to 1000 (a name as a payload)
 *   shared_const y = Max(Max(x, c), c), nodes max_a and max_b reading one constant c [1] =
 *                0.5, x FLOAT [1,4]: with max_b on the MCU's CPU (atc --cpu_nodes) the NPU's
 *                fp16 copy of c and the CPU's float32 one are two weights of one constant
 *   matmul_sample the vendor's teaching sample "cascaded MatMul" (share/samples/matmul):
 *                y = MatMul(MatMul(x, W1), W2), x FLOAT [1,4], W1 [4,4], W2 [4,2], nodes
 *                matmul_1 and matmul_2; integer weights whose every column's largest
 *                magnitude is 127, so that ARQ's weight scales are exactly 1 */
#define _DEFAULT_SOURCE /* M_PI */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_builder.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: make_fixture KIND PATH\n");
        return 2;
    }
    const char *kind = argv[1];
    const int64_t d23[] = {2, 3}, dn3[] = {-1, 3};
    mb_model *m = mb_new(13);
    if (!strcmp(kind, "dup_outputs")) {
        mb_input(m, "x", 1, 2, d23);
        mb_output(m, "y", 1, 2, d23);
        mb_output(m, "y", 1, 2, d23);
        mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    } else if (!strcmp(kind, "odd_names")) {
        const char *odd = "a\tb\nc\\";
        mb_input(m, "x", 1, 2, d23);
        mb_output(m, odd, 1, 2, d23);
        mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){odd, NULL});
    } else if (!strcmp(kind, "long_dim")) {
        mb_input(m, "x", 1, 2, dn3);
        mb_output(m, "y", 1, 2, dn3);
        mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
        static char sym[3001];
        memset(sym, 's', 3000);
        m->graph.input[0]->type->tensor_type->shape->dim[0]->dim_param = sym;
    } else if (!strcmp(kind, "long_names")) {
        const int64_t d14[] = {1, 4};
        static char na[302], nb2[302];
        memset(na, 'L', 300), memset(nb2, 'L', 300);
        na[300] = 'A', nb2[300] = 'B';
        mb_input(m, "x", 1, 2, d14);
        mb_output(m, na, 1, 2, d14);
        mb_output(m, nb2, 1, 2, d14);
        mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){na, NULL});
        mb_node(m, "Sigmoid", (const char *[]){"x", NULL}, (const char *[]){nb2, NULL});
    } else if (!strcmp(kind, "esc_name")) {
        mb_input(m, "x", 1, 2, d23);
        mb_output(m, "y", 1, 2, d23);
        Onnx__NodeProto *r = mb_node(m, "Relu", (const char *[]){"x", NULL},
                                     (const char *[]){"y", NULL});
        r->name = "r\033[31mred";
    } else if (!strcmp(kind, "sub2")) {
        const int64_t d14[] = {1, 4};
        mb_input(m, "p", 1, 2, d14);
        mb_input(m, "q", 1, 2, d14);
        mb_output(m, "y", 1, 2, d14);
        mb_node(m, "Sub", (const char *[]){"p", "q", NULL}, (const char *[]){"y", NULL});
    } else if (!strcmp(kind, "conv_add2")) {
        const int64_t dx[] = {1, 3, 8, 8}, dw[] = {8, 3, 3, 3}, dy[] = {1, 8, 6, 6};
        static float w[8 * 3 * 3 * 3];
        for (int i = 0; i < 8 * 3 * 3 * 3; i++)
            w[i] = (float)((7 * i) % 11 - 5) / 8;
        mb_input(m, "x", 1, 4, dx);
        mb_input(m, "z", 1, 4, dy);
        mb_output(m, "y", 1, 4, dy);
        mb_init_floats(m, "W", 4, dw, w, sizeof w / sizeof w[0]);
        mb_node(m, "Conv", (const char *[]){"x", "W", NULL}, (const char *[]){"c", NULL})->name =
            "conv";
        mb_node(m, "Add", (const char *[]){"c", "z", NULL}, (const char *[]){"y", NULL})->name =
            "add";
    } else if (!strcmp(kind, "payload_name")) {
        const int64_t d14[] = {1, 4};
        static char pl[1001];
        memset(pl, 'n', 1000);
        const char *head = "a;b=c\"d'e\033[31mred\033]0;title\007";
        memcpy(pl, head, strlen(head));
        mb_input(m, pl, 1, 2, d14);
        mb_input(m, "q", 1, 2, d14);
        mb_output(m, "y", 1, 2, d14);
        mb_node(m, "Sub", (const char *[]){pl, "q", NULL}, (const char *[]){"y", NULL});
    } else if (!strcmp(kind, "shared_const")) {
        const int64_t d14[] = {1, 4}, d1[] = {1};
        static const float half[1] = {0.5f};
        mb_input(m, "x", 1, 2, d14);
        mb_output(m, "y", 1, 2, d14);
        mb_init_floats(m, "c", 1, d1, half, 1);
        Onnx__NodeProto *a = mb_node(m, "Max", (const char *[]){"x", "c", NULL},
                                     (const char *[]){"t", NULL});
        Onnx__NodeProto *b = mb_node(m, "Max", (const char *[]){"t", "c", NULL},
                                     (const char *[]){"y", NULL});
        a->name = "max_a";
        b->name = "max_b";
    } else if (!strcmp(kind, "shared_dim")) {
        mb_input(m, "a", 1, 2, dn3);
        mb_input(m, "b", 1, 2, dn3);
        mb_output(m, "y", 1, 2, dn3);
        mb_node(m, "Add", (const char *[]){"a", "b", NULL}, (const char *[]){"y", NULL});
    } else if (!strcmp(kind, "qdq_int32_b")) {
        const int64_t dx[] = {1, 2, 4, 4}, dw[] = {3, 2, 1, 1}, d3[] = {3}, dy[] = {1, 3, 4, 4};
        const float xs = 0.05f, ws[3] = {0.02f, 0.01f, 0.04f};
        const float bs[3] = {0.05f * 0.02f, 0.05f * 0.01f, 0.05f * 0.04f};
        const uint8_t xz = 128;
        const int8_t w[6] = {50, -20, 100, 7, -64, 30}, wz[3] = {0, 0, 0};
        const int32_t b[3] = {100, -40, 25}, bz[3] = {0, 0, 0};
        mb_input(m, "x", 1, 4, dx);
        mb_output(m, "y", 1, 4, dy);
        mb_init_typed(m, "xs", 1, 0, NULL, &xs, 4);
        mb_init_typed(m, "xz", 2, 0, NULL, &xz, 1); /* UINT8 */
        mb_init_typed(m, "W", 3, 4, dw, w, 6);     /* INT8 */
        mb_init_typed(m, "ws", 1, 1, d3, ws, 12);
        mb_init_typed(m, "wz", 3, 1, d3, wz, 3);
        mb_init_typed(m, "B", 6, 1, d3, b, 12);    /* INT32 */
        mb_init_typed(m, "bs", 1, 1, d3, bs, 12);
        mb_init_typed(m, "bz", 6, 1, d3, bz, 12);
        mb_node(m, "QuantizeLinear", (const char *[]){"x", "xs", "xz", NULL},
                (const char *[]){"xq", NULL})->name = "x_Q";
        mb_node(m, "DequantizeLinear", (const char *[]){"xq", "xs", "xz", NULL},
                (const char *[]){"xd", NULL})->name = "x_DQ";
        mb_attr_int(mb_node(m, "DequantizeLinear", (const char *[]){"W", "ws", "wz", NULL},
                            (const char *[]){"wd", NULL}), "axis", 0);
        mb_attr_int(mb_node(m, "DequantizeLinear", (const char *[]){"B", "bs", "bz", NULL},
                            (const char *[]){"bd", NULL}), "axis", 0);
        mb_node(m, "Conv", (const char *[]){"xd", "wd", "bd", NULL},
                (const char *[]){"y", NULL})->name = "conv";
    } else if (!strcmp(kind, "colon_batch")) {
        mb_input(m, "input_1:0", 1, 2, dn3);
        mb_output(m, "y", 1, 2, dn3);
        mb_node(m, "Relu", (const char *[]){"input_1:0", NULL}, (const char *[]){"y", NULL});
    } else if (!strcmp(kind, "conv_const") || !strcmp(kind, "conv_unnamed")) {
        const int64_t dx[] = {1, 3, 8, 8}, dw[] = {8, 3, 3, 3}, dy[] = {1, 8, 6, 6};
        static float w[8 * 3 * 3 * 3];
        mb_input(m, "x", 1, 4, dx);
        mb_output(m, "y", 1, 4, dy);
        mb_init_floats(m, "W", 4, dw, w, sizeof w / sizeof w[0]);
        Onnx__NodeProto *cv = mb_node(m, "Conv", (const char *[]){"x", "W", NULL},
                                      (const char *[]){"y", NULL});
        if (!strcmp(kind, "conv_unnamed"))
            cv->name = NULL;
    } else if (!strcmp(kind, "lstm_bidir") || !strcmp(kind, "lstm_nan_r")) {
        bool bi = !strcmp(kind, "lstm_bidir");
        const int64_t dx[] = {2, 1, 4}, dw[] = {bi ? 2 : 1, 12, 4}, dr[] = {bi ? 2 : 1, 12, 3},
                      dy[] = {2, bi ? 2 : 1, 1, 3};
        static float w[2 * 12 * 4], r[2 * 12 * 3];
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
            w[i] = 0.01f * (float)(i % 7);
        for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
            r[i] = 0.02f * (float)(i % 5);
        mb_input(m, "x", 1, 3, dx);
        mb_output(m, "y", 1, 4, dy);
        if (!bi)
            r[5] = NAN;
        mb_init_floats(m, "W", 3, dw, w, (size_t)(dw[0] * 12 * 4));
        mb_init_floats(m, "R", 3, dr, r, (size_t)(dr[0] * 12 * 3));
        Onnx__NodeProto *n = mb_node(m, "LSTM", (const char *[]){"x", "W", "R", NULL},
                                     (const char *[]){"y", NULL});
        n->name = "lstm";
        mb_attr_int(n, "hidden_size", 3);
        if (bi)
            mb_attr_string(n, "direction", "bidirectional");
    } else if (!strcmp(kind, "lstm_const_b")) {
        const int64_t dx[] = {2, 1, 4}, dw[] = {1, 12, 4}, dr[] = {1, 12, 3}, db[] = {1, 24},
                      dy[] = {2, 1, 1, 3};
        static float w[12 * 4], r[12 * 3], b[24];
        for (size_t i = 0; i < 48; i++)
            w[i] = 0.1f * (float)((int)(i % 7) - 3);
        for (size_t i = 0; i < 36; i++)
            r[i] = 0.05f * (float)((int)(i % 5) - 2);
        for (size_t i = 0; i < 24; i++)
            b[i] = 0.05f * (float)(i % 5);
        mb_input(m, "x", 1, 3, dx);
        mb_output(m, "y", 1, 4, dy);
        mb_init_floats(m, "W", 3, dw, w, 48);
        mb_init_floats(m, "R", 3, dr, r, 36);
        mb_constant_raw(m, "B", "B_value", 2, db, b, sizeof b);
        Onnx__NodeProto *n = mb_node(m, "LSTM", (const char *[]){"x", "W", "R", "B", NULL},
                                     (const char *[]){"y", NULL});
        n->name = "lstm";
        mb_attr_int(n, "hidden_size", 3);
    } else if (!strcmp(kind, "if_gemm")) {
        const int64_t dx[] = {1, 2}, dw[] = {2, 2}, db[] = {2};
        const float w[4] = {0.5f, -1, 0.25f, 2}, b[2] = {0.1f, -0.2f}, zero = 0;
        mb_input(m, "x", 1, 2, dx);
        mb_output(m, "y", 1, 2, dx);
        mb_init_floats(m, "W", 2, dw, w, 4);
        mb_init_floats(m, "b", 1, db, b, 2);
        mb_init_floats(m, "zero", 0, NULL, &zero, 1);
        mb_node(m, "ReduceMax", (const char *[]){"x", NULL}, (const char *[]){"mx", NULL});
        mb_node(m, "Greater", (const char *[]){"mx", "zero", NULL}, (const char *[]){"c", NULL});
        Onnx__GraphProto *tg = mb_graph("then");
        Onnx__NodeProto *gm = mb_gnode(tg, "Gemm", (const char *[]){"x", "W", "b", NULL},
                                       (const char *[]){"t", NULL});
        gm->name = "g";
        mb_attr_int(gm, "transB", 1);
        mb_goutput(tg, "t", 1, 2, dx);
        Onnx__GraphProto *eg = mb_graph("else");
        mb_gnode(eg, "Identity", (const char *[]){"x", NULL}, (const char *[]){"e", NULL});
        mb_goutput(eg, "e", 1, 2, dx);
        Onnx__NodeProto *n = mb_node(m, "If", (const char *[]){"c", NULL},
                                     (const char *[]){"y", NULL});
        mb_attr_graph(n, "then_branch", tg);
        mb_attr_graph(n, "else_branch", eg);
    } else if (!strcmp(kind, "conv_rt_bias")) {
        const int64_t dx[] = {1, 3, 8, 8}, dw[] = {8, 3, 3, 3}, db[] = {8}, dy[] = {1, 8, 6, 6};
        static float w[8 * 3 * 3 * 3];
        mb_input(m, "x", 1, 4, dx);
        mb_input(m, "b", 1, 1, db);
        mb_output(m, "y", 1, 4, dy);
        mb_init_floats(m, "W", 4, dw, w, sizeof w / sizeof w[0]);
        mb_node(m, "Conv", (const char *[]){"x", "W", "b", NULL}, (const char *[]){"y", NULL})
            ->name = "conv";
    } else if (!strcmp(kind, "conv_bn")) {
        const int64_t dx[] = {1, 2, 4, 4}, dw[] = {2, 2, 1, 1}, dc[] = {2};
        const float w[4] = {1, -2, 0.5f, 0.25f}, sc[2] = {2, 4}, b[2] = {0.5f, -1},
                    mean[2] = {1, 0}, var[2] = {0, 3};
        mb_input(m, "x", 1, 4, dx);
        mb_output(m, "y", 1, 4, dx);
        mb_init_floats(m, "W", 4, dw, w, 4);
        mb_init_floats(m, "scale", 1, dc, sc, 2);
        mb_init_floats(m, "B", 1, dc, b, 2);
        mb_init_floats(m, "mean", 1, dc, mean, 2);
        mb_init_floats(m, "var", 1, dc, var, 2);
        mb_node(m, "Conv", (const char *[]){"x", "W", NULL}, (const char *[]){"c", NULL})->name =
            "conv";
        Onnx__NodeProto *bn = mb_node(m, "BatchNormalization",
                                      (const char *[]){"c", "scale", "B", "mean", "var", NULL},
                                      (const char *[]){"y", NULL});
        bn->name = "bn";
        mb_attr_float(bn, "epsilon", 1);
    } else if (!strcmp(kind, "sum_sat")) {
        /* y = ReduceSum(x), x [1,256], every axis kept as 1: 256 values of 1000 sum to 256000,
           beyond fp16's 65504 (the accuracy comparison must name the saturation) */
        const int64_t dx[] = {1, 256}, dy[] = {1, 1};
        mb_input(m, "x", 1, 2, dx);
        mb_output(m, "y", 1, 2, dy);
        Onnx__NodeProto *n = mb_node(m, "ReduceSum", (const char *[]){"x", NULL},
                                     (const char *[]){"y", NULL});
        n->name = "sum"; /* no axes: all of them, keepdims */
    } else if (!strcmp(kind, "sigmoid_tiny")) {
        /* y = Sigmoid(x), x [1,64]: on inputs of about 1e-4 the table gives 0.5 */
        const int64_t dx[] = {1, 64};
        mb_input(m, "x", 1, 2, dx);
        mb_output(m, "y", 1, 2, dx);
        mb_node(m, "Sigmoid", (const char *[]){"x", NULL}, (const char *[]){"y", NULL})->name =
            "sigmoid";
    } else if (!strcmp(kind, "tanh_tiny")) {
        /* y = Tanh(x), x [1,64]: fed values of about 1e-4 the table returns 0 */
        const int64_t dx[] = {1, 64};
        mb_input(m, "x", 1, 2, dx);
        mb_output(m, "y", 1, 2, dx);
        mb_node(m, "Tanh", (const char *[]){"x", NULL}, (const char *[]){"y", NULL})->name =
            "tanh";
    } else if (!strcmp(kind, "matmul_sample")) {
        /* the values are worked through by hand in share/samples/matmul/matmul_sample.c */
        const int64_t dx[] = {1, 4}, dw1[] = {4, 4}, dw2[] = {4, 2}, dy[] = {1, 2};
        const float w1[16] = {127, -127, 64, 0,  /* rows 0 and 1 equal: calibration */
                              127, -127, 64, 0,  /* batch [-128, 127, 0, 0] gives -row 0 */
                              1,   0,    127, -1,
                              0,   2,    0,   127};
        const float w2[8] = {1, 127, -1, 0, 2, -1, 127, 1};
        mb_input(m, "x", 1, 2, dx);
        mb_output(m, "y", 1, 2, dy);
        mb_init_floats(m, "W1", 2, dw1, w1, 16);
        mb_init_floats(m, "W2", 2, dw2, w2, 8);
        mb_node(m, "MatMul", (const char *[]){"x", "W1", NULL}, (const char *[]){"h", NULL})
            ->name = "matmul_1";
        mb_node(m, "MatMul", (const char *[]){"h", "W2", NULL}, (const char *[]){"y", NULL})
            ->name = "matmul_2";
    } else if (!strcmp(kind, "hostile")) {
        const int64_t dx[] = {1, 3, 8, 8}, dw[] = {8, 3, 3, 3}, dy[] = {1, 8, 6, 6};
        static float w[8 * 3 * 3 * 3];
        for (int i = 0; i < 8 * 3 * 3 * 3; i++)
            w[i] = (float)((7 * i) % 11 - 5) / 8;
        static char in2[10010], conv[10010], out2[10010];
        memset(in2, 'N', 10000), memcpy(in2 + 10000, "=;:, x", 7);
        memset(conv, 'C', 10000), conv[10000] = 0;
        memset(out2, 'O', 10000), memcpy(out2 + 10000, ";=:, y", 7);
        mb_input(m, "in;put:1=a,b c", 1, 4, dx);
        mb_input(m, in2, 1, 4, dx);
        mb_output(m, "out;put:1=a,b c", 1, 4, dy);
        mb_output(m, out2, 1, 4, dy);
        mb_init_floats(m, "W", 4, dw, w, sizeof w / sizeof w[0]);
        mb_node(m, "Add", (const char *[]){"in;put:1=a,b c", in2, NULL},
                (const char *[]){"s;1:2=3,4 5", NULL})->name = "add;1:2=3,4 5";
        mb_node(m, "Conv", (const char *[]){"s;1:2=3,4 5", "W", NULL},
                (const char *[]){conv, NULL})->name = conv;
        mb_node(m, "Relu", (const char *[]){conv, NULL},
                (const char *[]){"out;put:1=a,b c", NULL})->name = "relu ;:=,";
        mb_node(m, "Sigmoid", (const char *[]){conv, NULL}, (const char *[]){out2, NULL})
            ->name = "sigmoid ;:=,";
    } else if (!strcmp(kind, "conv")) {
        const int64_t dx[] = {1, 3, 8, 8}, dw[] = {8, 3, 3, 3}, dy[] = {1, 8, 6, 6};
        static float w[8 * 3 * 3 * 3];
        for (int i = 0; i < 8 * 3 * 3 * 3; i++)
            w[i] = (float)((7 * i) % 11 - 5) / 8;
        mb_input(m, "x", 1, 4, dx);
        mb_output(m, "y", 1, 4, dy);
        mb_init_floats(m, "W", 4, dw, w, sizeof w / sizeof w[0]);
        mb_node(m, "Conv", (const char *[]){"x", "W", NULL}, (const char *[]){"c", NULL});
        mb_node(m, "Relu", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
    } else if (!strcmp(kind, "stft_db")) {
        const int64_t dx[] = {1, 1, 64}, dw[] = {4, 1, 16}, dm[] = {4, 2}, dy[] = {1, 4, 2},
                      d0[] = {0};
        static float w[4 * 16];
        for (int c = 0; c < 4; c++)
            for (int k = 0; k < 16; k++)
                w[c * 16 + k] = (float)cos(M_PI * c * k / 8);
        const float mel[8] = {0.5f, 0.25f, 0.5f, 0.25f, 0.25f, 0.5f, 0.25f, 0.5f};
        const float two = 2, lo = 1e-10f, hi = INFINITY, ten = 10, ln10 = 2.3025851249694824f,
                    zero = 0;
        mb_input(m, "x", 1, 3, dx);
        mb_output(m, "y", 1, 3, dy);
        mb_init_floats(m, "W", 3, dw, w, 64);
        mb_init_floats(m, "melW", 2, dm, mel, 8);
        mb_init_floats(m, "two", 0, d0, &two, 1);
        mb_init_floats(m, "lo", 0, d0, &lo, 1);
        mb_init_floats(m, "hi", 0, d0, &hi, 1);
        mb_init_floats(m, "ten", 0, d0, &ten, 1);
        mb_init_floats(m, "ln10", 0, d0, &ln10, 1);
        mb_init_floats(m, "zero", 0, d0, &zero, 1);
        Onnx__NodeProto *cv = mb_node(m, "Conv", (const char *[]){"x", "W", NULL},
                                      (const char *[]){"c", NULL});
        cv->name = "stft";
        mb_attr_ints(cv, "strides", 1, (const int64_t[]){16});
        Onnx__NodeProto *tr = mb_node(m, "Transpose", (const char *[]){"c", NULL},
                                      (const char *[]){"t", NULL});
        tr->name = "tr";
        mb_attr_ints(tr, "perm", 3, (const int64_t[]){0, 2, 1});
        mb_node(m, "Pow", (const char *[]){"t", "two", NULL}, (const char *[]){"p", NULL})->name =
            "pow";
        mb_node(m, "MatMul", (const char *[]){"p", "melW", NULL}, (const char *[]){"s", NULL})
            ->name = "mel";
        mb_node(m, "Clip", (const char *[]){"s", "lo", "hi", NULL}, (const char *[]){"q", NULL})
            ->name = "clip";
        mb_node(m, "Log", (const char *[]){"q", NULL}, (const char *[]){"l", NULL})->name = "log";
        mb_node(m, "Mul", (const char *[]){"l", "ten", NULL}, (const char *[]){"u", NULL})->name =
            "mul";
        mb_node(m, "Div", (const char *[]){"u", "ln10", NULL}, (const char *[]){"d", NULL})
            ->name = "div";
        mb_node(m, "Sub", (const char *[]){"d", "zero", NULL}, (const char *[]){"y", NULL})
            ->name = "sub";
    } else if (!strcmp(kind, "ln_sat")) {
        /* a LayerNorm whose variance saturates fp16 (hey_mycroft's Pow_5): c = MatMul(x, I)
           "mm", d = c - ReduceMean(c), v = ReduceMean(Pow(d, 2)) "pow", y = d / Sqrt(v +
           1e-5), x FLOAT [1,16], axes -1 kept. For d = +-1000, d^2 = 1e6 > 65504 */
        const int64_t dx[] = {1, 16}, dw[] = {16, 16}, d0[] = {0};
        static float w[16 * 16];
        for (int i = 0; i < 16; i++)
            w[i * 16 + i] = 1;
        const float two = 2, eps = 1e-5f;
        mb_input(m, "x", 1, 2, dx);
        mb_output(m, "y", 1, 2, dx);
        mb_init_floats(m, "I", 2, dw, w, 256);
        mb_init_floats(m, "two", 0, d0, &two, 1);
        mb_init_floats(m, "eps", 0, d0, &eps, 1);
        mb_node(m, "MatMul", (const char *[]){"x", "I", NULL}, (const char *[]){"c", NULL})
            ->name = "mm";
        Onnx__NodeProto *r1 = mb_node(m, "ReduceMean", (const char *[]){"c", NULL},
                                      (const char *[]){"mean", NULL});
        r1->name = "mean";
        mb_attr_ints(r1, "axes", 1, (const int64_t[]){-1});
        mb_node(m, "Sub", (const char *[]){"c", "mean", NULL}, (const char *[]){"d", NULL})
            ->name = "sub";
        mb_node(m, "Pow", (const char *[]){"d", "two", NULL}, (const char *[]){"p", NULL})
            ->name = "pow";
        Onnx__NodeProto *r2 = mb_node(m, "ReduceMean", (const char *[]){"p", NULL},
                                      (const char *[]){"v", NULL});
        r2->name = "var";
        mb_attr_ints(r2, "axes", 1, (const int64_t[]){-1});
        mb_node(m, "Add", (const char *[]){"v", "eps", NULL}, (const char *[]){"ve", NULL})
            ->name = "add";
        mb_node(m, "Sqrt", (const char *[]){"ve", NULL}, (const char *[]){"s", NULL})->name =
            "sqrt";
        mb_node(m, "Div", (const char *[]){"d", "s", NULL}, (const char *[]){"y", NULL})->name =
            "div";
    } else if (!strcmp(kind, "dyn_time")) {
        const int64_t dx[] = {1, -1, 16};
        mb_input(m, "x", 1, 3, dx);
        mb_output(m, "y", 1, 3, dx);
        mb_node(m, "Relu", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    } else {
        fprintf(stderr, "make_fixture: unknown kind '%s'\n", kind);
        return 2;
    }
    int r = mb_write(m, argv[2]);
    mb_free(m);
    return r ? 1 : 0;
}
