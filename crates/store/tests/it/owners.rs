//! I24: several processes on one data directory. Recovery takes over only the work of an
//! owner that is gone; the turn lease holds across processes.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use nomos_store::{
    CUT_TURN_ERROR, ExecStatus, INTERRUPTED_REASON, LeaseOutcome, NewAudit, NewMessage, OWNERS_DIR,
    StepStatus, Store,
};

use crate::common::*;

/// The work one owner leaves in flight: a turn with text, an empty turn, and an execution in
/// each active status.
struct InFlight {
    sid: i64,
    kept: i64,
    empty: i64,
    running: i64,
    queued: i64,
    awaiting: i64,
}

fn start_work(store: &Store, title: &str) -> InFlight {
    let sid = store
        .create_session(nomos_store::NewSession {
            title: title.into(),
            goal: None,
        })
        .unwrap()
        .id;
    store
        .append_message(&NewMessage::user(sid, "check the disks"))
        .unwrap();
    match store.propose_plan(sid, &steps(&["look", "fix"])).unwrap() {
        nomos_store::ProposePlanOutcome::Proposed(_) => {}
        nomos_store::ProposePlanOutcome::Refused(r) => panic!("{r:?}"),
    }
    store
        .update_plan_step(sid, 1, StepStatus::Running, None)
        .unwrap();
    let kept = store.begin_assistant_message(sid, false).unwrap().id;
    store.append_text(kept, "Looking at the disks…").unwrap();
    let empty = store.begin_assistant_message(sid, true).unwrap().id;
    let running = store
        .create_execution(&read_only(sid, "host:a", "df -h"))
        .unwrap()
        .id;
    store.start_execution(running).unwrap();
    store
        .record_execution_group(running, 4242, Some(99))
        .unwrap();
    let queued = store
        .create_execution(&read_only(sid, "host:a", "lsblk"))
        .unwrap()
        .id;
    let mut mutation = read_only(sid, "host:a", "systemctl restart nginx");
    mutation.class = nomos_store::CommandClass::ConfigMutation;
    let awaiting = store.create_execution(&mutation).unwrap().id;
    InFlight {
        sid,
        kept,
        empty,
        running,
        queued,
        awaiting,
    }
}

fn assert_untouched(store: &Store, w: &InFlight) {
    for id in [w.running, w.queued, w.awaiting] {
        let e = store.get_execution(id).unwrap();
        assert!(!e.status.is_terminal(), "execution {id} was taken: {e:?}");
        assert_eq!(e.error, None);
    }
    let tr = store.transcript(w.sid).unwrap();
    let pending: Vec<i64> = tr
        .messages
        .iter()
        .filter(|m| m.pending)
        .map(|m| m.id)
        .collect();
    assert_eq!(pending, [w.kept, w.empty], "a live turn was cut");
}

#[test]
fn i24_a_second_store_on_the_same_file_leaves_the_first_ones_live_work_alone() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open_in_dir(dir.path()).unwrap();
    let work = start_work(&a, "a");
    // Several later openings (the CLI next to the app, twice), each recovering at start.
    let b = Store::open_in_dir(dir.path()).unwrap();
    let c = Store::open_in_dir(dir.path()).unwrap();
    assert_ne!(a.owner_id(), b.owner_id());
    for s in [&b, &c, &b] {
        let report = s.recover_at_startup().unwrap();
        assert!(report.interrupted_executions.is_empty(), "{report:?}");
        assert!(report.cut_turns.is_empty(), "{report:?}");
        assert!(
            report.pending_continuations.is_empty(),
            "another process's results are not owed here: {report:?}"
        );
    }
    assert_untouched(&a, &work);
    // The first process goes on as if nothing happened: its reply and its output are kept.
    a.append_text(work.kept, " all fine.").unwrap();
    a.finish_message(work.kept, None).unwrap();
    a.finish_execution(work.running, &finished("/dev/sda1 40%"))
        .unwrap();
    let done = a.get_execution(work.running).unwrap();
    assert_eq!(done.status, ExecStatus::Finished);
    assert_eq!(done.stdout, "/dev/sda1 40%");
    let msg = a.transcript(work.sid).unwrap();
    assert!(
        msg.messages
            .iter()
            .any(|m| m.id == work.kept && m.text.ends_with("all fine.") && m.error.is_none())
    );
    // Its own recovery does not take its own live work either.
    assert!(
        a.recover_at_startup()
            .unwrap()
            .interrupted_executions
            .is_empty()
    );
}

