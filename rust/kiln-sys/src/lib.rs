//! Raw declarations of libkiln's C ABI: `kiln/kiln.h` and the runtime headers
//! it includes (`kiln/runtime.h`, `status.h`, `threadpool.h`, `kernel_abi.h`,
//! `npy.h`, `artifact_format.h`) and the parts of `<dlpack/dlpack.h>` they use.
//!
//! Written by hand against the headers, in their order and with their names;
//! `tests/header.rs` checks every function name and parameter count, every
//! struct's size and field offsets and every constant against the headers with
//! the C compiler. docs/c_api.md says what each function does, who owns what,
//! and which calls are thread-safe. The safe API is the `kiln` crate.
//!
//! Linking: `build.rs` links `-lkiln` from `$KILN_LIB_DIR`, else from the
//! directory pkg-config's `kiln.pc` names, else from the default path.
#![allow(non_camel_case_types, non_upper_case_globals)]

use std::marker::{PhantomData, PhantomPinned};
use std::os::raw::{c_char, c_int, c_void};

// --------------------------------------------------------------- dlpack.h

/// `DLDeviceType` (a C enum: `int`).
pub type DLDeviceType = c_int;
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
pub const kDLCUDAHost: DLDeviceType = 3;

/// `DLDataTypeCode` values (`DLDataType::code` is a `uint8_t`).
pub const kDLInt: u8 = 0;
pub const kDLUInt: u8 = 1;
pub const kDLFloat: u8 = 2;
pub const kDLBfloat: u8 = 4;
/// DLPack 0.8's `kDLBool`; kiln's bool tensors use code 6 with 8 bits.
pub const kDLBool: u8 = 6;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

// --------------------------------------------------------------- status.h

/// `KilnStatusCode` (absl::StatusCode numbering).
pub type KilnStatusCode = c_int;
pub const KILN_OK: KilnStatusCode = 0;
pub const KILN_INVALID_ARGUMENT: KilnStatusCode = 3;
pub const KILN_NOT_FOUND: KilnStatusCode = 5;
pub const KILN_FAILED_PRECONDITION: KilnStatusCode = 9;
pub const KILN_OUT_OF_RANGE: KilnStatusCode = 11;
pub const KILN_UNIMPLEMENTED: KilnStatusCode = 12;
pub const KILN_INTERNAL: KilnStatusCode = 13;
pub const KILN_RESOURCE_EXHAUSTED: KilnStatusCode = 8;
pub const KILN_DATA_LOSS: KilnStatusCode = 15;

/// Declares an opaque C type: no fields, not constructible, `!Send`,
/// `!Sync` and `!Unpin` (the nomicon's recipe).
macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}

opaque!(
    /// A failed call's code and message; NULL means success.
    KilnStatus,
    /// The CPU thread pool (threadpool.h).
    KilnThreadPool,
    /// The context kernels run in (kernel_abi.h).
    KilnKernelContext,
    /// A loaded compiled model (runtime.h).
    KilnArtifact,
    /// One run's memory and threads (runtime.h).
    KilnSession,
    /// A per-node profile (runtime.h).
    KilnProfile,
    /// A model in kiln's graph IR (kiln.h).
    KilnModel,
);

// ----------------------------------------------------------- kernel_abi.h

pub const KILN_KERNEL_ABI_VERSION: u32 = 1;
pub const KILN_KERNEL_OK: i32 = 0;
pub const KILN_KERNEL_EINVAL: i32 = -1;
pub const KILN_KERNEL_ENOMEM: i32 = -2;
pub const KILN_KERNEL_EINTERNAL: i32 = -3;

pub type KilnKernelFn = Option<
    unsafe extern "C" fn(
        args: *const *mut DLTensor,
        num_args: i32,
        ctx: *mut KilnKernelContext,
    ) -> i32,
>;
pub type KilnParallelLambda =
    Option<unsafe extern "C" fn(task_id: i32, num_tasks: i32, closure: *mut c_void) -> i32>;

// ----------------------------------------------------------- threadpool.h

pub const KILN_THREAD_POOL_MAX_THREADS: i32 = 1024;

// ------------------------------------------------------ artifact_format.h

