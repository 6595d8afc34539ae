//! Attention residuals: each sublayer reads a learned mix of the block summaries so far.

use super::*;

impl Model {
    /// Inkling 2's layers over block attention residuals (`AttnRes`): each sublayer reads a mix
    /// of the block summaries and the stream; a block's first layer keeps its input as a summary
    /// and restarts the stream from its attention's output. A looped section (Inkling 2 Loop)
    /// runs its passes from the same stream and summaries, each with caches of its own, the later
    /// ones fed messages from the pass before. Returns the head's own mix.
    pub(super) fn attn_res_layers(&self, x: &Tensor, r: AttnRes, cache: &mut Cache) -> Res<Tensor> {
        let layers = self.spec.layers as usize;
        // A section past the last layer loops the layers it holds.
        let (start, end, passes) = match r.looped {
            Some(l) => (
                (l.start as usize).min(layers),
                (l.end as usize).min(layers),
                l.passes as usize,
            ),
            None => (layers, layers, 1),
        };
        let mut blocks: Vec<Tensor> = Vec::new();
        let mut x = x.clone();
        for b in 0..start {
            x = self.attn_res_layer(&x, &mut blocks, b, None, r, cache)?;
        }
        let (x0, blocks0) = (x.clone(), blocks.clone());
        // The summaries the pass before added after its first, and its output.
        let mut before: Option<(Vec<Tensor>, Tensor)> = None;
        for p in 0..passes {
            if p > 0 {
                x = x0.clone();
                blocks = blocks0.clone();
            }
            let c = if p == 0 {
                &mut *cache
            } else {
                cache.visit(p - 1)
            };
            for b in start..end {
                let messages = match &before {
                    Some((summaries, out)) => Some(self.messages(summaries, out, b - start, r)?),
                    None => None,
                };
                x = self.attn_res_layer(&x, &mut blocks, b, messages, r, c)?;
            }
            before = Some((
                blocks[(blocks0.len() + 1).min(blocks.len())..].to_vec(),
                x.clone(),
            ));
        }
        for b in end..layers {
            x = self.attn_res_layer(&x, &mut blocks, b, None, r, cache)?;
        }
        let q = self.w(Role::HeadResQuery, None)?;
        let head = self.res_mix(&blocks, &x, q, r.eps)?;
        self.keep(None, Point::HeadMix, &head[0]);
        Ok(head[0].clone())
    }

    /// Inkling 2 Loop: looped layer j's four messages (its query, key, value and FFN inputs'),
    /// mixes of the pass before's `summaries` and `out` by the layer's four stored queries.
    pub(super) fn messages(
        &self,
        summaries: &[Tensor],
        out: &Tensor,
        j: usize,
        r: AttnRes,
    ) -> Res<Vec<Tensor>> {
        let (qm, kv) = (
            self.w(Role::MsgQueries, None)?.narrow(0, 2 * j, 2)?,
            self.w(Role::MsgKvQueries, None)?.narrow(0, 2 * j, 2)?,
        );
        // Stored as the query and FFN queries, then the key and value ones: in order q, k, v, FFN.
        let queries = Tensor::cat(&[qm.narrow(0, 0, 1)?, kv, qm.narrow(0, 1, 1)?], 0)?;
        self.res_mix(summaries, out, &queries, r.eps)
    }

    /// A message gate of layer `b` on `x` with message `m`: (1 − tanh(W_f g)) ⊙ x + tanh(W_m g)
    /// ⊙ m, g = W_d · [rms(x); rms(m)].
    pub(super) fn message_gate(
        &self,
        x: &Tensor,
        m: &Tensor,
        roles: [Role; 3],
        b: usize,
    ) -> Res<Tensor> {
        let eps = self.spec.norm.eps;
        let both = Tensor::cat(&[rms(x, eps)?, rms(m, eps)?], 1)?;
        let g = both.matmul(&self.w(roles[0], Some(b))?.t()?)?;
        let forget = g.matmul(&self.w(roles[1], Some(b))?.t()?)?.tanh()?;
        let gain = g.matmul(&self.w(roles[2], Some(b))?.t()?)?.tanh()?;
        Ok(((x - (x * forget)?)? + (m * gain)?)?)
    }

