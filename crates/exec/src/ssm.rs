//! Mamba2's two sequence operations on plain slices: the causal depthwise convolution and the
//! selective scan, each token in turn through a state that stays the same size however long the
//! sequence (`scan`), or for a prompt chunk by chunk (`scan_chunked`, the SSD form transformers'
//! prompt path uses too): the same sums, ordered differently.

/// One layer's state between calls: what the convolution and the scan carry to the next token.
#[derive(Clone, Debug, PartialEq)]
pub struct SsmState {
    /// The last `kernel − 1` convolution inputs, oldest first, [kernel − 1, channels].
    pub conv: Vec<f32>,
    /// The scan's state, [heads, head_dim, state].
    pub h: Vec<f32>,
    /// The delta rule's memory, [heads, key_dim, value_dim], in f64: its rank-one updates,
    /// summed token after token in f32, drift from the exact sum more than transformers' chunked
    /// prompt does (2.3e-4 in the logits of a toy Qwen3.5 with key heads of 8, against 1.7e-5).
    pub memory: Vec<f64>,
}

impl SsmState {
    pub fn new(kernel: usize, channels: usize, heads: usize, head_dim: usize, n: usize) -> Self {
        SsmState {
            conv: vec![0.0; (kernel - 1) * channels],
            h: vec![0.0; heads * head_dim * n],
            memory: Vec::new(),
        }
    }

    /// An RWKV layer's: the two mixings' previous inputs ([time | channel], 2·d) and the WKV
    /// sums [num | den | top], 3·a, top starting far below any exponent.
    pub fn rwkv(d: usize, a: usize) -> Self {
        let mut h = vec![0.0; 3 * a];
        h[2 * a..].fill(-1e38);
        SsmState {
            conv: vec![0.0; 2 * d],
            h,
            memory: Vec::new(),
        }
    }

    /// A memory of heads × dk × dv alone, without a convolution (lightning attention).
    pub fn memory(heads: usize, dk: usize, dv: usize) -> Self {
        Self::delta(1, 0, heads, dk, dv)
    }

    /// A Gated DeltaNet layer's: the convolution's window and the memory.
    pub fn delta(kernel: usize, channels: usize, heads: usize, dk: usize, dv: usize) -> Self {
        SsmState {
            conv: vec![0.0; (kernel - 1) * channels],
            h: Vec::new(),
            memory: vec![0.0; heads * dk * dv],
        }
    }
}

/// y[t, c] = bias[c] + Σₖ w[c, k] · u[t − (K − 1) + k, c], with the inputs before this call taken
/// from `past` (the last K − 1, zero at the start), which is then moved on by these T inputs.
/// `u`: [T, C]; `w`: [C, K]; returns [T, C].
pub fn causal_conv(
    u: &[f32],
    past: &mut [f32],
    w: &[f32],
    bias: Option<&[f32]>,
    c: usize,
) -> Vec<f32> {
    let k = w.len() / c;
    let t = u.len() / c;
    // The inputs this call sees: the carried ones, then the new ones.
    let mut all = Vec::with_capacity(past.len() + u.len());
    all.extend_from_slice(past);
    all.extend_from_slice(u);
    let mut y = vec![0.0f32; t * c];
    for i in 0..t {
        for ch in 0..c {
            let mut s = bias.map_or(0.0, |b| b[ch]);
            for j in 0..k {
                s += w[ch * k + j] * all[(i + j) * c + ch];
            }
            y[i * c + ch] = s;
        }
    }
    let keep = past.len();
    past.copy_from_slice(&all[all.len() - keep..]);
    y
}

/// The shapes of one scan.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub heads: usize,
    pub head_dim: usize,
    pub n: usize,
    pub groups: usize,
}

/// What one scan reads. `x`: [T, H·P]; `dt`: [T, H] (after softplus); `a`: [H], or [H, N] for a
/// rate per state entry (Mamba's), negative; `b`, `c`: [T, G·N], head h reading group
/// h / (H / G); `d`: [H].
pub struct Inputs<'a> {
    pub x: &'a [f32],
    pub dt: &'a [f32],
    pub a: &'a [f32],
    pub b: &'a [f32],
    pub c: &'a [f32],
    pub d: &'a [f32],
}

/// For each token: every head's state `h` ([H, P, N]) decays by exp(Δ·A) and gains Δ · x ⊗ B,
/// then y = h · C + D · x. Returns y, [T, H·P].
pub fn scan(i: &Inputs, h: &mut [f32], s: Dims) -> Vec<f32> {
    let Inputs { x, dt, a, b, c, d } = *i;
    let (hn, p, n) = (s.heads, s.head_dim, s.n);
    let t = dt.len() / hn;
    let per_group = hn / s.groups;
    let mut y = vec![0.0f32; t * hn * p];
    // This head's decay for each state entry, refilled per head and token.
    let mut decay = vec![0.0f32; n];
    for tok in 0..t {
        for head in 0..hn {
            let g = head / per_group;
            let delta = dt[tok * hn + head];
            // One rate per head (Mamba2), or one per head and state entry (Mamba).
            if a.len() == hn {
                decay.fill((delta * a[head]).exp());
            } else {
                for (d, r) in decay.iter_mut().zip(&a[head * n..][..n]) {
                    *d = (delta * r).exp();
                }
            }
            let bv = &b[(tok * s.groups + g) * n..][..n];
            let cv = &c[(tok * s.groups + g) * n..][..n];
            for q in 0..p {
                let xv = x[(tok * hn + head) * p + q];
                let row = &mut h[(head * p + q) * n..][..n];
                let mut out = 0.0f32;
                for j in 0..n {
                    row[j] = decay[j] * row[j] + delta * xv * bv[j];
                    out += row[j] * cv[j];
                }
                y[(tok * hn + head) * p + q] = out + d[head] * xv;
            }
        }
    }
    y
}

