//! Skills (R27): folders holding a `SKILL.md` — YAML front matter (`name`, `description`,
//! optional `allowed-tools`, `license`, `metadata`) and a body of instructions — and any other
//! files the instructions refer to. The same folders Claude Code and Codex read work here
//! unchanged.
//!
//! Disclosure is progressive: the system prompt carries only each skill's name and
//! description; `read_skill` gives the body and the list of the other files, which the model
//! reads with Read. A skill folder outside the workspace becomes a read-only root of the
//! workspace ([`SkillCatalog::read_only_roots`]), so Read reaches it and Write never does.
//!
//! Where skills are found, first wins when two share a name (the project's over the user's):
//! see [`skill_locations`]. Skills installed from a hub live in `~/.toolhost/skills/<id>/`
//! (`toolhost_skillhub`), so they are user skills like any other. The tools that
//! read skills for the model (`list_skills`, `read_skill`) are the agent's.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toolhost_config::Config;

use crate::front_matter::{self, FrontMatterError, StringOrList};

/// The file an installed skill's folder holds: which hub, id, version and hash it came from.
pub const INSTALL_RECORD: &str = ".toolhost-hub.json";

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// The most files `read_skill` lists for one skill; a larger folder is listed in part, with a
/// note.
pub const MAX_LISTED_SKILL_FILES: usize = 200;

/// How deep `read_skill` looks for a skill's other files.
const MAX_SKILL_FILE_DEPTH: usize = 8;

/// Whose a skill is: decides which of two skills with one name wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillScope {
    /// Under the workspace (`.toolhost/skills/`, `.claude/skills/`, `.agents/skills/`).
    Project,
    /// Under the home folder (`~/.toolhost/skills/`, `~/.claude/skills/`).
    User,
}

/// One folder skills are looked for in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillLocation {
    /// The folder holding one sub-folder per skill.
    pub folder: PathBuf,
    /// Whose skills these are.
    pub scope: SkillScope,
}

/// Where skills are looked for, in precedence order: the project's `.toolhost/skills/`,
/// `.claude/skills/`, `.agents/skills/`, then the user's `~/.toolhost/skills/` (which also
/// holds the skills installed from a hub) and `~/.claude/skills/`.
pub fn skill_locations(workspace: &Path, home: Option<&Path>) -> Vec<SkillLocation> {
    let mut locations: Vec<SkillLocation> = [".toolhost", ".claude", ".agents"]
        .iter()
        .map(|dot| SkillLocation {
            folder: workspace.join(dot).join("skills"),
            scope: SkillScope::Project,
        })
        .collect();
    if let Some(home) = home {
        locations.extend([".toolhost", ".claude"].iter().map(|dot| SkillLocation {
            folder: home.join(dot).join("skills"),
            scope: SkillScope::User,
        }));
    }
    locations
}

/// What `SKILL.md`'s front matter may say; other keys are ignored.
#[derive(Debug, Default, Deserialize)]
struct SkillFields {
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<StringOrList>,
    license: Option<String>,
    metadata: Option<serde_json::Value>,
}

/// A skill found on disk.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skill {
    /// Its name (`name:`, or the folder's name when the front matter gives none).
    pub name: String,
    /// What it is for and when to use it: all the model sees before reading it.
    pub description: String,
    /// `allowed-tools`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// `license`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// `metadata`, as JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// The skill's folder, canonical.
    pub folder: PathBuf,
    /// Whose it is.
    pub scope: SkillScope,
    /// Whether it was installed from a hub (its folder holds [`hub::INSTALL_RECORD`]).
    pub from_hub: bool,
}

impl Skill {
    /// `SKILL.md` in the skill's folder.
    pub fn skill_file(&self) -> PathBuf {
        self.folder.join(SKILL_FILE)
    }

