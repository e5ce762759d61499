// File: c_api/kiln_api.cc
//
// The compiler half of kiln.h: models (ONNX, text IR), printing, inputs and
// outputs, graph passes, compilation to an artifact, the dot picture. The
// runtime half (kiln_runtime.h) is runtime_c, linked into the same libkiln.so.
// Every function follows api_internal.h: out-parameters cleared, arguments
// checked, the C++ body inside Guard.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "c_api/api_internal.h"
#include "c_api/frontends.h"
#include "c_api/graph_dot.h"
#include "frontends/onnx/importer.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
#include "ir/type.h"
#include "kiln/kiln.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "runtime_c/handles.h"
#include "types/infer_type.h"

namespace {

using kiln::capi::Guard;
using kiln::capi::ReadOptions;
using kiln::capi::StringList;
using kiln::capi::MallocString;
using kiln::capi::PublishModel;
using kiln::capi::RequireLiveModel;
using kiln::capi::RequireNonNull;

KilnTensorSignature Signature(std::string name, const kiln::Type& type) {
  KilnTensorSignature s;
  s.name = std::move(name);
  if (const auto* t = type.as<kiln::TensorTypeNode>()) {
    s.is_tensor = true;
    s.dtype.code = static_cast<uint8_t>(t->dtype.code());
    s.dtype.bits = static_cast<uint8_t>(t->dtype.bits());
    s.dtype.lanes = static_cast<uint16_t>(t->dtype.lanes());
    for (const kiln::Dim& d : t->shape) {
      s.shape.push_back(d.is_static() ? d.value() : -1);
      s.dim_names.push_back(d.ToString());
    }
  }
  return s;
}

// main's "output_names" attribute when it names every output once with a
// non-empty name (the rule lowering/graph_plan.cc applies to the artifact's
// outputs); empty otherwise.
std::vector<std::string> OutputNames(const kiln::Function& main, size_t num_outputs) {
  const kiln::AttrValue* names = main->GetAttr("output_names");
  if (names == nullptr || names->kind != kiln::AttrValue::Kind::kList ||
      names->list.size() != num_outputs) {
    return {};
  }
  std::vector<std::string> out;
  for (const kiln::AttrValue& v : names->list) {
    if (v.kind != kiln::AttrValue::Kind::kString || v.s.empty()) return {};
    if (std::find(out.begin(), out.end(), v.s) != out.end()) return {};
    out.push_back(v.s);
  }
  return out;
}

void FlattenOutputs(const kiln::Type& type, std::vector<KilnTensorSignature>* out) {
  if (const auto* tuple = type.as<kiln::TupleTypeNode>()) {
    for (const kiln::Type& f : tuple->fields) FlattenOutputs(f, out);
    return;
  }
  out->push_back(Signature(absl::StrCat("output", out->size()), type));
}

// Import warnings as kiln_model_warnings gives them: one '\n'-terminated line
// each (a line break inside a warning becomes a space).
std::string WarningText(const std::vector<std::string>& warnings) {
  std::string text;
  for (std::string w : warnings) {
    std::replace(w.begin(), w.end(), '\n', ' ');
    absl::StrAppend(&text, w, "\n");
  }
  return text;
}

// Type-checks `module` and wraps it with its signature.
absl::StatusOr<std::unique_ptr<KilnModel>> MakeModel(const kiln::Module& module) {
  KILN_ASSIGN_OR_RETURN(kiln::Module typed, kiln::types::InferType(module));
  auto model = std::make_unique<KilnModel>();
  model->module = typed;
  // A module without `main` (a library of functions) is a model with no
  // inputs and outputs: it prints and optimizes, but does not compile.
  absl::StatusOr<kiln::Function> main = typed.Lookup("main");
  if (!main.ok()) return model;
  model->has_main = true;
  for (const kiln::Var& p : (*main)->params) {
    kiln::Type t = p->checked_type().defined() ? p->checked_type() : p->type_annotation;
    model->inputs.push_back(Signature(p->name_hint, t));
  }
  FlattenOutputs((*main)->body->checked_type(), &model->outputs);
  std::vector<std::string> names = OutputNames(*main, model->outputs.size());
  for (size_t i = 0; i < names.size(); ++i) model->outputs[i].name = names[i];
  return model;
}

KilnStatus* ImportOptionsFromC(const char* function, const KilnImportOptions* options,
                               kiln::onnx_frontend::ImportOptions* out) {
  KilnImportOptions o;
  bool present = false;
  if (KilnStatus* st = ReadOptions(function, options, &o, &present)) return st;
  if (o.num_input_shapes < 0 || (o.num_input_shapes > 0 && o.input_shapes == nullptr)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: options->input_shapes is NULL or num_input_shapes (%d) < 0",
                              function, static_cast<int>(o.num_input_shapes));
  }
  for (int32_t i = 0; i < o.num_input_shapes; ++i) {
    const KilnInputShape& s = o.input_shapes[i];
    if (s.name == nullptr || s.ndim < 0 || (s.ndim > 0 && s.dims == nullptr)) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: options->input_shapes[%d] has a NULL name, a negative ndim "
                                "or NULL dims",
                                function, static_cast<int>(i));
    }
    std::vector<int64_t> dims(s.dims, s.dims + s.ndim);
    for (int64_t d : dims) {
      if (d < 0) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "%s: options->input_shapes[%d] ('%s') has a negative dim %lld",
                                  function, static_cast<int>(i), s.name,
                                  static_cast<long long>(d));
      }
    }
    out->input_shapes[s.name] = std::move(dims);
  }
  if (o.external_data_dir != nullptr) out->external_data_dir = o.external_data_dir;
  return nullptr;
}

