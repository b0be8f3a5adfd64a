//! Retries with exponential backoff and jitter, honouring the provider's Retry-After.
//!
//! Time and randomness are injected ([`Sleeper`], [`Jitter`], [`nomos_base::Clock`]) so tests can check
//! the exact delays without waiting for them.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;
use crate::provider::Provider;
use crate::types::{ChatRequest, ChatResponse, EventSink, StreamEvent};

/// Waits. Tests substitute one that records the delays and returns at once.
#[async_trait]
pub trait Sleeper: Send + Sync + fmt::Debug {
    /// Sleeps for `duration`.
    async fn sleep(&self, duration: Duration);
}

/// Sleeps on the tokio timer.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleeper;

#[async_trait]
impl Sleeper for TokioSleeper {
    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}

/// A source of jitter: a fraction in `[0, 1)`.
pub trait Jitter: Send + Sync + fmt::Debug {
    /// The next fraction.
    fn fraction(&self) -> f64;
}

/// Uniform random jitter (spreads out clients that failed together).
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomJitter;

impl Jitter for RandomJitter {
    fn fraction(&self) -> f64 {
        fastrand::f64()
    }
}

/// Always the same fraction (tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct FixedJitter(pub f64);

impl Jitter for FixedJitter {
    fn fraction(&self) -> f64 {
        self.0.clamp(0.0, 1.0)
    }
}

/// How often and how long to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts including the first (1 = never retry).
    pub max_attempts: u32,
    /// Backoff before the first retry; doubles each time.
    pub base_delay: Duration,
    /// Cap on the exponential backoff.
    pub max_delay: Duration,
    /// A Retry-After longer than this is not waited out: the error goes to the operator.
    pub max_retry_after: Duration,
    /// Overall limit of one call, every attempt and wait included: past it the call ends
    /// with [`LlmError::DeadlineExceeded`] whatever the server sends (keep-alive comments
    /// reset the idle timeout, never this).
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
            max_total: Duration::from_secs(5 * 60),
        }
    }
}

impl RetryPolicy {
    /// The delay before attempt `failed_attempt + 1`, or `None` when the error must be
    /// returned (not retryable, attempts used up, or Retry-After beyond the cap).
    ///
    /// Backoff is "equal jitter": half the exponential delay fixed, half random, so retries
    /// never collapse to zero yet spread out. A Retry-After is honoured as the floor with up
    /// to 10% jitter on top.
    pub fn delay_for(
        &self,
        error: &LlmError,
        failed_attempt: u32,
        jitter: &dyn Jitter,
    ) -> Option<Duration> {
        if !error.is_retryable() || failed_attempt >= self.max_attempts {
            return None;
        }
        if let Some(wait) = error.retry_after() {
            if wait > self.max_retry_after {
                return None;
            }
            return Some(wait + wait.mul_f64(0.1 * jitter.fraction()));
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << failed_attempt.saturating_sub(1).min(20))
            .min(self.max_delay);
        Some(exp.mul_f64(0.5) + exp.mul_f64(0.5 * jitter.fraction()))
    }
}

/// A policy plus the injected timer and jitter.
#[derive(Debug, Clone)]
pub struct Retrier {
    /// The policy.
    pub policy: RetryPolicy,
    /// How to wait.
    pub sleeper: Arc<dyn Sleeper>,
    /// How to jitter.
    pub jitter: Arc<dyn Jitter>,
}

impl Default for Retrier {
    fn default() -> Self {
        Self::new(RetryPolicy::default())
    }
}

impl Retrier {
    /// Real timer and random jitter.
    pub fn new(policy: RetryPolicy) -> Self {
        Self {
            policy,
            sleeper: Arc::new(TokioSleeper),
            jitter: Arc::new(RandomJitter),
        }
    }

    /// Waits `delay` unless cancelled first.
    async fn wait(&self, delay: Duration, cancel: &CancellationToken) -> Result<(), LlmError> {
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LlmError::Cancelled),
            () = self.sleeper.sleep(delay) => Ok(()),
        }
    }
}

