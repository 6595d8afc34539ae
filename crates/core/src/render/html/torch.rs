//! PyTorch reference code for each part, written with this model's sizes.
//!
//! Class and attribute names follow `transformers` (`q_proj`, `input_layernorm`, `mlp.gate_proj`),
//! so the snippets assembled (`module`) load a Hugging Face state dict of the same model with only
//! the top-level prefixes renamed; `scripts/check_torch_snippets.py` does that and compares logits.

use super::parts::{Kind, Part};
use crate::fmt::float as fmt_f;
use crate::spec::{AttnKind, AttnSpan, NormKind, NormPlace, Position, QkNorm, Scoring, Spec};

const HEADER: &str =
    "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";

/// The snippet shown for `part`: imports, the helpers it uses, and its class.
pub fn snippet(spec: &Spec, part: &Part) -> String {
    let body = match part.kind {
        Kind::Embedding => embedding(spec),
        Kind::Norm => norm(spec),
        Kind::Attention if spec.attn.mla.is_some() => format!("{}\n\n{}", rope(spec), mla(spec)),
        Kind::Attention => format!("{}\n\n{}", rope(spec), attention(spec)),
        Kind::Mlp => mlp(spec, "MLP", spec.mlp.intermediate),
        Kind::Moe => format!(
            "{}\n\n{}",
            mlp(
                spec,
                "ExpertMLP",
                spec.moe.as_ref().map_or(0, |m| m.expert_intermediate)
            ),
            moe(spec)
        ),
        Kind::Residual => RESIDUAL.to_string(),
        Kind::Head => head(spec),
        Kind::Aux => mtp(spec),
    };
    format!("{HEADER}\n\n{body}\n")
}

/// All parts as one module with a `Model` that composes them as the Graph does.
pub fn module(spec: &Spec) -> String {
    let mut out = String::from(HEADER);
    out += "\n\n";
    out += &norm(spec);
    out += "\n\n";
    out += &embedding(spec);
    out += "\n\n";
    out += &rope(spec);
    out += "\n\n";
    out += &if spec.attn.mla.is_some() {
        mla(spec)
    } else {
        attention(spec)
    };
    out += "\n\n";
    out += &mlp(spec, "MLP", spec.mlp.intermediate);
    if let Some(m) = &spec.moe {
        out += "\n\n";
        out += &mlp(spec, "ExpertMLP", m.expert_intermediate);
        out += "\n\n";
        out += &moe(spec);
    }
    out += "\n\n";
    out += &head(spec);
    out += "\n\n";
    out += &block(spec);
    out += "\n";
    out
}

fn norm(spec: &Spec) -> String {
    let (d, eps) = (spec.hidden, spec.norm.eps);
    match spec.norm.kind {
        NormKind::Layer => format!(
            "def Norm(dim={d}, eps={eps}):\n    # LayerNorm: subtract the mean, divide by the standard deviation, scale and shift.\n    return nn.LayerNorm(dim, eps=eps)"
        ),
        NormKind::Rms if spec.norm.unit_offset => format!(
            "class Norm(nn.Module):\n    \"\"\"RMSNorm whose stored weight w is applied as (1 + w), computed in float32.\"\"\"\n\n    def __init__(self, dim={d}, eps={eps}):\n        super().__init__()\n        self.eps = eps\n        self.weight = nn.Parameter(torch.zeros(dim))\n\n    def forward(self, x):                                  # [B, T, dim]\n        h = x.float()\n        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)\n        return (h * (1.0 + self.weight.float())).type_as(x)"
        ),
        NormKind::Rms => format!(
            "class Norm(nn.Module):\n    \"\"\"RMSNorm: rescale each vector to unit root-mean-square, then apply a learned gain.\"\"\"\n\n    def __init__(self, dim={d}, eps={eps}):\n        super().__init__()\n        self.eps = eps\n        self.weight = nn.Parameter(torch.ones(dim))\n\n    def forward(self, x):                                  # [B, T, dim]\n        h = x.float()\n        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)\n        return self.weight * h.type_as(x)"
        ),
    }
}

