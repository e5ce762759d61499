//! tests/ffi/rust: libkiln.so end to end through its C ABI, from Rust.
//!
//!   kiln_ffi_test MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR
//!
//! Imports an ONNX model, compiles it to WORKDIR/model.so, loads that
//! artifact, runs one session on INPUT.npy and compares the output with
//! EXPECTED.npy (|a-b| <= 1e-4 + 1e-4*|b|); checks the DLPack copy of the
//! output and one error path (an input of the wrong shape). No crates: the C
//! declarations below are written by hand from kiln/kiln.h, kiln/runtime.h,
//! kiln/status.h and dlpack/dlpack.h (DLPack 0.6 layout). Builds with Rust
//! 1.63+. Exits 0 only if every check passed.

use std::env;
use std::ffi::{CStr, CString};
use std::fs;
use std::mem;
use std::os::raw::{c_char, c_void};
use std::process;
use std::ptr;

// ------------------------------------------------------------------ DLPack

const KDL_CPU: i32 = 1;
const KDL_FLOAT: u8 = 2;

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32, // DLDeviceType (a C enum)
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

// -------------------------------------------------------------------- kiln

const KILN_INVALID_ARGUMENT: i32 = 3;

#[repr(C)]
struct KilnStatus {
    _opaque: [u8; 0],
}
#[repr(C)]
struct KilnModel {
    _opaque: [u8; 0],
}
#[repr(C)]
struct KilnArtifact {
    _opaque: [u8; 0],
}
#[repr(C)]
struct KilnSession {
    _opaque: [u8; 0],
}

#[repr(C)]
struct KilnCompileOptions {
    struct_size: usize,
    target: *const c_char,
    opt_level: i32,
    disabled_passes: *const *const c_char,
    num_disabled_passes: i32,
    no_memory_plan: i32,
    num_threads: i32,
    cc: *const c_char,
}

#[repr(C)]
struct KilnCompileReport {
    struct_size: usize,
    passes_ms: f64,
    lower_ms: f64,
    plan_ms: f64,
    codegen_ms: f64,
    link_ms: f64,
    num_fused_calls: i32,
    num_kernels: i32,
    arena_bytes: i64,
    naive_bytes: i64,
    file_bytes: u64,
}

// The layouts of the C structs on LP64 (x86_64, aarch64 Linux).
const _: () = assert!(mem::size_of::<DLTensor>() == 48);
const _: () = assert!(mem::size_of::<DLManagedTensor>() == 64);
const _: () = assert!(mem::size_of::<KilnCompileOptions>() == 56);
const _: () = assert!(mem::size_of::<KilnCompileReport>() == 80);

#[link(name = "kiln")]
extern "C" {
    fn kiln_version() -> *const c_char;
    fn kiln_api_version() -> u32;

    fn kiln_status_code(status: *const KilnStatus) -> i32;
    fn kiln_status_message(status: *const KilnStatus) -> *const c_char;
    fn kiln_status_code_name(code: i32) -> *const c_char;
    fn kiln_status_free(status: *mut KilnStatus);

    fn kiln_model_load_onnx_file(
        path: *const c_char,
        options: *const c_void, // const KilnImportOptions*; NULL = defaults
        out_model: *mut *mut KilnModel,
    ) -> *mut KilnStatus;
    fn kiln_model_release(model: *mut KilnModel);
    fn kiln_model_num_inputs(model: *const KilnModel, out_count: *mut i32) -> *mut KilnStatus;
    fn kiln_model_input_info(
        model: *const KilnModel,
        index: i32,
        out_name: *mut *const c_char,
        out_info: *mut DLTensor,
    ) -> *mut KilnStatus;
    fn kiln_model_compile(
        model: *const KilnModel,
        options: *const KilnCompileOptions,
        path: *const c_char,
        report: *mut KilnCompileReport,
    ) -> *mut KilnStatus;

    fn kiln_artifact_load(path: *const c_char, out: *mut *mut KilnArtifact) -> *mut KilnStatus;
    fn kiln_artifact_release(artifact: *mut KilnArtifact);
    fn kiln_artifact_num_inputs(artifact: *const KilnArtifact) -> i32;
    fn kiln_artifact_num_outputs(artifact: *const KilnArtifact) -> i32;
    fn kiln_artifact_input_info(
        artifact: *const KilnArtifact,
        index: i32,
        name: *mut *const c_char,
        info: *mut DLTensor,
    ) -> *mut KilnStatus;

    fn kiln_session_create(
        artifact: *const KilnArtifact,
        options: *const c_void, // const KilnSessionOptions*; NULL = defaults
        out: *mut *mut KilnSession,
    ) -> *mut KilnStatus;
    fn kiln_session_release(session: *mut KilnSession);
    fn kiln_session_set_input(
        session: *mut KilnSession,
        name: *const c_char,
        tensor: *const DLTensor,
    ) -> *mut KilnStatus;
    fn kiln_session_run(session: *mut KilnSession) -> *mut KilnStatus;
    fn kiln_session_get_output(
        session: *mut KilnSession,
        index: i32,
        out: *mut *const DLTensor,
    ) -> *mut KilnStatus;
    fn kiln_session_get_output_dlpack(
        session: *mut KilnSession,
        index: i32,
        out: *mut *mut DLManagedTensor,
    ) -> *mut KilnStatus;
}

