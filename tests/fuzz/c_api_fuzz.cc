// File: tests/fuzz/c_api_fuzz.cc — the C API fuzz target: its entry point and ops 0-23
//
// Fuzz target: sequences of C API calls (c_api/include/kiln/kiln.h and the
// runtime half, kiln/kiln_runtime.h). The input is a program: each step's
// first byte picks a call (parse a built-in model or a damaged copy, import
// ONNX bytes from the input, optimize with a pass list, print, emit, compile
// into a temporary folder, load, create a session, set inputs with odd
// shapes / strides / dtypes / byte offsets / devices, run, read outputs,
// profile, benchmark, release in any order), the next bytes its arguments.
// Op bytes 240-255 reach the calls of C ABI versions 3-7: models with
// sequence and optional inputs and outputs (set_input_sequence with odd
// elements and counts, set_input_none, the output's length / elements /
// is_none, the kind queries), kiln_artifact_load_with's keyed-digest options,
// output and dim names, and kiln_model_evaluate (the interpreter) on the
// built-in models with odd tensors; every view handed out is read whole.
// Misuse that docs/c_api.md says is refused is part of the repertoire (NULL
// handles and pointers, struct_size 0 or too large, shapes and dtypes not
// the plan's, byte_offset past 2^56, indices out of range, running before
// inputs are set, releasing an artifact before or twice while its sessions
// live); misuse the docs call the caller's contract (dangling handles,
// buffers smaller than their shape) is not.
// Properties: nothing crashes or aborts; every failure is a status with a
// code and a message; out-parameters are NULL (indices -1) after a failure;
// a call with a NULL handle fails.
// Compiles are slow (LLVM + the system linker), so each built-in model is
// compiled at most once per opt level per process and the artifact reused.
// This file: the harness (compile cache, slots, odd tensors) and ops 0-23;
// ops 24-27 (sequences, optionals, evaluate) are c_api_fuzz_io.cc, what both
// share c_api_fuzz_internal.h.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>


#include "kiln/kiln.h"
#include "tests/fuzz/c_api_fuzz_internal.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

