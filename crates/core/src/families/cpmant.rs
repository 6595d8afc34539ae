//! CPM-Ant: a pre-norm decoder of RMS norms, plain multi-head attention and a GELU-gated MLP,
//! framed by a learned prompt and segment embeddings, with T5's bucketed relative positions as a
//! bias shared by every layer. Its causal LM attends both ways over what it is given: nothing
//! in transformers' `CpmAntModel` masks a later position from an earlier one.

use super::layer_count;
use crate::config::Config;
use crate::error::Result;
use crate::spec::{
    Act, AttnSpan, Buckets, LayerPlan, Layout, Mlp, Norm, NormKind, NormPlace, Position, Prompt,
    Spec, TEXT_SEGMENT,
};

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(4096))?;
    let text_vocab = cfg.size("vocab_size", Some(30720))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(48))?;
    let heads = cfg.size("num_attention_heads", Some(32))?;
    let head_dim = cfg.size("dim_head", Some(128))?;
    s.attn = super::plain_attention(heads, heads, head_dim);
    s.mlp = Mlp::gated(cfg.size("dim_ff", Some(10240))?, Act::Gelu);
    s.norm = Norm {
        kind: NormKind::Rms,
        eps: cfg.float("eps", 1e-6)?,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    let length = cfg.count("prompt_length", 32)?;
    let types = cfg.count("prompt_types", 32)?;
    // The model prepends the third prompt (rows 2·length … 3·length past the text's) and gives
    // the text segment 2.
    if length > 0 && types < 3 {
        return Err(cfg.err(
            "prompt_types",
            format!("is {types}; CPM-Ant prepends the third of its prompts, so give at least 3"),
        ));
    }
    let segments = cfg.size("segment_types", Some(32))?;
    if segments <= TEXT_SEGMENT {
        return Err(cfg.err(
            "segment_types",
            format!(
                "is {segments}; CPM-Ant gives the text segment {TEXT_SEGMENT}, so give at least {}",
                TEXT_SEGMENT + 1
            ),
        ));
    }
    s.prompt = Some(Prompt { length, segments });
    // The embedding holds the text's rows and every prompt's.
    let max = crate::config::MAX_SIZE;
    s.vocab = match types.checked_mul(length).and_then(|r| r.checked_add(text_vocab)) {
        Some(rows) if rows <= max => rows,
        _ => {
            return Err(cfg.err(
                "prompt_types",
                format!("is {types}: with prompt_length {length} and vocab_size {text_vocab} the embedding would pass {max} rows; give fewer"),
            ))
        }
    };
    s.head_rows = Some(text_vocab);
    let buckets = cfg.size("position_bias_num_buckets", Some(512))?;
    let max_distance = cfg.size("position_bias_max_distance", Some(2048))?;
    // The exact buckets are the first quarter; the logarithmic ones need a distance past them.
    if buckets < 4 {
        return Err(cfg.err(
            "position_bias_num_buckets",
            format!(
                "is {buckets}; give at least 4 (a quarter of them are exact distances each way)"
            ),
        ));
    }
    if max_distance <= buckets / 4 {
        return Err(cfg.err(
            "position_bias_max_distance",
            format!("is {max_distance}; it must exceed position_bias_num_buckets / 4 ({}), the last distance with a bucket of its own", buckets / 4),
        ));
    }
    s.position = Position::Buckets(Buckets {
        buckets,
        max_distance,
    });
    // No table of positions bounds the context: the biases reach their last bucket at this
    // distance and stay there.
    s.context = max_distance;
    s.plan = vec![LayerPlan::attention(AttnSpan::Whole, false, false); s.layers as usize];
    // `_tied_weights_keys` is empty: the head is its own whatever `tie_word_embeddings` says.
    s.tied = false;
    s.layout = Layout::CpmAnt;
    Ok(s)
}
