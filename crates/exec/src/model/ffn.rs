//! The FFN: activations, the dense MLP, and mixtures of experts with their routing.

use super::*;

impl Model {
    pub(super) fn act(&self, x: &Tensor) -> R<Tensor> {
        apply_act(self.spec.mlp.act, x)
    }

    /// xIELU with layer `b`'s learned αₚ, αₙ and stored β, ε (Apertus).
    pub(super) fn xielu(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let scalar = |role| -> Res<f32> {
            let t = self.weights.get(&self.name(role, false, Some(b), None))?;
            t.flatten_all()
                .and_then(|t| t.to_vec1::<f32>())?
                .first()
                .copied()
                .ok_or_else(|| {
                    Error::file(self.name(role, false, Some(b), None), "is empty").into()
                })
        };
        let softplus = |v: f32| (v as f64).exp().ln_1p() as f32;
        let beta = scalar(Role::ActBeta)?;
        let eps = scalar(Role::ActEps)?;
        let ap = softplus(scalar(Role::ActAlphaP)?);
        let an = beta + softplus(scalar(Role::ActAlphaN)?);
        let y = with_values(x, |v| {
            v.iter()
                .map(|&x| {
                    if x > 0.0 {
                        ap * x * x + beta * x
                    } else {
                        (x.min(eps).exp_m1() - x) * an + beta * x
                    }
                })
                .collect::<Vec<f32>>()
        })?;
        Ok(Tensor::from_vec(y, x.dims(), &Device::Cpu)?)
    }

    /// act(g) ⊙ u, in one pass for SiLU.
    pub(super) fn act_mul(&self, g: &Tensor, u: &Tensor) -> R<Tensor> {
        match self.spec.mlp.act {
            Act::Silu => {
                let y = with_values(g, |g| with_values(u, |u| crate::math::silu_mul(g, u)))??;
                Tensor::from_vec(y, g.dims(), &Device::Cpu)
            }
            Act::Gelu | Act::GeluTanh | Act::QuickGelu | Act::Relu | Act::Relu2 | Act::Xielu => {
                self.act(g)? * u
            }
        }
    }

    pub(super) fn mlp(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let spec = &self.spec;
        let bias = spec.mlp.bias;
        let f = spec.mlp_width(b) as usize;
        let hidden = if !spec.mlp.gated {
            let u = self.proj(x, Role::Up, b, bias)?;
            self.keep(Some(b), Point::Up, &u);
            if spec.mlp.act == Act::Xielu {
                self.xielu(&u, b)?
            } else {
                self.act(&u)?
            }
        } else {
            let (g, u) = if spec.mlp.fused_gate_up {
                let gu = self.adapted(x, Role::GateUp, b, bias)?;
                (gu.narrow(1, 0, f)?, gu.narrow(1, f, f)?)
            } else {
                (
                    self.proj(x, Role::Gate, b, bias)?,
                    self.proj(x, Role::Up, b, bias)?,
                )
            };
            // Falcon-H1 scales the gate before its activation.
            let g = match spec.mup {
                Some(m) if m.mlp_gate != 1.0 => g.affine(m.mlp_gate, 0.0)?,
                _ => g,
            };
            // nGPT: the gate and up times learned vectors.
            let (g, u) = match spec.ngpt {
                Some(n) => {
                    let f = n.uv_factor(spec.hidden);
                    let su = self.w(Role::NgptGateUvScale, Some(b))?.affine(f, 0.0)?;
                    let sv = self.w(Role::NgptUpUvScale, Some(b))?.affine(f, 0.0)?;
                    (g.broadcast_mul(&su)?, u.broadcast_mul(&sv)?)
                }
                None => (g, u),
            };
            self.keep(Some(b), Point::Gate, &g);
            let g = match spec.sparsity_at(b) {
                Some(p) => {
                    let g = gaussian_top_k(&g, p)?;
                    self.keep(Some(b), Point::SparseGate, &g);
                    g
                }
                None => g,
            };
            self.keep(Some(b), Point::Up, &u);
            self.glu(&g, &u, spec.mlp.clamp, false)?
        };
        self.keep(Some(b), Point::Act, &hidden);
        let hidden = if spec.mlp.sub_norm {
            let h = self.norm(&hidden, Role::FfnSubNorm, Some(b))?;
            self.keep(Some(b), Point::FfnSubNorm, &h);
            h
        } else {
            hidden
        };
        let down = self.proj(&hidden, Role::Down, b, bias)?;
        // Inkling: the output times a learned scalar.
        let down = if spec.mlp.scalar {
            down.broadcast_mul(self.w(Role::MlpScalar, Some(b))?)?
        } else {
            down
        };
        match spec.mup {
            Some(m) if m.mlp_down != 1.0 => Ok(down.affine(m.mlp_down, 0.0)?),
            _ => Ok(down),
        }
    }

