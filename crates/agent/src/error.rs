/// What the agent's entry points can fail with. Each has a stable [`AgentError::code`] the
/// faces branch on, and a message written for the operator.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("{0}")]
    Store(#[from] nomos_store::StoreError),
    #[error("The message is empty.")]
    EmptyMessage,
    #[error(
        "The message is too long ({bytes} bytes; at most {max}). Attach less output or summarise it."
    )]
    MessageTooLong { bytes: usize, max: usize },
    #[error("Session {0} is busy with another turn; try again when it finishes.")]
    Busy(i64),
    /// I24: another Nomos process on this data directory (the app or a `nomos ask`) is running
    /// a turn of this session.
    #[error(
        "Session {session} is busy with a turn in another Nomos process{}; try again when it finishes.",
        pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    BusyElsewhere { session: i64, pid: Option<u32> },
    /// I24: Stop for a turn that another Nomos process runs: it is not this process's to
    /// stop, and the session is not paused under it.
    #[error(
        "Session {session}'s turn runs in another Nomos process{}; stop it there.",
        pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    TurnElsewhere { session: i64, pid: Option<u32> },
    #[error("Session {0} has no plan waiting for approval.")]
    NothingToApprove(i64),
    #[error("Execution {0} is not waiting for approval.")]
    NotAwaitingApproval(i64),
    /// Retry on a session whose task is finished: a new message reopens it instead.
    #[error("Session {0} is finished; send a message to reopen it instead of retrying.")]
    NothingToRetry(i64),
    /// I22: the exact text that was classified and approved is not held any more (Nomos
    /// restarted); the stored copy is a redacted display copy and never runs.
    #[error(
        "Execution {0} cannot run: the exact command that was checked and approved is no longer \
         held (Nomos restarted since), and the stored copy is for display only. Ask the agent to \
         run it again."
    )]
    ExactCommandUnavailable(i64),
    /// B5: the operator approved a plan generation that is no longer the one in flight.
    #[error(
        "The plan you approved (v{approved}) is no longer the plan in flight in session \
         {session} (now v{current}, {status}). Review the current plan and approve that one."
    )]
    StalePlan {
        session: i64,
        approved: i64,
        current: i64,
        status: String,
    },
    /// B5: the execution was asked under a plan that has since completed, been re-proposed or
    /// been reopened.
    #[error(
        "Execution {0} belongs to a plan that is no longer in flight (completed, re-proposed or \
         reopened); it can no longer be approved. Ask the agent to run it again."
    )]
    StaleExecution(i64),
    #[error("{0}")]
    Exec(#[from] nomos_exec::ExecError),
    #[error("The agent's state lock was poisoned by an earlier panic; restart Nomos.")]
    Poisoned,
}

impl AgentError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Store(e) => e.code(),
            Self::EmptyMessage => "agent.empty_message",
            Self::MessageTooLong { .. } => "agent.message_too_long",
            Self::Busy(_) | Self::BusyElsewhere { .. } => "agent.busy",
            Self::TurnElsewhere { .. } => "agent.turn_elsewhere",
            Self::NothingToApprove(_) => "agent.nothing_to_approve",
            Self::NotAwaitingApproval(_) => "agent.not_awaiting_approval",
            Self::NothingToRetry(_) => "agent.nothing_to_retry",
            Self::ExactCommandUnavailable(_) => "agent.exact_command_unavailable",
            Self::StalePlan { .. } => "agent.stale_plan",
            Self::StaleExecution(_) => "agent.stale_execution",
            Self::Exec(e) => e.code(),
            Self::Poisoned => "agent.poisoned",
        }
    }

    /// Whether trying the same call again later can succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Store(e) => e.is_retryable(),
            Self::Busy(_) | Self::BusyElsewhere { .. } => true,
            Self::Exec(e) => e.is_retryable(),
            Self::EmptyMessage
            | Self::MessageTooLong { .. }
            | Self::NothingToApprove(_)
            | Self::NothingToRetry(_)
            | Self::NotAwaitingApproval(_)
            | Self::ExactCommandUnavailable(_)
            | Self::StalePlan { .. }
            | Self::StaleExecution(_)
            | Self::TurnElsewhere { .. }
            | Self::Poisoned => false,
        }
    }
}
