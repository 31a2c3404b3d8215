//! The skill hub (R27): JSON indexes of skills on HTTP(S), configured as
//! `[skills] hubs = ["https://…/index.json"]`, of the form
//!
//! ```json
//! {"skills": [{"id": "pdf", "name": "pdf", "description": "Fill in PDF forms.",
//!              "version": "1.2.0", "url": "pdf-1.2.0.tar.gz", "sha256": "…"}]}
//! ```
//!
//! (`url` may be relative to the index; other fields are allowed, and `"executable": true`
//! lets the archive's executable bits through.)
//!
//! Installing downloads the archive (at most [`HubLimits::max_archive_bytes`]), checks its
//! SHA-256, unpacks it with [`unpack`]'s checks into a hidden temp folder inside the install
//! folder, checks that it is a skill (a `SKILL.md` whose front matter loads), records where it
//! came from in [`INSTALL_RECORD`], and renames it into `~/.toolhost/skills/<id>/` in one
//! step, refusing to replace anything there. A failed install leaves nothing behind: the temp
//! folder is removed whatever went wrong.

mod download;
mod install;
mod skillhub_install;
mod skillhub_search;
pub mod unpack;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
pub use toolhost_catalog::skills::INSTALL_RECORD;
use toolhost_config::HubLimits;

pub use skillhub_install::SkillhubInstall;
pub use skillhub_search::SkillhubSearch;
pub use unpack::{UnpackError, UnpackLimits};

/// The largest hub index read, in bytes.
pub const MAX_HUB_INDEX_BYTES: u64 = 4 * 1024 * 1024;
/// How long one request to a hub may take.
pub const HUB_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// One skill of a hub's index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HubSkill {
    /// The id `skillhub_install` takes; also the installed folder's name.
    pub id: String,
    /// The skill's name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// The archive (tar.gz or zip), absolute or relative to the index.
    pub url: String,
    /// The archive's SHA-256, hex.
    pub sha256: String,
    /// Whether files the archive marks executable keep their executable bit.
    #[serde(default)]
    pub executable: bool,
}

#[derive(Debug, Deserialize)]
struct HubIndex {
    skills: Vec<HubSkill>,
}

/// A skill of some hub's index, with the index it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HubListing {
    /// The index's URL.
    pub hub: String,
    /// The entry.
    #[serde(flatten)]
    pub skill: HubSkill,
}

/// What [`INSTALL_RECORD`] holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// The id.
    pub id: String,
    /// The name.
    pub name: String,
    /// The version.
    pub version: String,
    /// The index it came from.
    pub hub: String,
    /// The archive's URL.
    pub url: String,
    /// The archive's SHA-256.
    pub sha256: String,
}

/// A skill installed from a hub.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstalledSkill {
    /// Where it came from.
    #[serde(flatten)]
    pub record: InstallRecord,
    /// Its folder.
    pub folder: PathBuf,
}

