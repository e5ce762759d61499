// File: tests/vm/c_api_test_util.h
//
// What the tests that drive kiln through its C API (tests/vm,
// tests/differential) each wrote out: a path in the test's scratch folder, a
// status as text (freed), a DLTensor view of a HostTensor, and text IR
// compiled into an artifact.
//
//   ASSERT_EQ(CompileText(text, TempPath("m.so")), "");
//   DLTensor d = ToDLTensor(*host);
//   ASSERT_EQ(TakeStatus(kiln_session_set_input_index(s, 0, &d)), "");
#ifndef KILN_TESTS_VM_C_API_TEST_UTIL_H_
#define KILN_TESTS_VM_C_API_TEST_UTIL_H_

#include <string>

#include "ir/tensor.h"
#include "kiln/kiln.h"

namespace kiln::testing {

// $TEST_TMPDIR/name (or /tmp/name outside Bazel).
std::string TempPath(const std::string& name);

// "" for OK (null); else "CODE_NAME: message". Frees the status.
std::string TakeStatus(KilnStatus* st);

// A CPU view of `t` (no copy; `t` must outlive it).
DLTensor ToDLTensor(const HostTensor& t);

// Parses `text` (source name `source`) and compiles it to `path` through the
// C API: "" or what failed ("parse: ..." / "compile: ...").
std::string CompileText(const std::string& text, const std::string& path,
                        const std::string& source = "test");

}  // namespace kiln::testing

#endif  // KILN_TESTS_VM_C_API_TEST_UTIL_H_
