//! The deny list and the risk warnings, checked on one simple command after its wrappers
//! (`sudo`, `env`, `xargs`, …) were peeled off.

use std::path::Path;

use super::paths::{is_block_device, is_harmless_device, normalize};
use super::words::Word;
use super::wrappers::{has_option, operands, program_name};

/// Why a command is refused outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyRule {
    /// `rm -r` of `/`, `/*`, `~`, `$HOME` or a top-level system folder; `--no-preserve-root`.
    RecursiveDeleteOfRoot,
    /// `mkfs*`, `mke2fs`, `mkswap`, `wipefs`.
    FilesystemFormat,
    /// `dd of=/dev/…`, redirections or copies onto block devices (`/dev/sd*`, `/dev/nvme*`, …).
    RawDiskWrite,
    /// A function that calls itself in a pipeline or in the background (`:(){ :|:& };:`).
    ForkBomb,
    /// The Windows disk tools `format` and `diskpart`.
    WindowsDiskTool,
    /// `chmod -R`, `chown -R`, `chgrp -R` of `/`, `~` or a top-level system folder.
    RecursivePermissionChangeOfRoot,
    /// `shutdown`, `reboot`, `halt`, `poweroff`, `init 0`, `systemctl reboot`, `kill -9 -1`, …
    SystemPowerControl,
}

/// Why a command deserves a second look (attached to the approval request and the result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RiskKind {
    /// The command could not be parsed as shell (or was nested too deep to follow).
    Unparsed,
    /// `sudo`, `su`, `doas`, `pkexec`.
    PrivilegeEscalation,
    /// A download executed as code (`curl … | sh`, `bash <(curl …)`, `sh -c "$(curl …)"`).
    DownloadPipedToShell,
    /// Output of another command executed by a shell (`make_script | bash`).
    PipedIntoShell,
    /// Shell code only known at run time (`eval "$x"`, `bash -c "$cmd"`).
    DynamicShellCode,
    /// The program itself is only known at run time (`$EDITOR file`).
    DynamicProgram,
    /// `chmod`, `chown`, `chgrp`.
    PermissionChange,
    /// `git push --force`, `-f`, `--force-with-lease` or a `+refspec`.
    ForcePush,
    /// `rm -r` of something that is not on the deny list.
    RecursiveDelete,
}

/// What a check found.
#[derive(Debug)]
pub(crate) enum Finding {
    Deny(DenyRule, String),
    Risk(RiskKind, String),
}

/// Folders whose recursive deletion or permission change breaks the machine.
const CRITICAL_FOLDERS: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/Applications",
    "/Library",
    "/System",
    "/Users",
];

const POWER_COMMANDS: &[&str] = &["shutdown", "reboot", "halt", "poweroff", "kexec"];
const SYSTEMCTL_POWER_VERBS: &[&str] =
    &["poweroff", "reboot", "halt", "kexec", "emergency", "rescue"];
const FORMAT_PROGRAMS: &[&str] = &["mke2fs", "mkswap", "wipefs"];
const WINDOWS_DISK_TOOLS: &[&str] = &["format", "format.com", "diskpart", "diskpart.exe"];
const DEVICE_WRITERS: &[&str] = &["tee", "cp", "mv", "shred", "install", "truncate", "pv"];
const PERMISSION_PROGRAMS: &[&str] = &["chmod", "chown", "chgrp"];

