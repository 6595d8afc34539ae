//! The wrappers anatomy runs on an image: their towers' classes (real Python, `llava.py`) and a
//! Model holding the language model and the towers under their checkpoint names, whose forward
//! puts the image's features in the placeholders' places.

use super::*;
use crate::spec::{
    AyaVision, DeepseekVlVision, GitVision, Idefics3Vision, ImageEncoder, ImageInput,
    InternVlVision, Llama4Vision, LlavaOnevision, PixtralVision, Qwen2Vision, Qwen3Vision, Reading,
    VisionTower,
};

/// The towers' classes: each encoder's fragments, those it builds on first.
pub(super) fn classes(image: &ImageInput) -> String {
    const LLAVA: &str = include_str!("llava.py");
    const SIGLIP: &str = include_str!("siglip.py");
    const QWEN2_VL: &str = include_str!("qwen2_vl.py");
    let fragments: &[&str] = match image.encoder {
        ImageEncoder::Llava(_) => &[LLAVA],
        ImageEncoder::LlavaNext(_) => &[LLAVA, include_str!("llava_next.py")],
        ImageEncoder::LlavaOnevision(_) => &[LLAVA, SIGLIP, include_str!("llava_next.py")],
        // SigLIP's layers are CLIP's.
        ImageEncoder::Gemma3(_) => &[LLAVA, SIGLIP, include_str!("gemma3.py")],
        ImageEncoder::PaliGemma(_) => &[LLAVA, SIGLIP, include_str!("paligemma.py")],
        ImageEncoder::Aya(_) => &[LLAVA, SIGLIP, include_str!("aya_vision.py")],
        ImageEncoder::Qwen2Vl(_) => &[QWEN2_VL],
        ImageEncoder::Qwen3Vl(_) => &[QWEN2_VL, include_str!("qwen3_vl.py")],
        ImageEncoder::Qwen25Vl(_) => &[QWEN2_VL, include_str!("qwen2_5_vl.py")],
        ImageEncoder::Llama4(_) => &[include_str!("llama4.py")],
        ImageEncoder::Pixtral(_) => &[include_str!("pixtral.py")],
        // CLIP's MLP is InternViT's.
        ImageEncoder::InternVl(_) => &[LLAVA, include_str!("internvl.py")],
        ImageEncoder::Git(_) => &[LLAVA, include_str!("git.py")],
        ImageEncoder::DeepseekVl(_) => &[LLAVA, SIGLIP, include_str!("deepseek_vl.py")],
        ImageEncoder::Idefics3(_) => &[LLAVA, SIGLIP, include_str!("idefics3.py")],
    };
    (fragments.iter())
        .map(|f| f.trim_end())
        .collect::<Vec<_>>()
        .join("\n\n\n")
}

