// SPDX-License-Identifier: GPL-2.0-only
//! Java `.properties` files, the format of YCSB's workload files (`-P workloads/workloada`), read
//! as `java.util.Properties.load` reads them: one `key=value`, `key:value` or `key value` per
//! logical line; `#` and `!` start a comment line; a line ending in an odd number of backslashes
//! continues on the next, whose leading white space is dropped; `\t`, `\n`, `\r`, `\f`, `\uXXXX`
//! and `\`-anything-else escapes in keys and values; white space around the separator ignored.

/// One property as written, with the line (1-based) its logical line starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// The key, unescaped.
    pub key: String,
    /// The value, unescaped.
    pub value: String,
    /// Line of the file where the property starts.
    pub line: usize,
}

/// A malformed line: its number and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertiesError {
    /// Line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for PropertiesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for PropertiesError {}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Whether `s` ends in an odd number of backslashes (the line continues).
fn continues(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Unescapes one key or value (`line` for the error of a bad `\u`).
fn unescape(s: &str, line: usize) -> Result<String, PropertiesError> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = it.by_ref().take(4).collect();
                let code = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32)
                    .ok_or_else(|| PropertiesError {
                        line,
                        message: format!("malformed \\u escape '\\u{hex}': expected four hexadecimal digits"),
                    })?;
                out.push(code);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// Splits a logical line into its raw key and raw value at the first unescaped `=`, `:` or white
/// space (white space and then one `=` or `:` also separate).
fn split(line: &str) -> (&str, &str) {
    let mut escaped = false;
    let mut end = line.len();
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_ws(c) {
            end = i;
            break;
        }
    }
    let key = &line[..end];
    let mut rest = line[end..].trim_start_matches(is_ws);
    if let Some(r) = rest.strip_prefix(['=', ':']) {
        rest = r.trim_start_matches(is_ws);
    }
    (key, rest)
}

/// The properties of `text` in file order (a key given twice appears twice; the later wins when
/// the caller collects them, as in Java).
pub fn parse(text: &str) -> Result<Vec<Property>, PropertiesError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        let first = raw.trim_start_matches(is_ws);
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let start = i + 1;
        let mut logical = String::from(first);
        while continues(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(next.trim_start_matches(is_ws)),
                None => break,
            }
        }
        let (k, v) = split(&logical);
        let key = unescape(k, start)?;
        if key.is_empty() {
            return Err(PropertiesError {
                line: start,
                message: format!("'{}' has no key: expected key=value", logical.trim()),
            });
        }
        out.push(Property {
            key,
            value: unescape(v, start)?,
            line: start,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(text: &str) -> Vec<(String, String, usize)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|p| (p.key, p.value, p.line))
            .collect()
    }

    #[test]
    fn separators_comments_and_white_space() {
        let t = "# comment\n! also\n\nrecordcount=1000\n  operationcount : 2000\nworkload site.ycsb.workloads.CoreWorkload\nreadallfields=true  \nempty=\n";
        assert_eq!(
            kv(t),
            vec![
                ("recordcount".into(), "1000".into(), 4),
                ("operationcount".into(), "2000".into(), 5),
                ("workload".into(), "site.ycsb.workloads.CoreWorkload".into(), 6),
                // Java keeps trailing white space in values
                ("readallfields".into(), "true  ".into(), 7),
                ("empty".into(), "".into(), 8),
            ]
        );
    }

    #[test]
    fn continuation_and_escapes() {
        let t = "a = one\\\n    two\nb\\=c = x\\ty\\u0041\nc = ends with two \\\\\nd = 1\n";
        assert_eq!(
            kv(t),
            vec![
                ("a".into(), "onetwo".into(), 1),
                ("b=c".into(), "x\tyA".into(), 3),
                ("c".into(), "ends with two \\".into(), 4),
                ("d".into(), "1".into(), 5),
            ]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("a=1\n=2\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("no key"), "{e}");
        let e = parse("a=1\nb=\\u00zz\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("\\u"), "{e}");
    }
}
