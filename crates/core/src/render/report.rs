//! Text reports of `stats`, `manifest` and `list`.

use crate::fmt::{bytes, context, flops, grouped, short};
use crate::graph::{Component, Graph};
use crate::manifest::Entry;
use crate::stats::Stats;

pub fn stats(g: &Graph, s: &Stats, origin: &str) -> String {
    let spec = &g.spec;
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&l);
        out.push('\n');
    };
    line(format!(
        "{} · {} ({}) · {origin}",
        spec.name, spec.family, spec.model_type
    ));
    for i in &spec.ignored {
        line(crate::fmt::printable(&i.to_string()));
    }
    if !spec.not_read.is_empty() {
        line(crate::fmt::printable(&format!(
            "not read by transformers (so it cannot change the model): {}",
            not_read(spec)
        )));
    }
    line(String::new());
    line("Parameters".into());
    let total = s.total_params as u128;
    line(format!(
        "  {:<26}{:>20}  ({})",
        "total",
        grouped(total),
        short(total)
    ));
    let towers = s.tower_params() > 0;
    // Layers that cross-attend to an image (Mllama): text alone skips them.
    let cross = g.spec.layers_where(|l| !l.mixer.runs_on_text());
    line(format!(
        "  {:<26}{:>20}  ({}){}",
        "active per token",
        grouped(s.active_params as u128),
        short(s.active_params as u128),
        if s.sparse() {
            String::new()
        } else if !cross.is_empty() {
            let per_layer = crate::stats::per_layer_params(g);
            let skipped: u128 = cross.iter().map(|b| per_layer[b as usize]).sum();
            format!(
                ", dense with an image; text alone skips the cross-attention layers' {}",
                short(skipped)
            )
        } else if towers {
            ", dense: every language-model parameter is active".into()
        } else {
            ", dense: every parameter is active".into()
        }
    ));
    line(format!(
        "  {:<26}{:>20}  ({})",
        "active without embedding",
        grouped(s.active_params_without_embedding as u128),
        short(s.active_params_without_embedding as u128)
    ));
    if s.aux_params > 0 {
        line(format!(
            "  {:<26}{:>20}  ({}), stored with the model, not in the total",
            "multi-token prediction",
            grouped(s.aux_params as u128),
            short(s.aux_params as u128)
        ));
    }
    line("  by component".into());
    for c in Component::ALL {
        let n = s.params_by_component.get(c.label()).copied().unwrap_or(0) as u128;
        // Only models with a recurrent mixer have the mixer's line, only those that attend the
        // attention's.
        if matches!(c, Component::Mixer | Component::Attention) && n == 0 {
            continue;
        }
        // A tied head may still hold what runs before its matrix (ModernBERT's transform).
        let note = match (c == Component::LmHead && spec.tied, n) {
            (true, 0) => "  tied to the embedding",
            (true, _) => "  its matrix tied to the embedding",
            (false, _) => "",
        };
        line(format!(
            "    {:<24}{:>20}  {:>5.1}%{note}",
            c.label(),
            grouped(n),
            pct(n, total)
        ));
    }
    if let Some(&n) = s.params_by_component.get(crate::stats::TOWERS) {
        line(format!(
            "    {:<24}{:>20}  {:>5.1}%  run by images and audio, not by a text token",
            crate::stats::TOWERS,
            grouped(n as u128),
            pct(n as u128, total)
        ));
        for t in &s.towers {
            let n = t
                .params
                .map_or("not counted".to_string(), |n| grouped(n as u128));
            let held = match t.tensors {
                0 => "of a kind anatomy does not know".to_string(),
                k => format!(
                    "{}, under {}",
                    crate::fmt::count(k as u128, "tensor"),
                    t.prefix
                ),
            };
            line(format!("      {:<22}{:>20}  {held}", t.what, n));
        }
    }
    for l in spec.plan_summary() {
        line(format!("  layers differ · {l}"));
    }
    line("  per layer".into());
    for run in &s.layer_runs {
        line(format!(
            "    {:<24}{:>20}  each ({}, {} in all)",
            format!(
                "layers {}",
                crate::layers::LayerSet::range(run.first_layer, run.last_layer + 1)
            ),
            grouped(run.params_per_layer as u128),
            crate::fmt::count(run.count as u128, "layer"),
            short(run.params_per_layer as u128 * run.count as u128)
        ));
    }
    let kv = &s.kv_cache;
    line(String::new());
    // Layers that reuse an earlier layer's keys and values (Gemma 4) cache none of their own.
    let (mut caching, sharing) = (0..spec.layers as usize)
        .filter(|&b| spec.attn_span(b as u64).is_some())
        .fold((0u128, 0u128), |(c, s), b| {
            if spec.attn_at(b).shares_kv {
                (c, s + 1)
            } else {
                (c + 1, s)
            }
        });
    let mut shared = if sharing > 0 && spec.draft.is_some() {
        format!("; {sharing} read their target's")
    } else if sharing > 0 {
        format!("; {sharing} more reuse theirs")
    } else {
        String::new()
    };
    // HRM: a layer caches once per visit of its stack.
    if spec.hierarchy().is_some() {
        let runs = spec.runs_over(&crate::layers::LayerSet::all(spec.layers));
        shared += &format!(", each once per visit of its stack: {runs} runs");
    }
    // BLT: the byte-level stacks cache per byte, the latent transformer per patch.
    let patches = match spec.bytes() {
        Some(bl) => {
            caching += bl.stacks().map(|(_, s)| s.layers as u128).sum::<u128>();
            shared += &format!(
                "; the latent transformer's {} per patch, counted here as one patch per byte, the most there can be",
                spec.layers
            );
            "; the latent transformer's at one patch per byte, the most there can be"
        }
        None => "",
    };
    // Dory: the looped layers cache once per pass, or only in the last.
    if let Some(l) = spec.looped() {
        let looped = l.layers().describe();
        shared += &if l.shared_cache {
            format!(
                "; {looped} run {} times but only the last pass caches",
                l.loops
            )
        } else {
            format!("; {looped} cache once per pass, {} times", l.loops)
        };
    }
    if caching + sharing == 0 {
        // A model of recurrent layers alone keeps no keys and values: its cache is its state.
        line("KV cache: none (no attention layer)".into());
    } else {
        line(format!(
            "KV cache ({} per token over {}{shared})",
            crate::fmt::count(kv.values_per_token as u128, "value"),
            crate::fmt::count(caching, "attention layer")
        ));
    }
    let per_token = format!("{} B", grouped(kv.bytes_per_token_bf16 as u128));
    if caching + sharing > 0 {
        line(format!(
            "  {:<26}{per_token:>20}  fp8 {} B",
            "per token, bf16",
            grouped(kv.bytes_per_token_fp8 as u128)
        ));
        line(format!(
            "  {:<26}{:>20}  fp8 {}",
            format!("at {} tokens, bf16", grouped(kv.context as u128)),
            bytes(kv.bytes_at_context_bf16 as u128),
            bytes(kv.bytes_at_context_fp8 as u128)
        ));
    }
    let st = &s.state;
    if st.values_per_sequence > 0 {
        let recurrent = spec.plan.iter().filter(|l| l.mixer.recurrent()).count() as u128;
        // ZAYA's attention layers carry their convolutions' inputs and a delayed value.
        let carrying = (0..spec.layers as usize)
            .filter(|&b| spec.plan[b].span().is_some() && spec.attn_at(b).cca.is_some())
            .count() as u128;
        let over = if carrying > 0 {
            crate::fmt::count(carrying, "attention layer")
                + " (their convolutions' last inputs and a delayed value)"
        } else if spec.out_conv.is_some() {
            // Inkling's residual convolutions on K, V and both sublayers' outputs.
            crate::fmt::count(spec.layers as u128, "layer")
                + " (the last inputs of their convolutions on K, V and each sublayer's output)"
        } else {
            crate::fmt::count(recurrent, "recurrent layer")
        };
        line(String::new());
        line(format!(
            "Recurrent state ({} per sequence over {over}, the same at any context)",
            crate::fmt::count(st.values_per_sequence as u128, "value"),
        ));
        line(format!(
            "  {:<26}{:>20}  bf16 {}",
            "per sequence, f32",
            bytes(st.bytes_f32 as u128),
            bytes(st.bytes_bf16 as u128)
        ));
    }
    let w = &s.weight_bytes;
    line(String::new());
    line("Weight memory".into());
    for (k, v) in [
        ("fp32", w.fp32),
        ("bf16", w.bf16),
        ("fp8", w.fp8),
        ("int4", w.int4),
    ] {
        line(format!("  {:<26}{:>20}", k, bytes(v as u128)));
    }
    if !s.stored.is_empty() {
        line(String::new());
        line("Stored as config.json's quantization_config declares (scales, zero points and indices counted)".into());
        for f in &s.stored {
            line(format!(
                "  {:<46}{:>12}  {} tensors, {:.2} bits a weight",
                f.format,
                bytes(f.bytes as u128),
                crate::fmt::grouped(f.tensors as u128),
                f.bits_per_weight
            ));
        }
    }
    let f = &s.flops;
    line(String::new());
    line(format!(
        "FLOPs per token at context {} (2 per multiply-add; matmuls and attention{}{patches})",
        context(f.context),
        if f.recurrent_per_token > 0 {
            ", convolutions and scans"
        } else {
            ""
        }
    ));
    line(format!(
        "  {:<26}{:>20}",
        "weights (matmuls)",
        flops(f.matmul_per_token as f64)
    ));
    if f.recurrent_per_token > 0 {
        line(format!(
            "  {:<26}{:>20}  the same at any context",
            "convolutions and scans",
            flops(f.recurrent_per_token as f64)
        ));
    }
    // A draft model reads no prompt: each step attends over its target's keys.
    if spec.draft.is_none() {
        line(format!(
            "  {:<26}{:>20}",
            "prefill, mean per token",
            flops(f.prefill_per_token as f64)
        ));
    }
    line(format!(
        "  {:<26}{:>20}",
        if spec.draft.is_some() {
            "draft step"
        } else {
            "decode, next token"
        },
        flops(f.decode_per_token as f64)
    ));
    if let Some(i) = &s.image {
        line(format!(
            "  {:<26}{:>20}  a {side}×{side} {} into {} tokens{}",
            "image, through the tower",
            flops(i.flops as f64),
            if i.per_tile { "tile" } else { "image" },
            i.tokens,
            match (i.step, i.per_tile) {
                (Some(step), _) => format!(
                    " (it reads each image at its own size: a token per {step}×{step} pixels)"
                ),
                (None, true) => " (its processor cuts an image into a grid of tiles, and where there are several, the whole image one more)".into(),
                (None, false) => String::new(),
            },
            side = i.side
        ));
    }
    out
}

