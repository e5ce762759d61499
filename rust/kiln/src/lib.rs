//! kiln: compile and run deep-learning models from Rust, over libkiln's C ABI.
//!
//! ```no_run
//! use kiln::{Artifact, CompileOptions, Model, SessionOptions, TensorRef};
//! # fn main() -> kiln::Result<()> {
//! Model::load_onnx("examples/resnet_mini.onnx")?
//!     .compile("/tmp/resnet_mini.so", &CompileOptions::default())?;
//! let mut session = Artifact::load("/tmp/resnet_mini.so")?.session(&SessionOptions::default())?;
//! let x = kiln::NpyTensor::read("examples/resnet_mini_input.npy")?;
//! session.set_input("input", &x)?;
//! session.run()?;
//! println!("{:?}", session.output(0)?.as_slice::<f32>()?);
//! # Ok(()) }
//! ```
//!
//! * `Model` (kiln.h: import ONNX or text IR, optimize, compile) is
//!   immutable, `Send + Sync`.
//! * `Artifact` (a compiled .so, validated on load) is `Send + Sync` and
//!   cheap to clone; sessions keep it alive.
//! * `Session` (inputs, run, outputs, profile, benchmark) is `Send` but not
//!   `Sync`: one thread at a time, as docs/c_api.md §2.8 says.
//! * Tensors: `TensorRef` borrows a slice as an input, `OutputView` borrows a
//!   session's output until the next run, `ManagedTensor` owns a DLPack copy,
//!   `NpyTensor` holds a `.npy` file.
//! * Every failure is `Err(kiln::Error)`: the C status code and message.
//!
//! Every handle is released exactly once by `Drop`. The crate calls nothing
//! but the C ABI (through `kiln-sys`). Linking: see kiln-sys (`KILN_LIB_DIR`
//! or pkg-config); a program finds libkiln.so at run time through the rpath
//! this crate's build script adds to its own tests and examples, or through
//! `LD_LIBRARY_PATH` / the system's loader path.

mod artifact;
mod error;
mod model;
mod profile;
mod session;
mod tensor;
mod threadpool;

pub use artifact::{Artifact, MemoryStats};
pub use error::{Code, Error, Result};
pub use model::{
    passes, CompileOptions, CompileProgress, CompileReport, EmitKind, ImportOptions, Model,
    OptimizeOptions, PassEvent,
};
pub use profile::{BenchmarkOptions, BenchmarkResult, Profile, ProfileRow};
pub use session::{Session, SessionOptions};
pub use tensor::{
    AsDLTensor, DType, Element, ManagedTensor, NpyTensor, OutputView, TensorInfo, TensorRef,
};
pub use threadpool::{default_num_threads, ThreadPool};

/// The raw C ABI, for what this crate does not wrap.
pub use kiln_sys as sys;

/// The C ABI version this crate was written against.
pub const API_VERSION: u32 = kiln_sys::KILN_API_VERSION;

/// The loaded library's version string ("0.1.0").
pub fn version() -> String {
    unsafe { error::borrowed_string(kiln_sys::kiln_version()) }
}

/// The loaded library's C ABI version (at least `API_VERSION` for this crate).
pub fn api_version() -> u32 {
    unsafe { kiln_sys::kiln_api_version() }
}
