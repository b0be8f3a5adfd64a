use std::sync::{Arc, Barrier};

use nomos_store::{NewAudit, NewMessage, SessionQuery, Store};

use crate::common::*;

#[test]
fn writers_on_many_threads_lose_nothing() {
    let t = store();
    let sessions: Vec<_> = (0..8).map(|i| new_session(&t, &format!("s{i}"))).collect();
    let threads = 8;
    let per_thread = 150;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let store = t.store.clone();
            let sid = sessions[i % sessions.len()];
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                for n in 0..per_thread {
                    store
                        .write(|w| {
                            let m =
                                w.append_message(&NewMessage::user(sid, format!("t{i} m{n}")))?;
                            w.record_audit(
                                &NewAudit::new(Some(sid), "run", "{}", "ok").message(m.id),
                            )?;
                            Ok(())
                        })
                        .unwrap();
                    // Readers run alongside the writers.
                    if n % 25 == 0 {
                        store.list_sessions(&SessionQuery::default()).unwrap();
                        store.transcript(sid).unwrap();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let total: usize = sessions
        .iter()
        .map(|s| t.store.transcript(*s).unwrap().messages.len())
        .sum();
    assert_eq!(total, threads * per_thread);
    let audits: usize = sessions
        .iter()
        .map(|s| t.store.audit_log(*s, 0).unwrap().len())
        .sum();
    assert_eq!(audits, threads * per_thread);
}

/// Two `Store`s on one file (two app instances, or the CLI next to the desktop): WAL and the
/// busy timeout serialize their writers without losing any row.
#[test]
fn two_store_instances_on_one_file_lose_nothing() {
    let t = store();
    let sid = new_session(&t, "shared");
    let other = Store::open(&t.path()).unwrap();
    let per = 200;
    let a = {
        let s = t.store.clone();
        std::thread::spawn(move || {
            for n in 0..per {
                s.append_message(&NewMessage::user(sid, format!("a{n}")))
                    .unwrap();
            }
        })
    };
    let b = std::thread::spawn(move || {
        for n in 0..per {
            other
                .append_message(&NewMessage::user(sid, format!("b{n}")))
                .unwrap();
        }
    });
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(t.store.transcript(sid).unwrap().messages.len(), 2 * per);
}

#[test]
fn fifty_sessions_progress_concurrently() {
    let t = store();
    let handles: Vec<_> = (0..50)
        .map(|i| {
            let t_store = t.store.clone();
            std::thread::spawn(move || {
                let s = t_store
                    .create_session(nomos_store::NewSession {
                        title: format!("s{i}"),
                        goal: None,
                    })
                    .unwrap();
                for n in 0..10 {
                    let m = t_store.begin_assistant_message(s.id, true).unwrap();
                    t_store
                        .append_text(m.id, &format!("iteration {n}"))
                        .unwrap();
                    t_store.finish_message(m.id, None).unwrap();
                }
                s.id
            })
        })
        .collect();
    for h in handles {
        let sid = h.join().unwrap();
        assert_eq!(t.store.transcript(sid).unwrap().messages.len(), 10);
    }
    assert_eq!(
        t.store
            .list_sessions(&SessionQuery::default())
            .unwrap()
            .len(),
        50
    );
}

/// A clock shared by two stores: each reading is one millisecond later than the last. The
/// `slow` one sleeps after its first reading, the way a process can be descheduled between
/// reading the time and taking the write lock.
#[derive(Debug)]
struct SteppingClock {
    next: Arc<std::sync::atomic::AtomicI64>,
    slow: bool,
    slept: std::sync::atomic::AtomicBool,
}

impl nomos_store::Clock for SteppingClock {
    fn now(&self) -> std::time::SystemTime {
        use std::sync::atomic::Ordering;
        let ms = self.next.fetch_add(1, Ordering::SeqCst);
        if self.slow && !self.slept.swap(true, Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap())
    }
}

/// Times stamped on rows follow commit order across processes: a writer that read the time
/// and then waited for another one's transaction would stamp its rows earlier than rows
/// committed before them (the audit log then showed a turn starting before the last ended).
#[test]
fn i24_row_times_follow_commit_order_across_stores() {
    let dir = tempfile::tempdir().unwrap();
    let next = Arc::new(std::sync::atomic::AtomicI64::new(1_700_000_000_000));
    let clock = |slow| {
        Arc::new(SteppingClock {
            next: next.clone(),
            slow,
            slept: false.into(),
        })
    };
    let a = Store::open_in_dir(dir.path())
        .unwrap()
        .with_clock(clock(true));
    let b = Store::open_in_dir(dir.path())
        .unwrap()
        .with_clock(clock(false));
    let first = std::thread::spawn(move || new_session_in(&a, "slow"));
    // The other writer starts while the first one is between its time and its commit.
    std::thread::sleep(std::time::Duration::from_millis(60));
    let second = new_session_in(&b, "fast");
    let first = first.join().unwrap();
    let rows = b.list_sessions(&SessionQuery::default()).unwrap();
    let mut by_id: Vec<(i64, i64)> = [first, second]
        .iter()
        .map(|id| (*id, b.get_session(*id).unwrap().created_at_ms))
        .collect();
    by_id.sort_unstable();
    assert_eq!(rows.len(), 2);
    assert!(
        by_id[0].1 <= by_id[1].1,
        "the later commit carries the earlier time: {by_id:?}"
    );
}

fn new_session_in(s: &Store, title: &str) -> i64 {
    s.create_session(nomos_store::NewSession {
        title: title.into(),
        goal: None,
    })
    .unwrap()
    .id
}