fn embedding(spec: &Spec) -> String {
    let (v, d) = (spec.vocab, spec.hidden);
    let mut init = "        self.embed_tokens = nn.Embedding(vocab_size, d_model)\n".to_string();
    let mut fwd =
        format!("        x = self.embed_tokens(input_ids)                   # [B, T, {d}]\n");
    if let Some(p) = spec.embedding.learned_positions {
        init += &format!("        self.embed_positions = nn.Embedding({p}, d_model)   # learned absolute positions\n");
        fwd += "        pos = torch.arange(input_ids.shape[1], device=input_ids.device)\n        x = x + self.embed_positions(pos)\n";
    }
    if spec.embedding.scale_by_sqrt_hidden {
        fwd += &format!(
            "        x = x * torch.tensor({d} ** 0.5, dtype=x.dtype)   # scale by sqrt(d_model)\n"
        );
    }
    format!(
        "class TokenEmbedding(nn.Module):\n    def __init__(self, vocab_size={v}, d_model={d}):\n        super().__init__()\n{init}\n    def forward(self, input_ids):                          # [B, T] int64\n{fwd}        return x"
    )
}

/// RoPE frequencies with this model's base and scaling, and the rotation itself.
fn rope(spec: &Spec) -> String {
    let Position::Rope(r) = &spec.position else {
        return "# No rotary embedding: positions enter as learned embeddings added to the tokens."
            .into();
    };
    let hd = if let Some(m) = &spec.attn.mla {
        m.qk_rope_head_dim
    } else {
        spec.attn.head_dim
    };
    let rot = ((hd as f64 * r.partial) as u64) / 2 * 2;
    let param = |k: &str, default: f64| r.scaling.param(k, default);
    let factor = r.scaling.factor.unwrap_or(1.0);
    let old = r.scaling.original_context.unwrap_or(spec.context);
    let scaling = match r.scaling.kind.as_str() {
        "linear" => format!("    inv_freq = inv_freq / {factor}                     # linear scaling: positions squeezed ×{factor}\n"),
        "llama3" => format!(
            "    # llama3 scaling: long wavelengths slowed by {factor}, short ones kept, a smooth ramp between.\n    low_freq_wavelen = {old} / {low}\n    high_freq_wavelen = {old} / {high}\n    wavelen = 2 * math.pi / inv_freq\n    scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / {factor}, inv_freq)\n    smooth = ({old} / wavelen - {low}) / ({high} - {low})\n    smoothed = (1 - smooth) * scaled / {factor} + smooth * scaled\n    medium = (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen)\n    inv_freq = torch.where(medium, smoothed, scaled)\n",
            low = param("low_freq_factor", 1.0),
            high = param("high_freq_factor", 4.0)
        ),
        "yarn" => {
            let (mscale, mscale_all) = (param("mscale", 0.0), param("mscale_all_dim", 0.0));
            let get = |m: f64| if factor <= 1.0 { 1.0 } else { 0.1 * m * factor.ln() + 1.0 };
            let attn_factor = param(
                "attention_factor",
                if mscale != 0.0 && mscale_all != 0.0 { get(mscale) / get(mscale_all) } else { get(1.0) },
            );
            let truncate = param("truncate", 1.0) != 0.0;
            format!(
                "    # YaRN: interpolate low frequencies by {factor}, keep high ones, ramp between.\n    def correction_dim(rotations):\n        return ({rot} * math.log({old} / (rotations * 2 * math.pi))) / (2 * math.log({theta}))\n    low, high = correction_dim({fast}), correction_dim({slow})\n{trunc}    low, high = max(low, 0), min(high, {rot} - 1)\n    if low == high:\n        high += 0.001\n    ramp = torch.clamp((torch.arange({half}, dtype=torch.float32) - low) / (high - low), 0, 1)\n    extrapolation = 1 - ramp\n    inv_freq = inv_freq / {factor} * (1 - extrapolation) + inv_freq * extrapolation\n    attention_factor = {attn_factor}\n",
                theta = r.theta,
                fast = param("beta_fast", 32.0),
                slow = param("beta_slow", 1.0),
                trunc = if truncate { "    low, high = math.floor(low), math.ceil(high)\n" } else { "" },
                half = rot / 2,
            )
        }
        "dynamic" => format!("    # dynamic NTK: the base grows only once a sequence exceeds {} tokens; below that, as here.\n", spec.context),
        "default" => String::new(),
        other => format!("    # {other} scaling rescales these frequencies per dimension from the config's factors (not reproduced here).\n"),
    };
    let local = match r.local_theta {
        Some(t) => {
            format!("\n\n# Sliding-window layers use their own base: rope_frequencies(base={t}).")
        }
        None => String::new(),
    };
    format!(
        "def rope_frequencies(dim={rot}, base={theta}):\n    \"\"\"Inverse frequencies of the rotary embedding ({rot} of {hd} dims rotated), and the factor on cos/sin.\"\"\"\n    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))\n    attention_factor = 1.0\n{scaling}    return inv_freq, attention_factor\n\n\ndef rotate_half(x):\n    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]\n    return torch.cat((-x2, x1), dim=-1)\n\n\ndef apply_rope(x, pos, base={theta}):                       # x: [B, heads, T, {hd}]\n    inv_freq, factor = rope_frequencies(base=base)\n    freqs = pos[:, None].float() * inv_freq[None, :]       # [T, {half}]\n    emb = torch.cat((freqs, freqs), dim=-1)\n    cos, sin = (emb.cos() * factor).to(x.dtype), (emb.sin() * factor).to(x.dtype)\n    rot, rest = x[..., :{rot}], x[..., {rot}:]\n{apply}{local}",
        theta = r.theta,
        half = rot / 2,
        apply = if r.interleaved {
            "    # interleaved pairs (x0, x1), (x2, x3) … rotate as complex numbers\n    a, b = rot[..., 0::2], rot[..., 1::2]\n    c, s = cos[..., : cos.shape[-1] // 2], sin[..., : sin.shape[-1] // 2]\n    rot = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)\n    return torch.cat((rot, rest), dim=-1)"
        } else {
            "    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)"
        },
    )
}

