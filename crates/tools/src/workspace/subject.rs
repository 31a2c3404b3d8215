//! What permission rules see of the paths a call touches.

use std::path::Path;

use toolhost_core::SubjectPath;
use toolhost_exec::normalize_path;

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
        let spelled = normalize_path(&spelled);
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::normalize_path;

    #[test]
    fn dots_fold_without_leaving_the_root() {
        assert_eq!(
            normalize_path(Path::new("/w/a/./b/../c")),
            Path::new("/w/a/c")
        );
        assert_eq!(normalize_path(Path::new("/w/../../x")), Path::new("/x"));
    }
}
