//! The binary's command tree as its `-h` pages state it: every leaf command with its positional
//! arguments and options, so the flag fuzzer covers a new command or flag without being told.

use std::process::Command;

/// A positional argument: `<NAME>` (or `<NAME>...`) and its help text.
#[derive(Clone, Debug)]
pub struct Positional {
    pub name: String,
    pub help: String,
}

/// An option: `--long`, its value's name when it takes one, the values clap lists for it.
#[derive(Clone, Debug)]
pub struct Flag {
    pub long: String,
    pub value: Option<String>,
    pub possible: Vec<String>,
    /// The value clap shows as its default.
    pub default: Option<String>,
    /// Named in the usage line: the command refuses to run without it.
    pub required: bool,
}

/// A command with no subcommands: `path` is the words after `trestle` (`["campaign", "run"]`).
#[derive(Clone, Debug)]
pub struct Leaf {
    pub path: Vec<String>,
    pub positionals: Vec<Positional>,
    pub flags: Vec<Flag>,
}

impl Leaf {
    pub fn flag(&self, long: &str) -> Option<&Flag> {
        self.flags.iter().find(|f| f.long == long)
    }
}

fn help_page(path: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_trestle")).args(path).arg("-h").output().expect("runs");
    assert!(out.status.success(), "trestle {path:?} -h: {:?}", out.status);
    String::from_utf8(out.stdout).expect("UTF-8 help")
}

/// The lines of the section that starts with `title` (up to the next unindented line).
fn section<'a>(page: &'a str, title: &str) -> Vec<&'a str> {
    let mut lines = page.lines().skip_while(|l| *l != title);
    lines.next();
    lines.take_while(|l| l.is_empty() || l.starts_with(' ')).collect()
}

/// Every leaf command under `trestle PATH`.
pub fn leaves(path: Vec<String>) -> Vec<Leaf> {
    let page = help_page(&path);
    let subcommands: Vec<String> = section(&page, "Commands:")
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    if !subcommands.is_empty() {
        return subcommands
            .into_iter()
            .flat_map(|name| {
                let mut p = path.clone();
                p.push(name);
                leaves(p)
            })
            .collect();
    }
    let usage = page.lines().find(|l| l.starts_with("Usage:")).unwrap_or_default();
    let positionals = section(&page, "Arguments:")
        .iter()
        .filter_map(|l| {
            let t = l.trim_start();
            let name = t.strip_prefix('<')?.split('>').next()?.to_string();
            let help = t.split_once("  ").map_or("", |(_, h)| h.trim()).to_string();
            Some(Positional { name, help })
        })
        .collect();
    let mut flags: Vec<Flag> = Vec::new();
    for line in section(&page, "Options:") {
        let t = line.trim_start();
        let long = if let Some(rest) = t.strip_prefix("--") {
            Some(rest)
        } else if t.starts_with('-') && t.get(2..4) == Some(", ") {
            t.get(4..).and_then(|r| r.strip_prefix("--"))
        } else {
            None
        };
        match long {
            Some(rest) => {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '-').collect();
                let after = &rest[name.len()..];
                let value = after.strip_prefix(" <").and_then(|v| v.split('>').next()).map(str::to_string);
                let required = usage.contains(&format!("--{name} "));
                let default = default_value(after);
                flags.push(Flag { long: name, value, possible: possible_values(after), default, required });
            }
            // A wrapped description: its possible values belong to the flag above.
            None => {
                if let Some(f) = flags.last_mut() {
                    f.possible.extend(possible_values(t));
                    f.default = f.default.take().or_else(|| default_value(t));
                }
            }
        }
    }
    flags.retain(|f| f.long != "help" && f.long != "version");
    vec![Leaf { path, positionals, flags }]
}

fn default_value(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("[default: ")?;
    rest.split(']').next().map(str::to_string)
}

fn possible_values(text: &str) -> Vec<String> {
    match text.split_once("[possible values: ") {
        Some((_, rest)) => rest.split(']').next().unwrap_or_default().split(", ").map(str::to_string).collect(),
        None => Vec::new(),
    }
}
