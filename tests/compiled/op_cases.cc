// File: tests/compiled/op_cases.cc
#include "tests/compiled/op_cases.h"

#include "absl/strings/str_cat.h"

namespace kiln::testing {

std::vector<OpCase> OpCases() {
  std::vector<OpCase> c;
  auto unary = [&](const std::string& op, double lo, double hi) {
    for (const char* shape : {"(1,)", "(3, 17)", "(2, 5, 33)"}) {
      c.push_back({op + shape, absl::StrCat("%x: Tensor[", shape, ", float32]"),
                   op + "(%x)", lo, hi});
    }
  };
  for (const char* op : {"abs", "negative", "exp", "sigmoid", "tanh", "erf", "nn.relu", "floor",
                         "ceil", "round", "sign", "sin", "cos", "copy", "zeros_like", "ones_like",
                         "isnan"}) {
    unary(op, -4, 4);
  }
  unary("log", 0.01, 10);
  for (const char* op : {"tan", "atan", "sinh", "cosh", "asinh"}) unary(op, -3, 3);
  for (const char* op : {"asin", "acos", "atanh"}) unary(op, -0.99, 0.99);
  unary("acosh", 1, 8);
  unary("sqrt", 0, 10);
  unary("rsqrt", 0.01, 10);
  unary("exp", -80, 80);
  unary("tanh", -12, 12);
  c.push_back({"logical_not", "%x: Tensor[(7, 9), bool]", "logical_not(%x)"});
  c.push_back({"clip", "%x: Tensor[(4, 31), float32]", "clip(%x, a_min=-0.5f, a_max=1.25f)"});
  c.push_back({"clip_int", "%x: Tensor[(4, 31), int32]", "clip(%x, a_min=-3f, a_max=4f)"});
  c.push_back({"cast_f2i", "%x: Tensor[(5, 19), float32]", "cast(%x, dtype=\"int8\")", -300, 300});
  c.push_back({"cast_i2f", "%x: Tensor[(5, 19), int32]", "cast(%x, dtype=\"float32\")"});
  c.push_back({"cast_f2f16", "%x: Tensor[(5, 19), float32]", "cast(%x, dtype=\"float16\")"});
  c.push_back({"cast_f2bool", "%x: Tensor[(5, 19), float32]", "cast(%x, dtype=\"bool\")"});
  c.push_back({"leaky_relu", "%x: Tensor[(3, 35), float32]", "nn.leaky_relu(%x, alpha=0.1f)"});
  c.push_back({"gelu", "%x: Tensor[(3, 35), float32]", "nn.gelu(%x)"});
  c.push_back({"gelu_tanh", "%x: Tensor[(3, 35), float32]", "nn.gelu(%x, approximate=\"tanh\")"});
  c.push_back({"exp_f16", "%x: Tensor[(3, 21), float16]", "exp(%x)", -3, 3, 0, 0, 2e-3, 2e-3});
  c.push_back({"exp_f64", "%x: Tensor[(3, 21), float64]", "exp(%x)", -3, 3, 0, 0, 1e-12, 1e-12});
  c.push_back({"sigmoid_bf16", "%x: Tensor[(3, 21), bfloat16]", "sigmoid(%x)", -3, 3, 0, 0, 1e-2, 1e-2});
  c.push_back({"tanh_f64", "%x: Tensor[(2, 9), float64]", "tanh(%x)", -3, 3, 0, 0, 1e-12, 1e-12});
  c.push_back({"relu_i32", "%x: Tensor[(3, 21), int32]", "nn.relu(%x)"});
  c.push_back({"abs_i8", "%x: Tensor[(3, 21), int8]", "abs(%x)"});

  // Broadcasting binary.
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "equal",
                         "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    c.push_back({absl::StrCat(op, "_bcast"), "%x: Tensor[(4, 1, 19), float32], %y: Tensor[(3, 1), float32]",
                 absl::StrCat(op, "(%x, %y)")});
    c.push_back({absl::StrCat(op, "_same"), "%x: Tensor[(2, 45), float32], %y: Tensor[(2, 45), float32]",
                 absl::StrCat(op, "(%x, %y)")});
  }
  c.push_back({"power", "%x: Tensor[(4, 19), float32], %y: Tensor[(4, 19), float32]", "power(%x, %y)",
               0.1, 3});
  for (const char* op : {"add", "subtract", "multiply", "divide", "mod", "floor_divide", "floor_mod",
                         "maximum", "minimum"}) {
    c.push_back({absl::StrCat(op, "_int"), "%x: Tensor[(3, 23), int32], %y: Tensor[(23,), int32]",
                 absl::StrCat(op, "(%x, %y)"), 0, 0, 1, 9});
    c.push_back({absl::StrCat(op, "_int_neg"), "%x: Tensor[(3, 23), int32], %y: Tensor[(23,), int32]",
                 absl::StrCat(op, "(%x, negative(%y))"), 0, 0, 1, 9});
  }
  c.push_back({"floor_mod_f", "%x: Tensor[(3, 23), float32], %y: Tensor[(23,), float32]",
               "floor_mod(%x, %y)", 0.5, 3});
  c.push_back({"add_u8", "%x: Tensor[(3, 23), uint8], %y: Tensor[(3, 23), uint8]", "add(%x, %y)", 0,
               0, 0, 200});
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    c.push_back({op, "%x: Tensor[(5, 13), bool], %y: Tensor[(13,), bool]", absl::StrCat(op, "(%x, %y)")});
  }
  c.push_back({"where", "%c: Tensor[(3, 1, 17), bool], %x: Tensor[(4, 17), float32], %y: Tensor[(1,), float32]",
               "where(%c, %x, %y)"});
  c.push_back({"bias_add", "%x: Tensor[(2, 5, 7, 3), float32], %b: Tensor[(5,), float32]",
               "nn.bias_add(%x, %b)"});
  c.push_back({"bias_add_last", "%x: Tensor[(2, 5, 7, 3), float32], %b: Tensor[(3,), float32]",
               "nn.bias_add(%x, %b, axis=-1)"});
  c.push_back({"prelu", "%x: Tensor[(2, 5, 9), float32], %a: Tensor[(5,), float32]", "nn.prelu(%x, %a)"});
  c.push_back({"broadcast_to", "%x: Tensor[(3, 1), float32]", "broadcast_to(%x, shape=[2, 3, 17])"});

  // Reductions.
  for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
    c.push_back({absl::StrCat(op, "_all"), "%x: Tensor[(3, 37), float32]", absl::StrCat(op, "(%x)"),
                 0.5, 1.5});
    c.push_back({absl::StrCat(op, "_axis"), "%x: Tensor[(3, 5, 37), float32]",
                 absl::StrCat(op, "(%x, axis=[1])"), 0.5, 1.5});
    c.push_back({absl::StrCat(op, "_keep"), "%x: Tensor[(3, 5, 37), float32]",
                 absl::StrCat(op, "(%x, axis=[0, 2], keepdims=true)"), 0.5, 1.5, 0, 0, 1e-4, 1e-4});
    c.push_back({absl::StrCat(op, "_exclude"), "%x: Tensor[(3, 5, 7), float32]",
                 absl::StrCat(op, "(%x, axis=[1], exclude=true)"), 0.5, 1.5});
    c.push_back({absl::StrCat(op, "_neg_int"), "%x: Tensor[(4, 9), int32]",
                 absl::StrCat(op, "(%x, axis=[-1])")});
  }
  c.push_back({"argmax", "%x: Tensor[(3, 5, 7), float32]", "argmax(%x, axis=[1])"});
  c.push_back({"argmax_ties", "%x: Tensor[(4, 9), int32]", "argmax(%x, axis=[1])", 0, 0, 0, 2});
  c.push_back({"argmax_last", "%x: Tensor[(4, 9), int32]",
               "argmax(%x, axis=[1], select_last_index=true)", 0, 0, 0, 2});
  c.push_back({"argmin_all", "%x: Tensor[(4, 9), float32]", "argmin(%x)"});
  c.push_back({"argmin_keep", "%x: Tensor[(4, 9), float32]", "argmin(%x, axis=[0], keepdims=true)"});

  // Neural network.
  c.push_back({"conv2d", "%x: Tensor[(1, 3, 9, 11), float32], %w: Tensor[(4, 3, 3, 3), float32]",
               "nn.conv2d(%x, %w, padding=[1, 1])", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"conv2d_stride_dil", "%x: Tensor[(2, 4, 13, 12), float32], %w: Tensor[(6, 4, 3, 2), float32]",
               "nn.conv2d(%x, %w, strides=[2, 1], padding=[1, 0, 2, 1], dilation=[2, 1])", -1, 1, 0, 0,
               1e-4, 1e-4});
  c.push_back({"conv2d_groups", "%x: Tensor[(1, 8, 7, 7), float32], %w: Tensor[(4, 4, 3, 3), float32]",
               "nn.conv2d(%x, %w, padding=[1, 1], groups=2)", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"conv2d_depthwise", "%x: Tensor[(1, 6, 9, 9), float32], %w: Tensor[(6, 1, 3, 3), float32]",
               "nn.conv2d(%x, %w, padding=[1, 1], groups=6)", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"conv2d_nhwc", "%x: Tensor[(1, 9, 9, 5), float32], %w: Tensor[(3, 3, 5, 4), float32]",
               "nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\")", -1, 1,
               0, 0, 1e-4, 1e-4});
  c.push_back({"conv2d_nchwc", "%x: Tensor[(1, 2, 8, 8, 4), float32], %w: Tensor[(2, 2, 3, 3, 4, 4), float32]",
               "nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NCHW4c\", kernel_layout=\"OIHW4i4o\")",
               -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"conv2d_1x1_big", "%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(48, 32, 1, 1), float32]",
               "nn.conv2d(%x, %w)", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"dense", "%x: Tensor[(3, 37), float32], %w: Tensor[(19, 37), float32]", "nn.dense(%x, %w)",
               -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"dense_3d", "%x: Tensor[(2, 3, 16), float32], %w: Tensor[(33, 16), float32]",
               "nn.dense(%x, %w)", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"matmul", "%x: Tensor[(5, 12), float32], %w: Tensor[(12, 7), float32]", "nn.matmul(%x, %w)",
               -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"matmul_tt", "%x: Tensor[(12, 5), float32], %w: Tensor[(7, 12), float32]",
               "nn.matmul(%x, %w, transpose_a=true, transpose_b=true)", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"batch_matmul", "%x: Tensor[(3, 5, 12), float32], %y: Tensor[(3, 7, 12), float32]",
               "nn.batch_matmul(%x, %y)", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"batch_matmul_nn", "%x: Tensor[(2, 5, 12), float32], %y: Tensor[(2, 12, 7), float32]",
               "nn.batch_matmul(%x, %y, transpose_b=false)", -1, 1, 0, 0, 1e-4, 1e-4});
  c.push_back({"max_pool", "%x: Tensor[(1, 3, 11, 10), float32]",
               "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])"});
  c.push_back({"max_pool_ceil", "%x: Tensor[(1, 3, 10, 10), float32]",
               "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=true)"});
  c.push_back({"avg_pool", "%x: Tensor[(1, 3, 11, 10), float32]",
               "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])"});
  c.push_back({"avg_pool_incl", "%x: Tensor[(1, 3, 11, 10), float32]",
               "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=true)"});
  c.push_back({"avg_pool_ceil", "%x: Tensor[(1, 2, 10, 10), float32]",
               "nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], ceil_mode=true)"});
  c.push_back({"max_pool_nhwc", "%x: Tensor[(1, 9, 9, 4), float32]",
               "nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], layout=\"NHWC\")"});
  c.push_back({"global_avg_pool", "%x: Tensor[(2, 5, 7, 9), float32]", "nn.global_avg_pool2d(%x)"});
  c.push_back({"global_max_pool", "%x: Tensor[(2, 5, 7, 9), float32]", "nn.global_max_pool2d(%x)"});
  c.push_back({"batch_norm",
               "%x: Tensor[(2, 5, 7), float32], %g: Tensor[(5,), float32], %b: Tensor[(5,), float32], "
               "%m: Tensor[(5,), float32], %v: Tensor[(5,), float32]",
               "nn.batch_norm(%x, %g, %b, %m, %v).0", 0.1, 2});
  c.push_back({"layer_norm",
               "%x: Tensor[(3, 37), float32], %g: Tensor[(37,), float32], %b: Tensor[(37,), float32]",
               "nn.layer_norm(%x, %g, %b)", -2, 2, 0, 0, 1e-4, 1e-4});
  c.push_back({"softmax", "%x: Tensor[(3, 37), float32]", "nn.softmax(%x)", -5, 5});
  c.push_back({"softmax_axis0", "%x: Tensor[(6, 5), float32]", "nn.softmax(%x, axis=0)", -5, 5});
  c.push_back({"log_softmax", "%x: Tensor[(3, 37), float32]", "nn.log_softmax(%x)", -5, 5});
  c.push_back({"dropout", "%x: Tensor[(3, 17), float32]", "nn.dropout(%x).0"});
  c.push_back({"pad", "%x: Tensor[(2, 3, 5), float32], %v: Tensor[(), float32]",
               "nn.pad(%x, %v, pad_width=[[0, 0], [1, 2], [2, 1]])"});
  c.push_back({"pad_edge", "%x: Tensor[(2, 3, 5), float32], %v: Tensor[(), float32]",
               "nn.pad(%x, %v, pad_width=[[0, 0], [1, 2], [2, 1]], pad_mode=\"edge\")"});
  c.push_back({"pad_reflect", "%x: Tensor[(2, 4, 5), float32], %v: Tensor[(), float32]",
               "nn.pad(%x, %v, pad_width=[[0, 0], [1, 2], [2, 1]], pad_mode=\"reflect\")"});

  // Shape and data movement.
  c.push_back({"reshape", "%x: Tensor[(2, 3, 4), float32]", "reshape(%x, newshape=[4, -1])"});
  c.push_back({"reshape_codes", "%x: Tensor[(2, 3, 4), float32]", "reshape(%x, newshape=[0, -3])"});
  c.push_back({"transpose", "%x: Tensor[(2, 3, 17), float32]", "transpose(%x, axes=[2, 0, 1])"});
  c.push_back({"transpose_rev", "%x: Tensor[(2, 3, 5), float32]", "transpose(%x)"});
  c.push_back({"concatenate", "%x: Tensor[(2, 3), float32], %y: Tensor[(2, 5), float32]",
               "concatenate((%x, %y), axis=1)"});
  c.push_back({"concatenate3", "%x: Tensor[(1, 3), float32], %y: Tensor[(2, 3), float32], %z: Tensor[(4, 3), float32]",
               "concatenate((%x, %y, %z), axis=-2)"});
  // More than 16 fields: a stage of its own, vectorized along the last axis
  // when the fields are stacked along another (the tree's conditions the same
  // for every lane), a scalar loop when along the last.
  for (const char* axis : {"0", "1"}) {
    std::string params, fields;
    for (int i = 0; i < 20; ++i) {
      absl::StrAppend(&params, i ? ", " : "", "%x", i, ": Tensor[(", i % 3 + 1, ", 19), float32]");
      absl::StrAppend(&fields, i ? ", " : "", "%x", i);
    }
    if (std::string(axis) == "1") {
      params.clear();
      for (int i = 0; i < 20; ++i) {
        absl::StrAppend(&params, i ? ", " : "", "%x", i, ": Tensor[(3, ", i % 3 + 1, "), float32]");
      }
    }
    c.push_back({absl::StrCat("concatenate_20_fields_axis", axis), params,
                 absl::StrCat("concatenate((", fields, "), axis=", axis, ")")});
  }
  c.push_back({"split", "%x: Tensor[(2, 9), float32]", "split(%x, sections=3, axis=1).1"});
  c.push_back({"split_idx", "%x: Tensor[(2, 9), float32]", "split(%x, indices=[2, 7], axis=1).2"});
  c.push_back({"strided_slice", "%x: Tensor[(5, 9), float32]",
               "strided_slice(%x, begin=[1, 0], end=[4, 9], strides=[1, 2])"});
  c.push_back({"strided_slice_neg", "%x: Tensor[(5, 9), float32]",
               "strided_slice(%x, begin=[4, 8], end=[0, 1], strides=[-1, -3])"});
  c.push_back({"take", "%x: Tensor[(5, 7), float32], %i: Tensor[(4,), int32]", "take(%x, %i, axis=1)", -2,
               2, 0, 6});
  c.push_back({"take_clip", "%x: Tensor[(5, 7), float32], %i: Tensor[(2, 3), int32]",
               "take(%x, %i, axis=0, mode=\"clip\")", -2, 2, -3, 9});
  c.push_back({"take_wrap", "%x: Tensor[(5, 7), float32], %i: Tensor[(6,), int32]",
               "take(%x, %i, mode=\"wrap\")", -2, 2, -40, 40});
  c.push_back({"expand_dims", "%x: Tensor[(3, 4), float32]", "expand_dims(%x, axis=1, num_newaxis=2)"});
  c.push_back({"squeeze", "%x: Tensor[(3, 1, 4, 1), float32]", "squeeze(%x, axis=[1])"});
  c.push_back({"squeeze_all", "%x: Tensor[(3, 1, 4, 1), float32]", "squeeze(%x)"});
  c.push_back({"layout_nchw16c", "%x: Tensor[(1, 32, 3, 5), float32]",
               "layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\")"});
  c.push_back({"layout_back", "%x: Tensor[(1, 2, 3, 5, 16), float32]",
               "layout_transform(%x, src_layout=\"NCHW16c\", dst_layout=\"NCHW\")"});
  c.push_back({"layout_oihw", "%x: Tensor[(8, 8, 3, 3), float32]",
               "layout_transform(%x, src_layout=\"OIHW\", dst_layout=\"OIHW4i4o\")"});
  return c;
}

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name << ": " << c.body; }

std::string ModuleText(const OpCase& c) {
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(", c.params, ") {\n  ", c.body, "\n}\n");
}

}  // namespace kiln::testing
