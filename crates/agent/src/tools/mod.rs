//! The tools offered to the model. Each tool is a type: a `Deserialize` argument struct in its
//! group's module, with its name, its description (a crisp contract) and its handler beside
//! it; its JSON schema is generated from the struct, so the two cannot drift.
//!
//! [`Tool`] lists every tool once (the `tools!` list below) and dispatches with an exhaustive
//! `match`. **Adding a tool**: write its argument struct and `impl ToolArgs` in the group's
//! module (`plan`, `run`, `knowledge`, `task`), add one line to the list, add it to the
//! reviewed copy `tests/data/tool_specs.json`, and test what it does (the generic tests in
//! `tests.rs` already cover its schema, its fields and a family of malformed arguments).

mod args;
mod contract;
mod knowledge;
mod plan;
mod run;
mod task;

use std::sync::OnceLock;

use nomos_llm::{ToolCall, ToolSpec};
use nomos_store::SessionId;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::Agent;
use crate::events::TurnFlags;
use contract::{ToolArgs, ToolContext};
pub(crate) use contract::{ToolOutcome, cap_result};

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
