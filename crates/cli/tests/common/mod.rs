//! What the CLI's integration tests share: the real `nomos` binary on a private home.
// Each test file uses part of this.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The binary under test.
pub const NOMOS: &str = env!("CARGO_BIN_EXE_nomos");

/// A clean environment for `cmd`: only `PATH`, a private `HOME` with its data directory,
/// and, when given, a model endpoint (OpenAI-compatible base URL) with a test key.
pub fn isolate<'a>(cmd: &'a mut Command, home: &Path, model: Option<&str>) -> &'a mut Command {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NOMOS_DATA_DIR", home.join("data"));
    if let Some(url) = model {
        cmd.env("NOMOS_LLM_BASE_URL", url)
            .env("NOMOS_LLM_MODEL", "m")
            .env("NOMOS_LLM_API_KEY", "test-key");
    }
    cmd
}

/// The binary in [`isolate`]d form, with `args`.
pub fn nomos_command(home: &Path, model: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(NOMOS);
    cmd.args(args);
    isolate(&mut cmd, home, model);
    cmd
}
