// File: passes/lambda_lift/lambda_lift.h
//
// LambdaLift (opt level 0 when required): lifts every local closure (a
// Function nested in another function, not Primitive) to a new global
// function, as TVM's pass, innermost first. A closure with no free variables
// becomes `@f_lifted_N` with the same parameters, and its occurrence becomes
// that global. A closure capturing free variables %a, %b becomes
// `@f_lifted_N(%a, %b)` returning the closure (marked Closure=1) over them,
// and its occurrence becomes the call `@f_lifted_N(%a, %b)`: the captured
// values are passed as arguments where the closure is created. A let-bound
// recursive closure (`let %g = fn ... %g(...)`) refers to itself inside the
// lifted body through the same call, so recursion keeps working. Functions
// already marked Closure=1 are not lifted again. Needs InferType first (the
// types of captured variables annotate the new parameters; a prerequisite).
//
//   def @f(%x: Tensor[(4,), float32]) { %0 = fn (%y) { add(%x, %y) }; %0(%x) }
//   // after:
//   def @f_lifted_0(%x1: Tensor[(4,), float32]) { fn (%y, Closure=1) { add(%x1, %y) } }
//   def @f(%x: Tensor[(4,), float32]) { %0 = @f_lifted_0(%x); %0(%x) }
#ifndef KILN_PASSES_LAMBDA_LIFT_LAMBDA_LIFT_H_
#define KILN_PASSES_LAMBDA_LIFT_LAMBDA_LIFT_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr LambdaLift();

}  // namespace kiln::passes

#endif  // KILN_PASSES_LAMBDA_LIFT_LAMBDA_LIFT_H_
