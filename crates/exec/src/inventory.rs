//! The inventory: the targets the agent may run on.
//!
//! Sources, lowest precedence first: the default (`host:local`), an `~/.ssh/config`
//! import ([`crate::ssh_config`]), and an inventory file (TOML, documented in the crate
//! README). Parsing is pure; the agent writes the targets into the knowledge graph.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use toml::Spanned;

use crate::ExecError;
use crate::target::{PctTransport, SshTransport, Target, TargetKind, TargetSlug, Transport};

/// A set of targets keyed by slug.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory {
    targets: BTreeMap<TargetSlug, Target>,
}

impl Inventory {
    /// An empty inventory.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The default inventory: `host:local`, this workstation.
    pub fn with_local() -> Self {
        let mut inv = Self::default();
        inv.insert(Target::local());
        inv
    }

    /// Adds or replaces a target; returns the one it replaced.
    pub fn insert(&mut self, target: Target) -> Option<Target> {
        self.targets.insert(target.slug.clone(), target)
    }

    /// Adds targets that are not there yet (an import never overrides an explicit entry).
    /// Returns how many were added.
    pub fn add_missing(&mut self, targets: impl IntoIterator<Item = Target>) -> usize {
        let mut added = 0;
        for t in targets {
            if !self.targets.contains_key(&t.slug) {
                self.insert(t);
                added += 1;
            }
        }
        added
    }

    /// Parses an inventory file and adds its targets, replacing same-slug targets from
    /// earlier sources. `pct` entries may name a Proxmox host from this inventory or from
    /// the file itself. On error nothing is added.
    pub fn merge_file(&mut self, text: &str, source_name: &str) -> Result<usize, ExecError> {
        let targets = parse_inventory(text, source_name, self)?;
        let n = targets.len();
        for t in targets {
            self.insert(t);
        }
        Ok(n)
    }

    /// The target with this slug.
    pub fn get(&self, slug: &TargetSlug) -> Option<&Target> {
        self.targets.get(slug)
    }

    /// Looks up a slug as the model wrote it: a malformed slug and an unknown one are both
    /// clear errors.
    pub fn resolve(&self, slug: &str) -> Result<&Target, ExecError> {
        let parsed = TargetSlug::parse(slug)?;
        self.targets
            .get(&parsed)
            .ok_or_else(|| ExecError::UnknownTarget {
                slug: slug.to_owned(),
            })
    }

    /// All targets, ordered by slug.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        self.targets.values()
    }

    /// How many targets.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    target: Vec<Spanned<RawTarget>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    slug: Spanned<String>,
    transport: Spanned<String>,
    host: Option<Spanned<String>>,
    user: Option<Spanned<String>>,
    port: Option<Spanned<u16>>,
    identity_file: Option<Spanned<String>>,
    options: Option<Spanned<BTreeMap<String, String>>>,
    vmid: Option<Spanned<u32>>,
    proxmox: Option<Spanned<String>>,
}

