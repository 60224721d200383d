//! The runner against a stand-in binary: limits, failures, kills and resumption, shards and merge.

mod common;

use common::{Bench, outcomes};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use trestle_campaign::{Shard, Store, merge};

fn status_of(rows: &[(String, String, Option<String>)], instance: &str) -> String {
    rows.iter().find(|r| r.0 == instance).unwrap_or_else(|| panic!("no row for {instance}")).1.clone()
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn a_job_past_its_timeout_is_recorded_as_a_timeout_and_the_run_goes_on() {
    let b = Bench::new();
    let plan = b.plan(&b.campaign(&["hang", "safe"], 0.5));
    let out = b.path("out");
    let s = b.run(&plan, &out, &b.options(1, false, None));
    assert!(s.complete);
    let rows = outcomes(&out, s.run_id);
    assert_eq!(status_of(&rows, "hang"), "timeout");
    assert_eq!(status_of(&rows, "safe"), "proven");
    let store = Store::open(&out).unwrap();
    let hang = store.jobs(s.run_id).unwrap().into_iter().find(|j| j.instance == "hang").unwrap();
    assert!(hang.reason.unwrap().contains("time limit of 0.5 s"));
    // The whole process group went: the hung job's grandchild (its "solver") is gone too.
    let pid: i32 = std::fs::read_to_string(b.path("hang.toml.pid")).unwrap().trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the grandchild {pid} outlived its job's time limit");
}

#[test]
fn jobs_that_panic_exit_4_or_crash_are_errors_never_verdicts() {
    let b = Bench::new();
    let plan = b.plan(&b.campaign(&["panic", "internal", "segv", "unsafe", "safe"], 20.0));
    let out = b.path("out");
    let s = b.run(&plan, &out, &b.options(2, false, None));
    assert!(s.complete);
    let store = Store::open(&out).unwrap();
    let jobs = store.jobs(s.run_id).unwrap();
    let job = |name: &str| jobs.iter().find(|j| j.instance == name).unwrap();
    for name in ["panic", "internal", "segv"] {
        assert_eq!((job(name).status.as_str(), job(name).verdict.as_deref()), ("error", None), "{name}");
    }
    assert_eq!(job("panic").reason.as_deref(), Some("unexpected exit code 101"));
    assert_eq!(job("internal").reason.as_deref(), Some("internal error: boom"));
    assert!(job("segv").reason.as_deref().unwrap().contains("SIGSEGV"));
    assert_eq!((job("unsafe").status.as_str(), job("unsafe").verdict.as_deref()), ("refuted", Some("not-inductive")));
    assert_eq!(job("safe").status, "proven");
    assert_eq!(job("safe").neurons, Some(16), "the system's size comes from `info`");
}

/// Runs a plan in a process of its own (this test binary, re-entered through
/// `runner_in_a_child_process`), so that it can be killed with SIGKILL mid-run.
#[test]
fn a_campaign_killed_with_sigkill_and_resumed_ends_with_every_job_exactly_once() {
    let b = Bench::new();
    let names: Vec<String> = (0..10).map(|i| format!("slow-{i}")).collect();
    let file = b.campaign(&names.iter().map(String::as_str).collect::<Vec<_>>(), 20.0);
    let out = b.path("out");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "runner_in_a_child_process", "--ignored", "--nocapture", "--test-threads", "1"])
        .env("TRESTLE_TEST_CAMPAIGN", &file)
        .env("TRESTLE_TEST_PROGRAM", &b.program)
        .env("TRESTLE_TEST_OUT", &out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once three jobs are in the store (jobs take 0.4 s each, two at a time).
    let deadline = Instant::now() + Duration::from_secs(60);
    let recorded =
        || Store::open(&out).ok().and_then(|s| s.runs().ok()?.first().map(|r| s.jobs(r.run_id).unwrap().len()));
    while recorded().unwrap_or(0) < 3 {
        assert!(Instant::now() < deadline, "the child runner recorded nothing");
        assert!(child.try_wait().unwrap().is_none(), "the child runner ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = recorded().unwrap();
    assert!((3..10).contains(&before), "{before} jobs recorded when the runner was killed");

    let plan = b.plan(&file);
    let s = b.run(&plan, &out, &b.options(2, true, None));
    assert!(s.complete);
    assert_eq!((s.skipped, s.ran), (before, 10 - before));
    let store = Store::open(&out).unwrap();
    assert_eq!(store.runs().unwrap().len(), 1, "the resumed run is the killed one");
    let jobs = store.jobs(s.run_id).unwrap();
    let ids: BTreeSet<&str> = jobs.iter().map(|j| j.job_id.as_str()).collect();
    let planned: BTreeSet<&str> = plan.jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(jobs.len(), 10);
    assert_eq!(ids, planned, "every job exactly once");
    assert!(jobs.iter().all(|j| j.status == "proven"));
    assert!(store.run(s.run_id).unwrap().unwrap().finished.is_some());
}

/// The runner of the test above; does nothing unless started by it.
#[test]
#[ignore = "entered by a_campaign_killed_with_sigkill_and_resumed_ends_with_every_job_exactly_once"]
fn runner_in_a_child_process() {
    let (Ok(file), Ok(program), Ok(out)) = (
        std::env::var("TRESTLE_TEST_CAMPAIGN"),
        std::env::var("TRESTLE_TEST_PROGRAM"),
        std::env::var("TRESTLE_TEST_OUT"),
    ) else {
        return;
    };
    let plan = trestle_campaign::load_campaign(file.as_ref(), &|_| Ok(()), "0.1.0").unwrap();
    let opts = trestle_campaign::RunOptions {
        program: program.into(),
        jobs: 2,
        resume: false,
        shard: None,
        progress: false,
        deadline: None,
    };
    let mut store = Store::create(out.as_ref()).unwrap();
    trestle_campaign::run_plan(&plan, &mut store, &opts).unwrap();
}

#[test]
fn shards_one_two_and_three_of_three_merged_equal_a_single_run() {
    let b = Bench::new();
    let systems = ["safe-a", "unsafe-b", "safe-c", "internal-d", "safe-e", "unsafe-f", "safe-g"];
    let plan = b.plan(&b.campaign(&systems, 20.0));
    let single = b.run(&plan, &b.path("single"), &b.options(2, false, None));
    let shard_dirs: Vec<_> = (1..=3).map(|k| b.path(&format!("shard-{k}"))).collect();
    for (k, dir) in shard_dirs.iter().enumerate() {
        let s = b.run(&plan, dir, &b.options(1, false, Some(Shard { index: k + 1, count: 3 })));
        assert!(s.complete);
        assert_eq!(s.planned, [3, 2, 2][k], "round-robin slices of 7 jobs");
    }
    let merged = merge(&b.path("merged"), &shard_dirs).unwrap();
    assert_eq!(merged.len(), 1);
    assert_eq!((merged[0].jobs, merged[0].expected, merged[0].added, merged[0].duplicates), (7, 7, 7, 0));
    let key = |dir: &std::path::Path, run: i64| -> BTreeSet<(String, String, String, Option<String>)> {
        Store::open(dir)
            .unwrap()
            .jobs(run)
            .unwrap()
            .into_iter()
            .map(|j| (j.job_id, j.instance, j.status, j.verdict))
            .collect()
    };
    let whole = key(&b.path("single"), single.run_id);
    assert_eq!(whole.len(), 7);
    assert_eq!(key(&b.path("merged"), merged[0].run_id), whole);
    let store = Store::open(&b.path("merged")).unwrap();
    let run = store.run(merged[0].run_id).unwrap().unwrap();
    assert!(run.finished.is_some() && run.shard.is_none());
    // Merging again adds nothing; a store that disagrees on a job stops the merge.
    let again = merge(&b.path("merged"), &shard_dirs).unwrap();
    assert_eq!((again[0].added, again[0].duplicates), (0, 7));
    // A store whose run of the same plan disagrees on a job stops the merge, and nothing is written.
    let flipped =
        b.run(&plan, &b.path("flipped"), &common::with_program(b.options(2, false, None), b.flipped_program()));
    assert!(flipped.complete);
    let err = merge(&b.path("merged-2"), &[b.path("single"), b.path("flipped")]).unwrap_err().to_string();
    assert!(
        err.contains("conflicting results") && err.contains("safe (proven)") && err.contains("nothing was merged"),
        "{err}"
    );
    let after = Store::open(&b.path("merged-2")).unwrap();
    assert!(after.runs().unwrap().is_empty());
}
