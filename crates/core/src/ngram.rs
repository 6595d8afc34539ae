//! Qwen4-Exp's hashed n-gram embeddings: the arithmetic that turns a token and the ones before
//! it into rows of a table, as transformers' `Qwen4ExpTextNGramEmbedding` does it, shared by the
//! graph (the table's size), the executor and the exports (the rows a token reads).

use crate::spec::NgramPle;

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
const M1: u64 = 0xBF58_476D_1CE4_E5B9;
const M2: u64 = 0x94D0_49BB_1331_11EB;
/// Between two PLE layers' seeds.
const LAYER_STRIDE: u64 = 10_007;

fn splitmix64(v: u64) -> u64 {
    let v = v.wrapping_add(GAMMA);
    let v = (v ^ (v >> 30)).wrapping_mul(M1);
    let v = (v ^ (v >> 27)).wrapping_mul(M2);
    v ^ (v >> 31)
}

/// Deterministic Miller–Rabin for 64-bit integers.
fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for p in BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mul = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let pow = |mut a: u64, mut e: u64| {
        let mut r = 1;
        while e > 0 {
            if e & 1 == 1 {
                r = mul(r, a);
            }
            a = mul(a, a);
            e >>= 1;
        }
        r
    };
    let (mut d, mut s) = (n - 1, 0);
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    BASES.iter().all(|&a| {
        let mut x = pow(a, d);
        if x == 1 || x == n - 1 {
            return true;
        }
        (1..s).any(|_| {
            x = mul(x, x);
            x == n - 1
        })
    })
}

/// The table sizes of every head of `layers` PLE layers of `heads` heads each: head g (the
/// model's g-th, layer after layer) has the (g + 1)-th prime from `base` on.
pub fn primes(base: u64, count: u64) -> Vec<u64> {
    let mut sizes = Vec::with_capacity(count as usize);
    let mut p = base.saturating_sub(1);
    while (sizes.len() as u64) < count {
        p += 1;
        while !is_prime(p) {
            p += 1;
        }
        sizes.push(p);
    }
    sizes
}

impl NgramPle {
    /// Hash heads per PLE layer: `heads_per_ngram` for each n from 2 to `ngram`.
    pub fn heads(&self) -> u64 {
        (self.ngram - 1) * self.heads_per_ngram
    }

    /// Each head's embedding width.
    pub fn head_dim(&self) -> u64 {
        self.width / self.heads()
    }

    /// The convolution's inputs carried between steps: its reach, (kernel − 1) · dilation, the
    /// dilation being `ngram`.
    pub fn reach(&self) -> u64 {
        (self.kernel - 1) * self.ngram
    }

    /// Which PLE layer layer `b` is (0 for the first), if it is one.
    pub fn index_of(&self, b: u64) -> Option<u64> {
        self.layers
            .contains(b)
            .then(|| self.layers.iter().take_while(|&l| l < b).count() as u64)
    }

    /// The table sizes of PLE layer `i`'s heads (`sizes`, which `primes` makes).
    pub fn head_sizes(&self, i: u64) -> &[u64] {
        let h = self.heads() as usize;
        &self.sizes[i as usize * h..][..h]
    }

    /// The rows of PLE layer `i`'s table: its heads' sizes summed, padded to a multiple of
    /// `divisor`.
    pub fn rows(&self, i: u64) -> u64 {
        self.head_sizes(i)
            .iter()
            .sum::<u64>()
            .div_ceil(self.divisor)
            * self.divisor
    }

    /// How a table of `rows` is saved (`split_ngram_parts`, as torch.chunk splits it): shards
    /// of ⌈rows / parts⌉ rows, the last one shorter where they do not divide; (rows per shard,
    /// shards).
    pub fn shards(&self, rows: u64) -> (u64, u64) {
        let size = rows.div_ceil(self.parts).max(1);
        (size, rows.div_ceil(size))
    }