/// The checkpoint's Model: the language model under `module` (a Qwen VL's subclasses it, under
/// no module), the towers beside it.
pub(super) fn model(spec: &Spec, n: &Names, module: &str, image: &ImageInput) -> String {
    let (l, next) = match &image.encoder {
        ImageEncoder::Llava(l) => (l, None),
        ImageEncoder::LlavaNext(x) => (&x.base, Some(x)),
        ImageEncoder::Gemma3(g) => {
            let projector = Projector {
                family: "Gemma 3",
                name: &g.projector,
                class: format!(
                    "Gemma3Projector({}, {}, {}, {}, {})",
                    g.tower.hidden,
                    spec.hidden,
                    g.tower.grid(),
                    g.pool(),
                    fmt_f(g.tower.eps)
                ),
                tokens: g.tokens,
            };
            return siglip(spec, (n, module), image, (&g.tower, g.head), projector);
        }
        ImageEncoder::PaliGemma(p) => {
            let projector = Projector {
                family: "PaliGemma",
                name: &p.projector,
                class: format!("PaliGemmaProjector({}, {})", p.tower.hidden, spec.hidden),
                tokens: image.encoder.features(),
            };
            return siglip(spec, (n, module), image, (&p.tower, p.head), projector);
        }
        ImageEncoder::Qwen2Vl(q) => {
            return qwen_vl(spec, n, image, q, ("Qwen2Vision", String::new()), None)
        }
        ImageEncoder::Qwen25Vl(w) => {
            let extra = format!(", {}, {:?}", w.window, w.full);
            return qwen_vl(spec, n, image, &w.base, ("Qwen25Vision", extra), None);
        }
        ImageEncoder::Qwen3Vl(t) => {
            let extra = format!(", {}, {:?}", t.positions, t.deepstack);
            return qwen_vl(spec, n, image, &t.base, ("Qwen3Vision", extra), Some(t));
        }
        ImageEncoder::Llama4(l) => return llama4(spec, n, module, image, l),
        ImageEncoder::Pixtral(p) => return pixtral(spec, n, module, image, p),
        ImageEncoder::InternVl(i) => return internvl(spec, n, module, image, i),
        ImageEncoder::Aya(a) => return aya(spec, n, module, image, a),
        ImageEncoder::Git(g) => return git(spec, n, g),
        ImageEncoder::DeepseekVl(d) => return deepseek_vl(spec, n, module, image, d),
        ImageEncoder::Idefics3(i) => return idefics3(spec, n, module, image, i),
        ImageEncoder::LlavaOnevision(o) => return onevision(spec, n, module, image, o),
    };
    let projector = l.projector.trim_end_matches('.');
    let text = spec.hidden;
    let mut vars = tower_vars(&l.tower);
    vars.extend([
        ("projector", projector.to_string()),
        (
            "joined",
            (l.tower.hidden * l.layers.len() as u64).to_string(),
        ),
        ("text", text.to_string()),
        ("bias", py_bool(l.projector_bias)),
        ("projector_act", act(l.projector_act)),
        (
            "norm",
            l.projector_norm
                .map_or(String::new(), |eps| format!(", {}", fmt_f(eps))),
        ),
        ("features", l.features().to_string()),
        ("layers_read", format!("{:?}", l.layers)),
        (
            "drop",
            match l.drop_class {
                true => {
                    "\n        states = [s[:, 1:] for s in states]  # the class token's dropped"
                        .into()
                }
                false => String::new(),
            },
        ),
    ]);
    // Video-LLaVA's video tower, of the image tower's config, is stored and not read.
    let video = match l.video_tower {
        true => fill(
            &format!(
                "        self.{} = ClipVision(${{channels}}, ${{image}}, ${{patch}}, ${{hidden}}, ${{intermediate}}, ${{heads}}, ${{layers}}, ${{eps}}, ${{act}})  # a video's, unread by an image\n",
                sibling(&l.tower.prefix, "video_tower")
            ),
            &tower_vars(&l.tower),
        ),
        false => String::new(),
    };
    vars.push(("video", video));
    let parts = r#"        self.${tower} = ClipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act})
${video}        self.${projector} = LlavaProjector(${joined}, ${text}, ${bias}, ${projector_act}${norm})
"#;
    let Some(next) = next else {
        let doc = "LLaVA: the language model, CLIP's vision model and the projector beside it.";
        let features = r#"
    def image_features(self, pixel_values):  # [B, ${channels}, ${image}, ${image}] -> [B · ${features}, ${text}]
        states = self.${tower}.states(pixel_values, ${layers_read})${drop}
        return self.${projector}(torch.cat(states, -1)).flatten(0, 1)"#;
        return placeholder_model(
            spec,
            (n, module),
            image,
            vars,
            doc,
            &(parts.to_owned() + features),
        );
    };
    vars.extend([
        ("newline", next.anyres.newline.clone()),
        ("pinpoints", format!("{:?}", next.anyres.pinpoints)),
    ]);
    let doc = "LLaVA-NeXT: the language model, CLIP's vision model, the projector and the vector ending each row of an image's features beside it.";
    let features = r#"        self.${newline} = nn.Parameter(torch.zeros(${text}))

    def image_features(self, pixel_values, image_sizes):  # [..., tiles, ${channels}, ${image}, ${image}], [..., 2] -> [features, ${text}]
        states = self.${tower}.states(pixel_values.flatten(0, -4), ${layers_read})${drop}
        tiles = self.${projector}(torch.cat(states, -1))  # [tiles, patches, ${text}]
        return pack_tiles(tiles, image_sizes.flatten().tolist(), ${pinpoints}, ${image}, self.${newline})"#;
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        doc,
        &(parts.to_owned() + features),
    )
}

