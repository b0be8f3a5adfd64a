//! The public API the agent and the CLI use.

use nomos_policy::{Class, classify};

#[test]
fn classes_are_ordered_and_serialise_snake_case() {
    assert!(Class::ReadOnly < Class::ConfigMutation && Class::ConfigMutation < Class::Destructive);
    assert_eq!(
        serde_json::to_string(&Class::ConfigMutation).unwrap(),
        "\"config_mutation\""
    );
    let d = classify("ls -la");
    let v: serde_json::Value = serde_json::to_value(&d).unwrap();
    assert_eq!(v["class"], "read_only");
    assert_eq!(v["unknown"], false);
    assert_eq!(v["canonical"], "ls -la");
    assert!(
        v["findings"][0]["rule"]
            .as_str()
            .unwrap()
            .starts_with("spec.ls")
    );
}

#[test]
fn unknown_decisions_are_destructive_and_explained() {
    let d = classify("eval \"$x\"");
    assert!(d.unknown);
    assert_eq!(d.class, Class::Destructive);
    assert_eq!(d.rule(), "unknown.eval");
    let f = d.primary().unwrap();
    assert!(f.unknown && !f.reason.is_empty());
}

#[test]
fn spans_point_into_the_command() {
    let cmd = "ls -la && rm -rf /tmp/x";
    let d = classify(cmd);
    let f = d.primary().unwrap();
    assert_eq!(&cmd[f.span.start..f.span.end], "rm");
}

#[test]
fn unparsable_input_has_no_canonical_form() {
    let d = classify("echo 'unterminated");
    assert!(d.unknown);
    assert!(d.canonical.is_none());
}

#[test]
fn canonical_form_requotes_literals() {
    let cases = [
        ("'l's -la", "ls -la"),
        ("echo \"a b\"  c\\ d", "echo 'a b' 'c d'"),
        ("echo \"$HOME\"/x", "echo \"$HOME\"/x"),
        ("cat ~/notes/*.md", "cat ~/notes/*.md"),
        ("grep -F '$(id)' f", "grep -F '$(id)' f"),
        ("echo it\\'s", "echo 'it'\\''s'"),
        ("cat <<EOF\nhi $USER\nEOF", "cat <<< \"hi $USER\""),
        (
            "less /var/log/syslog",
            "env LESSSECURE=1 LESSOPEN= LESSCLOSE= less /var/log/syslog",
        ),
        ("bash -c 'ls  \"a\"'", "bash -c 'ls a'"),
        ("ssh h ls   -la", "ssh h 'ls -la'"),
    ];
    for (input, want) in cases {
        assert_eq!(
            classify(input).canonical.as_deref(),
            Some(want),
            "{input:?}"
        );
    }
}

#[test]
fn git_read_commands_are_neutralised() {
    let d = classify("git log -p -1");
    assert_eq!(d.class, Class::ReadOnly);
    let c = d.canonical.unwrap();
    for needle in [
        "core.fsmonitor=false",
        "core.pager=cat",
        "--no-pager",
        "--no-ext-diff",
        "--no-textconv",
    ] {
        assert!(c.contains(needle), "{c}");
    }
}

#[test]
fn the_empty_command_runs_nothing() {
    let d = classify("   ");
    assert_eq!(d.class, Class::ReadOnly);
    assert_eq!(d.canonical.as_deref(), Some(""));
}

/// Issue 17: the approval card and `nomos policy classify` show the same reason: both use
/// `Decision::summary`, the primary finding (the first at the maximum class, fail-closed
/// findings first), never the last one at that class.
#[test]
fn every_face_shows_the_primary_finding() {
    for cmd in [
        "rm -rf /tmp/x; shutdown now",
        "systemctl restart nginx && systemctl reload sshd",
        "eval \"$x\"; rm -rf /tmp/y",
        "ls /etc",
    ] {
        let d = classify(cmd);
        let want = match d.primary() {
            Some(f) => format!("{}: {}", f.rule, f.reason),
            None => "read_only: nothing to run".to_owned(),
        };
        assert_eq!(d.summary(), want, "{cmd}");
    }
    let d = classify("rm -rf /tmp/x; shutdown now");
    assert!(d.summary().contains("rm"), "{}", d.summary());
}