/// Parses an inventory file (format in the crate README) into targets.
///
/// `known` supplies Proxmox hosts that `pct` entries may refer to besides the file's own.
/// Errors name the source, the line and the field (`target[2].vmid`).
pub fn parse_inventory(
    text: &str,
    source_name: &str,
    known: &Inventory,
) -> Result<Vec<Target>, ExecError> {
    let err = |span: Option<std::ops::Range<usize>>, field: Option<String>, message: String| {
        ExecError::Inventory {
            source_name: source_name.to_owned(),
            line: span.map(|s| line_of(text, s.start)),
            field,
            message,
        }
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let span = e.span();
        // serde names unknown and missing fields itself; for a bad value, name the key on
        // that line.
        let field = span.clone().and_then(|s| {
            let key = key_on_line(text, s.start)?;
            Some(match target_index_at(text, s.start) {
                Some(i) => format!("target[{i}].{key}"),
                None => key,
            })
        });
        let message = e
            .message()
            .trim()
            .replace("expected u16", "expected an integer from 0 to 65535")
            .replace("expected u32", "expected an integer from 0 to 4294967295");
        err(span, field, message)
    })?;

    // First pass: slugs and ssh transports, so `pct` entries can point at any of them.
    let mut seen: HashMap<TargetSlug, usize> = HashMap::new();
    let mut slugs = Vec::with_capacity(raw.target.len());
    for (i, entry) in raw.target.iter().enumerate() {
        let t = entry.get_ref();
        let slug = TargetSlug::parse(t.slug.get_ref()).map_err(|e| {
            err(
                Some(t.slug.span()),
                Some(format!("target[{i}].slug")),
                reason(&e),
            )
        })?;
        let line = line_of(text, t.slug.span().start);
        if let Some(first) = seen.insert(slug.clone(), line) {
            return Err(err(
                Some(t.slug.span()),
                Some(format!("target[{i}].slug")),
                format!("`{slug}` is already defined on line {first}"),
            ));
        }
        slugs.push(slug);
    }

    let mut out = Vec::with_capacity(raw.target.len());
    let mut pending_pct = Vec::new();
    for (i, (entry, slug)) in raw.target.iter().zip(slugs).enumerate() {
        let t = entry.get_ref();
        let field = |name: &str| Some(format!("target[{i}].{name}"));
        let not_for = |name: &str, span: std::ops::Range<usize>, transport: &str| {
            err(
                Some(span),
                field(name),
                format!("`{name}` does not apply to transport = \"{transport}\""),
            )
        };
        match t.transport.get_ref().as_str() {
            "local" => {
                if let Some((name, span)) = ssh_field_spans(t)
                    .into_iter()
                    .chain(pct_field_spans(t))
                    .next()
                {
                    return Err(not_for(name, span, "local"));
                }
                let target = Target::new(slug, Transport::Local)
                    .map_err(|e| err(Some(t.transport.span()), field("transport"), reason(&e)))?;
                out.push(target);
            }
            "ssh" => {
                if let Some((name, span)) = pct_field_spans(t).into_iter().next() {
                    return Err(not_for(name, span, "ssh"));
                }
                let ssh = SshTransport {
                    host: t
                        .host
                        .as_ref()
                        .map_or_else(|| slug.name().to_owned(), |h| h.get_ref().clone()),
                    user: t.user.as_ref().map(|u| u.get_ref().clone()),
                    port: t.port.as_ref().map(|p| *p.get_ref()),
                    identity_file: t.identity_file.as_ref().map(|f| f.get_ref().clone()),
                    options: t
                        .options
                        .as_ref()
                        .map(|o| o.get_ref().clone())
                        .unwrap_or_default(),
                };
                if let Err(reason) = ssh.validate() {
                    // Point at the field the reason is about.
                    let (name, span) = ssh_field_spans(t)
                        .into_iter()
                        .find(|(name, _)| {
                            reason.starts_with(name)
                                || (*name == "options" && reason.starts_with("ssh option"))
                        })
                        .map_or((None, entry.span()), |(n, s)| (field(n), s));
                    return Err(err(Some(span), name, format!("`{slug}`: {reason}")));
                }
                out.push(
                    Target::new(slug, Transport::Ssh(ssh))
                        .map_err(|e| err(Some(entry.span()), None, reason(&e)))?,
                );
            }
            "pct" => {
                if let Some((name, span)) = ssh_field_spans(t).into_iter().next() {
                    return Err(not_for(name, span, "pct"));
                }
                if slug.kind() != TargetKind::Lxc {
                    return Err(err(
                        Some(t.transport.span()),
                        field("transport"),
                        format!("`{slug}`: only an `lxc:` target can use pct"),
                    ));
                }
                let vmid = t.vmid.as_ref().ok_or_else(|| {
                    err(
                        Some(entry.span()),
                        field("vmid"),
                        "missing `vmid` (the container id)".into(),
                    )
                })?;
                let proxmox = t.proxmox.as_ref().ok_or_else(|| {
                    err(
                        Some(entry.span()),
                        field("proxmox"),
                        "missing `proxmox` (the slug of the Proxmox host's ssh target)".into(),
                    )
                })?;
                pending_pct.push((i, slug, vmid, proxmox));
            }
            other => {
                return Err(err(
                    Some(t.transport.span()),
                    field("transport"),
                    format!("unknown transport `{other}` (expected local, ssh or pct)"),
                ));
            }
        }
    }

    for (i, slug, vmid, proxmox) in pending_pct {
        let field = Some(format!("target[{i}].proxmox"));
        let host_slug = TargetSlug::parse(proxmox.get_ref())
            .map_err(|e| err(Some(proxmox.span()), field.clone(), reason(&e)))?;
        let host = out
            .iter()
            .find(|t| t.slug == host_slug)
            .or_else(|| known.get(&host_slug))
            .ok_or_else(|| {
                err(
                    Some(proxmox.span()),
                    field.clone(),
                    format!("no target `{host_slug}` is defined"),
                )
            })?;
        let Transport::Ssh(ssh) = &host.transport else {
            return Err(err(
                Some(proxmox.span()),
                field,
                format!("`{host_slug}` is not an ssh target; pct needs ssh to the Proxmox host"),
            ));
        };
        let target = Target::new(
            slug,
            Transport::Pct(PctTransport {
                proxmox_host: ssh.clone(),
                vmid: *vmid.get_ref(),
            }),
        )
        .map_err(|e| {
            err(
                Some(vmid.span()),
                Some(format!("target[{i}].vmid")),
                reason(&e),
            )
        })?;
        out.push(target);
    }
    Ok(out)
}

