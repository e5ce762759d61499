//! The kiln crate end to end on examples/resnet_mini.onnx, against NumPy's
//! outputs: import, compile, load, run, DLPack, errors, profiles, threads.
//! (The checks of the former tests/ffi/rust program are here: versions,
//! inputs, the compile report, the artifact's input, the outputs vs NumPy,
//! the DLPack copy vs the view, the wrong-shape error.)

mod common;

use std::thread;

use common::*;
use kiln::{
    Artifact, BenchmarkOptions, Code, CompileOptions, DType, EmitKind, ImportOptions, Model,
    NpyTensor, OptimizeOptions, Session, SessionOptions, TensorRef, ThreadPool,
};

fn session(threads: i32) -> Session {
    let (so, _) = resnet_mini();
    Artifact::load(so)
        .unwrap()
        .session(&SessionOptions {
            num_threads: threads,
            ..Default::default()
        })
        .unwrap()
}

fn reference() -> (NpyTensor, Vec<f32>) {
    let x = NpyTensor::read(input_path()).unwrap();
    let want = NpyTensor::read(expected_path())
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    (x, want)
}

#[test]
fn thread_safety_is_what_the_c_api_says() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Session>(); // Session is Send but not Sync (src/session.rs has the compile_fail test)
    send::<Artifact>();
    sync::<Artifact>();
    send::<Model>();
    sync::<Model>();
    send::<ThreadPool>();
    sync::<ThreadPool>();
    send::<kiln::ManagedTensor>();
}

#[test]
fn versions() {
    assert!(!kiln::version().is_empty());
    assert!(kiln::api_version() >= kiln::API_VERSION);
    assert!(kiln::default_num_threads() >= 1);
}

#[test]
fn model_inputs_and_outputs() {
    let model = Model::load_onnx(model_path()).unwrap();
    let inputs = model.inputs().unwrap();
    assert_eq!(inputs.len(), 1);
    assert_eq!(
        (inputs[0].name.as_str(), inputs[0].shape.as_slice()),
        ("input", &[1, 3, 32, 32][..])
    );
    assert_eq!(inputs[0].dtype, DType::FLOAT32);
    assert_eq!(inputs[0].dtype.to_string(), "float32");
    let outputs = model.outputs().unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].shape, vec![1, 10]);
    assert!(model.text(false).unwrap().contains("nn.conv2d"));
    assert!(model.to_dot().unwrap().contains("digraph"));
    assert_eq!(model.warnings().unwrap(), Vec::<String>::new()); // a clean model
    assert!(!model
        .emit(EmitKind::LoopIr, &CompileOptions::default())
        .unwrap()
        .is_empty());
}

