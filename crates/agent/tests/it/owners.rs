//! I24: several processes on one data directory. A second agent's start-up leaves the first
//! one's live turn and execution alone, the turn gate holds across them, and a command a dead
//! process left running is killed at the next start.

use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig, AgentParts};
use nomos_exec::{Executor, ExecutorConfig, Inventory};
use nomos_llm::{OpenAiConfig, OpenAiProvider};
use nomos_mock_llm::{Expect, MockServer, Reply, Script, Step};
use nomos_store::{ExecStatus, Store};

use crate::support::*;

/// Another process's agent on the same data directory (its own store, owner and gates).
fn second_agent(dir: &std::path::Path, base_url: &str, config: AgentConfig) -> Agent {
    agent_on(
        Store::open_in_dir(dir).unwrap(),
        &dir.join("exec-2"),
        base_url,
        config,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i24_a_second_agent_leaves_a_live_turn_and_execution_alone_and_waits_for_the_gate() {
    let mut h = Harness::with_config(
        vec![
            plan(&[("Slow check", "host:local")]),
            run("sleep 1.5; echo finished-late"),
            // The turn goes on after the command went to the background: it is live.
            Step::new(Reply::Hang {
                text: "Still waiting".into(),
            }),
        ],
        background_config(),
    )
    .await;
    let session = h.agent.send(None, "slow check").await.unwrap();
    let agent = h.agent.clone();
    let first = tokio::spawn(async move { agent.send(Some(session), "yes").await });
    assert!(h.server.wait_for_requests(3, Duration::from_secs(10)).await);
    let exec = h.store().executions(session).unwrap()[0].clone();
    assert_eq!(exec.status, ExecStatus::Running);
    assert!(exec.pgid.is_some(), "the group is recorded: {exec:?}");

    // The CLI starts on the same data directory while the app's turn and command run.
    let b = second_agent(h.dir.path(), &h.server.base_url(), test_config());
    let report = b.recover().unwrap();
    assert!(report.interrupted_executions.is_empty(), "{report:?}");
    assert!(report.cut_turns.is_empty(), "{report:?}");
    let now = h.store().get_execution(exec.id).unwrap();
    assert_eq!(now.status, ExecStatus::Running, "{now:?}");
    assert!(
        h.store()
            .transcript(session)
            .unwrap()
            .messages
            .iter()
            .any(|m| m.pending),
        "the live turn's placeholder is kept"
    );
    // Its turn on the same session waits briefly, then is refused as busy elsewhere; nothing
    // of it is stored.
    let before = h.store().transcript(session).unwrap().messages.len();
    let err = b.send(Some(session), "are you there?").await.unwrap_err();
    assert_eq!(err.code(), "agent.busy");
    assert!(err.to_string().contains("another Nomos process"), "{err}");
    assert_eq!(
        h.store().transcript(session).unwrap().messages.len(),
        before
    );
    // Stop pressed in the second process: the turn is not its to stop, and the session is not
    // paused under the first one (whose background result nothing would then resume).
    let err = b.stop(session).unwrap_err();
    assert_eq!(err.code(), "agent.turn_elsewhere");
    assert!(
        err.to_string().contains(&format!(
            "another Nomos process (pid {})",
            std::process::id()
        )),
        "{err}"
    );
    assert!(!h.store().is_session_paused(session).unwrap());
    // The first process finishes as if nothing happened: its command's output is recorded.
    let mut done = h.store().get_execution(exec.id).unwrap();
    for _ in 0..200 {
        if done.status.is_terminal() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        done = h.store().get_execution(exec.id).unwrap();
    }
    assert_eq!(done.status, ExecStatus::Finished, "{done:?}");
    assert!(done.stdout.contains("finished-late"));
    h.agent.stop(session).unwrap();
    first.await.unwrap().unwrap();
    let tr = h.store().transcript(session).unwrap();
    assert!(tr.messages.iter().all(|m| !m.pending));
    assert!(
        tr.messages
            .iter()
            .all(|m| m.error.as_deref() != Some(nomos_store::CUT_TURN_ERROR)),
        "no turn of the live process was cut"
    );
    drop(b);
    h.drain();
}

fn group_alive(pgid: i32) -> bool {
    // A live (non-zombie) process whose process group is `pgid`.
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        f[0] != "Z" && f[2].parse::<i32>().ok() == Some(pgid)
    })
}