fn window_mask(spec: &Spec) -> String {
    let mut spans: Vec<AttnSpan> = spec.plan.iter().map(|l| l.attn).collect();
    spans.sort();
    spans.dedup();
    let mut s = "    i = torch.arange(T)[:, None]\n    j = torch.arange(T)[None, :]\n    allowed = j <= i                                       # causal\n".to_string();
    if spans.iter().any(|s| matches!(s, AttnSpan::Sliding(_))) {
        s += "    if span[0] == \"sliding\":\n        allowed &= j > i - span[1]                         # only the last span[1] keys\n";
    }
    if spans.iter().any(|s| matches!(s, AttnSpan::Chunked(_))) {
        s += "    if span[0] == \"chunked\":\n        allowed &= (j // span[1]) == (i // span[1])        # only keys of the same chunk\n";
    }
    format!("def attention_mask(T, span):\n    \"\"\"True where query i may attend to key j; span is (\"full\", 0), (\"sliding\", w) or (\"chunked\", c).\"\"\"\n{s}    return allowed")
}

fn attention(spec: &Spec) -> String {
    let a = &spec.attn;
    let (d, h, kv, hd) = (spec.hidden, a.heads, a.kv_heads, a.head_dim);
    let qkv_bias = if a.qkv_bias { "True" } else { "False" };
    let o_bias = if a.o_bias { "True" } else { "False" };
    let mut init = String::new();
    if a.fused_qkv {
        init += &format!("        self.qkv_proj = nn.Linear({d}, ({h} + 2 * {kv}) * {hd}, bias={qkv_bias})   # q, k, v stacked\n");
    } else {
        init += &format!(
            "        self.q_proj = nn.Linear({d}, {h} * {hd}, bias={qkv_bias})\n        self.k_proj = nn.Linear({d}, {kv} * {hd}, bias={qkv_bias})\n        self.v_proj = nn.Linear({d}, {kv} * {hd}, bias={qkv_bias})\n"
        );
    }
    init += &format!("        self.o_proj = nn.Linear({h} * {hd}, {d}, bias={o_bias})\n");
    if spec.layout.stores_in_out() {
        init += "        # GPT-2 stores these as Conv1D weights, [in, out]: transpose them into these layers.\n";
    }
    match a.qk_norm {
        QkNorm::PerHead => init += &format!("        self.q_norm = Norm({hd})                            # over each head's {hd} dims\n        self.k_norm = Norm({hd})\n"),
        QkNorm::Full => init += &format!("        self.q_norm = Norm({h} * {hd})                     # over all heads together\n        self.k_norm = Norm({kv} * {hd})\n"),
        _ => {}
    }
    if a.sinks {
        init += &format!("        self.sinks = nn.Parameter(torch.zeros({h}))              # one learned sink logit per head\n");
    }
    let mut fwd = String::from("        B, T, _ = x.shape\n");
    if a.fused_qkv {
        fwd += &format!("        q, k, v = self.qkv_proj(x).split([{h} * {hd}, {kv} * {hd}, {kv} * {hd}], dim=-1)\n");
    } else {
        fwd += "        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)\n";
    }
    if a.qk_norm == QkNorm::Full {
        fwd += "        q, k = self.q_norm(q), self.k_norm(k)\n";
    }
    fwd += &format!(
        "        q = q.view(B, T, {h}, {hd}).transpose(1, 2)          # [B, {h}, T, {hd}]\n        k = k.view(B, T, {kv}, {hd}).transpose(1, 2)          # [B, {kv}, T, {hd}]\n        v = v.view(B, T, {kv}, {hd}).transpose(1, 2)\n"
    );
    if a.qk_norm == QkNorm::PerHead {
        fwd += "        q, k = self.q_norm(q), self.k_norm(k)\n";
    }
    if let Position::Rope(r) = &spec.position {
        let base = match r.local_theta {
            Some(t) => format!("{t} if span[0] == \"sliding\" else {}", r.theta),
            None => r.theta.to_string(),
        };
        fwd += &format!("        if use_rope:\n            pos = torch.arange(T, device=x.device)\n            q, k = apply_rope(q, pos, {base}), apply_rope(k, pos, {base})\n");
        if a.qk_norm == QkNorm::L2 {
            fwd += &format!("            # weightless RMS normalization after RoPE\n            q = q * torch.rsqrt(q.float().pow(2).mean(-1, keepdim=True) + {}).type_as(q)\n            k = k * torch.rsqrt(k.float().pow(2).mean(-1, keepdim=True) + {}).type_as(k)\n", spec.norm.eps, spec.norm.eps);
        }
    }
    if h != kv {
        fwd += &format!("        k = k.repeat_interleave({}, dim=1)                    # each K/V head serves {} query heads\n        v = v.repeat_interleave({}, dim=1)\n", h / kv, h / kv, h / kv);
    }
    fwd += &format!(
        "        scores = (q @ k.transpose(-1, -2)) * {}              # [B, {h}, T, T]\n",
        scale_text(spec)
    );
    if let Some(c) = a.softcap {
        fwd += &format!("        scores = {c} * torch.tanh(scores / {c})             # softcap\n");
    }
    fwd += "        scores = scores.masked_fill(~attention_mask(T, span).to(x.device), float(\"-inf\"))\n";
    if a.sinks {
        fwd += &format!(
            "        sink = self.sinks.view(1, {h}, 1, 1).expand(B, {h}, T, 1).to(scores.dtype)\n        probs = torch.cat([scores, sink], dim=-1).float().softmax(dim=-1)[..., :-1].to(q.dtype)   # the sink takes its share, then is dropped\n"
        );
    } else {
        fwd += "        probs = scores.float().softmax(dim=-1).to(q.dtype)\n";
    }
    fwd += &format!("        out = (probs @ v).transpose(1, 2).reshape(B, T, {h} * {hd})\n        return self.o_proj(out)                            # [B, T, {d}]");
    format!(
        "{}\n\n\nclass Attention(nn.Module):\n    def __init__(self):\n        super().__init__()\n{init}\n    def forward(self, x, span=(\"full\", 0), use_rope=True):   # x: [B, T, {d}]\n{fwd}",
        window_mask(spec)
    )
}

