//! Retries over real HTTP with an injected sleeper and jitter: which errors are retried, how
//! long each wait is, Retry-After, giving up, and cancellation.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use nomos_llm::{
    Clock, FixedJitter, LlmError, Retrier, RetryPolicy, Sleeper, StreamEvent, TokioSleeper,
    stream_with_retries, with_retries,
};
use nomos_mock_llm::{Reply, ScriptedCall, Step};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

#[derive(Debug, Default)]
struct RecordingSleeper(Mutex<Vec<Duration>>);

#[async_trait]
impl Sleeper for RecordingSleeper {
    async fn sleep(&self, d: Duration) {
        self.0.lock().unwrap().push(d);
    }
}

fn retrier(max_attempts: u32) -> (Retrier, Arc<RecordingSleeper>) {
    let sleeper = Arc::new(RecordingSleeper::default());
    let r = Retrier {
        policy: RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(400),
            max_delay: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(30),
            ..RetryPolicy::default()
        },
        sleeper: sleeper.clone(),
        jitter: Arc::new(FixedJitter(0.5)),
    };
    (r, sleeper)
}

fn http(status: u16) -> Step {
    Step::new(Reply::HttpError {
        status,
        message: None,
        error_type: None,
        code: None,
        retry_after: None,
    })
}

#[tokio::test]
async fn transient_failures_are_retried_with_backoff_and_retry_after() {
    for kind in KINDS {
        let server = serve([
            http(500),
            Step::new(Reply::RateLimited {
                retry_after_secs: 1.0,
                message: None,
            }),
            Step::new(Reply::StreamCut {
                text: "par".into(),
                call: Some(ScriptedCall::new("run", json!({"command": "ls"}))),
            }),
            Step::text("finally"),
        ])
        .await;
        let p = provider_for(kind, &server, test_limits());
        let (retrier, sleeper) = retrier(4);
        let events = Events::default();
        let mut sink = events.sink();
        let r = stream_with_retries(
            p.as_ref(),
            &request("go"),
            &mut sink,
            &CancellationToken::new(),
            &retrier,
        )
        .await
        .unwrap();
        assert_eq!(r.text, "finally");
        assert_eq!(server.request_count(), 4);
        // 400 ms * 2^0 * (0.5 + 0.5*0.5); Retry-After 1 s + 10% * 0.5; 400 ms * 2^2 * 0.75.
        assert_eq!(
            *sleeper.0.lock().unwrap(),
            [
                Duration::from_millis(300),
                Duration::from_millis(1050),
                Duration::from_millis(1200)
            ],
            "{kind:?}"
        );
        let retries: Vec<(u32, &str)> = events
            .all()
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retrying { attempt, code, .. } => Some((*attempt, *code)),
                _ => None,
            })
            .collect();
        assert_eq!(
            retries,
            [
                (2, "llm.provider_error"),
                (3, "llm.rate_limited"),
                (4, "llm.stream_cut")
            ]
        );
    }
}

