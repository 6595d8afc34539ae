//! How a checkpoint stores its matrices, as config.json's `quantization_config` (or MLX's
//! `quantization`) declares it: which matrices are quantized, and each one's stored tensors with
//! their packed shapes and dtypes, named as the format's own code saves them. The parameters stay
//! the model's: a packed matrix counts its logical `[out, in]` values once.

use crate::config::Config;
use crate::error::Result;
use crate::graph::{Component, Graph, Op, TensorKind};
use serde_json::Value;

/// What config.json declares: the format, and the safetensors dtype of what it leaves unpacked
/// (its `dtype`, or `torch_dtype`; BF16 where it names none of the three).
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    pub quant: Quant,
    pub float: Dtype,
}

/// The safetensors dtypes a declared format stores its tensors in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    I64,
    I32,
    U32,
    F32,
    F16,
    BF16,
    I8,
    U8,
    F8E4M3,
}

impl Dtype {
    /// As safetensors names it.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::I64 => "I64",
            Dtype::I32 => "I32",
            Dtype::U32 => "U32",
            Dtype::F32 => "F32",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
            Dtype::I8 => "I8",
            Dtype::U8 => "U8",
            Dtype::F8E4M3 => "F8_E4M3",
        }
    }

    pub fn bytes(self) -> u128 {
        match self {
            Dtype::I64 => 8,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 4,
            Dtype::F16 | Dtype::BF16 => 2,
            Dtype::I8 | Dtype::U8 | Dtype::F8E4M3 => 1,
        }
    }
}

/// The words of zero points a row of AWQ's GEMV layout stores for `inp` inputs in groups of
/// `group` (AutoAWQ's `calculate_zeros_width`): the groups' words, rounded up to a multiple of
/// 4, 2 or 1 for groups of 32, 64 or 128 and more. Its scales are eight times as many.
pub fn awq_gemv_width(inp: u64, group: u64) -> u64 {
    let multiple = match group {
        32 => 4,
        64 => 2,
        _ => 1,
    };
    inp.div_ceil(group.max(1)).div_ceil(8).div_ceil(multiple) * multiple
}

/// One of GPTQModel's `dynamic` entries: a module pattern (a regular expression matched from
/// the start of the module's name, or the name itself) and what it sets there: `None` for a
/// `-:` pattern, which leaves the module unquantized, else its own bits and group size.
#[derive(Debug, Clone, PartialEq)]
pub struct Dynamic {
    pub pattern: String,
    pub groups: Option<Groups>,
}

