//! Putting a downloaded archive in place: unpacked into a hidden temp folder beside the
//! skills, checked to be a skill, recorded, then renamed into place in one step.

use std::path::{Path, PathBuf};

use super::unpack::{self, UnpackLimits};
use super::{HubError, INSTALL_RECORD, InstallRecord, InstalledSkill};
use toolhost_catalog::skills::{SKILL_FILE, SkillScope, load_skill};

/// Unpacks into a temp folder inside `install_folder`, checks it is a skill, writes the
/// record and renames it into place; the temp folder goes away whatever happens.
pub(super) fn install_archive(
    archive: &[u8],
    install_folder: &Path,
    record: InstallRecord,
    limits: UnpackLimits,
) -> Result<InstalledSkill, HubError> {
    let id = record.id.clone();
    let io = |action: &'static str, path: &Path| {
        let path = path.to_owned();
        move |source| HubError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(install_folder).map_err(io("create", install_folder))?;
    let temp = tempfile::Builder::new()
        .prefix(&format!(".install-{id}-"))
        .tempdir_in(install_folder)
        .map_err(io("create a temp folder in", install_folder))?;
    let unpacked = temp.path().join("unpacked");
    std::fs::create_dir(&unpacked).map_err(io("create", &unpacked))?;
    unpack::unpack(archive, &unpacked, limits).map_err(|source| HubError::Unpack {
        id: id.clone(),
        source,
    })?;
    let root = skill_root(&unpacked).ok_or_else(|| HubError::NotASkill {
        id: id.clone(),
        message: format!("it holds no {SKILL_FILE} at its top (or in its one top folder)"),
    })?;
    load_skill(&root, SkillScope::User).map_err(|warning| HubError::NotASkill {
        id: id.clone(),
        message: warning.to_string(),
    })?;
    let record_path = root.join(INSTALL_RECORD);
    let text = serde_json::to_vec_pretty(&record).map_err(|error| HubError::Io {
        action: "write",
        path: record_path.clone(),
        source: std::io::Error::other(error),
    })?;
    std::fs::write(&record_path, text).map_err(io("write", &record_path))?;
    let folder = install_folder.join(&id);
    // NOREPLACE: a skill that appeared there meanwhile is never overwritten.
    rustix::fs::renameat_with(
        rustix::fs::CWD,
        &root,
        rustix::fs::CWD,
        &folder,
        rustix::fs::RenameFlags::NOREPLACE,
    )
    .map_err(|errno| {
        if errno == rustix::io::Errno::EXIST {
            HubError::AlreadyInstalled {
                id: id.clone(),
                folder: folder.clone(),
            }
        } else {
            HubError::Io {
                action: "move into place",
                path: folder.clone(),
                source: errno.into(),
            }
        }
    })?;
    drop(temp);
    Ok(InstalledSkill { record, folder })
}

/// The folder holding `SKILL.md`: the archive's top, or its only top-level folder (archives
/// are often made of `name/…`).
fn skill_root(unpacked: &Path) -> Option<PathBuf> {
    if unpacked.join(SKILL_FILE).is_file() {
        return Some(unpacked.to_owned());
    }
    let mut entries = std::fs::read_dir(unpacked).ok()?.filter_map(Result::ok);
    let only = entries.next()?;
    if entries.next().is_some() || !only.file_type().ok()?.is_dir() {
        return None;
    }
    only.path().join(SKILL_FILE).is_file().then(|| only.path())
}
