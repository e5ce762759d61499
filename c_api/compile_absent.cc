// A build without a code generator (docs/selective_builds.md,
// c_api/variants.bzl with codegens = []): it imports, prints and optimizes
// models, and kiln_model_compile / kiln_model_emit say that compiling is not
// in the build. None of lowering or LLVM is linked. compile_api.cc is the
// build with LLVM.
#include <cstring>

#include "c_api/api_internal.h"
#include "kiln/kiln.h"

namespace {

constexpr char kAbsent[] =
    "%s: no code generator is in this build (a selective build without LLVM; "
    "docs/selective_builds.md): it imports, prints and optimizes models; compile them with a "
    "build that has LLVM";

}  // namespace

extern "C" {

KilnStatus* kiln_model_compile(const KilnModel* model, const KilnCompileOptions* options,
                               const char* path, KilnCompileReport* report) {
  static const char kFn[] = "kiln_model_compile";
  if (KilnStatus* st = kiln::capi::ClearReport(kFn, report)) return st;
  if (KilnStatus* st = kiln::capi::RequireNonNull(kFn, {{"model", model}, {"path", path}}))
    return st;
  if (KilnStatus* st = kiln::capi::RequireLiveModel(kFn, model)) return st;
  (void)options;
  return kiln_status_create(KILN_UNIMPLEMENTED, kAbsent, kFn);
}

KilnStatus* kiln_model_emit(const KilnModel* model, const KilnCompileOptions* options,
                            KilnEmitKind kind, char** out_text, KilnCompileReport* report) {
  static const char kFn[] = "kiln_model_emit";
  if (out_text != nullptr) *out_text = nullptr;
  if (KilnStatus* st = kiln::capi::ClearReport(kFn, report)) return st;
  if (KilnStatus* st = kiln::capi::RequireNonNull(kFn, {{"model", model}, {"out_text", out_text}}))
    return st;
  if (KilnStatus* st = kiln::capi::RequireLiveModel(kFn, model)) return st;
  (void)options;
  (void)kind;
  return kiln_status_create(KILN_UNIMPLEMENTED, kAbsent, kFn);
}

}  // extern "C"
