//! Seeing through commands that run another command: `sudo rm …`, `env X=1 rm …`,
//! `timeout 5 rm …`, `xargs rm …`.

use super::words::Word;

/// Programs that run the rest of their arguments as a command, and the options of each that
/// take a separate value.
const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &[
            "-u", "-g", "-p", "-C", "-D", "-R", "-T", "-U", "-r", "-t", "-h",
        ],
    ),
    ("doas", &["-u", "-C"]),
    ("pkexec", &["--user"]),
    ("env", &["-u", "-C", "--unset", "--chdir"]),
    ("nohup", &[]),
    ("time", &["-f", "-o"]),
    ("command", &[]),
    ("builtin", &[]),
    ("exec", &["-a"]),
    ("nice", &["-n"]),
    ("ionice", &["-c", "-n", "-p"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("stdbuf", &[]),
    ("setsid", &[]),
    (
        "xargs",
        &["-I", "-n", "-P", "-d", "-L", "-s", "-a", "-E", "-i"],
    ),
    ("busybox", &[]),
    ("chrt", &[]),
    ("taskset", &[]),
    // `watch` hands its arguments to `sh -c`.
    ("watch", &["-n", "--interval"]),
];

/// Programs that run the rest as root.
pub(crate) const PRIVILEGE_WRAPPERS: &[&str] = &["sudo", "doas", "pkexec"];

/// The program part of a path (`/usr/bin/rm` → `rm`).
pub(crate) fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The command a wrapper chain finally runs, and the wrappers that were peeled off.
pub(crate) fn unwrap_command(words: &[Word]) -> (&[Word], Vec<String>) {
    let mut rest = words;
    let mut wrappers = Vec::new();
    while let Some(first) = rest.first().and_then(Word::as_static) {
        let name = program_name(first);
        let Some((_, valued_options)) = WRAPPERS.iter().find(|(wrapper, _)| *wrapper == name)
        else {
            break;
        };
        // `command -v x` and `command -V x` ask about a program; they do not run it.
        if name == "command"
            && rest
                .get(1)
                .and_then(Word::as_static)
                .is_some_and(|option| option == "-v" || option == "-V")
        {
            break;
        }
        wrappers.push(name.to_owned());
        let mut index = 1;
        while let Some(word) = rest.get(index) {
            let text = word.text();
            let is_assignment = name == "env" && text.contains('=') && !text.starts_with('-');
            if text == "--" {
                index += 1;
                break;
            }
            if is_assignment {
                index += 1;
            } else if text.starts_with('-') && text.len() > 1 {
                index += if valued_options.contains(&text) { 2 } else { 1 };
            } else if name == "timeout" && index_is_first_operand(rest, index) {
                // The duration.
                index += 1;
            } else {
                break;
            }
        }
        rest = rest.get(index..).unwrap_or_default();
    }
    (rest, wrappers)
}

fn index_is_first_operand(words: &[Word], index: usize) -> bool {
    words[1..index]
        .iter()
        .all(|word| word.text().starts_with('-'))
}

/// Single-dash option clusters and long options of `words`, up to `--`.
pub(crate) fn options(words: &[Word]) -> impl Iterator<Item = &str> {
    words
        .iter()
        .filter_map(Word::as_static)
        .take_while(|word| *word != "--")
        .filter(|word| word.starts_with('-') && word.len() > 1)
}

/// Whether the short option `letter` (in any cluster like `-rf`) or one of `long` is present.
pub(crate) fn has_option(words: &[Word], letter: char, long: &[&str]) -> bool {
    options(words).any(|option| match option.strip_prefix("--") {
        Some(_) => long.contains(&option),
        None => option[1..].contains(letter),
    })
}

/// The words that are not options (everything after `--` counts as an operand).
pub(crate) fn operands(words: &[Word]) -> Vec<&Word> {
    let mut operands = Vec::new();
    let mut after_double_dash = false;
    for word in words {
        let text = word.text();
        if after_double_dash {
            operands.push(word);
        } else if text == "--" {
            after_double_dash = true;
        } else if !(text.starts_with('-') && text.len() > 1) {
            operands.push(word);
        }
    }
    operands
}
