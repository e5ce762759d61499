//! `Session`: running an artifact (`KilnSession`).
//!
//! ```no_run
//! use kiln::{Artifact, SessionOptions, TensorRef};
//! # fn main() -> kiln::Result<()> {
//! let artifact = Artifact::load("resnet_mini.so")?;
//! let mut session = artifact.session(&SessionOptions { num_threads: 2, ..Default::default() })?;
//! let x = vec![0.0f32; 3 * 32 * 32];
//! session.set_input("input", &TensorRef::new(&x, &[1, 3, 32, 32])?)?;
//! session.run()?;
//! let probabilities: Vec<f32> = session.output(0)?.to_vec()?;
//! # Ok(()) }
//! ```
//!
//! The C API allows one thread at a time on a session (docs/c_api.md §2.8),
//! which is what `Send` without `Sync` says: a session may move to another
//! thread, but two threads cannot share one. It does not compile:
//!
//! ```compile_fail
//! fn shared_between_threads<T: Sync>() {}
//! shared_between_threads::<kiln::Session>();
//! ```
//!
//! Output views borrow the session, so the next `run` (which takes `&mut
//! self`) cannot overwrite one still in use.

use std::ffi::CString;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use kiln_sys as sys;

use crate::artifact::Artifact;
use crate::error::{c_path, c_string, check, take_string, Code, Error, Result};
use crate::profile::{BenchmarkOptions, BenchmarkResult, Profile};
use crate::tensor::{AsDLTensor, Element, ManagedTensor, OutputView, TensorInfo};
use crate::threadpool::{PoolHandle, ThreadPool};

/// How a session gets its threads.
#[derive(Clone, Default)]
pub struct SessionOptions {
    /// 0 = `$KILN_NUM_THREADS` or the CPU count; 1 = the calling thread only;
    /// N = a pool of N threads owned by the session. Ignored with `pool`.
    pub num_threads: i32,
    /// A pool to share instead.
    pub pool: Option<ThreadPool>,
}

/// A session of an artifact: its inputs, outputs, arena and threads.
pub struct Session {
    raw: NonNull<sys::KilnSession>,
    // Released after the session (Drop below runs before the fields drop).
    artifact: Artifact,
    _pool: Option<Arc<PoolHandle>>,
}

// One thread at a time (docs/c_api.md §2.8): moving a session to another
// thread is fine, sharing it is not. `NonNull` keeps Session `!Sync`.
unsafe impl Send for Session {}

impl Drop for Session {
    fn drop(&mut self) {
        unsafe { sys::kiln_session_release(self.raw.as_ptr()) }
    }
}

