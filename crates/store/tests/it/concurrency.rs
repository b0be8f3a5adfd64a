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
