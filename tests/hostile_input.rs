//! Regressions of issue 39 (items 1-3, 7, 10-16: the campaign runner, suites, Slurm scripts and
//! input files under hostile input, limits and faults) and issue 34, item 2 (evidence is a
//! status of its own), each through the binary where the user meets it. Exit codes: 0 done,
//! 1 refuted (a suite failed), 2 input error, 3 unknown (out of memory included), 4 internal.

mod common;

use common::cli::{s, trestle};
use serde_json::Value;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use trestle_campaign::Store;
use trestle_testkit::repo;

fn examples() -> PathBuf {
    std::fs::canonicalize(repo().join("examples")).unwrap()
}

/// `trestle ARGS` in `dir`, killed after 60 s (a run that blocks on a FIFO would otherwise hang
/// the test): exit code (`None` for a signal or the watchdog), stdout, stderr.
fn run_in(dir: &Path, args: &[&str]) -> common::Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    common::run_with_limit(env!("CARGO_BIN_EXE_trestle"), &args, dir, Duration::from_secs(60))
}

fn expect_input_error(r: &common::Run, fragments: &[&str]) {
    assert!(!r.timed_out, "hung ({:.1} s): {}", r.seconds, r.stderr);
    assert_eq!(r.code, Some(2), "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked") && !r.stderr.contains("internal error"), "{}", r.stderr);
    for f in fragments {
        assert!(r.stderr.contains(f), "expected '{f}' in: {}", r.stderr);
    }
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().expect("mkfifo runs").success());
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// A campaign of one quick job (`check` on the deterministic maze example).
fn tiny_campaign(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "[campaign]\nname = \"{name}\"\ntimeout = 60\n\n[[systems]]\nfile = \"{}/maze-det.toml\"\n\n\
         [[runs]]\nname = \"bridge\"\ncommand = \"check\"\noptions = {{ threads = 1 }}\n",
        examples().display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A results directory holding one finished run of [`tiny_campaign`].
fn tiny_store(dir: &Path) -> PathBuf {
    let file = tiny_campaign(dir, "tiny");
    let out = dir.join("out");
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&out), "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    out
}

// ---------- item 1: every file through the atomic writer ----------

#[test]
fn exports_reports_and_scripts_never_replace_special_files_and_fail_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let out = tiny_store(d.path());
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    let somedir = d.path().join("somedir");
    std::fs::create_dir(&somedir).unwrap();
    for (target, want) in [
        (fifo.clone(), "it is a FIFO (named pipe), not a regular file"),
        (PathBuf::from("/dev/null"), "it is a character device"),
        (somedir.clone(), "it is a directory"),
        (PathBuf::from("/proc/trestle-export.csv"), "cannot write /proc/trestle-export.csv"),
    ] {
        let r = run_in(&repo(), &["campaign", "export", s(&out), "-o", s(&target)]);
        expect_input_error(&r, &[&format!("cannot write {}", target.display()), want]);
    }
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo_like());
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device_like());
    assert_eq!(names(&somedir), Vec::<String>::new(), "no temporary file left in the directory");
    assert!(!names(d.path()).iter().any(|n| n.contains(".tmp")), "{:?}", names(d.path()));
    // A symbolic link is written through: the link stays, its target gets the export.
    let real = d.path().join("real.csv");
    std::fs::write(&real, "old").unwrap();
    let link = d.path().join("link.csv");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = trestle(&["campaign", "export", s(&out), "-o", s(&link)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().starts_with("run_id,"));
    // A report into a directory that is a FIFO, and Slurm scripts into one.
    let r = run_in(&repo(), &["campaign", "report", s(&out), "--out", s(&fifo)]);
    expect_input_error(&r, &["cannot"]);
    let slurm_out = d.path().join("slurm-out");
    std::fs::create_dir_all(slurm_out.join("slurm")).unwrap();
    mkfifo(&slurm_out.join("slurm/array.sbatch"));
    let r = run_in(
        &repo(),
        &["campaign", "slurm", s(&d.path().join("tiny.toml")), "--shards", "1", "--out", s(&slurm_out)],
    );
    expect_input_error(&r, &["array.sbatch", "FIFO"]);
    assert!(std::fs::symlink_metadata(slurm_out.join("slurm/array.sbatch")).unwrap().file_type().is_fifo_like());
}

