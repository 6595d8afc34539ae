//! Multi-head latent attention (DeepSeek-V2/V3, GLM-5, Kimi): Q and KV through their latents, the
//! cache holding the latent and the shared rotary key.

use super::*;

impl Model {
    /// Multi-head latent attention: Q (through its latent when there is one) and a KV latent that
    /// every head expands; one rotary key shared by all heads.
    pub(super) fn mla(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let spec = &self.spec;
        let a = spec.attn_at(b);
        let m = a.mla.as_ref().expect("MLA");
        let t = x.dim(0)?;
        let (h, nope, rd, vd, kvl) = (
            a.heads as usize,
            m.qk_nope_head_dim as usize,
            m.qk_rope_head_dim as usize,
            a.v_head_dim as usize,
            m.kv_lora_rank as usize,
        );
        let mut selected = None;
        let mut q_gate = None;
        let q = match m.q_lora_rank {
            Some(_) => {
                let qa = self.proj(x, Role::QA, b, m.bias)?;
                self.keep(Some(b), Point::QLatent, &qa);
                let qn = self.latent_norm(&qa, Role::QANorm, b)?;
                self.keep(Some(b), Point::QLatentNorm, &qn);
                if let Some(ix) = &m.indexer {
                    if ix.own.contains(b as u64) {
                        // dots.3 Note's indexer reads the scaled latent, as its query does.
                        let qi = match m.lora_scales {
                            Some((q_scale, _)) => qn.affine(q_scale, 0.0)?,
                            None => qn.clone(),
                        };
                        cache.chosen = Some(self.index(x, &qi, ix, b, cache)?);
                    }
                    selected = cache.chosen.clone();
                }
                if m.q_gate {
                    // A.X-K2: both latents side by side give each head's query, then its gate.
                    let both = self
                        .proj(&Tensor::cat(&[&qn, &qa], 1)?, Role::QB, b, false)?
                        .reshape((t, h, nope + rd + vd))?;
                    let g = both.narrow(2, nope + rd, vd)?.contiguous()?;
                    q_gate = Some(g.reshape((t, h * vd))?);
                    both.narrow(2, 0, nope + rd)?
                        .contiguous()?
                        .reshape((t, h * (nope + rd)))?
                } else {
                    self.proj(&qn, Role::QB, b, false)?
                }
            }
            None => self.proj(x, Role::Q, b, false)?,
        };
        // LongCat-Flash scales the query and the normed KV latent.
        let scaled = |t: Tensor, s: Option<f64>| -> Res<Tensor> {
            Ok(match s {
                Some(s) => t.affine(s, 0.0)?,
                None => t,
            })
        };
        let (q_scale, kv_scale) = (m.lora_scales.map(|s| s.0), m.lora_scales.map(|s| s.1));
        // [h, t, nope + rope]
        let q = scaled(q, q_scale)?
            .reshape((t, h, nope + rd))
            .and_then(|q| q.transpose(0, 1)?.contiguous())?;
        self.keep(Some(b), Point::QProj, &q);
        let q_nope = q.narrow(2, 0, nope)?;
        let q_rot = q.narrow(2, nope, rd).and_then(|t| t.contiguous())?;
        let kva = self.proj(x, Role::KvA, b, m.bias)?; // [t, kv_lora + rope]
        let latent = kva.narrow(1, 0, kvl)?;
        self.keep(Some(b), Point::KvLatent, &latent);
        let c_kv = scaled(self.latent_norm(&latent, Role::KvANorm, b)?, kv_scale)?;
        self.keep(Some(b), Point::KvLatentNorm, &c_kv);
        let mut k_rot = kva
            .narrow(1, kvl, rd)
            .and_then(|k| k.contiguous()?.reshape((1, t, rd)))?;
        self.keep(Some(b), Point::KPe, &k_rot);
        if m.rope_key_norm {
            k_rot = norm(
                &k_rot,
                Some(self.w(Role::KPeNorm, Some(b))?),
                None,
                &spec.norm,
            )?;
            self.keep(Some(b), Point::KPeNorm, &k_rot);
        }
        let (q_rot, k_rot) = match &spec.position {
            Position::Rope(r) => {
                let span = self.span(b);
                let dim = r.rotary_dim(rd as u64) as usize;
                let (cos, sin) = rope::tables_for(r, span, dim, cache.pos, t)?;
                let k_rot = rope::rotate(&k_rot, &cos, &sin, r.interleaved)?;
                self.keep(Some(b), Point::KPeRot, &k_rot);
                (rope::rotate(&q_rot, &cos, &sin, r.interleaved)?, k_rot)
            }
            // Kimi Linear's: the shared key part carries no position either.
            Position::Learned
            | Position::Sinusoidal(_)
            | Position::Alibi(_)
            | Position::None
            | Position::Buckets(_) => (q_rot, k_rot),
        };
        let kv = self
            .proj(&c_kv, Role::KvB, b, false)?
            .reshape((t, h, nope + vd))
            .and_then(|kv| kv.transpose(0, 1)?.contiguous())?;
        let k_shared = k_rot
            .broadcast_as((h, t, rd))
            .and_then(|k| k.contiguous())?;
        let k = Tensor::cat(&[&kv.narrow(2, 0, nope)?, &k_shared], 2)?;
        let v = kv.narrow(2, nope, vd).and_then(|v| v.contiguous())?;
        self.keep(Some(b), Point::KNope, &kv.narrow(2, 0, nope)?);
        let q = self.query_scale(Tensor::cat(&[&q_nope, &q_rot], 2)?, b, cache.pos)?;
        let gate = self.out_gate(x, b, q_gate, vd)?;
        let o = self.attend(
            q,
            Some((k, v)),
            b,
            cache,
            selected
                .as_deref()
                .map(|keys| crate::attention::Selected { keys, groups: 1 }),
            gate.as_ref(),
        )?;
        self.out_proj(o, b)
    }
}