    /// ZAYA's router MLP: its logits over the experts and the class that computes nothing, from
    /// the FFN input `x`; the state it carries on to the next layer is kept for it.
    pub(super) fn router_mlp(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        let mut r = self.proj(x, Role::RouterDown, b, true)?;
        if b > 0 {
            if let Some(prev) = self.router_state.borrow().as_ref() {
                r = (r + prev.broadcast_mul(self.w(Role::RouterState, Some(b))?)?)?;
            }
        }
        *self.router_state.borrow_mut() = Some(r.clone());
        let n = Norm {
            kind: anatomy_core::spec::NormKind::Rms,
            ..self.spec.norm.clone()
        };
        let h = norm(&r, Some(self.w(Role::RouterNorm, Some(b))?), None, &n)?;
        let h = self.proj(&h, Role::RouterFc1, b, true)?.gelu_erf()?;
        let h = self.proj(&h, Role::RouterFc2, b, true)?.gelu_erf()?;
        self.proj(&h, Role::Router, b, false)
    }

    pub(super) fn moe(&self, x: &Tensor, b: usize) -> Res<Tensor> {
        self.moe_reading(x, x, b)
    }

    /// The mixture of experts of layer `b`: its router reading `router_x`, its experts `x`.
    pub(super) fn moe_reading(&self, router_x: &Tensor, x: &Tensor, b: usize) -> Res<Tensor> {
        self.moe_by_ids(router_x, x, b, None)
    }

