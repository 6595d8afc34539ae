//! GPT-2 (`gpt2`): LayerNorm with bias, learned absolute positions, a plain GELU MLP, multi-head
//! attention with q, k and v fused in one Conv1D (weights stored [in, out]), tied LM head.
//! Defaults follow `GPT2Config`. GPT-BigCode (StarCoder 1, SantaCoder) is GPT-2 with `nn.Linear`
//! weights and, by `multi_query`, one K/V head.

use super::{heads, layer_count, HeadDim};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    read(cfg, model_type, family, name, false)
}

pub fn load_bigcode(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    read(cfg, model_type, family, name, true)
}

fn read(cfg: &Config, model_type: &str, family: &str, name: &str, bigcode: bool) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size_any(&["n_embd", "hidden_size"], Some(768))?;
    s.vocab = cfg.size("vocab_size", Some(50257))?;
    s.layers = layer_count(cfg, &["n_layer", "num_hidden_layers"], Some(12))?;
    s.context = cfg.size_any(&["n_positions", "max_position_embeddings"], Some(1024))?;
    let n_head = super::dividing_heads(
        cfg,
        cfg.size_any(&["n_head", "num_attention_heads"], Some(12))?,
        "n_head",
        s.hidden,
        "n_embd",
    )?;
    let (_, _, head_dim) = heads(
        cfg,
        s.hidden,
        Some(n_head),
        Some(n_head),
        HeadDim::Given(s.hidden / n_head),
    )?;
    // GPT-BigCode: one K/V head (q, then k, then v in c_attn), or one per head (each head's q,
    // k and v side by side).
    let kv = if bigcode && cfg.flag("multi_query", true)? {
        1
    } else {
        n_head
    };
    s.attn.kind = if kv == 1 && n_head > 1 {
        AttnKind::Mqa
    } else {
        AttnKind::Mha
    };
    s.attn.heads = n_head;
    s.attn.kv_heads = kv;
    s.attn.head_dim = head_dim;
    s.attn.v_head_dim = head_dim;
    s.attn.scale_dim = if cfg.flag("scale_attn_weights", true)? {
        head_dim as f64
    } else {
        1.0
    };
    s.attn.qkv_bias = true;
    s.attn.o_bias = true;
    s.attn.qkv = if bigcode && kv == n_head {
        Qkv::Grouped
    } else {
        Qkv::Stacked
    };
    s.mlp = Mlp {
        intermediate: match cfg.opt_size("n_inner")? {
            Some(n) => n,
            None => 4 * s.hidden,
        },
        act: super::act(
            cfg,
            "activation_function",
            if bigcode {
                "gelu_pytorch_tanh"
            } else {
                "gelu_new"
            },
        )?,
        gated: false,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    let eps = cfg.float("layer_norm_epsilon", 1e-5)?;
    learned_positions(&mut s, 0, eps);
    s.plan = plain_plan(s.layers);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = if bigcode {
        Layout::GptBigCode
    } else {
        Layout::Gpt2
    };
    Ok(s)
}

/// GPT-Neo: GPT-2's norms, MLP and learned positions, with separate unbiased q, k and v (the
/// output projection has a bias), unscaled scores, and global layers alternating with local
/// ones that see the last `window_size` tokens, as `attention_types` lays them out.
pub fn load_neo(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(2048))?;
    s.vocab = cfg.size("vocab_size", Some(50257))?;
    s.layers = layer_count(cfg, &["num_layers"], Some(24))?;
    s.context = cfg.size("max_position_embeddings", Some(2048))?;
    let heads = super::dividing_heads(
        cfg,
        cfg.size("num_heads", Some(16))?,
        "num_heads",
        s.hidden,
        "hidden_size",
    )?;
    let head_dim = s.hidden / heads;
    s.attn = Attention {
        o_bias: true,
        scale_dim: 1.0,
        ..super::plain_attention(heads, heads, head_dim)
    };
    s.mlp = Mlp {
        intermediate: match cfg.opt_size("intermediate_size")? {
            Some(n) => n,
            None => 4 * s.hidden,
        },
        act: super::act(cfg, "activation_function", "gelu_new")?,
        gated: false,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    let eps = cfg.float("layer_norm_epsilon", 1e-5)?;
    learned_positions(&mut s, 0, eps);
    let window = cfg.size("window_size", Some(256))?;
    let kinds = attention_layers(cfg)?;
    if kinds.len() as u64 != s.layers {
        return Err(cfg.err(
            "attention_types",
            format!(
                "lays out {} layers but num_layers is {}; they must agree",
                kinds.len(),
                s.layers
            ),
        ));
    }
    s.plan = kinds
        .into_iter()
        .map(|local| {
            let span = if local {
                AttnSpan::Sliding(window)
            } else {
                AttnSpan::Full
            };
            LayerPlan::attention(span, false, false)
        })
        .collect();
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::GptNeo;
    Ok(s)
}