/// `scan` for a prompt with one decay rate per head (Mamba2), chunk by chunk (the SSD form
/// transformers' prompt path uses): within a chunk every output is a weighted sum of the
/// chunk's inputs, y_t = Σ_{s≤t} e^{L_t − L_s} (C_t · B_s) Δ_s x_s, plus the state carried in,
/// e^{L_t} h · C_t, where L_t sums Δ·A over the chunk up to t; the state then moves to the
/// chunk's end at once, h ← e^{L_Q} h + Σ_s e^{L_Q − L_s} Δ_s x_s ⊗ B_s. The same sums as
/// `scan`'s token-by-token loop, grouped by chunk, with no state written between.
/// Each chunk is a few batched matrix products over the heads.
pub fn scan_chunked(
    i: &Inputs,
    h: &mut [f32],
    s: Dims,
    chunk: usize,
) -> candle_core::Result<Vec<f32>> {
    let chunk = chunk.max(1);
    use candle_core::{Device, Tensor};
    let Inputs { x, dt, a, b, c, d } = *i;
    let (hn, p, n, g) = (s.heads, s.head_dim, s.n, s.groups);
    debug_assert_eq!(a.len(), hn, "one decay rate per head");
    let t = dt.len() / hn;
    let cpu = &Device::Cpu;
    let x = Tensor::from_slice(x, (t, hn, p), cpu)?;
    let dt = Tensor::from_slice(dt, (t, hn), cpu)?;
    // Each head's group's B and C.
    let (b, c) = (grouped(b, t, g, n, hn)?, grouped(c, t, g, n, hn)?);
    let a = Tensor::from_slice(a, (1, hn), cpu)?;
    let dskip = Tensor::from_slice(d, (hn, 1, 1), cpu)?;
    let mut state = Tensor::from_slice(h, (hn, p, n), cpu)?;
    let mut ys = Vec::new();
    for start in (0..t).step_by(chunk) {
        let q = chunk.min(t - start);
        // [H, q, ·]: heads first, for batched products.
        let xc = x.narrow(0, start, q)?.transpose(0, 1)?.contiguous()?;
        let bc = b.narrow(0, start, q)?.transpose(0, 1)?.contiguous()?;
        let cc = c.narrow(0, start, q)?.transpose(0, 1)?.contiguous()?;
        let dtc = dt.narrow(0, start, q)?.t()?.contiguous()?; // [H, q]
        let l = dt
            .narrow(0, start, q)?
            .broadcast_mul(&a)?
            .cumsum(0)?
            .t()?
            .contiguous()?; // [H, q]
                            // exp(L_t − L_s) for s ≤ t, 0 above the diagonal.
        let diff = l.unsqueeze(2)?.broadcast_sub(&l.unsqueeze(1)?)?; // [H, q, q]
        let seg = diff
            .broadcast_add(&lower(q, false, 0.0, f32::NEG_INFINITY)?)?
            .exp()?;
        let m = cc
            .matmul(&bc.t()?)?
            .mul(&seg)?
            .broadcast_mul(&dtc.unsqueeze(1)?)?; // [H, q, q]
        let within = m.matmul(&xc)?; // [H, q, P]
        let carried = cc
            .matmul(&state.t()?)?
            .broadcast_mul(&l.exp()?.unsqueeze(2)?)?; // [H, q, P]
        let y = (within + carried)?.add(&xc.broadcast_mul(&dskip)?)?;
        ys.push(y.transpose(0, 1)?); // [q, H, P]
                                     // The state at the chunk's end.
        let last = l.narrow(1, q - 1, 1)?; // [H, 1]
        let w = last.broadcast_sub(&l)?.exp()?.mul(&dtc)?; // [H, q]
        let written = xc.broadcast_mul(&w.unsqueeze(2)?)?.t()?.matmul(&bc)?; // [H, P, N]
        state = state
            .broadcast_mul(&last.exp()?.unsqueeze(2)?)?
            .add(&written)?;
    }
    h.copy_from_slice(&state.flatten_all()?.to_vec1::<f32>()?);
    let y = Tensor::cat(&ys, 0)?.flatten_all()?.to_vec1::<f32>()?;
    Ok(y)
}

/// The shapes of one gated delta rule: value heads `vh` each read key head h / (vh / kh).
#[derive(Clone, Copy, Debug)]
pub struct DeltaDims {
    pub key_heads: usize,
    pub value_heads: usize,
    pub key_dim: usize,
    pub value_dim: usize,
    /// `g` holds a decay per key channel of each head (Kimi), [T, VH·DK], not one per head.
    pub channel_decay: bool,
}

/// For each token and value head h, the memory `s` ([VH, DK, DV]) decays by exp(g) (each key
/// channel's row by its own, with `channel_decay`), then moves what it recalls for k toward v by
/// β: s ← s + k ⊗ β (v − sᵀk); the output is sᵀq.
/// `q`, `k`: [T, KH·DK], normed and scaled; `v`: [T, VH·DV]; `g`, `beta`: [T, VH]. Returns
/// [T, VH·DV]. transformers runs a prompt through a chunked form and a decoded token through this
/// recurrence; the two are the same products, summed in another order.
pub fn delta_rule(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    g: &[f32],
    beta: &[f32],
    s: &mut [f64],
    d: DeltaDims,
) -> Vec<f32> {
    let (kh, vh, dk, dv) = (d.key_heads, d.value_heads, d.key_dim, d.value_dim);
    let t = beta.len() / vh;
    let per_head = if d.channel_decay { dk } else { 1 };
    let per_key = vh / kh;
    let mut out = vec![0.0f32; t * vh * dv];
    // What the memory recalls for k, then the correction; the output, refilled per head.
    let (mut recall, mut o) = (vec![0.0f64; dv], vec![0.0f64; dv]);
    for tok in 0..t {
        for h in 0..vh {
            let kv = &k[(tok * kh + h / per_key) * dk..][..dk];
            let qv = &q[(tok * kh + h / per_key) * dk..][..dk];
            let vv = &v[(tok * vh + h) * dv..][..dv];
            let gh = &g[(tok * vh + h) * per_head..][..per_head];
            let b = beta[tok * vh + h] as f64;
            let mem = &mut s[h * dk * dv..][..dk * dv];
            recall.fill(0.0);
            for (i, (row, &ki)) in mem.chunks_exact_mut(dv).zip(kv).enumerate() {
                let decay = (gh[i % per_head] as f64).exp();
                for (m, r) in row.iter_mut().zip(recall.iter_mut()) {
                    *m *= decay;
                    *r += *m * ki as f64;
                }
            }
            for (r, &x) in recall.iter_mut().zip(vv) {
                *r = (x as f64 - *r) * b;
            }
            o.fill(0.0);
            for ((row, &ki), &qi) in mem.chunks_exact_mut(dv).zip(kv).zip(qv) {
                for ((m, r), oj) in row.iter_mut().zip(&recall).zip(o.iter_mut()) {
                    *m += ki as f64 * r;
                    *oj += *m * qi as f64;
                }
            }
            for (dst, x) in out[(tok * vh + h) * dv..][..dv].iter_mut().zip(&o) {
                *dst = *x as f32;
            }
        }
    }
    out
}

