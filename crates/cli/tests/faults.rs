#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Model faults end to end through the real `nomos` binary (DESIGN §15, issue 16 suite 2):
//! the scripted model over loopback HTTP, a scratch data directory whose settings file sets
//! short deadlines (the same file the desktop's Settings view writes), and a real store.
//!
//! Each fault, in the operator's face and in `--json`: the process ends in bounded time; a
//! fault that cannot be recovered ends in one clear error with its code, a recoverable one
//! (a 500 or a 429 then an answer, a cut stream then an answer) succeeds; exactly one `done`;
//! no pending or empty assistant row; the operator's message kept; a partial reply never
//! repeated; and the session answers the next `nomos ask --session` against a healthy model.

mod common;

use std::io::Read as _;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nomos_mock_llm::{MockServer, Script};
use nomos_store::{Role, Store};

/// The settings the desktop would have written: a model request ends within 4 s whatever
/// the server sends, silence is noticed after 2 s.
const REQUEST_SECS: u64 = 4;
const SETTINGS: &str =
    r#"{"runtime":{"llm":{"idle_timeout_secs":2},"limits":{"model_request_secs":4}},"auth":{}}"#;

/// Attempts of one model request (the provider's retries: `RetryPolicy::default()`).
const ATTEMPTS: usize = 4;

/// Longest any run may take before the test kills it and fails.
const HARD_LIMIT: Duration = Duration::from_secs(60);

const TASK: &str = "check the disks of this workstation";

/// The final reply of a recoverable case: the answer, with the task completed.
const ANSWER: &str = r#"
  - kind: tool_calls
    text: "Checking the disks: all fine."
    calls:
      - {name: complete_task, arguments: {outcome: success, summary: "The disks are fine."}}
"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The task completes (exit 0, no error).
    Completes,
    /// The turn ends without an error but with the task open (a plain answer).
    Answers,
    /// The turn ends in one error with one of these codes.
    Fails(&'static [&'static str]),
}

struct Case {
    name: &'static str,
    replies: String,
    outcome: Outcome,
    /// The run takes at least this long (a Retry-After honoured).
    at_least: Duration,
    /// The run ends within this (a deadline honoured).
    within: Duration,
}

fn case(name: &'static str, replies: &str, outcome: Outcome) -> Case {
    Case {
        name,
        replies: replies.to_owned(),
        outcome,
        at_least: Duration::ZERO,
        within: Duration::from_secs(30),
    }
}

fn repeat(step: &str, n: usize) -> String {
    step.repeat(n)
}

const EMPTY: &str = "\n  - kind: empty\n";
const E500: &str = "\n  - {kind: http_error, status: 500, message: upstream exploded}\n";
const CUT_CALL: &str = r#"
  - kind: stream_cut
    text: "Checking the disks"
    call: {name: run, arguments: {target: "host:local", command: "df -h /", reason: disks}}
"#;
const HANG: &str = "\n  - {kind: hang, text: \"Checking the disks\"}\n";

