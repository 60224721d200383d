//! Values as campaign and suite files write them, turned into command-line text: option tables
//! into flags, override values into `--set` text, memory sizes into bytes.

use indexmap::IndexMap;
use std::time::Duration;

/// `{ method = "monolithic", threads = 1, paper = true }` as `--method monolithic --threads 1
/// --paper`, in the table's order. `true` is a bare flag, `false` leaves the flag out, an array
/// repeats the flag; `max_splits` and `max-splits` name the same flag. Errors name the key.
pub fn options_argv(options: &IndexMap<String, toml::Value>) -> Result<Vec<String>, (String, String)> {
    let mut argv = Vec::new();
    for (key, value) in options {
        let flag = key.replace('_', "-");
        if flag.is_empty() || flag.starts_with('-') || !flag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err((key.clone(), "an option name is a flag without its dashes, e.g. max_splits".into()));
        }
        let flag = format!("--{flag}");
        match value {
            toml::Value::Boolean(true) => argv.push(flag),
            toml::Value::Boolean(false) => {}
            toml::Value::Array(items) => {
                for item in items {
                    let text = scalar_text(item).ok_or_else(|| (key.clone(), "array items must be scalars".into()))?;
                    argv.extend([flag.clone(), text]);
                }
            }
            other => {
                let text = scalar_text(other)
                    .ok_or_else(|| (key.clone(), "expected a string, number, boolean or array".into()))?;
                argv.extend([flag, text]);
            }
        }
    }
    Ok(argv)
}

/// A TOML scalar as the text a flag takes (`60`, `0.5`, `crown`).
fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An override value as `--set KEY=VALUE` text: strings verbatim (paths stay paths), everything
/// else as TOML (`-22.5`, `[0, 1]`), which is how `--set` reads it back.
pub fn override_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `"4GiB"`, `"4G"`, `"512M"`, `"512MiB"`, `"100K"` (binary units; `B` optional) or a number of
/// bytes.
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().trim_end_matches(['B', 'b']).trim_end_matches('i') {
        "" => 1,
        "K" | "k" => 1 << 10,
        "M" | "m" => 1 << 20,
        "G" | "g" => 1 << 30,
        "T" | "t" => 1 << 40,
        _ => return Err(format!("'{text}': expected a size such as 4GiB, 512M or a number of bytes")),
    };
    let n: f64 = num.parse().map_err(|_| format!("'{text}': expected a size such as 4GiB, 512M"))?;
    let bytes = n * scale as f64;
    if !(bytes >= 1.0 && bytes < 2f64.powi(63)) {
        return Err(format!("'{text}': the size must be positive"));
    }
    Ok(bytes as u64)
}

/// A limit in seconds as a duration (positive and finite).
pub fn parse_seconds(secs: f64) -> Result<Duration, String> {
    // Written so that NaN fails too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    if !(secs > 0.0) {
        return Err(format!("{secs}: a time limit must be a positive number of seconds"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{secs}: {e}"))
}

/// `4 GiB`-style text for reports.
pub fn memory_text(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, scale) in UNITS {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{} {name}", bytes / scale);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> IndexMap<String, toml::Value> {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn options_become_flags_in_order() {
        let t = table(
            "method = 'monolithic'\nthreads = 1\npaper = true\nno_search = false\nmax_splits = 10\ntimeout = 2.5\nset = ['a=1', 'b=2']",
        );
        assert_eq!(
            options_argv(&t).unwrap(),
            [
                "--method",
                "monolithic",
                "--threads",
                "1",
                "--paper",
                "--max-splits",
                "10",
                "--timeout",
                "2.5",
                "--set",
                "a=1",
                "--set",
                "b=2"
            ]
        );
        assert_eq!(options_argv(&table("'--x' = 1")).unwrap_err().0, "--x");
        assert!(options_argv(&table("x = { a = 1 }")).unwrap_err().1.contains("expected"));
    }

    #[test]
    fn override_values_read_back_as_written() {
        assert_eq!(override_text(&toml::Value::String("../m/net.onnx".into())), "../m/net.onnx");
        assert_eq!(override_text(&toml::Value::Float(-22.5)), "-22.5");
        assert_eq!(override_text(&toml::Value::Float(0.1)), "0.1");
        let arr = table("v = [0, 1]").shift_remove("v").unwrap();
        assert_eq!(override_text(&arr), "[0, 1]");
    }

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_memory("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_memory("4G").unwrap(), 4 << 30);
        assert_eq!(parse_memory("512 MB").unwrap(), 512 << 20);
        assert_eq!(parse_memory("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_memory("1000").unwrap(), 1000);
        assert!(parse_memory("4 parsecs").is_err());
        assert!(parse_memory("0").is_err());
        assert!(parse_memory("-1G").is_err());
        assert_eq!(memory_text(4 << 30), "4 GiB");
        assert_eq!(memory_text(1000), "1000 B");
    }
}
