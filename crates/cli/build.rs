//! Optimised Linux x86-64 builds place the functions a typical `toolhost serve` session runs
//! next to each other (`hot-symbols.txt`, written by `scripts/hot-symbols.sh`), so the few
//! hundred KiB of code a small server runs are not spread over the 16 MB `.text`, each page
//! fault mapping another 64 KiB around it. The toolchain links this target with its bundled
//! lld, which reads the file; names missing from the build are ignored.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=hot-symbols.txt");
    let optimised = env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let linux_x86_64 = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux")
        && env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "x86_64")
        && env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|target_env| target_env == "gnu");
    // A linker chosen by the user may be GNU ld, which has no such option.
    let default_linker = env::var("CARGO_ENCODED_RUSTFLAGS")
        .map(|flags| !flags.contains("linker"))
        .unwrap_or(true)
        && env::var_os("RUSTC_LINKER").is_none();
    let ordering = Path::new(env!("CARGO_MANIFEST_DIR")).join("hot-symbols.txt");
    if optimised && linux_x86_64 && default_linker && ordering.is_file() {
        println!(
            "cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            ordering.display()
        );
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
