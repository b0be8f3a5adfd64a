//! Importing targets from the operator's `~/.ssh/config`.
//!
//! Each concrete `Host` alias (no `*`, `?` or `!`) becomes a `host:<alias>` ssh target whose
//! transport holds only the alias: ssh itself resolves `HostName`, `User`, `Port`,
//! `ProxyJump`, keys and the rest from the same config at connection time, so nothing is
//! copied that could drift. The details read here are for the knowledge graph only.
//!
//! `Match` blocks are not evaluated. `Include` is followed by [`load_ssh_config`] (paths
//! relative to `~/.ssh`, `*`/`?` in the file-name part only), not by [`parse_ssh_config`].

use std::fs;
use std::path::{Path, PathBuf};

use crate::ExecError;
use crate::target::{SshTransport, Target, TargetKind, TargetSlug, Transport, is_valid_name};

/// Include depth limit (ssh's own is 16; a homelab config needs 1 or 2).
const MAX_INCLUDE_DEPTH: usize = 8;

/// One concrete `Host` alias and what its own block says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SshConfigHost {
    /// The alias (`Host nas` → `nas`).
    pub alias: String,
    /// `HostName`, if its block sets one.
    pub hostname: Option<String>,
    /// `User`.
    pub user: Option<String>,
    /// `Port`.
    pub port: Option<u16>,
    /// `ProxyJump`.
    pub proxy_jump: Option<String>,
    /// Where it was defined (`~/.ssh/config:12`).
    pub source: String,
}

impl SshConfigHost {
    /// The `host:<alias>` target. ssh resolves everything else from the config.
    pub fn target(&self) -> Result<Target, ExecError> {
        Target::new(
            TargetSlug::new(TargetKind::Host, &self.alias)?,
            Transport::Ssh(SshTransport::new(self.alias.clone())),
        )
    }
}

/// What an import found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SshConfigImport {
    /// Concrete aliases, first definition wins.
    pub hosts: Vec<SshConfigHost>,
    /// `Include` arguments as written (followed by [`load_ssh_config`]).
    pub includes: Vec<String>,
    /// What was skipped and why, for the operator.
    pub notes: Vec<String>,
}

impl SshConfigImport {
    /// One target per host.
    pub fn targets(&self) -> Vec<Target> {
        self.hosts.iter().filter_map(|h| h.target().ok()).collect()
    }

    fn absorb(&mut self, other: Self) {
        for host in other.hosts {
            self.add_host(host);
        }
        self.includes.extend(other.includes);
        self.notes.extend(other.notes);
    }

    fn add_host(&mut self, host: SshConfigHost) {
        if let Some(first) = self.hosts.iter().find(|h| h.alias == host.alias) {
            self.notes.push(format!(
                "{}: `{}` already defined at {}; kept the first",
                host.source, host.alias, first.source
            ));
        } else {
            self.hosts.push(host);
        }
    }
}

