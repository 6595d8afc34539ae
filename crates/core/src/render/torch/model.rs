//! The model around the layers: the embedding, the head, and multi-token prediction.

use super::*;

pub(super) fn embedding_note(spec: &Spec, n: &Names) -> String {
    let (v, d, w) = (spec.vocab, spec.hidden, spec.embed_width());
    let embed = n.attr(Role::Embed);
    let mut s = format!("# In the model (see the whole module): the token embedding, one row per id.\nembed_tokens = nn.Embedding({v}, {w})  # stored as {}\n", n.path(Role::Embed));
    if spec.embedding.projected.is_some() {
        s += &format!(
            "project_in = nn.Linear({w}, {d}, bias=False)  # the table's width to the hidden size, stored as {}\n",
            n.path(Role::EmbedProjIn)
        );
    }
    if let Some(p) = spec.embedding.learned_positions {
        s += &format!(
            "positions = nn.Embedding({p}, {d})  # learned absolute positions, stored as {}\n",
            n.path(Role::PosEmbed)
        );
    }
    if let Some(p) = spec.prompt {
        s += &format!(
            "segments = nn.Embedding({}, {d})  # one row per segment, stored as {}\n",
            p.segments,
            n.path(Role::SegmentEmbed)
        );
        s += &format!(
            "\n\ndef embed(input_ids):  # [B, T] int64 -> [B, {len} + T, {d}]\n    prompt = torch.arange({first}, {first} + {len}).expand(input_ids.shape[0], {len})  # the learned prompt's rows\n    input_ids = torch.cat([prompt, input_ids], 1)\n    segment = torch.where(torch.arange(input_ids.shape[1]) < {len}, {ps}, {ts})  # the prompt's segment, then the text's\n    x = {embed}(input_ids) + segments(segment)\n",
            len = p.length,
            first = p.row(spec.out_vocab(), 0),
            ps = crate::spec::PROMPT_SEGMENT,
            ts = crate::spec::TEXT_SEGMENT,
        );
    } else {
        s += &format!(
            "\n\ndef embed(input_ids):  # [B, T] int64 -> [B, T, {d}]\n    x = {embed}(input_ids)\n"
        );
    }
    if spec.embedding.projected.is_some() {
        s += &format!("    x = project_in(x)  # [B, T, {w}] -> [B, T, {d}]\n");
    }
    let norm = format!(
        "embed_norm(x)  # a norm right after the lookup, stored as {}",
        n.path(Role::EmbedNorm)
    );
    for line in embed_lines(spec, "positions", "input_ids.shape[1]", &norm) {
        s += &format!("    {line}\n");
    }
    s + "    return x"
}

/// What follows the token lookup, as lines of Python over `x`, in transformers' order: the
/// token embeddings scaled, then positions added (learned, from the module `positions`, or
/// sinusoids), then the embedding norm (`norm`, an expression over x).
pub(super) fn embed_lines(spec: &Spec, positions: &str, len: &str, norm: &str) -> Vec<String> {
    let d = spec.hidden;
    let mut out = Vec::new();
    if spec.embedding.scale_by_sqrt_hidden {
        out.push(format!(
            "x = x * torch.tensor({d} ** 0.5, dtype=x.dtype)  # scaled by sqrt(d_model)"
        ));
    }
    if spec.embedding.multiplier != 1.0 {
        out.push(format!(
            "x = x * {}  # embedding multiplier",
            spec.embedding.multiplier
        ));
    }
    let offset = match spec.embedding.position_offset {
        0 => String::new(),
        o => format!(" + {o}"),
    };
    if spec.embedding.learned_positions.is_some() {
        out.push(format!(
            "x = x + {positions}(torch.arange({len}, device=x.device){offset})"
        ));
    }
    let from = if offset.is_empty() {
        String::new()
    } else {
        format!(", read from row p{offset}")
    };
    match spec.position {
        Position::Sinusoidal(crate::spec::Sinusoids::Fairseq) => {
            let den = (d / 2).max(2) - 1;
            out.push(format!("# fixed sinusoids: row r = [sin(r w_i) ..., cos(r w_i) ...], w_i = 10000^(-i / {den}){from}"));
            out.push(format!(
                "freqs = torch.exp(torch.arange({}, device=x.device).float() * (-math.log(10000) / {den}))",
                d / 2
            ));
            out.push(format!(
                "ang = (torch.arange({len}, device=x.device).float(){offset})[:, None] * freqs[None, :]"
            ));
            out.push(format!(
                "x = x + F.pad(torch.cat([ang.sin(), ang.cos()], -1), (0, {})).to(x.dtype)",
                d % 2
            ));
        }
        Position::Sinusoidal(crate::spec::Sinusoids::Ctrl) => {
            out.push(format!("# CTRL's fixed sinusoids: row r = [sin(r w_i) ..., cos(r w_i) ...], w_i = 10000^(-2i / {d}){from}"));
            out.push(format!(
                "freqs = 10000.0 ** (-2 * torch.arange({}, device=x.device).float() / {d})",
                d.div_ceil(2)
            ));
            out.push(format!(
                "ang = (torch.arange({len}, device=x.device).float(){offset})[:, None] * freqs[None, :]"
            ));
            out.push(format!(
                "x = x + torch.cat([ang.sin(), ang[:, :{}].cos()], -1).to(x.dtype)",
                d / 2
            ));
        }
        // Learned positions are added above; RoPE, ALiBi and bucketed biases act inside
        // attention.
        Position::Learned
        | Position::Rope(_)
        | Position::Alibi(_)
        | Position::None
        | Position::Buckets(_) => {}
    }
    if spec.embedding.norm {
        out.push(format!("x = {norm}"));
    }
    out
}