/// The score scale as a Python expression: 1/√d, times YaRN's mscale² where the Spec has it.
fn scale_text(spec: &Spec) -> String {
    let a = &spec.attn;
    if a.scale_mult != 1.0 {
        format!("({} ** -0.5 * {})", fmt_f(a.scale_dim), a.scale_mult)
    } else {
        format!("{} ** -0.5", fmt_f(a.scale_dim))
    }
}

fn mla(spec: &Spec) -> String {
    let a = &spec.attn;
    let m = a.mla.as_ref().expect("MLA");
    let (d, h, vd) = (spec.hidden, a.heads, a.v_head_dim);
    let (nope, rope_d, kvl) = (m.qk_nope_head_dim, m.qk_rope_head_dim, m.kv_lora_rank);
    let qk = nope + rope_d;
    let (q_init, q_fwd) = match m.q_lora_rank {
        Some(ql) => (
            format!("        self.q_a_proj = nn.Linear({d}, {ql}, bias=False)           # Q latent\n        self.q_a_layernorm = Norm({ql})\n        self.q_b_proj = nn.Linear({ql}, {h} * {qk}, bias=False)\n"),
            "        q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x)))\n".to_string(),
        ),
        None => (format!("        self.q_proj = nn.Linear({d}, {h} * {qk}, bias=False)\n"), "        q = self.q_proj(x)\n".to_string()),
    };
    format!(
        "{mask}\n\n\nclass Attention(nn.Module):\n    \"\"\"Multi-head latent attention: the cache holds c_kv ({kvl}) and k_pe ({rope_d}) per token.\"\"\"\n\n    def __init__(self):\n        super().__init__()\n{q_init}        self.kv_a_proj_with_mqa = nn.Linear({d}, {kvl} + {rope_d}, bias=False)   # latent + shared rotary key\n        self.kv_a_layernorm = Norm({kvl})\n        self.kv_b_proj = nn.Linear({kvl}, {h} * ({nope} + {vd}), bias=False)\n        self.o_proj = nn.Linear({h} * {vd}, {d}, bias=False)\n\n    def forward(self, x, span=(\"full\", 0), use_rope=True):   # x: [B, T, {d}]\n        B, T, _ = x.shape\n{q_fwd}        q = q.view(B, T, {h}, {qk}).transpose(1, 2)            # [B, {h}, T, {qk}]\n        q_nope, q_pe = q.split([{nope}, {rope_d}], dim=-1)\n        c_kv, k_pe = self.kv_a_proj_with_mqa(x).split([{kvl}, {rope_d}], dim=-1)\n        kv = self.kv_b_proj(self.kv_a_layernorm(c_kv)).view(B, T, {h}, {nope} + {vd}).transpose(1, 2)\n        k_nope, v = kv.split([{nope}, {vd}], dim=-1)\n        pos = torch.arange(T, device=x.device)\n        q_pe = apply_rope(q_pe, pos)\n        k_pe = apply_rope(k_pe.view(B, 1, T, {rope_d}), pos).expand(B, {h}, T, {rope_d})   # one rotary key for all heads\n        q = torch.cat([q_nope, q_pe], dim=-1)\n        k = torch.cat([k_nope, k_pe], dim=-1)\n        scores = (q @ k.transpose(-1, -2)) * {scale}\n        scores = scores.masked_fill(~attention_mask(T, span).to(x.device), float(\"-inf\"))\n        probs = scores.float().softmax(dim=-1).to(q.dtype)\n        out = (probs @ v).transpose(1, 2).reshape(B, T, {h} * {vd})\n        return self.o_proj(out)",
        mask = window_mask(spec),
        scale = scale_text(spec),
    )
}