/// `attention_types` (`[[["global", "local"], 12]]` by default) expanded to one flag per layer,
/// true for a local layer.
fn attention_layers(cfg: &Config) -> Result<Vec<bool>> {
    let bad = || {
        cfg.err(
            "attention_types",
            "must be a list of [[kinds…], count] pairs with kinds \"global\" or \"local\"",
        )
    };
    let Some(v) = cfg.get("attention_types") else {
        return Ok([false, true].repeat(12));
    };
    let mut out = Vec::new();
    for item in v.as_array().ok_or_else(bad)? {
        let pair = item.as_array().filter(|p| p.len() == 2).ok_or_else(bad)?;
        let kinds = pair[0].as_array().ok_or_else(bad)?;
        let count = pair[1]
            .as_u64()
            .filter(|n| *n <= crate::config::MAX_LAYERS)
            .ok_or_else(bad)?;
        for _ in 0..count {
            for k in kinds {
                out.push(match k.as_str() {
                    Some("global") => false,
                    Some("local") => true,
                    _ => return Err(bad()),
                });
                if out.len() as u64 > crate::config::MAX_LAYERS {
                    return Err(bad());
                }
            }
        }
    }
    Ok(out)
}

/// OPT: learned positions read two rows in (the table has two extra), a plain ReLU MLP
/// (`ffn_dim`), biases by `enable_bias`. LayerNorms before each sublayer and a final one, or
/// (`do_layer_norm_before` false, OPT-350M) after each residual add and none at the end; without
/// weights by `layer_norm_elementwise_affine`. A token table of a width other than the hidden size
/// (`word_embed_proj_dim`, OPT-350M's 512) is projected in and out.
pub fn load_opt(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(768))?;
    s.vocab = cfg.size("vocab_size", Some(50272))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(12))?;
    s.context = cfg.size("max_position_embeddings", Some(2048))?;
    // OPT's table has two more rows than positions and reads from row 2.
    learned_positions(&mut s, 2, 1e-5);
    let pre = cfg.flag("do_layer_norm_before", true)?;
    if !pre {
        s.norm.place = NormPlace::PostResidual;
    }
    if !cfg.flag("layer_norm_elementwise_affine", true)? {
        s.norm.kind = NormKind::Plain;
    }
    // Without it a pre-norm model would end on no norm, which only conversions of old fairseq
    // checkpoints set; a post-norm model has no final norm either way.
    if pre && cfg.flag("_remove_final_layer_norm", false)? {
        return Err(cfg.err(
            "_remove_final_layer_norm",
            "is true with do_layer_norm_before true; anatomy draws a pre-norm OPT with its final LayerNorm (false is valid)",
        ));
    }
    // The default is the hidden size, as transformers' `OPTConfig` sets it.
    let width = cfg.size("word_embed_proj_dim", Some(s.hidden))?;
    if width != s.hidden {
        s.embedding.projected = Some(width);
    }
    let heads = super::dividing_heads(
        cfg,
        cfg.size("num_attention_heads", Some(12))?,
        "num_attention_heads",
        s.hidden,
        "hidden_size",
    )?;
    let bias = cfg.flag("enable_bias", true)?;
    s.attn = Attention {
        qkv_bias: bias,
        o_bias: bias,
        ..super::plain_attention(heads, heads, s.hidden / heads)
    };
    s.mlp = Mlp {
        intermediate: cfg.size("ffn_dim", Some(3072))?,
        act: super::act(cfg, "activation_function", "relu")?,
        gated: false,
        bias,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    s.plan = plain_plan(s.layers);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::Opt;
    Ok(s)
}