pub const KILN_ARTIFACT_MAGIC: &[u8; 8] = b"KILNART\0";
pub const KILN_ARTIFACT_MAGIC_SIZE: usize = 8;
pub const KILN_ARTIFACT_FORMAT_VERSION: u32 = 1;
pub const KILN_ARTIFACT_SYMBOL: &str = "kiln_artifact";
pub const KILN_ARTIFACT_ALIGNMENT: u32 = 64;
pub const KILN_ARTIFACT_MAX_SECTIONS: u32 = 64;
pub const KILN_ARTIFACT_MAX_NDIM: i32 = 32;
pub const KILN_ARTIFACT_CHECKSUM_OFFSET: u32 = 32;
pub const KILN_SECTION_META: u32 = 1;
pub const KILN_SECTION_GRAPH: u32 = 2;
pub const KILN_SECTION_PARAMS: u32 = 3;
pub const KILN_SECTION_DEVICE_CODE: u32 = 4;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnArtifactHeader {
    pub magic: [c_char; KILN_ARTIFACT_MAGIC_SIZE],
    pub format_version: u32,
    pub header_size: u32,
    pub blob_size: u64,
    pub file_size: u64,
    pub checksum: u64,
    pub num_sections: u32,
    pub flags: u32,
    pub reserved: [u8; 16],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnArtifactSection {
    pub kind: u32,
    pub flags: u32,
    pub offset: u64,
    pub size: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnArtifactParam {
    pub name_offset: u64,
    pub name_size: u32,
    pub ndim: i32,
    pub shape_offset: u64,
    pub data_offset: u64,
    pub data_size: u64,
    pub dtype_code: u8,
    pub dtype_bits: u8,
    pub dtype_lanes: u16,
    pub reserved: u32,
}

// ------------------------------------------------------------------ npy.h

#[repr(C)]
#[derive(Debug)]
pub struct KilnNpyTensor {
    pub tensor: DLTensor,
}

// -------------------------------------------------------------- runtime.h

/// The C ABI version of these declarations (kiln_api_version() of the
/// library must be at least this). Version 2 added kiln_model_warnings.
pub const KILN_API_VERSION: u32 = 7;
pub const KILN_PROFILE_MAX_RUNS: i32 = 100000;

pub const KILN_HMAC_SHA256_SIZE: usize = 32;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnArtifactLoadOptions {
    pub struct_size: usize,
    pub hmac_key: *const u8,
    pub hmac_key_size: usize,
    pub expected_hmac_sha256: *const u8,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnSessionOptions {
    pub struct_size: usize,
    pub num_threads: i32,
    pub pool: *mut KilnThreadPool,
    /// DLPack device type (kDLCPU 1, kDLCUDA 2; 0 = CPU) and ordinal. API version 5.
    pub device_type: i32,
    pub device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KilnProfileOptions {
    pub struct_size: usize,
    pub warmup: i32,
    pub repeat: i32,
    pub skip_tensors: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnBenchmarkOptions {
    pub struct_size: usize,
    pub warmup: i32,
    pub repeat: i32,
    pub workload: *const c_char,
    pub hardware: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KilnBenchmarkResult {
    pub mean_ms: f64,
    pub std_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub repeat: i32,
}

// ----------------------------------------------------------------- kiln.h

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnInputShape {
    pub name: *const c_char,
    pub ndim: i32,
    pub dims: *const i64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnImportOptions {
    pub struct_size: usize,
    pub input_shapes: *const KilnInputShape,
    pub num_input_shapes: i32,
    pub external_data_dir: *const c_char,
}

pub type KilnAfterPassFn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        pass_name: *const c_char,
        changed: i32,
        elapsed_ms: f64,
        module_text: *const c_char,
    ),
>;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnOptimizeOptions {
    pub struct_size: usize,
    pub opt_level: i32,
    pub passes: *const *const c_char,
    pub num_passes: i32,
    pub required_passes: *const *const c_char,
    pub num_required_passes: i32,
    pub disabled_passes: *const *const c_char,
    pub num_disabled_passes: i32,
    pub after_pass: KilnAfterPassFn,
    pub after_pass_user_data: *mut c_void,
    pub after_pass_text: i32,
}

/// Compile progress (kiln.h, `KilnCompileProgressFn`): phase starts, then
/// every fused function during "lower" and every kernel during "codegen",
/// the latter possibly from code-generation threads (kiln serializes the
/// calls). API version 3.
pub type KilnCompileProgressFn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, phase: *const c_char, done: i32, total: i32),
>;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KilnCompileOptions {
    pub struct_size: usize,
    pub target: *const c_char,
    pub opt_level: i32,
    pub disabled_passes: *const *const c_char,
    pub num_disabled_passes: i32,
    pub no_memory_plan: i32,
    pub num_threads: i32,
    pub cc: *const c_char,
    pub progress: KilnCompileProgressFn,
    pub progress_user_data: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KilnCompileReport {
    pub struct_size: usize,
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

/// `KilnEmitKind` (a C enum: `int`).
pub type KilnEmitKind = c_int;
pub const KILN_EMIT_GRAPH_IR: KilnEmitKind = 0;
pub const KILN_EMIT_LOOP_IR: KilnEmitKind = 1;
pub const KILN_EMIT_LLVM_IR: KilnEmitKind = 2;
pub const KILN_EMIT_ASSEMBLY: KilnEmitKind = 3;

// -------------------------------------------------------------- functions

extern "C" {
    // status.h
    pub fn kiln_status_create(code: KilnStatusCode, format: *const c_char, ...) -> *mut KilnStatus;
    pub fn kiln_status_code(status: *const KilnStatus) -> KilnStatusCode;
    pub fn kiln_status_message(status: *const KilnStatus) -> *const c_char;
    pub fn kiln_status_code_name(code: KilnStatusCode) -> *const c_char;
    pub fn kiln_status_free(status: *mut KilnStatus);

    // kernel_abi.h (called by generated kernels, not by applications)
    pub fn kiln_parallel_launch(
        ctx: *mut KilnKernelContext,
        fn_: KilnParallelLambda,
        closure: *mut c_void,
        num_tasks: i32,
    ) -> i32;
    pub fn kiln_parallel_num_threads(ctx: *mut KilnKernelContext) -> i32;
    pub fn kiln_workspace_alloc(
        ctx: *mut KilnKernelContext,
        nbytes: u64,
        alignment: u32,
    ) -> *mut c_void;
    pub fn kiln_workspace_free(ctx: *mut KilnKernelContext, ptr: *mut c_void);
    pub fn kiln_kernel_error(ctx: *mut KilnKernelContext, code: i32, message: *const c_char)
        -> i32;
    pub fn kiln_kernel_last_error() -> *const c_char;

    // threadpool.h
    pub fn kiln_thread_pool_default_num_threads() -> i32;
    pub fn kiln_thread_pool_create(num_threads: i32, out: *mut *mut KilnThreadPool) -> i32;
    pub fn kiln_thread_pool_destroy(pool: *mut KilnThreadPool);
    pub fn kiln_thread_pool_num_threads(pool: *const KilnThreadPool) -> i32;
    pub fn kiln_kernel_context_create(
        pool: *mut KilnThreadPool,
        out: *mut *mut KilnKernelContext,
    ) -> i32;
    pub fn kiln_kernel_context_destroy(ctx: *mut KilnKernelContext);
    pub fn kiln_kernel_context_error(ctx: *const KilnKernelContext) -> *const c_char;
    pub fn kiln_kernel_context_clear_error(ctx: *mut KilnKernelContext);

    // artifact_format.h
    pub fn kiln_checksum64(data: *const c_void, size: u64, skip_offset: u64) -> u64;
    pub fn kiln_elf_find_symbol(
        image: *const u8,
        image_size: u64,
        name: *const c_char,
        offset: *mut u64,
        size: *mut u64,
    ) -> *mut KilnStatus;

    // npy.h
    pub fn kiln_npy_write(path: *const c_char, tensor: *const DLTensor) -> *mut KilnStatus;
    pub fn kiln_npy_read(path: *const c_char, out: *mut *mut KilnNpyTensor) -> *mut KilnStatus;
    pub fn kiln_npy_release(t: *mut KilnNpyTensor);

    // runtime.h: versions
    pub fn kiln_runtime_version() -> *const c_char;
    pub fn kiln_api_version() -> u32;

    // runtime.h: artifacts
    pub fn kiln_artifact_load(path: *const c_char, out: *mut *mut KilnArtifact) -> *mut KilnStatus;
    pub fn kiln_artifact_load_with(
        path: *const c_char,
        options: *const KilnArtifactLoadOptions,
        out: *mut *mut KilnArtifact,
    ) -> *mut KilnStatus;
    pub fn kiln_artifact_release(artifact: *mut KilnArtifact);
    pub fn kiln_artifact_target(artifact: *const KilnArtifact) -> *const c_char;
    pub fn kiln_artifact_producer(artifact: *const KilnArtifact) -> *const c_char;
    pub fn kiln_artifact_graph_json(artifact: *const KilnArtifact) -> *const c_char;
    /// API version 5: the device code of a GPU artifact as JSON ("" for a CPU artifact).
    pub fn kiln_artifact_device_code_json(artifact: *const KilnArtifact) -> *const c_char;
    pub fn kiln_artifact_num_inputs(artifact: *const KilnArtifact) -> i32;
    pub fn kiln_artifact_num_outputs(artifact: *const KilnArtifact) -> i32;
    pub fn kiln_artifact_num_nodes(artifact: *const KilnArtifact) -> i32;
    pub fn kiln_artifact_input_info(
        artifact: *const KilnArtifact,
        index: i32,
        name: *mut *const c_char,
        info: *mut DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_artifact_output_info(
        artifact: *const KilnArtifact,
        index: i32,
        name: *mut *const c_char,
        info: *mut DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_artifact_input_index(
        artifact: *const KilnArtifact,
        name: *const c_char,
        index: *mut i32,
    ) -> *mut KilnStatus;
    pub fn kiln_artifact_output_index(
        artifact: *const KilnArtifact,
        name: *const c_char,
        index: *mut i32,
    ) -> *mut KilnStatus;
    pub fn kiln_artifact_memory_stats(
        artifact: *const KilnArtifact,
        arena_bytes: *mut u64,
        naive_bytes: *mut u64,
    );
    // C ABI version 6: sequences of tensors (docs/vm.md).
    pub fn kiln_artifact_input_is_sequence(artifact: *const KilnArtifact, index: i32) -> i32;
    pub fn kiln_artifact_output_is_sequence(artifact: *const KilnArtifact, index: i32) -> i32;
    pub fn kiln_session_set_input_sequence(
        session: *mut KilnSession,
        name: *const c_char,
        elements: *const DLTensor,
        count: i32,
    ) -> *mut KilnStatus;
    pub fn kiln_session_get_output_sequence_length(
        session: *mut KilnSession,
        index: i32,
        count: *mut i32,
    ) -> *mut KilnStatus;
    pub fn kiln_session_get_output_sequence_element(
        session: *mut KilnSession,
        index: i32,
        k: i32,
        out: *mut *const DLTensor,
    ) -> *mut KilnStatus;
    // C ABI version 7: optionals (docs/vm.md).
    pub fn kiln_artifact_input_is_optional(artifact: *const KilnArtifact, index: i32) -> i32;
    pub fn kiln_artifact_output_is_optional(artifact: *const KilnArtifact, index: i32) -> i32;
    pub fn kiln_session_set_input_none(session: *mut KilnSession, name: *const c_char) -> *mut KilnStatus;
    pub fn kiln_session_get_output_is_none(
        session: *mut KilnSession,
        index: i32,
        is_none: *mut i32,
    ) -> *mut KilnStatus;

    // runtime.h: sessions
    pub fn kiln_session_create(
        artifact: *const KilnArtifact,
        options: *const KilnSessionOptions,
        out: *mut *mut KilnSession,
    ) -> *mut KilnStatus;
    pub fn kiln_session_release(session: *mut KilnSession);
    pub fn kiln_session_set_input(
        session: *mut KilnSession,
        name: *const c_char,
        tensor: *const DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_session_set_input_zero_copy(
        session: *mut KilnSession,
        name: *const c_char,
        tensor: *const DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_session_set_input_index(
        session: *mut KilnSession,
        index: i32,
        tensor: *const DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_session_run(session: *mut KilnSession) -> *mut KilnStatus;
    pub fn kiln_session_get_output(
        session: *mut KilnSession,
        index: i32,
        out: *mut *const DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_session_copy_output(
        session: *mut KilnSession,
        index: i32,
        dst: *const DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_session_get_output_dlpack(
        session: *mut KilnSession,
        index: i32,
        out: *mut *mut DLManagedTensor,
    ) -> *mut KilnStatus;

    // runtime.h: the debug executor
    pub fn kiln_session_profile(
        session: *mut KilnSession,
        out: *mut *mut KilnProfile,
    ) -> *mut KilnStatus;
    pub fn kiln_session_profile_with(
        session: *mut KilnSession,
        options: *const KilnProfileOptions,
        out: *mut *mut KilnProfile,
    ) -> *mut KilnStatus;
    pub fn kiln_profile_release(profile: *mut KilnProfile);
    pub fn kiln_profile_num_nodes(profile: *const KilnProfile) -> i32;
    pub fn kiln_profile_total_us(profile: *const KilnProfile) -> f64;
    pub fn kiln_profile_node(
        profile: *const KilnProfile,
        index: i32,
        name: *mut *const c_char,
        op: *mut *const c_char,
        time_us: *mut f64,
    ) -> *mut KilnStatus;
    pub fn kiln_profile_table(
        profile: *const KilnProfile,
        text: *mut *mut c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_profile_chrome_trace(
        profile: *const KilnProfile,
        json: *mut *mut c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_session_debug_dump(
        session: *mut KilnSession,
        dir: *const c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_session_debug_dump_with(
        session: *mut KilnSession,
        dir: *const c_char,
        options: *const KilnProfileOptions,
    ) -> *mut KilnStatus;

    // runtime.h: benchmark, memory
    pub fn kiln_session_benchmark(
        session: *mut KilnSession,
        options: *const KilnBenchmarkOptions,
        result: *mut KilnBenchmarkResult,
        log_line: *mut *mut c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_free(ptr: *mut c_void);

    // kiln.h: the compiler
    pub fn kiln_version() -> *const c_char;
    pub fn kiln_import_options_init(options: *mut KilnImportOptions);
    pub fn kiln_model_load_onnx_file(
        path: *const c_char,
        options: *const KilnImportOptions,
        out_model: *mut *mut KilnModel,
    ) -> *mut KilnStatus;
    pub fn kiln_model_load_onnx_bytes(
        data: *const c_void,
        size: usize,
        options: *const KilnImportOptions,
        out_model: *mut *mut KilnModel,
    ) -> *mut KilnStatus;
    pub fn kiln_model_parse_text(
        text: *const c_char,
        source_name: *const c_char,
        out_model: *mut *mut KilnModel,
    ) -> *mut KilnStatus;
    pub fn kiln_model_load_file(
        path: *const c_char,
        options: *const KilnImportOptions,
        out_model: *mut *mut KilnModel,
    ) -> *mut KilnStatus;
    pub fn kiln_model_release(model: *mut KilnModel);
    pub fn kiln_model_warnings(
        model: *const KilnModel,
        out_text: *mut *const c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_model_print(
        model: *const KilnModel,
        show_types: i32,
        out_text: *mut *mut c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_model_num_inputs(model: *const KilnModel, out_count: *mut i32) -> *mut KilnStatus;
    pub fn kiln_model_num_outputs(model: *const KilnModel, out_count: *mut i32) -> *mut KilnStatus;
    pub fn kiln_model_input_info(
        model: *const KilnModel,
        index: i32,
        out_name: *mut *const c_char,
        out_info: *mut DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_model_output_info(
        model: *const KilnModel,
        index: i32,
        out_info: *mut DLTensor,
    ) -> *mut KilnStatus;
    pub fn kiln_model_output_name(
        model: *const KilnModel,
        index: i32,
        out_name: *mut *const c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_model_input_dim_name(
        model: *const KilnModel,
        index: i32,
        axis: i32,
        out_dim: *mut *const c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_model_output_dim_name(
        model: *const KilnModel,
        index: i32,
        axis: i32,
        out_dim: *mut *const c_char,
    ) -> *mut KilnStatus;
    pub fn kiln_optimize_options_init(options: *mut KilnOptimizeOptions);
    pub fn kiln_model_optimize(
        model: *const KilnModel,
        options: *const KilnOptimizeOptions,
        out_model: *mut *mut KilnModel,
    ) -> *mut KilnStatus;
    pub fn kiln_pass_count() -> i32;
    pub fn kiln_pass_name(index: i32) -> *const c_char;
    pub fn kiln_compile_options_init(options: *mut KilnCompileOptions);
    pub fn kiln_model_compile(
        model: *const KilnModel,
        options: *const KilnCompileOptions,
        path: *const c_char,
        report: *mut KilnCompileReport,
    ) -> *mut KilnStatus;
    pub fn kiln_model_emit(
        model: *const KilnModel,
        options: *const KilnCompileOptions,
        kind: KilnEmitKind,
        out_text: *mut *mut c_char,
        report: *mut KilnCompileReport,
    ) -> *mut KilnStatus;
    pub fn kiln_model_to_dot(model: *const KilnModel, out_dot: *mut *mut c_char)
        -> *mut KilnStatus;
    pub fn kiln_model_evaluate(
        model: *const KilnModel,
        inputs: *const *const DLTensor,
        num_inputs: i32,
        out_outputs: *mut *mut *mut DLManagedTensor,
        out_num_outputs: *mut i32,
    ) -> *mut KilnStatus;
}