fn pct(n: u128, total: u128) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 * 100.0 / total as f64
    }
}

pub fn manifest(entries: &[Entry]) -> String {
    let w = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    let mut formats: Vec<&str> = Vec::new();
    for e in entries {
        let dims: Vec<String> = e.shape.iter().map(u64::to_string).collect();
        let dims = match &e.packed {
            // bitsandbytes' JSON state: as long as its text.
            Some(p) if p.any_length => "[n]".to_string(),
            Some(_) | None => format!("[{}]", dims.join(", ")),
        };
        match &e.packed {
            // A packed tensor says what it holds; a scale is in the checkpoint's float type.
            Some(p) => {
                out.push_str(&format!(
                    "{:<w$}  {dims:<14}  {}\n",
                    e.name,
                    p.dtype.map_or("float", |d| d.name())
                ));
                if !formats.contains(&p.format.as_str()) {
                    formats.push(&p.format);
                }
            }
            None => out.push_str(&format!("{:<w$}  {dims}\n", e.name)),
        }
    }
    out.push_str(&format!(
        "{}, {}\n",
        crate::fmt::count(entries.len() as u128, "tensor"),
        crate::fmt::count(entries.iter().map(|e| e.params).sum(), "parameter")
    ));
    for f in formats {
        out.push_str(&format!("stored as {f}, as config.json declares\n"));
    }
    out
}

