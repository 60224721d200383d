//! Reading the files a user names as inputs (system files, certificates, campaign and suite
//! files, generator specs), and quoting them in error messages.
//!
//! [`read`] takes only a regular file and at most its kind's size ([`FileKind`]): a FIFO would
//! block the reader forever and `/dev/zero` would fill memory, so both are refused at once. The
//! file is opened without blocking (`O_NONBLOCK`, which a FIFO needs and a regular file ignores)
//! and its type is read from the opened descriptor, so a file swapped after a check is still
//! seen as what it is; at most `max_bytes + 1` bytes are read whatever the size the file claims.
//!
//! [`position`] says where a parse error is: line and column, and a short excerpt of that line
//! with every character that is not printable escaped, only for a file named like a file of the
//! expected kind. `trestle check /etc/shadow` then says where the first line stops being TOML
//! without printing it, and a line of 200 KB does not fill the terminal.

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::path::Path;

/// What a file read by [`read`] is for, and the most it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileKind {
    /// `system file`, `certificate`, ... (for messages).
    pub what: &'static str,
    pub max_bytes: u64,
    /// The file name ending of this kind (`.toml`): only files named so are quoted in errors.
    pub extension: &'static str,
}

/// A system file: TOML whose largest parts are unions of boxes and inline weights; 64 MiB is
/// thousands of times the largest shipped one (a few KB) and still a bounded read.
pub const SYSTEM_FILE: FileKind = FileKind { what: "system file", max_bytes: 64 << 20, extension: ".toml" };
/// A proof certificate (JSON): a clause per box, each a few KB, so 256 MiB holds about 100,000.
pub const CERTIFICATE: FileKind = FileKind { what: "certificate", max_bytes: 256 << 20, extension: ".json" };
/// A campaign or suite file.
pub const CAMPAIGN_FILE: FileKind =
    FileKind { what: "campaign or suite file", max_bytes: 16 << 20, extension: ".toml" };
/// A generator's spec (`maze generate`, `arena generate`).
pub const SPEC_FILE: FileKind = FileKind { what: "spec file", max_bytes: 16 << 20, extension: ".toml" };

/// The bytes of a regular file of at most `kind.max_bytes` (see the module docs). Errors say what
/// is wrong with the file (`it is a FIFO (named pipe), not a regular file; ...`), not its name:
/// callers name it.
pub fn read(path: &Path, kind: FileKind) -> io::Result<Vec<u8>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            if meta.is_dir() { io::ErrorKind::IsADirectory } else { io::ErrorKind::InvalidInput },
            format!("it is {}, not a regular file; give the path of a {}", crate::kind(&meta.file_type()), kind.what),
        ));
    }
    if meta.len() > kind.max_bytes {
        return Err(too_large(kind));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(kind.max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(too_large(kind));
    }
    Ok(bytes)
}

/// Like [`read`], for a text file: UTF-8 is required (the error gives the offset of the first
/// byte that is not, never the bytes).
pub fn read_text(path: &Path, kind: FileKind) -> io::Result<String> {
    String::from_utf8(read(path, kind)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Whether `path` names a regular file, as [`read`] requires, for readers that open the file
/// themselves (a model read by a library): the same error for a FIFO or a device.
pub fn check_regular(path: &Path, what: &str) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        if meta.is_dir() { io::ErrorKind::IsADirectory } else { io::ErrorKind::InvalidInput },
        format!("it is {}, not a regular file; give the path of a {what}", crate::kind(&meta.file_type())),
    ))
}

fn too_large(kind: FileKind) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("it is larger than {}, the most a {} may hold", size_text(kind.max_bytes), kind.what),
    )
}

fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Characters of the offending line shown on each side of the error's column.
const EXCERPT_SIDE: usize = 30;

/// Where byte `offset` of `text` (the contents of `path`) is: `line 3, column 7` and, when the
/// file is named like a file of its kind (`kind.extension`), a short excerpt of the line around
/// it: `line 3, column 7, at "x = [1, 2"`. Cut lines show `…`; characters that are not printable
/// are escaped as Rust would (`\t`, `\u{1b}`).
pub fn position(path: &Path, text: &str, offset: usize, kind: FileKind) -> String {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = text[..offset].matches('\n').count() + 1;
    let before: Vec<char> = text[line_start..offset].chars().collect();
    let column = before.len() + 1;
    let quotable = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(kind.extension));
    if !quotable {
        return format!("line {line}, column {column}");
    }
    let after: Vec<char> = text[offset..line_end].trim_end_matches('\r').chars().collect();
    let from = before.len().saturating_sub(EXCERPT_SIDE);
    let to = after.len().min(EXCERPT_SIDE);
    let mut shown = String::new();
    if from > 0 {
        shown.push('…');
    }
    shown.extend(&before[from..]);
    shown.extend(&after[..to]);
    if to < after.len() {
        shown.push('…');
    }
    format!("line {line}, column {column}, at \"{}\"", printable(&shown, 4 * EXCERPT_SIDE))
}

