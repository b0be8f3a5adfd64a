//! The classifier's integration tests: labelled corpus, metamorphic relations,
//! properties, spec self-tests and the public API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api;
mod budget;
mod corpus;
mod depth;
mod holes;
mod metamorphic;
mod props;
mod specs;
mod targets;
