//! A token that must never reach a log line, a `Debug` dump, the database or a settings file.

use std::fmt;

/// An access or refresh token.
///
/// `Debug` and `Display` print `Secret(***)` / `***`, so a token can sit inside structs that
/// derive `Debug` (errors, tracing fields) without leaking. There is deliberately no
/// `Serialize`: the refresh token goes to the OS keyring and nowhere else.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a token.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The raw value. Call only where it goes onto the wire (an HTTP header, a token request)
    /// or into the keyring.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True when the value is empty or only whitespace.
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }

    /// Compares without stopping at the first differing byte, so a caller comparing a
    /// presented value learns nothing from the timing.
    pub(crate) fn constant_time_eq(&self, other: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), other.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_are_redacted() {
        let s = Secret::new("rt-live-123");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(s.expose(), "rt-live-123");
        assert!(s.constant_time_eq("rt-live-123"));
        assert!(!s.constant_time_eq("rt-live-124"));
        assert!(!s.constant_time_eq("rt"));
    }
}
