//! What `Session::profile` and `Session::benchmark` measured: plain data
//! copied out of the C objects, which are released at once.

use std::ptr;

use kiln_sys as sys;

use crate::error::{borrowed_string, check, take_string, Result};

/// One kernel node, in execution order: name, fused operators, time (the
/// median over the profile's repeats) in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRow {
    pub name: String,
    pub op: String,
    pub time_us: f64,
}

/// A per-node profile (`kiln_session_profile_with`).
#[derive(Clone, Debug)]
pub struct Profile {
    pub rows: Vec<ProfileRow>,
    /// The sum of the node times (not the run's wall time).
    pub total_us: f64,
    /// The debug executor's text table.
    pub table: String,
    /// Chrome trace-event JSON (chrome://tracing, Perfetto).
    pub chrome_trace: String,
}

impl Profile {
    /// Copies a profile and releases it.
    ///
    /// # Safety
    /// `p` is a profile a kiln call returned, not yet released.
    pub(crate) unsafe fn take(p: *mut sys::KilnProfile) -> Result<Profile> {
        struct Release(*mut sys::KilnProfile);
        impl Drop for Release {
            fn drop(&mut self) {
                unsafe { sys::kiln_profile_release(self.0) }
            }
        }
        let _release = Release(p);
        let mut rows = Vec::new();
        for i in 0..sys::kiln_profile_num_nodes(p) {
            let (mut name, mut op, mut us) = (ptr::null(), ptr::null(), 0.0);
            check(sys::kiln_profile_node(p, i, &mut name, &mut op, &mut us))?;
            rows.push(ProfileRow {
                name: borrowed_string(name),
                op: borrowed_string(op),
                time_us: us,
            });
        }
        let (mut table, mut trace) = (ptr::null_mut(), ptr::null_mut());
        check(sys::kiln_profile_table(p, &mut table))?;
        let table = take_string(table);
        check(sys::kiln_profile_chrome_trace(p, &mut trace))?;
        Ok(Profile {
            rows,
            total_us: sys::kiln_profile_total_us(p),
            table,
            chrome_trace: take_string(trace),
        })
    }
}

/// `Session::benchmark` options (`KilnBenchmarkOptions`).
#[derive(Clone, Debug)]
pub struct BenchmarkOptions {
    /// Untimed runs first (at least 1; default 1).
    pub warmup: i32,
    /// Timed runs (default 10).
    pub repeat: i32,
    /// The log's workload name (default: the artifact's model name).
    pub workload: Option<String>,
    /// The log's hardware string (default "cpu").
    pub hardware: Option<String>,
}

impl Default for BenchmarkOptions {
    fn default() -> BenchmarkOptions {
        BenchmarkOptions {
            warmup: 1,
            repeat: 10,
            workload: None,
            hardware: None,
        }
    }
}

/// Timed runs in milliseconds (population std) and the run as one line of
/// TVM's benchmark log format v0.1 (JSON).
#[derive(Clone, Debug)]
pub struct BenchmarkResult {
    pub mean_ms: f64,
    pub std_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub repeat: i32,
    pub log_line: String,
}
