//! What the tests share: where their files are, and a compiled resnet_mini.
//!
//! rust/run_test.sh sets KILN_TEST_MODEL, KILN_TEST_INPUT, KILN_TEST_EXPECTED
//! (examples/resnet_mini.onnx, its input, NumPy's outputs) and TEST_TMPDIR;
//! without them the repository's own files and the system's temp dir are used.
#![allow(dead_code)]

use std::env;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use kiln::{CompileOptions, CompileReport, Model};

fn path(var: &str, default: &str) -> PathBuf {
    match env::var(var) {
        Ok(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(default),
    }
}

pub fn model_path() -> PathBuf {
    path("KILN_TEST_MODEL", "examples/resnet_mini.onnx")
}

pub fn input_path() -> PathBuf {
    path("KILN_TEST_INPUT", "examples/resnet_mini_input.npy")
}

pub fn expected_path() -> PathBuf {
    path("KILN_TEST_EXPECTED", "examples/resnet_mini_output.npy")
}

/// A fresh directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let base = env::var("TEST_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| env::temp_dir());
    let dir = base.join(format!(
        "kiln_rs_{}_{}_{}",
        name,
        std::process::id(),
        COUNT.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

static COMPILED: Mutex<Option<(PathBuf, CompileReport)>> = Mutex::new(None);

/// examples/resnet_mini.onnx compiled once per test binary: (artifact path, report).
pub fn resnet_mini() -> (PathBuf, CompileReport) {
    let mut compiled = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
    if compiled.is_none() {
        let so = scratch("resnet_mini").join("resnet_mini.so");
        let report = Model::load_onnx(model_path())
            .expect("load_onnx")
            .compile(&so, &CompileOptions::default())
            .expect("compile");
        *compiled = Some((so, report));
    }
    compiled.clone().unwrap()
}

/// |a - b| <= 1e-4 + 1e-4 |b| for every element (the FFI programs' tolerance).
pub fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "element counts");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= 1e-4 + 1e-4 * b.abs(),
            "element {}: got {}, want {}",
            i,
            a,
            b
        );
    }
}