/// `delta_rule` for a prompt with one decay per head (Qwen3-Next's, Qwen3.5's, OLMo hybrid's),
/// chunk by chunk as transformers' prompt path computes it (the WY form): within a chunk, with
/// c the running sum of the log-decays and D_ij = e^{c_i − c_j} (j ≤ i), the chunk's corrections
/// solve (I + strictly-lower((βK)Kᵀ ⊙ D)) U = βV − (βK ⊙ e^c) S, where S is the memory carried
/// in; each output is (Q ⊙ e^c) S + ((QKᵀ) ⊙ D) U; the memory moves to the chunk's end at once,
/// S ← e^{c_last} S + (K ⊙ e^{c_last − c})ᵀ U. The same memory and outputs as the token-by-token
/// rule, up to rounding. The triangular solves run in plain loops, the products batched over
/// the value heads.
#[allow(clippy::too_many_arguments)]
pub fn delta_rule_chunked(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    g: &[f32],
    beta: &[f32],
    s: &mut [f64],
    d: DeltaDims,
    chunk: usize,
) -> candle_core::Result<Vec<f32>> {
    use candle_core::{Device, Tensor};
    debug_assert!(!d.channel_decay, "one decay per head");
    let (kh, vh, dk, dv) = (d.key_heads, d.value_heads, d.key_dim, d.value_dim);
    let t = beta.len() / vh;
    let chunk = chunk.max(1);
    let cpu = &Device::Cpu;
    // Each value head's key head's q and k.
    let (q, k) = (grouped(q, t, kh, dk, vh)?, grouped(k, t, kh, dk, vh)?);
    let v = Tensor::from_slice(v, (t, vh, dv), cpu)?;
    let g = Tensor::from_slice(g, (t, vh), cpu)?;
    let beta = Tensor::from_slice(beta, (t, vh), cpu)?;
    let mut state = memory_tensor(s, (vh, dk, dv))?;
    let mut outs = Vec::new();
    for start in (0..t).step_by(chunk) {
        let c = chunk.min(t - start);
        // [VH, c, ·]: value heads first.
        let part = |x: &Tensor| x.narrow(0, start, c)?.transpose(0, 1)?.contiguous();
        let (qc, kc, vc) = (part(&q)?, part(&k)?, part(&v)?);
        let bc = beta.narrow(0, start, c)?.t()?.contiguous()?.unsqueeze(2)?; // [VH, c, 1]
        let cum = g.narrow(0, start, c)?.cumsum(0)?.t()?.contiguous()?; // [VH, c]
        let pair = cum
            .unsqueeze(2)?
            .broadcast_sub(&cum.unsqueeze(1)?)?
            .broadcast_add(&lower(c, false, 0.0, f32::NEG_INFINITY)?)?
            .exp()?; // [VH, c, c], e^{c_i − c_j} for j ≤ i
        let kb = kc.broadcast_mul(&bc)?;
        let ut = kb.matmul(&kc.t()?)?.mul(&pair)?;
        let attn = qc.matmul(&kc.t()?)?.mul(&pair)?;
        let ecum = cum.exp()?.unsqueeze(2)?; // [VH, c, 1]
                                             // The right-hand side: what βV asks for, less what the carried memory already recalls.
        let rhs = vc
            .broadcast_mul(&bc)?
            .sub(&kb.broadcast_mul(&ecum)?.matmul(&state)?)?; // [VH, c, DV]
        let inv = unit_lower_inverse(&ut.flatten_all()?.to_vec1::<f32>()?, vh, c);
        let u = Tensor::from_vec(inv, (vh, c, c), cpu)?.matmul(&rhs)?; // [VH, c, DV]
        let out = qc
            .broadcast_mul(&ecum)?
            .matmul(&state)?
            .add(&attn.matmul(&u)?)?; // [VH, c, DV]
        outs.push(out.transpose(0, 1)?);
        let last = cum.narrow(1, c - 1, 1)?; // [VH, 1]
        let kd = kc.broadcast_mul(&last.broadcast_sub(&cum)?.exp()?.unsqueeze(2)?)?;
        state = state
            .broadcast_mul(&last.exp()?.unsqueeze(2)?)?
            .add(&kd.t()?.matmul(&u)?)?;
    }
    store_memory(s, &state)?;
    Tensor::cat(&outs, 0)?.flatten_all()?.to_vec1::<f32>()
}

/// `delta_rule` for a prompt with a decay per key channel (Kimi Delta Attention), chunk by
/// chunk: the WY form of `delta_rule_chunked` with each decay a vector, D_ij = e^{c_i − c_j}
/// per key channel, so that every pair's products carry it inside the dot product,
/// q_i · (e^{c_i − c_j} ⊙ k_j) = (q_i ⊙ e^{c_i}) · (k_j ⊙ e^{−c_j}). That factored form is a
/// matrix product, as long as the running decay stays within e^{−40}: past that, e^{c_i} nears
/// f32's smallest normal numbers and would lose its digits, so a chunk of steep decays is
/// halved until it fits (a token whose own decay passes it runs through the loop). The same
/// memory and outputs as the token-by-token rule, up to rounding.
#[allow(clippy::too_many_arguments)]
pub fn delta_rule_chunked_channels(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    g: &[f32],
    beta: &[f32],
    s: &mut [f64],
    d: DeltaDims,
    chunk: usize,
) -> candle_core::Result<Vec<f32>> {
    use candle_core::{Device, Tensor};
    debug_assert!(d.channel_decay, "a decay per key channel");
    let (kh, vh, dk, dv) = (d.key_heads, d.value_heads, d.key_dim, d.value_dim);
    let t = beta.len() / vh;
    let chunk = chunk.max(1);
    let cpu = &Device::Cpu;
    let (qa, ka) = (grouped(q, t, kh, dk, vh)?, grouped(k, t, kh, dk, vh)?);
    let va = Tensor::from_slice(v, (t, vh, dv), cpu)?;
    let ga = Tensor::from_slice(g, (t, vh, dk), cpu)?;
    let ba = Tensor::from_slice(beta, (t, vh), cpu)?;
    let (on_lower, strict_lower) = (
        lower(chunk, false, 1.0, 0.0)?,
        lower(chunk, true, 1.0, 0.0)?,
    );
    let mut out = Vec::with_capacity(t * vh * dv);
    let mut start = 0;
    while start < t {
        let mut c = chunk.min(t - start);
        // [VH, c, ·]: value heads first.
        let part = |x: &Tensor, c| x.narrow(0, start, c)?.transpose(0, 1)?.contiguous();
        // The running decay over c tokens, [VH, c, DK], and how far it reaches.
        let decay = |c| -> candle_core::Result<(Tensor, f32)> {
            let cum = part(&ga, c)?.cumsum(1)?;
            let reach = cum.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()?;
            Ok((cum, reach))
        };
        let (mut cum, mut reach) = decay(c)?;
        // Steep decays: halve the chunk until the factors fit, down to one token.
        while reach > 40.0 && c > 1 {
            c /= 2;
            (cum, reach) = decay(c)?;
        }
        let (qc, kc, vc) = (part(&qa, c)?, part(&ka, c)?, part(&va, c)?);
        if reach > 40.0 {
            let take = |x: &[f32], w: usize| x[start * w..(start + c) * w].to_vec();
            out.extend(delta_rule(
                &take(q, kh * dk),
                &take(k, kh * dk),
                &take(v, vh * dv),
                &take(g, vh * dk),
                &take(beta, vh),
                s,
                d,
            ));
            start += c;
            continue;
        }
        let state = memory_tensor(s, (vh, dk, dv))?;
        let bc = ba.narrow(0, start, c)?.t()?.contiguous()?.unsqueeze(2)?; // [VH, c, 1]
        let up = cum.exp()?;
        let (qe, ke, kinv) = (qc.mul(&up)?, kc.mul(&up)?, kc.mul(&cum.neg()?.exp()?)?);
        let mask = |m: &Tensor| m.narrow(1, 0, c)?.narrow(2, 0, c);
        let attn = qe.matmul(&kinv.t()?)?.broadcast_mul(&mask(&on_lower)?)?; // [VH, c, c]
        let kb = ke.broadcast_mul(&bc)?;
        let ut = kb
            .matmul(&kinv.t()?)?
            .broadcast_mul(&mask(&strict_lower)?)?;
        // What βV asks for, less what the carried memory already recalls.
        let rhs = vc.broadcast_mul(&bc)?.sub(&kb.matmul(&state)?)?; // [VH, c, DV]
        let inv = unit_lower_inverse(&ut.flatten_all()?.to_vec1::<f32>()?, vh, c);
        let u = Tensor::from_vec(inv, (vh, c, c), cpu)?.matmul(&rhs)?; // [VH, c, DV]
        let o = qe.matmul(&state)?.add(&attn.matmul(&u)?)?; // [VH, c, DV]
        out.extend(o.transpose(0, 1)?.flatten_all()?.to_vec1::<f32>()?);
        let last = cum.narrow(1, c - 1, 1)?; // [VH, 1, DK]
        let kd = kc.mul(&last.broadcast_sub(&cum)?.exp()?)?;
        let moved = state
            .broadcast_mul(&last.transpose(1, 2)?.exp()?)?
            .add(&kd.t()?.matmul(&u)?)?;
        store_memory(s, &moved)?;
        start += c;
    }
    Ok(out)
}

