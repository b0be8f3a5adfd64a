//! Wall-clock time behind a trait (DESIGN.md §2: no hidden `SystemTime::now()` in logic).
//!
//! Token expiry is judged by the wall clock, not by `Instant`: a monotonic clock stops while
//! the machine sleeps, so after a resume it would still call an expired token fresh.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// A source of wall-clock time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> SystemTime;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that moves only when told to (tests; simulating a suspend is one `advance`).
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<SystemTime>,
}

impl ManualClock {
    /// A clock showing `now`.
    pub fn new(now: SystemTime) -> Self {
        Self {
            now: Mutex::new(now),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}