#[test]
fn import_options() {
    let ok = ImportOptions::new().input_shape("input", &[1, 3, 32, 32]);
    assert_eq!(
        Model::load_onnx_with(model_path(), &ok)
            .unwrap()
            .inputs()
            .unwrap()[0]
            .shape,
        vec![1, 3, 32, 32]
    );
    let bad = ImportOptions::new().input_shape("input", &[1, 3, 32]);
    let e = Model::load_onnx_with(model_path(), &bad).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("input"), "{}", e);
    let bytes = std::fs::read(model_path()).unwrap();
    assert_eq!(
        Model::load_onnx_bytes(&bytes, &ImportOptions::new())
            .unwrap()
            .inputs()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn compile_report_and_artifact() {
    let (so, report) = resnet_mini();
    assert!(report.num_kernels > 0);
    assert!(report.num_fused_calls >= report.num_kernels);
    assert_eq!(report.file_bytes, std::fs::metadata(&so).unwrap().len());
    let a = Artifact::load(&so).unwrap();
    assert_eq!(a.inputs().len(), 1);
    assert_eq!(a.inputs()[0].name, "input");
    assert_eq!(a.inputs()[0].shape, vec![1, 3, 32, 32]);
    assert_eq!(a.inputs()[0].dtype, DType::FLOAT32);
    assert_eq!(a.outputs().len(), 1);
    assert!(a.target().starts_with("llvm"), "{}", a.target());
    assert!(a.producer().contains("kiln"));
    assert!(a.graph_json().contains("\"nodes\""));
    assert!(a.num_nodes() > 0);
    assert_eq!(a.memory_stats().arena_bytes as i64, report.arena_bytes);
    assert_eq!(a.input_index("input").unwrap(), 0);
    assert_eq!(a.input_index("nope").unwrap_err().code(), Code::NotFound);
}

#[test]
fn run_matches_numpy() {
    let (x, want) = reference();
    let mut s = session(2);
    s.set_input("input", &x).unwrap();
    s.run().unwrap();
    let out = s.output(0).unwrap();
    assert_eq!(out.shape(), &[1, 10]);
    assert_eq!(out.dtype(), DType::FLOAT32);
    assert_close(out.as_slice::<f32>().unwrap(), &want);
    assert_close(
        s.output_named(&s.outputs()[0].name)
            .unwrap()
            .as_slice()
            .unwrap(),
        &want,
    );
    // The same input from a plain slice; inputs persist between runs.
    let data: Vec<f32> = x.to_vec().unwrap();
    s.set_input("input", &TensorRef::new(&data, &[1, 3, 32, 32]).unwrap())
        .unwrap();
    s.run().unwrap();
    s.run().unwrap();
    let mut copy = vec![0f32; 10];
    s.copy_output(0, &mut copy).unwrap();
    assert_close(&copy, &want);
    assert_eq!(
        s.copy_output(0, &mut [0f32; 3]).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        s.output(0).unwrap().as_slice::<i32>().unwrap_err().code(),
        Code::InvalidArgument
    );
}

#[test]
fn dlpack_copy_outlives_everything() {
    let (x, want) = reference();
    let (so, _) = resnet_mini();
    let artifact = Artifact::load(so).unwrap();
    let mut s = artifact.session(&SessionOptions::default()).unwrap();
    s.set_input_index(0, &x).unwrap();
    s.run().unwrap();
    let view: Vec<f32> = s.output(0).unwrap().to_vec().unwrap();
    let owned = s.output_dlpack(0).unwrap();
    assert_eq!(owned.shape(), &[1, 10]);
    assert_eq!(owned.as_bytes().unwrap().len(), 40);
    assert_eq!(owned.as_slice::<f32>().unwrap(), view.as_slice()); // bit for bit
    drop(s);
    drop(artifact);
    let moved = thread::spawn(move || owned.to_vec::<f32>().unwrap())
        .join()
        .unwrap(); // Send
    assert_close(&moved, &want);
}

#[test]
fn errors() {
    let (x, _) = reference();
    let mut s = session(1);
    let e = s.run().unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{}", e);
    assert!(e.message().contains("input"));

    let small = vec![0f32; 3 * 16 * 16];
    let e = s
        .set_input("input", &TensorRef::new(&small, &[1, 3, 16, 16]).unwrap())
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(e.code().raw(), 3);
    assert!(e.message().contains("input"), "{}", e);
    assert!(e.message().contains("[1,3,32,32]"), "{}", e);
    assert!(e.to_string().starts_with("INVALID_ARGUMENT: "));

    let doubles = vec![0f64; 3 * 32 * 32];
    let e = s
        .set_input("input", &TensorRef::new(&doubles, &[1, 3, 32, 32]).unwrap())
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("float32"), "{}", e);
    assert_eq!(s.set_input("nope", &x).unwrap_err().code(), Code::NotFound);
    assert_eq!(
        s.set_input_index(7, &x).unwrap_err().code(),
        Code::OutOfRange
    );
    assert_eq!(
        s.set_input("in\0put", &x).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        TensorRef::new(&small, &[1, 3, 32, 32]).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(
        TensorRef::new(&small, &[-1, 3, 16, 16]).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert_eq!(s.output(5).unwrap_err().code(), Code::OutOfRange);

    assert_eq!(
        Model::load_onnx("/nonexistent/m.onnx").unwrap_err().code(),
        Code::NotFound
    );
    assert_eq!(
        Artifact::load("/nonexistent/m.so").unwrap_err().code(),
        Code::NotFound
    );
    let (so, _) = resnet_mini();
    let bytes = std::fs::read(so).unwrap();
    let truncated = scratch("bad").join("truncated.so");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let e = Artifact::load(&truncated).unwrap_err();
    assert!(matches!(e.code(), Code::DataLoss | Code::NotFound), "{}", e);
    assert!(e.message().contains("truncated.so"), "{}", e);
}

#[test]
fn profile_and_benchmark() {
    let (x, want) = reference();
    let (_, report) = resnet_mini();
    let mut s = session(1);
    s.set_input("input", &x).unwrap();
    let p = s.profile(1, 3).unwrap();
    assert_eq!(p.rows.len() as i32, report.num_fused_calls);
    for row in &p.rows {
        assert!(!row.name.is_empty() && !row.op.is_empty());
        assert!(row.time_us >= 0.0);
    }
    let sum: f64 = p.rows.iter().map(|r| r.time_us).sum();
    assert!((p.total_us - sum).abs() < 1e-3, "{} vs {}", p.total_us, sum);
    assert!(p.table.contains("Node Name"));
    assert!(p.chrome_trace.contains("traceEvents"));
    assert_close(s.output(0).unwrap().as_slice().unwrap(), &want); // a profile is a full run

    let b = s
        .benchmark(&BenchmarkOptions {
            repeat: 5,
            workload: Some("resnet_mini".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(b.repeat, 5);
    assert!(b.min_ms <= b.mean_ms && b.mean_ms <= b.max_ms);
    assert!(b.log_line.contains("\"engine\":\"kiln\""), "{}", b.log_line);
    assert!(b.log_line.contains("\"workload\":\"resnet_mini\""));
    let dir = scratch("dump");
    s.debug_dump(&dir, 0, 1, false).unwrap();
    assert!(dir.join("profile.txt").is_file());
    assert!(!dir.join("tensors").exists());
}

#[test]
fn sessions_move_between_threads() {
    let (x, want) = reference();
    let data: Vec<f32> = x.to_vec().unwrap();
    let (so, _) = resnet_mini();
    let artifact = Artifact::load(so).unwrap();
    let pool = ThreadPool::new(2).unwrap();
    assert_eq!(pool.num_threads(), 2);
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let (artifact, data, want) = (artifact.clone(), data.clone(), want.clone());
            let options = SessionOptions {
                pool: if i % 2 == 0 { Some(pool.clone()) } else { None },
                num_threads: 1,
            };
            let mut s = artifact.session(&options).unwrap();
            // The session is made here and moved into the thread (Send).
            thread::spawn(move || {
                for _ in 0..20 {
                    s.set_input("input", &TensorRef::new(&data, &[1, 3, 32, 32]).unwrap())
                        .unwrap();
                    s.run().unwrap();
                    assert_close(s.output(0).unwrap().as_slice().unwrap(), &want);
                }
            })
        })
        .collect();
    drop(pool); // the sessions keep it alive
    drop(artifact);
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        ThreadPool::new(-1).err().unwrap().code(),
        Code::InvalidArgument
    );
}

#[test]
fn zero_copy_reads_in_place() {
    let (x, want) = reference();
    let mut data: Vec<f32> = x.to_vec().unwrap();
    let mut s = session(1);
    unsafe {
        s.set_input_zero_copy("input", &TensorRef::new(&data, &[1, 3, 32, 32]).unwrap())
            .unwrap()
    };
    s.run().unwrap();
    assert_close(s.output(0).unwrap().as_slice().unwrap(), &want);
    // Detach before the buffer changes (the contract of set_input_zero_copy).
    let zeros = vec![0f32; data.len()];
    s.set_input("input", &TensorRef::new(&zeros, &[1, 3, 32, 32]).unwrap())
        .unwrap();
    s.run().unwrap();
    let from_zeros: Vec<f32> = s.output(0).unwrap().to_vec().unwrap();
    data.iter_mut().for_each(|v| *v = 0.0);
    unsafe {
        s.set_input_zero_copy("input", &TensorRef::new(&data, &[1, 3, 32, 32]).unwrap())
            .unwrap()
    };
    s.run().unwrap();
    assert_eq!(
        s.output(0).unwrap().as_slice::<f32>().unwrap(),
        from_zeros.as_slice()
    );
}

#[test]
fn optimize_with_callback() {
    let model = Model::load_onnx(model_path()).unwrap();
    let mut names = Vec::new();
    let options = OptimizeOptions {
        after_pass_text: true,
        ..Default::default()
    };
    let optimized = model
        .optimize_with(&options, |e| {
            assert!(e.elapsed_ms >= 0.0);
            assert!(e.text.is_some());
            names.push(e.name.to_string());
        })
        .unwrap();
    let known = kiln::passes();
    assert!(known.contains(&"FuseOps".to_string()));
    assert!(!names.is_empty());
    assert!(names.iter().all(|n| known.contains(n)), "{:?}", names);
    assert_ne!(optimized.text(false).unwrap(), model.text(false).unwrap());
    // A panic in the callback does not cross into C; it comes back here.
    let result = std::panic::catch_unwind(|| {
        let _ = model.optimize_with(&OptimizeOptions::default(), |_| panic!("stop"));
    });
    assert!(result.is_err());
}