#[test]
fn i24_work_of_an_owner_that_closed_without_finishing_is_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open_in_dir(dir.path()).unwrap();
    let owner = a.owner_id().to_string();
    let work = start_work(&a, "a");
    let b = Store::open_in_dir(dir.path()).unwrap();
    drop(a);
    let reaped = Mutex::new(Vec::new());
    let report = b
        .recover_at_startup_with(&|e| {
            reaped
                .lock()
                .unwrap()
                .push((e.id, e.pgid, e.pgid_start_ticks));
            Some(format!("group {} was killed", e.pgid.unwrap_or(0)))
        })
        .unwrap();
    // Only the execution that recorded a group is handed to the reaper.
    assert_eq!(
        *reaped.lock().unwrap(),
        [(work.running, Some(4242), Some(99))]
    );
    let mut failed: Vec<i64> = report.interrupted_executions.iter().map(|e| e.id).collect();
    failed.sort_unstable();
    assert_eq!(failed, [work.running, work.queued, work.awaiting]);
    for e in &report.interrupted_executions {
        assert_eq!(e.status, ExecStatus::Failed);
        assert_eq!(e.owner.as_deref(), Some(owner.as_str()));
        let want = if e.id == work.running {
            "group 4242 was killed"
        } else {
            INTERRUPTED_REASON
        };
        assert_eq!(e.error.as_deref(), Some(want));
    }
    assert_eq!(report.cut_turns.len(), 2);
    assert_eq!(
        report.pending_continuations.len(),
        3,
        "owed to this process now"
    );
    let tr = b.transcript(work.sid).unwrap();
    assert!(tr.messages.iter().all(|m| !m.pending));
    assert!(
        tr.messages
            .iter()
            .any(|m| m.id == work.kept && m.error.as_deref() == Some(CUT_TURN_ERROR))
    );
}

/// Owner ids that are not `<pid>-<hex>` (a path, a legacy NULL) never count as alive, and
/// never make recovery touch a file outside the owners directory.
#[test]
fn i24_owner_ids_that_are_not_owner_ids_are_not_alive() {
    let t = store();
    assert!(t.store.is_owner_alive(Some(t.store.owner_id())));
    for bad in [
        None,
        Some(""),
        Some("../nomos.db"),
        Some("12"),
        Some("12-"),
        Some("-ab"),
        Some("12-xyz"),
        Some("12-ab/../../x"),
        Some("12345678901-ab"),
    ] {
        assert!(!t.store.is_owner_alive(bad), "{bad:?}");
    }
    assert!(t.path().exists());
    assert!(t.dir.path().join(OWNERS_DIR).is_dir());
}

#[test]
fn i24_the_turn_lease_holds_across_stores_and_is_taken_over_from_a_dead_owner() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open_in_dir(dir.path()).unwrap();
    let b = Store::open_in_dir(dir.path()).unwrap();
    let sid = a
        .create_session(nomos_store::NewSession {
            title: "s".into(),
            goal: None,
        })
        .unwrap()
        .id;
    let other = a
        .create_session(nomos_store::NewSession {
            title: "t".into(),
            goal: None,
        })
        .unwrap()
        .id;
    let LeaseOutcome::Taken(la) = a.try_take_turn_lease(sid).unwrap() else {
        panic!("free lease not taken")
    };
    // Busy for the other store, and for a second gate of the same store.
    for s in [&b, &a, &b] {
        match s.try_take_turn_lease(sid).unwrap() {
            LeaseOutcome::Busy { holder, .. } => assert_eq!(holder, a.owner_id()),
            LeaseOutcome::Taken(l) => panic!("two holders: {l:?}"),
        }
    }
    // Another session is independent.
    assert!(matches!(
        b.try_take_turn_lease(other).unwrap(),
        LeaseOutcome::Taken(_)
    ));
    assert!(a.release_turn_lease(&la).unwrap());
    let LeaseOutcome::Taken(lb) = b.try_take_turn_lease(sid).unwrap() else {
        panic!("released lease not free")
    };
    // A stale release (the old holding) does not free the new holder's lease.
    assert!(!a.release_turn_lease(&la).unwrap());
    assert!(matches!(
        a.try_take_turn_lease(sid).unwrap(),
        LeaseOutcome::Busy { .. }
    ));
    // The holder dies without releasing: the lease is taken over.
    drop(b);
    let LeaseOutcome::Taken(la2) = a.try_take_turn_lease(sid).unwrap() else {
        panic!("a dead owner's lease was not taken over")
    };
    assert_ne!(la2.token, lb.token);
    assert!(matches!(
        a.try_take_turn_lease(9_999).unwrap_err().code(),
        "store.not_found"
    ));
}

