//! Property tests of the system-file reader (issue 9, fuzzing): system files with mutated values,
//! keys and lines load or fail with an error naming the file, in the user's words (never a Rust
//! type name); none panics or hangs. `--set` values are fuzzed the same way.

use proptest::prelude::*;
use trestle_config::{Overrides, load_system_from_str};
use trestle_testkit::{repo, scratch};

/// A system using most of the format: constants, int/real state with domains, non-deterministic
/// inputs (interval and set), inline networks, an argmax controller with labels and observation
/// expressions, `let`, branches with guards, regions as text, tables and boxes, properties.
const RICH: &str = r#"
init = { x = [-1, 1], n = 0 }
safe = "-10 <= x <= 10.5 and 0 <= n <= 4"
invariant = { boxes = [{ x = [-10, 10.5], n = [0, 4] }] }

[system]
name = "rich"
on_domain_exit = "drop"

[constants]
K = 0.5
T = "1/3"

[state]
x = { type = "real", domain = [-10, 10.5] }
n = { type = "int", domain = [0, 4] }

[nondet]
w = { interval = [-0.1, 0.1] }
v = { values = [0, 1.5] }

[networks.policy]
layers = [
  { weights = [[1.0, -0.5], [0.25, 1.0], [-1.0, 0.0]], bias = [0.0, 0.1, -0.1], activation = "relu" },
  { weights = [[1.0, 0.0, 1.0], [0.0, 1.0, -1.0]], bias = [0.5, 0.0], activation = "identity" },
]

[controller]
network = "policy"
inputs = ["x / 10", "min(n, 3) - K"]
argmax = "a"
labels = ["LEFT", "RIGHT"]

[let]
drift = "K*w + T*v"

[[branch]]
name = "move"
guard = "a == LEFT or x >= 0"
let = { d = "lookup(a, [-1, 1])" }
update = { x = "clamp(x + d*K + drift, -10, 10.5)", n = "min(n + 1, 4)" }

[[branch]]
name = "stay"
guard = "not (a == LEFT or x >= 0)"
update = { x = "if x <= -9 then x + 1 else x - 0.1*abs(x)", n = "0" }

[[property]]
name = "bounded"
ctl = "AG^3 (x <= 10.5) and EF<=2 (x >= -10)"

[[property]]
name = "eventually"
ltl = "F<=2 (n >= 1) U (x <= 5)"
"#;

fn seeds() -> Vec<(String, std::path::PathBuf)> {
    let mut v = vec![(RICH.to_string(), std::path::PathBuf::from("rich.toml"))];
    for f in ["examples/maze-det.toml", "examples/maze-nondet.toml", "configs/systems/rnn-figure1.toml"] {
        let path = repo().join(f);
        v.push((std::fs::read_to_string(&path).unwrap(), path));
    }
    v
}

/// What a value may become: numbers of every kind, broken ones, strings holding expressions,
/// arrays and tables of the wrong shape, TOML syntax errors.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1.00000000000000000001",
    "1e-400",
    "1e400",
    "\"1e400\"",
    "\"1e99999\"",
    "inf",
    "-nan",
    "\"1/0\"",
    "\"1/3\"",
    "99999999999999999999",
    "0x10",
    "true",
    "\"\"",
    "\"x\"",
    "\"x <= \"",
    "\"((((x))))\"",
    "\"not not x <= 1\"",
    "\"x ≤ 1\"",
    "\"lookup(a, [])\"",
    "\"a == LEFT\"",
    "[]",
    "[1]",
    "[1, 2, 3]",
    "[0, -1]",
    "[\"a\", 2]",
    "{}",
    "{ values = [] }",
    "{ interval = [1, 0] }",
    "{ boxes = [] }",
    "{ type = \"int\" }",
    "{ type = \"bool\" }",
    "{ type = \"int\", domain = [0.5, 2] }",
    "[[1.0]]",
    "1979-05-27",
    "\"",
    "[",
    "{",
    "=",
];

/// Keys (and table headers) a mutation may introduce.
const KEYS: &[&str] = &[
    "x",
    "n",
    "init",
    "safe",
    "invariant",
    "inputs",
    "actions",
    "argmax",
    "labels",
    "layers",
    "weights",
    "bias",
    "activation",
    "domain",
    "type",
    "interval",
    "values",
    "guard",
    "update",
    "let",
    "network",
    "model",
    "ctl",
    "ltl",
    "name",
    "nope",
    "[state]",
    "[[branch]]",
    "[controller]",
    "[networks.other]",
    "[nondet]",
    "[[property]]",
];