namespace kiln_fuzz::c_api_fuzz {
namespace {

const int64_t kOddDims[] = {0, 1, 2, 3, 4, -1, -2, 7, 1 << 20, INT32_MAX, INT64_MAX, INT64_MIN};
const uint64_t kHugeOffsets[] = {uint64_t{1} << 56, (uint64_t{1} << 56) + 1, uint64_t{1} << 63,
                                 UINT64_MAX, UINT64_MAX - 3};

}  // namespace

// Checks and frees a status; true when the call failed.
bool Failed(KilnStatus* st) {
  if (st == nullptr) return false;
  KILN_FUZZ_CHECK(kiln_status_code(st) != KILN_OK, "a status object with code OK");
  const char* msg = kiln_status_message(st);
  KILN_FUZZ_CHECK(msg != nullptr && msg[0] != '\0', "a status without a message (code %d)",
                  static_cast<int>(kiln_status_code(st)));
  kiln_status_free(st);
  return true;
}

// The compiled artifact of built-in model `m` at `opt_level`, compiled once.
// (m >= 100: kIoModels[m - 100].)
const std::string& CompiledPath(int m, int opt_level) {
  static std::map<std::pair<int, int>, std::string> cache;
  auto key = std::make_pair(m, opt_level);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::string path = kiln_fuzz::ScratchPath("m" + std::to_string(m) + "_o" +
                                            std::to_string(opt_level) + ".so");
  KilnModel* model = nullptr;
  const char* text = m >= 100 ? kIoModels[m - 100] : kModels[m];
  KILN_FUZZ_CHECK(!Failed(kiln_model_parse_text(text, "builtin", &model)), "builtin %d", m);
  KilnCompileOptions co;
  kiln_compile_options_init(&co);
  co.opt_level = opt_level;
  co.num_threads = 1;
  KilnCompileReport report{};
  report.struct_size = sizeof(report);
  KilnStatus* st = kiln_model_compile(model, &co, path.c_str(), &report);
  if (st != nullptr) {
    fprintf(stderr, "c_api_fuzz: built-in model %d does not compile: %s\n", m,
            kiln_status_message(st));
    path.clear();
  }
  Failed(st);
  kiln_model_release(model);
  return cache[key] = path;
}

namespace {

int LiveSessions(const State& s, int artifact) {
  int n = 0;
  for (const SessionSlot& ss : s.sessions) n += ss.session != nullptr && ss.artifact == artifact;
  return n;
}

void ReleaseModel(State& s, int i) {
  kiln_model_release(s.models[i].model);
  s.models[i] = ModelSlot{};
}

void ReleaseSession(State& s, int i) {
  SessionSlot& ss = s.sessions[i];
  if (ss.session == nullptr) return;
  kiln_session_release(ss.session);
  int a = ss.artifact;
  ss = SessionSlot{};
  if (a >= 0 && s.artifacts[a].released && LiveSessions(s, a) == 0) s.artifacts[a] = ArtifactSlot{};
}

}  // namespace

void ReleaseArtifact(State& s, int i, bool twice) {
  ArtifactSlot& a = s.artifacts[i];
  if (a.artifact == nullptr) return;
  if (!a.released) {
    kiln_artifact_release(a.artifact);
    a.released = true;
  } else if (twice && LiveSessions(s, i) > 0) {
    kiln_artifact_release(a.artifact);  // documented: ignored while sessions live
  }
  if (LiveSessions(s, i) == 0) a = ArtifactSlot{};
}

namespace {

void PutModel(State& s, int i, KilnModel* m, int builtin) {
  ReleaseModel(s, i);
  s.models[i].model = m;
  s.models[i].builtin = builtin;
}

bool ReadInfo(const KilnArtifact* a, bool input, int32_t i, TensorInfo* out) {
  const char* name = nullptr;
  DLTensor info;
  memset(&info, 0x5a, sizeof(info));
  KilnStatus* st = input ? kiln_artifact_input_info(a, i, &name, &info)
                         : kiln_artifact_output_info(a, i, &name, &info);
  if (Failed(st)) {
    KILN_FUZZ_CHECK(name == nullptr && info.shape == nullptr && info.data == nullptr,
                    "info not cleared on failure");
    return false;
  }
  KILN_FUZZ_CHECK(name != nullptr && info.ndim >= 0 && (info.ndim == 0 || info.shape != nullptr),
                  "bad info");
  out->name = name;
  out->dtype = info.dtype;
  out->shape.assign(info.shape, info.shape + info.ndim);
  // A VM artifact's dim that is not static (-1) takes any size: the plan
  // the fuzzer makes tensors from gives it one.
  for (int64_t& d : out->shape) {
    KILN_FUZZ_CHECK(d >= -1, "dim %lld", static_cast<long long>(d));
    if (d < 0) d = 3;
  }
  return true;
}

}  // namespace

// Records loaded artifact `a` in `slot`: its inputs' and outputs' info and kinds.
void FillSlot(ArtifactSlot* slot, KilnArtifact* a) {
  slot->artifact = a;
  for (int32_t k = 0; k < kiln_artifact_num_inputs(a); ++k) {
    TensorInfo t;
    KILN_FUZZ_CHECK(ReadInfo(a, true, k, &t), "input %d", k);
    slot->inputs.push_back(t);
    const int seq = kiln_artifact_input_is_sequence(a, k), opt = kiln_artifact_input_is_optional(a, k);
    KILN_FUZZ_CHECK((seq == 0 || seq == 1) && (opt == 0 || opt == 1), "input %d kinds %d %d", k, seq, opt);
    slot->input_sequence.push_back(seq);
    slot->input_optional.push_back(opt);
  }
  for (int32_t k = 0; k < kiln_artifact_num_outputs(a); ++k) {
    TensorInfo t;
    KILN_FUZZ_CHECK(ReadInfo(a, false, k, &t), "output %d", k);
    slot->outputs.push_back(t);
    const int seq = kiln_artifact_output_is_sequence(a, k), opt = kiln_artifact_output_is_optional(a, k);
    KILN_FUZZ_CHECK((seq == 0 || seq == 1) && (opt == 0 || opt == 1), "output %d kinds %d %d", k, seq, opt);
    slot->output_sequence.push_back(seq);
    slot->output_optional.push_back(opt);
  }
}

// Every byte of a view the library hands out is read (a sanitizer then sees
// a view that is not memory), and its fields are sane.
void TouchView(const DLTensor* y) {
  KILN_FUZZ_CHECK(y != nullptr && y->ndim >= 0 && y->ndim <= 32 && (y->ndim == 0 || y->shape != nullptr) &&
                      y->byte_offset == 0 && y->strides == nullptr,
                  "bad view");
  uint64_t n = (y->dtype.bits * y->dtype.lanes + 7u) / 8u;
  for (int32_t d = 0; d < y->ndim; ++d) {
    KILN_FUZZ_CHECK(y->shape[d] >= 0 && y->shape[d] < (int64_t{1} << 32), "view dim %lld",
                    static_cast<long long>(y->shape[d]));
    n *= static_cast<uint64_t>(y->shape[d]);
  }
  KILN_FUZZ_CHECK(n == 0 || y->data != nullptr, "view without data");
  volatile uint8_t sink = 0;
  for (uint64_t b = 0; b < n; ++b) sink = sink ^ static_cast<const uint8_t*>(y->data)[b];
  (void)sink;
}

// A tensor for `plan` as the fuzzer wants it (odd or right), its data in *buf.
DLTensor MakeTensor(Input& in, const TensorInfo& plan, std::vector<int64_t>* shape,
                    std::vector<int64_t>* strides, std::vector<uint8_t>* buf) {
  DLTensor t{};
  *shape = plan.shape;
  t.dtype = plan.dtype;
  t.device = {kDLCPU, 0};
  uint64_t offset = 0;
  bool null_data = false, null_shape = false;
  int damage = in.Byte();
  if (damage >= 128) {  // one kind of damage, sometimes two
    for (int k = 0; k < 1 + (damage >= 240); ++k) {
      switch (in.Below(10)) {
        case 0:  // one dim changed
          if (!shape->empty()) (*shape)[in.Below(shape->size())] = kOddDims[in.Below(12)];
          break;
        case 1:  // a dim more
          shape->push_back(kOddDims[in.Below(12)]);
          break;
        case 2:  // a dim fewer
          if (!shape->empty()) shape->pop_back();
          break;
        case 3:  // another dtype
          t.dtype.code = static_cast<uint8_t>(in.Below(8));
          t.dtype.bits = static_cast<uint8_t>(in.Byte());
          t.dtype.lanes = static_cast<uint16_t>(in.Below(3));
          break;
        case 4: {
          // Any int, as a C caller may pass: written as bytes, because in C++
          // a value outside DLDeviceType's enumerators is undefined to hold.
          const int32_t device = static_cast<int32_t>(1 + in.Below(16));
          static_assert(sizeof(t.device.device_type) == sizeof(device), "DLDeviceType is an int");
          std::memcpy(&t.device.device_type, &device, sizeof device);
          t.device.device_id = static_cast<int32_t>(in.SmallInt());
          break;
        }
        case 5:
          offset = kHugeOffsets[in.Below(5)];
          break;
        case 6:
          null_data = true;
          break;
        case 7:
          null_shape = true;
          break;
        case 8: {  // strides, compact or not
          strides->assign(shape->size(), 1);
          for (size_t d = 0; d < shape->size(); ++d) (*strides)[d] = kOddDims[in.Below(12)];
          break;
        }
        case 9:
          shape->assign(40, 1);  // ndim over the loader's limit of 32
          break;
      }
    }
  } else if (damage >= 64) {  // right, with a small offset or compact strides
    offset = in.Below(2) ? std::min<uint64_t>(in.Byte(), 128) : 0;
    if (in.Below(2)) {
      strides->assign(shape->size(), 1);
      for (size_t d = shape->size(); d-- > 1;) (*strides)[d - 1] = (*strides)[d] * (*shape)[d];
    }
  }
  // Room for the plan's shape at any offset used (huge offsets must be refused).
  // A buffer smaller than its tensor's shape is the caller's contract, not
  // misuse kiln can see: where a damaged shape could be taken (a symbolic
  // dim of a VM input, kiln_model_evaluate), the buffer holds it too, up to
  // 64 MiB; past that the data pointer is NULL (refused).
  uint64_t room = plan.Bytes() + 256;
  {
    constexpr uint64_t kCap = uint64_t{1} << 26;
    uint64_t want = (t.dtype.bits * t.dtype.lanes + 7u) / 8u;
    bool fits = true, too_big = false;
    for (int64_t d : *shape) {
      if (d < 0) {  // refused by every entry point
        fits = false;
        break;
      }
      if (d > 0 && want > kCap / static_cast<uint64_t>(d)) {
        fits = false;
        too_big = true;
        break;
      }
      want *= static_cast<uint64_t>(d);
    }
    if (fits && want + 256 > room) room = want + 256;
    if (too_big) null_data = true;
  }
  buf->assign(room, static_cast<uint8_t>(in.Byte()));
  t.ndim = static_cast<int32_t>(shape->size());
  t.shape = null_shape ? nullptr : shape->data();
  t.strides = strides->empty() ? nullptr : strides->data();
  t.data = null_data ? nullptr : buf->data();
  t.byte_offset = offset;
  return t;
}

namespace {

void Step(Input& in, State& s) {
  // Bytes below 240 pick ops 0-23 as they always have (the seeds' programs);
  // 240-255 the sequence / optional ops 24-27.
  const uint8_t op_byte = in.Byte();
  int op = op_byte < 240 ? op_byte % 24 : 24 + (op_byte - 240) % 4;
  int i = static_cast<int>(in.Below(kSlots));
  int j = static_cast<int>(in.Below(kSlots));
  switch (op) {
    case 0: {  // parse a built-in model
      int m = static_cast<int>(in.Below(kNumModels));
      KilnModel* model = reinterpret_cast<KilnModel*>(0x1);
      if (Failed(kiln_model_parse_text(kModels[m], in.Below(2) ? "builtin" : nullptr, &model))) {
        KILN_FUZZ_CHECK(model == nullptr, "out_model not cleared");
        return;
      }
      PutModel(s, i, model, m);
      break;
    }
    case 1: {  // parse a damaged built-in model
      std::string text = kModels[in.Below(kNumModels)];
      for (int k = 1 + static_cast<int>(in.Below(3)); k > 0; --k) {
        size_t at = in.Below(static_cast<uint32_t>(text.size()));
        uint8_t v = in.Byte();
        if (v < 32) text.erase(at, 1 + v % 4);
        else text[at] = static_cast<char>(v);
      }
      KilnModel* model = nullptr;
      if (!Failed(kiln_model_parse_text(text.c_str(), "damaged", &model))) PutModel(s, i, model, -1);
      else KILN_FUZZ_CHECK(model == nullptr, "out_model not cleared");
      break;
    }
    case 2: {  // ONNX bytes from the input
      std::string bytes = in.Bytes(4096);
      KilnModel* model = nullptr;
      KilnImportOptions io;
      kiln_import_options_init(&io);
      int64_t dims[2] = {kOddDims[in.Below(12)], 3};
      KilnInputShape shape{"x", static_cast<int32_t>(in.Below(3)), dims};
      if (in.Below(2)) {
        io.input_shapes = &shape;
        io.num_input_shapes = 1;
      }
      io.external_data_dir = "/nonexistent-kiln-fuzz";
      if (in.Below(8) == 0) io.struct_size = in.Below(2) ? 0 : sizeof(io) + 8;
      KilnStatus* st = kiln_model_load_onnx_bytes(bytes.data(), bytes.size(), &io, &model);
      if (io.struct_size != sizeof(io)) KILN_FUZZ_CHECK(st != nullptr, "bad struct_size accepted");
      if (!Failed(st)) {
        kiln_fuzz::Count("onnx_imported");
        PutModel(s, i, model, -1);
      } else {
        KILN_FUZZ_CHECK(model == nullptr, "out_model not cleared");
      }
      break;
    }
    case 3: {  // optimize
      KilnOptimizeOptions oo;
      kiln_optimize_options_init(&oo);
      oo.opt_level = in.SmallInt();
      std::vector<const char*> passes;
      int32_t n = kiln_pass_count();
      for (int k = static_cast<int>(in.Below(4)); k > 0; --k) {
        int32_t p = static_cast<int32_t>(in.Below(static_cast<uint32_t>(n + 2)));
        const char* name = kiln_pass_name(p);
        passes.push_back(name != nullptr ? name : "NoSuchPass");
      }
      int how = in.Below(4);
      if (how == 1) {
        oo.passes = passes.data();
        oo.num_passes = static_cast<int32_t>(passes.size());
      } else if (how == 2) {
        oo.disabled_passes = passes.data();
        oo.num_disabled_passes = static_cast<int32_t>(passes.size());
      } else if (how == 3) {
        oo.required_passes = passes.data();
        oo.num_required_passes = static_cast<int32_t>(passes.size());
      }
      if (in.Below(16) == 0) oo.struct_size = 0;
      KilnModel* out = reinterpret_cast<KilnModel*>(0x1);
      KilnStatus* st = kiln_model_optimize(s.models[i].model, &oo, &out);
      if (s.models[i].model == nullptr || oo.struct_size == 0) {
        KILN_FUZZ_CHECK(st != nullptr, "optimize of a NULL model or struct_size 0 accepted");
      }
      if (!Failed(st)) {
        kiln_fuzz::Count("optimized");
        PutModel(s, j, out, -1);
      } else {
        KILN_FUZZ_CHECK(out == nullptr, "out_model not cleared");
      }
      break;
    }
    case 4: {  // print, warnings, dot
      const KilnModel* m = s.models[i].model;
      char* text = reinterpret_cast<char*>(0x1);
      KilnStatus* st = kiln_model_print(m, static_cast<int32_t>(in.Below(2)), &text);
      if (m == nullptr) KILN_FUZZ_CHECK(st != nullptr, "print(NULL) accepted");
      if (!Failed(st)) KILN_FUZZ_CHECK(text != nullptr, "no text");
      else KILN_FUZZ_CHECK(text == nullptr, "text not cleared");
      kiln_free(text);
      const char* w = nullptr;
      if (!Failed(kiln_model_warnings(m, &w))) KILN_FUZZ_CHECK(w != nullptr, "no warnings text");
      char* dot = nullptr;
      if (!Failed(kiln_model_to_dot(m, &dot))) KILN_FUZZ_CHECK(dot != nullptr, "no dot");
      kiln_free(dot);
      break;
    }
    case 5: {  // inputs and outputs of a model
      const KilnModel* m = s.models[i].model;
      int32_t n_in = -7, n_out = -7;
      bool ok_in = !Failed(kiln_model_num_inputs(m, &n_in));
      bool ok_out = !Failed(kiln_model_num_outputs(m, &n_out));
      if (m == nullptr) KILN_FUZZ_CHECK(!ok_in && !ok_out, "NULL model accepted");
      int32_t k = in.SmallInt();
      const char* name = nullptr;
      DLTensor info;
      Failed(kiln_model_input_info(m, k, &name, &info));
      Failed(kiln_model_output_info(m, k, &info));
      if (ok_in && (k < 0 || k >= n_in)) MUST_FAIL(kiln_model_input_info(m, k, &name, &info));
      if (ok_out && (k < 0 || k >= n_out)) MUST_FAIL(kiln_model_output_info(m, k, &info));
      break;
    }
    case 6: {  // emit a stage as text
      const ModelSlot& ms = s.models[i];
      KilnCompileOptions co;
      kiln_compile_options_init(&co);
      co.opt_level = in.SmallInt();
      co.num_threads = 1;
      int kind = static_cast<int>(in.Below(6));  // 4, 5: unknown kinds
      // LLVM IR and assembly only for the small built-in models (cost).
      if ((kind == 2 || kind == 3) && ms.builtin < 0) kind = 1;
      char* text = reinterpret_cast<char*>(0x1);
      KilnStatus* st = kiln_model_emit(ms.model, &co, static_cast<KilnEmitKind>(kind), &text, nullptr);
      if (kind > 3 || ms.model == nullptr) KILN_FUZZ_CHECK(st != nullptr, "bad emit accepted");
      if (Failed(st)) KILN_FUZZ_CHECK(text == nullptr, "text not cleared");
      kiln_free(text);
      break;
    }
    case 7: {  // compile, refused ways (cheap: checked before any codegen)
      const KilnModel* m = s.models[i].model;
      KilnCompileOptions co;
      kiln_compile_options_init(&co);
      KilnCompileReport report{};
      report.struct_size = sizeof(report);
      std::string path = kiln_fuzz::ScratchPath("refused.so");
      switch (in.Below(4)) {
        case 0:
          MUST_FAIL(kiln_model_compile(nullptr, &co, path.c_str(), &report));
          break;
        case 1:
          if (m != nullptr) MUST_FAIL(kiln_model_compile(m, &co, nullptr, &report));
          break;
        case 2:
          co.struct_size = in.Below(2) ? 0 : sizeof(co) + 8;
          if (m != nullptr) MUST_FAIL(kiln_model_compile(m, &co, path.c_str(), &report));
          break;
        case 3:
          report.struct_size = in.Below(2) ? 0 : sizeof(report) + 8;
          if (m != nullptr) MUST_FAIL(kiln_model_compile(m, &co, path.c_str(), &report));
          break;
      }
      break;
    }
    case 8: {  // load a compiled built-in model (compiled once, cached)
      int m = s.models[i].builtin >= 0 ? s.models[i].builtin : static_cast<int>(in.Below(kNumModels));
      const std::string& path = CompiledPath(m, in.Below(2) ? 3 : 0);
      if (path.empty()) break;  // a built-in model that did not compile
      KilnArtifact* a = reinterpret_cast<KilnArtifact*>(0x1);
      if (Failed(kiln_artifact_load(path.c_str(), &a))) {
        KILN_FUZZ_CHECK(a == nullptr, "out not cleared");
        break;
      }
      ReleaseArtifact(s, j, false);
      if (s.artifacts[j].artifact != nullptr) {  // still used by sessions: drop the new one
        kiln_artifact_release(a);
        break;
      }
      kiln_fuzz::Count("loaded");
      FillSlot(&s.artifacts[j], a);
      break;
    }
    case 9: {  // load what is not an artifact
      const char* paths[] = {"/nonexistent-kiln-fuzz.so", "/", "/dev/null", "", nullptr};
      std::string junk = kiln_fuzz::ScratchPath("junk.so");
      std::string bytes = in.Bytes(1024);
      kiln_fuzz::WriteFile(junk, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      int k = static_cast<int>(in.Below(6));
      const char* p = k < 5 ? paths[k] : junk.c_str();
      KilnArtifact* a = reinterpret_cast<KilnArtifact*>(0x1);
      KilnStatus* st = kiln_artifact_load(p, &a);
      if (k < 5) KILN_FUZZ_CHECK(st != nullptr, "loading %s accepted", p ? p : "NULL");
      if (Failed(st)) KILN_FUZZ_CHECK(a == nullptr, "out not cleared");
      else kiln_artifact_release(a);
      break;
    }
    case 10: {  // artifact queries
      const ArtifactSlot& a = s.artifacts[i];
      if (a.artifact == nullptr || a.released) {
        const char* name = nullptr;
        DLTensor info;
        MUST_FAIL(kiln_artifact_input_info(nullptr, 0, &name, &info));
        int32_t index = 5;
        MUST_FAIL(kiln_artifact_input_index(nullptr, "x", &index));
        KILN_FUZZ_CHECK(index == -1, "index not -1");
        break;
      }
      (void)kiln_artifact_target(a.artifact);
      (void)kiln_artifact_producer(a.artifact);
      (void)kiln_artifact_graph_json(a.artifact);
      (void)kiln_artifact_num_nodes(a.artifact);
      uint64_t arena, naive;
      kiln_artifact_memory_stats(a.artifact, &arena, &naive);
      int32_t k = in.SmallInt();
      TensorInfo t;
      bool ok = ReadInfo(a.artifact, true, k, &t);
      KILN_FUZZ_CHECK(ok == (k >= 0 && k < static_cast<int32_t>(a.inputs.size())), "input_info(%d)", k);
      ok = ReadInfo(a.artifact, false, k, &t);
      KILN_FUZZ_CHECK(ok == (k >= 0 && k < static_cast<int32_t>(a.outputs.size())), "output_info(%d)", k);
      std::string name = in.Below(2) && !a.inputs.empty() ? a.inputs[0].name : in.Bytes(16);
      int32_t index = 5;
      if (Failed(kiln_artifact_input_index(a.artifact, name.c_str(), &index))) {
        KILN_FUZZ_CHECK(index == -1, "index not -1");
      }
      if (Failed(kiln_artifact_output_index(a.artifact, name.c_str(), &index))) {
        KILN_FUZZ_CHECK(index == -1, "index not -1");
      }
      break;
    }
    case 11: {  // session create
      ArtifactSlot& a = s.artifacts[i];
      if (s.sessions[j].session != nullptr) ReleaseSession(s, j);
      KilnSessionOptions so{};
      so.struct_size = in.Below(8) == 0 ? (in.Below(2) ? 0 : sizeof(so) + 64) : sizeof(so);
      so.num_threads = static_cast<int32_t>(in.Below(4));
      std::vector<uint8_t> big(sizeof(so) + 64, 0);  // room for a larger struct_size
      memcpy(big.data(), &so, sizeof(so));
      KilnSession* sess = reinterpret_cast<KilnSession*>(0x1);
      const KilnArtifact* art = (a.artifact == nullptr || a.released) ? nullptr : a.artifact;
      KilnStatus* st = kiln_session_create(art, in.Below(4) == 0 ? nullptr
                                                                 : reinterpret_cast<KilnSessionOptions*>(big.data()),
                                           &sess);
      if (art == nullptr) KILN_FUZZ_CHECK(st != nullptr, "session of a NULL artifact");
      if (Failed(st)) {
        KILN_FUZZ_CHECK(sess == nullptr, "out not cleared");
        break;
      }
      kiln_fuzz::Count("session");
      s.sessions[j].session = sess;
      s.sessions[j].artifact = i;
      break;
    }
    case 12:
    case 13:
    case 14: {  // set an input (copy, zero copy, by index)
      SessionSlot& ss = s.sessions[i];
      if (ss.session == nullptr) {
        DLTensor t{};
        MUST_FAIL(kiln_session_set_input(nullptr, "x", &t));
        break;
      }
      const ArtifactSlot& a = s.artifacts[ss.artifact];
      if (a.inputs.empty()) break;
      int32_t k = in.Below(8) == 0 ? in.SmallInt() : static_cast<int32_t>(in.Below(a.inputs.size()));
      const TensorInfo& plan = a.inputs[k >= 0 && k < static_cast<int32_t>(a.inputs.size()) ? k : 0];
      std::vector<int64_t> shape, strides;
      std::vector<uint8_t> buf;
      DLTensor t = MakeTensor(in, plan, &shape, &strides, &buf);
      KilnStatus* st = nullptr;
      if (op == 12) {
        std::string name = in.Below(8) == 0 ? in.Bytes(8) : plan.name;
        st = kiln_session_set_input(ss.session, name.c_str(), in.Below(16) == 0 ? nullptr : &t);
      } else if (op == 13) {
        st = kiln_session_set_input_zero_copy(ss.session, plan.name.c_str(), &t);
        ss.keep.push_back(std::move(buf));  // read in place until the session goes
      } else {
        st = kiln_session_set_input_index(ss.session, k, &t);
      }
      if (t.byte_offset >= (uint64_t{1} << 56)) KILN_FUZZ_CHECK(st != nullptr, "huge byte_offset accepted");
      if (t.ndim > 32 || (t.shape == nullptr && t.ndim > 0)) KILN_FUZZ_CHECK(st != nullptr, "bad ndim/shape accepted");
      int32_t device = 0;
      std::memcpy(&device, &t.device.device_type, sizeof device);
      if (device != kDLCPU) KILN_FUZZ_CHECK(st != nullptr, "non-CPU tensor accepted");
      kiln_fuzz::Count(st == nullptr ? "input_set" : "input_refused");
      Failed(st);
      break;
    }
    case 15: {  // run
      SessionSlot& ss = s.sessions[i];
      KilnStatus* st = kiln_session_run(ss.session);
      if (ss.session == nullptr) KILN_FUZZ_CHECK(st != nullptr, "run(NULL) accepted");
      if (ss.session != nullptr) kiln_fuzz::Count(st == nullptr ? "ran" : "run_refused");
      Failed(st);
      break;
    }
    case 16: {  // read an output three ways
      SessionSlot& ss = s.sessions[i];
      int32_t k = in.SmallInt();
      const DLTensor* y = reinterpret_cast<const DLTensor*>(0x1);
      KilnStatus* st = kiln_session_get_output(ss.session, k, &y);
      if (Failed(st)) {
        KILN_FUZZ_CHECK(y == nullptr, "out not cleared");
      } else {
        KILN_FUZZ_CHECK(y != nullptr && y->byte_offset == 0 && y->strides == nullptr, "bad output");
      }
      if (ss.session == nullptr) break;
      const ArtifactSlot& a = s.artifacts[ss.artifact];
      if (a.outputs.empty()) break;
      const TensorInfo& plan = a.outputs[k >= 0 && k < static_cast<int32_t>(a.outputs.size()) ? k : 0];
      std::vector<int64_t> shape, strides;
      std::vector<uint8_t> buf;
      DLTensor dst = MakeTensor(in, plan, &shape, &strides, &buf);
      st = kiln_session_copy_output(ss.session, k, &dst);
      if (dst.byte_offset >= (uint64_t{1} << 56)) KILN_FUZZ_CHECK(st != nullptr, "huge byte_offset accepted");
      Failed(st);
      DLManagedTensor* mt = reinterpret_cast<DLManagedTensor*>(0x1);
      if (Failed(kiln_session_get_output_dlpack(ss.session, k, &mt))) {
        KILN_FUZZ_CHECK(mt == nullptr, "out not cleared");
      } else {
        KILN_FUZZ_CHECK(mt != nullptr && mt->deleter != nullptr, "no deleter");
        mt->deleter(mt);
      }
      break;
    }
    case 17: {  // profile
      SessionSlot& ss = s.sessions[i];
      KilnProfileOptions po{};
      po.struct_size = sizeof(po);
      po.warmup = static_cast<int32_t>(in.Below(2));
      po.repeat = static_cast<int32_t>(in.Below(3));
      KilnProfile* p = reinterpret_cast<KilnProfile*>(0x1);
      if (Failed(kiln_session_profile_with(ss.session, in.Below(2) ? &po : nullptr, &p))) {
        KILN_FUZZ_CHECK(p == nullptr, "out not cleared");
        break;
      }
      int32_t n = kiln_profile_num_nodes(p);
      (void)kiln_profile_total_us(p);
      const char *name = nullptr, *opname = nullptr;
      double us = 0;
      int32_t k = in.SmallInt();
      KilnStatus* st = kiln_profile_node(p, k, &name, &opname, &us);
      if (k < 0 || k >= n) KILN_FUZZ_CHECK(st != nullptr, "profile node %d of %d", k, n);
      Failed(st);
      char* text = nullptr;
      if (!Failed(kiln_profile_table(p, &text))) KILN_FUZZ_CHECK(text != nullptr, "no table");
      kiln_free(text);
      text = nullptr;
      if (!Failed(kiln_profile_chrome_trace(p, &text))) KILN_FUZZ_CHECK(text != nullptr, "no trace");
      kiln_free(text);
      kiln_profile_release(p);
      break;
    }
    case 18: {  // benchmark
      SessionSlot& ss = s.sessions[i];
      KilnBenchmarkOptions bo{};
      bo.struct_size = in.Below(8) == 0 ? 0 : sizeof(bo);
      bo.warmup = static_cast<int32_t>(in.Below(2));
      bo.repeat = 1 + static_cast<int32_t>(in.Below(2));
      KilnBenchmarkResult r;
      char* line = reinterpret_cast<char*>(0x1);
      KilnStatus* st = kiln_session_benchmark(ss.session, &bo, in.Below(2) ? &r : nullptr,
                                              in.Below(2) ? &line : nullptr);
      if (bo.struct_size == 0 || ss.session == nullptr) KILN_FUZZ_CHECK(st != nullptr, "bad benchmark accepted");
      if (Failed(st)) break;
      if (line != reinterpret_cast<char*>(0x1)) kiln_free(line);
      break;
    }
    case 19:
      ReleaseModel(s, i);
      break;
    case 20:
      ReleaseArtifact(s, i, in.Below(2));
      break;
    case 21:
      ReleaseSession(s, i);
      break;
    case 22: {  // the release functions and statuses accept NULL
      kiln_model_release(nullptr);
      kiln_artifact_release(nullptr);
      kiln_session_release(nullptr);
      kiln_profile_release(nullptr);
      kiln_free(nullptr);
      kiln_status_free(nullptr);
      KILN_FUZZ_CHECK(kiln_status_code(nullptr) == KILN_OK, "code(NULL)");
      MUST_FAIL(kiln_model_parse_text(nullptr, nullptr, nullptr));
      KilnModel* m = nullptr;
      MUST_FAIL(kiln_model_parse_text(nullptr, "x", &m));
      MUST_FAIL(kiln_model_load_onnx_bytes(nullptr, 3, nullptr, &m));
      MUST_FAIL(kiln_artifact_load("x.so", nullptr));
      MUST_FAIL(kiln_session_create(nullptr, nullptr, nullptr));
      break;
    }
    case 23: {  // debug dump (files in the scratch folder)
      SessionSlot& ss = s.sessions[i];
      if (ss.session == nullptr) break;
      KilnProfileOptions po{};
      po.struct_size = sizeof(po);
      po.skip_tensors = static_cast<int32_t>(in.Below(2));
      std::string dir = kiln_fuzz::ScratchPath("dump");
      Failed(kiln_session_debug_dump_with(ss.session, dir.c_str(), &po));
      break;
    }
    case 24:
    case 25:
    case 26:
    case 27:
      StepSequencesAndOptionals(op, i, j, in, s);
      break;
  }
}

}  // namespace
}  // namespace kiln_fuzz::c_api_fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln_fuzz::c_api_fuzz;  // NOLINT: the harness, in this function only
  Input in(data, size);
  State s;
  for (int steps = 0; !in.done() && steps < 64; ++steps) Step(in, s);
  // Whatever is left, released in an order the input picks.
  bool artifacts_first = in.Below(2);
  if (artifacts_first) {
    for (int i = 0; i < kSlots; ++i) ReleaseArtifact(s, i, false);
  }
  for (int i = 0; i < kSlots; ++i) ReleaseSession(s, i);
  for (int i = 0; i < kSlots; ++i) ReleaseArtifact(s, i, false);
  for (int i = 0; i < kSlots; ++i) ReleaseModel(s, i);
  return 0;
}
