// tests/ffi/go: libkiln.so end to end through its C ABI, from Go (cgo,
// standard library only).
//
//	kilnffi MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR
//
// Imports an ONNX model, compiles it to WORKDIR/model.so, loads that artifact,
// runs one session on INPUT.npy and compares the output with EXPECTED.npy
// (|a-b| <= 1e-4 + 1e-4*|b|); checks the DLPack copy of the output and one
// error path (an input of the wrong shape). The .npy files are parsed here
// (float32 little-endian, C order) and the input DLTensor is filled in by
// hand, in C memory. Build with CGO_CFLAGS="-I<kiln include> -I<dlpack
// include>" and CGO_LDFLAGS="-L<dir of libkiln.so>". Exits 0 only if every
// check passed.
package main

/*
#cgo LDFLAGS: -lkiln
#include <stdlib.h>
#include <kiln/kiln.h>

// cgo cannot call a C function pointer itself.
static int kilnffi_has_deleter(DLManagedTensor* m) { return m->deleter != NULL; }
static void kilnffi_call_deleter(DLManagedTensor* m) { m->deleter(m); }
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

type checker struct{ failures int }

func (c *checker) fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	c.failures++
}

// ok checks a status: nil is success; otherwise prints and frees it and
// counts a failure.
func (c *checker) ok(st *C.KilnStatus, what string) bool {
	if st == nil {
		return true
	}
	c.fail("%s: %s: %s", what, C.GoString(C.kiln_status_code_name(C.kiln_status_code(st))),
		C.GoString(C.kiln_status_message(st)))
	C.kiln_status_free(st)
	return false
}

func shapeOf(t *C.DLTensor) []int64 {
	if t.ndim <= 0 || t.shape == nil {
		return []int64{}
	}
	return append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), int(t.ndim))...)
}

func describe(t *C.DLTensor) string {
	return fmt.Sprintf("%v dtype code=%d bits=%d lanes=%d", shapeOf(t), t.dtype.code, t.dtype.bits,
		t.dtype.lanes)
}

func isFloat32(t *C.DLTensor) bool {
	return t.dtype.code == C.kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1
}

// isCompact: strides NULL, or the compact row-major strides.
func isCompact(t *C.DLTensor) bool {
	if t.strides == nil {
		return true
	}
	shape := shapeOf(t)
	strides := unsafe.Slice((*int64)(unsafe.Pointer(t.strides)), int(t.ndim))
	expect := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != expect {
			return false
		}
		expect *= shape[i]
	}
	return true
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func product(shape []int64) int {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return int(n)
}

func f32Slice(t *C.DLTensor, n int) []float32 {
	if n == 0 {
		return []float32{}
	}
	return unsafe.Slice((*float32)(unsafe.Add(t.data, int(t.byte_offset))), n)
}

// ----------------------------------------------------------------------- npy

type npy struct {
	shape []int64
	data  []float32
}

// dictValue: the text after 'key': in a .npy header dict.
func dictValue(header, key string) (string, bool) {
	for _, q := range []string{"'", "\""} {
		k := q + key + q
		if pos := strings.Index(header, k); pos >= 0 {
			rest := strings.TrimLeft(header[pos+len(k):], " \t")
			if strings.HasPrefix(rest, ":") {
				return strings.TrimLeft(rest[1:], " \t"), true
			}
		}
	}
	return "", false
}

func readNpyF32(path string) (*npy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %v", path, err)
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("%s: not a .npy file (bad magic)", path)
	}
	var headerLen, start int
	switch b[6] {
	case 1:
		headerLen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf("%s: truncated .npy header", path)
		}
		headerLen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf("%s: unsupported .npy format version %d.%d", path, b[6], b[7])
	}
	if len(b) < start+headerLen {
		return nil, fmt.Errorf("%s: truncated .npy header", path)
	}
	header := string(b[start : start+headerLen])

	descrRaw, found := dictValue(header, "descr")
	if !found {
		return nil, fmt.Errorf("%s: .npy header has no 'descr': %s", path, strings.TrimSpace(header))
	}
	if descrRaw == "" || (descrRaw[0] != '\'' && descrRaw[0] != '"') {
		return nil, fmt.Errorf("%s: unsupported dtype %s (only float32 '<f4' is supported)", path, descrRaw)
	}
	descr := strings.SplitN(descrRaw[1:], descrRaw[:1], 2)[0]
	if descr != "<f4" {
		return nil, fmt.Errorf("%s: unsupported dtype '%s': this reader supports only float32 little-endian ('<f4')", path, descr)
	}
	fortran, found := dictValue(header, "fortran_order")
	if !found {
		return nil, fmt.Errorf("%s: .npy header has no 'fortran_order'", path)
	}
	if strings.HasPrefix(fortran, "True") {
		return nil, fmt.Errorf("%s: Fortran-order arrays are not supported (only C order)", path)
	} else if !strings.HasPrefix(fortran, "False") {
		return nil, fmt.Errorf("%s: bad 'fortran_order' in .npy header", path)
	}
	shapeRaw, found := dictValue(header, "shape")
	end := strings.Index(shapeRaw, ")")
	if !found || !strings.HasPrefix(shapeRaw, "(") || end < 0 {
		return nil, fmt.Errorf("%s: bad or missing 'shape' in .npy header", path)
	}
	shape := []int64{}
	for _, part := range strings.Split(shapeRaw[1:end], ",") {
		part = strings.TrimRight(strings.TrimSpace(part), "L")
		if part == "" {
			continue
		}
		d, err := strconv.ParseInt(part, 10, 64)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s: bad dimension '%s' in .npy shape", path, part)
		}
		shape = append(shape, d)
	}
	count := product(shape)
	body := b[start+headerLen:]
	if len(body) < 4*count {
		return nil, fmt.Errorf("%s: short data: %d bytes for %d float32 elements", path, len(body), count)
	}
	data := make([]float32, count)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
	}
	return &npy{shape: shape, data: data}, nil
}

// cTensor: a float32 CPU DLTensor whose data and shape live in C memory (so
// that no Go pointer is handed to C); free with free().
type cTensor struct {
	t C.DLTensor
}

func newCTensor(shape []int64, data []float32) *cTensor {
	ct := &cTensor{}
	n := product(shape)
	ct.t.data = C.calloc(C.size_t(n+1), 4)
	if n > 0 {
		copy(unsafe.Slice((*float32)(ct.t.data), n), data)
	}
	ct.t.shape = (*C.int64_t)(C.calloc(C.size_t(len(shape)+1), 8))
	copy(unsafe.Slice((*int64)(unsafe.Pointer(ct.t.shape)), len(shape)), shape)
	ct.t.device.device_type = C.kDLCPU
	ct.t.device.device_id = 0
	ct.t.ndim = C.int32_t(len(shape))
	ct.t.dtype.code = C.kDLFloat
	ct.t.dtype.bits = 32
	ct.t.dtype.lanes = 1
	ct.t.strides = nil
	ct.t.byte_offset = 0
	return ct
}

func (ct *cTensor) free() {
	C.free(ct.t.data)
	C.free(unsafe.Pointer(ct.t.shape))
	ct.t.data = nil
	ct.t.shape = nil
}

// ---------------------------------------------------------------------- main

func run(c *checker, modelPath, inputPath, expectedPath, workdir string) {
	soPath := workdir + "/model.so"
	soC := C.CString(soPath)
	defer C.free(unsafe.Pointer(soC))

	// 2. Versions.
	fmt.Printf("kiln_version: %s\n", C.GoString(C.kiln_version()))
	api := uint32(C.kiln_api_version())
	fmt.Printf("kiln_api_version: %d\n", api)
	if api < 1 {
		c.fail("kiln_api_version() < 1")
	}

	// 3. Import and compile. 7: the defers release everything.
	var model *C.KilnModel
	defer func() { C.kiln_model_release(model) }()
	modelC := C.CString(modelPath)
	defer C.free(unsafe.Pointer(modelC))
	if !c.ok(C.kiln_model_load_onnx_file(modelC, nil, &model), "kiln_model_load_onnx_file") {
		return
	}
	var nModelInputs C.int32_t
	if c.ok(C.kiln_model_num_inputs(model, &nModelInputs), "kiln_model_num_inputs") {
		fmt.Printf("model inputs: %d\n", nModelInputs)
		if nModelInputs != 1 {
			c.fail("the model should have 1 input")
		}
		for i := C.int32_t(0); i < nModelInputs; i++ {
			var name *C.char
			var info C.DLTensor
			if c.ok(C.kiln_model_input_info(model, i, &name, &info), "kiln_model_input_info") {
				fmt.Printf("  model input %d: %s %s\n", i, C.GoString(name), describe(&info))
			}
		}
	}

	var options C.KilnCompileOptions
	options.struct_size = C.size_t(unsafe.Sizeof(options))
	options.opt_level = 3
	var report C.KilnCompileReport
	report.struct_size = C.size_t(unsafe.Sizeof(report))
	if !c.ok(C.kiln_model_compile(model, &options, soC, &report), "kiln_model_compile") {
		return
	}
	fmt.Printf("compiled %s: num_kernels=%d file_bytes=%d\n", soPath, report.num_kernels, report.file_bytes)
	if report.num_kernels <= 0 {
		c.fail("report.num_kernels should be > 0")
	}
	if report.file_bytes == 0 {
		c.fail("report.file_bytes should be > 0")
	}

	// 4. Release the model; load the artifact.
	C.kiln_model_release(model)
	model = nil
	var artifact *C.KilnArtifact
	defer func() { C.kiln_artifact_release(artifact) }()
	if !c.ok(C.kiln_artifact_load(soC, &artifact), "kiln_artifact_load") {
		return
	}
	nIn := C.kiln_artifact_num_inputs(artifact)
	nOut := C.kiln_artifact_num_outputs(artifact)
	fmt.Printf("artifact: %d input(s), %d output(s)\n", nIn, nOut)
	if nIn != 1 {
		c.fail("the artifact should have 1 input")
	}
	if nOut != 1 {
		c.fail("the artifact should have 1 output")
	}
	{
		var name *C.char
		var info C.DLTensor
		if c.ok(C.kiln_artifact_input_info(artifact, 0, &name, &info), "kiln_artifact_input_info") {
			n := C.GoString(name)
			fmt.Printf("  artifact input 0: %s %s\n", n, describe(&info))
			if n != "input" {
				c.fail("artifact input 0 should be \"input\"")
			}
			if !isFloat32(&info) {
				c.fail("artifact input 0 should be float32")
			}
			if !sameShape(shapeOf(&info), []int64{1, 3, 32, 32}) {
				c.fail("artifact input 0 should have shape [1, 3, 32, 32]")
			}
		}
	}
	var session *C.KilnSession
	// Registered after the artifact's: runs first.
	defer func() { C.kiln_session_release(session) }()
	if !c.ok(C.kiln_session_create(artifact, nil, &session), "kiln_session_create") {
		return
	}

	// 5. Input, run, output.
	input, err := readNpyF32(inputPath)
	if err != nil {
		c.fail("%v", err)
		return
	}
	expected, err := readNpyF32(expectedPath)
	if err != nil {
		c.fail("%v", err)
		return
	}
	inT := newCTensor(input.shape, input.data)
	defer inT.free()
	inputName := C.CString("input")
	defer C.free(unsafe.Pointer(inputName))
	if !c.ok(C.kiln_session_set_input(session, inputName, &inT.t), "kiln_session_set_input") {
		return
	}
	if !c.ok(C.kiln_session_run(session), "kiln_session_run") {
		return
	}
	var out *C.DLTensor
	if !c.ok(C.kiln_session_get_output(session, 0, &out), "kiln_session_get_output") {
		return
	}
	if out == nil {
		c.fail("kiln_session_get_output gave NULL")
		return
	}
	fmt.Printf("output 0: %s\n", describe(out))
	outShape := shapeOf(out)
	n := product(outShape)
	if out.device.device_type != C.kDLCPU {
		c.fail("output 0 should be on the CPU")
	}
	viewOK := isFloat32(out) && isCompact(out)
	switch {
	case !isFloat32(out):
		c.fail("output 0 should be float32")
	case !sameShape(outShape, expected.shape):
		c.fail("output 0 shape %v differs from EXPECTED.npy %v", outShape, expected.shape)
	case !isCompact(out):
		c.fail("output 0 should be compact")
	default:
		got := f32Slice(out, n)
		maxErr := 0.0
		bad := 0
		for i := range got {
			a, b := float64(got[i]), float64(expected.data[i])
			e := math.Abs(a - b)
			if !(e <= 1e-4+1e-4*math.Abs(b)) {
				if bad < 5 {
					fmt.Fprintf(os.Stderr, "mismatch at %d: got %g, expected %g\n", i, a, b)
				}
				bad++
			}
			if e > maxErr || math.IsNaN(e) {
				maxErr = e
			}
		}
		fmt.Printf("compared %d elements: max abs error %.3g\n", n, maxErr)
		if bad > 0 {
			c.fail("output 0 differs from EXPECTED.npy")
		}
	}

	// The DLPack copy must equal the view.
	var managed *C.DLManagedTensor
	if c.ok(C.kiln_session_get_output_dlpack(session, 0, &managed), "kiln_session_get_output_dlpack") {
		if managed == nil {
			c.fail("kiln_session_get_output_dlpack gave NULL")
		} else {
			m := &managed.dl_tensor
			if m.device.device_type != C.kDLCPU {
				c.fail("dlpack output should be on the CPU")
			}
			if !viewOK || !isFloat32(m) || !sameShape(shapeOf(m), outShape) || !isCompact(m) {
				c.fail("dlpack output dtype/shape differs from the view")
			} else {
				a, b := f32Slice(m, n), f32Slice(out, n)
				same := true
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
						same = false
						break
					}
				}
				if same {
					fmt.Println("dlpack output equals the view")
				} else {
					c.fail("dlpack output data differs from the view")
				}
			}
			if C.kilnffi_has_deleter(managed) == 0 {
				c.fail("dlpack output has no deleter")
			} else {
				C.kilnffi_call_deleter(managed)
			}
		}
	}

	// 6. One error path: an input of the wrong shape.
	wrong := newCTensor([]int64{1, 3, 16, 16}, nil)
	defer wrong.free()
	st := C.kiln_session_set_input(session, inputName, &wrong.t)
	if st == nil {
		c.fail("kiln_session_set_input with shape [1, 3, 16, 16] should fail")
	} else {
		code := C.kiln_status_code(st)
		msg := C.GoString(C.kiln_status_message(st))
		fmt.Printf("wrong shape: %s: %s\n", C.GoString(C.kiln_status_code_name(code)), msg)
		if code != C.KILN_INVALID_ARGUMENT {
			c.fail("wrong shape: the status code is %d, should be KILN_INVALID_ARGUMENT (3)", int(code))
		}
		if !strings.Contains(msg, "input") {
			c.fail("wrong shape: the message should mention \"input\"")
		}
		C.kiln_status_free(st)
	}
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintf(os.Stderr, "usage: %s MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR\n", os.Args[0])
		os.Exit(2)
	}
	c := &checker{}
	run(c, os.Args[1], os.Args[2], os.Args[3], os.Args[4])
	if c.failures > 0 {
		fmt.Fprintf(os.Stderr, "go: %d check(s) failed\n", c.failures)
		os.Exit(1)
	}
	fmt.Println("go: all checks passed")
}