fn ssh_field_spans(t: &RawTarget) -> Vec<(&'static str, std::ops::Range<usize>)> {
    let mut v = Vec::new();
    if let Some(x) = &t.host {
        v.push(("host", x.span()));
    }
    if let Some(x) = &t.user {
        v.push(("user", x.span()));
    }
    if let Some(x) = &t.port {
        v.push(("port", x.span()));
    }
    if let Some(x) = &t.identity_file {
        v.push(("identity_file", x.span()));
    }
    if let Some(x) = &t.options {
        v.push(("options", x.span()));
    }
    v
}

fn pct_field_spans(t: &RawTarget) -> Vec<(&'static str, std::ops::Range<usize>)> {
    let mut v = Vec::new();
    if let Some(x) = &t.vmid {
        v.push(("vmid", x.span()));
    }
    if let Some(x) = &t.proxmox {
        v.push(("proxmox", x.span()));
    }
    v
}

/// The reason inside an `InvalidTarget` (the location is added by the caller).
fn reason(e: &ExecError) -> String {
    match e {
        ExecError::InvalidTarget { slug, reason } => format!("`{slug}`: {reason}"),
        other => other.to_string(),
    }
}

/// 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Which `[[target]]` table byte `at` is in (0-based), if any.
fn target_index_at(text: &str, at: usize) -> Option<usize> {
    let before = &text[..at.min(text.len())];
    let headers = before
        .lines()
        .filter(|l| {
            let l = l.trim();
            l.starts_with("[[")
                && l.trim_start_matches('[').trim_end_matches(']').trim() == "target"
        })
        .count();
    headers.checked_sub(1)
}

