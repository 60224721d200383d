//! Tokens of the expression language. Offsets are byte offsets into the text; the text is read as
//! characters (UTF-8), so a character outside the language is reported as itself (`≤`, not its
//! first byte).

use crate::num::{Rational, parse_rational};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Num(Rational),
    Ident(String),
    Sym(&'static str),
}

const SYMBOLS: [&str; 22] = [
    "->", "<=", ">=", "==", "!=", "&&", "||", "<", ">", "=", "!", "+", "-", "*", "/", "(", ")", "[", "]", ",", "^", "~",
];

/// Characters people paste from typeset formulas, with what to write instead.
const LOOKALIKES: [(char, &str); 8] =
    [('≤', "<="), ('≥', ">="), ('≠', "!="), ('−', "-"), ('×', "*"), ('·', "*"), ('∧', "and"), ('∨', "or")];

/// The tokens of `text` with their byte offsets, or a message and the offending offset.
pub(super) fn lex(text: &str) -> Result<Vec<(Tok, usize)>, (String, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = text[i..].chars().next().expect("i is on a character boundary");
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit())) {
            let start = i;
            i = number_end(bytes, i);
            let lit = &text[start..i];
            let q = parse_rational(lit).ok_or_else(|| (malformed_number(lit), start))?;
            out.push((Tok::Num(q), start));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(text[start..i].to_string()), start));
            continue;
        }
        match SYMBOLS.iter().find(|s| text[i..].starts_with(**s)) {
            Some(s) => {
                out.push((Tok::Sym(s), i));
                i += s.len();
            }
            None => {
                let hint = LOOKALIKES
                    .iter()
                    .find(|(l, _)| *l == c)
                    .map(|(_, w)| format!(" (write '{w}')"))
                    .unwrap_or_default();
                return Err((format!("unexpected character '{c}'{hint}"), i));
            }
        }
    }
    Ok(out)
}

/// The end of the decimal literal starting at `i`: digits and dots, then an optional exponent.
fn number_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let save = i;
        i += 1;
        if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
            i += 1;
        }
        if i < bytes.len() && bytes[i].is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            i = save;
        }
    }
    i
}

fn malformed_number(lit: &str) -> String {
    if crate::num::exponent_out_of_range(lit) {
        format!(
            "number '{lit}' is out of range: decimal exponents are limited to ±{}",
            crate::num::MAX_DECIMAL_EXPONENT
        )
    } else {
        format!("malformed number '{lit}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_characters_are_reported_whole_with_a_hint() {
        let (msg, at) = lex("x ≤ 1").unwrap_err();
        assert_eq!(msg, "unexpected character '≤' (write '<=')");
        assert_eq!(at, 2);
        let (msg, _) = lex("x − 1").unwrap_err();
        assert_eq!(msg, "unexpected character '−' (write '-')");
        assert_eq!(lex("é").unwrap_err().0, "unexpected character 'é'");
        // Non-ASCII whitespace is whitespace.
        assert_eq!(lex("x\u{a0}+ 1").unwrap().len(), 3);
    }

    #[test]
    fn huge_exponents_are_refused_not_expanded() {
        let (msg, _) = lex("1e999999999").unwrap_err();
        assert!(msg.contains("out of range"), "{msg}");
        assert!(lex("1e300").is_ok());
    }
}
