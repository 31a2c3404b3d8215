//! The skill hub (R27) against a real hub on 127.0.0.1: good tar.gz and zip archives install
//! (with or without executable bits), and every hostile archive is refused with a clear
//! message, leaving nothing on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;
use sha2::{Digest as _, Sha256};
use toolhost_catalog::skills::{SkillCatalog, SkillScope};
use toolhost_config::HubLimits;
use toolhost_skillhub::SkillHub;
use toolhost_test_support::{HomeAndWorkspace, StaticServer};

const SKILL_MD: &[u8] = b"---\nname: pdf\ndescription: Fill in PDF forms.\n---\nUse ref.md.\n";

/// One tar entry with a raw name (tar's own builder refuses `..` and absolute names).
fn tar_entry(
    tar: &mut tar::Builder<Vec<u8>>,
    name: &str,
    kind: tar::EntryType,
    data: &[u8],
    link: &str,
    mode: u32,
) {
    let mut header = tar::Header::new_gnu();
    {
        let old = header.as_old_mut();
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(mode);
    header.set_cksum();
    tar.append(&header, data).unwrap();
}

fn file(tar: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8], mode: u32) {
    tar_entry(tar, name, tar::EntryType::Regular, data, "", mode);
}

/// A tar.gz of the skill, with `extra` entries added after it.
fn tar_gz(extra: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    tar_entry(&mut tar, "pdf/", tar::EntryType::Directory, b"", "", 0o755);
    file(&mut tar, "pdf/SKILL.md", SKILL_MD, 0o644);
    file(&mut tar, "pdf/ref.md", b"reference\n", 0o644);
    file(
        &mut tar,
        "pdf/scripts/run.sh",
        b"#!/bin/sh\necho hi\n",
        0o755,
    );
    extra(&mut tar);
    let bytes = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    gz.finish().unwrap()
}

fn zip_options(mode: u32) -> zip::write::SimpleFileOptions {
    zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(mode)
}

/// A zip of the skill (at the archive's top), with `extra` entries added after it.
fn zip(extra: impl FnOnce(&mut zip::ZipWriter<std::io::Cursor<Vec<u8>>>)) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("SKILL.md", zip_options(0o644)).unwrap();
    zip.write_all(SKILL_MD).unwrap();
    zip.start_file("ref.md", zip_options(0o644)).unwrap();
    zip.write_all(b"reference\n").unwrap();
    extra(&mut zip);
    zip.finish().unwrap().into_inner()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A hub serving `archives` (id → bytes), each listed with its true hash unless `hashes`
/// overrides it, and `executable: true` for the ids in `executable`.
struct Hub {
    server: StaticServer,
    dirs: HomeAndWorkspace,
}

impl Hub {
    fn serve(archives: &[(&str, Vec<u8>)], hashes: &[(&str, &str)], executable: &[&str]) -> Self {
        let mut files = BTreeMap::new();
        let mut skills = Vec::new();
        for (id, bytes) in archives {
            let hash = hashes
                .iter()
                .find(|(hashed, _)| hashed == id)
                .map_or_else(|| sha256(bytes), |(_, hash)| (*hash).to_owned());
            skills.push(json!({
                "id": id, "name": id, "description": format!("The {id} skill."),
                "version": "1.0.0", "url": format!("archives/{id}"), "sha256": hash,
                "executable": executable.contains(id), "homepage": "extra fields are fine",
            }));
            files.insert(format!("archives/{id}"), bytes.clone());
        }
        files.insert(
            "index.json".to_owned(),
            serde_json::to_vec(&json!({ "skills": skills })).unwrap(),
        );
        Self {
            server: StaticServer::start(files),
            dirs: HomeAndWorkspace::new(),
        }
    }

    fn hub(&self, limits: HubLimits) -> SkillHub {
        SkillHub::new(
            vec![self.server.url("index.json")],
            self.dirs.home.join(".toolhost/skills"),
            limits,
        )
    }

    /// What the install folder holds (nothing, after a refused install).
    fn left_on_disk(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.dirs.home.join(".toolhost/skills")) else {
            return Vec::new();
        };
        entries
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn a_good_tar_gz_installs_and_becomes_a_user_skill() {
    let hub = Hub::serve(&[("pdf", tar_gz(|_| {}))], &[], &[]);
    let installed = hub.hub(HubLimits::default()).install("pdf").await.unwrap();
    let folder = hub.dirs.home.join(".toolhost/skills/pdf");
    assert_eq!(installed.folder, folder);
    assert_eq!(std::fs::read(folder.join("SKILL.md")).unwrap(), SKILL_MD);
    assert_eq!(
        std::fs::read_to_string(folder.join("ref.md")).unwrap(),
        "reference\n"
    );
    // The index does not say `executable`: no executable bit.
    assert_eq!(mode(&folder.join("scripts/run.sh")), 0o644);
    assert_eq!(hub.left_on_disk(), ["pdf"], "no temp folder is left");

    let catalog = SkillCatalog::for_workspace(&hub.dirs.workspace, Some(&hub.dirs.home));
    let skill = catalog.get("pdf").unwrap();
    assert_eq!(skill.scope, SkillScope::User);
    assert!(skill.from_hub);
    let listed = hub.hub(HubLimits::default()).installed();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].record.version, "1.0.0");

    let again = hub
        .hub(HubLimits::default())
        .install("pdf")
        .await
        .unwrap_err();
    assert!(again.to_string().contains("already installed"), "{again}");

    hub.hub(HubLimits::default()).remove("pdf").unwrap();
    assert_eq!(hub.left_on_disk(), Vec::<String>::new());
}

