// SPDX-License-Identifier: GPL-2.0-only
//! A report to share: one self-contained `index.html` of tables, the SVG plots inline, the
//! settings and the command that reproduces it, written by `lrugen exp --out`, `lrugen exp merge`
//! and `lrugen kernel --out` through [`Page`]. It is readable offline and without JavaScript: no
//! script, no stylesheet or font or image fetched (the style is inline, the plots are the SVG
//! files' own markup), and nothing that changes between two runs of the same results (no date,
//! no path of the output directory), so that the page is as deterministic as the files it shows.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The name of the report in an output directory.
pub const INDEX: &str = "index.html";

/// One part of a page, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A section heading.
    Heading(String),
    /// A paragraph of text.
    Para(String),
    /// Preformatted text (a command line, a file).
    Pre(String),
    /// Names and values.
    Pairs(Vec<(String, String)>),
    /// A table: `left` leading label columns, the others numbers (right-aligned).
    Table {
        /// Column names.
        head: Vec<String>,
        /// The rows.
        rows: Vec<Vec<String>>,
        /// Leading label columns.
        left: usize,
    },
    /// A plot: its caption and its SVG markup, inlined.
    Svg {
        /// What it shows (the file's name).
        caption: String,
        /// The `<svg>` element.
        svg: String,
    },
}

/// A page: a title and its blocks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    /// The title (and first heading).
    pub title: String,
    /// The blocks, in order.
    pub blocks: Vec<Block>,
}

/// `s` with the characters HTML gives a meaning escaped.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The `<svg>` element of an SVG file's text (its XML declaration dropped), made to scale with
/// the page; `None` if the text holds no `<svg` element.
pub fn inline_svg(text: &str) -> Option<String> {
    let at = text.find("<svg")?;
    let svg = text[at..].trim_end();
    // scale down on narrow screens, keeping the aspect ratio (the file has width and height)
    Some(svg.replacen("<svg", "<svg class=\"plot\"", 1))
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}\
th,td{border:1px solid #bbb;padding:.2em .5em}th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}\
pre{background:#f4f4f4;padding:.6em;overflow-x:auto;white-space:pre-wrap}\
figure{margin:1em 0}figcaption{font-size:.85em;color:#555}svg.plot{max-width:100%;height:auto}";

impl Page {
    /// A page titled `title`.
    pub fn new(title: impl Into<String>) -> Page {
        Page {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Add a block.
    pub fn push(&mut self, b: Block) -> &mut Page {
        self.blocks.push(b);
        self
    }

    /// Add the plots among `files` (the `.svg` ones, in the order given), each inlined from its
    /// file, captioned by its name relative to `dir`.
    pub fn push_svgs(&mut self, dir: &Path, files: &[PathBuf]) -> std::io::Result<()> {
        for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "svg")) {
            let text = std::fs::read_to_string(f)?;
            let Some(svg) = inline_svg(&text) else {
                return Err(std::io::Error::other(format!("{}: no <svg> element", f.display())));
            };
            let caption = f.strip_prefix(dir).unwrap_or(f).to_string_lossy().replace('\\', "/");
            self.blocks.push(Block::Svg { caption, svg });
        }
        Ok(())
    }

    /// A "Plots" heading and the SVGs of `files` ([`Page::push_svgs`]), or a line saying there
    /// are none (no font was found to draw them).
    pub fn push_plots(&mut self, dir: &Path, files: &[PathBuf]) -> std::io::Result<()> {
        self.push(Block::Heading("Plots".into()));
        let before = self.blocks.len();
        self.push_svgs(dir, files)?;
        if self.blocks.len() == before {
            self.push(Block::Para(
                "No plots (no TrueType font was found to draw them).".into(),
            ));
        }
        Ok(())
    }

    /// The page's HTML.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
            escape(&self.title),
            escape(&self.title)
        );
        for b in &self.blocks {
            match b {
                Block::Heading(t) => {
                    let _ = writeln!(o, "<h2>{}</h2>", escape(t));
                }
                Block::Para(t) => {
                    let _ = writeln!(o, "<p>{}</p>", escape(t));
                }
                Block::Pre(t) => {
                    let _ = writeln!(o, "<pre>{}</pre>", escape(t.trim_end_matches('\n')));
                }
                Block::Pairs(kv) => {
                    o.push_str("<table class=\"pairs\">\n");
                    for (k, v) in kv {
                        let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
                    }
                    o.push_str("</table>\n");
                }
                Block::Table { head, rows, left } => {
                    o.push_str("<table>\n<thead><tr>");
                    for h in head {
                        let _ = write!(o, "<th>{}</th>", escape(h));
                    }
                    o.push_str("</tr></thead>\n<tbody>\n");
                    for r in rows {
                        o.push_str("<tr>");
                        for (i, c) in r.iter().enumerate() {
                            let class = if i < *left { "" } else { " class=\"n\"" };
                            let _ = write!(o, "<td{class}>{}</td>", escape(c));
                        }
                        o.push_str("</tr>\n");
                    }
                    o.push_str("</tbody>\n</table>\n");
                }
                Block::Svg { caption, svg } => {
                    let _ = writeln!(
                        o,
                        "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>",
                        escape(caption)
                    );
                }
            }
        }
        o.push_str("</body>\n</html>\n");
        o
    }

    /// Write the page as `dir/index.html`; returns its path.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let p = dir.join(INDEX);
        std::fs::write(&p, self.render())?;
        Ok(p)
    }
}

/// A shell word: as is when it needs no quoting, else in single quotes.
pub fn shell_word(a: &str) -> String {
    if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_.,:/=+@%".contains(c)) {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_nothing_is_fetched() {
        let mut p = Page::new("a <b> & 'c'");
        p.push(Block::Para("x < y".into()))
            .push(Block::Pre("lrugen exp f.toml --out DIR\n".into()))
            .push(Block::Pairs(vec![("k\"".into(), "<v>".into())]))
            .push(Block::Table {
                head: vec!["policy".into(), "misses".into()],
                rows: vec![
                    vec!["mglru".into(), "1,234".into()],
                    vec!["<classic>".into(), "5".into()],
                ],
                left: 1,
            })
            .push(Block::Svg {
                caption: "bar.svg".into(),
                svg: inline_svg("<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"10\"><rect/></svg>\n").unwrap(),
            });
        let h = p.render();
        assert!(h.starts_with("<!DOCTYPE html>"), "{h}");
        assert!(h.contains("<title>a &lt;b&gt; &amp; &#39;c&#39;</title>"));
        assert!(h.contains("<p>x &lt; y</p>"));
        assert!(h.contains("<pre>lrugen exp f.toml --out DIR</pre>"));
        assert!(h.contains("<tr><th>k&quot;</th><td>&lt;v&gt;</td></tr>"));
        assert!(h.contains("<tr><td>mglru</td><td class=\"n\">1,234</td></tr>"));
        assert!(h.contains("<td>&lt;classic&gt;</td>"));
        assert!(h.contains("<svg class=\"plot\" width=\"10\" height=\"10\"><rect/></svg>"));
        assert!(!h.contains("<?xml"), "{h}");
        for fetch in ["<script", "<link", "src=", "href=", "@import", "url("] {
            assert!(!h.contains(fetch), "{fetch} in {h}");
        }
        assert_eq!(inline_svg("no plot"), None);
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("examples/fio-zipf.toml"), "examples/fio-zipf.toml");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
