//! HTTP clients and the firewall: curl, wget (methods, URL schemes, metadata and API
//! endpoints), nft.

use super::common::span0;
use crate::classify::{ArgvOut, Engine};
use crate::decision::{Class, Span};
use crate::ir::{Part, Word};
use crate::lists::List;
use crate::opts::{Parsed, Val};

pub(super) const CURL_DATA: &[&str] = &[
    "--data",
    "--data-ascii",
    "--data-binary",
    "--data-raw",
    "--data-urlencode",
    "--json",
    "--form",
    "--form-string",
    "--upload-file",
    "--mail-rcpt",
    "--mail-from",
];

pub(super) fn url_scheme(e: &mut Engine<'_>, w: &Word) {
    let prefix = match w.parts.first() {
        Some(Part::Lit(s)) => s.as_str(),
        _ => "",
    };
    // An unquoted `?` in a query string is a glob to the shell, but a URL-looking word
    // (host and path, no expansion) cannot name a file: it reaches the tool as typed.
    let plain = w
        .parts
        .iter()
        .all(|p| matches!(p, Part::Lit(_) | Part::Glob(_)));
    let Some(pos) = prefix.find("://") else {
        if !plain {
            e.fail("unknown.url", w.span, "the URL is only known at run time");
        } else if prefix.len() > 5 && prefix[..5].eq_ignore_ascii_case("file:") {
            // `file:/etc/shadow` (one slash) is a file URL too.
            file_url_read(e, &prefix[5..], w.span);
        } else {
            // No scheme: curl and wget assume http.
            metadata_url(e, prefix, w.span);
            secret_api(e, prefix, w.span);
        }
        return;
    };
    let scheme = prefix[..pos].to_ascii_lowercase();
    match scheme.as_str() {
        "http" | "https" | "ftp" | "ftps" => {
            metadata_url(e, &prefix[pos + 3..], w.span);
            secret_api(e, &prefix[pos + 3..], w.span);
        }
        // A file read over SSH with this host's keys (the host may be this one, or a peer
        // laid out the same): its path is judged as a local read.
        "sftp" | "scp" => {
            metadata_url(e, &prefix[pos + 3..], w.span);
            let rest = &prefix[pos + 3..];
            let path = rest.find('/').map_or("/", |i| &rest[i..]);
            let path = path
                .strip_prefix("/~")
                .map_or_else(|| path.to_owned(), |p| format!("~{p}"));
            file_url_read(e, &path, w.span);
        }
        "file" => {
            let rest = &prefix[pos + 3..];
            let path = rest.find('/').map_or("/", |i| &rest[i..]);
            if w.literal().is_some() {
                file_url_read(e, path, w.span);
            } else {
                e.read_patterns(&["**".to_owned()], false, w.span);
            }
        }
        _ => e.fail(
            "unknown.url",
            w.span,
            format!("`{scheme}://` URLs are not modelled"),
        ),
    }
}

/// HTTP endpoints that answer with secrets whatever host serves them: Kubernetes secrets
/// (API server, `kubectl proxy`), Vault secret engines, Consul KV and ACL tokens, Nomad
/// variables and allocation files, etcd v2 keys, RabbitMQ definitions (password hashes),
/// Elasticsearch API keys; LXD/Incus file reads are judged by the guest path they name.
pub(super) fn secret_api(e: &mut Engine<'_>, rest: &str, span: Span) {
    let Some(i) = rest.find('/') else {
        return;
    };
    let (path, query) = rest[i..].split_once('?').unwrap_or((&rest[i..], ""));
    let path = percent_decode(path).to_ascii_lowercase();
    let mut segs: Vec<&str> = Vec::new();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segs.pop();
            }
            _ => segs.push(s),
        }
    }
    let at = |k: usize, w: &str| segs.get(k).is_some_and(|s| *s == w);
    let v1 = at(0, "v1");
    let hit = (matches!(segs.first(), Some(&"api" | &"apis")) && segs.contains(&"secrets"))
        || (v1
            && matches!(
                segs.get(1),
                Some(&"secret" | &"kv" | &"cubbyhole" | &"var" | &"vars" | &"snapshot")
            ))
        || (v1 && at(1, "sys") && at(2, "raw"))
        || (v1 && at(1, "acl") && segs.get(2).is_some_and(|s| s.starts_with("token")))
        || (v1 && at(1, "client") && at(2, "fs"))
        || (v1 && at(1, "transit") && at(2, "export"))
        || (v1
            && at(1, "auth")
            && at(2, "token")
            && segs.get(3).is_some_and(|s| s.starts_with("lookup")))
        || (v1 && segs.contains(&"creds"))
        || (at(0, "v2") && at(1, "keys"))
        || (at(0, "api") && at(1, "definitions"))
        || (at(0, "_security") && at(1, "api_key"));
    if hit {
        e.add(
            "secret.api",
            Class::Destructive,
            span,
            "reads an API endpoint that answers with secrets",
        );
    }
    // LXD and Incus: `/1.0/instances/NAME/files?path=/etc/shadow` reads a guest's file.
    if at(0, "1.0") && segs.contains(&"files") {
        match query.split('&').find_map(|kv| kv.strip_prefix("path=")) {
            Some(p) => file_url_read(e, p, span),
            None => e.read_patterns(&["**".to_owned()], false, span),
        }
    }
}