/// Why a hub operation failed; each says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// `[skills] hubs` is empty.
    #[error(
        "no skill hub is configured: add one to .toolhost/config.toml, e.g. [skills] hubs = \
         [\"https://example.org/skills/index.json\"]"
    )]
    NoHubs,
    /// An index or archive could not be fetched.
    #[error("cannot fetch {url}: {message}")]
    Fetch {
        /// What was fetched.
        url: String,
        /// Why it failed.
        message: String,
    },
    /// An index is not of the expected form.
    #[error("the hub index {url} is not valid: {message}")]
    BadIndex {
        /// The index.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// No hub lists the id.
    #[error("no configured hub lists the skill '{id}'{}", if known.is_empty() { String::new() } else { format!("; the hubs list: {}", known.join(", ")) })]
    UnknownSkill {
        /// The id asked for.
        id: String,
        /// The ids the hubs list.
        known: Vec<String>,
    },
    /// The id cannot be a folder name.
    #[error(
        "the skill id '{0}' cannot be installed: an id must be letters, digits, '-', '_' or '.', and not start with '.'"
    )]
    BadId(String),
    /// The skill is installed already.
    #[error("a skill is already installed at {}: remove it first (toolhost skills remove {id})", folder.display())]
    AlreadyInstalled {
        /// The id.
        id: String,
        /// Its folder.
        folder: PathBuf,
    },
    /// The archive's hash is not the index's.
    #[error(
        "the archive of '{id}' has SHA-256 {actual}, but the index says {expected}: refusing it (the archive or the index changed, or the download was tampered with)"
    )]
    HashMismatch {
        /// The id.
        id: String,
        /// The index's hash.
        expected: String,
        /// The downloaded archive's.
        actual: String,
    },
    /// The archive was refused while unpacking.
    #[error("the archive of '{id}' is refused: {source}")]
    Unpack {
        /// The id.
        id: String,
        /// Why.
        source: UnpackError,
    },
    /// The archive holds no usable `SKILL.md`.
    #[error("the archive of '{id}' is not a skill: {message}")]
    NotASkill {
        /// The id.
        id: String,
        /// What is missing or wrong.
        message: String,
    },
    /// `remove` names no skill installed from a hub.
    #[error("no skill '{id}' was installed from a hub in {}", folder.display())]
    NotInstalled {
        /// The id.
        id: String,
        /// Where it was looked for.
        folder: PathBuf,
    },
    /// A local file operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// The configured hubs and the folder skills install into.
#[derive(Debug, Clone)]
pub struct SkillHub {
    hubs: Vec<String>,
    install_folder: PathBuf,
    limits: HubLimits,
}

impl SkillHub {
    /// Hubs at `hubs` (index URLs), installing into `install_folder` (normally
    /// [`default_install_folder`]).
    pub fn new(hubs: Vec<String>, install_folder: PathBuf, limits: HubLimits) -> Self {
        Self {
            hubs,
            install_folder,
            limits,
        }
    }

    /// The hubs of `[skills]`, installing into [`default_install_folder`] of `home` (without a
    /// home, `.toolhost/skills` of the current folder).
    pub fn for_config(config: &toolhost_config::SkillsConfig, home: Option<&Path>) -> Self {
        let install_folder =
            home.map_or_else(|| PathBuf::from(".toolhost/skills"), default_install_folder);
        Self::new(config.hubs.clone(), install_folder, config.hub_limits())
    }

    /// Where skills install.
    pub fn install_folder(&self) -> &Path {
        &self.install_folder
    }

    /// Every hub's skills, in hub order; fails on the first hub that cannot be read.
    pub async fn listings(&self) -> Result<Vec<HubListing>, HubError> {
        if self.hubs.is_empty() {
            return Err(HubError::NoHubs);
        }
        let mut listings = Vec::new();
        for hub in &self.hubs {
            let bytes = download::fetch(hub, MAX_HUB_INDEX_BYTES).await?;
            let index: HubIndex =
                serde_json::from_slice(&bytes).map_err(|error| HubError::BadIndex {
                    url: hub.clone(),
                    message: format!(
                        "{error} (expected {{\"skills\": [{{\"id\", \"name\", \"description\", \
                         \"version\", \"url\", \"sha256\"}}]}})"
                    ),
                })?;
            listings.extend(index.skills.into_iter().map(|skill| HubListing {
                hub: hub.clone(),
                skill,
            }));
        }
        Ok(listings)
    }

    /// The skills whose id, name or description holds every word of `query` (any case);
    /// those whose id or name matches come first. An empty query lists all.
    pub async fn search(&self, query: &str) -> Result<Vec<HubListing>, HubError> {
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut found: Vec<(bool, HubListing)> = self
            .listings()
            .await?
            .into_iter()
            .filter_map(|listing| {
                let title = format!("{} {}", listing.skill.id, listing.skill.name).to_lowercase();
                let description = listing.skill.description.to_lowercase();
                let all = words
                    .iter()
                    .all(|word| title.contains(word) || description.contains(word));
                let in_title = words.iter().all(|word| title.contains(word));
                all.then_some((in_title, listing))
            })
            .collect();
        found.sort_by_key(|(in_title, _)| !*in_title);
        Ok(found.into_iter().map(|(_, listing)| listing).collect())
    }

