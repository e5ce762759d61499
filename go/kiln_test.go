// The kiln Go package end to end on examples/resnet_mini.onnx against
// NumPy's outputs, and on small text-IR models. (The checks of the former
// tests/ffi/go program are here: versions, inputs, the compile report, the
// artifact's input, the outputs vs NumPy, the DLPack copy vs the output,
// the wrong-shape error.) go/run_test.sh sets KILN_TEST_MODEL,
// KILN_TEST_INPUT and KILN_TEST_EXPECTED; without them the repository's
// examples/ are used.
package kiln_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"kiln"
)

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

var (
	modelPath    = env("KILN_TEST_MODEL", "../examples/resnet_mini.onnx")
	inputPath    = env("KILN_TEST_INPUT", "../examples/resnet_mini_input.npy")
	expectedPath = env("KILN_TEST_EXPECTED", "../examples/resnet_mini_output.npy")
)

var compiled struct {
	once   sync.Once
	path   string
	report *kiln.CompileReport
	err    error
	dir    string
}

// resnetMini compiles examples/resnet_mini.onnx once per test binary.
func resnetMini(t *testing.T) (string, *kiln.CompileReport) {
	t.Helper()
	compiled.once.Do(func() {
		compiled.dir, compiled.err = os.MkdirTemp(os.Getenv("TEST_TMPDIR"), "kiln_go_")
		if compiled.err != nil {
			return
		}
		var m *kiln.Model
		if m, compiled.err = kiln.LoadONNX(modelPath, nil); compiled.err != nil {
			return
		}
		defer m.Close()
		compiled.path = filepath.Join(compiled.dir, "resnet_mini.so")
		compiled.report, compiled.err = m.Compile(compiled.path, nil)
	})
	if compiled.err != nil {
		t.Fatalf("compiling %s: %v", modelPath, compiled.err)
	}
	return compiled.path, compiled.report
}

