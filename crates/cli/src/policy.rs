//! `nomos policy …`: the classifier from the command line.

use std::io::{BufRead, Read, Write};

use clap::{Args, Subcommand};
use nomos_policy::{Class, Decision, Policy};
use serde::Serialize;

use crate::error::CliError;

#[derive(Debug, Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Classify commands read from stdin (one per line) and print one JSON object each.
    Classify {
        /// Read a JSON array of strings instead (for multi-line scripts).
        #[arg(long)]
        json: bool,
    },
}

/// One output line.
#[derive(Debug, Serialize)]
struct Verdict<'a> {
    command: &'a str,
    class: Class,
    unknown: bool,
    rule: &'a str,
    reason: &'a str,
    canonical: Option<&'a str>,
}

pub fn run(args: PolicyArgs) -> Result<(), CliError> {
    match args.command {
        PolicyCommand::Classify { json } => classify(json),
    }
}

fn classify(json: bool) -> Result<(), CliError> {
    // Load (and self-test) the specs once, up front, so a broken spec set is an error.
    let policy = Policy::default_policy()?;
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if json {
        let mut text = String::new();
        stdin.lock().read_to_string(&mut text)?;
        let commands: Vec<String> = serde_json::from_str(&text).map_err(CliError::JsonInput)?;
        for c in &commands {
            emit(&mut out, c, &policy.classify(c))?;
        }
    } else {
        let mut input = stdin.lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            if input.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                buf.pop();
            }
            match std::str::from_utf8(&buf) {
                Ok(line) if line.trim().is_empty() => {}
                Ok(line) => emit(&mut out, line, &policy.classify(line))?,
                Err(_) => {
                    // Not text: never guess what it means.
                    let lossy = String::from_utf8_lossy(&buf);
                    let v = Verdict {
                        command: &lossy,
                        class: Class::Destructive,
                        unknown: true,
                        rule: "unknown.encoding",
                        reason: "the command is not valid UTF-8",
                        canonical: None,
                    };
                    write_line(&mut out, &v)?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

fn emit(out: &mut impl Write, command: &str, d: &Decision) -> Result<(), CliError> {
    let v = Verdict {
        command,
        class: d.class,
        unknown: d.unknown,
        rule: d.rule(),
        reason: d.reason(),
        canonical: d.canonical.as_deref(),
    };
    write_line(out, &v)
}

fn write_line(out: &mut impl Write, v: &Verdict<'_>) -> Result<(), CliError> {
    // The command is echoed: JSON, with the characters a terminal acts on escaped (B3).
    let line = serde_json::to_string(v).map_err(|e| CliError::Io(e.into()))?;
    out.write_all(crate::term::json(&line).as_bytes())?;
    out.write_all(b"\n")?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::term::tests::hostile_samples;

    /// B3: the echoed command and its canonical form never reach the terminal raw.
    #[test]
    fn b3_classify_output_escapes_every_hostile_character() {
        let policy = Policy::default_policy().unwrap();
        for (name, c) in hostile_samples() {
            let command = format!("echo a{c}b");
            let mut out = Vec::new();
            emit(&mut out, &command, &policy.classify(&command)).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(!text.contains(c), "{name} printed raw: {text:?}");
            let back: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
            assert_eq!(
                back["command"], command,
                "{name}: the JSON value is unchanged"
            );
        }
    }
}
