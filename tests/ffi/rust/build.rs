// Links libkiln.so from the directory in KILN_LIB_DIR (with an rpath to it).
use std::env;

fn main() {
    println!("cargo:rerun-if-env-changed=KILN_LIB_DIR");
    match env::var("KILN_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => {
            println!("cargo:rustc-link-search=native={}", dir);
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        }
        _ => println!(
            "cargo:warning=KILN_LIB_DIR is not set; libkiln.so must be on the default library path"
        ),
    }
    println!("cargo:rustc-link-lib=dylib=kiln");
}