/// The module path of the tower `prefix` ("model.image_tower.") with `name` in place of its last.
fn sibling(prefix: &str, name: &str) -> String {
    let path = prefix.trim_end_matches('.');
    match path.rsplit_once('.') {
        Some((parent, _)) => format!("{parent}.{name}"),
        None => name.to_string(),
    }
}

/// A SigLIP wrapper's projector: the wrapper's name, the module's, its class's construction,
/// its features.
struct Projector<'a> {
    family: &'static str,
    name: &'a str,
    class: String,
    tokens: u64,
}

/// Gemma 3's and PaliGemma's Model: SigLIP's vision model (its head stored where `head`) and
/// the projector beside the language model; the features go in after the decoder scales its
/// embeddings (a hook before its first layer). Gemma 3's image tokens see each other both ways
/// while it runs (PaliGemma's whole prompt always does).
fn siglip(
    spec: &Spec,
    (n, module): (&Names, &str),
    image: &ImageInput,
    (tower, head): (&VisionTower, bool),
    projector: Projector,
) -> String {
    let both_ways = image.encoder.both_ways();
    let mut vars = tower_vars(tower);
    vars.extend([
        ("module", module.to_string()),
        (
            "projector",
            projector.name.trim_end_matches('.').to_string(),
        ),
        ("projector_class", projector.class),
        ("head", py_bool(head)),
        ("text", spec.hidden.to_string()),
        ("tokens", projector.tokens.to_string()),
        ("v", spec.out_vocab().to_string()),
        ("token", placeholder(image)),
        ("decoder_layers", decoder_layers(n)),
        ("family", projector.family.to_string()),
        (
            "global",
            if both_ways {
                "        global IMAGE_REACH\n"
            } else {
                ""
            }
            .to_string(),
        ),
        (
            "reach",
            if both_ways {
                format!(
                    "        IMAGE_REACH = image_reach(input_ids[0], {})\n",
                    placeholder(image)
                )
            } else {
                String::new()
            },
        ),
        (
            "unreach",
            if both_ways {
                "\n            IMAGE_REACH = None"
            } else {
                ""
            }
            .to_string(),
        ),
    ]);
    fill(
        r#"


class Model(nn.Module):
    """${family}: the language model under ${module}, SigLIP's vision model and the projector beside it."""

    def __init__(self):
        super().__init__()
        self.${module} = LanguageModel()
${holders}        self.${tower} = SiglipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, ${head})
        self.${projector} = ${projector_class}

    def image_features(self, pixel_values):  # [B, ${channels}, ${image}, ${image}] -> [B, ${tokens}, ${text}]
        return self.${projector}(self.${tower}(pixel_values))

    def forward(self, input_ids, pixel_values=None):  # [B, T] int64 -> logits [B, T, ${v}]
${global}        if pixel_values is None:
            return self.${module}(input_ids)
        features = self.image_features(pixel_values).flatten(0, 1)

        def put(layer, args):  # each placeholder's state, as the scaled embedding leaves it, replaced by the next feature
            x = args[0].clone()
            x[input_ids == ${token}] = features.to(x.dtype)
            return (x,) + args[1:]

        hook = self.${module}.${decoder_layers}[0].register_forward_pre_hook(put)
${reach}        try:
            return self.${module}(input_ids)
        finally:
            hook.remove()${unreach}"#,
        &vars,
    )
}