/// GPT-1 (`openai-gpt`): learned positions added to the tokens, then post-residual LayerNorms
/// (x = LN(x + f(x)), no final norm) around GPT-2's Conv1D attention and MLP; its `afn`
/// `gelu` is the tanh approximation.
pub fn load_openai_gpt(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("n_embd", Some(768))?;
    s.vocab = cfg.size("vocab_size", Some(40478))?;
    s.layers = layer_count(cfg, &["n_layer"], Some(12))?;
    s.context = cfg.size("n_positions", Some(512))?;
    let heads = super::dividing_heads(
        cfg,
        cfg.size("n_head", Some(12))?,
        "n_head",
        s.hidden,
        "n_embd",
    )?;
    s.attn = Attention {
        qkv_bias: true,
        o_bias: true,
        qkv: Qkv::Stacked,
        ..super::plain_attention(heads, heads, s.hidden / heads)
    };
    s.mlp = Mlp {
        intermediate: 4 * s.hidden,
        act: super::act_renamed(
            cfg,
            "afn",
            "gelu",
            &[("gelu", "gelu_new"), ("swish", "silu")],
        )?,
        gated: false,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    learned_positions(&mut s, 0, cfg.float("layer_norm_epsilon", 1e-5)?);
    s.norm.place = NormPlace::PostResidual;
    s.plan = plain_plan(s.layers);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::OpenAiGpt;
    Ok(s)
}

/// GIT's language model: BERT's post-residual layer (x = LN(x + f(x)), no final norm) with
/// learned positions and a LayerNorm over the embeddings, biased q, k, v, output and MLP
/// projections, and a head of its own with a bias. Its image encoder and projection are counted
/// beside it (`towers`); on text alone the model is a causal decoder.
pub fn load_git(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(768))?;
    s.vocab = cfg.size("vocab_size", Some(30522))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(6))?;
    s.context = cfg.size("max_position_embeddings", Some(1024))?;
    let (heads, _, head_dim) = heads(cfg, s.hidden, Some(12), None, HeadDim::Divide)?;
    s.attn = Attention {
        qkv_bias: true,
        o_bias: true,
        ..super::plain_attention(heads, heads, head_dim)
    };
    s.mlp = Mlp {
        intermediate: cfg.size("intermediate_size", Some(3072))?,
        act: super::act(cfg, "hidden_act", "gelu")?,
        gated: false,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    learned_positions(&mut s, 0, cfg.float("layer_norm_eps", 1e-12)?);
    s.embedding.norm = true;
    s.norm.place = NormPlace::PostResidual;
    s.plan = plain_plan(s.layers);
    s.tied = cfg.flag("tie_word_embeddings", false)?;
    s.head_bias = true;
    s.layout = Layout::Git;
    Ok(s)
}

