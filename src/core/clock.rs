//! The clock the time-dependent parts read (JWK set expiry, reload debounce, ownership
//! reconciliation): the real one, or in tests a manual one that moves only when told, so that a
//! test of "after the cooldown" does not sleep on the wall clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A clock. Clones share one time: a manual clock advanced through one clone is advanced for
/// every reader.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// How far a manual clock has been moved ahead of the real one, in nanoseconds; `None` for
    /// the real clock.
    ahead: Option<Arc<AtomicU64>>,
}

impl Clock {
    /// The real clock.
    pub fn real() -> Self {
        Self::default()
    }

    /// A clock that runs with the real one and jumps ahead by what [`Clock::advance`] adds.
    pub fn manual() -> Self {
        Self { ahead: Some(Arc::new(AtomicU64::new(0))) }
    }

    pub fn now(&self) -> Instant {
        let now = Instant::now();
        match &self.ahead {
            None => now,
            Some(ahead) => now.checked_add(Duration::from_nanos(ahead.load(Ordering::Relaxed))).unwrap_or(now),
        }
    }

    /// The time since `earlier` (zero if `earlier` is later).
    pub fn since(&self, earlier: Instant) -> Duration {
        self.now().saturating_duration_since(earlier)
    }

    /// Moves a manual clock forward; the real clock ignores it.
    pub fn advance(&self, by: Duration) {
        if let Some(ahead) = &self.ahead {
            ahead.fetch_add(u64::try_from(by.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
        }
    }

    /// Whether this is a manual clock (a test's).
    pub fn is_manual(&self) -> bool {
        self.ahead.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_jumps_for_every_clone_and_the_real_one_does_not() {
        let manual = Clock::manual();
        let start = manual.now();
        manual.clone().advance(Duration::from_secs(3600));
        assert!(manual.since(start) >= Duration::from_secs(3600));
        let real = Clock::real();
        let start = real.now();
        real.advance(Duration::from_secs(3600));
        assert!(real.since(start) < Duration::from_secs(60));
    }
}