/// The message of a TOML syntax error in `path` (contents `text`): `malformed TOML at line 3,
/// column 7, at "x = [1, 2": MESSAGE` with the position of `offset` when the parser gave one
/// ([`position`]), the parser's message made printable and cut to 300 characters.
pub fn malformed_toml(path: &Path, text: &str, message: &str, offset: Option<usize>, kind: FileKind) -> String {
    let message = printable(message.trim(), 300);
    match offset {
        Some(offset) => format!("malformed TOML at {}: {message}", position(path, text, offset, kind)),
        None => format!("malformed TOML: {message}"),
    }
}

/// `text` with every character that is not printable escaped (`\n`, `\u{7}`, a quote as `\"`)
/// and cut to at most `max_chars` characters of the original, marked by `…` when cut. For
/// quoting what a file or a child process wrote between quotes.
pub fn printable(text: &str, max_chars: usize) -> String {
    escaped(text, max_chars, true)
}

/// Text of several lines (a child's stderr) made safe to store and show: each line cut to
/// `max_line_chars` characters (`…` where cut), every character that is not printable escaped
/// except the line breaks and tabs; quotes are kept.
pub fn printable_lines(text: &str, max_line_chars: usize) -> String {
    text.split('\n')
        .map(|line| escaped(line.trim_end_matches('\r'), max_line_chars, false))
        .collect::<Vec<_>>()
        .join("\n")
}

fn escaped(text: &str, max_chars: usize, quotes: bool) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max_chars {
            out.push('…');
            break;
        }
        let plain = c == '…'
            || (!quotes && c == '\t')
            || (!c.is_control() && !is_invisible(c) && !(quotes && (c == '"' || c == '\\')));
        if plain {
            out.push(c);
        } else {
            out.extend(c.escape_debug());
        }
    }
    out
}

/// Format characters that change how the rest of a line reads (bidirectional overrides,
/// zero-width characters): shown escaped.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const TOML_KIND: FileKind = SYSTEM_FILE;

    #[test]
    fn regular_files_are_read_up_to_their_kinds_size() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("s.toml");
        std::fs::write(&f, "x = 1\n").unwrap();
        assert_eq!(read_text(&f, TOML_KIND).unwrap(), "x = 1\n");
        let tiny = FileKind { what: "tiny file", max_bytes: 3, extension: ".toml" };
        let e = read(&f, tiny).unwrap_err();
        assert_eq!(e.to_string(), "it is larger than 3 bytes, the most a tiny file may hold");
        std::fs::write(&f, [0x66, 0xff, 0x00]).unwrap();
        assert_eq!(
            read_text(&f, TOML_KIND).unwrap_err().to_string(),
            "it is not UTF-8 text (invalid byte at offset 1)"
        );
    }

    /// Issue 39, item 12: a FIFO blocked the reader forever and /dev/zero was read without limit.
    #[test]
    fn fifos_devices_and_directories_are_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe.toml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
        let e = read(&fifo, TOML_KIND).unwrap_err();
        assert_eq!(e.to_string(), "it is a FIFO (named pipe), not a regular file; give the path of a system file");
        assert!(check_regular(&fifo, "model").unwrap_err().to_string().contains("FIFO"));
        let e = read(Path::new("/dev/zero"), CERTIFICATE).unwrap_err();
        assert!(e.to_string().starts_with("it is a character device, not a regular file"), "{e}");
        let e = read(d.path(), TOML_KIND).unwrap_err();
        assert!(e.to_string().starts_with("it is a directory"), "{e}");
        assert_eq!(read(&d.path().join("missing"), TOML_KIND).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn positions_quote_short_printable_excerpts_of_files_of_the_kind_only() {
        let text = "a = 1\nroot:$6$secret:19000:0:99999:7:::\n";
        let offset = text.find(':').unwrap();
        let toml = PathBuf::from("dir/s.toml");
        assert_eq!(
            position(&toml, text, offset, TOML_KIND),
            "line 2, column 5, at \"root:$6$secret:19000:0:99999:7:::\""
        );
        assert_eq!(position(Path::new("/etc/shadow"), text, offset, TOML_KIND), "line 2, column 5");
        // A very long line is cut around the column; control characters are escaped.
        let long = format!("x = \"{}\u{1b}[2J{}\"", "a".repeat(100_000), "b".repeat(100_000));
        let at = long.find('\u{1b}').unwrap();
        let p = position(&toml, &long, at, TOML_KIND);
        assert!(p.starts_with("line 1, column 100006, at \"…aaaa"), "{p}");
        assert!(p.contains("\\u{1b}[2Jbbb") && p.ends_with("b…\""), "{p}");
        assert!(p.len() < 200, "{}", p.len());
        // An offset inside a character, or past the end, is still a position.
        assert_eq!(position(&toml, "é", 1, TOML_KIND), "line 1, column 1, at \"é\"");
        assert_eq!(position(&toml, "ab", 99, TOML_KIND), "line 1, column 3, at \"ab\"");
    }

    #[test]
    fn printable_escapes_and_cuts() {
        assert_eq!(printable("plain text", 100), "plain text");
        assert_eq!(printable("a\nb\t\"c\"\u{202e}", 100), "a\\nb\\t\\\"c\\\"\\u{202e}");
        assert_eq!(printable("abcdef", 3), "abc…");
        assert_eq!(
            printable_lines("error: \"x\"\r\n\u{1b}[31mred\tok\nlong line", 6),
            "error:…\n\\u{1b}[31mr…\nlong l…"
        );
    }
}
