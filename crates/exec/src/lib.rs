//! Executors for Nomos: run one classified command on a target and report what happened.
//!
//! A [`Target`] is a knowledge-graph entity (`host:…`, `lxc:…`, `vm:…`) with a
//! [`Transport`]:
//!
//! - [`Transport::Local`]: this workstation, `/bin/bash --noprofile --norc -c <canonical>`;
//! - [`Transport::Ssh`]: the system OpenSSH client in BatchMode, honouring `~/.ssh/config`
//!   (agent, `ProxyJump`, …), with connection reuse through a `ControlMaster` socket in the
//!   data directory;
//! - [`Transport::Pct`]: an LXC container through its Proxmox host, `pct exec <vmid> --` over
//!   ssh.
//!
//! The command is the policy crate's canonical form, passed to `bash -c` byte for byte (never
//! re-parsed here) under a fixed environment ([`FIXED_ENV`] plus `HOME`), stdin from
//! `/dev/null`, no TTY, in its own process group. Output is drained and capped (head + tail,
//! [`CapturedOutput`]); a timeout or a cancel kills the whole process group, remotely too.
//!
//! [`Executor::start`] returns an [`ExecutionHandle`] at once: the `run` tool waits briefly
//! with [`ExecutionHandle::wait_for`], and whatever is still running finishes in the
//! background for the continuation worker to pick up with [`ExecutionHandle::wait`].
//!
//! The [`Inventory`] starts with `host:local`; [`ssh_config`] imports `~/.ssh/config`
//! aliases and [`parse_inventory`] reads an inventory file (format in the README).
//!
//! **Architecture invariant:** the executor runs exactly the canonical string it is given,
//! under the fixed environment; the only shell that parses anything built here is the remote
//! login shell, and it sees fixed words and single-quoted strings.

mod error;
mod executor;
mod inventory;
mod orphans;
mod output;
mod shell;
pub mod ssh_config;
mod target;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::ExecError;
pub use executor::{
    ExecOutcome, ExecState, ExecStatus, ExecutionHandle, Executor, ExecutorConfig, Limits,
    MAX_COMMAND_BYTES,
};
pub use inventory::{Inventory, parse_inventory};
pub use orphans::{OrphanOutcome, ProcessGroup, end_orphaned_group};
pub use output::{CapturedOutput, OutputCap};
pub use shell::{FIXED_ENV, FIXED_PATH, quote};
pub use target::{PctTransport, SshTransport, Target, TargetKind, TargetSlug, Transport};