#[tokio::test]
async fn executable_bits_survive_only_when_the_index_says_so() {
    let hub = Hub::serve(&[("pdf", tar_gz(|_| {}))], &[], &["pdf"]);
    hub.hub(HubLimits::default()).install("pdf").await.unwrap();
    let folder = hub.dirs.home.join(".toolhost/skills/pdf");
    assert_eq!(mode(&folder.join("scripts/run.sh")), 0o755);
    assert_eq!(mode(&folder.join("ref.md")), 0o644);
}

#[tokio::test]
async fn a_git_archive_with_a_pax_global_header_installs() {
    let archive = tar_gz(|tar| {
        tar_entry(
            tar,
            "pax_global_header",
            tar::EntryType::XGlobalHeader,
            b"52 comment=0123456789abcdef0123456789abcdef01234567\n",
            "",
            0o666,
        );
    });
    let hub = Hub::serve(&[("pdf", archive)], &[], &[]);
    hub.hub(HubLimits::default()).install("pdf").await.unwrap();
    let folder = hub.dirs.home.join(".toolhost/skills/pdf");
    assert!(folder.join("SKILL.md").is_file());
    assert!(!folder.join("pax_global_header").exists());
}

#[tokio::test]
async fn a_good_zip_installs() {
    let hub = Hub::serve(&[("zipped", zip(|_| {}))], &[], &[]);
    hub.hub(HubLimits::default())
        .install("zipped")
        .await
        .unwrap();
    let folder = hub.dirs.home.join(".toolhost/skills/zipped");
    assert_eq!(std::fs::read(folder.join("SKILL.md")).unwrap(), SKILL_MD);
    assert!(folder.join(".toolhost-hub.json").is_file());
}

#[tokio::test]
async fn search_matches_every_word_and_lists_installed_ones() {
    let hub = Hub::serve(
        &[("pdf", tar_gz(|_| {})), ("zipped", zip(|_| {}))],
        &[],
        &[],
    );
    let found = hub
        .hub(HubLimits::default())
        .search("PDF skill")
        .await
        .unwrap();
    let ids: Vec<&str> = found.iter().map(|l| l.skill.id.as_str()).collect();
    assert_eq!(ids, ["pdf"]);
    let all = hub.hub(HubLimits::default()).search("").await.unwrap();
    assert_eq!(all.len(), 2);
    let unknown = hub
        .hub(HubLimits::default())
        .install("nope")
        .await
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "no configured hub lists the skill 'nope'; the hubs list: pdf, zipped"
    );
}

