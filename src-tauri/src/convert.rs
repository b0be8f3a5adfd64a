//! Core errors → wire errors. DTO conversions live in `nomos_agent::convert`, shared with the CLI.

use nomos_protocol as wire;

pub fn store_error(err: &nomos_store::StoreError) -> wire::IpcError {
    wire::IpcError::from_parts(err.code(), err.to_string(), err.is_retryable())
}

pub fn agent_error(err: &nomos_agent::AgentError) -> wire::IpcError {
    wire::IpcError::from_parts(err.code(), err.to_string(), err.is_retryable())
}
