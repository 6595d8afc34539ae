//! Sets of layer indices, kept as sorted runs, and their human description.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LayerSet {
    /// Sorted, disjoint, non-adjacent half-open runs.
    runs: Vec<(u64, u64)>,
}

impl LayerSet {
    pub fn all(n: u64) -> Self {
        Self::range(0, n)
    }

    pub fn range(start: u64, end: u64) -> Self {
        LayerSet {
            runs: if start < end {
                vec![(start, end)]
            } else {
                vec![]
            },
        }
    }

    pub fn from_fn(n: u64, f: impl Fn(u64) -> bool) -> Self {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for b in 0..n {
            if f(b) {
                match runs.last_mut() {
                    Some(last) if last.1 == b => last.1 = b + 1,
                    _ => runs.push((b, b + 1)),
                }
            }
        }
        LayerSet { runs }
    }

    pub fn contains(&self, b: u64) -> bool {
        // The runs are sorted and disjoint: only the last one starting at or before b can hold
        // it (a binary search, where layer sets built layer by layer ask once per layer).
        let i = self.runs.partition_point(|&(s, _)| s <= b);
        i > 0 && b < self.runs[i - 1].1
    }

    pub fn len(&self) -> u64 {
        self.runs.iter().map(|&(s, e)| e - s).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    pub fn first(&self) -> Option<u64> {
        self.runs.first().map(|r| r.0)
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs.iter().flat_map(|&(s, e)| s..e)
    }

    pub fn union(&self, other: &LayerSet) -> LayerSet {
        let mut all: Vec<(u64, u64)> = self.runs.iter().chain(&other.runs).copied().collect();
        all.sort();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (s, e) in all {
            match runs.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => runs.push((s, e)),
            }
        }
        LayerSet { runs }
    }
}

impl fmt::Display for LayerSet {
    /// `0–2`, `3–60`, `1, 3, 5 … 23`, `3, 7, 11 … 35 (every 4th)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let singles = self.runs.iter().all(|&(s, e)| e == s + 1);
        if singles && self.runs.len() >= 4 {
            let stride = self.runs[1].0 - self.runs[0].0;
            if self.runs.windows(2).all(|w| w[1].0 - w[0].0 == stride) {
                let (a, b) = (self.runs[0].0, self.runs[self.runs.len() - 1].0);
                return write!(
                    f,
                    "{a}, {}, {} … {b} (every {})",
                    a + stride,
                    a + 2 * stride,
                    ordinal(stride)
                );
            }
        }
        let parts: Vec<String> = self
            .runs
            .iter()
            .map(|&(s, e)| {
                if e == s + 1 {
                    s.to_string()
                } else {
                    format!("{s}–{}", e - 1)
                }
            })
            .collect();
        if parts.len() > 6 {
            write!(f, "{} … ({} layers)", parts[..4].join(", "), self.len())
        } else {
            write!(f, "{}", parts.join(", "))
        }
    }
}

impl LayerSet {
    /// The set in words, its noun agreeing: `no layers`, `layer 8`, `layers 8–27`.
    pub fn describe(&self) -> String {
        match self.len() {
            0 => "no layers".into(),
            1 => format!("layer {self}"),
            _ => format!("layers {self}"),
        }
    }
}

fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, x) if x != 11 => "st",
        (2, x) if x != 12 => "nd",
        (3, x) if x != 13 => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_runs_and_strides() {
        assert_eq!(LayerSet::range(3, 61).to_string(), "3–60");
        assert_eq!(
            LayerSet::from_fn(36, |b| b % 4 == 3).to_string(),
            "3, 7, 11 … 35 (every 4th)"
        );
        assert_eq!(LayerSet::from_fn(5, |b| b != 2).to_string(), "0–1, 3–4");
        assert_eq!(LayerSet::from_fn(5, |b| b != 2).len(), 4);
    }

    #[test]
    fn unions() {
        assert_eq!(
            LayerSet::range(0, 3).union(&LayerSet::range(3, 61)),
            LayerSet::range(0, 61)
        );
        assert_eq!(
            LayerSet::range(5, 6)
                .union(&LayerSet::range(0, 2))
                .to_string(),
            "0–1, 5"
        );
    }

    proptest::proptest! {
        /// A set built from any membership holds exactly the layers it was built from.
        #[test]
        fn contains_what_it_was_built_from(bits in proptest::collection::vec(proptest::bool::ANY, 0..200)) {
            let set = LayerSet::from_fn(bits.len() as u64, |b| bits[b as usize]);
            for (b, &bit) in bits.iter().enumerate() {
                proptest::prop_assert_eq!(set.contains(b as u64), bit);
            }
            proptest::prop_assert!(!set.contains(bits.len() as u64));
        }
    }
}