    /// Layer `b` over block attention residuals, `blocks` the summaries so far (a block's first
    /// layer adds its input), `messages` from the pass before where it is a later pass of a loop.
    pub(super) fn attn_res_layer(
        &self,
        x: &Tensor,
        blocks: &mut Vec<Tensor>,
        b: usize,
        messages: Option<Vec<Tensor>>,
        r: AttnRes,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        const Q: [Role; 3] = [Role::MsgQDown, Role::MsgQForget, Role::MsgQGain];
        const K: [Role; 3] = [Role::MsgKDown, Role::MsgKForget, Role::MsgKGain];
        const V: [Role; 3] = [Role::MsgVDown, Role::MsgVForget, Role::MsgVGain];
        const FFN: [Role; 3] = [Role::MsgFfnDown, Role::MsgFfnForget, Role::MsgFfnGain];
        let spec = &self.spec;
        self.keep(Some(b), Point::BlockIn, x);
        let a = spec.attn_at(b);
        let rows = if a.kv_inputs { 3 } else { 1 };
        let inputs = if b == 0 {
            vec![x.clone(); rows]
        } else {
            let q = self.w(Role::AttnResQuery, Some(b))?;
            self.res_mix(blocks, x, q, r.eps)?
        };
        // The query's, key's and value's inputs: one (a sliding layer) or three, each gated with
        // its message in a loop's later passes.
        let (qi, ki, vi) = match &messages {
            Some(m) => {
                let (k, v) = if a.kv_inputs {
                    (&inputs[1], &inputs[2])
                } else {
                    (&inputs[0], &inputs[0])
                };
                (
                    self.message_gate(&inputs[0], &m[0], Q, b)?,
                    self.message_gate(k, &m[1], K, b)?,
                    self.message_gate(v, &m[2], V, b)?,
                )
            }
            None if a.kv_inputs => (inputs[0].clone(), inputs[1].clone(), inputs[2].clone()),
            None => (inputs[0].clone(), inputs[0].clone(), inputs[0].clone()),
        };
        let y = if a.kv_inputs {
            let q = self.norm(&qi, Role::QInNorm, Some(b))?;
            let k = self.norm(&ki, Role::KInNorm, Some(b))?;
            let v = self.norm(&vi, Role::VInNorm, Some(b))?;
            self.keep(Some(b), Point::AttnNorm, &q);
            self.attention_from(&q, Some((&k, &v)), b, cache)?
        } else if messages.is_some() {
            let q = self.norm(&qi, Role::AttnNorm, Some(b))?;
            let k = self.norm(&ki, Role::AttnNorm, Some(b))?;
            let v = self.norm(&vi, Role::AttnNorm, Some(b))?;
            self.keep(Some(b), Point::AttnNorm, &q);
            self.attention_from(&q, Some((&k, &v)), b, cache)?
        } else {
            let h = self.norm(&qi, Role::AttnNorm, Some(b))?;
            self.keep(Some(b), Point::AttnNorm, &h);
            self.attention(&h, b, cache)?
        };
        let scaled = spec.out_conv.is_some_and(|c| c.scaled);
        let y = self.residual_conv_of(&y, Role::AttnOutConv, b, CONV_ATTN, scaled, cache)?;
        self.keep(Some(b), Point::AttnConv, &y);
        let stream = if (b as u64).is_multiple_of(r.block) {
            blocks.push(x.clone());
            y
        } else {
            (x + y)?
        };
        self.keep(Some(b), Point::ResidAttn, &stream);
        let q = self.w(Role::FfnResQuery, Some(b))?;
        let mut xm = self.res_mix(blocks, &stream, q, r.eps)?.swap_remove(0);
        if let Some(m) = &messages {
            xm = self.message_gate(&xm, &m[3], FFN, b)?;
        }
        let h = self.norm(&xm, Role::FfnNorm, Some(b))?;
        self.keep(Some(b), Point::FfnNorm, &h);
        let m = self.moe(&h, b)?;
        self.keep(Some(b), Point::Combine, &m);
        let m = self.residual_conv_of(&m, Role::FfnOutConv, b, CONV_FFN, scaled, cache)?;
        self.keep(Some(b), Point::FfnConv, &m);
        let out = (stream + m)?;
        self.keep(Some(b), Point::ResidFfn, &out);
        Ok(out)
    }

    /// A block attention residual's mixes of the summaries `blocks` and `stream` ([t, hidden]
    /// each), one per row of `queries` ([n, hidden], or [hidden] for one): every candidate
    /// RMS-normed without a weight, weighted by a softmax of its dot product with the query over
    /// √hidden.
    pub(super) fn res_mix(
        &self,
        blocks: &[Tensor],
        stream: &Tensor,
        queries: &Tensor,
        eps: f64,
    ) -> Res<Vec<Tensor>> {
        let d = self.spec.hidden as usize;
        let all: Vec<Tensor> = blocks
            .iter()
            .chain(std::iter::once(stream))
            .map(|t| rms(t, eps))
            .collect::<R<_>>()?;
        let stacked = Tensor::stack(&all, 1)?; // [t, n, d]
        let rows = queries.elem_count() / d;
        let queries = queries.reshape((rows, d))?;
        let logits = stacked
            .broadcast_matmul(&queries.t()?)?
            .affine(1.0 / (d as f64).sqrt(), 0.0)?; // [t, n, rows]
                                                    // A softmax over the candidates (dim 1), shifted by each row's largest logit.
        let shifted = logits.broadcast_sub(&logits.max_keepdim(1)?)?.exp()?;
        let weights = shifted.broadcast_div(&shifted.sum_keepdim(1)?)?;
        (0..rows)
            .map(|j| {
                let w = weights.narrow(2, j, 1)?; // [t, n, 1]
                Ok(stacked.broadcast_mul(&w)?.sum(1)?)
            })
            .collect()
    }
}