/// The shapes of one mLSTM: `heads` heads, each keys of `key_dim` and values of `value_dim`;
/// `eps` joins the denominator.
#[derive(Clone, Copy, Debug)]
pub struct MLstmDims {
    pub heads: usize,
    pub key_dim: usize,
    pub value_dim: usize,
    pub eps: f64,
}

/// logσ(f), computed without overflow.
fn log_sigmoid(f: f64) -> f64 {
    -((-f).max(0.0) + (-(f.abs())).exp().ln_1p())
}

/// xLSTM's mLSTM token by token. Each head keeps, in `state` (f64, per head: the memory C
/// [DK, DV], the normalizer n [DK], the stabilizer m), C ← f C + i k ⊗ v and n ← f n + i k,
/// with f = σ(f̃) and i = exp(ĩ) both divided by e^m, m the running maximum of the log gates;
/// the output is q̂C / (max(|q̂·n|, e^{−m}) + ε), q̂ = q / √DK. `q`, `k`: [T, H·DK]; `v`: [T, H·DV];
/// `ig`, `fg` (the gates' pre-activations): [T, H]. Returns [T, H·DV].
#[allow(clippy::too_many_arguments)]
pub fn mlstm(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    ig: &[f32],
    fg: &[f32],
    state: &mut [f64],
    d: MLstmDims,
) -> Vec<f32> {
    let (h, dk, dv) = (d.heads, d.key_dim, d.value_dim);
    let t = ig.len() / h;
    let per = dk * dv + dk + 1;
    let scale = 1.0 / (dk as f64).sqrt();
    let mut out = vec![0f32; t * h * dv];
    for ti in 0..t {
        for hi in 0..h {
            let mem = &mut state[hi * per..(hi + 1) * per];
            let (c, rest) = mem.split_at_mut(dk * dv);
            let (n, m) = rest.split_at_mut(dk);
            let (i, f_log) = (ig[ti * h + hi] as f64, log_sigmoid(fg[ti * h + hi] as f64));
            let m_new = (f_log + m[0]).max(i);
            let (fa, ia) = ((f_log + m[0] - m_new).exp(), (i - m_new).exp());
            m[0] = m_new;
            let kk = &k[ti * h * dk + hi * dk..][..dk];
            let vv = &v[ti * h * dv + hi * dv..][..dv];
            let qq = &q[ti * h * dk + hi * dk..][..dk];
            for a in 0..dk {
                let ka = ia * kk[a] as f64;
                n[a] = fa * n[a] + ka;
                for e in 0..dv {
                    c[a * dv + e] = fa * c[a * dv + e] + ka * vv[e] as f64;
                }
            }
            let qn: f64 = (0..dk).map(|a| qq[a] as f64 * scale * n[a]).sum();
            let den = qn.abs().max((-m_new).exp()) + d.eps;
            for e in 0..dv {
                let num: f64 = (0..dk).map(|a| qq[a] as f64 * scale * c[a * dv + e]).sum();
                out[ti * h * dv + hi * dv + e] = (num / den) as f32;
            }
        }
    }
    out
}

