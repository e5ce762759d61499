//! `Model`: a model in kiln's graph IR (`KilnModel`): import, optimize, compile.
//!
//! ```no_run
//! use kiln::{CompileOptions, ImportOptions, Model};
//! # fn main() -> kiln::Result<()> {
//! let model = Model::load_onnx_with(
//!     "resnet.onnx",
//!     &ImportOptions::new().input_shape("input", &[1, 3, 224, 224]),
//! )?;
//! let report = model.compile("resnet.so", &CompileOptions::default())?;
//! println!("{} kernels, {} bytes", report.num_kernels, report.file_bytes);
//! # Ok(()) }
//! ```
//!
//! A model is immutable: `Send + Sync`, shared freely between threads.

use std::ffi::CString;
use std::os::raw::{c_char, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use kiln_sys as sys;

use crate::error::{borrowed_string, c_path, c_string, check, take_string, Code, Error, Result};
use crate::tensor::TensorInfo;

/// A type-checked model (`main` is the model). Released on drop.
pub struct Model {
    raw: NonNull<sys::KilnModel>,
}

// kiln.h: "A KilnModel is immutable; any number of threads may read, print,
// optimize and compile the same model concurrently."
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::kiln_model_release(self.raw.as_ptr()) }
    }
}

/// ONNX import options: static shapes for graph inputs, the external-data folder.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    input_shapes: Vec<(String, Vec<i64>)>,
    external_data_dir: Option<PathBuf>,
}

impl ImportOptions {
    pub fn new() -> ImportOptions {
        ImportOptions::default()
    }

    /// Binds graph input `name` to `dims` (inputs with symbolic dims need one
    /// before the model compiles).
    pub fn input_shape(mut self, name: &str, dims: &[i64]) -> ImportOptions {
        self.input_shapes.push((name.to_string(), dims.to_vec()));
        self
    }

    /// Where external-data files are (default: the model's directory).
    pub fn external_data_dir(mut self, dir: impl Into<PathBuf>) -> ImportOptions {
        self.external_data_dir = Some(dir.into());
        self
    }
}

/// The C form of ImportOptions and the memory it points into.
struct RawImport {
    options: sys::KilnImportOptions,
    _names: Vec<CString>,
    _shapes: Vec<sys::KilnInputShape>,
    _dir: Option<CString>,
}

impl ImportOptions {
    fn raw(&self) -> Result<RawImport> {
        let names = self
            .input_shapes
            .iter()
            .map(|(n, _)| c_string(n, "input name"))
            .collect::<Result<Vec<_>>>()?;
        let shapes: Vec<sys::KilnInputShape> = self
            .input_shapes
            .iter()
            .zip(&names)
            .map(|((_, dims), name)| sys::KilnInputShape {
                name: name.as_ptr(),
                ndim: dims.len() as i32,
                dims: dims.as_ptr(),
            })
            .collect();
        let dir = self.external_data_dir.as_deref().map(c_path).transpose()?;
        let mut options: sys::KilnImportOptions = unsafe { std::mem::zeroed() };
        unsafe { sys::kiln_import_options_init(&mut options) };
        options.input_shapes = if shapes.is_empty() {
            ptr::null()
        } else {
            shapes.as_ptr()
        };
        options.num_input_shapes = shapes.len() as i32;
        options.external_data_dir = dir.as_ref().map_or(ptr::null(), |d| d.as_ptr());
        Ok(RawImport {
            options,
            _names: names,
            _shapes: shapes,
            _dir: dir,
        })
    }
}

