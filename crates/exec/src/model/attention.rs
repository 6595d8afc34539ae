//! Attention of every kind: the projections, norms and rotations of Q, K and V, multi-head latent
//! attention, the sparse indexers, mixtures of heads, the scores and their masks over the cache,
//! and the output projection.

use super::*;

impl Model {
    /// Queries `q` [heads, t, d] of layer `b`, from position `pos`, scaled up with position where
    /// the attention's query scale applies to the layer (Llama 4, Ministral 3, Mistral 4).
    pub(super) fn query_scale(&self, q: Tensor, b: usize, pos: usize) -> Res<Tensor> {
        let Some(qs) = self
            .spec
            .attn_at(b)
            .query_scale
            .filter(|qs| qs.applies(&self.spec.plan[b]))
        else {
            return Ok(q);
        };
        let t = q.dim(1)?;
        let f: Vec<f32> = (pos..pos + t).map(|p| qs.at(p as u64) as f32).collect();
        let q = q.broadcast_mul(&Tensor::from_vec(f, (1, t, 1), &Device::Cpu)?)?;
        self.keep(Some(b), Point::QScaled, &q);
        Ok(q)
    }

    pub(super) fn span(&self, b: usize) -> AttnSpan {
        self.spec
            .attn_span(b as u64)
            .expect("attention runs in attention layers only")
    }

    pub(super) fn attention(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        self.attention_from(x, None, b, cache)
    }

