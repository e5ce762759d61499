package kiln

/*
#include <stdlib.h>
#include <string.h>
#include "kilngo.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// DType is a DLPack dtype: code (0 int, 1 uint, 2 float, 4 bfloat, 6 bool),
// bits and lanes.
type DType struct {
	Code  uint8
	Bits  uint8
	Lanes uint16
}

// The dtypes kiln's tensors use.
var (
	Float16  = DType{2, 16, 1}
	Float32  = DType{2, 32, 1}
	Float64  = DType{2, 64, 1}
	BFloat16 = DType{4, 16, 1}
	Int8     = DType{0, 8, 1}
	Int16    = DType{0, 16, 1}
	Int32    = DType{0, 32, 1}
	Int64    = DType{0, 64, 1}
	Uint8    = DType{1, 8, 1}
	Uint16   = DType{1, 16, 1}
	Uint32   = DType{1, 32, 1}
	Uint64   = DType{1, 64, 1}
	Bool     = DType{6, 8, 1}
)

// String is kiln's name of the dtype: "float32", "int64", "bool", "bfloat16", "float32x4".
func (d DType) String() string {
	var s string
	switch d.Code {
	case 0:
		s = fmt.Sprintf("int%d", d.Bits)
	case 1:
		s = fmt.Sprintf("uint%d", d.Bits)
	case 2:
		s = fmt.Sprintf("float%d", d.Bits)
	case 4:
		s = fmt.Sprintf("bfloat%d", d.Bits)
	case 6:
		s = "bool"
	default:
		s = fmt.Sprintf("code%d_%d", d.Code, d.Bits)
	}
	if d.Lanes != 1 {
		s += fmt.Sprintf("x%d", d.Lanes)
	}
	return s
}

// Size is the bytes per element, lanes included.
func (d DType) Size() int { return (int(d.Bits)*int(d.Lanes) + 7) / 8 }

func dtypeOf(t C.DLDataType) DType { return DType{uint8(t.code), uint8(t.bits), uint16(t.lanes)} }

// Number is a Go type whose values are a kiln tensor's elements, bit for bit.
type Number interface {
	float32 | float64 | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

// DTypeOf is the dtype of T's values.
func DTypeOf[T Number]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	default:
		return Uint64
	}
}

// TensorInfo describes an input or output: name, shape (-1 for a dim that
// is not static) and dtype.
type TensorInfo struct {
	Name  string
	Shape []int64
	DType DType
}

func infoOf(name *C.char, t *C.DLTensor) TensorInfo {
	return TensorInfo{Name: C.GoString(name), Shape: shapeOf(t), DType: dtypeOf(t.dtype)}
}

func shapeOf(t *C.DLTensor) []int64 {
	if t.ndim <= 0 || t.shape == nil {
		return []int64{}
	}
	return append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), int(t.ndim))...)
}

func numElements(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// Tensor is a tensor in Go memory: dtype, shape and the elements' bytes in
// row-major order (the machine's byte order). Session.SetInput copies it;
// Session.Run's outputs are new Tensors.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
}

// NewTensor views `values` as a tensor of `shape` (no copy: Data aliases
// values). An error when a dim is negative or the counts differ.
func NewTensor[T Number](shape []int64, values []T) (*Tensor, error) {
	if err := checkShape(shape, len(values)); err != nil {
		return nil, err
	}
	var data []byte
	if len(values) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(values)*int(unsafe.Sizeof(values[0])))
	}
	return &Tensor{DType: DTypeOf[T](), Shape: append([]int64(nil), shape...), Data: data}, nil
}

// NewTensorBytes is a tensor of any dtype (bfloat16, bool, float16) from its bytes.
func NewTensorBytes(dtype DType, shape []int64, data []byte) (*Tensor, error) {
	if dtype.Size() == 0 || len(data)%dtype.Size() != 0 {
		return nil, errorf(InvalidArgument, "%d bytes are not a whole number of %v elements", len(data), dtype)
	}
	if err := checkShape(shape, len(data)/dtype.Size()); err != nil {
		return nil, err
	}
	return &Tensor{DType: dtype, Shape: append([]int64(nil), shape...), Data: data}, nil
}

func checkShape(shape []int64, count int) error {
	for _, d := range shape {
		if d < 0 {
			return errorf(InvalidArgument, "shape %v: dim %d < 0", shape, d)
		}
	}
	if n := numElements(shape); n != count {
		return errorf(InvalidArgument, "%d elements are not a tensor of shape %v (%d elements)", count, shape, n)
	}
	return nil
}

// NumElements is the product of the dims.
func (t *Tensor) NumElements() int { return numElements(t.Shape) }

// Values views a tensor's elements as T (no copy); an error when the dtype
// is not T's or the data is short.
func Values[T Number](t *Tensor) ([]T, error) {
	if t.DType != DTypeOf[T]() {
		return nil, errorf(InvalidArgument, "the tensor holds %v, not %v", t.DType, DTypeOf[T]())
	}
	n := t.NumElements()
	var zero T
	if len(t.Data) < n*int(unsafe.Sizeof(zero)) {
		return nil, errorf(InvalidArgument, "%d bytes of data for %d %v elements", len(t.Data), n, t.DType)
	}
	if n == 0 {
		return []T{}, nil
	}
	if uintptr(unsafe.Pointer(&t.Data[0]))%unsafe.Alignof(zero) != 0 {
		return nil, errorf(InvalidArgument, "the tensor's data is misaligned for %v", t.DType)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), n), nil
}

// ReadNpy reads a .npy file with the runtime's reader (kiln_npy_read: format
// 1.0-3.0, little-endian C order; bfloat16 files hold uint16).
func ReadNpy(path string) (*Tensor, error) {
	c := C.CString(path)
	defer C.free(unsafe.Pointer(c))
	var out *C.KilnNpyTensor
	if err := check(C.kiln_npy_read(c, &out)); err != nil {
		return nil, err
	}
	defer C.kiln_npy_release(out)
	t := &out.tensor
	dtype := dtypeOf(t.dtype)
	shape := shapeOf(t)
	data := make([]byte, numElements(shape)*dtype.Size())
	if len(data) > 0 {
		C.memcpy(unsafe.Pointer(&data[0]), t.data, C.size_t(len(data)))
	}
	return &Tensor{DType: dtype, Shape: shape, Data: data}, nil
}

// ManagedTensor owns a DLPack tensor in C memory: a copy of a session output
// (Session.OutputDLPack) that outlives the session and the artifact. Close
// calls its deleter (a finalizer does, if the program does not).
type ManagedTensor struct {
	mu  sync.Mutex
	ptr *C.DLManagedTensor
}

func newManagedTensor(p *C.DLManagedTensor) *ManagedTensor {
	m := &ManagedTensor{ptr: p}
	runtime.SetFinalizer(m, (*ManagedTensor).Close)
	return m
}

// Close releases the tensor (its deleter). Idempotent.
func (m *ManagedTensor) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr != nil {
		C.kilngo_delete(m.ptr)
		m.ptr = nil
	}
	return nil
}

// DType and Shape describe the tensor (zero values once closed).
func (m *ManagedTensor) DType() DType {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr == nil {
		return DType{}
	}
	return dtypeOf(m.ptr.dl_tensor.dtype)
}

func (m *ManagedTensor) Shape() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr == nil {
		return nil
	}
	return shapeOf(&m.ptr.dl_tensor)
}

// Copy is the tensor copied into Go memory.
func (m *ManagedTensor) Copy() (*Tensor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ptr == nil {
		return nil, errorf(FailedPrecondition, "the tensor was closed")
	}
	t := &m.ptr.dl_tensor
	if t.strides != nil {
		return nil, errorf(Unimplemented, "strided DLPack tensors are not supported")
	}
	dtype := dtypeOf(t.dtype)
	shape := shapeOf(t)
	data := make([]byte, numElements(shape)*dtype.Size())
	if len(data) > 0 {
		C.memcpy(unsafe.Pointer(&data[0]), unsafe.Add(t.data, int(t.byte_offset)), C.size_t(len(data)))
	}
	return &Tensor{DType: dtype, Shape: shape, Data: data}, nil
}