const CHILD_ENV: &str = "NOMOS_STORE_TEST_OWNER_CHILD_DIR";

/// Run in a child process by the test below: opens the store, leaves work in flight, takes a
/// turn lease, reports the ids and waits to be killed.
#[test]
#[ignore = "child process of i24_a_killed_process_is_recovered_only_once_it_is_dead"]
fn owner_child_process() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let store = Store::open_in_dir(std::path::Path::new(&dir)).unwrap();
    let w = start_work(&store, "child");
    assert!(matches!(
        store.try_take_turn_lease(w.sid).unwrap(),
        LeaseOutcome::Taken(_)
    ));
    println!(
        "READY {} {} {} {} {} {} {}",
        w.sid,
        w.kept,
        w.empty,
        w.running,
        w.queued,
        w.awaiting,
        store.owner_id()
    );
    std::thread::sleep(std::time::Duration::from_secs(120));
}

#[test]
fn i24_a_killed_process_is_recovered_only_once_it_is_dead() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "owners::owner_child_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = loop {
        let line = lines.next().expect("child ended early").unwrap();
        // libtest prints the test's name on the same line first.
        if let Some(at) = line.find("READY ") {
            break line[at + "READY ".len()..].to_string();
        }
    };
    let f: Vec<&str> = ready.split(' ').collect();
    let n = |i: usize| f[i].parse::<i64>().unwrap();
    let w = InFlight {
        sid: n(0),
        kept: n(1),
        empty: n(2),
        running: n(3),
        queued: n(4),
        awaiting: n(5),
    };
    let child_owner = f[6].to_string();

    // While the child lives: nothing of it is taken, and its turn lease holds.
    let s = Store::open_in_dir(dir.path()).unwrap();
    let report = s.recover_at_startup().unwrap();
    assert!(report.interrupted_executions.is_empty() && report.cut_turns.is_empty());
    assert_untouched(&s, &w);
    assert!(s.is_owner_alive(Some(&child_owner)));
    assert!(matches!(
        s.try_take_turn_lease(w.sid).unwrap(),
        LeaseOutcome::Busy { .. }
    ));

    // kill -9: its lock file stays on disk, but nobody holds the lock.
    child.kill().unwrap();
    child.wait().unwrap();
    let lock_file = dir
        .path()
        .join(OWNERS_DIR)
        .join(format!("{child_owner}.lock"));
    assert!(
        lock_file.exists(),
        "a killed process cannot remove its file"
    );
    assert!(!s.is_owner_alive(Some(&child_owner)));
    let report = s.recover_at_startup().unwrap();
    assert_eq!(report.interrupted_executions.len(), 3);
    assert_eq!(report.cut_turns.len(), 2);
    assert!(!lock_file.exists(), "the dead owner's file is swept");
    assert_eq!(s.turn_lease_holder(w.sid).unwrap(), None);
    assert!(matches!(
        s.try_take_turn_lease(w.sid).unwrap(),
        LeaseOutcome::Taken(_)
    ));
}

