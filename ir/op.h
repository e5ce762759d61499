// File: ir/op.h
//
// The operator registry. An operator is described once per layer, and each
// layer attaches its own facet by op name:
//   ir          name, inputs, attribute struct, fusion pattern kind (this file)
//   types       the type relation                 (facet "TypeRelation")
//   interpreter the reference kernel              (facet "Interpret")
//   lowering    compute + schedule                (facet "Compute", ...)
// A facet that is not linked into a binary is simply absent.
//
//   KILN_ASSIGN_OR_RETURN(Op conv, GetOp("nn.conv2d"));
//   conv->def->num_inputs == 2; conv->def->pattern == OpPattern::kOutEWiseFusable
//   OpRegistry::Global().SetFacet("nn.conv2d", "TypeRelation", MyRel);
//   const MyRelFn* f = OpRegistry::Global().GetFacet<MyRelFn>(conv, "TypeRelation");
#ifndef KILN_IR_OP_H_
#define KILN_IR_OP_H_

#include <any>
#include <functional>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ir/attrs.h"
#include "ir/expr.h"

namespace kiln {

// How an operator fuses (TVM's OpPatternKind, same order and values).
enum class OpPattern : int {
  kElemWise = 0,         // out[i] = f(in[i])
  kBroadcast = 1,        // elementwise with broadcasting
  kInjective = 2,        // each output element depends on one input element (reshape, transpose)
  kCommReduce = 3,       // commutative reduction
  kOutEWiseFusable = 4,  // complex op whose output can take an elementwise tail (conv2d, dense)
  kTuple = 7,
  kOpaque = 8,  // cannot be fused
};
const char* OpPatternName(OpPattern p);

struct OpArg {
  std::string name;
  std::string description;
};

struct OpDef {
  std::string name;
  std::string description;
  // Number of inputs; -1 means variadic.
  int num_inputs = 0;
  std::vector<OpArg> arguments;
  OpPattern pattern = OpPattern::kOpaque;
  // Creates the op's attribute struct with default values; null if the op has no attributes.
  std::function<Ref<AttrsNode>()> make_attrs;
  // The default attributes, made once.
  Attrs default_attrs;
  Op op;  // the unique Op expression for this operator
};

class OpRegistry {
 public:
  // The process-wide registry, with kiln's core operators registered.
  static OpRegistry& Global();

  // Registers an operator. Fails if the name is taken.
  absl::StatusOr<Op> Register(OpDef def);
  // Looks an operator up; the error names the unknown op.
  absl::StatusOr<Op> Get(absl::string_view name) const;
  const OpDef* Find(absl::string_view name) const;
  std::vector<std::string> ListNames() const;

  // Facets: per-layer data attached to an op by name under a key.
  template <typename T>
  absl::Status SetFacet(absl::string_view op_name, absl::string_view key, T value) {
    return SetFacetAny(op_name, key, std::make_shared<std::any>(std::move(value)));
  }
  template <typename T>
  const T* GetFacet(const OpDef* op, absl::string_view key) const {
    std::shared_ptr<const std::any> a = GetFacetAny(op, key);
    return a ? std::any_cast<T>(a.get()) : nullptr;
  }

 private:
  OpRegistry() = default;
  absl::Status SetFacetAny(absl::string_view op_name, absl::string_view key,
                           std::shared_ptr<std::any> value);
  std::shared_ptr<const std::any> GetFacetAny(const OpDef* op, absl::string_view key) const;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> ops_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::pair<const OpDef*, std::string>, std::shared_ptr<const std::any>>
      facets_ ABSL_GUARDED_BY(mu_);
};

// Shorthand for OpRegistry::Global().Get(name).
absl::StatusOr<Op> GetOp(absl::string_view name);

// Registers kiln's core operators (ir/core_ops.cc). Called once by
// OpRegistry::Global(); safe to call again.
void RegisterCoreOps(OpRegistry& registry);

}  // namespace kiln

#endif  // KILN_IR_OP_H_
