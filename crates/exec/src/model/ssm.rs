//! Mamba and Mamba-2 mixers, and the short convolution mixer.

use super::*;

impl Model {
    /// Mamba2's mixer: the input projection split into the gate z, the convolved x, B, C and
    /// the step Δ per head; the convolution and SiLU; the scan through the layer's state; the
    /// gated, grouped RMS norm; the output projection.
    pub(super) fn mamba2(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self.spec.ssm().expect("a Mamba2 layer has its Ssm");
        let (t, inner, conv_dim) = (x.dim(0)?, s.inner() as usize, s.conv_dim() as usize);
        let (heads, n, groups) = (s.heads as usize, s.state as usize, s.groups as usize);
        let mut p = self.proj(x, Role::SsmIn, b, s.bias)?;
        if s.part_mults != [1.0; 5] {
            // Falcon-H1's μP multipliers, one per part: z, x, B, C, Δ.
            let gn = groups * n;
            let widths = [inner, inner, gn, gn, heads];
            let scale: Vec<f32> = widths
                .iter()
                .zip(s.part_mults)
                .flat_map(|(&w, m)| std::iter::repeat_n(m as f32, w))
                .collect();
            let len = scale.len();
            p = p.broadcast_mul(&Tensor::from_vec(scale, len, &Device::Cpu)?)?;
        }
        let z = p.narrow(1, 0, inner)?;
        let u = p.narrow(1, inner, conv_dim)?.contiguous()?;
        let dt = p.narrow(1, inner + conv_dim, heads)?;
        let state = cache.ssm[b].get_or_insert_with(|| {
            SsmState::new(
                s.conv_kernel as usize,
                conv_dim,
                heads,
                s.head_dim as usize,
                n,
            )
        });
        let conv_bias = if s.conv_bias {
            Some(vec(self.bias(Role::SsmConv, Some(b))?)?)
        } else {
            None
        };
        let w = vec(self.w(Role::SsmConv, Some(b))?)?;
        let conv = crate::ssm::causal_conv(
            &vec(&u)?,
            &mut state.conv,
            &w,
            conv_bias.as_deref(),
            conv_dim,
        );
        let conv = Tensor::from_vec(conv, (t, conv_dim), &Device::Cpu)?.silu()?;
        self.keep(Some(b), Point::SsmConv, &conv);
        let xs = conv.narrow(1, 0, inner)?;
        let bm = conv.narrow(1, inner, groups * n)?;
        let cm = conv.narrow(1, inner + groups * n, groups * n)?;
        let mut dt = softplus(&dt.broadcast_add(self.w(Role::SsmDtBias, Some(b))?)?)?;
        if s.dt_floor > 0.0 {
            dt = dt.maximum(s.dt_floor)?;
        }
        self.keep(Some(b), Point::SsmDt, &dt);
        let a: Vec<f32> = vec(self.w(Role::SsmALog, Some(b))?)?
            .iter()
            .map(|l| -l.exp())
            .collect();
        let dims = crate::ssm::Dims {
            heads,
            head_dim: s.head_dim as usize,
            n,
            groups,
        };
        let (xs, dt, bm, cm) = (vec(&xs)?, vec(&dt)?, vec(&bm)?, vec(&cm)?);
        let d = vec(self.w(Role::SsmD, Some(b))?)?;
        let inputs = crate::ssm::Inputs {
            x: &xs,
            dt: &dt,
            a: &a,
            b: &bm,
            c: &cm,
            d: &d,
        };
        // A prompt chunk by chunk, as transformers computes one; a decoded token through the
        // recurrence (the same sums).
        let y = if t > 1 {
            crate::ssm::scan_chunked(&inputs, &mut state.h, dims, SSD_CHUNK)?
        } else {
            crate::ssm::scan(&inputs, &mut state.h, dims)
        };
        if self.capturing() {
            let h = Tensor::from_vec(
                state.h.clone(),
                (heads * s.head_dim as usize, n),
                &Device::Cpu,
            )?;
            self.keep(Some(b), Point::SsmState, &h);
        }
        let y = Tensor::from_vec(y, (t, inner), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &y);
        // RMS-normed per group, scaled by the norm's weight, and gated: the gate first (Mamba2),
        // after, or alone.
        let normed = |y: &Tensor| -> Res<Tensor> {
            let y = rms(&y.reshape((t, groups, inner / groups))?, s.eps)?.reshape((t, inner))?;
            Ok(y.broadcast_mul(self.w(Role::SsmNorm, Some(b))?)?)
        };
        let g = match s.gate {
            SsmGate::NormAfter => normed(&(y * z.silu()?)?)?,
            SsmGate::NormBefore => (normed(&y)? * z.silu()?)?,
            SsmGate::Plain => (y * z.silu()?)?,
        };
        self.keep(Some(b), Point::SsmNorm, &g);
        self.proj(&g, Role::SsmOut, b, s.bias)
    }