fn cases() -> Vec<Case> {
    let deadline = Duration::from_secs(REQUEST_SECS + 8);
    vec![
        case(
            "three empty replies, then an answer",
            &(repeat(EMPTY, 3) + ANSWER),
            Outcome::Completes,
        ),
        case(
            "four empty replies",
            &repeat(EMPTY, 4),
            Outcome::Fails(&["llm.empty_reply"]),
        ),
        case(
            "HTTP 500, then an answer",
            &(E500.to_owned() + ANSWER),
            Outcome::Completes,
        ),
        case(
            "HTTP 500 on every attempt",
            &repeat(E500, ATTEMPTS),
            Outcome::Fails(&["llm.provider_error"]),
        ),
        Case {
            at_least: Duration::from_millis(950),
            ..case(
                "429 with Retry-After, then an answer",
                &("\n  - {kind: rate_limited, retry_after_secs: 1}\n".to_owned() + ANSWER),
                Outcome::Completes,
            )
        },
        case(
            "a stream cut mid tool-call, then an answer",
            &(CUT_CALL.to_owned() + ANSWER),
            Outcome::Completes,
        ),
        case(
            "a stream cut mid text, twice, then an answer",
            &(repeat(
                "\n  - {kind: stream_cut, text: \"Checking the disks\"}\n",
                2,
            ) + ANSWER),
            Outcome::Completes,
        ),
        case(
            "an error event inside the stream, then an answer",
            &("\n  - {kind: stream_error, text: \"Checking the disks\", message: overloaded}\n"
                .to_owned()
                + ANSWER),
            Outcome::Completes,
        ),
        case(
            "a stream cut mid tool-call on every attempt",
            &repeat(CUT_CALL, ATTEMPTS),
            Outcome::Fails(&["llm.stream_cut"]),
        ),
        case(
            "malformed tool-call JSON",
            r#"
  - {kind: malformed_tool_args, name: run, arguments: "{\"command\": \"df -h"}
  - kind: tool_calls
    expect: [{last_tool_result_contains: "not valid JSON"}]
    calls:
      - {name: complete_task, arguments: {outcome: success, summary: "The disks are fine."}}
"#,
            Outcome::Completes,
        ),
        case(
            "an unknown tool",
            r#"
  - {kind: unknown_tool, name: format_disk}
  - kind: tool_calls
    expect: [{last_tool_result_contains: "Unknown tool `format_disk`"}]
    calls:
      - {name: complete_task, arguments: {outcome: success, summary: "The disks are fine."}}
"#,
            Outcome::Completes,
        ),
        case(
            "a 1 MB reply",
            "\n  - {kind: large, bytes: 1048576}\n",
            Outcome::Answers,
        ),
        Case {
            within: deadline,
            ..case(
                "endless keep-alive comments",
                "\n  - {kind: keepalive_forever, text: \"Checking the disks\", every_ms: 50}\n",
                Outcome::Fails(&["llm.deadline_exceeded"]),
            )
        },
        Case {
            within: deadline,
            ..case(
                "a silent server",
                &repeat(HANG, ATTEMPTS),
                Outcome::Fails(&["llm.deadline_exceeded", "llm.idle_timeout"]),
            )
        },
    ]
}

struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
    elapsed: Duration,
}

/// Runs the binary on `home`'s data directory against `base_url`; kills it and fails the
/// test past [`HARD_LIMIT`].
fn nomos(home: &Path, base_url: &str, args: &[&str]) -> Run {
    let started = Instant::now();
    let mut child = common::nomos_command(home, Some(base_url), &[])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        out.read_to_end(&mut s).unwrap();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        err.read_to_end(&mut s).unwrap();
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HARD_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`nomos {}` still running after {HARD_LIMIT:?}",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    Run {
        stdout: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
        code: status.code(),
        elapsed,
    }
}

async fn ask(home: &Path, base_url: String, args: Vec<String>) -> Run {
    let home = home.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        nomos(&home, &base_url, &args)
    })
    .await
    .unwrap()
}

fn scratch() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("data")).unwrap();
    std::fs::write(home.path().join("data/settings.json"), SETTINGS).unwrap();
    home
}

/// The `done` and `error` events of the `--json` lines: (session, error flag) and codes.
fn json_ends(stdout: &str) -> (Vec<(i64, bool)>, Vec<String>) {
    let mut dones = Vec::new();
    let mut errors = Vec::new();
    for line in stdout.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:.200}"));
        match v["type"].as_str() {
            Some("done") => dones.push((
                v["session_id"].as_i64().unwrap(),
                v["error"].as_bool().unwrap(),
            )),
            Some("error") => errors.push(v["code"].as_str().unwrap().to_owned()),
            _ => {}
        }
    }
    (dones, errors)
}