/// A declared storage format.
#[derive(Debug, Clone, PartialEq)]
pub enum Quant {
    /// GPTQ (AutoGPTQ, GPTQModel, optimum): `qweight` int32 `[in·bits/32, out]` (32/bits input
    /// rows a word), `qzeros` int32 `[groups, out·bits/32]`, `scales` `[groups, out]` and `g_idx`
    /// int32 `[in]`, each input's group (act-order permutes it). The `gptq` checkpoint format
    /// (`v1`) stores each zero point less one; `gptq_v2` stores it as it is. `dynamic`: GPTQModel's
    /// per-module choices, the first that matches deciding (`gptq_groups`). `auto_round`:
    /// AutoRound's `auto_round:auto_gptq` packing, this layout without `g_idx` (each input's group
    /// its position's), v1's zero points.
    Gptq {
        groups: Groups,
        v1: bool,
        dynamic: Vec<Dynamic>,
        auto_round: bool,
    },
    /// AutoAWQ's layouts (`version`): GEMM's `qweight` int32 `[in, out·bits/32]` (eight outputs
    /// a word, in the order 0 2 4 6 1 3 5 7), `qzeros` int32 `[groups, out·bits/32]`, `scales`
    /// `[groups, out]`; GEMV's `qweight` int32 `[out, in·bits/32]` (eight inputs a word, in
    /// order), `qzeros` int32 `[out, width]` and `scales` `[out, width·8]`, the groups padded to
    /// `awq_gemv_width`. `skip`: `modules_to_not_convert`, matched as transformers matches it.
    Awq {
        groups: Groups,
        gemv: bool,
        skip: Vec<String>,
    },
    /// compressed-tensors (llm-compressor): each config group's scheme for the modules it targets.
    Compressed {
        schemes: Vec<Scheme>,
        ignore: Vec<String>,
    },
    /// MLX (mlx-lm): `weight` uint32 `[out, in·bits/32]`, `scales` and `biases` `[out, in/group]`
    /// for every linear layer and embedding whose input width the group divides; `layers`
    /// are mlx-lm's per-module choices (its bits and group, or `None`: not quantized). With
    /// `switch`, a layer's routed experts are stacked as mlx-lm's SwitchGLU holds them, one
    /// tensor per projection (`mlp.switch_mlp.gate_proj.weight` `[E, out, in·bits/32]`, see
    /// `mlx_switch`), as mlx-lm saves every mixture-of-experts model it converts; without it,
    /// one per expert as transformers names them (early conversions).
    Mlx {
        bits: u64,
        group: u64,
        layers: Vec<(String, Option<(u64, u64)>)>,
        switch: bool,
    },
    /// transformers' fine-grained fp8 (`quant_method: "fp8"`: DeepSeek-V3's and the FP8
    /// releases of Qwen, GLM, MiniMax, Kimi): every linear layer but the head, the routers and
    /// `modules_to_not_convert` as `weight` e4m3 `[out, in]` beside `weight_scale_inv`, one
    /// scale for each `block` of rows and columns. The loader reads these weights itself.
    Fp8 {
        block: (u64, u64),
        skip: Vec<String>,
    },
    /// bitsandbytes (transformers' `BitsAndBytesConfig`): every linear layer but the head and
    /// the modules it is told to skip, in 4 bits (NF4 or FP4 codes in blocks of 64, their
    /// absolute maxima themselves quantized where `double`) or in LLM.int8()'s 8 bits.
    Bnb(Bnb),
    /// Another method (`fp8`'s block scales and `mxfp4`, which verify and run recognize by
    /// their tensors; HQQ, torchao): the manifest lists its matrices unpacked.
    Unread(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bnb {
    pub kind: BnbKind,
    /// The 4-bit blocks' absolute maxima stored as 8-bit codes of their own
    /// (`bnb_4bit_use_double_quant`).
    pub double: bool,
    /// `llm_int8_skip_modules`: modules left unquantized, by name or a name's last components.
    pub skip: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BnbKind {
    Nf4,
    Fp4,
    Int8,
}

impl BnbKind {
    fn name(self) -> &'static str {
        match self {
            BnbKind::Nf4 => "nf4",
            BnbKind::Fp4 => "fp4",
            BnbKind::Int8 => "int8",
        }
    }
}

/// bitsandbytes' 4-bit blocks: 64 values a block, 256 absolute maxima a block of the second
/// quantization (`quantize_4bit`'s and `quantize_blockwise`'s defaults, which transformers
/// keeps).
pub const BNB_BLOCK: u64 = 64;
pub const BNB_NESTED_BLOCK: u64 = 256;

/// An integer format's groups along the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Groups {
    pub bits: u64,
    /// Inputs sharing a scale; `None`: one group per output channel (`group_size: -1`).
    pub group: Option<u64>,
    /// Zero points stored (GPTQ always stores them; AWQ's `zero_point`).
    pub zeros: bool,
}

/// One compressed-tensors config group.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheme {
    /// `Linear`, a module name, or `re:` and a regular expression.
    pub targets: Vec<String>,
    pub kind: Packing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// `pack-quantized`: `weight_packed` int32 `[out, in·bits/32]`, `weight_scale`
    /// `[out, groups]`, `weight_zero_point` int32 `[out·bits/32, groups]` where asymmetric,
    /// `weight_shape` int64 `[2]`, and `weight_g_idx` int32 `[in]` under group act-order.
    PackedInt { groups: Groups, g_idx: bool },
    /// `int-quantized`: `weight` int8 `[out, in]`, `weight_scale` `[out, groups]`.
    Int8 { groups: Groups },
    /// `float-quantized`: `weight` fp8 `[out, in]`, `weight_scale` by its strategy.
    Fp8 { scale: Fp8Scale, input_scale: bool },
    /// `nvfp4-pack-quantized`: `weight_packed` uint8 `[out, in/2]`, `weight_scale` fp8
    /// `[out, in/16]`, `weight_global_scale` `[1]`, `input_global_scale` `[1]`.
    Nvfp4 { input_scale: bool },
    /// bitsandbytes' 4 bits: `weight` uint8 `[out·in/2, 1]` (two codes a byte, the first in the
    /// high half), `weight.absmax` (`[blocks]`, float32, or uint8 codes where `double`, with
    /// `weight.nested_absmax` and `weight.nested_quant_map`), `weight.quant_map` float32 `[16]`
    /// (the code book) and `weight.quant_state.bitsandbytes__nf4` (or `__fp4`): the rest of the
    /// state as JSON bytes, whose length depends on its numbers.
    Bnb4 { fp4: bool, double: bool },
    /// LLM.int8(): `weight` int8 `[out, in]`, `SCB` float32 `[out]` (each row's absolute
    /// maximum), `weight_format` uint8 `[]` (0: row-major).
    Bnb8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp8Scale {
    Tensor,
    Channel,
    Block(u64, u64),
}

/// One stored tensor of a quantized matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub suffix: &'static str,
    pub shape: Vec<u64>,
    /// Its dtype (GPTQ's and AWQ's scales are float16 whatever the model's); `None`: the
    /// checkpoint's float type.
    pub dtype: Option<Dtype>,
    /// Its length is the stored data's (bitsandbytes' JSON quant state): `shape` is `[0]`, and
    /// any one-dimensional length is sound.
    pub any_length: bool,
}

fn int(c: &Config, key: &str, allowed: &[u64], default: Option<u64>) -> Result<u64> {
    let n = c.size(key, default)?;
    if !allowed.contains(&n) {
        return Err(c.err(key, format!("is {n}; this format packs {allowed:?} bits")));
    }
    Ok(n)
}

/// GPTQModel's `dynamic`: in order, each pattern's choice for the modules it matches first.
fn dynamic(q: &Config, groups: Groups) -> Result<Vec<Dynamic>> {
    let Some(d) = q.sub("dynamic")? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (key, v) in d.map {
        let (pattern, skip) = match key.strip_prefix("-:") {
            Some(p) => (p, true),
            None => (key.strip_prefix("+:").unwrap_or(key), false),
        };
        if !v.is_object() {
            return Err(d.err(key, "is not an object of the settings its modules take"));
        }
        let own = d.sub(key)?.expect("an object");
        let groups = match skip {
            true => None,
            false => Some(own_groups(&own, &[2, 3, 4, 8], groups)?),
        };
        out.push(Dynamic {
            pattern: pattern.to_string(),
            groups,
        });
    }
    Ok(out)
}

