//! Runs the Python package's pytest suite (`tests/*.py`) inside `cargo test --workspace`.
//!
//! Why here and not only in `scripts/python-tests.sh`: maturin builds this crate alone, and cargo
//! then unifies the features of its dependencies over this crate's graph only, so tract and
//! HiGHS are rebuilt with another feature set (about 13 minutes on 2 cores from cold). This test
//! instead takes the extension the workspace build already made (an integration test makes cargo
//! build the crate's `cdylib` with the workspace's features) and the CLI binary beside it, lays
//! them out as an installed wheel would (`trestle/_native.abi3.so`, `trestle/_bin/trestle`, the
//! `trestle` console script) in a virtual environment under the target directory, and runs
//! pytest there. What it does not cover is maturin's packaging itself (pyproject.toml, the build
//! backend): `scripts/python-tests.sh` builds and installs the real wheel.
//!
//! The environment needs Python 3.10 or later with `venv` and pytest from the registry (made once
//! under `target/`, reused). When they cannot be had the test skips, saying why, except under
//! `CI=true`, where it fails.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/release` (or the profile directory this test was built in).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/pytest-<hash>
    exe.parent().and_then(Path::parent).expect("the test binary lies in <target>/<profile>/deps").to_path_buf()
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository root")
}

/// Skips (returns from the test) when not under CI, fails under `CI=true`.
macro_rules! unavailable {
    ($($why:tt)*) => {{
        let why = format!($($why)*);
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("the Python tests cannot run under CI=true: {why}");
        }
        eprintln!("skipped: {why}");
        return;
    }};
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A virtual environment with pytest (and numpy, for the array examples) under the target
/// directory, made once.
fn test_environment(dir: &Path) -> Result<PathBuf, String> {
    let python = dir.join("bin/python");
    if run(Command::new(&python).args(["-c", "import pytest, numpy"])).is_ok() {
        return Ok(python);
    }
    let _ = fs::remove_dir_all(dir);
    let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run(Command::new(&base).args(["-c", "import sys; assert sys.version_info >= (3, 10), sys.version"]))?;
    run(Command::new(&base).arg("-m").arg("venv").arg(dir))?;
    let pip = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"];
    run(Command::new(&python).args(pip).args(["pytest", "numpy"]))?;
    Ok(python)
}

/// Lays the package out in the environment's site-packages as the wheel installs it.
fn install_package(python: &Path, extension: &Path, cli: &Path) -> Result<(), String> {
    let out = Command::new(python)
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        .output()
        .map_err(|e| e.to_string())?;
    let site = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let package = site.join("trestle");
    let _ = fs::remove_dir_all(&package);
    fs::create_dir_all(package.join("_bin")).map_err(|e| e.to_string())?;
    let sources = repository_root().join("crates/python/python/trestle");
    for entry in fs::read_dir(&sources).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "py") {
            fs::copy(&path, package.join(path.file_name().unwrap())).map_err(|e| e.to_string())?;
        }
    }
    fs::copy(extension, package.join("_native.abi3.so")).map_err(|e| e.to_string())?;
    fs::copy(cli, package.join("_bin/trestle")).map_err(|e| e.to_string())?;
    // The console script pip writes for `[project.scripts] trestle = "trestle._cli:main"`.
    let script = python.with_file_name("trestle");
    let text = format!("#!{}\nimport sys\nfrom trestle._cli import main\nsys.exit(main())\n", python.display());
    fs::write(&script, text).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[test]
fn the_python_package_passes_its_pytest_suite() {
    let profile = profile_dir();
    // Built as a dependency of this test, the cdylib stays in deps/ (cargo uplifts it only when
    // the crate itself is built, so an uplifted copy may be older): the newer of the two.
    let modified = |p: &PathBuf| fs::metadata(p).and_then(|m| m.modified()).ok();
    let extension = ["lib_native.so", "deps/lib_native.so"]
        .iter()
        .map(|p| profile.join(p))
        .filter(|p| p.is_file())
        .max_by_key(|p| modified(p));
    let cli = profile.join("trestle");
    let Some(extension) = extension else {
        unavailable!("the extension lib_native.so was not built in {}", profile.display());
    };
    if !cli.is_file() {
        unavailable!("the CLI {} was not built (run `cargo test --workspace --release`)", cli.display());
    }
    let python = match test_environment(&profile.join("python-test-venv")) {
        Ok(p) => p,
        Err(why) => unavailable!("no Python environment with pytest: {why}"),
    };
    install_package(&python, &extension, &cli).expect("the package laid out in the environment");
    let root = repository_root();
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "crates/python/tests"])
        .current_dir(&root)
        .output()
        .expect("pytest runs");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("{report}");
    assert!(out.status.success(), "the Python package's tests failed:\n{report}");
}
