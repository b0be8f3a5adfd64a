//! Model text (markdown) as text for a terminal, one source line at a time, so a reply can be
//! printed while it streams and renders the same whatever chunks it arrived in.
//!
//! Headings lose their `#` (bold, and underlined with a rule when there is no colour), list
//! items get a bullet, fenced code is indented and printed verbatim, quotes get a bar, links
//! show their address, and emphasis is styled with colour or stripped without it: no raw `**`
//! reaches the operator. Every line is escaped by [`crate::term::block`] first, so model text
//! can never redraw the terminal; only this module's own styles add escape sequences.

use super::style::Style;
use crate::term;

/// A markdown renderer that remembers whether it is inside a fenced code block.
#[derive(Debug, Clone)]
pub struct Markdown {
    style: Style,
    /// The open fence: its character and length.
    fence: Option<(char, usize)>,
}

/// Deepest indentation of a fence line (a fence in a nested list item).
const FENCE_INDENT: usize = 8;

/// Width of the rule under a heading or for a thematic break, at most.
const RULE_MAX: usize = 60;

impl Markdown {
    pub fn new(style: Style) -> Self {
        Self { style, fence: None }
    }

    /// Forgets an open fence (a message ended inside one).
    pub fn reset(&mut self) {
        self.fence = None;
    }

    /// One source line (without its line break) as zero or more terminal lines, each ending
    /// in `\n`.
    pub fn line(&mut self, raw: &str) -> String {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let escaped = term::block(raw);
        let line: &str = &escaped;
        let s = self.style;
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();

        // Fences inside list items are indented with the item's text.
        if let Some((ch, len)) = self.fence {
            if indent <= FENCE_INDENT && is_fence_close(trimmed, ch, len) {
                self.fence = None;
                return String::new();
            }
            return format!("    {}\n", s.cyan(line));
        }
        if indent <= FENCE_INDENT
            && let Some((ch, len)) = fence_open(trimmed)
        {
            self.fence = Some((ch, len));
            return String::new();
        }
        if indent <= 3
            && let Some((level, text)) = heading(trimmed)
        {
            let text = self.inline(text);
            let width = visible_width(&text).min(RULE_MAX);
            return match (s.color, level) {
                (true, 1 | 2) => format!("{}\n", s.bold(&s.underline(&text))),
                (true, _) => format!("{}\n", s.bold(&text)),
                (false, 1) => format!("{text}\n{}\n", "=".repeat(width.max(3))),
                (false, 2) => format!("{text}\n{}\n", "-".repeat(width.max(3))),
                (false, _) => format!("{text}\n"),
            };
        }
        if indent <= 3 && is_thematic_break(trimmed) {
            return format!("{}\n", s.dim(&"─".repeat(24)));
        }
        if indent <= 3
            && let Some(rest) = trimmed.strip_prefix('>')
        {
            let rest = rest.strip_prefix(' ').unwrap_or(rest);
            return format!("  {} {}\n", s.dim("│"), self.inline(rest));
        }
        let lead = &line[..indent];
        if let Some(rest) = bullet_item(trimmed) {
            let (mark, rest) = match rest {
                r if r.starts_with("[ ] ") => ("☐", &r[4..]),
                r if r.starts_with("[x] ") || r.starts_with("[X] ") => ("☑", &r[4..]),
                r => ("•", r),
            };
            return format!("{lead}  {mark} {}\n", self.inline(rest));
        }
        if let Some((number, rest)) = ordered_item(trimmed) {
            return format!("{lead}  {number}. {}\n", self.inline(rest));
        }
        format!("{}\n", self.inline(line))
    }

    /// Inline markup: code spans, links, emphasis, backslash escapes.
    pub fn inline(&self, text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::with_capacity(text.len());
        self.inline_chars(&chars, &mut out);
        out
    }