/// AutoRound's config (`quant_method: "auto-round"`), as vLLM's AutoRoundConfig reads it: its
/// two packings of integers (`packing_format`), GPTQ's layout without `g_idx` or AWQ's GEMM
/// layout, in `bits` and `group_size` (`sym` only sets the zero points, which both store);
/// `extra_config`'s modules by name (or pattern) with their own `bits` and `group_size`, 16 bits
/// or more leaving one unquantized; and outside `block_name_to_quantize`'s blocks, nothing
/// quantized. Read as GPTQ's `dynamic` (the first entry that matches deciding) or, for AWQ, its
/// skipped modules.
fn auto_round(q: &Config) -> Result<Quant> {
    let packing = q.string("packing_format", "auto_round:auto_gptq")?;
    let awq = match packing.as_str() {
        "auto_round:auto_gptq" | "auto_round:gptq" => false,
        "auto_round:auto_awq" | "auto_round:awq" => true,
        other => {
            return Err(q.err(
                "packing_format",
                format!(
                    "is `{other}`; anatomy reads AutoRound's `auto_round:auto_gptq` and \
                     `auto_round:auto_awq` packings"
                ),
            ))
        }
    };
    let data = q.string("data_type", "int")?;
    if data != "int" {
        return Err(q.err(
            "data_type",
            format!("is `{data}`; anatomy reads AutoRound's integer (`int`) weights"),
        ));
    }
    let bits = if awq { &[4][..] } else { &[2, 3, 4, 8][..] };
    let groups = Groups {
        bits: int(q, "bits", bits, None)?,
        group: group(q, "group_size")?,
        zeros: true,
    };
    let blocks: Vec<String> = match q.present("block_name_to_quantize") {
        false => Vec::new(),
        true => match q.opt_string("block_name_to_quantize") {
            Ok(Some(list)) => list.split(',').map(|b| b.trim().to_string()).collect(),
            _ => names(q, "block_name_to_quantize", "a block name")?,
        },
    };
    // extra_config's modules by name: their own groups, or none where 16 bits or more.
    let mut extra = Vec::new();
    if let Some(c) = q.sub("extra_config")? {
        for (name, v) in c.map {
            if !v.is_object() {
                return Err(c.err(name, "is not an object of the settings its module takes"));
            }
            let own = c.sub(name)?.expect("an object");
            let unquantized = own.present("bits") && own.size("bits", None)? >= 16;
            let own = match unquantized {
                true => None,
                false => Some(own_groups(&own, bits, groups)?),
            };
            extra.push((name.to_string(), own));
        }
    }
    if awq {
        // AWQ's form has no per-module groups (a module in other bits is not read yet), and
        // its blocks are every decoder layer's.
        let mut skip = Vec::new();
        for (name, own) in extra {
            match own {
                None => skip.push(name),
                Some(g) if g == groups => {}
                Some(_) => return Err(q.err(
                    "extra_config",
                    "gives a module other groups in AWQ's packing, which anatomy does not read yet",
                )),
            }
        }
        return Ok(Quant::Awq {
            groups,
            gemv: false,
            skip,
        });
    }
    // As GPTQModel's `dynamic`, the first that matches deciding: each module named (its dots
    // literal, unless AutoRound wrote a pattern), then the blocks, then nothing else.
    let mut dynamic: Vec<Dynamic> = (extra.into_iter())
        .map(|(name, groups)| Dynamic {
            pattern: match name.contains(['*', '(', '[', '\\']) {
                true => name,
                false => format!("{}$", regex::escape(&name)),
            },
            groups,
        })
        .collect();
    if !blocks.is_empty() {
        dynamic.extend(blocks.iter().map(|b| Dynamic {
            pattern: format!("{}\\.", regex::escape(b)),
            groups: Some(groups),
        }));
        dynamic.push(Dynamic {
            pattern: ".*".into(),
            groups: None,
        });
    }
    Ok(Quant::Gptq {
        groups,
        v1: true,
        dynamic,
        auto_round: true,
    })
}

/// A module's own `bits` (of `allowed`) and `group_size`, each the config's where absent.
fn own_groups(own: &Config, allowed: &[u64], config: Groups) -> Result<Groups> {
    Ok(Groups {
        bits: int(own, "bits", allowed, Some(config.bits))?,
        group: match own.present("group_size") {
            true => group(own, "group_size")?,
            false => config.group,
        },
        zeros: true,
    })
}

/// A list of module names or patterns (`modules_to_not_convert`, `ignore`); none when absent.
fn names(c: &Config, key: &str, what: &str) -> Result<Vec<String>> {
    let list = c.list_any(key, |v| v.as_str().map(str::to_string), what)?;
    Ok(list.unwrap_or_default())
}

/// `group_size`: a positive width, or -1 for one group per output channel.
fn group(c: &Config, key: &str) -> Result<Option<u64>> {
    match c.get(key).and_then(|v| v.as_i64()) {
        Some(-1) => Ok(None),
        _ => c.size(key, Some(128)).map(Some),
    }
}

impl Declared {
    pub fn read(top: &Config) -> Result<Option<Declared>> {
        let Some(quant) = Quant::read(top)? else {
            return Ok(None);
        };
        let dtype = top.get("dtype").or_else(|| top.get("torch_dtype"));
        let float = match dtype.and_then(|d| d.as_str()) {
            Some("float32") => Dtype::F32,
            Some("float16") => Dtype::F16,
            Some(_) | None => Dtype::BF16,
        };
        Ok(Some(Declared { quant, float }))
    }

    /// The bytes of one stored tensor of `shape`: its packed dtype's, else the float type's.
    pub fn bytes(&self, shape: &[u64], dtype: Option<Dtype>) -> u128 {
        shape.iter().map(|&d| d as u128).product::<u128>() * dtype.unwrap_or(self.float).bytes()
    }
}

