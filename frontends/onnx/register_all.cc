// RegisterAllConverters (converter.h): every converter family of this build.
//
// It lives outside :converter's registry.cc: the families depend on
// :converter, so a static link lists them before it, and a reference from
// :converter to them would be left unresolved. :importer links it with every
// family; a selective build (families.bzl, docs/selective_builds.md) compiles
// it with KILN_SELECTED_ONNX_FAMILIES and one KILN_ONNX_FAMILY_<name> per
// family it holds, and the operators of the others are recorded as absent.
#include <mutex>

#include "frontends/onnx/converter.h"

#if !defined(KILN_SELECTED_ONNX_FAMILIES)
#define KILN_ONNX_FAMILY_elementwise 1
#define KILN_ONNX_FAMILY_nn 1
#define KILN_ONNX_FAMILY_tensor 1
#define KILN_ONNX_FAMILY_reduce 1
#define KILN_ONNX_FAMILY_control 1
#endif

namespace kiln::onnx_frontend {

void RegisterAllConverters() {
  static std::once_flag once;
  std::call_once(once, [] {
    ConverterRegistry& r = ConverterRegistry::Global();
#ifdef KILN_ONNX_FAMILY_elementwise
    RegisterElementwiseConverters(r);
#else
    r.AddAbsentFamily("elementwise", FamilyOps("elementwise"));
#endif
#ifdef KILN_ONNX_FAMILY_nn
    RegisterNnConverters(r);
#else
    r.AddAbsentFamily("nn", FamilyOps("nn"));
#endif
#ifdef KILN_ONNX_FAMILY_tensor
    RegisterTensorConverters(r);
#else
    r.AddAbsentFamily("tensor", FamilyOps("tensor"));
#endif
#ifdef KILN_ONNX_FAMILY_reduce
    RegisterReduceConverters(r);
#else
    r.AddAbsentFamily("reduce", FamilyOps("reduce"));
#endif
#ifdef KILN_ONNX_FAMILY_control
    RegisterControlConverters(r);
#else
    r.AddAbsentFamily("control", FamilyOps("control"));
#endif
  });
}

}  // namespace kiln::onnx_frontend
