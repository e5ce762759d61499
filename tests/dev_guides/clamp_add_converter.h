// File: tests/dev_guides/clamp_add_converter.h (tests only)
//
// The ONNX converter of test.clamp_add (docs/dev/adding_an_operator.md,
// step 6): the node `ClampAdd(A, B)` of the custom domain "kiln.test", with
// FLOAT attributes `min` (default 0) and `max` (default 6), becomes
// test.clamp_add(A, B, a_min=min, a_max=max).
//
//   kiln::dev_guides::RegisterClampAddConverter();   // after RegisterClampAdd()
//   KILN_ASSIGN_OR_RETURN(Module m, onnx_frontend::ImportOnnxBytes(bytes));
#ifndef KILN_TESTS_DEV_GUIDES_CLAMP_ADD_CONVERTER_H_
#define KILN_TESTS_DEV_GUIDES_CLAMP_ADD_CONVERTER_H_

namespace kiln::dev_guides {

inline constexpr char kClampAddOnnxDomain[] = "kiln.test";

// Adds the converter to ConverterRegistry::Global() (once; later calls do nothing).
void RegisterClampAddConverter();

}  // namespace kiln::dev_guides

#endif  // KILN_TESTS_DEV_GUIDES_CLAMP_ADD_CONVERTER_H_
