//! What permission rules see of the paths a call touches.

use std::path::{Component, Path, PathBuf};

use toolhost_core::SubjectPath;

use super::{Access, Workspace};

impl Workspace {
    /// The paths permission rules judge a call on `path` by: the path as the call spelled it
    /// (made absolute, `~` expanded, `.` and `..` folded without looking at the disk) and,
    /// when a symlink makes it lead elsewhere, the path it resolves to — so that neither a
    /// `..` spelling, an absolute spelling nor a symlink gets around a rule on the real file.
    /// A path that does not resolve (outside the workspace, a loop) is reported as spelled;
    /// the tool refuses it anyway.
    pub fn permission_paths(&self, path: &str, access: Access) -> Vec<SubjectPath> {
        let Ok(spelled) = self.absolute(path) else {
            return Vec::new();
        };
        let spelled = fold_dots(&spelled);
        let mut paths = vec![self.subject_path(&spelled)];
        if let Ok(resolved) = self.resolve(path, access)
            && resolved.as_path() != spelled
        {
            paths.push(self.subject_path(resolved.as_path()));
        }
        paths
    }

    /// `path` (absolute, physical or folded) as rules see it: absolute, and relative to the
    /// workspace root when inside it. Walks and listings report what they find with it.
    pub fn subject_path(&self, path: &Path) -> SubjectPath {
        let absolute = path.display().to_string();
        let relative = path.strip_prefix(&self.root).ok().map(|relative| {
            if relative.as_os_str().is_empty() {
                ".".to_owned()
            } else {
                relative.display().to_string()
            }
        });
        SubjectPath { absolute, relative }
    }
}

/// `a/./b/../c` → `a/c`, on the text alone (symlinks are the resolved form's business).
fn fold_dots(path: &Path) -> PathBuf {
    let mut folded = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                folded.pop();
            }
            Component::Normal(name) => folded.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    folded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_fold_without_leaving_the_root() {
        assert_eq!(fold_dots(Path::new("/w/a/./b/../c")), Path::new("/w/a/c"));
        assert_eq!(fold_dots(Path::new("/w/../../x")), Path::new("/x"));
    }
}
