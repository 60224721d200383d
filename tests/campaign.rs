//! `trestle campaign` and `trestle suite` end to end, with the real binary as every job's child,
//! on the shipped 2x8 examples (each job takes a fraction of a second).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use trestle_campaign::{Store, load_suite};
use trestle_testkit::repo;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn trestle(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_trestle")).args(args).current_dir(repo()).output().expect("runs");
    Run {
        code: out.status.code().expect("exits normally"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn examples() -> PathBuf {
    std::fs::canonicalize(repo().join("examples")).unwrap()
}

/// A campaign over both examples: a 2-value matrix of Safe, check and synth, two repetitions.
fn campaign(dir: &Path, extra: &str) -> PathBuf {
    let text = format!(
        r#"[campaign]
name = "examples"
timeout = 60
repetitions = 2

[[systems]]
glob = "{ex}/maze-*.toml"
matrix = {{ "safe" = ["0.22 <= x <= 0.98 and 0.54 <= y <= 0.98", "0.2 <= x <= 1 and 0.5 <= y <= 1"] }}

[[runs]]
name = "bridge"
command = "check"
options = {{ threads = 1 }}

[[runs]]
name = "synth"
command = "synth"
{extra}"#,
        ex = examples().display()
    );
    let path = dir.join("campaign.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn explain_lists_systems_times_overrides_times_runs_times_repetitions() {
    let dir = tempfile::tempdir().unwrap();
    let file = campaign(dir.path(), "");
    let r = trestle(&["campaign", "explain", s(&file)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("campaign examples: 16 jobs"), "{}", r.stdout);
    assert!(r.stdout.contains("maze-det[safe=0.2 <= x <= 1 and 0.5 <= y <= 1] · synth (repetition 2; limit 60 s)"));
    assert!(r.stdout.contains("trestle check "));
    assert!(r.stdout.contains("--threads 1 --set 'safe=0.22 <= x <= 0.98 and 0.54 <= y <= 0.98' --json"));
    let shard = trestle(&["campaign", "explain", s(&file), "--shard", "2/3"]);
    assert!(shard.stdout.starts_with("campaign examples: 16 jobs, shard 2/3: 5 of them"), "{}", shard.stdout);
}

#[test]
fn malformed_campaign_files_are_input_errors_naming_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("[[runs]]\nname = \"x\"\ncommand = \"check\"\noptoins = {}\n", &["runs[0]", "optoins"][..]),
        (
            "[[runs]]\nname = \"x\"\ncommand = \"check\"\noptions = { methd = \"milp\" }\n",
            &["runs[0].options", "--methd"],
        ),
        ("[[runs]]\nname = \"x\"\ncommand = \"bounds\"\n", &["runs[0].command", "'bounds'"]),
        ("[[runs]]\nname = \"x\"\ncommand = \"check\"\ntimeout = -1\n", &["runs[0].timeout"]),
        ("[[runs]]\nname = \"x\"\ncommand = \"check\"\n[report]\ncolumnz = []\n", &["report", "columnz"]),
    ];
    for (runs, fragments) in cases {
        let text = format!(
            "[campaign]\nname = \"bad\"\n[[systems]]\nfile = \"{}/maze-det.toml\"\n{runs}",
            examples().display()
        );
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let r = trestle(&["campaign", "explain", s(&file)]);
        assert_eq!(r.code, 2, "{runs}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        for f in fragments {
            assert!(r.stderr.contains(f), "expected '{f}' in: {}", r.stderr);
        }
    }
}

#[test]
fn a_campaign_runs_into_its_store_then_reports_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let file = campaign(dir.path(), "[report]\ncolumns = [\"splits\"]\n");
    let out = dir.path().join("out");
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&out), "--jobs", "2", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("16 jobs (16 run now, 0 done before): 16 proven"), "{}", r.stdout);
    // A second --resume finds nothing left to do.
    let again = trestle(&["campaign", "run", s(&file), "--out", s(&out), "--resume", "--quiet"]);
    assert!(again.stdout.contains("16 jobs (0 run now, 16 done before)"), "{}", again.stdout);

    let report = trestle(&["campaign", "report", s(&out)]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    for f in
        ["report.md", "summary.csv", "results.csv", "time-vs-size.svg", "time-vs-size.png", "cactus.svg", "cactus.png"]
    {
        assert!(out.join("report").join(f).is_file(), "report/{f}");
    }
    let csv = std::fs::read_to_string(out.join("report/results.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "instance,bridge: verdict,bridge: time (s),bridge: splits,synth: verdict,synth: time (s),synth: splits"
    );
    assert_eq!(csv.lines().count(), 1 + 4, "one row per instance (system × matrix value)");
    assert!(csv.lines().skip(1).all(|l| l.contains(",safe,")), "{csv}");
    let svg = std::fs::read_to_string(out.join("report/time-vs-size.svg")).unwrap();
    assert!(svg.contains("hidden neurons") && svg.contains("bridge") && svg.contains("synth"), "axis label and legend");

    let export = trestle(&["campaign", "export", s(&out), "--format", "jsonl"]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let lines: Vec<Value> = export.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 16);
    assert!(lines.iter().all(|j| j["status"] == "proven" && j["verdict"] == "safe" && j["neurons"] == 16));
    assert!(lines.iter().all(|j| j["result"]["verdict"] == "safe"), "the child's JSON is kept");
    let csv = trestle(&["campaign", "export", s(&out)]);
    assert_eq!(csv.stdout.lines().count(), 17);
    assert!(csv.stdout.starts_with("run_id,run_kind,run_started,job_id,"));
}

/// A `[[systems]]` entry may take only some runs (`runs = [..]`, a name that is no run is an input
/// error), and `campaign export --format arch` writes ARCH-COMP's results.csv: the benchmark is
/// the instance's name, the instance its matrix values (or the run's name), `verified` for a
/// proof, `violated` for a refutation; a sampled-data system's job may run `synth --reach` (the
/// damped oscillator proven safe forever: its row's instance is the run's name, "forever"); the
/// shipped ARCH-COMP campaign expands to the 22 jobs of its 9 flows (TORA's twice: bounded and
/// forever) and 12 VCAS instances, each run by the command its kind takes.
#[test]
fn systems_take_only_their_runs_and_export_arch_writes_results_csv() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"[campaign]
name = "subset"
timeout = 60

[[systems]]
file = "{ex}/maze-det.toml"
name = "Maze"
matrix = {{ "safe" = ["0.22 <= x <= 0.98 and 0.54 <= y <= 0.98", "0.2 <= x <= 0.3 and 0.2 <= y <= 0.3"] }}
runs = ["bridge"]

[[systems]]
file = "{ex}/maze-nondet.toml"
name = "Nondet"
runs = ["synth"]

[[systems]]
file = "{flows}/damped-oscillator.toml"
name = "Damped"
runs = ["forever"]

[[runs]]
name = "bridge"
command = "check"
options = {{ threads = 1 }}

[[runs]]
name = "synth"
command = "synth"
options = {{ threads = 1 }}

[[runs]]
name = "forever"
command = "synth"
options = {{ reach = true, threads = 1 }}
"#,
        ex = examples().display(),
        flows = std::fs::canonicalize(repo().join("configs/systems/flow")).unwrap().display()
    );
    let file = dir.path().join("subset.toml");
    std::fs::write(&file, &text).unwrap();
    let explain = trestle(&["campaign", "explain", s(&file)]);
    assert!(explain.stdout.starts_with("campaign subset: 4 jobs"), "{}", explain.stdout);
    let out = dir.path().join("out");
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&out), "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let arch = trestle(&["campaign", "export", s(&out), "--format", "arch"]);
    assert_eq!(arch.code, 0, "{}", arch.stderr);
    let rows: Vec<Vec<&str>> = arch.stdout.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0], ["benchmark", "instance", "result", "time"]);
    let cells: Vec<[&str; 3]> = rows[1..].iter().map(|r| [r[0], r[1], r[2]]).collect();
    assert_eq!(
        cells,
        [
            ["Maze", "safe=0.22 <= x <= 0.98 and 0.54 <= y <= 0.98", "verified"],
            ["Maze", "safe=0.2 <= x <= 0.3 and 0.2 <= y <= 0.3", "violated"],
            ["Nondet", "synth", "verified"],
            ["Damped", "forever", "verified"],
        ],
        "{}",
        arch.stdout
    );
    assert!(rows[1..].iter().all(|r| r[3].parse::<f64>().is_ok_and(|t| t >= 0.0)), "{}", arch.stdout);

    std::fs::write(&file, text.replace(r#"runs = ["synth"]"#, r#"runs = ["synht"]"#)).unwrap();
    let bad = trestle(&["campaign", "explain", s(&file)]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("systems[1].runs") && bad.stderr.contains("'synht'"), "{}", bad.stderr);

    let shipped = trestle(&["campaign", "explain", "configs/campaigns/archcomp.toml"]);
    assert_eq!(shipped.code, 0, "{}", shipped.stderr);
    assert!(shipped.stdout.starts_with("campaign archcomp: 22 jobs"), "{}", shipped.stdout);
    assert!(shipped.stdout.contains("TORA · forever"), "{}", shipped.stdout);
    assert!(shipped.stdout.contains("VCAS-worst[hdot0=-22.5] · ctl"), "{}", shipped.stdout);
    assert!(shipped.stdout.contains("ACC · ltl-bpt"), "{}", shipped.stdout);
}

const SUITE: &str = r#"[suite]
name = "examples"
timeout = 60
slack = 0.0

[[instance]]
name = "det"
system = "EX/maze-det.toml"
expect = "safe"

[[instance]]
name = "nondet"
system = "EX/maze-nondet.toml"
expect = "safe"

[[instance]]
name = "nondet-synth"
command = "synth"
system = "EX/maze-nondet.toml"
expect = "safe"
"#;

fn suite(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("suite.toml");
    std::fs::write(&path, text.replace("EX", s(&examples()))).unwrap();
    path
}

/// A baseline store holding the rows of `from`'s latest run, changed by `edit`.
fn baseline(suite: &Path, from: &Path, to: &Path, edit: impl Fn(&mut trestle_campaign::JobRow)) {
    let source = Store::open(from).unwrap();
    let run = source.latest_run(Some("suite"), None, true).unwrap().unwrap();
    let plan = load_suite(suite, &|_| Ok(())).unwrap().plan(&run.tool_version).unwrap();
    let mut store = Store::create(to).unwrap();
    let id = store.begin_run(&plan, None, plan.jobs.len(), "baseline").unwrap();
    for mut row in source.jobs(run.run_id).unwrap() {
        edit(&mut row);
        store.record(id, &row, &run.tool_version).unwrap();
    }
    store.finish_run(id).unwrap();
}

#[test]
fn suite_run_passes_on_expected_verdicts_and_fails_on_a_baseline_with_a_flip_or_a_slowdown() {
    let dir = tempfile::tempdir().unwrap();
    let file = suite(dir.path(), SUITE);
    let first = dir.path().join("first");
    let r = trestle(&["suite", "run", s(&file), "--out", s(&first), "--quiet"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("# suite examples: PASS") && r.stdout.contains("3 instances, 0 failed"), "{}", r.stdout);

    // An honest baseline that was slower: same verdicts, nothing fails.
    let slower = dir.path().join("slower");
    baseline(&file, &first, &slower, |row| row.wall_seconds = 1000.0);
    let r = trestle(&["suite", "run", s(&file), "--out", s(&first), "--baseline", s(&slower), "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stdout);

    // A baseline in which det was refuted and nondet took a microsecond.
    let injected = dir.path().join("injected");
    baseline(&file, &first, &injected, |row| match row.instance.as_str() {
        "det" => {
            row.verdict = Some("not-inductive".into());
            row.status = "refuted".into();
        }
        "nondet" => row.wall_seconds = 1e-6,
        _ => {}
    });
    let r = trestle(&["suite", "run", s(&file), "--out", s(&first), "--baseline", s(&injected), "--quiet"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let md = &r.stdout;
    assert!(md.contains("# suite examples: FAIL") && md.contains("3 instances, 2 failed"), "{md}");
    assert!(
        md.contains("| instance | command | expected | verdict | time (s) | baseline verdict | baseline time (s) |")
    );
    assert!(md.contains("- det (check): verdict changed: not-inductive (refuted) → safe (proven)"), "{md}");
    assert!(md.contains("- nondet (check): slower: 0.00 s → "), "{md}");
    assert!(!md.contains("- nondet-synth"), "{md}");
    assert!(first.join("suite-report.md").is_file());
}

#[test]
fn suite_run_fails_on_a_wrong_verdict_or_an_erring_instance() {
    let dir = tempfile::tempdir().unwrap();
    let text = SUITE
        .replace(
            "name = \"det\"\nsystem = \"EX/maze-det.toml\"\nexpect = \"safe\"",
            "name = \"det\"\nsystem = \"EX/maze-det.toml\"\nexpect = \"not-inductive\"",
        )
        .replace(
            "name = \"nondet\"\nsystem = \"EX/maze-nondet.toml\"\n",
            "name = \"nondet\"\nsystem = \"EX/maze-nondet.toml\"\nset = { \"controller.model\" = \"missing.onnx\" }\n",
        );
    let file = suite(dir.path(), &text);
    let r = trestle(&["suite", "run", s(&file), "--out", s(&dir.path().join("out")), "--quiet", "--jobs", "2"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("- det (check): verdict safe (proven), expected not-inductive"), "{}", r.stdout);
    assert!(r.stdout.contains("- nondet (check): input-error, exit 2: "), "{}", r.stdout);
    assert!(r.stdout.contains("missing.onnx"), "{}", r.stdout);
}

#[test]
fn the_peer_maze_suite_names_the_papers_verdicts() {
    let suite = load_suite(&repo().join("configs/suites/peer-maze.toml"), &|_| Ok(()));
    let Some(models) = trestle_testkit::shared_models() else { return };
    let suite = suite.unwrap();
    assert_eq!(suite.instances.len(), 32);
    for si in &suite.instances {
        let model = &si.instance.overrides[0].1;
        assert!(si.instance.cwd.join(model).is_file(), "{model}");
        let not_inductive =
            si.command == "check" && model.ends_with("det/maze_2d_128x128.onnx") && !model.contains("nondet");
        assert_eq!(
            si.expect.as_deref(),
            Some(if not_inductive { "not-inductive" } else { "safe" }),
            "{}",
            si.instance.name
        );
    }
    assert!(models.is_dir());
}

fn slurm_campaign(dir: &Path) -> (PathBuf, PathBuf, Run) {
    let file = campaign(dir, "");
    let out = dir.join("out");
    let r = trestle(&[
        "campaign",
        "slurm",
        s(&file),
        "--shards",
        "3",
        "--partition",
        "debug",
        "--time",
        "0:10:00",
        "--mem",
        "1G",
        "--out",
        s(&out),
    ]);
    (file, out, r)
}

#[test]
fn slurm_writes_a_job_array_of_shards_and_a_merge_that_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let (file, out, r) = slurm_campaign(dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let array = std::fs::read_to_string(out.join("slurm/array.sbatch")).unwrap();
    for line in ["#SBATCH --array=1-3", "#SBATCH --partition=debug", "#SBATCH --time=0:10:00", "#SBATCH --mem=1G"] {
        assert!(array.contains(line), "{line} in:\n{array}");
    }
    let run_line = format!(
        "campaign run {} --out {}/shards/\"$SLURM_ARRAY_TASK_ID\" --shard \"$SLURM_ARRAY_TASK_ID/3\"",
        s(&file),
        s(&out)
    );
    assert!(array.contains(&run_line), "{array}");
    assert!(array.contains("--resume"), "a requeued task continues its shard");
    let merge = std::fs::read_to_string(out.join("slurm/merge.sbatch")).unwrap();
    assert!(merge.contains(&format!("campaign merge {} \"${{shards[@]}}\"", s(&out))), "{merge}");
    let submit = std::fs::read_to_string(out.join("slurm/submit.sh")).unwrap();
    assert!(submit.contains("--dependency=afterany:\"$array\""), "{submit}");
    let too_many = trestle(&["campaign", "slurm", s(&file), "--shards", "17", "--out", s(&out)]);
    assert_eq!(too_many.code, 2, "{}", too_many.stderr);
}

/// Submits a campaign to the Slurm of this machine (`scripts/slurm-local.sh start` sets one up);
/// skipped where there is none.
#[test]
fn slurm_runs_the_shards_and_merges_them_on_a_real_cluster() {
    let up = Command::new("sinfo").args(["-h", "-o", "%t"]).output();
    if !up.as_ref().is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("idle")) {
        eprintln!("skipped: no Slurm cluster with an idle node here (scripts/slurm-local.sh start sets one up)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (file, out, r) = slurm_campaign(dir.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let submitted = Command::new(out.join("slurm/submit.sh")).current_dir(dir.path()).output().unwrap();
    assert!(submitted.status.success(), "{}", String::from_utf8_lossy(&submitted.stderr));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    // The merge job merges, then writes the report: wait for the report.
    while !out.join("report/report.md").is_file() {
        assert!(
            std::time::Instant::now() < deadline,
            "the merge job did not finish; see {}",
            out.join("slurm").display()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let store = Store::open(&out).unwrap();
    let run = store.latest_run(None, None, true).unwrap().expect("a finished merged run");
    let ids: std::collections::BTreeSet<String> =
        store.jobs(run.run_id).unwrap().into_iter().map(|j| j.job_id).collect();
    let explain = trestle(&["campaign", "explain", s(&file)]);
    let planned: std::collections::BTreeSet<String> =
        explain.stdout.lines().skip(1).step_by(2).map(|l| l.split_whitespace().nth(1).unwrap().to_string()).collect();
    assert_eq!(planned.len(), 16);
    assert_eq!(ids, planned, "the merged store holds every job of the campaign once");
}

/// Issue 34: `campaign run` and `suite run` had no limit on the whole run and no `--json`. With
/// `--timeout`, no job starts after it and the running one is killed and left unfinished (not
/// recorded as its own timeout); the finished jobs stay in the store, `--resume` runs the rest,
/// and the run ends unknown for the time limit (exit 3) in the result envelope of every command.
#[test]
fn a_run_of_many_jobs_stops_at_its_time_limit_keeping_what_finished() {
    let dir = tempfile::tempdir().unwrap();
    // The check refutes the candidate in a fraction of a second; the fine synthesis runs for
    // minutes (it has no --timeout of its own, only the job's limit of 60 s).
    let file = dir.path().join("limited.toml");
    let system = examples().join("double-integrator.toml");
    let slow = r#"options = { resolution = 300, "max-boxes" = 100000 }"#;
    std::fs::write(
        &file,
        format!(
            "[campaign]\nname = \"limited\"\ntimeout = 60\n\n[[systems]]\nfile = \"{}\"\n\n\
             [[runs]]\nname = \"quick\"\ncommand = \"check\"\n\n[[runs]]\nname = \"slow\"\ncommand = \"synth\"\n{slow}\n",
            system.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&out), "--timeout", "4", "--json"]);
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).expect("one JSON object");
    assert_eq!(
        (&j["status"], &j["reason_kind"], &j["verdict"]),
        (&"unknown".into(), &"time-limit".into(), &"incomplete".into()),
        "{j}"
    );
    assert_eq!((&j["stats"]["jobs"], &j["stats"]["ran"]), (&2.into(), &1.into()), "{j}");
    assert_eq!(j["stats"]["by_status"], serde_json::json!({ "refuted": 1 }), "{j}");
    assert!(j["details"]["resume"].as_str().is_some_and(|c| c.ends_with("--resume")), "{j}");
    let store = Store::open(&out).unwrap();
    let run = store.latest_run(None, None, false).unwrap().unwrap();
    let rows = store.jobs(run.run_id).unwrap();
    assert_eq!(rows.iter().map(|r| r.run_name.as_str()).collect::<Vec<_>>(), ["quick"], "the cut job is not recorded");

    let suite_file = dir.path().join("suite.toml");
    std::fs::write(
        &suite_file,
        format!(
            "[suite]\nname = \"limited\"\ntimeout = 60\n\n[[instance]]\nname = \"slow\"\ncommand = \"synth\"\n\
             system = \"{}\"\nexpect = \"safe\"\n{slow}\n",
            system.display()
        ),
    )
    .unwrap();
    let r = trestle(&["suite", "run", s(&suite_file), "--out", s(&dir.path().join("suite")), "--timeout", "2"]);
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("unknown: time limit reached: 0 of 1 instances' jobs finished; the suite is not judged"),
        "{}",
        r.stdout
    );
}
