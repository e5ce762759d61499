//! kiln-sys against the real headers, read by the C compiler.
//!
//! * every function `kiln/kiln.h` declares (after preprocessing) is declared
//!   in src/lib.rs with the same number of parameters, and nothing else is;
//! * every `#[repr(C)]` struct of src/lib.rs has the size and field offsets
//!   the C compiler gives the struct of the same name;
//! * every constant has the value of the C macro or enumerator it mirrors.
//!
//! The include roots come from `$KILN_INCLUDE_DIR` (joined by ':'), else the
//! repository's `c_api/include` and `runtime_c/include`; `<dlpack/dlpack.h>`
//! from the compiler's default path (Debian's libdlpack-dev) or
//! `$DLPACK_INCLUDE_DIR`. The C compiler is `$CC`, else `cc`.

use std::collections::BTreeMap;
use std::env;
use std::fs;
use std::mem::{size_of, MaybeUninit};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use kiln_sys::*;

const SOURCE: &str = include_str!("../src/lib.rs");

fn include_flags() -> Vec<String> {
    let roots = match env::var("KILN_INCLUDE_DIR") {
        Ok(v) if !v.is_empty() => v
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => {
            let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
            vec![repo.join("c_api/include"), repo.join("runtime_c/include")]
        }
    };
    let mut flags: Vec<String> = roots.iter().map(|r| format!("-I{}", r.display())).collect();
    if let Ok(d) = env::var("DLPACK_INCLUDE_DIR") {
        if !d.is_empty() {
            flags.push(format!("-I{}", d));
        }
    }
    flags
}

