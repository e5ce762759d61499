// File: tests/fuzz/artifact_fuzz.cc
//
// Fuzz target: the artifact loader (runtime_c, docs/artifact.md).
//  1. Every input is a whole artifact image for kiln_artifact_validate_image
//     (ELF symbol lookup, header, sizes, whole-file checksum, blob, PARAMS):
//     it returns a status or a view whose every parameter lies in the input.
//  2. When the input holds a `kiln_artifact` symbol of the size of a host
//     artifact's blob (--host_artifacts=a.so,b.so or $KILN_FUZZ_HOST_ARTIFACTS),
//     those blob bytes replace the host's blob, the file is sealed again
//     (kiln_artifact_seal_file: so the checksum is right and only the blob is
//     damaged) and kiln_artifact_load'ed; an artifact that loads gets a
//     session, zero inputs, a run and its outputs read. The host's code is
//     never changed, so whatever fails is the loader's validation (META,
//     GRAPH JSON, PARAMS) or the executor.
// Properties: nothing crashes or aborts; failures are statuses with
// messages; out-parameters are NULL after a failure.
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/artifact_format.h"
#include "kiln/artifact_writer.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

namespace {

struct Host {
  std::vector<uint8_t> image;
  uint64_t blob_offset = 0;
  uint64_t blob_size = 0;
};

std::vector<Host>& Hosts() {
  static std::vector<Host> hosts;
  return hosts;
}

// Frees `st` after checking it has a message; true when it was a failure.
bool Failed(KilnStatus* st) {
  if (st == nullptr) return false;
  const char* msg = kiln_status_message(st);
  KILN_FUZZ_CHECK(msg != nullptr && msg[0] != '\0', "a status without a message");
  kiln_status_free(st);
  return true;
}

void RunLoaded(KilnArtifact* a) {
  (void)kiln_artifact_target(a);
  (void)kiln_artifact_producer(a);
  (void)kiln_artifact_graph_json(a);
  uint64_t arena = 0, naive = 0;
  kiln_artifact_memory_stats(a, &arena, &naive);
  KilnSessionOptions so{};
  so.struct_size = sizeof(so);
  so.num_threads = 1;
  KilnSession* s = nullptr;
  if (Failed(kiln_session_create(a, &so, &s))) {
    KILN_FUZZ_CHECK(s == nullptr, "session set on failure");
    return;
  }
  std::vector<std::vector<uint8_t>> buffers;
  int32_t n_in = kiln_artifact_num_inputs(a);
  for (int32_t i = 0; i < n_in; ++i) {
    const char* name = nullptr;
    DLTensor info{};
    if (Failed(kiln_artifact_input_info(a, i, &name, &info))) continue;
    uint64_t elems = 1;
    bool small = true;
    for (int d = 0; d < info.ndim; ++d) {
      if (info.shape[d] < 0 || info.shape[d] > (1 << 24)) small = false;
      if (small) elems *= static_cast<uint64_t>(info.shape[d]);
      if (elems > (uint64_t{1} << 24)) small = false;
    }
    if (!small) continue;
    uint64_t bytes = elems * ((info.dtype.bits * info.dtype.lanes + 7u) / 8u);
    buffers.emplace_back(bytes + 64, 0);
    DLTensor x = info;
    x.data = buffers.back().data();
    x.device = {kDLCPU, 0};
    x.strides = nullptr;
    x.byte_offset = 0;
    Failed(kiln_session_set_input_index(s, i, &x));
  }
  bool ran = !Failed(kiln_session_run(s));
  kiln_fuzz::Count(ran ? "ran" : "run_error");
  if (ran) {
    int32_t n_out = kiln_artifact_num_outputs(a);
    for (int32_t i = 0; i < n_out; ++i) {
      const DLTensor* y = nullptr;
      if (!Failed(kiln_session_get_output(s, i, &y))) KILN_FUZZ_CHECK(y != nullptr, "no output");
    }
  }
  kiln_session_release(s);
}

void LoadWithBlob(const Host& host, const uint8_t* blob) {
  static uint64_t counter = 0;
  std::vector<uint8_t> image = host.image;
  memcpy(image.data() + host.blob_offset, blob, host.blob_size);
  // A fresh name each time: the dynamic loader must never see a library it
  // already has open under the same name.
  std::string path = kiln_fuzz::ScratchPath("a" + std::to_string(counter++) + ".so");
  KILN_FUZZ_CHECK(kiln_fuzz::WriteFile(path, image.data(), image.size()), "cannot write");
  if (!Failed(kiln_artifact_seal_file(path.c_str()))) {
    KilnArtifact* a = nullptr;
    KilnStatus* st = kiln_artifact_load(path.c_str(), &a);
    if (st != nullptr) {
      KILN_FUZZ_CHECK(a == nullptr, "artifact set on failure");
      Failed(st);
      kiln_fuzz::Count("load_error");
    } else {
      kiln_fuzz::Count("loaded");
      KILN_FUZZ_CHECK(a != nullptr, "success without an artifact");
      RunLoaded(a);
      kiln_artifact_release(a);
    }
  }
  unlink(path.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string list =
      kiln_fuzz::FlagOrEnv(*argc, *argv, "host_artifacts", "KILN_FUZZ_HOST_ARTIFACTS");
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    std::string path = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    start = comma == std::string::npos ? list.size() : comma + 1;
    if (path.empty()) continue;
    Host h;
    if (!kiln_fuzz::ReadFile(path, &h.image)) {
      fprintf(stderr, "artifact_fuzz: cannot read host artifact %s\n", path.c_str());
      abort();
    }
    KilnStatus* st = kiln_elf_find_symbol(h.image.data(), h.image.size(), KILN_ARTIFACT_SYMBOL,
                                          &h.blob_offset, &h.blob_size);
    if (st != nullptr) {
      fprintf(stderr, "artifact_fuzz: %s: %s\n", path.c_str(), kiln_status_message(st));
      abort();
    }
    Hosts().push_back(std::move(h));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t blob_offset = 0;
  KilnBlobView view;
  KilnStatus* st = kiln_artifact_validate_image(data, size, "<fuzz>", &blob_offset, &view);
  kiln_fuzz::Count(st == nullptr ? "image_valid" : "image_invalid");
  if (!Failed(st)) {
    KILN_FUZZ_CHECK(blob_offset < size && view.header.blob_size <= size - blob_offset,
                    "blob outside the image");
    for (uint64_t i = 0; i < view.num_params; ++i) {
      KilnBlobParam p;
      kiln_blob_param(&view, i, &p);
      const uint8_t* d = static_cast<const uint8_t*>(p.data);
      KILN_FUZZ_CHECK(d >= data && p.data_size <= static_cast<uint64_t>(data + size - d),
                      "parameter %llu outside the image", static_cast<unsigned long long>(i));
      KILN_FUZZ_CHECK(p.ndim >= 0 && p.ndim <= KILN_ARTIFACT_MAX_NDIM, "ndim %d", p.ndim);
    }
  }
  uint64_t off = 0, sym_size = 0;
  if (Failed(kiln_elf_find_symbol(data, size, KILN_ARTIFACT_SYMBOL, &off, &sym_size))) return 0;
  if (off > size || sym_size > size - off) return 0;
  for (const Host& h : Hosts()) {
    if (h.blob_size == sym_size) {
      kiln_fuzz::Count("blob_swapped");
      LoadWithBlob(h, data + off);
      break;
    }
  }
  return 0;
}
