//! Markdown to HTML for the Document tab's preview, for exactly the Markdown that
//! `slo_core::document` writes: ATX headings, paragraphs, `- ` lists, GFM tables (with `---` and
//! `---:` alignment rows), `**strong**`, `` `code` ``, backslash escapes and the four entities
//! `escape` produces. It gives the same HTML as pulldown-cmark (with tables, raw HTML as text) on
//! those documents (the test below compares them), for a fraction of the wasm: no entity table,
//! no general CommonMark parser. Anything else is text, escaped: nothing is ever interpreted as
//! HTML.

/// Renders `markdown` to HTML.
pub fn to_html(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    let lines: Vec<&str> = markdown.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = strip_indent(lines.get(i).copied().unwrap_or_default());
        if line.trim().is_empty() {
            i += 1;
        } else if let Some((level, text)) = heading(line) {
            out.push_str(&format!("<h{level}>"));
            inline(text, &mut out);
            out.push_str(&format!("</h{level}>\n"));
            i += 1;
        } else if let Some(aligns) = lines
            .get(i + 1)
            .filter(|_| line.starts_with('|'))
            .and_then(|l| alignments(l))
            .filter(|a| a.len() == cells(line).len())
        {
            out.push_str("<table><thead><tr>");
            row(line, "th", &aligns, &mut out);
            out.push_str("</tr></thead><tbody>\n");
            i += 2;
            while let Some(l) = lines.get(i).map(|l| strip_indent(l)) {
                if l.trim().is_empty() || heading(l).is_some() || item(l).is_some() {
                    break;
                }
                out.push_str("<tr>");
                row(l, "td", &aligns, &mut out);
                out.push_str("</tr>\n");
                i += 1;
            }
            out.push_str("</tbody></table>\n");
        } else if item(line).is_some() {
            // Items, each with its lazy continuation lines; a blank line between items makes the
            // list loose (each item a paragraph).
            let mut items: Vec<String> = Vec::new();
            let mut loose = false;
            while i < lines.len() {
                let l = strip_indent(lines.get(i).copied().unwrap_or_default());
                if let Some(text) = item(l) {
                    items.push(text.to_string());
                } else if l.trim().is_empty() {
                    let next = lines
                        .get(i + 1..)
                        .unwrap_or_default()
                        .iter()
                        .find(|l| !l.trim().is_empty());
                    if next.and_then(|n| item(strip_indent(n))).is_none() {
                        break;
                    }
                    loose = true;
                } else if heading(l).is_some() || l.starts_with('|') && is_table_start(&lines, i) {
                    break;
                } else if let Some(last) = items.last_mut() {
                    last.push('\n');
                    last.push_str(l);
                }
                i += 1;
            }
            out.push_str("<ul>\n");
            for text in items {
                out.push_str(if loose { "<li>\n<p>" } else { "<li>" });
                inline(&text, &mut out);
                out.push_str(if loose { "</p>\n</li>\n" } else { "</li>\n" });
            }
            out.push_str("</ul>\n");
        } else {
            let mut text = line.to_string();
            i += 1;
            while let Some(l) = lines.get(i).map(|l| strip_indent(l)) {
                if l.trim().is_empty()
                    || heading(l).is_some()
                    || item(l).is_some()
                    || l.starts_with('|') && is_table_start(&lines, i)
                {
                    break;
                }
                text.push('\n');
                text.push_str(l.trim_start());
                i += 1;
            }
            out.push_str("<p>");
            inline(&text, &mut out);
            out.push_str("</p>\n");
        }
    }
    out
}

fn strip_indent(line: &str) -> &str {
    let n = line.len() - line.trim_start_matches(' ').len();
    match line.get(n..) {
        Some(rest) if n <= 3 => rest,
        _ => line,
    }
}

fn is_table_start(lines: &[&str], i: usize) -> bool {
    lines
        .get(i + 1)
        .and_then(|l| alignments(l))
        .is_some_and(|a| {
            let line = lines.get(i).copied().unwrap_or_default();
            a.len() == cells(strip_indent(line)).len()
        })
}

/// `# text` to `###### text`: the level and the text without its closing `#`s.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.len() - line.trim_start_matches('#').len();
    let rest = line.get(level..).unwrap_or_default();
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut text = rest.trim();
    let closed = text.trim_end_matches('#');
    if closed.is_empty() || closed.ends_with([' ', '\t']) {
        text = closed.trim_end();
    }
    Some((level, text))
}

/// The text of a `- ` list item.
fn item(line: &str) -> Option<&str> {
    line.strip_prefix("- ")
        .or_else(|| (line == "-").then_some(""))
        .map(str::trim)
}

/// The cells of a table row: split at unescaped `|`, outer pipes dropped, each trimmed.
fn cells(line: &str) -> Vec<&str> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let mut out = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (k, c) in line.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => {
                out.push(line.get(start..k).unwrap_or_default().trim());
                start = k + 1;
            }
            _ => escaped = false,
        }
    }
    let last = line.get(start..).unwrap_or_default().trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// A delimiter row (`|---|---:|`): each column's `text-align`, if any.
