//! The store's one integration-test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approvals;
mod common;
mod concurrency;
mod executions;
mod graph;
mod home;
mod knowledge;
mod messages;
mod migrations;
mod open;
mod owners;
mod plan;
mod private;
mod props;
mod recovery;
mod search;
mod secrets;
mod sessions;
mod sessions_flow;
mod transfer;
