//! Waiting on the injectable clock ([`Clock`]): the real time, or less when a test moves its
//! manual clock ahead meanwhile (the reload debounce, the ownership store's rounds).

use crate::core::clock::Clock;
use std::time::Duration;

/// Waits `d` on `clock`.
pub async fn sleep(clock: &Clock, d: Duration) {
    let Some(until) = clock.now().checked_add(d) else { return std::future::pending().await };
    loop {
        // made before reading the time, so that an advance in between is not missed
        let advanced = clock.advanced();
        let left = until.saturating_duration_since(clock.now());
        if left.is_zero() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(left) => {}
            () = advanced => {}
        }
    }
}
