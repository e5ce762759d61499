// RegisterAllConverters (converter.h). It lives in :importer, not in
// :converter's registry.cc: the families depend on :converter, so a static
// link lists them before it, and a reference from :converter to them would
// be left unresolved. :importer comes before the families.
#include <mutex>

#include "frontends/onnx/converter.h"

namespace kiln::onnx_frontend {

void RegisterAllConverters() {
  static std::once_flag once;
  std::call_once(once, [] {
    ConverterRegistry& r = ConverterRegistry::Global();
    RegisterElementwiseConverters(r);
    RegisterNnConverters(r);
    RegisterTensorConverters(r);
    RegisterReduceConverters(r);
  });
}

}  // namespace kiln::onnx_frontend
