// Package kiln compiles and runs deep-learning models with kiln, over the C
// ABI of libkiln.so (docs/c_api.md). The flow is model -> artifact ->
// session:
//
//	model, err := kiln.LoadONNX("examples/resnet_mini.onnx", nil)
//	if err != nil { ... }
//	defer model.Close()
//	if _, err := model.Compile("/tmp/resnet_mini.so", nil); err != nil { ... }
//	artifact, err := kiln.LoadArtifact("/tmp/resnet_mini.so")
//	defer artifact.Close()
//	session, err := artifact.NewSession(nil)
//	defer session.Close()
//	x, err := kiln.ReadNpy("examples/resnet_mini_input.npy")
//	outputs, err := session.Run(map[string]*kiln.Tensor{"input": x})
//	probabilities, err := kiln.Values[float32](outputs["softmax_40"])
//
// Every failure is an error; a failed C call's is a *kiln.Error carrying the
// status code and message (errors.As). Every object has Close, which is
// idempotent, and a finalizer that closes it if the program does not; an
// artifact or thread pool closed while sessions use it is released after
// the last of them closes.
//
// Building: the package links libkiln.so through pkg-config's kiln.pc
// (`#cgo pkg-config: kiln`). Point PKG_CONFIG_PATH at an SDK's
// lib/pkgconfig (bazel-bin/c_api/sdk after `bazel build //c_api:sdk`, or a
// prefix tools/dev/install.sh wrote); the .pc gives the include path and an
// rpath, so programs find the library at run time. <dlpack/dlpack.h> comes
// from the system (Debian: libdlpack-dev).
package kiln

/*
#cgo pkg-config: kiln
#include <kiln/kiln.h>
*/
import "C"

// APIVersion is the C ABI version this package was written against
// (KILN_API_VERSION; version 2 added kiln_model_warnings, version 3 the
// output and dim names and the compile progress callback, version 4
// kiln_model_evaluate and VM artifacts, version 5 the session's device and
// kiln_artifact_device_code_json); the library it
// links has LibraryAPIVersion() at least this.
const APIVersion = 5

// Version is the loaded library's version string ("0.1.0").
func Version() string { return C.GoString(C.kiln_version()) }

// LibraryAPIVersion is the loaded library's C ABI version (kiln_api_version).
func LibraryAPIVersion() uint32 { return uint32(C.kiln_api_version()) }

// Passes lists the registered graph passes, sorted (names for Optimize).
func Passes() []string {
	n := int(C.kiln_pass_count())
	names := make([]string, 0, n)
	for i := 0; i < n; i++ {
		names = append(names, C.GoString(C.kiln_pass_name(C.int32_t(i))))
	}
	return names
}