    fn inline_chars(&self, c: &[char], out: &mut String) {
        let s = self.style;
        let n = c.len();
        let mut i = 0;
        while i < n {
            let ch = c[i];
            // A backslash before ASCII punctuation is a literal; `\x1b` from the escaping
            // above is not punctuation and stays as written.
            if ch == '\\' && i + 1 < n && c[i + 1].is_ascii_punctuation() {
                out.push(c[i + 1]);
                i += 2;
                continue;
            }
            if ch == '`' {
                let k = run_len(c, i, '`');
                if let Some(close) = find_backtick_close(c, i + k, k) {
                    let code: String = c[i + k..close].iter().collect();
                    let code = strip_one_space(&code);
                    if s.color {
                        out.push_str(&s.cyan(code));
                    } else {
                        out.push('`');
                        out.push_str(code);
                        out.push('`');
                    }
                    i = close + k;
                } else {
                    out.extend(&c[i..i + k]);
                    i += k;
                }
                continue;
            }
            if (ch == '[' || (ch == '!' && c.get(i + 1) == Some(&'[')))
                && let Some((label, url, end)) = link_at(c, if ch == '!' { i + 1 } else { i })
            {
                let label_text = self.inline(&label);
                if label.trim().is_empty() || label == url {
                    out.push_str(&s.underline(&url));
                } else {
                    out.push_str(&label_text);
                    out.push_str(" (");
                    out.push_str(&s.underline(&url));
                    out.push(')');
                }
                i = end;
                continue;
            }
            if ch == '<'
                && let Some(end) = c[i + 1..].iter().position(|&x| x == '>' || x == ' ')
                && c[i + 1 + end] == '>'
            {
                let inner: String = c[i + 1..i + 1 + end].iter().collect();
                if inner.contains("://") || inner.starts_with("mailto:") {
                    out.push_str(&s.underline(&inner));
                    i += end + 2;
                    continue;
                }
            }
            if matches!(ch, '*' | '_' | '~') {
                let k = run_len(c, i, ch);
                if let Some((used, close)) = emphasis_close(c, i, k, ch) {
                    let mut inner = String::new();
                    self.inline_chars(&c[i + used..close], &mut inner);
                    let styled = match (ch, used) {
                        ('~', _) => s.strike(&inner),
                        (_, 1) => s.italic(&inner),
                        (_, 2) => s.bold(&inner),
                        _ => s.bold(&s.italic(&inner)),
                    };
                    // Extra delimiters of the opening run stay literal, as in CommonMark.
                    out.extend(&c[i..i + (k - used)]);
                    out.push_str(&styled);
                    i = close + used;
                    // The closing run may be longer than what it closed.
                    continue;
                }
                // An unmatched `**` (a bold cut by a line break) is markup, never text.
                if ch == '*' && k >= 2 {
                    i += k;
                    continue;
                }
                out.extend(&c[i..i + k]);
                i += k;
                continue;
            }
            out.push(ch);
            i += 1;
        }
    }
}

fn run_len(c: &[char], i: usize, ch: char) -> usize {
    c[i..].iter().take_while(|&&x| x == ch).count()
}

fn find_backtick_close(c: &[char], from: usize, k: usize) -> Option<usize> {
    let mut j = from;
    while j < c.len() {
        if c[j] == '`' {
            let m = run_len(c, j, '`');
            if m == k {
                return Some(j);
            }
            j += m;
        } else {
            j += 1;
        }
    }
    None
}

fn strip_one_space(code: &str) -> &str {
    if code.len() >= 2 && code.starts_with(' ') && code.ends_with(' ') && code.trim() != "" {
        &code[1..code.len() - 1]
    } else {
        code
    }
}

/// `[label](url)` starting at `i` (the `[`): the label, the address and the index after `)`.
fn link_at(c: &[char], i: usize) -> Option<(String, String, usize)> {
    let mut depth = 0usize;
    let mut j = i;
    let close = loop {
        match c.get(j)? {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    break j;
                }
            }
            _ => {}
        }
        j += 1;
    };
    if c.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = c[close + 2..].iter().position(|&x| x == ')')? + close + 2;
    let url: String = c[close + 2..end].iter().collect();
    let url = url.split_whitespace().next().unwrap_or_default().to_owned();
    if url.is_empty() {
        return None;
    }
    let label: String = c[i + 1..close].iter().collect();
    Some((label, url, end + 1))
}

fn is_space(c: Option<&char>) -> bool {
    c.is_none_or(|c| c.is_whitespace())
}

fn is_alnum(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric())
}

