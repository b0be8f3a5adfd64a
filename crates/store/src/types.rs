//! Small shared helpers: TEXT-backed enums, FTS query building, text capping, refusals.

use serde::Serialize;

/// Declares a TEXT-backed enum: `as_str`, `parse`, `ToSql`/`FromSql`, serde snake_case.
macro_rules! text_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $var:ident => $s:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vmeta])* $var),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// The stored (and serialized) text.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $s),+ }
            }
            /// Parse the stored text.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$var),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let s = v.as_str()?;
                $name::parse(s).ok_or_else(|| {
                    rusqlite::types::FromSqlError::Other(
                        format!("unknown {} value {s:?}", stringify!($name)).into(),
                    )
                })
            }
        }
    };
}

pub(crate) use text_enum;

/// A gate refused a tool call. The agent turns it into the tool result the model sees:
/// `reason` says what is wrong, `directive` what to do instead (short imperatives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// Stable code: the invariant id (`"I2"`, `"I5"`, `"I6"`, …) or a short name.
    pub code: &'static str,
    /// What was refused and why.
    pub reason: String,
    /// What the model must do instead.
    pub directive: String,
}

impl Refusal {
    pub(crate) fn new(
        code: &'static str,
        reason: impl Into<String>,
        directive: impl Into<String>,
    ) -> Self {
        Refusal {
            code,
            reason: reason.into(),
            directive: directive.into(),
        }
    }

    /// `"Refused: <reason> <directive>"` — the text to hand to the model.
    pub fn tool_result(&self) -> String {
        format!("Refused: {} {}", self.reason, self.directive)
    }
}

/// Turn operator search text into a safe FTS5 query: every word becomes a quoted term, all of
/// which must match. With `prefix_last`, the last word (three characters or more) also
/// matches as a prefix — search as you type: `nextc` finds `nextcloud`. Returns `None` when
/// nothing searchable is left.
pub(crate) fn fts_query(input: &str, prefix_last: bool) -> Option<String> {
    let words: Vec<&str> = input
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(16)
        .collect();
    let last = words.len().checked_sub(1)?;
    let terms: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if prefix_last && i == last && w.chars().count() >= 3 {
                format!("\"{w}\"*")
            } else {
                format!("\"{w}\"")
            }
        })
        .collect();
    Some(terms.join(" "))
}

/// Clamp a `u32` limit to SQLite's `LIMIT` (0 means "no limit" → -1).
pub(crate) fn sql_limit(limit: u32) -> i64 {
    if limit == 0 { -1 } else { i64::from(limit) }
}

/// Largest char boundary `<= i`.
pub(crate) fn floor_char(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Cap `s` at about `max` bytes keeping its head (3/4) and tail (1/4) with a marker between.
/// Returns the capped text and whether anything was cut.
pub(crate) fn cap_text(s: &str, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s.to_owned(), false);
    }
    let head_end = floor_char(s, max * 3 / 4);
    let mut tail_start = floor_char(s, s.len() - max / 4);
    while tail_start < s.len() && !s.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let cut = tail_start - head_end;
    let mut out = String::with_capacity(max + 64);
    out.push_str(&s[..head_end]);
    out.push_str(&format!("\n…[truncated {cut} bytes]…\n"));
    out.push_str(&s[tail_start..]);
    (out, true)
}

/// Cap `s` at about `max` bytes keeping only its head, with a marker at the end.
pub(crate) fn cap_head(s: &str, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s.to_owned(), false);
    }
    let end = floor_char(s, max);
    (
        format!("{}…[truncated {} bytes]", &s[..end], s.len() - end),
        true,
    )
}

/// Trim and refuse blank text.
pub(crate) fn non_blank<'a>(what: &str, s: &'a str) -> Result<&'a str, crate::StoreError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(crate::StoreError::invalid(format!(
            "{what} must not be empty"
        )));
    }
    Ok(t)
}
