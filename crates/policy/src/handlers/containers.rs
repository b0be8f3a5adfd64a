//! Containers: `docker run` mounts, inspect templates, top.

use super::common::span0;
use crate::classify::Engine;
use crate::decision::Class;
use crate::ir::Word;
use crate::opts::Parsed;

pub(super) fn docker_run(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for o in &p.occ {
        let id = o.opt.id.as_str();
        let span = words[o.word].span;
        let v = o.value.literal();
        let host_path: Option<String> = match id {
            "--volume" => match v {
                Some(v) => v.split(':').next().map(str::to_owned),
                None => Some("**".to_owned()),
            },
            "--mount" => match v {
                Some(v) => v
                    .split(',')
                    .find_map(|kv| {
                        kv.strip_prefix("source=")
                            .or_else(|| kv.strip_prefix("src="))
                    })
                    .map(str::to_owned),
                None => Some("**".to_owned()),
            },
            "--pid" | "--ipc" | "--uts" | "--userns" | "--network" | "--net" | "--cgroupns" => {
                if v == Some("host") && id != "--network" && id != "--net" {
                    e.add(
                        "option.docker",
                        Class::Destructive,
                        span,
                        format!("`{id}=host` shares the host namespace"),
                    );
                }
                None
            }
            _ => None,
        };
        if let Some(hp) = host_path
            && (hp.starts_with('/') || hp.starts_with('~') || hp.starts_with('.') || hp == "**")
        {
            let h = hp.trim_end_matches('/');
            let system = h.is_empty()
                || hp == "**"
                || matches!(
                    h,
                    "/etc"
                        | "/usr"
                        | "/boot"
                        | "/bin"
                        | "/sbin"
                        | "/lib"
                        | "/root"
                        | "/var"
                        | "/proc"
                        | "/sys"
                        | "/dev"
                        | "/home"
                        | "/run"
                        | "/var/run"
                )
                || crate::paths::protected_write(h).is_some()
                || crate::paths::protected_write(&format!("{h}/x")).is_some();
            if system {
                e.add(
                    "option.docker",
                    Class::Destructive,
                    span,
                    format!("mounts host path `{hp}` into a container"),
                );
            }
        }
    }
}

/// A container's inspect document holds its environment (`Config.Env`), where service
/// credentials live: it asks unless a template picks fields that are not the environment
/// (`--format '{{.State.Health.Status}}'`) or the object is not a container.
pub(super) fn container_inspect(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let not_container = p
        .values("--type")
        .any(|o| matches!(o.value.literal(), Some("image" | "network" | "volume")));
    if not_container {
        return;
    }
    let mut templates = p.values("--format").peekable();
    if templates.peek().is_none() {
        e.add(
            "secret.environment",
            Class::Destructive,
            span0(words),
            "prints the whole container configuration, its environment included (service credentials)",
        );
        return;
    }
    for o in templates {
        if o.value.literal().is_none_or(template_shows_env) {
            e.add(
                "secret.environment",
                Class::Destructive,
                words[o.word].span,
                "prints the environment of a container (service credentials)",
            );
        }
    }
}

/// `docker top C [ps options]`: BSD `e` (`e`, `aux e`, `auxeww`) appends each process's
/// environment (the container's credentials).
pub(super) fn container_top(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    for &i in p.operands.iter().skip(1) {
        let shows_env = match words[i].literal() {
            Some(w) => {
                !w.starts_with('-') && w.bytes().all(|c| c.is_ascii_alphabetic()) && w.contains('e')
            }
            None => true,
        };
        if shows_env {
            e.add(
                "secret.environment",
                Class::Destructive,
                words[i].span,
                "prints the environment of a container's processes (service credentials)",
            );
            return;
        }
    }
}

/// Does a Go template over an inspect document print the environment: a field named
/// `Env`, all of `.Config`, or the whole document (`{{json .}}`)?
pub(super) fn template_shows_env(t: &str) -> bool {
    if t.contains("Env") {
        return true;
    }
    let b = t.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..b.len()).filter(|&i| b[i] == b'.').any(|i| {
        // Only a field reference starts a path: `{{.X}}`, `{{json .X}}`, `(index .X 0)`.
        let starts = i == 0 || !ident(b[i - 1]) && b[i - 1] != b'.';
        let end = (i + 1..b.len()).find(|&j| !ident(b[j])).unwrap_or(b.len());
        let field = &t[i + 1..end];
        let whole = field.is_empty() || (field == "Config" && b.get(end) != Some(&b'.'));
        starts && whole
    })
}