    /// PLE layer `i`'s odd multiplier for each of the `ngram` positions, from its seed.
    pub fn multipliers(&self, vocab: u64, i: u64) -> Vec<u64> {
        let half = ((i64::MAX as u64) / vocab.max(1) / 2).max(1);
        let seed = self.seed.wrapping_add(LAYER_STRIDE.wrapping_mul(i));
        (0..self.ngram)
            .map(|n| 2 * (splitmix64(seed.wrapping_add(GAMMA.wrapping_mul(n + 1))) % half) + 1)
            .collect()
    }

    /// The tokens at distance 0 .. ngram − 1 before each of `ids`, `history` (the `ngram` − 1
    /// ids before them, end-of-sequence where none) first: EOS where an end of sequence lies
    /// between, so that n-grams do not cross documents.
    pub fn shifted(&self, history: &[u64], ids: &[u64]) -> Vec<Vec<u64>> {
        let all: Vec<u64> = history.iter().chain(ids).copied().collect();
        let start = history.len();
        (start..all.len())
            .map(|p| {
                let mut out = vec![all[p]];
                let mut crossed = false;
                for s in 1..self.ngram as usize {
                    // The token s back, unless an EOS sits after it and before p.
                    crossed |= s > 1 && all.get(p + 1 - s).is_some_and(|&t| t == self.eos);
                    out.push(match p.checked_sub(s) {
                        Some(q) if !crossed => all[q],
                        _ => self.eos,
                    });
                }
                out
            })
            .collect()
    }

    /// The table rows one token reads in PLE layer `i`, head after head: for each n, its
    /// tokens' products with the multipliers XORed, modulo each head's size, plus the head's
    /// offset.
    pub fn rows_of(&self, shifted: &[u64], mult: &[u64], sizes: &[u64]) -> Vec<u64> {
        let mut rows = Vec::with_capacity(sizes.len());
        let mut offset = 0;
        let per = self.heads_per_ngram as usize;
        for n in 2..=self.ngram as usize {
            let mixed = (0..n).fold(0u64, |acc, s| acc ^ shifted[s].wrapping_mul(mult[s]));
            for &size in &sizes[(n - 2) * per..(n - 1) * per] {
                rows.push(mixed % size + offset);
                offset += size;
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::LayerSet;

    fn ple() -> NgramPle {
        NgramPle {
            sizes: primes(50, 8),
            layers: LayerSet::from_fn(4, |b| b == 1 || b == 3),
            width: 16,
            ngram: 3,
            heads_per_ngram: 2,
            vocab_base: 50,
            divisor: 8,
            seed: 1234,
            parts: 7,
            kernel: 3,
            eos: 1,
        }
    }

    /// What transformers 5.24 builds for this config (its buffers, read from the state dict).
    #[test]
    fn tables_and_multipliers_are_transformers() {
        let p = ple();
        assert_eq!(p.head_sizes(0), [53, 59, 61, 67]);
        assert_eq!(p.head_sizes(1), [71, 73, 79, 83]);
        assert_eq!((p.rows(0), p.shards(p.rows(0))), (240, (35, 7)));
        assert_eq!(
            p.multipliers(97, 0),
            [3923727992659049, 40654649216656725, 76114243727631751]
        );
        assert_eq!(p.index_of(3), Some(1));
        assert_eq!(p.index_of(2), None);
    }

    #[test]
    fn shifts_stop_at_an_end_of_sequence() {
        let p = ple();
        // Ids 5, 1 (EOS), 7, 8 after a history of two EOS.
        let s = p.shifted(&[1, 1], &[5, 1, 7, 8]);
        assert_eq!(
            s,
            [vec![5, 1, 1], vec![1, 5, 1], vec![7, 1, 1], vec![8, 7, 1]]
        );
    }

    #[test]
    fn primes_are_primes() {
        let small: Vec<u64> = (0..60).filter(|&n| is_prime(n)).collect();
        assert_eq!(
            small,
            [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]
        );
        assert!(is_prime(20_000_003) && !is_prime(20_000_001));
        assert!(is_prime(18_446_744_073_709_551_557));
    }
}
