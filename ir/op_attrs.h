// File: ir/op_attrs.h
//
// The attribute structs of kiln's core operators. Field names, defaults and
// meanings follow Relay's, so a TVM user reads them without a manual.
// Every struct lists its fields once in VisitAttrs (see ir/attrs.h).
#ifndef KILN_IR_OP_ATTRS_H_
#define KILN_IR_OP_ATTRS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attrs.h"

namespace kiln {

#define KILN_ATTRS(Name) \
  static constexpr const char* kTypeKey = #Name;

// sum, mean, max, min, prod. axis=none reduces every axis; `exclude` reduces
// every axis *not* listed.
struct ReduceAttrs : AttrsBase<ReduceAttrs> {
  KILN_ATTRS(ReduceAttrs)
  std::optional<std::vector<int64_t>> axis;
  bool keepdims = false;
  bool exclude = false;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("axis", &axis);
    v->Visit("keepdims", &keepdims);
    v->Visit("exclude", &exclude);
  }
};

// argmax, argmin: output dtype int32 (as Relay).
struct ArgReduceAttrs : AttrsBase<ArgReduceAttrs> {
  KILN_ATTRS(ArgReduceAttrs)
  std::optional<std::vector<int64_t>> axis;
  bool keepdims = false;
  bool exclude = false;
  bool select_last_index = false;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("axis", &axis);
    v->Visit("keepdims", &keepdims);
    v->Visit("exclude", &exclude);
    v->Visit("select_last_index", &select_last_index);
  }
};

// nn.conv2d. padding has 1, 2 (top/bottom, left/right) or 4 (top, left,
// bottom, right) values. channels/kernel_size, when given, are checked against
// the weight. data_layout NCHW or NHWC; kernel_layout OIHW or HWIO (also HWOI,
// OHWI); out_layout "" means data_layout; out_dtype void means the input dtype.
struct Conv2DAttrs : AttrsBase<Conv2DAttrs> {
  KILN_ATTRS(Conv2DAttrs)
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> padding{0, 0};
  std::vector<int64_t> dilation{1, 1};
  int64_t groups = 1;
  std::optional<int64_t> channels;
  std::optional<std::vector<int64_t>> kernel_size;
  std::string data_layout = "NCHW";
  std::string kernel_layout = "OIHW";
  std::string out_layout;
  DataType out_dtype;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("strides", &strides);
    v->Visit("padding", &padding);
    v->Visit("dilation", &dilation);
    v->Visit("groups", &groups);
    v->Visit("channels", &channels);
    v->Visit("kernel_size", &kernel_size);
    v->Visit("data_layout", &data_layout);
    v->Visit("kernel_layout", &kernel_layout);
    v->Visit("out_layout", &out_layout);
    v->Visit("out_dtype", &out_dtype);
  }
};

// nn.dense: data [..., K], weight [units, K] -> [..., units].
struct DenseAttrs : AttrsBase<DenseAttrs> {
  KILN_ATTRS(DenseAttrs)
  std::optional<int64_t> units;
  DataType out_dtype;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("units", &units);
    v->Visit("out_dtype", &out_dtype);
  }
};

// nn.matmul: data [..., M, K] (or [..., K, M] transposed), weight [K, N] (or [N, K]).
struct MatmulAttrs : AttrsBase<MatmulAttrs> {
  KILN_ATTRS(MatmulAttrs)
  std::optional<int64_t> units;
  DataType out_dtype;
  bool transpose_a = false;
  bool transpose_b = false;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("units", &units);
    v->Visit("out_dtype", &out_dtype);
    v->Visit("transpose_a", &transpose_a);
    v->Visit("transpose_b", &transpose_b);
  }
};

// nn.batch_matmul: x [B, M, K], y [B, N, K] (transpose_b, the default) or [B, K, N];
// a batch of 1 broadcasts.
struct BatchMatmulAttrs : AttrsBase<BatchMatmulAttrs> {
  KILN_ATTRS(BatchMatmulAttrs)
  DataType out_dtype;
  bool transpose_a = false;
  bool transpose_b = true;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("out_dtype", &out_dtype);
    v->Visit("transpose_a", &transpose_a);
    v->Visit("transpose_b", &transpose_b);
  }
};

// nn.max_pool2d / nn.avg_pool2d. padding as for conv2d.
struct Pool2DAttrs : AttrsBase<Pool2DAttrs> {
  KILN_ATTRS(Pool2DAttrs)
  std::vector<int64_t> pool_size{1, 1};
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> dilation{1, 1};
  std::vector<int64_t> padding{0, 0};
  std::string layout = "NCHW";
  std::string out_layout;
  bool ceil_mode = false;
  bool count_include_pad = false;  // avg_pool2d only
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("pool_size", &pool_size);
    v->Visit("strides", &strides);
    v->Visit("dilation", &dilation);
    v->Visit("padding", &padding);
    v->Visit("layout", &layout);
    v->Visit("out_layout", &out_layout);
    v->Visit("ceil_mode", &ceil_mode);
    v->Visit("count_include_pad", &count_include_pad);
  }
};

