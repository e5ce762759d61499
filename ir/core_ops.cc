// Registers kiln's core operators: name, inputs, attribute struct and fusion
// pattern. Type relations live in types/, kernels in interpreter/ and lowering/.
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/op_attrs.h"

namespace kiln {
namespace {

template <typename A>
std::function<Ref<AttrsNode>()> AttrsOf() {
  return [] { return Ref<AttrsNode>(new A()); };
}

class Registrar {
 public:
  explicit Registrar(OpRegistry& r) : r_(r) {}

  void Add(std::string name, std::vector<OpArg> args, OpPattern pattern, std::string description,
           std::function<Ref<AttrsNode>()> attrs = nullptr, int num_inputs = -2) {
    OpDef def;
    def.name = std::move(name);
    def.num_inputs = num_inputs == -2 ? static_cast<int>(args.size()) : num_inputs;
    def.arguments = std::move(args);
    def.pattern = pattern;
    def.description = std::move(description);
    def.make_attrs = std::move(attrs);
    // Registration is idempotent: a second call finds the names taken.
    (void)r_.Register(std::move(def));
  }

 private:
  OpRegistry& r_;
};

}  // namespace

void RegisterCoreOps(OpRegistry& registry) {
  Registrar r(registry);
  const std::vector<OpArg> x = {{"data", "input tensor"}};
  const std::vector<OpArg> xy = {{"lhs", "left operand"}, {"rhs", "right operand"}};

  // Elementwise unary.
  for (const char* name : {"abs", "negative", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh",
                           "erf", "nn.relu", "floor", "ceil", "round", "sign", "sin", "cos",
                           "logical_not", "copy", "zeros_like", "ones_like", "isnan"}) {
    r.Add(name, x, OpPattern::kElemWise, std::string("elementwise ") + name);
  }
  // Trigonometric and hyperbolic functions (as C's <math.h>; float math).
  for (const char* name :
       {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"}) {
    r.Add(name, x, OpPattern::kElemWise, std::string("elementwise ") + name);
  }
  r.Add("clip", x, OpPattern::kElemWise, "clamps every element to [a_min, a_max]",
        AttrsOf<ClipAttrs>());
  r.Add("cast", x, OpPattern::kElemWise, "converts every element to dtype", AttrsOf<CastAttrs>());
  r.Add("nn.leaky_relu", x, OpPattern::kElemWise, "x if x > 0 else alpha * x",
        AttrsOf<LeakyReluAttrs>());
  r.Add("nn.gelu", x, OpPattern::kElemWise, "Gaussian error linear unit", AttrsOf<GeluAttrs>());

  // Broadcasting binary.
  for (const char* name : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
                           "mod", "floor_divide", "floor_mod", "equal", "not_equal", "less",
                           "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
                           "logical_xor"}) {
    r.Add(name, xy, OpPattern::kBroadcast,
          std::string("elementwise ") + name + " with NumPy broadcasting");
  }
  r.Add("where", {{"condition", "bool tensor"}, {"x", "taken where true"}, {"y", "taken where false"}},
        OpPattern::kBroadcast, "selects from x or y by condition, with broadcasting");
  r.Add("nn.bias_add", {{"data", "input"}, {"bias", "1-D bias"}}, OpPattern::kBroadcast,
        "adds a 1-D bias along axis", AttrsOf<BiasAddAttrs>());
  r.Add("nn.prelu", {{"data", "input"}, {"alpha", "1-D slopes"}}, OpPattern::kBroadcast,
        "parametric ReLU along axis", AttrsOf<PReluAttrs>());

  // Reductions.
  for (const char* name : {"sum", "mean", "max", "min", "prod"}) {
    r.Add(name, x, OpPattern::kCommReduce, std::string("reduces by ") + name,
          AttrsOf<ReduceAttrs>());
  }
  r.Add("argmax", x, OpPattern::kCommReduce, "index of the maximum", AttrsOf<ArgReduceAttrs>());
  r.Add("argmin", x, OpPattern::kCommReduce, "index of the minimum", AttrsOf<ArgReduceAttrs>());

  // Neural network.
  r.Add("nn.conv2d", {{"data", "input"}, {"weight", "filters"}}, OpPattern::kOutEWiseFusable,
        "2-D convolution", AttrsOf<Conv2DAttrs>());
  r.Add("nn.dense", {{"data", "[..., K]"}, {"weight", "[units, K]"}}, OpPattern::kOutEWiseFusable,
        "fully connected layer: data * weight^T", AttrsOf<DenseAttrs>());
  r.Add("nn.matmul", {{"tensor_a", "[..., M, K]"}, {"tensor_b", "[K, N]"}},
        OpPattern::kOutEWiseFusable, "matrix product", AttrsOf<MatmulAttrs>());
  r.Add("nn.batch_matmul", {{"x", "[B, M, K]"}, {"y", "[B, N, K]"}}, OpPattern::kOutEWiseFusable,
        "batched matrix product", AttrsOf<BatchMatmulAttrs>());
  r.Add("nn.max_pool2d", x, OpPattern::kOutEWiseFusable, "2-D max pooling",
        AttrsOf<Pool2DAttrs>());
  r.Add("nn.avg_pool2d", x, OpPattern::kOutEWiseFusable, "2-D average pooling",
        AttrsOf<Pool2DAttrs>());
  r.Add("nn.global_avg_pool2d", x, OpPattern::kOutEWiseFusable, "mean over H and W",
        AttrsOf<GlobalPool2DAttrs>());
  r.Add("nn.global_max_pool2d", x, OpPattern::kOutEWiseFusable, "max over H and W",
        AttrsOf<GlobalPool2DAttrs>());
  r.Add("nn.batch_norm",
        {{"data", "input"}, {"gamma", "scale"}, {"beta", "shift"}, {"moving_mean", "mean"},
         {"moving_var", "variance"}},
        OpPattern::kOpaque, "batch normalization; returns (out, mean, var)",
        AttrsOf<BatchNormAttrs>());
  r.Add("nn.layer_norm", {{"data", "input"}, {"gamma", "scale"}, {"beta", "shift"}},
        OpPattern::kOpaque, "layer normalization over axis", AttrsOf<LayerNormAttrs>());
  r.Add("nn.softmax", x, OpPattern::kOpaque, "softmax over axis", AttrsOf<SoftmaxAttrs>());
  r.Add("nn.log_softmax", x, OpPattern::kOpaque, "log of softmax over axis",
        AttrsOf<SoftmaxAttrs>());
  r.Add("nn.dropout", x, OpPattern::kOpaque, "dropout; returns (out, mask)",
        AttrsOf<DropoutAttrs>());
  r.Add("nn.pad", {{"data", "input"}, {"pad_value", "scalar fill value"}}, OpPattern::kInjective,
        "pads each axis", AttrsOf<PadAttrs>());

  // Shape and data movement.
  r.Add("reshape", x, OpPattern::kInjective, "reshape with 0/-1/-2/-3/-4 codes",
        AttrsOf<ReshapeAttrs>());
  r.Add("transpose", x, OpPattern::kInjective, "permutes axes", AttrsOf<TransposeAttrs>());
  r.Add("concatenate", {{"data", "a tuple of tensors"}}, OpPattern::kInjective,
        "joins tensors along axis", AttrsOf<ConcatenateAttrs>());
  r.Add("split", x, OpPattern::kInjective, "splits into a tuple along axis",
        AttrsOf<SplitAttrs>());
  r.Add("strided_slice", x, OpPattern::kInjective, "strided slice", AttrsOf<StridedSliceAttrs>());
  r.Add("take", {{"data", "source"}, {"indices", "integer indices"}}, OpPattern::kInjective,
        "gathers elements along axis", AttrsOf<TakeAttrs>());
  r.Add("expand_dims", x, OpPattern::kInjective, "inserts axes of size 1",
        AttrsOf<ExpandDimsAttrs>());
  r.Add("squeeze", x, OpPattern::kInjective, "removes axes of size 1", AttrsOf<SqueezeAttrs>());
  r.Add("broadcast_to", x, OpPattern::kBroadcast, "broadcasts to shape",
        AttrsOf<BroadcastToAttrs>());
  r.Add("layout_transform", x, OpPattern::kInjective, "converts between data layouts",
        AttrsOf<LayoutTransformAttrs>());

  // The input's shape as a 1-D integer tensor, read at run time (its values
  // are the symbolic dims; with a static shape it folds to a constant).
  r.Add("shape_of", x, OpPattern::kOpaque, "the input's shape as a 1-D tensor",
        AttrsOf<ShapeOfAttrs>());

  // Dynamic operators: a shape-like argument is a run-time tensor (TVM's dyn.*).
  // DynamicToStatic turns them into the static operators above when those
  // arguments are constants.
  r.Add("dyn.reshape", {{"data", "input"}, {"newshape", "1-D integer tensor of reshape codes"}},
        OpPattern::kInjective, "reshape to a run-time newshape", AttrsOf<DynReshapeAttrs>());
  r.Add("dyn.broadcast_to", {{"data", "input"}, {"shape", "1-D integer tensor"}},
        OpPattern::kBroadcast, "broadcasts to a run-time shape");
  r.Add("dyn.zeros", {{"shape", "1-D integer tensor"}}, OpPattern::kElemWise,
        "zeros of a run-time shape", AttrsOf<InitOpAttrs>());
  r.Add("dyn.ones", {{"shape", "1-D integer tensor"}}, OpPattern::kElemWise,
        "ones of a run-time shape", AttrsOf<InitOpAttrs>());
  r.Add("dyn.full", {{"fill_value", "0-D tensor"}, {"shape", "1-D integer tensor"}},
        OpPattern::kElemWise, "fill_value repeated to a run-time shape", AttrsOf<InitOpAttrs>());
  r.Add("dyn.strided_slice",
        {{"data", "input"}, {"begin", "1-D integer tensor"}, {"end", "1-D integer tensor"},
         {"strides", "1-D integer tensor"}},
        OpPattern::kInjective, "strided slice with run-time bounds",
        AttrsOf<DynStridedSliceAttrs>());
  r.Add("dyn.unsqueeze", {{"data", "input"}, {"axes", "1-D integer tensor of output axes"}},
        OpPattern::kInjective, "inserts a unit axis at each run-time output axis (ONNX Unsqueeze)");
  r.Add("dyn.squeeze", {{"data", "input"}, {"axes", "1-D integer tensor of input axes"}},
        OpPattern::kInjective, "removes the unit axes listed at run time (ONNX Squeeze)");
  r.Add("dyn.arange", {{"start", "0-D tensor"}, {"limit", "0-D tensor"}, {"delta", "0-D tensor"}},
        OpPattern::kInjective,
        "start, start + delta, ... up to limit (excluded): max(ceil((limit - start) / delta), 0) "
        "values of start's dtype");
  r.Add("dyn.expand_dims", {{"data", "input"}, {"axis", "0-D integer tensor"}},
        OpPattern::kInjective, "inserts num_newaxis axes of size 1 at a run-time axis",
        AttrsOf<DynExpandDimsAttrs>());
}

}  // namespace kiln
