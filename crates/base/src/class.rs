//! The command class: how much approval a command needs. One enum for the classifier that
//! decides it, the store that records it and the agent that gates on it; the wire type in
//! `nomos-protocol` (which depends on no Nomos crate) is converted at that edge only.

/// How much approval a command needs. Ordered: `ReadOnly < ConfigMutation < Destructive`, so
/// the class of a command is the maximum over its parts.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum CommandClass {
    /// Changes nothing; runs at once once a plan exists.
    ReadOnly,
    /// Changes configuration or state; runs inside the operator's approval window.
    ConfigMutation,
    /// Needs explicit approval every time (also the class of everything unknown).
    Destructive,
}

impl CommandClass {
    /// Every class, least approval first.
    pub const ALL: &'static [CommandClass] = &[
        CommandClass::ReadOnly,
        CommandClass::ConfigMutation,
        CommandClass::Destructive,
    ];

    /// The snake_case name used on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::ConfigMutation => "config_mutation",
            Self::Destructive => "destructive",
        }
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

impl std::fmt::Display for CommandClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stored as its snake_case text (the store's `class` columns).
#[cfg(feature = "sqlite")]
impl rusqlite::types::ToSql for CommandClass {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
    }
}

#[cfg(feature = "sqlite")]
impl rusqlite::types::FromSql for CommandClass {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = v.as_str()?;
        Self::parse(s).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown command class {s:?}").into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::CommandClass;

    #[test]
    fn names_round_trip_and_the_order_is_the_approval_needed() {
        for c in CommandClass::ALL {
            assert_eq!(CommandClass::parse(c.as_str()), Some(*c));
            let json = serde_json::to_string(c).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
        assert!(CommandClass::ReadOnly < CommandClass::ConfigMutation);
        assert!(CommandClass::ConfigMutation < CommandClass::Destructive);
        assert_eq!(CommandClass::parse("Read_only"), None);
        assert_eq!(CommandClass::parse(""), None);
    }
}