    /// The experts, with the step's token ids where a layer routes by them (DeepSeek-V4).
    pub(super) fn moe_by_ids(
        &self,
        router_x: &Tensor,
        x: &Tensor,
        b: usize,
        ids: Option<&[u32]>,
    ) -> Res<Tensor> {
        let spec = &self.spec;
        let m = spec.moe.as_ref().expect("MoE layer");
        let (t, e, k) = (x.dim(0)?, m.experts as usize, m.top_k as usize);
        // The router scores the zero-computation experts after the routed ones, and ZAYA's a
        // class that computes nothing.
        let sink = m.scoring == Scoring::SigmoidSink;
        let shared = if sink { m.shared_experts as usize } else { 0 };
        let scored = e + m.zero_experts as usize + usize::from(m.router_mlp.is_some()) + shared;
        // Gemma 4's router reads its input normed (no weight), times a vector and 1/√hidden.
        let router_x = if m.router_norm {
            let s = self.w(Role::RouterScale, Some(b))?;
            let rx = rms(router_x, spec.norm.eps)?
                .broadcast_mul(s)?
                .affine(1.0 / (spec.hidden as f64).sqrt(), 0.0)?;
            self.keep(Some(b), Point::RouterIn, &rx);
            rx
        } else {
            router_x.clone()
        };
        let mut logits = match m.router_mlp {
            Some(_) => self.router_mlp(&router_x, b)?,
            None => self.proj(&router_x, Role::Router, b, m.router_bias)?,
        };
        if let Some(c) = m.router_softcap {
            logits = softcap(&logits, c)?;
        }
        let lg: Vec<Vec<f32>> = logits.to_vec2()?;
        // DeepSeek-V4's first layers route by token id, without a correction bias.
        let hashed = (m.hash_layers.as_ref()).is_some_and(|h| h.contains(b as u64));
        let correction: Option<Vec<f32>> = if m.correction_bias && !hashed {
            Some(
                self.weights
                    .get(&self.name(Role::CorrectionBias, false, Some(b), None))?
                    .flatten_all()?
                    .to_vec1()?,
            )
        } else {
            None
        };
        self.keep(Some(b), Point::Router, &logits);
        // Routing on the host: per token, the chosen experts and their weights.
        let mut choices: Vec<Vec<(usize, f32)>> = Vec::with_capacity(t);
        if m.router_mlp.is_some() {
            // ZAYA: the best class after the balancing biases, weighted by its probability; the
            // last class computes nothing.
            let balance: Vec<f32> = self.w(Role::RouterBalance, Some(b))?.to_vec1()?;
            for row in &lg {
                let top = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let ex: Vec<f32> = row.iter().map(|l| (l - top).exp()).collect();
                let sum: f32 = ex.iter().sum();
                let p: Vec<f32> = ex.iter().map(|v| v / sum).collect();
                let c = (0..p.len())
                    .max_by(|&i, &j| {
                        (p[i] + balance[i])
                            .total_cmp(&(p[j] + balance[j]))
                            .then(j.cmp(&i))
                    })
                    .unwrap_or(0);
                choices.push(if c < e { vec![(c, p[c])] } else { vec![] });
            }
        } else if hashed {
            let ids = ids.expect("hash routing reads the step's token ids");
            choices = self.hashed(&lg, m, b, ids)?;
        } else {
            for row in &lg {
                choices.push(route(row, m, correction.as_deref(), scored, k));
            }
        }
        // Inkling: every weight, the shared experts' too, times the router's learned scalar.
        if sink {
            let g: Vec<f32> = self.w(Role::RouterScalar, Some(b))?.to_vec1()?;
            for c in &mut choices {
                c.iter_mut().for_each(|(_, w)| *w *= g[0]);
            }
        }
        // Gemma 4: each chosen weight times its expert's learned scale.
        if m.expert_scale {
            let s: Vec<f32> = self.w(Role::RouterExpertScale, Some(b))?.to_vec1()?;
            for c in &mut choices {
                for (ex, w) in c.iter_mut() {
                    *w *= s[*ex];
                }
            }
        }
        // The routing table: each token's weight for each expert, zero where not chosen.
        let mut table = vec![0f32; t * scored];
        for (i, c) in choices.iter().enumerate() {
            for &(ex, w) in c {
                table[i * scored + ex] = w;
            }
        }
        self.keep(
            Some(b),
            Point::Routing,
            &Tensor::from_vec(table, (t, scored), &Device::Cpu)?,
        );
        let mut out = Tensor::zeros((t, spec.hidden as usize), DType::F32, &Device::Cpu)?;
        for ex in 0..e {
            let rows: Vec<(u32, f32)> = choices
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    c.iter()
                        .find(|(id, _)| *id == ex)
                        .map(|(_, w)| (i as u32, *w))
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            let idx = Tensor::new(
                rows.iter().map(|r| r.0).collect::<Vec<_>>().as_slice(),
                &Device::Cpu,
            )?;
            let wts = Tensor::new(
                rows.iter().map(|r| r.1).collect::<Vec<_>>().as_slice(),
                &Device::Cpu,
            )?
            .unsqueeze(1)?;
            let xs = x.index_select(&idx, 0)?;
            let y = if m.scoring == Scoring::TopkSigmoid {
                self.expert(&xs.broadcast_mul(&wts)?, b, ex)?
            } else {
                self.expert(&xs, b, ex)?.broadcast_mul(&wts)?
            };
            out = out.index_add(&idx, &y, 0)?;
        }
        if m.zero_experts > 0 {
            // A chosen zero-computation expert returns its input, weighted.
            let w: Vec<f32> = (choices.iter())
                .map(|c| c.iter().filter(|(id, _)| *id >= e).map(|(_, w)| w).sum())
                .collect();
            out = (out + x.broadcast_mul(&Tensor::from_vec(w, (t, 1), &Device::Cpu)?)?)?;
        }
        if sink {
            // Inkling: each shared expert a gated MLP of its own (stacked [S, I, H]), weighted
            // by the router.
            let (wg, wu, wd) = (
                self.w(Role::SharedGate, Some(b))?,
                self.w(Role::SharedUp, Some(b))?,
                self.w(Role::SharedDown, Some(b))?,
            );
            for j in 0..shared {
                let g = x.matmul(&wg.get(j)?.t()?)?;
                let u = x.matmul(&wu.get(j)?.t()?)?;
                let y = self.glu(&g, &u, None, false)?.matmul(&wd.get(j)?.t()?)?;
                let wts: Vec<f32> = (choices.iter())
                    .map(|c| c.iter().find(|(id, _)| *id == e + j).map_or(0.0, |p| p.1))
                    .collect();
                let y = y.broadcast_mul(&Tensor::from_vec(wts, (t, 1), &Device::Cpu)?)?;
                self.keep_expert(b, Point::SharedDown, &y, j);
                out = (out + y)?;
            }
        } else if m.shared_experts > 0 && !self.spec.mlp.gated {
            // A plain shared MLP: up, the activation, down (Nemotron-H).
            let u = self.proj(x, Role::SharedUp, b, m.shared_bias)?;
            self.keep(Some(b), Point::SharedUp, &u);
            let a = self.act(&u)?;
            self.keep(Some(b), Point::SharedAct, &a);
            let s = self.proj(&a, Role::SharedDown, b, m.shared_bias)?;
            self.keep(Some(b), Point::SharedDown, &s);
            out = (out + self.shared_out_norm(s, b)?)?;
        } else if m.shared_experts > 0 {
            let (g, u) = if m.shared_fused {
                let f = m.shared_intermediate as usize;
                let gu = self.proj(x, Role::SharedGateUp, b, m.shared_bias)?;
                (gu.narrow(1, 0, f)?, gu.narrow(1, f, f)?)
            } else {
                (
                    self.proj(x, Role::SharedGate, b, m.shared_bias)?,
                    self.proj(x, Role::SharedUp, b, m.shared_bias)?,
                )
            };
            self.keep(Some(b), Point::SharedGate, &g);
            self.keep(Some(b), Point::SharedUp, &u);
            // DeepSeek-V4 clamps the shared expert as the routed ones.
            let a = if m.shared_clamp {
                self.glu(&g, &u, m.swiglu_limit, m.swiglu_plain)?
            } else if let Some(c) = &m.act_clips {
                self.clipped_glu(&g, &u, c.limit(b, true))?
            } else {
                self.glu(&g, &u, self.spec.mlp.clamp, false)?
            };
            self.keep(Some(b), Point::SharedAct, &a);
            let s = self.proj(&a, Role::SharedDown, b, m.shared_bias)?;
            self.keep(Some(b), Point::SharedDown, &s);
            let mut s = self.shared_out_norm(s, b)?;
            if m.shared_gate {
                let name = self.name(Role::SharedExpertGate, false, Some(b), None);
                let g = self.linear(x, &name, None)?;
                self.keep(Some(b), Point::SharedExpertGate, &g);
                let g = sigmoid(&g)?;
                s = s.broadcast_mul(&g)?;
            }
            out = (out + s)?;
            if m.shared_average {
                out = (out * 0.5)?;
            }
        }
        if m.out_bias {
            out = out.broadcast_add(self.bias(Role::MoeBlock, Some(b))?)?;
        }
        if m.post_norm {
            out = self.norm(&out, Role::MoePostNorm, Some(b))?;
            self.keep(Some(b), Point::MoePostNorm, &out);
        }
        Ok(out)
    }

