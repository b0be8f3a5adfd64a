//! A string that must never reach a log line, a `Debug` dump or a settings file.

use std::fmt;

/// An API key or bearer token.
///
/// `Debug` and `Display` print `Secret(***)`, so a key can sit inside structs that derive
/// `Debug` (configs, errors, tracing fields) without leaking. There is deliberately no
/// `Serialize` impl: secrets are stored by the auth layer in the keyring, never serialized
/// into settings.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The raw value. Call only where it goes onto the wire (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True when the value is empty or only whitespace (an unset variable exported as "").
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
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
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(s.expose(), "sk-live-123");
    }
}
