//! Attention of every kind: projections, Q/K norms, multi-head latent attention, the sparse
//! indexers, mixtures of heads, residual convolutions and relative logits.

use super::*;

/// The score scale as a Python expression: 1/√d, times YaRN's mscale² where the Spec has it.
pub(super) fn scale_text(spec: &Spec) -> String {
    let a = &spec.attn;
    if a.scale_mult != 1.0 {
        format!("{} ** -0.5 * {}", fmt_f(a.scale_dim), a.scale_mult)
    } else {
        format!("{} ** -0.5", fmt_f(a.scale_dim))
    }
}

/// Inkling's residual short convolution.
pub(super) const RESIDUAL_CONV: &str = r#"class ResidualConv(nn.Module):
    """x plus its causal depthwise convolution: each channel mixed over its last `taps` positions;
    `scaled`: the sum divided by sqrt(taps + 1)."""

    def __init__(self, channels, taps, scaled=False):
        super().__init__()
        self.scale = (taps + 1) ** -0.5 if scaled else 1.0
        self.conv1d = nn.Conv1d(channels, channels, taps, groups=channels, padding=taps - 1, bias=False)

    def forward(self, x):  # [B, T, channels]
        T = x.shape[1]
        return (x + self.conv1d(x.transpose(1, 2))[..., :T].transpose(1, 2)) * self.scale"#;

