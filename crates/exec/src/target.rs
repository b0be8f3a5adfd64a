//! Targets: where a command runs, and how it gets there.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ExecError;

/// Longest name after the `kind:` prefix.
const MAX_NAME_LEN: usize = 128;

/// What a target is, the prefix of its slug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A machine: this workstation, a server, a Proxmox node (`host:…`).
    Host,
    /// A Proxmox LXC container (`lxc:…`).
    Lxc,
    /// A virtual machine reached over its own sshd (`vm:…`).
    Vm,
}

impl TargetKind {
    /// The slug prefix (`host`, `lxc`, `vm`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Lxc => "lxc",
            Self::Vm => "vm",
        }
    }
}

/// A target's knowledge-graph identity: `host:name`, `lxc:name` or `vm:name`.
///
/// Names are 1–128 characters of ASCII letters, digits, `.`, `_` and `-`, starting with a
/// letter or digit, so a slug is safe in logs, file names and prompts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TargetSlug {
    kind: TargetKind,
    name: String,
}

impl TargetSlug {
    /// Parses and validates `kind:name`.
    pub fn parse(s: &str) -> Result<Self, ExecError> {
        let (kind, name) = s.split_once(':').ok_or_else(|| {
            ExecError::invalid_target(s, "a slug is `host:name`, `lxc:name` or `vm:name`")
        })?;
        let kind = match kind {
            "host" => TargetKind::Host,
            "lxc" => TargetKind::Lxc,
            "vm" => TargetKind::Vm,
            other => {
                return Err(ExecError::invalid_target(
                    s,
                    format!("unknown kind `{other}` (expected host, lxc or vm)"),
                ));
            }
        };
        Self::new(kind, name)
    }

    /// Builds a slug from its parts, validating the name.
    pub fn new(kind: TargetKind, name: &str) -> Result<Self, ExecError> {
        let slug = || format!("{}:{name}", kind.as_str());
        if !is_valid_name(name) {
            return Err(ExecError::invalid_target(
                slug(),
                format!(
                    "the name must be 1–{MAX_NAME_LEN} ASCII letters, digits, `.`, `_` or `-`, starting with a letter or digit"
                ),
            ));
        }
        Ok(Self {
            kind,
            name: name.to_owned(),
        })
    }

    /// `host`, `lxc` or `vm`.
    pub fn kind(&self) -> TargetKind {
        self.kind
    }

    /// The part after the colon.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Whether `name` is a valid slug name (see [`TargetSlug`]).
pub(crate) fn is_valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    name.len() <= MAX_NAME_LEN
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl fmt::Display for TargetSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.as_str(), self.name)
    }
}

impl FromStr for TargetSlug {
    type Err = ExecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<String> for TargetSlug {
    type Error = ExecError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::parse(&s)
    }
}

impl From<TargetSlug> for String {
    fn from(s: TargetSlug) -> Self {
        s.to_string()
    }
}

/// Where a command runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    /// The knowledge-graph identity.
    pub slug: TargetSlug,
    /// How to get there.
    pub transport: Transport,
}

impl Target {
    /// Builds a target and checks that the transport suits the kind and is well-formed.
    pub fn new(slug: TargetSlug, transport: Transport) -> Result<Self, ExecError> {
        let t = Self { slug, transport };
        t.validate()?;
        Ok(t)
    }

    /// `host:local`: this workstation.
    pub fn local() -> Self {
        Self {
            slug: TargetSlug {
                kind: TargetKind::Host,
                name: "local".to_owned(),
            },
            transport: Transport::Local,
        }
    }

    /// Checks the invariants [`Target::new`] checks; the executor calls it before every run
    /// because the fields are public.
    pub fn validate(&self) -> Result<(), ExecError> {
        let err = |reason: &str| ExecError::invalid_target(self.slug.to_string(), reason);
        match (&self.transport, self.slug.kind) {
            (Transport::Local, TargetKind::Host) => Ok(()),
            (Transport::Local, _) => Err(err("only a `host:` target can be local")),
            (Transport::Ssh(ssh), _) => ssh.validate().map_err(|r| err(&r)),
            (Transport::Pct(pct), TargetKind::Lxc) => {
                if !(100..=999_999_999).contains(&pct.vmid) {
                    return Err(err("a Proxmox vmid is between 100 and 999999999"));
                }
                pct.proxmox_host
                    .validate()
                    .map_err(|r| err(&format!("proxmox host: {r}")))
            }
            (Transport::Pct(_), _) => Err(err("only an `lxc:` target can use `pct`")),
        }
    }
}

/// How a command reaches its target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Transport {
    /// A child process on this workstation.
    Local,
    /// The system OpenSSH client.
    Ssh(SshTransport),
    /// `pct exec <vmid> --` on the container's Proxmox host, reached over ssh.
    Pct(PctTransport),
}

/// An OpenSSH destination. Unset fields are left to `~/.ssh/config` (or the configured
/// `-F` file), so an alias from the operator's config works with `host` alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SshTransport {
    /// Host name, address or `~/.ssh/config` alias.
    pub host: String,
    /// `-l user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `-p port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// `-i file` (ssh expands a leading `~`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_file: Option<String>,
    /// Extra `-o Key=Value` options (`ProxyJump`, …). The executor's own options
    /// (`BatchMode`, `ControlMaster`, `ControlPath`, …) come first and win, since ssh keeps
    /// the first value it sees.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
}

