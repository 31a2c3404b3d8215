//! Links the optimised `toolhost` binary as a position-dependent executable.
//!
//! A position-independent executable carries ~1 MB of relative relocations (`.rela.dyn`) that
//! the dynamic loader reads and applies at every start, writing to every page of
//! `.data.rel.ro`: both end up resident, ~1.5 MiB of a server that should stay under 10 MiB,
//! and the work costs start-up time. Linked without `-pie`, those addresses are fixed at link
//! time. Debug builds keep the toolchain's default.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let optimised = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if optimised && linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