/// Llama 4's Model: LLaVA's, its vision model run over each tile and the projector one map.
fn llama4(spec: &Spec, n: &Names, module: &str, image: &ImageInput, l: &Llama4Vision) -> String {
    let mut vars = tower_vars(&l.tower);
    vars.extend([
        ("projector", l.projector.trim_end_matches('.').to_string()),
        ("shuffle", l.shuffle.to_string()),
        ("adapter", l.adapter.to_string()),
        ("theta", fmt_f(l.theta)),
        ("text", spec.hidden.to_string()),
    ]);
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        "Llama 4: the language model, its vision model and the projector beside it.",
        r#"        self.${tower} = Llama4Vision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${shuffle}, ${adapter}, ${theta})
        self.${projector} = nn.Module()
        self.${projector}.linear_1 = nn.Linear(${adapter}, ${text}, bias=False)

    def image_features(self, pixel_values):  # [..., tiles, ${channels}, ${image}, ${image}] -> [tiles · features, ${text}]
        tiles = pixel_values.reshape(-1, *pixel_values.shape[-3:])
        return self.${projector}.linear_1(self.${tower}(tiles)).flatten(0, 1)"#,
    )
}

/// InternVL's Model: InternViT run over each tile, its patches shuffled, and the projector.
fn internvl(
    spec: &Spec,
    n: &Names,
    module: &str,
    image: &ImageInput,
    i: &InternVlVision,
) -> String {
    let mut vars = tower_vars(&i.tower);
    vars.extend([
        ("projector", i.projector.trim_end_matches('.').to_string()),
        (
            "flags",
            [i.rms, i.qkv_bias, i.qk_norm, i.positions, i.last_norm]
                .map(py_bool)
                .join(", "),
        ),
        ("shuffle", i.shuffle.to_string()),
        (
            "joined",
            (i.tower.hidden * i.shuffle * i.shuffle).to_string(),
        ),
        ("projector_act", act(i.projector_act)),
        ("text", spec.hidden.to_string()),
    ]);
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        "InternVL: the language model, InternViT and the projector beside it.",
        r#"        self.${tower} = InternVit(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, ${flags}, ${shuffle})
        self.${projector} = InternVlProjector(${joined}, ${text}, ${projector_act})

    def image_features(self, pixel_values):  # [..., tiles, ${channels}, ${image}, ${image}] -> [tiles · features, ${text}]
        tiles = pixel_values.reshape(-1, *pixel_values.shape[-3:])
        return self.${projector}(self.${tower}(tiles)).flatten(0, 1)"#,
    )
}

/// Aya Vision's Model: SigLIP's vision model run over each tile to the state read, and the
/// projector.
fn aya(spec: &Spec, n: &Names, module: &str, image: &ImageInput, a: &AyaVision) -> String {
    let mut vars = tower_vars(&a.tower);
    vars.extend([
        ("projector", a.projector.trim_end_matches('.').to_string()),
        ("head", py_bool(a.head)),
        ("grid", a.tower.grid().to_string()),
        ("shuffle", a.shuffle.to_string()),
        ("inner", a.inner.to_string()),
        ("text", spec.hidden.to_string()),
        (
            "norm_eps",
            a.projector_norm.map_or("None".to_string(), fmt_f),
        ),
        (
            "state",
            match a.last_norm {
                true => "(tiles)".into(),
                false => format!(".state(tiles, {})", a.layers_run()),
            },
        ),
    ]);
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        "Aya Vision (Command A Vision): the language model, SigLIP's vision model and the projector beside it.",
        r#"        self.${tower} = SiglipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, ${head})
        self.${projector} = AyaProjector(${hidden}, ${grid}, ${shuffle}, ${inner}, ${text}, ${norm_eps})

    def image_features(self, pixel_values):  # [..., tiles, ${channels}, ${image}, ${image}] -> [tiles · features, ${text}]
        tiles = pixel_values.reshape(-1, *pixel_values.shape[-3:])
        return self.${projector}(self.${tower}${state}).flatten(0, 1)"#,
    )
}