trait FileTypeLike {
    fn is_fifo_like(&self) -> bool;
    fn is_char_device_like(&self) -> bool;
}

impl FileTypeLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_fifo(self)
    }
    fn is_char_device_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_char_device(self)
    }
}

// ---------- item 2: two instances, one name ----------

#[test]
fn two_different_instances_under_one_name_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for sub in ["a", "b"] {
        std::fs::create_dir(d.path().join(sub)).unwrap();
        let text = std::fs::read_to_string(examples().join("maze-det.toml")).unwrap();
        // Different contents, the same stem.
        let text = text.replace("networks/maze-2x8.nnet", &format!("{}/networks/maze-2x8.nnet", examples().display()));
        std::fs::write(d.path().join(sub).join("x.toml"), format!("{text}\n# {sub}\n")).unwrap();
    }
    let file = d.path().join("c.toml");
    std::fs::write(
        &file,
        "[campaign]\nname = \"c\"\n[[systems]]\nglob = \"a/*.toml\"\n[[systems]]\nglob = \"b/*.toml\"\n\
         [[runs]]\nname = \"r\"\ncommand = \"check\"\n",
    )
    .unwrap();
    let r = run_in(&repo(), &["campaign", "explain", s(&file)]);
    expect_input_error(&r, &["systems[1]", "two different instances are named 'x'", "a/x.toml", "b/x.toml"]);
    // Matrix values that share a file stem are told apart by their whole text, not refused.
    std::fs::create_dir(d.path().join("nets")).unwrap();
    std::fs::copy(examples().join("networks/maze-2x8.nnet"), d.path().join("nets/maze-2x8.nnet")).unwrap();
    let (one, two) = (examples().join("networks/maze-2x8.nnet"), d.path().join("nets/maze-2x8.nnet"));
    std::fs::write(
        &file,
        format!(
            "[campaign]\nname = \"c\"\n[[systems]]\nfile = \"a/x.toml\"\n\
             matrix = {{ \"controller.model\" = [\"{}\", \"{}\"] }}\n[[runs]]\nname = \"r\"\ncommand = \"check\"\n",
            one.display(),
            two.display()
        ),
    )
    .unwrap();
    let r = run_in(&repo(), &["campaign", "explain", s(&file)]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for model in [&one, &two] {
        assert!(r.stdout.contains(&format!("x[model={}] · r", model.display())), "{}", r.stdout);
    }
}

// ---------- item 3: one writer per store ----------

#[test]
fn a_second_writer_of_a_results_store_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let out = tiny_store(d.path());
    let file = d.path().join("tiny.toml");
    let other = d.path().join("other");
    assert_eq!(trestle(&["campaign", "run", s(&file), "--out", s(&other), "--quiet"]).code, 0);
    // Another process holds the store (as a running `campaign run` does).
    let held = atomic_output::lock::try_lock(&out.join("results.sqlite.lock")).unwrap().expect("free");
    let r = run_in(&repo(), &["campaign", "run", s(&file), "--out", s(&out), "--resume", "--quiet"]);
    expect_input_error(&r, &["another trestle process is writing to the results store", s(&out), "--out"]);
    let suite = d.path().join("suite.toml");
    std::fs::write(
        &suite,
        format!(
            "[suite]\nname = \"s\"\n[[instance]]\nname = \"i\"\nsystem = \"{}/maze-det.toml\"\n",
            examples().display()
        ),
    )
    .unwrap();
    let r = run_in(&repo(), &["suite", "run", s(&suite), "--out", s(&out), "--quiet"]);
    expect_input_error(&r, &["another trestle process"]);
    let r = run_in(&repo(), &["campaign", "merge", s(&out), s(&other)]);
    expect_input_error(&r, &["another trestle process"]);
    // Reading is not writing: reports and exports go on.
    assert_eq!(trestle(&["campaign", "export", s(&out)]).code, 0);
    drop(held);
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&out), "--resume", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("(0 run now, 1 done before)"), "{}", r.stdout);
    // Two runs at once: one runs, the other is refused; the store holds each job once.
    let slow = d.path().join("slow.toml");
    std::fs::write(
        &slow,
        std::fs::read_to_string(&file).unwrap().replace("name = \"tiny\"", "name = \"slow\"\nrepetitions = 6"),
    )
    .unwrap();
    let out2 = d.path().join("out2");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_trestle"))
            .args(["campaign", "run", s(&slow), "--out", s(&out2), "--resume", "--quiet", "--jobs", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let codes = [a.status.code(), b.status.code()];
    assert!(codes.iter().all(|c| matches!(c, Some(0) | Some(2))), "{codes:?}");
    for o in [&a, &b] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("UNIQUE constraint") && !err.contains("internal"), "{err}");
    }
    let store = Store::open(&out2).unwrap();
    let jobs: usize = store.runs().unwrap().iter().map(|r| store.jobs(r.run_id).unwrap().len()).sum();
    assert_eq!(jobs, 6, "every job once");
}

