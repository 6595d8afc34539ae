//! BLT's forward pass (`ByteLatent`): the patcher cuts the bytes into patches, the local
//! encoder makes byte states and patch embeddings, the latent transformer (this model's own
//! layers) runs over the patches, and the local decoder turns its output back into bytes.
//! Patches depend on every byte so far, so each pass runs on the whole sequence (the cache
//! keeps the bytes), as transformers' model does without a cache.

use super::{Cache, Model, Res};
use crate::weights::Weights;
use anatomy_core::graph::Point;
use anatomy_core::naming::Role;
use anatomy_core::spec::{ByteLatent, HfWrap, Patching, Spec};
use candle_core::{Device, Tensor, D};

/// The byte-level stacks, each a model of its own Spec with its own weights.
pub(crate) struct Stacks {
    encoder: Model,
    decoder: Model,
    patcher: Option<Model>,
}

/// The weights under `spec`'s module, moved out of `w` (with the head, for the decoder).
fn part(spec: &Spec, w: &mut Weights, head: bool) -> Res<Model> {
    let HfWrap::Module { module, .. } = spec.hf_wrap else {
        unreachable!("BLT's stacks are named by their module")
    };
    let prefix = format!("model.{module}.");
    let own = w.take(|name| name.starts_with(&prefix) || (head && name.starts_with("lm_head.")));
    Ok(Model::new(spec.clone(), own)?)
}

impl Stacks {
    pub(crate) fn new(bl: &ByteLatent, w: &mut Weights) -> Res<Stacks> {
        Ok(Stacks {
            encoder: part(&bl.encoder, w, false)?,
            decoder: part(&bl.decoder, w, true)?,
            patcher: bl.patcher.as_ref().map(|p| part(p, w, false)).transpose()?,
        })
    }
}

impl Model {
    /// `x` ([t, hidden]) through every layer of this stack, from position 0.
    fn stack_layers(&self, mut x: Tensor) -> Res<Tensor> {
        let mut cache = Cache::new(self.spec.layers as usize);
        for b in 0..self.spec.layers as usize {
            x = self.layer(&x, b, &mut cache, &mut None, None)?;
            x = self.layer_tail(x, b, None)?;
        }
        Ok(x)
    }

    /// Logits of every byte so far, [t, vocab] for the last `t` of them (the last one alone
    /// with `last`).
    pub(super) fn blt(
        &self,
        bl: &ByteLatent,
        s: &Stacks,
        ids: &[u32],
        cache: &mut Cache,
        last: bool,
    ) -> Res<Tensor> {
        cache.bytes.extend_from_slice(ids);
        cache.pos += ids.len();
        let bytes: &[u32] = &cache.bytes;
        let n = bytes.len();
        let t = if last { 1 } else { ids.len() };
        let ids_t = Tensor::new(bytes, &Device::Cpu)?;

        // The patcher's next-byte entropies, in nats, where they cut the patches.
        let entropies = match (&s.patcher, bl.patching) {
            (Some(p), Patching::Entropy(_)) => {
                let x = p.rows(Role::Embed, bytes, &ids_t)?;
                let x = p.stack_layers(x)?;
                let z = p.norm(&x, Role::FinalNorm, None)?;
                let logits = p.linear(&z, &p.name(Role::LmHead, false, None, None), None)?;
                let logp = log_softmax(&logits)?;
                let h = (logp.exp()? * &logp)?.sum(D::Minus1)?.neg()?;
                h.to_vec1::<f32>()?
            }
            // Bytes patch alone; entropy patching always has its patcher (`families::blt`).
            (_, Patching::Bytes { .. }) | (None, Patching::Entropy(_)) => Vec::new(),
        };
        let lengths = bl.patching.lengths(n, &entropies, bl.max_patch);
        let patches = lengths.len();
        let own = patch_ids(&lengths, n);
        let before = patch_ids(&lengths[1.min(patches)..], n);

        // Encoder: the bytes' embeddings and hashed n-grams, its layers, then the patches.
        let e = &s.encoder;
        let mut x = e.rows(Role::Embed, bytes, &ids_t)?;
        let table = self
            .weights
            .get("model.encoder_hash_tok_embedding.weight")?;
        let mut block = 0;
        for f in 0..bl.hash.functions {
            for &g in &bl.hash.sizes {
                let rows = bl.hash.ids(bytes, f, g, block);
                let rows = Tensor::new(rows.as_slice(), &Device::Cpu)?;
                x = (x + table.embedding(&rows)?)?;
                block += 1;
            }
        }
        e.keep(None, Point::Embed, &x);
        let mut cache_e = Cache::new(e.spec.layers as usize);
        let k = bl.cross_k as usize;
        let mut latent_in = None;
        for b in 0..e.spec.layers as usize {
            x = e.layer(&x, b, &mut cache_e, &mut None, None)?;
            x = e.layer_tail(x, b, None)?;
            let at = if bl.encoder_cross_all {
                Some(b)
            } else if b + 1 == e.spec.layers as usize {
                Some(0)
            } else {
                None
            };
            if let Some(c) = at {
                let pooled = max_pool(&x, &own, patches)?;
                let p = e.linear(&pooled, &e.name(Role::PatchProj, false, None, None), None)?;
                let d = e.spec.hidden as usize;
                let p = p.reshape((patches * k, d))?;
                // Query j belongs to patch j / k; it sees the bytes of that patch.
                let visible = |q: usize, byte: usize| own[byte] == q / k;
                latent_in = Some(e.cross(&p, &x, c, visible)?);
            }
        }
        let enc = x;
        let latent_in = latent_in.expect("the encoder's last layer cross-attends");
        let d_enc = e.spec.hidden as usize;
        let mut g = latent_in.reshape((patches, k * d_enc))?;
        if k * d_enc != self.spec.hidden as usize {
            g = self.linear(&g, &self.name(Role::TokenProj, false, None, None), None)?;
        }
        self.keep(None, Point::Embed, &g);
        let g = self.stack_layers(g)?;

        // Decoder: each byte reads the keys of the patch before its own.
        let dec = &s.decoder;
        let keys = dec.linear(&g, &dec.name(Role::PatchProj, false, None, None), None)?;
        let keys = keys.reshape((patches * k, dec.spec.hidden as usize))?;
        let visible = |byte: usize, key: usize| before[byte] == key / k;
        let mut x = enc;
        let mut cache_d = Cache::new(dec.spec.layers as usize);
        for b in 0..dec.spec.layers as usize {
            if b == 0 || bl.decoder_cross_all {
                x = dec.cross(&x, &keys, b, visible)?;
            }
            x = dec.layer(&x, b, &mut cache_d, &mut None, None)?;
            x = dec.layer_tail(x, b, None)?;
        }
        let x = x.narrow(0, n - t, t)?;
        let z = dec.norm(&x, Role::FinalNorm, None)?;
        dec.keep(None, Point::FinalNorm, &z);
        let logits = dec.linear(&z, &dec.name(Role::LmHead, false, None, None), None)?;
        self.keep(None, Point::Logits, &logits);
        Ok(logits)
    }

