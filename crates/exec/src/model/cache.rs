//! What a forward pass carries to the next: each attention layer's keys and values, the
//! recurrent layers' states, and the positions so far.

use super::*;

/// Keys and values of every layer seen so far, and the recurrent layers' states.
#[derive(Clone)]
pub struct Cache {
    /// Each attention layer's keys and values.
    pub(super) kv: Vec<Option<crate::kv::Kv>>,
    /// Positions to make room for in `kv` at once: the whole generation, where known.
    pub(super) room: usize,
    /// DeepSeek sparse attention's indexer keys, [T, index head dim] per layer.
    pub(super) index_k: Vec<Option<Tensor>>,
    /// The keys the last indexer chose for this step's queries, [t, total], which layers without
    /// an indexer of their own reuse (GLM-5).
    pub(super) chosen: Option<Vec<bool>>,
    /// Kolibri 1.1: each new query's pool of candidate keys, [t, total], from the last layer
    /// that picked one.
    pub(super) pool: Option<Vec<bool>>,
    /// The recurrent state of each state-space layer.
    pub(super) ssm: Vec<Option<SsmState>>,
    /// The last inputs of each layer's residual convolutions (Inkling's K, V, attention output
    /// and MLP output: `CONV_K` …), [taps − 1, channels] each, oldest first.
    pub(super) tails: Vec<[Vec<f32>; 4]>,
    /// DeepSeek-V4's attention state of each layer: its keys-and-values and compressors.
    pub(super) v4: Vec<Option<v4::V4State>>,
    /// The token ids of the step running: DeepSeek-V4's first layers route by them.
    pub(super) ids: Vec<u32>,
    /// Every byte so far (BLT: each pass runs on the whole sequence).
    pub(super) bytes: Vec<u32>,
    /// Qwen4-Exp's n-gram embeddings in each layer that has them: the last ids and the
    /// convolution's last inputs.
    pub(super) ngram: Vec<Option<NgramState>>,
    /// Each stack visit's own cache (HRM: every run of a layer attends over its own keys and
    /// values), made as the first step needs them.
    pub(super) visits: Vec<Cache>,
    pub pos: usize,
    /// What a position adds after a prompt with an image: M-RoPE's image tokens take fewer
    /// positions than tokens (transformers' `rope_deltas`); GIT's features take none of the
    /// text's learned positions.
    pub(super) pos_delta: i64,
}

/// What a layer's n-gram embeddings carry from step to step (`Spec::ngram_ple`).
#[derive(Clone)]
pub(super) struct NgramState {
    /// The last `ngram` − 1 ids, oldest first (end-of-sequence before the first token).
    pub(super) ids: Vec<u64>,
    /// The convolution's last `reach` inputs, [reach, channels] oldest first (zeros at first).
    pub(super) conv: Vec<f32>,
}

/// A cache as `Cache::mark` found it.
pub(super) struct Mark {
    rest: Cache,
    lens: Vec<Option<usize>>,
    visits: Vec<Mark>,
}

impl Cache {
    pub fn new(layers: usize) -> Self {
        Cache::with_room(layers, 0)
    }

    /// A cache that makes room for `positions` keys and values a layer at once (the prompt and
    /// every token to generate): no step then copies the cache.
    pub fn with_room(layers: usize, positions: usize) -> Self {
        Cache {
            kv: (0..layers).map(|_| None).collect(),
            room: positions,
            index_k: vec![None; layers],
            chosen: None,
            pool: None,
            ssm: vec![None; layers],
            tails: vec![Default::default(); layers],
            v4: vec![None; layers],
            ids: Vec::new(),
            bytes: Vec::new(),
            ngram: vec![None; layers],
            visits: Vec::new(),
            pos: 0,
            pos_delta: 0,
        }
    }

    /// Layer `b`'s indexer keys with `k` ([t, d]) appended: every key so far, kept for the next
    /// step.
    pub(super) fn index_keys(&mut self, b: usize, k: Tensor) -> candle_core::Result<Tensor> {
        let all = match &self.index_k[b] {
            Some(prev) => Tensor::cat(&[prev, &k], 0)?,
            None => k,
        };
        self.index_k[b] = Some(all.clone());
        Ok(all)
    }

    /// Stack visit `i`'s own cache, at this one's position (`Spec::hierarchy`).
    pub(super) fn visit(&mut self, i: usize) -> &mut Cache {
        while self.visits.len() <= i {
            self.visits.push(Cache::with_room(self.kv.len(), self.room));
        }
        let pos = self.pos;
        let c = &mut self.visits[i];
        c.pos = pos;
        c
    }

    /// Bytes the cache holds: keys and values (with their room to grow), indexer keys and
    /// recurrent states.
    pub fn bytes(&self) -> usize {
        let kv: usize = self.kv.iter().flatten().map(|kv| kv.bytes()).sum();
        let index: usize = self
            .index_k
            .iter()
            .flatten()
            .map(|k| k.elem_count() * 4)
            .sum();
        let ssm: usize = (self.ssm.iter().flatten())
            .map(|s| (s.conv.len() + s.h.len()) * 4 + s.memory.len() * 8)
            .sum();
        let tails: usize = self.tails.iter().flatten().map(|t| t.len() * 4).sum();
        let v4: usize = self.v4.iter().flatten().map(|s| s.bytes()).sum();
        let ngram: usize = (self.ngram.iter().flatten())
            .map(|s| s.ids.len() * 8 + s.conv.len() * 4)
            .sum();
        kv + index + ssm + tails + v4 + ngram + self.visits.iter().map(Cache::bytes).sum::<usize>()
    }

    /// This cache as it is, to run a step again from, taken before every step: the keys and
    /// values, which a step only appends to, by their length alone; the recurrent states (their
    /// size constant in context), copied.
    pub(super) fn mark(&self) -> Mark {
        let lens = self
            .kv
            .iter()
            .map(|kv| kv.as_ref().map(|kv| kv.len()))
            .collect();
        let rest = Cache {
            kv: self.kv.iter().map(|_| None).collect(),
            room: self.room,
            index_k: self.index_k.clone(),
            chosen: self.chosen.clone(),
            pool: self.pool.clone(),
            ssm: self.ssm.clone(),
            tails: self.tails.clone(),
            v4: self.v4.clone(),
            ids: self.ids.clone(),
            bytes: self.bytes.clone(),
            ngram: self.ngram.clone(),
            visits: Vec::new(),
            pos: self.pos,
            pos_delta: self.pos_delta,
        };
        Mark {
            rest,
            lens,
            visits: self.visits.iter().map(Cache::mark).collect(),
        }
    }

    /// The cache `mark` took, from this one that has run on from it.
    pub(super) fn rewound(&self, m: &Mark) -> Cache {
        let kv = self.kv.iter().zip(&m.lens).map(|(kv, len)| {
            let (mut kv, len) = (kv.clone()?, (*len)?);
            kv.truncate(len);
            Some(kv)
        });
        Cache {
            kv: kv.collect(),
            visits: self
                .visits
                .iter()
                .zip(&m.visits)
                .map(|(c, m)| c.rewound(m))
                .collect(),
            ..m.rest.clone()
        }
    }
}
