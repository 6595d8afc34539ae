//! BLT (`blt`): a byte-level encoder and decoder around a latent transformer over patches, with
//! an entropy model that cuts the bytes into patches (`ByteLatent`). Each of its four stacks is
//! Llama's pre-norm layer with interleaved RoPE and a config of its own (`encoder_config`,
//! `global_config`, `decoder_config`, `patcher_config`); the Spec is the latent transformer's,
//! the others hang from it. Defaults follow `BltConfig` and its sub-configs.

use super::llama::{self, LlamaLike};
use super::registry::d;
use crate::config::{Config, MAX_SIZE};
use crate::error::Result;
use crate::spec::{AttnSpan, ByteHash, ByteLatent, HfWrap, Layout, Mixer, Patching, Spec, Stack};
use serde_json::{Map, Value};

/// A stack's Llama reader: interleaved RoPE, no biases, MHA unless the config says otherwise.
const fn stack(
    vocab: u64,
    hidden: u64,
    intermediate: u64,
    layers: u64,
    heads: u64,
    context: u64,
    theta: f64,
) -> LlamaLike {
    LlamaLike {
        interleaved_rope: true,
        layout: Layout::Blt,
        ..LlamaLike::llama(d(
            vocab,
            hidden,
            intermediate,
            layers,
            heads,
            None,
            None,
            context,
            1e-5,
            theta,
            false,
        ))
    }
}

// `intermediate_size` defaults to ⌊8 · hidden / 3⌋ where a class gives none (the encoder's,
// and any set to null): the sizes here are the default hidden sizes' values.
const ENCODER: LlamaLike = stack(260, 1024, 2730, 1, 16, 24_576, 500_000.0);
const DECODER: LlamaLike = stack(260, 1024, 2816, 9, 16, 24_576, 500_000.0);
const GLOBAL: LlamaLike = stack(260, 2048, 5632, 25, 16, 4096, 500_000.0);
const PATCHER: LlamaLike = stack(260, 768, 2048, 14, 12, 8192, 10_000.0);

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let empty = Value::Object(Map::new());
    let sub = |key: &str| -> Result<Config> {
        Ok(match cfg.sub(key)? {
            Some(c) => c,
            None => Config::new(cfg.file, &empty)?,
        })
    };
    let (enc_cfg, dec_cfg, glob_cfg, patch_cfg) = (
        sub("encoder_config")?,
        sub("decoder_config")?,
        sub("global_config")?,
        sub("patcher_config")?,
    );
    let mut encoder = read_stack(&enc_cfg, &ENCODER, Stack::Encoder.title(), name)?;
    let mut decoder = read_stack(&dec_cfg, &DECODER, Stack::Decoder.title(), name)?;
    let mut global = read_stack(&glob_cfg, &GLOBAL, "Latent transformer", name)?;
    let patch_in_forward = cfg.flag("patch_in_forward", true)?;
    let mut patcher = if patch_in_forward {
        let mut p = read_stack(&patch_cfg, &PATCHER, Stack::Patcher.title(), name)?;
        // The class uses SiLU whatever the config says.
        patch_cfg.get("hidden_act");
        p.mlp.act = crate::spec::Act::Silu;
        let window = match patch_cfg.get("sliding_window") {
            _ if !patch_cfg.present("sliding_window") => Some(512),
            None => None,
            Some(_) => Some(patch_cfg.size("sliding_window", None)?),
        };
        slide(&mut p, window);
        Some(p)
    } else {
        None
    };

    // The encoder's window is the top-level one, and the decoder reads the encoder's mask.
    enc_cfg.get("sliding_window");
    let window = match cfg.present("local_attention_window_len") {
        false => Some(512),
        true => cfg.opt_size("local_attention_window_len")?,
    };
    slide(&mut encoder, window);
    slide(&mut decoder, window);

    let k = cfg.size("cross_attn_k", Some(2))?;
    for (c, what) in [(&enc_cfg, "encoder_config"), (&dec_cfg, "decoder_config")] {
        let own = c.size("cross_attn_k", Some(2))?;
        if own != k {
            return Err(c.err(
                "cross_attn_k",
                format!("is {own}, but the top-level cross_attn_k is {k}: BLT's {what} reshapes its patches by its own and its masks by the top-level one; give the same value"),
            ));
        }
    }
    if decoder.hidden != encoder.hidden {
        return Err(dec_cfg.err(
            "hidden_size",
            format!(
                "is {}, but the encoder's is {}: the decoder starts from the encoder's byte states; give the same width",
                decoder.hidden, encoder.hidden
            ),
        ));
    }
    // Only the decoder's projection from the latent transformer reads its width.
    enc_cfg.get("hidden_size_global");
    let global_width = dec_cfg.size("hidden_size_global", Some(2048))?;
    if global_width != global.hidden {
        return Err(dec_cfg.err(
            "hidden_size_global",
            format!(
                "is {global_width}, but global_config's hidden_size is {}: the decoder projects the latent transformer's output; give the same width",
                global.hidden
            ),
        ));
    }
    // The config class sets the global config's `encoder_cross_output_size` itself, from the
    // encoder's width × cross_attn_k, whatever a file says: a saved value is read and recomputed.
    glob_cfg.get("encoder_cross_output_size");
    if encoder.hidden.checked_mul(k).is_none_or(|w| w > MAX_SIZE) {
        return Err(cfg.err(
            "cross_attn_k",
            format!("is {k}; the encoder's hidden_size × cross_attn_k must be at most {MAX_SIZE}"),
        ));
    }
    let encoder_cross_all = enc_cfg.flag("cross_attn_all_layers", false)?;
    let decoder_cross_all = dec_cfg.flag("cross_attn_all_layers", true)?;

    let functions = cfg.size("encoder_hash_byte_group_nb_functions", Some(1))?;
    let hash_vocab = cfg.size("encoder_hash_byte_group_vocab", Some(500_002))?;
    let sizes = cfg
        .list_any(
            "encoder_hash_byte_group_size",
            |v| v.as_u64().filter(|&n| (1..=64).contains(&n)),
            "an n-gram size from 1 to 64",
        )?
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| vec![3, 4, 5, 6, 7, 8]);
    let hash = ByteHash {
        vocab: hash_vocab,
        sizes,
        functions,
    };
    if (hash.vocab as u128) * (hash.functions as u128) * (hash.sizes.len() as u128)
        > u32::MAX as u128
    {
        return Err(cfg.err(
            "encoder_hash_byte_group_vocab",
            format!("is {hash_vocab}, with {functions} functions of {} sizes: the hash table's rows must number at most 2^32", hash.sizes.len()),
        ));
    }

    let mode = cfg.string("patching_mode", "entropy")?;
    let patching = match (&patcher, mode.as_str()) {
        (Some(_), "entropy")
            if cfg.opt_size("patch_size")?.is_some() || !cfg.present("patch_size") =>
        {
            let threshold = cfg
                .opt_float("patching_threshold")?
                .or((!cfg.present("patching_threshold")).then_some(1.335_442_066_192_627));
            match threshold {
                Some(t) if t.is_finite() => Patching::Entropy(t),
                Some(_) | None => {
                    return Err(cfg.err(
                        "patching_threshold",
                        "is null or not finite: entropy patching compares each byte's entropy with it; give a number of nats",
                    ))
                }
            }
        }
        // The patcher runs, but without a patch size each byte is a patch.
        (Some(_), "entropy") => Patching::Bytes { extra: 0 },
        // No patcher, or any other mode: transformers makes T + 1 patches of one byte.
        (None, _) | (Some(_), _) => Patching::Bytes { extra: 1 },
    };
    cfg.get("patch_size");
    cfg.get("patching_threshold");
    let max_patch = cfg.opt_size("max_patch_length")?;
    if cfg.flag("tie_word_embeddings", false)? {
        return Err(cfg.err(
            "tie_word_embeddings",
            "is true: BLT's head would then be the encoder's byte embedding, a variant anatomy does not draw; give false",
        ));
    }

    // The latent transformer is the Spec; the bytes' vocabulary and context are the model's.
    global.vocab = cfg.size("vocab_size", Some(260))?;
    global.context = cfg.size("max_position_embeddings", Some(4096))?;
    global.name = name.to_string();
    global.model_type = model_type.to_string();
    global.family = family.to_string();
    global.hf_wrap = HfWrap::Module {
        module: "global_transformer",
        head: false,
    };
    encoder.hf_wrap = HfWrap::Module {
        module: "local_encoder",
        head: false,
    };
    // The head (`lm_head`) reads the decoder's output where it is, at the top.
    decoder.hf_wrap = HfWrap::Module {
        module: "local_decoder",
        head: false,
    };
    decoder.vocab = global.vocab;
    if let Some(p) = patcher.as_mut() {
        p.hf_wrap = HfWrap::Module {
            module: "patcher",
            head: true,
        };
    }
    global.stream = crate::spec::Stream::Bytes(Box::new(ByteLatent {
        encoder,
        decoder,
        patcher,
        hash,
        cross_k: k,
        encoder_cross_all,
        decoder_cross_all,
        patching,
        max_patch,
    }));
    Ok(global)
}