/// The closing run for an opening delimiter run of `k` `ch` at `i`: how many delimiters it
/// uses (1 italic, 2 bold, 3 both; `~~` strikes) and where the closer starts.
fn emphasis_close(c: &[char], i: usize, k: usize, ch: char) -> Option<(usize, usize)> {
    let used = if ch == '~' {
        if k != 2 {
            return None;
        }
        2
    } else {
        k.min(3)
    };
    let after = c.get(i + k);
    let before = if i == 0 { None } else { c.get(i - 1) };
    // Left-flanking: not followed by white space; `_` never opens inside a word.
    if is_space(after) || (ch == '_' && is_alnum(before)) {
        return None;
    }
    let mut j = i + k;
    while j < c.len() {
        if c[j] == '`' {
            let m = run_len(c, j, '`');
            j = find_backtick_close(c, j + m, m).map_or(j + m, |close| close + m);
            continue;
        }
        if c[j] == ch {
            let m = run_len(c, j, ch);
            let prev = c.get(j - 1);
            let next = c.get(j + m);
            let can_close = !(is_space(prev) || (ch == '_' && is_alnum(next)));
            if can_close && m >= used && j > i + k {
                return Some((used, j));
            }
            j += m;
            continue;
        }
        j += 1;
    }
    None
}

fn fence_open(t: &str) -> Option<(char, usize)> {
    let ch = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = t.chars().take_while(|c| *c == ch).count();
    // An info string after backticks may not contain a backtick.
    let info = &t[len..];
    (len >= 3 && !(ch == '`' && info.contains('`'))).then_some((ch, len))
}

fn is_fence_close(t: &str, ch: char, len: usize) -> bool {
    let n = t.chars().take_while(|c| *c == ch).count();
    n >= len && t[n..].trim().is_empty()
}

fn heading(t: &str) -> Option<(usize, &str)> {
    let level = t.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    // A closing run of `#` is not part of the text.
    let text = rest.trim();
    let text = match text.trim_end_matches('#') {
        stripped if stripped.is_empty() || stripped.ends_with(' ') => stripped.trim_end(),
        _ => text,
    };
    Some((level, text))
}

fn is_thematic_break(t: &str) -> bool {
    let mut chars = t.chars().filter(|c| !c.is_whitespace());
    let Some(first) = chars.next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_')
        && t.chars().filter(|c| !c.is_whitespace()).count() >= 3
        && chars.all(|c| c == first)
}

fn bullet_item(t: &str) -> Option<&str> {
    let mut it = t.chars();
    let mark = it.next()?;
    if !matches!(mark, '-' | '*' | '+') {
        return None;
    }
    let rest = &t[1..];
    rest.strip_prefix(' ')
        .or_else(|| rest.strip_prefix('\t'))
        .map(|r| r.trim_start())
}

fn ordered_item(t: &str) -> Option<(&str, &str)> {
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = &t[digits..];
    let rest = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))?;
    let rest = rest.strip_prefix(' ')?;
    Some((&t[..digits], rest.trim_start()))
}

/// Characters shown, without this module's escape sequences.
fn visible_width(s: &str) -> usize {
    let mut n = 0;
    let mut in_esc = false;
    for c in s.chars() {
        if in_esc {
            in_esc = c != 'm';
        } else if c == '\u{1b}' {
            in_esc = true;
        } else {
            n += 1;
        }
    }
    n
}

