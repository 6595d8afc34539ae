//! RWKV's time mix and channel mix.

use super::*;

impl Model {
    /// `x` ([T, C]) beside each token's previous one, that of the last call coming from (and
    /// the last token going to) `past`.
    pub(super) fn shifted(x: &Tensor, past: &mut [f32]) -> Res<Tensor> {
        let (t, c) = (x.dim(0)?, x.dim(1)?);
        let xs = vec(x)?;
        let mut prev = Vec::with_capacity(t * c);
        prev.extend_from_slice(past);
        prev.extend_from_slice(&xs[..(t - 1) * c]);
        past.copy_from_slice(&xs[(t - 1) * c..]);
        Ok(Tensor::from_vec(prev, (t, c), &Device::Cpu)?)
    }

    /// μ ⊙ x + (1 − μ) ⊙ x₋₁, μ stored [1, 1, C].
    pub(super) fn token_mix(&self, x: &Tensor, prev: &Tensor, role: Role, b: usize) -> Res<Tensor> {
        let mu = self.w(role, Some(b))?.flatten_all()?;
        Ok((x.broadcast_mul(&mu)? + prev.broadcast_mul(&mu.affine(-1.0, 1.0)?)?)?)
    }

    /// RWKV's time mixing: the token shift, the three mixes, K, V and σ(R), the WKV
    /// recurrence through the layer's sums, the output projection.
    pub(super) fn rwkv_time_mix(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let r = self.spec.rwkv().expect("an RWKV layer has its settings");
        let (d, a) = (self.spec.hidden as usize, r.attn as usize);
        let state = cache.ssm[b].get_or_insert_with(|| SsmState::rwkv(d, a));
        let prev = Self::shifted(x, &mut state.conv[..d])?;
        let k = self.proj(
            &self.token_mix(x, &prev, Role::TmMixK, b)?,
            Role::TmKey,
            b,
            false,
        )?;
        let v = self.proj(
            &self.token_mix(x, &prev, Role::TmMixV, b)?,
            Role::TmValue,
            b,
            false,
        )?;
        let rec = self.proj(
            &self.token_mix(x, &prev, Role::TmMixR, b)?,
            Role::TmReceptance,
            b,
            false,
        )?;
        let w: Vec<f32> = vec(self.w(Role::TmDecay, Some(b))?)?
            .iter()
            .map(|x| -x.exp())
            .collect();
        let u = vec(self.w(Role::TmFirst, Some(b))?)?;
        let o = crate::ssm::wkv(&vec(&k)?, &vec(&v)?, &w, &u, &mut state.h);
        if self.capturing() {
            let s = Tensor::from_vec(state.h.clone(), (3, a), &Device::Cpu)?.t()?;
            self.keep(Some(b), Point::SsmState, &s.contiguous()?);
        }
        let o = Tensor::from_vec(o, (x.dim(0)?, a), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o);
        let o = (sigmoid(&rec)? * o)?;
        self.proj(&o, Role::TmOutput, b, false)
    }

    /// RWKV's channel mixing: the token shift, two mixes, σ(R) ⊙ W_v ReLU(W_k x)².
    pub(super) fn rwkv_channel_mix(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let r = self.spec.rwkv().expect("an RWKV layer has its settings");
        let (d, a) = (self.spec.hidden as usize, r.attn as usize);
        let state = cache.ssm[b].get_or_insert_with(|| SsmState::rwkv(d, a));
        let prev = Self::shifted(x, &mut state.conv[d..])?;
        let k = self.proj(
            &self.token_mix(x, &prev, Role::CmMixK, b)?,
            Role::Up,
            b,
            false,
        )?;
        let h = k.relu()?.sqr()?;
        let rec = self.proj(
            &self.token_mix(x, &prev, Role::CmMixR, b)?,
            Role::CmReceptance,
            b,
            false,
        )?;
        Ok((sigmoid(&rec)? * self.proj(&h, Role::Down, b, false)?)?)
    }
}