/// The manifest as one JSON object: `{"tensors": {name: shape}, "ignored": […]}`, serialized
/// straight from the entries (a million-tensor listing builds no JSON tree beside them).
pub fn manifest_json(g: &Graph, entries: &[Entry], origin: &crate::source::Origin) -> String {
    struct Tensors<'a>(&'a [Entry]);
    impl serde::Serialize for Tensors<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(Some(self.0.len()))?;
            for e in self.0 {
                m.serialize_entry(&e.name, &e.shape)?;
            }
            m.end()
        }
    }
    /// Each packed tensor's dtype and format, where `quantization_config` packs some.
    struct Packed<'a>(&'a [Entry]);
    impl serde::Serialize for Packed<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(None)?;
            for e in self.0 {
                if let Some(p) = &e.packed {
                    let mut v =
                        serde_json::json!({"dtype": p.dtype.map(|d| d.name()), "format": p.format});
                    if p.any_length {
                        // Its `[0]` among the shapes: a length its data sets.
                        v["any_length"] = true.into();
                    }
                    m.serialize_entry(&e.name, &v)?;
                }
            }
            m.end()
        }
    }
    #[derive(serde::Serialize)]
    struct Manifest<'a> {
        source: serde_json::Value,
        tensors: Tensors<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        packed: Option<Packed<'a>>,
        ignored: Vec<String>,
        not_read_by_transformers: Vec<String>,
    }
    let m = Manifest {
        source: origin.json(),
        tensors: Tensors(entries),
        packed: entries
            .iter()
            .any(|e| e.packed.is_some())
            .then_some(Packed(entries)),
        ignored: crate::spec::Ignored::pairs(&g.spec.ignored),
        not_read_by_transformers: crate::spec::Ignored::pairs(&g.spec.not_read),
    };
    serde_json::to_string_pretty(&m).expect("json") + "\n"
}