    pub(super) fn expert(&self, x: &Tensor, b: usize, e: usize) -> Res<Tensor> {
        let m = self.spec.moe.as_ref().expect("MoE");
        let f = m.expert_intermediate as usize;
        if !self.spec.mlp.gated {
            // Plain experts: up, the activation, down; each stored apart (Nemotron-H), or
            // every expert's projection in one tensor (Ergo's [E, in, out]).
            let times = move |x: &Tensor, role| -> Res<Tensor> {
                match m.storage {
                    ExpertStorage::PerExpert => {
                        self.linear(x, &self.name(role, false, Some(b), Some(e)), None)
                    }
                    ExpertStorage::Stacked { out_in, .. } => {
                        let w = self.w(role, Some(b))?.i(e)?;
                        Ok(x.matmul(&if out_in { w.t()? } else { w })?)
                    }
                    // Rows e·f … of [E·f, in] for up, of [E·f, out] for down.
                    ExpertStorage::Flat => {
                        let w = self.w(role, Some(b))?.narrow(0, e * f, f)?;
                        Ok(x.matmul(&if role == Role::ExpertUp { w.t()? } else { w })?)
                    }
                }
            };
            let u = times(x, Role::ExpertUp)?;
            self.keep_expert(b, Point::ExpertUp, &u, e);
            let hidden = self.act(&u)?;
            self.keep_expert(b, Point::ExpertAct, &hidden, e);
            let y = times(&hidden, Role::ExpertDown)?;
            self.keep_expert(b, Point::ExpertDown, &y, e);
            return self.expert_out_norm(y, b, e);
        }
        // Gate and up, each [t, f], by how the experts are stored; then the down projection.
        let (g, u, down): (Tensor, Tensor, DownProj<'_>) = match m.storage {
            ExpertStorage::Stacked {
                out_in,
                interleaved,
            } => {
                // [E, in, out] (or [E, out, in]) tensors, gate and up fused (interleaved or
                // in halves).
                let slice = move |role, bias| -> Res<Tensor> {
                    let name = self.name(role, bias, Some(b), None);
                    let w = self.weights.get(&name)?.i(e)?;
                    if out_in && !bias {
                        Ok(w.t()?)
                    } else {
                        Ok(w)
                    }
                };
                // x · W (+ b) with expert e's slice of the stacked weight and bias, or its
                // weight as stored apart (MXFP4, `Weights::mxfp4`).
                let times = move |x: &Tensor, role| -> Res<Tensor> {
                    let part = format!("{}[{e}]", self.name(role, false, Some(b), None));
                    let y = match self.weights.quantized.get(&part) {
                        Some(q) => q.times(&x.contiguous()?)?,
                        None => x.matmul(&slice(role, false)?)?,
                    };
                    if m.expert_bias {
                        Ok(y.broadcast_add(&slice(role, true)?)?)
                    } else {
                        Ok(y)
                    }
                };
                let gu = times(x, Role::ExpertGateUp)?;
                let (g, u) = if interleaved {
                    let pairs = gu.reshape((gu.dim(0)?, f, 2))?;
                    (pairs.i((.., .., 0))?, pairs.i((.., .., 1))?)
                } else {
                    (gu.narrow(1, 0, f)?, gu.narrow(1, f, f)?)
                };
                (g, u, Box::new(move |h| times(h, Role::ExpertDown)))
            }
            ExpertStorage::Flat => {
                // Expert e's rows of one 2-D tensor per projection: gate and up [out, in],
                // down [in, out].
                let rows =
                    move |role| -> Res<Tensor> { Ok(self.w(role, Some(b))?.narrow(0, e * f, f)?) };
                let g = x.matmul(&rows(Role::ExpertGate)?.t()?)?;
                let u = x.matmul(&rows(Role::ExpertUp)?.t()?)?;
                (
                    g,
                    u,
                    Box::new(move |h| Ok(h.matmul(&rows(Role::ExpertDown)?)?)),
                )
            }
            ExpertStorage::PerExpert => {
                let w = move |role| self.name(role, false, Some(b), Some(e));
                (
                    self.linear(x, &w(Role::ExpertGate), None)?,
                    self.linear(x, &w(Role::ExpertUp), None)?,
                    Box::new(move |h| self.linear(h, &w(Role::ExpertDown), None)),
                )
            }
        };
        self.keep_expert(b, Point::ExpertGate, &g, e);
        self.keep_expert(b, Point::ExpertUp, &u, e);
        let hidden = match m.glu_softcaps {
            // Inkling 2: cap_g(g) · σ(g) · cap_u(u).
            Some((cg, cu)) => ((softcap(&g, cg)? * sigmoid(&g)?)? * softcap(&u, cu)?)?,
            None => match &m.act_clips {
                Some(c) => self.clipped_glu(&g, &u, c.limit(b, false))?,
                None => self.glu(&g, &u, m.swiglu_limit, m.swiglu_plain)?,
            },
        };
        self.keep_expert(b, Point::ExpertAct, &hidden, e);
        let y = down(&hidden)?;
        self.keep_expert(b, Point::ExpertDown, &y, e);
        self.expert_out_norm(y, b, e)
    }

