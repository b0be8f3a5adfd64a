//! Metamorphic relations: spellings that mean the same command classify the same,
//! and wrapping a command never makes it less strict.

use nomos_policy::{Class, classify};

use crate::corpus::cases;

fn class(cmd: &str) -> Class {
    classify(cmd).class
}

/// Words that are plain literals (no quoting or expansion syntax at all), in a command
/// that does not start with a reserved word: a quoted `time` is the program, not the
/// keyword, so quoting it rightly changes the canonical form.
fn plain_words(cmd: &str) -> Option<Vec<&str>> {
    if cmd.contains(|c: char| "|&;<>$`(){}*?~'\"\\\n[]#!=".contains(c)) {
        return None;
    }
    let words: Vec<&str> = cmd.split_whitespace().collect();
    const RESERVED: &[&str] = &[
        "time", "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while",
        "until", "do", "done", "in", "function", "coproc",
    ];
    if words.first().is_some_and(|w| RESERVED.contains(w)) {
        return None;
    }
    Some(words)
}

#[test]
fn quoting_does_not_change_the_decision() {
    let mut checked = 0;
    for (_, _, cmd) in cases() {
        let Some(words) = plain_words(&cmd) else {
            continue;
        };
        let base = classify(&cmd);
        let variants = [
            // 'l's
            words
                .iter()
                .map(|w| {
                    if w.len() > 1 {
                        format!("'{}'{}", &w[..1], &w[1..])
                    } else {
                        (*w).to_owned()
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            // "ls"
            words
                .iter()
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(" "),
            // l\s
            words
                .iter()
                .map(|w| {
                    let mut c = w.chars();
                    let first = c.next().map(String::from).unwrap_or_default();
                    let rest: String = c.map(|ch| format!("\\{ch}")).collect();
                    format!("{first}{rest}")
                })
                .collect::<Vec<_>>()
                .join(" "),
            // line continuations between words
            words.join(" \\\n  "),
        ];
        for v in variants {
            let d = classify(&v);
            assert_eq!(d.class, base.class, "{v:?} vs {cmd:?}");
            assert_eq!(d.canonical, base.canonical, "canonical of {v:?} vs {cmd:?}");
        }
        checked += 1;
    }
    assert!(checked > 150, "only {checked} commands were plain enough");
}

#[test]
fn flag_spellings_are_equivalent() {
    let groups: &[&[&str]] = &[
        &[
            "head -n5 /var/log/syslog",
            "head -n 5 /var/log/syslog",
            "head --lines=5 /var/log/syslog",
            "head --lines 5 /var/log/syslog",
            "head -5 /var/log/syslog",
            "head --li=5 /var/log/syslog",
        ],
        &[
            "tail -n 20 /var/log/syslog",
            "tail -n20 /var/log/syslog",
            "tail --lines=20 /var/log/syslog",
            "tail -20 /var/log/syslog",
        ],
        &[
            "journalctl -n 50 -u nginx",
            "journalctl --lines=50 --unit=nginx",
            "journalctl -u nginx --lines 50",
            "journalctl --unit nginx -n50",
        ],
        &[
            "grep -i -n x /var/log/syslog",
            "grep -in x /var/log/syslog",
            "grep --ignore-case --line-number x /var/log/syslog",
            "grep --ignore-c -n x /var/log/syslog",
        ],
        &[
            "sort -o /tmp/out /etc/hosts",
            "sort --output=/tmp/out /etc/hosts",
            "sort --outp=/tmp/out /etc/hosts",
            "sort -o/tmp/out /etc/hosts",
            "sort /etc/hosts -o /tmp/out",
        ],
        &[
            "sed -i s/a/b/ /srv/x.conf",
            "sed --in-place s/a/b/ /srv/x.conf",
            "sed --in-pl s/a/b/ /srv/x.conf",
            "sed -e s/a/b/ -i /srv/x.conf",
        ],
        &[
            "journalctl --vacuum-time=7d",
            "journalctl --vacuum-time 7d",
            "journalctl --vacuum-t=7d",
        ],
        &[
            "curl -T x https://e.x",
            "curl --upload-file x https://e.x",
            "curl --upload-fil x https://e.x",
            "curl --upload-file=x https://e.x",
        ],
        &[
            "ip a",
            "ip addr",
            "ip address",
            "ip address show",
            "ip a s",
            "ip addr list",
        ],
        &[
            "ls -la /etc",
            "ls -l -a /etc",
            "ls --all -l /etc",
            "ls /etc -la",
        ],
        &[
            "tar -tzf x.tgz",
            "tar tzf x.tgz",
            "tar --list --gzip --file=x.tgz",
            "tar -t -z -f x.tgz",
        ],
        &[
            "docker logs --tail 100 web",
            "docker logs --tail=100 web",
            "docker logs -n 100 web",
            "docker logs -n100 web",
        ],
        &[
            "timeout 5 ls",
            "timeout 5s ls",
            "timeout --signal=KILL 5 ls",
            "timeout -s KILL 5 ls",
            "timeout -k 1 5 ls",
        ],
    ];
    for g in groups {
        let want = class(g[0]);
        for v in &g[1..] {
            assert_eq!(class(v), want, "{v:?} vs {:?}", g[0]);
        }
    }
}

#[test]
fn wrappers_are_never_less_strict() {
    let mut checked = 0;
    for (_, _, cmd) in cases() {
        let base = class(&cmd);
        let mut quoted = String::from("'");
        quoted.push_str(&cmd.replace('\'', "'\\''"));
        quoted.push('\'');
        let mut wrapped = vec![
            format!("sudo {cmd}"),
            format!("sudo -u root {cmd}"),
            format!("timeout 5 {cmd}"),
            format!("nice -n 5 {cmd}"),
            format!("env LANG=C {cmd}"),
            format!("bash -c {quoted}"),
            format!("sh -c {quoted}"),
            format!("ssh host {quoted}"),
            format!("watch -n 2 {quoted}"),
        ];
        if plain_words(&cmd).is_some() {
            wrapped.push(format!("pct exec 101 -- {cmd}"));
            wrapped.push(format!("docker exec web {cmd}"));
            wrapped.push(format!("kubectl exec pod -- {cmd}"));
            wrapped.push(format!("stdbuf -oL {cmd}"));
            wrapped.push(format!("xargs -0 {cmd} < /dev/null"));
        }
        for w in wrapped {
            // Wrappers that only accept a simple command fail closed on scripts; either way
            // they must not be more permissive.
            assert!(class(&w) >= base, "{w:?} is less strict than {cmd:?}");
        }
        checked += 1;
    }
    assert!(checked >= 400);
}

#[test]
fn redirect_placement_does_not_matter() {
    let groups: &[&[&str]] = &[
        &["echo hi > /tmp/x", "> /tmp/x echo hi", "echo > /tmp/x hi"],
        &[
            "echo hi > /etc/cron.d/x",
            ">/etc/cron.d/x echo hi",
            "echo >/etc/cron.d/x hi",
        ],
        &["ls 2>/dev/null", "2>/dev/null ls", "ls 2> /dev/null"],
        &["cat < /etc/shadow", "< /etc/shadow cat", "cat </etc/shadow"],
        &[
            "sort < /etc/hosts > /tmp/s",
            "> /tmp/s sort < /etc/hosts",
            "< /etc/hosts > /tmp/s sort",
        ],
    ];
    for g in groups {
        let want = class(g[0]);
        for v in &g[1..] {
            assert_eq!(class(v), want, "{v:?} vs {:?}", g[0]);
        }
    }
}

#[test]
fn canonical_form_classifies_the_same() {
    for (_, _, cmd) in cases() {
        let d = classify(&cmd);
        let Some(canon) = &d.canonical else { continue };
        if d.unknown {
            continue;
        }
        let again = classify(canon);
        assert_eq!(
            again.class,
            d.class,
            "canonical {canon:?} of {cmd:?} ({})",
            again.rule()
        );
    }
}
