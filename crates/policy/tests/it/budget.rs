//! The work budget fails closed: whichever part of a command the budget runs out on, the
//! decision is never `read_only` when a state-changing command follows.

use nomos_policy::{Class, classify, classify_budgeted, default_budget};

/// Read-only prefixes of several shapes, each repeated `n` times.
fn shapes(n: usize) -> Vec<String> {
    let rep = |unit: &str, sep: &str| vec![unit; n].join(sep);
    vec![
        // Wrappers around a read.
        rep(
            "sudo -n env LANG=C nice -n 5 timeout 5 cat /etc/hostname",
            "; ",
        ),
        // Brace expansion multiplies words.
        rep("echo a{1..9}{x,y}", "; "),
        rep("ls /var/log/{syslog,auth.log,kern.log}", " && "),
        // Loops and conditionals.
        rep("for f in a b c; do cat /tmp/$f; done", "; "),
        rep(
            "if test -f /etc/os-release; then head -n1 /etc/os-release; fi",
            "; ",
        ),
        // Pipelines.
        rep("ps aux | grep nginx | head -n 5", "; "),
        // Nested shells.
        rep("sh -c 'ls /tmp; bash -c \"echo a{1,2}\"'", "; "),
        // Substitutions.
        rep("echo $(uname -r) \"$(hostname)\"", "; "),
    ]
}

/// State-changing tails: how each composed command ends.
fn composed(prefix: &str) -> Vec<String> {
    vec![
        format!("{prefix}; reboot"),
        format!("{prefix} && rm -rf /srv/data"),
        format!("{prefix}; sudo -n systemctl stop nginx"),
        format!("sh -c '{}; touch /tmp/M'", prefix.replace('\'', "'\\''")),
        format!("{{ {prefix}; }} && echo x > /etc/motd"),
        format!("{prefix}; for x in a; do rm /tmp/$x; done"),
        format!("{prefix} | tee /etc/hosts"),
    ]
}

#[test]
fn every_budget_edge_fails_closed() {
    for n in [1, 3] {
        for prefix in shapes(n) {
            for cmd in composed(&prefix) {
                let (full, cost) = classify_budgeted(&cmd, u32::MAX / 2).unwrap();
                assert_ne!(full.class, Class::ReadOnly, "{cmd}");
                // Every budget that ends inside the command, and one past its end.
                for b in 0..=cost + 1 {
                    let (d, _) = classify_budgeted(&cmd, b).unwrap();
                    assert_ne!(d.class, Class::ReadOnly, "budget {b} of {cost}: {cmd}");
                    if b < cost {
                        assert!(d.unknown, "budget {b} of {cost} is not unknown: {cmd}");
                        assert!(
                            d.findings.iter().any(|f| f.rule == "unknown.budget"),
                            "budget {b} of {cost} has no budget finding: {cmd}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_read_only_command_at_its_exact_cost_stays_read_only() {
    // The edge is exact: a command that fits is classified normally, one unit less asks.
    for prefix in shapes(2) {
        let (full, cost) = classify_budgeted(&prefix, u32::MAX / 2).unwrap();
        assert_eq!(full.class, Class::ReadOnly, "{prefix}");
        let (d, _) = classify_budgeted(&prefix, cost).unwrap();
        assert_eq!(d.class, Class::ReadOnly, "{prefix}");
        let (d, _) = classify_budgeted(&prefix, cost - 1).unwrap();
        assert!(d.unknown, "{prefix}");
    }
}

/// Real commands around the default budget: a read-only body padded so that its cost is
/// the budget minus one, the budget itself and one more, then a state-changing tail.
#[test]
fn commands_around_the_default_budget_fail_closed() {
    let budget = default_budget();
    let unit = "echo a{1..8}{x,y,z,w,v,u,t,s}";
    let (_, unit_cost) = classify_budgeted(unit, u32::MAX / 2).unwrap();
    for tail in ["reboot", "rm -rf /srv", "touch /tmp/M", "sh -c 'reboot'"] {
        let tail_cost = classify_budgeted(tail, u32::MAX / 2).unwrap().1;
        for target in [budget - 1, budget, budget + 1, budget - tail_cost] {
            let units = (target / unit_cost) as usize;
            let mut body = vec![unit; units].join("; ");
            let (_, mut cost) = classify_budgeted(&body, u32::MAX / 2).unwrap();
            // Pad with single words (each `echo x` costs the same few units).
            while cost < target {
                body.push_str("; :");
                cost = classify_budgeted(&body, u32::MAX / 2).unwrap().1;
            }
            let cmd = format!("{body}; {tail}");
            let d = classify(&cmd);
            assert_ne!(d.class, Class::ReadOnly, "cost {cost} then `{tail}`");
        }
    }
}
