//! `Artifact`: a loaded, validated compiled model (`KilnArtifact`).
//!
//! ```no_run
//! # fn main() -> kiln::Result<()> {
//! let artifact = kiln::Artifact::load("resnet.so")?;  // checks everything first
//! println!("{} {:?}", artifact.target(), artifact.inputs());
//! let session = artifact.session(&kiln::SessionOptions::default())?;
//! # Ok(()) }
//! ```
//!
//! Immutable after loading: `Send + Sync`, and cheap to clone (shared). Each
//! session holds a clone, so the artifact is released after its last session,
//! as the C API requires.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};
use std::sync::Arc;

use kiln_sys as sys;

use crate::error::{borrowed_string, c_path, c_string, check, Code, Error, Result};
use crate::session::{Session, SessionOptions};
use crate::tensor::TensorInfo;

pub(crate) struct ArtifactHandle(pub(crate) NonNull<sys::KilnArtifact>);

// runtime.h: "A KilnArtifact is immutable after load and may be shared by any
// number of threads and sessions ... The functions on an artifact are thread-safe."
unsafe impl Send for ArtifactHandle {}
unsafe impl Sync for ArtifactHandle {}

impl Drop for ArtifactHandle {
    fn drop(&mut self) {
        unsafe { sys::kiln_artifact_release(self.0.as_ptr()) }
    }
}

/// Bytes of one session's intermediate arena, and without storage sharing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryStats {
    pub arena_bytes: u64,
    pub naive_bytes: u64,
}

/// A compiled model loaded from its .so.
#[derive(Clone)]
pub struct Artifact {
    pub(crate) inner: Arc<ArtifactHandle>,
    path: PathBuf,
    inputs: Arc<Vec<TensorInfo>>,
    outputs: Arc<Vec<TensorInfo>>,
}

type InfoFn = unsafe extern "C" fn(
    *const sys::KilnArtifact,
    i32,
    *mut *const std::os::raw::c_char,
    *mut sys::DLTensor,
) -> *mut sys::KilnStatus;

fn infos(a: *const sys::KilnArtifact, n: i32, info: InfoFn) -> Result<Vec<TensorInfo>> {
    (0..n)
        .map(|i| unsafe {
            let mut name = ptr::null();
            let mut t = std::mem::zeroed();
            check(info(a, i, &mut name, &mut t))?;
            Ok(TensorInfo::from_raw(borrowed_string(name), &t))
        })
        .collect()
}

impl Artifact {
    /// Loads and validates `path`. A truncated, corrupted or foreign file is
    /// DATA_LOSS / UNIMPLEMENTED / NOT_FOUND naming the file and the problem.
    pub fn load(path: impl AsRef<Path>) -> Result<Artifact> {
        let c = c_path(path.as_ref())?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::kiln_artifact_load(c.as_ptr(), &mut out))? };
        let handle = NonNull::new(out)
            .map(ArtifactHandle)
            .ok_or_else(|| Error::new(Code::Internal, "kiln_artifact_load returned NULL"))?;
        let a = handle.0.as_ptr();
        let (n_in, n_out) = unsafe {
            (
                sys::kiln_artifact_num_inputs(a),
                sys::kiln_artifact_num_outputs(a),
            )
        };
        let inputs = infos(a, n_in, sys::kiln_artifact_input_info)?;
        let outputs = infos(a, n_out, sys::kiln_artifact_output_info)?;
        Ok(Artifact {
            inner: Arc::new(handle),
            path: path.as_ref().to_path_buf(),
            inputs: Arc::new(inputs),
            outputs: Arc::new(outputs),
        })
    }

    fn raw(&self) -> *const sys::KilnArtifact {
        self.inner.0.as_ptr()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The inputs in index order (static shapes).
    pub fn inputs(&self) -> &[TensorInfo] {
        &self.inputs
    }

    pub fn outputs(&self) -> &[TensorInfo] {
        &self.outputs
    }

    /// The target it was compiled for ("llvm -mcpu=...").
    pub fn target(&self) -> String {
        unsafe { borrowed_string(sys::kiln_artifact_target(self.raw())) }
    }

    pub fn producer(&self) -> String {
        unsafe { borrowed_string(sys::kiln_artifact_producer(self.raw())) }
    }

    /// The executor plan: TVM graph-executor JSON (docs/artifact.md).
    pub fn graph_json(&self) -> String {
        unsafe { borrowed_string(sys::kiln_artifact_graph_json(self.raw())) }
    }

    pub fn num_nodes(&self) -> i32 {
        unsafe { sys::kiln_artifact_num_nodes(self.raw()) }
    }

    pub fn memory_stats(&self) -> MemoryStats {
        let (mut arena_bytes, mut naive_bytes) = (0, 0);
        unsafe { sys::kiln_artifact_memory_stats(self.raw(), &mut arena_bytes, &mut naive_bytes) };
        MemoryStats {
            arena_bytes,
            naive_bytes,
        }
    }

    /// The index of input `name`; NOT_FOUND listing the inputs.
    pub fn input_index(&self, name: &str) -> Result<usize> {
        self.index(name, sys::kiln_artifact_input_index)
    }

    pub fn output_index(&self, name: &str) -> Result<usize> {
        self.index(name, sys::kiln_artifact_output_index)
    }

    fn index(
        &self,
        name: &str,
        f: unsafe extern "C" fn(
            *const sys::KilnArtifact,
            *const std::os::raw::c_char,
            *mut i32,
        ) -> *mut sys::KilnStatus,
    ) -> Result<usize> {
        let c: CString = c_string(name, "name")?;
        let mut index = -1;
        unsafe { check(f(self.raw(), c.as_ptr(), &mut index))? };
        Ok(index as usize)
    }

    /// A new session (see `Session::new`).
    pub fn session(&self, options: &SessionOptions) -> Result<Session> {
        Session::new(self, options)
    }
}

impl std::fmt::Debug for Artifact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Artifact")
            .field("path", &self.path)
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish()
    }
}
