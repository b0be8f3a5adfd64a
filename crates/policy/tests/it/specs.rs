//! Spec loading: examples are checked at load time; errors carry stable codes.

use nomos_policy::{Class, Policy, SpecError};

#[test]
fn default_specs_load_and_pass_their_examples() {
    let p = Policy::default_policy().expect("built-in specs load");
    assert!(p.command_names().count() > 300);
}

#[test]
fn a_failing_example_is_a_load_error() {
    let spec = r#"
        [[command]]
        names = ["rm"]
        class = "read_only"
        style = "lenient"
        match = ["rm -rf /"]
        not_match = []
    "#;
    // `rm -rf /` is read-only per this (wrong) spec, so the example passes...
    Policy::load(spec).expect("consistent");
    let bad = r#"
        [[command]]
        names = ["cat"]
        class = "read_only"
        operands = ["read..."]
        match = ["cat /etc/shadow"]
    "#;
    let err = Policy::load(bad).unwrap_err();
    assert_eq!(err.code(), "policy.spec.example");
    assert!(matches!(err, SpecError::Example { .. }));
}

#[test]
fn not_match_examples_are_checked() {
    let bad = r#"
        [[command]]
        names = ["ls"]
        class = "read_only"
        style = "lenient"
        not_match = ["ls -la"]
    "#;
    assert_eq!(Policy::load(bad).unwrap_err().code(), "policy.spec.example");
}

#[test]
fn malformed_specs_have_codes() {
    assert_eq!(
        Policy::load("[[command]]\nnames = 3").unwrap_err().code(),
        "policy.spec.toml"
    );
    let unknown_handler = "[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\nhandler = \"nope\"";
    assert_eq!(
        Policy::load(unknown_handler).unwrap_err().code(),
        "policy.spec.invalid"
    );
    // A handler name is exact, and a handler that parses its own arguments only fits a
    // top-level command (below it the generic parse has already run).
    for name in ["Sed", "sed ", "git-config", "run_post", ""] {
        let t =
            format!("[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\nhandler = \"{name}\"");
        assert_eq!(
            Policy::load(&t).unwrap_err().code(),
            "policy.spec.invalid",
            "{name:?}"
        );
    }
    for full in ["find", "sqlite", "redis", "test", "command", "kill"] {
        let t = format!(
            "[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\n[[command.sub]]\nnames = [\"y\"]\nhandler = \"{full}\""
        );
        assert_eq!(
            Policy::load(&t).unwrap_err().code(),
            "policy.spec.invalid",
            "{full}"
        );
        let top =
            format!("[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\nhandler = \"{full}\"");
        assert!(
            Policy::load_files_unchecked(&[("t", &top)]).is_ok(),
            "{full} at the top"
        );
    }
    let bad_option =
        "[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\noptions = [\"-n !explode\"]";
    assert_eq!(
        Policy::load(bad_option).unwrap_err().code(),
        "policy.spec.invalid"
    );
    let dup = "[[command]]\nnames = [\"x\"]\nclass = \"read_only\"\n[[command]]\nnames = [\"x\"]\nclass = \"read_only\"";
    assert_eq!(
        Policy::load(dup).unwrap_err().code(),
        "policy.spec.duplicate"
    );
    let bad_class = "[[command]]\nnames = [\"x\"]\nclass = \"harmless\"";
    assert_eq!(
        Policy::load(bad_class).unwrap_err().code(),
        "policy.spec.invalid"
    );
}

#[test]
fn a_custom_policy_knows_only_its_commands() {
    let p = Policy::load(
        "[[command]]\nnames = [\"uptime\"]\nclass = \"read_only\"\nstyle = \"lenient\"",
    )
    .unwrap();
    assert_eq!(p.classify("uptime").class, Class::ReadOnly);
    let d = p.classify("ls");
    assert!(d.unknown);
    assert_eq!(d.rule(), "unknown.command");
}

