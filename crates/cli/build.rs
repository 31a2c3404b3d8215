//! Optimised Linux x86-64 builds place the functions a typical `toolhost serve` session runs
//! next to each other (`hot-symbols.txt`, written by `scripts/hot-symbols.sh`), so the few
//! hundred KiB of code a small server runs are not spread over the 16 MB `.text`, each page
//! fault mapping another 64 KiB around it. The toolchain links this target with its bundled
//! lld, which reads the file; names missing from the build are ignored.
//!
//! The same builds pack their relative relocations (`-z pack-relative-relocs`, DT_RELR): the
//! position-independent binary has some 70 000 of them (vtables, string tables), which as RELA
//! take 1.7 MB that the loader reads at every start; packed, they take a few KiB. The loader
//! of glibc 2.36 and later applies them, and older ones refuse such a binary (lld marks it as
//! needing `GLIBC_ABI_DT_RELR`), so they are only packed when the building machine's glibc is
//! 2.36 or later: a binary built there runs on a glibc at least as new.

#[path = "build/commit.rs"]
mod commit;

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// The first glibc whose loader applies DT_RELR relocations.
const GLIBC_WITH_RELR: (u32, u32) = (2, 36);

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=hot-symbols.txt");
    println!("cargo::rerun-if-changed=build/commit.rs");
    emit_build_commit();
    let optimised = env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let linux_x86_64 = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux")
        && env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "x86_64")
        && env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|target_env| target_env == "gnu");
    // A linker chosen by the user may be GNU ld, which has no such option.
    let default_linker = env::var("CARGO_ENCODED_RUSTFLAGS")
        .map(|flags| !flags.contains("linker"))
        .unwrap_or(true)
        && env::var_os("RUSTC_LINKER").is_none();
    if !(optimised && linux_x86_64 && default_linker) {
        return;
    }
    let ordering = manifest_dir().join("hot-symbols.txt");
    if ordering.is_file() {
        println!(
            "cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            ordering.display()
        );
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    if build_glibc().is_some_and(|version| version >= GLIBC_WITH_RELR) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The folder of this crate's manifest, as Cargo sets it when it runs the script. Not
/// `env!("CARGO_MANIFEST_DIR")`, the folder the script was compiled in: Cargo reuses a
/// compiled build script for a clone at another path that shares the target folder, and the
/// ordering file and git were then looked for in the first clone (gone, the order was silently
/// not applied).
fn manifest_dir() -> PathBuf {
    env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// The glibc version of the building machine (`getconf GNU_LIBC_VERSION`: `glibc 2.36`).
fn build_glibc() -> Option<(u32, u32)> {
    let output = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    let minor = minor.split('.').next()?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Sets `TOOLHOST_BUILD_COMMIT`, what `--version` prints after the version: ` (3f2a9c1
/// 2026-12-04)`, or nothing where git cannot say; rebuilt when the checked-out commit changes.
fn emit_build_commit() {
    let build_commit = commit::build_commit(&manifest_dir(), "build.rs");
    let suffix = match build_commit {
        Some(commit::BuildCommit { summary, watched }) => {
            for path in watched {
                println!("cargo::rerun-if-changed={}", path.display());
            }
            format!(" ({summary})")
        }
        None => String::new(),
    };
    println!("cargo::rustc-env=TOOLHOST_BUILD_COMMIT={suffix}");
}