// nn.global_avg_pool2d, nn.global_max_pool2d.
struct GlobalPool2DAttrs : AttrsBase<GlobalPool2DAttrs> {
  KILN_ATTRS(GlobalPool2DAttrs)
  std::string layout = "NCHW";
  std::string out_layout;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("layout", &layout);
    v->Visit("out_layout", &out_layout);
  }
};

// nn.batch_norm(data, gamma, beta, moving_mean, moving_var) -> (out, new_mean, new_var).
struct BatchNormAttrs : AttrsBase<BatchNormAttrs> {
  KILN_ATTRS(BatchNormAttrs)
  int64_t axis = 1;
  double epsilon = 1e-5;
  bool center = true;
  bool scale = true;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("axis", &axis);
    v->Visit("epsilon", &epsilon);
    v->Visit("center", &center);
    v->Visit("scale", &scale);
  }
};

// nn.layer_norm(data, gamma, beta), normalizing over `axis`.
struct LayerNormAttrs : AttrsBase<LayerNormAttrs> {
  KILN_ATTRS(LayerNormAttrs)
  int64_t axis = -1;
  double epsilon = 1e-5;
  bool center = true;
  bool scale = true;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("axis", &axis);
    v->Visit("epsilon", &epsilon);
    v->Visit("center", &center);
    v->Visit("scale", &scale);
  }
};

// nn.softmax, nn.log_softmax.
struct SoftmaxAttrs : AttrsBase<SoftmaxAttrs> {
  KILN_ATTRS(SoftmaxAttrs)
  int64_t axis = -1;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("axis", &axis); }
};

struct LeakyReluAttrs : AttrsBase<LeakyReluAttrs> {
  KILN_ATTRS(LeakyReluAttrs)
  double alpha = 0.01;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("alpha", &alpha); }
};

// nn.prelu(data, alpha): alpha has the length of data's `axis`.
struct PReluAttrs : AttrsBase<PReluAttrs> {
  KILN_ATTRS(PReluAttrs)
  int64_t axis = 1;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("axis", &axis); }
};

// nn.gelu: approximate "none" (erf form) or "tanh".
struct GeluAttrs : AttrsBase<GeluAttrs> {
  KILN_ATTRS(GeluAttrs)
  std::string approximate = "none";
  void VisitAttrs(AttrVisitor* v) override { v->Visit("approximate", &approximate); }
};

// nn.bias_add(data, bias): bias is added along `axis`.
struct BiasAddAttrs : AttrsBase<BiasAddAttrs> {
  KILN_ATTRS(BiasAddAttrs)
  int64_t axis = 1;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("axis", &axis); }
};

// nn.pad(data, pad_value): pad_width has one [before, after] pair per axis;
// pad_mode "constant", "edge" or "reflect".
struct PadAttrs : AttrsBase<PadAttrs> {
  KILN_ATTRS(PadAttrs)
  std::vector<std::vector<int64_t>> pad_width;
  std::string pad_mode = "constant";
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("pad_width", &pad_width);
    v->Visit("pad_mode", &pad_mode);
  }
};

// nn.dropout(data) -> (out, mask). Identity at inference.
struct DropoutAttrs : AttrsBase<DropoutAttrs> {
  KILN_ATTRS(DropoutAttrs)
  double rate = 0.5;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("rate", &rate); }
};

struct ClipAttrs : AttrsBase<ClipAttrs> {
  KILN_ATTRS(ClipAttrs)
  double a_min = 0;
  double a_max = 0;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("a_min", &a_min);
    v->Visit("a_max", &a_max);
  }
};

// reshape: newshape entries are sizes, or 0 (copy the input dim at that
// position, unless allowzero), -1 (infer), -2 (copy all remaining dims),
// -3 (merge two consecutive dims), -4 (split a dim in two, the next two
// entries give the parts, one may be -1), as in Relay.
struct ReshapeAttrs : AttrsBase<ReshapeAttrs> {
  KILN_ATTRS(ReshapeAttrs)
  std::vector<int64_t> newshape;
  bool allowzero = false;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("newshape", &newshape);
    v->Visit("allowzero", &allowzero);
  }
};

// transpose: axes=none reverses the axes.
struct TransposeAttrs : AttrsBase<TransposeAttrs> {
  KILN_ATTRS(TransposeAttrs)
  std::optional<std::vector<int64_t>> axes;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("axes", &axes); }
};

// concatenate(tuple) along axis.
struct ConcatenateAttrs : AttrsBase<ConcatenateAttrs> {
  KILN_ATTRS(ConcatenateAttrs)
  int64_t axis = 0;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("axis", &axis); }
};