func reference(t *testing.T) (*kiln.Tensor, []float32) {
	t.Helper()
	x, err := kiln.ReadNpy(inputPath)
	if err != nil {
		t.Fatal(err)
	}
	y, err := kiln.ReadNpy(expectedPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := kiln.Values[float32](y)
	if err != nil {
		t.Fatal(err)
	}
	return x, want
}

// assertClose: |a - b| <= 1e-4 + 1e-4 |b| (the FFI programs' tolerance).
func assertClose(t *testing.T, out *kiln.Tensor, want []float32) {
	t.Helper()
	got, err := kiln.Values[float32](out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4+1e-4*math.Abs(float64(want[i])) {
			t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func codeOf(t *testing.T, err error) kiln.Code {
	t.Helper()
	var e *kiln.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *kiln.Error", err)
	}
	return e.Code
}

func session(t *testing.T, threads int) (*kiln.Artifact, *kiln.Session) {
	t.Helper()
	path, _ := resnetMini(t)
	a, err := kiln.LoadArtifact(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.NewSession(&kiln.SessionOptions{NumThreads: threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); a.Close() })
	return a, s
}

func TestVersions(t *testing.T) {
	if kiln.Version() == "" {
		t.Error("empty version")
	}
	if kiln.LibraryAPIVersion() < kiln.APIVersion {
		t.Errorf("library API version %d < %d", kiln.LibraryAPIVersion(), kiln.APIVersion)
	}
	if kiln.DefaultNumThreads() < 1 {
		t.Error("DefaultNumThreads < 1")
	}
}

func TestModel(t *testing.T) {
	m, err := kiln.LoadONNX(modelPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in, err := m.Inputs()
	if err != nil || len(in) != 1 || in[0].Name != "input" || in[0].DType != kiln.Float32 ||
		len(in[0].Shape) != 4 || in[0].Shape[2] != 32 {
		t.Fatalf("inputs %v, %v", in, err)
	}
	out, err := m.Outputs()
	if err != nil || len(out) != 1 || len(out[0].Shape) != 2 || out[0].Shape[1] != 10 {
		t.Fatalf("outputs %v, %v", out, err)
	}
	if text, _ := m.Text(false); !strings.Contains(text, "nn.conv2d") {
		t.Error("the text IR has no nn.conv2d")
	}
	if dot, _ := m.ToDot(); !strings.Contains(dot, "digraph") {
		t.Error("no digraph")
	}
	if w, err := m.Warnings(); err != nil || len(w) != 0 {
		t.Errorf("warnings of a clean model: %v, %v", w, err)
	}
	if loop, err := m.Emit(kiln.EmitLoopIR, nil); err != nil || loop == "" {
		t.Errorf("Emit: %v", err)
	}
	m.Close()
	if _, err := m.Inputs(); codeOf(t, err) != kiln.FailedPrecondition {
		t.Errorf("a closed model: %v", err)
	}
	m.Close() // idempotent
}

func TestImportOptions(t *testing.T) {
	m, err := kiln.LoadONNX(modelPath, &kiln.ImportOptions{InputShapes: map[string][]int64{"input": {1, 3, 32, 32}}})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	_, err = kiln.LoadONNX(modelPath, &kiln.ImportOptions{InputShapes: map[string][]int64{"input": {1, 3, 32}}})
	if codeOf(t, err) != kiln.InvalidArgument || !strings.Contains(err.Error(), "input") {
		t.Errorf("a wrong rank: %v", err)
	}
	data, _ := os.ReadFile(modelPath)
	if m, err = kiln.LoadONNXBytes(data, nil); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, err := kiln.LoadONNX("/nonexistent/m.onnx", nil); codeOf(t, err) != kiln.NotFound {
		t.Errorf("a missing file: %v", err)
	}
}

func TestCompileReportAndArtifact(t *testing.T) {
	path, report := resnetMini(t)
	st, _ := os.Stat(path)
	if report.NumKernels <= 0 || report.NumFusedCalls < report.NumKernels || report.FileBytes != uint64(st.Size()) {
		t.Errorf("report %+v, file %d bytes", report, st.Size())
	}
	a, _ := session(t, 1)
	in := a.Inputs()
	if len(in) != 1 || in[0].Name != "input" || in[0].DType != kiln.Float32 || len(a.Outputs()) != 1 {
		t.Errorf("inputs %v outputs %v", in, a.Outputs())
	}
	if !strings.HasPrefix(a.Target(), "llvm") || !strings.Contains(a.Producer(), "kiln") ||
		!strings.Contains(a.GraphJSON(), "\"nodes\"") || a.NumNodes() <= 0 {
		t.Errorf("target %q producer %q nodes %d", a.Target(), a.Producer(), a.NumNodes())
	}
	if arena, _ := a.MemoryStats(); int64(arena) != report.ArenaBytes {
		t.Errorf("arena %d, report %d", arena, report.ArenaBytes)
	}
	if _, err := a.InputIndex("nope"); codeOf(t, err) != kiln.NotFound {
		t.Errorf("InputIndex: %v", err)
	}
}

func TestRunMatchesNumPy(t *testing.T) {
	x, want := reference(t)
	a, s := session(t, 2)
	outs, err := s.Run(map[string]*kiln.Tensor{"input": x})
	if err != nil {
		t.Fatal(err)
	}
	name := a.Outputs()[0].Name
	if len(outs) != 1 || outs[name] == nil {
		t.Fatalf("outputs %v", outs)
	}
	assertClose(t, outs[name], want)
	// Inputs persist; a tensor over a Go slice works the same.
	values, _ := kiln.Values[float32](x)
	copied := append([]float32(nil), values...)
	x2, err := kiln.NewTensor([]int64{1, 3, 32, 32}, copied)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetInputIndex(0, x2); err != nil {
		t.Fatal(err)
	}
	again, err := s.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, again[name], want)
	if out, err := s.Output(0); err != nil {
		t.Fatal(err)
	} else {
		assertClose(t, out, want)
	}
	if _, err := kiln.Values[int32](again[name]); codeOf(t, err) != kiln.InvalidArgument {
		t.Errorf("Values of the wrong type: %v", err)
	}
}

func TestDLPackOutlivesSessionAndArtifact(t *testing.T) {
	x, want := reference(t)
	path, _ := resnetMini(t)
	a, _ := kiln.LoadArtifact(path)
	s, _ := a.NewSession(nil)
	outs, err := s.Run(map[string]*kiln.Tensor{"input": x})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.OutputDLPack(0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s.Close()
	a.Close()
	if m.DType() != kiln.Float32 || len(m.Shape()) != 2 || m.Shape()[1] != 10 {
		t.Errorf("dlpack tensor %v %v", m.DType(), m.Shape())
	}
	c, err := m.Copy()
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Data) != string(outs[a.Outputs()[0].Name].Data) {
		t.Error("the DLPack copy differs from the output bit for bit")
	}
	assertClose(t, c, want)
}

func TestErrors(t *testing.T) {
	x, _ := reference(t)
	_, s := session(t, 1)
	if _, err := s.Run(nil); codeOf(t, err) != kiln.FailedPrecondition || !strings.Contains(err.Error(), "input") {
		t.Errorf("run before set: %v", err)
	}
	small, _ := kiln.NewTensor([]int64{1, 3, 16, 16}, make([]float32, 3*16*16))
	err := s.SetInput("input", small)
	var e *kiln.Error
	if !errors.As(err, &e) || e.Code != kiln.InvalidArgument || int(e.Code) != 3 ||
		!strings.Contains(e.Message, "input") || !strings.Contains(e.Message, "[1,3,32,32]") {
		t.Errorf("wrong shape: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "INVALID_ARGUMENT: ") {
		t.Errorf("Error() = %q", err.Error())
	}
	doubles, _ := kiln.NewTensor([]int64{1, 3, 32, 32}, make([]float64, 3*32*32))
	if err := s.SetInput("input", doubles); codeOf(t, err) != kiln.InvalidArgument || !strings.Contains(err.Error(), "float32") {
		t.Errorf("wrong dtype: %v", err)
	}
	if err := s.SetInput("nope", x); codeOf(t, err) != kiln.NotFound {
		t.Errorf("unknown input: %v", err)
	}
	if err := s.SetInputIndex(7, x); codeOf(t, err) != kiln.OutOfRange {
		t.Errorf("input index 7: %v", err)
	}
	short := &kiln.Tensor{DType: kiln.Float32, Shape: []int64{1, 3, 32, 32}, Data: make([]byte, 12)}
	if err := s.SetInput("input", short); codeOf(t, err) != kiln.InvalidArgument {
		t.Errorf("short data: %v", err)
	}
	if _, err := kiln.NewTensor([]int64{2, 2}, []float32{1, 2, 3}); codeOf(t, err) != kiln.InvalidArgument {
		t.Errorf("NewTensor with a wrong count: %v", err)
	}
	if _, err := s.Run(map[string]*kiln.Tensor{"input": nil}); codeOf(t, err) != kiln.InvalidArgument {
		t.Errorf("a nil input: %v", err)
	}
	if _, err := s.Output(3); codeOf(t, err) != kiln.OutOfRange {
		t.Errorf("output 3: %v", err)
	}
	if _, err := kiln.LoadArtifact("/nonexistent/m.so"); codeOf(t, err) != kiln.NotFound {
		t.Errorf("missing artifact: %v", err)
	}
	path, _ := resnetMini(t)
	data, _ := os.ReadFile(path)
	bad := filepath.Join(t.TempDir(), "truncated.so")
	os.WriteFile(bad, data[:len(data)/2], 0o644)
	if _, err := kiln.LoadArtifact(bad); err == nil || !strings.Contains(err.Error(), "truncated.so") ||
		(codeOf(t, err) != kiln.DataLoss && codeOf(t, err) != kiln.NotFound) {
		t.Errorf("truncated artifact: %v", err)
	}
	s.Close()
	if _, err := s.Run(nil); codeOf(t, err) != kiln.FailedPrecondition {
		t.Errorf("closed session: %v", err)
	}
}

func TestProfileAndBenchmark(t *testing.T) {
	x, want := reference(t)
	_, report := resnetMini(t)
	_, s := session(t, 1)
	if err := s.SetInput("input", x); err != nil {
		t.Fatal(err)
	}
	p, err := s.Profile(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != report.NumFusedCalls {
		t.Errorf("%d rows, %d fused calls", len(p.Rows), report.NumFusedCalls)
	}
	sum := 0.0
	for _, r := range p.Rows {
		if r.Name == "" || r.Op == "" || r.TimeUS < 0 {
			t.Errorf("row %+v", r)
		}
		sum += r.TimeUS
	}
	if math.Abs(sum-p.TotalUS) > 1e-3 || !strings.Contains(p.Table, "Node Name") ||
		!strings.Contains(p.ChromeTrace, "traceEvents") {
		t.Errorf("total %v vs %v", p.TotalUS, sum)
	}
	out, _ := s.Output(0) // a profile is a full run
	assertClose(t, out, want)
	b, err := s.Benchmark(&kiln.BenchmarkOptions{Repeat: 5, Workload: "resnet_mini"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Repeat != 5 || b.MinMS > b.MeanMS || !strings.Contains(b.LogLine, `"engine":"kiln"`) ||
		!strings.Contains(b.LogLine, `"workload":"resnet_mini"`) {
		t.Errorf("benchmark %+v", b)
	}
	dir := t.TempDir()
	if err := s.DebugDump(dir, 0, 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "profile.txt")); err != nil {
		t.Error(err)
	}
}

func TestGoroutinesAndPools(t *testing.T) {
	x, want := reference(t)
	path, _ := resnetMini(t)
	a, err := kiln.LoadArtifact(path)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := kiln.NewThreadPool(2)
	if err != nil || pool.NumThreads() != 2 {
		t.Fatalf("pool: %v", err)
	}
	shared, _ := a.NewSession(&kiln.SessionOptions{Pool: pool})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 4; g++ {
		// Two goroutines share one session (serialized), two have their own.
		s := shared
		if g%2 == 0 {
			var err error
			if s, err = a.NewSession(&kiln.SessionOptions{NumThreads: 1}); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
		}
		wg.Add(1)
		go func(s *kiln.Session) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				outs, err := s.Run(map[string]*kiln.Tensor{"input": x})
				if err != nil {
					errs <- err
					return
				}
				got, _ := kiln.Values[float32](outs[a.Outputs()[0].Name])
				for j := range got {
					if math.Abs(float64(got[j]-want[j])) > 1e-4+1e-4*math.Abs(float64(want[j])) {
						errs <- errors.New("a wrong output on a goroutine")
						return
					}
				}
			}
		}(s)
	}
	// Closing the pool and the artifact now defers their release: the
	// sessions still use them.
	pool.Close()
	a.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := a.NewSession(nil); codeOf(t, err) != kiln.FailedPrecondition {
		t.Errorf("a session of a closed artifact: %v", err)
	}
	shared.Close()
	if _, err := kiln.NewThreadPool(-1); codeOf(t, err) != kiln.InvalidArgument {
		t.Errorf("NewThreadPool(-1): %v", err)
	}
}

func TestFinalizers(t *testing.T) {
	path, _ := resnetMini(t)
	for i := 0; i < 5; i++ {
		a, err := kiln.LoadArtifact(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.NewSession(&kiln.SessionOptions{NumThreads: 1}); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing closed: the finalizers release sessions, then artifacts.
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
}

const twoOutputs = `#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = add(%x, %y);
  (%0, multiply(%0, %y))
}
`

// Compile's progress: phase starts, each fused function while lowering, each
// kernel during code generation (from kiln's threads), and a panic in the
// callback comes back after the C call.
func TestCompileProgress(t *testing.T) {
	m, err := kiln.Parse(`#[version = "0.1"]
def @main(%x: Tensor[(4, 8), float32]) {
  %0 = nn.softmax(%x, axis=1);
  %1 = nn.softmax(%0, axis=0);
  nn.softmax(transpose(%1, axes=[1, 0]), axis=0)
}
`, "progress.kir")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "progress.so")
	var calls []string
	opts := kiln.DefaultCompileOptions()
	opts.NumThreads = 2
	opts.Progress = func(phase string, done, total int) {
		calls = append(calls, phase+" "+strconv.Itoa(done)+"/"+strconv.Itoa(total))
	}
	r, err := m.Compile(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	n := r.NumKernels
	if n < 2 || r.NumFusedCalls != n {
		t.Fatalf("report %+v: want at least 2 kernels, one per fused call", r)
	}
	want := []string{"passes 0/0"}
	for k := 0; k <= n; k++ {
		want = append(want, "lower "+strconv.Itoa(k)+"/"+strconv.Itoa(n))
	}
	want = append(want, "plan 0/0")
	for k := 0; k <= n; k++ {
		want = append(want, "codegen "+strconv.Itoa(k)+"/"+strconv.Itoa(n))
	}
	want = append(want, "link 0/0")
	if strings.Join(calls, ", ") != strings.Join(want, ", ") {
		t.Errorf("progress calls\n got %v\nwant %v", calls, want)
	}
	opts.Progress = func(phase string, done, total int) {
		if phase == "codegen" && done == 1 {
			panic("stop at the first kernel")
		}
	}
	func() {
		defer func() {
			if p := recover(); p != "stop at the first kernel" {
				t.Errorf("recovered %v", p)
			}
		}()
		m.Compile(path, opts)
		t.Error("Compile returned instead of re-raising the panic")
	}()
}

func TestTextIR(t *testing.T) {
	m, err := kiln.Parse(twoOutputs, "two_outputs.kir")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(t.TempDir(), "two.so")
	if _, err := m.Compile(path, &kiln.CompileOptions{OptLevel: 2}); err != nil {
		t.Fatal(err)
	}
	a, _ := kiln.LoadArtifact(path)
	defer a.Close()
	// The model names its outputs as the artifact does.
	if outs, err := m.Outputs(); err != nil || len(outs) != 2 || outs[1].Name != "output1" ||
		outs[1].Name != a.Outputs()[1].Name {
		t.Errorf("model outputs %v (%v), artifact outputs %v", outs, err, a.Outputs())
	}
	s, _ := a.NewSession(&kiln.SessionOptions{NumThreads: 1})
	defer s.Close()
	xs := []float32{1, -2, 3.5, 0.25, 8, -1}
	ys := []float32{0.5, 4, -3, 2, 0.125, 7}
	x, _ := kiln.NewTensor([]int64{2, 3}, xs)
	y, _ := kiln.NewTensor([]int64{2, 3}, ys)
	outs, err := s.Run(map[string]*kiln.Tensor{"x": x, "y": y})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := kiln.Values[float32](outs["output0"])
	prod, _ := kiln.Values[float32](outs["output1"])
	for i := range xs {
		if sum[i] != xs[i]+ys[i] || prod[i] != (xs[i]+ys[i])*ys[i] {
			t.Fatalf("element %d: %v %v", i, sum[i], prod[i])
		}
	}
	// A DLPack output goes back in as x: x + 2y.
	m0, _ := s.OutputDLPack(0)
	defer m0.Close()
	if err := s.SetInput("x", m0); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Run(nil)
	twice, _ := kiln.Values[float32](again["output0"])
	for i := range xs {
		if twice[i] != xs[i]+2*ys[i] {
			t.Fatalf("element %d: %v", i, twice[i])
		}
	}

	if _, err := kiln.Parse("#[version = \"0.1\"]\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, \n}\n", "broken.kir"); codeOf(t, err) != kiln.InvalidArgument || !strings.Contains(err.Error(), "broken.kir:") {
		t.Errorf("syntax error: %v", err)
	}
}

func TestOptimize(t *testing.T) {
	m, _ := kiln.LoadONNX(modelPath, nil)
	defer m.Close()
	var names []string
	opts := kiln.DefaultOptimizeOptions()
	opts.AfterPassText = true
	opts.AfterPass = func(e kiln.PassEvent) {
		if e.Text == "" || e.ElapsedMS < 0 {
			t.Errorf("event %+v", e.Name)
		}
		names = append(names, e.Name)
	}
	o, err := m.Optimize(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	known := strings.Join(kiln.Passes(), ",")
	if len(names) == 0 || !strings.Contains(known, "FuseOps") {
		t.Fatalf("passes %v (known %s)", names, known)
	}
	for _, n := range names {
		if !strings.Contains(","+known+",", ","+n+",") {
			t.Errorf("unknown pass %s", n)
		}
	}
	_, err = m.Optimize(&kiln.OptimizeOptions{OptLevel: 3, Passes: []string{"NoSuchPass"}})
	if codeOf(t, err) != kiln.NotFound || !strings.Contains(err.Error(), "FoldConstant") {
		t.Errorf("unknown pass: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the callback's panic was not re-raised")
			}
		}()
		m.Optimize(&kiln.OptimizeOptions{OptLevel: 3, AfterPass: func(kiln.PassEvent) { panic("stop") }})
	}()
}
