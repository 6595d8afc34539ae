//! Gated residual streams (Qwen4-Exp): each sublayer's input gated and averaged from the streams.

use super::*;

impl Model {
    /// A layer under gated streams (Qwen4-Exp): each sublayer reads the streams' gated mean,
    /// normed in the mix (no norm of its own), and its output joins every stream by that
    /// stream's injection weight.
    pub(super) fn gated_layer(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let with_ple;
        let x = match &self.spec.ngram_ple {
            Some(p) if p.layers.contains(b as u64) => {
                with_ple = (x + self.ngram_ple(x, p, b, cache)?)?;
                self.keep(Some(b), Point::NgramResid, &with_ple);
                &with_ple
            }
            _ => x,
        };
        let (h, inject) = self.gated_mix(x, GS_ATTN, Some(b))?;
        self.keep(Some(b), Point::HcAttnIn, &h);
        let a = match self.spec.plan[b].mixer {
            Mixer::Attention(_) => self.attention(&h, b, cache)?,
            Mixer::DeltaNet => self.delta_net(&h, b, cache)?,
            other @ (Mixer::Mamba2
            | Mixer::Mamba
            | Mixer::ShortConv
            | Mixer::Lightning
            | Mixer::RgLru
            | Mixer::Rwkv
            | Mixer::MLstm
            | Mixer::Parallel(_)
            | Mixer::None
            | Mixer::CrossAttention) => unreachable!(
                "gated streams are read with attention and Gated DeltaNet, not {other:?}"
            ),
        };
        self.keep(Some(b), Point::AttnOut, &a);
        let r = self.stream_add(x, &inject, &a)?;
        self.keep(Some(b), Point::ResidAttn, &r);
        let (h, inject) = self.gated_mix(&r, GS_FFN, Some(b))?;
        self.keep(Some(b), Point::HcFfnIn, &h);
        let m = self.moe(&h, b)?;
        self.keep(Some(b), Point::Combine, &m);
        let out = self.stream_add(&r, &inject, &m)?;
        self.keep(Some(b), Point::ResidFfn, &out);
        Ok(out)
    }

    /// The `n` streams `x` ([t, n · hidden]) each RMS-normed on its own, and all n · hidden
    /// features scaled by (1 + w), w the weight of `role` (Qwen4-Exp's grouped norms).
    pub(super) fn grouped_norm(
        &self,
        x: &Tensor,
        role: Role,
        b: Option<usize>,
        n: usize,
    ) -> Res<Tensor> {
        let (t, nd) = x.dims2()?;
        let xs = x.reshape((t, n, nd / n))?;
        let inv = (xs.sqr()?.mean_keepdim(2)? + self.spec.norm.eps)?
            .sqrt()?
            .recip()?;
        let w = (self.w(role, b)? + 1.0)?;
        Ok(xs
            .broadcast_mul(&inv)?
            .reshape((t, nd))?
            .broadcast_mul(&w)?)
    }

    /// A gated-stream mix of the streams `x` ([t, n · hidden]): each stream RMS-normed, all
    /// n · hidden features scaled by (1 + w); a = σ(W_up · silu(W_down · x̂ / n)); the mean over
    /// the streams of a ⊙ x̂ [t, hidden]; before a sublayer also the injection weights
    /// 2σ(W_inject · x̂ / n) [t, n].
    pub(super) fn gated_mix(
        &self,
        x: &Tensor,
        (norm, down, up, inject): GsRoles,
        b: Option<usize>,
    ) -> Res<(Tensor, Option<PostGates>)> {
        let g = self
            .spec
            .gated_streams()
            .expect("gated streams in the Spec");
        let (t, n, d) = (x.dim(0)?, g.streams as usize, self.spec.hidden as usize);
        let xn = self.grouped_norm(x, norm, b, n)?;
        let (normed, gates, injected) = match norm {
            Role::GsAttnNorm => (
                Point::GsAttnNorm,
                Point::GsAttnGates,
                Some(Point::GsAttnInject),
            ),
            Role::GsFfnNorm => (
                Point::GsFfnNorm,
                Point::GsFfnGates,
                Some(Point::GsFfnInject),
            ),
            Role::GsHeadNorm => (Point::GsHeadNorm, Point::GsHeadGates, None),
            other => unreachable!("{other:?} is not a gated-stream mix's norm"),
        };
        self.keep(b, normed, &xn);
        let k = 1.0 / n as f64;
        let low = self
            .linear(&xn, &self.name(down, false, b, None), None)?
            .affine(k, 0.0)?
            .silu()?;
        let a = sigmoid(&self.linear(&low, &self.name(up, false, b, None), None)?)?;
        self.keep(b, gates, &a);
        let h = (a * &xn)?.reshape((t, n, d))?.mean(1)?;
        let post = match inject {
            Some(role) => {
                let z = self
                    .linear(&xn, &self.name(role, false, b, None), None)?
                    .affine(k, 0.0)?;
                let g = sigmoid(&z)?.affine(2.0, 0.0)?;
                if let Some(p) = injected {
                    self.keep(b, p, &g);
                }
                Some((g, None))
            }
            None => None,
        };
        Ok((h, post))
    }
}