// ---------- item 7: out of memory ----------

/// `trestle ARGS` with its address space limited to `mib` MiB (as `prlimit --as` does).
fn run_limited(mib: u64, args: &[&str], arena: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trestle"));
    cmd.args(args).current_dir(repo()).stdin(Stdio::null());
    match arena {
        Some(n) => cmd.env("MALLOC_ARENA_MAX", n),
        None => cmd.env_remove("MALLOC_ARENA_MAX"),
    };
    let bytes = mib << 20;
    // SAFETY: setrlimit is async-signal-safe; the struct is built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// A tiny check under an address-space limit ended with "internal error" (a Z3 context that
/// could not be created: the z3 crate's unwrap), sometimes with SIGSEGV or SIGABRT inside Z3.
/// Now every limit gives the verdict, or "out of memory" with exit 3; below what the loader
/// needs, exit 127. Never exit 4, never a crash (Rust's own "memory allocation of N bytes failed"
/// abort aside, which says what happened).
#[test]
fn a_check_under_any_memory_limit_proves_or_says_out_of_memory() {
    let mut out_of_memory = 0;
    for mib in [90, 120, 150, 200, 250, 300, 400, 500, 600, 800] {
        for arena in [None, Some("2")] {
            let o = run_limited(mib, &["check", "examples/maze-det.toml", "--json"], arena);
            let stderr = String::from_utf8_lossy(&o.stderr);
            let what = format!("{mib} MiB, arenas {arena:?}: {:?}\n{stderr}", o.status);
            match o.status.code() {
                Some(0) => {
                    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
                    assert_eq!(j["verdict"], "safe", "{what}");
                }
                Some(3) => {
                    assert!(stderr.contains("error: out of memory: "), "{what}");
                    let j: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
                    assert_eq!(j["error"]["kind"], "out-of-memory", "{what}");
                    out_of_memory += 1;
                }
                Some(127) => assert!(mib < 150 && stderr.contains("error while loading shared libraries"), "{what}"),
                // Rust's own allocation failure: it aborts, saying so (no hook on stable Rust).
                None if o.status.signal() == Some(libc::SIGABRT) && stderr.contains("memory allocation of") => {}
                _ => panic!("{what}"),
            }
        }
    }
    assert!(out_of_memory > 0, "no limit was low enough to run out of memory");
}

/// A campaign job with a memory limit too small for it was recorded as `error`; one with room
/// proves the system (the runner gives its children MALLOC_ARENA_MAX=2, so 1 GiB is room).
#[test]
fn a_campaign_records_a_job_out_of_memory_as_memout() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("m.toml");
    std::fs::write(
        &file,
        format!(
            "[campaign]\nname = \"m\"\ntimeout = 60\n[[systems]]\nfile = \"{}/maze-det.toml\"\n\
             [[runs]]\nname = \"small\"\ncommand = \"check\"\nmemory = \"150MiB\"\n\
             [[runs]]\nname = \"room\"\ncommand = \"check\"\nmemory = \"1GiB\"\noptions = {{ threads = 1 }}\n",
            examples().display()
        ),
    )
    .unwrap();
    let out = d.path().join("out");
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&out), "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let store = Store::open(&out).unwrap();
    let run = store.latest_run(None, None, true).unwrap().unwrap();
    let jobs = store.jobs(run.run_id).unwrap();
    let job = |name: &str| jobs.iter().find(|j| j.run_name == name).unwrap();
    assert_eq!(job("small").status, "memout", "{:?}", job("small").reason);
    assert!(job("small").reason.as_deref().unwrap().contains("out of memory"), "{:?}", job("small").reason);
    assert_eq!((job("room").status.as_str(), job("room").verdict.as_deref()), ("proven", Some("safe")));
}