fn cc() -> String {
    env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

fn scratch(name: &str) -> PathBuf {
    let base = env::var("TEST_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| env::temp_dir());
    let dir = base.join(format!("kiln_sys_{}_{}", name, std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The text between the parenthesis at `open` and its match, and the index after it.
fn balanced(text: &str, open: usize) -> (&str, usize) {
    let bytes = text.as_bytes();
    assert_eq!(bytes[open], b'(');
    let mut depth = 0;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return (&text[open + 1..i], i + 1);
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced parentheses at byte {}", open);
}

/// How many parameters a parameter list has (`void` and `` are 0; a
/// trailing comma, as rustfmt writes them, is not a parameter).
fn count_params(params: &str) -> usize {
    let mut depth = 0;
    let mut count = 0;
    let mut segment = String::new();
    for ch in params.chars().chain(std::iter::once(',')) {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                let s = segment.trim();
                if !s.is_empty() && s != "void" {
                    count += 1;
                }
                segment.clear();
                continue;
            }
            _ => {}
        }
        segment.push(ch);
    }
    count
}

/// name -> parameter count of every `<prefix>NAME(...)` in `text`, where
/// `prefix` ends with "kiln_".
fn functions(text: &str, prefix: &str) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find(prefix) {
        let at = from + pos;
        let start = at + prefix.len();
        from = start;
        let word_start =
            at == 0 || !text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let len = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len() - start);
        let after = text[start + len..].trim_start();
        if !word_start || !after.starts_with('(') {
            continue;
        }
        let (params, end) = balanced(text, text.len() - after.len());
        found.insert(
            format!("kiln_{}", &text[start..start + len]),
            count_params(params),
        );
        from = end;
    }
    found
}

fn preprocess(source: &str) -> String {
    let mut child = Command::new(cc())
        .args(["-std=c11", "-E", "-P"])
        .args(include_flags())
        .args(["-x", "c", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cannot start the C compiler ($CC or cc)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the C preprocessor failed on kiln/kiln.h"
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn functions_match_the_header() {
    let header = functions(&preprocess("#include \"kiln/kiln.h\"\n"), "kiln_");
    assert!(
        header.len() > 50,
        "only {} kiln_ functions found in kiln/kiln.h",
        header.len()
    );
    let extern_block = &SOURCE[SOURCE.find("extern \"C\" {").expect("no extern block")..];
    let ours = functions(extern_block, "pub fn kiln_");
    let missing: Vec<_> = header.keys().filter(|k| !ours.contains_key(*k)).collect();
    let extra: Vec<_> = ours.keys().filter(|k| !header.contains_key(*k)).collect();
    assert!(
        missing.is_empty(),
        "kiln.h functions kiln-sys does not declare: {:?}",
        missing
    );
    assert!(
        extra.is_empty(),
        "kiln-sys declares functions kiln.h does not: {:?}",
        extra
    );
    for (name, n) in &header {
        assert_eq!(
            ours[name], *n,
            "{}: {} parameters in kiln.h, {} in kiln-sys",
            name, n, ours[name]
        );
    }
}

/// The field names of `pub struct NAME { ... }` in src/lib.rs.
fn source_fields(name: &str) -> Vec<String> {
    let start = SOURCE
        .find(&format!("pub struct {} {{", name))
        .unwrap_or_else(|| panic!("no struct {} in src/lib.rs", name));
    let body = &SOURCE[start..start + SOURCE[start..].find("\n}").unwrap()];
    body.lines()
        .skip(1)
        .filter_map(|l| l.trim().strip_prefix("pub "))
        .map(|l| l.split(':').next().unwrap().trim().to_string())
        .collect()
}

fn size_of_pointee<T>(_: *const T) -> usize {
    size_of::<T>()
}

/// (C name, size, [(field, offset, size)]) of a Rust struct, measured on an
/// uninitialized value through raw pointers (nothing is read or borrowed).
macro_rules! layout {
    ($t:ident { $($f:ident),* $(,)? }) => {{
        let u = MaybeUninit::<$t>::uninit();
        let base = u.as_ptr();
        #[allow(unused_unsafe)]
        let fields: Vec<(&str, usize, usize)> = vec![$({
            let field = unsafe { std::ptr::addr_of!((*base).$f) };
            (stringify!($f), field as usize - base as usize, size_of_pointee(field))
        }),*];
        (stringify!($t), size_of::<$t>(), fields)
    }};
}

#[test]
fn structs_match_the_compiler() {
    let layouts = vec![
        layout!(DLDevice {
            device_type,
            device_id
        }),
        layout!(DLDataType { code, bits, lanes }),
        layout!(DLTensor {
            data,
            device,
            ndim,
            dtype,
            shape,
            strides,
            byte_offset
        }),
        layout!(DLManagedTensor {
            dl_tensor,
            manager_ctx,
            deleter
        }),
        layout!(KilnArtifactHeader {
            magic,
            format_version,
            header_size,
            blob_size,
            file_size,
            checksum,
            num_sections,
            flags,
            reserved
        }),
        layout!(KilnArtifactSection {
            kind,
            flags,
            offset,
            size
        }),
        layout!(KilnArtifactParam {
            name_offset,
            name_size,
            ndim,
            shape_offset,
            data_offset,
            data_size,
            dtype_code,
            dtype_bits,
            dtype_lanes,
            reserved
        }),
        layout!(KilnNpyTensor { tensor }),
        layout!(KilnSessionOptions {
            struct_size,
            num_threads,
            pool,
            device_type,
            device_id
        }),
        layout!(KilnArtifactLoadOptions {
            struct_size,
            hmac_key,
            hmac_key_size,
            expected_hmac_sha256
        }),
        layout!(KilnProfileOptions {
            struct_size,
            warmup,
            repeat,
            skip_tensors
        }),
        layout!(KilnBenchmarkOptions {
            struct_size,
            warmup,
            repeat,
            workload,
            hardware
        }),
        layout!(KilnBenchmarkResult {
            mean_ms,
            std_ms,
            min_ms,
            max_ms,
            repeat
        }),
        layout!(KilnInputShape { name, ndim, dims }),
        layout!(KilnImportOptions {
            struct_size,
            input_shapes,
            num_input_shapes,
            external_data_dir
        }),
        layout!(KilnOptimizeOptions {
            struct_size,
            opt_level,
            passes,
            num_passes,
            required_passes,
            num_required_passes,
            disabled_passes,
            num_disabled_passes,
            after_pass,
            after_pass_user_data,
            after_pass_text
        }),
        layout!(KilnCompileOptions {
            struct_size,
            target,
            opt_level,
            disabled_passes,
            num_disabled_passes,
            no_memory_plan,
            num_threads,
            cc,
            progress,
            progress_user_data
        }),
        layout!(KilnCompileReport {
            struct_size,
            passes_ms,
            lower_ms,
            plan_ms,
            codegen_ms,
            link_ms,
            num_fused_calls,
            num_kernels,
            arena_bytes,
            naive_bytes,
            file_bytes
        }),
    ];
    // Every struct with fields in src/lib.rs is listed, with all its fields.
    let mut listed: Vec<&str> = layouts.iter().map(|l| l.0).collect();
    listed.sort_unstable();
    let mut declared: Vec<&str> = SOURCE
        .lines()
        .filter_map(|l| l.strip_prefix("pub struct "))
        .filter(|l| l.ends_with(" {"))
        .map(|l| l.trim_end_matches(" {"))
        .collect();
    declared.sort_unstable();
    assert_eq!(
        listed, declared,
        "structs_match_the_compiler must list every struct"
    );
    for (name, _, fields) in &layouts {
        let names: Vec<String> = fields.iter().map(|f| f.0.to_string()).collect();
        assert_eq!(
            names,
            source_fields(name),
            "{}: the fields listed here",
            name
        );
    }

    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"kiln/kiln.h\"\nint main(void) {\n",
    );
    for (name, _, fields) in &layouts {
        c += &format!("  printf(\"{0} %zu\\n\", sizeof({0}));\n", name);
        for (f, _, _) in fields {
            c += &format!(
                "  printf(\"{0}.{1} %zu\\n\", offsetof({0}, {1}));\n",
                name, f
            );
            c += &format!(
                "  printf(\"{0}.{1}.size %zu\\n\", sizeof((({0}*)0)->{1}));\n",
                name, f
            );
        }
    }
    c += "  return 0;\n}\n";
    let c_values = run_c("layout", &c);
    for (name, size, fields) in &layouts {
        assert_eq!(c_values[*name], *size as i64, "sizeof({})", name);
        for (f, off, size) in fields {
            assert_eq!(
                c_values[&format!("{}.{}", name, f)],
                *off as i64,
                "offsetof({}, {})",
                name,
                f
            );
            assert_eq!(
                c_values[&format!("{}.{}.size", name, f)],
                *size as i64,
                "sizeof {}.{}",
                name,
                f
            );
        }
    }
}

/// Compiles and runs a C program printing "KEY VALUE" lines; returns them.
fn run_c(name: &str, source: &str) -> BTreeMap<String, i64> {
    let dir = scratch(name);
    let (src, exe) = (dir.join("main.c"), dir.join("main"));
    fs::write(&src, source).unwrap();
    let status = Command::new(cc())
        .arg("-std=c11")
        .args(include_flags())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("cannot start the C compiler");
    assert!(
        status.success(),
        "the C program did not compile:\n{}",
        source
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn constants_match_the_header() {
    // Every integer constant of src/lib.rs that the C headers define.
    let ours: Vec<(&str, i64)> = vec![
        ("kDLCPU", kDLCPU as i64),
        ("kDLCUDA", kDLCUDA as i64),
        ("kDLCUDAHost", kDLCUDAHost as i64),
        ("kDLInt", kDLInt as i64),
        ("kDLUInt", kDLUInt as i64),
        ("kDLFloat", kDLFloat as i64),
        ("kDLBfloat", kDLBfloat as i64),
        ("KILN_OK", KILN_OK as i64),
        ("KILN_INVALID_ARGUMENT", KILN_INVALID_ARGUMENT as i64),
        ("KILN_NOT_FOUND", KILN_NOT_FOUND as i64),
        ("KILN_FAILED_PRECONDITION", KILN_FAILED_PRECONDITION as i64),
        ("KILN_OUT_OF_RANGE", KILN_OUT_OF_RANGE as i64),
        ("KILN_UNIMPLEMENTED", KILN_UNIMPLEMENTED as i64),
        ("KILN_INTERNAL", KILN_INTERNAL as i64),
        ("KILN_RESOURCE_EXHAUSTED", KILN_RESOURCE_EXHAUSTED as i64),
        ("KILN_DATA_LOSS", KILN_DATA_LOSS as i64),
        ("KILN_KERNEL_ABI_VERSION", KILN_KERNEL_ABI_VERSION as i64),
        ("KILN_KERNEL_OK", KILN_KERNEL_OK as i64),
        ("KILN_KERNEL_EINVAL", KILN_KERNEL_EINVAL as i64),
        ("KILN_KERNEL_ENOMEM", KILN_KERNEL_ENOMEM as i64),
        ("KILN_KERNEL_EINTERNAL", KILN_KERNEL_EINTERNAL as i64),
        (
            "KILN_THREAD_POOL_MAX_THREADS",
            KILN_THREAD_POOL_MAX_THREADS as i64,
        ),
        ("KILN_HMAC_SHA256_SIZE", KILN_HMAC_SHA256_SIZE as i64),
        ("KILN_ARTIFACT_MAGIC_SIZE", KILN_ARTIFACT_MAGIC_SIZE as i64),
        (
            "KILN_ARTIFACT_FORMAT_VERSION",
            KILN_ARTIFACT_FORMAT_VERSION as i64,
        ),
        ("KILN_ARTIFACT_ALIGNMENT", KILN_ARTIFACT_ALIGNMENT as i64),
        (
            "KILN_ARTIFACT_MAX_SECTIONS",
            KILN_ARTIFACT_MAX_SECTIONS as i64,
        ),
        ("KILN_ARTIFACT_MAX_NDIM", KILN_ARTIFACT_MAX_NDIM as i64),
        (
            "KILN_ARTIFACT_CHECKSUM_OFFSET",
            KILN_ARTIFACT_CHECKSUM_OFFSET as i64,
        ),
        ("KILN_SECTION_META", KILN_SECTION_META as i64),
        ("KILN_SECTION_GRAPH", KILN_SECTION_GRAPH as i64),
        ("KILN_SECTION_PARAMS", KILN_SECTION_PARAMS as i64),
        ("KILN_SECTION_DEVICE_CODE", KILN_SECTION_DEVICE_CODE as i64),
        ("KILN_API_VERSION", KILN_API_VERSION as i64),
        ("KILN_PROFILE_MAX_RUNS", KILN_PROFILE_MAX_RUNS as i64),
        ("KILN_EMIT_GRAPH_IR", KILN_EMIT_GRAPH_IR as i64),
        ("KILN_EMIT_LOOP_IR", KILN_EMIT_LOOP_IR as i64),
        ("KILN_EMIT_LLVM_IR", KILN_EMIT_LLVM_IR as i64),
        ("KILN_EMIT_ASSEMBLY", KILN_EMIT_ASSEMBLY as i64),
    ];
    // Not C integer constants: the two strings (checked below) and kDLBool
    // (DLPack 0.8; older dlpack.h has no name for code 6).
    let elsewhere = ["KILN_ARTIFACT_MAGIC", "KILN_ARTIFACT_SYMBOL", "kDLBool"];
    let mut declared: Vec<&str> = SOURCE
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .map(|l| l.split(':').next().unwrap())
        .filter(|n| !elsewhere.contains(n))
        .collect();
    declared.sort_unstable();
    let mut listed: Vec<&str> = ours.iter().map(|c| c.0).collect();
    listed.sort_unstable();
    assert_eq!(
        listed, declared,
        "constants_match_the_header must list every constant"
    );

    let mut c = String::from(
        "#include <stdio.h>\n#include <string.h>\n#include \"kiln/kiln.h\"\nint main(void) {\n",
    );
    for (name, _) in &ours {
        c += &format!("  printf(\"{0} %lld\\n\", (long long)({0}));\n", name);
    }
    c += &format!(
        "  printf(\"magic %d\\n\", memcmp(KILN_ARTIFACT_MAGIC, \"{}\", KILN_ARTIFACT_MAGIC_SIZE) == 0);\n",
        std::str::from_utf8(&KILN_ARTIFACT_MAGIC[..7]).unwrap()
    );
    c += &format!(
        "  printf(\"symbol %d\\n\", strcmp(KILN_ARTIFACT_SYMBOL, \"{}\") == 0);\n  return 0;\n}}\n",
        KILN_ARTIFACT_SYMBOL
    );
    let values = run_c("constants", &c);
    for (name, v) in &ours {
        assert_eq!(values[*name], *v, "{}", name);
    }
    assert_eq!(values["magic"], 1, "KILN_ARTIFACT_MAGIC");
    assert_eq!(values["symbol"], 1, "KILN_ARTIFACT_SYMBOL");
    assert_eq!(KILN_ARTIFACT_MAGIC[7], 0);
}

#[test]
fn the_library_links_and_answers() {
    // The declarations resolve against libkiln.so and the simplest calls work.
    let v = unsafe { std::ffi::CStr::from_ptr(kiln_version()) };
    assert!(!v.to_bytes().is_empty());
    assert!(unsafe { kiln_api_version() } >= KILN_API_VERSION);
    let st = unsafe {
        kiln_artifact_load(
            b"/nonexistent.so\0".as_ptr() as *const _,
            &mut std::ptr::null_mut(),
        )
    };
    assert!(!st.is_null());
    assert_eq!(unsafe { kiln_status_code(st) }, KILN_NOT_FOUND);
    unsafe { kiln_status_free(st) };
    assert!(unsafe { kiln_pass_count() } > 10);
}