/// Each hostile archive, what its refusal must say, and the limits it is installed under.
fn hostile_cases() -> Vec<(&'static str, Vec<u8>, &'static str, HubLimits)> {
    let limits = HubLimits::default();
    let zeros = vec![0u8; 8 * 1024 * 1024];
    vec![
        (
            "tar-slip",
            tar_gz(|tar| file(tar, "pdf/../../escaped.txt", b"x", 0o644)),
            "refused entry 'pdf/../../escaped.txt': the path holds '..'",
            limits,
        ),
        (
            "zip-slip",
            zip(|zip| {
                zip.start_file("../escaped.txt", zip_options(0o644))
                    .unwrap();
                zip.write_all(b"x").unwrap();
            }),
            "refused entry '../escaped.txt': the path holds '..'",
            limits,
        ),
        (
            "tar-absolute",
            tar_gz(|tar| file(tar, "/tmp/toolhost-absolute.txt", b"x", 0o644)),
            "refused entry '/tmp/toolhost-absolute.txt': the path is absolute",
            limits,
        ),
        (
            "tar-symlink",
            tar_gz(|tar| tar_entry(tar, "pdf/etc", tar::EntryType::Symlink, b"", "/etc", 0o777)),
            "refused entry 'pdf/etc': it is a symlink",
            limits,
        ),
        (
            "zip-symlink",
            zip(|zip| {
                zip.add_symlink("etc", "../../etc", zip_options(0o777))
                    .unwrap()
            }),
            "refused entry 'etc': it is a symlink",
            limits,
        ),
        (
            "tar-hardlink",
            tar_gz(|tar| {
                tar_entry(
                    tar,
                    "pdf/passwd",
                    tar::EntryType::Link,
                    b"",
                    "/etc/passwd",
                    0o644,
                );
            }),
            "refused entry 'pdf/passwd': it is a hard link",
            limits,
        ),
        (
            "tar-device",
            tar_gz(|tar| tar_entry(tar, "pdf/null", tar::EntryType::Char, b"", "", 0o666)),
            "refused entry 'pdf/null': it is a character device",
            limits,
        ),
        (
            "tar-fifo",
            tar_gz(|tar| tar_entry(tar, "pdf/pipe", tar::EntryType::Fifo, b"", "", 0o644)),
            "refused entry 'pdf/pipe': it is a FIFO",
            limits,
        ),
        (
            "zip-bomb",
            zip(|zip| {
                zip.start_file("zeros.bin", zip_options(0o644)).unwrap();
                zip.write_all(&zeros).unwrap();
            }),
            "unpacks to more than 1048576 bytes (stopped at 'zeros.bin'",
            HubLimits {
                max_unpacked_bytes: 1024 * 1024,
                ..limits
            },
        ),
        (
            "tar-bomb",
            tar_gz(|tar| file(tar, "pdf/zeros.bin", &zeros, 0o644)),
            "unpacks to more than 1048576 bytes (stopped at 'pdf/zeros.bin'",
            HubLimits {
                max_unpacked_bytes: 1024 * 1024,
                ..limits
            },
        ),
        (
            "tar-many",
            tar_gz(|tar| {
                for index in 0..20 {
                    file(tar, &format!("pdf/f{index}.md"), b"x", 0o644);
                }
            }),
            "the archive holds more than 10 entries",
            HubLimits {
                max_entries: 10,
                ..limits
            },
        ),
        (
            "zip-many",
            zip(|zip| {
                for index in 0..20 {
                    zip.start_file(format!("f{index}.md"), zip_options(0o644))
                        .unwrap();
                }
            }),
            "the archive holds more than 10 entries",
            HubLimits {
                max_entries: 10,
                ..limits
            },
        ),
        (
            "tar-duplicate",
            tar_gz(|tar| file(tar, "pdf/SKILL.md", b"---\nname: evil\n---\n", 0o644)),
            "refused entry 'pdf/SKILL.md': the archive holds that path twice",
            limits,
        ),
        (
            "not-a-skill",
            {
                let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
                zip.start_file("sub/README.md", zip_options(0o644)).unwrap();
                zip.finish().unwrap().into_inner()
            },
            "is not a skill",
            limits,
        ),
        (
            "too-big-download",
            tar_gz(|_| {}),
            "larger than 100 bytes",
            HubLimits {
                max_archive_bytes: 100,
                ..limits
            },
        ),
        (
            "not-an-archive",
            b"just some text".to_vec(),
            "neither a tar.gz nor a zip",
            limits,
        ),
    ]
}

#[tokio::test]
async fn every_hostile_archive_is_refused_and_leaves_nothing_on_disk() {
    let cases = hostile_cases();
    let archives: Vec<(&str, Vec<u8>)> = cases
        .iter()
        .map(|(id, bytes, _, _)| (*id, bytes.clone()))
        .collect();
    let hub = Hub::serve(&archives, &[], &[]);
    let mut failures = Vec::new();
    for (id, _, expected, limits) in &cases {
        match hub.hub(*limits).install(id).await {
            Ok(installed) => failures.push(format!("{id}: installed at {:?}", installed.folder)),
            Err(error) if !error.to_string().contains(expected) => {
                failures.push(format!(
                    "{id}: refused with '{error}', expected '{expected}'"
                ));
            }
            Err(_) => {}
        }
        let left = hub.left_on_disk();
        if !left.is_empty() {
            failures.push(format!("{id}: left {left:?} on disk"));
        }
    }
    assert!(!hub.dirs.root().join("escaped.txt").exists());
    assert!(!Path::new("/tmp/toolhost-absolute.txt").exists());
    assert_eq!(failures, Vec::<String>::new());
}

#[tokio::test]
async fn a_wrong_hash_is_refused_and_leaves_nothing_on_disk() {
    let wrong = "0".repeat(64);
    let hub = Hub::serve(&[("pdf", tar_gz(|_| {}))], &[("pdf", &wrong)], &[]);
    let error = hub
        .hub(HubLimits::default())
        .install("pdf")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("has SHA-256"), "{error}");
    assert!(
        error.contains(&format!("but the index says {wrong}: refusing it")),
        "{error}"
    );
    assert_eq!(hub.left_on_disk(), Vec::<String>::new());
}

#[tokio::test]
async fn no_hub_configured_says_how_to_configure_one() {
    let dirs = HomeAndWorkspace::new();
    let hub = SkillHub::new(
        Vec::new(),
        dirs.home.join(".toolhost/skills"),
        HubLimits::default(),
    );
    let error = hub.search("x").await.unwrap_err().to_string();
    assert!(error.contains("[skills] hubs = "), "{error}");
}
