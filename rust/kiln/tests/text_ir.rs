//! Model::parse -> compile -> run on small text-IR models, checked against
//! values computed here: two outputs, int32, a DLPack output fed back as an
//! input, the parser's error positions, pass-name errors.

mod common;

use common::scratch;
use kiln::{
    Artifact, Code, CompileOptions, DType, Model, OptimizeOptions, SessionOptions, TensorRef,
};

const TWO_OUTPUTS: &str = r#"#[version = "0.1"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = add(%x, %y);
  (%0, multiply(%0, %y))
}
"#;

const INT32: &str = r#"#[version = "0.1"]
def @main(%a: Tensor[(4,), int32], %b: Tensor[(4,), int32]) -> Tensor[(4,), int32] {
  subtract(multiply(%a, %b), %a)
}
"#;

fn build(text: &str, name: &str) -> Artifact {
    let so = scratch(name).join(format!("{}.so", name));
    let options = CompileOptions {
        opt_level: 2,
        ..Default::default()
    };
    Model::parse_named(text, &format!("{}.kir", name))
        .unwrap()
        .compile(&so, &options)
        .unwrap();
    Artifact::load(&so).unwrap()
}

#[test]
fn output_names_and_dim_names() {
    let model = Model::parse(
        "#[version = \"0.1\"]\n\
         def @main(%x: Tensor[(N, 3), float32], output_names=[\"probs\"]) {\n\
           nn.softmax(%x, axis=1)\n}\n",
    )
    .unwrap();
    let outputs = model.outputs().unwrap();
    assert_eq!(outputs[0].name, "probs");
    assert_eq!(model.input_dim_names(0).unwrap(), ["N", "3"]);
    assert_eq!(model.input_dim_names(1).unwrap_err().code(), Code::OutOfRange);
    let unnamed = Model::parse(TWO_OUTPUTS).unwrap().outputs().unwrap();
    assert_eq!(unnamed[1].name, "output1");
}

#[test]
fn compile_progress() {
    // Three fused functions (softmax does not fuse with the ops around it),
    // each its own kernel: "lower" and "codegen" count 0..=kernels.
    let model = Model::parse(
        "#[version = \"0.1\"]\n\
         def @main(%x: Tensor[(4, 8), float32]) {\n\
           %0 = nn.softmax(%x, axis=1);\n\
           %1 = nn.softmax(%0, axis=0);\n\
           nn.softmax(transpose(%1, axes=[1, 0]), axis=0)\n}\n",
    )
    .unwrap();
    let so = scratch("progress").join("progress.so");
    let mut calls = Vec::new();
    let options = CompileOptions {
        num_threads: 2,
        ..Default::default()
    };
    let report = model
        .compile_with(&so, &options, |p| {
            calls.push(format!("{} {}/{}", p.phase, p.done, p.total))
        })
        .unwrap();
    let n = report.num_kernels;
    assert!(n >= 2, "{:?}", report);
    assert_eq!(report.num_fused_calls, n);
    let mut want = vec!["passes 0/0".to_string()];
    want.extend((0..=n).map(|k| format!("lower {}/{}", k, n)));
    want.push("plan 0/0".to_string());
    want.extend((0..=n).map(|k| format!("codegen {}/{}", k, n)));
    want.push("link 0/0".to_string());
    assert_eq!(calls, want);
    assert!(Artifact::load(&so).is_ok());
    // A panic in the callback comes back after the C call, not through it.
    let caught = std::panic::catch_unwind(|| {
        model.compile_with(&so, &options, |p| {
            if p.phase == "codegen" && p.done == 1 {
                panic!("stop at the first kernel");
            }
        })
    });
    let message = caught.unwrap_err();
    assert_eq!(message.downcast_ref::<&str>(), Some(&"stop at the first kernel"));
}

#[test]
fn two_outputs() {
    let artifact = build(TWO_OUTPUTS, "two_outputs");
    let names: Vec<&str> = artifact.outputs().iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["output0", "output1"]);
    let mut s = artifact
        .session(&SessionOptions {
            num_threads: 1,
            pool: None,
        })
        .unwrap();
    let x = [1.0f32, -2.0, 3.5, 0.25, 8.0, -1.0];
    let y = [0.5f32, 4.0, -3.0, 2.0, 0.125, 7.0];
    s.set_input("x", &TensorRef::new(&x, &[2, 3]).unwrap())
        .unwrap();
    s.set_input("y", &TensorRef::new(&y, &[2, 3]).unwrap())
        .unwrap();
    s.run().unwrap();
    let sum: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    let product: Vec<f32> = sum.iter().zip(&y).map(|(s, b)| s * b).collect();
    assert_eq!(
        s.output(0).unwrap().as_slice::<f32>().unwrap(),
        sum.as_slice()
    );
    assert_eq!(
        s.output_named("output1")
            .unwrap()
            .as_slice::<f32>()
            .unwrap(),
        product.as_slice()
    );
    // An owned DLPack copy of output0 goes back in as x: x + 2y.
    let owned = s.output_dlpack(0).unwrap();
    s.set_input("x", &owned).unwrap();
    s.run().unwrap();
    let expect: Vec<f32> = sum.iter().zip(&y).map(|(s, b)| s + b).collect();
    assert_eq!(
        s.output(0).unwrap().as_slice::<f32>().unwrap(),
        expect.as_slice()
    );
}

#[test]
fn int32() {
    let artifact = build(INT32, "int32");
    assert_eq!(artifact.inputs()[0].dtype, DType::INT32);
    let mut s = artifact.session(&SessionOptions::default()).unwrap();
    let a = [1i32, -2, 3, 40000];
    let b = [5i32, 6, -7, 40000];
    s.set_input("a", &TensorRef::new(&a, &[4]).unwrap())
        .unwrap();
    s.set_input("b", &TensorRef::new(&b, &[4]).unwrap())
        .unwrap();
    s.run().unwrap();
    let want: Vec<i32> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| x.wrapping_mul(*y).wrapping_sub(*x))
        .collect();
    assert_eq!(
        s.output(0).unwrap().as_slice::<i32>().unwrap(),
        want.as_slice()
    );
    let wide = [1i64, 2, 3, 4];
    let e = s
        .set_input("a", &TensorRef::new(&wide, &[4]).unwrap())
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("int32"), "{}", e);
}

#[test]
fn parse_errors_and_passes() {
    let e = Model::parse_named(
        "#[version = \"0.1\"]\ndef @main(%x: Tensor[(2), float32]) {\n  add(%x, \n}\n",
        "broken.kir",
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("broken.kir:"), "{}", e);
    let model = Model::parse(TWO_OUTPUTS).unwrap();
    assert_eq!(
        Model::parse(&model.text(false).unwrap())
            .unwrap()
            .text(false)
            .unwrap(),
        model.text(false).unwrap()
    );
    let options = OptimizeOptions {
        passes: Some(vec!["NoSuchPass".into()]),
        ..Default::default()
    };
    let e = model.optimize(&options).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert!(e.message().contains("FoldConstant"), "{}", e);
    let options = OptimizeOptions {
        passes: Some(vec!["InferType".into(), "FuseOps".into()]),
        ..Default::default()
    };
    let mut ran = Vec::new();
    model
        .optimize_with(&options, |e| ran.push(e.name.to_string()))
        .unwrap();
    assert!(ran.contains(&"FuseOps".to_string()));
}