// split(data) -> tuple. Either `sections` equal parts (sections > 0) or cut
// at `indices` (sections == 0).
struct SplitAttrs : AttrsBase<SplitAttrs> {
  KILN_ATTRS(SplitAttrs)
  int64_t sections = 0;
  std::vector<int64_t> indices;
  int64_t axis = 0;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("sections", &sections);
    v->Visit("indices", &indices);
    v->Visit("axis", &axis);
  }
};

// strided_slice: begin/end/strides per axis (or per `axes` entry). slice_mode
// "end" (end is exclusive) or "size" (end holds sizes, -1 = to the end).
struct StridedSliceAttrs : AttrsBase<StridedSliceAttrs> {
  KILN_ATTRS(StridedSliceAttrs)
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::optional<std::vector<int64_t>> strides;
  std::optional<std::vector<int64_t>> axes;
  std::string slice_mode = "end";
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("begin", &begin);
    v->Visit("end", &end);
    v->Visit("strides", &strides);
    v->Visit("axes", &axes);
    v->Visit("slice_mode", &slice_mode);
  }
};

// take(data, indices): axis=none takes from the flattened data; mode "clip",
// "wrap" or "fast".
struct TakeAttrs : AttrsBase<TakeAttrs> {
  KILN_ATTRS(TakeAttrs)
  std::optional<int64_t> axis;
  int64_t batch_dims = 0;
  std::string mode = "clip";
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("axis", &axis);
    v->Visit("batch_dims", &batch_dims);
    v->Visit("mode", &mode);
  }
};

struct ExpandDimsAttrs : AttrsBase<ExpandDimsAttrs> {
  KILN_ATTRS(ExpandDimsAttrs)
  int64_t axis = 0;
  int64_t num_newaxis = 1;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("axis", &axis);
    v->Visit("num_newaxis", &num_newaxis);
  }
};

// squeeze: axis=none removes every dim of size 1.
struct SqueezeAttrs : AttrsBase<SqueezeAttrs> {
  KILN_ATTRS(SqueezeAttrs)
  std::optional<std::vector<int64_t>> axis;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("axis", &axis); }
};

struct BroadcastToAttrs : AttrsBase<BroadcastToAttrs> {
  KILN_ATTRS(BroadcastToAttrs)
  std::vector<int64_t> shape;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("shape", &shape); }
};

struct CastAttrs : AttrsBase<CastAttrs> {
  KILN_ATTRS(CastAttrs)
  DataType dtype = DataType::Float(32);
  void VisitAttrs(AttrVisitor* v) override { v->Visit("dtype", &dtype); }
};

// layout_transform: e.g. src_layout "NCHW", dst_layout "NCHW16c".
struct LayoutTransformAttrs : AttrsBase<LayoutTransformAttrs> {
  KILN_ATTRS(LayoutTransformAttrs)
  std::string src_layout;
  std::string dst_layout;
  void VisitAttrs(AttrVisitor* v) override {
    v->Visit("src_layout", &src_layout);
    v->Visit("dst_layout", &dst_layout);
  }
};

// ---- Dynamic operators (dyn.*): shapes come from tensor arguments -----------

// shape_of(data): the dtype of the 1-D shape tensor (int64 or int32).
struct ShapeOfAttrs : AttrsBase<ShapeOfAttrs> {
  KILN_ATTRS(ShapeOfAttrs)
  DataType dtype = DataType::Int(64);
  void VisitAttrs(AttrVisitor* v) override { v->Visit("dtype", &dtype); }
};

// dyn.zeros, dyn.ones, dyn.full: the output dtype.
struct InitOpAttrs : AttrsBase<InitOpAttrs> {
  KILN_ATTRS(InitOpAttrs)
  DataType dtype = DataType::Float(32);
  void VisitAttrs(AttrVisitor* v) override { v->Visit("dtype", &dtype); }
};

// dyn.reshape(data, newshape): the newshape codes as in ReshapeAttrs.
struct DynReshapeAttrs : AttrsBase<DynReshapeAttrs> {
  KILN_ATTRS(DynReshapeAttrs)
  bool allowzero = false;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("allowzero", &allowzero); }
};

// dyn.strided_slice(data, begin, end, strides): slice_mode as in StridedSliceAttrs.
struct DynStridedSliceAttrs : AttrsBase<DynStridedSliceAttrs> {
  KILN_ATTRS(DynStridedSliceAttrs)
  std::string slice_mode = "end";
  void VisitAttrs(AttrVisitor* v) override { v->Visit("slice_mode", &slice_mode); }
};

// dyn.expand_dims(data, axis): axis is a 0-D integer tensor.
struct DynExpandDimsAttrs : AttrsBase<DynExpandDimsAttrs> {
  KILN_ATTRS(DynExpandDimsAttrs)
  int64_t num_newaxis = 1;
  void VisitAttrs(AttrVisitor* v) override { v->Visit("num_newaxis", &num_newaxis); }
};

#undef KILN_ATTRS

}  // namespace kiln

#endif  // KILN_IR_OP_ATTRS_H_
