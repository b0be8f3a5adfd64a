#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `nomos resume` reaches the agent's reconnect (I12) from the terminal: the real binary on
//! a real store on disk. No model is contacted: the sessions here have nothing to resume.

mod common;

use std::path::Path;
use std::process::Output;

use nomos_store::{NewSession, Outcome, Store};

fn nomos(home: &Path, args: &[&str]) -> Output {
    // A model endpoint that is never called (loopback, so a key over http is allowed).
    common::nomos_command(home, Some("http://127.0.0.1:9/v1"), args)
        .output()
        .unwrap()
}

#[test]
fn resume_leaves_a_finished_session_as_it_is_and_names_an_unknown_one() {
    let home = tempfile::tempdir().unwrap();
    let missing = nomos(home.path(), &["resume", "4242"]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success(), "{err}");
    assert!(err.contains("store.not_found"), "{err}");

    let id = {
        let store = Store::open_in_dir(&home.path().join("data")).unwrap();
        let s = store
            .create_session(NewSession {
                title: "Check disks".into(),
                goal: None,
            })
            .unwrap();
        store
            .complete_task(s.id, Outcome::Success, "all healthy")
            .unwrap();
        s.id
    };
    let done = nomos(home.path(), &["resume", &id.to_string()]);
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{err}");
    assert!(err.contains("no work to resume"), "{err}");
}