fn act_expr(act: &str, x: &str) -> String {
    match act {
        "silu" | "swish" => format!("F.silu({x})"),
        "gelu_pytorch_tanh" | "gelu_new" | "gelu_fast" => {
            format!("F.gelu({x}, approximate=\"tanh\")")
        }
        "gelu" => format!("F.gelu({x})"),
        "relu" => format!("F.relu({x})"),
        other => format!("ACT[{other:?}]({x})"),
    }
}

fn mlp(spec: &Spec, class: &str, f: u64) -> String {
    let d = spec.hidden;
    let moe = spec.moe.as_ref().filter(|_| class == "ExpertMLP");
    let bias = if moe.map_or(spec.mlp.bias, |m| m.expert_bias) {
        "True"
    } else {
        "False"
    };
    if !spec.mlp.gated {
        return format!(
            "class {class}(nn.Module):\n    def __init__(self, d_model={d}, d_ff={f}):\n        super().__init__()\n        self.up_proj = nn.Linear(d_model, d_ff, bias={bias})\n        self.down_proj = nn.Linear(d_ff, d_model, bias={bias})\n\n    def forward(self, x):                                  # [B, T, {d}]\n        return self.down_proj({})           # [B, T, {d}]",
            act_expr(&spec.mlp.act, "self.up_proj(x)")
        );
    }
    if spec.mlp.fused_gate_up && moe.is_none() {
        return format!(
            "class {class}(nn.Module):\n    def __init__(self, d_model={d}, d_ff={f}):\n        super().__init__()\n        self.gate_up_proj = nn.Linear(d_model, 2 * d_ff, bias={bias})   # gate and up stacked\n        self.down_proj = nn.Linear(d_ff, d_model, bias={bias})\n\n    def forward(self, x):                                  # [B, T, {d}]\n        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)\n        return self.down_proj({} * up)   # [B, T, {d}]",
            act_expr(&spec.mlp.act, "gate")
        );
    }
    if let Some(limit) = moe.and_then(|m| m.swiglu_limit) {
        return format!(
            "class {class}(nn.Module):\n    \"\"\"Clamped SwiGLU: gate capped at {limit}, up clipped to ±{limit}, (up + 1) · gate · σ(1.702 · gate).\"\"\"\n\n    def __init__(self, d_model={d}, d_ff={f}):\n        super().__init__()\n        self.gate_proj = nn.Linear(d_model, d_ff, bias={bias})\n        self.up_proj = nn.Linear(d_model, d_ff, bias={bias})\n        self.down_proj = nn.Linear(d_ff, d_model, bias={bias})\n\n    def forward(self, x):\n        gate = self.gate_proj(x).clamp(max={limit})\n        up = self.up_proj(x).clamp(-{limit}, {limit})\n        return self.down_proj((up + 1) * gate * torch.sigmoid(1.702 * gate))"
        );
    }
    format!(
        "class {class}(nn.Module):\n    def __init__(self, d_model={d}, d_ff={f}):\n        super().__init__()\n        self.gate_proj = nn.Linear(d_model, d_ff, bias={bias})\n        self.up_proj = nn.Linear(d_model, d_ff, bias={bias})\n        self.down_proj = nn.Linear(d_ff, d_model, bias={bias})\n\n    def forward(self, x):                                  # [B, T, {d}]\n        return self.down_proj({} * self.up_proj(x))   # [B, T, {d}]",
        act_expr(&spec.mlp.act, "self.gate_proj(x)")
    )
}