/// Parses one ssh config file's text. `source` names it in notes (`~/.ssh/config`).
pub fn parse_ssh_config(text: &str, source: &str) -> SshConfigImport {
    let mut import = SshConfigImport::default();
    // Indexes into `import.hosts` of the aliases the current `Host` block defines.
    let mut current: Vec<usize> = Vec::new();
    for (n, raw_line) in text.lines().enumerate() {
        let at = format!("{source}:{}", n + 1);
        let Some((keyword, args)) = split_line(raw_line) else {
            continue;
        };
        match keyword.to_ascii_lowercase().as_str() {
            "host" => {
                current.clear();
                for pattern in args {
                    if pattern.contains(['*', '?', '!']) {
                        continue;
                    }
                    if !is_valid_name(&pattern) {
                        import.notes.push(format!(
                            "{at}: skipped `{pattern}`: not a valid target name (letters, digits, `.`, `_`, `-`)"
                        ));
                        continue;
                    }
                    let before = import.hosts.len();
                    import.add_host(SshConfigHost {
                        alias: pattern,
                        source: at.clone(),
                        ..SshConfigHost::default()
                    });
                    if import.hosts.len() > before {
                        current.push(before);
                    }
                }
            }
            "match" => {
                current.clear();
                import.notes.push(format!(
                    "{at}: `Match` blocks are not evaluated by the import"
                ));
            }
            "include" => import.includes.extend(args),
            key => {
                let Some(value) = args.into_iter().next() else {
                    continue;
                };
                for &i in &current {
                    let host = &mut import.hosts[i];
                    // ssh keeps the first value it obtains.
                    match key {
                        "hostname" if host.hostname.is_none() => {
                            host.hostname = Some(value.clone())
                        }
                        "user" if host.user.is_none() => host.user = Some(value.clone()),
                        "port" if host.port.is_none() => host.port = value.parse().ok(),
                        "proxyjump" if host.proxy_jump.is_none() => {
                            host.proxy_jump = Some(value.clone());
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    import
}

/// Reads `path` (normally `~/.ssh/config`) and the files it includes. A missing main file
/// is an empty import, not an error.
pub fn load_ssh_config(path: &Path, home: &Path) -> Result<SshConfigImport, ExecError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(SshConfigImport {
                notes: vec![format!("{} does not exist", path.display())],
                ..SshConfigImport::default()
            });
        }
        Err(e) => {
            return Err(ExecError::ReadFile {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    let mut import = parse_ssh_config(&text, &path.display().to_string());
    let mut queue: Vec<(String, usize)> = import.includes.iter().map(|i| (i.clone(), 1)).collect();
    while let Some((include, depth)) = queue.pop() {
        if depth > MAX_INCLUDE_DEPTH {
            import.notes.push(format!(
                "Include `{include}` nested too deeply; not followed"
            ));
            continue;
        }
        let files = match expand_include(&include, home) {
            Ok(files) => files,
            Err(note) => {
                import.notes.push(note);
                continue;
            }
        };
        for file in files {
            match fs::read_to_string(&file) {
                Ok(text) => {
                    let inner = parse_ssh_config(&text, &file.display().to_string());
                    queue.extend(inner.includes.iter().map(|i| (i.clone(), depth + 1)));
                    import.absorb(SshConfigImport {
                        includes: Vec::new(),
                        ..inner
                    });
                }
                Err(e) => import
                    .notes
                    .push(format!("Include {}: {e}", file.display())),
            }
        }
    }
    Ok(import)
}

/// The files an `Include` argument names, sorted like ssh's glob.
fn expand_include(include: &str, home: &Path) -> Result<Vec<PathBuf>, String> {
    let path = if let Some(rest) = include.strip_prefix("~/") {
        home.join(rest)
    } else if include.starts_with('/') {
        PathBuf::from(include)
    } else {
        home.join(".ssh").join(include)
    };
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Err(format!("Include `{include}`: not a file path"));
    };
    if dir.to_string_lossy().contains(['*', '?', '[']) {
        return Err(format!(
            "Include `{include}`: wildcards in directory names are not followed by the import"
        ));
    }
    if !name.contains(['*', '?']) {
        return Ok(if path.is_file() {
            vec![path]
        } else {
            Vec::new()
        });
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|f| glob_match(name, f)))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// `*` and `?` matching; a leading dot must be matched literally, as in a shell glob.
fn glob_match(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// `Keyword arg…` or `Keyword=arg…`; double quotes group words. `None` for blank and
/// comment lines.
fn split_line(line: &str) -> Option<(String, Vec<String>)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let split_at = line.find(|c: char| c.is_whitespace() || c == '=')?;
    let keyword = line[..split_at].to_owned();
    let mut rest = line[split_at..].trim_start();
    if let Some(r) = rest.strip_prefix('=') {
        rest = r.trim_start();
    }
    let mut args = Vec::new();
    let mut word = String::new();
    let mut in_quotes = false;
    let mut has_word = false;
    for c in rest.chars() {
        match c {
            '"' => {
                in_quotes = !in_quotes;
                has_word = true;
            }
            c if c.is_whitespace() && !in_quotes => {
                if has_word {
                    args.push(std::mem::take(&mut word));
                    has_word = false;
                }
            }
            c => {
                word.push(c);
                has_word = true;
            }
        }
    }
    if has_word {
        args.push(word);
    }
    Some((keyword, args))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
# Homelab
Host *
    ServerAliveInterval 30

Host nas nas.lan
    HostName 192.168.1.10
    User admin
    Port 2222

Host pve
    Hostname=pve.lan
    user root
    ProxyJump bastion

Host bastion "quoted-alias" web-* !evil me@x
    HostName bastion.example.org

Match host pve exec "true"
    User ignored

Host nas
    User second

Include config.d/*
"#;

    #[test]
    fn concrete_aliases_become_targets() {
        let import = parse_ssh_config(CONFIG, "~/.ssh/config");
        let aliases: Vec<&str> = import.hosts.iter().map(|h| h.alias.as_str()).collect();
        assert_eq!(
            aliases,
            ["nas", "nas.lan", "pve", "bastion", "quoted-alias"]
        );
        let nas = &import.hosts[0];
        assert_eq!(nas.hostname.as_deref(), Some("192.168.1.10"));
        assert_eq!(nas.user.as_deref(), Some("admin"));
        assert_eq!(nas.port, Some(2222));
        assert_eq!(nas.source, "~/.ssh/config:6");
        let pve = &import.hosts[2];
        assert_eq!(pve.hostname.as_deref(), Some("pve.lan"));
        assert_eq!(
            pve.user.as_deref(),
            Some("root"),
            "Match blocks are not applied"
        );
        assert_eq!(pve.proxy_jump.as_deref(), Some("bastion"));
        assert_eq!(import.includes, ["config.d/*"]);

        let targets = import.targets();
        assert_eq!(targets[0].slug.to_string(), "host:nas");
        // Only the alias: ssh resolves the rest from the same config.
        assert_eq!(
            targets[0].transport,
            Transport::Ssh(SshTransport::new("nas"))
        );
    }

    #[test]
    fn skipped_entries_are_explained() {
        let import = parse_ssh_config(CONFIG, "cfg");
        let notes = import.notes.join("\n");
        assert!(notes.contains("cfg:16: skipped `me@x`"), "{notes}");
        assert!(notes.contains("cfg:19: `Match` blocks"), "{notes}");
        assert!(
            notes.contains("cfg:22: `nas` already defined at cfg:6"),
            "{notes}"
        );
    }

    #[test]
    fn lines_split_like_ssh() {
        assert_eq!(split_line("  # c"), None);
        assert_eq!(split_line(""), None);
        assert_eq!(
            split_line("Host=a b"),
            Some(("Host".into(), vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            split_line("IdentityFile \"/a b/c\""),
            Some(("IdentityFile".into(), vec!["/a b/c".into()]))
        );
        assert_eq!(
            split_line("Host = x"),
            Some(("Host".into(), vec!["x".into()]))
        );
    }

    #[test]
    fn globs_match_file_names() {
        assert!(glob_match("*", "a.conf"));
        assert!(glob_match("*.conf", "a.conf"));
        assert!(!glob_match("*.conf", "a.conf~"));
        assert!(glob_match("h?st*", "host-1"));
        assert!(!glob_match("*", ".hidden"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }

    #[test]
    fn includes_are_followed_relative_to_dot_ssh() {
        let home = tempfile::tempdir().unwrap();
        let ssh = home.path().join(".ssh");
        fs::create_dir_all(ssh.join("config.d")).unwrap();
        fs::write(
            ssh.join("config"),
            "Host main\nInclude config.d/*.conf ~/.ssh/extra\n",
        )
        .unwrap();
        fs::write(ssh.join("config.d/b.conf"), "Host b\nHost main\n").unwrap();
        fs::write(ssh.join("config.d/a.conf"), "Host a\nInclude nested\n").unwrap();
        fs::write(ssh.join("config.d/skip.txt"), "Host skipped\n").unwrap();
        fs::write(ssh.join("nested"), "Host deep\n").unwrap();
        let import = load_ssh_config(&ssh.join("config"), home.path()).unwrap();
        let mut aliases: Vec<&str> = import.hosts.iter().map(|h| h.alias.as_str()).collect();
        aliases.sort_unstable();
        assert_eq!(aliases, ["a", "b", "deep", "main"]);
        assert!(
            import
                .notes
                .iter()
                .any(|n| n.contains("`main` already defined"))
        );

        let missing = load_ssh_config(&home.path().join("nope"), home.path()).unwrap();
        assert!(missing.hosts.is_empty());
        assert_eq!(missing.notes.len(), 1);
    }

    #[test]
    fn include_loops_stop() {
        let home = tempfile::tempdir().unwrap();
        let ssh = home.path().join(".ssh");
        fs::create_dir_all(&ssh).unwrap();
        fs::write(ssh.join("config"), "Host x\nInclude config\n").unwrap();
        let import = load_ssh_config(&ssh.join("config"), home.path()).unwrap();
        assert_eq!(import.hosts.len(), 1);
        assert!(import.notes.iter().any(|n| n.contains("nested too deeply")));
    }
}
