//! Every command, every flag, hostile values (issue 39, "done when"): each leaf command of the
//! binary, as its `-h` pages list them (so a new command or flag is covered without a change
//! here), run with its real flags given hostile values — 0, -1, 2^63, 1e308, NaN, inf, empty, very
//! long, Unicode, a FIFO, a directory, /dev/zero, a missing file, small damaged TOML, JSON and
//! ONNX files — under an address-space limit and a wall-clock kill. It must end with a documented
//! exit code (0, 1, 2 or 3: never 4, never a signal), name the problem when it refuses its input
//! (exit 2), not run out of memory and not outlive its `--timeout` (commands that take one get
//! `--timeout 2` unless the case draws a value).
//!
//! The memory budget: every command on a small input, whatever its flags, runs within
//! `BUDGET_MIB` of address space with glibc held to two malloc arenas (`MALLOC_ARENA_MAX=2`, as
//! the campaign runner runs its jobs); reaching it ("out of memory", exit 3) fails the case.
//!
//! `PROPTEST_CASES=N` runs N cases (by default as many of 200 as start within 25 s); long local
//! runs use thousands
//! (`FUZZ_FLAGS_LOG=1` prints each command line with its outcome; `FUZZ_FLAGS_LOG=survey` also
//! prints every failure and goes on, to find several defects in one run; `FUZZ_FLAGS_SKIP=WORD`
//! leaves out the commands with that word, such as `generate`). Paths given as values all lie in the case's scratch directory (the tests may run as
//! root: no system path is ever offered as an output).

mod common;

use common::help::{Flag, Leaf, leaves};
use common::limited::{Ended, LimitedRun, run_limited};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use trestle_testkit::repo;

/// The memory budget (see the module's doc).
const BUDGET_MIB: u64 = 1024;

/// The `--timeout` given to commands that take one when the case draws none, and the slack after
/// a run's time limit before the harness calls it a hang (the slack covers loading, the
/// counterexample replay and the process's start under a loaded machine, not the limit itself).
const DEFAULT_TIMEOUT: &str = "2";
const HANG_SLACK: f64 = 10.0;
/// Commands without a time limit: generation trains networks (about 30 s for `planning`).
const NO_LIMIT_WALL: f64 = 90.0;

/// Numbers at and past every edge: zero, negative, the integer widths' ends, overflow to inf,
/// subnormals, non-numbers.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-0",
    "0.5",
    "1e-9",
    "1e-320",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "1e308",
    "-1e308",
    "1e400",
    "NaN",
    "inf",
    "-inf",
    "0x10",
    "1/3",
    "",
];

/// Text values: whitespace, control characters, Unicode, option-like words, and the shapes of the
/// structured values (K/N, WxH, X,Y, KEY=VALUE, starts, formulas, Slurm sizes) at their edges.
const WORDS: &[&str] = &[
    " ",
    "-",
    "--json",
    "a\nb",
    "≤ẞ𝔘\u{202e}",
    "$(touch injected)`id`\"'",
    "x",
    "k",
    "1,2",
    ",,",
    "0/0",
    "1/0",
    "3/2",
    "18446744073709551617/2",
    "0x0",
    "100000x100000",
    "65536x65536",
    "x,y",
    "x1,x1",
    "x=1e400",
    "h=-129,adv=0",
    "c=nan",
    "c=0.5;0.7;1",
    "init.x=1e400",
    "controller.model=zero",
    "step.dt=0",
    "system.name=/abs",
    "AX^100000000 (x <= 1)",
    "G<=9223372036854775807 (x1 <= 1)",
    "X^1000000 (x >= 0)",
    "F (x >= 0)",
    "G (x1 <= 1.15)",
    "AX^k true",
    "EF^k x == 7",
    "1:00:00",
    "8G",
    "99999999999999999999G",
    "-1G",
    "safe",
    "main",
];

/// Scratch paths (created per case by `Scratch::new`): special files, a missing one, damaged
/// copies of each input format, fresh output names.
const PATHS: &[&str] = &[
    "fifo",
    "adir",
    "zero",
    "missing.toml",
    "empty",
    "garbage.bin",
    "damaged.toml",
    "damaged.json",
    "damaged.onnx",
    "huge-numbers.toml",
    "nested.toml",
    "out.json",
    "out.svg",
    "out.png",
    "outdir",
    "results",
];

