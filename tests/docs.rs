//! The documentation says what the tool does:
//! - docs/format.md names every key the system-file parser accepts, in the section of its table
//!   (the parser's own list, read from its "unknown field" message, so a new key without a line
//!   in the reference fails here);
//! - every `$ trestle ...` example in the documents (README.md, docs/*.md, the Python package's
//!   README) runs as shown: the lines printed under it appear in the output, in order (`...`
//!   skips lines; numbers with a decimal point, times, are not compared; runs of spaces count as
//!   one);
//! - every whole system file a document shows in a ```toml block loads, with its controller's
//!   model file replaced by a network of the same shape (a top-level key written below a table
//!   header once made the Python README's example a file that does not load).

mod common;

use common::cli::{Run, trestle};
use std::path::Path;
use trestle_testkit::{repo, shared_models};

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The keys serde expects where `probe` put the unknown key `zz_probe`.
fn accepted_keys(probe: &str) -> Vec<String> {
    let err = trestle_config::load_system_from_str(probe, Path::new("probe.toml"), &Default::default())
        .expect_err("the probe has an unknown key")
        .to_string();
    let list = err.split("expected").nth(1).unwrap_or_else(|| panic!("no list of keys in: {err}"));
    let keys: Vec<String> = list.split('`').skip(1).step_by(2).map(str::to_string).collect();
    assert!(!keys.is_empty(), "no keys in: {err}");
    keys
}

/// The text of the section of `doc` under the heading that starts with `heading`, up to the next
/// heading of the same level.
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc.find(&format!("\n{heading}")).unwrap_or_else(|| panic!("no heading '{heading}'"));
    let rest = &doc[start + 1..];
    let level = heading.chars().take_while(|c| *c == '#').count();
    let next = rest[1..]
        .match_indices('\n')
        .map(|(i, _)| i + 2)
        .find(|&i| {
            let line = &rest[i..];
            line.starts_with(&"#".repeat(level)) && !line.starts_with(&"#".repeat(level + 1))
        })
        .unwrap_or(rest.len());
    &rest[..next]
}

