//! xLSTM's mLSTM mixer.

use super::*;

impl Model {
    /// xLSTM's mLSTM: q, k, v and the output gate; each head's input and forget gates,
    /// soft-capped; then per token and head the stabilized matrix-memory update and read-out
    /// (`Spec::MLstm`), a LayerNorm per head, the gate and the output projection.
    pub(super) fn mlstm(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self.spec.mlstm().expect("an mLSTM layer has its settings");
        let (t, h) = (x.dim(0)?, s.heads as usize);
        let (dk, dv) = (s.qk_dim as usize / h, s.v_dim as usize / h);
        let cap = |v: Tensor| -> Res<Tensor> { Ok(softcap(&v, s.gate_cap)?) };
        let (qk, vd) = (s.qk_dim as usize, s.v_dim as usize);
        let (q, k, v, o, ig, fg) = if s.fused {
            // q | k | v | o from one projection; the input, then the forget gates from another.
            let p = self.proj(x, Role::SsmIn, b, s.bias)?;
            let g = cap(self.proj(x, Role::SsmBa, b, true)?)?;
            (
                p.narrow(1, 0, qk)?,
                p.narrow(1, qk, qk)?,
                p.narrow(1, 2 * qk, vd)?,
                p.narrow(1, 2 * qk + vd, vd)?,
                g.narrow(1, 0, h)?,
                g.narrow(1, h, h)?,
            )
        } else {
            (
                self.proj(x, Role::SsmQ, b, s.bias)?,
                self.proj(x, Role::SsmK, b, s.bias)?,
                self.proj(x, Role::SsmV, b, s.bias)?,
                self.proj(x, Role::SsmZ, b, s.bias)?,
                cap(self.proj(x, Role::SsmBeta, b, true)?)?,
                cap(self.proj(x, Role::SsmAlpha, b, true)?)?,
            )
        };
        let (q, k, v) = (vec(&q)?, vec(&k)?, vec(&v)?);
        let (ig, fg) = (vec(&ig)?, vec(&fg)?);
        // Per head: the memory [dk, dv], the normalizer [dk] and the stabilizer, in f64.
        let per = dk * dv + dk + 1;
        let state = cache.ssm[b].get_or_insert_with(|| {
            let mut st = SsmState::new(1, 0, 0, 0, 0);
            st.memory = vec![0.0; h * per];
            st
        });
        let dims = crate::ssm::MLstmDims {
            heads: h,
            key_dim: dk,
            value_dim: dv,
            eps: s.eps,
        };
        // A prompt chunk by chunk, a decoded token through the loop (the same sums).
        let out = if t > 1 {
            crate::ssm::mlstm_chunked(&q, &k, &v, &ig, &fg, &mut state.memory, dims, SSD_CHUNK)?
        } else {
            crate::ssm::mlstm(&q, &k, &v, &ig, &fg, &mut state.memory, dims)
        };
        let y = Tensor::from_vec(out, (t, h, dv), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &y.reshape((t, h * dv))?);
        // LayerNorm per head, then the norm's weight and its bias where it has one.
        let mean = y.mean_keepdim(2)?;
        let c = y.broadcast_sub(&mean)?;
        let var = c.sqr()?.mean_keepdim(2)?;
        let mut y = c
            .broadcast_div(&(var + s.norm_eps)?.sqrt()?)?
            .reshape((t, h * dv))?
            .broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?;
        if s.bias {
            y = y.broadcast_add(self.bias(Role::SsmNorm, Some(b))?)?;
        }
        self.keep(Some(b), Point::SsmNorm, &y);
        let g = (y * sigmoid(&o)?)?;
        self.proj(&g, Role::SsmOut, b, s.bias)
    }
}
