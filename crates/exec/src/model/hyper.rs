//! Hyper-connections: a layer over several residual streams, mixed before and added after each
//! sublayer.

use super::*;

impl Model {
    /// A layer under hyper-connections: each sublayer reads the streams weighed into one, and
    /// its output joins every stream by that stream's post gate. Pre-norm, sequential.
    pub(super) fn hyper_layer(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let (h, post) = self.stream_mix(x, HC_ATTN, Some(b))?;
        self.keep(Some(b), Point::HcAttnIn, &h);
        let h = self.norm(&h, Role::AttnNorm, Some(b))?;
        self.keep(Some(b), Point::AttnNorm, &h);
        let a = self.attention(&h, b, cache)?;
        self.keep(Some(b), Point::AttnOut, &a);
        let r = self.stream_add(x, &post, &a)?;
        self.keep(Some(b), Point::ResidAttn, &r);
        let ffn = self.spec.plan[b].ffn;
        let (h, post) = self.stream_mix(&r, HC_FFN, Some(b))?;
        self.keep(Some(b), Point::HcFfnIn, &h);
        let h = self.norm(&h, Role::FfnNorm, Some(b))?;
        self.keep(Some(b), Point::FfnNorm, &h);
        let m = match ffn {
            Ffn::Moe => self.moe_by_ids(&h, &h, b, Some(&cache.ids))?,
            Ffn::Dense => self.mlp(&h, b)?,
            other @ (Ffn::ChannelMix | Ffn::DenseAndMoe | Ffn::Shortcut | Ffn::None) => {
                unreachable!("hyper-connections are read with MLPs and experts, not {other:?}")
            }
        };
        self.keep(
            Some(b),
            if ffn == Ffn::Moe {
                Point::Combine
            } else {
                Point::Down
            },
            &m,
        );
        let out = self.stream_add(&r, &post, &m)?;
        self.keep(Some(b), Point::ResidFfn, &out);
        Ok(out)
    }

    /// A hyper-connection mix of the streams `x` ([t, n · hidden]): their logits (2n before a
    /// sublayer, n in the head) from the RMS-scaled streams, the pre gates' weighing of the
    /// streams into one [t, hidden], and (before a sublayer) the post gates [t, n].
    pub(super) fn stream_mix(
        &self,
        x: &Tensor,
        (w, base, scale): (Role, Role, Role),
        b: Option<usize>,
    ) -> Res<(Tensor, Option<PostGates>)> {
        let point = match w {
            Role::HcAttnFn => Point::HcAttnLogits,
            Role::HcFfnFn => Point::HcFfnLogits,
            Role::HcHeadFn => Point::HcHeadLogits,
            other => unreachable!("{other:?} is not a hyper-connection's logit weight"),
        };
        let hc = self.spec.hyper().expect("hyper-connections in the Spec");
        let (t, n, d) = (x.dim(0)?, hc.streams as usize, self.spec.hidden as usize);
        let inv = (x.sqr()?.mean_keepdim(1)? + self.spec.norm.eps)?
            .sqrt()?
            .recip()?;
        let m = self
            .linear(x, &self.name(w, false, b, None), None)?
            .broadcast_mul(&inv)?;
        self.keep(b, point, &m);
        let (base, scale) = (self.w(base, b)?, vec(self.w(scale, b)?)?);
        let gate = |from: usize, s: f32| -> Res<Tensor> {
            let z = m.narrow(1, from, n)?.affine(s as f64, 0.0)?;
            Ok(sigmoid(&z.broadcast_add(&base.narrow(0, from, n)?)?)?)
        };
        let pre = gate(0, scale[0])?.affine(1.0, hc.eps)?;
        let post = match (b, hc.sinkhorn) {
            (None, _) => None,
            (Some(_), None) => Some((gate(n, scale[1])?.affine(hc.magnitude, hc.eps)?, None)),
            // DeepSeek-V4: post without ε, and the streams' mix C made doubly stochastic.
            (Some(_), Some(iters)) => {
                let post = gate(n, scale[1])?.affine(hc.magnitude, 0.0)?;
                let z = m
                    .narrow(1, 2 * n, n * n)?
                    .affine(scale[2] as f64, 0.0)?
                    .broadcast_add(&base.narrow(0, 2 * n, n * n)?)?
                    .reshape((t, n, n))?;
                let z = z.broadcast_sub(&z.max_keepdim(2)?)?.exp()?;
                let mut c = z.broadcast_div(&z.sum_keepdim(2)?)?.affine(1.0, hc.eps)?;
                let cols = |c: &Tensor| -> R<Tensor> {
                    c.broadcast_div(&c.sum_keepdim(1)?.affine(1.0, hc.eps)?)
                };
                c = cols(&c)?;
                for _ in 1..iters {
                    c = c.broadcast_div(&c.sum_keepdim(2)?.affine(1.0, hc.eps)?)?;
                    c = cols(&c)?;
                }
                Some((post, Some(c)))
            }
        };
        let h = x
            .reshape((t, n, d))?
            .broadcast_mul(&pre.unsqueeze(2)?)?
            .sum(1)?;
        Ok((h, post))
    }

    /// Every stream plus a sublayer's output `y` [t, hidden] times its post gate [t, n].
    pub(super) fn stream_add(
        &self,
        x: &Tensor,
        post: &Option<PostGates>,
        y: &Tensor,
    ) -> Res<Tensor> {
        let (post, comb) = post.as_ref().expect("a sublayer's mix has post gates");
        let (t, n) = post.dims2()?;
        let d = y.dim(1)?;
        let add = post.unsqueeze(2)?.broadcast_mul(&y.unsqueeze(1)?)?;
        let x = x.reshape((t, n, d))?;
        // DeepSeek-V4: stream i becomes Σⱼ C[j, i] · Xⱼ before the output joins it.
        let x = match comb {
            Some(c) => c.transpose(1, 2)?.contiguous()?.matmul(&x)?,
            None => x,
        };
        Ok((x + add)?.reshape((t, n * d))?)
    }
}