    /// The shared expert's output RMS-normed by its own weight, where the model norms it
    /// (Ergo); else as it is.
    fn shared_out_norm(&self, s: Tensor, b: usize) -> Res<Tensor> {
        if !self.spec.moe.as_ref().is_some_and(|m| m.shared_out_norm) {
            return Ok(s);
        }
        let s =
            rms(&s, self.spec.norm.eps)?.broadcast_mul(self.w(Role::SharedOutNorm, Some(b))?)?;
        self.keep(Some(b), Point::SharedOutNorm, &s);
        Ok(s)
    }

    /// Expert e's output RMS-normed by its own row of the stacked weight, where the model norms
    /// each expert's output (Ergo); else as it is.
    fn expert_out_norm(&self, y: Tensor, b: usize, e: usize) -> Res<Tensor> {
        if !self.spec.moe.as_ref().is_some_and(|m| m.expert_out_norm) {
            return Ok(y);
        }
        let w = self.w(Role::ExpertOutNorm, Some(b))?.i(e)?;
        let y = rms(&y, self.spec.norm.eps)?.broadcast_mul(&w)?;
        self.keep_expert(b, Point::ExpertOutNorm, &y, e);
        Ok(y)
    }

    /// act(gate) ⊙ up, or gpt-oss's clamped form: (clamp(up) + 1) · g · σ(1.702 g), g = min(gate, limit);
    /// `plain`: act(gate) ⊙ up of the clamped inputs.
    /// Ling's clip after the activation: min(act(gate), L) ⊙ clamp(up, −L, L).
    pub(super) fn clipped_glu(&self, g: &Tensor, u: &Tensor, limit: Option<f64>) -> R<Tensor> {
        match limit {
            Some(l) => {
                let g = self.act(g)?.clamp(f32::MIN, l as f32)?;
                g * u.clamp(-l as f32, l as f32)?
            }
            None => self.act_mul(g, u),
        }
    }