    /// The body of `SKILL.md`, read again (it may have changed since discovery).
    pub fn body(&self) -> Result<String, SkillWarning> {
        let path = self.skill_file();
        let text = std::fs::read_to_string(&path).map_err(|error| SkillWarning::Unreadable {
            path: path.clone(),
            message: error.to_string(),
        })?;
        let document =
            front_matter::parse_with_literal_keys::<SkillFields>(&path, &text, &["description"])?;
        Ok(document.body)
    }

    /// The skill's other files, relative to its folder, sorted; at most
    /// [`MAX_LISTED_SKILL_FILES`] (the flag says whether some were left out). Hidden files
    /// and folders are left out, and symlinks are not followed.
    pub fn other_files(&self) -> (Vec<PathBuf>, bool) {
        let mut files = Vec::new();
        let mut more = false;
        collect_files(&self.folder, Path::new(""), 0, &mut files, &mut more);
        files.retain(|file| file != Path::new(SKILL_FILE));
        files.sort();
        (files, more)
    }
}

fn collect_files(
    folder: &Path,
    relative: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    more: &mut bool,
) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth < MAX_SKILL_FILE_DEPTH {
            collect_files(&entry.path(), &relative.join(&name), depth + 1, files, more);
        } else if kind.is_file() || kind.is_symlink() {
            if files.len() > MAX_LISTED_SKILL_FILES {
                *more = true;
                return;
            }
            files.push(relative.join(&name));
        }
    }
}

/// A skill that was skipped or shadowed; logged as a warning, never fatal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillWarning {
    /// `SKILL.md`'s front matter does not parse, or lacks what a skill needs.
    #[error("skill skipped: {0}")]
    FrontMatter(#[from] FrontMatterError),
    /// `SKILL.md` or its folder cannot be read.
    #[error("skill skipped: cannot read {}: {message}", path.display())]
    Unreadable {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// Two skills share a name: the first found wins.
    #[error(
        "skill '{name}' in {} is shadowed by the one in {} (project skills win over user \
         skills; rename one to keep both)",
        shadowed.display(),
        kept.display()
    )]
    Shadowed {
        /// The name.
        name: String,
        /// The folder that is used.
        kept: PathBuf,
        /// The folder that is not.
        shadowed: PathBuf,
    },
}

/// Every skill found, de-duplicated by name, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct SkillCatalog {
    skills: Vec<Skill>,
    warnings: Vec<SkillWarning>,
}

impl SkillCatalog {
    /// Looks in every one of `locations`, in order (see [`skill_locations`]).
    pub fn discover(locations: &[SkillLocation]) -> Self {
        let mut catalog = Self::default();
        for location in locations {
            let Ok(entries) = std::fs::read_dir(&location.folder) else {
                continue;
            };
            let mut folders: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                // Hidden folders hold installs in progress (`.install-…`), never a skill.
                .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
                .map(|entry| entry.path())
                .filter(|path| path.join(SKILL_FILE).is_file())
                .collect();
            folders.sort();
            for folder in folders {
                match load_skill(&folder, location.scope) {
                    Ok(skill) => catalog.add(skill),
                    Err(warning) => catalog.warnings.push(warning),
                }
            }
        }
        catalog
    }

    /// The skills of `workspace` and `home` (see [`skill_locations`]).
    pub fn for_workspace(workspace: &Path, home: Option<&Path>) -> Self {
        Self::discover(&skill_locations(workspace, home))
    }

    /// The skills of `workspace` and `home`, then those of every plugin `config` loaded
    /// (`PLUGIN:skill`).
    pub fn for_config(workspace: &Path, home: Option<&Path>, config: &Config) -> Self {
        let mut catalog = Self::for_workspace(workspace, home);
        for plugin in &config.plugins.loaded {
            catalog.add_plugin(&plugin.name, &plugin.skill_folders);
        }
        catalog
    }