// ----------------------------------------------------------------- helpers

unsafe fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        "(null)".to_string()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

fn cstring(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| {
        eprintln!("FAIL: a NUL byte in {:?}", s);
        process::exit(1)
    })
}

struct Checker {
    failures: u32,
}

impl Checker {
    fn fail(&mut self, what: &str) {
        eprintln!("FAIL: {}", what);
        self.failures += 1;
    }

    /// A NULL status is success; otherwise prints and frees it and counts a
    /// failure.
    fn ok(&mut self, st: *mut KilnStatus, what: &str) -> bool {
        if st.is_null() {
            return true;
        }
        unsafe {
            eprintln!(
                "FAIL: {}: {}: {}",
                what,
                c_str(kiln_status_code_name(kiln_status_code(st))),
                c_str(kiln_status_message(st))
            );
            kiln_status_free(st);
        }
        self.failures += 1;
        false
    }
}

fn empty_tensor() -> DLTensor {
    DLTensor {
        data: ptr::null_mut(),
        device: DLDevice { device_type: 0, device_id: 0 },
        ndim: 0,
        dtype: DLDataType { code: 0, bits: 0, lanes: 0 },
        shape: ptr::null_mut(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    }
}

unsafe fn shape_of(t: &DLTensor) -> Vec<i64> {
    if t.ndim <= 0 || t.shape.is_null() {
        Vec::new()
    } else {
        std::slice::from_raw_parts(t.shape, t.ndim as usize).to_vec()
    }
}

unsafe fn describe(t: &DLTensor) -> String {
    format!(
        "{:?} dtype code={} bits={} lanes={}",
        shape_of(t),
        t.dtype.code,
        t.dtype.bits,
        t.dtype.lanes
    )
}

fn is_float32(t: &DLTensor) -> bool {
    t.dtype.code == KDL_FLOAT && t.dtype.bits == 32 && t.dtype.lanes == 1
}

/// strides NULL, or the compact row-major strides.
unsafe fn is_compact(t: &DLTensor) -> bool {
    if t.strides.is_null() {
        return true;
    }
    let shape = shape_of(t);
    let strides = std::slice::from_raw_parts(t.strides, t.ndim as usize);
    let mut expect = 1i64;
    for i in (0..shape.len()).rev() {
        if shape[i] != 1 && strides[i] != expect {
            return false;
        }
        expect *= shape[i];
    }
    true
}

unsafe fn f32_slice<'a>(t: &DLTensor, n: usize) -> &'a [f32] {
    let p = (t.data as *const u8).add(t.byte_offset as usize) as *const f32;
    std::slice::from_raw_parts(p, n)
}

// --------------------------------------------------------------------- npy

/// A float32 .npy file (little-endian, C order).
struct Npy {
    shape: Vec<i64>,
    data: Vec<f32>,
}

/// The text after `'key':` in a .npy header dict.
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    for quote in ["'", "\""] {
        let k = format!("{}{}{}", quote, key, quote);
        if let Some(pos) = header.find(&k) {
            let rest = header[pos + k.len()..].trim_start();
            if let Some(rest) = rest.strip_prefix(':') {
                return Some(rest.trim_start());
            }
        }
    }
    None
}

