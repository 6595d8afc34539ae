//! Dory (`dory`): a looped nGPT. Its layers are AFMoE's attention (an output gate, every fourth
//! layer full and the others sliding, a RoPE base per kind) on the unit sphere: every norm
//! projects onto it without a weight, Q and K per head before RoPE; the queries, the gate, the
//! MLP's gate and up and the logits carry learned scales (`Ngpt`), sub-norms before the output
//! and down projections; each residual moves the normed stream towards the sublayer's normed
//! output. The middle layers run several times in a row (`Looped`). Defaults follow
//! `DoryConfig`.

use super::llama::{self, LlamaLike, Unlisted, Windows};
use super::ByType;
use crate::config::Config;
use crate::error::Result;
use crate::spec::{GateStore, Layout, Looped, Ngpt, NormKind, NormPlace, OutGate, QkNorm, Spec};
use serde_json::Value;

const DORY: LlamaLike = LlamaLike {
    qk_norm: QkNorm::Unit,
    norm: NormKind::Unit,
    place: NormPlace::Sandwich,
    sub_norms: true,
    out_gate: Some(OutGate {
        softplus: false,
        per_head: false,
        bias: false,
        stored: GateStore::Own,
    }),
    windows: Windows::LayerTypes {
        window: Some(1024),
        unlisted: Unlisted::FullEvery(4),
    },
    rope_by_type: Some(ByType {
        full: (10_000_000.0, 1.0),
        sliding: (10_000.0, 1.0),
        full_proportional: false,
    }),
    layout: Layout::Dory,
    ..LlamaLike::llama(super::registry::d(
        131_072,
        2560,
        7168,
        36,
        16,
        Some(4),
        Some(256),
        8192,
        1e-6,
        10_000.0,
        false,
    ))
};

/// The counts that released configs give per block, an attention and an MLP each.
const PER_BLOCK: [&str; 4] = [
    "num_hidden_layers",
    "n_input_layers",
    "n_output_layers",
    "n_recurrent_layers",
];

pub fn load(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    // Released configs list the attention and the MLP as blocks of their own ("mlp" after each
    // attention type), and count layers in blocks: the class halves both on loading.
    let blocks = match cfg.get("layer_types") {
        Some(Value::Array(t)) => t.iter().any(|v| v.as_str() == Some("mlp")),
        _ => false,
    };
    if !blocks {
        return load_layers(cfg, model_type, family, name);
    }
    let Some(Value::Array(types)) = cfg.get("layer_types") else {
        unreachable!("checked above")
    };
    if types.len() % 2 != 0
        || types
            .iter()
            .skip(1)
            .step_by(2)
            .any(|v| v.as_str() != Some("mlp"))
    {
        return Err(cfg.err(
            "layer_types",
            "lists \"mlp\" blocks, but not after every attention block: give pairs (attention type, \"mlp\"), or the attention types alone",
        ));
    }
    let mut map = cfg.map.clone();
    map.insert(
        "layer_types".into(),
        Value::Array(types.iter().step_by(2).cloned().collect()),
    );
    for key in PER_BLOCK {
        if cfg.has(key) {
            let n = cfg.count(key, 0)?;
            if n % 2 != 0 {
                return Err(cfg.err(
                    key,
                    format!(
                        "is {n}, counted in blocks of an attention and an MLP: give an even count"
                    ),
                ));
            }
            map.insert(key.into(), Value::from(n / 2));
        }
    }
    let value = Value::Object(map);
    let halved = Config::new(cfg.file, &value)?;
    let spec = load_layers(&halved, model_type, family, name)?;
    cfg.read_through(&halved, &[]);
    Ok(spec)
}

fn load_layers(cfg: &Config, model_type: &str, family: &str, name: &str) -> Result<Spec> {
    let mut s = llama::load(cfg, &DORY, model_type, family, name)?;
    // Every norm is `DoryL2Norm()`, at its class's ε whatever the config says.
    s.norm.eps = 1e-6;
    s.norm.place = NormPlace::Sphere;
    let init = cfg.float("initializer_range", 0.0177)?;
    let alpha = cfg.float("ngpt_alpha_init", 0.05)?;
    if !(init.is_finite() && init != 0.0 && alpha.is_finite()) {
        return Err(cfg.err(
            "initializer_range",
            format!("is {init} (ngpt_alpha_init {alpha}); every learned scale is applied divided by it: give a finite, non-zero value"),
        ));
    }
    s.ngpt = Some(Ngpt { init, alpha });
    let input = cfg.count("n_input_layers", 8)?;
    let output = cfg.count("n_output_layers", 8)?;
    let recurrent = match cfg.opt_size("n_recurrent_layers")? {
        Some(n) => n,
        None => s.layers.checked_sub(input + output).ok_or_else(|| {
            cfg.err(
                "n_input_layers",
                format!(
                    "is {input}, with n_output_layers {output}: more than the {} layers",
                    s.layers
                ),
            )
        })?,
    };
    if input + recurrent + output != s.layers {
        return Err(cfg.err(
            "n_recurrent_layers",
            format!(
                "is {recurrent}: n_input_layers {input} + n_recurrent_layers + n_output_layers {output} must equal num_hidden_layers {}",
                s.layers
            ),
        ));
    }
    let loops = cfg.size("n_recurrent_loops", Some(2))?;
    if loops > 1024 {
        return Err(cfg.err(
            "n_recurrent_loops",
            format!("is {loops}; give 1 to 1024 passes"),
        ));
    }
    let shared_cache = match cfg.string("recurrent_kv_cache_mode", "per_loop")?.as_str() {
        "per_loop" => false,
        "last_loop" => true,
        other => {
            return Err(cfg.err(
                "recurrent_kv_cache_mode",
                format!("is \"{other}\"; valid: \"per_loop\", \"last_loop\""),
            ))
        }
    };
    if recurrent == 0 {
        // transformers would still norm the stream and add the input layers' output once per
        // pass, around no layers; no published config does that.
        return Err(cfg.err(
            "n_recurrent_layers",
            "is 0: anatomy draws a looped section of at least one layer; give n_input_layers + n_output_layers below num_hidden_layers",
        ));
    }
    s.stream = crate::spec::Stream::Looped(Looped {
        input,
        recurrent,
        loops,
        shared_cache,
    });
    Ok(s)
}