/// I13/I24 after the fact: every holding of a session's turn lease is in the audit log, taken
/// and given back in the lease's own transaction, so the log alone proves turns alternated
/// (several stores, a stale release, a dead owner taken over, start-up clearing).
#[test]
fn i24_the_audit_log_records_every_turn_holding_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open_in_dir(dir.path()).unwrap();
    let b = Store::open_in_dir(dir.path()).unwrap();
    let new = |s: &Store| {
        s.create_session(nomos_store::NewSession {
            title: "s".into(),
            goal: None,
        })
        .unwrap()
        .id
    };
    let sid = new(&a);
    let take = |s: &Store| match s.try_take_turn_lease(sid).unwrap() {
        LeaseOutcome::Taken(l) => l,
        LeaseOutcome::Busy { .. } => panic!("lease busy"),
    };
    let la = take(&a);
    // A refused take writes nothing.
    assert!(matches!(
        b.try_take_turn_lease(sid).unwrap(),
        LeaseOutcome::Busy { .. }
    ));
    a.record_audit(&NewAudit::new(Some(sid), "run", "{}", "ok"))
        .unwrap();
    assert!(a.release_turn_lease(&la).unwrap());
    // A second release of the same holding writes nothing either.
    assert!(!a.release_turn_lease(&la).unwrap());
    let lb = take(&b);
    b.record_audit(&NewAudit::new(Some(sid), "run", "{}", "ok"))
        .unwrap();
    b.record_audit(&NewAudit::new(Some(sid), "complete_task", "{}", "ok"))
        .unwrap();
    // b dies holding it: a takes it over, which ends b's holding as cut.
    let b_owner = b.owner_id().to_string();
    drop(b);
    let la2 = take(&a);
    assert!(a.release_turn_lease(&la2).unwrap());

    let log = a.audit_log(sid, 0).unwrap();
    let holdings = nomos_store::turn_holdings(&log).unwrap();
    assert_eq!(holdings.len(), 3, "{log:?}");
    assert_eq!(
        holdings
            .iter()
            .map(|h| (h.owner.as_str(), h.holding, h.released, h.tool_calls))
            .collect::<Vec<_>>(),
        [
            (a.owner_id(), la.token, true, 1),
            (b_owner.as_str(), lb.token, false, 2),
            (a.owner_id(), la2.token, true, 0),
        ]
    );
    for pair in holdings.windows(2) {
        let (end_id, end_ms) = pair[0].end.unwrap();
        assert!(end_id < pair[1].start.0 && end_ms <= pair[1].start.1);
    }

    // A lease left by a dead owner and cleared at start-up is ended in the log too.
    let c = Store::open_in_dir(dir.path()).unwrap();
    let other = new(&c);
    let LeaseOutcome::Taken(_) = c.try_take_turn_lease(other).unwrap() else {
        panic!("free lease not taken")
    };
    drop(c);
    a.recover_at_startup().unwrap();
    let h = nomos_store::turn_holdings(&a.audit_log(other, 0).unwrap()).unwrap();
    assert_eq!(h.len(), 1);
    assert!(h[0].end.is_some() && !h[0].released, "{h:?}");
}

/// The checker itself: each way a log can show two turns at once is named.
#[test]
fn i13_the_turn_checker_names_every_kind_of_overlap() {
    let row = |id: i64, tool: &str, owner: &str, holding: i64, at: i64| nomos_store::AuditEntry {
        id,
        session_id: Some(1),
        generation: None,
        message_id: None,
        call_id: None,
        tool: tool.to_owned(),
        arguments: format!(r#"{{"owner":"{owner}","holding":{holding}}}"#),
        result_summary: String::new(),
        ok: true,
        duration_ms: None,
        created_at_ms: at,
    };
    let (s, e) = (nomos_store::TURN_START_AUDIT, nomos_store::TURN_END_AUDIT);
    let fine = [
        row(1, s, "1-a", 7, 10),
        row(2, "run", "", 0, 11),
        row(3, e, "1-a", 7, 12),
    ];
    assert_eq!(nomos_store::turn_holdings(&fine).unwrap().len(), 1);
    let cases: Vec<(&str, Vec<nomos_store::AuditEntry>)> = vec![
        (
            "while turn 1",
            vec![row(1, s, "1-a", 7, 10), row(2, s, "2-b", 8, 11)],
        ),
        ("never started", vec![row(1, e, "1-a", 7, 10)]),
        (
            "while 1-a's was held",
            vec![row(1, s, "1-a", 7, 10), row(2, e, "2-b", 8, 11)],
        ),
        (
            "while 1-a's was held",
            vec![row(1, s, "1-a", 7, 10), row(2, e, "1-a", 9, 11)],
        ),
        ("outside every turn", vec![row(1, "run", "", 0, 10)]),
        (
            "outside every turn",
            vec![
                row(1, s, "1-a", 7, 10),
                row(2, e, "1-a", 7, 11),
                row(3, "run", "", 0, 12),
            ],
        ),
        (
            "older than",
            vec![row(1, s, "1-a", 7, 10), row(2, e, "1-a", 7, 9)],
        ),
    ];
    for (want, log) in cases {
        let err = nomos_store::turn_holdings(&log).unwrap_err();
        assert!(err.contains(want), "{want}: {err}");
    }
}
