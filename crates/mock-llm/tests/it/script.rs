//! The script format: the README example parses, JSON works, defaults hold.

use nomos_mock_llm::{Expect, Reply, Script, ScriptedCall, Step};
use serde_json::json;

fn readme_yaml() -> String {
    let readme = include_str!("../../README.md");
    let start = readme.find("```yaml\n").unwrap() + "```yaml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    readme[start..end].to_owned()
}

#[test]
fn the_readme_example_parses() {
    let script = Script::from_yaml(&readme_yaml()).unwrap();
    assert_eq!(script.model.as_deref(), Some("mock-gpt"));
    assert_eq!(script.replies.len(), 10);
    let first = &script.replies[0];
    assert_eq!(
        first.reply,
        Reply::ToolCalls {
            text: "Let me check the disk first.".into(),
            reasoning: None,
            calls: vec![ScriptedCall::new(
                "run",
                json!({"target": "web-1", "command": "df -h /"})
            )],
        }
    );
    assert_eq!(
        first.expect,
        [
            Expect::SystemContains("Nomos".into()),
            Expect::HasTool("run".into())
        ]
    );
    assert_eq!(script.replies[1].chunk_chars, Some(4));
    assert_eq!(
        script.replies[6].reply,
        Reply::MalformedToolArgs {
            name: "run".into(),
            arguments: r#"{"command": "ls"#.into()
        }
    );
    assert_eq!(
        script.replies[3].reply,
        Reply::RateLimited {
            retry_after_secs: 2.0,
            message: None
        }
    );
    assert_eq!(script.replies[8].reply, Reply::Large { bytes: 1_048_576 });
    assert!(script.fallback.is_some());
}

#[test]
fn json_scripts_and_round_trips() {
    let script = Script::new([
        Step::text("hi").expect(Expect::HeaderContains {
            name: "authorization".into(),
            value: "Bearer".into(),
        }),
        Step::tool_call("run", json!({"command": "ls"}))
            .chunk_chars(2)
            .keepalive(),
        Step::new(Reply::Hang {
            text: String::new(),
        })
        .delay_ms(5),
    ]);
    let text = serde_json::to_string_pretty(&script).unwrap();
    assert_eq!(Script::from_json(&text).unwrap(), script);
    // YAML accepts the JSON too.
    assert_eq!(Script::from_yaml(&text).unwrap(), script);
}

#[test]
fn unknown_keys_and_kinds_are_rejected_with_a_message() {
    assert!(
        Script::from_yaml("replies: []\nreplys: []")
            .unwrap_err()
            .contains("replys")
    );
    let err = Script::from_yaml("replies:\n  - kind: txt\n    text: hi").unwrap_err();
    assert!(err.contains("txt"), "{err}");
}

#[test]
fn raw_argument_strings_win() {
    let call = ScriptedCall {
        arguments: Some(json!({"a": 1})),
        ..ScriptedCall::raw("run", "{broken")
    };
    assert_eq!(call.argument_string(), "{broken");
    assert_eq!(
        ScriptedCall::new("run", json!({"a": 1})).argument_string(),
        r#"{"a":1}"#
    );
}

/// Issue 16: a misspelled key anywhere in a script is an error, never a check silently
/// dropped (a step with `expects:` used to pass without checking anything).
#[test]
fn unknown_keys_in_a_step_or_a_reply_are_errors() {
    for (yaml, word) in [
        (
            "replies:\n  - kind: text\n    text: hi\n    expects:\n      - last_user_contains: x\n",
            "expects",
        ),
        (
            "replies:\n  - kind: text\n    text: hi\n    delay: 5\n",
            "delay",
        ),
        ("replies:\n  - kind: text\n    txt: hi\n", "txt"),
        (
            "replies:\n  - kind: tool_calls\n    calls: []\n    reason: x\n",
            "reason",
        ),
        ("replies:\n  - kind: texts\n    text: hi\n", "texts"),
    ] {
        let err = Script::from_yaml(yaml).unwrap_err();
        assert!(err.contains(word), "{word}: {err}");
    }
    // Every delivery option still reads, next to the reply.
    let ok = Script::from_yaml(
        "replies:\n  - kind: text\n    text: hi\n    delay_ms: 5\n    chunk_chars: 3\n    chunk_delay_ms: 1\n    keepalive: true\n    expect:\n      - last_user_contains: x\n",
    )
    .unwrap();
    let step: &Step = &ok.replies[0];
    assert_eq!(
        (step.delay_ms, step.chunk_chars, step.keepalive),
        (5, Some(3), true)
    );
    assert_eq!(step.expect.len(), 1);
}
