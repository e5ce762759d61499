// File: tests/fuzz/c_api_fuzz_io.cc — ops 24-27 of the C API fuzz target
// (op bytes 240-255, the calls of C ABI versions 3-7): load a sequence /
// optional model or any built-in one with load options (keyed digests), set
// a sequence input (elements odd or right) or none, kinds and names by odd
// indices, kiln_model_evaluate on the built-in models, sequence and optional
// outputs read whole. The harness and ops 0-23 are c_api_fuzz.cc.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "tests/fuzz/c_api_fuzz_internal.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

namespace kiln_fuzz::c_api_fuzz {

void StepSequencesAndOptionals(int op, int i, int j, Input& in, State& s) {
  switch (op) {
    case 24: {  // load a sequence / optional model, or any built-in one with load options
      const bool io = in.Below(4) != 0;
      const int m = io ? 100 + static_cast<int>(in.Below(kNumIoModels))
                       : static_cast<int>(in.Below(kNumModels));
      const std::string& path = CompiledPath(m, in.Below(2) ? 3 : 0);
      if (path.empty()) break;
      KilnArtifactLoadOptions lo{};
      lo.struct_size = sizeof(lo);
      uint8_t key[40], digest[KILN_HMAC_SHA256_SIZE];
      for (uint8_t& b : key) b = in.Byte();
      for (uint8_t& b : digest) b = in.Byte();
      const bool null_options = in.Below(6) == 0;
      bool must_fail = false;
      switch (null_options ? 0 : in.Below(5)) {
        case 0:
          break;  // zero-filled: plain kiln_artifact_load
        case 1:  // a key and a digest it does not give (a random 256-bit guess)
          lo.hmac_key = key;
          lo.hmac_key_size = 1 + in.Below(sizeof key);
          lo.expected_hmac_sha256 = digest;
          must_fail = true;
          break;
        case 2:  // key without digest, or digest without key
          if (in.Below(2)) {
            lo.hmac_key = key;
            lo.hmac_key_size = sizeof key;
          } else {
            lo.expected_hmac_sha256 = digest;
          }
          must_fail = true;
          break;
        case 3:  // an empty key
          lo.hmac_key = key;
          lo.hmac_key_size = 0;
          lo.expected_hmac_sha256 = digest;
          must_fail = true;
          break;
        case 4:  // 0 is refused; a larger one is accepted, its unknown tail
                 // ignored (as for the runtime's other options: read only up
                 // to this library's sizeof, never past it)
          lo.struct_size = in.Below(2) ? 0 : sizeof(lo) + 8;
          must_fail = lo.struct_size == 0;
          break;
      }
      KilnArtifact* a = reinterpret_cast<KilnArtifact*>(0x1);
      KilnStatus* st = kiln_artifact_load_with(path.c_str(), null_options ? nullptr : &lo, &a);
      if (must_fail) KILN_FUZZ_CHECK(st != nullptr, "bad load options accepted");
      if (Failed(st)) {
        KILN_FUZZ_CHECK(a == nullptr, "out not cleared");
        break;
      }
      ReleaseArtifact(s, j, false);
      if (s.artifacts[j].artifact != nullptr) {
        kiln_artifact_release(a);
        break;
      }
      kiln_fuzz::Count(io ? "loaded_io" : "loaded");
      FillSlot(&s.artifacts[j], a);
      break;
    }
    case 25: {  // set a sequence input (elements odd or right)
      SessionSlot& ss = s.sessions[i];
      if (ss.session == nullptr) {
        MUST_FAIL(kiln_session_set_input_sequence(nullptr, "s", nullptr, 0));
        break;
      }
      const ArtifactSlot& a = s.artifacts[ss.artifact];
      if (a.inputs.empty()) break;
      const int32_t k = static_cast<int32_t>(in.Below(static_cast<uint32_t>(a.inputs.size())));
      const TensorInfo& plan = a.inputs[k];
      const uint8_t how = in.Byte();
      int32_t count = static_cast<int32_t>(how % 5);
      bool null_elements = false;
      if (how >= 250) {
        count = how == 250 ? -1 : how == 251 ? INT32_MIN : 1 << 20;
        null_elements = true;  // never a short array with a large count
      }
      std::vector<std::vector<int64_t>> shapes(null_elements ? 0 : count), strides(shapes.size());
      std::vector<std::vector<uint8_t>> bufs(shapes.size());
      std::vector<DLTensor> elems;
      bool bad = false;
      for (size_t e = 0; e < shapes.size(); ++e) {
        elems.push_back(MakeTensor(in, plan, &shapes[e], &strides[e], &bufs[e]));
        const DLTensor& t = elems.back();
        int32_t device = 0;
        std::memcpy(&device, &t.device.device_type, sizeof device);
        bad = bad || t.byte_offset >= (uint64_t{1} << 56) || t.ndim > 32 ||
              (t.shape == nullptr && t.ndim > 0) || device != kDLCPU;
      }
      const std::string name = in.Below(8) == 0 ? in.Bytes(8) : plan.name;
      KilnStatus* st = kiln_session_set_input_sequence(ss.session, name.c_str(),
                                                       null_elements ? nullptr : elems.data(), count);
      if (bad || count < 0 || (count > 0 && null_elements) || a.input_sequence[k] == 0) {
        KILN_FUZZ_CHECK(st != nullptr, "bad sequence input accepted (count %d)", count);
      }
      kiln_fuzz::Count(st == nullptr ? "sequence_set" : "sequence_refused");
      Failed(st);
      break;
    }
    case 26: {  // none inputs; kinds and names by odd indices; the interpreter
      SessionSlot& ss = s.sessions[i];
      if (ss.session != nullptr) {
        const ArtifactSlot& a = s.artifacts[ss.artifact];
        if (!a.inputs.empty()) {
          const int32_t k = static_cast<int32_t>(in.Below(static_cast<uint32_t>(a.inputs.size())));
          const std::string name = in.Below(8) == 0 ? in.Bytes(8) : a.inputs[k].name;
          KilnStatus* st = kiln_session_set_input_none(ss.session, name.c_str());
          if (a.input_optional[k] == 0) KILN_FUZZ_CHECK(st != nullptr, "none for a plain input accepted");
          kiln_fuzz::Count(st == nullptr ? "none_set" : "none_refused");
          Failed(st);
        }
        const int32_t k = in.SmallInt();
        if (a.artifact != nullptr && !a.released) {
          for (int32_t v : {kiln_artifact_input_is_sequence(a.artifact, k),
                            kiln_artifact_input_is_optional(a.artifact, k),
                            kiln_artifact_output_is_sequence(a.artifact, k),
                            kiln_artifact_output_is_optional(a.artifact, k)}) {
            KILN_FUZZ_CHECK(v == 0 || v == 1, "a kind query gave %d", v);
          }
        }
      } else {
        MUST_FAIL(kiln_session_set_input_none(nullptr, "o"));
        KILN_FUZZ_CHECK(kiln_artifact_input_is_sequence(nullptr, 0) == 0, "is_sequence(NULL)");
      }
      const KilnModel* m = s.models[i].model;
      const int32_t k = in.SmallInt(), axis = in.SmallInt();
      const char* text = reinterpret_cast<const char*>(0x1);
      if (Failed(kiln_model_output_name(m, k, &text))) KILN_FUZZ_CHECK(text == nullptr, "name not cleared");
      text = reinterpret_cast<const char*>(0x1);
      if (Failed(kiln_model_input_dim_name(m, k, axis, &text))) KILN_FUZZ_CHECK(text == nullptr, "dim not cleared");
      text = reinterpret_cast<const char*>(0x1);
      if (Failed(kiln_model_output_dim_name(m, k, axis, &text))) KILN_FUZZ_CHECK(text == nullptr, "dim not cleared");
      // The interpreter on a built-in model (small), with tensors odd or right.
      if (m == nullptr || s.models[i].builtin < 0 || in.Below(2)) break;
      int32_t n = 0;
      if (Failed(kiln_model_num_inputs(m, &n))) break;
      std::vector<TensorInfo> plans(static_cast<size_t>(n));
      for (int32_t p = 0; p < n; ++p) {
        const char* pname = nullptr;
        DLTensor info;
        if (Failed(kiln_model_input_info(m, p, &pname, &info))) break;
        plans[p].dtype = info.dtype;
        plans[p].shape.assign(info.shape, info.shape + info.ndim);
        for (int64_t& d : plans[p].shape) d = d < 0 ? 3 : d;
      }
      std::vector<std::vector<int64_t>> shapes(plans.size()), strides(plans.size());
      std::vector<std::vector<uint8_t>> bufs(plans.size());
      std::vector<DLTensor> tensors;
      for (size_t p = 0; p < plans.size(); ++p) tensors.push_back(MakeTensor(in, plans[p], &shapes[p], &strides[p], &bufs[p]));
      std::vector<const DLTensor*> ptrs;
      for (const DLTensor& t : tensors) ptrs.push_back(&t);
      const int32_t given = in.Below(8) == 0 ? in.SmallInt() : n;  // sometimes a wrong count
      DLManagedTensor** outs = reinterpret_cast<DLManagedTensor**>(0x1);
      int32_t num_outs = -7;
      KilnStatus* st = kiln_model_evaluate(m, given == n ? ptrs.data() : nullptr, given, &outs, &num_outs);
      if (given != n) KILN_FUZZ_CHECK(st != nullptr, "evaluate with %d of %d inputs accepted", given, n);
      if (Failed(st)) {
        KILN_FUZZ_CHECK(outs == nullptr && num_outs == 0, "evaluate outputs not cleared");
        break;
      }
      kiln_fuzz::Count("evaluated");
      for (int32_t o = 0; o < num_outs; ++o) {
        TouchView(&outs[o]->dl_tensor);
        outs[o]->deleter(outs[o]);
      }
      kiln_free(outs);
      break;
    }
    case 27: {  // sequence and optional outputs by odd indices
      SessionSlot& ss = s.sessions[i];
      const int32_t k = in.SmallInt(), e = in.SmallInt();
      int32_t count = -7, is_none = -7;
      if (Failed(kiln_session_get_output_sequence_length(ss.session, k, &count))) {
        KILN_FUZZ_CHECK(count == 0, "count not cleared: %d", count);
      } else {
        KILN_FUZZ_CHECK(count >= 0, "count %d", count);
        kiln_fuzz::Count("sequence_read");
        for (int32_t q = 0; q < count && q < 8; ++q) {
          const DLTensor* y = nullptr;
          if (!Failed(kiln_session_get_output_sequence_element(ss.session, k, q, &y))) TouchView(y);
        }
      }
      const DLTensor* y = reinterpret_cast<const DLTensor*>(0x1);
      if (Failed(kiln_session_get_output_sequence_element(ss.session, k, e, &y))) {
        KILN_FUZZ_CHECK(y == nullptr, "element not cleared");
      } else {
        TouchView(y);
      }
      if (Failed(kiln_session_get_output_is_none(ss.session, k, &is_none))) {
        KILN_FUZZ_CHECK(is_none == 0, "is_none not cleared: %d", is_none);
      } else {
        KILN_FUZZ_CHECK(is_none == 0 || is_none == 1, "is_none %d", is_none);
        kiln_fuzz::Count(is_none ? "output_none" : "output_some");
      }
      if (ss.session == nullptr) KILN_FUZZ_CHECK(count == 0 && is_none == 0, "NULL session answered");
      break;
    }
  }
}

}  // namespace kiln_fuzz::c_api_fuzz
