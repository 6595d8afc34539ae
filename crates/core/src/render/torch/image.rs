//! The wrappers anatomy runs on an image: their towers' classes (real Python, `llava.py`) and a
//! Model holding the language model and the towers under their checkpoint names, whose forward
//! puts the image's features in the placeholders' places.

use super::*;
use crate::spec::{ImageEncoder, ImageInput};

/// The towers' classes.
pub(super) fn classes(image: &ImageInput) -> String {
    match image.encoder {
        ImageEncoder::Llava(_) => include_str!("llava.py").trim_end().to_string(),
    }
}

/// The checkpoint's Model: the language model under `module`, the towers beside it.
pub(super) fn model(spec: &Spec, n: &Names, module: &str, image: &ImageInput) -> String {
    let ImageEncoder::Llava(l) = &image.encoder;
    let tower = l.tower.trim_end_matches('.');
    let projector = l.projector.trim_end_matches('.');
    let act = |a: Act| format!("lambda x: {}", act_expr(a, "x"));
    let text = spec.hidden;
    fill(
        r#"


class Model(nn.Module):
    """LLaVA: the language model under ${module}, CLIP's vision model and the projector beside it."""

    def __init__(self):
        super().__init__()
        self.${module} = LanguageModel()
        self.${tower} = ClipVision(${channels}, ${image}, ${patch}, ${hidden}, ${intermediate}, ${heads}, ${layers}, ${eps}, ${act})
        self.${projector} = LlavaProjector(${joined}, ${text}, ${bias}, ${projector_act})

    def image_features(self, pixel_values):  # [B, ${channels}, ${image}, ${image}] -> [B, ${features}, ${text}]
        states = self.${tower}.states(pixel_values, ${layers_read})${drop}
        return self.${projector}(torch.cat(states, -1))

    def forward(self, input_ids, pixel_values=None):  # [B, T] int64 -> logits [B, T, ${v}]
        if pixel_values is None:
            return self.${module}(input_ids)
        features = self.image_features(pixel_values).flatten(0, 1)

        def put(embedding, args, out):  # each placeholder's embedding replaced by the next feature
            out = out.clone()
            out[input_ids == ${token}] = features.to(out.dtype)
            return out

        hook = self.${module}.${embed}.register_forward_hook(put)
        try:
            return self.${module}(input_ids)
        finally:
            hook.remove()"#,
        &[
            ("module", module.to_string()),
            ("tower", tower.to_string()),
            ("projector", projector.to_string()),
            ("channels", l.channels.to_string()),
            ("image", l.image.to_string()),
            ("patch", l.patch.to_string()),
            ("hidden", l.hidden.to_string()),
            ("intermediate", l.intermediate.to_string()),
            ("heads", l.heads.to_string()),
            ("layers", l.depth.to_string()),
            ("eps", fmt_f(l.eps)),
            ("act", act(l.act)),
            ("joined", (l.hidden * l.layers.len() as u64).to_string()),
            ("text", text.to_string()),
            ("bias", py_bool(l.projector_bias)),
            ("projector_act", act(l.projector_act)),
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
            ("v", spec.out_vocab().to_string()),
            ("token", image.token.to_string()),
            ("embed", n.path(Role::Embed)),
        ],
    )
}
