//! Relative logits (Inkling 2): learned relative states scored against each query and added to its
//! scores.

use super::attention::l2_clip;
use super::*;

impl Model {
    /// Inkling's relative logits of attention layer `b` for the pass's queries at `start` on:
    /// each head's relative state r = x · W_r mixes the bank P [d_rel, extent] into one bias per
    /// distance, [heads, t, extent], scaled with the queries where they scale.
    pub(super) fn rel_logits(
        &self,
        x: &Tensor,
        b: usize,
        rl: RelLogits,
        scale: Option<QueryScale>,
        start: usize,
    ) -> Res<(Vec<f32>, usize)> {
        let h = self.spec.attn_at(b).heads as usize;
        let (t, d, extent) = (x.dim(0)?, rl.d_rel as usize, rl.extent as usize);
        let mut r = self
            .proj(x, Role::RelProj, b, false)?
            .reshape((t, h, d))?
            .transpose(0, 1)?
            .contiguous()?;
        // Inkling 2: the relative states, times their learned scale, L2-clipped.
        if let Some(c) = rl.clip {
            let s = self.w(Role::RelClipScale, Some(b))?.unsqueeze(1)?;
            r = l2_clip(&r.broadcast_mul(&s)?, c)?;
        }
        let bank = self.w(Role::RelBank, Some(b))?.to_dtype(DType::F32)?;
        let mut bias = r.broadcast_matmul(&bank)?;
        if let Some(qs) = scale.filter(|qs| qs.applies(&self.spec.plan[b])) {
            let f: Vec<f32> = (start..start + t).map(|p| qs.at(p as u64) as f32).collect();
            bias = bias.broadcast_mul(&Tensor::from_vec(f, (1, t, 1), &Device::Cpu)?)?;
        }
        self.keep(Some(b), Point::RelLogits, &bias);
        Ok((bias.flatten_all()?.to_vec1()?, extent))
    }
}
