// Links libkiln.so. Where from, in this order:
//   1. $KILN_LIB_DIR: the directory holding libkiln.so (an SDK's lib/);
//   2. pkg-config's kiln.pc (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig, as
//      tools/dev/install.sh and //c_api:sdk lay it out);
//   3. the linker's default search path.
// The directory found is passed on to crates that depend on this one as
// DEP_KILN_LIB_DIR (the `links = "kiln"` metadata), and this crate's own
// tests get an rpath to it.
use std::env;
use std::process::Command;

fn pkg_config_libdir() -> Option<String> {
    let out = Command::new(env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into()))
        .args(["--variable=libdir", "kiln"])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?.trim().to_string();
    if out.status.success() && !dir.is_empty() {
        Some(dir)
    } else {
        None
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=KILN_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let dir = match env::var("KILN_LIB_DIR") {
        Ok(d) if !d.is_empty() => Some(d),
        _ => pkg_config_libdir(),
    };
    match &dir {
        Some(d) => {
            println!("cargo:rustc-link-search=native={}", d);
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", d);
            println!("cargo:lib_dir={}", d);
        }
        None => println!(
            "cargo:warning=kiln-sys: neither KILN_LIB_DIR nor pkg-config's kiln.pc names a \
             directory; libkiln.so must be on the linker's default path"
        ),
    }
    println!("cargo:rustc-link-lib=dylib=kiln");
}
