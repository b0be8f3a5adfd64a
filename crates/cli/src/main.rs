//! `nomos`: the command-line face of the Nomos core.

mod ask;
mod auth;
mod error;
mod eval;
mod mock;
mod policy;
mod render;
mod sessions;
mod term;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;

#[derive(Debug, Parser)]
#[command(
    name = "nomos",
    version,
    about = "Nomos: an operator's agent for servers, without a window"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sign in to the organisation's OpenID Provider, show the status, sign out.
    Auth(auth::AuthArgs),
    /// Give the agent a task; approvals are asked at the terminal.
    Ask(ask::AskArgs),
    /// Resume a session whose work was cut (Nomos closed or crashed mid-task).
    Resume(ask::ResumeArgs),
    /// Inspect the shell-command policy classifier.
    Policy(policy::PolicyArgs),
    /// Run golden conversations (evals/*.yaml) against a scripted or a live model.
    Eval(eval::EvalArgs),
    /// Serve a scripted model over HTTP (OpenAI-compatible and Anthropic formats).
    #[command(name = "mock-llm")]
    MockLlm(mock::MockArgs),
    /// Review past sessions: list and search, show, export, import.
    Sessions(sessions::SessionsArgs),
    /// Search the knowledge graph.
    Knowledge(sessions::KnowledgeArgs),
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Ask(args) => ask::run(args),
        Command::Resume(args) => ask::resume(args),
        Command::Auth(args) => auth::run(args),
        Command::Policy(args) => policy::run(args),
        Command::Eval(args) => eval::run(args),
        Command::MockLlm(args) => mock::run(args),
        Command::Sessions(args) => sessions::run(args),
        Command::Knowledge(args) => sessions::knowledge(args),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Errors carry provider, host and model text: escaped like everything else (B3).
            eprintln!(
                "nomos: error [{}]: {}",
                term::line(e.code()),
                term::block(&e.to_string())
            );
            ExitCode::from(e.exit_code())
        }
    }
}