/// Seed 004's op glyphs: L lookup, N norm, P RoPE, H attention head, R router, C concat,
/// S activation, X expert combine, + add, × scale, @ matmul, → routing.
pub fn glyph(op: crate::graph::Op) -> &'static str {
    use crate::graph::Op::*;
    match op {
        Lookup => "L",
        Norm => "N",
        Rope => "P",
        Scores { .. } | Softmax | WeightedSum { .. } => "H",
        TopK => "R",
        Concat => "C",
        Activation => "S",
        Combine => "X",
        Add => "+",
        Scale => "×",
        MatMul => "@",
        Route => "→",
        Index { .. } => "I",
        Select { .. } => "K",
        Conv { .. } => "V",
        Scan { .. } => "Σ",
    }
}

/// What each glyph stands for, for the legend under `anatomy ops`.
const GLYPHS: &[(&str, &str)] = &[
    ("L", "lookup"),
    ("N", "norm"),
    ("P", "rotary position encoding"),
    ("H", "attention head (scores, softmax, weighted sum)"),
    ("R", "router top-k"),
    ("C", "concatenation"),
    ("S", "activation"),
    ("V", "causal convolution"),
    ("Σ", "recurrent scan (state update, read-out)"),
    ("X", "expert combine"),
    ("+", "add"),
    ("×", "scale"),
    ("@", "matrix multiply"),
    ("→", "routing (a tensor passed on unchanged)"),
    ("I", "sparse-attention index scores"),
    ("K", "top-k key selection"),
];

