use std::time::Duration;

/// Limits and timings of the agent. The defaults suit an operator at a desktop; tests shrink
/// the timings.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Model iterations in one turn before the runaway guard stops it (I20).
    pub max_iterations: u32,
    /// The same tool call (name + arguments) this many times in one turn stops it (I20).
    pub max_identical_calls: u32,
    /// Tokens (prompt + completion) one session may spend before the guard stops it (I20).
    pub session_token_budget: u64,
    /// Retries after the model first answers with nothing, each with a sharper note (I11):
    /// 3 means four attempts in all, so the third note is actually sent.
    pub empty_reply_retries: u32,
    /// First pause before retrying an empty reply; doubles each attempt.
    pub empty_reply_backoff: Duration,
    /// Retries of retryable provider errors (429, 5xx, cut streams) inside one iteration.
    /// Its `max_total` bounds one model request, every attempt and wait included
    /// (default 5 min, whatever the server sends).
    pub model_retry: nomos_llm::RetryPolicy,
    /// Overall limit of one turn: no model iteration starts past it, and a model call never
    /// runs beyond it. Commands keep their own limit ([`AgentConfig::command_timeout`]).
    pub turn_deadline: Duration,
    /// How long `run` waits for a result before letting the command finish in the background.
    pub run_wait: Duration,
    /// Hard limit for one command.
    pub command_timeout: Duration,
    /// How long a live operator message waits for a busy session's turn to end (I13).
    pub gate_wait: Duration,
    /// A planning or executing session idle this long gets a completion nudge (I15).
    pub idle_after: Duration,
    /// A nudged session still idle this long after the nudge is closed (I15).
    pub close_after_nudge: Duration,
    /// An approval window closes this long after the operator opened it (I23).
    pub approval_window_ttl: Duration,
    /// Tool results longer than this are cut with a marker before the model sees them (I16).
    pub max_tool_result_chars: usize,
    /// Model for requests; `None` uses the provider's configured model.
    pub model: Option<String>,
    /// Output token cap per model call.
    pub max_tokens: Option<u32>,
}

impl AgentConfig {
    /// Short pauses for a scripted model that answers at once (offline evals and tests):
    /// backoffs and waits sized for a real provider would only slow them down.
    pub fn for_scripted_model() -> Self {
        Self {
            empty_reply_backoff: Duration::from_millis(5),
            model_retry: nomos_llm::RetryPolicy {
                max_attempts: 3,
                base_delay: Duration::from_millis(5),
                max_delay: Duration::from_millis(20),
                max_retry_after: Duration::from_secs(3),
                ..nomos_llm::RetryPolicy::default()
            },
            run_wait: Duration::from_secs(5),
            command_timeout: Duration::from_secs(30),
            gate_wait: Duration::from_millis(300),
            ..Self::default()
        }
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_iterations: 40,
            max_identical_calls: 3,
            session_token_budget: 2_000_000,
            empty_reply_retries: 3,
            empty_reply_backoff: Duration::from_millis(800),
            model_retry: nomos_llm::RetryPolicy::default(),
            turn_deadline: Duration::from_secs(30 * 60),
            run_wait: Duration::from_secs(20),
            command_timeout: Duration::from_secs(15 * 60),
            gate_wait: Duration::from_secs(5),
            idle_after: Duration::from_secs(30 * 60),
            close_after_nudge: Duration::from_secs(30 * 60),
            approval_window_ttl: Duration::from_secs(30 * 60),
            max_tool_result_chars: 16_000,
            model: None,
            max_tokens: Some(4096),
        }
    }
}
