package kiln

/*
#include <stdlib.h>
#include "kilngo.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// SessionOptions say how a session gets its threads (nil: the default).
type SessionOptions struct {
	// NumThreads: 0 = KILN_NUM_THREADS or the CPU count; 1 = the calling
	// thread only; N = a pool of N threads owned by the session.
	NumThreads int
	// Pool is a pool to share instead (NumThreads is then ignored).
	Pool *ThreadPool
}

// Session holds everything one run of an artifact needs: inputs, outputs,
// the intermediate arena and threads (KilnSession). The C API allows one
// thread at a time on a session; this type serializes its methods with a
// mutex, so it is safe for concurrent use, but concurrent callers should
// have a session each to run in parallel.
type Session struct {
	mu       sync.Mutex
	raw      *C.KilnSession
	artifact *Artifact
	pool     *ThreadPool
}

// Input is what SetInput accepts: a *Tensor (Go memory) or a *ManagedTensor
// (a DLPack tensor, e.g. another session's output).
type Input interface{ isInput() }

func (*Tensor) isInput()        {}
func (*ManagedTensor) isInput() {}

// NewSession allocates a session of the artifact (see SessionOptions).
func (a *Artifact) NewSession(opts *SessionOptions) (*Session, error) {
	if opts == nil {
		opts = &SessionOptions{}
	}
	raw, err := a.borrow()
	if err != nil {
		return nil, err
	}
	var o C.KilnSessionOptions
	o.struct_size = C.size_t(unsafe.Sizeof(o))
	o.num_threads = C.int32_t(opts.NumThreads)
	if opts.Pool != nil {
		if o.pool, err = opts.Pool.borrow(); err != nil {
			a.giveBack()
			return nil, err
		}
	}
	var out *C.KilnSession
	if err := check(C.kiln_session_create(raw, &o, &out)); err != nil {
		if opts.Pool != nil {
			opts.Pool.giveBack()
		}
		a.giveBack()
		return nil, err
	}
	s := &Session{raw: out, artifact: a, pool: opts.Pool}
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

// Close releases the session, then gives back its artifact and pool. Idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.raw != nil {
		C.kiln_session_release(s.raw)
		s.raw = nil
		if s.pool != nil {
			s.pool.giveBack()
		}
		s.artifact.giveBack()
	}
	return nil
}

// Artifact is the session's artifact.
func (s *Session) Artifact() *Artifact { return s.artifact }

func (s *Session) open() error {
	if s.raw == nil {
		return errorf(FailedPrecondition, "the session was closed")
	}
	return nil
}

// setInput: by name (index < 0) or by index; the caller holds the lock.
func (s *Session) setInput(name string, index int, in Input) error {
	if err := s.open(); err != nil {
		return err
	}
	var cname *C.char
	if index < 0 {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	switch t := in.(type) {
	case *Tensor:
		if t == nil {
			return errorf(InvalidArgument, "input '%s': a nil *Tensor", name)
		}
		need := t.NumElements() * t.DType.Size()
		if len(t.Data) < need {
			return errorf(InvalidArgument, "input '%s': %d bytes of data for %v%v (%d bytes)", name, len(t.Data), t.DType, t.Shape, need)
		}
		var data unsafe.Pointer
		if need > 0 {
			data = unsafe.Pointer(&t.Data[0])
		}
		var shape *C.int64_t
		if len(t.Shape) > 0 {
			shape = (*C.int64_t)(unsafe.Pointer(&t.Shape[0]))
		}
		return check(C.kilngo_set_input(s.raw, cname, C.int32_t(index), data, C.int32_t(len(t.Shape)), shape,
			C.uint8_t(t.DType.Code), C.uint8_t(t.DType.Bits), C.uint16_t(t.DType.Lanes)))
	case *ManagedTensor:
		if t == nil {
			return errorf(InvalidArgument, "input '%s': a nil *ManagedTensor", name)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.ptr == nil {
			return errorf(FailedPrecondition, "input '%s': the tensor was closed", name)
		}
		if index >= 0 {
			return check(C.kiln_session_set_input_index(s.raw, C.int32_t(index), &t.ptr.dl_tensor))
		}
		return check(C.kiln_session_set_input(s.raw, cname, &t.ptr.dl_tensor))
	default:
		return errorf(InvalidArgument, "input '%s': a nil input", name)
	}
}

// SetInput copies in into input name. The dtype and every dim must match
// the artifact's input (InvalidArgument says what was expected and what
// given); an unknown name is NotFound. Inputs keep their values between runs.
func (s *Session) SetInput(name string, in Input) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setInput(name, -1, in)
}

// SetInputIndex is SetInput by index (OutOfRange past the end).
func (s *Session) SetInputIndex(index int, in Input) error {
	if index < 0 {
		return errorf(OutOfRange, "input index %d", index)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.setInput("", index, in)
}

// Run sets inputs (nil: keep the last values), runs the model once and
// returns every output, by name, copied into Go memory. An input never set
// is FailedPrecondition.
func (s *Session) Run(inputs map[string]*Tensor) (map[string]*Tensor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, t := range inputs {
		if err := s.setInput(name, -1, t); err != nil {
			return nil, err
		}
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	if err := check(C.kiln_session_run(s.raw)); err != nil {
		return nil, err
	}
	outputs := make(map[string]*Tensor, len(s.artifact.outputs))
	for i, info := range s.artifact.outputs {
		t, err := s.output(i)
		if err != nil {
			return nil, err
		}
		outputs[info.Name] = t
	}
	return outputs, nil
}

func (s *Session) output(index int) (*Tensor, error) {
	if err := s.open(); err != nil {
		return nil, err
	}
	if index < 0 || index >= len(s.artifact.outputs) {
		return nil, errorf(OutOfRange, "output %d of %d", index, len(s.artifact.outputs))
	}
	info := s.artifact.outputs[index]
	t := &Tensor{DType: info.DType, Shape: append([]int64(nil), info.Shape...)}
	t.Data = make([]byte, t.NumElements()*t.DType.Size())
	var data unsafe.Pointer
	if len(t.Data) > 0 {
		data = unsafe.Pointer(&t.Data[0])
	}
	var shape *C.int64_t
	if len(t.Shape) > 0 {
		shape = (*C.int64_t)(unsafe.Pointer(&t.Shape[0]))
	}
	err := check(C.kilngo_copy_output(s.raw, C.int32_t(index), data, C.int32_t(len(t.Shape)), shape,
		C.uint8_t(t.DType.Code), C.uint8_t(t.DType.Bits), C.uint16_t(t.DType.Lanes)))
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Output is a copy of output index from the latest run.
func (s *Session) Output(index int) (*Tensor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.output(index)
}

// OutputDLPack is a copy of output index as a DLPack tensor in C memory that
// outlives the session and the artifact (kiln_session_get_output_dlpack).
func (s *Session) OutputDLPack(index int) (*ManagedTensor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(); err != nil {
		return nil, err
	}
	var out *C.DLManagedTensor
	if err := check(C.kiln_session_get_output_dlpack(s.raw, C.int32_t(index), &out)); err != nil {
		return nil, err
	}
	return newManagedTensor(out), nil
}

// Profile runs the model warmup times untimed, then repeat times timing
// every kernel; each row's time is its median. The inputs must be set.
func (s *Session) Profile(warmup, repeat int) (*Profile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(); err != nil {
		return nil, err
	}
	opts := C.KilnProfileOptions{warmup: C.int32_t(warmup), repeat: C.int32_t(repeat)}
	opts.struct_size = C.size_t(unsafe.Sizeof(opts))
	var p *C.KilnProfile
	if err := check(C.kiln_session_profile_with(s.raw, &opts, &p)); err != nil {
		return nil, err
	}
	defer C.kiln_profile_release(p)
	out := &Profile{TotalUS: float64(C.kiln_profile_total_us(p))}
	for i := C.int32_t(0); i < C.kiln_profile_num_nodes(p); i++ {
		var name, op *C.char
		var us C.double
		if err := check(C.kiln_profile_node(p, i, &name, &op, &us)); err != nil {
			return nil, err
		}
		out.Rows = append(out.Rows, ProfileRow{Name: C.GoString(name), Op: C.GoString(op), TimeUS: float64(us)})
	}
	var table, trace *C.char
	if err := check(C.kiln_profile_table(p, &table)); err != nil {
		return nil, err
	}
	out.Table = takeString(table)
	if err := check(C.kiln_profile_chrome_trace(p, &trace)); err != nil {
		return nil, err
	}
	out.ChromeTrace = takeString(trace)
	return out, nil
}

// Benchmark times runs in C (kiln_session_benchmark). The inputs must be set.
func (s *Session) Benchmark(opts *BenchmarkOptions) (*BenchmarkResult, error) {
	if opts == nil {
		opts = &BenchmarkOptions{}
	}
	var mem cStrings
	defer mem.free()
	var o C.KilnBenchmarkOptions
	o.struct_size = C.size_t(unsafe.Sizeof(o))
	o.warmup = C.int32_t(opts.Warmup)
	o.repeat = C.int32_t(opts.Repeat)
	if opts.Workload != "" {
		o.workload = mem.str(opts.Workload)
	}
	if opts.Hardware != "" {
		o.hardware = mem.str(opts.Hardware)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(); err != nil {
		return nil, err
	}
	var r C.KilnBenchmarkResult
	var line *C.char
	if err := check(C.kiln_session_benchmark(s.raw, &o, &r, &line)); err != nil {
		return nil, err
	}
	return &BenchmarkResult{MeanMS: float64(r.mean_ms), StdMS: float64(r.std_ms), MinMS: float64(r.min_ms),
		MaxMS: float64(r.max_ms), Repeat: int(r.repeat), LogLine: takeString(line)}, nil
}

// DebugDump writes graph.json, profile.txt, trace.json and (with tensors)
// every node's outputs as tensors/<node>__<i>.npy into dir.
func (s *Session) DebugDump(dir string, warmup, repeat int, tensors bool) error {
	d := C.CString(dir)
	defer C.free(unsafe.Pointer(d))
	opts := C.KilnProfileOptions{warmup: C.int32_t(warmup), repeat: C.int32_t(repeat)}
	opts.struct_size = C.size_t(unsafe.Sizeof(opts))
	if !tensors {
		opts.skip_tensors = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(); err != nil {
		return err
	}
	return check(C.kiln_session_debug_dump_with(s.raw, d, &opts))
}
