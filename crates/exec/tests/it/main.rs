//! Integration tests for nomos-exec with the real parts: local processes, and a real OpenSSH
//! `sshd` on 127.0.0.1 started per test (`nomos_exec::testing::TestSshd`) for the ssh and
//! pct transports.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod inventory;
mod local;
mod pct;
mod ssh;
mod support;
