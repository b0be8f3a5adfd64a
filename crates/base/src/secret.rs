//! A string that must never reach a log line, a `Debug` dump, the database or a settings file.

use std::fmt;

use zeroize::Zeroize;

/// An API key, bearer token or refresh token.
///
/// `Debug` prints `Secret(***)` and `Display` prints `***`, so a secret can sit inside structs
/// that derive `Debug` (configs, errors, tracing fields) without leaking. There is deliberately
/// no `Serialize`: keys and refresh tokens go to the OS keyring and nowhere else. Equality runs
/// in constant time, and the value is overwritten with zeros when the `Secret` is dropped, so a
/// token does not linger in freed memory (copies made by [`Secret::expose`] callers are theirs).
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The raw value. Call only where it goes onto the wire (an HTTP header, a token request)
    /// or into the keyring.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True when the value is empty or only whitespace (an unset variable exported as "").
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }

    /// Compares without stopping at the first differing byte, so a caller comparing a
    /// presented value learns nothing from the timing (only whether the lengths differ).
    pub fn constant_time_eq(&self, other: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), other.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.constant_time_eq(&other.0)
    }
}

impl Eq for Secret {}

impl Drop for Secret {
    fn drop(&mut self) {
        self.0.zeroize();
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

    const VALUES: &[&str] = &[
        "sk-live-123",
        "rt-live-123",
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJvcCJ9.c2ln",
        "pässwörd-ü",
        " padded ",
        "x",
    ];

    #[test]
    fn debug_and_display_are_redacted() {
        for v in VALUES {
            let s = Secret::new(*v);
            assert_eq!(format!("{s:?}"), "Secret(***)");
            assert_eq!(format!("{s:#?}"), "Secret(***)");
            assert_eq!(format!("{s}"), "***");
            assert_eq!(format!("{s:>20}"), "***");
            assert_eq!(s.expose(), *v);
        }
    }

    #[test]
    fn a_secret_inside_a_derived_debug_stays_redacted() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Config {
            name: &'static str,
            key: Secret,
            maybe: Option<Secret>,
            list: Vec<Secret>,
        }
        for v in VALUES {
            let c = Config {
                name: "provider",
                key: Secret::new(*v),
                maybe: Some(Secret::from(*v)),
                list: vec![Secret::from((*v).to_owned())],
            };
            for text in [format!("{c:?}"), format!("{c:#?}")] {
                assert!(!text.contains(v.trim()), "{text}");
                assert!(text.contains("provider"));
                assert_eq!(text.matches("Secret(***)").count(), 3, "{text}");
            }
        }
    }

    #[test]
    fn constant_time_eq_matches_only_the_same_value() {
        let s = Secret::new("rt-live-123");
        assert!(s.constant_time_eq("rt-live-123"));
        for other in [
            "rt-live-124",
            "rt",
            "",
            "rt-live-1234",
            "RT-LIVE-123",
            "tr-live-123",
        ] {
            assert!(!s.constant_time_eq(other), "{other}");
        }
        assert!(Secret::new("").constant_time_eq(""));
    }

    #[test]
    fn equality_is_by_value() {
        assert_eq!(Secret::new("a"), Secret::from("a"));
        assert_eq!(Secret::new("a"), Secret::from(String::from("a")));
        assert_ne!(Secret::new("a"), Secret::new("b"));
        assert_ne!(Secret::new("a"), Secret::new("a "));
        let s = Secret::new("k");
        assert_eq!(s.clone(), s);
    }

    #[test]
    fn blank_means_empty_or_whitespace() {
        for v in ["", " ", "\t", "\n  \r"] {
            assert!(Secret::new(v).is_blank(), "{v:?}");
        }
        for v in ["a", " a ", "\u{a0}x"] {
            assert!(!Secret::new(v).is_blank(), "{v:?}");
        }
    }

    #[test]
    fn dropping_one_clone_leaves_the_other_intact() {
        let a = Secret::new("sk-keep");
        let b = a.clone();
        drop(a);
        assert_eq!(b.expose(), "sk-keep");
    }
}
