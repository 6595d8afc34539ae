//! Gemma 4's assistants: a draft model run on its target's state, as transformers' assisted
//! generation runs it for one drafting round after the prompt. The target reads the prompt; the
//! assistant then drafts token after token from the target's embedding of the last token and a
//! hidden state (the target's at first, then its own, projected back), every layer attending
//! over the keys and values the target's last layer of its kind cached, at one position.

use super::*;
use anatomy_core::spec::{Centroids, Draft};

/// What a draft model made: its tokens, and the logits each was chosen from, [n, vocab].
pub struct Drafted {
    pub tokens: Vec<u32>,
    pub logits: Tensor,
}

impl Model {
    /// One draft step after `ids` with every activation captured: what the op view shows.
    pub fn draft_captured(&self, target: &Model, ids: &[u32]) -> Result<Vec<Captured>, Error> {
        *self.capture.borrow_mut() = Some(Vec::new());
        let drafted = self.draft(target, ids, 1);
        let captured = self.capture.borrow_mut().take().unwrap_or_default();
        drafted.map(|_| captured)
    }

    /// Runs `target` over `ids`, then drafts `n` tokens greedily, each from the one before.
    pub fn draft(&self, target: &Model, ids: &[u32], n: usize) -> Result<Drafted, Error> {
        let spec = &self.spec;
        let Some(d) = spec.draft else {
            return Err(Error::new(
                &spec.name,
                "model_type",
                "is not a draft model; --target is for Gemma 4's assistants",
            ));
        };
        let Some(&last) = ids.last() else {
            return Err(Error::new(
                &spec.name,
                "ids",
                "are empty; give the prompt's ids",
            ));
        };
        if target.spec.hidden != d.backbone {
            return Err(Error::new(
                &spec.name,
                "backbone_hidden_size",
                format!(
                    "is {}, but the target `{}` has hidden size {}; give the target the assistant was trained with",
                    d.backbone, target.spec.name, target.spec.hidden
                ),
            ));
        }
        let mut tc = Cache::new(target.spec.layers as usize);
        target.forward_last(ids, &mut tc)?;
        let h = target
            .final_hidden
            .borrow()
            .clone()
            .expect("a forward pass leaves its final hidden state");
        let cache = self.target_keys(target, tc, ids.len() - 1)?;
        Ok(self.drafted(target, d, cache, h, last, n)?)
    }

    /// The assistant's cache, at the last token's position: the keys and values the target's
    /// last layer of each span kind cached, moved out of the target's cache `tc` to the
    /// assistant's first layer of that kind, which the later ones read (`Spec::kv_source`).
    fn target_keys(&self, target: &Model, mut tc: Cache, pos: usize) -> Result<Cache, Error> {
        let spec = &self.spec;
        let mut cache = Cache::new(spec.layers as usize);
        cache.pos = pos;
        for b in 0..spec.layers as usize {
            let first = spec.kv_source(b);
            if first == b {
                let kind = Some(std::mem::discriminant(&self.span(b)));
                let source = target.spec.own_kv_before(target.spec.layers as usize, kind);
                cache.kv[b] = source.and_then(|s| tc.kv[s].take());
            }
            let held = cache.kv[first].as_ref().ok_or_else(|| {
                Error::new(
                    &target.spec.name,
                    "layer_types",
                    format!(
                        "has no {} layer with keys of its own, which the assistant's layer {b} reads",
                        self.span(b).describe()
                    ),
                )
            })?;
            let a = spec.attn_at(b);
            let (kv, hd, vd) = held.shape();
            if (kv as u64, hd as u64, vd as u64) != (a.kv_heads, a.head_dim, a.v_head_dim) {
                return Err(Error::new(
                    &spec.name,
                    "text_config.num_key_value_heads",
                    format!(
                        "gives layer {b} {} K/V heads of {}, but the target's keys it reads are {kv} heads of {hd}",
                        a.kv_heads, a.head_dim
                    ),
                ));
            }
        }
        Ok(cache)
    }