    /// Downloads, checks and installs the skill `id` (see the module's documentation).
    pub async fn install(&self, id: &str) -> Result<InstalledSkill, HubError> {
        check_id(id)?;
        let folder = self.install_folder.join(id);
        if folder.symlink_metadata().is_ok() {
            return Err(HubError::AlreadyInstalled {
                id: id.to_owned(),
                folder,
            });
        }
        let listings = self.listings().await?;
        let Some(listing) = listings.iter().find(|listing| listing.skill.id == id) else {
            return Err(HubError::UnknownSkill {
                id: id.to_owned(),
                known: listings.iter().map(|l| l.skill.id.clone()).collect(),
            });
        };
        let url = download::resolve(&listing.hub, &listing.skill.url)?;
        let archive = download::fetch(&url, self.limits.max_archive_bytes).await?;
        let actual = download::sha256_hex(&archive);
        let expected = listing.skill.sha256.trim().to_ascii_lowercase();
        if actual != expected {
            return Err(HubError::HashMismatch {
                id: id.to_owned(),
                expected,
                actual,
            });
        }
        let record = InstallRecord {
            id: id.to_owned(),
            name: listing.skill.name.clone(),
            version: listing.skill.version.clone(),
            hub: listing.hub.clone(),
            url,
            sha256: actual,
        };
        let limits = UnpackLimits {
            max_entries: self.limits.max_entries,
            max_bytes: self.limits.max_unpacked_bytes,
            allow_executable: listing.skill.executable,
        };
        let install_folder = self.install_folder.clone();
        tokio::task::spawn_blocking(move || {
            install::install_archive(&archive, &install_folder, record, limits)
        })
        .await
        .map_err(|error| HubError::Io {
            action: "install into",
            path: self.install_folder.clone(),
            source: std::io::Error::other(error.to_string()),
        })?
    }

    /// The skills installed from a hub (folders holding [`INSTALL_RECORD`]), by id.
    pub fn installed(&self) -> Vec<InstalledSkill> {
        let Ok(entries) = std::fs::read_dir(&self.install_folder) else {
            return Vec::new();
        };
        let mut installed: Vec<InstalledSkill> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let folder = entry.path();
                let text = std::fs::read(folder.join(INSTALL_RECORD)).ok()?;
                let record = serde_json::from_slice(&text).ok()?;
                Some(InstalledSkill { record, folder })
            })
            .collect();
        installed.sort_by(|a, b| a.record.id.cmp(&b.record.id));
        installed
    }

    /// Removes the skill `id` installed from a hub. A folder without [`INSTALL_RECORD`] (a
    /// skill the user wrote) is never removed.
    pub fn remove(&self, id: &str) -> Result<PathBuf, HubError> {
        check_id(id)?;
        let folder = self.install_folder.join(id);
        let is_installed = folder
            .symlink_metadata()
            .is_ok_and(|metadata| metadata.is_dir())
            && folder.join(INSTALL_RECORD).is_file();
        if !is_installed {
            return Err(HubError::NotInstalled {
                id: id.to_owned(),
                folder: self.install_folder.clone(),
            });
        }
        // Renamed aside first, so the skill disappears in one step even if removing its files
        // is interrupted.
        let trash = self.install_folder.join(format!(".remove-{id}"));
        let io = |action, path: &Path| {
            let path = path.to_owned();
            move |source| HubError::Io {
                action,
                path,
                source,
            }
        };
        // What an interrupted remove left aside is removed first.
        let _ = std::fs::remove_dir_all(&trash);
        std::fs::rename(&folder, &trash).map_err(io("move aside", &folder))?;
        std::fs::remove_dir_all(&trash).map_err(io("remove", &trash))?;
        Ok(folder)
    }
}

/// `~/.toolhost/skills`: installed skills are user skills, found like any other.
pub fn default_install_folder(home: &Path) -> PathBuf {
    home.join(".toolhost").join("skills")
}

fn check_id(id: &str) -> Result<(), HubError> {
    let fine = !id.is_empty()
        && !id.starts_with('.')
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(HubError::BadId(id.to_owned()))
    }
}