impl SshTransport {
    /// A destination with only a host (or alias).
    pub fn new(host: impl Into<String>) -> Self {
        Self {
            host: host.into(),
            ..Self::default()
        }
    }

    /// Rejects what ssh would misread: a host or user starting with `-` (an option),
    /// whitespace or control characters, option keys that are not plain words.
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_word("host", &self.host)?;
        if let Some(user) = &self.user {
            check_word("user", user)?;
            if user.contains('@') {
                return Err("user must not contain `@`".into());
            }
        }
        if self.port == Some(0) {
            return Err("port 0 is not a port".into());
        }
        if let Some(id) = &self.identity_file
            && (id.is_empty() || id.chars().any(char::is_control))
        {
            return Err("identity_file must be a non-empty path without control characters".into());
        }
        for (key, value) in &self.options {
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Err(format!(
                    "ssh option name `{key}` must be letters and digits"
                ));
            }
            if value.chars().any(char::is_control) {
                return Err(format!(
                    "ssh option `{key}` has a control character in its value"
                ));
            }
        }
        Ok(())
    }
}

fn check_word(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if value.starts_with('-') {
        return Err(format!(
            "{what} `{value}` starts with `-` and would be read as an option"
        ));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{what} `{value}` contains whitespace or control characters"
        ));
    }
    Ok(())
}

/// An LXC container reached through its Proxmox host.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PctTransport {
    /// The Proxmox node the container lives on.
    pub proxmox_host: SshTransport,
    /// The container's id.
    pub vmid: u32,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn slugs_parse_and_print() {
        for s in [
            "host:local",
            "lxc:pihole",
            "vm:win-11",
            "host:nas.lan",
            "host:01_a",
        ] {
            assert_eq!(TargetSlug::parse(s).unwrap().to_string(), s);
        }
        let slug = TargetSlug::parse("lxc:pihole").unwrap();
        assert_eq!(slug.kind(), TargetKind::Lxc);
        assert_eq!(slug.name(), "pihole");
    }

    #[test]
    fn bad_slugs_are_refused() {
        for s in [
            "",
            "local",
            "host:",
            "ct:x",
            "host:-x",
            "host:a b",
            "host:a/b",
            "host:é",
            "host:.hidden",
        ] {
            let e = TargetSlug::parse(s).unwrap_err();
            assert_eq!(e.code(), "exec.invalid_target", "{s}");
        }
        assert!(TargetSlug::parse(&format!("host:{}", "a".repeat(129))).is_err());
    }

    #[test]
    fn transports_must_suit_the_kind() {
        let lxc = TargetSlug::parse("lxc:web").unwrap();
        assert!(Target::new(lxc.clone(), Transport::Local).is_err());
        let pct = Transport::Pct(PctTransport {
            proxmox_host: SshTransport::new("pve"),
            vmid: 101,
        });
        assert!(Target::new(lxc, pct.clone()).is_ok());
        assert!(Target::new(TargetSlug::parse("vm:web").unwrap(), pct).is_err());
        let low = Transport::Pct(PctTransport {
            proxmox_host: SshTransport::new("pve"),
            vmid: 99,
        });
        assert!(Target::new(TargetSlug::parse("lxc:a").unwrap(), low).is_err());
    }

    #[test]
    fn ssh_fields_that_ssh_would_misread_are_refused() {
        let slug = TargetSlug::parse("host:x").unwrap();
        let bad = [
            SshTransport::new("-oProxyCommand=touch /tmp/x"),
            SshTransport::new("a b"),
            SshTransport::new(""),
            SshTransport {
                user: Some("-l".into()),
                ..SshTransport::new("h")
            },
            SshTransport {
                user: Some("a@b".into()),
                ..SshTransport::new("h")
            },
            SshTransport {
                port: Some(0),
                ..SshTransport::new("h")
            },
            SshTransport {
                options: [("Proxy Jump".to_owned(), "x".to_owned())].into(),
                ..SshTransport::new("h")
            },
            SshTransport {
                options: [("ProxyJump".to_owned(), "x\ny".to_owned())].into(),
                ..SshTransport::new("h")
            },
        ];
        for ssh in bad {
            let e = Target::new(slug.clone(), Transport::Ssh(ssh.clone())).unwrap_err();
            assert_eq!(e.code(), "exec.invalid_target", "{ssh:?}");
        }
    }

    #[test]
    fn targets_round_trip_through_json() {
        let t = Target::new(
            TargetSlug::parse("lxc:dns").unwrap(),
            Transport::Pct(PctTransport {
                proxmox_host: SshTransport {
                    user: Some("root".into()),
                    ..SshTransport::new("pve.lan")
                },
                vmid: 105,
            }),
        )
        .unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"slug\":\"lxc:dns\""), "{json}");
        assert!(json.contains("\"transport\":{\"type\":\"pct\""), "{json}");
        let back: Target = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        assert!(serde_json::from_str::<TargetSlug>("\"nope\"").is_err());
    }
}