    fn drafted(
        &self,
        target: &Model,
        d: Draft,
        mut cache: Cache,
        mut h: Tensor,
        mut token: u32,
        n: usize,
    ) -> Res<Drafted> {
        let spec = &self.spec;
        let pos = cache.pos;
        let scale = if target.spec.embedding.scale_by_sqrt_hidden {
            (target.spec.hidden as f64).sqrt()
        } else {
            1.0
        };
        let head = if spec.tied { Role::Embed } else { Role::LmHead };
        // The clustered head's token list, read and checked once for the round.
        let clusters = match d.centroids {
            Some(c) => Some((c, self.token_order()?)),
            None => None,
        };
        // Grown step by step: `n` is the user's, not bounded by the files.
        let (mut tokens, mut all) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let e = target
                .rows(Role::Embed, &[token], &Tensor::new(&[token], &Device::Cpu)?)?
                .affine(scale, 0.0)?;
            let state = Tensor::cat(&[&e, &h], 1)?;
            self.keep(None, Point::DraftState, &state);
            let mut x = self.linear(&state, &self.name(Role::DraftIn, false, None, None), None)?;
            self.keep(None, Point::DraftIn, &x);
            for b in 0..spec.layers as usize {
                x = self.layer(&x, b, &mut cache, &mut None, None)?;
                x = self.layer_tail(x, b, None)?;
            }
            // Every step drafts at the last token's position, over the same keys.
            cache.pos = pos;
            let z = self.norm(&x, Role::FinalNorm, None)?;
            self.keep(None, Point::FinalNorm, &z);
            let logits = match &clusters {
                Some((c, order)) => self.clustered(&z, *c, order, head)?,
                None => self.linear(&z, &self.name(head, false, None, None), None)?,
            };
            self.keep(None, Point::Logits, &logits);
            h = self.linear(&z, &self.name(Role::DraftOut, false, None, None), None)?;
            self.keep(None, Point::DraftOut, &h);
            token = logits.argmax(D::Minus1)?.squeeze(0)?.to_scalar()?;
            tokens.push(token);
            all.push(logits);
        }
        Ok(Drafted {
            tokens,
            logits: Tensor::cat(&all, 0)?,
        })
    }

    /// The stored vocabulary, cluster by cluster, as token ids (each checked to be one).
    fn token_order(&self) -> Res<Vec<u32>> {
        let vocab = self.spec.vocab as usize;
        let order: Vec<f32> = self.w(Role::TokenOrdering, None)?.to_vec1()?;
        if order.len() != vocab {
            return Err(candle_core::Error::Msg(format!(
                "masked_embedding.token_ordering holds {} ids, not one per token of {vocab}",
                order.len()
            ))
            .into());
        }
        order
            .into_iter()
            .map(|t| {
                if (0.0..vocab as f32).contains(&t) && t.fract() == 0.0 {
                    Ok(t as u32)
                } else {
                    Err(candle_core::Error::Msg(format!(
                        "masked_embedding.token_ordering holds {t}, not a token id below {vocab}"
                    ))
                    .into())
                }
            })
            .collect()
    }

    /// The clustered head, [1, vocab]: the tokens of the `top_k` best-scored clusters (listed
    /// by `order`) scored by the head's rows, every other token the smallest of those scores
    /// minus one.
    fn clustered(&self, z: &Tensor, c: Centroids, order: &[u32], head: Role) -> Res<Tensor> {
        let vocab = self.spec.vocab as usize;
        let per = c.per_cluster(self.spec.vocab) as usize;
        let scores = self.linear(z, &self.name(Role::Centroids, false, None, None), None)?;
        self.keep(None, Point::Centroids, &scores);
        let scores: Vec<f32> = scores.flatten_all()?.to_vec1()?;
        let mut best: Vec<usize> = (0..scores.len()).collect();
        best.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        best.truncate(c.top_k as usize);
        let chosen: Vec<u32> = best
            .iter()
            .flat_map(|&k| order[k * per..(k + 1) * per].iter().copied())
            .collect();
        let rows = self.rows(
            head,
            &chosen,
            &Tensor::new(chosen.as_slice(), &Device::Cpu)?,
        )?;
        let picked: Vec<f32> = rows.matmul(&z.t()?)?.flatten_all()?.to_vec1()?;
        let floor = picked.iter().copied().fold(f32::INFINITY, f32::min) - 1.0;
        let mut out = vec![floor; vocab];
        for (&t, &v) in chosen.iter().zip(&picked) {
            out[t as usize] = v;
        }
        Ok(Tensor::from_vec(out, (1, vocab), &Device::Cpu)?)
    }
}