/// A whole text, line by line (tests, and text that arrives in one piece).
pub fn render(style: Style, text: &str) -> String {
    let mut md = Markdown::new(style);
    text.split('\n').map(|l| md.line(l)).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::render::style::strip_sgr;
    use crate::term::tests::hostile_samples;

    fn plain(text: &str) -> String {
        render(Style::PLAIN, text)
    }

    fn colour(text: &str) -> String {
        render(Style { color: true }, text)
    }

    #[test]
    fn emphasis_markers_never_reach_the_operator() {
        for (src, want) in [
            ("**bold** text", "bold text"),
            ("__bold__ text", "bold text"),
            ("an *italic* word", "an italic word"),
            ("an _italic_ word", "an italic word"),
            ("***both***", "both"),
            ("~~gone~~ here", "gone here"),
            ("**Disk:** `/` is *fine*", "Disk: `/` is fine"),
            (
                "nested **bold and *italic* inside**",
                "nested bold and italic inside",
            ),
            ("**unclosed bold", "unclosed bold"),
            ("closing only**", "closing only"),
            ("a **b** c **d**", "a b c d"),
            ("- **item** one", "  • item one"),
            ("1. **first**", "  1. first"),
            ("# **Title**", "Title\n====="),
        ] {
            assert_eq!(plain(src), format!("{want}\n"), "{src:?}");
            assert!(!colour(src).contains("**"), "{src:?}: {:?}", colour(src));
        }
    }

    #[test]
    fn literal_stars_and_underscores_are_kept() {
        for src in [
            "5 * 3 * 2 = 30",
            "snake_case_name and another_one",
            "glob *.log files",
            "a * b",
            "file_name.txt",
            "2*3",
        ] {
            assert_eq!(plain(src), format!("{src}\n"), "{src:?}");
        }
    }

    #[test]
    fn code_is_verbatim_and_indented() {
        let src = "Run this:\n```bash\ndf -h **/** *x*\n  indented\n```\nAfter.";
        assert_eq!(
            plain(src),
            "Run this:\n    df -h **/** *x*\n      indented\nAfter.\n"
        );
        // Inline code keeps its markup characters; the backticks stay only without colour.
        assert_eq!(plain("use `a **b** c`"), "use `a **b** c`\n");
        let c = colour("use `a **b** c`");
        assert!(c.contains("a **b** c") && !c.contains('`'), "{c:?}");
        // Tilde fences, longer fences, an unclosed fence at the end.
        assert_eq!(plain("~~~\nx\n~~~"), "    x\n");
        assert_eq!(plain("````\n```\n````"), "    ```\n");
        assert_eq!(plain("```\nopen"), "    open\n");
        // A fence inside a list item, indented with its text.
        assert_eq!(
            plain("- step:\n    ```\n    ls **x**\n    ```\n- next"),
            "  • step:\n        ls **x**\n  • next\n"
        );
    }

    #[test]
    fn headings_lists_quotes_links_rules() {
        assert_eq!(plain("# Report"), "Report\n======\n");
        assert_eq!(plain("## Disks ##"), "Disks\n-----\n");
        assert_eq!(plain("### Detail"), "Detail\n");
        assert_eq!(plain("#hashtag"), "#hashtag\n");
        assert_eq!(plain("- a\n* b\n+ c"), "  • a\n  • b\n  • c\n");
        assert_eq!(plain("  - nested"), "    • nested\n");
        assert_eq!(plain("- [ ] todo\n- [x] done"), "  ☐ todo\n  ☑ done\n");
        assert_eq!(plain("3) third"), "  3. third\n");
        assert_eq!(plain("> quoted *text*"), "  │ quoted text\n");
        assert_eq!(
            plain("see [the docs](https://example.org/x) now"),
            "see the docs (https://example.org/x) now\n"
        );
        assert_eq!(plain("<https://example.org>"), "https://example.org\n");
        assert_eq!(plain("---"), format!("{}\n", "─".repeat(24)));
        assert_eq!(plain(r"\*not italic\*"), "*not italic*\n");
        let c = colour("# Report");
        assert!(c.contains("Report") && !c.contains('#'), "{c:?}");
    }

    #[test]
    fn any_chunking_of_a_line_by_line_stream_renders_the_same() {
        // The face feeds complete lines; a line is rendered once whatever the deltas were.
        let text = "## Result\n\n**Disk** usage on `/` is *41%*.\n```\nFilesystem  Size\n```\n- ok";
        let whole = plain(text);
        let mut md = Markdown::new(Style::PLAIN);
        let mut out = String::new();
        for line in text.split('\n') {
            out.push_str(&md.line(line));
        }
        assert_eq!(out, whole);
    }

    /// Many generated lines of markdown punctuation: nothing panics, and without code spans or
    /// backslash escapes no `**` survives.
    #[test]
    fn generated_markdown_never_panics_and_never_prints_a_double_star() {
        let alphabet: Vec<char> = "*_~#>-+[]()<>!:/. aé1\t`\\".chars().collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let line: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            for style in [Style::PLAIN, Style { color: true }] {
                let out = render(style, &line);
                if !line.contains('`') && !line.contains('\\') {
                    let shown = strip_sgr(&out);
                    assert!(!shown.contains("**"), "{line:?} → {shown:?}");
                }
            }
        }
    }

    #[test]
    fn b3_model_markdown_never_prints_a_hostile_character_raw() {
        for (name, c) in hostile_samples() {
            for src in [
                format!("**bold{c}**"),
                format!("```\ncode{c}\n```"),
                format!("# head{c}"),
                format!("- item{c}"),
                format!("[x{c}](http://a{c})"),
                format!("`code{c}`"),
            ] {
                for style in [Style::PLAIN, Style { color: true }] {
                    // Only the face's own styles may add escape sequences.
                    let out = strip_sgr(&render(style, &src));
                    assert!(!out.contains(c), "{name} printed raw from {src:?}: {out:?}");
                }
            }
        }
    }
}
