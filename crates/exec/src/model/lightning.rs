//! Lightning attention (MiniMax's linear attention).

use super::*;

impl Model {
    /// MiniMax's lightning attention: q, k and v of every head from one projection through the
    /// activation; the recurrence through the layer's memory; the heads RMS-normed together,
    /// gated by σ of the input's own projection; the output projection.
    pub(super) fn lightning(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self
            .spec
            .lightning()
            .expect("a lightning layer has its settings");
        let (t, heads, d) = (x.dim(0)?, s.heads as usize, s.head_dim as usize);
        let qkv = apply_act(s.act, &self.proj(x, Role::SsmIn, b, false)?)?;
        self.keep(Some(b), Point::LightQkv, &qkv);
        let slope = vec(self.w(Role::LightSlope, Some(b))?)?;
        let state = cache.ssm[b].get_or_insert_with(|| SsmState::memory(heads, d, d));
        // A prompt chunk by chunk, a decoded token through the loop (the same sums).
        let o = if t > 1 {
            crate::ssm::lightning_chunked(
                &vec(&qkv)?,
                &slope,
                &mut state.memory,
                heads,
                d,
                SSD_CHUNK,
            )?
        } else {
            crate::ssm::lightning(&vec(&qkv)?, &slope, &mut state.memory, heads, d)
        };
        if self.capturing() {
            let m: Vec<f32> = state.memory.iter().map(|&x| x as f32).collect();
            self.keep(
                Some(b),
                Point::SsmState,
                &Tensor::from_vec(m, (heads * d, d), &Device::Cpu)?,
            );
        }
        let o = Tensor::from_vec(o, (t, heads * d), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &o);
        let o = rms(&o, s.eps)?.broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?;
        self.keep(Some(b), Point::SsmNorm, &o);
        let o = (o * sigmoid(&self.proj(x, Role::SsmZ, b, false)?)?)?;
        self.keep(Some(b), Point::LightGate, &o);
        self.proj(&o, Role::SsmOut, b, false)
    }
}
