//! The classifier's integration tests: labelled corpus, metamorphic relations,
//! properties, spec self-tests, the public API, and read-only commands run in a sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api;
mod attack2;
mod attack3;
mod attack4;
mod attack5;
mod budget;
mod corpus;
mod depth;
mod families;
mod holes;
mod layout;
mod lists;
mod metamorphic;
mod props;
mod sandbox;
mod specs;
mod strict_a;
mod strict_b;
mod strict_c;
mod strict_d;
mod strict_e;
mod targets;