impl Quant {
    /// The format `top` declares, if any.
    pub fn read(top: &Config) -> Result<Option<Quant>> {
        // mlx-lm copies its `quantization` into `quantization_config` (for the Hub's model tree),
        // without a `quant_method`: read as MLX's.
        let mlx_copy = top.present("quantization")
            && top
                .sub("quantization_config")?
                .is_some_and(|q| !q.has("quant_method"));
        if let Some(q) = top.detached("quantization_config")?.filter(|_| !mlx_copy) {
            let method = q.string("quant_method", "")?;
            return Ok(Some(match method.as_str() {
                "gptq" => {
                    let format = q.string("checkpoint_format", "gptq")?;
                    if !matches!(format.as_str(), "gptq" | "gptq_v2") {
                        return Err(q.err(
                            "checkpoint_format",
                            format!(
                                "is `{format}`; anatomy reads GPTQ's `gptq` and `gptq_v2` layouts"
                            ),
                        ));
                    }
                    let groups = Groups {
                        bits: int(&q, "bits", &[2, 3, 4, 8], None)?,
                        group: group(&q, "group_size")?,
                        zeros: true,
                    };
                    Quant::Gptq {
                        dynamic: dynamic(&q, groups)?,
                        groups,
                        v1: format == "gptq",
                        auto_round: false,
                    }
                }
                "auto-round" | "intel/auto-round" => auto_round(&q)?,
                "awq" => {
                    let version = q.string("version", "gemm")?.to_ascii_lowercase();
                    let gemv = match version.as_str() {
                        "gemm" => false,
                        "gemv" => true,
                        _ => {
                            return Err(q.err(
                                "version",
                                format!(
                                    "is `{version}`; anatomy reads AWQ's `gemm` and `gemv` layouts"
                                ),
                            ))
                        }
                    };
                    let groups = Groups {
                        bits: int(&q, "bits", &[4], None)?,
                        group: group(&q, "group_size")?,
                        zeros: q.flag("zero_point", true)?,
                    };
                    if gemv && !matches!(groups.group, Some(32 | 64) | Some(128..)) {
                        return Err(q.err(
                            "group_size",
                            "is not one AWQ's GEMV layout packs: 32, 64 or 128 and up",
                        ));
                    }
                    let skip = names(&q, "modules_to_not_convert", "a module name")?;
                    Quant::Awq { groups, gemv, skip }
                }
                "compressed-tensors" => compressed(&q)?,
                "fp8" => fp8(&q)?,
                "mlx" => mlx(&q)?,
                "bitsandbytes" => bnb(&q)?,
                "" => {
                    return Err(q.err(
                        "quant_method",
                        "is missing; it names the format the weights are stored in",
                    ))
                }
                other => Quant::Unread(other.to_string()),
            }));
        }
        match top.detached("quantization")? {
            Some(q) => mlx(&q).map(Some),
            None => Ok(None),
        }
    }

    /// `GPTQ int4, groups of 128`.
    pub fn describe(&self) -> String {
        let g = |g: &Groups| match g.group {
            Some(n) => format!("int{}, groups of {n}", g.bits),
            None => format!("int{}, a scale per output channel", g.bits),
        };
        match self {
            Quant::Gptq {
                groups,
                auto_round: false,
                ..
            } => format!("GPTQ {}", g(groups)),
            Quant::Gptq { groups, .. } => format!("AutoRound (GPTQ layout) {}", g(groups)),
            Quant::Awq { groups, gemv, .. } => {
                let layout = if *gemv { "GEMV" } else { "GEMM" };
                format!("AWQ {layout} {}", g(groups))
            }
            Quant::Compressed { schemes, .. } => {
                let kinds: Vec<String> = schemes.iter().map(|s| s.kind.describe()).collect();
                format!("compressed-tensors {}", kinds.join("; "))
            }
            Quant::Mlx {
                bits,
                group,
                layers,
                ..
            } => {
                let own = layers
                    .iter()
                    .filter(|(_, c)| *c != Some((*bits, *group)))
                    .count();
                match own {
                    0 => format!("MLX int{bits}, groups of {group}"),
                    n => format!("MLX int{bits}, groups of {group} ({n} layers otherwise)"),
                }
            }
            Quant::Bnb(b) => match b.kind {
                BnbKind::Int8 => "bitsandbytes LLM.int8()".into(),
                k => format!(
                    "bitsandbytes {}{}",
                    k.name().to_uppercase(),
                    if b.double { ", double quantized" } else { "" }
                ),
            },
            Quant::Fp8 { block: (r, c), .. } => format!("fp8 e4m3, a scale per {r}×{c} block"),
            Quant::Unread(m) => m.clone(),
        }
    }

    /// Whether `unpack` reads the format's matrices (the loader reads fine-grained fp8 itself).
    pub fn unpacks(&self) -> bool {
        self.packs() && !matches!(self, Quant::Fp8 { .. })
    }

    /// Whether matrices are stored packed in a way `parts` names.
    pub fn packs(&self) -> bool {
        match self {
            Quant::Gptq { .. }
            | Quant::Awq { .. }
            | Quant::Compressed { .. }
            | Quant::Mlx { .. }
            | Quant::Fp8 { .. }
            | Quant::Bnb(_) => true,
            Quant::Unread(_) => false,
        }
    }

    /// The format of a matrix packed so: `GPTQ int4, groups of 128`.
    pub fn format(&self, p: Packing) -> String {
        match self {
            Quant::Compressed { .. } => format!("compressed-tensors {}", p.describe()),
            Quant::Gptq { .. }
            | Quant::Awq { .. }
            | Quant::Mlx { .. }
            | Quant::Fp8 { .. }
            | Quant::Bnb(_)
            | Quant::Unread(_) => self.describe(),
        }
    }

    /// The packing of the matrix at `module` (`model.layers.0.self_attn.q_proj`), `[out, inp]`,
    /// an embedding when `lookup` (which only MLX quantizes); `None` where it stays unquantized.
    pub fn packing(&self, module: &str, out: u64, inp: u64, lookup: bool) -> Option<Packing> {
        let head = module == "lm_head" || module.ends_with(".lm_head");
        // Whole 32-bit words along the outputs (3 bits: 32 values in three words).
        let fits = |g: &Groups| {
            g.group.is_none_or(|n| inp.is_multiple_of(n))
                && out.saturating_mul(g.bits).is_multiple_of(32)
        };
        match self {
            // GPTQ and AWQ quantize the decoder's linear layers, not the head.
            Quant::Gptq { auto_round, .. } => {
                let g = self.gptq_groups(module)?;
                (!lookup && !head && fits(&g) && inp.saturating_mul(g.bits).is_multiple_of(32))
                    .then_some(Packing::PackedInt {
                        groups: g,
                        g_idx: !auto_round,
                    })
            }
            Quant::Awq {
                groups: g, skip, ..
            } if !lookup && !head && fits(g) && !skip.iter().any(|p| skips(p, module)) => {
                Some(Packing::PackedInt {
                    groups: *g,
                    g_idx: false,
                })
            }
            Quant::Compressed { schemes, ignore } if !lookup => {
                if ignore.iter().any(|p| matches(p, module)) {
                    return None;
                }
                schemes
                    .iter()
                    .find(|s| {
                        s.targets
                            .iter()
                            .any(|t| t == "Linear" || matches(t, module))
                    })
                    .map(|s| s.kind)
            }
            // MLX's groups carry a bias (`biases`), not a zero point.
            Quant::Mlx { .. } => {
                let (bits, group) = self.mlx_layer(module)?;
                inp.is_multiple_of(group).then_some(Packing::PackedInt {
                    groups: Groups {
                        bits,
                        group: Some(group),
                        zeros: false,
                    },
                    g_idx: false,
                })
            }
            // transformers replaces every linear layer but the head and the skipped ones; its
            // 4-bit codes pack two a byte.
            Quant::Bnb(b)
                if !lookup
                    && !head
                    && !b.skip.iter().any(|p| skips(p, module))
                    && (b.kind == BnbKind::Int8 || (out * inp).is_multiple_of(2)) =>
            {
                Some(match b.kind {
                    BnbKind::Int8 => Packing::Bnb8,
                    k => Packing::Bnb4 {
                        fp4: k == BnbKind::Fp4,
                        double: b.double,
                    },
                })
            }
            // transformers' fp8 replaces every linear layer but the head and the skipped ones.
            Quant::Fp8 {
                block: (r, c),
                skip,
            } if !lookup && !head && !skip.iter().any(|p| skips(p, module)) => Some(Packing::Fp8 {
                scale: Fp8Scale::Block(*r, *c),
                input_scale: false,
            }),
            Quant::Awq { .. }
            | Quant::Compressed { .. }
            | Quant::Fp8 { .. }
            | Quant::Bnb(_)
            | Quant::Unread(_) => None,
        }
    }