    /// Attention layer `b` on `x`, its K and V projected from `kv` where the layer gives them
    /// inputs of their own (Inkling 2's full layers).
    pub(super) fn attention_from(
        &self,
        x: &Tensor,
        kv: Option<(&Tensor, &Tensor)>,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        if self.spec.attn_at(b).mla.is_some() {
            return self.mla(x, b, cache);
        }
        if self.spec.attn.v4.is_some() {
            return self.v4_attention(x, b, cache);
        }
        let (xk, xv) = kv.unwrap_or((x, x));
        let spec = &self.spec;
        let a = spec.attn_at(b);
        let (t, h, kv, hd, vd) = (
            x.dim(0)?,
            a.heads as usize,
            a.kv_heads as usize,
            a.head_dim as usize,
            a.v_head_dim as usize,
        );
        // A mixture of attention heads: the queries from each token's chosen experts, K and V
        // the two halves of one projection.
        let moa = match a.moa {
            Some(m) => Some(self.moa_route(x, b, m)?),
            None => None,
        };
        // An output gate stored with the queries, not in a tensor of its own.
        let mut q_gate = None;
        let cca = match a.cca {
            Some(c) => Some(self.cca(x, b, c, cache)?),
            None => None,
        };
        let (mut q, k, v) = match (&moa, a.qkv) {
            _ if cca.is_some() => cca.expect("made above"),
            (Some(choices), _) => {
                let kvp = self.proj(x, Role::Kv, b, false)?;
                (
                    self.moa_queries(x, b, choices, kv * hd)?,
                    kvp.narrow(1, 0, kv * hd)?,
                    kvp.narrow(1, kv * hd, kv * vd)?,
                )
            }
            // A layer that reuses an earlier layer's keys and values projects neither.
            (None, Qkv::Separate) if a.shares_kv => {
                let none = Tensor::zeros((t, 0), DType::F32, &Device::Cpu)?;
                (self.proj(x, Role::Q, b, a.qkv_bias)?, none.clone(), none)
            }
            // Keys that are the values too (Gemma 4): V is K as projected.
            (None, Qkv::Separate) if a.v_from_k => {
                let k = self.proj(x, Role::K, b, a.qkv_bias)?;
                (self.proj(x, Role::Q, b, a.qkv_bias)?, k.clone(), k)
            }
            (None, Qkv::Separate) => (
                self.adapted(x, Role::Q, b, a.qkv_bias)?,
                self.adapted(xk, Role::K, b, a.qkv_bias)?,
                self.adapted(xv, Role::V, b, a.qkv_bias)?,
            ),
            (None, Qkv::Stacked) => {
                let qkv = self.proj(x, Role::Qkv, b, a.qkv_bias)?;
                // An output gate stored first (HRM): a gate per query feature, then the queries.
                let g = if a.out_gate.is_some_and(|g| g.before_qkv()) {
                    q_gate = Some(qkv.narrow(1, 0, h * hd)?);
                    h * hd
                } else {
                    0
                };
                (
                    qkv.narrow(1, g, h * hd)?,
                    qkv.narrow(1, g + h * hd, kv * hd)?,
                    qkv.narrow(1, g + (h + kv) * hd, kv * hd)?,
                )
            }
            (None, Qkv::Parts(parts)) => {
                // Each part: its share of the queries, of the values, of the keys.
                let parts = parts as usize;
                let share = h * hd / parts;
                let qkv = self
                    .proj(x, Role::Qkv, b, a.qkv_bias)?
                    .reshape((t, parts, 3, share))?;
                let part = |which: usize| -> R<Tensor> {
                    qkv.narrow(2, which, 1)?
                        .contiguous()?
                        .reshape((t, parts * share))
                };
                (part(0)?, part(2)?, part(1)?)
            }
            (None, Qkv::Grouped) => {
                // Per K/V group: its g query heads, its key, its value.
                let g = h / kv;
                let qkv = self
                    .proj(x, Role::Qkv, b, a.qkv_bias)?
                    .reshape((t, kv, g + 2, hd))?;
                let part = |from: usize, n: usize, heads: usize| -> R<Tensor> {
                    qkv.narrow(2, from, n)?
                        .contiguous()?
                        .reshape((t, heads * hd))
                };
                (part(0, g, h)?, part(g, 1, kv)?, part(g + 1, 1, kv)?)
            }
        };
        // Inkling: K and V each through a residual convolution over time, once projected.
        let (k, v) = match a.kv_conv {
            // Inkling 2's full layers: taps of each token's own beside the stored ones.
            Some(c) if c.dynamic => {
                let kvh = a.kv_heads as usize;
                (
                    self.dynamic_conv(
                        &k,
                        xk,
                        (Role::KConvStatic, Role::KConvDyn),
                        kvh,
                        b,
                        CONV_K,
                        cache,
                    )?,
                    self.dynamic_conv(
                        &v,
                        xv,
                        (Role::VConvStatic, Role::VConvDyn),
                        kvh,
                        b,
                        CONV_V,
                        cache,
                    )?,
                )
            }
            Some(c) => (
                self.residual_conv_of(&k, Role::KConv, b, CONV_K, c.conv.scaled, cache)?,
                self.residual_conv_of(&v, Role::VConv, b, CONV_V, c.conv.scaled, cache)?,
            ),
            None => (k, v),
        };
        let mut k = k;
        // An output gate stored in the query projection: each head's queries, then its gates.
        if a.out_gate.is_some_and(|g| g.in_query()) {
            let both = q.reshape((t, h, 2, hd))?;
            q_gate = Some(both.narrow(2, 1, 1)?.contiguous()?.reshape((t, h * hd))?);
            q = both.narrow(2, 0, 1)?.contiguous()?.reshape((t, h * hd))?;
        }
        self.keep(Some(b), Point::QProj, &q);
        self.keep(Some(b), Point::KProj, &k);
        if a.qk_norm == QkNorm::Full {
            q = self.norm(&q, Role::QNorm, Some(b))?;
            k = self.norm(&k, Role::KNorm, Some(b))?;
            self.keep(Some(b), Point::QNorm, &q);
            self.keep(Some(b), Point::KNorm, &k);
        }
        let (q, k, v) = match a.clip_qkv {
            Some(c) => (q.clamp(-c, c)?, k.clamp(-c, c)?, v.clamp(-c, c)?),
            None => (q, k, v),
        };
        let heads = |t_: Tensor, n: usize, d: usize| -> R<Tensor> {
            t_.reshape((t, n, d))?.transpose(0, 1)?.contiguous()
        };
        let mut q = match a.moa {
            // [t, slot j, group i, d] → heads in group order, i·top_k + j, so that each group's
            // K/V head serves its top_k query heads.
            Some(m) => q
                .reshape((t, m.top_k as usize, kv, hd))?
                .permute((2, 1, 0, 3))?
                .reshape((h, t, hd))?
                .contiguous()?,
            None => heads(q, h, hd)?,
        };
        let shared = a.shares_kv;
        let (mut k, mut v) = if shared {
            (k, v)
        } else {
            (heads(k, kv, hd)?, heads(v, kv, vd)?)
        };
        if a.v_scale != 1.0 {
            v = v.affine(a.v_scale, 0.0)?;
        }
        if a.v_norm && !shared {
            v = rms(&v, spec.norm.eps)?;
            self.keep(Some(b), Point::VNorm, &v);
        }
        if a.qk_norm == QkNorm::Unit {
            q = unit(&q, spec.norm.eps)?;
            self.keep(Some(b), Point::QNorm, &q);
            if !shared {
                k = unit(&k, spec.norm.eps)?;
                self.keep(Some(b), Point::KNorm, &k);
            }
        }
        if a.qk_norm == QkNorm::HeadWeights {
            // LayerNorm without a shift, each head scaled by its own row of [heads, head_dim].
            let layer = Norm {
                kind: NormKind::Layer { bias: false },
                unit_offset: false,
                ..spec.norm.clone()
            };
            let wq = self.head_weights(Role::QNorm, b, h)?.unsqueeze(1)?;
            q = norm(&q, Some(&wq), None, &layer)?;
            self.keep(Some(b), Point::QNorm, &q);
            if !shared {
                let wk = self.head_weights(Role::KNorm, b, kv)?.unsqueeze(1)?;
                k = norm(&k, Some(&wk), None, &layer)?;
                self.keep(Some(b), Point::KNorm, &k);
            }
        }
        if a.qk_norm == QkNorm::PerHead {
            q = self.norm(&q, Role::QNorm, Some(b))?;
            self.keep(Some(b), Point::QNorm, &q);
            if !shared {
                k = self.norm(&k, Role::KNorm, Some(b))?;
                self.keep(Some(b), Point::KNorm, &k);
            }
        }
        // Inkling 2: Q (times its learned scale) and K scaled down to an L2 norm where longer.
        if let Some(c) = a.l2_clip {
            let s = self.w(Role::QClipScale, Some(b))?.unsqueeze(1)?;
            q = l2_clip(&q.broadcast_mul(&s)?, c)?;
            self.keep(Some(b), Point::QNorm, &q);
            k = l2_clip(&k, c)?;
            self.keep(Some(b), Point::KNorm, &k);
        }
        let plan = &spec.plan[b];
        if let (Position::Rope(r), true) = (&spec.position, plan.rope) {
            let dim = r.rotary_dim_for(self.span(b), a.head_dim) as usize;
            // M-RoPE: each token's pairs turn by its time, row or column.
            let mrope = spec.image.as_ref().and_then(|i| i.encoder.mrope());
            let (cos, sin) = match (self.positions.borrow().as_deref(), mrope) {
                (Some(at), Some(m)) => {
                    rope::mrope_tables(r.freqs(self.span(b)), dim, at, &m.axes(dim / 2))?
                }
                (None, _) | (_, None) => rope::tables_for(r, self.span(b), dim, cache.pos, t)?,
            };
            q = rope::rotate(&q, &cos, &sin, r.interleaved)?;
            self.keep(Some(b), Point::Q, &q);
            if !shared {
                k = rope::rotate(&k, &cos, &sin, r.interleaved)?;
                self.keep(Some(b), Point::K, &k);
            }
            if a.qk_norm == QkNorm::L2 {
                q = rms(&q, spec.norm.eps)?;
                k = rms(&k, spec.norm.eps)?;
                self.keep(Some(b), Point::QL2, &q);
                self.keep(Some(b), Point::KL2, &k);
            }
        }
        if a.qk_norm == QkNorm::PerHeadPostRope {
            q = self.norm(&q, Role::QNorm, Some(b))?;
            k = self.norm(&k, Role::KNorm, Some(b))?;
            self.keep(Some(b), Point::QNorm, &q);
            self.keep(Some(b), Point::KNorm, &k);
        }
        q = self.query_scale(q, b, cache.pos)?;
        // nGPT: each query feature times its learned scale, squared.
        if let Some(g) = spec.ngpt {
            let s = self
                .w(Role::NgptQueryScale, Some(b))?
                .affine(g.query_factor(a.head_dim), 0.0)?
                .sqr()?
                .reshape((a.heads as usize, 1, a.head_dim as usize))?;
            q = q.broadcast_mul(&s)?;
            self.keep(Some(b), Point::QGain, &q);
        }
        // Inkling 2's sink logits, projected from the input, for this layer's attend.
        if a.token_sinks {
            let s = self
                .proj(x, Role::TokenSinks, b, false)?
                .t()?
                .contiguous()?;
            self.keep(Some(b), Point::Sinks, &s);
            *self.token_sinks.borrow_mut() = Some(s.flatten_all()?.to_vec1()?);
        }
        // Inkling's relative logits, for this layer's attend.
        if let Some(rl) = a.rel_logits {
            let bias = self.rel_logits(x, b, rl, a.query_scale, cache.pos)?;
            *self.rel_bias.borrow_mut() = Some(bias);
        }
        // The output gate, σ(x · W_g) (AFMoE) or softplus (Laguna), multiplies the heads
        // before the output projection, feature by feature or head by head.
        let gate = self.out_gate(x, b, q_gate, vd)?;
        // Kolibri 1.1: the indexer reads the raw keys of K/V head 0 (this layer's, or those of
        // the layer it shares with); the layer attends over its keys and values rounded to NVFP4.
        let pool = match &a.pool_index {
            Some(p) => {
                let raw = if shared {
                    cache.index_k[spec.kv_source(b)]
                        .clone()
                        .expect("the layer whose keys are read has run this step")
                } else {
                    let raw = cache.index_keys(b, k.get(0)?)?;
                    k = pool_index::nvfp4_tensor(&k)?;
                    v = pool_index::nvfp4_tensor(&v)?;
                    self.keep(Some(b), Point::KRounded, &k);
                    self.keep(Some(b), Point::VRounded, &v);
                    raw
                };
                Some(self.pool_select(&q, &raw, p, b, cache)?)
            }
            None => None,
        };
        let chosen = match (a.block_index, a.qsa, pool) {
            (Some(bi), _, _) => Some((self.block_index(x, bi, b, cache)?, bi.heads as usize)),
            (None, Some(q), _) => Some((self.qsa(x, q, b, cache)?, 1)),
            (None, None, Some(p)) => Some((p, 1)),
            (None, None, None) => None,
        };
        let selected = chosen
            .as_ref()
            .map(|(keys, groups)| crate::attention::Selected {
                keys,
                groups: *groups,
            });
        let new = (!shared).then_some((k, v));
        let o = self.attend(q, new, b, cache, selected, gate.as_ref())?;
        match &moa {
            Some(choices) => self.moa_out(&o, b, choices),
            None => self.out_proj(o, b),
        }
    }