/// The owner's process dies with `sleep` running (its runtime, store and lock dropped without
/// finishing anything); the next start kills the group and says so on the row.
#[test]
fn i24_a_command_left_running_by_a_dead_process_is_killed_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let (session, exec_id, pgid, owner) = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let out = rt.block_on(async {
            let server = MockServer::start(Script::new(vec![
                plan(&[("Wait for the backup", "host:local")]),
                run("sleep 600"),
                text("It continues in the background."),
            ]))
            .await
            .unwrap();
            let a = second_agent(&path, &server.base_url(), background_config());
            let session = a.send(None, "wait for the backup").await.unwrap();
            a.send(Some(session), "yes").await.unwrap();
            let e = a.store().executions(session).unwrap()[0].clone();
            assert_eq!(e.status, ExecStatus::Running, "{e:?}");
            (
                session,
                e.id,
                i32::try_from(e.pgid.unwrap()).unwrap(),
                a.store().owner_id().to_string(),
            )
        });
        // kill -9 of the owner: every task, the store and its lock go without cleanup.
        drop(rt);
        out
    })
    .join()
    .unwrap();
    assert!(group_alive(pgid), "the command outlived its process");

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let b = second_agent(dir.path(), "http://127.0.0.1:9", test_config());
        assert!(!b.store().is_owner_alive(Some(&owner)));
        let report = b.recover().unwrap();
        assert_eq!(
            report
                .interrupted_executions
                .iter()
                .map(|e| e.id)
                .collect::<Vec<_>>(),
            [exec_id]
        );
        let row = b.store().get_execution(exec_id).unwrap();
        assert_eq!(row.status, ExecStatus::Failed);
        let why = row.error.unwrap();
        assert!(
            why.contains("The Nomos process that ran it exited")
                && why.contains(&format!("process group {pgid} was killed")),
            "{why}"
        );
        assert!(!group_alive(pgid), "the orphaned command still runs");
        assert_eq!(b.store().executions(session).unwrap().len(), 1);
    });
}

/// A recorded group that is not the command's any more (a reused pid: another start time) is
/// never signalled; the row says it was left alone.
#[test]
fn i24_a_reused_process_group_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let (exec_id, pgid) = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let out = rt.block_on(async {
            let server = MockServer::start(Script::new(vec![
                plan(&[("Wait", "host:local")]),
                run("sleep 600"),
                text("It continues in the background."),
            ]))
            .await
            .unwrap();
            let a = second_agent(&path, &server.base_url(), background_config());
            let session = a.send(None, "wait").await.unwrap();
            a.send(Some(session), "yes").await.unwrap();
            let e = a.store().executions(session).unwrap()[0].clone();
            // Pretend the recorded leader started at another time: the pid was reused.
            a.store()
                .record_execution_group(e.id, e.pgid.unwrap(), Some(1))
                .unwrap();
            (e.id, i32::try_from(e.pgid.unwrap()).unwrap())
        });
        drop(rt);
        out
    })
    .join()
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let b = second_agent(dir.path(), "http://127.0.0.1:9", test_config());
        b.recover().unwrap();
        let row = b.store().get_execution(exec_id).unwrap();
        assert_eq!(row.status, ExecStatus::Failed);
        assert!(row.error.unwrap().contains("was left alone"));
        assert!(
            group_alive(pgid),
            "a group not proved to be the command's was signalled"
        );
    });
    // Clean up the test's own sleep.
    let group = nomos_exec::ProcessGroup::of_leader(u32::try_from(pgid).unwrap()).unwrap();
    assert_eq!(
        nomos_exec::end_orphaned_group(group, Duration::from_secs(2)),
        nomos_exec::OrphanOutcome::Killed
    );
    assert!(!group_alive(pgid));
}

