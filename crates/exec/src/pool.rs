//! Work shared among the threads of candle's barrier pool, the pool its own CPU kernels use: the
//! caller works too, and idle workers spin before they sleep, so a call costs no context switch
//! (rayon's pool, entered from outside, costs two).

use std::ops::Range;

/// Below this much work (multiply–adds or so) a job runs on the calling thread alone.
const PARALLEL_MIN: usize = 1 << 16;

/// Calls `f` on ranges that together cover `0..n` exactly once, spread across the pool when
/// `work` is large enough to be worth it.
pub fn for_ranges(n: usize, work: usize, f: impl Fn(Range<usize>) + Sync) {
    if work < PARALLEL_MIN {
        f(0..n)
    } else {
        candle_core::utils::barrier_pool().execute_chunked(n, f)
    }
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
