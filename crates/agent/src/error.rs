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
    #[error("Session {0} has no plan waiting for approval.")]
    NothingToApprove(i64),
    #[error("Execution {0} is not waiting for approval.")]
    NotAwaitingApproval(i64),
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
            Self::Busy(_) => "agent.busy",
            Self::NothingToApprove(_) => "agent.nothing_to_approve",
            Self::NotAwaitingApproval(_) => "agent.not_awaiting_approval",
            Self::Exec(e) => e.code(),
            Self::Poisoned => "agent.poisoned",
        }
    }

    /// Whether trying the same call again later can succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Store(e) => e.is_retryable(),
            Self::Busy(_) => true,
            Self::Exec(e) => e.is_retryable(),
            Self::EmptyMessage
            | Self::MessageTooLong { .. }
            | Self::NothingToApprove(_)
            | Self::NotAwaitingApproval(_)
            | Self::Poisoned => false,
        }
    }
}
