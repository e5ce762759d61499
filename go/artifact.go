package kiln

/*
#include <stdlib.h>
#include <kiln/kiln.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Artifact is a compiled model loaded from its .so and validated
// (KilnArtifact). It is immutable and safe for concurrent use; sessions
// borrow it, and Close releases it after the last of them is closed.
type Artifact struct {
	mu       sync.Mutex
	raw      *C.KilnArtifact
	sessions int
	closed   bool
	path     string
	inputs   []TensorInfo
	outputs  []TensorInfo
}

// LoadArtifact loads and validates path. A truncated, corrupted or foreign
// file is DataLoss / Unimplemented / NotFound naming the file and the problem.
func LoadArtifact(path string) (*Artifact, error) {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	var out *C.KilnArtifact
	if err := check(C.kiln_artifact_load(p, &out)); err != nil {
		return nil, err
	}
	a := &Artifact{raw: out, path: path}
	for i := C.int32_t(0); i < C.kiln_artifact_num_inputs(out); i++ {
		var name *C.char
		var t C.DLTensor
		if err := check(C.kiln_artifact_input_info(out, i, &name, &t)); err != nil {
			C.kiln_artifact_release(out)
			return nil, err
		}
		a.inputs = append(a.inputs, infoOf(name, &t))
	}
	for i := C.int32_t(0); i < C.kiln_artifact_num_outputs(out); i++ {
		var name *C.char
		var t C.DLTensor
		if err := check(C.kiln_artifact_output_info(out, i, &name, &t)); err != nil {
			C.kiln_artifact_release(out)
			return nil, err
		}
		a.outputs = append(a.outputs, infoOf(name, &t))
	}
	runtime.SetFinalizer(a, (*Artifact).Close)
	return a, nil
}

// Close releases the artifact now, or after its last session is closed. Idempotent.
func (a *Artifact) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	a.releaseIfDone()
	return nil
}

func (a *Artifact) releaseIfDone() {
	if a.closed && a.sessions == 0 && a.raw != nil {
		C.kiln_artifact_release(a.raw)
		a.raw = nil
	}
}

func (a *Artifact) borrow() (*C.KilnArtifact, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.raw == nil {
		return nil, errorf(FailedPrecondition, "the artifact %s was closed", a.path)
	}
	a.sessions++
	return a.raw, nil
}

func (a *Artifact) giveBack() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions--
	a.releaseIfDone()
}

// str reads one of the artifact's strings ("" once closed).
func (a *Artifact) str(f func(*C.KilnArtifact) *C.char) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.raw == nil {
		return ""
	}
	return C.GoString(f(a.raw))
}

// Path is the file it was loaded from.
func (a *Artifact) Path() string { return a.path }

// Inputs and Outputs describe the inputs and outputs in index order.
func (a *Artifact) Inputs() []TensorInfo  { return append([]TensorInfo(nil), a.inputs...) }
func (a *Artifact) Outputs() []TensorInfo { return append([]TensorInfo(nil), a.outputs...) }

// Target is what it was compiled for ("llvm -mcpu=...").
func (a *Artifact) Target() string {
	return a.str(func(r *C.KilnArtifact) *C.char { return C.kiln_artifact_target(r) })
}

// Producer names the compiler that made it.
func (a *Artifact) Producer() string {
	return a.str(func(r *C.KilnArtifact) *C.char { return C.kiln_artifact_producer(r) })
}

// GraphJSON is the executor plan: TVM graph-executor JSON (docs/artifact.md).
func (a *Artifact) GraphJSON() string {
	return a.str(func(r *C.KilnArtifact) *C.char { return C.kiln_artifact_graph_json(r) })
}

// NumNodes is the number of graph nodes (0 once closed).
func (a *Artifact) NumNodes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.raw == nil || a.closed {
		return 0
	}
	return int(C.kiln_artifact_num_nodes(a.raw))
}

// MemoryStats are the bytes of one session's intermediate arena, and
// without storage sharing.
func (a *Artifact) MemoryStats() (arenaBytes, naiveBytes uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.raw == nil || a.closed {
		return 0, 0
	}
	var arena, naive C.uint64_t
	C.kiln_artifact_memory_stats(a.raw, &arena, &naive)
	return uint64(arena), uint64(naive)
}

// InputIndex and OutputIndex find an input or output by name (NotFound
// otherwise, listing them).
func (a *Artifact) InputIndex(name string) (int, error)  { return a.index(name, a.inputs, "input") }
func (a *Artifact) OutputIndex(name string) (int, error) { return a.index(name, a.outputs, "output") }

func (a *Artifact) index(name string, infos []TensorInfo, what string) (int, error) {
	names := make([]string, len(infos))
	for i, info := range infos {
		if info.Name == name {
			return i, nil
		}
		names[i] = info.Name
	}
	return -1, errorf(NotFound, "%s: no %s named '%s'; the %ss are %v", a.path, what, name, what, names)
}
