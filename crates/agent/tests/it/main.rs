//! Agent integration tests: the scripted model server over real HTTP, a real SQLite store on
//! disk and the real local executor. Test names start with the invariant they prove.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod approval;
mod continuations;
mod exact;
mod faults;
mod flow;
mod gates;
mod invariants;
mod layers;
mod owners;
mod scale;
mod shared;
mod stop;
mod submit;
mod tools;
mod windows;
