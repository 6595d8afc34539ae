//! One attention layer's cached keys and values, appended in place: a decode step copies its
//! own position into room made beforehand, rather than the whole cache into a longer one (which
//! costs time linear in the context every step, and leaves the allocator a trail of
//! ever-larger freed buffers).

use candle_core::{Device, Tensor};

/// Keys [heads, room, d] and values [heads, room, dv], row-major, of which each head's first
/// `len` positions are filled.
#[derive(Clone)]
pub struct Kv {
    k: Vec<f32>,
    v: Vec<f32>,
    heads: usize,
    d: usize,
    dv: usize,
    len: usize,
    room: usize,
}

impl Kv {
    /// K/V heads, key width and value width.
    pub fn shape(&self) -> (usize, usize, usize) {
        (self.heads, self.d, self.dv)
    }

    pub fn new(heads: usize, d: usize, dv: usize) -> Kv {
        Kv {
            k: Vec::new(),
            v: Vec::new(),
            heads,
            d,
            dv,
            len: 0,
            room: 0,
        }
    }

    /// Append `t` positions, k [heads, t, d] and v [heads, t, dv] row-major. Where they do not
    /// fit, the room grows to `want` positions (the whole generation, where the caller knows
    /// it) or at least doubles.
    pub fn append(&mut self, k: &[f32], v: &[f32], t: usize, want: usize) {
        assert_eq!(k.len(), self.heads * t * self.d, "keys are [heads, t, d]");
        assert_eq!(
            v.len(),
            self.heads * t * self.dv,
            "values are [heads, t, dv]"
        );
        let need = self.len + t;
        let room = match need > self.room {
            true => need.max(want).max(2 * self.room),
            false => self.room,
        };
        let at = (self.room, room, self.len, t);
        put(&mut self.k, k, self.heads, at, self.d);
        put(&mut self.v, v, self.heads, at, self.dv);
        self.room = room;
        self.len = need;
    }

    /// Forget every position from `len` on (a step run again appends them anew).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Bytes held, the room to grow included.
    pub fn bytes(&self) -> usize {
        (self.k.len() + self.v.len()) * std::mem::size_of::<f32>()
    }

    /// Positions held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Positions each head's block has room for: the stride between heads, in positions.
    pub fn room(&self) -> usize {
        self.room
    }

    /// The whole buffers, heads `room` positions apart, for `attention::Heads`.
    pub fn buffers(&self) -> (&[f32], &[f32]) {
        (&self.k, &self.v)
    }

    /// The keys held, as a tensor [heads, len, d].
    pub fn keys(&self) -> candle_core::Result<Tensor> {
        held(&self.k, self.heads, self.room, self.len, self.d)
    }

    /// The values held, as a tensor [heads, len, dv].
    pub fn values(&self) -> candle_core::Result<Tensor> {
        held(&self.v, self.heads, self.room, self.len, self.dv)
    }
}

/// Write `src` [heads, t, width] at position `len` of each head of `buf` [heads, room, width],
/// first moving it to `new` positions a head where that differs from `room`; `at` is
/// (room, new, len, t).
fn put(
    buf: &mut Vec<f32>,
    src: &[f32],
    heads: usize,
    at: (usize, usize, usize, usize),
    width: usize,
) {
    let (room, new, len, t) = at;
    if new != room {
        let mut grown = vec![0f32; heads * new * width];
        for h in 0..heads {
            grown[h * new * width..][..len * width]
                .copy_from_slice(&buf[h * room * width..][..len * width]);
        }
        *buf = grown;
    }
    for h in 0..heads {
        buf[(h * new + len) * width..][..t * width]
            .copy_from_slice(&src[h * t * width..][..t * width]);
    }
}

fn held(
    buf: &[f32],
    heads: usize,
    room: usize,
    len: usize,
    width: usize,
) -> candle_core::Result<Tensor> {
    let mut v = Vec::with_capacity(heads * len * width);
    for h in 0..heads {
        v.extend_from_slice(&buf[h * room * width..][..len * width]);
    }
    Tensor::from_vec(v, (heads, len, width), &Device::Cpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Appends of any sizes, with any room asked for, hold what concatenating along the
        /// positions holds; every head's block starts `room` positions after the last.
        #[test]
        fn appending_holds_what_concatenation_holds(
            heads in 1usize..4, d in 1usize..5, dv in 1usize..5,
            steps in proptest::collection::vec(1usize..6, 1..8), want in 0usize..12, seed in 0u64..100
        ) {
            let mut kv = Kv::new(heads, d, dv);
            let (mut ks, mut vs) = (Vec::new(), Vec::new());
            for (i, &t) in steps.iter().enumerate() {
                let k = crate::uniform(seed + 2 * i as u64, heads * t * d, 1.0);
                let v = crate::uniform(seed + 2 * i as u64 + 1, heads * t * dv, 1.0);
                kv.append(&k, &v, t, want);
                ks.push(Tensor::from_vec(k, (heads, t, d), &Device::Cpu).unwrap());
                vs.push(Tensor::from_vec(v, (heads, t, dv), &Device::Cpu).unwrap());
                let all = |ts: &[Tensor]| Tensor::cat(ts, 1).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
                let got = |t: Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                prop_assert_eq!(got(kv.keys().unwrap()), all(&ks));
                prop_assert_eq!(got(kv.values().unwrap()), all(&vs));
                prop_assert!(kv.room() >= kv.len());
                let (kb, vb) = kv.buffers();
                prop_assert_eq!((kb.len(), vb.len()), (heads * kv.room() * d, heads * kv.room() * dv));
            }
            prop_assert_eq!(kv.len(), steps.iter().sum::<usize>());
            // Room asked for is made at once: no regrowth while the appends fit in it.
            if steps.iter().sum::<usize>() <= want {
                prop_assert_eq!(kv.room(), want);
            }
        }
    }
}
