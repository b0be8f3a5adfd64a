//! Secrets never enter the database. No column holds a token or key; on top of that, free text
//! that reaches the store (tool arguments, command lines, output, attributes) is masked by
//! `nomos_mask::mask` (keys, hashes, tokens, URL and setting passwords), and attribute names
//! that denote a secret are refused.

use std::borrow::Cow;

/// Every masked secret starts with this text (`[secret masked by Nomos: <kind>]`).
pub const REDACTED: &str = nomos_mask::MARKER_OPEN;

/// Replace anything that looks like a credential with a marker naming its kind. The one
/// implementation lives in `nomos-mask`, shared with every other crate that shows text.
pub fn redact(s: &str) -> Cow<'_, str> {
    nomos_mask::mask(s)
}

/// `true` when an attribute name denotes a secret (`password`, `api_key`, `token`, …).
pub fn is_secret_name(key: &str) -> bool {
    let k: String = key
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "passphrase",
        "secret",
        "apikey",
        "token",
        "privatekey",
        "credential",
        "bearer",
        "cookie",
    ];
    WORDS.iter().any(|w| k.contains(w))
}