/// Mistral 3's Model and LightOnOCR's: Pixtral's vision model reading the image at its own size
/// and the projector merging its patches.
fn pixtral(spec: &Spec, n: &Names, module: &str, image: &ImageInput, p: &PixtralVision) -> String {
    let mut vars = tower_vars(&p.tower);
    vars.extend([
        ("projector", p.projector.trim_end_matches('.').to_string()),
        ("merge", p.merge.to_string()),
        ("factor", p.factor().to_string()),
        ("theta", fmt_f(p.theta)),
        ("layer", p.layer.to_string()),
        ("text", spec.hidden.to_string()),
        ("text_eps", fmt_f(spec.norm.eps)),
        ("bias", py_bool(p.projector_bias)),
        ("projector_act", act(p.projector_act)),
    ]);
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        "The language model, Pixtral's vision model and the projector beside it.",
        r#"        self.${tower} = PixtralVision(${channels}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, ${theta})
        self.${projector} = Mistral3Projector(${hidden}, ${text}, ${merge}, ${text_eps}, ${bias}, ${projector_act})

    def image_features(self, pixel_values):  # [1, ${channels}, H, W], H and W multiples of ${factor} -> [features, ${text}]
        state, grid = self.${tower}.state(pixel_values[0], ${layer})
        return self.${projector}(state, grid)"#,
    )
}