// Calls KilnOptimizeOptions.after_pass after every pass that ran.
class CallbackInstrument : public kiln::passes::PassInstrument {
 public:
  CallbackInstrument(KilnAfterPassFn fn, void* user_data, bool with_text)
      : fn_(fn), user_data_(user_data), with_text_(with_text) {}
  void AfterPass(const kiln::passes::PassInfo& info, const kiln::Module& module, bool changed,
                 absl::Duration elapsed) override {
    std::string text = with_text_ ? kiln::PrintModule(module) : std::string();
    fn_(user_data_, info.name.c_str(), changed ? 1 : 0, absl::ToDoubleMilliseconds(elapsed),
        with_text_ ? text.c_str() : nullptr);
  }

 private:
  KilnAfterPassFn fn_;
  void* user_data_;
  bool with_text_;
};

KilnStatus* SignatureInfo(const char* function, const KilnModel* model,
                          const std::vector<KilnTensorSignature>& list, const char* what,
                          int32_t index, DLTensor* info) {
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: %s index %d out of range (the model has %zu)",
                              function, what, static_cast<int>(index), list.size());
  }
  (void)model;
  const KilnTensorSignature& s = list[index];
  if (!s.is_tensor) {
    return kiln_status_create(KILN_UNIMPLEMENTED, "%s: %s %d ('%s') is not a tensor", function,
                              what, static_cast<int>(index), s.name.c_str());
  }
  info->data = nullptr;
  info->device.device_type = kDLCPU;
  info->device.device_id = 0;
  info->ndim = static_cast<int32_t>(s.shape.size());
  info->dtype = s.dtype;
  info->shape = const_cast<int64_t*>(s.shape.data());
  info->strides = nullptr;
  info->byte_offset = 0;
  return nullptr;
}

// Dim `axis` of entry `index` of `list` as text (kiln_model_*_dim_name).
KilnStatus* DimName(const char* function, const std::vector<KilnTensorSignature>& list,
                    const char* what, int32_t index, int32_t axis, const char** out_dim) {
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: %s index %d out of range (the model has %zu)",
                              function, what, static_cast<int>(index), list.size());
  }
  const KilnTensorSignature& s = list[index];
  if (!s.is_tensor) {
    return kiln_status_create(KILN_UNIMPLEMENTED, "%s: %s %d ('%s') is not a tensor", function,
                              what, static_cast<int>(index), s.name.c_str());
  }
  if (axis < 0 || static_cast<size_t>(axis) >= s.dim_names.size()) {
    return kiln_status_create(KILN_OUT_OF_RANGE,
                              "%s: axis %d out of range for %s %d ('%s'), which has %zu dims",
                              function, static_cast<int>(axis), what, static_cast<int>(index),
                              s.name.c_str(), s.dim_names.size());
  }
  *out_dim = s.dim_names[axis].c_str();
  return nullptr;
}

