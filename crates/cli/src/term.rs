//! Text that came from a model, a command or a host, made safe to print on a terminal.
//!
//! A terminal obeys what it is sent: an escape sequence can erase the real command and draw a
//! fake prompt, a carriage return can overwrite a line, a bidi override can make `rm` read as
//! something else. Every character that a terminal may act on or that changes how the text
//! around it is shown is written as a visible escape (`\x1b`, `\u{202e}`) instead:
//!
//! - C0 controls (U+0000–U+001F, except the line breaks and tabs that [`block`] keeps), DEL
//!   (U+007F) and C1 controls (U+0080–U+009F);
//! - bidi controls (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069);
//! - zero-width and invisible format characters (U+00AD, U+180E, U+200B–U+200D,
//!   U+2060–U+2064, U+206A–U+206F, U+FEFF, U+FFF9–U+FFFB, tags U+E0000–U+E007F) and the Unicode
//!   line and paragraph separators (U+2028, U+2029).
//!
//! [`line()`] is for text that must stay on one line (a command in an approval prompt, a tool
//! argument, a title); [`block`] for prose that may span lines (streamed model text, notes).
//! [`json`] escapes the same characters inside a JSON document, which stays valid JSON.

use std::borrow::Cow;

/// Characters a terminal may act on or that change how the text around them reads.
fn is_hostile(c: char) -> bool {
    c.is_control() // C0, DEL, C1
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_hostile(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !is_hostile(c) || keep(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// For text that must stay on one line: every hostile character escaped, line breaks and tabs
/// included.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// For prose that may span lines: line feeds and tabs are kept, every other hostile
/// character (carriage returns included: they overwrite what was printed) escaped.
pub fn block(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

/// A serialised JSON document with every hostile character that serde leaves raw (DEL, C1,
/// format characters) written as a `\uXXXX` escape: the same JSON value, safe to print.
pub fn json(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hostile) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_hostile(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod tests {
    use super::*;

    /// One representative per class of hostile character, with its name.
    pub(crate) fn hostile_samples() -> Vec<(&'static str, char)> {
        let mut out = vec![
            ("NUL", '\u{0}'),
            ("BEL", '\u{7}'),
            ("BS", '\u{8}'),
            ("CR", '\r'),
            ("VT", '\u{b}'),
            ("FF", '\u{c}'),
            ("ESC", '\u{1b}'),
            ("US", '\u{1f}'),
            ("DEL", '\u{7f}'),
            ("C1 PAD", '\u{80}'),
            ("C1 NEL", '\u{85}'),
            ("C1 CSI", '\u{9b}'),
            ("C1 OSC", '\u{9d}'),
            ("C1 APC", '\u{9f}'),
            ("soft hyphen", '\u{ad}'),
            ("ALM", '\u{61c}'),
            ("MVS", '\u{180e}'),
            ("ZWSP", '\u{200b}'),
            ("ZWNJ", '\u{200c}'),
            ("ZWJ", '\u{200d}'),
            ("LRM", '\u{200e}'),
            ("RLM", '\u{200f}'),
            ("LSEP", '\u{2028}'),
            ("PSEP", '\u{2029}'),
            ("LRE", '\u{202a}'),
            ("RLE", '\u{202b}'),
            ("PDF", '\u{202c}'),
            ("LRO", '\u{202d}'),
            ("RLO", '\u{202e}'),
            ("WJ", '\u{2060}'),
            ("invisible times", '\u{2062}'),
            ("LRI", '\u{2066}'),
            ("RLI", '\u{2067}'),
            ("FSI", '\u{2068}'),
            ("PDI", '\u{2069}'),
            ("BOM", '\u{feff}'),
            ("interlinear anchor", '\u{fff9}'),
            ("tag", '\u{e0041}'),
        ];
        // Every C0 and C1 control, not only the famous ones.
        for c in (0u32..0x20).chain(0x80..0xa0).filter_map(char::from_u32) {
            if c != '\n' && c != '\t' {
                out.push(("control", c));
            }
        }
        out
    }

    #[test]
    fn b3_every_class_of_hostile_character_is_escaped_on_one_line() {
        for (name, c) in hostile_samples() {
            let text = format!("rm -rf /{c}[2K$ ls");
            let safe = line(&text);
            assert!(!safe.contains(c), "{name} printed raw: {safe:?}");
            assert!(
                safe.contains("rm -rf /"),
                "{name}: the text around it is kept"
            );
        }
        for c in ['\n', '\t'] {
            assert!(!line(&format!("a{c}b")).contains(c), "{c:?} breaks a line");
        }
    }

    #[test]
    fn b3_blocks_keep_line_feeds_and_tabs_and_escape_the_rest() {
        assert_eq!(block("a\n\tb"), "a\n\tb");
        for (name, c) in hostile_samples() {
            let text = format!("ok{c}done\n");
            let safe = block(&text);
            assert!(!safe.contains(c), "{name} printed raw: {safe:?}");
        }
    }

    #[test]
    fn b3_escapes_are_visible_and_plain_text_is_untouched() {
        assert_eq!(line("\u{1b}[2J"), "\\x1b[2J");
        assert_eq!(line("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(line("a\u{9b}31m"), "a\\u{9b}31m");
        for plain in ["ls -la /etc", "héllo wörld ✓ 日本語", "emoji 👍", ""] {
            assert!(matches!(line(plain), Cow::Borrowed(_)), "{plain}");
            assert!(matches!(block(plain), Cow::Borrowed(_)), "{plain}");
        }
    }

    #[test]
    fn b3_json_stays_the_same_value_without_raw_hostile_characters() {
        for (name, c) in hostile_samples() {
            let value = serde_json::json!({"text": format!("x{c}y"), "other": "plain"});
            let raw = serde_json::to_string(&value).unwrap();
            let safe = json(&raw);
            assert!(!safe.contains(c), "{name} printed raw: {safe:?}");
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            assert_eq!(back, value, "{name}: the JSON value is unchanged");
        }
    }
}