    /// The output gate of attention layer `b`, over each head's `vd` features: from the query
    /// projection (`q_gate`) or a projection of its own; `None` where it has none.
    pub(super) fn out_gate(
        &self,
        x: &Tensor,
        b: usize,
        q_gate: Option<Tensor>,
        vd: usize,
    ) -> Res<Option<Tensor>> {
        let Some(og) = self.spec.attn_at(b).out_gate else {
            return Ok(None);
        };
        let mut g = match q_gate {
            Some(g) => g,
            None => self.proj(x, Role::AttnGate, b, false)?,
        };
        if og.bias {
            // One bias per head (Beam), shared by the head's features.
            let bias = self.w(Role::AttnGateBias, Some(b))?;
            let bias = if og.per_head {
                bias.clone()
            } else {
                let h = bias.dim(0)?;
                bias.unsqueeze(1)?
                    .broadcast_as((h, vd))?
                    .contiguous()?
                    .reshape(h * vd)?
            };
            g = g.broadcast_add(&bias)?;
        }
        if let Some(n) = self.spec.ngpt {
            let s = self.w(Role::NgptGateScale, Some(b))?;
            g = g.broadcast_mul(&s.affine(n.gate_factor(self.spec.hidden), 0.0)?.sqr()?)?;
        }
        self.keep(Some(b), Point::AttnGate, &g);
        let g = if og.softplus {
            softplus(&g)?
        } else {
            sigmoid(&g)?
        };
        Ok(Some(if og.per_head {
            // Each head's gate over its features: [t, h] → [t, h · dv].
            let (t, hh) = g.dims2()?;
            g.unsqueeze(2)?
                .broadcast_as((t, hh, vd))?
                .contiguous()?
                .reshape((t, hh * vd))?
        } else {
            g
        }))
    }