/// A size's name when exactly one of the model's sizes has that value.
pub(crate) fn dim_name(spec: &crate::spec::Spec, d: &crate::graph::Dim) -> String {
    let Some(n) = d.size() else {
        return match d.every() {
            Some(m) if m > 1 => format!("seq_len/{m}"),
            _ => "seq_len".into(),
        };
    };
    let a = &spec.attn;
    let mut known: Vec<(&str, u64)> = vec![
        ("hidden_size", spec.hidden),
        ("vocab_size", spec.vocab),
        ("d_head", a.head_dim),
        ("q_heads·d_head", a.heads * a.v_head_dim),
        ("inter_size", spec.mlp.intermediate),
    ];
    if let Some(m) = &spec.moe {
        known.push(("num_experts", m.experts));
        known.push(("expert_inter", m.expert_intermediate));
    }
    if let Some(d) = &spec.draft {
        known.push(("backbone", d.backbone));
        known.push(("2·backbone", 2 * d.backbone));
        if let Some(c) = d.centroids {
            known.push(("centroids", c.count));
            known.push(("kept_tokens", c.kept(spec.vocab)));
        }
    }
    if let Some(m) = &a.mla {
        known.push(("kv_lora_rank", m.kv_lora_rank));
        known.push(("d_rope", m.qk_rope_head_dim));
        known.push(("d_nope", m.qk_nope_head_dim));
    }
    let hits: Vec<&str> = known
        .iter()
        .filter(|(_, v)| *v == n)
        .map(|(k, _)| *k)
        .collect();
    match (n, hits.as_slice()) {
        (1, _) => "1".into(),
        (_, [one]) => format!("{one}={n}"),
        _ => n.to_string(),
    }
}

/// `anatomy ops`: every op of the graph with its glyph, the scopes it repeats in, and its output's shape.
pub fn ops(g: &Graph) -> String {
    let mut out = format!(
        "{:>3}  {}  {:<36} {:<28} {}\n",
        "#", "op", "step", "repeated in", "output"
    );
    for v in g.steps() {
        let s = v.step;
        let t = g.tensor(s.output);
        let mut scopes: Vec<String> = v
            .scopes
            .iter()
            .filter(|sc| sc.repeat > 1)
            .map(|sc| {
                format!(
                    "{}×{}",
                    sc.title.split_whitespace().next().unwrap_or(""),
                    sc.active
                        .map_or(sc.repeat.to_string(), |k| format!("{}/{}", k, sc.repeat))
                )
            })
            .collect();
        if let Some(l) = v.layers().filter(|l| {
            l.len() != g.spec.layers
                && v.scopes
                    .iter()
                    .any(|s| s.kind == crate::graph::ScopeKind::Block)
        }) {
            scopes.push(format!("(layers {l})"));
        }
        let dims: Vec<String> = t.dims.iter().rev().map(|d| dim_name(&g.spec, d)).collect();
        out += &format!(
            "{:>3}  {:<2}  {:<36} {:<28} {} [{}]\n",
            s.number,
            glyph(s.op),
            s.title,
            scopes.join(" "),
            t.name,
            dims.join(", ")
        );
    }
    let used: std::collections::BTreeSet<&str> =
        g.steps().into_iter().map(|v| glyph(v.step.op)).collect();
    let legend: Vec<String> = GLYPHS
        .iter()
        .filter(|(g, _)| used.contains(g))
        .map(|(g, what)| format!("{g} {what}"))
        .collect();
    out += &format!("\nop: {}\n", legend.join(" · "));
    out
}