/// A Model whose image's features replace its placeholders' embeddings: the language model under
/// `module` (or, where it has none, the Model itself, subclassing it; its holders then make the
/// tower's path, `model.` of `model.vision_encoder`), its towers made by `parts` and their
/// features by its `image_features`, both written with `vars`.
fn placeholder_model(
    spec: &Spec,
    (n, module): (&Names, &str),
    image: &ImageInput,
    mut vars: Vec<(&'static str, String)>,
    doc: &str,
    parts: &str,
) -> String {
    let (class, lm, init, call) = match module {
        "" => (
            "LanguageModel",
            "self".into(),
            String::new(),
            "super().forward".into(),
        ),
        m => (
            "nn.Module",
            format!("self.{m}"),
            format!("        self.{m} = LanguageModel()\n${{holders}}"),
            format!("self.{m}"),
        ),
    };
    let head = fill(
        &format!(
            "\n\n\nclass Model({class}):\n    \"\"\"{doc}\"\"\"\n\n    def __init__(self):\n        super().__init__()\n{init}{parts}"
        ),
        &vars,
    );
    // LLaVA-NeXT's features follow the image's own size.
    let sized = matches!(image.encoder.reading(), Reading::Fitted { .. });
    vars.extend([
        (
            "sized",
            (if sized { ", image_sizes=None" } else { "" }).into(),
        ),
        ("sizes", (if sized { ", image_sizes" } else { "" }).into()),
        ("lm", lm),
        ("lm_call", call),
        ("v", spec.out_vocab().to_string()),
        ("token", placeholder(image)),
        ("embed", n.path(Role::Embed)),
    ]);
    head + &fill(
        r#"

    def forward(self, input_ids, pixel_values=None${sized}):  # [B, T] int64 -> logits [B, T, ${v}]
        if pixel_values is None:
            return ${lm_call}(input_ids)
        features = self.image_features(pixel_values${sizes})

        def put(embedding, args, out):  # each placeholder's embedding replaced by the next feature
            out = out.clone()
            out[input_ids == ${token}] = features.to(out.dtype)
            return out

        hook = ${lm}.${embed}.register_forward_hook(put)
        try:
            return ${lm_call}(input_ids)
        finally:
            hook.remove()"#,
        &vars,
    )
}

/// A Qwen VL's Model: the language model as published (its decoder and head), the vision tower
/// beside it; the features replace the placeholders' embeddings, Qwen3-VL's deep-stack
/// features join the first layers' outputs, and the image's tokens take their 3-D positions
/// while it runs.
fn qwen_vl(
    spec: &Spec,
    n: &Names,
    image: &ImageInput,
    q: &Qwen2Vision,
    (class, extra): (&str, String),
    three: Option<&Qwen3Vision>,
) -> String {
    let (embed, layers) = (n.path(Role::Embed), decoder_layers(n));
    let mut vars = tower_vars(&q.tower);
    vars.extend([
        ("frames", q.frames.to_string()),
        ("merge", q.merge.to_string()),
        ("theta", fmt_f(q.theta)),
        ("text", q.out.to_string()),
        ("factor", q.factor().to_string()),
        ("v", spec.out_vocab().to_string()),
        ("token", placeholder(image)),
        ("embed", embed),
        ("decoder_layers", layers),
    ]);
    let (features, deep) = match three {
        None => ("features", ""),
        Some(_) => (
            "features, deep",
            r#"

        def stack(k, f):  # after layer k, the image's tokens gain its k-th deep-stack features
            def add(layer, args, out):
                out = out.clone()
                out[input_ids == ${token}] += f.to(out.dtype)
                return out
            return self.${decoder_layers}[k].register_forward_hook(add)

        hooks += [stack(k, f) for k, f in enumerate(deep[: len(self.${decoder_layers})])]"#,
        ),
    };
    vars.extend([
        ("class", class.to_string()),
        ("extra", extra),
        ("features", features.to_string()),
        ("deep", fill(deep, &vars)),
    ]);
    // The language model makes the holders of the tower's path (`model.` of `model.visual`).
    fill(
        r#"


class Model(LanguageModel):
    """The language model as published, its vision tower beside it under ${tower}."""

    def __init__(self):
        super().__init__()
        self.${tower} = ${class}(${channels}, ${patch}, ${frames}, ${merge}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, ${theta}, ${text}${extra})

    def forward(self, input_ids, pixel_values=None):  # [B, T] int64 -> logits [B, T, ${v}]; pixel_values: [1, 3, H, W], H and W multiples of ${factor}
        global IMAGE_POSITIONS
        if pixel_values is None:
            return super().forward(input_ids)
        ${features} = self.${tower}(pixel_values[0])

        def put(embedding, args, out):  # each placeholder's embedding replaced by the next feature
            out = out.clone()
            out[input_ids == ${token}] = features.to(out.dtype)
            return out

        hooks = [self.${embed}.register_forward_hook(put)]${deep}
        grid = (pixel_values.shape[-2] // ${factor}, pixel_values.shape[-1] // ${factor})  # the features' rows and columns
        IMAGE_POSITIONS = mrope_positions(input_ids[0].tolist(), ${token}, grid)
        try:
            return super().forward(input_ids)
        finally:
            for hook in hooks:
                hook.remove()
            IMAGE_POSITIONS = None"#,
        &vars,
    )
}

/// The attribute path of the language model's decoder layers, beside its embedding's.
fn decoder_layers(n: &Names) -> String {
    match n.path(Role::Embed).rsplit_once('.') {
        Some((decoder, _)) => format!("{decoder}.layers"),
        None => "layers".into(),
    }
}

/// The empty modules a tower's attribute path passes through (`vision_tower` of
/// `vision_tower.vision_model`, as published checkpoints nest it), each made before it.
fn holders(path: &str) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    (1..parts.len())
        .map(|i| format!("        self.{} = nn.Module()\n", parts[..i].join(".")))
        .collect()
}

/// DeepSeek-VL's Model: SigLIP's vision model and the aligner beside the language model.
fn deepseek_vl(
    spec: &Spec,
    n: &Names,
    module: &str,
    image: &ImageInput,
    d: &DeepseekVlVision,
) -> String {
    let mut vars = tower_vars(&d.tower);
    vars.extend([
        ("projector", d.projector.trim_end_matches('.').to_string()),
        ("head", py_bool(d.head)),
        ("text", spec.hidden.to_string()),
    ]);
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        "DeepSeek-VL: the language model, SigLIP's vision model and the aligner beside it.",
        r#"        self.${tower} = SiglipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, ${head})
        self.${projector} = DeepseekVlAligner(${hidden}, ${text})

    def image_features(self, pixel_values):  # [B, ${channels}, ${image}, ${image}] -> [B · patches, ${text}]
        return self.${projector}(self.${tower}(pixel_values)).flatten(0, 1)"#,
    )
}