/// One stack from its sub-config: Llama's reader, then what BLT's classes do differently.
fn read_stack(c: &Config, f: &LlamaLike, family: &str, name: &str) -> Result<Spec> {
    let mut s = llama::load(c, f, "blt", family, name)?;
    // ⌊8 · hidden / 3⌋ where the config gives no width (the encoder's class has no default).
    let derived = std::ptr::eq(f, &ENCODER) || c.present("intermediate_size");
    if c.get("intermediate_size").is_none() && derived {
        s.mlp.intermediate = 8 * s.hidden / 3;
    }
    // The attention splits the width evenly across its heads, while the rotary embedding reads
    // `head_dim` where a config gives one: transformers fails unless they agree.
    if s.hidden % s.attn.heads != 0 || s.attn.head_dim != s.hidden / s.attn.heads {
        let key = if c.has("head_dim") {
            "head_dim"
        } else {
            "num_attention_heads"
        };
        return Err(c.err(
            key,
            format!(
                "gives heads of {} with hidden_size {} and {} heads: BLT's attention splits the hidden size evenly across its heads, and its rotary embedding reads head_dim; give head_dim = hidden_size / num_attention_heads",
                s.attn.head_dim, s.hidden, s.attn.heads
            ),
        ));
    }
    // Each sub-config class sets this false whatever the file says.
    c.get("tie_word_embeddings");
    s.tied = false;
    Ok(s)
}

/// Every layer of `s` attends over the last `window` positions, or all of them.
fn slide(s: &mut Spec, window: Option<u64>) {
    let span = window.map_or(AttnSpan::Full, AttnSpan::Sliding);
    for l in &mut s.plan {
        l.mixer = Mixer::Attention(span);
    }
}