pub(super) fn model(spec: &Spec, n: &Names) -> String {
    let (v, d) = (spec.vocab, spec.hidden);
    // The decoder's own module (`model`, `transformer`) and the attributes in it.
    // (`model.decoder` for OPT, whose module is one level further down).
    // The decoder is the module holding the layers; its tensors are named below it
    // (ModernBERT's `embeddings.tok_embeddings`, one module further down).
    // Layers at the checkpoint's root (Ergo's `layers.{b}`, beside `tok_embeddings`): the model
    // is the decoder, its head beside them.
    let root = !n.layers.contains('.');
    let (mut outer, mut layers) = n
        .layers
        .rsplit_once('.')
        .unwrap_or(("model", n.layers.as_str()));
    // The embedding beside the layers' module rather than in it (GIT's `git.embeddings` beside
    // `git.encoder.layer`): the decoder is the module holding both.
    let embed_path = n.path(Role::Embed);
    if !embed_path.starts_with(&format!("{outer}.")) {
        if let Some((common, _)) = embed_path.split_once('.').filter(|(c, _)| {
            n.layers.starts_with(&format!("{c}.")) && n.layers.matches('.').count() > 1
        }) {
            outer = common;
            layers = &n.layers[common.len() + 1..];
        }
    }
    let inside = |role: Role| -> String {
        let p = n.path(role);
        p.strip_prefix(&format!("{outer}.")).map_or_else(
            || p.rsplit('.').next().unwrap_or(&p).to_string(),
            str::to_string,
        )
    };
    let embed = inside(Role::Embed);
    let final_norm = inside(Role::FinalNorm);
    let outer_init = match outer.rsplit_once('.') {
        _ if root => "        super().__init__()".to_string(),
        Some((holder, _)) => {
            format!("        self.{holder} = nn.Module()\n        self.{outer} = Decoder()")
        }
        None => format!("        self.{outer} = Decoder()"),
    };
    let mut init = match embed.rsplit_once('.') {
        Some((holder, _)) => format!("        self.{holder} = nn.Module()\n"),
        None => String::new(),
    };
    let width = spec.embed_width();
    init += &format!("        self.{embed} = nn.Embedding({v}, {width})\n");
    // OPT-350M's table of its own width: projected in after the lookup, out after the last layer.
    let projections = spec
        .embedding
        .projected
        .map(|_| (inside(Role::EmbedProjIn), inside(Role::EmbedProjOut)));
    if let Some((pin, pout)) = &projections {
        init += &format!("        self.{pin} = nn.Linear({width}, {d}, bias=False)  # the table's width to the hidden size\n        self.{pout} = nn.Linear({d}, {width}, bias=False)  # and back, for the head\n");
    }
    // The sequence length, where positions, a prompt or a position bias read it.
    let reads_length = spec.prompt.is_some()
        || spec.embedding.learned_positions.is_some()
        || match spec.position {
            Position::Rope(_) | Position::Sinusoidal(_) | Position::Buckets(_) => true,
            Position::Learned | Position::Alibi(_) | Position::None => false,
        };
    let mut fwd = String::new();
    if reads_length {
        fwd += "        T = input_ids.shape[1]\n";
    }
    if let Some(p) = spec.prompt {
        let seg = inside(Role::SegmentEmbed);
        init += &format!(
            "        self.{seg} = nn.Embedding({}, {d})  # one row per segment\n",
            p.segments
        );
        fwd += &format!(
            "        P = {len}  # the learned prompt's tokens, put before the text\n        prompt = torch.arange({first}, {first} + P, device=input_ids.device).expand(input_ids.shape[0], P)  # their rows of the embedding\n        input_ids = torch.cat([prompt, input_ids], 1)  # [B, P + T]\n        T = T + P\n        segment = torch.where(torch.arange(T, device=input_ids.device) < P, {ps}, {ts})  # each position's segment\n",
            len = p.length,
            first = p.row(spec.out_vocab(), 0),
            ps = crate::spec::PROMPT_SEGMENT,
            ts = crate::spec::TEXT_SEGMENT,
        );
    }
    fwd += &format!("        x = self.{embed}(input_ids)  # [B, T, {width}]\n");
    if let Some((pin, _)) = &projections {
        fwd += &format!("        x = self.{pin}(x)  # [B, T, {d}]\n");
    }
    if spec.prompt.is_some() {
        fwd += &format!(
            "        x = x + self.{}(segment)  # + the embedding of each position's segment\n",
            inside(Role::SegmentEmbed)
        );
    }
    let mut pos_attr = String::new();
    if let Some(p) = spec.embedding.learned_positions {
        let pos = inside(Role::PosEmbed);
        init +=
            &format!("        self.{pos} = nn.Embedding({p}, {d})  # learned absolute positions\n");
        pos_attr = format!("self.{pos}");
    }
    let mut norm = String::new();
    if spec.embedding.norm
        && n.path(Role::EmbedNorm)
            .starts_with(&format!("{}.0.", n.layers))
    {
        // Held by layer 0 (RWKV's `pre_ln`).
        let attr = n.path(Role::EmbedNorm);
        let attr = attr.rsplit('.').next().unwrap_or(&attr);
        norm = format!("self.{layers}[0].{attr}(x)");
    } else if spec.embedding.norm {
        let attr = inside(Role::EmbedNorm);
        init += &format!("        self.{attr} = Norm({d})  # right after the lookup\n");
        norm = format!("self.{attr}(x)");
    }
    for line in embed_lines(spec, &pos_attr, "T", &norm) {
        fwd += &format!("        {line}\n");
    }
    if spec.embedding.affine {
        let (s, sh) = (inside(Role::EmbedScale), inside(Role::EmbedShift));
        init += &format!("        self.{s} = nn.Parameter(torch.ones({d}))\n        self.{sh} = nn.Parameter(torch.zeros({d}))\n");
        fwd += &format!(
            "        x = (x + self.{sh}) * self.{s}  # shifted and scaled by learned vectors\n"
        );
    }
    if spec.hyper().is_some() || spec.gated_streams().is_some() {
        fwd += &format!("        x = x.unsqueeze(-2).expand(-1, -1, N, -1)  # [B, T, N, {d}]: every stream starts as the embedding\n");
    }
    // Gemma 4's per-layer embeddings: a table of their own and the embeddings projected.
    if let Some(p) = spec.per_layer_input {
        let (l, w) = (spec.layers, p.width);
        let (table, proj, pnorm) = (
            inside(Role::PleEmbed),
            inside(Role::PleProj),
            inside(Role::PleProjNorm),
        );
        init += &format!(
            "        self.{table} = nn.Embedding({}, {l} * {w})  # per-layer embeddings\n        self.{proj} = nn.Linear({d}, {l} * {w}, bias=False)\n        self.{pnorm} = Norm({w})\n",
            p.vocab
        );
        fwd += &format!("        ple = self.{table}(input_ids).view(*input_ids.shape, {l}, {w}) * {w} ** 0.5  # [B, T, {l}, {w}]\n        proj = self.{proj}(x).view(*x.shape[:-1], {l}, {w}) * {d} ** -0.5\n        ple = (self.{pnorm}(proj) + ple) * 2 ** -0.5  # each layer's input of its own\n");
    }
    let make = if spec
        .plan
        .iter()
        .any(|l| l.ffn == crate::spec::Ffn::Shortcut)
    {
        "DecoderLayer(*p) for p in PLAN[::2]"
    } else if own_indexers(spec).is_some() {
        "DecoderLayer(*p, i in OWN_INDEXER) for i, p in enumerate(PLAN)"
    } else if layer_needs_index(spec) {
        "DecoderLayer(*p, i) for i, p in enumerate(PLAN)"
    } else if spec.plan.iter().any(|l| !l.mixer.runs_on_text()) {
        "CrossAttentionLayer() if p[0][0] == \"cross\" else DecoderLayer(*p) for p in PLAN"
    } else {
        "DecoderLayer(*p) for p in PLAN"
    };
    if let Some((holder, _)) = layers.rsplit_once('.') {
        init += &format!("        self.{holder} = nn.Module()\n");
    }
    init += &format!("        self.{layers} = nn.ModuleList({make})\n");
    if !spec.norm.place.on_stream() && spec.gated_streams().is_none() {
        init += &format!("        self.{final_norm} = Norm({d})\n");
    }
    if let Position::Rope(r) = &spec.position {
        fwd += "        full = rope_cos_sin(rope_frequencies, T, x.dtype)\n";
        if r.sliding.is_some() {
            fwd += "        sliding = rope_cos_sin(sliding_rope_frequencies, T, x.dtype)\n";
        }
        // A hybrid's layer keeps its span itself: its recurrent layers have no attention.
        let holder = if spec.plan.iter().any(|l| l.mixer.recurrent()) {
            "layer".to_string()
        } else {
            format!("layer.{}", attn_sublayer(spec, n))
        };
        let pick = if r.sliding.is_some() {
            format!("sliding if {holder}.span[0] == \"sliding\" else full")
        } else {
            "full".to_string()
        };
        fwd += &if spec.per_layer_input.is_some() {
            format!("        for i, layer in enumerate(self.{layers}):\n            x = layer(x, {pick}, ple[:, :, i])\n")
        } else if spec.ngram_ple.is_some() {
            format!("        for layer in self.{layers}:\n            x = layer(x, {pick}, input_ids)\n")
        } else {
            format!("        for layer in self.{layers}:\n            x = layer(x, {pick})\n")
        };
    } else if let Position::Buckets(b) = spec.position {
        let table = inside(Role::PositionBias);
        init += &holders_of(std::slice::from_ref(&table));
        init += &format!(
            "        self.{table} = nn.Parameter(torch.zeros({}, {}))  # [rows, heads]: one bias per bucket (and pair of segments) and head\n",
            spec.bias_rows(b),
            spec.attn.heads
        );
        let prompt = if spec.prompt.is_some() { "P" } else { "0" };
        fwd += &format!("        bias = position_bias(self.{table}, T, {prompt})  # [1, heads, T, T], for every layer\n        for layer in self.{layers}:\n            x = layer(x, bias)\n");
    } else {
        fwd += &format!("        for layer in self.{layers}:\n            x = layer(x, None)\n");
    }
    if spec.prompt.is_some() {
        fwd += "        x = x[:, P:]  # the prompt's positions dropped\n";
    }
    // Dory: the looped layers run several times, each pass restarting from the input layers'
    // normed output.
    if let (Some(l), Position::Rope(r)) = (spec.looped(), &spec.position) {
        let pick = if r.sliding.is_some() {
            format!(
                "sliding if layer.{}.span[0] == \"sliding\" else full",
                attn_sublayer(spec, n)
            )
        } else {
            "full".to_string()
        };
        let plain =
            format!("        for layer in self.{layers}:\n            x = layer(x, {pick})\n");
        let (a, b) = (l.input, l.input + l.recurrent);
        let looped = format!(
            "        for layer in self.{layers}[:{a}]:  # the input layers\n            x = layer(x, {pick})\n        x0 = self.{final_norm}(x)  # their output, normed: every pass restarts from it\n        for _ in range({}):  # the looped layers, {} passes\n            x = self.{final_norm}(x) + x0\n            for layer in self.{layers}[{a}:{b}]:\n                x = layer(x, {pick})\n        for layer in self.{layers}[{b}:]:  # the output layers\n            x = layer(x, {pick})\n",
            l.loops, l.loops
        );
        assert!(
            fwd.contains(&plain),
            "a looped model's layers run in one plain loop"
        );
        fwd = fwd.replace(&plain, &looped);
    }
    if spec.hyper().is_some() {
        let path = inside(Role::HcHeadFn);
        let (module, prefix) = hyper::split(&path);
        init += &holders_of(std::slice::from_ref(&module));
        init += &format!("        self.{module} = StreamMix(\"{prefix}\", head=True)  # the streams weighed into one\n");
        fwd += &format!("        x, _ = self.{module}(x)  # [B, T, {d}]\n");
    }
    if spec.gated_streams().is_some() {
        let path = inside(Role::GsHeadNorm);
        let module = path
            .rsplit_once('.')
            .map_or(path.clone(), |(m, _)| m.to_string());
        init += &holders_of(std::slice::from_ref(&module));
        init +=
            &format!("        self.{module} = GatedMix(head=True)  # the streams gated into one\n");
        fwd += &format!("        x, _ = self.{module}(x)  # [B, T, {d}]\n");
    }
    let (z, mut notes) = if spec.gated_streams().is_some() {
        (
            "x".to_string(),
            vec!["no final norm: the head's mix is normed"],
        )
    } else if spec.norm.place.on_stream() {
        (
            "x".to_string(),
            vec!["no final norm: the last layer's ends the stream"],
        )
    } else {
        (format!("self.{final_norm}(x)"), vec![])
    };
    let z = match &projections {
        Some((_, pout)) => {
            notes.push("projected to the table's width");
            format!("self.{pout}({z})")
        }
        None => z,
    };
    fwd += &match notes.is_empty() {
        true => format!("        return {z}\n"),
        false => format!("        return {z}  # {}\n", notes.join("; ")),
    };
    let lm_head = n.path(Role::LmHead);
    let table = if root {
        format!("self.{embed}")
    } else {
        format!("self.{outer}.{embed}")
    };
    let head = match (spec.tied, spec.head_bias) {
        (true, false) => format!(
            "        logits = h @ {table}.weight.T  # tied: the embedding matrix\n"
        ),
        (true, true) => format!(
            "        logits = h @ {table}.weight.T + self.{lm_head}.bias  # tied: the embedding matrix, and a bias of its own\n"
        ),
        (false, _) => format!("        logits = self.{lm_head}(h)\n"),
    };
    let ov = spec.out_vocab();
    // ModernBERT's prediction head: dense, activation, norm, before the LM head.
    let (transform_init, transform) = match spec.head_transform {
        Some(t) => {
            let (dense, norm) = (n.path(Role::HeadDense), n.path(Role::HeadNorm));
            let holder = dense.rsplit_once('.').map_or(String::new(), |(h, _)| {
                format!("        self.{h} = nn.Module()\n")
            });
            (
                format!(
                    "{holder}        self.{dense} = nn.Linear({d}, {d}, bias={})\n        self.{norm} = Norm({d})\n",
                    py_bool(t.bias)
                ),
                format!(
                    "        h = self.{norm}({})  # the head's own transform\n",
                    act_expr(t.act, &format!("self.{dense}(h)"))
                ),
            )
        }
        None => (String::new(), String::new()),
    };
    let head_init = transform_init
        + &if spec.tied && spec.head_bias {
            format!("        self.{lm_head} = nn.Module()\n        self.{lm_head}.bias = nn.Parameter(torch.zeros({ov}))\n")
        } else if spec.tied {
            String::new()
        } else {
            format!(
                "        self.{lm_head} = nn.Linear({width}, {ov}, bias={})\n",
                py_bool(spec.head_bias)
            )
        };
    let head = transform + &head;
    let mut head_init = head_init;
    let mut cap = String::new();
    if let Some(g) = spec.ngpt {
        let s = n.path(Role::NgptLogitScale);
        if spec.tied && !spec.head_bias {
            // A tied head still holds its logit scale.
            head_init += &format!("        self.{lm_head} = nn.Module()\n");
        }
        head_init += &format!(
            "        self.{s} = nn.Parameter(torch.full(({ov},), {}))  # a learned scale per vocabulary entry\n",
            fmt_f(g.init)
        );
        cap += &format!(
            "        logits = logits.float() * (self.{s}.float() * (1 / {}))\n",
            fmt_f(g.init)
        );
    }
    if spec.logits_mult != 1.0 {
        cap += &format!(
            "        logits = logits * {}  # logit multiplier\n",
            spec.logits_mult
        );
    }
    if let Some(c) = spec.final_softcap {
        cap += &format!("        logits = {c} * torch.tanh(logits / {c})  # final softcap\n");
    }
    if let Some(kept) = spec.logits_kept {
        cap += &format!("        logits = logits[..., :{kept}]  # the rows that pad the head past the real vocabulary dropped\n");
    }
    // An image model whose language model has no module of its own (Qwen VL's, LightOnOCR's)
    // subclasses it, keeping its names.
    let subclassed = spec.image.is_some() && !matches!(spec.hf_wrap, HfWrap::Prefix(_));
    let mut out = fill(
        r#"class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
${init}
    def forward(self, input_ids):  # [B, T] int64 -> [B, T, ${width}] ${end}
${fwd}

class ${lm}(${base}):
    def __init__(self):
${outer_init}
${head_init}
    def forward(self, input_ids):  # [B, T] int64 -> logits [B, T, ${v}]
        h = ${decode}(input_ids)
${head}${cap}        return logits"#,
        &[
            ("init", init),
            ("d", d.to_string()),
            ("width", width.to_string()),
            ("v", v.to_string()),
            ("fwd", fwd),
            (
                "end",
                if spec.gated_streams().is_some() {
                    "from the streams' last mix"
                } else if spec.norm.place.on_stream() {
                    "after the last layer's norm"
                } else {
                    "after the final norm"
                }
                .to_string()
                    + if projections.is_some() {
                        ", projected to the table's width"
                    } else {
                        ""
                    },
            ),
            ("base", if root { "Decoder" } else { "nn.Module" }.into()),
            (
                "decode",
                if root {
                    "super().forward".into()
                } else {
                    format!("self.{outer}")
                },
            ),
            (
                "outer_init",
                if root {
                    outer_init
                } else {
                    format!("        super().__init__()\n{outer_init}")
                },
            ),
            ("head_init", head_init),
            ("head", head),
            ("cap", cap),
            (
                "lm",
                // The Model wraps it: under a prefix, or subclassed with the image's tower.
                if matches!(spec.hf_wrap, HfWrap::Prefix(_)) || subclassed {
                    "LanguageModel".into()
                } else {
                    "Model".into()
                },
            ),
        ],
    );
    if let (HfWrap::Prefix(module), Some(image)) = (spec.hf_wrap, &spec.image) {
        out += &super::image::model(spec, n, module, image);
        return out;
    }
    if let (Some(image), true) = (&spec.image, subclassed) {
        // No module: the Model is the language model itself, its tower added.
        out += &super::image::model(spec, n, "", image);
        return out;
    }
    if let HfWrap::Prefix(module) = spec.hf_wrap {
        out += &fill(
            r#"


class Model(nn.Module):
    """The language model of a multimodal checkpoint, under its prefix."""

    def __init__(self):
        super().__init__()
        self.${prefix} = LanguageModel()

    def forward(self, input_ids):
        return self.${prefix}(input_ids)"#,
            &[("prefix", module.to_string())],
        );
    }
    out
}