// ---------- items 10 and 11: sizes and job counts ----------

#[test]
fn campaign_sizes_are_capped_and_explain_ends_at_once() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(tiny_campaign(d.path(), "big")).unwrap();
    let file = d.path().join("big.toml");
    std::fs::write(&file, base.replace("timeout = 60", "timeout = 60\nrepetitions = 4000000000")).unwrap();
    let r = run_in(&repo(), &["campaign", "explain", s(&file)]);
    expect_input_error(&r, &["campaign.repetitions", "between 1 and 1000"]);
    let matrix: Vec<String> = (0..10).map(|k| format!("\"constants.c{k}\" = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]")).collect();
    std::fs::write(&file, format!("{base}\n[matrix]\n{}\n", matrix.join("\n"))).unwrap();
    let r = run_in(&repo(), &["campaign", "explain", s(&file)]);
    expect_input_error(&r, &["systems[0]", "more than 100000 jobs"]);
    assert!(r.seconds < 30.0, "{} s", r.seconds);
}

#[test]
fn job_counts_beyond_the_cores_are_capped_with_a_warning_and_zero_names_its_flag() {
    let d = tempfile::tempdir().unwrap();
    let file = tiny_campaign(d.path(), "jobs");
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&d.path().join("out")), "--jobs", "10000", "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("warning: --jobs 10000 is more than 4 per core"), "{}", r.stderr);
    let r = trestle(&["campaign", "run", s(&file), "--out", s(&d.path().join("out")), "--jobs", "0"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--jobs must be at least 1"), "{}", r.stderr);
    let r = trestle(&["ctl", "examples/maze-det.toml", "--formula", "AX (x >= 0)", "--jobs", "0"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--jobs must be at least 1") && !r.stderr.contains("--threads"), "{}", r.stderr);
}

// ---------- item 12: input files are bounded regular files ----------

#[test]
fn fifos_and_devices_given_as_input_files_are_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("input.toml");
    mkfifo(&fifo);
    let system = examples().join("maze-det.toml");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["check".into(), "@".into()], "cannot read the system file"),
        (vec!["info".into(), "@".into()], "cannot read the system file"),
        (vec!["certify".into(), "@".into(), system.display().to_string()], "cannot read"),
        (vec!["campaign".into(), "explain".into(), "@".into()], "cannot read the file"),
        (
            vec!["suite".into(), "run".into(), "@".into(), "--out".into(), d.path().join("o").display().to_string()],
            "cannot read the file",
        ),
        (vec!["maze".into(), "generate".into(), "@".into(), d.path().join("m").display().to_string()], "input.toml"),
        (vec!["arena".into(), "generate".into(), "@".into(), d.path().join("a").display().to_string()], "input.toml"),
    ];
    for (args, fragment) in &cases {
        for (input, kind) in [
            (fifo.clone(), "it is a FIFO (named pipe), not a regular file"),
            (PathBuf::from("/dev/zero"), "it is a character device"),
        ] {
            let args: Vec<String> =
                args.iter().map(|a| if a == "@" { input.display().to_string() } else { a.clone() }).collect();
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = run_in(&repo(), &refs);
            let fragment = if input.ends_with("zero") { "/dev/zero" } else { fragment };
            expect_input_error(&r, &[fragment, kind]);
        }
    }
    // A campaign naming a FIFO as a system file says which entry.
    let file = d.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            "[campaign]\nname = \"c\"\n[[systems]]\nfile = \"{}\"\n[[runs]]\nname = \"r\"\ncommand = \"check\"\n",
            fifo.display()
        ),
    )
    .unwrap();
    expect_input_error(&run_in(&repo(), &["campaign", "explain", s(&file)]), &["systems[0].file", "FIFO"]);
}