pub(super) const CONV1D: &str = r#"class Conv1D(nn.Module):
    """GPT-2's linear layer: the weight stored [in, out], with a bias."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias"#;

/// Attention's last steps, shared by GQA and MLA: scale, softcap, mask, sink, softmax, values.
/// Scores, mask, softmax and values. `keep`: a further [B, T, T] boolean of the keys each query
/// may see (DeepSeek sparse attention's choice), by its Python name.
pub(super) fn attend(spec: &Spec, heads: u64, vd: u64, keep: Option<&str>) -> String {
    let a = &spec.attn;
    let mut s = format!(
        "        scores = (q @ k.transpose(-1, -2)) * {}  # [B, {heads}, T, T]\n",
        scale_text(spec)
    );
    if let Position::Alibi(slopes) = &spec.position {
        let list: Vec<String> = slopes.iter().map(|m| format!("{m:?}")).collect();
        s += &format!(
            "        slopes = torch.tensor([{}])  # ALiBi: one slope per head\n        distance = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # j - i\n        scores = scores + slopes.view(1, {heads}, 1, 1) * distance.to(x.device)\n",
            list.join(", ")
        );
    }
    if let Position::Buckets(_) = spec.position {
        s += &format!("        scores = scores + rope  # [B, {heads}, T, T]: here `rope` is the model's position bias, the same for every layer\n");
    }
    if a.rel_logits.is_some() {
        s += &format!("        scores = scores + rel  # [B, {heads}, T, T]: each query's bias for each key's distance\n");
    }
    if let Some(c) = a.softcap {
        s += &format!("        scores = {c} * torch.tanh(scores / {c})  # softcap\n");
    }
    let mut allowed = "attention_mask(T, self.span).to(x.device)".to_string();
    if let Some(k) = keep {
        allowed = format!("({allowed} & {k})");
    }
    s += &format!("        scores = scores.masked_fill(~{allowed}, float(\"-inf\"))\n");
    if let Some(dm) = a.dynamic_mask {
        let g = heads / a.kv_heads;
        s += &format!(
            "        delta = delta.repeat_interleave({g}, dim=1)[:, :, None, :]  # [B, {heads}, 1, T]: each key's score\n        choice = delta.masked_fill(~{allowed}, float(\"-inf\"))  # the visible keys' scores\n        scores = scores + delta\n        if T > {k}:  # only the {k} best-scored keys stay\n            floor = choice.topk({k}, dim=-1).values[..., -1:]\n            scores = scores.masked_fill(choice < floor, float(\"-inf\"))\n",
            k = dm.keep
        );
    }
    if a.sinks {
        s += &format!(
            "        sink = self.{}.view(1, {heads}, 1, 1).expand(B, {heads}, T, 1).to(scores.dtype)\n        probs = torch.cat([scores, sink], dim=-1).float().softmax(dim=-1)[..., :-1].to(q.dtype)  # the sink takes its share, then is dropped\n",
            Names::new(spec).inside(Role::Sinks)
        );
    } else {
        s += "        probs = scores.float().softmax(dim=-1).to(q.dtype)\n";
    }
    s += &format!("        out = (probs @ v).transpose(1, 2).reshape(B, T, {heads} * {vd})\n");
    s
}

/// The attention's layer decides what it reads or picks (Kolibri 1.1's listed K/V sources and
/// pool layers): the class keeps its index.
pub(super) fn indexed_by_layer(spec: &Spec) -> bool {
    !spec.kv_from.is_empty()
        || spec
            .attn_variants()
            .iter()
            .any(|(a, _)| a.pool_index.is_some())
}

/// Kolibri 1.1's indexer and NVFP4 rounding, with its pool layers and the layers each reads the
/// keys and values of.
pub(super) fn pool_index_code(spec: &Spec) -> Option<String> {
    let pools = spec
        .attn_variants()
        .iter()
        .find_map(|(a, _)| a.pool_index.clone())?
        .pools;
    let mut out = include_str!("pool_index.py").trim_end().to_string();
    out += &format!(
        "\n\n\n# The layers that pick a new pool.\nPOOL_LAYERS = {{{}}}",
        pools
            .iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Some(out)
}

/// The attention module, or where some layers have their own (`layer_attn`), a class for each
/// variant and the list of every layer's class.
pub(super) fn attention(spec: &Spec, n: &Names) -> String {
    // Layers that share keys and values read them from the ones that store theirs.
    let store = spec.attn_variants().iter().any(|(a, _)| a.shares_kv);
    if spec.layer_attn.is_empty() {
        return attention_class(spec, n, "Attention", store);
    }
    let mut parts = vec![attention_class(spec, n, "Attention", store)];
    if store && !spec.kv_from.is_empty() {
        parts[0] = format!("# The keys and values of the layers that others read, by layer, and which layer each reads.\nSHARED_KV = {{}}\nKV_FROM = {:?}\n\n\n{}", spec.kv_from, parts[0]);
    } else if store {
        parts[0] = format!("# The keys and values of the last layer of each span kind that projects its own, for the\n# layers that share them.\nSHARED_KV = {{}}\n\n\n{}", parts[0]);
    }
    if let Some(code) = pool_index_code(spec) {
        parts.insert(0, code);
    }
    for (i, (_, a)) in spec.layer_attn.iter().enumerate() {
        let mut own = spec.clone();
        own.attn = a.clone();
        own.layer_attn.clear();
        parts.push(attention_class(
            &own,
            n,
            &format!("Attention{}", i + 1),
            store,
        ));
    }
    let classes: Vec<String> = (0..spec.layers as usize)
        .map(|b| {
            match spec
                .layer_attn
                .iter()
                .position(|(set, _)| set.contains(b as u64))
            {
                Some(i) => format!("Attention{}", i + 1),
                None => "Attention".into(),
            }
        })
        .collect();
    parts.push(format!(
        "# Each layer's attention class: some layers have their own heads.\nATTENTION = [{}]",
        classes.join(", ")
    ));
    parts.join("\n\n\n")
}

/// `init` with the sublayer modules made first, where other parts of the layer sit inside them
/// (DBRX's norms beside its attention in `norm_attn_norm`, CPM-Ant's in `self_att` and `ffn`).
pub(super) fn modules_first(init: &str, modules: &[&str]) -> String {
    let makes: Vec<String> = modules
        .iter()
        .map(|m| format!("        self.{m} = "))
        .collect();
    let (first, rest): (Vec<&str>, Vec<&str>) = init
        .lines()
        .partition(|l| makes.iter().any(|m| l.starts_with(m)));
    first
        .into_iter()
        .chain(rest)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The layer's attribute holding its attention (`self_attn`).
pub(super) fn attn_sublayer(spec: &Spec, n: &Names) -> String {
    n.sublayer(if spec.attn.moa.is_some() {
        Role::Kv
    } else {
        Role::O
    })
}

/// `self.a = nn.Module()` for every module above these attribute paths (`experts` and
/// `experts.router` above `experts.router.layer`), outermost first.
pub(super) fn holders_of(paths: &[String]) -> String {
    let mut held: Vec<String> = Vec::new();
    for p in paths {
        let parts: Vec<&str> = p.split('.').collect();
        for i in 1..parts.len() {
            let h = parts[..i].join(".");
            if !held.contains(&h) {
                held.push(h);
            }
        }
    }
    held.iter()
        .map(|h| format!("        self.{h} = nn.Module()\n"))
        .collect()
}

/// One attention class, `class`, of `spec.attn`; `store`: the model has layers that share keys
/// and values, which this one keeps for them unless it shares itself.
pub(super) fn attention_class(spec: &Spec, n: &Names, class: &str, store: bool) -> String {
    if spec.attn.mla.is_some() {
        return mla(spec, n, class);
    }
    if let Some(cca) = spec.attn.cca {
        return cca_attention(spec, class, cca);
    }
    if let Some(m) = spec.attn.moa {
        return moa(spec, n, m);
    }
    let a = &spec.attn;
    let (d, h, kv, hd) = (spec.hidden, a.heads, a.kv_heads, a.head_dim);
    // A value head's width: narrower than Q's and K's in MiMo-V2-Flash (three separate
    // projections there; the fused layouts hold heads of one width).
    let vhd = a.v_head_dim;
    let mut init = String::new();
    let mut fwd = String::from("        B, T, _ = x.shape\n");
    let shares = a.shares_kv;
    match a.qkv {
        // Gemma 4: a layer that shares projects queries alone; keys may be the values too.
        Qkv::Separate if shares || a.v_from_k => {
            let (q, k) = (n.inside(Role::Q), n.inside(Role::K));
            init += &format!(
                "        self.{q} = {}\n",
                linear(spec, &d.to_string(), &format!("{h} * {hd}"), a.qkv_bias)
            );
            if shares {
                fwd += &format!(
                    "        q = self.{q}(x)  # the keys and values are an earlier layer's\n"
                );
            } else {
                init += &format!(
                    "        self.{k} = {}  # the values too\n",
                    linear(spec, &d.to_string(), &format!("{kv} * {hd}"), a.qkv_bias)
                );
                fwd += &format!("        q, k = self.{q}(x), self.{k}(x)\n        v = k  # the values are the keys as projected\n");
            }
        }
        Qkv::Separate => {
            let (q, k, v) = (n.inside(Role::Q), n.inside(Role::K), n.inside(Role::V));
            let gated = a.out_gate.is_some_and(|g| g.in_query());
            let q_rows = if gated {
                format!("{h} * 2 * {hd}")
            } else {
                format!("{h} * {hd}")
            };
            init += &format!(
                "        self.{q} = {}{}\n        self.{k} = {}\n        self.{v} = {}\n",
                linear(spec, &d.to_string(), &q_rows, a.qkv_bias),
                if gated {
                    "  # per head: its queries, then its output gate"
                } else {
                    ""
                },
                linear(spec, &d.to_string(), &format!("{kv} * {hd}"), a.qkv_bias),
                linear(spec, &d.to_string(), &format!("{kv} * {vhd}"), a.qkv_bias),
            );
            fwd += &format!("        q, k, v = self.{q}(x), self.{k}(x), self.{v}(x)\n");
            if gated {
                fwd += &format!("        q, gate = q.view(B, T, {h}, 2, {hd}).unbind(3)\n        q, gate = q.reshape(B, T, {h} * {hd}), gate.reshape(B, T, {h} * {hd})\n");
            }
        }
        Qkv::Stacked if a.out_gate.is_some_and(|g| g.before_qkv()) => {
            let qkv = n.inside(Role::Qkv);
            init += &format!(
                "        self.{qkv} = {}  # the output gate, q, k and v stacked: all gate rows, then query, key, value\n",
                linear(spec, &d.to_string(), &format!("(2 * {h} + 2 * {kv}) * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        gate, q, k, v = self.{qkv}(x).split([{h} * {hd}, {h} * {hd}, {kv} * {hd}, {kv} * {hd}], dim=-1)\n"
            );
        }
        Qkv::Stacked => {
            let qkv = n.inside(Role::Qkv);
            init += &format!(
                "        self.{qkv} = {}  # q, k and v stacked: all query rows, then key, then value\n",
                linear(spec, &d.to_string(), &format!("({h} + 2 * {kv}) * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        q, k, v = self.{qkv}(x).split([{h} * {hd}, {kv} * {hd}, {kv} * {hd}], dim=-1)\n"
            );
        }
        Qkv::Parts(parts) => {
            let qkv = n.inside(Role::Qkv);
            init += &format!(
                "        self.{qkv} = {}  # {parts} parts, each [q | v | k] of a 1/{parts} share of the heads\n",
                linear(spec, &d.to_string(), &format!("3 * {h} * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        qkv = self.{qkv}(x).view(B, T, {parts}, 3, {h} * {hd} // {parts})\n        q, v, k = (qkv[:, :, :, i].reshape(B, T, {h} * {hd}) for i in range(3))\n"
            );
        }
        Qkv::Grouped => {
            let qkv = n.inside(Role::Qkv);
            let g = h / kv;
            init += &format!(
                "        self.{qkv} = {}  # per K/V group: its {g} query heads, its key, its value\n",
                linear(spec, &d.to_string(), &format!("({h} + 2 * {kv}) * {hd}"), a.qkv_bias)
            );
            fwd += &format!(
                "        qkv = self.{qkv}(x).view(B, T, {kv}, {g} + 2, {hd})\n        q = qkv[:, :, :, :{g}].reshape(B, T, {h} * {hd})\n        k = qkv[:, :, :, {g}].reshape(B, T, {kv} * {hd})\n        v = qkv[:, :, :, {g} + 1].reshape(B, T, {kv} * {hd})\n"
            );
        }
    }
    let o = n.inside(Role::O);
    init += &format!(
        "        self.{o} = {}\n",
        linear(spec, &format!("{h} * {vhd}"), &d.to_string(), a.o_bias)
    );
    // Inkling: K and V each through a residual convolution over time, once projected.
    if let Some(kc) = a.kv_conv {
        let (taps, scaled) = (kc.conv.taps, py_bool(kc.conv.scaled));
        let module = |role| {
            n.inside(role)
                .split('.')
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let (kc, vc) = (module(Role::KConv), module(Role::VConv));
        init += &format!("        self.{kc} = ResidualConv({kv} * {hd}, {taps}, {scaled})\n        self.{vc} = ResidualConv({kv} * {vhd}, {taps}, {scaled})\n");
        fwd += &format!("        k, v = self.{kc}(k), self.{vc}(v)  # each channel mixed over its last {taps} positions\n");
    }
    let (qn, kn) = (n.inside(Role::QNorm), n.inside(Role::KNorm));
    match a.qk_norm {
        QkNorm::PerHead | QkNorm::PerHeadPostRope if shares => {
            init += &format!("        self.{qn} = Norm({hd})  # over each head's {hd} dims, shared by the heads\n");
        }
        QkNorm::PerHead | QkNorm::PerHeadPostRope => {
            init += &format!("        self.{qn} = Norm({hd})  # over each head's {hd} dims, shared by the heads\n        self.{kn} = Norm({hd})\n");
        }
        QkNorm::Full => {
            init += &format!("        self.{qn} = Norm({h} * {hd})  # over all heads together\n        self.{kn} = Norm({kv} * {hd})\n");
            fwd += &format!("        q, k = self.{qn}(q), self.{kn}(k)\n");
        }
        QkNorm::Unit => {
            init += &format!("        self.{qn} = Norm({hd})  # each head to length 1, no weight\n        self.{kn} = Norm({hd})\n");
        }
        // One LayerNorm per head (StableLM's `q_layernorm.norms`).
        QkNorm::HeadWeights if crate::naming::qk_norm_per_head(spec.layout) => {
            let eps = spec.norm.eps;
            init += &holders_of(&[qn.clone(), kn.clone()]);
            init += &format!("        self.{qn} = nn.ModuleList(nn.LayerNorm({hd}, eps={eps}, bias=False) for _ in range({h}))  # one per head\n        self.{kn} = nn.ModuleList(nn.LayerNorm({hd}, eps={eps}, bias=False) for _ in range({kv}))\n");
        }
        QkNorm::HeadWeights => {
            init += &format!("        self.{qn} = nn.Module()\n        self.{qn}.weight = nn.Parameter(torch.ones({h}, {hd}))  # each head its own\n        self.{kn} = nn.Module()\n        self.{kn}.weight = nn.Parameter(torch.ones({kv}, {hd}))\n");
        }
        QkNorm::None | QkNorm::L2 => {}
    }
    if let Some(c) = a.clip_qkv {
        fwd += &format!(
            "        q, k, v = q.clamp(-{c}, {c}), k.clamp(-{c}, {c}), v.clamp(-{c}, {c})\n"
        );
    }
    if a.sinks {
        init += &format!(
            "        self.{} = nn.Parameter(torch.zeros({h}))  # one learned sink logit per head\n",
            n.inside(Role::Sinks)
        );
    }
    fwd += &format!("        q = q.view(B, T, {h}, {hd}).transpose(1, 2)  # [B, {h}, T, {hd}]\n");
    if !shares {
        fwd += &format!("        k = k.view(B, T, {kv}, {hd}).transpose(1, 2)  # [B, {kv}, T, {hd}]\n        v = v.view(B, T, {kv}, {vhd}).transpose(1, 2)\n");
    }
    if a.v_norm && !shares {
        fwd += &format!("        v = (v.float() * torch.rsqrt(v.float().pow(2).mean(-1, keepdim=True) + {})).type_as(v)  # each value head RMS-normed, no weight\n", spec.norm.eps);
    }
    if a.v_scale != 1.0 {
        fwd += &format!("        v = v * {}  # the values scaled\n", a.v_scale);
    }
    if a.dynamic_mask.is_some() {
        let (dt, da) = (n.inside(Role::DynDt), n.inside(Role::DynA));
        init += &format!(
            "        self.{dt} = {}  # scores each key from all heads' values\n        self.{da} = nn.Parameter(torch.zeros({kv}))\n",
            linear(spec, &format!("{kv} * {vhd}"), &kv.to_string(), a.qkv_bias)
        );
        fwd += &format!("        delta = torch.exp(self.{da} * F.softplus(self.{dt}(v.transpose(1, 2).reshape(B, T, {kv} * {vhd})))).transpose(1, 2)  # [B, {kv}, T]\n");
    }
    if a.qk_norm == QkNorm::PerHead && shares {
        fwd += &format!("        q = self.{qn}(q)\n");
    } else if a.qk_norm == QkNorm::Unit {
        fwd += &format!(
            "        q, k = self.{qn}(q), self.{kn}(k)  # unit length: a score is a cosine\n"
        );
    } else if a.qk_norm == QkNorm::PerHead {
        fwd += &format!("        q, k = self.{qn}(q), self.{kn}(k)\n");
    } else if a.qk_norm == QkNorm::HeadWeights && crate::naming::qk_norm_per_head(spec.layout) {
        fwd += &format!("        q = torch.cat([norm(q[:, i : i + 1]) for i, norm in enumerate(self.{qn})], dim=1)  # each head through its own LayerNorm\n        k = torch.cat([norm(k[:, i : i + 1]) for i, norm in enumerate(self.{kn})], dim=1)\n");
    } else if a.qk_norm == QkNorm::HeadWeights {
        let eps = spec.norm.eps;
        fwd += &format!("        # LayerNorm over each head's {hd} dims, no shift, each head its own weight\n        q = (F.layer_norm(q.float(), ({hd},), eps={eps}) * self.{qn}.weight[:, None, :].float()).type_as(q)\n        k = (F.layer_norm(k.float(), ({hd},), eps={eps}) * self.{kn}.weight[:, None, :].float()).type_as(k)\n");
    }
    if matches!(spec.position, Position::Rope(_)) && shares {
        fwd += "        if self.use_rope:\n            cos, sin = rope\n            q = apply_rope(q, cos, sin)\n";
    } else if matches!(spec.position, Position::Rope(_)) {
        fwd += "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n";
        if a.qk_norm == QkNorm::L2 {
            let eps = spec.norm.eps;
            fwd += &format!("            # weightless RMS normalization of each rotated head\n            q = (q.float() * torch.rsqrt(q.float().pow(2).mean(-1, keepdim=True) + {eps})).type_as(q)\n            k = (k.float() * torch.rsqrt(k.float().pow(2).mean(-1, keepdim=True) + {eps})).type_as(k)\n");
        }
    }
    if a.qk_norm == QkNorm::PerHeadPostRope {
        fwd += &format!("        q, k = self.{qn}(q), self.{kn}(k)  # normed after RoPE\n");
    }
    // Inkling: each query's relative state mixes the bank's distance profiles into its bias.
    if let Some(rl) = a.rel_logits {
        let (rp, bank) = (n.inside(Role::RelProj), n.inside(Role::RelBank));
        let bank = bank.split('.').next().unwrap_or_default().to_string();
        init += &format!(
            "        self.{rp} = {}\n        self.{bank} = RelativeLogits({}, {})\n",
            linear(spec, &d.to_string(), &format!("{h} * {}", rl.d_rel), false),
            rl.d_rel,
            rl.extent
        );
        fwd += &format!(
            "        rel = self.{bank}(self.{rp}(x).view(B, T, {h}, {}).transpose(1, 2), T)  # [B, {h}, T, T]\n",
            rl.d_rel
        );
    }
    if let Some(qs) = a.query_scale {
        let when = if qs.nope_only {
            "        if not self.use_rope:  # queries grow with position in the layers without RoPE\n    "
        } else {
            "        # queries grow with position\n"
        };
        let factor = query_factor(qs);
        fwd += &format!("{when}        q = q * {factor}[None, None, :, None].to(q.dtype)\n");
        if a.rel_logits.is_some() {
            fwd += &format!(
                "        rel = rel * {factor}[None, None, :, None]  # scaled with the queries\n"
            );
        }
    }
    if let Some(g) = spec.ngpt {
        let sq = n.inside(Role::NgptQueryScale);
        init += &format!(
            "        self.{sq} = nn.Parameter(torch.full(({h} * {hd},), {}))  # the queries' learned scale\n",
            fmt_f(g.init)
        );
        fwd += &format!(
            "        q = q * (self.{sq} * ({hd} ** 0.5 / {})).view({h}, 1, {hd}).square()  # sets how sharp each head attends\n",
            fmt_f(g.init)
        );
    }
    let listed = !spec.kv_from.is_empty();
    if shares && listed {
        fwd += "        k, v = SHARED_KV[KV_FROM[self.layer_idx]]  # those of the layer it reads\n";
    } else if shares {
        fwd += "        k, v = SHARED_KV[self.span[0]]  # the last layer of this kind's that projects its own\n";
    } else if store && listed {
        fwd += "        SHARED_KV[self.layer_idx] = k, v  # for the later layers that read them\n";
    } else if store {
        fwd += "        SHARED_KV[self.span[0]] = k, v  # for the later layers that share them\n";
    }
    // Kolibri 1.1: the indexer reads the raw keys of K/V head 0; the heads attend over keys and
    // values rounded to NVFP4.
    let pool = a.pool_index.as_ref().map(|p| {
        init += &format!(
            "        self.indexer = PoolIndexer({}, {}, {}, {}, {}, {}, layer_idx in POOL_LAYERS)  # no weights\n",
            p.heads, p.top_k, p.pool, p.compression, p.local, p.sinks
        );
        fwd += "        keep = self.indexer(q, k[:, 0])[:, None]  # [B, 1, T, T]: the keys each query keeps\n        k, v = nvfp4(k), nvfp4(v)  # attended over rounded to NVFP4\n";
        "keep"
    });
    if a.differential {
        let half = kv / 2;
        fwd += &format!("        pair = torch.arange({kv}) % {half}  # K/V head j offers heads j mod {half} and {half} + j mod {half}\n        v = torch.cat([v[:, pair], v[:, {half} + pair]], dim=-1)  # [B, {kv}, T, 2 * {hd}]\n");
    }
    if h != kv {
        let g = h / kv;
        fwd += &format!("        k = k.repeat_interleave({g}, dim=1)  # each K/V head serves {g} query heads\n        v = v.repeat_interleave({g}, dim=1)\n");
    }
    // MiniMax-M3's lightning indexer: each query group attends only in the blocks it chose.
    // Its published checkpoint keeps the indexer's layers on the attention itself.
    let keep = a.block_index.map(|bi| {
        let call = match n.inside(Role::BlockIndexQ).split_once('.') {
            Some((index, _)) => {
                init += &format!("        self.{index} = BlockIndexer()  # which blocks of keys each query group attends to\n");
                format!("self.{index}(x, rope)")
            }
            None => {
                init += "        BlockIndexer.layers(self)  # which blocks of keys each query group attends to\n";
                "BlockIndexer.forward(self, x, rope)".to_string()
            }
        };
        fwd += &format!(
            "        keep = {call}.repeat_interleave({}, dim=1)  # [B, {h}, T, T]: each query group's blocks\n",
            h / bi.heads
        );
        "keep"
    });
    // Qwen4-Exp's QSA indexer: every head attends only where it keeps.
    let keep = keep.or(pool).or_else(|| {
        a.qsa.map(|_| {
            let index = n.inside(Role::QsaQk);
            let index = index.split('.').next().unwrap_or("indexer").to_string();
            init += &format!(
                "        self.{index} = QsaIndexer()  # which keys each query attends to\n"
            );
            fwd += &format!("        keep = self.{index}(x, rope)[:, None]  # [B, 1, T, T]\n");
            "keep"
        })
    });
    let vd = if a.differential { 2 * hd } else { vhd };
    fwd += &attend(spec, h, vd, keep);
    if a.differential {
        let p = h / 2;
        for name in ["lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"] {
            init += &format!("        self.{name} = nn.Parameter(torch.zeros({hd}))\n");
        }
        init += "        self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * layer_idx)\n";
        fwd += &format!("        lam = torch.exp((self.lambda_q1 * self.lambda_k1).sum()) - torch.exp((self.lambda_q2 * self.lambda_k2).sum()) + self.lambda_init\n        d = out.view(B, T, 2, {p}, 2 * {hd})\n        d = d[:, :, 0] - lam * d[:, :, 1]  # the first {p} heads minus λ times the other {p}\n        d = d * torch.rsqrt(d.pow(2).mean(-1, keepdim=True) + {})  # each pair RMS-normed, no weight\n        out = ((1 - self.lambda_init) * d).reshape(B, T, {h} * {hd})\n", spec.norm.eps);
    }
    if let Some(gate) = a.out_gate.filter(|g| g.in_query() || g.before_qkv()) {
        fwd += &format!(
            "        out = out * {}  # each head feature gated, the gate projected with the queries\n",
            if gate.softplus {
                "F.softplus(gate.float()).to(out.dtype)"
            } else {
                "torch.sigmoid(gate)"
            }
        );
    } else if let Some(gate) = a.out_gate {
        let g = n.inside(Role::AttnGate);
        let width = if gate.per_head {
            h.to_string()
        } else {
            format!("{h} * {vhd}")
        };
        init += &format!(
            "        self.{g} = {}  # the output gate\n",
            linear(spec, &d.to_string(), &width, false)
        );
        let (bias_init, mut z) = gate_logits(n, gate, h, vhd);
        init += &bias_init;
        if let Some(ng) = spec.ngpt {
            let sg = n.inside(Role::NgptGateScale);
            init += &format!(
                "        self.{sg} = nn.Parameter(torch.full(({h} * {vhd},), {}))  # the gate's learned scale\n",
                fmt_f(ng.init)
            );
            z = format!(
                "({z} * (self.{sg} * ({d} ** 0.25 / {})).square())",
                fmt_f(ng.init)
            );
        }
        let f = if gate.softplus {
            format!("F.softplus({z}.float()).to(out.dtype)")
        } else {
            format!("torch.sigmoid({z})")
        };
        fwd += &if gate.per_head {
            format!("        out = (out.view(B, T, {h}, {vhd}) * {f}.unsqueeze(-1)).view(B, T, {h} * {vhd})  # each head gated by the input\n")
        } else {
            format!("        out = out * {f}  # each head feature gated by the input\n")
        };
    }
    if a.sub_norm {
        let s = n.inside(Role::AttnSubNorm);
        init += &format!(
            "        self.{s} = Norm({h} * {vhd})  # over the heads, before the output projection\n"
        );
        fwd += &format!("        out = self.{s}(out)\n");
    }
    if a.o_bias_last {
        let bias = n.inside(Role::DenseBias);
        let last = spec.layers.saturating_sub(1);
        init += &format!("        self.{bias} = nn.Parameter(torch.zeros({d})) if layer_idx == {last} else None  # the last layer's own output bias\n");
        fwd += &format!("        y = self.{o}(out)\n        return y if self.{bias} is None else y + self.{bias}  # [B, T, {d}]\n");
    } else {
        fwd += &format!("        return self.{o}(out)  # [B, T, {d}]\n");
    }
    // Tensors one module further down (EXAONE's `attn.attention.q_proj`) get that module first.
    let mut holders: Vec<String> = [Role::Q, Role::Qkv, Role::O]
        .iter()
        .filter_map(|r| Some(n.inside(*r).rsplit_once('.')?.0.to_string()))
        .collect();
    holders.sort();
    holders.dedup();
    let holders: String = holders
        .iter()
        .map(|h| format!("        self.{h} = nn.Module()\n"))
        .collect();
    let init = holders + &init;
    let indexer = a
        .block_index
        .map_or(String::new(), |bi| block_indexer(spec, n, bi) + "\n\n\n")
        + &a.qsa.map_or(String::new(), |q| {
            let names = [Role::QsaQk, Role::QsaQNorm, Role::QsaKNorm].map(|r| n.attr(r));
            gated::qsa_class(q, spec.hidden, names) + "\n\n\n"
        });
    indexer
        + fill(
            r#"class ${class}(nn.Module):
    def __init__(self, span=("full", 0), use_rope=True${idx}):
        super().__init__()
        self.span, self.use_rope = span, use_rope${keep_idx}
${init}
    def forward(self, x, rope=None):  # x: [B, T, ${d}]
${fwd}"#,
            &[
                ("class", class.to_string()),
                (
                    "keep_idx",
                    if indexed_by_layer(spec) {
                        "\n        self.layer_idx = layer_idx".into()
                    } else {
                        String::new()
                    },
                ),
                ("init", init),
                ("fwd", fwd),
                ("d", d.to_string()),
                (
                    "idx",
                    if needs_layer_index(spec) || indexed_by_layer(spec) {
                        ", layer_idx=0".into()
                    } else {
                        String::new()
                    },
                ),
            ],
        )
        .trim_end()
}

/// The scale of the queries at positions 0 .. T − 1 (a [T] expression of `x`'s device).
pub(super) fn query_factor(qs: crate::spec::QueryScale) -> String {
    let pos = format!(
        "(torch.arange(T, device=x.device).float() + {}) / {}",
        qs.shift, qs.length
    );
    match qs.form {
        ScaleForm::Stepped => format!("(1 + {} * torch.log1p(torch.floor({pos})))", qs.beta),
        ScaleForm::Power => format!("torch.exp({} * torch.log1p({pos}))", qs.beta),
        ScaleForm::Floored => format!("(1 + {} * torch.log(({pos}).clamp(min=1.0)))", qs.beta),
    }
}