fn read_npy_f32(path: &str) -> Result<Npy, String> {
    let bytes = fs::read(path).map_err(|e| format!("{}: cannot read: {}", path, e))?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(format!("{}: not a .npy file (bad magic)", path));
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12usize,
        ),
        _ => return Err(format!("{}: unsupported .npy format version {}.{}", path, major, bytes[7])),
    };
    if bytes.len() < start + header_len {
        return Err(format!("{}: truncated .npy header", path));
    }
    let header = String::from_utf8_lossy(&bytes[start..start + header_len]).into_owned();

    let descr_raw = dict_value(&header, "descr")
        .ok_or_else(|| format!("{}: .npy header has no 'descr': {}", path, header.trim()))?;
    let q = descr_raw.chars().next().unwrap_or(' ');
    if q != '\'' && q != '"' {
        return Err(format!("{}: unsupported dtype {} (only float32 '<f4' is supported)", path, descr_raw));
    }
    let descr = descr_raw[1..].split(q).next().unwrap_or("");
    if descr != "<f4" {
        return Err(format!(
            "{}: unsupported dtype '{}': this reader supports only float32 little-endian ('<f4')",
            path, descr
        ));
    }
    let fortran = dict_value(&header, "fortran_order")
        .ok_or_else(|| format!("{}: .npy header has no 'fortran_order'", path))?;
    if fortran.starts_with("True") {
        return Err(format!("{}: Fortran-order arrays are not supported (only C order)", path));
    } else if !fortran.starts_with("False") {
        return Err(format!("{}: bad 'fortran_order' in .npy header", path));
    }
    let shape_raw = dict_value(&header, "shape")
        .ok_or_else(|| format!("{}: .npy header has no 'shape'", path))?;
    if !shape_raw.starts_with('(') {
        return Err(format!("{}: bad 'shape' in .npy header", path));
    }
    let end = shape_raw
        .find(')')
        .ok_or_else(|| format!("{}: bad 'shape' in .npy header", path))?;
    let mut shape = Vec::new();
    for part in shape_raw[1..end].split(',') {
        let part = part.trim().trim_end_matches('L');
        if part.is_empty() {
            continue;
        }
        let d: i64 = part
            .parse()
            .map_err(|_| format!("{}: bad dimension '{}' in .npy shape", path, part))?;
        if d < 0 {
            return Err(format!("{}: negative dimension in .npy shape", path));
        }
        shape.push(d);
    }
    let count = shape.iter().product::<i64>() as usize;
    let body = &bytes[start + header_len..];
    if body.len() < count * 4 {
        return Err(format!(
            "{}: short data: {} bytes for {} float32 elements",
            path,
            body.len(),
            count
        ));
    }
    let data = body[..count * 4]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(Npy { shape, data })
}

// -------------------------------------------------------------------- main

/// Everything that needs releasing, released in dependency order on drop.
struct Handles {
    model: *mut KilnModel,
    artifact: *mut KilnArtifact,
    session: *mut KilnSession,
}

impl Drop for Handles {
    fn drop(&mut self) {
        unsafe {
            kiln_session_release(self.session);
            kiln_artifact_release(self.artifact);
            kiln_model_release(self.model);
        }
        self.session = ptr::null_mut();
        self.artifact = ptr::null_mut();
        self.model = ptr::null_mut();
    }
}