/// Where the module holds a multimodal checkpoint's language model alone (its towers not run),
/// the function that drops the towers' tensors from the checkpoint before it loads.
pub(super) fn language_model_only(spec: &Spec) -> Option<String> {
    if spec.towers.is_empty() || spec.image.is_some() {
        return None;
    }
    let parts: Vec<String> = spec
        .towers
        .iter()
        .map(|p| format!("{:?}", p.prefix))
        .collect();
    Some(fill(
        r#"def language_model_only(state_dict):
    """The checkpoint without its parts this module does not hold (${parts})."""
    return {k: v for k, v in state_dict.items() if not k.startswith((${parts},))}"#,
        &[("parts", parts.join(", "))],
    ))
}

pub(super) fn mtp(spec: &Spec) -> String {
    let d = spec.hidden;
    fill(
        r#"class MultiTokenPrediction(nn.Module):
    """Predicts the token after next from the last hidden state and the next token's embedding.
    Not used in ordinary decoding; stored in the checkpoint as layer ${layer}."""

    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(${v}, ${d})  # a stored copy of the embedding
        self.enorm, self.hnorm = Norm(${d}), Norm(${d})
        self.eh_proj = nn.Linear(2 * ${d}, ${d}, bias=False)
        self.block = DecoderLayer(("full", 0), True, True)
        self.shared_head_norm = Norm(${d})
        self.shared_head = nn.Linear(${d}, ${v}, bias=False)  # a stored copy of the LM head

    def forward(self, hidden, next_ids, rope):  # hidden: [B, T, ${d}] before the final norm
        e = self.enorm(self.embed_tokens(next_ids))
        x = self.eh_proj(torch.cat([e, self.hnorm(hidden)], dim=-1))
        return self.shared_head(self.shared_head_norm(self.block(x, rope)))"#,
        &[
            ("layer", spec.layers.to_string()),
            ("v", spec.vocab.to_string()),
            ("d", d.to_string()),
        ],
    )
}