/// `mlstm` for a prompt, chunk by chunk, with the loop's own stabilizer: with F the running sum
/// of logσ(f̃) over the chunk and m₀ the stabilizer carried in, m_t = F_t + max(m₀, max_{s≤t}
/// (ĩ_s − F_s)), so every weight D_ts = e^{ĩ_s + F_t − F_s − m_t} (s ≤ t) and the carried
/// memory's e^{F_t + m₀ − m_t} is at most 1. Then q̂C_t = ((Q̂Kᵀ) ⊙ D) V + e^{F_t + m₀ − m_t}
/// q̂C₀, q̂·n_t likewise with ones for V, and the state moves to the chunk's end at once: the
/// same memory, normalizer, stabilizer and outputs as the loop, up to rounding.
#[allow(clippy::too_many_arguments)]
pub fn mlstm_chunked(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    ig: &[f32],
    fg: &[f32],
    state: &mut [f64],
    d: MLstmDims,
    chunk: usize,
) -> candle_core::Result<Vec<f32>> {
    use candle_core::{Device, Tensor};
    let (h, dk, dv) = (d.heads, d.key_dim, d.value_dim);
    let t = ig.len() / h;
    let per = dk * dv + dk + 1;
    let chunk = chunk.max(1);
    let cpu = &Device::Cpu;
    let scale = 1.0 / (dk as f64).sqrt();
    let qa = Tensor::from_slice(q, (t, h, dk), cpu)?.affine(scale, 0.0)?;
    let ka = Tensor::from_slice(k, (t, h, dk), cpu)?;
    let va = Tensor::from_slice(v, (t, h, dv), cpu)?;
    let mut outs = Vec::new();
    for start in (0..t).step_by(chunk) {
        let c = chunk.min(t - start);
        // [H, c, ·]: heads first.
        let part = |x: &Tensor| x.narrow(0, start, c)?.transpose(0, 1)?.contiguous();
        let (qc, kc, vc) = (part(&qa)?, part(&ka)?, part(&va)?);
        // Per head: the weights D [c, c], the carried memory's factor [c], the stabilizers [c].
        let (mut dw, mut carry, mut mt) =
            (vec![0f32; h * c * c], vec![0f32; h * c], vec![0f64; h * c]);
        for hi in 0..h {
            let m0 = state[hi * per + per - 1];
            let (mut f_sum, mut top) = (0.0f64, f64::NEG_INFINITY);
            let mut f_at = vec![0f64; c];
            for ti in 0..c {
                let at = (start + ti) * h + hi;
                f_sum += log_sigmoid(fg[at] as f64);
                f_at[ti] = f_sum;
                top = top.max(ig[at] as f64 - f_sum);
                let m = f_sum + m0.max(top);
                mt[hi * c + ti] = m;
                carry[hi * c + ti] = (f_sum + m0 - m).exp() as f32;
                for si in 0..=ti {
                    let i = ig[(start + si) * h + hi] as f64;
                    dw[(hi * c + ti) * c + si] = (i + f_sum - f_at[si] - m).exp() as f32;
                }
            }
        }
        let dw = Tensor::from_vec(dw, (h, c, c), cpu)?;
        let carry = Tensor::from_vec(carry, (h, c, 1), cpu)?;
        let c0: Vec<f32> = (0..h)
            .flat_map(|hi| state[hi * per..][..dk * dv].iter().map(|&x| x as f32))
            .collect();
        let n0: Vec<f32> = (0..h)
            .flat_map(|hi| state[hi * per + dk * dv..][..dk].iter().map(|&x| x as f32))
            .collect();
        let c0 = Tensor::from_vec(c0, (h, dk, dv), cpu)?;
        let n0 = Tensor::from_vec(n0, (h, dk, 1), cpu)?;
        let s = qc.matmul(&kc.t()?)?.mul(&dw)?; // [H, c, c]
        let num = s
            .matmul(&vc)?
            .add(&qc.matmul(&c0)?.broadcast_mul(&carry)?)?; // [H, c, DV]
        let qn = s.sum_keepdim(2)?.add(&qc.matmul(&n0)?.mul(&carry)?)?; // [H, c, 1]
        let qn: Vec<f32> = qn.flatten_all()?.to_vec1()?;
        let den: Vec<f32> = qn
            .iter()
            .zip(&mt)
            .map(|(&x, &m)| ((x as f64).abs().max((-m).exp()) + d.eps) as f32)
            .collect();
        let out = num.broadcast_div(&Tensor::from_vec(den, (h, c, 1), cpu)?)?;
        outs.push(out.transpose(0, 1)?);
        // The state at the chunk's end: its last row of weights and of the carried factor.
        let last = dw.narrow(1, c - 1, 1)?; // [H, 1, c]
        let fade = carry.narrow(1, c - 1, 1)?; // [H, 1, 1]
        let mem = c0
            .broadcast_mul(&fade)?
            .add(&kc.broadcast_mul(&last.t()?)?.t()?.matmul(&vc)?)?;
        let nrm = n0.broadcast_mul(&fade)?.add(&last.matmul(&kc)?.t()?)?; // [H, DK, 1]
        let (mem, nrm) = (
            mem.flatten_all()?.to_vec1::<f32>()?,
            nrm.flatten_all()?.to_vec1::<f32>()?,
        );
        for hi in 0..h {
            let st = &mut state[hi * per..(hi + 1) * per];
            for (dst, &x) in st[..dk * dv]
                .iter_mut()
                .zip(&mem[hi * dk * dv..][..dk * dv])
            {
                *dst = x as f64;
            }
            for (dst, &x) in st[dk * dv..dk * dv + dk]
                .iter_mut()
                .zip(&nrm[hi * dk..][..dk])
            {
                *dst = x as f64;
            }
            st[per - 1] = mt[hi * c + c - 1];
        }
    }
    Tensor::cat(&outs, 0)?.flatten_all()?.to_vec1::<f32>()
}

/// Rows of `x` ([T, G·W]) for each of `heads` heads, head h reading group h / (heads / G):
/// [T, heads, W] (a Mamba2 head's B and C; a value head's q and k).
fn grouped(
    x: &[f32],
    t: usize,
    groups: usize,
    width: usize,
    heads: usize,
) -> candle_core::Result<candle_core::Tensor> {
    use candle_core::{Device, Tensor};
    let group: Vec<u32> = (0..heads).map(|h| (h / (heads / groups)) as u32).collect();
    let group = Tensor::from_vec(group, heads, &Device::Cpu)?;
    Tensor::from_slice(x, (t, groups, width), &Device::Cpu)?.index_select(&group, 1)
}

/// A [1, c, c] mask: `kept` on and below the diagonal (strictly below with `strict`),
/// `dropped` above.
fn lower(
    c: usize,
    strict: bool,
    kept: f32,
    dropped: f32,
) -> candle_core::Result<candle_core::Tensor> {
    let m: Vec<f32> = (0..c * c)
        .map(|x| {
            let (i, j) = (x / c, x % c);
            if j < i || (j == i && !strict) {
                kept
            } else {
                dropped
            }
        })
        .collect();
    candle_core::Tensor::from_vec(m, (1, c, c), &candle_core::Device::Cpu)
}

/// A memory kept in f64 between calls, as an f32 tensor of `shape` for a chunk's products.
fn memory_tensor(
    s: &[f64],
    shape: (usize, usize, usize),
) -> candle_core::Result<candle_core::Tensor> {
    let m: Vec<f32> = s.iter().map(|&x| x as f32).collect();
    candle_core::Tensor::from_vec(m, shape, &candle_core::Device::Cpu)
}

/// A chunked form's memory written back to the f64 state.
fn store_memory(s: &mut [f64], m: &candle_core::Tensor) -> candle_core::Result<()> {
    for (dst, x) in s.iter_mut().zip(m.flatten_all()?.to_vec1::<f32>()?) {
        *dst = x as f64;
    }
    Ok(())
}

/// (I + strictly-lower(L))⁻¹ for each of `heads` matrices of `c` rows (L: [heads, c, c]), by
/// forward substitution in f64 (c³/6 products each), so that a chunk's corrections are one
/// batched product with the right-hand side, as transformers computes them.
fn unit_lower_inverse(l: &[f32], heads: usize, c: usize) -> Vec<f32> {
    let mut x = vec![0.0f64; heads * c * c];
    for h in 0..heads {
        let (l, x) = (&l[h * c * c..][..c * c], &mut x[h * c * c..][..c * c]);
        // Row i of the inverse: e_i − Σ_{j<i} L_ij · row j, lower triangular like L.
        for i in 0..c {
            x[i * c + i] = 1.0;
            for j in 0..i {
                let lij = l[i * c + j] as f64;
                for e in 0..=j {
                    x[i * c + e] -= lij * x[j * c + e];
                }
            }
        }
    }
    x.into_iter().map(|v| v as f32).collect()
}

/// RWKV-4's WKV recurrence, as transformers' CPU path computes it: per channel the sums of
/// exp(k)·v and exp(k) (`num`, `den`), kept scaled by exp(−top), `top` the largest exponent so
/// far; each token reads (num + e^{u+k} v) / (den + e^{u+k}), then the sums fade by e^{w} (w =
/// −exp(time_decay)) and take the token. `k`, `v`: [T, A]; `state`: [num | den | top], 3·A.
pub fn wkv(k: &[f32], v: &[f32], w: &[f32], u: &[f32], state: &mut [f32]) -> Vec<f32> {
    let a = w.len();
    let (num, rest) = state.split_at_mut(a);
    let (den, top) = rest.split_at_mut(a);
    let mut out = vec![0.0f32; k.len()];
    for (t, o) in out.chunks_exact_mut(a).enumerate() {
        let (kt, vt) = (&k[t * a..][..a], &v[t * a..][..a]);
        for c in 0..a {
            let m = top[c].max(u[c] + kt[c]);
            let (e1, e2) = ((top[c] - m).exp(), (u[c] + kt[c] - m).exp());
            o[c] = (e1 * num[c] + e2 * vt[c]) / (e1 * den[c] + e2);
            let m = (top[c] + w[c]).max(kt[c]);
            let (e1, e2) = ((top[c] + w[c] - m).exp(), (kt[c] - m).exp());
            num[c] = e1 * num[c] + e2 * vt[c];
            den[c] = e1 * den[c] + e2;
            top[c] = m;
        }
    }
    out
}

