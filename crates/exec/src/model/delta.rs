//! Gated DeltaNet and the other delta-rule mixers.

use super::*;

impl Model {
    /// Gated DeltaNet: Q, K, V, z, β₀ and α₀ from the input projections, the convolution over
    /// Q, K and V through the layer's window, L2-normed Q and K, the delta rule through the
    /// layer's memory, the per-head norm gated by SiLU(z), projected back.
    pub(super) fn delta_net(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self
            .spec
            .delta()
            .expect("a Gated DeltaNet layer has its settings");
        let t = x.dim(0)?;
        let (kh, vh, dk, dv) = (
            s.key_heads as usize,
            s.value_heads as usize,
            s.key_dim as usize,
            s.value_dim as usize,
        );
        let (keys, values, conv_dim, r) = (kh * dk, vh * dv, s.conv_dim() as usize, vh / kh);
        // Per layout: U = [Q | K | V] before the convolution, the output gate before its
        // activation, β before its sigmoid, and the decay's step (α per head, or F per key
        // channel).
        let (u, gate, beta, step) = match s.store {
            DeltaStore::Grouped => {
                // Per key head: q, k, its value heads' v, their z; and their β, then their α.
                let p =
                    self.proj(x, Role::SsmIn, b, false)?
                        .reshape((t, kh, 2 * dk + 2 * r * dv))?;
                let part = |at: usize, len: usize| -> R<Tensor> {
                    p.narrow(2, at, len)?.contiguous()?.reshape((t, kh * len))
                };
                let ba = self
                    .proj(x, Role::SsmBa, b, false)?
                    .reshape((t, kh, 2 * r))?;
                let half = |at: usize| -> R<Tensor> {
                    ba.narrow(2, at, r)?.contiguous()?.reshape((t, vh))
                };
                let qkv = Tensor::cat(&[part(0, dk)?, part(dk, dk)?, part(2 * dk, r * dv)?], 1)?;
                (qkv, part(2 * dk + r * dv, r * dv)?, half(0)?, half(r)?)
            }
            DeltaStore::Separate => (
                self.proj(x, Role::SsmIn, b, false)?,
                self.proj(x, Role::SsmZ, b, false)?,
                self.proj(x, Role::SsmBeta, b, false)?,
                self.proj(x, Role::SsmAlpha, b, false)?,
            ),
            DeltaStore::Fused => {
                // One projection: q | k | v, then z, β and α.
                let p = self.proj(x, Role::SsmIn, b, false)?;
                (
                    p.narrow(1, 0, conv_dim)?,
                    p.narrow(1, conv_dim, values)?,
                    p.narrow(1, conv_dim + values, vh)?,
                    p.narrow(1, conv_dim + values + vh, vh)?,
                )
            }
            DeltaStore::Olmo => (
                Tensor::cat(
                    &[
                        self.proj(x, Role::SsmQ, b, false)?,
                        self.proj(x, Role::SsmK, b, false)?,
                        self.proj(x, Role::SsmV, b, false)?,
                    ],
                    1,
                )?,
                self.proj(x, Role::SsmZ, b, false)?,
                self.proj(x, Role::SsmBeta, b, false)?,
                self.proj(x, Role::SsmAlpha, b, false)?,
            ),
            DeltaStore::Kimi | DeltaStore::Bailing => {
                // Kimi's gates through a rank-d_k latent, Ling's straight from the input.
                let low_rank = |down: Role, up: Role| -> Res<Tensor> {
                    if s.store == DeltaStore::Bailing {
                        return self.proj(x, up, b, false);
                    }
                    let latent = self.proj(x, down, b, false)?;
                    self.proj(&latent, up, b, false)
                };
                let qkv = Tensor::cat(
                    &[
                        self.proj(x, Role::SsmQ, b, false)?,
                        self.proj(x, Role::SsmK, b, false)?,
                        self.proj(x, Role::SsmV, b, false)?,
                    ],
                    1,
                )?;
                (
                    qkv,
                    low_rank(Role::SsmGA, Role::SsmGB)?,
                    self.proj(x, Role::SsmBeta, b, false)?,
                    low_rank(Role::SsmFA, Role::SsmFB)?,
                )
            }
        };
        let state = cache.ssm[b]
            .get_or_insert_with(|| SsmState::delta(s.conv_kernel as usize, conv_dim, vh, dk, dv));
        let w = if s.split_qkv() {
            // One convolution over the three, their weights side by side.
            [Role::SsmConvQ, Role::SsmConvK, Role::SsmConvV]
                .into_iter()
                .map(|role| Ok(vec(self.w(role, Some(b))?)?))
                .collect::<Res<Vec<_>>>()?
                .concat()
        } else {
            vec(self.w(Role::SsmConv, Some(b))?)?
        };
        let conv = crate::ssm::causal_conv(&vec(&u)?, &mut state.conv, &w, None, conv_dim);
        let conv = Tensor::from_vec(conv, (t, conv_dim), &Device::Cpu)?.silu()?;
        self.keep(Some(b), Point::SsmConv, &conv);
        // Each head scaled to unit length (ε inside the sum of squares), queries by 1/√dk too.
        let l2 = |x: Tensor| -> R<Tensor> {
            let x = x.reshape((t, kh, dk))?;
            x.broadcast_div(&(x.sqr()?.sum_keepdim(D::Minus1)? + 1e-6)?.sqrt()?)?
                .reshape((t, keys))
        };
        let q = l2(conv.narrow(1, 0, keys)?)?.affine(1.0 / (dk as f64).sqrt(), 0.0)?;
        let k = l2(conv.narrow(1, keys, keys)?)?;
        let v = conv.narrow(1, 2 * keys, values)?;
        let beta = sigmoid(&beta)?.affine(s.beta_scale, 0.0)?;
        // −exp(A_log) · softplus(step + b_dt): per head, or per key channel at its head's rate;
        // or bounded, floor · σ(exp(A_log) · (step + b_dt)) (Ling's).
        let rate: Tensor = self.w(Role::SsmALog, Some(b))?.exp()?;
        let step = step.broadcast_add(self.w(Role::SsmDtBias, Some(b))?)?;
        let g = if s.channel_decay() {
            let scaled = step
                .reshape((t, vh, dk))?
                .broadcast_mul(&rate.reshape((1, vh, 1))?)?
                .reshape((t, vh * dk))?;
            match s.gate_floor {
                Some(floor) => sigmoid(&scaled)?.affine(floor, 0.0)?,
                None => softplus(&step)?
                    .reshape((t, vh, dk))?
                    .broadcast_mul(&rate.neg()?.reshape((1, vh, 1))?)?
                    .reshape((t, vh * dk))?,
            }
        } else {
            softplus(&step)?.broadcast_mul(&rate.neg()?)?
        };
        self.keep(Some(b), Point::DeltaDecay, &g);
        let dims = crate::ssm::DeltaDims {
            key_heads: kh,
            value_heads: vh,
            key_dim: dk,
            value_dim: dv,
            channel_decay: s.channel_decay(),
        };
        let (q, k, v, g, beta) = (vec(&q)?, vec(&k)?, vec(&v)?, vec(&g)?, vec(&beta)?);
        // A prompt chunk by chunk, as transformers computes one; a decoded token through the rule.
        let mem = &mut state.memory;
        let o = match (t > 1, s.channel_decay()) {
            (true, false) => {
                crate::ssm::delta_rule_chunked(&q, &k, &v, &g, &beta, mem, dims, SSD_CHUNK)?
            }
            (true, true) => crate::ssm::delta_rule_chunked_channels(
                &q, &k, &v, &g, &beta, mem, dims, SSD_CHUNK,
            )?,
            (false, _) => crate::ssm::delta_rule(&q, &k, &v, &g, &beta, mem, dims),
        };
        if self.capturing() {
            let m: Vec<f32> = state.memory.iter().map(|&x| x as f32).collect();
            let m = Tensor::from_vec(m, (vh * dk, dv), &Device::Cpu)?;
            self.keep(Some(b), Point::SsmState, &m);
        }
        let o = Tensor::from_vec(o, (t, vh, dv), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o.reshape((t, values))?);
        // RMS-normed per head, scaled by the weight the heads share, gated by SiLU(z) (σ(G) in
        // Kimi's).
        let o = rms(&o, s.eps)?.broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?;
        let gate = gate.reshape((t, vh, dv))?;
        let gate = match s.store {
            _ if s.sigmoid_gate => sigmoid(&gate)?,
            DeltaStore::Grouped | DeltaStore::Separate | DeltaStore::Fused | DeltaStore::Olmo => {
                gate.silu()?
            }
            DeltaStore::Kimi | DeltaStore::Bailing => sigmoid(&gate)?,
        };
        let o = (o * gate)?.reshape((t, values))?;
        self.keep(Some(b), Point::SsmNorm, &o);
        self.proj(&o, Role::SsmOut, b, false)
    }
}