/// BioGPT: OPT's layer (pre-norm, learned positions two rows in, biased q, k, v and fc
/// projections) with embeddings scaled by √hidden by `scale_embedding`. Its LayerNorms keep
/// PyTorch's ε = 10⁻⁵: the class never passes `layer_norm_eps` to them.
pub fn load_biogpt(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("hidden_size", Some(1024))?;
    s.vocab = cfg.size("vocab_size", Some(42384))?;
    s.layers = layer_count(cfg, &["num_hidden_layers"], Some(24))?;
    s.context = cfg.size("max_position_embeddings", Some(1024))?;
    let (heads, _, head_dim) = heads(cfg, s.hidden, Some(16), None, HeadDim::Divide)?;
    s.attn = Attention {
        qkv_bias: true,
        o_bias: true,
        ..super::plain_attention(heads, heads, head_dim)
    };
    s.mlp = Mlp {
        intermediate: cfg.size("intermediate_size", Some(4096))?,
        act: super::act(cfg, "hidden_act", "gelu")?,
        gated: false,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    learned_positions(&mut s, 2, 1e-5);
    s.embedding.scale_by_sqrt_hidden = cfg.flag("scale_embedding", true)?;
    s.plan = plain_plan(s.layers);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::BioGpt;
    Ok(s)
}

/// XGLM: OPT's layer with fixed sinusoidal positions (two rows in) and √d-scaled token
/// embeddings by `scale_embedding`; LayerNorms at PyTorch's ε = 10⁻⁵.
pub fn load_xglm(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    if cfg.flag("add_cross_attention", false)? {
        return Err(cfg.err(
            "add_cross_attention",
            "is true; that gives each layer attention over an encoder's output, and anatomy draws XGLM as a decoder alone",
        ));
    }
    s.hidden = cfg.size("d_model", Some(1024))?;
    s.vocab = cfg.size("vocab_size", Some(256_008))?;
    s.layers = layer_count(cfg, &["num_layers"], Some(24))?;
    s.context = cfg.size("max_position_embeddings", Some(2048))?;
    let heads = super::dividing_heads(
        cfg,
        cfg.size("attention_heads", Some(16))?,
        "attention_heads",
        s.hidden,
        "d_model",
    )?;
    s.attn = Attention {
        qkv_bias: true,
        o_bias: true,
        ..super::plain_attention(heads, heads, s.hidden / heads)
    };
    s.mlp = Mlp {
        intermediate: cfg.size("ffn_dim", Some(4096))?,
        act: super::act(cfg, "activation_function", "gelu")?,
        gated: false,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    learned_positions(&mut s, 2, 1e-5);
    // The same table offset as OPT's, but computed: no position parameters.
    s.embedding.learned_positions = None;
    s.position = Position::Sinusoidal(Sinusoids::Fairseq);
    s.embedding.scale_by_sqrt_hidden = cfg.flag("scale_embedding", true)?;
    s.plan = plain_plan(s.layers);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.layout = Layout::Xglm;
    Ok(s)
}

/// CTRL: GPT-2's pre-norm layer of plain attention and a ReLU MLP, every projection biased,
/// √d-scaled embeddings plus CTRL's fixed sinusoids, a biased head tied to the embedding.
pub fn load_ctrl(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, model_type, family);
    s.hidden = cfg.size("n_embd", Some(1280))?;
    s.vocab = cfg.size("vocab_size", Some(246_534))?;
    s.layers = layer_count(cfg, &["n_layer"], Some(48))?;
    // The sinusoid table has this many rows.
    s.context = cfg.size("n_positions", Some(256))?;
    let heads = super::dividing_heads(
        cfg,
        cfg.size("n_head", Some(16))?,
        "n_head",
        s.hidden,
        "n_embd",
    )?;
    s.attn = Attention {
        qkv_bias: true,
        o_bias: true,
        ..super::plain_attention(heads, heads, s.hidden / heads)
    };
    s.mlp = Mlp {
        intermediate: cfg.size("dff", Some(8192))?,
        act: Act::Relu,
        gated: false,
        bias: true,
        fused_gate_up: false,
        sub_norm: false,
        clamp: None,
        scalar: false,
    };
    // The layers' two LayerNorms fix ε at 1e-6; only the final one reads the key. anatomy draws
    // one ε, so another value is refused.
    let eps = cfg.float("layer_norm_epsilon", 1e-6)?;
    if eps != 1e-6 {
        return Err(cfg.err(
            "layer_norm_epsilon",
            format!("is {eps}; CTRL's layer norms use 1e-6 whatever this says, and anatomy draws one ε for every norm, so it must be 1e-6"),
        ));
    }
    s.norm = Norm {
        kind: NormKind::Layer { bias: true },
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::Sinusoidal(Sinusoids::Ctrl);
    s.embedding.scale_by_sqrt_hidden = true;
    s.plan = plain_plan(s.layers);
    s.tied = cfg.flag("tie_word_embeddings", true)?;
    s.head_bias = true;
    s.layout = Layout::Ctrl;
    Ok(s)
}

/// What GPT-2 and the models after it share: learned positions added to the embedding (a
/// table of the context plus `offset` rows, position p reading row p + `offset`), pre-norm
/// LayerNorms with shifts.
fn learned_positions(s: &mut Spec, offset: u64, eps: f64) {
    s.embedding.learned_positions = Some(s.context + offset);
    s.embedding.position_offset = offset;
    s.norm = Norm {
        kind: NormKind::Layer { bias: true },
        eps,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.position = Position::Learned;
}

/// Every layer full attention, no RoPE, no experts.
fn plain_plan(layers: u64) -> Vec<LayerPlan> {
    vec![LayerPlan::attention(AttnSpan::Full, false, false); layers as usize]
}