    /// Mamba's selective scan: x and the gate from one projection; the convolution and SiLU;
    /// the step, B and C from x (RMS-normed without weights in Falcon-Mamba); Δ per channel;
    /// the scan through a state per channel; the gate; the output projection.
    pub(super) fn mamba(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let s = self.spec.s6().expect("a Mamba layer has its S6");
        let (t, i, n, r) = (
            x.dim(0)?,
            s.inner as usize,
            s.state as usize,
            s.dt_rank as usize,
        );
        let p = self.proj(x, Role::SsmIn, b, s.bias)?;
        let (u, z) = if s.interleaved {
            // Zamba: x and z alternate channel by channel.
            let p = p.reshape((t, i, 2))?;
            (
                p.narrow(2, 0, 1)?.reshape((t, i))?.contiguous()?,
                p.narrow(2, 1, 1)?.reshape((t, i))?,
            )
        } else {
            (p.narrow(1, 0, i)?.contiguous()?, p.narrow(1, i, i)?)
        };
        let state =
            cache.ssm[b].get_or_insert_with(|| SsmState::new(s.conv_kernel as usize, i, i, 1, n));
        let conv_bias = if s.conv_bias {
            Some(vec(self.bias(Role::SsmConv, Some(b))?)?)
        } else {
            None
        };
        let w = vec(self.w(Role::SsmConv, Some(b))?)?;
        let conv = crate::ssm::causal_conv(&vec(&u)?, &mut state.conv, &w, conv_bias.as_deref(), i);
        let xs = Tensor::from_vec(conv, (t, i), &Device::Cpu)?.silu()?;
        self.keep(Some(b), Point::SsmConv, &xs);
        if s.heads > 1 {
            return self.mamba_heads(&xs, &z, b, state);
        }
        let sel = self.proj(&xs, Role::SsmX, b, false)?;
        // The step's input, B and C, each RMS-normed where the model does (with its weight
        // where stored).
        let part = |start, len, role| -> Res<Tensor> {
            let p = sel.narrow(1, start, len)?.contiguous()?;
            Ok(match s.bcdt_norm {
                Some(nm) if nm.weighted => {
                    rms(&p, nm.eps)?.broadcast_mul(self.w(role, Some(b))?)?
                }
                Some(nm) => rms(&p, nm.eps)?,
                None => p,
            })
        };
        let (step, bm, cm) = (
            part(0, r, Role::SsmDtNorm)?,
            part(r, n, Role::SsmBNorm)?,
            part(r + n, n, Role::SsmCNorm)?,
        );
        let dt = softplus(&self.proj(&step, Role::SsmDt, b, true)?)?;
        self.keep(Some(b), Point::SsmDt, &dt);
        self.s6_scan(&xs, &dt, &bm, &cm, &z, 1, b, state)
    }