void ClearInfo(DLTensor* info) {
  if (info != nullptr) std::memset(info, 0, sizeof(*info));
}

}  // namespace

extern "C" {

const char* kiln_version(void) { return kiln_runtime_version(); }

void kiln_import_options_init(KilnImportOptions* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

void kiln_optimize_options_init(KilnOptimizeOptions* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->opt_level = 3;
}

void kiln_compile_options_init(KilnCompileOptions* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->opt_level = 3;
}

KilnStatus* kiln_model_load_onnx_file(const char* path, const KilnImportOptions* options,
                                      KilnModel** out_model) {
  static const char kFn[] = "kiln_model_load_onnx_file";
  if (out_model != nullptr) *out_model = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"path", path}, {"out_model", out_model}})) return st;
  kiln::onnx_frontend::ImportOptions o;
  if (KilnStatus* st = ImportOptionsFromC(kFn, options, &o)) return st;
  return Guard(kFn, [&]() -> absl::Status {
    std::vector<std::string> warnings;
    o.warnings = &warnings;
    KILN_ASSIGN_OR_RETURN(kiln::Module m, kiln::capi::ImportOnnxFile(path, o));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<KilnModel> model, MakeModel(m));
    model->warnings = WarningText(warnings);
    return PublishModel(std::move(model), out_model);
  });
}

KilnStatus* kiln_model_load_onnx_bytes(const void* data, size_t size,
                                       const KilnImportOptions* options, KilnModel** out_model) {
  static const char kFn[] = "kiln_model_load_onnx_bytes";
  if (out_model != nullptr) *out_model = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"data", data}, {"out_model", out_model}})) return st;
  kiln::onnx_frontend::ImportOptions o;
  if (KilnStatus* st = ImportOptionsFromC(kFn, options, &o)) return st;
  return Guard(kFn, [&]() -> absl::Status {
    absl::string_view bytes(static_cast<const char*>(data), size);
    std::vector<std::string> warnings;
    o.warnings = &warnings;
    KILN_ASSIGN_OR_RETURN(kiln::Module m, kiln::capi::ImportOnnxBytes(bytes, o));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<KilnModel> model, MakeModel(m));
    model->warnings = WarningText(warnings);
    return PublishModel(std::move(model), out_model);
  });
}

KilnStatus* kiln_model_parse_text(const char* text, const char* source_name,
                                  KilnModel** out_model) {
  static const char kFn[] = "kiln_model_parse_text";
  if (out_model != nullptr) *out_model = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"text", text}, {"out_model", out_model}})) return st;
  return Guard(kFn, [&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(kiln::Module m,
                          kiln::capi::ParseModelText(text, source_name != nullptr ? source_name : "<text>"));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<KilnModel> model, MakeModel(m));
    return PublishModel(std::move(model), out_model);
  });
}

KilnStatus* kiln_model_load_file(const char* path, const KilnImportOptions* options,
                                 KilnModel** out_model) {
  static const char kFn[] = "kiln_model_load_file";
  if (out_model != nullptr) *out_model = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"path", path}, {"out_model", out_model}})) return st;
  size_t n = std::strlen(path);
  if (n > 5 && std::strcmp(path + n - 5, ".onnx") == 0) {
    return kiln_model_load_onnx_file(path, options, out_model);
  }
  // A regular file only, of bounded size (ir/text_file.h): a FIFO or a
  // device is refused before anything is read.
  return Guard(kFn, [&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(kiln::Module m, kiln::capi::ParseModelFile(path));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<KilnModel> model, MakeModel(m));
    return PublishModel(std::move(model), out_model);
  });
}

void kiln_model_release(KilnModel* model) {
  if (model == nullptr) return;
  // Released twice, or never a model: reported and ignored (freed memory is
  // never touched).
  if (!kiln_handle_remove(KILN_HANDLE_MODEL, model)) {
    kiln_handle_report_dead_release("kiln_model_release", KILN_HANDLE_MODEL, model);
    return;
  }
  delete model;
}