    /// The stacked tensor's template for the per-expert tensor template `template`
    /// (`….experts.{e}.gate_proj.weight`) where this is MLX stacking its experts (`mlx_switch`).
    pub fn mlx_switch_of(&self, template: &str) -> Option<String> {
        match self {
            Quant::Mlx { switch: true, .. } => {
                let module = template.strip_suffix(".weight")?;
                Some(format!("{}.weight", mlx_switch(module)?))
            }
            Quant::Mlx { switch: false, .. }
            | Quant::Gptq { .. }
            | Quant::Awq { .. }
            | Quant::Compressed { .. }
            | Quant::Fp8 { .. }
            | Quant::Bnb(_)
            | Quant::Unread(_) => None,
        }
    }

    /// GPTQ's groups for the module at `module`: the first `dynamic` pattern's that matches
    /// it, else the config's; `None` where a `-:` pattern leaves it unquantized or the format
    /// is not GPTQ.
    pub fn gptq_groups(&self, module: &str) -> Option<Groups> {
        match self {
            Quant::Gptq {
                groups, dynamic, ..
            } => match dynamic.iter().find(|d| {
                d.pattern == module
                    || compiled(&format!("^(?:{})", d.pattern)).is_some_and(|r| r.is_match(module))
            }) {
                Some(d) => d.groups,
                None => Some(*groups),
            },
            Quant::Awq { .. }
            | Quant::Compressed { .. }
            | Quant::Mlx { .. }
            | Quant::Fp8 { .. }
            | Quant::Bnb(_)
            | Quant::Unread(_) => None,
        }
    }

    /// MLX's bits and group for the module at `module`: its own entry's, else the defaults;
    /// `None` where its entry leaves it unquantized or the format is not MLX.
    pub fn mlx_layer(&self, module: &str) -> Option<(u64, u64)> {
        match self {
            Quant::Mlx {
                bits,
                group,
                layers,
                ..
            } => match layers.iter().find(|(path, _)| path == module) {
                Some((_, choice)) => *choice,
                None => Some((*bits, *group)),
            },
            Quant::Gptq { .. }
            | Quant::Awq { .. }
            | Quant::Compressed { .. }
            | Quant::Fp8 { .. }
            | Quant::Bnb(_)
            | Quant::Unread(_) => None,
        }
    }

