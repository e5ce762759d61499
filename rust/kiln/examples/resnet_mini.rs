//! Import, compile, load and run a model with the kiln crate; check it
//! against NumPy's outputs.
//!
//!   cargo run --example resnet_mini -- MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR
//!
//! The program tests/ffi runs in every language: prints the library and ABI
//! versions and the model's inputs, compiles the model to WORKDIR/model.so
//! and prints the report, loads the artifact (one float32 [1, 3, 32, 32]
//! input named "input", one output), runs a session on INPUT.npy and compares
//! output 0 with EXPECTED.npy (|a - b| <= 1e-4 + 1e-4 |b|), checks that the
//! DLPack copy equals the view bit for bit, and that an input of the wrong
//! shape is INVALID_ARGUMENT naming the input. Exits 0 only if every check
//! passed; each failure is printed as "FAIL: ...".

use std::path::Path;
use std::process::ExitCode;

use kiln::{Artifact, Code, CompileOptions, DType, Model, NpyTensor, SessionOptions, TensorRef};

struct Checks(usize);

impl Checks {
    fn check(&mut self, ok: bool, what: &str) {
        if !ok {
            eprintln!("FAIL: {}", what);
            self.0 += 1;
        }
    }
}

fn run(args: &[String], c: &mut Checks) -> kiln::Result<()> {
    let (model_path, input_path, expected_path) = (&args[1], &args[2], &args[3]);
    let so = Path::new(&args[4]).join("model.so");
    println!("kiln {} (C ABI {})", kiln::version(), kiln::api_version());
    c.check(
        kiln::api_version() >= kiln::API_VERSION,
        "kiln_api_version() is too old",
    );

    let model = Model::load_onnx(model_path)?;
    for i in model.inputs()? {
        println!("model input: {} {:?} {}", i.name, i.shape, i.dtype);
    }
    c.check(model.inputs()?.len() == 1, "the model should have 1 input");
    let report = model.compile(&so, &CompileOptions::default())?;
    println!(
        "compiled {}: {} kernels, {} bytes",
        so.display(),
        report.num_kernels,
        report.file_bytes
    );
    c.check(report.num_kernels > 0, "report.num_kernels should be > 0");
    c.check(report.file_bytes > 0, "report.file_bytes should be > 0");
    drop(model);

    let artifact = Artifact::load(&so)?;
    c.check(
        artifact.inputs().len() == 1 && artifact.outputs().len() == 1,
        "the artifact should have 1 input and 1 output",
    );
    let first = &artifact.inputs()[0];
    c.check(
        first.name == "input" && first.shape == [1, 3, 32, 32] && first.dtype == DType::FLOAT32,
        "artifact input 0 should be float32 'input' [1, 3, 32, 32]",
    );
    let mut session = artifact.session(&SessionOptions::default())?;

    let x = NpyTensor::read(input_path)?;
    let want: Vec<f32> = NpyTensor::read(expected_path)?.to_vec()?;
    session.set_input("input", &x)?;
    session.run()?;
    let got: Vec<f32> = session.output(0)?.to_vec()?;
    c.check(
        got.len() == want.len(),
        "output 0 and EXPECTED.npy differ in size",
    );
    let mut max_err = 0f32;
    let mut bad = 0;
    for (a, b) in got.iter().zip(&want) {
        max_err = max_err.max((a - b).abs());
        if (a - b).abs() > 1e-4 + 1e-4 * b.abs() {
            bad += 1;
        }
    }
    println!(
        "compared {} elements: max abs error {:.3e}",
        got.len(),
        max_err
    );
    c.check(bad == 0, "output 0 differs from EXPECTED.npy");

    let copy = session.output_dlpack(0)?;
    c.check(
        copy.as_slice::<f32>()? == got.as_slice(),
        "the DLPack copy differs from the view",
    );

    let small = vec![0f32; 3 * 16 * 16];
    match session.set_input("input", &TensorRef::new(&small, &[1, 3, 16, 16])?) {
        Ok(()) => c.check(false, "an input of shape [1, 3, 16, 16] should be refused"),
        Err(e) => {
            println!("wrong shape: {}", e);
            c.check(
                e.code() == Code::InvalidArgument,
                "wrong shape: the code should be INVALID_ARGUMENT",
            );
            c.check(
                e.message().contains("input"),
                "wrong shape: the message should mention \"input\"",
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!(
            "usage: {} MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR",
            args[0]
        );
        return ExitCode::from(2);
    }
    let mut checks = Checks(0);
    if let Err(e) = run(&args, &mut checks) {
        checks.check(false, &e.to_string());
    }
    if checks.0 > 0 {
        eprintln!("rust: {} check(s) failed", checks.0);
        return ExitCode::from(1);
    }
    println!("rust: all checks passed");
    ExitCode::SUCCESS
}