    /// The part every attention shares: append K and V to the cache, score every query against
    /// every cached key (scaled, softcapped and masked as the layer says, with the head's sink
    /// where there is one), mix the values and stack the heads, [t, heads · dv].
    /// q: [H, T, d_qk]; k: [KV, T, d_qk]; v: [KV, T, d_v].
    /// Each query sees only the keys `selected` marks, when given (DeepSeek sparse attention's
    /// [t, total], MiniMax-M3's [groups, t, total]); the heads are multiplied by `gate`
    /// ([t, H d_v]) when given.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attend(
        &self,
        q: Tensor,
        new: Option<(Tensor, Tensor)>,
        b: usize,
        cache: &mut Cache,
        selected: Option<crate::attention::Selected>,
        gate: Option<&Tensor>,
    ) -> Res<Tensor> {
        let a = self.spec.attn_at(b);
        let (h, t, _) = q.dims3()?;
        let flat = |t: &Tensor| t.flatten_all().and_then(|t| t.to_vec1::<f32>());
        // This layer's new keys and values join its cache; a layer that shares reads the cache
        // of the layer it shares with, which has run this step already.
        let from = match new {
            Some((k, v)) => {
                let ((kv, _, d), dv) = (k.dims3()?, v.dim(2)?);
                let held = cache.kv[b].get_or_insert_with(|| crate::kv::Kv::new(kv, d, dv));
                held.append(&flat(&k)?, &flat(&v)?, t, cache.room);
                b
            }
            None => self.spec.kv_source(b),
        };
        let held = cache.kv[from]
            .as_ref()
            .expect("the layer whose keys are read has run this step");
        let (kv, _, dv) = held.shape();
        self.keep(Some(b), Point::Q, &q);
        if self.capturing() {
            self.keep(Some(b), Point::K, &held.keys()?);
            self.keep(Some(b), Point::V, &held.values()?);
        }
        let (total, (k_all, v_all)) = (held.len(), held.buffers());
        // The mechanisms that rework the values read them as a tensor of their own.
        let reworked = if a.differential || a.dynamic_mask.is_some() {
            Some(held.values()?)
        } else {
            None
        };
        // Differential attention: K/V head j offers the values of heads j mod KV/2 and
        // KV/2 + j mod KV/2 side by side, so each head's output is both mixes.
        let reworked = match (a.differential, reworked) {
            (true, Some(v)) => {
                let half = kv / 2;
                let pick = |off: usize| -> Res<Tensor> {
                    let idx: Vec<u32> = (0..kv).map(|j| (off + j % half) as u32).collect();
                    Ok(v.index_select(&Tensor::new(idx, &Device::Cpu)?, 0)?)
                };
                Some(Tensor::cat(&[pick(0)?, pick(half)?], 2)?)
            }
            (_, v) => v,
        };
        let vd = reworked.as_ref().map_or(Ok(dv), |v| v.dim(2))?;
        let sinks: Option<Vec<f32>> = if a.sinks {
            let name = self.name(Role::Sinks, false, Some(b), None);
            Some(self.weights.get(&name)?.to_vec1()?)
        } else {
            None
        };
        // Inkling 2: each query's sink logits, [heads, t], projected from the attention's input.
        let token_sinks = self.token_sinks.borrow_mut().take();
        let alibi: Option<Vec<f32>> = match &self.spec.position {
            Position::Alibi(slopes) => Some(slopes.iter().map(|&m| m as f32).collect()),
            Position::Rope(_)
            | Position::Learned
            | Position::Sinusoidal(_)
            | Position::None
            | Position::Buckets(_) => None,
        };
        let pair_bias = self.pair_bias.borrow();
        let reach = self.reach.borrow();
        let rel_bias = self.rel_bias.borrow_mut().take();
        // Doge's dynamic mask: every cached key scored from the values of all K/V heads,
        // Δ = exp(A ⊙ softplus(W_dt · v + b)), [kv, total].
        let key_scores: Option<Vec<f32>> = match a.dynamic_mask {
            Some(_) => {
                let v = reworked
                    .as_ref()
                    .expect("the values, read above for the dynamic mask");
                let v_tok = v.transpose(0, 1)?.contiguous()?.reshape((total, kv * vd))?;
                let bias = if a.qkv_bias {
                    Some(self.bias(Role::DynDt, Some(b))?)
                } else {
                    None
                };
                let dt =
                    self.linear(&v_tok, &self.name(Role::DynDt, false, Some(b), None), bias)?;
                let delta = softplus(&dt)?
                    .broadcast_mul(self.w(Role::DynA, Some(b))?)?
                    .exp()?
                    .t()?
                    .contiguous()?;
                self.keep(Some(b), Point::KeyScores, &delta);
                Some(delta.flatten_all()?.to_vec1()?)
            }
            None => None,
        };
        // The cache's buffers as they are, or the keys beside values reworked above.
        let own = match &reworked {
            Some(v) => Some((flat(&held.keys()?)?, flat(v)?)),
            None => None,
        };
        let (k_read, v_read, stride) = match &own {
            Some((k, v)) => (&k[..], &v[..], total),
            None => (k_all, v_all, held.room()),
        };
        let qv = flat(&q)?;
        let heads = crate::attention::Heads {
            q: &qv,
            k: k_read,
            v: v_read,
            heads: h,
            kv_heads: kv,
            d: q.dim(2)?,
            dv: vd,
            start: cache.pos,
            stride,
        };
        let rule = crate::attention::Rule {
            scale: (a.scale_mult / a.scale_dim.sqrt()) as f32,
            softcap: a.softcap.map(|c| c as f32),
            span: self
                .spec
                .read_span(b as u64)
                .expect("attention runs in attention layers only"),
            key_scores: key_scores
                .as_deref()
                .zip(a.dynamic_mask)
                .map(|(scores, dm)| crate::attention::KeyScores {
                    scores,
                    total,
                    keep: dm.keep as usize,
                }),
            sinks: sinks.as_deref(),
            token_sinks: token_sinks.as_deref(),
            alibi: alibi.as_deref(),
            pair_bias: pair_bias
                .as_ref()
                .map(|(table, rows)| crate::attention::PairBias { table, rows }),
            rel_bias: rel_bias
                .as_ref()
                .map(|(table, extent)| crate::attention::RelBias {
                    table,
                    extent: *extent,
                }),
            selected,
            reach: reach.as_ref().map(|r| crate::attention::Reach {
                blocks: &r.blocks,
                within_span: r.within_span,
            }),
        };
        let done = crate::attention::attend(&heads, &rule, self.capturing());
        let cpu =
            |v: Vec<f32>, shape: (usize, usize, usize)| Tensor::from_vec(v, shape, &Device::Cpu);
        if let (Some(s), Some(p)) = (done.scores, done.probs) {
            self.keep(Some(b), Point::Scores, &cpu(s, (h, t, total))?);
            self.keep(Some(b), Point::Probs, &cpu(p, (h, t, total))?);
        }
        let mut o = Tensor::from_vec(done.out, (t, h * vd), &Device::Cpu)?;
        self.keep(Some(b), Point::Heads, &o);
        if a.differential {
            o = self.differential(&o, b, t, h, vd)?;
            self.keep(Some(b), Point::Differential, &o);
        }
        if let Some(g) = gate {
            o = (o * g)?;
        }
        if a.sub_norm {
            o = self.norm(&o, Role::AttnSubNorm, Some(b))?;
            self.keep(Some(b), Point::AttnSubNorm, &o);
        }
        Ok(o)
    }

    /// The heads ([t, heads · dv]) projected back to the hidden size.
    pub(super) fn out_proj(&self, o: Tensor, b: usize) -> Res<Tensor> {
        let a = self.spec.attn_at(b);
        let y = self.proj(&o, Role::O, b, a.o_bias)?;
        if a.o_bias_last && b + 1 == self.spec.layers as usize {
            let name = self.name(Role::DenseBias, false, Some(b), None);
            return Ok(y.broadcast_add(self.weights.get(&name)?)?);
        }
        Ok(y)
    }

    /// Differential attention's combination of the heads' outputs `o` ([t, h · dv], each head's
    /// dv = 2 · head_dim): the first half minus λ times the second, RMS-normed per pair without a
    /// weight and scaled by 1 − λ_init; [t, h · dv / 2].
    pub(super) fn differential(
        &self,
        o: &Tensor,
        b: usize,
        t: usize,
        h: usize,
        dv: usize,
    ) -> Res<Tensor> {
        let o = o.reshape((t, h, dv))?;
        let (first, second) = (o.narrow(1, 0, h / 2)?, o.narrow(1, h / 2, h / 2)?);
        let vec = |role| -> Res<Vec<f32>> {
            let name = self.name(role, false, Some(b), None);
            Ok(self.weights.get(&name)?.to_vec1()?)
        };
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f32>();
        let init = 0.8 - 0.6 * (-0.3 * b as f64).exp();
        let lambda = dot(&vec(Role::LambdaQ1)?, &vec(Role::LambdaK1)?).exp()
            - dot(&vec(Role::LambdaQ2)?, &vec(Role::LambdaK2)?).exp()
            + init as f32;
        let d = (first - (second * lambda as f64)?)?;
        let d = (rms(&d, self.spec.norm.eps)? * (1.0 - init))?;
        Ok(d.reshape((t, h * dv / 2))?)
    }
}