#[test]
fn short_options_are_found_across_the_whole_character_range() {
    // ASCII letters at both ends of the bit set, a digit, punctuation and a non-ASCII
    // letter (kept in a separate table) must all resolve; undeclared ones must not.
    let spec = r#"
        [[command]]
        names = ["tool"]
        class = "read_only"
        options = ["-A", "-z", "-0", "-? --usage", "-é", "-~ !destructive", "-o="]
        match = ["tool -Az0", "tool '-?' -é", "tool -o x", "tool -ox"]
        not_match = ["tool -~", "tool -b", "tool -ü"]
    "#;
    let p = Policy::load(spec).expect("spec with every kind of short option loads");
    assert_eq!(p.classify("tool -zA").class, Class::ReadOnly);
    assert_eq!(p.classify("tool -z~").class, Class::Destructive);
    assert!(p.classify("tool -Q").unknown);
}

/// `[[list]]` entries: a known name, a class, a reason, items and examples on both sides.
#[test]
fn allow_lists_are_checked_at_load() {
    let cmd = "[[command]]\nnames = [\"sh\"]\nclass = \"read_only\"\n";
    let list = |name: &str, body: &str| {
        format!("{cmd}[[list]]\nname = \"{name}\"\nclass = \"read_only\"\n{body}")
    };
    let ok_body =
        "reason = \"r\"\nitems = [\"errexit\"]\nmatch = [\"sh\"]\nnot_match = [\"rm -rf /\"]\n";
    assert!(Policy::load(&list("shell.safe_options", ok_body)).is_ok());
    for bad_name in ["shell.safe_option", "Shell.safe_options", "", "ssh"] {
        let e = Policy::load(&list(bad_name, ok_body)).unwrap_err();
        assert_eq!(e.code(), "policy.spec.invalid", "{bad_name:?}");
    }
    for bad_body in [
        "reason = \"r\"\nitems = [\"errexit\"]\nmatch = []\nnot_match = [\"rm -rf /\"]\n",
        "reason = \"r\"\nitems = [\"errexit\"]\nmatch = [\"sh\"]\nnot_match = []\n",
        "reason = \"r\"\nitems = []\nmatch = [\"sh\"]\nnot_match = [\"rm -rf /\"]\n",
        "reason = \"r\"\nitems = [\"\"]\nmatch = [\"sh\"]\nnot_match = [\"rm -rf /\"]\n",
        "reason = \" \"\nitems = [\"errexit\"]\nmatch = [\"sh\"]\nnot_match = [\"rm -rf /\"]\n",
    ] {
        let e = Policy::load(&list("shell.safe_options", bad_body)).unwrap_err();
        assert_eq!(e.code(), "policy.spec.invalid", "{bad_body}");
    }
    let e = Policy::load(&list(
        "shell.safe_options",
        &format!("{ok_body}extra = 1\n"),
    ))
    .unwrap_err();
    assert_eq!(e.code(), "policy.spec.toml");
    // The examples run: a `match` that is not read-only, a `not_match` that is.
    for wrong in [
        "reason = \"r\"\nitems = [\"errexit\"]\nmatch = [\"rm -rf /\"]\nnot_match = [\"rm -rf /\"]\n",
        "reason = \"r\"\nitems = [\"errexit\"]\nmatch = [\"sh\"]\nnot_match = [\"sh\"]\n",
    ] {
        let e = Policy::load(&list("shell.safe_options", wrong)).unwrap_err();
        assert_eq!(e.code(), "policy.spec.example", "{wrong}");
    }
    let twice = format!(
        "{}[[list]]\nname = \"shell.safe_options\"\nclass = \"read_only\"\n{ok_body}",
        list("shell.safe_options", ok_body)
    );
    assert_eq!(
        Policy::load(&twice).unwrap_err().code(),
        "policy.spec.duplicate"
    );
}

/// Every allow-list a handler reads is defined by the built-in specs, once.
#[test]
fn the_default_specs_define_every_allow_list() {
    let p = Policy::default_policy().unwrap();
    let names = p.list_names();
    for want in [
        "ssh.safe_options",
        "git.safe_config_prefixes",
        "git.listing_options",
        "git_config.reading_options",
        "shell.safe_options",
        "sudo.without_command",
        "writes_log.quiet_options",
        "getent.databases",
        "set.safe_names",
        "metadata.harmless_paths",
        "docker_api.listings",
        "parted.units",
        "debugfs.reads",
        "ansible.read_modules",
        "ansible.noop_options",
        "midclt.read_verbs",
        "php.info_options",
        "redis.read_commands",
        "sql.pure_functions",
    ] {
        assert!(names.contains(&want), "{want} missing from the specs");
    }
    assert_eq!(names.len(), 19, "{names:?}");
}
