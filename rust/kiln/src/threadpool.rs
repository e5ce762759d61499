//! `ThreadPool`: a CPU pool that sessions share (`KilnThreadPool`).
//!
//! By default every session makes its own pool; many concurrent sessions
//! should share one (docs/c_api.md §7.12):
//!
//! ```no_run
//! # fn main() -> kiln::Result<()> {
//! # let artifact: kiln::Artifact = unimplemented!();
//! let pool = kiln::ThreadPool::new(4)?;
//! let options = kiln::SessionOptions { pool: Some(pool.clone()), ..Default::default() };
//! let sessions: Vec<kiln::Session> =
//!     (0..8).map(|_| artifact.session(&options)).collect::<kiln::Result<_>>()?;
//! # Ok(()) }
//! ```
//!
//! The pool is destroyed when the last clone and the last session using it
//! are gone.

use std::ptr::{self, NonNull};
use std::sync::Arc;

use kiln_sys as sys;

use crate::error::{Code, Error, Result};

pub(crate) struct PoolHandle(pub(crate) NonNull<sys::KilnThreadPool>);

// threadpool.h: any number of threads may launch on one pool at once.
unsafe impl Send for PoolHandle {}
unsafe impl Sync for PoolHandle {}

impl Drop for PoolHandle {
    fn drop(&mut self) {
        unsafe { sys::kiln_thread_pool_destroy(self.0.as_ptr()) }
    }
}

/// A pool of threads, counting the caller's. Cheap to clone (shared).
#[derive(Clone)]
pub struct ThreadPool {
    pub(crate) inner: Arc<PoolHandle>,
}

impl ThreadPool {
    /// A pool of `num_threads` (0: `default_num_threads()`; 1: no workers).
    /// INVALID_ARGUMENT outside 0..=1024.
    pub fn new(num_threads: i32) -> Result<ThreadPool> {
        let mut out = ptr::null_mut();
        let rc = unsafe { sys::kiln_thread_pool_create(num_threads, &mut out) };
        let code = match rc {
            sys::KILN_KERNEL_OK => None,
            sys::KILN_KERNEL_EINVAL => Some(Code::InvalidArgument),
            sys::KILN_KERNEL_ENOMEM => Some(Code::ResourceExhausted),
            _ => Some(Code::Internal),
        };
        match (code, NonNull::new(out)) {
            (None, Some(p)) => Ok(ThreadPool {
                inner: Arc::new(PoolHandle(p)),
            }),
            (code, _) => Err(Error::new(
                code.unwrap_or(Code::Internal),
                format!(
                    "kiln_thread_pool_create({}) failed with code {} (0..=1024 threads)",
                    num_threads, rc
                ),
            )),
        }
    }

    pub fn num_threads(&self) -> i32 {
        unsafe { sys::kiln_thread_pool_num_threads(self.inner.0.as_ptr()) }
    }
}

/// The thread count of a default pool: `$KILN_NUM_THREADS`, else the CPUs
/// this process may run on.
pub fn default_num_threads() -> i32 {
    unsafe { sys::kiln_thread_pool_default_num_threads() }
}
