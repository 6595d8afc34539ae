//! Sparse attention's indexers: A.X-K2's block index and DeepSeek's lightning indexer, each
//! choosing the keys a query reads.

use super::*;

impl Model {
    /// MiniMax-M3's lightning indexer: which cached keys each of the `t` new queries of each
    /// index head's group may attend to, [index heads, t, total] row-major. Its keys join the
    /// layer's index cache.
    pub(super) fn block_index(
        &self,
        x: &Tensor,
        bi: anatomy_core::spec::BlockIndex,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Vec<bool>> {
        let spec = &self.spec;
        let (t, ih, id) = (x.dim(0)?, bi.heads as usize, bi.head_dim as usize);
        let q = self
            .proj(x, Role::BlockIndexQ, b, false)?
            .reshape((t, ih, id))?
            .transpose(0, 1)?
            .contiguous()?;
        let q = self.norm(&q, Role::BlockIndexQNorm, Some(b))?;
        let k = self.proj(x, Role::BlockIndexK, b, false)?;
        let k = self
            .norm(&k, Role::BlockIndexKNorm, Some(b))?
            .reshape((1, t, id))?;
        // The attention's RoPE tables, over the first dims of each index head.
        let (q, k) = match &spec.position {
            Position::Rope(r) => {
                let dim = r.rotary_dim(spec.attn_at(b).head_dim) as usize;
                let (cos, sin) = rope::tables_for(r, self.span(b), dim, cache.pos, t)?;
                (
                    rope::rotate(&q, &cos, &sin, r.interleaved)?,
                    rope::rotate(&k, &cos, &sin, r.interleaved)?,
                )
            }
            Position::Learned
            | Position::Sinusoidal(_)
            | Position::Alibi(_)
            | Position::None
            | Position::Buckets(_) => (q, k),
        };
        self.keep(Some(b), Point::IndexQ, &q);
        let k = k.reshape((t, id))?;
        self.keep(Some(b), Point::IndexK, &k);
        let k = cache.index_keys(b, k)?;
        let total = k.dim(0)?;
        // [ih, t, total]: every index head's queries against every cached key.
        let scores: Vec<f32> = q
            .matmul(
                &k.t()?
                    .contiguous()?
                    .broadcast_as((ih, id, total))?
                    .contiguous()?,
            )?
            .flatten_all()?
            .to_vec1()?;
        let block = bi.block as usize;
        let blocks = total.div_ceil(block);
        let mut selected = vec![false; ih * t * total];
        let mut best = vec![f32::NEG_INFINITY; blocks];
        for h in 0..ih {
            for i in 0..t {
                let qpos = cache.pos + i;
                let row = &scores[(h * t + i) * total..][..total];
                best.fill(f32::NEG_INFINITY);
                for (s, &v) in row.iter().enumerate().take(qpos + 1) {
                    best[s / block] = best[s / block].max(v);
                }
                // The query's latest blocks always win a place.
                for l in 0..bi.local as usize {
                    best[(qpos / block).saturating_sub(l)] = f32::INFINITY;
                }
                // The top-k blocks by score, best first; a block with no visible key never.
                let mut order: Vec<usize> = (0..blocks)
                    .filter(|&j| best[j] > f32::NEG_INFINITY)
                    .collect();
                order.sort_by(|&a, &b| best[b].total_cmp(&best[a]).then(a.cmp(&b)));
                order.truncate(bi.top_k as usize);
                let keep = &mut selected[(h * t + i) * total..][..total];
                for j in order {
                    let end = ((j + 1) * block).min(qpos + 1);
                    keep[j * block..end].fill(true);
                }
            }
        }
        if self.capturing() {
            let s = Tensor::from_vec(scores, (ih, t, total), &Device::Cpu)?;
            self.keep_selection(b, s, &selected, (ih, t, total))?;
        }
        Ok(selected)
    }

    /// An indexer's scores and the keys it kept, as the op view shows them: the mask 0 where a
    /// key was kept, −∞ elsewhere.
    pub(super) fn keep_selection(
        &self,
        b: usize,
        scores: Tensor,
        selected: &[bool],
        shape: impl Into<candle_core::Shape>,
    ) -> Res<()> {
        self.keep(Some(b), Point::IndexScores, &scores);
        let mask = selected
            .iter()
            .map(|&s| if s { 0.0 } else { f32::NEG_INFINITY })
            .collect();
        self.keep(
            Some(b),
            Point::IndexMask,
            &Tensor::from_vec(mask, shape, &Device::Cpu)?,
        );
        Ok(())
    }

    /// DeepSeek sparse attention's indexer: which cached keys each of the `t` new queries may
    /// attend to, [t, total] row-major. Its keys join the layer's indexer cache.
    pub(super) fn index(
        &self,
        x: &Tensor,
        q_latent: &Tensor,
        ix: &Indexer,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Vec<bool>> {
        let Position::Rope(r) = &self.spec.position else {
            unreachable!("MLA has RoPE")
        };
        let m = self.spec.attn_at(b).mla.as_ref().expect("MLA");
        let (t, ih, id) = (x.dim(0)?, ix.heads as usize, ix.head_dim as usize);
        let rd = m.qk_rope_head_dim as usize;
        let (cos, sin) = rope::tables_for(
            r,
            self.span(b),
            r.rotary_dim(rd as u64) as usize,
            cache.pos,
            t,
        )?;
        // The indexer pairs dims its own way, whatever the attention does.
        let q = self
            .proj(q_latent, Role::IndexQ, b, false)?
            .reshape((t, ih, id))?
            .transpose(0, 1)?
            .contiguous()?;
        // HY v4's indexer rotates the last rd dims of each head, V3.2's the first.
        let rotate = |x: &Tensor| -> Res<Tensor> {
            if !ix.rope_last {
                return Ok(rope::rotate(x, &cos, &sin, ix.interleaved)?);
            }
            let pass = id - rd;
            let rot = x.narrow(2, pass, rd)?.contiguous()?;
            let rot = rope::rotate(&rot, &cos, &sin, ix.interleaved)?;
            Ok(Tensor::cat(&[&x.narrow(2, 0, pass)?, &rot], 2)?)
        };
        let q = rotate(&q)?; // [ih, t, id]
        self.keep(Some(b), Point::IndexQ, &q);
        let k = self.proj(x, Role::IndexK, b, false)?;
        let k = norm(
            &k,
            Some(self.w(Role::IndexKNorm, Some(b))?),
            Some(self.bias(Role::IndexKNorm, Some(b))?),
            &ix.key_norm(),
        )?;
        let k = rotate(&k.reshape((1, t, id))?)?.reshape((t, id))?;
        self.keep(Some(b), Point::IndexK, &k);
        let k = cache.index_keys(b, k)?;
        let total = k.dim(0)?;
        let weights = self.proj(x, Role::IndexWeights, b, false)?;
        self.keep(Some(b), Point::IndexWeights, &weights);
        let weights: Vec<f32> = weights
            .affine((ih as f64).powf(-0.5), 0.0)?
            .flatten_all()?
            .to_vec1()?;
        // [ih, t, total]: every query head against every cached key.
        let dots: Vec<f32> = q
            .matmul(
                &k.t()?
                    .contiguous()?
                    .broadcast_as((ih, id, total))?
                    .contiguous()?,
            )?
            .affine((id as f64).powf(-0.5), 0.0)?
            .relu()?
            .flatten_all()?
            .to_vec1()?;
        let mut scores = vec![f32::NEG_INFINITY; t * total];
        let mut selected = vec![false; t * total];
        let top_k = ix.top_k as usize;
        for i in 0..t {
            let qpos = cache.pos + i;
            let row = &mut scores[i * total..][..total];
            for (j, s) in row.iter_mut().enumerate().take(qpos + 1) {
                *s = (0..ih)
                    .map(|h| weights[i * ih + h] * dots[(h * t + i) * total + j])
                    .sum();
            }
            // Best first. transformers leaves the order of equal scores to torch's top-k, which
            // promises none; here the later key wins. (ReLU makes exact zeros likely with few
            // indexer heads: the toy fixture has enough heads that no tie falls at the cut.)
            let mut order: Vec<usize> = (0..=qpos).collect();
            if order.len() > top_k {
                order.select_nth_unstable_by(top_k - 1, |&a, &b| {
                    row[b]
                        .partial_cmp(&row[a])
                        .unwrap_or(std::cmp::Ordering::Equal)
                        .then(b.cmp(&a))
                });
                order.truncate(top_k);
            }
            for j in order {
                selected[i * total + j] = true;
            }
        }
        let s = Tensor::from_vec(scores, (t, total), &Device::Cpu)?;
        self.keep_selection(b, s, &selected, (t, total))?;
        Ok(selected)
    }
}