/// Checks one command; `words[0]` is the program.
pub(crate) fn check_command(words: &[Word], home: Option<&Path>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let Some(program) = words.first().and_then(Word::as_static).map(program_name) else {
        return findings;
    };
    let arguments = &words[1..];
    let lowercase = program.to_ascii_lowercase();
    match program {
        "rm" => check_rm(arguments, home, &mut findings),
        "find" => check_find(arguments, home, &mut findings),
        "dd" => {
            let device = arguments
                .iter()
                .filter_map(Word::as_static)
                .filter_map(|argument| argument.strip_prefix("of="))
                .find(|target| target.starts_with("/dev/") && !is_harmless_device(target));
            if let Some(device) = device {
                findings.push(Finding::Deny(
                    DenyRule::RawDiskWrite,
                    format!("`dd of={device}` overwrites a device"),
                ));
            }
        }
        "init" | "telinit"
            if arguments
                .iter()
                .any(|word| matches!(word.text(), "0" | "6")) =>
        {
            findings.push(power_finding(program));
        }
        "systemctl"
            if arguments
                .iter()
                .any(|word| SYSTEMCTL_POWER_VERBS.contains(&word.text())) =>
        {
            findings.push(power_finding(program));
        }
        "kill" if arguments.len() >= 2 && arguments.last().map(Word::text) == Some("-1") => {
            findings.push(Finding::Deny(
                DenyRule::SystemPowerControl,
                "`kill … -1` signals every process you own".into(),
            ));
        }
        "git" => check_git_push(arguments, &mut findings),
        _ if program.starts_with("mkfs") || FORMAT_PROGRAMS.contains(&program) => {
            findings.push(Finding::Deny(
                DenyRule::FilesystemFormat,
                format!("`{program}` formats a disk or partition"),
            ));
        }
        _ if WINDOWS_DISK_TOOLS.contains(&lowercase.as_str()) => {
            findings.push(Finding::Deny(
                DenyRule::WindowsDiskTool,
                format!("`{program}` formats or repartitions disks"),
            ));
        }
        _ if POWER_COMMANDS.contains(&program) => findings.push(power_finding(program)),
        _ if PERMISSION_PROGRAMS.contains(&program) => {
            check_permission_change(program, arguments, home, &mut findings);
        }
        _ => {}
    }
    if DEVICE_WRITERS.contains(&program) {
        let device = operands(arguments)
            .into_iter()
            .filter_map(Word::as_static)
            .find(|target| {
                is_block_device(target)
                    || (program == "shred"
                        && target.starts_with("/dev/")
                        && !is_harmless_device(target))
            });
        if let Some(device) = device {
            findings.push(Finding::Deny(
                DenyRule::RawDiskWrite,
                format!("`{program}` onto {device} overwrites a disk"),
            ));
        }
    }
    findings
}

fn power_finding(program: &str) -> Finding {
    Finding::Deny(
        DenyRule::SystemPowerControl,
        format!("`{program}` shuts down, reboots or changes the run level of the machine"),
    )
}

fn check_rm(arguments: &[Word], home: Option<&Path>, findings: &mut Vec<Finding>) {
    if arguments
        .iter()
        .any(|word| word.text() == "--no-preserve-root")
    {
        findings.push(Finding::Deny(
            DenyRule::RecursiveDeleteOfRoot,
            "`rm --no-preserve-root` exists only to delete the root folder".into(),
        ));
        return;
    }
    if !has_option(arguments, 'r', &["--recursive"]) && !has_option(arguments, 'R', &[]) {
        return;
    }
    for target in operands(arguments) {
        if let Some(what) = critical_target(target, home) {
            findings.push(Finding::Deny(
                DenyRule::RecursiveDeleteOfRoot,
                format!("`rm -r {}` would delete {what}", target.text()),
            ));
            return;
        }
    }
    findings.push(Finding::Risk(
        RiskKind::RecursiveDelete,
        "`rm -r` deletes whole folders".into(),
    ));
}

/// `find / -delete` is `rm -rf /`; `-exec …;` runs a command that is checked too.
fn check_find(arguments: &[Word], home: Option<&Path>, findings: &mut Vec<Finding>) {
    let starts: Vec<&Word> = arguments
        .iter()
        .take_while(|word| !word.text().starts_with('-') && !matches!(word.text(), "(" | "!"))
        .collect();
    // `-delete`, or `-exec rm …` on every file found, deletes all below the start.
    let deletes = arguments.windows(2).any(|pair| {
        pair[0].text() == "-delete"
            || (matches!(pair[0].text(), "-exec" | "-execdir")
                && pair[1].as_static().map(program_name) == Some("rm"))
    }) || arguments.last().map(Word::text) == Some("-delete");
    if deletes && let Some(what) = starts.iter().find_map(|start| critical_target(start, home)) {
        findings.push(Finding::Deny(
            DenyRule::RecursiveDeleteOfRoot,
            format!("`find` with `-delete` or `-exec rm` would delete {what}"),
        ));
    }
    let mut rest = arguments;
    while let Some(position) = rest
        .iter()
        .position(|word| matches!(word.text(), "-exec" | "-execdir" | "-ok" | "-okdir"))
    {
        let command = &rest[position + 1..];
        let end = command
            .iter()
            .position(|word| matches!(word.text(), ";" | "+"))
            .unwrap_or(command.len());
        findings.extend(check_command(&command[..end], home));
        rest = command.get(end..).unwrap_or_default();
    }
}

