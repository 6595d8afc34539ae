//! N-gram embeddings added inside the layers (Qwen4-Exp).

use super::*;

impl Model {
    /// Qwen4-Exp's n-gram embeddings in layer `b`, what joins the streams `x` ([t, n · hidden]):
    /// the token's n-grams hashed into rows of the layer's table (read shard by shard), a value
    /// and per-stream keys from them, the value gated per stream by its match with the normed
    /// stream, plus a dilated convolution of the gated values, normed, through SiLU.
    pub(super) fn ngram_ple(
        &self,
        x: &Tensor,
        p: &anatomy_core::spec::NgramPle,
        b: usize,
        cache: &mut Cache,
    ) -> Res<Tensor> {
        let (t, n, d) = (
            x.dim(0)?,
            self.spec.streams() as usize,
            self.spec.hidden as usize,
        );
        let nd = n * d;
        let i = p.index_of(b as u64).expect("a PLE layer");
        let (sizes, mult) = (p.head_sizes(i), p.multipliers(self.spec.vocab, i));
        let (reach, taps, dil) = (p.reach() as usize, p.kernel as usize, p.ngram as usize);
        let state = cache.ngram[b].get_or_insert_with(|| NgramState {
            ids: vec![p.eos; p.ngram as usize - 1],
            conv: vec![0.0; reach * nd],
        });
        let ids: Vec<u64> = cache.ids.iter().map(|&id| id as u64).collect();
        let shifted = p.shifted(&state.ids, &ids);
        let all: Vec<u64> = state.ids.iter().chain(&ids).copied().collect();
        state.ids = all[all.len() - state.ids.len()..].to_vec();
        // The table as saved, shard by shard: row r sits in shard r / size.
        let (size, _) = p.shards(p.rows(i));
        let hd = p.head_dim() as usize;
        let mut e = Vec::with_capacity(t * p.width as usize);
        for s in &shifted {
            for row in p.rows_of(s, &mult, sizes) {
                let name = self.name(
                    Role::NgramTable,
                    false,
                    Some(b),
                    Some((row / size) as usize),
                );
                let shard = self.weights.get(&name)?;
                e.extend(vec(&shard
                    .narrow(0, (row % size) as usize, 1)?
                    .flatten_all()?)?);
            }
        }
        debug_assert_eq!(e.len(), t * p.heads() as usize * hd);
        let e = Tensor::from_vec(e, (t, p.width as usize), &Device::Cpu)?;
        self.keep(Some(b), Point::NgramEmbed, &e);
        let grouped = |x: &Tensor, role| self.grouped_norm(x, role, Some(b), n);
        let v = self.proj(&e, Role::NgramValue, b, false)?;
        let k = grouped(
            &self.proj(&e, Role::NgramKey, b, false)?,
            Role::NgramNormKey,
        )?;
        let q = grouped(x, Role::NgramNormQuery)?;
        let g: Vec<f32> = (k * q)?
            .reshape((t, n, d))?
            .sum(2)?
            .affine(1.0 / (d as f64).sqrt(), 0.0)?
            .flatten_all()?
            .to_vec1()?;
        let g: Vec<f32> = g
            .iter()
            // torch's sign(0) is 0; Rust's signum(0.0) is 1.
            .map(|&g| g.abs().max(1e-6).sqrt() * if g == 0.0 { 0.0 } else { g.signum() })
            .collect();
        let g = sigmoid(&Tensor::from_vec(g, (t, n, 1), &Device::Cpu)?)?;
        let u = g.broadcast_mul(&v.unsqueeze(1)?)?.reshape((t, nd))?;
        self.keep(Some(b), Point::NgramGated, &u);
        let un = vec(&grouped(&u, Role::NgramNormConv)?)?;
        // The dilated causal convolution over the carried inputs and these.
        let w = vec(self.w(Role::NgramConv, Some(b))?)?; // [nd, taps]
        let state = cache.ngram[b].as_mut().expect("made above");
        let seq: Vec<f32> = state.conv.iter().chain(&un).copied().collect();
        let mut c = vec![0f32; t * nd];
        for s in 0..t {
            for ch in 0..nd {
                let mut acc = 0f32;
                for j in 0..taps {
                    // Tap j reads the input (taps − 1 − j) · dilation before this one.
                    let at = reach + s - (taps - 1 - j) * dil;
                    acc += w[ch * taps + j] * seq[at * nd + ch];
                }
                c[s * nd + ch] = acc / (1.0 + (-acc).exp());
            }
        }
        state.conv = seq[seq.len() - reach * nd..].to_vec();
        let c = Tensor::from_vec(c, (t, nd), &Device::Cpu)?;
        self.keep(Some(b), Point::NgramConv, &c);
        Ok((u + c)?)
    }
}