/// The path of a `file://` URL as curl opens it: percent-escapes decoded, and curl's own
/// globbing (`{a,b}`, `[a-z]`) read as a wildcard.
pub(super) fn file_url_read(e: &mut Engine<'_>, path: &str, span: Span) {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let decoded = percent_decode(path);
    let mut pat = String::with_capacity(decoded.len());
    let mut depth = 0usize;
    for c in decoded.chars() {
        match c {
            '{' | '[' => {
                if depth == 0 {
                    pat.push('*');
                }
                depth += 1;
            }
            '}' | ']' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            '*' | '?' | '\\' => {
                pat.push('\\');
                pat.push(c);
            }
            _ => pat.push(c),
        }
    }
    e.read_patterns(&[pat], false, span);
}

/// `%XX` escapes decoded (invalid ones kept as typed).
pub(super) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (
                (b[i + 1] as char).to_digit(16),
                (b[i + 2] as char).to_digit(16),
            )
        {
            // Two hex digits always fit a byte.
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The host of `rest` (what follows `scheme://`): userinfo, port and brackets removed.
pub(super) fn url_host(rest: &str) -> &str {
    let auth = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    if let Some(h) = host.strip_prefix('[') {
        return h.split(']').next().unwrap_or(h);
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(h, _)| h)
}

/// An IPv4 address in any spelling `inet_aton` accepts (`2852039166`, `0xa9fea9fe`,
/// `0251.0376.0251.0376`, `169.254.43518`), or IPv6-mapped (`::ffff:169.254.169.254`,
/// `::ffff:a9fe:a9fe`).
pub(super) fn ipv4_any(host: &str) -> Option<u32> {
    let h = host.to_ascii_lowercase();
    if let Some(m) = h
        .strip_prefix("::ffff:")
        .or_else(|| h.strip_prefix("0:0:0:0:0:ffff:"))
    {
        if let Some(v) = ipv4_any(m) {
            return Some(v);
        }
        let (a, b) = m.split_once(':')?;
        let a = u32::from_str_radix(a, 16).ok()?;
        let b = u32::from_str_radix(b, 16).ok()?;
        return (a <= 0xffff && b <= 0xffff).then_some((a << 16) | b);
    }
    let parts: Vec<&str> = h.trim_end_matches('.').split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let num = |p: &str| -> Option<u64> {
        if let Some(x) = p.strip_prefix("0x") {
            u64::from_str_radix(x, 16).ok()
        } else if p.len() > 1 && p.starts_with('0') {
            u64::from_str_radix(&p[1..], 8).ok()
        } else {
            p.parse::<u64>().ok()
        }
    };
    let vals: Vec<u64> = parts.iter().map(|p| num(p)).collect::<Option<_>>()?;
    let (last, head) = vals.split_last()?;
    if head.iter().any(|v| *v > 255) {
        return None;
    }
    let shift = 8 * (4 - head.len() as u32);
    if shift < 64 && *last >= 1u64 << shift {
        return None;
    }
    let mut v: u64 = 0;
    for (i, x) in head.iter().enumerate() {
        v |= x << (24 - 8 * i as u64);
    }
    u32::try_from(v | last).ok()
}

/// Cloud instance-metadata services: they hand out the instance's credentials.
pub(super) fn metadata_host(host: &str) -> bool {
    const ADDRS: &[u32] = &[
        0xA9FE_A9FE, // 169.254.169.254 (AWS, Azure, GCP, OpenStack, DigitalOcean …)
        0xA9FE_AA02, // 169.254.170.2 (ECS task credentials)
        0x6464_64C8, // 100.100.100.200 (Alibaba)
        0xA9FE_A9FD, // 169.254.169.253
    ];
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    if ipv4_any(&h).is_some_and(|v| ADDRS.contains(&v)) {
        return true;
    }
    matches!(
        h.as_str(),
        "metadata.google.internal"
            | "metadata"
            | "metadata.goog"
            | "instance-data"
            | "instance-data.ec2.internal"
    ) || h.starts_with("fd00:ec2:")
        || h.contains("169.254.169.254")
        || h.contains("169-254-169-254")
        || h.contains("a9fea9fe")
}

/// A request to a metadata service asks unless its path is a harmless instance fact.
pub(super) fn metadata_url(e: &mut Engine<'_>, rest: &str, span: Span) {
    let host = url_host(rest);
    if !metadata_host(host) {
        return;
    }
    let path = rest[rest.find('/').unwrap_or(rest.len())..].to_ascii_lowercase();
    let path = percent_decode(&path);
    let credential = [
        "credential",
        "token",
        "identity",
        "service-account",
        "iam",
        "user-data",
        "userdata",
        "attributes",
        "secret",
        "key",
        "password",
        "recursive",
        "auth",
        "oauth",
    ]
    .iter()
    .any(|w| path.contains(w));
    if credential
        || !e
            .policy
            .list(List::MetadataHarmlessPaths)
            .iter()
            .any(|h| path.contains(h.as_str()))
    {
        e.add(
            "secret.metadata",
            Class::Destructive,
            span,
            "reads the cloud instance-metadata service, which hands out the instance's credentials",
        );
    }
}

/// Is this a Docker-compatible API endpoint (a docker/podman socket, or the daemon's TCP
/// ports)? Its API runs containers as root and returns their environment.
pub(super) fn docker_api(socket: Option<&str>, url_rest: &str) -> bool {
    if let Some(s) = socket {
        let base = s.rsplit('/').next().unwrap_or(s).to_ascii_lowercase();
        return base.contains("docker") || base.contains("podman") || base.contains("containerd");
    }
    let auth = url_rest.split(['/', '?', '#']).next().unwrap_or(url_rest);
    auth.rsplit_once(':')
        .is_some_and(|(_, port)| matches!(port, "2375" | "2376"))
}

/// Docker API requests: only GETs of listings and daemon facts are reads; every other
/// request changes containers (as root) or returns environments, secrets and files.
pub(super) fn docker_request(e: &mut Engine<'_>, get: bool, rest: &str, span: Span) {
    let path = rest[rest.find('/').unwrap_or(rest.len())..].to_ascii_lowercase();
    let path = path.split(['?', '#']).next().unwrap_or(&path);
    // `/v1.43/containers/json` → `/containers/json`.
    let path = match path.strip_prefix("/v") {
        Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => {
            &r[r.find('/').unwrap_or(r.len())..]
        }
        _ => path,
    };
    let listing = e
        .policy
        .listed(List::DockerApiListings, path.trim_end_matches('/'))
        || (path.starts_with("/containers/") && path.ends_with("/stats"));
    if !(get && listing) {
        e.add(
            "secret.docker_api",
            Class::Destructive,
            span,
            "talks to the Docker API: anything but a listing runs containers as root or returns their environment, secrets or files",
        );
    }
}

pub(super) fn curl(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    // The Docker API (over its socket or TCP port) and file reads hidden in `@FILE` values.
    let method = p
        .values("--request")
        .last()
        .map(|o| o.value.literal().map(str::to_ascii_uppercase));
    let sends = p.occ.iter().any(|o| CURL_DATA.contains(&o.opt.id.as_str())) && !p.has("--get");
    let get = match &method {
        Some(Some(m)) => m == "GET" || m == "HEAD",
        Some(None) => false,
        None => !sends,
    };
    let socket = p
        .occ
        .iter()
        .filter(|o| {
            matches!(
                o.opt.id.as_str(),
                "--unix-socket" | "--abstract-unix-socket"
            )
        })
        .map(|o| o.value.literal())
        .next_back();
    let urls: Vec<(String, Span)> = p
        .operands
        .iter()
        .map(|&i| &words[i])
        .chain(p.values("--url").filter_map(|o| match o.value {
            Val::Word(w) => Some(w),
            _ => None,
        }))
        .map(|w| {
            let lit = match w.parts.first() {
                Some(Part::Lit(s)) => s.as_str(),
                _ => "",
            };
            (
                lit.split_once("://").map_or(lit, |(_, r)| r).to_owned(),
                w.span,
            )
        })
        .collect();
    match socket {
        Some(None) => e.fail(
            "unknown.curl",
            span0(words),
            "the socket is only known at run time",
        ),
        Some(Some(sock)) if docker_api(Some(sock), "") => {
            for (rest, span) in &urls {
                docker_request(e, get, rest, *span);
            }
        }
        _ => {
            for (rest, span) in &urls {
                if docker_api(None, rest) {
                    docker_request(e, get, rest, *span);
                }
            }
        }
    }
    // `--resolve`/`--connect-to` can send any host name to a metadata address.
    for o in p
        .occ
        .iter()
        .filter(|o| matches!(o.opt.id.as_str(), "--resolve" | "--connect-to" | "--proxy"))
    {
        let v = o.value.literal().unwrap_or("");
        if v.split([':', ',', '[', ']', '/', '@']).any(metadata_host) {
            e.add(
                "secret.metadata",
                Class::Destructive,
                words[o.word].span,
                "routes the request to the cloud instance-metadata service",
            );
        }
    }
    for o in &p.occ {
        let id = o.opt.id.as_str();
        let span = words[o.word].span;
        let file = match (id, o.value.literal()) {
            // `-w @FILE` reads the format (and so prints the file).
            ("--write-out", Some(v)) => v.strip_prefix('@'),
            // `name@FILE` or `@FILE` (a `=` first makes it content).
            ("--url-query" | "--data-urlencode", Some(v)) => v
                .trim_start_matches('+')
                .split_once('@')
                .filter(|(name, _)| !name.contains('='))
                .map(|(_, f)| f),
            ("--proto-default", Some(v))
                if !v.eq_ignore_ascii_case("http") && !v.eq_ignore_ascii_case("https") =>
            {
                // Scheme-less URLs would use this protocol (`file`).
                for &i in &p.operands {
                    e.read_target(&words[i], false);
                }
                None
            }
            _ => None,
        };
        if let Some(f) = file
            && f != "-"
        {
            e.read_literal(f, span);
        } else if matches!(id, "--url-query") && o.value.literal().is_none() && o.value.is_some() {
            e.read_patterns(&["**".to_owned()], false, span);
        }
    }
    curl_core(e, p, words, off, ao);
}

pub(super) fn curl_core(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    let get = p.has("--get") || p.has("--head");
    for o in &p.occ {
        let id = o.opt.id.as_str();
        let span = words[o.word].span;
        if CURL_DATA.contains(&id) {
            if !get || id == "--upload-file" {
                e.add(
                    "option.curl",
                    Class::ConfigMutation,
                    span,
                    format!("`curl {id}` sends data to the server"),
                );
            }
            if let Some(v) = o.value.literal() {
                let file = match id {
                    "--upload-file" => Some(v),
                    "--form" => v
                        .split_once('=')
                        .and_then(|(_, x)| x.strip_prefix('@').or_else(|| x.strip_prefix('<'))),
                    _ => v.strip_prefix('@'),
                };
                if let Some(f) = file
                    && f != "-"
                {
                    let f = f.split(';').next().unwrap_or(f);
                    e.read_literal(f, span);
                }
            } else if o.value.is_some() {
                e.read_patterns(&["**".to_owned()], false, span);
            }
        }
        match id {
            "--request" => match o.value.literal().map(str::to_ascii_uppercase).as_deref() {
                Some("GET" | "HEAD" | "OPTIONS") => {}
                Some("DELETE") => e.add(
                    "option.curl",
                    Class::Destructive,
                    span,
                    "`curl -X DELETE` deletes a resource",
                ),
                Some(m) => e.add(
                    "option.curl",
                    Class::ConfigMutation,
                    span,
                    format!("`curl -X {m}` changes state on the server"),
                ),
                None => e.fail(
                    "unknown.curl",
                    span,
                    "the request method is only known at run time",
                ),
            },
            "--header" | "--cookie" => {
                if let Some(v) = o.value.literal() {
                    let f = if id == "--header" {
                        v.strip_prefix('@')
                    } else if !v.contains('=') {
                        Some(v)
                    } else {
                        None
                    };
                    if let Some(f) = f {
                        e.read_literal(f, span);
                    }
                }
            }
            "--write-out" if o.value.literal().is_none_or(|v| v.contains("%output{")) => {
                e.fail("unknown.curl", span, "`--write-out` can write files");
            }
            "--url" => {
                if let Val::Word(w) = o.value {
                    url_scheme(e, w);
                } else if let Some(v) = o.value.literal() {
                    url_scheme(e, &Word::lit(v, span));
                }
            }
            _ => {}
        }
    }
    for &i in &p.operands {
        url_scheme(e, &words[i]);
    }
    // `-q` first: ignore ~/.curlrc, which could add any option.
    ao.inserts.push((off + 1, "-q".to_owned()));
}

pub(super) fn wget(
    e: &mut Engine<'_>,
    p: &Parsed<'_>,
    words: &[Word],
    off: usize,
    ao: &mut ArgvOut,
) {
    for &i in &p.operands {
        url_scheme(e, &words[i]);
    }
    if p.has("--spider") {
        ao.inserts.push((off + 1, "--no-config".to_owned()));
        return;
    }
    let mut outputs = 0;
    for o in p.values("--output-document") {
        outputs += 1;
        if o.value.literal() != Some("-") {
            e.write_value(&o.value, words[o.word].span, "`wget -O` writes");
        }
    }
    if outputs == 0 && (!p.operands.is_empty() || p.has("--input-file")) {
        e.add(
            "spec.wget",
            Class::ConfigMutation,
            span0(words),
            "`wget` saves downloads as files",
        );
    }
    if [
        "--post-data",
        "--post-file",
        "--method",
        "--body-data",
        "--body-file",
    ]
    .iter()
    .any(|id| p.has(id))
    {
        let method = p
            .values("--method")
            .next()
            .and_then(|o| o.value.literal())
            .map(str::to_ascii_uppercase);
        let class = if method.as_deref() == Some("DELETE") {
            Class::Destructive
        } else {
            Class::ConfigMutation
        };
        if !matches!(method.as_deref(), Some("GET" | "HEAD")) {
            e.add(
                "option.wget",
                class,
                span0(words),
                "`wget` sends a request that changes state",
            );
        }
    }
    ao.inserts.push((off + 1, "--no-config".to_owned()));
}

pub(super) fn nft(e: &mut Engine<'_>, p: &Parsed<'_>, words: &[Word]) {
    let mut text = String::new();
    for &i in &p.operands {
        match words[i].literal() {
            Some(l) => {
                text.push_str(l);
                text.push(' ');
            }
            None => {
                e.fail(
                    "unknown.nft",
                    words[i].span,
                    "nft command only known at run time",
                );
                return;
            }
        }
    }
    let check = p.has("--check");
    let span = span0(words);
    // One argument may hold several commands: `nft 'list ruleset; flush ruleset'`, also
    // separated by newlines. Separators inside `{ … }` blocks belong to the block.
    let mut commands = Vec::new();
    let (mut depth, mut from) = (0usize, 0usize);
    for (k, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ';' | '\n' if depth == 0 => {
                commands.push(&text[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    commands.push(&text[from..]);
    for command in commands {
        let verb = command.split_whitespace().next().unwrap_or("");
        let class = match verb {
            "" => continue,
            "list" | "describe" | "monitor" => Class::ReadOnly,
            "add" | "insert" | "create" | "replace" | "rename" | "reset" | "delete" | "destroy" => {
                Class::ConfigMutation
            }
            "flush" => Class::Destructive,
            other => {
                e.fail(
                    "unknown.nft",
                    span,
                    format!("nft command `{other}` is not modelled"),
                );
                return;
            }
        };
        if !check {
            e.add(
                format!("spec.nft.{verb}"),
                class,
                span,
                format!("`nft {verb}`"),
            );
        }
    }
}