fn alignments(line: &str) -> Option<Vec<Option<&'static str>>> {
    let line = strip_indent(line);
    if !line.contains('|') && !line.contains('-') {
        return None;
    }
    cells(line)
        .into_iter()
        .map(|c| {
            let left = c.starts_with(':');
            let right = c.ends_with(':');
            let dashes = c.trim_matches(':');
            (!dashes.is_empty() && dashes.bytes().all(|b| b == b'-')).then_some(
                match (left, right) {
                    (true, true) => Some("center"),
                    (true, false) => Some("left"),
                    (false, true) => Some("right"),
                    (false, false) => None,
                },
            )
        })
        .collect()
}

fn row(line: &str, tag: &str, aligns: &[Option<&str>], out: &mut String) {
    let cells = cells(line);
    for (k, align) in aligns.iter().enumerate() {
        out.push('<');
        out.push_str(tag);
        if let Some(a) = align {
            out.push_str(&format!(" style=\"text-align: {a}\""));
        }
        out.push('>');
        // An escaped pipe in a cell is a pipe.
        inline(&cells.get(k).unwrap_or(&"").replace("\\|", "|"), out);
        out.push_str("</");
        out.push_str(tag);
        out.push('>');
    }
}

/// Escapes text for an HTML body: `&`, `<`, `>`.
fn text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_punctuation()
    } else {
        !c.is_alphanumeric() && !c.is_whitespace()
    }
}

/// How many times `c` repeats from `chars[k]` on.
fn run_of(chars: &[(usize, char)], k: usize, c: char) -> usize {
    chars
        .get(k..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&(_, x)| x == c)
        .count()
}