/// Values a flag takes, by its value's name: so that most cases get past the parser, with one
/// or two hostile values among plausible ones, and reach the engines.
fn plausible(value_name: &str) -> &'static [&'static str] {
    match value_name {
        "K/N" => &["1/2", "2/2", "1/1"],
        "WxH" => &["800x600", "64x48"],
        "X,Y" => &["x,y", "x1,x2", "h,hdot0"],
        "KEY=VALUE" => &["init.x=1", "step.dt=0.1", "controller.model=garbage.bin"],
        "FILE" | "DIR" | "RUN_OR_DIR" | "CERTIFICATE" => &["out.svg", "out.png", "out.json", "outdir", "results"],
        "FORMULA" => &["G (x1 <= 1.15)", "AX^3 (h > 100 or h < -100)", "X^3 (x <= 2)", "F<=3 (x >= 0)", "true"],
        "NAME" | "PROPERTY" | "RUN" => &["safe", "sep", "succ", "stays", "1"],
        "INPUT" | "LO" | "HI" => &["0.3,0.6", "0.5,0.6", "0.3"],
        "FROM" => &["x=0.5", "h=-129,hdot0=-22.5,tau=25,adv=0"],
        "NONDET" => &["c=0.5", "c=0.5;0.7;1"],
        "BRANCH" => &["0", "1,0"],
        "TIME" => &["1:00:00"],
        "MEM" => &["8G"],
        "PARTITION" => &["main"],
        _ => &["1", "2", "3", "0.5", "8", "100"],
    }
}

/// A value drawn for one flag: three times in ten a hostile one, else one of the flag's listed
/// values, its default or a plausible one.
fn value_of(flag: &Flag, pick: Index, pool: Index) -> String {
    if pick.index(10) >= 3 {
        if !flag.possible.is_empty() {
            return pool.get(&flag.possible).clone();
        }
        let mut choices: Vec<&str> = plausible(flag.value.as_deref().unwrap_or_default()).to_vec();
        choices.extend(flag.default.as_deref());
        return pool.get(&choices).to_string();
    }
    // A numeric flag mostly gets a number at an edge (size flags are where memory runs out).
    let numeric = plausible(flag.value.as_deref().unwrap_or_default()) == plausible("");
    if numeric && pick.index(10) < 2 {
        return pool.get(NUMBERS).to_string();
    }
    hostile_value(pool)
}

/// A hostile value: a number at an edge, an odd word, a special or damaged file, or one near the
/// kernel's limit of an argument's length (128 KiB).
fn hostile_value(pool: Index) -> String {
    let n = NUMBERS.len() + WORDS.len() + PATHS.len() + 2;
    match pool.index(n) {
        i if i < NUMBERS.len() => NUMBERS[i].to_string(),
        i if i < NUMBERS.len() + WORDS.len() => WORDS[i - NUMBERS.len()].to_string(),
        i if i < NUMBERS.len() + WORDS.len() + PATHS.len() => PATHS[i - NUMBERS.len() - WORDS.len()].to_string(),
        i if i == n - 2 => "9".repeat(100_000),
        _ => "(".repeat(40_000) + "true" + &")".repeat(40_000),
    }
}

