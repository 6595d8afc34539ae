//! A mixture of attention heads (JetMoE): each token's head experts, their queries, and their
//! outputs combined.

use super::*;

impl Model {
    /// A mixture of attention heads' routing: each token's top-k experts, weighted by a softmax
    /// over their logits, in slot order.
    pub(super) fn moa_route(&self, x: &Tensor, b: usize, m: Moa) -> Res<Vec<Vec<(usize, f32)>>> {
        let logits = self.proj(x, Role::AttnRouter, b, false)?;
        self.keep(Some(b), Point::AttnRouter, &logits);
        let k = m.top_k as usize;
        let rows: Vec<Vec<f32>> = logits.to_vec2()?;
        Ok(rows
            .iter()
            .map(|row| {
                let idx = top_indices(row, k);
                let top: Vec<f32> = idx.iter().map(|&i| row[i]).collect();
                idx.into_iter().zip(softmax_of(&top)).collect()
            })
            .collect())
    }

    /// The queries of each token's chosen experts, [t, top_k · width] slot after slot.
    pub(super) fn moa_queries(
        &self,
        x: &Tensor,
        b: usize,
        choices: &[Vec<(usize, f32)>],
        width: usize,
    ) -> Res<Tensor> {
        let w = self.w(Role::AttnExpertQ, Some(b))?;
        let (t, k) = (choices.len(), choices.first().map_or(0, |c| c.len()));
        let mut q = vec![0f32; t * k * width];
        for (ex, picks) in by_expert(choices) {
            let idx = Tensor::new(
                picks.iter().map(|p| p.0 as u32).collect::<Vec<_>>(),
                &Device::Cpu,
            )?;
            let ys: Vec<Vec<f32>> = x.index_select(&idx, 0)?.matmul(&w.i(ex)?.t()?)?.to_vec2()?;
            for ((tok, slot, _), y) in picks.iter().zip(ys) {
                let at = (tok * k + slot) * width;
                q[at..at + width].copy_from_slice(&y);
            }
        }
        Ok(Tensor::from_vec(q, (t, k * width), &Device::Cpu)?)
    }

    /// A mixture of attention heads' output: slot j's heads ([t, heads · dv] in group order)
    /// through its expert's output projection, times the expert's gate, summed, plus the bias.
    pub(super) fn moa_out(
        &self,
        o: &Tensor,
        b: usize,
        choices: &[Vec<(usize, f32)>],
    ) -> Res<Tensor> {
        let w = self.w(Role::AttnExpertO, Some(b))?;
        let (t, k) = (choices.len(), choices.first().map_or(0, |c| c.len()));
        let width = o.dim(1)? / k.max(1);
        let kv = self.spec.attn_at(b).kv_heads as usize;
        // [t, group i, slot j, dv] → [t, slot j, group i · dv]
        let slots = o
            .reshape((t, kv, k, width / kv))?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((t, k, width))?;
        let mut y = Tensor::zeros((t, self.spec.hidden as usize), DType::F32, &Device::Cpu)?;
        for (ex, picks) in by_expert(choices) {
            let rows: Vec<Tensor> = picks
                .iter()
                .map(|&(tok, slot, _)| slots.i((tok, slot)))
                .collect::<R<_>>()?;
            let gates = Tensor::new(picks.iter().map(|p| p.2).collect::<Vec<_>>(), &Device::Cpu)?;
            let out = Tensor::stack(&rows, 0)?
                .matmul(&w.i(ex)?.t()?)?
                .broadcast_mul(&gates.unsqueeze(1)?)?;
            let idx = Tensor::new(
                picks.iter().map(|p| p.0 as u32).collect::<Vec<_>>(),
                &Device::Cpu,
            )?;
            y = y.index_add(&idx, &out, 0)?;
        }
        let y = y.broadcast_add(self.bias(Role::AttnExperts, Some(b))?)?;
        self.keep(Some(b), Point::AttnExperts, &y);
        Ok(y)
    }
}