#[tokio::test]
async fn non_retryable_errors_are_returned_at_once() {
    let cases = [
        http(400),
        http(404),
        Step::new(Reply::Empty {
            finish_reason: None,
            reasoning: None,
        }),
        Step::new(Reply::HttpError {
            status: 429,
            message: Some("You exceeded your current quota".into()),
            error_type: Some("insufficient_quota".into()),
            code: Some("insufficient_quota".into()),
            retry_after: None,
        }),
    ];
    for step in cases {
        let label = format!("{:?}", step.reply);
        let server = serve([step, Step::text("must not be reached")]).await;
        let p = provider_for(Kind::OpenAi, &server, test_limits());
        let (retrier, sleeper) = retrier(4);
        let err = stream_with_retries(
            p.as_ref(),
            &request("go"),
            &mut nomos_llm::NullSink,
            &CancellationToken::new(),
            &retrier,
        )
        .await
        .unwrap_err();
        assert!(!err.is_retryable(), "{label}");
        assert_eq!(server.request_count(), 1, "{label}");
        assert!(sleeper.0.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn gives_up_after_max_attempts_with_the_last_real_error() {
    let server = serve([http(502), http(503), http(500), Step::text("unreached")]).await;
    let p = provider_for(Kind::Anthropic, &server, test_limits());
    let (retrier, _) = retrier(3);
    let err = stream_with_retries(
        p.as_ref(),
        &request("go"),
        &mut nomos_llm::NullSink,
        &CancellationToken::new(),
        &retrier,
    )
    .await
    .unwrap_err();
    assert_eq!(server.request_count(), 3);
    assert_eq!(err.status(), Some(500));
    assert!(err.to_string().contains("Internal Server Error"), "{err}");
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_is_not_waited_out() {
    let server = serve([
        Step::new(Reply::RateLimited {
            retry_after_secs: 3600.0,
            message: None,
        }),
        Step::text("x"),
    ])
    .await;
    let p = provider_for(Kind::OpenAi, &server, test_limits());
    let (retrier, sleeper) = retrier(4);
    let err = stream_with_retries(
        p.as_ref(),
        &request("go"),
        &mut nomos_llm::NullSink,
        &CancellationToken::new(),
        &retrier,
    )
    .await
    .unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(server.request_count(), 1);
    assert!(sleeper.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn cancellation_interrupts_the_backoff_and_is_never_retried() {
    let server = serve([http(500), Step::text("unreached")]).await;
    let p = provider_for(Kind::OpenAi, &server, test_limits());
    let retrier = Retrier {
        policy: RetryPolicy {
            base_delay: Duration::from_secs(30),
            ..RetryPolicy::default()
        },
        sleeper: Arc::new(TokioSleeper),
        jitter: Arc::new(FixedJitter(1.0)),
    };
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        c2.cancel();
    });
    let started = std::time::Instant::now();
    let err = stream_with_retries(
        p.as_ref(),
        &request("go"),
        &mut nomos_llm::NullSink,
        &cancel,
        &retrier,
    )
    .await
    .unwrap_err();
    assert_eq!(err, LlmError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn with_retries_runs_any_operation() {
    let (retrier, sleeper) = retrier(5);
    let calls = Arc::new(Mutex::new(0u32));
    let c = calls.clone();
    let out = with_retries(&retrier, &CancellationToken::new(), move |attempt| {
        let c = c.clone();
        async move {
            *c.lock().unwrap() += 1;
            if attempt < 3 {
                Err(LlmError::Connect {
                    message: "reset".into(),
                })
            } else {
                Ok(attempt)
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(out, 3);
    assert_eq!(*calls.lock().unwrap(), 3);
    assert_eq!(sleeper.0.lock().unwrap().len(), 2);

    let err = with_retries(&retrier, &CancellationToken::new(), |_| async {
        Err::<(), _>(LlmError::Cancelled)
    })
    .await
    .unwrap_err();
    assert_eq!(err, LlmError::Cancelled);
}

#[derive(Debug)]
struct FixedClock(SystemTime);

impl Clock for FixedClock {
    fn now(&self) -> SystemTime {
        self.0
    }
}

#[tokio::test]
async fn an_http_date_retry_after_is_read_against_the_injected_clock() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000);
    let at = httpdate::fmt_http_date(now + Duration::from_secs(42));
    let server = serve([Step::new(Reply::HttpError {
        status: 503,
        message: Some("maintenance".into()),
        error_type: None,
        code: None,
        retry_after: Some(at),
    })])
    .await;
    let p = openai_for(&server, test_limits()).with_clock(Arc::new(FixedClock(now)));
    let err = run(&p, &request("go")).await.0.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(42)));
    assert!(err.to_string().contains("maintenance"));
}

fn bounded(max_attempts: u32, max_total: Duration) -> Retrier {
    Retrier {
        policy: RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(20),
            max_retry_after: Duration::from_secs(1),
            max_total,
        },
        sleeper: Arc::new(TokioSleeper),
        jitter: Arc::new(FixedJitter(0.0)),
    }
}

fn limits(idle_ms: u64) -> nomos_llm::StreamLimits {
    nomos_llm::StreamLimits {
        idle_timeout: Duration::from_millis(idle_ms),
        ..test_limits()
    }
}

#[tokio::test]
async fn endless_keepalive_comments_end_at_the_overall_deadline() {
    // Keep-alives reset the idle timeout; only the call's deadline ends it, whatever came
    // before them (nothing, or some text).
    for kind in KINDS {
        for (text, every_ms) in [("", 20u64), ("The question is", 50), ("x", 5)] {
            let server = serve([
                Step::new(Reply::KeepaliveForever {
                    text: text.into(),
                    every_ms,
                }),
                Step::text("unreached"),
            ])
            .await;
            let p = provider_for(kind, &server, limits(300));
            let limit = Duration::from_millis(900);
            let events = Events::default();
            let mut sink = events.sink();
            let started = std::time::Instant::now();
            let err = stream_with_retries(
                p.as_ref(),
                &request("hi"),
                &mut sink,
                &CancellationToken::new(),
                &bounded(4, limit),
            )
            .await
            .unwrap_err();
            let took = started.elapsed();
            assert_eq!(
                err,
                LlmError::DeadlineExceeded { limit },
                "{kind:?} {text:?}"
            );
            assert_eq!(err.code(), "llm.deadline_exceeded");
            assert!(!err.is_retryable());
            assert!(took >= limit && took < limit * 3, "{kind:?}: {took:?}");
            assert_eq!(server.request_count(), 1, "{kind:?}");
            assert_eq!(events.text(), text);
        }
    }
}

#[tokio::test]
async fn a_silent_provider_is_retried_within_the_total_bound_and_each_retry_is_announced() {
    for kind in KINDS {
        // Far more attempts than the bound allows: the bound, not the attempt count, ends it.
        let server = serve((0..20).map(|_| {
            Step::new(Reply::Hang {
                text: String::new(),
            })
        }))
        .await;
        let p = provider_for(kind, &server, limits(200));
        let limit = Duration::from_millis(700);
        let events = Events::default();
        let mut sink = events.sink();
        let started = std::time::Instant::now();
        let err = stream_with_retries(
            p.as_ref(),
            &request("hi"),
            &mut sink,
            &CancellationToken::new(),
            &bounded(20, limit),
        )
        .await
        .unwrap_err();
        let took = started.elapsed();
        assert!(
            matches!(
                err,
                LlmError::DeadlineExceeded { .. } | LlmError::IdleTimeout { .. }
            ),
            "{kind:?}: {err}"
        );
        assert!(took < limit * 2, "{kind:?}: {took:?}");
        let retries: Vec<(u32, u32, &str)> = events
            .all()
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retrying {
                    attempt,
                    max_attempts,
                    code,
                    ..
                } => Some((*attempt, *max_attempts, *code)),
                _ => None,
            })
            .collect();
        assert!(!retries.is_empty(), "{kind:?}: no retry announced");
        for (i, (attempt, max, code)) in retries.iter().enumerate() {
            assert_eq!(*attempt, i as u32 + 2);
            assert_eq!(*max, 20);
            assert_eq!(*code, "llm.idle_timeout");
        }
        assert!(server.request_count() <= 4, "{kind:?}");
    }
}
