//! DBRX (`dbrx`): GQA with Q, K and V in one projection and clamped, LayerNorms without a bias,
//! and every layer a mixture of experts chosen by softmax, the chosen weights normalized, the
//! experts stored row after row in one tensor per projection. Its attention and FFN settings sit
//! in the `attn_config` and `ffn_config` sub-configs. Defaults follow `DbrxConfig`.

use super::{experts, layer_count, plain_attention, plain_moe, rope, RopeDefaults};
use crate::config::Config;
use crate::error::Result;
use crate::spec::*;

pub fn load(cfg: &Config, _model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = super::skeleton(name, "dbrx", family);
    s.vocab = cfg.size("vocab_size", Some(32_000))?;
    s.hidden = cfg.size("d_model", Some(2048))?;
    s.layers = layer_count(cfg, &["n_layers"], Some(24))?;
    s.context = cfg.size("max_seq_len", Some(2048))?;
    if cfg.flag("tie_word_embeddings", false)? {
        return Err(cfg.err(
            "tie_word_embeddings",
            "is true; DBRX's head is never tied (transformers refuses it)",
        ));
    }
    let attn = cfg.sub("attn_config")?;
    let ffn = cfg.sub("ffn_config")?;
    let kv = match &attn {
        Some(a) => a.size("kv_n_heads", Some(1))?,
        None => 1,
    };
    let h = super::dividing_heads(
        cfg,
        cfg.size("n_heads", Some(16))?,
        "n_heads",
        s.hidden,
        "d_model",
    )?;
    if !h.is_multiple_of(kv) {
        let a = attn
            .as_ref()
            .expect("kv_n_heads other than 1 comes from attn_config");
        return Err(a.err(
            "kv_n_heads",
            format!("is {kv}; it must divide n_heads ({h})"),
        ));
    }
    let hd = s.hidden / h;
    s.attn = Attention {
        qkv: Qkv::Stacked,
        clip_qkv: match &attn {
            Some(a) => super::positive(a, "clip_qkv")?,
            None => None,
        },
        ..plain_attention(h, kv, hd)
    };
    let r = rope(cfg, &RopeDefaults::new(10_000.0, s.context))?;
    // DbrxAttention requires `attn_config.rope_theta` but rotates by `rope_parameters` (10000
    // without them): a base here that differs is not the model transformers builds.
    let stated = attn
        .as_ref()
        .map(|a| a.opt_float("rope_theta"))
        .transpose()?
        .flatten();
    match stated {
        None => {
            return Err(match &attn {
                Some(a) => a.err(
                    "rope_theta",
                    "is missing; transformers' DbrxAttention reads attn_config.rope_theta (and rotates by rope_parameters), so a config must give it",
                ),
                None => cfg.err(
                    "attn_config",
                    "is missing; transformers' DbrxAttention reads attn_config.rope_theta, so a config must give it",
                ),
            })
        }
        Some(t) if t != r.full.theta => {
            let a = attn.as_ref().expect("stated inside attn_config");
            return Err(a.err(
                "rope_theta",
                format!(
                    "is {t}, but transformers 5.24 rotates DBRX by rope_parameters ({} here) and ignores this key; give rope_parameters {{\"rope_type\": \"default\", \"rope_theta\": {t}}} to draw the model with this base",
                    r.full.theta
                ),
            ));
        }
        Some(_) => {}
    }
    s.position = Position::Rope(r);
    let act = match ffn
        .as_ref()
        .map(|f| f.sub("ffn_act_fn"))
        .transpose()?
        .flatten()
    {
        Some(a) => super::act(&a, "name", "silu")?,
        None => Act::Silu,
    };
    let (f, e, k, p) = match &ffn {
        Some(c) => {
            // The class sets it to d_model whatever it says.
            c.get("hidden_size");
            let e = experts(c, "moe_num_experts", Some(4))?;
            let k = super::top_k_of(c, "moe_top_k", e, Some(1))?;
            (
                c.size("ffn_hidden_size", Some(3584))?,
                e,
                k,
                // Null: the weights as the softmax left them; absent: the class's 1.
                match c.present("moe_normalize_expert_weights") {
                    true => c.opt_float("moe_normalize_expert_weights")?,
                    false => Some(1.0),
                },
            )
        }
        None => (3584, 4, 1, Some(1.0)),
    };
    if let Some(p) = p.filter(|p| *p != 1.0) {
        let c = ffn
            .as_ref()
            .expect("a norm other than 1 comes from ffn_config");
        return Err(c.err(
            "moe_normalize_expert_weights",
            format!("is {p}; anatomy draws the chosen experts' weights divided by their sum (1), or left as they are (null)"),
        ));
    }
    s.mlp = Mlp::gated(f, act);
    s.moe = Some(Moe {
        scoring: Scoring::Softmax,
        norm_topk_prob: p.is_some(),
        storage: ExpertStorage::Flat,
        ..plain_moe(e, k, f)
    });
    s.plan = super::uniform_plan(vec![AttnSpan::Full; s.layers as usize], true);
    s.norm = Norm {
        kind: NormKind::Layer { bias: false },
        eps: 1e-5,
        unit_offset: false,
        place: NormPlace::Pre,
    };
    s.tied = false;
    s.layout = Layout::Dbrx;
    Ok(s)
}
