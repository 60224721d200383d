//! A stand-in for the trestle binary: a shell script whose behaviour each "system file" names, so
//! the runner's handling of hangs, crashes, internal errors and kills is tested in milliseconds
//! and without a solver.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use trestle_campaign::{Plan, RunOptions, RunSummary, Shard, Store, load_campaign, run_plan};

/// The stand-in: `PROGRAM COMMAND SYSTEM ... --json`. `info` describes a system of 16 neurons;
/// otherwise the first word of SYSTEM decides:
/// `safe` (proven, exit 0), `unsafe` (refuted, exit 1), `slow` (safe after 0.4 s),
/// `hang` (a grandchild sleeps, its pid written to SYSTEM.pid), `panic` (a Rust panic, exit 101),
/// `internal` (exit 4 with an error object), `segv` (killed by SIGSEGV).
const SCRIPT: &str = r#"#!/bin/sh
cmd=$1; sys=$2
if [ "$cmd" = info ]; then
  echo '{"name":"fake","networks":[{"name":"n","relus":16}]}'; exit 0
fi
result() {
  printf '{"verdict":"%s","status":"%s","format":"trestle-result/1","version":"0.1.0","command":"%s","system":"fake","method":"bridge","config":{},"stats":{"seconds":0.01,"splits":3}}\n' "$1" "$2" "$cmd"
}
case $(head -c 20 "$sys" | tr -d '\n') in
  safe*) result safe proven; exit 0 ;;
  unsafe*) result not-inductive refuted; exit 1 ;;
  slow*) sleep 0.4; result safe proven; exit 0 ;;
  hang*) sleep 60 & echo $! > "$sys.pid"; wait; exit 0 ;;
  panic*) echo "thread 'main' panicked at src/main.rs:1:1: boom" >&2; exit 101 ;;
  internal*) echo '{"error":{"kind":"internal","message":"boom"}}'; echo 'error: boom' >&2; exit 4 ;;
  segv*) kill -SEGV $$ ;;
esac
echo "error: unknown behaviour" >&2; exit 2
"#;

pub struct Bench {
    pub dir: tempfile::TempDir,
    pub program: PathBuf,
}

impl Bench {
    pub fn new() -> Bench {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let program = dir.path().join("fake-trestle");
        std::fs::write(&program, SCRIPT).expect("script written");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("executable");
        Bench { dir, program }
    }

    /// A second stand-in that proves nothing: its `safe` systems come out refuted.
    pub fn flipped_program(&self) -> PathBuf {
        let path = self.path("fake-trestle-flipped");
        std::fs::write(
            &path,
            SCRIPT.replace("safe*) result safe proven; exit 0", "safe*) result not-inductive refuted; exit 1"),
        )
        .expect("script written");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("executable");
        path
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A campaign of one `check` run over systems named by their behaviours (`safe-1`, `hang`),
    /// with a time limit per job.
    pub fn campaign(&self, systems: &[&str], timeout: f64) -> PathBuf {
        let mut text = format!(
            "[campaign]\nname = \"fake\"\ntimeout = {timeout}\n\n[[runs]]\nname = \"check\"\ncommand = \"check\"\n"
        );
        for s in systems {
            // The content makes each system distinct (job ids hash it); its first word is the behaviour.
            std::fs::write(self.path(&format!("{s}.toml")), format!("{s}\n")).expect("system written");
            text.push_str(&format!("\n[[systems]]\nfile = \"{s}.toml\"\n"));
        }
        let path = self.path("campaign.toml");
        std::fs::write(&path, text).expect("campaign written");
        path
    }

    pub fn plan(&self, file: &Path) -> Plan {
        load_campaign(file, &|_| Ok(()), "0.1.0").expect("the campaign loads")
    }

    pub fn options(&self, jobs: usize, resume: bool, shard: Option<Shard>) -> RunOptions {
        RunOptions { program: self.program.clone(), jobs, resume, shard, progress: false, deadline: None }
    }

    pub fn run(&self, plan: &Plan, out: &Path, opts: &RunOptions) -> RunSummary {
        let mut store = Store::create(out).expect("store");
        run_plan(plan, &mut store, opts).expect("the run completes")
    }
}

pub fn with_program(mut opts: RunOptions, program: PathBuf) -> RunOptions {
    opts.program = program;
    opts
}

/// (instance, status, verdict) of every job of a run, in plan order.
pub fn outcomes(dir: &Path, run_id: i64) -> Vec<(String, String, Option<String>)> {
    let store = Store::open(dir).expect("store");
    store.jobs(run_id).expect("jobs").into_iter().map(|j| (j.instance, j.status, j.verdict)).collect()
}
