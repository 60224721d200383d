//! Tables over a run's jobs: one row per instance, columns chosen per run (configuration), as
//! Markdown and CSV.

use crate::outcome::JobStatus;
use crate::store::JobRow;

/// One cell: the text shown in Markdown and the raw value written to CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub text: String,
    pub raw: String,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        let s = s.into();
        Cell { raw: s.clone(), text: s }
    }

    fn number(x: f64, time: bool) -> Cell {
        Cell { text: format_number(x, time), raw: x.to_string() }
    }

    fn empty() -> Cell {
        Cell { text: "–".into(), raw: String::new() }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub title: String,
    pub note: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<&str>| {
            format!("| {} |\n", cells.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | "))
        };
        out.push_str(&line(self.header.iter().map(String::as_str).collect()));
        out.push_str(&line(self.header.iter().map(|_| "---").collect()));
        for r in &self.rows {
            out.push_str(&line(r.iter().map(|c| c.text.as_str()).collect()));
        }
        out
    }

    pub fn csv(&self) -> String {
        let mut out = csv_line(self.header.iter().map(String::as_str));
        for r in &self.rows {
            out.push_str(&csv_line(r.iter().map(|c| c.raw.as_str())));
        }
        out
    }
}

/// One CSV line (RFC 4180 quoting).
pub fn csv_line<'a>(cells: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> =
        cells
            .map(|c| {
                if c.contains([',', '"', '\n', '\r']) {
                    format!("\"{}\"", c.replace('"', "\"\""))
                } else {
                    c.to_string()
                }
            })
            .collect();
    format!("{}\n", quoted.join(","))
}

/// Instances in plan order (first appearance).
pub fn instances(rows: &[JobRow]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        if !out.contains(&r.instance) {
            out.push(r.instance.clone());
        }
    }
    out
}

/// Run names in plan order.
pub fn runs(rows: &[JobRow]) -> Vec<String> {
    let mut sorted: Vec<&JobRow> = rows.iter().collect();
    sorted.sort_by_key(|r| r.ordinal);
    let mut out: Vec<String> = Vec::new();
    for r in sorted {
        if !out.contains(&r.run_name) {
            out.push(r.run_name.clone());
        }
    }
    out
}

/// The value `value` of the jobs of (instance, run), over their repetitions: `verdict`,
/// `status`, `wall` (the runner's wall-clock seconds) or any statistic the jobs reported.
/// Times are medians; a time of jobs that did not finish shows why (`timeout`).
pub fn cell(rows: &[JobRow], instance: &str, run: &str, value: &str) -> Cell {
    let reps: Vec<&JobRow> = rows.iter().filter(|r| r.instance == instance && r.run_name == run).collect();
    if reps.is_empty() {
        return Cell::empty();
    }
    match value {
        "verdict" => agreeing(reps.iter().map(|r| r.verdict_or_status().to_string())),
        "status" => agreeing(reps.iter().map(|r| r.status.clone())),
        _ => {
            let time = value == "wall" || value.ends_with("seconds");
            let finished: Vec<&&JobRow> = reps.iter().filter(|r| !stopped(r.status())).collect();
            if time && finished.is_empty() {
                return agreeing(reps.iter().map(|r| r.status.clone()));
            }
            let values: Vec<f64> = finished.iter().filter_map(|r| r.stat(value)).collect();
            match median(values) {
                // The time of a job that gave up (a solver's own limit) is not a time to solve.
                Some(x) if time && finished.iter().all(|r| r.status() == JobStatus::Unknown) => {
                    Cell { text: format!("{} (unknown)", format_number(x, true)), raw: x.to_string() }
                }
                Some(x) => Cell::number(x, time),
                None => Cell::empty(),
            }
        }
    }
}

/// A job stopped by a limit or failure: its times say nothing about the method.
fn stopped(s: JobStatus) -> bool {
    matches!(s, JobStatus::Timeout | JobStatus::Memout) || s.failed()
}

fn agreeing(values: impl Iterator<Item = String>) -> Cell {
    let mut distinct: Vec<String> = Vec::new();
    for v in values {
        if !distinct.contains(&v) {
            distinct.push(v);
        }
    }
    Cell::text(distinct.join(" / "))
}

pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 })
}

/// Times with two decimals (one from 100 s); counts as integers.
pub fn format_number(x: f64, time: bool) -> String {
    if time {
        if x >= 100.0 { format!("{x:.1}") } else { format!("{x:.2}") }
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_medians() {
        assert_eq!(format_number(0.4123, true), "0.41");
        assert_eq!(format_number(123.44, true), "123.4");
        assert_eq!(format_number(17.0, false), "17");
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }

    #[test]
    fn markdown_and_csv() {
        let t = Table {
            title: "t".into(),
            note: String::new(),
            header: vec!["instance".into(), "time (s)".into()],
            rows: vec![vec![Cell::text("a|b"), Cell::number(0.5, true)], vec![Cell::text("x,\"y\""), Cell::empty()]],
        };
        assert_eq!(t.markdown(), "| instance | time (s) |\n| --- | --- |\n| a\\|b | 0.50 |\n| x,\"y\" | – |\n");
        assert_eq!(t.csv(), "instance,time (s)\na|b,0.5\n\"x,\"\"y\"\"\",\n");
    }

    #[test]
    fn cells_take_medians_and_say_why_a_time_is_missing() {
        use crate::store::test_row;
        let rows = [
            test_row("a", "mono", "proven", Some("safe"), 3.0),
            test_row("a", "mono", "proven", Some("safe"), 1.0),
            test_row("a", "mono", "proven", Some("safe"), 2.0),
            test_row("b", "mono", "timeout", None, 120.0),
            test_row("c", "mono", "unknown", Some("unknown"), 12.5),
            test_row("d", "mono", "refuted", Some("not-inductive"), 0.5),
            test_row("d", "mono", "timeout", None, 120.0),
        ];
        let text = |i: &str, v: &str| cell(&rows, i, "mono", v).text;
        assert_eq!(text("a", "wall"), "2.00", "the median of the repetitions");
        assert_eq!(text("a", "verdict"), "safe");
        assert_eq!(text("b", "wall"), "timeout");
        assert_eq!(text("b", "verdict"), "timeout");
        assert_eq!(text("c", "wall"), "12.50 (unknown)");
        assert_eq!(text("d", "wall"), "0.50", "the time of the repetition that finished");
        assert_eq!(text("d", "verdict"), "not-inductive / timeout", "disagreeing repetitions show both");
        assert_eq!(text("a", "splits"), "6");
        assert_eq!(text("e", "wall"), "–");
    }
}