/// Runs the checks; None means a step failed and the rest were skipped.
unsafe fn run(ck: &mut Checker, h: &mut Handles, args: &[String]) -> Option<()> {
    let (model_path, input_path, expected_path, workdir) = (&args[1], &args[2], &args[3], &args[4]);
    let so_path = format!("{}/model.so", workdir);
    let so_c = cstring(&so_path);

    // 2. Versions.
    println!("kiln_version: {}", c_str(kiln_version()));
    let api = kiln_api_version();
    println!("kiln_api_version: {}", api);
    if api < 1 {
        ck.fail("kiln_api_version() < 1");
    }

    // 3. Import and compile.
    let model_c = cstring(model_path);
    if !ck.ok(
        kiln_model_load_onnx_file(model_c.as_ptr(), ptr::null(), &mut h.model),
        "kiln_model_load_onnx_file",
    ) {
        return None;
    }
    let mut n_model_inputs = 0i32;
    if ck.ok(kiln_model_num_inputs(h.model, &mut n_model_inputs), "kiln_model_num_inputs") {
        println!("model inputs: {}", n_model_inputs);
        if n_model_inputs != 1 {
            ck.fail("the model should have 1 input");
        }
        for i in 0..n_model_inputs {
            let mut name: *const c_char = ptr::null();
            let mut info = empty_tensor();
            if ck.ok(kiln_model_input_info(h.model, i, &mut name, &mut info), "kiln_model_input_info") {
                println!("  model input {}: {} {}", i, c_str(name), describe(&info));
            }
        }
    }

    let options = KilnCompileOptions {
        struct_size: mem::size_of::<KilnCompileOptions>(),
        target: ptr::null(),
        opt_level: 3,
        disabled_passes: ptr::null(),
        num_disabled_passes: 0,
        no_memory_plan: 0,
        num_threads: 0,
        cc: ptr::null(),
    };
    let mut report: KilnCompileReport = mem::zeroed();
    report.struct_size = mem::size_of::<KilnCompileReport>();
    if !ck.ok(
        kiln_model_compile(h.model, &options, so_c.as_ptr(), &mut report),
        "kiln_model_compile",
    ) {
        return None;
    }
    println!(
        "compiled {}: num_kernels={} file_bytes={}",
        so_path, report.num_kernels, report.file_bytes
    );
    if report.num_kernels <= 0 {
        ck.fail("report.num_kernels should be > 0");
    }
    if report.file_bytes == 0 {
        ck.fail("report.file_bytes should be > 0");
    }

    // 4. Release the model; load the artifact.
    kiln_model_release(h.model);
    h.model = ptr::null_mut();
    if !ck.ok(kiln_artifact_load(so_c.as_ptr(), &mut h.artifact), "kiln_artifact_load") {
        return None;
    }
    let n_in = kiln_artifact_num_inputs(h.artifact);
    let n_out = kiln_artifact_num_outputs(h.artifact);
    println!("artifact: {} input(s), {} output(s)", n_in, n_out);
    if n_in != 1 {
        ck.fail("the artifact should have 1 input");
    }
    if n_out != 1 {
        ck.fail("the artifact should have 1 output");
    }
    {
        let mut name: *const c_char = ptr::null();
        let mut info = empty_tensor();
        if ck.ok(kiln_artifact_input_info(h.artifact, 0, &mut name, &mut info), "kiln_artifact_input_info") {
            let name = c_str(name);
            println!("  artifact input 0: {} {}", name, describe(&info));
            if name != "input" {
                ck.fail("artifact input 0 should be \"input\"");
            }
            if !is_float32(&info) {
                ck.fail("artifact input 0 should be float32");
            }
            if shape_of(&info) != vec![1, 3, 32, 32] {
                ck.fail("artifact input 0 should have shape [1, 3, 32, 32]");
            }
        }
    }
    if !ck.ok(kiln_session_create(h.artifact, ptr::null(), &mut h.session), "kiln_session_create") {
        return None;
    }

    // 5. Input, run, output.
    let mut input = match read_npy_f32(input_path) {
        Ok(t) => t,
        Err(e) => {
            ck.fail(&e);
            return None;
        }
    };
    let expected = match read_npy_f32(expected_path) {
        Ok(t) => t,
        Err(e) => {
            ck.fail(&e);
            return None;
        }
    };
    let input_t = DLTensor {
        data: input.data.as_mut_ptr() as *mut c_void,
        device: DLDevice { device_type: KDL_CPU, device_id: 0 },
        ndim: input.shape.len() as i32,
        dtype: DLDataType { code: KDL_FLOAT, bits: 32, lanes: 1 },
        shape: input.shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    let name_c = cstring("input");
    if !ck.ok(kiln_session_set_input(h.session, name_c.as_ptr(), &input_t), "kiln_session_set_input") {
        return None;
    }
    if !ck.ok(kiln_session_run(h.session), "kiln_session_run") {
        return None;
    }
    let mut out: *const DLTensor = ptr::null();
    if !ck.ok(kiln_session_get_output(h.session, 0, &mut out), "kiln_session_get_output") {
        return None;
    }
    if out.is_null() {
        ck.fail("kiln_session_get_output gave NULL");
        return None;
    }
    let out = &*out;
    println!("output 0: {}", describe(out));
    let out_shape = shape_of(out);
    let n = out_shape.iter().product::<i64>() as usize;
    if out.device.device_type != KDL_CPU {
        ck.fail("output 0 should be on the CPU");
    }
    let view_ok = is_float32(out) && is_compact(out);
    if !is_float32(out) {
        ck.fail("output 0 should be float32");
    } else if out_shape != expected.shape {
        ck.fail(&format!(
            "output 0 shape {:?} differs from EXPECTED.npy {:?}",
            out_shape, expected.shape
        ));
    } else if !is_compact(out) {
        ck.fail("output 0 should be compact");
    } else {
        let got = f32_slice(out, n);
        let mut max_err = 0.0f64;
        let mut bad = 0usize;
        for (i, (&a, &b)) in got.iter().zip(expected.data.iter()).enumerate() {
            let (a, b) = (a as f64, b as f64);
            let err = (a - b).abs();
            if !(err <= 1e-4 + 1e-4 * b.abs()) {
                if bad < 5 {
                    eprintln!("mismatch at {}: got {}, expected {}", i, a, b);
                }
                bad += 1;
            }
            if err > max_err || err.is_nan() {
                max_err = err;
            }
        }
        println!("compared {} elements: max abs error {:.3e}", n, max_err);
        if bad > 0 {
            ck.fail("output 0 differs from EXPECTED.npy");
        }
    }

    // The DLPack copy must equal the view.
    let mut managed: *mut DLManagedTensor = ptr::null_mut();
    if ck.ok(kiln_session_get_output_dlpack(h.session, 0, &mut managed), "kiln_session_get_output_dlpack") {
        if managed.is_null() {
            ck.fail("kiln_session_get_output_dlpack gave NULL");
        } else {
            let m = &(*managed).dl_tensor;
            if m.device.device_type != KDL_CPU {
                ck.fail("dlpack output should be on the CPU");
            }
            if !is_float32(m) || shape_of(m) != out_shape || !is_compact(m) || !view_ok {
                ck.fail("dlpack output dtype/shape differs from the view");
            } else {
                let a = f32_slice(m, n);
                let b = f32_slice(out, n);
                if a.iter().zip(b.iter()).any(|(x, y)| x.to_bits() != y.to_bits()) {
                    ck.fail("dlpack output data differs from the view");
                } else {
                    println!("dlpack output equals the view");
                }
            }
            match (*managed).deleter {
                Some(deleter) => deleter(managed),
                None => ck.fail("dlpack output has no deleter"),
            }
        }
    }

    // 6. One error path: an input of the wrong shape.
    let mut small = vec![0.0f32; 3 * 16 * 16];
    let mut small_shape = vec![1i64, 3, 16, 16];
    let wrong = DLTensor {
        data: small.as_mut_ptr() as *mut c_void,
        device: DLDevice { device_type: KDL_CPU, device_id: 0 },
        ndim: 4,
        dtype: DLDataType { code: KDL_FLOAT, bits: 32, lanes: 1 },
        shape: small_shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    let st = kiln_session_set_input(h.session, name_c.as_ptr(), &wrong);
    if st.is_null() {
        ck.fail("kiln_session_set_input with shape [1, 3, 16, 16] should fail");
    } else {
        let code = kiln_status_code(st);
        let msg = c_str(kiln_status_message(st));
        println!("wrong shape: {}: {}", c_str(kiln_status_code_name(code)), msg);
        if code != KILN_INVALID_ARGUMENT {
            ck.fail(&format!(
                "wrong shape: the status code is {}, should be KILN_INVALID_ARGUMENT (3)",
                code
            ));
        }
        if !msg.contains("input") {
            ck.fail("wrong shape: the message should mention \"input\"");
        }
        kiln_status_free(st);
    }
    // `input` must outlive the set_input above (it copies, but keep it simple).
    drop(input);
    Some(())
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: {} MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR", args[0]);
        process::exit(2);
    }
    let mut ck = Checker { failures: 0 };
    {
        // 7. `h` releases everything when it goes out of scope.
        let mut h = Handles {
            model: ptr::null_mut(),
            artifact: ptr::null_mut(),
            session: ptr::null_mut(),
        };
        unsafe {
            run(&mut ck, &mut h, &args);
        }
    }
    if ck.failures > 0 {
        eprintln!("rust: {} check(s) failed", ck.failures);
        process::exit(1);
    }
    println!("rust: all checks passed");
}
