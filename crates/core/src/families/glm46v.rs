//! GLM-4.6V's language model, read inside its wrapper.

use super::registry::{self, Reader};
use crate::config::Config;
use crate::error::Result;
use crate::spec::Spec;

/// GLM-4.6V's language model: GLM-4.1V's, as its text row reads it. Around GLM-4.5V's experts
/// (its large model) transformers 5.25 keeps the experts stacked and cannot load them one tensor
/// each as GLM-4.5V's checkpoints store them; anatomy names them one tensor each, so that text
/// config is refused rather than drawn under names its checkpoint would not have.
pub fn read_text(
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
    match &registry::find(model_type)
        .expect("a registry row for glm4v_text")
        .read
    {
        Reader::Llama(f) => super::llama::load(text, f, model_type, family, name),
        Reader::Own(load) => load(text, model_type, family, name),
    }
}

#[cfg(test)]
mod tests {
    /// GLM-4.6V reads GLM-4.1V's language model, and refuses GLM-4.5V's by the text config's
    /// type rather than naming its stacked experts one tensor each.
    #[test]
    fn reads_glm4v_text_and_refuses_the_experts_it_stores_stacked() {
        let load = |text: &str| {
            let json = format!(r#"{{"model_type": "glm46v", "text_config": {text}}}"#);
            crate::families::load_json("config.json", &json, "t", false)
        };
        assert!(load("{}").is_ok());
        let e = load(r#"{"model_type": "glm4v_moe_text"}"#).unwrap_err();
        assert_eq!(e.field, "text_config.model_type", "{e}");
        assert!(e.message.contains("glm4v_text"), "{e}");
    }
}