    /// The tensors a matrix `[out, inp]` packed so is stored as, beside its module's name.
    pub fn parts(&self, p: Packing, out: u64, inp: u64) -> Vec<Part> {
        let part = |suffix, shape: Vec<u64>, dtype| Part {
            suffix,
            shape,
            dtype,
            any_length: false,
        };
        let groups = |g: &Groups| g.group.map_or(1, |n| inp.div_ceil(n));
        match (self, p) {
            (Quant::Gptq { .. }, Packing::PackedInt { groups: g, g_idx }) => {
                let mut v = vec![
                    part(
                        "qweight",
                        vec![inp.saturating_mul(g.bits) / 32, out],
                        Some(Dtype::I32),
                    ),
                    part(
                        "qzeros",
                        vec![groups(&g), out.saturating_mul(g.bits) / 32],
                        Some(Dtype::I32),
                    ),
                    part("scales", vec![groups(&g), out], Some(Dtype::F16)),
                ];
                if g_idx {
                    v.push(part("g_idx", vec![inp], Some(Dtype::I32)));
                }
                v
            }
            (Quant::Awq { gemv: true, .. }, Packing::PackedInt { groups: g, .. }) => {
                let width = awq_gemv_width(inp, g.group.unwrap_or(inp));
                let mut v = vec![part(
                    "qweight",
                    vec![out, inp.saturating_mul(g.bits) / 32],
                    Some(Dtype::I32),
                )];
                if g.zeros {
                    v.push(part("qzeros", vec![out, width], Some(Dtype::I32)));
                }
                v.push(part(
                    "scales",
                    vec![out, width.saturating_mul(32 / g.bits)],
                    Some(Dtype::F16),
                ));
                v
            }
            (Quant::Awq { gemv: false, .. }, Packing::PackedInt { groups: g, .. }) => {
                let mut v = vec![part(
                    "qweight",
                    vec![inp, out.saturating_mul(g.bits) / 32],
                    Some(Dtype::I32),
                )];
                if g.zeros {
                    v.push(part(
                        "qzeros",
                        vec![groups(&g), out.saturating_mul(g.bits) / 32],
                        Some(Dtype::I32),
                    ));
                }
                v.push(part("scales", vec![groups(&g), out], Some(Dtype::F16)));
                v
            }
            (Quant::Mlx { .. }, Packing::PackedInt { groups: g, .. }) => vec![
                part(
                    "weight",
                    vec![out, inp.saturating_mul(g.bits) / 32],
                    Some(Dtype::U32),
                ),
                part("scales", vec![out, groups(&g)], None),
                part("biases", vec![out, groups(&g)], None),
            ],
            (_, Packing::PackedInt { groups: g, g_idx }) => {
                let mut v = vec![
                    part(
                        "weight_packed",
                        vec![out, inp.saturating_mul(g.bits) / 32],
                        Some(Dtype::I32),
                    ),
                    part("weight_scale", vec![out, groups(&g)], None),
                ];
                if g.zeros {
                    let rows = out.saturating_mul(g.bits).div_ceil(32);
                    v.push(part(
                        "weight_zero_point",
                        vec![rows, groups(&g)],
                        Some(Dtype::I32),
                    ));
                }
                v.push(part("weight_shape", vec![2], Some(Dtype::I64)));
                if g_idx {
                    v.push(part("weight_g_idx", vec![inp], Some(Dtype::I32)));
                }
                v
            }
            (_, Packing::Int8 { groups: g }) => vec![
                part("weight", vec![out, inp], Some(Dtype::I8)),
                part("weight_scale", vec![out, groups(&g)], None),
            ],
            // Fine-grained fp8's scales are inverses by name only: w = q · scale.
            (Quant::Fp8 { .. }, Packing::Fp8 { scale, .. }) => {
                let scales = match scale {
                    Fp8Scale::Block(r, c) => vec![out.div_ceil(r), inp.div_ceil(c)],
                    Fp8Scale::Tensor | Fp8Scale::Channel => vec![out, 1],
                };
                vec![
                    part("weight", vec![out, inp], Some(Dtype::F8E4M3)),
                    part("weight_scale_inv", scales, None),
                ]
            }
            (_, Packing::Fp8 { scale, input_scale }) => {
                let mut v = vec![
                    part("weight", vec![out, inp], Some(Dtype::F8E4M3)),
                    part(
                        "weight_scale",
                        match scale {
                            Fp8Scale::Tensor => vec![1],
                            Fp8Scale::Channel => vec![out, 1],
                            Fp8Scale::Block(r, c) => vec![out.div_ceil(r), inp.div_ceil(c)],
                        },
                        None,
                    ),
                ];
                if input_scale {
                    v.push(part("input_scale", vec![1], None));
                }
                v
            }
            (_, Packing::Bnb4 { fp4, double }) => {
                let blocks = (out * inp).div_ceil(BNB_BLOCK);
                let mut v = vec![
                    part("weight", vec![out * inp / 2, 1], Some(Dtype::U8)),
                    part(
                        "weight.absmax",
                        vec![blocks],
                        Some(if double { Dtype::U8 } else { Dtype::F32 }),
                    ),
                    part("weight.quant_map", vec![16], Some(Dtype::F32)),
                ];
                if double {
                    v.push(part(
                        "weight.nested_absmax",
                        vec![blocks.div_ceil(BNB_NESTED_BLOCK)],
                        Some(Dtype::F32),
                    ));
                    v.push(part("weight.nested_quant_map", vec![256], Some(Dtype::F32)));
                }
                v.push(Part {
                    any_length: true,
                    ..part(
                        if fp4 {
                            "weight.quant_state.bitsandbytes__fp4"
                        } else {
                            "weight.quant_state.bitsandbytes__nf4"
                        },
                        vec![0],
                        Some(Dtype::U8),
                    )
                });
                v
            }
            (_, Packing::Bnb8) => vec![
                part("weight", vec![out, inp], Some(Dtype::I8)),
                part("SCB", vec![out], Some(Dtype::F32)),
                part("weight_format", vec![], Some(Dtype::U8)),
            ],
            (_, Packing::Nvfp4 { input_scale }) => {
                let mut v = vec![
                    part("weight_packed", vec![out, inp / 2], Some(Dtype::U8)),
                    part("weight_scale", vec![out, inp / 16], Some(Dtype::F8E4M3)),
                    part("weight_global_scale", vec![1], Some(Dtype::F32)),
                ];
                if input_scale {
                    v.push(part("input_global_scale", vec![1], Some(Dtype::F32)));
                }
                v
            }
        }
    }
}

impl Packing {
    fn describe(&self) -> String {
        match self {
            Packing::PackedInt { groups: g, .. } => match g.group {
                Some(n) => format!("int{} packed, groups of {n}", g.bits),
                None => format!("int{} packed, a scale per channel", g.bits),
            },
            Packing::Int8 { .. } => "int8".into(),
            Packing::Fp8 { .. } => "fp8".into(),
            Packing::Nvfp4 { .. } => "NVFP4".into(),
            Packing::Bnb4 { fp4: true, .. } => "FP4".into(),
            Packing::Bnb4 { fp4: false, .. } => "NF4".into(),
            Packing::Bnb8 => "LLM.int8()".into(),
        }
    }
}

/// A compressed-tensors target or ignore entry against a module's name: `re:` and a regular
/// expression matched from the start, or the name itself or its last components.
fn matches(pattern: &str, module: &str) -> bool {
    match pattern.strip_prefix("re:") {
        Some(re) => compiled(&format!("^(?:{re})")).is_some_and(|r| r.is_match(module)),
        None => module == pattern || module.ends_with(&format!(".{pattern}")),
    }
}

/// `pattern` compiled once per thread: a config's few patterns are matched against every
/// module of the model (DeepSeek-V3 has some 90,000), and compiling one costs more than
/// matching it. `None` for a pattern that is not a regular expression.
fn compiled(pattern: &str) -> Option<regex::Regex> {
    thread_local! {
        static SEEN: std::cell::RefCell<std::collections::HashMap<String, Option<regex::Regex>>> =
            Default::default();
    }
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if let Some(r) = seen.get(pattern) {
            return r.clone();
        }
        let r = regex::Regex::new(pattern).ok();
        seen.insert(pattern.to_string(), r.clone());
        r
    })
}

