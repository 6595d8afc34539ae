//! Work shared among the threads of candle's barrier pool, the pool its own CPU kernels use: the
//! caller works too, and idle workers spin before they sleep, so a call costs no context switch
//! (rayon's pool, entered from outside, costs two).

use std::cell::Cell;
use std::ops::Range;

/// Below this much work (multiply–adds or so) a job runs on the calling thread alone.
const PARALLEL_MIN: usize = 1 << 16;

thread_local! {
    /// Set while this thread runs a share of `for_ranges`.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Calls `f` on ranges that together cover `0..n` exactly once, spread across the pool when
/// `work` is large enough to be worth it. A call from inside another runs on its thread alone:
/// the pool takes one job at a time, and the caller's share of a job would wait on itself.
pub fn for_ranges(n: usize, work: usize, f: impl Fn(Range<usize>) + Sync) {
    if work < PARALLEL_MIN || INSIDE.get() {
        return f(0..n);
    }
    candle_core::utils::barrier_pool().execute_chunked(n, |range| {
        struct Leave;
        impl Drop for Leave {
            fn drop(&mut self) {
                INSIDE.set(false);
            }
        }
        INSIDE.set(true);
        let _leave = Leave;
        f(range)
    })
}

/// An output the pool's threads write, each into parts no other thread writes.
pub struct Shared(*mut f32);

// SAFETY: `Shared::part` is the only access, and its callers promise disjoint parts; the pool
// returns only when every thread is done, so the buffer outlives the writes.
unsafe impl Sync for Shared {}

impl Shared {
    pub fn new(out: &mut [f32]) -> Shared {
        Shared(out.as_mut_ptr())
    }

    /// `len` values from `start`.
    ///
    /// # Safety
    /// The part lies inside the buffer `new` was given, and no other thread touches it while
    /// the returned slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn part(&self, start: usize, len: usize) -> &mut [f32] {
        std::slice::from_raw_parts_mut(self.0.add(start), len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Nested calls cover their ranges once each and return (the caller's share of the outer
    /// job would deadlock on the pool if they did not run inline).
    #[test]
    fn nested_calls_run_inline_and_cover_everything() {
        let count = AtomicUsize::new(0);
        for_ranges(64, PARALLEL_MIN, |outer| {
            for _ in outer {
                for_ranges(10, PARALLEL_MIN, |inner| {
                    count.fetch_add(inner.len(), Ordering::Relaxed);
                });
            }
        });
        assert_eq!(count.into_inner(), 640);
    }
}