    pub(super) fn glu(&self, g: &Tensor, u: &Tensor, limit: Option<f64>, plain: bool) -> R<Tensor> {
        match limit {
            // HY v4: act(gate) ⊙ up of the clamped inputs.
            Some(l) if plain => {
                let g = g.clamp(f32::MIN, l as f32)?;
                let u = u.clamp(-l as f32, l as f32)?;
                self.act_mul(&g, &u)
            }
            Some(l) => {
                let g = g.clamp(f32::MIN, l as f32)?;
                let u = u.clamp(-l as f32, l as f32)?;
                let sig = sigmoid(&g.affine(1.702, 0.0)?)?;
                (u.affine(1.0, 1.0)? * g)? * sig
            }
            None => self.act_mul(g, u),
        }
    }
}

/// An expert's down projection, applied to its hidden activations.
pub(super) type DownProj<'a> = Box<dyn Fn(&Tensor) -> Res<Tensor> + 'a>;

/// One token's use of an expert: (token, slot, weight).
pub(super) type Pick = (usize, usize, f32);

/// Each expert some token chose, with its picks.
pub(super) fn by_expert(choices: &[Vec<(usize, f32)>]) -> Vec<(usize, Vec<Pick>)> {
    let mut out: std::collections::BTreeMap<usize, Vec<Pick>> = Default::default();
    for (tok, c) in choices.iter().enumerate() {
        for (slot, &(ex, w)) in c.iter().enumerate() {
            out.entry(ex).or_default().push((tok, slot, w));
        }
    }
    out.into_iter().collect()
}

