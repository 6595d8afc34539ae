//! Attention of every kind: projections, Q/K norms, multi-head latent attention, the sparse indexers, mixtures of heads, residual convolutions and relative logits.

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

/// Inkling's relative logits.
pub(super) const RELATIVE_LOGITS: &str = r#"class RelativeLogits(nn.Module):
    """A bank of bias-by-distance profiles; each query's relative state mixes them into its bias."""

    def __init__(self, d_rel, extent):
        super().__init__()
        self.extent = extent
        self.proj = nn.Parameter(torch.empty(d_rel, extent))

    def forward(self, r, T):  # r: [B, heads, T, d_rel] -> [B, heads, T, T]
        per_distance = r @ self.proj  # [B, heads, T, extent]: the bias at each backward distance
        distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).to(r.device)  # i - j
        index = distance.clamp(0, self.extent - 1).expand(*per_distance.shape[:2], T, T)
        bias = per_distance.gather(-1, index)
        return bias.masked_fill((distance < 0) | (distance >= self.extent), 0.0)  # nothing ahead or beyond"#;

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

/// The attention module, or where some layers have their own (`layer_attn`), a class for each
/// variant and the list of every layer's class.
pub(super) fn attention(spec: &Spec, n: &Names) -> String {
    // Layers that share keys and values read them from the ones that store theirs.
    let store = spec.attn_variants().iter().any(|(a, _)| a.shares_kv);
    if spec.layer_attn.is_empty() {
        return attention_class(spec, n, "Attention", store);
    }
    let mut parts = vec![attention_class(spec, n, "Attention", store)];
    if store {
        parts[0] = format!("# The keys and values of the last layer of each span kind that projects its own, for the\n# layers that share them.\nSHARED_KV = {{}}\n\n\n{}", parts[0]);
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

/// JetMoE's mixture of attention heads.
pub(super) fn moa(spec: &Spec, n: &Names, m: crate::spec::Moa) -> String {
    let a = &spec.attn;
    let (d, kv, hd, e, k) = (spec.hidden, a.kv_heads, a.head_dim, m.experts, m.top_k);
    let (kvp, router, wq, wo, bias) = (
        n.inside(Role::Kv),
        n.inside(Role::AttnRouter),
        n.inside(Role::AttnExpertQ),
        n.inside(Role::AttnExpertO),
        n.inside(Role::AttnExperts),
    );
    let holders = holders_of(&[
        router.clone(),
        format!("{wq}.weight"),
        format!("{wo}.weight"),
        format!("{bias}.bias"),
    ]);
    let rope = if matches!(spec.position, Position::Rope(_)) {
        "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n"
    } else {
        ""
    };
    fill(
        r#"class Attention(nn.Module):
    """A mixture of attention heads: each token's ${k} chosen experts of ${e} bring a query and an
    output projection each, over one set of ${kv} K/V heads."""

    def __init__(self, span=("full", 0), use_rope=True):
        super().__init__()
        self.span, self.use_rope = span, use_rope
${holders}        self.${kvp} = nn.Linear(${d}, 2 * ${kv} * ${hd}, bias=False)  # K, then V
        self.${router} = nn.Linear(${d}, ${e}, bias=False)  # the router
        self.${wq}.weight = nn.Parameter(torch.zeros(${e}, ${kv} * ${hd}, ${d}))  # each expert's query projection
        self.${wo}.weight = nn.Parameter(torch.zeros(${e}, ${d}, ${kv} * ${hd}))  # each expert's output projection
        self.${bias}.bias = nn.Parameter(torch.zeros(${d}))  # shared by the experts

    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
        top, idx = self.${router}(x).topk(${k}, dim=-1)  # [B, T, ${k}]: each token's experts, best first
        gates = top.float().softmax(dim=-1).to(x.dtype)  # softmax over the chosen logits
        slots = x.unsqueeze(2).expand(B, T, ${k}, ${d})  # the input, once per slot
        q = x.new_zeros(B, T, ${k}, ${kv} * ${hd})
        for e in range(${e}):
            rows = idx == e
            if rows.any():
                q[rows] = slots[rows] @ self.${wq}.weight[e].T  # slot j's queries from its expert
        k, v = self.${kvp}(x).view(B, T, 2, ${kv}, ${hd}).unbind(2)
        # K/V group i's query heads are the ${k} slots' head i
        q = q.view(B, T, ${k}, ${kv}, ${hd}).permute(0, 3, 2, 1, 4).reshape(B, ${kv} * ${k}, T, ${hd})
        k, v = k.transpose(1, 2), v.transpose(1, 2)  # [B, ${kv}, T, ${hd}]
${rope}        k = k.repeat_interleave(${k}, dim=1)  # each K/V head serves ${k} query heads
        v = v.repeat_interleave(${k}, dim=1)
${attend}        out = out.view(B, T, ${kv}, ${k}, ${hd}).transpose(2, 3).reshape(B, T, ${k}, ${kv} * ${hd})  # slot j's heads
        y = torch.zeros_like(x)
        for e in range(${e}):
            rows = idx == e
            if rows.any():
                b, t, _ = rows.nonzero(as_tuple=True)
                y.index_put_((b, t), gates[rows, None] * (out[rows] @ self.${wo}.weight[e].T), accumulate=True)
        return y + self.${bias}.bias  # [B, T, ${d}]"#,
        &[
            ("holders", holders),
            ("kvp", kvp),
            ("router", router),
            ("wq", wq),
            ("wo", wo),
            ("bias", bias),
            ("rope", rope.to_string()),
            ("attend", attend(spec, a.heads, a.v_head_dim, None)),
            ("d", d.to_string()),
            ("kv", kv.to_string()),
            ("hd", hd.to_string()),
            ("e", e.to_string()),
            ("k", k.to_string()),
        ],
    )
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
        let pos = format!(
            "(torch.arange(T, device=x.device).float() + {}) / {}",
            qs.shift, qs.length
        );
        let factor = match qs.form {
            ScaleForm::Stepped => format!("(1 + {} * torch.log1p(torch.floor({pos})))", qs.beta),
            ScaleForm::Power => format!("torch.exp({} * torch.log1p({pos}))", qs.beta),
            ScaleForm::Floored => format!("(1 + {} * torch.log(({pos}).clamp(min=1.0)))", qs.beta),
        };
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
    if shares {
        fwd += "        k, v = SHARED_KV[self.span[0]]  # the last layer of this kind's that projects its own\n";
    } else if store {
        fwd += "        SHARED_KV[self.span[0]] = k, v  # for the later layers that share them\n";
    }
    if a.differential {
        let half = kv / 2;
        fwd += &format!("        pair = torch.arange({kv}) % {half}  # K/V head j offers heads j mod {half} and {half} + j mod {half}\n        v = torch.cat([v[:, pair], v[:, {half} + pair]], dim=-1)  # [B, {kv}, T, 2 * {hd}]\n");
    }
    if h != kv {
        let g = h / kv;
        fwd += &format!("        k = k.repeat_interleave({g}, dim=1)  # each K/V head serves {g} query heads\n        v = v.repeat_interleave({g}, dim=1)\n");
    }
    // MiniMax-M3's lightning indexer: each query group attends only in the blocks it chose.
    let keep = a.block_index.map(|bi| {
        let index = n.inside(Role::BlockIndexQ);
        let index = index.split('.').next().unwrap_or("indexer").to_string();
        init += &format!("        self.{index} = BlockIndexer()  # which blocks of keys each query group attends to\n");
        fwd += &format!(
            "        keep = self.{index}(x, rope).repeat_interleave({}, dim=1)  # [B, {h}, T, T]: each query group's blocks\n",
            h / bi.heads
        );
        "keep"
    });
    // Qwen4-Exp's QSA indexer: every head attends only where it keeps.
    let keep = keep.or_else(|| {
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
        self.span, self.use_rope = span, use_rope
${init}
    def forward(self, x, rope=None):  # x: [B, T, ${d}]
${fwd}"#,
            &[
                ("class", class.to_string()),
                ("init", init),
                ("fwd", fwd),
                ("d", d.to_string()),
                (
                    "idx",
                    if needs_layer_index(spec) {
                        ", layer_idx=0".into()
                    } else {
                        String::new()
                    },
                ),
            ],
        )
        .trim_end()
}

/// ZAYA's compressed convolutional attention as the module `class`, its tensors named as the
/// checkpoint's (`qkv_proj.q_proj` …).
pub(super) fn cca_attention(spec: &Spec, class: &str, cca: crate::spec::Cca) -> String {
    let a = &spec.attn;
    let (h, kv, hd) = (a.heads, a.kv_heads, a.head_dim);
    let rope = if matches!(spec.position, Position::Rope(_)) {
        "        if self.use_rope:\n            cos, sin = rope\n            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)\n"
    } else {
        ""
    };
    let repeat = if h != kv {
        format!("        k, v = k.repeat_interleave({g}, dim=1), v.repeat_interleave({g}, dim=1)  # each K/V head serves {g} query heads\n", g = h / kv)
    } else {
        String::new()
    };
    fill(
        r#"class ${class}(nn.Module):
    """ZAYA's compressed convolutional attention: Q and K mixed along time by two causal
    convolutions (${k0} taps per channel, then ${k1} across each head's channels), each with a
    residual path; half the values from the token before; Q and K scaled to length sqrt(${hd})."""

    def __init__(self, span=("full", 0), use_rope=True):
        super().__init__()
        self.span, self.use_rope = span, use_rope
        self.qkv_proj = p = nn.Module()
        p.q_proj = nn.Linear(${d}, ${h} * ${hd}, bias=${bias})
        p.k_proj = nn.Linear(${d}, ${kv} * ${hd}, bias=${bias})
        p.v_proj_current = nn.Linear(${d}, ${half}, bias=${bias})
        p.v_proj_delayed = nn.Linear(${d}, ${half}, bias=${bias})
        p.conv_qk_depthwise = nn.Conv1d(${c}, ${c}, ${k0}, groups=${c})
        p.conv_qk_grouped = nn.Conv1d(${c}, ${c}, ${k1}, groups=${heads})
        self.qk_norm = nn.Module()
        self.qk_norm.temp = nn.Parameter(torch.zeros(${kv}))  # each K/V head's key scale
        self.o_proj = nn.Linear(${h} * ${hd}, ${d}, bias=${bias})

    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
        p = self.qkv_proj
        q, k = p.q_proj(x), p.k_proj(x)
        # the residual paths: each query head's mean with its K/V head's key, and its mean per K/V head
        q_res = (q.view(B, T, ${h}, ${hd}) + k.view(B, T, ${kv}, ${hd}).repeat_interleave(${g}, dim=2)) / 2
        k_res = q_res.view(B, T, ${kv}, ${g}, ${hd}).mean(3)
        qk = F.pad(torch.cat([q, k], dim=-1).transpose(1, 2), (${reach}, 0))  # causal: zeros before the first token
        qk = p.conv_qk_grouped(p.conv_qk_depthwise(qk)).transpose(1, 2)  # [B, T, ${c}]
        q = qk[..., : ${h} * ${hd}].view(B, T, ${h}, ${hd}) + q_res
        k = qk[..., ${h} * ${hd} :].view(B, T, ${kv}, ${hd}) + k_res
        # half of the values from this token, half from the one before (the first reads the projection of zeros)
        delayed = p.v_proj_delayed(x)
        first = p.v_proj_delayed(x.new_zeros(B, 1, ${d}))
        v = torch.cat([p.v_proj_current(x), torch.cat([first, delayed[:, :-1]], dim=1)], dim=-1).view(B, T, ${kv}, ${hd})
        unit = lambda t: t * ${hd} ** 0.5 / t.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(t.dtype).eps)
        q, k = unit(q), unit(k) * self.qk_norm.temp[None, None, :, None]
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
${rope}${repeat}${attend}        return self.o_proj(out)  # [B, T, ${d}]"#,
        &[
            ("class", class.to_string()),
            ("d", spec.hidden.to_string()),
            ("h", h.to_string()),
            ("kv", kv.to_string()),
            ("hd", hd.to_string()),
            ("g", (h / kv).to_string()),
            ("half", (kv * hd / 2).to_string()),
            ("c", ((h + kv) * hd).to_string()),
            ("heads", (h + kv).to_string()),
            ("k0", cca.depthwise.to_string()),
            ("k1", cca.grouped.to_string()),
            ("reach", cca.reach().to_string()),
            ("bias", py_bool(a.qkv_bias)),
            ("rope", rope.into()),
            ("repeat", repeat),
            ("attend", attend(spec, h, a.v_head_dim, None)),
        ],
    )
}

/// MiniMax-M3's lightning indexer, as a module returning the keys each index head's group keeps.
pub(super) fn block_indexer(spec: &Spec, n: &Names, bi: crate::spec::BlockIndex) -> String {
    fill(
        r#"class BlockIndexer(nn.Module):
    """The lightning indexer: ${ih} heads of ${id} score every earlier key (q · k, unscaled); each
    query keeps its ${local} latest blocks of ${block} keys and the best-scored others, ${top_k}
    blocks in all, for the query heads of its index head's group. Its keys are cached."""

    def __init__(self):
        super().__init__()
        self.${q} = nn.Linear(${d}, ${ih} * ${id}, bias=False)
        self.${k} = nn.Linear(${d}, ${id}, bias=False)
        self.${qn} = Norm(${id})
        self.${kn} = Norm(${id})

    def forward(self, x, rope):  # -> [B, ${ih}, T, T] bool, True at the keys each group keeps
        B, T, _ = x.shape
        cos, sin = rope  # the attention's RoPE, on the first dims of each head
        q = apply_rope(self.${qn}(self.${q}(x).view(B, T, ${ih}, ${id})).transpose(1, 2), cos, sin)
        k = apply_rope(self.${kn}(self.${k}(x)).view(B, 1, T, ${id}), cos, sin)
        scores = (q.float() @ k.float().transpose(-1, -2)).masked_fill(~attention_mask(T, ("full", 0)).to(x.device), float("-inf"))
        blocks = -(-T // ${block})
        scores = F.pad(scores, (0, blocks * ${block} - T), value=float("-inf"))
        best = scores.view(B, ${ih}, T, blocks, ${block}).amax(-1)  # [B, ${ih}, T, blocks]: each block's best score
        latest = torch.arange(T, device=x.device) // ${block}
        for back in range(${local}):  # the query's latest blocks always stay
            best[..., torch.arange(T, device=x.device), (latest - back).clamp(min=0)] = float("inf")
        top = best.topk(min(${top_k}, blocks), dim=-1)
        chosen = torch.zeros_like(best, dtype=torch.bool).scatter(-1, top.indices, top.values > float("-inf"))
        return chosen.repeat_interleave(${block}, dim=-1)[..., :T]"#,
        &[
            ("ih", bi.heads.to_string()),
            ("id", bi.head_dim.to_string()),
            ("block", bi.block.to_string()),
            ("top_k", bi.top_k.to_string()),
            ("local", bi.local.to_string()),
            ("d", spec.hidden.to_string()),
            ("q", n.attr(Role::BlockIndexQ)),
            ("k", n.attr(Role::BlockIndexK)),
            ("qn", n.attr(Role::BlockIndexQNorm)),
            ("kn", n.attr(Role::BlockIndexKNorm)),
        ],
    )
}

/// Latent attention as the module `class`.
pub(super) fn mla(spec: &Spec, n: &Names, class: &str) -> String {
    let a = &spec.attn;
    let m = a.mla.as_ref().expect("MLA");
    let (d, h, vd) = (spec.hidden, a.heads, a.v_head_dim);
    let (nope, rd, kvl) = (m.qk_nope_head_dim, m.qk_rope_head_dim, m.kv_lora_rank);
    let qk = nope + rd;
    let eps = fmt_f(m.latent_eps);
    let index = n.inside(Role::IndexQ);
    let index = index.split('.').next().unwrap_or("indexer");
    // dots.3 Note's indexer reads the query latent scaled, as its query is.
    let index_in = match m.lora_scales {
        Some((q, _)) => format!("q_latent * {}", fmt_f(q)),
        None => "q_latent".into(),
    };
    let (q_init, q_fwd) = match m.q_lora_rank {
        Some(ql) if m.indexer.is_some() => {
            let (qa, qan, qb) = (n.attr(Role::QA), n.attr(Role::QANorm), n.attr(Role::QB));
            let (make, choose) = if own_indexers(spec).is_some() {
                (
                    format!("        self.{index} = Indexer() if own_indexer else None  # picks the keys each query attends to\n"),
                    format!("        if self.{index} is not None:  # the other layers reuse the last indexer's choice\n            Attention.chosen = self.{index}(x, {index_in}, rope)\n        keep = Attention.chosen  # [B, T, T]\n"),
                )
            } else {
                (
                    format!("        self.{index} = Indexer()  # picks the keys each query attends to\n"),
                    format!("        keep = self.{index}(x, {index_in}, rope)  # [B, T, T]\n"),
                )
            };
            if m.q_gate {
                // A.X-K2: the query and its gate from the normed and the raw latent.
                let vd = a.v_head_dim;
                (
                    format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear(2 * {ql}, {h} * ({qk} + {vd}), bias=False)  # each head's query, then its gate\n{make}", py_bool(m.bias)),
                    format!("        raw = self.{qa}(x)\n        q_latent = self.{qan}(raw)\n{choose}        qg = self.{qb}(torch.cat([q_latent, raw], dim=-1)).view(B, T, {h}, {qk} + {vd})\n        q, gate = qg[..., :{qk}].reshape(B, T, -1), qg[..., {qk}:].reshape(B, T, -1)\n"),
                )
            } else {
                (
                    format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear({ql}, {h} * {qk}, bias=False)\n{make}", py_bool(m.bias)),
                    format!("        q_latent = self.{qan}(self.{qa}(x))\n{choose}        q = self.{qb}(q_latent)\n"),
                )
            }
        }
        Some(ql) => {
            let (qa, qan, qb) = (n.attr(Role::QA), n.attr(Role::QANorm), n.attr(Role::QB));
            (
                format!("        self.{qa} = nn.Linear({d}, {ql}, bias={})  # Q latent\n        self.{qan} = Norm({ql}, eps={eps})  # the latents' norms at their own eps\n        self.{qb} = nn.Linear({ql}, {h} * {qk}, bias=False)\n", py_bool(m.bias)),
                format!("        q = self.{qb}(self.{qan}(self.{qa}(x)))\n"),
            )
        }
        None => {
            let q = n.attr(Role::Q);
            (
                format!("        self.{q} = nn.Linear({d}, {h} * {qk}, bias=False)\n"),
                format!("        q = self.{q}(x)\n"),
            )
        }
    };
    let (kva, kvan, kvb, o) = (
        n.attr(Role::KvA),
        n.attr(Role::KvANorm),
        n.attr(Role::KvB),
        n.attr(Role::O),
    );
    // LongCat-Flash scales the query and the normed KV latent (so keys and values both).
    let (q_fwd, kv_scale) = match m.lora_scales {
        Some((q, kv)) => (
            q_fwd + &format!("        q = q * {}  # sqrt(hidden / q_lora)\n", fmt_f(q)),
            format!(" * {}", fmt_f(kv)),
        ),
        None => (q_fwd, String::new()),
    };
    let indexer = match (&m.indexer, m.q_lora_rank) {
        (Some(ix), Some(ql)) => indexer(ix, ql, d, rd, n) + "\n\n\n",
        _ => String::new(),
    };
    let keep = m.indexer.as_ref().map(|_| "keep[:, None]");
    indexer
        + &fill(
            r#"class ${class}(nn.Module):
    """Multi-head latent attention: the cache holds c_kv (${kvl}) and k_pe (${rd}) per token."""

    def __init__(self, span=("full", 0), use_rope=True${own_param}):
        super().__init__()
        self.span, self.use_rope = span, use_rope
${q_init}        self.${kva} = nn.Linear(${d}, ${kvl} + ${rd}, bias=${bias})  # latent + one shared ${shared} key
        self.${kvan} = Norm(${kvl}, eps=${eps})
${k_pe_norm_init}        self.${kvb} = nn.Linear(${kvl}, ${h} * (${nope} + ${vd}), bias=False)
        self.${o} = nn.Linear(${h} * ${vd}, ${d}, bias=${o_bias})
${gate_init}
    def forward(self, x, rope=None):  # x: [B, T, ${d}]
        B, T, _ = x.shape
${q_fwd}        q = q.view(B, T, ${h}, ${qk}).transpose(1, 2)  # [B, ${h}, T, ${qk}]
        q_nope, q_pe = q.split([${nope}, ${rd}], dim=-1)
        c_kv, k_pe = self.${kva}(x).split([${kvl}, ${rd}], dim=-1)
        kv = self.${kvb}(self.${kvan}(c_kv)${kv_scale}).view(B, T, ${h}, ${nope} + ${vd}).transpose(1, 2)
        k_nope, v = kv.split([${nope}, ${vd}], dim=-1)
${position}        q = torch.cat([q_nope, q_pe], dim=-1)
        k = torch.cat([k_nope, k_pe], dim=-1)
${attend}${gate}        return self.${o}(out)  # [B, T, ${d}]"#,
            &[
                ("class", class.to_string()),
                ("kvl", kvl.to_string()),
                ("rd", rd.to_string()),
                ("eps", eps.clone()),
                (
                    "k_pe_norm_init",
                    if m.rope_key_norm {
                        format!(
                            "        self.{} = Norm({rd})  # the shared rotary key's own norm\n",
                            n.attr(Role::KPeNorm)
                        )
                    } else {
                        String::new()
                    },
                ),
                ("q_init", q_init),
                ("q_fwd", q_fwd),
                ("kva", kva),
                ("kvan", kvan),
                ("kvb", kvb),
                ("kv_scale", kv_scale),
                ("o", o),
                ("d", d.to_string()),
                ("h", h.to_string()),
                ("nope", nope.to_string()),
                ("vd", vd.to_string()),
                ("qk", qk.to_string()),
                ("attend", attend(spec, h, vd, keep)),
                ("gate_init", {
                    let sinks = if a.sinks {
                        format!(
                            "        self.{} = nn.Parameter(torch.zeros({h}))  # one learned sink logit per head\n",
                            n.inside(Role::Sinks)
                        )
                    } else {
                        String::new()
                    };
                    sinks
                        + &match a.out_gate {
                            // A.X-K2's gate comes with the query.
                            Some(g) if g.in_query() => String::new(),
                            Some(g) => format!(
                                "        self.{} = {}  # the output gate\n{}",
                                n.inside(Role::AttnGate),
                                linear(
                                    spec,
                                    &d.to_string(),
                                    &if g.per_head {
                                        h.to_string()
                                    } else {
                                        format!("{h} * {vd}")
                                    },
                                    false
                                ),
                                gate_logits(n, g, h, vd).0
                            ),
                            None => String::new(),
                        }
                }),
                ("gate", {
                    match a.out_gate {
                        Some(g) if g.in_query() => {
                            "        out = out * torch.sigmoid(gate)  # gated by the query projection's gate rows\n".to_string()
                        }
                        Some(g) => {
                            let z = gate_logits(n, g, h, vd).1;
                            let f = if g.softplus {
                                format!("F.softplus({z}.float()).to(out.dtype)")
                            } else {
                                format!("torch.sigmoid({z})")
                            };
                            if g.per_head {
                                format!("        out = (out.view(B, T, {h}, {vd}) * {f}.unsqueeze(-1)).view(B, T, {h} * {vd})  # each head gated by the input\n")
                            } else {
                                format!("        out = out * {f}  # gated by the input\n")
                            }
                        }
                        None => String::new(),
                    }
                }),
                (
                    "position",
                    if matches!(spec.position, Position::Rope(_)) {
                        let normed = if m.rope_key_norm {
                            format!(
                                "        k_pe = self.{}(k_pe)  # normed, then rotated\n",
                                n.attr(Role::KPeNorm)
                            )
                        } else {
                            String::new()
                        };
                        format!("{normed}        cos, sin = rope\n        q_pe = apply_rope(q_pe, cos, sin)\n        k_pe = apply_rope(k_pe.view(B, 1, T, {rd}), cos, sin).expand(B, {h}, T, {rd})\n")
                    } else {
                        format!("        k_pe = k_pe.view(B, 1, T, {rd}).expand(B, {h}, T, {rd})  # no positions: the shared part as it is\n")
                    },
                ),
                (
                    "shared",
                    if matches!(spec.position, Position::Rope(_)) {
                        "rotary"
                    } else {
                        "position-free"
                    }
                    .into(),
                ),
                (
                    "own_param",
                    if own_indexers(spec).is_some() {
                        ", own_indexer=True".into()
                    } else {
                        String::new()
                    },
                ),
                ("bias", py_bool(m.bias)),
                ("o_bias", py_bool(a.o_bias)),
            ],
        )
}

/// The layers that run an indexer of their own, where only some do (GLM-5's shared layers).
pub(super) fn own_indexers(spec: &Spec) -> Option<&crate::layers::LayerSet> {
    let ix = spec.attn.mla.as_ref()?.indexer.as_ref()?;
    (!spec.indexer_reusers().is_empty()).then_some(&ix.own)
}

/// DeepSeek sparse attention's indexer, as a module returning the keys each query keeps.
pub(super) fn indexer(ix: &crate::spec::Indexer, ql: u64, d: u64, rd: u64, n: &Names) -> String {
    let attr = |r| n.attr(r);
    fill(
        r#"class Indexer(nn.Module):
    """DeepSeek sparse attention: ${ih} light heads score every earlier token, and each query keeps
    its ${top_k} best. Its keys (${id} per token) are cached beside the latent."""

    def __init__(self):
        super().__init__()
        self.${wq} = nn.Linear(${ql}, ${ih} * ${id}, bias=False)
        self.${wk} = nn.Linear(${d}, ${id}, bias=False)
        self.${k_norm} = nn.LayerNorm(${id}, eps=${key_eps})
        self.${weights} = nn.Linear(${d}, ${ih}, bias=False)

    def forward(self, x, q_latent, rope):  # -> [B, T, T] bool, True at the keys each query keeps
        B, T, _ = x.shape
        cos, sin = rope

${rotate}
        q = rotate(self.${wq}(q_latent).view(B, T, ${ih}, ${id}).transpose(1, 2))  # [B, ${ih}, T, ${id}]
        k = rotate(self.${k_norm}(self.${wk}(x)))  # [B, T, ${id}], one key per token
        dots = F.relu(q @ k[:, None].transpose(-1, -2) / math.sqrt(${id}))  # [B, ${ih}, T, T]
        w = self.${weights}(x) / math.sqrt(${ih})  # [B, T, ${ih}]
        scores = torch.einsum("bth,bhts->bts", w, dots)
        scores = scores.masked_fill(~attention_mask(T, ("full", 0)).to(x.device), float("-inf"))
        top = scores.topk(min(${top_k}, T), dim=-1).indices
        return torch.zeros_like(scores, dtype=torch.bool).scatter(-1, top, True)"#,
        // The rotation first: it holds placeholders of its own.
        &[
            (
                "rotate",
                if ix.rope_last && ix.interleaved {
                    "        def rotate(t):  # RoPE on the last ${rd} dims, interleaved pairs
            rest, rot = t[..., :-${rd}], t[..., -${rd}:]
            a, b = rot[..., 0::2], rot[..., 1::2]
            c, s = cos[..., :${half}], sin[..., :${half}]
            rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
            return torch.cat((rest, rot), dim=-1)
"
                    .to_string()
                } else if ix.rope_last {
                    "        def rotate(t):  # rotate-half on the last ${rd} dims
            rest, rot = t[..., :-${rd}], t[..., -${rd}:]
            half = torch.cat((-rot[..., ${half}:], rot[..., :${half}]), dim=-1)
            return torch.cat((rest, rot * cos + half * sin), dim=-1)
"
                    .to_string()
                } else if ix.interleaved {
                    "        def rotate(t):  # RoPE on the first ${rd} dims, interleaved pairs
            rot, rest = t[..., :${rd}], t[..., ${rd}:]
            a, b = rot[..., 0::2], rot[..., 1::2]
            c, s = cos[..., :${half}], sin[..., :${half}]
            rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
            return torch.cat((rot, rest), dim=-1)
"
                    .to_string()
                } else {
                    "        def rotate(t):  # rotate-half on the first ${rd} dims (the attention itself pairs differently)
            rot, rest = t[..., :${rd}], t[..., ${rd}:]
            half = torch.cat((-rot[..., ${half}:], rot[..., :${half}]), dim=-1)
            return torch.cat((rot * cos + half * sin, rest), dim=-1)
".to_string()
                },
            ),
            ("ih", ix.heads.to_string()),
            ("key_eps", fmt_f(ix.key_eps)),
            ("id", ix.head_dim.to_string()),
            ("top_k", ix.top_k.to_string()),
            ("ql", ql.to_string()),
            ("d", d.to_string()),
            ("rd", rd.to_string()),
            ("half", (rd / 2).to_string()),
            ("wq", attr(Role::IndexQ)),
            ("wk", attr(Role::IndexK)),
            ("k_norm", attr(Role::IndexKNorm)),
            ("weights", attr(Role::IndexWeights)),
        ],
    )
}