/// A list of names as `const char* const*` (and the strings it points at).
struct CStrings {
    _owned: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStrings {
    fn new(names: &[String], what: &str) -> Result<CStrings> {
        let owned = names
            .iter()
            .map(|n| c_string(n, what))
            .collect::<Result<Vec<_>>>()?;
        let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
        Ok(CStrings {
            _owned: owned,
            ptrs,
        })
    }

    fn as_ptr(&self) -> *const *const c_char {
        if self.ptrs.is_empty() {
            ptr::null()
        } else {
            self.ptrs.as_ptr()
        }
    }

    fn len(&self) -> i32 {
        self.ptrs.len() as i32
    }
}

/// Graph-pass options for `Model::optimize`.
#[derive(Clone, Debug)]
pub struct OptimizeOptions {
    /// 0-3: the default pipeline runs the passes at or below it (default 3).
    pub opt_level: i32,
    /// An explicit pass list run in order instead of the pipeline (`passes()` names).
    pub passes: Option<Vec<String>>,
    /// Passes that run whatever the level.
    pub required: Vec<String>,
    /// Passes that never run.
    pub disabled: Vec<String>,
    /// Give `optimize_with`'s callback the module text after each pass.
    pub after_pass_text: bool,
}

impl Default for OptimizeOptions {
    fn default() -> OptimizeOptions {
        OptimizeOptions {
            opt_level: 3,
            passes: None,
            required: Vec::new(),
            disabled: Vec::new(),
            after_pass_text: false,
        }
    }
}

/// One pass that `Model::optimize_with` ran.
#[derive(Clone, Copy, Debug)]
pub struct PassEvent<'a> {
    pub name: &'a str,
    pub changed: bool,
    pub elapsed_ms: f64,
    /// The module after the pass, with `OptimizeOptions::after_pass_text`.
    pub text: Option<&'a str>,
}

/// Compilation options for `Model::compile` and `Model::emit`.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// "llvm" (the host, when None), "llvm -mcpu=skylake-avx512", "llvm -mtriple=aarch64-linux-gnu".
    pub target: Option<String>,
    /// Graph passes, 0-3 (default 3).
    pub opt_level: i32,
    pub disabled_passes: Vec<String>,
    /// Share storage between intermediates (default true).
    pub memory_plan: bool,
    /// Code-generation threads; 0 = all CPUs.
    pub num_threads: i32,
    /// The C compiler driver that links the .so (default "cc").
    pub cc: Option<String>,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions {
            target: None,
            opt_level: 3,
            disabled_passes: Vec::new(),
            memory_plan: true,
            num_threads: 0,
            cc: None,
        }
    }
}

struct RawCompile {
    options: sys::KilnCompileOptions,
    _target: Option<CString>,
    _cc: Option<CString>,
    _disabled: CStrings,
}

impl CompileOptions {
    fn raw(&self) -> Result<RawCompile> {
        let target = self
            .target
            .as_deref()
            .map(|t| c_string(t, "target"))
            .transpose()?;
        let cc = self.cc.as_deref().map(|t| c_string(t, "cc")).transpose()?;
        let disabled = CStrings::new(&self.disabled_passes, "pass name")?;
        let mut options: sys::KilnCompileOptions = unsafe { std::mem::zeroed() };
        unsafe { sys::kiln_compile_options_init(&mut options) };
        options.target = target.as_ref().map_or(ptr::null(), |t| t.as_ptr());
        options.cc = cc.as_ref().map_or(ptr::null(), |t| t.as_ptr());
        options.opt_level = self.opt_level;
        options.disabled_passes = disabled.as_ptr();
        options.num_disabled_passes = disabled.len();
        options.no_memory_plan = if self.memory_plan { 0 } else { 1 };
        options.num_threads = self.num_threads;
        Ok(RawCompile {
            options,
            _target: target,
            _cc: cc,
            _disabled: disabled,
        })
    }
}

/// What `Model::compile` did (`KilnCompileReport`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompileReport {
    pub passes_ms: f64,
    pub lower_ms: f64,
    pub plan_ms: f64,
    pub codegen_ms: f64,
    pub link_ms: f64,
    pub num_fused_calls: i32,
    pub num_kernels: i32,
    pub arena_bytes: i64,
    pub naive_bytes: i64,
    pub file_bytes: u64,
}

impl CompileReport {
    fn from_raw(r: &sys::KilnCompileReport) -> CompileReport {
        CompileReport {
            passes_ms: r.passes_ms,
            lower_ms: r.lower_ms,
            plan_ms: r.plan_ms,
            codegen_ms: r.codegen_ms,
            link_ms: r.link_ms,
            num_fused_calls: r.num_fused_calls,
            num_kernels: r.num_kernels,
            arena_bytes: r.arena_bytes,
            naive_bytes: r.naive_bytes,
            file_bytes: r.file_bytes,
        }
    }
}

/// What `Model::emit` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitKind {
    /// The optimized, fused graph IR.
    GraphIr,
    /// The loop IR of every kernel.
    LoopIr,
    /// The optimized LLVM IR of every kernel.
    LlvmIr,
    /// The target's assembly.
    Assembly,
}