/// A residual convolution's inputs: the `past` carried (taps − 1 rows of x's width, zeros
/// before the first token) then `x`'s rows, [taps − 1 + t, c]; `past` keeps the last taps − 1
/// for the next step.
pub(super) fn carried(past: &mut Vec<f32>, x: &Tensor, taps: usize) -> Res<Vec<f32>> {
    let (t, c) = x.dims2()?;
    if past.len() != (taps - 1) * c {
        *past = vec![0.0; (taps - 1) * c];
    }
    let mut all = std::mem::take(past);
    all.extend(x.flatten_all()?.to_vec1::<f32>()?);
    *past = all[t * c..].to_vec();
    Ok(all)
}

/// Each row of `x` scaled down to L2 norm `c` where longer: x · min(1, c / (‖x‖ + 10⁻⁶)).
pub(super) fn l2_clip(x: &Tensor, c: f64) -> R<Tensor> {
    let norm = x.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?;
    let f = (norm + 1e-6)?
        .recip()?
        .affine(c, 0.0)?
        .clamp(f32::MIN, 1.0)?;
    x.broadcast_mul(&f)
}

/// `x` projected onto the unit sphere over its last dim (nGPT): length 1, not RMS 1.
pub(super) fn unit(x: &Tensor, eps: f64) -> R<Tensor> {
    x.broadcast_div(&(x.sqr()?.sum_keepdim(D::Minus1)? + eps)?.sqrt()?)
}

/// The pass's blocks of queries that see each other both ways: `crate::attention::Reach`,
/// owned.
pub(super) struct Blocks {
    pub(super) blocks: Vec<(usize, usize)>,
    pub(super) within_span: bool,
}
