// The rpath to libkiln.so for this crate's own tests and examples: kiln-sys
// found the directory (KILN_LIB_DIR or pkg-config) and passes it on as
// DEP_KILN_LIB_DIR. Programs depending on this crate add their own rpath,
// or find the library through LD_LIBRARY_PATH or the system's loader path.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_KILN_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_KILN_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
}
