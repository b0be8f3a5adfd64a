use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Declares every error code the faces may show: the enum (a string union in TypeScript),
/// its dotted text and whether trying the same thing again may succeed.
macro_rules! error_codes {
    ($($var:ident = $code:literal => $retry:literal;)*) => {
        /// Every stable error code an IPC call or an agent event can carry. The dotted text
        /// (`store.schema_too_new`) is the wire form; the UI switches on the union.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
        pub enum ErrorCode {
            $(
                #[serde(rename = $code)]
                $var,
            )*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(Self::$var),*];

            /// The dotted wire form.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$var => $code,)*
                }
            }

            /// The code with this dotted text, if it is one.
            pub fn parse(code: &str) -> Option<Self> {
                match code {
                    $($code => Some(Self::$var),)*
                    _ => None,
                }
            }

            /// Whether the same request may succeed when tried again (the default for this
            /// code; an error instance may know better, see [`IpcError::retryable`]).
            pub fn retryable(self) -> bool {
                match self {
                    $(Self::$var => $retry,)*
                }
            }
        }
    };
}

error_codes! {
    AgentBusy = "agent.busy" => true;
    AgentEmptyMessage = "agent.empty_message" => false;
    AgentExactCommandUnavailable = "agent.exact_command_unavailable" => false;
    AgentMessageTooLong = "agent.message_too_long" => false;
    AgentNotAwaitingApproval = "agent.not_awaiting_approval" => false;
    AgentNothingToApprove = "agent.nothing_to_approve" => false;
    AgentNothingToRetry = "agent.nothing_to_retry" => false;
    AgentPoisoned = "agent.poisoned" => false;
    AgentRunaway = "agent.runaway" => false;
    AgentStaleExecution = "agent.stale_execution" => false;
    AgentStalePlan = "agent.stale_plan" => false;
    AgentStarting = "agent.starting" => true;
    AgentStopped = "agent.stopped" => false;
    AgentTokenBudget = "agent.token_budget" => false;
    AgentTurnDeadline = "agent.turn_deadline" => false;
    AgentTurnElsewhere = "agent.turn_elsewhere" => false;
    AuthBrowser = "auth.browser" => false;
    AuthConfig = "auth.config" => false;
    AuthDenied = "auth.denied" => false;
    AuthDiscovery = "auth.discovery" => false;
    AuthIdToken = "auth.id_token" => false;
    AuthIssuerMismatch = "auth.issuer_mismatch" => false;
    AuthKeyring = "auth.keyring" => false;
    AuthKeyringCorrupt = "auth.keyring_corrupt" => false;
    AuthKeyringLocked = "auth.keyring_locked" => true;
    AuthKeyringTimeout = "auth.keyring_timeout" => true;
    AuthKeyringUnavailable = "auth.keyring_unavailable" => false;
    AuthListener = "auth.listener" => false;
    AuthLock = "auth.lock" => false;
    AuthLockTimeout = "auth.lock_timeout" => true;
    AuthLoginTimeout = "auth.login_timeout" => false;
    AuthNetwork = "auth.network" => true;
    AuthNoRefreshToken = "auth.no_refresh_token" => false;
    AuthNotConfigured = "auth.not_configured" => false;
    AuthProvider = "auth.provider" => false;
    AuthProviderUnavailable = "auth.provider_unavailable" => true;
    AuthSignInIdentityChanged = "auth.sign_in.identity_changed" => false;
    AuthSignInKeyringWriteFailed = "auth.sign_in.keyring_write_failed" => false;
    AuthSignInProviderRejected = "auth.sign_in.provider_rejected" => false;
    AuthSignInRevoked = "auth.sign_in.revoked" => false;
    AuthSignInTokenMissing = "auth.sign_in.token_missing" => false;
    AuthSignInUnauthorized = "auth.sign_in.unauthorized" => false;
    AuthSignInRequired = "auth.sign_in_required" => false;
    AuthSignedOut = "auth.signed_out" => false;
    AuthStateMismatch = "auth.state_mismatch" => false;
    ExecConfig = "exec.config" => false;
    ExecInterrupted = "exec.interrupted" => true;
    ExecInvalidCommand = "exec.invalid_command" => false;
    ExecInvalidTarget = "exec.invalid_target" => false;
    ExecInventory = "exec.inventory" => false;
    ExecIo = "exec.io" => false;
    ExecPct = "exec.pct" => false;
    ExecReadFile = "exec.read_file" => false;
    ExecSpawn = "exec.spawn" => false;
    ExecSsh = "exec.ssh" => false;
    ExecSshAuth = "exec.ssh_auth" => false;
    ExecSshHostKey = "exec.ssh_host_key" => false;
    ExecSshUnreachable = "exec.ssh_unreachable" => true;
    ExecUnknownTarget = "exec.unknown_target" => false;
    InternalPoisoned = "internal.poisoned" => false;
    InternalTaskFailed = "internal.task_failed" => true;
    InventoryInvalid = "inventory.invalid" => false;
    IpcFailed = "ipc.failed" => true;
    InventoryToml = "inventory.toml" => false;
    LlmBadRequest = "llm.bad_request" => false;
    LlmCancelled = "llm.cancelled" => false;
    LlmConfig = "llm.config" => false;
    LlmConnect = "llm.connect" => true;
    LlmConnectRefused = "llm.connect_refused" => true;
    LlmConnectTimeout = "llm.connect_timeout" => true;
    LlmContentFilter = "llm.content_filter" => false;
    LlmContextLength = "llm.context_length" => false;
    LlmCredentials = "llm.credentials" => false;
    LlmCredentialsMissing = "llm.credentials.missing" => false;
    LlmCredentialsSignInRequired = "llm.credentials.sign_in_required" => false;
    LlmCredentialsUnavailable = "llm.credentials.unavailable" => false;
    LlmDeadlineExceeded = "llm.deadline_exceeded" => false;
    LlmDns = "llm.dns" => false;
    LlmEmptyReply = "llm.empty_reply" => false;
    LlmEndpointNotFound = "llm.endpoint_not_found" => false;
    LlmIdleTimeout = "llm.idle_timeout" => true;
    LlmInsecureEndpoint = "llm.insecure_endpoint" => false;
    LlmModelNotFound = "llm.model_not_found" => false;
    LlmNoApiKey = "llm.no_api_key" => false;
    LlmNotConfigured = "llm.not_configured" => false;
    LlmProtocol = "llm.protocol" => false;
    LlmProviderError = "llm.provider_error" => true;
    LlmQuotaExceeded = "llm.quota_exceeded" => false;
    LlmRateLimited = "llm.rate_limited" => true;
    LlmRefused = "llm.refused" => false;
    LlmResponseTooLarge = "llm.response_too_large" => false;
    LlmStreamCut = "llm.stream_cut" => true;
    LlmTls = "llm.tls" => false;
    LlmUnauthorized = "llm.unauthorized" => false;
    SessionTitleEmpty = "session.title_empty" => false;
    SettingsInvalid = "settings.invalid" => false;
    SettingsJson = "settings.json" => false;
    SettingsNoEndpoint = "settings.no_endpoint" => false;
    SettingsSave = "settings.save" => false;
    StoreBusy = "store.busy" => true;
    StoreConflict = "store.conflict" => false;
    StoreCorrupt = "store.corrupt" => false;
    StoreImportInvalid = "store.import_invalid" => false;
    StoreImportVersion = "store.import_version" => false;
    StoreInvalidInput = "store.invalid_input" => false;
    StoreInvariant = "store.invariant" => false;
    StoreIo = "store.io" => false;
    StoreJson = "store.json" => false;
    StoreNotFound = "store.not_found" => false;
    StoreSchemaTooNew = "store.schema_too_new" => false;
    StoreSchemaUnknown = "store.schema_unknown" => false;
    StoreSqlite = "store.sqlite" => false;
}

impl ErrorCode {
    /// The code a crate's `code()` text names; a text no face knows becomes
    /// `internal.task_failed` (a test keeps every crate's codes in this list).
    pub fn from_code(code: &str) -> Self {
        Self::parse(code).unwrap_or(Self::InternalTaskFailed)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the UI receives when a command fails: a stable code to branch on and a message
/// written for the operator. Never a debug string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct IpcError {
    /// What failed; the UI branches on this.
    pub code: ErrorCode,
    /// A sentence for the operator.
    pub message: String,
    /// Whether trying the same thing again may succeed (offer Retry).
    pub retryable: bool,
}

impl IpcError {
    /// An error with its code's default retryability.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: code.retryable(),
        }
    }

    /// From a crate error's `code()` text and its own retryability.
    pub fn from_parts(code: &str, message: impl Into<String>, retryable: bool) -> Self {
        Self {
            code: ErrorCode::from_code(code),
            message: message.into(),
            retryable,
        }
    }
}

impl std::fmt::Display for IpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for IpcError {}
