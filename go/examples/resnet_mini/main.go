// Command resnet_mini imports, compiles, loads and runs a model with the kiln
// package and checks it against NumPy's outputs.
//
//	resnet_mini MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR
//
// The program tests/ffi runs in every language: prints the library and ABI
// versions and the model's inputs, compiles the model to WORKDIR/model.so
// and prints the report, loads the artifact (one float32 [1, 3, 32, 32]
// input named "input", one output), runs a session on INPUT.npy and compares
// the output with EXPECTED.npy (|a - b| <= 1e-4 + 1e-4 |b|), checks that the
// DLPack copy of the output equals it bit for bit, and that an input of the
// wrong shape is InvalidArgument naming the input. Exits 0 only if every
// check passed; each failure is printed as "FAIL: ...".
package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"kiln"
)

type checks int

func (c *checks) check(ok bool, format string, args ...interface{}) {
	if !ok {
		fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
		*c++
	}
}

func run(c *checks, modelPath, inputPath, expectedPath, workdir string) error {
	fmt.Printf("kiln %s (C ABI %d)\n", kiln.Version(), kiln.LibraryAPIVersion())
	c.check(kiln.LibraryAPIVersion() >= kiln.APIVersion, "kiln_api_version() < %d", kiln.APIVersion)

	model, err := kiln.LoadONNX(modelPath, nil)
	if err != nil {
		return err
	}
	defer model.Close()
	inputs, err := model.Inputs()
	if err != nil {
		return err
	}
	for _, in := range inputs {
		fmt.Printf("model input: %s %v %v\n", in.Name, in.Shape, in.DType)
	}
	c.check(len(inputs) == 1, "the model should have 1 input")
	so := filepath.Join(workdir, "model.so")
	report, err := model.Compile(so, nil)
	if err != nil {
		return err
	}
	fmt.Printf("compiled %s: %d kernels, %d bytes\n", so, report.NumKernels, report.FileBytes)
	c.check(report.NumKernels > 0, "report.NumKernels should be > 0")
	c.check(report.FileBytes > 0, "report.FileBytes should be > 0")
	model.Close()

	artifact, err := kiln.LoadArtifact(so)
	if err != nil {
		return err
	}
	defer artifact.Close()
	c.check(len(artifact.Inputs()) == 1 && len(artifact.Outputs()) == 1, "the artifact should have 1 input and 1 output")
	first := artifact.Inputs()[0]
	c.check(first.Name == "input" && first.DType == kiln.Float32 && fmt.Sprint(first.Shape) == "[1 3 32 32]",
		"artifact input 0 should be float32 'input' [1 3 32 32], is %+v", first)
	session, err := artifact.NewSession(nil)
	if err != nil {
		return err
	}
	defer session.Close()

	x, err := kiln.ReadNpy(inputPath)
	if err != nil {
		return err
	}
	expected, err := kiln.ReadNpy(expectedPath)
	if err != nil {
		return err
	}
	want, err := kiln.Values[float32](expected)
	if err != nil {
		return err
	}
	outputs, err := session.Run(map[string]*kiln.Tensor{"input": x})
	if err != nil {
		return err
	}
	out := outputs[artifact.Outputs()[0].Name]
	got, err := kiln.Values[float32](out)
	if err != nil {
		return err
	}
	c.check(len(got) == len(want), "output has %d elements, EXPECTED.npy %d", len(got), len(want))
	maxErr, bad := 0.0, 0
	for i := 0; i < len(got) && i < len(want); i++ {
		d := math.Abs(float64(got[i] - want[i]))
		maxErr = math.Max(maxErr, d)
		if d > 1e-4+1e-4*math.Abs(float64(want[i])) {
			bad++
		}
	}
	fmt.Printf("compared %d elements: max abs error %.3g\n", len(got), maxErr)
	c.check(bad == 0, "output differs from EXPECTED.npy in %d elements", bad)

	managed, err := session.OutputDLPack(0)
	if err != nil {
		return err
	}
	defer managed.Close()
	copied, err := managed.Copy()
	if err != nil {
		return err
	}
	c.check(string(copied.Data) == string(out.Data), "the DLPack copy differs from the output")

	small, _ := kiln.NewTensor([]int64{1, 3, 16, 16}, make([]float32, 3*16*16))
	err = session.SetInput("input", small)
	var e *kiln.Error
	c.check(errors.As(err, &e), "an input of shape [1 3 16 16] should be refused with a *kiln.Error, got %v", err)
	if e != nil {
		fmt.Printf("wrong shape: %v\n", e)
		c.check(e.Code == kiln.InvalidArgument, "wrong shape: code %v, expected INVALID_ARGUMENT", e.Code)
		c.check(strings.Contains(e.Message, "input"), "wrong shape: the message should mention \"input\"")
	}
	return nil
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintf(os.Stderr, "usage: %s MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR\n", os.Args[0])
		os.Exit(2)
	}
	var c checks
	if err := run(&c, os.Args[1], os.Args[2], os.Args[3], os.Args[4]); err != nil {
		c.check(false, "%v", err)
	}
	if c > 0 {
		fmt.Fprintf(os.Stderr, "go: %d check(s) failed\n", c)
		os.Exit(1)
	}
	fmt.Println("go: all checks passed")
}