/// Inline Markdown: backslash escapes, entities, code spans, `**strong**`, hard and soft breaks.
fn inline(s: &str, out: &mut String) {
    // Pieces of output, with `**` runs as placeholders until they are paired.
    enum Piece {
        Html(String),
        Strong { open: bool, close: bool },
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut buf = String::new();
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut k = 0;
    while let Some(&(at, c)) = chars.get(k) {
        match c {
            '\\' => match chars.get(k + 1) {
                Some(&(_, n)) if n.is_ascii_punctuation() => {
                    text(n.encode_utf8(&mut [0; 4]), &mut buf);
                    k += 2;
                    continue;
                }
                Some(&(_, '\n')) => {
                    buf.push_str("<br />\n");
                    k += 2;
                    continue;
                }
                _ => buf.push('\\'),
            },
            '&' => {
                let rest = s.get(at..).unwrap_or_default();
                let found = [
                    ("&amp;", "&amp;"),
                    ("&lt;", "&lt;"),
                    ("&gt;", "&gt;"),
                    ("&quot;", "\""),
                ]
                .into_iter()
                .find(|(e, _)| rest.starts_with(e));
                match found {
                    Some((e, html)) => {
                        buf.push_str(html);
                        k += e.len();
                        continue;
                    }
                    None => buf.push_str("&amp;"),
                }
            }
            ' ' => {
                let n = run_of(&chars, k, ' ');
                match chars.get(k + n) {
                    Some(&(_, '\n')) => {
                        buf.push_str(if n >= 2 { "<br />\n" } else { "\n" });
                        k += n + 1;
                    }
                    None => k += n,
                    Some(_) => {
                        buf.push_str(&" ".repeat(n));
                        k += n;
                    }
                }
                continue;
            }
            '\n' => {
                buf.push('\n');
                k += 1;
                // Leading spaces of a continuation line are not content.
                while chars.get(k).is_some_and(|&(_, c)| c == ' ') {
                    k += 1;
                }
                continue;
            }
            '`' => {
                let n = run_of(&chars, k, '`');
                let ticks = "`".repeat(n);
                let body_start = at + n;
                // A closing run of exactly n backticks.
                let mut search = body_start;
                let mut end = None;
                while let Some(p) = s.get(search..).and_then(|r| r.find(&ticks)) {
                    let p = search + p;
                    let tail = s.get(p..).unwrap_or_default();
                    let run = tail.len() - tail.trim_start_matches('`').len();
                    if run == n {
                        end = Some(p);
                        break;
                    }
                    search = p + run;
                }
                if let Some(end) = end {
                    let code = s
                        .get(body_start..end)
                        .unwrap_or_default()
                        .replace('\n', " ");
                    let code = if code.len() >= 2
                        && code.starts_with(' ')
                        && code.ends_with(' ')
                        && !code.trim().is_empty()
                    {
                        code.get(1..code.len() - 1).unwrap_or_default()
                    } else {
                        code.as_str()
                    };
                    buf.push_str("<code>");
                    text(code, &mut buf);
                    buf.push_str("</code>");
                    let consumed = s.get(at..end + n).unwrap_or_default().chars().count();
                    k += consumed;
                } else {
                    buf.push_str(&ticks);
                    k += n;
                }
                continue;
            }
            '*' => {
                let n = run_of(&chars, k, '*');
                if n == 2 {
                    let before = k.checked_sub(1).and_then(|p| chars.get(p)).map(|&(_, c)| c);
                    let after = chars.get(k + 2).map(|&(_, c)| c);
                    let ws = |c: Option<char>| c.is_none_or(char::is_whitespace);
                    let punct = |c: Option<char>| c.is_some_and(is_punct);
                    let open = !ws(after) && (!punct(after) || ws(before) || punct(before));
                    let close = !ws(before) && (!punct(before) || ws(after) || punct(after));
                    if open || close {
                        pieces.push(Piece::Html(std::mem::take(&mut buf)));
                        pieces.push(Piece::Strong { open, close });
                        k += 2;
                        continue;
                    }
                }
                buf.push_str(&"*".repeat(n));
                k += n;
                continue;
            }
            c => text(c.encode_utf8(&mut [0; 4]), &mut buf),
        }
        k += 1;
    }
    pieces.push(Piece::Html(buf));
    // Pair each closer with the nearest unpaired opener before it; openers in between are text.
    let mut role: Vec<Option<&str>> = vec![None; pieces.len()];
    let mut openers: Vec<usize> = Vec::new();
    for (p, piece) in pieces.iter().enumerate() {
        if let Piece::Strong { open, close } = *piece {
            if close {
                if let Some(o) = openers.pop() {
                    for (at, tag) in [(o, "<strong>"), (p, "</strong>")] {
                        if let Some(slot) = role.get_mut(at) {
                            *slot = Some(tag);
                        }
                    }
                    continue;
                }
            }
            if open {
                openers.push(p);
            }
        }
    }
    for (piece, role) in pieces.iter().zip(role) {
        match piece {
            Piece::Html(h) => out.push_str(h),
            Piece::Strong { .. } => out.push_str(role.unwrap_or("**")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::to_html;
    use slo_core::document::{document, Measured};
    use slo_core::evaluate::{report, Duration};
    use slo_core::ingest::{parse, IngestOptions};
    use slo_core::presets::presets;

    /// What the preview rendered before: pulldown-cmark with tables, raw HTML shown as text.
    fn pulldown(markdown: &str) -> String {
        use pulldown_cmark::{html, Event, Options, Parser};
        let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES).map(|event| match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            other => other,
        });
        let mut out = String::new();
        html::push_html(&mut out, parser);
        out
    }

    fn same(markdown: &str) {
        let (ours, theirs) = (to_html(markdown), pulldown(markdown));
        if ours != theirs {
            // The first differing line, with the Markdown it came from.
            let (a, b) = ours
                .lines()
                .zip(theirs.lines())
                .find(|(a, b)| a != b)
                .unwrap_or(("(end)", "(end)"));
            panic!("differs:\n ours:   {a:?}\n theirs: {b:?}\nfor:\n{markdown}");
        }
    }

    #[test]
    fn documents_render_as_pulldown_cmark_renders_them() {
        let csv = include_str!("../tests/fixtures/worked_example.csv");
        let loaded = parse(
            "worked_example.csv",
            csv.as_bytes(),
            &IngestOptions::default(),
        );
        let files = [loaded.provenance.clone()];
        let odd_names = [
            "",
            "a*b* _c_ `d` [e](f) <g> & \"h\" | i \\ #j ~k~ !l {m} $n",
            "**bold** name",
            "x  ",
            "é — ≤ ✓",
        ];
        for p in presets() {
            let mut specs = vec![p.spec.clone()];
            for name in odd_names {
                let mut s = p.spec.clone();
                s.service = name.to_string();
                s.classes[0].name = name.to_string();
                s.classes[0].description = format!("{name}\n\n- item\n1. one\n\n# heading {name}");
                s.budget_policy = format!("{name}\n\nSecond  \nparagraph {name}");
                specs.push(s);
            }
            for spec in specs {
                same(&document(&spec, None));
                let r = report(
                    &loaded.table,
                    &spec,
                    &Duration::known(10.0, "given <by> the user"),
                );
                let measured = Measured {
                    report: &r,
                    files: &files,
                };
                same(&document(&spec, Some(&measured)));
            }
        }
    }

    #[test]
    fn small_cases_render_as_pulldown_cmark_renders_them() {
        for md in [
            "# Title\n\npara **bold** and `code` \\* x\n",
            "- a\n- b\n\n- c\n\nafter\n",
            "| a | b |\n|---|---:|\n| 1 | 2 \\| 3 |\n\ntext",
            "a ****\n\n** x **\n\n**a**b**c**",
            "&amp; &lt; &gt; &quot; & x",
            "line one\nline two  \nline three",
        ] {
            same(md);
        }
    }
}
