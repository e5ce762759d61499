#include "passes/infer_type/infer_type.h"

#include "ir/status_macros.h"
#include "types/infer_type.h"

namespace kiln::passes {

PassPtr InferType() {
  return MakeModulePass({"InferType", 0, {}},
                        [](Module& m, const PassContext&) -> absl::StatusOr<bool> {
                          KILN_ASSIGN_OR_RETURN(m, types::InferType(m));
                          return false;
                        });
}

}  // namespace kiln::passes
