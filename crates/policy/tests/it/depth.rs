//! Deep nesting never crashes the classifier and always fails closed.
//!
//! Every case runs on a thread with a small stack, so unbounded recursion anywhere
//! (parser, lowering, classification, dropping the trees) aborts the test run. Debug
//! builds use several times more stack per frame than release builds, hence the two sizes.

use nomos_policy::{Class, Decision, classify};

const STACK: usize = if cfg!(debug_assertions) {
    2 << 20
} else {
    256 << 10
};

fn on_small_stack(cmd: String) -> Decision {
    let handle = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || classify(&cmd))
        .unwrap();
    handle.join().unwrap()
}

/// Nestings of each kind the parser or the classifier recurse on: (opener, closer).
const KINDS: &[(&str, &str, &str)] = &[
    ("subst", "$(echo ", ")"),
    ("quoted_subst", "\"$(echo ", ")\""),
    ("backquote", "`echo ", "`"),
    ("subshell", "( ", " )"),
    ("group", "{ ", "; }"),
    ("param", "${x:-", "}"),
    ("quoted_param", "\"${x:-", "}\""),
    ("brace_word", "a{b,", "}"),
    ("arith", "$((1+(", "))"),
    ("paren", "(", ")"),
    ("bracket", "a[", "]"),
    ("procsub", "<(cat ", ")"),
    ("if", "if true; then ", "; fi"),
    ("while", "while true; do ", "; done"),
    ("for", "for x in a; do ", "; done"),
    ("case", "case a in a) ", ";; esac"),
    ("test_paren", "[[ ( ", " ) ]]"),
    ("sh_c", "sh -c \"", "\""),
];

/// Texts in front that try to make a scanner believe the rest is quoted or a comment.
const FRONTS: &[&str] = &[
    "",
    "echo \"'\"; ",
    "echo \\'; ",
    "echo #'\n",
    "echo $'\\''; ",
    "cat <<E\n'\nE\n",
    "cat <<'E'\n'\nE\n",
    "x=\"${y:-'}\"; ",
    "echo ')'; ",
    "echo }; ",
    "echo done fi esac; ",
    "[ # ]\n",
];

fn nested(open: &str, close: &str, n: usize) -> String {
    format!("{}ls{}", open.repeat(n), close.repeat(n))
}

#[test]
fn deep_nesting_of_every_kind_fails_closed_without_crashing() {
    for &(kind, open, close) in KINDS {
        for n in [100, 1_500, 50_000] {
            for front in FRONTS {
                let cmd = format!("{front}{}; reboot", nested(open, close, n));
                let d = on_small_stack(cmd);
                assert!(
                    d.unknown && d.class == Class::Destructive,
                    "{kind} x{n} after {front:?}: {:?}",
                    d.findings.first()
                );
            }
        }
    }
}

#[test]
fn shallow_nesting_still_classifies() {
    // Ten levels of the common kinds are ordinary scripts, not attacks.
    for &(kind, open, close) in &KINDS[..6] {
        let d = on_small_stack(nested(open, close, 3));
        assert!(
            d.findings.iter().all(|f| f.rule != "unknown.too_nested"),
            "{kind}: {:?}",
            d.findings
        );
    }
    for n in [1, 10] {
        let d = on_small_stack(format!("{}; reboot", nested("{ ", "; }", n)));
        assert_eq!(d.class, Class::Destructive);
        assert!(!d.unknown, "{n}: {:?}", d.findings);
    }
}

#[test]
fn test_expressions_with_many_operators_fail_closed() {
    for n in [30, 100, 1_500] {
        for op in [" && ", " || "] {
            let cmd = format!("[[ {} ]]", vec!["-n a"; n].join(op));
            let d = on_small_stack(cmd);
            assert!(d.unknown, "{op} x{n}");
        }
        let d = on_small_stack(format!("[[ {}a ]]", "! ".repeat(n)));
        assert!(d.unknown, "! x{n}");
    }
}

#[test]
fn long_flat_commands_do_not_recurse() {
    // Lists, pipelines and argument lists are iterative: long ones classify or hit the
    // size limit, never the stack.
    for sep in ["; ", " && ", " || ", " | ", "\n"] {
        let cmd = format!("{}; reboot", vec!["ls"; 3_000].join(sep));
        let d = on_small_stack(cmd);
        assert_ne!(d.class, Class::ReadOnly, "{sep:?}");
    }
}
