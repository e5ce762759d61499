// The ONNX converter families and the operators each registers, for selective
// builds (docs/selective_builds.md): a build without a family records these as
// absent (ConverterRegistry::AddAbsentFamily), so a model using one is told
// the family is not in the build. //frontends/onnx:families_test checks the
// lists against the registration functions; after adding a converter,
// regenerate them:
//   KILN_PRINT_FAMILIES=1 bazel-bin/frontends/onnx/families_test
#include <map>
#include <string>
#include <vector>

#include "frontends/onnx/converter.h"

namespace kiln::onnx_frontend {

const std::vector<std::string>& ConverterFamilies() {
  static const auto* families = new std::vector<std::string>{"elementwise", "nn", "tensor",
                                                             "reduce", "control"};
  return *families;
}

const std::vector<std::string>& FamilyOps(absl::string_view family) {
  static const auto* ops = new std::map<std::string, std::vector<std::string>, std::less<>>{
      // BEGIN GENERATED
      {"elementwise",
      {
       "::Abs", "::Acos", "::Acosh", "::Add", "::And", "::Asin", "::Asinh", "::Atan", "::Atanh",
       "::BitShift", "::Cast", "::CastLike", "::Ceil", "::Celu", "::Clip", "::Cos", "::Cosh",
       "::Div", "::Elu", "::Equal", "::Erf", "::Exp", "::Floor", "::Greater", "::GreaterOrEqual",
       "::HardSigmoid", "::HardSwish", "::IsInf", "::IsNaN", "::LeakyRelu", "::Less",
       "::LessOrEqual", "::Log", "::Max", "::Mean", "::Min", "::Mish", "::Mod", "::Mul", "::Neg",
       "::Not", "::Or", "::PRelu", "::Pow", "::Reciprocal", "::Relu", "::Round", "::Selu",
       "::Shrink", "::Sigmoid", "::Sign", "::Sin", "::Sinh", "::Softplus", "::Softsign", "::Sqrt",
       "::Sub", "::Sum", "::Tan", "::Tanh", "::ThresholdedRelu", "::Where", "::Xor"
      }},
      {"nn",
      {
       "::AveragePool", "::BatchNormalization", "::Conv", "::ConvInteger", "::ConvTranspose",
       "::DFT", "::DequantizeLinear", "::Det", "::Dropout", "::DynamicQuantizeLinear", "::Einsum",
       "::GRU", "::Gemm", "::GlobalAveragePool", "::GlobalMaxPool", "::Hardmax",
       "::InstanceNormalization", "::LRN", "::LSTM", "::LayerNormalization", "::LogSoftmax",
       "::MatMul", "::MatMulInteger", "::MaxPool", "::MeanVarianceNormalization",
       "::MelWeightMatrix", "::NegativeLogLikelihoodLoss", "::QLinearConv", "::QLinearMatMul",
       "::QuantizeLinear", "::RNN", "::STFT", "::Softmax", "::SoftmaxCrossEntropyLoss",
       "::TfIdfVectorizer"
      }},
      {"tensor",
      {
       "::BlackmanWindow", "::Compress", "::Concat", "::Constant", "::ConstantOfShape", "::CumSum",
       "::DepthToSpace", "::Expand", "::EyeLike", "::Flatten", "::Gather", "::GatherElements",
       "::GatherND", "::GridSample", "::HammingWindow", "::HannWindow", "::Identity", "::MaxUnpool", "::NonMaxSuppression", "::NonZero", "::OneHot", "::Pad", "::Range", "::Reshape", "::Resize",
       "::ReverseSequence", "::RoiAlign", "::Scatter", "::ScatterElements", "::ScatterND",
       "::Shape", "::Size", "::Slice", "::SpaceToDepth", "::Split", "::Squeeze", "::Tile",
       "::TopK", "::Transpose", "::Trilu", "::Unique", "::Unsqueeze", "::Upsample"
      }},
      {"reduce",
      {
       "::ArgMax", "::ArgMin", "::ReduceL1", "::ReduceL2", "::ReduceLogSum", "::ReduceLogSumExp",
       "::ReduceMax", "::ReduceMean", "::ReduceMin", "::ReduceProd", "::ReduceSum",
       "::ReduceSumSquare"
      }},
      {"control",
      {
       "::ConcatFromSequence", "::If", "::Loop", "::Optional", "::OptionalGetElement",
       "::OptionalHasElement", "::Scan", "::SequenceAt", "::SequenceConstruct",
       "::SequenceEmpty", "::SequenceErase", "::SequenceInsert", "::SequenceLength", "::SequenceMap",
       "::SplitToSequence"
      }},
      // END GENERATED
  };
  static const auto* none = new std::vector<std::string>();
  auto it = ops->find(family);
  return it == ops->end() ? *none : it->second;
}

}  // namespace kiln::onnx_frontend