    /// The skills in a plugin's `folders` (each holding skill folders), named
    /// `PLUGIN:skill`.
    pub fn add_plugin(&mut self, plugin: &str, folders: &[PathBuf]) {
        for folder in folders {
            let Ok(entries) = std::fs::read_dir(folder) else {
                continue;
            };
            let mut skills: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.join(SKILL_FILE).is_file())
                .collect();
            skills.sort();
            for skill in skills {
                match load_skill(&skill, SkillScope::User) {
                    Ok(mut skill) => {
                        skill.name = format!("{plugin}:{}", skill.name);
                        self.add(skill);
                    }
                    Err(warning) => self.warnings.push(warning),
                }
            }
        }
    }

    fn add(&mut self, skill: Skill) {
        if let Some(kept) = self.skills.iter().find(|kept| kept.name == skill.name) {
            self.warnings.push(SkillWarning::Shadowed {
                name: skill.name,
                kept: kept.folder.clone(),
                shadowed: skill.folder,
            });
            return;
        }
        self.skills.push(skill);
    }

    /// The skills, in precedence order.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// What was skipped or shadowed.
    pub fn warnings(&self) -> &[SkillWarning] {
        &self.warnings
    }

    /// The skill folders outside `workspace`: each must be a read-only root of the workspace
    /// so that Read reaches the skill's files (and Write does not).
    pub fn read_only_roots(&self, workspace: &Path) -> Vec<PathBuf> {
        let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.into());
        self.skills
            .iter()
            .map(|skill| skill.folder.clone())
            .filter(|folder| !folder.starts_with(&workspace))
            .collect()
    }

    /// The skills' names and descriptions, for the system prompt.
    pub fn summaries(&self) -> Vec<SkillSummary> {
        self.skills
            .iter()
            .map(|skill| SkillSummary {
                name: skill.name.clone(),
                description: skill.description.clone(),
            })
            .collect()
    }
}

/// What the system prompt says of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    /// The name `read_skill` takes.
    pub name: String,
    /// When to use it.
    pub description: String,
}

/// The first paragraph of a Markdown body (headings left out), on one line.
fn first_paragraph(body: &str) -> Option<String> {
    let paragraph: Vec<&str> = body
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty() || line.starts_with('#'))
        .take_while(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    (!paragraph.is_empty()).then(|| paragraph.join(" "))
}

/// The skill in `folder` (which holds `SKILL.md`).
pub fn load_skill(folder: &Path, scope: SkillScope) -> Result<Skill, SkillWarning> {
    let unreadable = |path: &Path, error: std::io::Error| SkillWarning::Unreadable {
        path: path.to_owned(),
        message: error.to_string(),
    };
    let folder = std::fs::canonicalize(folder).map_err(|error| unreadable(folder, error))?;
    let path = folder.join(SKILL_FILE);
    let text = std::fs::read_to_string(&path).map_err(|error| unreadable(&path, error))?;
    let document =
        front_matter::parse_with_literal_keys::<SkillFields>(&path, &text, &["description"])?;
    let fields = document.fields;
    let missing = |key: &str| FrontMatterError {
        path: path.clone(),
        line: 1,
        message: format!(
            "the front matter has no `{key}`: a skill needs `name` and `description` (what \
             it does and when to use it)"
        ),
    };
    // As Claude Code does, a skill without a description is described by the first paragraph
    // of its body.
    let description = fields
        .description
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .or_else(|| first_paragraph(&document.body))
        .ok_or_else(|| missing("description"))?;
    let name = match fields.name.map(|name| name.trim().to_owned()) {
        Some(name) if !name.is_empty() => name,
        Some(_) => return Err(missing("name").into()),
        None => folder
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .ok_or_else(|| missing("name"))?,
    };
    if name.chars().any(|c| c.is_control() || c == '/') {
        return Err(FrontMatterError {
            path,
            line: 2,
            message: format!("the name {name:?} holds a '/' or a control character"),
        }
        .into());
    }
    Ok(Skill {
        name,
        description,
        allowed_tools: fields.allowed_tools.as_ref().map(StringOrList::entries),
        license: fields.license,
        metadata: fields.metadata,
        from_hub: folder.join(INSTALL_RECORD).is_file(),
        folder,
        scope,
    })
}
