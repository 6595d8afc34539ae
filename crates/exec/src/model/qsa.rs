//! Qwen4-Exp's query-selected sparse attention: block keys pooled and scored, the blocks each query
//! reads.

use super::*;

impl Model {
    /// Qwen4-Exp's QSA indexer: which cached keys each of the `t` new queries may attend to,
    /// [t, total] row-major, for every head. Its raw keys join the layer's index cache; each
    /// complete block of them is averaged, normed and rotated at its first position.
    pub(super) fn qsa(
        &self,
        x: &Tensor,
        q: anatomy_core::spec::Qsa,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Vec<bool>> {
        let spec = &self.spec;
        let (t, ih, id, r) = (
            x.dim(0)?,
            q.heads as usize,
            q.head_dim as usize,
            q.ratio as usize,
        );
        let qk = self.proj(x, Role::QsaQk, b, false)?;
        let qh = qk
            .narrow(1, 0, ih * id)?
            .reshape((t, ih, id))?
            .transpose(0, 1)?
            .contiguous()?;
        let qh = self.norm(&qh, Role::QsaQNorm, Some(b))?;
        let k = qk.narrow(1, ih * id, id)?.contiguous()?;
        self.keep(Some(b), Point::QsaK, &k);
        let keys = cache.index_keys(b, k)?;
        let total = keys.dim(0)?;
        let complete = total / r;
        let pooled = keys
            .narrow(0, 0, complete * r)?
            .reshape((complete, r, id))?
            .mean(1)?;
        let pooled = self.norm(&pooled, Role::QsaKNorm, Some(b))?;
        // The attention's RoPE over the first dims: queries at their positions, block keys at
        // their blocks' first.
        let (qh, pooled) = match &spec.position {
            Position::Rope(rp) => {
                let dim = rp.rotary_dim(spec.attn_at(b).head_dim) as usize;
                let (cos, sin) = rope::tables_for(rp, self.span(b), dim, 0, total)?;
                let starts = Tensor::new(
                    (0..complete).map(|j| (j * r) as u32).collect::<Vec<_>>(),
                    &Device::Cpu,
                )?;
                let at = |c: &Tensor| c.index_select(&starts, 0);
                let now = |c: &Tensor| c.narrow(0, cache.pos, t);
                (
                    rope::rotate(&qh, &now(&cos)?, &now(&sin)?, rp.interleaved)?,
                    rope::rotate(
                        &pooled.reshape((1, complete, id))?,
                        &at(&cos)?,
                        &at(&sin)?,
                        rp.interleaved,
                    )?
                    .reshape((complete, id))?,
                )
            }
            Position::Learned
            | Position::Sinusoidal(_)
            | Position::Alibi(_)
            | Position::None
            | Position::Buckets(_) => (qh, pooled),
        };
        self.keep(Some(b), Point::QsaBlocks, &pooled);
        self.keep(Some(b), Point::IndexQ, &qh);
        // [t, complete]: Σ over the index heads of ReLU(q · k), scaled.
        let scores: Vec<f32> = qh
            .matmul(
                &pooled
                    .t()?
                    .contiguous()?
                    .broadcast_as((ih, id, complete))?
                    .contiguous()?,
            )?
            .relu()?
            .sum(0)?
            .affine(1.0 / (id as f64).sqrt(), 0.0)?
            .flatten_all()?
            .to_vec1()?;
        let mut selected = vec![false; t * total];
        for i in 0..t {
            let visible = cache.pos + i + 1;
            let blocks = visible / r;
            let row = &scores[i * complete..][..blocks];
            // The best blocks, ties to the earlier one.
            let mut order: Vec<usize> = (0..blocks).collect();
            order.sort_by(|&a, &b| row[b].total_cmp(&row[a]).then(a.cmp(&b)));
            order.truncate(q.blocks() as usize);
            let keep = &mut selected[i * total..][..total];
            for j in order {
                keep[j * r..(j + 1) * r].fill(true);
            }
            keep[blocks * r..visible].fill(true);
        }
        if self.capturing() {
            let s = Tensor::from_vec(scores, (t, complete), &Device::Cpu)?;
            self.keep_selection(b, s, &selected, (t, total))?;
        }
        Ok(selected)
    }
}