/// The indices of the `n` highest scores, best first.
pub(super) fn top_indices(scores: &[f32], n: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    idx.truncate(n);
    idx
}

pub(super) fn softmax_of(v: &[f32]) -> Vec<f32> {
    let mx = v.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let ex: Vec<f32> = v.iter().map(|x| (x - mx).exp()).collect();
    let s: f32 = ex.iter().sum();
    ex.iter().map(|x| x / s).collect()
}

/// A router's score of one logit: σ, or DeepSeek-V4's √softplus (as torch's softplus: the
/// logit itself above 20).
pub(super) fn router_score(s: Scoring, v: f32) -> f32 {
    match s {
        Scoring::SqrtSoftplus => if v > 20.0 { v } else { v.exp().ln_1p() }.sqrt(),
        Scoring::Sigmoid | Scoring::SigmoidBiasedLogits | Scoring::SigmoidSink => {
            1.0 / (1.0 + (-v).exp())
        }
        other @ (Scoring::Softmax
        | Scoring::TopkSoftmax
        | Scoring::TopkSigmoid
        | Scoring::SparseMixer { .. }) => {
            unreachable!("{other:?} scores over the whole row, not logit by logit")
        }
    }
}

/// The experts a token's router row chooses, with their weights.
pub(super) fn route(
    row: &[f32],
    m: &anatomy_core::spec::Moe,
    correction: Option<&[f32]>,
    e: usize,
    k: usize,
) -> Vec<(usize, f32)> {
    let mut chosen: Vec<(usize, f32)> = match m.scoring {
        Scoring::SparseMixer { eps } => {
            // The best expert, then the best of the rest, each weighted by a softmax over the
            // logits within a relative 2·eps of its own (NaN distances stay in, as in torch).
            let mut masked = row.to_vec();
            let mut chosen = Vec::with_capacity(2);
            for _ in 0..2 {
                let e = top_indices(&masked, 1)[0];
                let m = masked[e];
                let near: Vec<f32> = masked
                    .iter()
                    .zip(row)
                    .map(|(&x, &s)| {
                        let far = (m - s) / s.abs().max(m) > (2.0 * eps) as f32;
                        if far {
                            f32::NEG_INFINITY
                        } else {
                            x
                        }
                    })
                    .collect();
                chosen.push((e, softmax_of(&near)[e]));
                masked[e] = f32::NEG_INFINITY;
            }
            chosen
        }
        Scoring::SigmoidSink => {
            // The routed experts chosen by σ plus the bias; the chosen and the shared ones (the
            // row's last) weighted by σ normalized over them all.
            let routed = m.experts as usize;
            let probs: Vec<f32> = row.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect();
            let choice: Vec<f32> = (0..routed)
                .map(|i| probs[i] + correction.map_or(0.0, |c| c[i]))
                .collect();
            let picked: Vec<(usize, f32)> = top_indices(&choice, k)
                .into_iter()
                .chain(routed..probs.len())
                .map(|i| (i, probs[i]))
                .collect();
            let sum: f32 = picked.iter().map(|p| p.1).sum();
            picked.into_iter().map(|(i, p)| (i, p / sum)).collect()
        }
        Scoring::TopkSoftmax | Scoring::TopkSigmoid => {
            let idx = top_indices(row, k);
            let vals: Vec<f32> = idx.iter().map(|&i| row[i]).collect();
            let w = if m.scoring == Scoring::TopkSoftmax {
                softmax_of(&vals)
            } else {
                vals.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect()
            };
            idx.into_iter().zip(w).collect()
        }
        Scoring::Softmax
        | Scoring::Sigmoid
        | Scoring::SigmoidBiasedLogits
        | Scoring::SqrtSoftplus => {
            let probs: Vec<f32> = match m.scoring {
                Scoring::Softmax => softmax_of(row),
                s @ (Scoring::Sigmoid | Scoring::SigmoidBiasedLogits | Scoring::SqrtSoftplus) => {
                    row.iter().map(|&v| router_score(s, v)).collect()
                }
                other @ (Scoring::TopkSoftmax
                | Scoring::TopkSigmoid
                | Scoring::SparseMixer { .. }
                | Scoring::SigmoidSink) => unreachable!("{other:?} is routed by its own arm"),
            };
            let biased = if m.scoring == Scoring::SigmoidBiasedLogits {
                row
            } else {
                &probs
            };
            let mut choice: Vec<f32> = biased
                .iter()
                .enumerate()
                .map(|(i, p)| p + correction.map_or(0.0, |c| c[i]))
                .collect();
            let groups = m.n_group as usize;
            if groups > 1 {
                let per = e / groups;
                let score = |g: usize| -> f32 {
                    let mut s: Vec<f32> = choice[g * per..(g + 1) * per].to_vec();
                    s.sort_by(|a, b| b.total_cmp(a));
                    if m.scoring == Scoring::Sigmoid {
                        s[0] + s.get(1).copied().unwrap_or(0.0)
                    } else {
                        s[0]
                    }
                };
                let gs: Vec<f32> = (0..groups).map(score).collect();
                let keep = top_indices(&gs, m.topk_group as usize);
                // Out, whatever their score: a chosen group's expert may score below zero (a
                // sigmoid plus a negative correction bias) and must still win over them.
                for (i, c) in choice.iter_mut().enumerate() {
                    if !keep.contains(&(i / per)) {
                        *c = f32::NEG_INFINITY;
                    }
                }
            }
            let idx = top_indices(&choice, k);
            let mut w: Vec<f32> = idx.iter().map(|&i| probs[i]).collect();
            if m.norm_topk_prob {
                let s: f32 = w.iter().sum::<f32>()
                    + if m.scoring != Scoring::Softmax {
                        m.renorm_eps as f32
                    } else {
                        0.0
                    };
                w.iter_mut().for_each(|x| *x /= s);
            }
            idx.into_iter().zip(w).collect()
        }
    };
    for c in &mut chosen {
        c.1 *= m.routed_scaling as f32;
    }
    chosen
}

/// Gemma 3n's activation sparsity: each row's values above mean + Φ⁻¹(p) · std (the biased
/// std), shifted down by that level, the rest 0.
pub(super) fn gaussian_top_k(g: &Tensor, p: f64) -> R<Tensor> {
    let z = anatomy_core::spec::normal_quantile(p) as f32 as f64;
    let mean = g.mean_keepdim(D::Minus1)?;
    let centered = g.broadcast_sub(&mean)?;
    let std = centered.sqr()?.mean_keepdim(D::Minus1)?.sqrt()?;
    let cutoff = (mean + std.affine(z, 0.0)?)?;
    g.broadcast_sub(&cutoff)?.relu()
}
