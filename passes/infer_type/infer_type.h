// File: passes/infer_type/infer_type.h
//
// InferType (opt level 0): runs type inference (types::InferType) over the
// whole module, filling checked_type() on every node. It changes no node, so
// it reports "unchanged"; an ill-typed module fails with the type error.
// Nothing must run before it; most passes that read types list it as a
// prerequisite (PassInfo::required), and Sequential runs it for them.
//
//   def @main(%x: Tensor[(2, 3), float32]) { %0 = exp(%x); add(%0, 1f) }
//   // after: same text; exp(%x) has checked type Tensor[(2, 3), float32]
#ifndef KILN_PASSES_INFER_TYPE_INFER_TYPE_H_
#define KILN_PASSES_INFER_TYPE_INFER_TYPE_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr InferType();

}  // namespace kiln::passes

#endif  // KILN_PASSES_INFER_TYPE_INFER_TYPE_H_