#[derive(Clone, Debug)]
enum Edit {
    /// Replace the value after the n-th `=` (counted modulo how many there are).
    Value(usize, &'static str),
    /// Replace the key before the n-th `=`.
    Key(usize, &'static str),
    /// Insert a line `KEY = VALUE` (or a table header) before line n.
    Insert(usize, &'static str, &'static str),
    DeleteLine(usize),
    DuplicateLine(usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let (k, v) = (prop::sample::select(KEYS), prop::sample::select(VALUES));
    prop_oneof![
        4 => (any::<usize>(), v.clone()).prop_map(|(n, v)| Edit::Value(n, v)),
        1 => (any::<usize>(), k.clone()).prop_map(|(n, k)| Edit::Key(n, k)),
        2 => (any::<usize>(), k, v).prop_map(|(n, k, v)| Edit::Insert(n, k, v)),
        1 => any::<usize>().prop_map(Edit::DeleteLine),
        1 => any::<usize>().prop_map(Edit::DuplicateLine),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, e: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    let assignments: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains(" = ")).collect();
    let nth = |k: usize| assignments.get(k % assignments.len().max(1)).copied();
    match *e {
        Edit::Value(k, v) => {
            if let Some(i) = nth(k) {
                let key = lines[i].split(" = ").next().unwrap_or("").to_string();
                lines[i] = format!("{key} = {v}");
            }
        }
        Edit::Key(k, key) => {
            if let Some(i) = nth(k) {
                let value = lines[i].split_once(" = ").map_or("", |(_, v)| v).to_string();
                lines[i] = format!("{key} = {value}");
            }
        }
        Edit::Insert(i, key, v) => {
            let line = if key.starts_with('[') { key.to_string() } else { format!("{key} = {v}") };
            lines.insert(i % (lines.len() + 1), line);
        }
        Edit::DeleteLine(i) if !lines.is_empty() => {
            lines.remove(i % n);
        }
        Edit::DuplicateLine(i) if !lines.is_empty() => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Edit::Truncate(i) => lines.truncate(i % n),
        _ => {}
    }
    lines.join("\n") + "\n"
}

/// Loads `text` as if it were the file at `path` (beside a copy of the example network when the
/// path is relative); an error names the file and speaks the user's language.
fn check(text: &str, path: &std::path::Path, set: &[String]) {
    let (_dir, scratch_path) = scratch("rich.toml", "");
    let path = if path.is_relative() { scratch_path } else { path.to_path_buf() };
    let overrides = match Overrides::parse(set) {
        Ok(o) => o,
        Err(e) => {
            assert!(e.starts_with("--set "), "{e}");
            return;
        }
    };
    if let Err(e) = load_system_from_str(text, &path, &overrides) {
        let msg = e.to_string();
        assert!(msg.starts_with(&path.display().to_string()), "the file is not named: {msg}");
        for internal in ["Raw", "untagged", "struct ", "enum ", "Weight"] {
            assert!(!msg.contains(internal), "'{internal}' in: {msg}");
        }
    }
}

#[test]
fn the_seeds_load() {
    for (text, path) in seeds() {
        let (_dir, scratch_path) = scratch("rich.toml", "");
        let path = if path.is_relative() { scratch_path } else { path };
        load_system_from_str(&text, &path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_system_files_load_or_fail_cleanly(seed in 0..4_usize, edits in prop::collection::vec(edit(), 1..5)) {
        let (mut text, path) = seeds().swap_remove(seed);
        for e in &edits {
            text = apply(&text, e);
        }
        check(&text, &path, &[]);
    }

    #[test]
    fn set_values_load_or_fail_cleanly(
        sets in prop::collection::vec((prop::sample::select(KEYS), prop::sample::select(KEYS), prop::sample::select(VALUES)), 1..4)
    ) {
        let set: Vec<String> = sets
            .iter()
            .map(|(a, b, v)| format!("{}.{}={v}", a.trim_matches(['[', ']']), b.trim_matches(['[', ']'])))
            .collect();
        check(RICH, std::path::Path::new("rich.toml"), &set);
    }
}