/// Runs `f(attempt)` (attempt starts at 1) until it succeeds, fails with a non-retryable
/// error, or the policy gives up. Cancellation is never retried and also interrupts the wait.
pub async fn with_retries<T, F, Fut>(
    retrier: &Retrier,
    cancel: &CancellationToken,
    mut f: F,
) -> Result<T, LlmError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, LlmError>>,
{
    let limit = retrier.policy.max_total;
    let deadline = tokio::time::Instant::now() + limit;
    let mut attempt = 1;
    loop {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let err = match tokio::time::timeout_at(deadline, f(attempt)).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => e,
            Err(_) => return Err(LlmError::DeadlineExceeded { limit }),
        };
        let Some(delay) = retrier
            .policy
            .delay_for(&err, attempt, retrier.jitter.as_ref())
            .filter(|d| tokio::time::Instant::now() + *d < deadline)
        else {
            return Err(err);
        };
        tracing::warn!(
            code = err.code(),
            attempt,
            ?delay,
            "model call failed, retrying: {err}"
        );
        retrier.wait(delay, cancel).await?;
        attempt += 1;
    }
}

/// [`Provider::stream`] with retries. Before each retry the sink receives
/// [`StreamEvent::Retrying`], telling it to discard what the failed attempt streamed.
pub async fn stream_with_retries(
    provider: &dyn Provider,
    request: &ChatRequest,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
    retrier: &Retrier,
) -> Result<ChatResponse, LlmError> {
    let limit = retrier.policy.max_total;
    let deadline = tokio::time::Instant::now() + limit;
    let mut attempt = 1;
    loop {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let err =
            match tokio::time::timeout_at(deadline, provider.stream(request, sink, cancel)).await {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) => e,
                Err(_) => return Err(LlmError::DeadlineExceeded { limit }),
            };
        // A wait that would end past the deadline is not started: the error goes out now.
        let Some(delay) = retrier
            .policy
            .delay_for(&err, attempt, retrier.jitter.as_ref())
            .filter(|d| tokio::time::Instant::now() + *d < deadline)
        else {
            return Err(err);
        };
        tracing::warn!(
            code = err.code(),
            attempt,
            ?delay,
            "model stream failed, retrying: {err}"
        );
        attempt += 1;
        sink.event(StreamEvent::Retrying {
            attempt,
            max_attempts: retrier.policy.max_attempts,
            delay,
            code: err.code(),
            message: err.to_string(),
            reason: err.retry_reason(),
        });
        retrier.wait(delay, cancel).await?;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn server_error() -> LlmError {
        LlmError::Server {
            status: Some(500),
            error_type: None,
            message: "boom".into(),
            retry_after: None,
        }
    }

    #[test]
    fn backoff_doubles_with_equal_jitter_and_caps() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            max_retry_after: Duration::from_secs(5),
            ..RetryPolicy::default()
        };
        let zero = FixedJitter(0.0);
        let one = FixedJitter(1.0);
        let e = server_error();
        assert_eq!(p.delay_for(&e, 1, &zero), Some(Duration::from_millis(50)));
        assert_eq!(p.delay_for(&e, 1, &one), Some(Duration::from_millis(100)));
        assert_eq!(p.delay_for(&e, 2, &one), Some(Duration::from_millis(200)));
        assert_eq!(p.delay_for(&e, 5, &one), Some(Duration::from_millis(350)));
        assert_eq!(p.delay_for(&e, 10, &one), None);
        assert_eq!(p.delay_for(&LlmError::Cancelled, 1, &one), None);
    }

    #[test]
    fn retry_after_is_the_floor_and_is_capped() {
        let p = RetryPolicy::default();
        let e = |secs| LlmError::RateLimited {
            status: Some(429),
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(secs)),
        };
        assert_eq!(
            p.delay_for(&e(3), 1, &FixedJitter(0.0)),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            p.delay_for(&e(10), 1, &FixedJitter(0.5)),
            Some(Duration::from_millis(10_500))
        );
        assert_eq!(p.delay_for(&e(3600), 1, &FixedJitter(0.0)), None);
    }
}