impl Session {
    /// Allocates everything one run needs (inputs, outputs, arena, threads).
    pub fn new(artifact: &Artifact, options: &SessionOptions) -> Result<Session> {
        let pool = options.pool.as_ref().map(|p| p.inner.clone());
        let raw_options = sys::KilnSessionOptions {
            struct_size: std::mem::size_of::<sys::KilnSessionOptions>(),
            num_threads: options.num_threads,
            pool: pool.as_ref().map_or(ptr::null_mut(), |p| p.0.as_ptr()),
            device_type: 0, // the CPU
            device_id: 0,
        };
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_session_create(
                artifact.inner.0.as_ptr(),
                &raw_options,
                &mut out,
            ))?
        };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, "kiln_session_create returned NULL"))?;
        Ok(Session {
            raw,
            artifact: artifact.clone(),
            _pool: pool,
        })
    }

    pub fn artifact(&self) -> &Artifact {
        &self.artifact
    }

    pub fn inputs(&self) -> &[TensorInfo] {
        self.artifact.inputs()
    }

    pub fn outputs(&self) -> &[TensorInfo] {
        self.artifact.outputs()
    }

    fn name(name: &str) -> Result<CString> {
        c_string(name, "input name")
    }

    /// Copies `tensor` into input `name`. The dtype and every dim must match
    /// (INVALID_ARGUMENT says what was expected and what given); an unknown
    /// name is NOT_FOUND. Inputs keep their values between runs.
    pub fn set_input(&mut self, name: &str, tensor: &(impl AsDLTensor + ?Sized)) -> Result<()> {
        let c = Session::name(name)?;
        let t = tensor.dl_tensor();
        unsafe {
            check(sys::kiln_session_set_input(
                self.raw.as_ptr(),
                c.as_ptr(),
                &t,
            ))
        }
    }

    /// As `set_input`, by index (OUT_OF_RANGE past the end).
    pub fn set_input_index(
        &mut self,
        index: usize,
        tensor: &(impl AsDLTensor + ?Sized),
    ) -> Result<()> {
        let t = tensor.dl_tensor();
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        unsafe {
            check(sys::kiln_session_set_input_index(
                self.raw.as_ptr(),
                index,
                &t,
            ))
        }
    }

    /// Makes input `name` read `tensor`'s memory in place during every later
    /// run, instead of a copy (`kiln_session_set_input_zero_copy`).
    ///
    /// # Safety
    /// The memory must stay alive and unchanged until the input is set again
    /// or the session is dropped; it must be aligned to the element size.
    pub unsafe fn set_input_zero_copy(
        &mut self,
        name: &str,
        tensor: &(impl AsDLTensor + ?Sized),
    ) -> Result<()> {
        let c = Session::name(name)?;
        let t = tensor.dl_tensor();
        check(sys::kiln_session_set_input_zero_copy(
            self.raw.as_ptr(),
            c.as_ptr(),
            &t,
        ))
    }

    /// Runs every kernel once. FAILED_PRECONDITION names an input never set.
    pub fn run(&mut self) -> Result<()> {
        unsafe { check(sys::kiln_session_run(self.raw.as_ptr())) }
    }

    /// A view of output `index` from the latest run (no copy); it borrows the
    /// session, so it cannot outlive the next run.
    pub fn output(&self, index: usize) -> Result<OutputView<'_>> {
        let mut out = ptr::null();
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        unsafe {
            check(sys::kiln_session_get_output(
                self.raw.as_ptr(),
                index,
                &mut out,
            ))?;
            out.as_ref()
                .map(|t| OutputView { t })
                .ok_or_else(|| Error::new(Code::Internal, "kiln_session_get_output returned NULL"))
        }
    }

    /// As `output`, by the output's name (NOT_FOUND listing the outputs).
    pub fn output_named(&self, name: &str) -> Result<OutputView<'_>> {
        self.output(self.artifact.output_index(name)?)
    }

    /// Copies output `index` into `dst` (its length must be the output's
    /// element count and `T` its dtype).
    pub fn copy_output<T: Element>(&self, index: usize, dst: &mut [T]) -> Result<()> {
        let info = self.outputs().get(index).ok_or_else(|| {
            Error::new(
                Code::OutOfRange,
                format!("output {} of {}", index, self.outputs().len()),
            )
        })?;
        if dst.len() != info.num_elements() {
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "output '{}' has {} elements, the slice {}",
                    info.name,
                    info.num_elements(),
                    dst.len()
                ),
            ));
        }
        let t = sys::DLTensor {
            data: dst.as_mut_ptr() as *mut _,
            device: sys::DLDevice {
                device_type: sys::kDLCPU,
                device_id: 0,
            },
            ndim: info.shape.len() as i32,
            dtype: T::DTYPE.raw(),
            shape: info.shape.as_ptr() as *mut i64,
            strides: ptr::null_mut(),
            byte_offset: 0,
        };
        unsafe {
            check(sys::kiln_session_copy_output(
                self.raw.as_ptr(),
                index as i32,
                &t,
            ))
        }
    }

    /// A copy of output `index` as an owned DLPack tensor that outlives the
    /// session and the artifact.
    pub fn output_dlpack(&self, index: usize) -> Result<ManagedTensor> {
        let mut out = ptr::null_mut();
        let index = i32::try_from(index).unwrap_or(i32::MAX);
        unsafe {
            check(sys::kiln_session_get_output_dlpack(
                self.raw.as_ptr(),
                index,
                &mut out,
            ))?;
            NonNull::new(out)
                .map(|p| ManagedTensor::from_raw(p))
                .ok_or_else(|| {
                    Error::new(
                        Code::Internal,
                        "kiln_session_get_output_dlpack returned NULL",
                    )
                })
        }
    }

    fn profile_options(warmup: i32, repeat: i32, skip_tensors: bool) -> sys::KilnProfileOptions {
        sys::KilnProfileOptions {
            struct_size: std::mem::size_of::<sys::KilnProfileOptions>(),
            warmup,
            repeat,
            skip_tensors: skip_tensors as i32,
        }
    }

    /// `warmup` untimed runs, then `repeat` runs timing every kernel; each
    /// row's time is its median. The inputs must be set.
    pub fn profile(&mut self, warmup: i32, repeat: i32) -> Result<Profile> {
        let options = Session::profile_options(warmup, repeat, false);
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_session_profile_with(
                self.raw.as_ptr(),
                &options,
                &mut out,
            ))?;
            Profile::take(out)
        }
    }

    /// Times runs in C (`kiln_session_benchmark`). The inputs must be set.
    pub fn benchmark(&mut self, options: &BenchmarkOptions) -> Result<BenchmarkResult> {
        let workload = options
            .workload
            .as_deref()
            .map(|w| c_string(w, "workload"))
            .transpose()?;
        let hardware = options
            .hardware
            .as_deref()
            .map(|w| c_string(w, "hardware"))
            .transpose()?;
        let raw = sys::KilnBenchmarkOptions {
            struct_size: std::mem::size_of::<sys::KilnBenchmarkOptions>(),
            warmup: options.warmup,
            repeat: options.repeat,
            workload: workload.as_ref().map_or(ptr::null(), |w| w.as_ptr()),
            hardware: hardware.as_ref().map_or(ptr::null(), |w| w.as_ptr()),
        };
        let mut result = sys::KilnBenchmarkResult::default();
        let mut line = ptr::null_mut();
        unsafe {
            check(sys::kiln_session_benchmark(
                self.raw.as_ptr(),
                &raw,
                &mut result,
                &mut line,
            ))?;
            Ok(BenchmarkResult {
                mean_ms: result.mean_ms,
                std_ms: result.std_ms,
                min_ms: result.min_ms,
                max_ms: result.max_ms,
                repeat: result.repeat,
                log_line: take_string(line),
            })
        }
    }

    /// Writes graph.json, profile.txt, trace.json and (with `tensors`) every
    /// node's outputs as tensors/<node>__<i>.npy into `dir`.
    pub fn debug_dump(
        &mut self,
        dir: impl AsRef<Path>,
        warmup: i32,
        repeat: i32,
        tensors: bool,
    ) -> Result<()> {
        let c = c_path(dir.as_ref())?;
        let options = Session::profile_options(warmup, repeat, !tensors);
        unsafe {
            check(sys::kiln_session_debug_dump_with(
                self.raw.as_ptr(),
                c.as_ptr(),
                &options,
            ))
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Session({:?})", self.artifact.path())
    }
}
