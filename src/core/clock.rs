//! The clock the time-dependent parts read (JWK set expiry, the reload debounce, the ownership
//! store's times and its rounds): the real one, or in tests a manual one that jumps ahead when
//! told, so that a test of "after the cooldown" does not sleep on the wall clock.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant, SystemTime};

/// A clock. Clones share one time: a manual clock advanced through one clone is advanced for
/// every reader.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// `None` for the real clock.
    manual: Option<Arc<Manual>>,
}

#[derive(Debug, Default)]
struct Manual {
    /// How far the clock has been moved ahead of the real one, in nanoseconds.
    ahead: AtomicU64,
    /// Who waits for the next [`Clock::advance`].
    waiting: Mutex<Vec<Waker>>,
}

impl Clock {
    /// The real clock.
    pub fn real() -> Self {
        Self::default()
    }

    /// A clock that runs with the real one and jumps ahead by what [`Clock::advance`] adds.
    pub fn manual() -> Self {
        Self { manual: Some(Arc::default()) }
    }

    fn ahead(&self) -> Duration {
        self.manual.as_ref().map_or(Duration::ZERO, |m| Duration::from_nanos(m.ahead.load(Ordering::Relaxed)))
    }

    pub fn now(&self) -> Instant {
        let now = Instant::now();
        now.checked_add(self.ahead()).unwrap_or(now)
    }

    /// The wall-clock time (what the ownership store writes and compares).
    pub fn system_now(&self) -> SystemTime {
        let now = SystemTime::now();
        now.checked_add(self.ahead()).unwrap_or(now)
    }

    /// Resolves at the next [`Clock::advance`] after it was made; never for the real clock.
    /// A sleep on this clock waits for the earlier of it and the real time left.
    pub fn advanced(&self) -> Advanced {
        Advanced { manual: self.manual.clone(), from: self.ahead() }
    }

    /// The time since `earlier` (zero if `earlier` is later).
    pub fn since(&self, earlier: Instant) -> Duration {
        self.now().saturating_duration_since(earlier)
    }

    /// Moves a manual clock forward; the real clock ignores it.
    pub fn advance(&self, by: Duration) {
        if let Some(manual) = &self.manual {
            manual.ahead.fetch_add(u64::try_from(by.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
            let waiting = manual.waiting.lock().map(|mut w| std::mem::take(&mut *w)).unwrap_or_default();
            waiting.into_iter().for_each(Waker::wake);
        }
    }

    /// Whether this is a manual clock (a test's).
    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }
}

/// See [`Clock::advanced`].
#[derive(Debug)]
pub struct Advanced {
    manual: Option<Arc<Manual>>,
    from: Duration,
}

impl Future for Advanced {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(manual) = &self.manual else { return Poll::Pending };
        let moved = || Duration::from_nanos(manual.ahead.load(Ordering::Relaxed)) != self.from;
        if moved() {
            return Poll::Ready(());
        }
        if let Ok(mut waiting) = manual.waiting.lock() {
            waiting.push(cx.waker().clone());
        }
        // an advance between the first look and the registration would wake no one
        if moved() { Poll::Ready(()) } else { Poll::Pending }
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
        assert!(manual.system_now() > SystemTime::now() + Duration::from_secs(3000));
    }

    #[test]
    fn an_advance_wakes_who_waits_for_it_and_only_a_later_one_counts() {
        let manual = Clock::manual();
        let mut advanced = std::pin::pin!(manual.advanced());
        let woken = Arc::new(Woken::default());
        let waker = Waker::from(Arc::clone(&woken));
        let mut cx = Context::from_waker(&waker);
        assert!(advanced.as_mut().poll(&mut cx).is_pending());
        manual.advance(Duration::from_secs(1));
        assert!(woken.0.load(Ordering::Relaxed));
        assert!(advanced.as_mut().poll(&mut cx).is_ready());
        assert!(std::pin::pin!(manual.advanced()).poll(&mut cx).is_pending(), "made after the advance");
        assert!(std::pin::pin!(Clock::real().advanced()).poll(&mut cx).is_pending());
    }

    #[derive(Default)]
    struct Woken(std::sync::atomic::AtomicBool);

    impl std::task::Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