// ---------- item 13: Slurm scripts ----------

/// A campaign file, a working directory and a results directory whose paths hold quotes, `$()`,
/// backticks and spaces; `--partition` with a newline. Nothing in the scripts may run a command
/// of the user's text: `bash -n` accepts them, submitting with a fake `sbatch` creates no marker,
/// and the scripts themselves, run with a fake Slurm environment, run the campaign and merge it.
#[test]
fn slurm_scripts_quote_every_path_and_refuse_hostile_values() {
    let d = tempfile::tempdir().unwrap();
    // A directory name holds no '/': the injected commands touch MARKER in whatever directory they
    // would run in (checked in every one the scripts use).
    let hostile = "we'ird \"dir\" $(touch MARKER) `touch MARKER`";
    let dir = d.path().join(hostile);
    std::fs::create_dir(&dir).unwrap();
    let file = tiny_campaign(&dir, "slurmy");
    let out = dir.join("out $(touch x)");
    let slurm = |extra: &[&str]| {
        let mut args = vec!["campaign", "slurm", s(&file), "--shards", "1", "--out", s(&out)];
        args.extend_from_slice(extra);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_trestle"));
        cmd.args(&args).current_dir(&dir).output().unwrap()
    };
    for bad in ["debug\n#SBATCH --wrap=touch x", "a'b", "$(touch x)", "`touch x`", "a b"] {
        let o = slurm(&["--partition", bad]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("--partition") && err.contains("letters, digits"), "{err}");
    }
    let o = slurm(&["--partition", "debug", "--time", "0:10:00", "--mem", "1G"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let scripts = out.join("slurm");
    for name in ["array.sbatch", "merge.sbatch", "submit.sh"] {
        let check = Command::new("bash").arg("-n").arg(scripts.join(name)).output().unwrap();
        assert!(check.status.success(), "{name}: {}", String::from_utf8_lossy(&check.stderr));
        let text = std::fs::read_to_string(scripts.join(name)).unwrap();
        for line in text.lines().filter(|l| l.starts_with('#')) {
            assert!(!line.contains("touch"), "a user's text in a comment or #SBATCH line of {name}: {line}");
        }
    }
    // Submitting: a fake sbatch records its arguments, one per line, and prints a job id.
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let record = d.path().join("sbatch-args");
    std::fs::write(
        bin.join("sbatch"),
        format!("#!/bin/bash\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{}'; done\necho 17\n", record.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("sbatch"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let submitted = Command::new(scripts.join("submit.sh")).env("PATH", &path).current_dir(&dir).output().unwrap();
    assert!(submitted.status.success(), "{}", String::from_utf8_lossy(&submitted.stderr));
    let args = std::fs::read_to_string(&record).unwrap();
    assert!(args.lines().any(|l| l == format!("--output={}", scripts.join("shard-%a.log").display())), "{args}");
    assert!(args.lines().any(|l| l == scripts.join("array.sbatch").display().to_string()), "{args}");
    // The shard and the merge, as Slurm would run them.
    let shard = Command::new("bash")
        .arg(scripts.join("array.sbatch"))
        .env("SLURM_ARRAY_TASK_ID", "1")
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(shard.status.success(), "{}", String::from_utf8_lossy(&shard.stderr));
    let merged = Command::new("bash").arg(scripts.join("merge.sbatch")).current_dir(d.path()).output().unwrap();
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    assert!(out.join("report/report.md").is_file());
    for place in [d.path(), dir.as_path(), out.as_path(), &scripts] {
        for name in ["MARKER", "x"] {
            assert!(!place.join(name).exists(), "a command of the user's text ran: {}", place.join(name).display());
        }
    }
}

// ---------- item 14: names are plain names ----------

#[test]
fn campaign_and_suite_names_must_be_plain_names() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(tiny_campaign(d.path(), "plain")).unwrap();
    let file = d.path().join("named.toml");
    let suite = d.path().join("suite.toml");
    let suite_text = |name: &str| {
        format!(
            "[suite]\nname = \"{name}\"\n[[instance]]\nname = \"i\"\nsystem = \"{}/maze-det.toml\"\n",
            examples().display()
        )
    };
    for bad in ["/somewhere/x", "../../x", "a b", "", "x\\ny"] {
        std::fs::write(&file, base.replace("name = \"plain\"", &format!("name = \"{bad}\""))).unwrap();
        let r = trestle(&["campaign", "explain", s(&file)]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("campaign.name") && r.stderr.contains("letters, digits"), "{}", r.stderr);
        std::fs::write(&suite, suite_text(bad)).unwrap();
        let r = trestle(&["suite", "run", s(&suite), "--out", s(&d.path().join("given")), "--quiet"]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("suite.name"), "{}", r.stderr);
    }
    // Without --out the name made the path: `../../x` wrote outside `results/`.
    let cwd = d.path().join("w/a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(&suite, suite_text("../../x")).unwrap();
    let r = run_in(&cwd, &["suite", "run", s(&suite), "--quiet"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(!cwd.join("results/x").exists() && !cwd.join("x").exists());
}

// ---------- items 15 and 16: what parse errors quote ----------

#[test]
fn parse_errors_quote_a_short_printable_excerpt_and_never_a_secret() {
    let d = tempfile::tempdir().unwrap();
    // A file that is not a system file (no .toml), as /etc/shadow is.
    let shadow = d.path().join("shadow");
    std::fs::write(&shadow, "root:$y$j9T$SECRETHASH:19000:0:99999:7:::\n").unwrap();
    let r = trestle(&["check", s(&shadow)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("malformed TOML at line 1, column ") && !r.stderr.contains("SECRET"), "{}", r.stderr);
    // A 200 KB line with a control character: the message stays short and printable.
    let long = d.path().join("long.toml");
    std::fs::write(&long, format!("x = [{}\u{1b}[2J", "1, ".repeat(70_000))).unwrap();
    let r = trestle(&["check", s(&long)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.len() < 1000 && !r.stderr.contains('\u{1b}'), "{} bytes: {}", r.stderr.len(), r.stderr);
    assert!(r.stderr.contains("…"), "{}", r.stderr);
    // Campaign and suite files likewise.
    let c = d.path().join("c.toml");
    std::fs::write(&c, format!("[campaign]\nname = \"{}\u{7}", "n".repeat(200_000))).unwrap();
    let r = trestle(&["campaign", "explain", s(&c)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.len() < 1000 && !r.stderr.contains('\u{7}'), "{} bytes", r.stderr.len());
    // A campaign job on such a file stores no secret.
    let campaign = d.path().join("leak.toml");
    std::fs::write(
        &campaign,
        format!("[campaign]\nname = \"leak\"\n[[systems]]\nfile = \"{}\"\nname = \"shadow\"\n[[runs]]\nname = \"r\"\ncommand = \"check\"\n", shadow.display()),
    )
    .unwrap();
    let out = d.path().join("out");
    let r = trestle(&["campaign", "run", s(&campaign), "--out", s(&out), "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let export = trestle(&["campaign", "export", s(&out), "--format", "jsonl"]);
    assert!(export.stdout.contains("input-error") && !export.stdout.contains("SECRET"), "{}", export.stdout);
}

// ---------- item 16: messages ----------

#[test]
fn suites_refuse_a_verdict_their_command_cannot_give() {
    let d = tempfile::tempdir().unwrap();
    let suite = d.path().join("suite.toml");
    std::fs::write(
        &suite,
        format!(
            "[suite]\nname = \"s\"\n[[instance]]\nname = \"i\"\nsystem = \"{}/maze-det.toml\"\nexpect = \"maybe\"\n",
            examples().display()
        ),
    )
    .unwrap();
    let out = d.path().join("out");
    let r = trestle(&["suite", "run", s(&suite), "--out", s(&out), "--quiet"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("instance[0].expect") && r.stderr.contains("'maybe' is not a verdict of check"),
        "{}",
        r.stderr
    );
    assert!(!out.exists(), "nothing ran");
}

/// A campaign interrupted with SIGINT said "stopped without a verdict"; it must say how to go on.
#[test]
fn an_interrupted_campaign_says_how_to_resume() {
    let d = tempfile::tempdir().unwrap();
    let system = d.path().join("endless.toml");
    std::fs::write(
        &system,
        "init = \"0.3 <= x <= 0.4 and 0.6 <= y <= 0.7\"\nsafe = \"-1 <= x <= 2 and -1 <= y <= 2\"\n\
         invariant = \"0 <= x <= 1 and 0 <= y <= 1\"\n[state]\nx = { type = \"real\" }\ny = { type = \"real\" }\n\
         [networks.id]\nlayers = [{ weights = [[1.0, 0.0], [0.0, 1.0]], bias = [0.0, 0.0], activation = \"identity\" }]\n\
         [controller]\nnetwork = \"id\"\nactions = [\"a0\", \"a1\"]\n[step]\nx = \"a0\"\ny = \"a1\"\n",
    )
    .unwrap();
    let file = d.path().join("endless-campaign.toml");
    std::fs::write(
        &file,
        "[campaign]\nname = \"endless\"\ntimeout = 120\n[[systems]]\nfile = \"endless.toml\"\n[[runs]]\nname = \"r\"\n\
         command = \"check\"\noptions = { no_fast_path = true, no_exact_leaf = true, min_width = \"1e-12\", \
         max_splits = \"1000000000000\", threads = 1 }\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_trestle"))
        .args(["campaign", "run", s(&file), "--out", s(&out), "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the job runs (the store exists).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !out.join("results.sqlite").exists() {
        assert!(std::time::Instant::now() < deadline, "the campaign did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted by SIGINT: the campaign stopped"), "{err}");
    assert!(err.contains(&format!("--out {} --resume", s(&out))), "{err}");
    // The lock went with the process.
    assert!(atomic_output::lock::try_lock(&out.join("results.sqlite.lock")).unwrap().is_some());
}

// ---------- issue 34, item 2: evidence ----------

#[test]
fn evidence_is_stored_judged_and_compared_as_evidence() {
    let d = tempfile::tempdir().unwrap();
    let suite = |method: &str, expect: &str| {
        let path = d.path().join("suite.toml");
        std::fs::write(
            &path,
            format!(
                "[suite]\nname = \"pi\"\ntimeout = 60\n[[instance]]\nname = \"g10\"\ncommand = \"ltl\"\n\
                 system = \"{}/configs/systems/pi-tuned.toml\"\n\
                 options = {{ formula = \"G<=10 (-0.5 <= x <= 0.5)\", method = \"{method}\" }}\n{expect}\n",
                std::fs::canonicalize(repo()).unwrap().display()
            ),
        )
        .unwrap();
        path
    };
    // RMILP's "true" is floating-point evidence (exit 3): a suite expecting "true" passes.
    let out = d.path().join("out");
    let r = trestle(&["suite", "run", s(&suite("rmilp", "expect = \"true\"")), "--out", s(&out), "--quiet"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("| g10 | ltl | true | true (evidence) |"), "{}", r.stdout);
    let export = trestle(&["campaign", "export", s(&out), "--format", "jsonl"]);
    let row: Value = serde_json::from_str(export.stdout.lines().next().unwrap()).unwrap();
    assert_eq!((row["status"].as_str(), row["verdict"].as_str()), (Some("evidence"), Some("true")));
    // Expecting a proof, the same evidence fails the suite.
    let r = trestle(&[
        "suite",
        "run",
        s(&suite("rmilp", "expect = \"true\"\nexpect_status = \"proven\"")),
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("- g10 (ltl): verdict true (evidence), expected true (proven)"), "{}", r.stdout);
    // Bound propagation proves it; against that baseline, evidence is the loss of a proof.
    let proven = d.path().join("proven");
    let r = trestle(&["suite", "run", s(&suite("bpt", "expect = \"true\"")), "--out", s(&proven), "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("true (proven)"), "{}", r.stdout);
    let r = trestle(&[
        "suite",
        "run",
        s(&suite("rmilp", "expect = \"true\"")),
        "--out",
        s(&out),
        "--baseline",
        s(&proven),
        "--quiet",
    ]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("status changed: true (proven) → true (evidence): no longer proven"), "{}", r.stdout);
}
