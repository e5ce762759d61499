// File: types/model_zoo.h
//
// Real-size graphs built through the IR API, for tests and benchmarks of
// every layer: ResNet-50 (batch_norm in training form, weights as typed
// parameters, ~230 operator calls), one BERT-base encoder layer, and a long
// elementwise chain.
//
//   KILN_ASSIGN_OR_RETURN(Module m, ResNet50(/*batch=*/Dim(1)));
#ifndef KILN_TYPES_MODEL_ZOO_H_
#define KILN_TYPES_MODEL_ZOO_H_

#include "absl/status/statusor.h"
#include "ir/dim.h"
#include "ir/module.h"

namespace kiln::types {

// ResNet-50 v1 for 224x224 RGB images, NCHW, float32, 1000 classes. `batch`
// may be symbolic (Dim::Var("n")). With `constant_weights`, every weight is a
// Constant (deterministic pseudo-random values, 25.6M floats), as after
// importing a trained model; otherwise weights are typed parameters.
absl::StatusOr<Module> ResNet50(Dim batch, bool constant_weights = false);

// One BERT-base encoder layer: hidden 768, 12 heads, FFN 3072, GELU.
absl::StatusOr<Module> BertLayer(Dim batch, int64_t seq_len, bool constant_weights = false);

// def @main(%x: Tensor[(1, 16), float32]) { add(...add(add(%x, 1f), 1f)..., 1f) }
// with `length` calls, as graph bindings (no lets), or as a let chain.
absl::StatusOr<Module> AddChain(int length, bool as_lets);

}  // namespace kiln::types

#endif  // KILN_TYPES_MODEL_ZOO_H_