    /// BLT's cross-attention `c` of this stack: `q_in`'s rows attend to those of `kv_in` that
    /// `visible(query, key)` allows (a fully masked row attends evenly, as transformers' mask of
    /// float minima gives); its output plus its input, added to the input.
    fn cross(
        &self,
        q_in: &Tensor,
        kv_in: &Tensor,
        c: usize,
        visible: impl Fn(usize, usize) -> bool,
    ) -> Res<Tensor> {
        let a = &self.spec.attn;
        let (h, kvh, hd) = (a.heads as usize, a.kv_heads as usize, a.head_dim as usize);
        let (nq, nk) = (q_in.dim(0)?, kv_in.dim(0)?);
        let proj = |x: &Tensor, role| self.linear(x, &self.name(role, false, Some(c), None), None);
        let qn = self.norm(q_in, Role::CrossQNorm, Some(c))?;
        let kn = self.norm(kv_in, Role::CrossKNorm, Some(c))?;
        let q = proj(&qn, Role::CrossQ)?.to_vec2::<f32>()?;
        let kk = proj(&kn, Role::CrossK)?.to_vec2::<f32>()?;
        let v = proj(&kn, Role::CrossV)?.to_vec2::<f32>()?;
        let scale = 1.0 / (hd as f32).sqrt();
        let mut out = vec![0f32; nq * h * hd];
        let mut scores = vec![0f32; nk];
        for i in 0..nq {
            for head in 0..h {
                let g = head / (h / kvh);
                let qi = &q[i][head * hd..(head + 1) * hd];
                for (j, s) in scores.iter_mut().enumerate() {
                    let kj = &kk[j][g * hd..(g + 1) * hd];
                    let dot: f32 = qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale;
                    *s = if visible(i, j) { dot } else { dot + f32::MIN };
                }
                crate::math::softmax(&mut scores, None);
                let o = &mut out[(i * h + head) * hd..(i * h + head + 1) * hd];
                for (j, &p) in scores.iter().enumerate() {
                    for (o, &vv) in o.iter_mut().zip(&v[j][g * hd..(g + 1) * hd]) {
                        *o += p * vv;
                    }
                }
            }
        }
        let heads = Tensor::from_vec(out, (nq, h * hd), &Device::Cpu)?;
        let y = proj(&heads, Role::CrossO)?;
        Ok(((y + q_in)? + q_in)?)
    }
}

/// Each position's patch: the last patch starting at or before it.
fn patch_ids(lengths: &[u64], n: usize) -> Vec<usize> {
    let mut starts = Vec::with_capacity(lengths.len());
    let mut at = 0u64;
    for &l in lengths {
        starts.push(at);
        at += l;
    }
    (0..n as u64)
        .map(|t| starts.iter().filter(|&&s| s <= t).count().saturating_sub(1))
        .collect()
}

/// The elementwise maximum of each patch's rows of `x`, zeros for a patch with none.
fn max_pool(x: &Tensor, ids: &[usize], patches: usize) -> Res<Tensor> {
    let rows = x.to_vec2::<f32>()?;
    let d = rows.first().map_or(0, Vec::len);
    let mut out = vec![None::<Vec<f32>>; patches];
    for (row, &p) in rows.iter().zip(ids) {
        match &mut out[p] {
            Some(m) => m.iter_mut().zip(row).for_each(|(m, &v)| *m = m.max(v)),
            slot => *slot = Some(row.clone()),
        }
    }
    let flat: Vec<f32> = out
        .into_iter()
        .flat_map(|r| r.unwrap_or_else(|| vec![0.0; d]))
        .collect();
    Ok(Tensor::from_vec(flat, (patches, d), &Device::Cpu)?)
}

/// log softmax over the last axis.
fn log_softmax(x: &Tensor) -> candle_core::Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?;
    let shifted = x.broadcast_sub(&max)?;
    let lse = shifted.exp()?.sum_keepdim(D::Minus1)?.log()?;
    shifted.broadcast_sub(&lse)
}
