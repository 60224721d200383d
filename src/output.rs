//! Printing: human text on stdout, or exactly one JSON object with `--json`; errors on stderr
//! (and as a JSON object on stdout with `--json`, so scripts always get one object).

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;

pub fn report_error(json: bool, kind: &str, e: &anyhow::Error) {
    let text = format!("{e:#}");
    if json {
        println!("{}", json!({ "error": { "kind": kind, "message": text } }));
    }
    eprintln!("error: {text}");
}

pub fn print_json(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string_pretty(v).expect("JSON values always serialise"));
}

/// Writes a file atomically: to a temporary sibling, then renamed over the target, so an
/// interrupted run never leaves a half-written result.
pub fn write_atomic(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
    let tmp =
        dir.join(format!(".{}.tmp{}", path.file_name().and_then(|s| s.to_str()).unwrap_or("out"), std::process::id()));
    std::fs::write(&tmp, contents).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot move {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

/// Formats an f64 for tables: short but never misleading.
pub fn fmt_f64(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 1e-4 && x.abs() < 1e7 {
        let s = format!("{x:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{x:.4e}")
    }
}

/// A simple aligned text table.
/// `x = 0.3, y = 0.6`: values by name, in decimals.
pub fn assignments(names: &[String], values: &[f64]) -> String {
    names.iter().zip(values).map(|(n, x)| format!("{n} = {}", fmt_f64(*x))).collect::<Vec<_>>().join(", ")
}

/// `x in [0.25, 0.5], y in [0.5, 1]`: a box by variable name.
pub fn box_text(names: &[String], lo: &[f64], hi: &[f64]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n} in [{}, {}]", fmt_f64(lo[i]), fmt_f64(hi[i])))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.len());
        }
    }
    let line = |cells: &[String]| {
        cells.iter().enumerate().map(|(i, c)| format!("{c:>w$}", w = widths[i])).collect::<Vec<_>>().join("  ")
    };
    let mut out = line(header);
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}