/// The bare key on the line holding byte `at` (`port` in `port = "x"`).
fn key_on_line(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
    .then(|| key.to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
# Homelab
[[target]]
slug = "host:nas"
transport = "ssh"
host = "nas.lan"
user = "admin"
port = 2222
identity_file = "~/.ssh/id_nas"
options = { ProxyJump = "bastion" }

[[target]]
slug = "lxc:pihole"
transport = "pct"
vmid = 101
proxmox = "host:pve"

[[target]]
slug = "host:pve"
transport = "ssh"
user = "root"

[[target]]
slug = "vm:win"
transport = "ssh"
host = "10.0.0.9"
"#;

    fn parse(text: &str) -> Result<Vec<Target>, ExecError> {
        parse_inventory(text, "inventory.toml", &Inventory::with_local())
    }

    fn fail(text: &str) -> (Option<usize>, Option<String>, String) {
        match parse(text).unwrap_err() {
            ExecError::Inventory {
                line,
                field,
                message,
                source_name,
            } => {
                assert_eq!(source_name, "inventory.toml");
                (line, field, message)
            }
            other => panic!("not an inventory error: {other:?}"),
        }
    }

    #[test]
    fn example_parses() {
        let targets = parse(EXAMPLE).unwrap();
        assert_eq!(targets.len(), 4);
        let nas = &targets[0];
        assert_eq!(nas.slug.to_string(), "host:nas");
        let Transport::Ssh(ssh) = &nas.transport else {
            panic!()
        };
        assert_eq!(ssh.host, "nas.lan");
        assert_eq!(ssh.user.as_deref(), Some("admin"));
        assert_eq!(ssh.port, Some(2222));
        assert_eq!(ssh.options["ProxyJump"], "bastion");
        // The host defaults to the slug's name; the pct entry found it though it came later.
        let pct = targets
            .iter()
            .find(|t| t.slug.to_string() == "lxc:pihole")
            .unwrap();
        let Transport::Pct(p) = &pct.transport else {
            panic!()
        };
        assert_eq!(p.vmid, 101);
        assert_eq!(p.proxmox_host.host, "pve");
        assert_eq!(p.proxmox_host.user.as_deref(), Some("root"));
    }

    #[test]
    fn merge_overrides_and_resolves() {
        let mut inv = Inventory::with_local();
        inv.add_missing([Target::new(
            TargetSlug::parse("host:nas").unwrap(),
            Transport::Ssh(SshTransport::new("nas")),
        )
        .unwrap()]);
        assert_eq!(inv.merge_file(EXAMPLE, "inventory.toml").unwrap(), 4);
        assert_eq!(inv.len(), 5);
        let Transport::Ssh(ssh) = &inv.resolve("host:nas").unwrap().transport else {
            panic!()
        };
        assert_eq!(ssh.host, "nas.lan", "the file wins over the import");
        assert_eq!(
            inv.resolve("host:local").unwrap().transport,
            Transport::Local
        );
        assert_eq!(
            inv.resolve("host:nope").unwrap_err().code(),
            "exec.unknown_target"
        );
        assert_eq!(
            inv.resolve("nope").unwrap_err().code(),
            "exec.invalid_target"
        );
        // An import never overrides.
        assert_eq!(inv.add_missing([Target::local()]), 0);
    }

    #[test]
    fn pct_may_use_a_known_proxmox_host() {
        let mut known = Inventory::with_local();
        known.insert(
            Target::new(
                TargetSlug::parse("host:pve2").unwrap(),
                Transport::Ssh(SshTransport::new("pve2")),
            )
            .unwrap(),
        );
        let text = "[[target]]\nslug = \"lxc:db\"\ntransport = \"pct\"\nvmid = 200\nproxmox = \"host:pve2\"\n";
        let t = parse_inventory(text, "x", &known).unwrap();
        assert!(matches!(&t[0].transport, Transport::Pct(p) if p.proxmox_host.host == "pve2"));
    }

    #[test]
    fn empty_file_is_an_empty_inventory() {
        assert!(parse("").unwrap().is_empty());
        assert!(parse("# nothing yet\n").unwrap().is_empty());
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let (line, _, msg) = fail("[[target]]\nslug = \"host:a\"\ntransport = ssh\n");
        assert_eq!(line, Some(3), "{msg}");
    }

    #[test]
    fn type_errors_name_line_and_field() {
        let text = "[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\nport = \"22\"\n";
        let (line, field, msg) = fail(text);
        assert_eq!(line, Some(4), "{msg}");
        assert_eq!(field.as_deref(), Some("target[0].port"), "{msg}");

        let text = "[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\nport = 70000\n";
        let (line, field, msg) = fail(text);
        assert_eq!(
            (line, field.as_deref()),
            (Some(4), Some("target[0].port")),
            "{msg}"
        );
        assert!(msg.contains("from 0 to 65535"), "{msg}");
    }

    #[test]
    fn unknown_and_missing_fields_are_named() {
        let text = "[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\nusr = \"root\"\n";
        let (line, field, msg) = fail(text);
        assert!(msg.contains("unknown field `usr`"), "{msg}");
        assert_eq!((line, field.as_deref()), (Some(4), Some("target[0].usr")));

        // The second table is target[1].
        let text = "[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\n[[target]]\nslug = \"host:b\"\ntransport = \"ssh\"\nport = -1\n";
        let (line, field, msg) = fail(text);
        assert_eq!(
            (line, field.as_deref()),
            (Some(7), Some("target[1].port")),
            "{msg}"
        );

        let (_, _, msg) = fail("[[target]]\ntransport = \"ssh\"\n");
        assert!(msg.contains("missing field `slug`"), "{msg}");

        let (_, _, msg) = fail("[[targets]]\nslug = \"host:a\"\n");
        assert!(msg.contains("unknown field `targets`"), "{msg}");
    }

    #[test]
    fn semantic_errors_name_line_and_field() {
        let cases: &[(&str, usize, &str, &str)] = &[
            (
                "[[target]]\nslug = \"box:a\"\ntransport = \"ssh\"\n",
                2,
                "target[0].slug",
                "unknown kind",
            ),
            (
                "[[target]]\nslug = \"host:a\"\ntransport = \"telnet\"\n",
                3,
                "target[0].transport",
                "unknown transport `telnet`",
            ),
            (
                "[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\nvmid = 100\n",
                4,
                "target[0].vmid",
                "does not apply",
            ),
            (
                "[[target]]\nslug = \"host:a\"\ntransport = \"local\"\nhost = \"x\"\n",
                4,
                "target[0].host",
                "does not apply",
            ),
            (
                "[[target]]\nslug = \"host:a\"\ntransport = \"pct\"\nvmid = 100\nproxmox = \"host:local\"\n",
                3,
                "target[0].transport",
                "only an `lxc:`",
            ),
            (
                "[[target]]\nslug = \"lxc:a\"\ntransport = \"pct\"\nvmid = 100\nproxmox = \"host:local\"\n",
                5,
                "target[0].proxmox",
                "not an ssh target",
            ),
            (
                "[[target]]\nslug = \"lxc:a\"\ntransport = \"pct\"\nvmid = 100\nproxmox = \"host:gone\"\n",
                5,
                "target[0].proxmox",
                "no target `host:gone`",
            ),
            (
                "[[target]]\nslug = \"lxc:a\"\ntransport = \"pct\"\nvmid = 5\nproxmox = \"host:p\"\n[[target]]\nslug = \"host:p\"\ntransport = \"ssh\"\n",
                4,
                "target[0].vmid",
                "between 100",
            ),
            (
                "[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\n\n[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\n",
                6,
                "target[1].slug",
                "already defined on line 2",
            ),
        ];
        for (text, want_line, want_field, want_msg) in cases {
            let (line, field, msg) = fail(text);
            assert_eq!(line, Some(*want_line), "{text}: {msg}");
            assert_eq!(field.as_deref(), Some(*want_field), "{text}: {msg}");
            assert!(msg.contains(want_msg), "{text}: {msg}");
        }
    }

    #[test]
    fn missing_pct_fields_are_named() {
        let (_, field, msg) =
            fail("[[target]]\nslug = \"lxc:a\"\ntransport = \"pct\"\nproxmox = \"host:p\"\n");
        assert_eq!(field.as_deref(), Some("target[0].vmid"), "{msg}");
        let (_, field, msg) =
            fail("[[target]]\nslug = \"lxc:a\"\ntransport = \"pct\"\nvmid = 100\n");
        assert_eq!(field.as_deref(), Some("target[0].proxmox"), "{msg}");
    }

    #[test]
    fn ssh_values_ssh_would_misread_are_refused() {
        let (line, field, msg) = fail(
            "[[target]]\nslug = \"host:a\"\ntransport = \"ssh\"\nhost = \"-oProxyCommand=x\"\n",
        );
        assert_eq!(
            (line, field.as_deref()),
            (Some(4), Some("target[0].host")),
            "{msg}"
        );
        assert!(msg.contains("would be read as an option"), "{msg}");
    }
}
