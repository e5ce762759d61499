// File: passes/dynamic_to_static/dynamic_to_static.h
//
// DynamicToStatic (opt level 3, as TVM's): rewrites each dynamic operator call
// whose shape-like arguments are literal Constants into the static operator
// with those values as attributes, so its type gets static extents again:
//
//   dyn.reshape(%x, const[2, -1])              -> reshape(%x, newshape=[2, -1])
//   dyn.broadcast_to(%x, const[2, 3])          -> broadcast_to(%x, shape=[2, 3])
//   dyn.strided_slice(%x, const b, e, s)       -> strided_slice(%x, begin=b, end=e, strides=s)
//   dyn.expand_dims(%x, 1i64)                  -> expand_dims(%x, axis=1)
//   dyn.zeros(const[2, 3], dtype="int8")       -> broadcast_to(0i8, shape=[2, 3])
//   dyn.ones(...) / dyn.full(%v, const[...])   -> broadcast_to(1 / %v, shape=[...])
//
// kiln has no static zeros/ones/full: a broadcast scalar keeps the graph small
// (a folded Constant would store every element); dyn.full's fill value is cast
// first when its dtype differs from the dtype attribute. Calls with a
// non-constant shape argument are left alone, as are constants that are not
// integer tensors of the right rank (the type checker reports those). A
// constant shape that cannot apply (dyn.reshape of 6 elements to [4]) would
// fail at run time; after the rewrite InferType reports it at compile time.
//
// Only literal Constants count: the default pipeline runs FoldConstant just
// before it (TVM's order), which turns constant shape computations into
// Constants. Requires InferType (dyn.full reads its fill value's dtype). Works
// on 100,000-node chains without recursion (ExprRewriter).
#ifndef KILN_PASSES_DYNAMIC_TO_STATIC_DYNAMIC_TO_STATIC_H_
#define KILN_PASSES_DYNAMIC_TO_STATIC_DYNAMIC_TO_STATIC_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr DynamicToStatic();

}  // namespace kiln::passes

#endif  // KILN_PASSES_DYNAMIC_TO_STATIC_DYNAMIC_TO_STATIC_H_