/// The files of the input kinds the binary reads, valid and small, built once: systems (each
/// engine's kind), models, a certificate, a campaign and its results store, a suite, generator
/// specs.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    /// The shipped systems of each engine's kind that load here (those of third-party models
    /// only where `../shared/models` is present).
    systems: Vec<PathBuf>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let ex = repo().join("examples");
        let write = |name: &str, text: String| std::fs::write(root.join(name), text).unwrap();
        write(
            "campaign.toml",
            format!(
                "[campaign]\nname = \"tiny\"\ntimeout = 20\nrepetitions = 4\n[[systems]]\nfile = \"{}\"\n\
                 [[runs]]\nname = \"check\"\ncommand = \"check\"\noptions = {{ threads = 1 }}\n",
                ex.join("maze-det.toml").display()
            ),
        );
        write(
            "suite.toml",
            format!(
                "[suite]\nname = \"tiny\"\ntimeout = 20\n[[instance]]\nname = \"det\"\ncommand = \"check\"\n\
                 system = \"{}\"\nexpect = \"safe\"\n",
                ex.join("maze-det.toml").display()
            ),
        );
        write(
            "maze.toml",
            "[maze]\nname = \"m\"\nseed = 1\ndt = 0.1\ninit = [[0.3, 0.4], [0.6, 0.7]]\n\
             safe = [[0.22, 0.98], [0.54, 0.98]]\ncandidate = [[[0.25, 0.95], [0.55, 0.95]]]\n\
             goal = [0.6, 0.75]\nsamples = 8\nepochs = 2\nproof_timeout = 2\n\
             [[family]]\ndynamics = \"det\"\nshapes = [\"2x16\"]\ndefects = [\"none\"]\n"
                .into(),
        );
        write(
            "arena.toml",
            "[arena]\nname = \"a\"\nseed = 1\ndt = 0.1\ngoal = 0.5\ninit = [0.45, 0.55]\n\
             candidate = [0.2, 0.8]\nsafe = [0.15, 0.85]\ngain = 1.0\nsamples = 16\nepochs = 2\n\
             proof_timeout = 2\n[[family]]\ndims = [3]\ndynamics = \"det\"\nshapes = [\"2x16\"]\n\
             defects = [\"none\"]\n"
                .into(),
        );
        let bin = env!("CARGO_BIN_EXE_trestle");
        let run = |args: &[&str]| {
            let o = std::process::Command::new(bin).args(args).current_dir(&root).output().unwrap();
            assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        };
        let det = ex.join("maze-det.toml");
        run(&["check", det.to_str().unwrap(), "--certificate", "cert.json", "--quiet"]);
        run(&["campaign", "run", "campaign.toml", "--out", "results", "--quiet"]);
        let sys = repo().join("configs/systems");
        let systems = ["maze-det.toml", "maze-nondet.toml", "double-integrator.toml"]
            .iter()
            .map(|n| ex.join(n))
            .chain(
                [
                    "frozenlake.toml",
                    "vcas.toml",
                    "spread-2.toml",
                    "blocks4-h16.toml",
                    "pi-tuned.toml",
                    "rnn-figure1.toml",
                ]
                .iter()
                .map(|n| sys.join(n)),
            )
            .filter(|p| std::process::Command::new(bin).arg("info").arg(p).output().unwrap().status.success())
            .collect();
        Fixture { _dir: dir, root, systems }
    })
}

/// Valid inputs for a positional argument, by what its help says it is.
fn valid_inputs(help: &str) -> Vec<PathBuf> {
    let f = &fixture().root;
    let ex = repo().join("examples");
    let h = help.to_lowercase();
    // Outputs first: only scratch paths are ever written.
    if h.contains("written") || h.contains("where") || h.contains("merge into") {
        vec![PathBuf::from("outdir")]
    } else if h.contains("system") {
        fixture().systems.clone()
    } else if h.contains("model") {
        vec![ex.join("networks/maze-2x8.nnet"), ex.join("networks/double-integrator.onnx")]
    } else if h.contains("certificate") {
        vec![f.join("cert.json")]
    } else if h.contains("campaign") {
        vec![f.join("campaign.toml")]
    } else if h.contains("suite") {
        vec![f.join("suite.toml")]
    } else if h.contains("results") {
        vec![PathBuf::from("results")]
    } else if h.contains("spec") {
        vec![f.join("maze.toml"), f.join("arena.toml")]
    } else {
        vec![PathBuf::from("outdir")]
    }
}

/// One case: a leaf command, a value for each positional, some of its flags with values, and
/// the damage done to the scratch files.
#[derive(Clone, Debug)]
struct Case {
    command: Index,
    positionals: Vec<(bool, Index, Index)>,
    flags: Vec<(Index, Index, Index)>,
    damage: u64,
}

fn cases() -> impl Strategy<Value = Case> {
    (
        any::<Index>(),
        prop::collection::vec((prop::bool::weighted(0.25), any::<Index>(), any::<Index>()), 3),
        prop::collection::vec((any::<Index>(), any::<Index>(), any::<Index>()), 0..5),
        any::<u64>(),
    )
        .prop_map(|(command, positionals, flags, damage)| Case { command, positionals, flags, damage })
}

