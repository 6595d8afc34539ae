//! RecurrentGemma's RG-LRU mixer.

use super::*;

impl Model {
    /// Griffin's recurrent block: the gate branch; x projected and convolved; the RG-LRU's
    /// gates from block-diagonal projections, its decay and normalized input; the recurrence of
    /// one state per channel (reset at position 0); the gated output projected back.
    pub(super) fn rg_lru(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self
            .spec
            .rg_lru()
            .expect("an RG-LRU layer has its settings");
        let (t, w, h, bw) = (
            x.dim(0)?,
            s.width as usize,
            s.heads as usize,
            s.block() as usize,
        );
        let y = apply_act(s.act, &self.proj(x, Role::SsmZ, b, true)?)?;
        let u = self.proj(x, Role::SsmIn, b, true)?;
        let pos = cache.pos;
        let state =
            cache.ssm[b].get_or_insert_with(|| SsmState::new(s.conv_kernel as usize, w, w, 1, 1));
        let conv_bias = vec(self.bias(Role::SsmConv, Some(b))?)?;
        let cw = vec(self.w(Role::SsmConv, Some(b))?)?;
        let xc = crate::ssm::causal_conv(&vec(&u)?, &mut state.conv, &cw, Some(&conv_bias), w);
        let xc = Tensor::from_vec(xc, (t, w), &Device::Cpu)?;
        self.keep(Some(b), Point::ConvOut, &xc);
        // σ(x_k W_k + b_k) for each block k, W_k stored [in, out].
        let blocks = xc.reshape((t, h, bw))?.transpose(0, 1)?.contiguous()?;
        let gate = |role: Role| -> Res<Tensor> {
            let g = blocks.matmul(self.w(role, Some(b))?)?;
            let g = g.transpose(0, 1)?.reshape((t, w))?;
            Ok(sigmoid(
                &g.broadcast_add(&self.bias(role, Some(b))?.reshape(w)?)?,
            )?)
        };
        let (i, r) = (gate(Role::LruInGate)?, gate(Role::LruRecGate)?);
        let lam = softplus(self.w(Role::LruParam, Some(b))?)?;
        let log_a = r.broadcast_mul(&lam)?.affine(-8.0, 0.0)?;
        let (mut a, mut scale) = (
            vec(&log_a.exp()?)?,
            vec(&(log_a.affine(2.0, 0.0)?.exp()?.affine(-1.0, 1.0)?.sqrt()?))?,
        );
        if pos == 0 {
            // The state resets at position 0 and the input enters whole.
            a[..w].fill(0.0);
            scale[..w].fill(1.0);
        }
        let xn = vec(&(xc * i)?)?;
        let mut out = vec![0.0f32; t * w];
        for tok in 0..t {
            for c in 0..w {
                let at = tok * w + c;
                state.h[c] = a[at] * state.h[c] + xn[at] * scale[at];
                out[at] = state.h[c];
            }
        }
        if self.capturing() {
            let hs = Tensor::from_vec(state.h.clone(), (w, 1), &Device::Cpu)?;
            self.keep(Some(b), Point::SsmState, &hs);
        }
        let o = Tensor::from_vec(out, (t, w), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o);
        self.proj(&(o * y)?, Role::SsmOut, b, true)
    }
}
