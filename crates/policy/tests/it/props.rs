//! Properties over generated input: no panic, bounded time, compounds never lower the class.

use std::time::{Duration, Instant};

use nomos_policy::classify;
use proptest::prelude::*;

use crate::corpus::cases;

/// Generous: debug builds on a shared machine; release classifies in microseconds.
const LIMIT: Duration = Duration::from_millis(500);

fn shellish() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "ls",
        "rm",
        "-rf",
        "/",
        "$(",
        ")",
        "`",
        "'",
        "\"",
        "\\",
        "|",
        "&&",
        "||",
        ";",
        "&",
        ">",
        ">>",
        "<",
        "<<",
        "EOF",
        "\n",
        "$x",
        "${x@P}",
        "${a[$(id)]}",
        "{a,b}",
        "*",
        "?",
        "[",
        "]",
        "~",
        "sudo",
        "bash",
        "-c",
        "ssh",
        "h",
        "find",
        "-exec",
        "{}",
        "\\;",
        "xargs",
        "sed",
        "-i",
        "awk",
        "'{print}'",
        "=",
        "x=1",
        "(",
        "((",
        "))",
        "[[",
        "]]",
        "if",
        "then",
        "fi",
        "for",
        "in",
        "do",
        "done",
        "case",
        "esac",
        "<(",
        ">(",
        " ",
        " ",
        " ",
        "#",
        "!",
        "$((1+2))",
        "$'\\x41'",
        "env",
        "LD_PRELOAD=x",
        "git",
        "-c",
        "timeout",
        "5",
        "cat",
        "/etc/shadow",
        "curl",
        "-d",
        "@x",
        "tar",
        "xzf",
        "dd",
        "of=/dev/sda",
    ]);
    prop::collection::vec(atoms, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        let t = Instant::now();
        let _ = classify(&s);
        prop_assert!(t.elapsed() < LIMIT);
    }

    #[test]
    fn shell_like_text_never_panics(s in shellish()) {
        let t = Instant::now();
        let d = classify(&s);
        prop_assert!(t.elapsed() < LIMIT);
        // Fail-closed decisions are always destructive.
        prop_assert!(!d.unknown || d.class == nomos_policy::Class::Destructive);
    }

    /// Statement text for the database clients: SQL, meta-commands, quotes, comments.
    #[test]
    fn database_client_text_never_panics(sql in prop::collection::vec(prop::sample::select(vec![
        "select", "SELECT", "drop", "table", "x", "(", ")", ";", "'", "\"", "`", "$$", "$a$", "--", "/*",
        "*/", "/*!", "\\", "\\G", "\\l", "\\!", "into", "outfile", "pg_sleep", "count(*)", " ", ",",
        ".tables", ".shell", "CONFIG", "GET", "*", "\n", "é", "with", "delete", "explain", "analyze",
    ]), 0..16).prop_map(|v| v.concat()), client in 0usize..4) {
        let q = sql.replace('\'', "'\\''");
        let cmd = match client {
            0 => format!("psql -c '{q}'"),
            1 => format!("mysql -e '{q}'"),
            2 => format!("sqlite3 x.db '{q}'"),
            _ => format!("redis-cli {q}"),
        };
        let t = Instant::now();
        let d = classify(&cmd);
        prop_assert!(t.elapsed() < LIMIT);
        prop_assert!(!d.unknown || d.class == nomos_policy::Class::Destructive);
    }

    #[test]
    fn compounds_are_at_least_as_strict_as_parts(i in 0usize..10_000, j in 0usize..10_000, op in 0usize..3) {
        let all = cases();
        let a = &all[i % all.len()].2;
        let b = &all[j % all.len()].2;
        let sep = ["; ", " && ", " || "][op];
        let joined = format!("{a}\n{b}");
        let compound = if a.contains('\n') || b.contains('\n') { joined } else { format!("{a}{sep}{b}") };
        let c = classify(&compound).class;
        prop_assert!(c >= classify(a).class, "{compound:?} < {a:?}");
        prop_assert!(c >= classify(b).class, "{compound:?} < {b:?}");
    }
}

#[test]
fn deep_nesting_is_rejected_quickly() {
    for n in [50usize, 500, 5000] {
        for (open, close) in [
            ("$(", ")"),
            ("(", ")"),
            ("{ ", "; }"),
            ("`", "`"),
            ("\"$(", ")\""),
        ] {
            let s = format!("{}ls{}", open.repeat(n), close.repeat(n));
            let t = Instant::now();
            let d = classify(&s);
            assert!(t.elapsed() < LIMIT, "{n} x {open}");
            assert!(d.unknown, "{n} x {open} should fail closed");
        }
    }
}

#[test]
fn huge_input_is_rejected() {
    let s = "ls ".repeat(100_000);
    let d = classify(&s);
    assert!(d.unknown);
    assert_eq!(d.rule(), "unknown.too_long");
}

#[test]
fn many_commands_stay_within_budget() {
    let s = "ls; ".repeat(3000);
    let t = Instant::now();
    let d = classify(&s);
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(d.class >= nomos_policy::Class::ReadOnly);
}
