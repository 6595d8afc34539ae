//! Language models read inside their multimodal wrappers: the readers a wrapper needs of its
//! own, and the refusals of what their classes cannot build.

use super::registry;
use crate::config::Config;
use crate::error::Result;
use crate::spec::{Position, Spec};
use serde_json::Value;

/// PaliGemma's language model (Gemma's, or Gemma 2's), as its text row reads it but for the
/// `use_bidirectional_attention` the wrapper's class sets, which changes nothing there (the
/// wrapper hands the layers its own mask: the prompt a prefix that sees itself both ways,
/// `Spec::prefix_lm`); positions count from 1.
pub fn paligemma_text(
    _top: &Config,
    text: &Config,
    model_type: &str,
    _family: &str,
    name: &str,
) -> Result<Spec> {
    text.flag("use_bidirectional_attention", true)?;
    let row = registry::find(model_type).expect("a registry row for PaliGemma's language model");
    let mut map = text.map.clone();
    map.remove("use_bidirectional_attention");
    let value = Value::Object(map);
    let mut own = Config::new(text.file, &value)?.renamed(row.renames);
    own.prefix = text.prefix.clone();
    let mut spec = row.read.read(&own, model_type, row.name, name)?;
    text.read_through(&own, &[]);
    spec.prefix_lm = true;
    if let Position::Rope(r) = &mut spec.position {
        r.start = 1;
    }
    Ok(spec)
}

/// GLM-4.6V's language model: GLM-4.1V's, as its text row reads it. Around GLM-4.5V's experts
/// (its large model) transformers 5.25 keeps the experts stacked and cannot load them one tensor
/// each as GLM-4.5V's checkpoints store them; anatomy names them one tensor each, so that text
/// config is refused rather than drawn under names its checkpoint would not have.
pub fn glm46v_text(
    _top: &Config,
    text: &Config,
    model_type: &str,
    family: &str,
    name: &str,
) -> Result<Spec> {
    if model_type != "glm4v_text" {
        return Err(text.err(
            "model_type",
            format!("is `{model_type}`; anatomy reads GLM-4.6V around GLM-4.1V's language model (`glm4v_text`), not yet around other ones (GLM-4.5V's experts are stored stacked in this wrapper)"),
        ));
    }
    let row = registry::find(model_type).expect("a registry row for glm4v_text");
    row.read.read(text, model_type, family, name)
}

#[cfg(test)]
mod tests {
    use crate::families::load_json;
    use serde_json::json;

    fn field_of(v: serde_json::Value) -> crate::Error {
        load_json("cfg.json", &v.to_string(), "t", false).unwrap_err()
    }

    /// PaliGemma's language model takes the flag its wrapper sets (the prompt a prefix seen
    /// both ways, positions from 1); Gemma alone refuses it.
    #[test]
    fn paligemma_reads_the_bidirectional_flag_its_wrapper_sets() {
        use crate::spec::Position;
        let text = json!({"model_type": "gemma", "hidden_size": 32, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 48,
            "vocab_size": 97, "use_bidirectional_attention": true});
        let s = load_json(
            "cfg.json",
            &json!({"model_type": "paligemma", "text_config": text,
            "projection_dim": 32})
            .to_string(),
            "t",
            false,
        )
        .unwrap();
        assert!(s.prefix_lm);
        let Position::Rope(r) = &s.position else {
            panic!("no RoPE")
        };
        assert_eq!(r.start, 1);
        assert!(s.image.is_some());
        let e = field_of(text);
        assert_eq!(e.field, "use_bidirectional_attention", "{e}");
    }

    /// The Qwen vision-language models' refusals, each where transformers fails: a `head_dim`
    /// other than hidden / heads in Qwen2-VL (its attention is that wide, its RoPE head_dim
    /// wide); RoPE type `mrope` in Qwen3-VL, whose class reads no such type (Qwen2-VL's reads it
    /// as `default`); and a language model's type alone, which transformers builds only inside
    /// its wrapper.
    #[test]
    fn qwen_vl_refusals_name_their_key() {
        let flat = json!({"model_type": "qwen2_vl", "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 2, "vocab_size": 97, "num_hidden_layers": 1, "intermediate_size": 32,
            "rope_scaling": {"type": "mrope", "mrope_section": [4, 2, 2]}});
        load_json("cfg.json", &flat.to_string(), "t", false).unwrap();
        let mut wide = flat.clone();
        wide["head_dim"] = json!(32);
        let e = field_of(wide);
        assert_eq!(e.field, "head_dim", "{e}");
        assert!(e.message.contains("(16)"), "{e}");
        let e = field_of(json!({"model_type": "qwen3_vl", "text_config":
            {"rope_scaling": {"type": "mrope", "mrope_section": [24, 20, 20]}}}));
        assert_eq!(e.field, "text_config.rope_scaling.type", "{e}");
        let e = field_of(json!({"model_type": "qwen2_5_vl_text"}));
        assert_eq!(e.field, "model_type", "{e}");
        assert!(e.message.contains("`qwen2_5_vl` config"), "{e}");
    }

    /// LLaVA-OneVision-1.5's config class requires RiceViT's output to be the text width; a
    /// config that differs is refused at the vision config's key, or at `vision_config` where
    /// the class's default tower is the one that differs.
    #[test]
    fn rice_vit_outputs_the_text_width() {
        let config = |vision: &str| {
            json!({"model_type": "llava_onevision1_5", "text_config": {"hidden_size": 64,
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16},
                "vision_config": serde_json::from_str::<serde_json::Value>(vision).unwrap()})
        };
        load_json(
            "cfg.json",
            &config(r#"{"out_hidden_size": 64}"#).to_string(),
            "t",
            false,
        )
        .unwrap();
        let e = field_of(config(r#"{"out_hidden_size": 32}"#));
        assert_eq!(e.field, "vision_config.out_hidden_size", "{e}");
        let mut absent = config("{}");
        absent.as_object_mut().unwrap().remove("vision_config");
        assert_eq!(field_of(absent).field, "vision_config");
    }

    /// GLM-4.6V reads GLM-4.1V's language model, and refuses GLM-4.5V's by the text config's
    /// type rather than naming its stacked experts one tensor each.
    #[test]
    fn reads_glm4v_text_and_refuses_the_experts_it_stores_stacked() {
        let load = |text: &str| {
            let json = format!(r#"{{"model_type": "glm46v", "text_config": {text}}}"#);
            load_json("config.json", &json, "t", false)
        };
        assert!(load("{}").is_ok());
        let e = load(r#"{"model_type": "glm4v_moe_text"}"#).unwrap_err();
        assert_eq!(e.field, "text_config.model_type", "{e}");
        assert!(e.message.contains("glm4v_text"), "{e}");
    }
}