fn check_permission_change(
    program: &str,
    arguments: &[Word],
    home: Option<&Path>,
    findings: &mut Vec<Finding>,
) {
    if has_option(arguments, 'R', &["--recursive"]) {
        // The first operand is the mode or the owner; the others are targets.
        let targets = operands(arguments).into_iter().skip(1);
        for target in targets {
            if let Some(what) = critical_target(target, home) {
                findings.push(Finding::Deny(
                    DenyRule::RecursivePermissionChangeOfRoot,
                    format!("`{program} -R` on {} would change {what}", target.text()),
                ));
                return;
            }
        }
    }
    findings.push(Finding::Risk(
        RiskKind::PermissionChange,
        format!("`{program}` changes permissions or ownership"),
    ));
}

/// Git's global options that take a separate value (`git -C dir push`).
const GIT_VALUED_OPTIONS: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace"];

fn check_git_push(arguments: &[Word], findings: &mut Vec<Finding>) {
    let mut index = 0;
    while let Some(word) = arguments.get(index) {
        let text = word.text();
        if GIT_VALUED_OPTIONS.contains(&text) {
            index += 2;
        } else if text.starts_with('-') {
            index += 1;
        } else {
            break;
        }
    }
    if arguments.get(index).map(Word::text) != Some("push") {
        return;
    }
    let push_arguments = &arguments[index + 1..];
    let forced = push_arguments.iter().any(|word| {
        let text = word.text();
        text.starts_with("--force")
            || (text.starts_with('-') && !text.starts_with("--") && text.contains('f'))
            || (text.starts_with('+') && text.len() > 1)
    });
    if forced {
        findings.push(Finding::Risk(
            RiskKind::ForcePush,
            "`git push --force` can overwrite other people's commits".into(),
        ));
    }
}

/// What a recursive operation on `target` would hit, when that is the root, the home folder
/// or a top-level system folder.
fn critical_target(target: &Word, home: Option<&Path>) -> Option<String> {
    let text = target.text();
    if let Word::Dynamic(source) = target {
        let unquoted = source.replace('"', "");
        let rest = unquoted
            .strip_prefix("${HOME}")
            .or_else(|| unquoted.strip_prefix("$HOME"))?;
        return is_whole_folder_suffix(rest).then(|| "your home folder".to_owned());
    }
    if let Some(rest) = text.strip_prefix('~') {
        // `~`, `~/`, `~/*`, and `~user` alike.
        let rest = rest.find('/').map_or("", |slash| &rest[slash..]);
        return is_whole_folder_suffix(rest).then(|| "a home folder".to_owned());
    }
    if !text.starts_with('/') {
        return None;
    }
    let mut path = normalize(Path::new(text));
    if path.file_name().is_some_and(|name| name == "*") {
        path.pop();
    }
    if home.is_some_and(|home| normalize(home) == path) {
        return Some("your home folder".to_owned());
    }
    let shown = path.display().to_string();
    CRITICAL_FOLDERS.contains(&shown.as_str()).then(|| {
        if shown == "/" {
            "the whole filesystem".to_owned()
        } else {
            format!("the system folder {shown}")
        }
    })
}

/// `""`, `/`, `/*`, `/.`, `//*`: the folder itself or everything in it.
fn is_whole_folder_suffix(rest: &str) -> bool {
    rest.split('/').all(|part| matches!(part, "" | "." | "*"))
}
