//! HRM's low- and high-level stacks, run in turns.

use super::*;

impl Model {
    /// HRM's nested loop over its two stacks (`Hierarchy`): the low-level state starts as the
    /// stored `z_L_init`, the high-level one as the embeddings `x`; each visit of a stack reads
    /// the sum of both states and ends in the stack's weightless norm, with a cache of its own.
    /// The last visit's norm is left to the final norm.
    pub(super) fn hierarchy(&self, x: &Tensor, h: Hierarchy, cache: &mut Cache) -> Res<Tensor> {
        let init = self.w(Role::LowInit, None)?;
        let mut low = init.unsqueeze(0)?.broadcast_as(x.shape())?.contiguous()?;
        let mut high = x.clone();
        let per = h.per_stack as usize;
        let visits: Vec<bool> = h.visits().collect();
        for (i, &is_low) in visits.iter().enumerate() {
            let c = cache.visit(i);
            let (mut y, first) = if is_low {
                ((&low + &high)?, 0)
            } else {
                ((&high + &low)?, per)
            };
            for b in first..first + per {
                y = self.layer(&y, b, c, &mut None, None)?;
                y = self.layer_tail(y, b, None)?;
            }
            if i + 1 < visits.len() {
                y = self.norm(&y, Role::FinalNorm, None)?;
            }
            if is_low {
                low = y;
            } else {
                high = y;
            }
        }
        Ok(high)
    }
}