/// transformers' `should_convert_module`: a pattern skips the module whose name it ends, or which
/// it matches from the start as a regular expression up to a module boundary (`layers.1` skips
/// `layers.1.mlp.up_proj`, not `layers.11.mlp.up_proj`). The boundary, a lookaround there, is
/// checked as a whole match of each prefix that ends before or after a dot, or at the end.
fn skips(pattern: &str, module: &str) -> bool {
    if module.ends_with(pattern) {
        return true;
    }
    let Some(re) = compiled(&format!("^(?:{pattern})$")) else {
        return false;
    };
    let dots = module.match_indices('.').flat_map(|(i, _)| [i, i + 1]);
    dots.chain([module.len()])
        .any(|k| re.is_match(&module[..k]))
}

fn compressed(q: &Config) -> Result<Quant> {
    let format = q.string("format", "dense")?;
    let ignore = names(q, "ignore", "a module name or `re:` pattern")?;
    let groups = q.sub("config_groups")?.ok_or_else(|| {
        q.err(
            "config_groups",
            "is missing; compressed-tensors names each scheme's targets there",
        )
    })?;
    let mut schemes = Vec::new();
    let names: Vec<String> = groups.map.keys().cloned().collect();
    for name in names {
        let g = groups
            .sub(&name)?
            .ok_or_else(|| groups.err(&name, "must be an object"))?;
        let targets = g
            .list_any(
                "targets",
                |v| v.as_str().map(str::to_string),
                "a module class or name",
            )?
            .unwrap_or_default();
        let Some(w) = g.sub("weights")? else { continue };
        let format = g.string("format", &format)?;
        let bits = w.size("num_bits", None)?;
        let kind = w.string("type", "int")?;
        let strategy = w.string("strategy", "tensor")?;
        let input = g.sub("input_activations")?;
        let input_static = match &input {
            Some(i) => !i.flag("dynamic", false)?,
            None => false,
        };
        let grouped = || -> Result<Groups> {
            Ok(Groups {
                bits,
                group: match strategy.as_str() {
                    "group" | "tensor_group" => Some(w.size("group_size", None)?),
                    "channel" => None,
                    other => {
                        return Err(w.err(
                            "strategy",
                            format!(
                            "is `{other}`; an integer weight is grouped by `group` or `channel`"
                        ),
                        ))
                    }
                },
                zeros: !w.flag("symmetric", true)?,
            })
        };
        let packing = match (format.as_str(), kind.as_str(), bits) {
            ("pack-quantized", "int", 2 | 4 | 8) => Packing::PackedInt {
                groups: grouped()?,
                g_idx: w.opt_string("actorder")?.as_deref() == Some("group"),
            },
            ("int-quantized" | "naive-quantized", "int", 8) => Packing::Int8 { groups: grouped()? },
            ("float-quantized" | "naive-quantized", "float", 8) => Packing::Fp8 {
                scale: match strategy.as_str() {
                    "tensor" => Fp8Scale::Tensor,
                    "channel" => Fp8Scale::Channel,
                    "block" => {
                        let b = w
                            .list_any("block_structure", |v| v.as_u64().filter(|&n| n > 0), "a positive integer")?
                            .filter(|b| b.len() == 2)
                            .ok_or_else(|| w.err("block_structure", "must be [rows, columns] for the block strategy"))?;
                        Fp8Scale::Block(b[0], b[1])
                    }
                    other => return Err(w.err("strategy", format!("is `{other}`; an fp8 weight is scaled by `tensor`, `channel` or `block`"))),
                },
                input_scale: input_static,
            },
            ("nvfp4-pack-quantized", "float", 4) => Packing::Nvfp4 {
                input_scale: input.is_some(),
            },
            (f, t, b) => {
                return Err(g.err(
                    "format",
                    format!("is `{f}` with {t}{b} weights; anatomy reads pack-quantized int2/4/8, int-quantized int8, float-quantized fp8 and nvfp4-pack-quantized"),
                ))
            }
        };
        schemes.push(Scheme {
            targets,
            kind: packing,
        });
    }
    Ok(Quant::Compressed { schemes, ignore })
}

fn bnb(q: &Config) -> Result<Quant> {
    let (four, eight) = (
        q.flag("load_in_4bit", false)?,
        q.flag("load_in_8bit", false)?,
    );
    let kind =
        match (four, eight) {
            (true, false) => match q.string("bnb_4bit_quant_type", "fp4")?.as_str() {
                "nf4" => BnbKind::Nf4,
                "fp4" => BnbKind::Fp4,
                other => {
                    return Err(q.err(
                        "bnb_4bit_quant_type",
                        format!("is `{other}`; bitsandbytes' 4-bit types are `nf4` and `fp4`"),
                    ))
                }
            },
            (false, true) => BnbKind::Int8,
            (true, true) => {
                return Err(q.err(
                    "load_in_8bit",
                    "and load_in_4bit are both true; a checkpoint is stored in one of them",
                ))
            }
            (false, false) => return Err(q.err(
                "load_in_4bit",
                "and load_in_8bit are both false or missing; one says how the weights are stored",
            )),
        };
    if kind != BnbKind::Int8 {
        // Another storage type packs the same bytes into wider elements: not read yet.
        let storage = q.string("bnb_4bit_quant_storage", "uint8")?;
        if storage != "uint8" {
            return Err(q.err(
                "bnb_4bit_quant_storage",
                format!("is `{storage}`; anatomy reads 4-bit codes stored as uint8"),
            ));
        }
    }
    let skip = names(q, "llm_int8_skip_modules", "a module name")?;
    Ok(Quant::Bnb(Bnb {
        kind,
        double: kind != BnbKind::Int8 && q.flag("bnb_4bit_use_double_quant", false)?,
        skip,
    }))
}