fn moe(spec: &Spec) -> String {
    let m = spec.moe.as_ref().expect("MoE");
    let (d, e, k) = (spec.hidden, m.experts, m.top_k);
    let mut init = format!(
        "        self.gate = nn.Linear({d}, {e}, bias={})                # the router\n        self.experts = nn.ModuleList(ExpertMLP() for _ in range({e}))\n",
        if m.router_bias { "True" } else { "False" }
    );
    if m.correction_bias {
        init += &format!("        self.register_buffer(\"e_score_correction_bias\", torch.zeros({e}))   # for choosing only\n");
    }
    if m.shared_experts > 0 {
        init += &format!(
            "        self.shared_experts = ExpertMLP(d_ff={})\n",
            m.shared_intermediate
        );
    }
    let groups = if m.n_group > 1 {
        let per = e / m.n_group;
        let rank = if m.scoring == Scoring::Sigmoid {
            "topk(2, dim=-1).values.sum(-1)"
        } else {
            "max(dim=-1).values"
        };
        format!(
            "        group_scores = choice.view(-1, {g}, {per}).{rank}   # rank the {g} groups\n        keep = torch.zeros_like(group_scores).scatter_(1, group_scores.topk({tg}, dim=-1).indices, 1.0)\n        choice = choice.masked_fill(~keep.bool().repeat_interleave({per}, dim=1), 0.0)\n",
            g = m.n_group,
            tg = m.topk_group
        )
    } else {
        String::new()
    };
    let select = match m.scoring {
        Scoring::Softmax => format!(
            "        probs = logits.float().softmax(dim=-1)\n        choice = probs\n{groups}        weights, idx = choice.topk({k}, dim=-1)\n{}",
            if m.norm_topk_prob { "        weights = weights / weights.sum(-1, keepdim=True)\n" } else { "" }
        ),
        Scoring::Sigmoid => format!(
            "        probs = logits.float().sigmoid()\n        choice = probs{}\n{groups}        idx = choice.topk({k}, dim=-1).indices\n        weights = probs.gather(1, idx)\n{}",
            if m.correction_bias { " + self.e_score_correction_bias" } else { "" },
            if m.norm_topk_prob { "        weights = weights / (weights.sum(-1, keepdim=True) + 1e-20)\n" } else { "" }
        ),
        Scoring::TopkSoftmax => format!("        top, idx = logits.topk({k}, dim=-1)\n        weights = top.float().softmax(dim=-1)\n"),
        Scoring::TopkSigmoid => format!("        top, idx = logits.topk({k}, dim=-1)\n        weights = top.float().sigmoid()          # scales each chosen expert's input\n"),
    };
    let scale = if m.routed_scaling != 1.0 {
        format!("        weights = weights * {}\n", m.routed_scaling)
    } else {
        String::new()
    };
    let apply = if m.scoring == Scoring::TopkSigmoid {
        "                    out[rows] += expert(x[rows] * weights[rows, slot, None].to(x.dtype))\n"
    } else {
        "                    out[rows] += weights[rows, slot, None].to(x.dtype) * expert(x[rows])\n"
    };
    let shared = if m.shared_experts > 0 {
        "        out = out + self.shared_experts(x)\n"
    } else {
        ""
    };
    format!(
        "class MoE(nn.Module):\n    \"\"\"{e} routed experts, {k} active per token{}.\"\"\"\n\n    def __init__(self):\n        super().__init__()\n{init}\n    def forward(self, x):                                  # [B, T, {d}]\n        shape = x.shape\n        x = x.reshape(-1, {d})                              # one row per token\n        logits = self.gate(x)                              # [tokens, {e}]\n{select}{scale}        out = torch.zeros_like(x)\n        for slot in range({k}):\n            for e, expert in enumerate(self.experts):\n                rows = idx[:, slot] == e\n                if rows.any():\n{apply}{shared}        return out.reshape(shape)",
        if m.shared_experts > 0 { format!(", plus {} shared", m.shared_experts) } else { String::new() }
    )
}