/// Lightning attention's recurrence: for each token and head h, the memory `s` ([H, D, D])
/// fades by exp(−slope[h]) and takes k ⊗ v; the output is sᵀq. `qkv`: [T, H, 3·D], each head's
/// q | k | v. Returns [T, H·D]. transformers runs a prompt in chunks and a decoded token through
/// this recurrence; the two are the same sum, grouped otherwise.
pub fn lightning(qkv: &[f32], slope: &[f32], s: &mut [f64], heads: usize, d: usize) -> Vec<f32> {
    let t = qkv.len() / (heads * 3 * d);
    let fade: Vec<f64> = slope.iter().map(|&r| (-(r as f64)).exp()).collect();
    let mut out = vec![0.0f32; t * heads * d];
    let mut o = vec![0.0f64; d];
    for tok in 0..t {
        for (h, &fade) in fade.iter().enumerate() {
            let head = &qkv[(tok * heads + h) * 3 * d..][..3 * d];
            let (q, k, v) = (&head[..d], &head[d..2 * d], &head[2 * d..]);
            let mem = &mut s[h * d * d..][..d * d];
            o.fill(0.0);
            for ((row, &ki), &qi) in mem.chunks_exact_mut(d).zip(k).zip(q) {
                for ((m, &vj), oj) in row.iter_mut().zip(v).zip(o.iter_mut()) {
                    *m = fade * *m + ki as f64 * vj as f64;
                    *oj += *m * qi as f64;
                }
            }
            for (dst, x) in out[(tok * heads + h) * d..][..d].iter_mut().zip(&o) {
                *dst = *x as f32;
            }
        }
    }
    out
}