KilnStatus* kiln_model_warnings(const KilnModel* model, const char** out_text) {
  if (out_text != nullptr) *out_text = nullptr;
  if (KilnStatus* st = RequireNonNull("kiln_model_warnings",
                                      {{"model", model}, {"out_text", out_text}})) {
    return st;
  }
  if (KilnStatus* st = RequireLiveModel("kiln_model_warnings", model)) return st;
  *out_text = model->warnings.c_str();
  return nullptr;
}

KilnStatus* kiln_model_print(const KilnModel* model, int32_t show_types, char** out_text) {
  static const char kFn[] = "kiln_model_print";
  if (out_text != nullptr) *out_text = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_text", out_text}})) return st;
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  return Guard(kFn, [&]() -> absl::Status {
    std::string text = kiln::PrintModule(model->module, {.show_types = show_types != 0});
    *out_text = MallocString(text);
    if (*out_text == nullptr) return absl::ResourceExhaustedError("out of memory");
    return absl::OkStatus();
  });
}

KilnStatus* kiln_model_num_inputs(const KilnModel* model, int32_t* out_count) {
  if (out_count != nullptr) *out_count = 0;
  if (KilnStatus* st = RequireNonNull("kiln_model_num_inputs",
                                      {{"model", model}, {"out_count", out_count}})) {
    return st;
  }
  if (KilnStatus* st = RequireLiveModel("kiln_model_num_inputs", model)) return st;
  *out_count = static_cast<int32_t>(model->inputs.size());
  return nullptr;
}

KilnStatus* kiln_model_num_outputs(const KilnModel* model, int32_t* out_count) {
  if (out_count != nullptr) *out_count = 0;
  if (KilnStatus* st = RequireNonNull("kiln_model_num_outputs",
                                      {{"model", model}, {"out_count", out_count}})) {
    return st;
  }
  if (KilnStatus* st = RequireLiveModel("kiln_model_num_outputs", model)) return st;
  *out_count = static_cast<int32_t>(model->outputs.size());
  return nullptr;
}

KilnStatus* kiln_model_input_info(const KilnModel* model, int32_t index, const char** out_name,
                                  DLTensor* out_info) {
  static const char kFn[] = "kiln_model_input_info";
  if (out_name != nullptr) *out_name = nullptr;
  ClearInfo(out_info);
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_info", out_info}})) return st;
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  KilnStatus* st = SignatureInfo(kFn, model, model->inputs, "input", index, out_info);
  if (st == nullptr && out_name != nullptr) *out_name = model->inputs[index].name.c_str();
  return st;
}

KilnStatus* kiln_model_output_info(const KilnModel* model, int32_t index, DLTensor* out_info) {
  static const char kFn[] = "kiln_model_output_info";
  ClearInfo(out_info);
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_info", out_info}})) return st;
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  return SignatureInfo(kFn, model, model->outputs, "output", index, out_info);
}

KilnStatus* kiln_model_output_name(const KilnModel* model, int32_t index, const char** out_name) {
  static const char kFn[] = "kiln_model_output_name";
  if (out_name != nullptr) *out_name = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_name", out_name}})) return st;
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  if (index < 0 || static_cast<size_t>(index) >= model->outputs.size()) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: output index %d out of range (the model "
                              "has %zu)", kFn, static_cast<int>(index), model->outputs.size());
  }
  *out_name = model->outputs[index].name.c_str();
  return nullptr;
}

KilnStatus* kiln_model_input_dim_name(const KilnModel* model, int32_t index, int32_t axis,
                                      const char** out_dim) {
  static const char kFn[] = "kiln_model_input_dim_name";
  if (out_dim != nullptr) *out_dim = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_dim", out_dim}})) return st;
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  return DimName(kFn, model->inputs, "input", index, axis, out_dim);
}

KilnStatus* kiln_model_output_dim_name(const KilnModel* model, int32_t index, int32_t axis,
                                       const char** out_dim) {
  static const char kFn[] = "kiln_model_output_dim_name";
  if (out_dim != nullptr) *out_dim = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_dim", out_dim}})) return st;
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  return DimName(kFn, model->outputs, "output", index, axis, out_dim);
}

