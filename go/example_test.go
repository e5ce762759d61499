package kiln_test

import (
	"fmt"
	"log"

	"kiln"
)

// The model -> artifact -> session flow (compiled by go test, not run: it
// writes /tmp/resnet_mini.so).
func Example() {
	model, err := kiln.LoadONNX("examples/resnet_mini.onnx", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer model.Close()
	if _, err := model.Compile("/tmp/resnet_mini.so", nil); err != nil {
		log.Fatal(err)
	}
	artifact, err := kiln.LoadArtifact("/tmp/resnet_mini.so")
	if err != nil {
		log.Fatal(err)
	}
	defer artifact.Close()
	session, err := artifact.NewSession(&kiln.SessionOptions{NumThreads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	x, err := kiln.NewTensor([]int64{1, 3, 32, 32}, make([]float32, 3*32*32))
	if err != nil {
		log.Fatal(err)
	}
	outputs, err := session.Run(map[string]*kiln.Tensor{"input": x})
	if err != nil {
		log.Fatal(err)
	}
	for name, t := range outputs {
		values, _ := kiln.Values[float32](t)
		fmt.Println(name, t.Shape, values)
	}
}