    /// Zamba's multi-head Mamba after its convolution (`xs`): each head projects its channels
    /// to its own step input, B and C, and the step input to a step per channel; the scan runs
    /// per channel, each head's channels sharing its B and C.
    pub(super) fn mamba_heads(
        &self,
        xs: &Tensor,
        z: &Tensor,
        b: usize,
        state: &mut SsmState,
    ) -> Res<Tensor> {
        let s = self.spec.s6().expect("a Mamba layer has its S6");
        let (i, n, r, h) = (
            s.inner as usize,
            s.state as usize,
            s.dt_rank as usize,
            s.heads as usize,
        );
        let hd = i / h;
        let (wx, wdt) = (self.w(Role::SsmX, Some(b))?, self.w(Role::SsmDt, Some(b))?);
        let bdt = self.bias(Role::SsmDt, Some(b))?;
        let (mut dts, mut bs, mut cs) = (Vec::new(), Vec::new(), Vec::new());
        for head in 0..h {
            let x = xs.narrow(1, head * hd, hd)?;
            let sel = x.matmul(&wx.get(head)?.t()?)?;
            let step = sel.narrow(1, 0, r)?;
            bs.push(sel.narrow(1, r, n)?);
            cs.push(sel.narrow(1, r + n, n)?);
            let dt = step
                .matmul(&wdt.get(head)?.t()?)?
                .broadcast_add(&bdt.get(head)?)?;
            dts.push(softplus(&dt)?);
        }
        let dt = Tensor::cat(&dts, 1)?;
        self.keep(Some(b), Point::SsmDt, &dt);
        let (bm, cm) = (Tensor::cat(&bs, 1)?, Tensor::cat(&cs, 1)?);
        // Head h's channels share its B and C.
        self.s6_scan(xs, &dt, &bm, &cm, z, h, b, state)
    }

    /// Mamba's selective scan after the step (`dt`, per channel), B and C (per group of
    /// channels): every channel a "head" of one, its state decaying at a rate per state entry;
    /// the read-out gated by SiLU(z) and projected back.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn s6_scan(
        &self,
        xs: &Tensor,
        dt: &Tensor,
        bm: &Tensor,
        cm: &Tensor,
        z: &Tensor,
        groups: usize,
        b: usize,
        state: &mut SsmState,
    ) -> Res<Tensor> {
        let s = self.spec.s6().expect("a Mamba layer has its S6");
        let (t, i, n) = (xs.dim(0)?, s.inner as usize, s.state as usize);
        let a: Vec<f32> = vec(self.w(Role::SsmALog, Some(b))?)?
            .iter()
            .map(|l| -l.exp())
            .collect();
        let (xv, dt, bm, cm) = (vec(xs)?, vec(dt)?, vec(bm)?, vec(cm)?);
        let d = vec(self.w(Role::SsmD, Some(b))?)?;
        let inputs = crate::ssm::Inputs {
            x: &xv,
            dt: &dt,
            a: &a,
            b: &bm,
            c: &cm,
            d: &d,
        };
        let dims = crate::ssm::Dims {
            heads: i,
            head_dim: 1,
            n,
            groups,
        };
        let y = crate::ssm::scan(&inputs, &mut state.h, dims);
        if self.capturing() {
            let h = Tensor::from_vec(state.h.clone(), (i, n), &Device::Cpu)?;
            self.keep(Some(b), Point::SsmState, &h);
        }
        let y = Tensor::from_vec(y, (t, i), &Device::Cpu)?;
        self.keep(Some(b), Point::SsmScan, &y);
        let g = (y * z.silu()?)?;
        self.proj(&g, Role::SsmOut, b, s.bias)
    }

    /// LFM2's short convolution: B, C and x from one projection, B ⊙ x convolved through the
    /// layer's window, gated by C, projected back.
    pub(super) fn short_conv(&self, x: &Tensor, b: usize, cache: &mut Cache) -> Res<Tensor> {
        let c = self
            .spec
            .short_conv()
            .expect("a short-convolution layer has its settings");
        let (t, d) = (x.dim(0)?, self.spec.hidden as usize);
        let p = self.proj(x, Role::SsmIn, b, c.bias)?;
        let (bg, cg, xs) = (
            p.narrow(1, 0, d)?,
            p.narrow(1, d, d)?,
            p.narrow(1, 2 * d, d)?,
        );
        let u = (bg * xs)?;
        let state =
            cache.ssm[b].get_or_insert_with(|| SsmState::new(c.kernel as usize, d, 0, 0, 0));
        let bias = if c.bias {
            Some(vec(self.bias(Role::SsmConv, Some(b))?)?)
        } else {
            None
        };
        let w = vec(self.w(Role::SsmConv, Some(b))?)?;
        let conv = crate::ssm::causal_conv(&vec(&u)?, &mut state.conv, &w, bias.as_deref(), d);
        let conv = Tensor::from_vec(conv, (t, d), &Device::Cpu)?;
        self.keep(Some(b), Point::ConvOut, &conv);
        self.proj(&(cg * conv)?, Role::SsmOut, b, c.bias)
    }
}