/// `lightning` for a prompt, chunk by chunk: with f = e^{−rate} per head, a chunk's token j
/// reads f^{j+1} S·q_j from the memory S carried in, plus Σ_{s≤j} f^{j−s} (q_j · k_s) v_s from
/// the chunk itself; the memory then moves to the chunk's end at once, S ← f^c S + Σ_s
/// f^{c−1−s} k_s v_sᵀ. The same sums as the token-by-token loop; batched products over the
/// heads.
pub fn lightning_chunked(
    qkv: &[f32],
    slope: &[f32],
    s: &mut [f64],
    heads: usize,
    d: usize,
    chunk: usize,
) -> candle_core::Result<Vec<f32>> {
    use candle_core::{Device, Tensor};
    let cpu = &Device::Cpu;
    let t = qkv.len() / (heads * 3 * d);
    let chunk = chunk.max(1);
    let all = Tensor::from_slice(qkv, (t, heads, 3 * d), cpu)?;
    let mut state = memory_tensor(s, (heads, d, d))?;
    let mut outs = Vec::new();
    for start in (0..t).step_by(chunk) {
        let c = chunk.min(t - start);
        let part = |o: usize| -> candle_core::Result<Tensor> {
            all.narrow(0, start, c)?
                .narrow(2, o, d)?
                .transpose(0, 1)?
                .contiguous()
        };
        // Each [H, c, d].
        let (q, k, v) = (part(0)?, part(d)?, part(2 * d)?);
        // f^{i−j} for j ≤ i, 0 above; f^{i+1} on what the memory carries in; f^{c−1−j} on
        // what each token writes to the chunk's end.
        let mut within = vec![0f32; heads * c * c];
        let mut carried = vec![0f32; heads * c];
        let mut written = vec![0f32; heads * c];
        for (h, &r) in slope.iter().enumerate() {
            let r = r as f64;
            for i in 0..c {
                for j in 0..=i {
                    within[(h * c + i) * c + j] = (-(r * (i - j) as f64)).exp() as f32;
                }
                carried[h * c + i] = (-(r * (i + 1) as f64)).exp() as f32;
                written[h * c + i] = (-(r * (c - 1 - i) as f64)).exp() as f32;
            }
        }
        let within = Tensor::from_vec(within, (heads, c, c), cpu)?;
        let carried = Tensor::from_vec(carried, (heads, c, 1), cpu)?;
        let written = Tensor::from_vec(written, (heads, c, 1), cpu)?;
        let out = q
            .matmul(&k.t()?)?
            .mul(&within)?
            .matmul(&v)?
            .add(&q.broadcast_mul(&carried)?.matmul(&state)?)?;
        outs.push(out.transpose(0, 1)?);
        let fade: Vec<f32> = slope
            .iter()
            .map(|&r| (-(r as f64) * c as f64).exp() as f32)
            .collect();
        state = state
            .broadcast_mul(&Tensor::from_vec(fade, (heads, 1, 1), cpu)?)?
            .add(&k.broadcast_mul(&written)?.t()?.matmul(&v)?)?;
    }
    store_memory(s, &state)?;
    Tensor::cat(&outs, 0)?.flatten_all()?.to_vec1::<f32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` inputs along a sine of frequency `k` and amplitude `a`: varied, and the same each run.
    fn wave(len: usize, k: f32, a: f32) -> Vec<f32> {
        (0..len).map(|i| (i as f32 * k).sin() * a).collect()
    }

    /// `chunked(state, chunk)`, from `start`, gives the loop's outputs `want` and leaves its
    /// state `state_want` (within 1e-5), for chunks that split a prompt one token at a time,
    /// raggedly, evenly, whole and beyond it.
    fn agrees<T: Copy + Into<f64>>(
        want: &[f32],
        state_want: &[T],
        start: &[T],
        chunked: impl Fn(&mut [T], usize) -> Vec<f32>,
    ) {
        for chunk in [1, 3, 4, 11, 64] {
            let mut s = start.to_vec();
            let got = chunked(&mut s, chunk);
            assert_eq!(got.len(), want.len(), "chunk {chunk}: outputs");
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-5, "chunk {chunk}: {g} vs {w}");
            }
            for (&g, &w) in s.iter().zip(state_want) {
                let (g, w): (f64, f64) = (g.into(), w.into());
                assert!((g - w).abs() < 1e-5, "chunk {chunk}: state {g} vs {w}");
            }
        }
    }

    /// The chunked lightning attention gives the loop's outputs and memory, for any chunk size,
    /// from a memory carried in.
    #[test]
    fn lightning_chunks_give_the_loops_outputs_and_memory() {
        let (t, heads, d) = (11, 3, 4);
        let qkv: Vec<f32> = (0..t * heads * 3 * d)
            .map(|i| (i as f32 * 0.37).sin() * 0.5)
            .collect();
        let slope = [0.05f32, 0.3, 1.2];
        let start: Vec<f64> = (0..heads * d * d)
            .map(|i| (i as f64 * 0.71).cos() * 0.3)
            .collect();
        let mut s_loop = start.clone();
        let want = lightning(&qkv, &slope, &mut s_loop, heads, d);
        agrees(&want, &s_loop, &start, |s, chunk| {
            lightning_chunked(&qkv, &slope, s, heads, d, chunk).unwrap()
        });
    }

    /// The chunked form gives the loop's outputs and final state, for any chunk size, from a
    /// state carried in.
    #[test]
    fn chunks_give_the_loops_outputs_and_state() {
        let s = Dims {
            heads: 4,
            head_dim: 3,
            n: 5,
            groups: 2,
        };
        let t = 11;
        let wave = |len, k| wave(len, k, 0.9);
        let (x, b, c) = (wave(t * 12, 0.37), wave(t * 10, 0.73), wave(t * 10, 1.13));
        let dt: Vec<f32> = wave(t * 4, 0.51).iter().map(|v| 0.05 + v.abs()).collect();
        let (a, d) = (vec![-0.5, -1.0, -2.0, -0.1], vec![1.0, 0.5, -0.5, 2.0]);
        let inputs = Inputs {
            x: &x,
            dt: &dt,
            a: &a,
            b: &b,
            c: &c,
            d: &d,
        };
        let start = wave(4 * 3 * 5, 0.29);
        let mut h_loop = start.clone();
        let want = scan(&inputs, &mut h_loop, s);
        agrees(&want, &h_loop, &start, |h, chunk| {
            scan_chunked(&inputs, h, s, chunk).unwrap()
        });
    }

    /// The delta rule's test case: 2 key heads each serving 2 value heads, 11 tokens; q, k, v,
    /// the write strengths β and a memory carried in.
    fn delta_case(channel_decay: bool) -> (DeltaDims, usize, [Vec<f32>; 4], Vec<f64>) {
        let d = DeltaDims {
            key_heads: 2,
            value_heads: 4,
            key_dim: 4,
            value_dim: 3,
            channel_decay,
        };
        let t = 11;
        let wave = |len, k| wave(len, k, 0.5);
        let beta: Vec<f32> = wave(t * 4, 0.29).iter().map(|x| 0.2 + x.abs()).collect();
        let start: Vec<f64> = wave(4 * 4 * 3, 0.17).iter().map(|&x| x as f64).collect();
        let qkvb = [
            wave(t * 8, 0.37),
            wave(t * 8, 0.73),
            wave(t * 12, 1.13),
            beta,
        ];
        (d, t, qkvb, start)
    }

    /// The chunked delta rule gives the token-by-token rule's outputs and memory, for any chunk
    /// size, from a memory carried in, with value heads sharing key heads.
    #[test]
    fn delta_chunks_give_the_rules_outputs_and_memory() {
        let (d, t, [q, k, v, beta], start) = delta_case(false);
        let g: Vec<f32> = wave(t * 4, 0.51, 0.5)
            .iter()
            .map(|x| -0.05 - x.abs())
            .collect();
        let mut s_loop = start.clone();
        let want = delta_rule(&q, &k, &v, &g, &beta, &mut s_loop, d);
        agrees(&want, &s_loop, &start, |s, chunk| {
            delta_rule_chunked(&q, &k, &v, &g, &beta, s, d, chunk).unwrap()
        });
    }

    /// The chunked rule with a decay per key channel gives the token-by-token rule's outputs and
    /// memory, for any chunk size, from a memory carried in; also where a chunk's decay runs
    /// past what the factored form can hold, and it falls back to the loop.
    #[test]
    fn channel_delta_chunks_give_the_rules_outputs_and_memory() {
        let (d, t, [q, k, v, beta], start) = delta_case(true);
        // Mild decays; steep ones in one channel (4 tokens of −11 pass e^{−40}: chunks are
        // halved); one token's own decay past it (the loop).
        let mild: Vec<f32> = wave(t * 16, 0.51, 0.5)
            .iter()
            .map(|x| -0.05 - x.abs())
            .collect();
        let steep: Vec<f32> = mild
            .iter()
            .enumerate()
            .map(|(i, &x)| if i % 16 == 5 { -11.0 } else { x })
            .collect();
        let mut cliff = steep.clone();
        cliff[6 * 16 + 9] = -45.0;
        for g in [mild, steep, cliff] {
            let mut s_loop = start.clone();
            let want = delta_rule(&q, &k, &v, &g, &beta, &mut s_loop, d);
            agrees(&want, &s_loop, &start, |s, chunk| {
                delta_rule_chunked_channels(&q, &k, &v, &g, &beta, s, d, chunk).unwrap()
            });
        }
    }

    /// The chunked mLSTM gives the loop's outputs, memory, normalizer and stabilizer, for any
    /// chunk size, from a state carried in; with input gates above and below the forget gates,
    /// so that the stabilizer follows either.
    #[test]
    fn mlstm_chunks_give_the_loops_outputs_and_state() {
        let d = MLstmDims {
            heads: 3,
            key_dim: 4,
            value_dim: 2,
            eps: 1e-6,
        };
        let t = 11;
        let (q, k, v) = (
            wave(t * 12, 0.37, 0.5),
            wave(t * 12, 0.73, 0.5),
            wave(t * 6, 1.13, 0.5),
        );
        let ig = wave(t * 3, 0.61, 4.0);
        let fg: Vec<f32> = wave(t * 3, 0.29, 3.0).iter().map(|x| x + 1.0).collect();
        let per = 4 * 2 + 4 + 1;
        let start: Vec<f64> = (0..3 * per)
            .map(|i| {
                if i % per == per - 1 {
                    0.7
                } else {
                    (i as f64 * 0.17).cos() * 0.3
                }
            })
            .collect();
        let mut s_loop = start.clone();
        let want = mlstm(&q, &k, &v, &ig, &fg, &mut s_loop, d);
        agrees(&want, &s_loop, &start, |s, chunk| {
            mlstm_chunked(&q, &k, &v, &ig, &fg, s, d, chunk).unwrap()
        });
    }

    /// One head of width 1: the memory is a decayed running sum of k·v, read by q.
    #[test]
    fn lightning_is_a_decayed_sum() {
        let slope = [0.5f32];
        // Three tokens of (q, k, v).
        let qkv = [1.0f32, 2.0, 3.0, 0.5, 1.0, -1.0, 2.0, -1.0, 4.0];
        let mut s = vec![0.0f64; 1];
        let out = lightning(&qkv, &slope, &mut s, 1, 1);
        let f = (-0.5f64).exp();
        let s1 = 6.0;
        let s2 = f * s1 - 1.0;
        let s3 = f * s2 - 4.0;
        let want = [s1, 0.5 * s2, 2.0 * s3];
        for (o, w) in out.iter().zip(want) {
            assert!((*o as f64 - w).abs() < 1e-6, "{o} vs {w}");
        }
        assert!((s[0] - s3).abs() < 1e-12);
    }

    /// With β = 1 and orthonormal keys, the memory holds each key's last value, decayed: the
    /// read-out with a key is that value times the decay since it was written (and the query's
    /// length, here 1/√2).
    #[test]
    fn delta_rule_stores_and_overwrites() {
        let d = DeltaDims {
            key_heads: 1,
            value_heads: 2,
            key_dim: 2,
            value_dim: 2,
            channel_decay: false,
        };
        // Token 0 writes (1, 2) under e0; token 1 writes (3, 4) under e1; token 2 overwrites
        // e0 with (5, 6) and reads with e0; token 3 reads with e1. Both value heads see the same
        // keys (one key head); head 1's values are doubled.
        let k = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0f32];
        let q = k.map(|x| x * 0.5f32.sqrt());
        let v: Vec<f32> = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [0.0, 0.0f32]]
            .iter()
            .flat_map(|x| [x[0], x[1], 2.0 * x[0], 2.0 * x[1]])
            .collect();
        let g = [0.0f32, 0.0, 0.0, 0.0, -0.5, -0.5, -0.5, -0.5];
        // Token 3 writes nothing: β = 0.
        let beta = [1.0f32, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0];
        let mut s = vec![0.0f64; 8];
        let out = delta_rule(&q, &k, &v, &g, &beta, &mut s, d);
        let (decay, scale) = ((-0.5f32).exp(), 0.5f32.sqrt());
        let near = |got: &[f32], want: [f32; 2]| {
            for (o, w) in got.iter().zip(want) {
                assert!((o - w * scale).abs() < 1e-6, "{o} vs {}", w * scale);
            }
        };
        // Token 2 reads e0: just overwritten with (5, 6), whatever it held.
        near(&out[8..10], [5.0, 6.0]);
        near(&out[10..12], [10.0, 12.0]);
        // Token 3 reads e1: (3, 4), decayed at tokens 2 and 3.
        near(&out[12..14], [3.0 * decay * decay, 4.0 * decay * decay]);
        // Split in two calls through the memory, the same outputs.
        let mut s2 = vec![0.0f64; 8];
        let a = delta_rule(&q[..4], &k[..4], &v[..8], &g[..4], &beta[..4], &mut s2, d);
        let b = delta_rule(&q[4..], &k[4..], &v[8..], &g[4..], &beta[4..], &mut s2, d);
        assert_eq!([a, b].concat(), out);
        assert_eq!(s2, s);
    }

    /// Kimi's decay per key channel: each row of the memory (one key channel) fades at its own
    /// rate, so a read-out mixes values written under different channels in those proportions.
    #[test]
    fn delta_rule_decays_each_key_channel_apart() {
        let d = DeltaDims {
            key_heads: 1,
            value_heads: 1,
            key_dim: 2,
            value_dim: 1,
            channel_decay: true,
        };
        // Token 0 writes 1 under e0, token 1 writes 2 under e1; token 2 writes nothing, decays
        // e0's row by exp(−1) and e1's by exp(−2), and reads both.
        let k = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0f32];
        let q = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0f32];
        let v = [1.0, 2.0, 0.0f32];
        let g = [0.0, 0.0, 0.0, 0.0, -1.0, -2.0f32];
        let beta = [1.0, 1.0, 0.0f32];
        let mut s = vec![0.0f64; 2];
        let out = delta_rule(&q, &k, &v, &g, &beta, &mut s, d);
        let want = (-1.0f64).exp() + 2.0 * (-2.0f64).exp();
        assert!((out[2] as f64 - want).abs() < 1e-6, "{} vs {want}", out[2]);
        assert!(
            (s[0] - (-1.0f64).exp()).abs() < 1e-12 && (s[1] - 2.0 * (-2.0f64).exp()).abs() < 1e-12
        );
    }

    /// The scan equals its closed form: y_t = Σ_{s≤t} C_t·B_s x_s Δ_s exp(A Σ_{s<r≤t} Δ_r) + D x_t,
    /// one head, one feature, computed in f64.
    #[test]
    fn scan_is_the_closed_form() {
        let (t, n) = (6usize, 3usize);
        let x: Vec<f32> = (0..t).map(|i| ((i * 7 % 5) as f32 - 2.0) / 3.0).collect();
        let dt: Vec<f32> = (0..t).map(|i| 0.1 + 0.05 * i as f32).collect();
        let a = [-0.7f32];
        let b: Vec<f32> = (0..t * n)
            .map(|i| ((i * 3 % 7) as f32 - 3.0) / 4.0)
            .collect();
        let c: Vec<f32> = (0..t * n)
            .map(|i| ((i * 5 % 9) as f32 - 4.0) / 5.0)
            .collect();
        let d = [0.3f32];
        let mut h = vec![0.0; n];
        let dims = Dims {
            heads: 1,
            head_dim: 1,
            n,
            groups: 1,
        };
        let all = Inputs {
            x: &x,
            dt: &dt,
            a: &a,
            b: &b,
            c: &c,
            d: &d,
        };
        let y = scan(&all, &mut h, dims);
        for ti in 0..t {
            let mut want = d[0] as f64 * x[ti] as f64;
            for si in 0..=ti {
                let decay: f64 = ((si + 1)..=ti).map(|r| dt[r] as f64).sum::<f64>() * a[0] as f64;
                let cb: f64 = (0..n)
                    .map(|j| c[ti * n + j] as f64 * b[si * n + j] as f64)
                    .sum();
                want += cb * x[si] as f64 * dt[si] as f64 * decay.exp();
            }
            assert!(
                (y[ti] as f64 - want).abs() < 1e-5,
                "t={ti}: {} vs {want}",
                y[ti]
            );
        }
        // Split in two calls through the state, the same outputs.
        let mut h2 = vec![0.0; n];
        let first = Inputs {
            x: &x[..2],
            dt: &dt[..2],
            a: &a,
            b: &b[..2 * n],
            c: &c[..2 * n],
            d: &d,
        };
        let rest = Inputs {
            x: &x[2..],
            dt: &dt[2..],
            a: &a,
            b: &b[2 * n..],
            c: &c[2 * n..],
            d: &d,
        };
        let (first, rest) = (scan(&first, &mut h2, dims), scan(&rest, &mut h2, dims));
        assert_eq!([first, rest].concat(), y);
        assert_eq!(h2, h);
    }

    #[test]
    fn conv_carries_its_inputs() {
        // Two channels, kernel 3.
        let w = [1.0f32, 2.0, 3.0, -1.0, 0.5, 0.25];
        let u: Vec<f32> = (0..10).map(|i| i as f32).collect();
        let mut past = vec![0.0; 4];
        let whole = causal_conv(&u, &mut past, &w, Some(&[0.5, -0.5]), 2);
        // Position 0 of channel 0 sees only itself: 3 · 0 + 0.5; position 2: 1·0 + 2·2 + 3·4.
        assert_eq!(whole[0], 0.5);
        assert_eq!(whole[4], 0.5 + 2.0 * 2.0 + 3.0 * 4.0);
        let mut p2 = vec![0.0; 4];
        let a = causal_conv(&u[..4], &mut p2, &w, Some(&[0.5, -0.5]), 2);
        let b = causal_conv(&u[4..], &mut p2, &w, Some(&[0.5, -0.5]), 2);
        assert_eq!([a, b].concat(), whole);
        assert_eq!(p2, past);
    }
}
