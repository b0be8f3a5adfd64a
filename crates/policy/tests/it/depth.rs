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

#[test]
fn embedded_languages_nest_without_recursion() {
    // Scripts inside quotes are not counted by the shell precheck: their own parsers
    // (awk, SQL, Redis, test expressions, find) must not recurse on them either.
    let n = 3_000;
    let open = "(".repeat(n);
    let close = ")".repeat(n);
    let braces = format!("{}print{}", "{".repeat(n), "}".repeat(n));
    let cmds = [
        format!("awk '{braces}' /etc/hosts"),
        format!("awk '{{print {open}1{close}}}' /etc/hosts"),
        format!("psql -c 'select {open}1{close}'"),
        format!("sqlite3 x.db 'select {open}1{close}'"),
        format!("mysql -e 'select {open}1{close}'"),
        format!("jq '{open}.{close}' x.json"),
        format!("test {}a", "! ".repeat(n)),
        format!("[ {}a ]", "! ".repeat(n)),
        format!("find . {}-name x", "! ".repeat(n)),
        format!("echo $(({}1))", "1+".repeat(n)),
        format!("{}ls", "sudo ".repeat(n)),
        format!("{}ls", "env ".repeat(n)),
    ];
    for c in cmds {
        let head: String = c.chars().take(20).collect();
        let d = on_small_stack(format!("{c}; reboot"));
        assert_ne!(d.class, Class::ReadOnly, "{head}");
    }
}