/// The case's scratch directory (its working directory): the hostile files of `PATHS`, damaged
/// copies by `seed`, and the results store.
fn scratch(seed: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = std::ffi::CString::new(d.join("fifo").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(d.join("adir")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
    std::fs::write(d.join("empty"), "").unwrap();
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let garbage: Vec<u8> = (0..4096).map(|_| next() as u8).collect();
    std::fs::write(d.join("garbage.bin"), garbage).unwrap();
    let mut damaged = |bytes: Vec<u8>| -> Vec<u8> {
        let mut b = bytes;
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % (b.len() + 1);
            match next() % 3 {
                0 => b.truncate(at),
                1 if at < b.len() => b[at] = next() as u8,
                _ => b.insert(at, b"[{\"=9e999\n"[(next() % 10) as usize]),
            }
        }
        b
    };
    let ex = repo().join("examples");
    let sys = std::fs::read(ex.join("maze-det.toml")).unwrap();
    std::fs::write(d.join("damaged.toml"), damaged(sys.clone())).unwrap();
    std::fs::write(d.join("damaged.json"), damaged(std::fs::read(fixture().root.join("cert.json")).unwrap())).unwrap();
    std::fs::write(d.join("damaged.onnx"), damaged(std::fs::read(ex.join("networks/double-integrator.onnx")).unwrap()))
        .unwrap();
    let text = String::from_utf8(sys).unwrap().replace("networks/", &format!("{}/networks/", ex.display()));
    let huge: String = text.split(|c: char| c.is_ascii_digit()).collect::<Vec<_>>().join("9").replace("99", "1e308");
    std::fs::write(d.join("huge-numbers.toml"), huge).unwrap();
    std::fs::write(d.join("nested.toml"), format!("a = {}1{}\n", "[".repeat(50_000), "]".repeat(50_000))).unwrap();
    copy_dir(&fixture().root.join("results"), &d.join("results"));
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The command line of a case, and the wall-clock limit it gets.
fn command_line(leaf: &Leaf, case: &Case) -> (Vec<String>, f64) {
    let positionals: Vec<String> = leaf
        .positionals
        .iter()
        .zip(&case.positionals)
        .map(
            |(p, &(hostile, which, pool))| {
                if hostile { hostile_value(pool) } else { which.get(&valid_inputs(&p.help)).display().to_string() }
            },
        )
        .collect();
    // Flags as `--flag=VALUE` and the positionals after `--`, so that a value such as `-1` is
    // taken as one.
    let mut flags: Vec<(String, Option<String>)> = Vec::new();
    if !leaf.flags.is_empty() {
        for &(which, pick, pool) in &case.flags {
            let f = which.get(&leaf.flags);
            // Each flag once (clap refuses most flags given twice).
            if flags.iter().any(|(l, _)| *l == f.long) {
                continue;
            }
            flags.push((f.long.clone(), f.value.as_ref().map(|_| value_of(f, pick, pool))));
        }
    }
    let drawn = |flags: &[(String, Option<String>)], long: &str| flags.iter().any(|(l, _)| l == long);
    // `ctl` and `ltl` need a property or a formula: one of the system's when none is drawn.
    if leaf.flag("property").is_some() && !drawn(&flags, "property") && !drawn(&flags, "formula") {
        let names = positionals.first().map(|p| property_names(Path::new(p))).unwrap_or_default();
        if !names.is_empty() {
            flags.push(("property".into(), Some(names[(case.damage % names.len() as u64) as usize].clone())));
        }
    }
    for f in leaf.flags.iter().filter(|f| f.required) {
        if !drawn(&flags, &f.long) {
            let v = if ["input", "lo", "hi"].contains(&f.long.as_str()) { "0.3,0.6" } else { "1" };
            flags.push((f.long.clone(), Some(v.into())));
        }
    }
    let wall = match leaf.flag("timeout") {
        None => NO_LIMIT_WALL,
        Some(_) => match flags.iter().find(|(l, _)| l == "timeout").and_then(|(_, v)| v.clone()) {
            None => {
                flags.push(("timeout".into(), Some(DEFAULT_TIMEOUT.into())));
                DEFAULT_TIMEOUT.parse::<f64>().unwrap() + HANG_SLACK
            }
            // A limit the command may take literally: it must hold to it.
            Some(t) => match t.parse::<f64>() {
                Ok(s) if (0.0..=30.0).contains(&s) => s + HANG_SLACK,
                // A huge limit is no limit; a refused one ends at once.
                _ => NO_LIMIT_WALL,
            },
        },
    };
    let mut args = leaf.path.clone();
    args.extend(flags.into_iter().map(|(l, v)| match v {
        Some(v) => format!("--{l}={v}"),
        None => format!("--{l}"),
    }));
    if !positionals.is_empty() {
        args.push("--".into());
        args.extend(positionals);
    }
    (args, wall)
}

/// The names of the `[[property]]` tables of a system file (none when it is not one).
fn property_names(path: &Path) -> Vec<String> {
    let text = std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file() && m.len() < 1 << 20)
        .and_then(|_| std::fs::read_to_string(path).ok())
        .unwrap_or_default();
    let table: toml::Table = text.parse().unwrap_or_default();
    let properties = table.get("property").and_then(|p| p.as_array()).cloned().unwrap_or_default();
    properties.iter().filter_map(|p| p.get("name")?.as_str().map(str::to_string)).collect()
}

/// What a case's run must satisfy.
fn judge(args: &[String], run: &LimitedRun) -> Result<(), String> {
    let shown: Vec<String> = args
        .iter()
        .map(|a| if a.len() > 60 { format!("{}...({} bytes)", &a[..20], a.len()) } else { a.clone() })
        .collect();
    let what = format!(
        "trestle {}\nended {:?} after {:.1} s, peak {} MiB\nstderr: {}",
        shown.join(" "),
        run.ended,
        run.seconds,
        run.max_rss_mib,
        run.stderr.chars().take(2000).collect::<String>()
    );
    let code = match run.ended {
        Ended::Code(c) => c,
        Ended::Signal(s) => return Err(format!("killed by signal {s}: {what}")),
        Ended::Killed => return Err(format!("hang (killed by the harness): {what}")),
    };
    if !(0..=3).contains(&code) {
        return Err(format!("exit {code} is not 0, 1, 2 or 3: {what}"));
    }
    for bad in ["panicked", "internal error", "RUST_BACKTRACE"] {
        if run.stderr.contains(bad) || run.stdout.contains(bad) {
            return Err(format!("'{bad}' in the output: {what}"));
        }
    }
    if code == 3 && (run.stderr.contains("out of memory") || run.stdout.contains("out-of-memory")) {
        return Err(format!("out of memory within {BUDGET_MIB} MiB: {what}"));
    }
    if code == 2 {
        let json_message = serde_json::from_str::<serde_json::Value>(&run.stdout)
            .ok()
            .and_then(|j| j["error"]["message"].as_str().map(str::to_string));
        let message = json_message.unwrap_or_else(|| run.stderr.clone());
        if message.trim().trim_start_matches("error:").trim().len() < 8 {
            return Err(format!("exit 2 without naming the problem: {what}"));
        }
    }
    Ok(())
}

/// `PROPTEST_CASES`, or by default 200 cases within `DEFAULT_SECONDS` (the later ones are
/// skipped: a generator that trains networks takes half a minute, and CI's time is limited).
fn cases_wanted() -> (u32, Option<Duration>) {
    match std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()) {
        Some(n) => (n, None),
        None => (200, Some(DEFAULT_SECONDS)),
    }
}

