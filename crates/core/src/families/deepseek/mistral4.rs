//! What Mistral 4 (Mistral Small 4) adds to DeepSeek-V3's parts.

use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

/// What Mistral 4 adds to V3's parts: its experts stacked [E, out, in]; the query scale; the
/// rotated fraction, which its class reads of the whole query head (no-position part and rotary
/// part), so that it must give the rotary part; the score scale's YaRN factor where the config
/// has no RoPE dict; and routing without groups.
pub(super) fn finish(cfg: &Config, s: &mut Spec) -> Result<()> {
    // Its router always groups (V2's softmax reading groups only by `topk_method`), ranking
    // them by their two best softmax scores and filling the others' with 0.
    if cfg.size("n_group", Some(1))? > 1 {
        return Err(cfg.err(
            "n_group",
            "is more than 1; Mistral 4 ranks expert groups by their two best softmax scores and fills the others' with 0, which anatomy does not route by yet: give null or 1",
        ));
    }
    if let Some(m) = s.moe.as_mut() {
        m.storage = ExpertStorage::Stacked {
            out_in: true,
            interleaved: false,
        };
    }
    let dict = match cfg.sub("rope_parameters")? {
        Some(p) => Some(p),
        None => cfg.sub("rope_scaling")?,
    };
    let m = s.attn.mla.as_ref().expect("latent attention");
    let rd = m.qk_rope_head_dim;
    let qk = m.qk_nope_head_dim + rd;
    // (Its class always builds RoPE.)
    if let Position::Rope(r) = &mut s.position {
        mistral4_rope(cfg, r, dict.as_ref(), qk, rd)?;
        // Without a dict, its default (mscale_all_dim 1) scales the scores by YaRN's factor
        // squared.
        if let (false, RopeScaling::Yarn { factor, .. }) = (dict.is_some(), &r.full.scaling) {
            s.attn.scale_mult = (0.1 * factor.ln() + 1.0).powi(2);
        }
    }
    s.attn.query_scale = Some(crate::families::llama::layers::llama4_scaling(
        cfg,
        0.1,
        8192,
        "Mistral 4",
    )?);
    Ok(())
}

/// Mistral 4's rotated fraction, of its `qk`-dim query heads: the class rotates ⌊qk ·
/// fraction⌋ dims (the rotary part alone by default), which must be the `rd` of the attention's
/// rotary part, or transformers cannot run it. The Spec's fraction is then of the rotary part:
/// all of it.
fn mistral4_rope(
    cfg: &Config,
    r: &mut Rope,
    dict: Option<&Config>,
    qk: u64,
    rd: u64,
) -> Result<()> {
    let given = dict.is_some_and(|p| p.present("partial_rotary_factor"))
        || cfg.present("partial_rotary_factor");
    if given && (qk as f64 * r.partial) as u64 != rd {
        return Err(cfg.err(
            "rope_parameters.partial_rotary_factor",
            format!(
                "is {}; Mistral 4 rotates that fraction of each {qk}-dim query head, which must be its qk_rope_head_dim ({rd}) dims: give {}",
                r.partial,
                rd as f64 / qk as f64
            ),
        ));
    }
    r.partial = 1.0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::families::load_json;
    use crate::spec::Position;
    use serde_json::json;

    fn read(v: serde_json::Value) -> crate::Result<crate::spec::Spec> {
        load_json("cfg.json", &v.to_string(), "t", false)
    }

    /// Mistral 4 rotates the rotary part of each query head whole (its fraction is of the whole
    /// head), scales queries with position, and refuses what transformers routes or rotates
    /// otherwise: groups of experts, a fraction that is not the rotary part's.
    #[test]
    fn mistral4_reads_its_fraction_of_the_whole_head_and_refuses_groups() {
        let small = json!({"model_type": "mistral4", "hidden_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 97, "kv_lora_rank": 16,
            "q_lora_rank": 24, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
            "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16});
        let s = read(small.clone()).unwrap();
        let Position::Rope(r) = &s.position else {
            panic!("no RoPE")
        };
        assert_eq!(r.partial, 1.0);
        assert!(s.attn.query_scale.is_some());
        let mut grouped = small.clone();
        grouped["n_group"] = json!(2);
        assert_eq!(read(grouped).unwrap_err().field, "n_group");
        let mut whole = small;
        whole["rope_parameters"] = json!({"rope_type": "default", "rope_theta": 10000.0,
            "partial_rotary_factor": 1.0, "llama_4_scaling_beta": 0.1,
            "original_max_position_embeddings": 64});
        let e = read(whole).unwrap_err();
        assert_eq!(e.field, "rope_parameters.partial_rotary_factor", "{e}");
    }
}
