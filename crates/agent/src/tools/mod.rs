//! The tools offered to the model. Each tool is a type: a `Deserialize` argument struct in its
//! group's module, with its name, its description (a crisp contract) and its handler beside
//! it; its JSON schema is generated from the struct, so the two cannot drift.
//!
//! [`Tool`] lists every tool once (the `tools!` list below) and dispatches with an exhaustive
//! `match`. **Adding a tool**: write its argument struct and `impl ToolArgs` in the group's
//! module (`plan`, `run`, `knowledge`, `task`), add one line to the list, and add its
//! well-formed and malformed calls to the tests (the generic tests already cover its schema,
//! its fields and a family of malformed arguments).

mod args;
mod knowledge;
mod plan;
mod run;
mod task;

use std::future::Future;
use std::sync::OnceLock;

use nomos_llm::{ToolCall, ToolSpec};
use nomos_store::SessionId;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::events::TurnFlags;
use crate::{Agent, AgentError};

/// What a tool answers the model.
#[derive(Debug)]
pub(crate) struct ToolOutcome {
    pub text: String,
    pub is_error: bool,
    /// The turn stops after this call (a plan waits for approval, a question for an answer).
    pub ends_turn: bool,
}

impl ToolOutcome {
    pub(crate) fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            ends_turn: false,
        }
    }
    pub(crate) fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            ends_turn: false,
        }
    }
    pub(crate) fn ending(mut self) -> Self {
        self.ends_turn = true;
        self
    }
}

/// A failure inside a tool reaches the model as an error result, in the error's own words.
impl From<AgentError> for ToolOutcome {
    fn from(e: AgentError) -> Self {
        Self::error(e.to_string())
    }
}

impl From<nomos_store::StoreError> for ToolOutcome {
    fn from(e: nomos_store::StoreError) -> Self {
        Self::error(e.to_string())
    }
}

/// What a tool's handler can reach: the agent, the session and turn it runs in, and its call.
pub(crate) struct ToolContext<'a> {
    pub agent: &'a Agent,
    pub session: SessionId,
    pub flags: &'a TurnFlags,
    pub call_id: &'a str,
    pub cancel: &'a CancellationToken,
}

/// One tool: its arguments are `Self`.
pub(crate) trait ToolArgs: DeserializeOwned + JsonSchema {
    /// The name the model calls it by.
    const NAME: &'static str;
    /// What the model reads about it: when to use it and what it refuses.
    const DESCRIPTION: &'static str;
    /// Runs the tool. `Err` is an early answer (usually an error) for the model.
    fn call(
        self,
        cx: &ToolContext<'_>,
    ) -> impl Future<Output = Result<ToolOutcome, ToolOutcome>> + Send;
}

/// Declares every tool once: the enum, its list and its exhaustive dispatch come from here.
macro_rules! tools {
    ($($variant:ident => $args:ty,)+) => {
        /// Every tool, in the order the task flow uses them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Tool {
            $($variant,)+
        }

        impl Tool {
            pub(crate) const ALL: &'static [Tool] = &[$(Tool::$variant,)+];

            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Tool::$variant => <$args as ToolArgs>::NAME,)+
                }
            }

            pub(crate) fn description(self) -> &'static str {
                match self {
                    $(Tool::$variant => <$args as ToolArgs>::DESCRIPTION,)+
                }
            }

            /// The JSON schema generated from the tool's argument struct.
            pub(crate) fn parameters(self) -> Value {
                match self {
                    $(Tool::$variant => args::schema_of::<$args>(),)+
                }
            }

            async fn call(
                self,
                cx: &ToolContext<'_>,
                arguments: Value,
            ) -> Result<ToolOutcome, ToolOutcome> {
                match self {
                    $(Tool::$variant => {
                        args::parse::<$args>(self.name(), arguments)?.call(cx).await
                    })+
                }
            }

            /// Reads arguments as the dispatch does, without running the tool.
            #[cfg(test)]
            fn check_arguments(self, arguments: Value) -> Result<(), String> {
                match self {
                    $(Tool::$variant => args::parse::<$args>(self.name(), arguments)
                        .map(|_| ())
                        .map_err(|o| o.text),)+
                }
            }

            /// The fields serde reads for the tool's arguments, for the schema check.
            #[cfg(test)]
            fn fields(self) -> &'static [&'static str] {
                match self {
                    $(Tool::$variant => tests::struct_fields::<$args>(),)+
                }
            }
        }
    };
}

tools! {
    SetGoal => plan::SetGoal,
    SearchKnowledge => knowledge::SearchKnowledge,
    GetKnowledgeContent => knowledge::GetKnowledgeContent,
    GetEntity => knowledge::GetEntity,
    ListEntities => knowledge::ListEntities,
    GetRelations => knowledge::GetRelations,
    ListTargets => run::ListTargets,
    GetHealthSummary => run::GetHealthSummary,
    GetStateSnapshot => plan::GetStateSnapshot,
    ProposePlan => plan::ProposePlan,
    UpdatePlanStep => plan::UpdatePlanStep,
    Run => run::Run,
    CancelExecution => run::CancelExecution,
    UpdateEntityAttributes => knowledge::UpdateEntityAttributes,
    CreateRelationship => knowledge::CreateRelationship,
    UpsertKnowledge => knowledge::UpsertKnowledge,
    AskOperator => task::AskOperator,
    CompleteTask => task::CompleteTask,
}

impl Tool {
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.name() == name)
    }

    fn spec(self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters(),
        }
    }
}

/// Every tool, in the order the task flow uses them; generated once per process.
pub fn specs() -> Vec<ToolSpec> {
    static SPECS: OnceLock<Vec<ToolSpec>> = OnceLock::new();
    SPECS
        .get_or_init(|| Tool::ALL.iter().map(|t| t.spec()).collect())
        .clone()
}

/// Cuts a long result for the model with a marker saying how much was left out (I16).
pub(crate) fn cap_result(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head: String = text.chars().take(max_chars * 3 / 4).collect();
    let tail: String = text.chars().skip(total - max_chars / 4).collect();
    format!(
        "{head}\n[… {} characters truncated …]\n{tail}",
        total - max_chars
    )
}

pub(crate) fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("(unserialisable: {e})"))
}

/// Runs one tool call of the model and says what to answer it; never panics, whatever the
/// model sent.
pub(crate) async fn dispatch(
    agent: &Agent,
    session: SessionId,
    flags: &TurnFlags,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let arguments = match call.parse_arguments() {
        Ok(v) if v.is_object() => v,
        Ok(_) => {
            return ToolOutcome::error(
                "Arguments must be a JSON object matching the tool's schema.",
            );
        }
        Err(e) => {
            return ToolOutcome::error(format!(
                "Arguments are not valid JSON ({e}). Re-send the call with a JSON object matching the schema."
            ));
        }
    };
    let Some(tool) = Tool::from_name(&call.name) else {
        return ToolOutcome::error(format!(
            "Unknown tool `{}`. Available: {}.",
            call.name,
            Tool::ALL
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let cx = ToolContext {
        agent,
        session,
        flags,
        call_id: &call.id,
        cancel,
    };
    match tool.call(&cx, arguments).await {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

#[cfg(test)]
mod tests;
