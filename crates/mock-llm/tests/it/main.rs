//! Integration tests for the scripted model server, over real HTTP with a plain client
//! (the provider clients in `nomos-llm` test against it from the other side).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod script;
mod server;