/// Idefics3's (SmolVLM's) Model: SigLIP's vision model over each frame and the connector
/// beside the language model.
fn idefics3(
    spec: &Spec,
    n: &Names,
    module: &str,
    image: &ImageInput,
    i: &Idefics3Vision,
) -> String {
    let mut vars = tower_vars(&i.tower);
    vars.extend([
        ("projector", i.projector.trim_end_matches('.').to_string()),
        ("grid", i.tower.grid().to_string()),
        ("shuffle", i.shuffle.to_string()),
        ("text", spec.hidden.to_string()),
    ]);
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        "Idefics3 (SmolVLM): the language model, SigLIP's vision model and the connector beside it.",
        r#"        self.${tower} = SiglipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, False)
        self.${projector} = Idefics3Connector(${hidden}, ${grid}, ${shuffle}, ${text})

    def image_features(self, pixel_values):  # [..., frames, ${channels}, ${image}, ${image}] -> [frames · features, ${text}]
        frames = pixel_values.reshape(-1, *pixel_values.shape[-3:])
        return self.${projector}(self.${tower}(frames)).flatten(0, 1)"#,
    )
}

/// LLaVA-OneVision's Model: the language model, SigLIP's vision model (its head stored where the
/// config keeps one), LLaVA's projector over the states read and the row-ending vector; the
/// tiles packed as LLaVA-NeXT's, shrunk past `anyres_max_N` tiles' worth.
fn onevision(
    spec: &Spec,
    n: &Names,
    module: &str,
    image: &ImageInput,
    o: &LlavaOnevision,
) -> String {
    let mut vars = tower_vars(&o.tower);
    vars.extend([
        ("projector", o.projector.trim_end_matches('.').to_string()),
        ("head", py_bool(o.head)),
        (
            "joined",
            (o.tower.hidden * o.layers.len() as u64).to_string(),
        ),
        ("text", spec.hidden.to_string()),
        ("bias", py_bool(o.projector_bias)),
        ("projector_act", act(o.projector_act)),
        ("states", format!("{:?}", o.states())),
        ("newline", o.anyres.newline.clone()),
        ("pinpoints", format!("{:?}", o.anyres.pinpoints)),
        (
            "most",
            o.anyres.most.map_or("None".into(), |m| m.to_string()),
        ),
    ]);
    placeholder_model(
        spec,
        (n, module),
        image,
        vars,
        "LLaVA-OneVision: the language model, SigLIP's vision model, the projector and the vector ending each row of an image's features beside it.",
        r#"        self.${tower} = SiglipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act}, ${head})
        self.${projector} = LlavaProjector(${joined}, ${text}, ${bias}, ${projector_act})
        self.${newline} = nn.Parameter(torch.zeros(${text}))

    def image_features(self, pixel_values, image_sizes):  # [..., tiles, ${channels}, ${image}, ${image}], [..., 2] -> [features, ${text}]
        tiles = pixel_values.flatten(0, -4)
        states = [self.${tower}.state(tiles, s) for s in ${states}]  # the hidden states read, before the last LayerNorm
        tiles = self.${projector}(torch.cat(states, -1))  # [tiles, patches, ${text}]
        return pack_tiles(tiles, image_sizes.flatten().tolist(), ${pinpoints}, ${image}, self.${newline}, ${most})"#,
    )
}