/// What the store holds after the run, checked for every fault alike.
fn check_store(home: &Path, name: &str, outcome: Outcome) -> i64 {
    let store = Store::open_in_dir(&home.join("data")).unwrap();
    let sessions = store.list_sessions(&Default::default()).unwrap();
    assert_eq!(sessions.len(), 1, "{name}: one session");
    let id = sessions[0].id;
    let messages = store.transcript(id).unwrap().messages;
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        users,
        vec![TASK],
        "{name}: the operator's message is kept once"
    );
    for m in &messages {
        assert!(!m.pending, "{name}: pending row left behind: {m:?}");
        if m.role == Role::Assistant {
            assert!(
                !(m.text.trim().is_empty() && m.tool_calls.is_empty() && m.error.is_none()),
                "{name}: empty assistant row: {m:?}"
            );
        }
    }
    let errors = messages.iter().filter(|m| m.error.is_some()).count();
    match outcome {
        Outcome::Fails(_) => assert!(errors <= 1, "{name}: {errors} error rows"),
        Outcome::Completes | Outcome::Answers => {
            assert_eq!(errors, 0, "{name}: an error row after a recovery")
        }
    }
    // A retried attempt's partial text is replaced, never appended: no assistant row holds
    // the cut text twice.
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        assert!(
            m.text.matches("Checking the disks").count() <= 1,
            "{name}: a partial reply repeated in the store: {:.300}",
            m.text
        );
    }
    if name.starts_with("a 1 MB reply") {
        let kept: usize = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .map(|m| m.text.len())
            .sum();
        assert_eq!(kept, 1_048_576, "{name}: the whole reply is kept");
    }
    id
}

/// The next message on the same session, against a healthy model, works and sees the
/// history (the faulted turn left the session usable).
async fn next_message_works(home: &Path, session: i64, name: &str) {
    let server = MockServer::start(
        Script::from_yaml(&format!(
            r#"
replies:
  - kind: tool_calls
    text: "Still here."
    expect:
      - last_user_contains: "and the memory?"
      - any_message_contains: "{TASK}"
    calls:
      - {{name: complete_task, arguments: {{outcome: success, summary: "Memory is fine."}}}}
"#
        ))
        .unwrap(),
    )
    .await
    .unwrap();
    let run = ask(
        home,
        server.base_url(),
        [
            "ask",
            "--json",
            "--session",
            &session.to_string(),
            "and the memory?",
        ]
        .map(str::to_owned)
        .to_vec(),
    )
    .await;
    assert!(
        server.failures().is_empty(),
        "{name}: next message: {:?}",
        server.failures()
    );
    assert_eq!(server.request_count(), 1, "{name}: next message");
    server.shutdown().await;
    assert_eq!(run.code, Some(0), "{name}: next message:\n{}", run.stderr);
    let (dones, errors) = json_ends(&run.stdout);
    assert_eq!(dones, vec![(session, false)], "{name}: next message");
    assert!(errors.is_empty(), "{name}: next message: {errors:?}");
}

