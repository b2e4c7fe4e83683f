//! The serving layer's one cache of what the upstream answered: bounded, each entry kept for a
//! time to live read on the injectable clock ([`Clock`]), and the layer's one way of treating
//! a poisoned lock. Every keyed cache of the serving layer with a fixed time to live is one of
//! these (staged locations, tables' storage, namespace directories, advertised signers), so a
//! test's manual clock ages them all; STS's minted credentials keep their own map, since each
//! expires with its credentials and is fetched once per key (`storage::sts`).

use crate::core::clock::Clock;
use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The guard of `mutex`, poisoned or not. A lock is poisoned only by a panic while it was
/// held, which this crate does not write (clippy denies it); what the holder left is a cache's
/// entries, each whole, so using them is safe and refusing the request would not be.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Values by key, each for `ttl` after it was stored.
///
/// Invariant: at most `capacity` entries; a full cache drops its expired entries, then the
/// older half (a dropped entry only costs asking the upstream again). A `ttl` of zero keeps
/// nothing.
#[derive(Debug)]
pub struct TtlCache<K, V> {
    ttl: Duration,
    capacity: usize,
    clock: Clock,
    entries: Mutex<FxHashMap<K, (Instant, V)>>,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration, capacity: usize, clock: Clock) -> Self {
        Self { ttl, capacity, clock, entries: Mutex::new(FxHashMap::default()) }
    }

    /// How long an entry is kept.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The value stored under `key` within the time to live.
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_if(key, |_| true)
    }

    /// The value stored under `key` within the time to live, if `accept` takes it.
    pub fn get_if<Q>(&self, key: &Q, accept: impl FnOnce(&V) -> bool) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entries = lock(&self.entries);
        let (at, value) = entries.get(key)?;
        (self.clock.since(*at) < self.ttl && accept(value)).then(|| value.clone())
    }

    /// Stores `value` under `key`.
    pub fn insert<Q>(&self, key: &Q, value: V)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.insert_unless(key, value, |_| false);
    }

    /// Stores `value` under `key`, unless the value stored there within the time to live is
    /// one `keep` keeps. A key stored again is updated in place: no new key is allocated.
    pub fn insert_unless<Q>(&self, key: &Q, value: V, keep: impl FnOnce(&V) -> bool)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if self.ttl.is_zero() {
            return;
        }
        let now = self.clock.now();
        let mut entries = lock(&self.entries);
        if let Some((at, known)) = entries.get_mut(key) {
            if !(now.saturating_duration_since(*at) < self.ttl && keep(known)) {
                *at = now;
                *known = value;
            }
            return;
        }
        if entries.len() >= self.capacity {
            entries.retain(|_, (at, _)| now.saturating_duration_since(*at) < self.ttl);
            if entries.len() >= self.capacity {
                let mut ages: Vec<Instant> = entries.values().map(|(at, _)| *at).collect();
                ages.sort_unstable();
                if let Some(median) = ages.get(ages.len() / 2).copied() {
                    entries.retain(|_, (at, _)| *at > median);
                }
            }
        }
        entries.insert(key.to_owned(), (now, value));
    }

    /// How many entries are held, expired ones included.
    pub fn len(&self) -> usize {
        lock(&self.entries).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_lives_for_its_ttl_on_the_injected_clock() {
        let clock = Clock::manual();
        let cache: TtlCache<String, u32> = TtlCache::new(Duration::from_secs(60), 10, clock.clone());
        cache.insert("a", 1);
        assert_eq!(cache.get("a"), Some(1));
        assert_eq!(cache.get_if("a", |v| *v == 2), None);
        clock.advance(Duration::from_secs(60));
        assert_eq!(cache.get("a"), None, "expired after its ttl");
    }

    #[test]
    fn a_kept_fresh_entry_is_not_replaced_and_an_expired_one_is() {
        let clock = Clock::manual();
        let cache: TtlCache<String, u32> = TtlCache::new(Duration::from_secs(60), 10, clock.clone());
        cache.insert("a", 1);
        cache.insert_unless("a", 2, |known| *known == 1);
        assert_eq!(cache.get("a"), Some(1));
        clock.advance(Duration::from_secs(61));
        cache.insert_unless("a", 2, |known| *known == 1);
        assert_eq!(cache.get("a"), Some(2));
    }

    #[test]
    fn a_zero_ttl_keeps_nothing_and_the_size_stays_bounded() {
        let none: TtlCache<String, u32> = TtlCache::new(Duration::ZERO, 10, Clock::manual());
        none.insert("a", 1);
        assert!(none.is_empty());
        let clock = Clock::manual();
        let cache: TtlCache<String, usize> = TtlCache::new(Duration::from_secs(60), 100, clock.clone());
        for i in 0..150 {
            cache.insert(format!("k{i}").as_str(), i);
            clock.advance(Duration::from_millis(1));
        }
        assert!(cache.len() <= 100, "{}", cache.len());
        assert_eq!(cache.get("k149"), Some(149), "the newest stays");
    }
}
