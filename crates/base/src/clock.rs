//! Wall-clock time behind a trait (DESIGN.md §2: no hidden `SystemTime::now()` in logic).
//!
//! Wall-clock, not `Instant`: a monotonic clock stops while the machine sleeps, so token expiry
//! judged by it would call an expired token fresh after a resume, and stored timestamps must be
//! comparable across processes and restarts.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time. The one clock of the workspace: every crate that needs the
/// time takes an `Arc<dyn Clock>`.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> SystemTime;

    /// Milliseconds since the Unix epoch (negative before it, saturating at the `i64` range):
    /// the form stored in the database.
    fn now_ms(&self) -> i64 {
        to_ms(self.now())
    }
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

    /// A clock showing `ms` milliseconds since the Unix epoch.
    pub fn at_ms(ms: i64) -> Self {
        Self::new(from_ms(ms))
    }

    /// Sets the time to `ms` milliseconds since the Unix epoch.
    pub fn set_ms(&self, ms: i64) {
        *self.lock() = from_ms(ms);
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.lock();
        // Saturate rather than panic: a test moving past the end of time stays there.
        *now = now.checked_add(by).unwrap_or(*now);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SystemTime> {
        // A test that panicked while holding the lock left a valid time behind.
        self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Default for ManualClock {
    /// The Unix epoch.
    fn default() -> Self {
        Self::new(UNIX_EPOCH)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.lock()
    }
}

fn to_ms(t: SystemTime) -> i64 {
    let clamp = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    match t.duration_since(UNIX_EPOCH) {
        Ok(after) => clamp(after),
        Err(before) => -clamp(before.duration()),
    }
}

fn from_ms(ms: i64) -> SystemTime {
    let d = Duration::from_millis(ms.unsigned_abs());
    let t = if ms >= 0 {
        UNIX_EPOCH.checked_add(d)
    } else {
        UNIX_EPOCH.checked_sub(d)
    };
    t.unwrap_or(UNIX_EPOCH)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const MS: &[i64] = &[
        0,
        1,
        999,
        1_000,
        1_700_000_000_000,
        1_800_000_000_123,
        -1,
        -86_400_000,
    ];

    #[test]
    fn the_system_clock_agrees_with_the_system() {
        let before = SystemTime::now();
        let now = SystemClock.now();
        let after = SystemTime::now();
        assert!(before <= now && now <= after);
        let ms = SystemClock.now_ms();
        assert!(ms >= to_ms(before) && ms <= to_ms(SystemTime::now()));
        // Sanity: after 2020-01-01.
        assert!(ms > 1_577_836_800_000);
    }

    #[test]
    fn a_manual_clock_shows_what_it_was_given_in_both_units() {
        for &ms in MS {
            let c = ManualClock::at_ms(ms);
            assert_eq!(c.now_ms(), ms);
            assert_eq!(c.now_ms(), c.now_ms(), "it does not move by itself");
            assert_eq!(to_ms(c.now()), ms);
        }
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_456);
        let c = ManualClock::new(t);
        assert_eq!(c.now(), t);
        assert_eq!(c.now_ms(), 1_700_000_000_456);
        assert_eq!(ManualClock::default().now_ms(), 0);
    }

    #[test]
    fn set_ms_jumps_in_either_direction() {
        let c = ManualClock::at_ms(1_000);
        for &ms in MS {
            c.set_ms(ms);
            assert_eq!(c.now_ms(), ms);
        }
    }

    #[test]
    fn advance_adds_exactly_the_duration() {
        let steps = [
            Duration::from_millis(1),
            Duration::from_millis(59_999),
            Duration::from_secs(10),
            Duration::from_secs(3_600),
            Duration::ZERO,
        ];
        for &start in MS {
            let c = ManualClock::at_ms(start);
            let mut want = start;
            for step in steps {
                c.advance(step);
                want += i64::try_from(step.as_millis()).unwrap();
                assert_eq!(c.now_ms(), want);
            }
        }
    }

    #[test]
    fn sub_millisecond_time_is_kept_and_now_ms_truncates() {
        let c = ManualClock::at_ms(5);
        c.advance(Duration::from_micros(700));
        assert_eq!(c.now_ms(), 5);
        assert_eq!(
            c.now().duration_since(UNIX_EPOCH).unwrap(),
            Duration::from_micros(5_700)
        );
        c.advance(Duration::from_micros(300));
        assert_eq!(c.now_ms(), 6);
    }

    #[test]
    fn one_clock_is_shared_through_the_trait_object() {
        let manual = Arc::new(ManualClock::at_ms(42));
        let shared: Arc<dyn Clock> = manual.clone();
        manual.advance(Duration::from_millis(8));
        assert_eq!(shared.now_ms(), 50);
        manual.set_ms(7);
        assert_eq!(shared.now_ms(), 7);
        let system: Arc<dyn Clock> = Arc::new(SystemClock);
        assert!(system.now_ms() > 0);
    }

    #[test]
    fn extremes_saturate_instead_of_panicking() {
        let c = ManualClock::at_ms(i64::MAX);
        c.advance(Duration::MAX);
        assert!(c.now_ms() > 0);
        let c = ManualClock::at_ms(i64::MIN + 1);
        assert!(c.now_ms() <= 0);
    }
}