const RESIDUAL: &str = "def residual(x, delta):\n    \"\"\"The residual stream: each sublayer adds its output to what came in.\"\"\"\n    return x + delta";

fn head(spec: &Spec) -> String {
    let (v, d) = (spec.vocab, spec.hidden);
    let weight = if spec.tied {
        "        self.weight = embedding.embed_tokens.weight        # tied: the embedding matrix itself\n".to_string()
    } else {
        format!("        self.weight = nn.Parameter(torch.empty({v}, {d}))\n")
    };
    let cap = match spec.final_softcap {
        Some(c) => {
            format!("        logits = {c} * torch.tanh(logits / {c})          # final softcap\n")
        }
        None => String::new(),
    };
    format!(
        "class LMHead(nn.Module):\n    def __init__(self, embedding):\n        super().__init__()\n{weight}\n    def forward(self, z):                                  # [B, T, {d}]\n        logits = z @ self.weight.T                         # [B, T, {v}]\n{cap}        return logits"
    )
}

fn block(spec: &Spec) -> String {
    let place = spec.norm.place;
    let mut init = String::new();
    let mut fwd = String::new();
    if place != NormPlace::Post {
        init += "        self.input_layernorm = Norm()\n";
    }
    init += "        self.self_attn = Attention()\n";
    match place {
        NormPlace::Pre => init += "        self.post_attention_layernorm = Norm()            # before the FFN, despite its name\n",
        NormPlace::Post => init += "        self.post_attention_layernorm = Norm()\n        self.post_feedforward_layernorm = Norm()\n",
        NormPlace::Sandwich => init += "        self.post_attention_layernorm = Norm()\n        self.pre_feedforward_layernorm = Norm()\n        self.post_feedforward_layernorm = Norm()\n",
    }
    init += "        self.mlp = MoE() if moe else MLP()\n";
    let attn_in = if place == NormPlace::Post {
        "x"
    } else {
        "self.input_layernorm(x)"
    };
    let attn = format!("self.self_attn({attn_in}, span, use_rope)");
    let attn = if place == NormPlace::Pre {
        attn
    } else {
        format!("self.post_attention_layernorm({attn})")
    };
    fwd += &format!("        x = x + {attn}\n");
    let ffn_in = match place {
        NormPlace::Pre => "self.post_attention_layernorm(x)",
        NormPlace::Post => "x",
        NormPlace::Sandwich => "self.pre_feedforward_layernorm(x)",
    };
    let ffn = format!("self.mlp({ffn_in})");
    let ffn = if place == NormPlace::Pre {
        ffn
    } else {
        format!("self.post_feedforward_layernorm({ffn})")
    };
    fwd += &format!("        x = x + {ffn}\n");
    let plan_text = format!(
        "[\n    {},\n]",
        crate::render::numpy::python_plan(spec).join(",\n    ")
    );
    let rope_kind = if matches!(spec.attn.kind, AttnKind::Mla) {
        "MLA"
    } else {
        "attention"
    };
    format!(
        "class DecoderLayer(nn.Module):\n    def __init__(self, moe=False):\n        super().__init__()\n{init}\n    def forward(self, x, span=(\"full\", 0), use_rope=True):\n{fwd}        return x\n\n\n# Per layer: (attention span, RoPE on, MoE FFN) — the {rope_kind} and FFN each layer uses.\nPLAN = {plan_text}\n\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.embed = TokenEmbedding()\n        self.layers = nn.ModuleList(DecoderLayer(moe) for _, _, moe in PLAN)\n        self.norm = Norm()\n        self.lm_head = LMHead(self.embed)\n\n    def forward(self, input_ids):                          # [B, T] int64\n        x = self.embed(input_ids)\n        for layer, (span, use_rope, _) in zip(self.layers, PLAN):\n            x = layer(x, span, use_rope)\n        return self.lm_head(self.norm(x))                  # [B, T, {}]",
        spec.vocab
    )
}

fn mtp(spec: &Spec) -> String {
    let d = spec.hidden;
    format!(
        "class MultiTokenPrediction(nn.Module):\n    \"\"\"Predicts the token after next from the last hidden state and the next token's embedding.\n    Not used in ordinary decoding; stored in the checkpoint as layer {}.\"\"\"\n\n    def __init__(self):\n        super().__init__()\n        self.embed_tokens = nn.Embedding({}, {d})           # a stored copy of the embedding\n        self.enorm, self.hnorm = Norm(), Norm()\n        self.eh_proj = nn.Linear(2 * {d}, {d}, bias=False)\n        self.block = DecoderLayer(moe=True)\n        self.shared_head_norm = Norm()\n        self.shared_head = nn.Linear({d}, {}, bias=False)   # a stored copy of the LM head\n\n    def forward(self, hidden, next_ids):                   # hidden: [B, T, {d}] before the final norm\n        e = self.enorm(self.embed_tokens(next_ids))\n        x = self.eh_proj(torch.cat([e, self.hnorm(hidden)], dim=-1))\n        return self.shared_head(self.shared_head_norm(self.block(x)))",
        spec.layers, spec.vocab, spec.vocab
    )
}