/// `anatomy diff`: the summary, the differing facts, the steps side by side and the figures.
pub fn diff(d: &crate::diff::Diff) -> String {
    use crate::diff::{Kind, StepStatus};
    let mut out = format!(
        "{} ({}) → {} ({})\n\n{}\n",
        d.a, d.family_a, d.b, d.family_b, d.summary
    );
    if !d.changes.is_empty() {
        let w = d
            .changes
            .iter()
            .map(|c| c.label.chars().count())
            .max()
            .unwrap_or(0)
            .max(11);
        let va = d
            .changes
            .iter()
            .map(|c| c.a.as_deref().unwrap_or("-").chars().count())
            .chain([d.a.chars().count()])
            .max()
            .unwrap_or(0);
        out += &format!("\n  {:<9}  {:<w$}  {:<va$}  {}\n", "", "", d.a, d.b);
        for c in &d.changes {
            let kind = match c.kind {
                Kind::Mechanism => "mechanism",
                Kind::Size => "size",
                Kind::Setting => "setting",
            };
            out += &format!(
                "  {kind:<9}  {:<w$}  {:<va$}  {}\n",
                c.label,
                c.a.as_deref().unwrap_or("-"),
                c.b.as_deref().unwrap_or("-")
            );
        }
    }
    let title = |s: &Option<crate::diff::StepSide>| {
        s.as_ref()
            .map_or(String::new(), |s| format!("{:>3} {}", s.number, s.title))
    };
    let wa = d
        .steps
        .iter()
        .map(|p| title(&p.a).chars().count())
        .max()
        .unwrap_or(0)
        .max(d.a.chars().count() + 4);
    let wb = d
        .steps
        .iter()
        .map(|p| title(&p.b).chars().count())
        .max()
        .unwrap_or(0)
        .max(d.b.chars().count() + 4);
    out += &format!(
        "\nsteps  (= same · * other operation · # other dims · - only in {} · + only in {})\n",
        d.a, d.b
    );
    let (ha, hb) = (format!("    {}", d.a), format!("    {}", d.b));
    out += format!("    {ha:<wa$}  {hb}").trim_end();
    out.push('\n');
    for p in &d.steps {
        let (mark, note) = match (p.status, &p.a, &p.b) {
            (StepStatus::Same, _, _) => ("=", String::new()),
            (StepStatus::Mechanism, Some(a), Some(b)) => {
                ("*", format!("{}  →  {}", a.equation, b.equation))
            }
            (StepStatus::Dims, Some(a), Some(b)) => (
                "#",
                if a.output != b.output {
                    format!("[{}] → [{}]", a.output.join(", "), b.output.join(", "))
                } else {
                    format!("{}  →  {}", a.equation, b.equation)
                },
            ),
            (StepStatus::OnlyA, _, _) => ("-", String::new()),
            (StepStatus::OnlyB, _, _) => ("+", String::new()),
            _ => ("?", String::new()),
        };
        out += format!(
            "  {mark} {:<wa$}  {:<wb$}  {note}",
            title(&p.a),
            title(&p.b)
        )
        .trim_end();
        out.push('\n');
    }
    let head = format!("figures (FLOPs at {} tokens)", grouped(d.context as u128));
    let fw = d
        .figures
        .iter()
        .map(|f| f.name.chars().count() + 2)
        .chain([head.chars().count()])
        .max()
        .unwrap_or(0);
    out += &format!(
        "\n{head:<fw$}{:>14}{:>14}{:>10}\n",
        d.a.chars().take(13).collect::<String>(),
        d.b.chars().take(13).collect::<String>(),
        "B/A"
    );
    let fw = fw - 2;
    for f in &d.figures {
        let ratio = if f.a == 0 {
            if f.b == 0 {
                "=".into()
            } else {
                "new".into()
            }
        } else {
            format!("{:.2}×", f.b as f64 / f.a as f64)
        };
        out += &format!(
            "  {:<fw$}{:>14}{:>14}{:>10}\n",
            f.name,
            short(f.a as u128),
            short(f.b as u128),
            ratio
        );
    }
    out
}

/// The keys transformers does not read, as one list for a line of text.
pub fn not_read(spec: &crate::spec::Spec) -> String {
    crate::spec::Ignored::pairs(&spec.not_read).join(", ")
}
