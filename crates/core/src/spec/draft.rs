//! Draft models (Gemma 4's assistants): what they read from their target, and their clustered
//! heads.

/// A draft model that runs on its target's state (Gemma 4's assistants). Its input is the
/// target's (scaled) embedding of the last token beside the target's last hidden state,
/// [2·backbone], projected to its own width; every layer's queries attend over the keys and
/// values the target's last layer of that span kind made (no K/V projections, no cache of its
/// own), at the last token's position; the final hidden state, projected back to the target's
/// width, is the next draft step's hidden state. It drafts token after token at one position
/// against one set of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draft {
    /// The target's hidden size (`backbone_hidden_size`).
    pub backbone: u64,
    /// Logits for the tokens of the top-scoring clusters only (`use_ordered_embeddings`).
    pub centroids: Option<Centroids>,
}

/// The assistant's clustered head: `count` centroids score the final hidden state; the tokens of
/// the `top_k` best clusters (vocab / count each, listed by a stored `token_ordering`) get their
/// logits from the head's rows, every other token the smallest of those minus one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Centroids {
    pub count: u64,
    pub top_k: u64,
}

impl Centroids {
    /// Tokens per cluster.
    pub fn per_cluster(&self, vocab: u64) -> u64 {
        vocab / self.count
    }

    /// Tokens the head scores: those of the `top_k` kept clusters.
    pub fn kept(&self, vocab: u64) -> u64 {
        self.top_k * self.per_cluster(vocab)
    }
}
