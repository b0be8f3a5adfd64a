//! Colour for the terminal face: on only when standard output is a terminal and `NO_COLOR`
//! is unset (<https://no-color.org>: present and not empty turns colour off).
//!
//! Every styled piece is wrapped in its own "on" and "off" SGR pair (bold 1/22, italic 3/23,
//! colours 3x/39), so a style inside another never ends the outer one.

use std::ffi::OsStr;
use std::io::IsTerminal as _;

/// Whether the face paints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

/// The rule: a terminal, and no `NO_COLOR` with a value.
pub fn color_enabled(stdout_is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    stdout_is_terminal && no_color.is_none_or(OsStr::is_empty)
}

impl Style {
    #[cfg(test)]
    pub const PLAIN: Style = Style { color: false };

    /// From this process's standard output and environment.
    pub fn detect() -> Self {
        Self {
            color: color_enabled(
                std::io::stdout().is_terminal(),
                std::env::var_os("NO_COLOR").as_deref(),
            ),
        }
    }

    fn paint(self, on: &str, off: &str, s: &str) -> String {
        if self.color && !s.is_empty() {
            format!("\u{1b}[{on}m{s}\u{1b}[{off}m")
        } else {
            s.to_owned()
        }
    }

    pub fn bold(self, s: &str) -> String {
        self.paint("1", "22", s)
    }
    pub fn dim(self, s: &str) -> String {
        self.paint("2", "22", s)
    }
    pub fn italic(self, s: &str) -> String {
        self.paint("3", "23", s)
    }
    pub fn underline(self, s: &str) -> String {
        self.paint("4", "24", s)
    }
    pub fn strike(self, s: &str) -> String {
        self.paint("9", "29", s)
    }
    pub fn red(self, s: &str) -> String {
        self.paint("31", "39", s)
    }
    pub fn green(self, s: &str) -> String {
        self.paint("32", "39", s)
    }
    pub fn yellow(self, s: &str) -> String {
        self.paint("33", "39", s)
    }
    pub fn cyan(self, s: &str) -> String {
        self.paint("36", "39", s)
    }
}

/// The text without the SGR sequences (`ESC [ digits m`) this module writes; any other escape
/// is left in place, so a test can tell the face's styles from text that leaked through.
#[cfg(test)]
pub fn strip_sgr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find("\u{1b}[") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with('m') {
            rest = &after[digits + 1..];
        } else {
            out.push('\u{1b}');
            rest = &rest[pos + 1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        let set = |v: &str| Some(OsStr::new(v).to_owned());
        // (terminal, NO_COLOR) → colour
        for (tty, no_color, want) in [
            (true, None, true),
            (true, set(""), true),
            (true, set("1"), false),
            (true, set("0"), false),
            (true, set("false"), false),
            (false, None, false),
            (false, set(""), false),
            (false, set("1"), false),
        ] {
            assert_eq!(
                color_enabled(tty, no_color.as_deref()),
                want,
                "tty={tty} NO_COLOR={no_color:?}"
            );
        }
    }

    #[test]
    fn plain_style_adds_nothing_and_colour_pairs_close_themselves() {
        let plain = Style::PLAIN;
        for f in [
            Style::bold,
            Style::dim,
            Style::italic,
            Style::underline,
            Style::strike,
            Style::red,
            Style::green,
            Style::yellow,
            Style::cyan,
        ] {
            assert_eq!(f(plain, "x"), "x");
            let painted = f(Style { color: true }, "x");
            assert!(painted.starts_with("\u{1b}[") && painted.ends_with('m'));
            assert_eq!(painted.matches('\u{1b}').count(), 2, "{painted:?}");
            assert_eq!(strip_sgr(&painted), "x");
        }
    }
}
