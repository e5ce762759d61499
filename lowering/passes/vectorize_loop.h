// File: lowering/passes/vectorize_loop.h
//
// VectorizeLoop: a loop marked ForKind::kVectorized with a constant extent
// becomes straight-line vector code. Runs after loop_partition (which removes
// the tail guards that would otherwise block it) in the loop pipeline.
//
//   vectorized (j, 0, 8) { B[i * 8 + j] = exp(A[i * 8 + j]) * 2f }
// becomes
//   B[ramp(i * 8, 1, 8)] = exp(A[ramp(i * 8, 1, 8)]):x8 * broadcast(2f, 8)
//
// The loop var becomes Ramp(min, 1, lanes); operands that do not depend on it
// stay scalar and are broadcast where they meet a vector; index arithmetic
// keeps Ramp form (Ramp(b, s) * c = Ramp(b * c, s * c)); loads and stores get
// vector indices; Select / comparisons / casts / pure math calls become vector
// nodes; Let / LetStmt values that become vectors get a new vector var.
// Inner loops whose bounds do not depend on the var stay loops with a
// vectorized body; Ifs whose condition does not depend on it stay Ifs.
//
// Loops with more than max_lanes iterations are split into a serial loop over
// chunks of `vector_width` lanes plus a vector tail. vector_width is in lanes
// of a 32-bit element and scales with the widest element the body loads or
// stores (16 -> 8 lanes of float64, 32 of float16).
//
// A kVectorized loop asserts that its iterations are independent (as in TVM):
// there is no dependence analysis.
//
// Left alone (the loop becomes ForKind::kSerial, annotated
// `vectorize.fallback=<reason>`):
//   extent_not_constant       the extent is not an integer constant
//   if_depends_on_lane        an If / Assert / if_then_else condition depends on
//                             the var (no masking is done)
//   inner_loop_depends_on_lane  an inner loop's min/extent depends on the var
//   scalar_store              a store whose index does not depend on the var
//                             (e.g. a reduction into one element)
//   allocate_inside           an Allocate inside the loop
//   opaque_call               a call with side effects (kOpaque)
//   nested_vector             the body already has vector values (an inner
//                             loop was vectorized, or explicit Ramp/Broadcast)
//   unsupported_node          kReduce / kProducerLoad / an attr value on the var
#ifndef KILN_LOWERING_PASSES_VECTORIZE_LOOP_H_
#define KILN_LOWERING_PASSES_VECTORIZE_LOOP_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

struct VectorizeOptions {
  // Chunk width, in lanes of a 32-bit element, for loops longer than max_lanes.
  int vector_width = 16;
  // Longest loop turned into one vector.
  int max_lanes = 64;
};

absl::StatusOr<PrimFunc> VectorizeLoop(const PrimFunc& f, const VectorizeOptions& options = {});

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_VECTORIZE_LOOP_H_