/// Two agents over one store (the desktop rebuilds its agent when settings change, while a
/// turn may still run): the lease still orders their turns, and the refusal says busy here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i24_a_rebuilt_agent_on_the_same_store_does_not_overlap_the_old_ones_turn() {
    let h = Harness::new(vec![Step::new(Reply::Hang {
        text: String::new(),
    })])
    .await;
    let agent = h.agent.clone();
    let first = tokio::spawn(async move { agent.send(None, "long").await });
    assert!(h.server.wait_for_requests(1, Duration::from_secs(5)).await);
    let session = h.store().list_sessions(&Default::default()).unwrap()[0].id;
    let provider =
        OpenAiProvider::new(OpenAiConfig::new(h.server.base_url(), "mock"), None).unwrap();
    let rebuilt = Agent::new(AgentParts {
        store: h.store().clone(),
        provider: Arc::new(provider),
        executor: Arc::new(
            Executor::new(ExecutorConfig::new(h.dir.path().join("exec-3"))).unwrap(),
        ),
        inventory: Inventory::with_local(),
        config: test_config(),
    });
    let err = rebuilt.send(Some(session), "hello?").await.unwrap_err();
    assert_eq!(err.code(), "agent.busy");
    assert!(!err.to_string().contains("another Nomos process"), "{err}");
    h.agent.stop(session).unwrap();
    first.await.unwrap().unwrap();
    // Released at the end of the turn: the rebuilt agent's turn can run now.
    assert_eq!(h.store().turn_lease_holder(session).unwrap(), None);
}

/// An owner that dies (kill -9) with `sleep 600` running in the background of an approved
/// plan; returns the session and the command's process group.
fn crashed_with_a_running_command(path: std::path::PathBuf) -> (i64, i32) {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let out = rt.block_on(async {
            let server = MockServer::start(Script::new(vec![
                plan(&[("Wait for the backup", "host:local")]),
                run("sleep 600"),
                text("It continues in the background."),
            ]))
            .await
            .unwrap();
            let a = second_agent(&path, &server.base_url(), background_config());
            let session = a.send(None, "wait for the backup").await.unwrap();
            a.send(Some(session), "yes").await.unwrap();
            let e = a.store().executions(session).unwrap()[0].clone();
            assert_eq!(e.status, ExecStatus::Running, "{e:?}");
            (session, i32::try_from(e.pgid.unwrap()).unwrap())
        });
        drop(rt);
        out
    })
    .join()
    .unwrap()
}

/// After a crash, the cut work is taken up once: by the continuation worker (the killed
/// command's result) or by a face's reconnect (I12), whichever comes first, never both; and
/// a second reconnect starts nothing. The one resume carries the command's fate (found by the
/// crash e2e: the app resumed the session twice after a kill -9).
#[test]
fn i14_i12_after_a_crash_the_session_is_resumed_once_whichever_resume_comes_first() {
    for reconnect_first in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (session, pgid) = crashed_with_a_running_command(dir.path().to_path_buf());
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let mut resume = text("The backup wait was cut by a restart.").expect(
                Expect::LastUserContains("The Nomos process that ran it exited".into()),
            );
            if reconnect_first {
                resume = resume.expect(Expect::LastUserContains(
                    "The connection to the operator was interrupted".into(),
                ));
            }
            let server = MockServer::start(Script::new(vec![resume])).await.unwrap();
            let b = second_agent(dir.path(), &server.base_url(), test_config());
            let report = b.recover().unwrap();
            assert_eq!(report.pending_continuations.len(), 1);
            assert!(!group_alive(pgid));
            let (first, then) = if reconnect_first {
                (
                    usize::from(b.reconnect(session).await.unwrap()),
                    b.continue_finished().await.unwrap(),
                )
            } else {
                (
                    b.continue_finished().await.unwrap(),
                    usize::from(b.reconnect(session).await.unwrap()),
                )
            };
            assert_eq!((first, then), (1, 0), "reconnect first: {reconnect_first}");
            assert!(!b.reconnect(session).await.unwrap(), "a second reconnect");
            assert_eq!(b.continue_finished().await.unwrap(), 0);
            assert_eq!(
                server.request_count(),
                1,
                "reconnect first: {reconnect_first}"
            );
            assert!(server.failures().is_empty(), "{:?}", server.failures());
            let e = b.store().executions(session).unwrap()[0].clone();
            assert_eq!(e.continued_via, Some(nomos_store::ContinuedVia::Resume));
            assert!(b.store().pending_continuations().unwrap().is_empty());
        });
    }
}
