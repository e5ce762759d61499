package kiln

/*
#include <stdlib.h>
#include "kilngo.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"
)

// Model is a type-checked model in kiln's graph IR (its function main is the
// model): imported from ONNX or parsed from text IR, optimized, compiled.
// It is immutable and safe for concurrent use.
type Model struct {
	mu  sync.RWMutex // Close waits for calls in flight
	raw *C.KilnModel
}

func newModel(raw *C.KilnModel) *Model {
	m := &Model{raw: raw}
	runtime.SetFinalizer(m, (*Model).Close)
	return m
}

// Close releases the model. Idempotent.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.raw != nil {
		C.kiln_model_release(m.raw)
		m.raw = nil
	}
	return nil
}

// use runs f on the open model (FAILED_PRECONDITION once closed).
func (m *Model) use(f func(*C.KilnModel) error) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.raw == nil {
		return errorf(FailedPrecondition, "the model was closed")
	}
	return f(m.raw)
}

// ImportOptions are ONNX import options (nil: none).
type ImportOptions struct {
	// InputShapes binds graph inputs to static shapes (inputs with symbolic
	// dims need one before the model compiles).
	InputShapes map[string][]int64
	// ExternalDataDir is where external-data files are ("": the model's directory).
	ExternalDataDir string
}

// cStrings is C memory for strings and arrays an options struct points at.
type cStrings []unsafe.Pointer

func (c *cStrings) str(s string) *C.char {
	p := C.CString(s)
	*c = append(*c, unsafe.Pointer(p))
	return p
}

// list is a C array of C strings (NULL for an empty list).
func (c *cStrings) list(names []string) (**C.char, C.int32_t) {
	if len(names) == 0 {
		return nil, 0
	}
	arr := (**C.char)(C.malloc(C.size_t(len(names)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	*c = append(*c, unsafe.Pointer(arr))
	s := unsafe.Slice(arr, len(names))
	for i, n := range names {
		s[i] = c.str(n)
	}
	return arr, C.int32_t(len(names))
}

func (c *cStrings) free() {
	for _, p := range *c {
		C.free(p)
	}
	*c = nil
}

// raw fills a KilnImportOptions whose arrays live in `mem`.
func (o *ImportOptions) raw(mem *cStrings) C.KilnImportOptions {
	var opts C.KilnImportOptions
	C.kiln_import_options_init(&opts)
	if o == nil {
		return opts
	}
	if n := len(o.InputShapes); n > 0 {
		shapes := (*C.KilnInputShape)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.KilnInputShape{}))))
		*mem = append(*mem, unsafe.Pointer(shapes))
		entries := unsafe.Slice(shapes, n)
		i := 0
		for name, dims := range o.InputShapes {
			entries[i].name = mem.str(name)
			entries[i].ndim = C.int32_t(len(dims))
			if len(dims) > 0 {
				d := (*C.int64_t)(C.malloc(C.size_t(len(dims)) * 8))
				*mem = append(*mem, unsafe.Pointer(d))
				copy(unsafe.Slice((*int64)(unsafe.Pointer(d)), len(dims)), dims)
				entries[i].dims = d
			}
			i++
		}
		opts.input_shapes = shapes
		opts.num_input_shapes = C.int32_t(n)
	}
	if o.ExternalDataDir != "" {
		opts.external_data_dir = mem.str(o.ExternalDataDir)
	}
	return opts
}

func loadWith(f func(opts *C.KilnImportOptions, out **C.KilnModel) *C.KilnStatus, o *ImportOptions) (*Model, error) {
	var mem cStrings
	defer mem.free()
	opts := o.raw(&mem)
	var out *C.KilnModel
	if err := check(f(&opts, &out)); err != nil {
		return nil, err
	}
	return newModel(out), nil
}

// LoadONNX imports an ONNX model file. Errors: NotFound (no file),
// Unimplemented (every unsupported operator listed), InvalidArgument (a
// malformed model, a bad input shape).
func LoadONNX(path string, opts *ImportOptions) (*Model, error) {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	return loadWith(func(o *C.KilnImportOptions, out **C.KilnModel) *C.KilnStatus {
		return C.kiln_model_load_onnx_file(p, o, out)
	}, opts)
}

// LoadONNXBytes imports an ONNX model held in memory.
func LoadONNXBytes(data []byte, opts *ImportOptions) (*Model, error) {
	buf := C.CBytes(data) // C memory: the call only reads it
	defer C.free(buf)
	return loadWith(func(o *C.KilnImportOptions, out **C.KilnModel) *C.KilnStatus {
		return C.kiln_model_load_onnx_bytes(buf, C.size_t(len(data)), o, out)
	}, opts)
}

// Load reads a model file: ONNX for a ".onnx" name, kiln text IR otherwise.
func Load(path string, opts *ImportOptions) (*Model, error) {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	return loadWith(func(o *C.KilnImportOptions, out **C.KilnModel) *C.KilnStatus {
		return C.kiln_model_load_file(p, o, out)
	}, opts)
}

// Parse parses and type-checks kiln text IR (docs/text_format.md); errors
// give sourceName:line:column.
func Parse(text, sourceName string) (*Model, error) {
	t := C.CString(text)
	defer C.free(unsafe.Pointer(t))
	n := C.CString(sourceName)
	defer C.free(unsafe.Pointer(n))
	var out *C.KilnModel
	if err := check(C.kiln_model_parse_text(t, n, &out)); err != nil {
		return nil, err
	}
	return newModel(out), nil
}

func takeString(p *C.char) string {
	s := C.GoString(p)
	C.kiln_free(unsafe.Pointer(p))
	return s
}

// Text is the model as text IR (Parse reads it back); with showTypes every
// binding carries its inferred type.
func (m *Model) Text(showTypes bool) (string, error) {
	var s string
	err := m.use(func(raw *C.KilnModel) error {
		var out *C.char
		flag := C.int32_t(0)
		if showTypes {
			flag = 1
		}
		if err := check(C.kiln_model_print(raw, flag, &out)); err != nil {
			return err
		}
		s = takeString(out)
		return nil
	})
	return s, err
}

// Warnings is what importing the model warned about (ONNX that ONNX Runtime
// also accepts with a warning), one line each; empty for text IR and
// optimized models.
func (m *Model) Warnings() ([]string, error) {
	var lines []string
	err := m.use(func(raw *C.KilnModel) error {
		var out *C.char
		if err := check(C.kiln_model_warnings(raw, &out)); err != nil {
			return err
		}
		for _, l := range strings.Split(C.GoString(out), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
		return nil
	})
	return lines, err
}

// ToDot is main as a Graphviz dot graph.
func (m *Model) ToDot() (string, error) {
	var s string
	err := m.use(func(raw *C.KilnModel) error {
		var out *C.char
		if err := check(C.kiln_model_to_dot(raw, &out)); err != nil {
			return err
		}
		s = takeString(out)
		return nil
	})
	return s, err
}

// Inputs are main's parameters.
func (m *Model) Inputs() ([]TensorInfo, error) {
	var infos []TensorInfo
	err := m.use(func(raw *C.KilnModel) error {
		var n C.int32_t
		if err := check(C.kiln_model_num_inputs(raw, &n)); err != nil {
			return err
		}
		for i := C.int32_t(0); i < n; i++ {
			var name *C.char
			var t C.DLTensor
			if err := check(C.kiln_model_input_info(raw, i, &name, &t)); err != nil {
				return err
			}
			infos = append(infos, infoOf(name, &t))
		}
		return nil
	})
	return infos, err
}

// Outputs are main's results, flattened, named as the compiled artifact will
// name them (the ONNX graph's output names, else output0, output1, ...).
func (m *Model) Outputs() ([]TensorInfo, error) {
	var infos []TensorInfo
	err := m.use(func(raw *C.KilnModel) error {
		var n C.int32_t
		if err := check(C.kiln_model_num_outputs(raw, &n)); err != nil {
			return err
		}
		for i := C.int32_t(0); i < n; i++ {
			var t C.DLTensor
			if err := check(C.kiln_model_output_info(raw, i, &t)); err != nil {
				return err
			}
			var name *C.char
			if err := check(C.kiln_model_output_name(raw, i, &name)); err != nil {
				return err
			}
			infos = append(infos, infoOf(name, &t))
		}
		return nil
	})
	return infos, err
}

// OptimizeOptions are graph-pass options (nil: DefaultOptimizeOptions()).
// The zero value means opt level 0, as in the C API.
type OptimizeOptions struct {
	OptLevel int      // 0-3: the default pipeline runs the passes at or below it
	Passes   []string // an explicit pass list run in order instead (Passes() names)
	Required []string // passes that run whatever the level
	Disabled []string // passes that never run
	// AfterPass, when set, is called after every pass that ran; with
	// AfterPassText the event carries the module text after the pass.
	AfterPass     func(PassEvent)
	AfterPassText bool
}

// DefaultOptimizeOptions is opt level 3 and the default pipeline.
func DefaultOptimizeOptions() *OptimizeOptions { return &OptimizeOptions{OptLevel: 3} }

// PassEvent is one pass Optimize ran.
type PassEvent struct {
	Name      string
	Changed   bool
	ElapsedMS float64
	Text      string // with AfterPassText
}

// afterPass is what the C callback reaches through its cgo.Handle.
type afterPass struct {
	fn        func(PassEvent)
	recovered interface{}
}

//export kilngoAfterPass
func kilngoAfterPass(h C.uintptr_t, name *C.char, changed C.int32_t, ms C.double, text *C.char) {
	cb := cgo.Handle(h).Value().(*afterPass)
	if cb.recovered != nil {
		return
	}
	defer func() { cb.recovered = recover() }()
	cb.fn(PassEvent{Name: C.GoString(name), Changed: changed != 0, ElapsedMS: float64(ms), Text: C.GoString(text)})
}

// Optimize runs graph passes and returns the optimized model (m is
// unchanged). Errors: NotFound for an unknown pass (listing the known
// ones), the failing pass's code otherwise. A panic in AfterPass is
// re-raised once the C call has returned.
func (m *Model) Optimize(opts *OptimizeOptions) (*Model, error) {
	if opts == nil {
		opts = DefaultOptimizeOptions()
	}
	var mem cStrings
	defer mem.free()
	var o C.KilnOptimizeOptions
	C.kiln_optimize_options_init(&o)
	o.opt_level = C.int32_t(opts.OptLevel)
	if opts.Passes != nil {
		o.passes, o.num_passes = mem.list(opts.Passes)
	}
	o.required_passes, o.num_required_passes = mem.list(opts.Required)
	o.disabled_passes, o.num_disabled_passes = mem.list(opts.Disabled)
	var handle cgo.Handle
	var cb *afterPass
	if opts.AfterPass != nil {
		cb = &afterPass{fn: opts.AfterPass}
		handle = cgo.NewHandle(cb)
		defer handle.Delete()
		if opts.AfterPassText {
			o.after_pass_text = 1
		}
	}
	var out *C.KilnModel
	err := m.use(func(raw *C.KilnModel) error {
		return check(C.kilngo_optimize(raw, &o, C.uintptr_t(handle), &out))
	})
	if cb != nil && cb.recovered != nil {
		if out != nil {
			C.kiln_model_release(out)
		}
		panic(cb.recovered)
	}
	if err != nil {
		return nil, err
	}
	return newModel(out), nil
}

// CompileOptions are compilation options (nil: DefaultCompileOptions()).
// The zero value means opt level 0, as in the C API.
type CompileOptions struct {
	// Target is "llvm" (the host, when ""), "llvm -mcpu=skylake-avx512",
	// "llvm -mtriple=aarch64-linux-gnu", ...
	Target         string
	OptLevel       int // graph passes, 0-3
	DisabledPasses []string
	NoMemoryPlan   bool   // one storage per tensor, no sharing
	NumThreads     int    // code-generation threads; 0 = all CPUs
	CC             string // the C compiler driver that links the .so ("": "cc")
	// Progress, when set, is called as Compile goes (kiln.h,
	// KilnCompileProgressFn): each phase's start ("passes", "lower", "plan",
	// "codegen", "link") with done 0, then once per fused function while
	// lowering and once per kernel during code generation (done 1..total).
	// The per-kernel calls come from kiln's code-generation threads, one at a
	// time. A panic in it is re-raised once the C call has returned. Emit
	// does not call it.
	Progress func(phase string, done, total int)
}

// DefaultCompileOptions is the host CPU at opt level 3.
func DefaultCompileOptions() *CompileOptions { return &CompileOptions{OptLevel: 3} }

func (o *CompileOptions) raw(mem *cStrings) C.KilnCompileOptions {
	if o == nil {
		o = DefaultCompileOptions()
	}
	var opts C.KilnCompileOptions
	C.kiln_compile_options_init(&opts)
	if o.Target != "" {
		opts.target = mem.str(o.Target)
	}
	if o.CC != "" {
		opts.cc = mem.str(o.CC)
	}
	opts.opt_level = C.int32_t(o.OptLevel)
	opts.disabled_passes, opts.num_disabled_passes = mem.list(o.DisabledPasses)
	if o.NoMemoryPlan {
		opts.no_memory_plan = 1
	}
	opts.num_threads = C.int32_t(o.NumThreads)
	return opts
}

// CompileReport is what Compile did (KilnCompileReport).
type CompileReport struct {
	PassesMS, LowerMS, PlanMS, CodegenMS, LinkMS float64
	NumFusedCalls, NumKernels                    int
	ArenaBytes, NaiveBytes                       int64
	FileBytes                                    uint64
}

// compileProgress is what the C progress callback reaches through its
// cgo.Handle. kiln never calls it twice at once, and Compile reads
// recovered only after the C call (and its threads) have finished.
type compileProgress struct {
	fn        func(phase string, done, total int)
	recovered interface{}
}

//export kilngoCompileProgress
func kilngoCompileProgress(h C.uintptr_t, phase *C.char, done, total C.int32_t) {
	cb := cgo.Handle(h).Value().(*compileProgress)
	if cb.recovered != nil {
		return
	}
	defer func() { cb.recovered = recover() }()
	cb.fn(C.GoString(phase), int(done), int(total))
}

// Compile compiles the model into an artifact (a .so) at path, written
// atomically; LoadArtifact loads it. Every input needs a static shape
// (ImportOptions.InputShapes).
func (m *Model) Compile(path string, opts *CompileOptions) (*CompileReport, error) {
	var mem cStrings
	defer mem.free()
	o := opts.raw(&mem)
	p := mem.str(path)
	var handle cgo.Handle
	var cb *compileProgress
	if opts != nil && opts.Progress != nil {
		cb = &compileProgress{fn: opts.Progress}
		handle = cgo.NewHandle(cb)
		defer handle.Delete()
	}
	var r C.KilnCompileReport
	r.struct_size = C.size_t(unsafe.Sizeof(r))
	err := m.use(func(raw *C.KilnModel) error {
		return check(C.kilngo_compile(raw, &o, C.uintptr_t(handle), p, &r))
	})
	if cb != nil && cb.recovered != nil {
		panic(cb.recovered)
	}
	if err != nil {
		return nil, err
	}
	return &CompileReport{
		PassesMS: float64(r.passes_ms), LowerMS: float64(r.lower_ms), PlanMS: float64(r.plan_ms),
		CodegenMS: float64(r.codegen_ms), LinkMS: float64(r.link_ms),
		NumFusedCalls: int(r.num_fused_calls), NumKernels: int(r.num_kernels),
		ArenaBytes: int64(r.arena_bytes), NaiveBytes: int64(r.naive_bytes), FileBytes: uint64(r.file_bytes),
	}, nil
}

// EmitKind is a stage of compilation Emit shows.
type EmitKind int

// The stages (KilnEmitKind).
const (
	EmitGraphIR  EmitKind = 0 // the optimized, fused graph IR
	EmitLoopIR   EmitKind = 1 // the loop IR of every kernel
	EmitLLVMIR   EmitKind = 2 // the optimized LLVM IR of every kernel
	EmitAssembly EmitKind = 3 // the target's assembly
)

// Emit is one stage of compilation as text; no artifact is written.
func (m *Model) Emit(kind EmitKind, opts *CompileOptions) (string, error) {
	var mem cStrings
	defer mem.free()
	o := opts.raw(&mem)
	var s string
	err := m.use(func(raw *C.KilnModel) error {
		var out *C.char
		if err := check(C.kiln_model_emit(raw, &o, C.KilnEmitKind(kind), &out, nil)); err != nil {
			return err
		}
		s = takeString(out)
		return nil
	})
	return s, err
}