async fn run_case(c: &Case, json: bool) {
    let mode = if json { "--json" } else { "face" };
    let name = format!("{} ({mode})", c.name);
    let home = scratch();
    let server = MockServer::start(Script::from_yaml(&format!("replies:{}", c.replies)).unwrap())
        .await
        .unwrap();
    let mut args = vec!["ask".to_owned()];
    if json {
        args.push("--json".into());
    }
    args.push(TASK.into());
    let run = ask(home.path(), server.base_url(), args).await;
    let failures = server.failures();
    server.shutdown().await;
    assert!(failures.is_empty(), "{name}: {failures:?}\n{}", run.stderr);
    assert!(
        run.elapsed <= c.within,
        "{name}: took {:?} (bound {:?})",
        run.elapsed,
        c.within
    );
    assert!(
        run.elapsed >= c.at_least,
        "{name}: took {:?}, under {:?}",
        run.elapsed,
        c.at_least
    );
    // The process's own result: success, or the task left open, never a crash.
    let want_code = match c.outcome {
        Outcome::Completes => 0,
        Outcome::Answers | Outcome::Fails(_) => 3,
    };
    assert_eq!(
        run.code,
        Some(want_code),
        "{name}:\n{}\n{:.2000}",
        run.stderr,
        run.stdout
    );
    assert!(!run.stderr.contains("panicked"), "{name}: {}", run.stderr);
    if json {
        let (dones, errors) = json_ends(&run.stdout);
        assert_eq!(dones.len(), 1, "{name}: one done: {dones:?}");
        match c.outcome {
            Outcome::Fails(codes) => {
                assert!(dones[0].1, "{name}: done carries the error flag");
                assert_eq!(errors.len(), 1, "{name}: one error: {errors:?}");
                assert!(codes.contains(&errors[0].as_str()), "{name}: {errors:?}");
            }
            Outcome::Completes | Outcome::Answers => {
                assert!(!dones[0].1, "{name}: {errors:?}\n{}", run.stderr);
                assert!(errors.is_empty(), "{name}: {errors:?}");
            }
        }
    } else {
        // One clear error line with its code, or none.
        let lines: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("✗ ")).collect();
        match c.outcome {
            Outcome::Fails(codes) => {
                assert_eq!(lines.len(), 1, "{name}: one error line:\n{}", run.stderr);
                assert!(
                    codes.iter().any(|c| lines[0].ends_with(&format!("[{c}]"))),
                    "{name}: {}",
                    lines[0]
                );
                assert!(lines[0].chars().count() > 20, "{name}: {}", lines[0]);
            }
            Outcome::Completes | Outcome::Answers => {
                assert!(lines.is_empty(), "{name}: {lines:?}")
            }
        }
        // Text mode never repeats a partial reply: the cut text is shown at most once.
        let shown = run.stdout.matches("Checking the disks").count();
        assert!(shown <= 1, "{name}: shown {shown} times:\n{}", run.stdout);
        if c.outcome == Outcome::Completes && c.replies.contains("Checking the disks: all") {
            assert_eq!(shown, 1, "{name}: the answer is shown:\n{}", run.stdout);
        }
    }
    let session = check_store(home.path(), &name, c.outcome);
    next_message_works(home.path(), session, &name).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_model_fault_ends_bounded_with_one_done_and_the_session_usable_json() {
    for c in cases() {
        run_case(&c, true).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_model_fault_ends_bounded_with_one_clear_error_and_no_repeat_face() {
    for c in cases() {
        run_case(&c, false).await;
    }
}

/// The settings file's deadline is what bounds the request: without it (the 5-minute
/// default) the same endless stream is still running when this file's bound has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_file_deadline_is_the_one_applied() {
    for secs in [2u64, 5] {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("data")).unwrap();
        std::fs::write(
            home.path().join("data/settings.json"),
            format!(r#"{{"runtime":{{"limits":{{"model_request_secs":{secs}}}}}}}"#),
        )
        .unwrap();
        let server = MockServer::start(
            Script::from_yaml("replies:\n  - {kind: keepalive_forever, every_ms: 50}\n").unwrap(),
        )
        .await
        .unwrap();
        let run = ask(
            home.path(),
            server.base_url(),
            ["ask", "--json", TASK].map(str::to_owned).to_vec(),
        )
        .await;
        server.shutdown().await;
        let (dones, errors) = json_ends(&run.stdout);
        assert_eq!(errors, vec!["llm.deadline_exceeded".to_owned()], "{secs}s");
        assert_eq!(dones.len(), 1);
        let limit = Duration::from_secs(secs);
        assert!(
            run.elapsed >= limit && run.elapsed < limit + Duration::from_secs(4),
            "{secs}s: took {:?}",
            run.elapsed
        );
    }
}