fn mlx(q: &Config) -> Result<Quant> {
    let mode = q.string("mode", "affine")?;
    if mode != "affine" {
        return Err(q.err(
            "mode",
            format!("is `{mode}`; anatomy reads MLX's `affine` quantization"),
        ));
    }
    let bits = int(q, "bits", &[2, 3, 4, 5, 6, 8], None)?;
    let group = q.size("group_size", Some(64))?;
    // mlx-lm's per-layer choices, by module path: its own bits and groups (a MoE router in 8
    // bits), `true` for the defaults, `false` for a layer left in its float type.
    let mut layers = Vec::new();
    for (path, v) in q.map {
        if matches!(path.as_str(), "bits" | "group_size" | "mode") {
            continue;
        }
        let choice = match v {
            Value::Bool(false) => None,
            Value::Bool(true) => Some((bits, group)),
            Value::Object(_) => {
                let layer = q.sub(path)?.expect("an object");
                let mode = layer.string("mode", &mode)?;
                if mode != "affine" {
                    return Err(layer.err(
                        "mode",
                        format!("is `{mode}`; anatomy reads MLX's `affine` quantization"),
                    ));
                }
                Some((
                    int(&layer, "bits", &[2, 3, 4, 5, 6, 8], Some(bits))?,
                    layer.size("group_size", Some(group))?,
                ))
            }
            other => {
                return Err(q.err(
                    path,
                    format!(
                        "is {}; a layer's entry is its own bits and group_size, true or false",
                        crate::config::kind(other)
                    ),
                ))
            }
        };
        layers.push((path.clone(), choice));
    }
    Ok(Quant::Mlx {
        bits,
        group,
        layers,
        switch: true,
    })
}

/// transformers' `FineGrainedFP8Config` as saved: e4m3 weights, dynamic activations, a scale
/// per `weight_block_size` block (128 × 128 by default).
fn fp8(q: &Config) -> Result<Quant> {
    // `e4m3`, or torch's name for it as some releases write it (MiniMax-M2's `float8_e4m3fn`).
    let fmt = q.string("fmt", "e4m3")?;
    if !matches!(fmt.as_str(), "e4m3" | "e4m3fn" | "float8_e4m3fn") {
        return Err(q.err(
            "fmt",
            format!("is `{fmt}`; anatomy reads fp8 weights in e4m3"),
        ));
    }
    let what = "two positive sizes: the rows and columns each scale covers";
    let block = q.list_any("weight_block_size", |v| v.as_u64().filter(|&n| n > 0), what)?;
    let block = match block.as_deref() {
        None => (128, 128),
        Some(&[r, c]) => (r, c),
        Some(_) => return Err(q.err("weight_block_size", format!("is not {what}"))),
    };
    let skip = names(q, "modules_to_not_convert", "a module name")?;
    Ok(Quant::Fp8 { block, skip })
}

/// mlx-lm's stacked module for the per-expert module template `template`
/// (`model.layers.{b}.mlp.experts.{e}.gate_proj`, or Mixtral's `….experts.{e}.w1`):
/// `model.layers.{b}.mlp.switch_mlp.gate_proj`, as its models' `sanitize` stacks them; `None`
/// for a projection it does not stack so.
pub fn mlx_switch(template: &str) -> Option<String> {
    let (head, tail) = template.split_once(".experts.{e}.")?;
    let proj = match tail {
        "gate_proj" | "w1" => "gate_proj",
        "up_proj" | "w3" => "up_proj",
        "down_proj" | "w2" => "down_proj",
        _ => return None,
    };
    Some(format!("{head}.switch_mlp.{proj}"))
}

/// A layer's experts of one projection as MLX stacks them: the stacked module
/// (`model.layers.0.mlp.switch_mlp.gate_proj`), the per-expert module it holds with `{e}` for
/// the expert (`model.layers.0.mlp.experts.{e}.gate_proj`), and the expert count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlxStack {
    pub stacked: String,
    pub each: String,
    pub experts: u64,
}

/// Every stack of experts `g`'s checkpoint holds where it is MLX's with `switch`.
pub fn mlx_stacks(g: &Graph) -> Vec<MlxStack> {
    let Some(q) = g.spec.quant.as_ref().map(|d| &d.quant) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in g.params.iter().filter(|p| p.experts > 1) {
        let (Some(stacked), Some(layers)) = (q.mlx_switch_of(&p.hf), &p.layers) else {
            continue;
        };
        let module = |t: &str, b| {
            let name = g.spec.instantiate(t, Some(b), None);
            name.strip_suffix(".weight").map(str::to_string)
        };
        for b in layers.iter() {
            if let (Some(stacked), Some(each)) = (module(&stacked, b), module(&p.hf, b)) {
                out.push(MlxStack {
                    stacked,
                    each,
                    experts: p.experts,
                });
            }
        }
    }
    out
}

/// Which params are matrices `quant` can quantize, and which of those are read by a lookup
/// (embeddings, a tied head's among them): each param's (matrix, looked up). GPTQ's, AWQ's and
/// fine-grained fp8's quantizers never pack a mixture of experts' router (GPTQModel's module
/// trees mark it `!`, AutoAWQ's `modules_to_not_convert` names it, DeepSeek-V3 keeps it bf16).
pub fn matrices(g: &Graph, quant: &Quant) -> Vec<(bool, bool)> {
    let routers = !matches!(
        quant,
        Quant::Gptq { .. } | Quant::Awq { .. } | Quant::Fp8 { .. }
    );
    let mut out = vec![(false, false); g.params.len()];
    let mut whole = vec![false; g.params.len()];
    for v in g.steps() {
        for &i in &v.step.inputs {
            if let TensorKind::Weight { param, .. } = g.tensor(i).kind {
                match v.step.op {
                    Op::MatMul => out[param].0 = true,
                    Op::Lookup => out[param].1 = true,
                    _ => whole[param] = true,
                }
            }
        }
    }
    for (i, p) in g.params.iter().enumerate() {
        let plain =
            p.shape.len() == 2 && p.hf.ends_with(".weight") && p.component != Component::Aux;
        let stacked = p.experts > 1 && !p.hf.contains("{e}");
        let packs = plain && !stacked && (routers || !p.router);
        let m = &mut out[i];
        *m = (packs && (m.0 || m.1) && !whole[i], plain && m.1);
    }
    out
}

#[cfg(test)]
mod tests;