#[test]
fn format_reference_names_every_key_of_the_parser() {
    let doc = read("docs/format.md");
    let state = "[state]\nx = { type = \"real\" }\n";
    let probes: Vec<(&str, String)> = vec![
        ("## Top level", format!("zz_probe = 1\n{state}")),
        ("## `[system]`", format!("{state}[system]\nzz_probe = 1\n")),
        ("## `[state]`", "[state]\nx = { type = \"real\", zz_probe = 1 }\n".into()),
        ("## `[nondet]`", format!("{state}[nondet]\nc = {{ interval = [0, 1], zz_probe = 1 }}\n")),
        ("## `[networks.NAME]`", format!("{state}[networks.n]\nzz_probe = 1\n")),
        ("## `[networks.NAME]`", format!("{state}[networks.n]\nlayers = [{{ weights = [[1.0]], zz_probe = 1 }}]\n")),
        ("## `[controller]`", format!("{state}[controller]\nzz_probe = 1\n")),
        ("## `[step]`", format!("{state}[[branch]]\nzz_probe = 1\n")),
        ("## `[step]`", format!("{state}[[command]]\nlabel = \"a\"\nzz_probe = 1\n")),
        ("## `[[property]]`", format!("{state}[[property]]\nname = \"p\"\nzz_probe = 1\n")),
        ("## Top level", format!("init = {{ x = {{ values = [0], zz_probe = 1 }} }}\n{state}")),
    ];
    let mut missing = Vec::new();
    for (heading, probe) in &probes {
        let text = section(&doc, heading);
        for key in accepted_keys(probe) {
            if !text.contains(&format!("`{key}`")) {
                missing.push(format!("`{key}` under '{heading}'"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/format.md does not name: {}", missing.join(", "));
}

/// One `$ trestle ...` example: its arguments and the lines shown under it.
struct Example {
    file: String,
    args: Vec<String>,
    expected: Vec<String>,
}

/// Splits a command line as a POSIX shell would for the simple quoting the docs use.
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (None, '"' | '\'') => (quote, started) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

fn examples(file: &str) -> Vec<Example> {
    let text = read(file);
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            let words = shell_words(cmd);
            assert_eq!(words.first().map(String::as_str), Some("trestle"), "{file}: only trestle commands: {line}");
            out.push(Example { file: file.to_string(), args: words[1..].to_vec(), expected: Vec::new() });
        } else if let Some(ex) = out.last_mut() {
            ex.expected.push(line.to_string());
        }
    }
    out
}

/// A line as compared: decimals masked, spaces collapsed.
fn normalise(line: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.trim().chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                out.push('#');
            } else {
                out.extend(&chars[start..i]);
            }
            continue;
        }
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

fn check_example(ex: &Example, scratch: &Path) -> Result<(), String> {
    // Files the examples write go to a scratch directory.
    let args: Vec<String> = ex
        .args
        .iter()
        .map(|a| match a.strip_prefix("/tmp/") {
            Some(name) => scratch.join(name).to_string_lossy().into_owned(),
            None => a.clone(),
        })
        .collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run: Run = trestle(&refs);
    let actual: Vec<String> = run.stdout.lines().map(normalise).collect();
    let mut at = 0;
    let mut skipping = false;
    for want in &ex.expected {
        if want.trim() == "..." {
            skipping = true;
            continue;
        }
        let want = normalise(want);
        let found = if skipping {
            actual[at..].iter().position(|l| *l == want).map(|k| at + k)
        } else {
            (actual.get(at) == Some(&want)).then_some(at)
        };
        match found {
            Some(k) => at = k + 1,
            None => {
                return Err(format!(
                    "{}: `trestle {}` (exit {}) does not print '{want}' where shown; it printed:\n{}\n{}",
                    ex.file,
                    ex.args.join(" "),
                    run.code,
                    run.stdout,
                    run.stderr
                ));
            }
        }
        skipping = false;
    }
    if run.code == 2 || run.code == 4 {
        return Err(format!("{}: `trestle {}` exits {}: {}", ex.file, ex.args.join(" "), run.code, run.stderr));
    }
    Ok(())
}

#[test]
fn documented_command_examples_run_as_shown() {
    let files = documents();
    let have_shared = shared_models().is_some();
    let scratch = tempfile::tempdir().unwrap();
    let (mut ran, mut failures) = (0, Vec::new());
    for file in &files {
        for ex in examples(file) {
            let needs_shared = ex.args.iter().any(|a| {
                a.ends_with(".toml")
                    && std::fs::read_to_string(repo().join(a)).is_ok_and(|t| t.contains("shared/models"))
            });
            if needs_shared && !have_shared {
                continue;
            }
            ran += 1;
            if let Err(e) = check_example(&ex, scratch.path()) {
                failures.push(e);
            }
        }
    }
    assert!(ran >= 5, "only {ran} examples found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn normalising_masks_times_and_spacing_only() {
    assert_eq!(normalise("safe   true  proven    0.003"), "safe true proven #");
    assert_eq!(normalise("s3 = s1, x = -0.88"), "s3 = s1, x = -#");
    assert_eq!(normalise("splits 12"), "splits 12");
    assert_eq!(
        shell_words(r#"ltl f.toml --formula "G (x <= 1)" --k 3"#),
        ["ltl", "f.toml", "--formula", "G (x <= 1)", "--k", "3"]
    );
}

/// The documents whose ```toml blocks are shown to users as system files.
fn documents() -> Vec<String> {
    let mut files = vec!["README.md".to_string(), "crates/python/README.md".to_string()];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(format!("docs/{}", path.file_name().unwrap().to_string_lossy()));
        }
    }
    files.sort();
    files
}

/// A network of the controller's shape (its `inputs`, else the state; its `actions`), written as
/// ONNX at `path`: the block's own model file may not exist beside the document.
fn stand_in_controller(file: &toml::Table, path: &Path) {
    use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
    let controller = file["controller"].as_table().expect("a [controller] table");
    let count = |t: &toml::Table, key: &str| t.get(key).and_then(|v| v.as_array()).map(Vec::len);
    let state = file["state"].as_table().expect("a [state] table").len();
    let inputs = count(controller, "inputs").unwrap_or(state);
    let actions = count(controller, "actions").expect("the controller's `actions`");
    let layer = DenseLayer {
        weights: Matrix::new(actions, inputs, vec![0.0; actions * inputs]),
        bias: vec![0.0; actions],
        activation: Activation::Identity,
    };
    let net = Network::new("stand-in", vec![Layer::Dense(layer)]).unwrap();
    trestle_nn::write_onnx(&net, path).unwrap();
}

#[test]
fn documented_system_files_load() {
    let scratch = tempfile::tempdir().unwrap();
    let (mut loaded, mut failures) = (0, Vec::new());
    for doc in documents() {
        let text = read(&doc);
        for block in text.split("```toml\n").skip(1) {
            let block = block.split("```").next().unwrap();
            if !block.contains("[state]") {
                continue;
            }
            let mut file: toml::Table = match block.parse() {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{doc}: a system file that is not TOML: {e}"));
                    continue;
                }
            };
            if file.get("controller").is_some_and(|c| c.get("model").is_some()) {
                let net = scratch.path().join(format!("net{loaded}.onnx"));
                stand_in_controller(&file, &net);
                file["controller"]["model"] = toml::Value::String(net.to_string_lossy().into_owned());
            }
            let path = scratch.path().join("sys.toml");
            let shown = toml::to_string(&file).unwrap();
            match trestle_config::load_system_from_str(&shown, &path, &Default::default()) {
                Ok(_) => loaded += 1,
                Err(e) => failures.push(format!("{doc}: the system file shown does not load: {e}\n{block}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(loaded >= 3, "only {loaded} system files found in the documents");
}