const DEFAULT_SECONDS: Duration = Duration::from_secs(25);

#[test]
fn no_flag_value_or_small_file_crashes_hangs_or_runs_out_of_memory() {
    let mut tree = leaves(Vec::new());
    assert!(tree.len() >= 20, "the help lists the commands: {tree:?}");
    assert!(tree.iter().any(|l| l.path == ["campaign", "run"] && l.flag("jobs").is_some()), "{tree:?}");
    // Local runs may leave out the slow generators: FUZZ_FLAGS_SKIP=generate.
    if let Ok(skip) = std::env::var("FUZZ_FLAGS_SKIP") {
        tree.retain(|l| !l.path.iter().any(|w| *w == skip));
    }
    fixture();
    let (wanted, time_budget) = cases_wanted();
    let start = std::time::Instant::now();
    let config = Config {
        cases: wanted,
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        // Each case is a process run of up to a minute and a half: shrink briefly.
        max_shrink_iters: 64,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&cases(), |case| {
        if time_budget.is_some_and(|b| start.elapsed() > b) {
            return Ok(());
        }
        let leaf = case.command.get(&tree);
        let (args, wall) = command_line(leaf, &case);
        let dir = scratch(case.damage);
        let run = run_limited(&args, dir.path(), BUDGET_MIB << 20, Duration::from_secs_f64(wall));
        let verdict = judge(&args, &run);
        if let Some(log) = std::env::var_os("FUZZ_FLAGS_LOG") {
            let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
            let said = run.stderr.lines().next().unwrap_or_default().chars().take(100).collect::<String>();
            eprintln!("{:?} {:.1}s {}MiB: {} => {said}", run.ended, run.seconds, run.max_rss_mib, shown.join(" "));
            // A survey: every failure printed, none stops the run.
            if log == "survey" {
                if let Err(e) = verdict {
                    eprintln!("FAILURE {e}");
                }
                return Ok(());
            }
        }
        verdict.map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