/// The placeholder id as Python writes it (`None` where the prompt holds none).
fn placeholder(image: &ImageInput) -> String {
    image.token.map_or("None".into(), |t| t.to_string())
}

/// GIT's Model: the language model, CLIP's vision model and the visual projection beside its
/// decoder (under its module); the features go in before the text's normed embeddings (a hook
/// on their LayerNorm), see each other both ways while it runs, and their outputs are dropped.
fn git(spec: &Spec, n: &Names, g: &GitVision) -> String {
    let mut vars = tower_vars(&g.tower);
    let module = |path: &str| -> String {
        let path = path.trim_end_matches('.');
        path.rsplit_once('.').map_or(path, |(m, _)| m).to_string()
    };
    let holder = module(&g.tower.prefix);
    let frames = match g.frames {
        0 => String::new(),
        k => format!(
            "        self.{}.img_temporal_embedding = nn.ParameterList(nn.Parameter(torch.zeros(1, 1, {})) for _ in range({k}))  # a video's frames' (one image reads none)\n",
            module(&holder),
            g.tower.hidden
        ),
    };
    vars.extend([
        ("holder", holder),
        ("projector", module(&g.projector)),
        ("text", spec.hidden.to_string()),
        ("features", g.features().to_string()),
        ("frames", frames),
        ("v", spec.out_vocab().to_string()),
        ("embed_norm", n.path(Role::EmbedNorm)),
    ]);
    fill(
        r#"


class Model(LanguageModel):
    """GIT: the language model, CLIP's vision model and the visual projection beside its decoder; the image's features come before the text."""

    def __init__(self):
        super().__init__()
        self.${holder} = nn.Module()
        self.${tower} = ClipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act})
        self.${projector} = GitProjection(${hidden}, ${text}, ${eps})
${frames}
    def image_features(self, pixel_values):  # [B, ${channels}, ${image}, ${image}] -> [B, ${features}, ${text}]
        tower = self.${tower}
        return self.${projector}(tower.post_layernorm(tower.states(pixel_values, [-1])[0]))

    def forward(self, input_ids, pixel_values=None):  # [B, T] int64 -> logits [B, T, ${v}]
        global IMAGE_REACH
        if pixel_values is None:
            return super().forward(input_ids)
        features = self.image_features(pixel_values)
        n, T = features.shape[1], input_ids.shape[1]

        def before(norm, args, out):  # the image's features before the text's normed embeddings
            return torch.cat([features.to(out.dtype), out], 1)

        hook = self.${embed_norm}.register_forward_hook(before)
        IMAGE_REACH = torch.cat([torch.full((n,), n - 1), torch.arange(n, n + T)])  # the features see each other both ways, the text causally
        try:
            return super().forward(input_ids)[:, n:]  # the features' outputs dropped
        finally:
            hook.remove()
            IMAGE_REACH = None"#,
        &vars,
    )
}

/// A ViT tower's sizes and settings as the Model's template names them; its attribute path,
/// and the holder modules it passes through.
fn tower_vars(t: &VisionTower) -> Vec<(&'static str, String)> {
    let tower = t.prefix.trim_end_matches('.');
    vec![
        ("tower", tower.to_string()),
        ("holders", holders(tower)),
        ("channels", t.channels.to_string()),
        ("image", t.image.to_string()),
        ("patch", t.patch.to_string()),
        ("hidden", t.hidden.to_string()),
        ("intermediate", t.intermediate.to_string()),
        ("heads", t.heads.to_string()),
        ("layers", t.depth.to_string()),
        ("eps", fmt_f(t.eps)),
        ("act", act(t.act)),
    ]
}

/// An activation as a Python lambda.
fn act(a: Act) -> String {
    format!("lambda x: {}", act_expr(a, "x"))
}
