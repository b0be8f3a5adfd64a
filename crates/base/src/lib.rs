//! The few concepts every Nomos crate shares, defined once so no crate keeps its own copy and
//! no boundary converts one copy into another.
//!
//! - [`Secret`]: a key or token that redacts itself and is wiped on drop.
//! - [`Clock`], [`SystemClock`], [`ManualClock`]: wall-clock time behind a trait (DESIGN.md §2:
//!   no hidden `SystemTime::now()` in logic).
//! - [`error_chain`]: an error and its sources in one line.
//! - [`CommandClass`]: how much approval a command needs (with the `sqlite` feature, a text
//!   column).
//! - [`check_flow_depth`]: the guard YAML files pass before their parser (eval manifests and
//!   scripted-model files), whose cost grows with the square of the flow nesting.
//!
//! This crate depends on no other Nomos crate; everything else may depend on it.

mod class;
mod clock;
mod error;
mod secret;
mod yaml;

pub use class::CommandClass;
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::error_chain;
pub use secret::Secret;
pub use yaml::{MAX_YAML_FLOW_DEPTH, check_flow_depth};
