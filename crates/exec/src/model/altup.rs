//! Gemma 3n's AltUp: the streams, the router, a layer's prediction and correction.

use super::*;

impl Model {
    /// Gemma 3n: the embedding and its projections into the other streams, each rescaled to the
    /// embedding's RMS; [t, n · hidden].
    pub(super) fn altup_streams(&self, x: &Tensor) -> Res<Tensor> {
        let a = self.spec.altup().expect("AltUp in the Spec");
        let mut streams = vec![x.clone()];
        for i in 0..a.streams as usize - 1 {
            let name = self.name(Role::AltUpProj, false, None, Some(i));
            streams.push(rescaled(&self.linear(x, &name, None)?, x)?);
        }
        let x = Tensor::cat(&streams, 1)?;
        self.keep(None, Point::AltupStreams, &x);
        Ok(x)
    }

    /// Gemma 3n: the streams after the first projected back, each rescaled to the first's RMS,
    /// and all of them averaged; [t, hidden].
    pub(super) fn altup_unembed(&self, x: &Tensor) -> Res<Tensor> {
        let a = self.spec.altup().expect("AltUp in the Spec");
        let (n, d) = (a.streams as usize, self.spec.hidden as usize);
        let first = x.narrow(1, 0, d)?;
        let mut sum = first.clone();
        for i in 1..n {
            let name = self.name(Role::AltUpUnembed, false, None, Some(i - 1));
            let back = self.linear(&x.narrow(1, i * d, d)?, &name, None)?;
            sum = (sum + rescaled(&back, &first)?)?;
        }
        let mean = sum.affine(1.0 / n as f64, 0.0)?;
        self.keep(None, Point::AltupMean, &mean);
        Ok(mean)
    }

    /// Gemma 3n's AltUp router over one version of the hidden state: tanh of its projection
    /// of the normed input over the hidden size; [t, n].
    pub(super) fn altup_router(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let h = self.norm(x, Role::AltUpRouterNorm, Some(b))?;
        let d = self.spec.hidden as f64;
        Ok(self
            .proj(&h.affine(1.0 / d, 0.0)?, Role::AltUpRouter, b, false)?
            .tanh()?)
    }

    /// A Gemma 3n layer over the streams `x` ([t, n · hidden]): every stream predicted from
    /// all; the attention (beside LAuReL) and the MLP on the active prediction; every
    /// prediction corrected by the layer's innovation; the per-layer input added to the
    /// streams after the first.
    pub(super) fn altup_layer(
        &self,
        x: &Tensor,
        b: usize,
        cache: &mut Cache,
        per_layer: Option<&Tensor>,
    ) -> Res<Tensor> {
        let a = self.spec.altup().expect("AltUp in the Spec");
        let (t, n, d) = (x.dim(0)?, a.streams as usize, self.spec.hidden as usize);
        self.keep(Some(b), Point::BlockIn, x);
        let xs = x.reshape((t, n, d))?;
        let active = a.active as usize;
        let m = self.altup_router(&xs.narrow(1, active, 1)?.squeeze(1)?, b)?;
        let c = self
            .proj(&m, Role::AltUpPredict, b, false)?
            .reshape((t, n, n))?;
        // Pⱼ = Xⱼ + Σᵢ C[j, i] Xᵢ
        let p = (&xs + c.matmul(&xs)?)?;
        self.keep(Some(b), Point::AltupPredict, &p.reshape((t, n * d))?);
        let pa = p.narrow(1, active, 1)?.squeeze(1)?;
        let h = self.norm(&pa, Role::AttnNorm, Some(b))?;
        self.keep(Some(b), Point::AttnNorm, &h);
        let lr = self.proj(
            &self.proj(&h, Role::LaurelLeft, b, false)?,
            Role::LaurelRight,
            b,
            false,
        )?;
        let l = (&h + self.norm(&lr, Role::LaurelNorm, Some(b))?)?;
        self.keep(Some(b), Point::Laurel, &l);
        let y = self.attention(&h, b, cache)?;
        self.keep(Some(b), Point::AttnOut, &y);
        let y = self.norm(&y, Role::PostAttnNorm, Some(b))?;
        self.keep(Some(b), Point::PostAttnNorm, &y);
        let r = ((&pa + y)? + l)?.affine(std::f64::consts::FRAC_1_SQRT_2, 0.0)?;
        self.keep(Some(b), Point::ResidAttn, &r);
        let h = self.norm(&r, Role::FfnNorm, Some(b))?;
        self.keep(Some(b), Point::FfnNorm, &h);
        let f = self.mlp(&h, b)?;
        self.keep(Some(b), Point::Down, &f);
        let f = self.norm(&f, Role::PostFfnNorm, Some(b))?;
        self.keep(Some(b), Point::PostFfnNorm, &f);
        let o = (r + f)?;
        self.keep(Some(b), Point::ResidFfn, &o);
        let mc = self.altup_router(&o, b)?;
        let coef = self
            .proj(&mc, Role::AltUpCorrect, b, false)?
            .affine(1.0, 1.0)?;
        let innovation = (&o - &pa)?;
        let corrected = (p + coef
            .unsqueeze(2)?
            .broadcast_mul(&innovation.unsqueeze(1)?)?)?;
        self.keep(
            Some(b),
            Point::AltupCorrect,
            &corrected.reshape((t, n * d))?,
        );
        let mut first = corrected.narrow(1, active, 1)?.squeeze(1)?;
        if a.correct_scale {
            first = first.broadcast_mul(self.w(Role::AltUpScale, Some(b))?)?;
            self.keep(Some(b), Point::AltupScale, &first);
        }
        // With one stream there is none after the first to add the per-layer input to.
        let (Some(all), Some(pl), true) = (per_layer, self.spec.per_layer_input, n > 1) else {
            return Ok(corrected.reshape((t, n * d))?);
        };
        let w = pl.width as usize;
        let g = self.proj(&first, Role::PleGate, b, false)?;
        self.keep(Some(b), Point::PleGate, &g);
        let ga = (self.act(&g)? * all.narrow(1, b * w, w)?)?;
        self.keep(Some(b), Point::PleAct, &ga);
        let yp = self.proj(&ga, Role::PleUp, b, false)?;
        self.keep(Some(b), Point::PleUp, &yp);
        let yp = self.norm(&yp, Role::PleNorm, Some(b))?;
        self.keep(Some(b), Point::PleNorm, &yp);
        // Into every stream after the first.
        let rest = corrected
            .narrow(1, 1, n - 1)?
            .broadcast_add(&yp.unsqueeze(1)?)?;
        let out = Tensor::cat(&[&corrected.narrow(1, 0, 1)?, &rest], 1)?.reshape((t, n * d))?;
        self.keep(Some(b), Point::PleResid, &out);
        Ok(out)
    }
}

/// A tensor's values, flat, for the recurrences that run on slices.
/// `x` rescaled to the RMS of `target` (each row): x · rms(target) / √max(mean(x²), 10⁻⁵).
pub(super) fn rescaled(x: &Tensor, target: &Tensor) -> R<Tensor> {
    let want = target.sqr()?.mean_keepdim(D::Minus1)?.sqrt()?;
    let have = x
        .sqr()?
        .mean_keepdim(D::Minus1)?
        .clamp(1e-5f32, f32::MAX)?
        .sqrt()?;
    x.broadcast_mul(&(want / have)?)
}