int32_t kiln_pass_count(void) {
  try {
    kiln::passes::RegisterAllPasses();
    return static_cast<int32_t>(kiln::passes::PassRegistry::Global().Names().size());
  } catch (...) {
    return 0;
  }
}

const char* kiln_pass_name(int32_t index) {
  // The registry is filled once (RegisterAllPasses) and never changes after,
  // so the names can be kept in a function-local static.
  try {
    kiln::passes::RegisterAllPasses();
    static const std::vector<std::string>* names =
        new std::vector<std::string>(kiln::passes::PassRegistry::Global().Names());
    if (index < 0 || static_cast<size_t>(index) >= names->size()) return nullptr;
    return (*names)[index].c_str();
  } catch (...) {
    return nullptr;
  }
}

KilnStatus* kiln_model_optimize(const KilnModel* model, const KilnOptimizeOptions* options,
                                KilnModel** out_model) {
  static const char kFn[] = "kiln_model_optimize";
  if (out_model != nullptr) *out_model = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_model", out_model}})) {
    return st;
  }
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  KilnOptimizeOptions o;
  bool present = false;
  if (KilnStatus* st = ReadOptions(kFn, options, &o, &present)) return st;
  if (!present) o.opt_level = 3;
  return Guard(kFn, [&]() -> absl::Status {
    if (o.opt_level < 0 || o.opt_level > 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("options->opt_level must be 0, 1, 2 or 3, got ", o.opt_level));
    }
    kiln::passes::RegisterAllPasses();
    KILN_ASSIGN_OR_RETURN(std::vector<std::string> passes,
                          StringList("options->passes", o.passes, o.num_passes));
    KILN_ASSIGN_OR_RETURN(
        std::vector<std::string> required,
        StringList("options->required_passes", o.required_passes, o.num_required_passes));
    KILN_ASSIGN_OR_RETURN(
        std::vector<std::string> disabled,
        StringList("options->disabled_passes", o.disabled_passes, o.num_disabled_passes));
    const kiln::passes::PassRegistry& registry = kiln::passes::PassRegistry::Global();
    for (const std::string& name : required) KILN_RETURN_IF_ERROR(registry.Create(name).status());
    // Disabling a pass this build leaves out (docs/selective_builds.md) asks
    // for what already holds.
    for (const std::string& name : disabled) {
      if (!registry.IsAbsent(name)) KILN_RETURN_IF_ERROR(registry.Create(name).status());
    }
    kiln::passes::PassPtr pipeline;
    if (!passes.empty()) {
      KILN_ASSIGN_OR_RETURN(pipeline, kiln::passes::ParsePassList(absl::StrJoin(passes, ",")));
    } else {
      KILN_ASSIGN_OR_RETURN(pipeline, kiln::passes::DefaultPipeline(o.opt_level));
    }
    kiln::passes::PassContext ctx;
    ctx.opt_level = o.opt_level;
    ctx.required_passes.insert(required.begin(), required.end());
    // An explicit list means "run these": none is skipped for its level.
    ctx.required_passes.insert(passes.begin(), passes.end());
    ctx.disabled_passes.insert(disabled.begin(), disabled.end());
    if (o.after_pass != nullptr) {
      ctx.instruments.push_back(std::make_shared<CallbackInstrument>(
          o.after_pass, o.after_pass_user_data, o.after_pass_text != 0));
    }
    kiln::Module m = model->module;
    KILN_RETURN_IF_ERROR(pipeline->Run(&m, ctx).status());
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<KilnModel> result, MakeModel(m));
    return PublishModel(std::move(result), out_model);
  });
}

KilnStatus* kiln_model_to_dot(const KilnModel* model, char** out_dot) {
  static const char kFn[] = "kiln_model_to_dot";
  if (out_dot != nullptr) *out_dot = nullptr;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_dot", out_dot}})) return st;
  if (KilnStatus* st = RequireLiveModel(kFn, model)) return st;
  return Guard(kFn, [&]() -> absl::Status {
    KILN_ASSIGN_OR_RETURN(std::string dot, kiln::ModuleToDot(model->module));
    *out_dot = MallocString(dot);
    if (*out_dot == nullptr) return absl::ResourceExhaustedError("out of memory");
    return absl::OkStatus();
  });
}

}  // extern "C"
