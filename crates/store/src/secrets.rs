//! Secrets never enter the database. No column holds a token or key; on top of that, free text
//! that reaches the store (tool arguments, command lines, output, attributes) is scrubbed of
//! things that look like credentials, and attribute names that denote a secret are refused.

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// The replacement text for a scrubbed secret.
pub const REDACTED: &str = "[REDACTED]";

static SECRET: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        // Authorization headers and bearer tokens.
        r"(?i)(?P<k1>\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}",
        // JSON Web Tokens.
        r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        // Well-known key prefixes: OpenAI/Anthropic, GitHub, Slack, AWS access key ids, GitLab.
        r"|\b(?:sk-(?:ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,})",
        // PEM private keys.
        r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
        // key=value / "key": "value" pairs whose key names a secret.
        r#"|(?P<k2>(?:"|')?\b[A-Za-z0-9_-]*(?:password|passwd|secret|api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)(?:"|')?\s*[:=]\s*"?)[^\s"',;&}]{3,}"#,
    ))
    .ok()
});

/// Every pattern above contains one of these (ASCII case-insensitive). One fast pass for
/// them lets ordinary text skip the regular expression.
static TRIGGERS: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build([
            "bearer",
            "eyj",
            "sk-",
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
            "xox",
            "akia",
            "glpat-",
            "private key",
            "password",
            "passwd",
            "secret",
            "api_key",
            "api-key",
            "apikey",
            "token",
            "private_key",
            "private-key",
            "privatekey",
        ])
        .ok()
});

/// Replace anything that looks like a credential with `[REDACTED]`.
pub fn redact(s: &str) -> Cow<'_, str> {
    if let Some(t) = TRIGGERS.as_ref()
        && !t.is_match(s)
    {
        return Cow::Borrowed(s);
    }
    let Some(re) = SECRET.as_ref() else {
        return Cow::Borrowed(s);
    };
    if !re.is_match(s) {
        return Cow::Borrowed(s);
    }
    re.replace_all(s, |c: &regex::Captures<'_>| {
        let keep = c
            .name("k1")
            .or_else(|| c.name("k2"))
            .map_or("", |m| m.as_str());
        format!("{keep}{REDACTED}")
    })
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