/// The registered graph pass names, sorted.
pub fn passes() -> Vec<String> {
    let n = unsafe { sys::kiln_pass_count() };
    (0..n)
        .map(|i| unsafe { borrowed_string(sys::kiln_pass_name(i)) })
        .collect()
}

fn adopt(out: *mut sys::KilnModel) -> Result<Model> {
    NonNull::new(out)
        .map(|raw| Model { raw })
        .ok_or_else(|| Error::new(Code::Internal, "kiln returned no model"))
}

/// The state `after_pass` reaches through user_data.
struct Callback<'f> {
    f: &'f mut dyn FnMut(&PassEvent<'_>),
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn after_pass_trampoline(
    user_data: *mut c_void,
    pass_name: *const c_char,
    changed: i32,
    elapsed_ms: f64,
    module_text: *const c_char,
) {
    let cb = &mut *(user_data as *mut Callback<'_>);
    if cb.panic.is_some() {
        return;
    }
    let name = borrowed_string(pass_name);
    let text = if module_text.is_null() {
        None
    } else {
        Some(borrowed_string(module_text))
    };
    let event = PassEvent {
        name: &name,
        changed: changed != 0,
        elapsed_ms,
        text: text.as_deref(),
    };
    // A panic must not unwind into C: keep it and resume after the call.
    let f = &mut cb.f;
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(&event))) {
        cb.panic = Some(p);
    }
}

/// One call of `Model::compile_with`'s progress callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileProgress<'a> {
    /// "passes", "lower", "plan", "codegen" or "link".
    pub phase: &'a str,
    /// 0 when the phase starts; then the fused functions ("lower") or kernels
    /// ("codegen") finished so far.
    pub done: i32,
    /// The fused functions ("lower") or kernels ("codegen") in all; else 0.
    pub total: i32,
}

struct ProgressCallback<'f> {
    f: &'f mut (dyn FnMut(&CompileProgress<'_>) + Send),
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn progress_trampoline(
    user_data: *mut c_void,
    phase: *const c_char,
    done: i32,
    total: i32,
) {
    // kiln serializes the calls (never two at once), so this is the only
    // reference while it runs.
    let cb = &mut *(user_data as *mut ProgressCallback<'_>);
    if cb.panic.is_some() {
        return;
    }
    let phase = borrowed_string(phase);
    let event = CompileProgress {
        phase: &phase,
        done,
        total,
    };
    let f = &mut cb.f;
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(&event))) {
        cb.panic = Some(p);
    }
}

impl Model {
    /// Imports an ONNX file. NOT_FOUND (no file), UNIMPLEMENTED (every
    /// unsupported operator listed), INVALID_ARGUMENT (a malformed model).
    pub fn load_onnx(path: impl AsRef<Path>) -> Result<Model> {
        Model::load_onnx_with(path, &ImportOptions::default())
    }

