// File: tools/signature.h
//
// A model's inputs and outputs as a user names them: input names, dtypes and
// dims where a symbolic dim keeps its name ("N", "seq"), and the output names
// the compiled artifact will use (main's `output_names`, else output0, ...),
// all from the C API: kiln_model_input_info / _output_info (names, dtypes,
// static dims), kiln_model_output_name, kiln_model_input_dim_name /
// _output_dim_name (a symbolic dim's name).
//
//   ModelSignature sig;
//   if (!ReadSignature(model, &sig, &error)) ...
//   sig.inputs[0].dims   // {"N", "3", "224", "224"}
//
// `--input-shape` accepts input names (x=1,3,224,224) and dim names (N=2):
// LoadModelBound resolves dim names against the unbound model's signature.
#ifndef KILN_TOOLS_SIGNATURE_H_
#define KILN_TOOLS_SIGNATURE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace kiln::cli {

struct TensorSignature {
  std::string name;
  std::string dtype;              // "float32"
  std::vector<std::string> dims;  // "3", a dim name ("N"), or "?"
  bool is_static() const;
  std::string Text() const;  // "float32[N,3,224,224]"
};

struct ModelSignature {
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  // The distinct named symbolic dims of the inputs, in order of appearance.
  std::vector<std::string> SymbolicDims() const;
};

// False with `error` set when the C API fails.
bool ReadSignature(const KilnModel* model, ModelSignature* sig, std::string* error);

// "" when every input of `sig` is static; otherwise what a user must do,
// naming the first symbolic dim and the --input-shape to give, e.g.
// "input 'x' has the symbolic dim 'N' (axis 0 of float32[N,3]); give its size
// with --input-shape N=SIZE (or --input-shape x=SIZE,3)".
std::string SymbolicDimError(const ModelSignature& sig, const std::string& model_path);

// Loads `path` with the --input-shape values `given`, whose names are input
// names or symbolic dim names. A dim name binds that dim in every input that
// has it (an input whose every non-static dim is then known gets its full
// shape). A name that is neither gives a usage error in `*usage_error`
// listing both kinds. On failure: NULL, with `*status` or `*usage_error` set.
ModelPtr LoadModelBound(const std::string& path,
                        const std::map<std::string, std::vector<int64_t>>& given,
                        KilnStatus** status, std::string* usage_error);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_SIGNATURE_H_
