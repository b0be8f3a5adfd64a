//! Integration tests for nomos-llm: every provider path runs over real HTTP on 127.0.0.1,
//! against the scripted server (`nomos-mock-llm`) or recorded provider streams served
//! byte-for-byte.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod auth;
mod config;
mod faults;
mod in_memory;
mod openai;
mod recordings;
mod retry;
mod support;