    pub fn load_onnx_with(path: impl AsRef<Path>, options: &ImportOptions) -> Result<Model> {
        let p = c_path(path.as_ref())?;
        let raw = options.raw()?;
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_model_load_onnx_file(
                p.as_ptr(),
                &raw.options,
                &mut out,
            ))?
        };
        adopt(out)
    }

    /// Imports an ONNX model from bytes in memory.
    pub fn load_onnx_bytes(bytes: &[u8], options: &ImportOptions) -> Result<Model> {
        let raw = options.raw()?;
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_model_load_onnx_bytes(
                bytes.as_ptr() as *const c_void,
                bytes.len(),
                &raw.options,
                &mut out,
            ))?
        };
        adopt(out)
    }

    /// Reads a model file: ONNX for a `.onnx` name, kiln text IR otherwise.
    pub fn load(path: impl AsRef<Path>, options: &ImportOptions) -> Result<Model> {
        let p = c_path(path.as_ref())?;
        let raw = options.raw()?;
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_model_load_file(
                p.as_ptr(),
                &raw.options,
                &mut out,
            ))?
        };
        adopt(out)
    }

    /// Parses and type-checks kiln text IR (docs/text_format.md).
    pub fn parse(text: &str) -> Result<Model> {
        Model::parse_named(text, "<text>")
    }

    /// As `parse`; errors say `source_name:line:column`.
    pub fn parse_named(text: &str, source_name: &str) -> Result<Model> {
        let t = c_string(text, "model text")?;
        let n = c_string(source_name, "source name")?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::kiln_model_parse_text(t.as_ptr(), n.as_ptr(), &mut out))? };
        adopt(out)
    }

    /// The model as text IR (parses back with `parse`).
    pub fn text(&self, show_types: bool) -> Result<String> {
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_model_print(
                self.raw.as_ptr(),
                show_types as i32,
                &mut out,
            ))?;
            Ok(take_string(out))
        }
    }

    /// What importing the model warned about (ONNX that ONNX Runtime also
    /// accepts with a warning), one line each; empty for text IR and
    /// optimized models.
    pub fn warnings(&self) -> Result<Vec<String>> {
        let mut out = ptr::null();
        unsafe {
            check(sys::kiln_model_warnings(self.raw.as_ptr(), &mut out))?;
            Ok(borrowed_string(out)
                .lines()
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect())
        }
    }

    /// `main` as a Graphviz dot graph.
    pub fn to_dot(&self) -> Result<String> {
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_model_to_dot(self.raw.as_ptr(), &mut out))?;
            Ok(take_string(out))
        }
    }

    /// `main`'s parameters.
    pub fn inputs(&self) -> Result<Vec<TensorInfo>> {
        let mut n = 0;
        unsafe { check(sys::kiln_model_num_inputs(self.raw.as_ptr(), &mut n))? };
        (0..n)
            .map(|i| unsafe {
                let mut name = ptr::null();
                let mut info = std::mem::zeroed();
                check(sys::kiln_model_input_info(
                    self.raw.as_ptr(),
                    i,
                    &mut name,
                    &mut info,
                ))?;
                Ok(TensorInfo::from_raw(borrowed_string(name), &info))
            })
            .collect()
    }

    /// `main`'s results, flattened, named as the compiled artifact will name
    /// them (the ONNX graph's output names, else `output0`, ...).
    pub fn outputs(&self) -> Result<Vec<TensorInfo>> {
        let mut n = 0;
        unsafe { check(sys::kiln_model_num_outputs(self.raw.as_ptr(), &mut n))? };
        (0..n)
            .map(|i| unsafe {
                let mut info = std::mem::zeroed();
                check(sys::kiln_model_output_info(self.raw.as_ptr(), i, &mut info))?;
                let mut name = ptr::null();
                check(sys::kiln_model_output_name(self.raw.as_ptr(), i, &mut name))?;
                Ok(TensorInfo::from_raw(borrowed_string(name), &info))
            })
            .collect()
    }

    /// The dims of input `index` as the text IR writes them: "224", a
    /// symbolic dim's name ("N"), "?" for an unknown one.
    pub fn input_dim_names(&self, index: i32) -> Result<Vec<String>> {
        let ndim = unsafe {
            let mut name = ptr::null();
            let mut info: sys::DLTensor = std::mem::zeroed();
            check(sys::kiln_model_input_info(self.raw.as_ptr(), index, &mut name, &mut info))?;
            info.ndim
        };
        (0..ndim)
            .map(|axis| unsafe {
                let mut dim = ptr::null();
                check(sys::kiln_model_input_dim_name(self.raw.as_ptr(), index, axis, &mut dim))?;
                Ok(borrowed_string(dim))
            })
            .collect()
    }

    /// Runs graph passes; returns the optimized model (this one is unchanged).
    pub fn optimize(&self, options: &OptimizeOptions) -> Result<Model> {
        self.optimize_impl(options, None)
    }

    /// As `optimize`, calling `after_pass` after every pass that ran. A panic
    /// in it is resumed once the C call has returned.
    pub fn optimize_with(
        &self,
        options: &OptimizeOptions,
        mut after_pass: impl FnMut(&PassEvent<'_>),
    ) -> Result<Model> {
        self.optimize_impl(options, Some(&mut after_pass))
    }

    fn optimize_impl(
        &self,
        options: &OptimizeOptions,
        after_pass: Option<&mut dyn FnMut(&PassEvent<'_>)>,
    ) -> Result<Model> {
        let passes = options
            .passes
            .as_ref()
            .map(|p| CStrings::new(p, "pass name"))
            .transpose()?;
        let required = CStrings::new(&options.required, "pass name")?;
        let disabled = CStrings::new(&options.disabled, "pass name")?;
        let mut raw: sys::KilnOptimizeOptions = unsafe { std::mem::zeroed() };
        unsafe { sys::kiln_optimize_options_init(&mut raw) };
        raw.opt_level = options.opt_level;
        if let Some(p) = &passes {
            raw.passes = p.as_ptr();
            raw.num_passes = p.len();
        }
        raw.required_passes = required.as_ptr();
        raw.num_required_passes = required.len();
        raw.disabled_passes = disabled.as_ptr();
        raw.num_disabled_passes = disabled.len();
        let mut callback = after_pass.map(|f| Callback { f, panic: None });
        if let Some(cb) = callback.as_mut() {
            raw.after_pass = Some(after_pass_trampoline);
            raw.after_pass_user_data = cb as *mut Callback<'_> as *mut c_void;
            raw.after_pass_text = options.after_pass_text as i32;
        }
        let mut out = ptr::null_mut();
        let status = unsafe { sys::kiln_model_optimize(self.raw.as_ptr(), &raw, &mut out) };
        let result = unsafe { check(status) }.and_then(|_| adopt(out));
        if let Some(p) = callback.and_then(|cb| cb.panic) {
            panic::resume_unwind(p);
        }
        result
    }

    /// Compiles the model into an artifact (a .so) at `path`, written
    /// atomically; load it with `Artifact::load`. Every input needs a static
    /// shape (`ImportOptions::input_shape`).
    pub fn compile(
        &self,
        path: impl AsRef<Path>,
        options: &CompileOptions,
    ) -> Result<CompileReport> {
        let p = c_path(path.as_ref())?;
        let raw = options.raw()?;
        let mut report = sys::KilnCompileReport {
            struct_size: std::mem::size_of::<sys::KilnCompileReport>(),
            ..Default::default()
        };
        unsafe {
            check(sys::kiln_model_compile(
                self.raw.as_ptr(),
                &raw.options,
                p.as_ptr(),
                &mut report,
            ))?
        };
        Ok(CompileReport::from_raw(&report))
    }

    /// As `compile`, calling `progress` as the compile goes (kiln.h,
    /// `KilnCompileProgressFn`): each phase's start ("passes", "lower",
    /// "plan", "codegen", "link") with `done` 0, then one call per fused
    /// function while lowering and one per kernel during code generation
    /// (`done` 1 ..= `total`). The per-kernel calls come from kiln's
    /// code-generation threads, one at a time (hence `Send`). A panic in it
    /// is resumed once the C call has returned.
    pub fn compile_with(
        &self,
        path: impl AsRef<Path>,
        options: &CompileOptions,
        mut progress: impl FnMut(&CompileProgress<'_>) + Send,
    ) -> Result<CompileReport> {
        let p = c_path(path.as_ref())?;
        let mut raw = options.raw()?;
        let mut callback = ProgressCallback {
            f: &mut progress,
            panic: None,
        };
        raw.options.progress = Some(progress_trampoline);
        raw.options.progress_user_data = &mut callback as *mut ProgressCallback<'_> as *mut c_void;
        let mut report = sys::KilnCompileReport {
            struct_size: std::mem::size_of::<sys::KilnCompileReport>(),
            ..Default::default()
        };
        let status = unsafe {
            sys::kiln_model_compile(self.raw.as_ptr(), &raw.options, p.as_ptr(), &mut report)
        };
        let result = unsafe { check(status) }.map(|_| CompileReport::from_raw(&report));
        if let Some(p) = callback.panic.take() {
            panic::resume_unwind(p);
        }
        result
    }

    /// One stage of compilation as text; no artifact is written.
    pub fn emit(&self, kind: EmitKind, options: &CompileOptions) -> Result<String> {
        let raw = options.raw()?;
        let kind = match kind {
            EmitKind::GraphIr => sys::KILN_EMIT_GRAPH_IR,
            EmitKind::LoopIr => sys::KILN_EMIT_LOOP_IR,
            EmitKind::LlvmIr => sys::KILN_EMIT_LLVM_IR,
            EmitKind::Assembly => sys::KILN_EMIT_ASSEMBLY,
        };
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::kiln_model_emit(
                self.raw.as_ptr(),
                &raw.options,
                kind,
                &mut out,
                ptr::null_mut(),
            ))?;
            Ok(take_string(out))
        }
    }
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.inputs() {
            Ok(inputs) => write!(
                f,
                "Model({:?})",
                inputs.iter().map(|i| &i.name).collect::<Vec<_>>()
            ),
            Err(_) => write!(f, "Model"),
        }
    }
}
