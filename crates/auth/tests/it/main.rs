//! nomos-auth integration tests against real parts: the npm `oidc-provider` on loopback,
//! a JWT-checking gateway, the Secret Service (inside `tests/with-keyring.sh`), real
//! processes for the cross-instance refresh.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod flows;
mod harness;
mod keyring;
mod soak;
mod two_process;
