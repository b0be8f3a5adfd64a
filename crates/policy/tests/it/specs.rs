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
