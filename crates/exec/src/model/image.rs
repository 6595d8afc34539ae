//! An image's features, made by the wrapper's encoder, and their place in the token stream: each
//! placeholder token's embedding replaced by the next feature.

use super::*;
use anatomy_core::spec::{
    AnyRes, AyaVision, DeepseekVlVision, Gemma3Vision, GitVision, Idefics3Vision, ImageEncoder,
    InternVlVision, Llama4Vision, Llava, LlavaNext, LlavaOnevision, PaliGemmaVision, PixtralVision,
    Qwen25Vision, Qwen2Vision, Qwen3Vision, Reading, VisionTower,
};

/// An image as a model takes it: its pixel values as its processor leaves them, and the
/// image's own size (height, width) where it is known, which LLaVA-NeXT's features follow.
#[derive(Debug, Clone)]
pub struct Pixels {
    pub values: Tensor,
    pub size: Option<[u64; 2]>,
}

impl From<Tensor> for Pixels {
    fn from(values: Tensor) -> Pixels {
        Pixels { values, size: None }
    }
}

impl Model {
    /// `x` ([t, hidden], the embeddings of `ids`) with each placeholder's row replaced by the
    /// next of the features of `pixels` (`image_features`).
    pub(super) fn with_image(&self, x: Tensor, ids: &[u32], pixels: &Pixels) -> Res<Tensor> {
        let features = self.image_features(ids, pixels)?;
        let token = self.spec.image.as_ref().and_then(|i| i.token);
        let slots: Vec<usize> = (ids.iter().enumerate())
            .filter(|(_, &id)| Some(u64::from(id)) == token)
            .map(|(i, _)| i)
            .collect();
        *self.image_slots.borrow_mut() = slots.iter().map(|&i| i as u32).collect();
        // Rows of [x; features]: each position its own embedding, or its feature.
        let t = x.dim(0)?;
        let mut rows: Vec<u32> = (0..t as u32).collect();
        for (k, &i) in slots.iter().enumerate() {
            rows[i] = (t + k) as u32;
        }
        let joined = Tensor::cat(&[&x, &features.to_dtype(x.dtype())?], 0)?;
        Ok(joined.index_select(&Tensor::new(rows, &Device::Cpu)?, 0)?)
    }

    /// The features of `image` (its pixels [channels, height, width], as the wrapper's
    /// processor leaves them), [features, hidden], once the image fits the tower and `ids` hold
    /// a placeholder for each (where the model has placeholders).
    pub(super) fn image_features(&self, ids: &[u32], image: &Pixels) -> Res<Tensor> {
        let spec = &self.spec;
        let Some(input) = &spec.image else {
            return Err(Error::new(
                &spec.name,
                "--pixels",
                format!(
                    "is given, but anatomy runs no image through a {} ({}); give a text prompt",
                    spec.family, spec.model_type
                ),
            )
            .into());
        };
        let (pixels, misfit) = one_image(&input.encoder, &image.values)?;
        if let Some(want) = misfit {
            return Err(Error::new(
                &spec.name,
                "--pixels",
                format!(
                    "holds an array of shape {:?}; this tower takes {want}, as the model's processor makes it",
                    pixels.dims()
                ),
            )
            .into());
        }
        if let (Reading::Fitted { .. }, None) = (input.encoder.reading(), image.size) {
            return Err(Error::new(&spec.name, "--pixels", "are given without the image's own size, which LLaVA-NeXT's and LLaVA-OneVision's features follow (their processor's image_sizes): give the image with --image").into());
        }
        let n = input.encoder.features_of(pixels.dims(), image.size);
        input.check_placeholders(ids, n, &spec.name, "ids")?;
        let features = match &input.encoder {
            ImageEncoder::Llava(l) => self.llava(l, &pixels)?,
            ImageEncoder::LlavaNext(l) => {
                let size = image.size.unwrap_or(l.anyres.stated(&l.base.tower));
                self.llava_next(l, &pixels, size)?
            }
            ImageEncoder::LlavaOnevision(o) => {
                let size = image.size.unwrap_or(o.anyres.stated(&o.tower));
                self.llava_onevision(o, &pixels, size)?
            }
            ImageEncoder::Gemma3(g) => self.gemma3(g, &pixels)?,
            ImageEncoder::PaliGemma(p) => self.paligemma(p, &pixels)?,
            ImageEncoder::Qwen2Vl(q) => self.qwen_vl(Qwen::Two(q), &pixels)?.0,
            ImageEncoder::Qwen25Vl(q) => self.qwen_vl(Qwen::Windowed(q), &pixels)?.0,
            ImageEncoder::Qwen3Vl(q) => {
                let (features, deep) = self.qwen_vl(Qwen::Three(q), &pixels)?;
                *self.deepstack.borrow_mut() = Some(deep);
                features
            }
            ImageEncoder::Llama4(l) => self.llama4(l, &pixels)?,
            ImageEncoder::Pixtral(p) => self.pixtral(p, &pixels)?,
            ImageEncoder::InternVl(i) => self.internvl(i, &pixels)?,
            ImageEncoder::Aya(a) => self.aya(a, &pixels)?,
            ImageEncoder::Git(g) => self.git(g, &pixels)?,
            ImageEncoder::DeepseekVl(d) => self.deepseek_vl(d, &pixels)?,
            ImageEncoder::Idefics3(i) => self.idefics3(i, &pixels)?,
        };
        Ok(features)
    }

    /// LLaVA's image features: CLIP's patch embedding, class token and positions, its first
    /// LayerNorm and encoder layers up to the last hidden state read; the states read side by
    /// side (the class token's dropped where the strategy says), through the projector.
    fn llava(&self, l: &Llava, pixels: &Tensor) -> Res<Tensor> {
        let t = &l.tower;
        let g = t.grid() as usize;
        let mut h = self.clip_embed(t, pixels)?;
        // Hidden state 0 is the first layer's input; state i, layer i's output.
        let states: Vec<usize> = l.states().into_iter().map(|s| s as usize).collect();
        let last = l.layers_run() as usize;
        let mut kept = vec![h.clone()];
        for i in 0..last {
            h = self.vit_layer(t, i, h)?;
            kept.push(h.clone());
        }
        let from = usize::from(l.drop_class);
        let picked = states
            .iter()
            .map(|&s| kept[s].narrow(0, from, g * g + 1 - from))
            .collect::<R<Vec<_>>>()?;
        let mut joined = Tensor::cat(&picked, 1)?;
        // VipLlava's LayerNorm over the joined states.
        if let Some(eps) = l.projector_norm {
            let name = format!("{}projector_layernorm", l.projector);
            joined = self.layer_norm(&joined, &name, eps)?;
        }
        self.two_maps((&l.projector, l.projector_bias, l.projector_act), &joined)
    }

    /// LLaVA's projector under `prefix`: `linear_1` (biased where `bias`), `act`, `linear_2`.
    fn two_maps(&self, (prefix, bias, act): (&str, bool, Act), x: &Tensor) -> Res<Tensor> {
        let map = |x: &Tensor, name: &str| -> Res<Tensor> {
            let name = format!("{prefix}{name}");
            let b = match bias {
                true => Some(self.weights.get(&format!("{name}.bias"))?),
                false => None,
            };
            self.linear(x, &format!("{name}.weight"), b)
        };
        map(&apply_act(act, &map(x, "linear_1")?)?, "linear_2")
    }

    /// LLaVA-NeXT's image features: LLaVA's of each tile of `pixels` ([tiles, channels, side,
    /// side]: the whole image's, then the canvas's row by row), packed (`pack_tiles`) for an
    /// image of `size` (height, width).
    fn llava_next(&self, l: &LlavaNext, pixels: &Tensor, size: [u64; 2]) -> Res<Tensor> {
        let n = self.tile_count(&l.anyres, &l.base.tower, pixels, size)?;
        let parts = (0..n)
            .map(|k| self.llava(&l.base, &pixels.get(k)?))
            .collect::<Res<Vec<_>>>()?;
        self.pack_tiles(&l.anyres, &l.base.tower, parts, size)
    }

    /// LLaVA-OneVision's image features: SigLIP's hidden states read of each tile of `pixels`
    /// (before its last LayerNorm), side by side through LLaVA's projector, packed
    /// (`pack_tiles`) for an image of `size`.
    fn llava_onevision(&self, o: &LlavaOnevision, pixels: &Tensor, size: [u64; 2]) -> Res<Tensor> {
        let t = &o.tower;
        let n = self.tile_count(&o.anyres, t, pixels, size)?;
        let read: Vec<usize> = o.states().into_iter().map(|s| s as usize).collect();
        let last = read.iter().copied().max().unwrap_or(0);
        let mut parts = Vec::with_capacity(n);
        for k in 0..n {
            let mut h = self.siglip_state(t, &pixels.get(k)?, 0)?;
            let mut kept = vec![h.clone()];
            for i in 0..last {
                h = self.vit_layer(t, i, h)?;
                kept.push(h.clone());
            }
            let joined = Tensor::cat(&read.iter().map(|&r| &kept[r]).collect::<Vec<_>>(), 1)?;
            let projector = (o.projector.as_str(), o.projector_bias, o.projector_act);
            parts.push(self.two_maps(projector, &joined)?);
        }
        self.pack_tiles(&o.anyres, t, parts, size)
    }

    /// The tiles in `pixels` ([tiles, channels, side, side]), once they are as many as an image
    /// of `size` makes (the whole image's and its canvas's); else an error saying how many.
    fn tile_count(
        &self,
        a: &AnyRes,
        t: &VisionTower,
        pixels: &Tensor,
        size: [u64; 2],
    ) -> Res<usize> {
        let tiles = match pixels.dims() {
            [n, _, _, _] => *n,
            _ => 1,
        };
        let want = a.tiles(t, size) as usize;
        if tiles != want {
            return Err(Error::new(&self.spec.name, "--pixels", format!("hold {tiles} tiles; an image of {}×{} pixels is {want} as its processor cuts it (the whole image's and its canvas's)", size[1], size[0])).into());
        }
        Ok(tiles)
    }

    /// The features of an image of `size` from its tiles' (`parts`, [grid², hidden] each: the
    /// whole image's, then the canvas's row by row): the whole image's, then the canvas's laid
    /// back into its grid (feature (r, c) is tile (r / g, c / g)'s patch (r % g, c % g)), the
    /// rows or columns of its padding dropped, resized (bilinear) where OneVision's bound says,
    /// and the newline vector after each row.
    fn pack_tiles(
        &self,
        a: &AnyRes,
        t: &VisionTower,
        parts: Vec<Tensor>,
        size: [u64; 2],
    ) -> Res<Tensor> {
        let g = t.grid() as usize;
        let whole = parts[0].clone();
        let newline = self.weights.get(&a.newline)?.to_dtype(whole.dtype())?;
        let u = a.unpadded(t, size);
        let across = u.tiles[1] as usize;
        let rows: Vec<u32> = (u.top as usize..(u.top + u.rows) as usize)
            .flat_map(|r| {
                (u.left as usize..(u.left + u.cols) as usize).map(move |c| {
                    ((1 + (r / g) * across + c / g) * g * g + (r % g) * g + c % g) as u32
                })
            })
            .collect();
        let canvas = Tensor::cat(&parts, 0)?.index_select(&Tensor::new(rows, &Device::Cpu)?, 0)?;
        let d = canvas.dim(1)?;
        let mut grid = canvas.reshape((u.rows as usize, u.cols as usize, d))?;
        if let Some([oh, ow]) = u.resized {
            grid = bilinear(&grid, oh as usize, ow as usize)?;
        }
        let height = grid.dim(0)?;
        let ends = newline
            .reshape((1, 1, d))?
            .broadcast_as((height, 1, d))?
            .contiguous()?;
        let packed = Tensor::cat(&[&grid, &ends], 1)?.reshape(((), d))?;
        Ok(Tensor::cat(&[&whole, &packed], 0)?)
    }

    /// CLIP's embeddings of one image: the patches, the class token before them, a learned
    /// position each, the first LayerNorm: [1 + grid², width].
    fn clip_embed(&self, t: &VisionTower, pixels: &Tensor) -> Res<Tensor> {
        let w =
            |name: &str| -> Res<&Tensor> { Ok(self.weights.get(&format!("{}{name}", t.prefix))?) };
        let embedded = self.patch_embed(t, pixels, "embeddings.patch_embedding.weight")?;
        let class = w("embeddings.class_embedding")?.reshape((1, t.hidden as usize))?;
        let h = Tensor::cat(&[&class, &embedded], 0)?
            .broadcast_add(w("embeddings.position_embedding.weight")?)?;
        self.layer_norm(&h, &format!("{}pre_layrnorm", t.prefix), t.eps)
    }

    /// GIT's image features: CLIP's vision model through every layer to its last LayerNorm,
    /// the class token's kept, then the projection's biased map and LayerNorm.
    fn git(&self, g: &GitVision, pixels: &Tensor) -> Res<Tensor> {
        let t = &g.tower;
        let mut h = self.clip_embed(t, pixels)?;
        for i in 0..t.depth as usize {
            h = self.vit_layer(t, i, h)?;
        }
        h = self.layer_norm(&h, &format!("{}post_layernorm", t.prefix), t.eps)?;
        let map = format!("{}0", g.projector);
        let bias = self.weights.get(&format!("{map}.bias"))?;
        let y = self.linear(&h, &format!("{map}.weight"), Some(bias))?;
        self.layer_norm(&y, &format!("{}1", g.projector), t.eps)
    }

    /// The tower's patch convolution (stride = kernel, no padding; its weight under `kernel`)
    /// over one image as the processor leaves it, as one product over each patch's pixels,
    /// channel by row by column as its weight is laid out: [grid², width]. (Llama 4's unfolded
    /// patches through a linear map are the same product.)
    fn patch_embed(&self, t: &VisionTower, pixels: &Tensor, kernel: &str) -> Res<Tensor> {
        let (c, p, g) = (t.channels as usize, t.patch as usize, t.grid() as usize);
        let patches = pixels
            .narrow(1, 0, g * p)?
            .narrow(2, 0, g * p)?
            .reshape((c, g, p, g, p))?
            .permute((1, 3, 0, 2, 4))?
            .reshape((g * g, c * p * p))?;
        let kernel = self.weights.get(&format!("{}{kernel}", t.prefix))?;
        let d = kernel.dim(0)?;
        Ok(patches.matmul(&kernel.reshape((d, c * p * p))?.t()?)?)
    }

    /// The LayerNorm (scale and shift) stored under `name`.
    fn layer_norm(&self, x: &Tensor, name: &str, eps: f64) -> Res<Tensor> {
        let n = Norm {
            kind: NormKind::Layer { bias: true },
            eps,
            unit_offset: false,
            place: NormPlace::Pre,
        };
        let w = |part: &str| self.weights.get(&format!("{name}.{part}"));
        Ok(norm(x, Some(w("weight")?), Some(w("bias")?), &n)?)
    }

    /// The RMSNorm (a scale) stored under `name`.
    fn rms_norm(&self, x: &Tensor, name: &str, eps: f64) -> Res<Tensor> {
        let n = Norm {
            kind: NormKind::Rms,
            eps,
            unit_offset: false,
            place: NormPlace::Pre,
        };
        let w = self.weights.get(&format!("{name}.weight"))?;
        Ok(norm(x, Some(w), None, &n)?)
    }

    /// A ViT encoder layer (CLIP's, SigLIP's): a LayerNorm, attention among every patch (biased
    /// projections), a LayerNorm, a biased two-layer MLP, each added to the stream.
    fn vit_layer(&self, v: &VisionTower, i: usize, h: Tensor) -> Res<Tensor> {
        let at = |name: &str| format!("{}encoder.layers.{i}.{name}", v.prefix);
        let ln = |x: &Tensor, name: &str| self.layer_norm(x, &at(name), v.eps);
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = self.weights.get(&at(&format!("{name}.bias")))?;
            self.linear(x, &at(&format!("{name}.weight")), Some(b))
        };
        let (n, d) = h.dims2()?;
        let heads = v.heads as usize;
        let hd = d / heads;
        let a = ln(&h, "layer_norm1")?;
        let split = |t: Tensor| t.reshape((n, heads, hd)).and_then(|t| t.transpose(0, 1));
        let q = split(lin(&a, "self_attn.q_proj")?)?;
        let k = split(lin(&a, "self_attn.k_proj")?)?;
        let vv = split(lin(&a, "self_attn.v_proj")?)?;
        let o = attend_all(&q.contiguous()?, &k.contiguous()?, &vv.contiguous()?, None)?;
        let h = (h + lin(&o, "self_attn.out_proj")?)?;
        let m = ln(&h, "layer_norm2")?;
        let m = apply_act(v.act, &lin(&m, "mlp.fc1")?)?;
        Ok((h + lin(&m, "mlp.fc2")?)?)
    }

    /// SigLIP's vision model to its last LayerNorm: [patches, width].
    fn siglip(&self, t: &VisionTower, pixels: &Tensor) -> Res<Tensor> {
        let h = self.siglip_state(t, pixels, t.depth as usize)?;
        self.layer_norm(&h, &format!("{}post_layernorm", t.prefix), t.eps)
    }

    /// SigLIP's hidden state `read` (0 the embeddings', i layer i's output), before its last
    /// LayerNorm: its biased patch convolution and learned positions, its first `read` layers.
    fn siglip_state(&self, t: &VisionTower, pixels: &Tensor, read: usize) -> Res<Tensor> {
        let w = |name: &str| self.weights.get(&format!("{}{name}", t.prefix));
        let mut h = self
            .patch_embed(t, pixels, "embeddings.patch_embedding.weight")?
            .broadcast_add(w("embeddings.patch_embedding.bias")?)?
            .broadcast_add(w("embeddings.position_embedding.weight")?)?;
        for i in 0..read {
            h = self.vit_layer(t, i, h)?;
        }
        Ok(h)
    }

    /// PaliGemma's image features: SigLIP's patches, each through the projector's biased map.
    fn paligemma(&self, p: &PaliGemmaVision, pixels: &Tensor) -> Res<Tensor> {
        let h = self.siglip(&p.tower, pixels)?;
        let name = format!("{}linear", p.projector);
        let b = self.weights.get(&format!("{name}.bias"))?;
        self.linear(&h, &format!("{name}.weight"), Some(b))
    }

    /// DeepSeek-VL's image features: SigLIP's patches, each through the aligner's two biased
    /// maps with exact GELU between.
    fn deepseek_vl(&self, d: &DeepseekVlVision, pixels: &Tensor) -> Res<Tensor> {
        let h = self.siglip(&d.tower, pixels)?;
        let map = |x: &Tensor, name: &str| -> Res<Tensor> {
            let name = format!("{}{name}", d.projector);
            let b = self.weights.get(&format!("{name}.bias"))?;
            self.linear(x, &format!("{name}.weight"), Some(b))
        };
        let y = apply_act(Act::Gelu, &map(&h, "linear1")?)?;
        map(&y, "linear2")
    }

    /// Gemma 3's image features: SigLIP's biased patch convolution and learned positions, its
    /// encoder layers and last LayerNorm; the patch grid average-pooled to the features' grid
    /// (row by row), an RMSNorm scaled by 1 + its weight, and the map into the text width.
    fn gemma3(&self, g: &Gemma3Vision, pixels: &Tensor) -> Res<Tensor> {
        let t = &g.tower;
        let grid = t.grid() as usize;
        let h = self.siglip(t, pixels)?;
        // [patches, width] → [width, rows, columns], each pooling window's mean.
        let (k, side, d) = (g.pool() as usize, grid / g.pool() as usize, h.dim(1)?);
        let pooled = h
            .t()?
            .reshape((d, side, k, side, k))?
            .mean(4)?
            .mean(2)?
            .reshape((d, side * side))?
            .t()?;
        let rms = Norm {
            kind: NormKind::Rms,
            eps: t.eps,
            unit_offset: true,
            place: NormPlace::Pre,
        };
        let projector = |name: &str| format!("{}{name}", g.projector);
        let weight = self.weights.get(&projector("mm_soft_emb_norm.weight"))?;
        let normed = norm(&pooled.contiguous()?, Some(weight), None, &rms)?;
        let map = self.weights.get(&projector("mm_input_projection_weight"))?;
        Ok(normed.matmul(&map.to_dtype(DType::F32)?)?)
    }
}

impl Model {
    /// Llama 4's image features: each tile's patches mapped, a class token after them, learned
    /// positions and a LayerNorm; the layers (2-D rotary attention among every token); a
    /// LayerNorm, the class token dropped; each `shuffle`² patches side by side, the adapter's
    /// two GELU maps and the projector's map. The tiles' features one after another.
    fn llama4(&self, l: &Llama4Vision, pixels: &Tensor) -> Res<Tensor> {
        let t = &l.tower;
        let at = |name: &str| format!("{}{name}", t.prefix);
        let w = |name: &str| -> Res<&Tensor> { Ok(self.weights.get(&at(name))?) };
        // One tile ([3, S, S]) or several ([tiles, 3, S, S]), as `misfit` accepted.
        let [c, side] = [t.channels, t.image].map(|n| n as usize);
        let tiles = pixels.reshape(((), c, side, side))?;
        let (d, g, k) = (t.hidden as usize, t.grid() as usize, l.shuffle as usize);
        let (cos, sin) = llama4_rope(g, d / t.heads as usize, l.theta)?;
        let mut out = Vec::new();
        for tile in 0..tiles.dim(0)? {
            let embedded =
                self.patch_embed(t, &tiles.get(tile)?, "patch_embedding.linear.weight")?;
            let class = w("class_embedding")?.reshape((1, d))?;
            let mut h = Tensor::cat(&[&embedded, &class], 0)?
                .broadcast_add(w("positional_embedding_vlm")?)?;
            h = self.layer_norm(&h, &at("layernorm_pre"), t.eps)?;
            for i in 0..t.depth as usize {
                h = self.llama4_layer(t, i, h, (&cos, &sin))?;
            }
            let h = self
                .layer_norm(&h, &at("layernorm_post"), t.eps)?
                .narrow(0, 0, g * g)?;
            // [g², d] → [features, k²·d]: each k×k patches side by side, row offset first.
            let s = g / k;
            let joined = h
                .reshape((s, k, s, k, d))?
                .permute((0, 2, 1, 3, 4))?
                .reshape((s * s, k * k * d))?;
            let lin = |x: &Tensor, name: &str| self.linear(x, &format!("{name}.weight"), None);
            let a = apply_act(Act::Gelu, &lin(&joined, &at("vision_adapter.mlp.fc1"))?)?;
            let a = apply_act(Act::Gelu, &lin(&a, &at("vision_adapter.mlp.fc2"))?)?;
            out.push(lin(&a, &format!("{}linear_1", l.projector))?);
        }
        Ok(Tensor::cat(&out, 0)?)
    }

    /// A Llama 4 vision layer: a LayerNorm, biased Q, K, V (Q and K turned in adjacent pairs by
    /// the tokens' 2-D rotary angles), attention among every token, the biased output map; a
    /// LayerNorm and the biased GELU MLP; each added to the stream.
    fn llama4_layer(
        &self,
        v: &VisionTower,
        i: usize,
        h: Tensor,
        (cos, sin): (&Tensor, &Tensor),
    ) -> Res<Tensor> {
        let at = |name: &str| format!("{}model.layers.{i}.{name}", v.prefix);
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = self.weights.get(&at(&format!("{name}.bias")))?;
            self.linear(x, &at(&format!("{name}.weight")), Some(b))
        };
        let a = self.layer_norm(&h, &at("input_layernorm"), v.eps)?;
        let o = self.rotary_attention(&a, v, &at, ("self_attn.", true), (cos, sin), true)?;
        let h = (h + o)?;
        let m = self.layer_norm(&h, &at("post_attention_layernorm"), v.eps)?;
        let m = apply_act(Act::Gelu, &lin(&m, "mlp.fc1")?)?;
        Ok((h + lin(&m, "mlp.fc2")?)?)
    }
}

impl Model {
    /// InternVL's image features: each tile's biased patch convolution, the class token before
    /// the patches and learned positions; InternViT's layers (attention among every token, Q and
    /// K RMSNormed over the whole width where the tower says so; attention's and the MLP's
    /// outputs scaled by learned vectors); a last LayerNorm where it has one; the class token
    /// dropped, each `shuffle`² patches side by side (row offset first, as the pixel shuffle
    /// joins them), the projector's LayerNorm and two maps. The tiles' features one after another.
    fn internvl(&self, v: &InternVlVision, pixels: &Tensor) -> Res<Tensor> {
        let t = &v.tower;
        let at = |name: &str| format!("{}{name}", t.prefix);
        let w = |name: &str| -> Res<&Tensor> { Ok(self.weights.get(&at(name))?) };
        let [c, side] = [t.channels, t.image].map(|n| n as usize);
        let tiles = pixels.reshape(((), c, side, side))?;
        let (d, g, k) = (t.hidden as usize, t.grid() as usize, v.shuffle as usize);
        let kernel = "embeddings.patch_embeddings.projection";
        let class = w("embeddings.cls_token")?.reshape((1, d))?;
        let positions = match v.positions {
            true => Some(w("embeddings.position_embeddings")?.reshape((g * g + 1, d))?),
            false => None,
        };
        let mut joined = Vec::new();
        for tile in 0..tiles.dim(0)? {
            let embedded = self
                .patch_embed(t, &tiles.get(tile)?, &format!("{kernel}.weight"))?
                .broadcast_add(w(&format!("{kernel}.bias"))?)?;
            let mut h = Tensor::cat(&[&class, &embedded], 0)?;
            if let Some(p) = &positions {
                h = h.broadcast_add(p)?;
            }
            for i in 0..t.depth as usize {
                h = self.intern_vit_layer(v, i, h)?;
            }
            if v.last_norm {
                h = self.layer_norm(&h, &at("layernorm"), t.eps)?;
            }
            // The class token dropped.
            joined.push(pixel_shuffle(&h.narrow(0, 1, g * g)?, g, k)?);
        }
        // The projector over every tile's features at once.
        let p = |name: &str| format!("{}{name}", v.projector);
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = self.weights.get(&p(&format!("{name}.bias")))?;
            self.linear(x, &p(&format!("{name}.weight")), Some(b))
        };
        // torch's LayerNorm default ε.
        let y = self.layer_norm(&Tensor::cat(&joined, 0)?, &p("layer_norm"), 1e-5)?;
        let y = apply_act(v.projector_act, &lin(&y, "linear_1")?)?;
        lin(&y, "linear_2")
    }

    /// Aya Vision's (Command A Vision's) image features: each tile through SigLIP to the hidden
    /// state read (Aya's before its last LayerNorm, Command A's the tower's output), each
    /// `shuffle`² patches side by side (row offset first, as the pixel shuffle joins them); the
    /// projector's LayerNorm (Aya's), its first map, whose second half through SiLU gates the
    /// first, and its second map. The tiles' features one after another.
    fn aya(&self, a: &AyaVision, pixels: &Tensor) -> Res<Tensor> {
        let t = &a.tower;
        let [c, side] = [t.channels, t.image].map(|n| n as usize);
        let tiles = pixels.reshape(((), c, side, side))?;
        let (g, k, read) = (
            t.grid() as usize,
            a.shuffle as usize,
            a.layers_run() as usize,
        );
        let mut joined = Vec::new();
        for tile in 0..tiles.dim(0)? {
            let tile = tiles.get(tile)?;
            let h = match a.last_norm {
                true => self.siglip(t, &tile)?,
                false => self.siglip_state(t, &tile, read)?,
            };
            joined.push(pixel_shuffle(&h, g, k)?);
        }
        // The projector over every tile's features at once.
        let p = |name: &str| format!("{}{name}", a.projector);
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = self.weights.get(&p(&format!("{name}.bias")))?;
            self.linear(x, &p(&format!("{name}.weight")), Some(b))
        };
        let mut y = Tensor::cat(&joined, 0)?;
        if let Some(eps) = a.projector_norm {
            y = self.layer_norm(&y, &p("layernorm"), eps)?;
        }
        let y = lin(&y, "linear_1")?;
        let half = y.dim(1)? / 2;
        let gated = (y.narrow(1, 0, half)? * y.narrow(1, half, half)?.silu()?)?;
        lin(&gated, "linear_2")
    }

    /// Idefics3's (SmolVLM's) image features: each frame (the tiles row by row, then the whole
    /// image) through SigLIP to its last LayerNorm, each `shuffle`² patches side by side (row
    /// offset first), the connector's bias-free map; the frames' features one after another.
    /// A whole frame's patches take their own positions (transformers buckets each patch's
    /// fractional place, which for a frame of the tower's size is the patch's own).
    fn idefics3(&self, v: &Idefics3Vision, pixels: &Tensor) -> Res<Tensor> {
        let t = &v.tower;
        let [c, side] = [t.channels, t.image].map(|n| n as usize);
        let frames = pixels.reshape(((), c, side, side))?;
        let (g, k) = (t.grid() as usize, v.shuffle as usize);
        let mut joined = Vec::new();
        for f in 0..frames.dim(0)? {
            joined.push(pixel_shuffle(&self.siglip(t, &frames.get(f)?)?, g, k)?);
        }
        let name = format!("{}modality_projection.proj.weight", v.projector);
        self.linear(&Tensor::cat(&joined, 0)?, &name, None)
    }

    /// An InternViT layer: a norm, Q, K and V (RMSNormed over the whole width where the tower
    /// says so), attention among every token, the biased output map scaled by `lambda_1`; a
    /// norm and the biased MLP scaled by `lambda_2`; each added to the stream.
    fn intern_vit_layer(&self, v: &InternVlVision, i: usize, h: Tensor) -> Res<Tensor> {
        let t = &v.tower;
        let at = |name: &str| format!("{}encoder.layer.{i}.{name}", t.prefix);
        let lin = |x: &Tensor, name: &str, bias: bool| -> Res<Tensor> {
            let b = match bias {
                true => Some(self.weights.get(&at(&format!("{name}.bias")))?),
                false => None,
            };
            self.linear(x, &at(&format!("{name}.weight")), b)
        };
        let norm = |x: &Tensor, name: &str| match v.rms {
            true => self.rms_norm(x, &at(name), t.eps),
            false => self.layer_norm(x, &at(name), t.eps),
        };
        let (n, d) = h.dims2()?;
        let heads = t.heads as usize;
        let hd = d / heads;
        let a = norm(&h, "layernorm_before")?;
        let mut q = lin(&a, "attention.q_proj", v.qkv_bias)?;
        let mut k = lin(&a, "attention.k_proj", v.qkv_bias)?;
        let vv = lin(&a, "attention.v_proj", v.qkv_bias)?;
        if v.qk_norm {
            // The class's RMSNorm ε, whatever the tower's.
            q = self.rms_norm(&q, &at("attention.q_norm"), 1e-6)?;
            k = self.rms_norm(&k, &at("attention.k_norm"), 1e-6)?;
        }
        let split =
            |t: Tensor| -> R<Tensor> { t.reshape((n, heads, hd))?.transpose(0, 1)?.contiguous() };
        let o = attend_all(&split(q)?, &split(k)?, &split(vv)?, None)?;
        let scale = |name: &str| self.weights.get(&at(name));
        let o = lin(&o, "attention.projection_layer", true)?.broadcast_mul(scale("lambda_1")?)?;
        let h = (h + o)?;
        let m = norm(&h, "layernorm_after")?;
        let m = apply_act(t.act, &lin(&m, "mlp.fc1", true)?)?;
        let m = lin(&m, "mlp.fc2", true)?.broadcast_mul(scale("lambda_2")?)?;
        Ok((h + m)?)
    }
}

impl Model {
    /// Mistral 3's image features: Pixtral's bias-free patch convolution over the image at its
    /// own size and an RMSNorm; its layers up to the hidden state read; the projector's RMSNorm
    /// (the language model's ε), each `merge`² patches side by side (channel by row by column,
    /// as torch's unfold lays them) through the patch merger's map, two maps into the text
    /// width.
    fn pixtral(&self, p: &PixtralVision, pixels: &Tensor) -> Res<Tensor> {
        let t = &p.tower;
        let at = |name: &str| format!("{}{name}", t.prefix);
        let (c, h, w) = pixels.dims3()?;
        let (pp, m, d) = (t.patch as usize, p.merge as usize, t.hidden as usize);
        let (gh, gw) = (h / pp, w / pp);
        let patches = pixels
            .reshape((c, gh, pp, gw, pp))?
            .permute((1, 3, 0, 2, 4))?
            .reshape((gh * gw, c * pp * pp))?;
        let kernel = self.weights.get(&at("patch_conv.weight"))?;
        let kernel = kernel.reshape((d, c * pp * pp))?.to_dtype(DType::F32)?;
        let mut x = self.rms_norm(&patches.matmul(&kernel.t()?)?, &at("ln_pre"), t.eps)?;
        let rows: Vec<[i64; 2]> = (0..gh * gw)
            .map(|i| [(i / gw) as i64, (i % gw) as i64])
            .collect();
        let (cos, sin) = pixtral_rope(&rows, d / t.heads as usize, p.theta)?;
        for i in 0..p.layers_run() as usize {
            x = self.pixtral_layer(t, i, x, (&cos, &sin))?;
        }
        let proj = |name: &str| format!("{}{name}", p.projector);
        // A last odd row or column of patches is dropped, as torch's unfold drops it.
        let (fh, fw) = (gh / m, gw / m);
        let x = self
            .rms_norm(&x, &proj("norm"), self.spec.norm.eps)?
            .reshape((gh, gw, d))?
            .narrow(0, 0, fh * m)?
            .narrow(1, 0, fw * m)?
            .reshape((fh, m, fw, m, d))?
            .permute((0, 2, 4, 1, 3))?
            .reshape((fh * fw, d * m * m))?;
        let x = self.linear(&x, &proj("patch_merger.merging_layer.weight"), None)?;
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = match p.projector_bias {
                true => Some(self.weights.get(&proj(&format!("{name}.bias")))?),
                false => None,
            };
            self.linear(x, &proj(&format!("{name}.weight")), b)
        };
        let y = apply_act(p.projector_act, &lin(&x, "linear_1")?)?;
        lin(&y, "linear_2")
    }

    /// A Pixtral layer: an RMSNorm, bias-free Q, K, V (Q and K turned by the patches' 2-D
    /// rotary tables, rotate-half pairs), attention among every patch, the output map; an
    /// RMSNorm and the gated MLP; each added to the stream.
    fn pixtral_layer(
        &self,
        v: &VisionTower,
        i: usize,
        h: Tensor,
        (cos, sin): (&Tensor, &Tensor),
    ) -> Res<Tensor> {
        let at = |name: &str| format!("{}transformer.layers.{i}.{name}", v.prefix);
        let lin = |x: &Tensor, name: &str| self.linear(x, &at(&format!("{name}.weight")), None);
        let a = self.rms_norm(&h, &at("attention_norm"), v.eps)?;
        let o = self.rotary_attention(&a, v, &at, ("attention.", false), (cos, sin), false)?;
        let h = (h + o)?;
        let m = self.rms_norm(&h, &at("ffn_norm"), v.eps)?;
        let gate = apply_act(v.act, &lin(&m, "feed_forward.gate_proj")?)?;
        let m = lin(
            &(gate * lin(&m, "feed_forward.up_proj")?)?,
            "feed_forward.down_proj",
        )?;
        Ok((h + m)?)
    }
}

impl Model {
    /// A tower's attention among every token of `a` ([n, d]): its projections `q_proj` …
    /// `o_proj` under `at(module)` (biased where `bias`), Q and K turned by the rotary tables
    /// (adjacent pairs where `interleaved`, else rotate-half pairs), the heads side by side
    /// through the output map.
    fn rotary_attention(
        &self,
        a: &Tensor,
        v: &VisionTower,
        at: &dyn Fn(&str) -> String,
        (module, bias): (&str, bool),
        (cos, sin): (&Tensor, &Tensor),
        interleaved: bool,
    ) -> Res<Tensor> {
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let name = at(&format!("{module}{name}"));
            let b = match bias {
                true => Some(self.weights.get(&format!("{name}.bias"))?),
                false => None,
            };
            self.linear(x, &format!("{name}.weight"), b)
        };
        let (n, d) = a.dims2()?;
        let heads = v.heads as usize;
        let split = |t: Tensor| -> Res<Tensor> {
            Ok(t.reshape((n, heads, d / heads))?
                .transpose(0, 1)?
                .contiguous()?)
        };
        let q = crate::rope::rotate(&split(lin(a, "q_proj")?)?, cos, sin, interleaved)?;
        let k = crate::rope::rotate(&split(lin(a, "k_proj")?)?, cos, sin, interleaved)?;
        let o = attend_all(&q, &k, &split(lin(a, "v_proj")?)?, None)?;
        lin(&o, "o_proj")
    }
}

/// A tile's patch states `h` ([g², d], row by row) → [(g / k)², k²·d]: each k×k patches side
/// by side, row offset first, as transformers' pixel shuffle joins them (InternVL's, Aya
/// Vision's).
fn pixel_shuffle(h: &Tensor, g: usize, k: usize) -> R<Tensor> {
    let (s, d) = (g / k, h.dim(1)?);
    h.reshape((s, k, s, k, d))?
        .permute((0, 2, 1, 3, 4))?
        .reshape((s * s, k * k * d))
}

/// Pixtral's 2-D rotary tables for patches at `rows` (row, column), [patches, hd]: a head's
/// first quarter of dims turn by the row (the even frequencies of base `theta`), its second by
/// the column (the odd), written twice (rotate-half pairs); in float32 as transformers takes
/// them.
fn pixtral_rope(rows: &[[i64; 2]], hd: usize, theta: f64) -> R<(Tensor, Tensor)> {
    let inv: Vec<f32> = (0..hd / 2)
        .map(|j| 1.0 / (theta as f32).powf((2 * j) as f32 / hd as f32))
        .collect();
    let (mut cos, mut sin) = (Vec::new(), Vec::new());
    for &[r, c] in rows {
        let angles: Vec<f32> = (inv.iter().step_by(2).map(|f| r as f32 * f))
            .chain(inv.iter().skip(1).step_by(2).map(|f| c as f32 * f))
            .collect();
        for _ in 0..2 {
            cos.extend(angles.iter().map(|a| a.cos()));
            sin.extend(angles.iter().map(|a| a.sin()));
        }
    }
    let n = rows.len();
    Ok((
        Tensor::from_vec(cos, (n, hd), &Device::Cpu)?,
        Tensor::from_vec(sin, (n, hd), &Device::Cpu)?,
    ))
}

/// Llama 4's 2-D rotary tables for a tile of `g`² patches and its class token, [g² + 1, hd]:
/// pair j (adjacent dims) turns by (column + 1)·f_j in a head's first half, by (row + 1)·f_j in
/// its second, the class token (last) not at all; in float32 as transformers takes them. The
/// tables' second half repeats the first (`rope::rotate` reads pairs from the first).
fn llama4_rope(g: usize, hd: usize, theta: f64) -> R<(Tensor, Tensor)> {
    let f: Vec<f32> = (0..hd / 4)
        .map(|j| 1.0 / (theta as f32).powf((2 * j) as f32 / (hd / 2) as f32))
        .collect();
    let (mut cos, mut sin) = (Vec::new(), Vec::new());
    for p in 0..=g * g {
        let (col, row) = match p < g * g {
            true => ((p % g + 1) as f32, (p / g + 1) as f32),
            false => (0.0, 0.0),
        };
        let angles: Vec<f32> = (f.iter().map(|f| col * f))
            .chain(f.iter().map(|f| row * f))
            .collect();
        for _ in 0..2 {
            cos.extend(angles.iter().map(|a| a.cos()));
            sin.extend(angles.iter().map(|a| a.sin()));
        }
    }
    let n = g * g + 1;
    Ok((
        Tensor::from_vec(cos, (n, hd), &Device::Cpu)?,
        Tensor::from_vec(sin, (n, hd), &Device::Cpu)?,
    ))
}

impl Model {
    /// A Qwen image's features: each patch (its frame repeated to the convolution's frames)
    /// through the patch convolution (Qwen3-VL's biased, its learned positions resampled to the
    /// grid added), the blocks (2-D rotary attention among every patch), then the merger: a
    /// LayerNorm, each `merge`² patches side by side, two biased maps with GELU between. And
    /// Qwen3-VL's deep-stack features: the chosen blocks' outputs, each through its own merger.
    fn qwen_vl(&self, kind: Qwen, pixels: &Tensor) -> Res<(Tensor, Vec<Tensor>)> {
        let q = kind.base();
        let t = &q.tower;
        let at = |name: &str| format!("{}{name}", t.prefix);
        let (patches, rows) = qwen2_patches(q, pixels)?;
        let kernel = self.weights.get(&at("patch_embed.proj.weight"))?;
        let d = t.hidden as usize;
        let mut h = patches.matmul(&kernel.reshape((d, ()))?.to_dtype(DType::F32)?.t()?)?;
        let (_, height, width) = pixels.dims3()?;
        let grid = (height / t.patch as usize, width / t.patch as usize);
        if let Qwen::Three(three) = kind {
            let bias = self.weights.get(&at("patch_embed.proj.bias"))?;
            h = h.broadcast_add(&bias.to_dtype(DType::F32)?)?;
            let table = self
                .weights
                .get(&at("pos_embed.weight"))?
                .to_dtype(DType::F32)?;
            h = (h + resampled_positions(&table, three.positions as usize, grid, &rows)?)?;
        }
        let hd = d / t.heads as usize;
        let (cos, sin) = vision_rope(&rows, hd, q.theta)?;
        // Qwen2.5-VL's windows: -inf between patches of two windows, in its windowed blocks.
        let apart = match kind {
            Qwen::Windowed(w) => {
                let win: Vec<u64> = (rows.iter())
                    .map(|&[r, c]| w.window_of(r as u64, c as u64, grid.1 as u64))
                    .collect();
                let mask: Vec<f32> = (win.iter())
                    .flat_map(|a| {
                        win.iter()
                            .map(move |b| if a == b { 0.0 } else { f32::NEG_INFINITY })
                    })
                    .collect();
                Some(Tensor::from_vec(
                    mask,
                    (win.len(), win.len()),
                    &Device::Cpu,
                )?)
            }
            Qwen::Two(_) | Qwen::Three(_) => None,
        };
        let mut deep = Vec::new();
        for i in 0..t.depth as usize {
            let mask = match kind {
                Qwen::Windowed(w) if !w.full.contains(&(i as u64)) => apart.as_ref(),
                Qwen::Windowed(_) | Qwen::Two(_) | Qwen::Three(_) => None,
            };
            h = self.qwen_block(kind, i, h, (&cos, &sin), mask)?;
            let Qwen::Three(three) = kind else {
                continue;
            };
            if let Some(k) = three.deepstack.iter().position(|&b| b == i as u64) {
                let merger = format!("deepstack_merger_list.{k}.");
                deep.push(self.qwen_merger(kind, &h, &merger, true)?);
            }
        }
        Ok((self.qwen_merger(kind, &h, "merger.", false)?, deep))
    }

    /// A Qwen merger under `prefix` of the tower: the patches normed one by one, then each
    /// `merge`² side by side (or side by side, then normed, where `joined_norm`: Qwen3-VL's
    /// deep-stack mergers), two biased maps with GELU between.
    fn qwen_merger(&self, kind: Qwen, h: &Tensor, prefix: &str, joined_norm: bool) -> Res<Tensor> {
        let q = kind.base();
        let at = |name: &str| format!("{}{prefix}{name}", q.tower.prefix);
        let names = match kind {
            Qwen::Three(_) => ["norm", "linear_fc1", "linear_fc2"],
            Qwen::Two(_) | Qwen::Windowed(_) => ["ln_q", "mlp.0", "mlp.2"],
        };
        let joined = (q.tower.hidden * q.merge * q.merge) as usize;
        let x = match joined_norm {
            true => self.qwen_norm(kind, &h.reshape(((), joined))?, &at(names[0]))?,
            false => self
                .qwen_norm(kind, h, &at(names[0]))?
                .reshape(((), joined))?,
        };
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = self.weights.get(&at(&format!("{name}.bias")))?;
            self.linear(x, &at(&format!("{name}.weight")), Some(b))
        };
        let y = apply_act(Act::Gelu, &lin(&x, names[1])?)?;
        lin(&y, names[2])
    }

    /// A Qwen tower's norm under `name` (ε 1e-6): Qwen2.5-VL's RMSNorms, the others'
    /// LayerNorms.
    fn qwen_norm(&self, kind: Qwen, x: &Tensor, name: &str) -> Res<Tensor> {
        match kind {
            Qwen::Windowed(_) => self.rms_norm(x, name, 1e-6),
            Qwen::Two(_) | Qwen::Three(_) => self.layer_norm(x, name, 1e-6),
        }
    }

    /// A Qwen vision block: a norm, the fused biased QKV, each head's Q and K turned by the
    /// patches' 2-D rotary tables, attention among every patch (or within `mask`'s windows), the
    /// biased output map; a norm and the biased MLP (Qwen2.5-VL's gated); each added to the
    /// stream.
    fn qwen_block(
        &self,
        kind: Qwen,
        i: usize,
        h: Tensor,
        (cos, sin): (&Tensor, &Tensor),
        mask: Option<&Tensor>,
    ) -> Res<Tensor> {
        let v = &kind.base().tower;
        let at = |name: &str| format!("{}blocks.{i}.{name}", v.prefix);
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = self.weights.get(&at(&format!("{name}.bias")))?;
            self.linear(x, &at(&format!("{name}.weight")), Some(b))
        };
        let (n, d) = h.dims2()?;
        let heads = v.heads as usize;
        let hd = d / heads;
        let a = self.qwen_norm(kind, &h, &at("norm1"))?;
        // [n, 3 d] → q, k, v each [heads, n, hd].
        let qkv = lin(&a, "attn.qkv")?.reshape((n, 3, heads, hd))?;
        let part = |j: usize| {
            qkv.narrow(1, j, 1)
                .and_then(|x| x.squeeze(1)?.transpose(0, 1))
        };
        let q = crate::rope::rotate(&part(0)?.contiguous()?, cos, sin, false)?;
        let k = crate::rope::rotate(&part(1)?.contiguous()?, cos, sin, false)?;
        let o = attend_all(&q, &k, &part(2)?.contiguous()?, mask)?;
        let h = (h + lin(&o, "attn.proj")?)?;
        let m = self.qwen_norm(kind, &h, &at("norm2"))?;
        let m = match kind {
            Qwen::Two(_) => lin(&apply_act(v.act, &lin(&m, "mlp.fc1")?)?, "mlp.fc2")?,
            Qwen::Three(_) => lin(
                &apply_act(v.act, &lin(&m, "mlp.linear_fc1")?)?,
                "mlp.linear_fc2",
            )?,
            Qwen::Windowed(_) => {
                let gate = apply_act(v.act, &lin(&m, "mlp.gate_proj")?)?;
                lin(&(gate * lin(&m, "mlp.up_proj")?)?, "mlp.down_proj")?
            }
        };
        Ok((h + m)?)
    }

    /// Qwen3-VL's deep-stack: after the language model's layer `b`, the `b`-th deep-stack
    /// feature of the pass's image added at each of its tokens.
    pub(super) fn deepstack(&self, x: Tensor, b: usize) -> Res<Tensor> {
        let deep = self.deepstack.borrow();
        let Some(feature) = deep.as_ref().and_then(|d| d.get(b)) else {
            return Ok(x);
        };
        let slots = Tensor::new(self.image_slots.borrow().as_slice(), &Device::Cpu)?;
        Ok(x.index_add(&slots, &feature.to_dtype(x.dtype())?, 0)?)
    }
}

/// Which Qwen tower runs, with what it adds to Qwen2-VL's.
#[derive(Clone, Copy)]
enum Qwen<'a> {
    Two(&'a Qwen2Vision),
    Windowed(&'a Qwen25Vision),
    Three(&'a Qwen3Vision),
}

impl Qwen<'_> {
    fn base(&self) -> &Qwen2Vision {
        match self {
            Qwen::Two(q) => q,
            Qwen::Windowed(w) => &w.base,
            Qwen::Three(t) => &t.base,
        }
    }
}

/// Qwen3-VL's learned positions ([side², width]) resampled to a `grid` (rows, columns) of
/// patches as transformers resamples them (bilinear, corners aligned, in float32), for each
/// patch of `rows` (its row and column): [patches, width].
fn resampled_positions(
    table: &Tensor,
    side: usize,
    grid: (usize, usize),
    rows: &[[i64; 2]],
) -> R<Tensor> {
    // The two taps along an axis of `size` for index `i`, and their weights.
    let taps = |i: i64, size: usize| -> [(usize, f32); 2] {
        let src = i as f32 * (side - 1) as f32 / (size.max(2) - 1) as f32;
        let floor = src.floor();
        let tap = |o: f32| (floor + o).clamp(0.0, (side - 1) as f32) as usize;
        let weight = |o: f32| (1.0 - (src - floor - o).abs()).max(0.0);
        [(tap(0.0), weight(0.0)), (tap(1.0), weight(1.0))]
    };
    let (d, t) = (table.dim(1)?, table.flatten_all()?.to_vec1::<f32>()?);
    let mut out = Vec::with_capacity(rows.len() * d);
    for &[r, c] in rows {
        let mut row = vec![0f32; d];
        let mut first = true;
        for (hi, hw) in taps(r, grid.0) {
            for (wi, ww) in taps(c, grid.1) {
                let (at, w) = ((hi * side + wi) * d, hw * ww);
                for (o, v) in row.iter_mut().zip(&t[at..at + d]) {
                    // The first tap's product, then each next added, as torch sums them.
                    *o = if first { v * w } else { *o + v * w };
                }
                first = false;
            }
        }
        out.extend(row);
    }
    Tensor::from_vec(out, (rows.len(), d), &Device::Cpu)
}

/// Qwen2-VL's patches of an image `[channels, height, width]` as its processor flattens them:
/// `merge` × `merge` blocks of patches row by row, the patches of a block row by row, each
/// patch channel by frame by row by column (its one frame repeated); and each patch's row and
/// column in the patch grid.
fn qwen2_patches(q: &Qwen2Vision, pixels: &Tensor) -> Res<(Tensor, Vec<[i64; 2]>)> {
    let (c, h, w) = pixels.dims3()?;
    let (p, m, frames) = (q.tower.patch as usize, q.merge as usize, q.frames as usize);
    let (gh, gw) = (h / p, w / p);
    let x: Vec<f32> = pixels.flatten_all()?.to_vec1()?;
    let per = c * frames * p * p;
    let mut out = Vec::with_capacity(gh * gw * per);
    let mut rows = Vec::with_capacity(gh * gw);
    for bh in 0..gh / m {
        for bw in 0..gw / m {
            for i in 0..m {
                for j in 0..m {
                    let (r, col) = (bh * m + i, bw * m + j);
                    rows.push([r as i64, col as i64]);
                    for ch in 0..c {
                        for _ in 0..frames {
                            for y in 0..p {
                                let from = (ch * h + r * p + y) * w + col * p;
                                out.extend_from_slice(&x[from..from + p]);
                            }
                        }
                    }
                }
            }
        }
    }
    let patches = Tensor::from_vec(out, (gh * gw, per), &Device::Cpu)?;
    Ok((patches, rows))
}

/// The tower's 2-D rotary tables, [patches, head dim]: a quarter of a head's dims turn by the
/// patch's row, a quarter by its column, the two written twice (rotate-half pairs), angles in
/// float32 as transformers takes them.
fn vision_rope(rows: &[[i64; 2]], hd: usize, theta: f64) -> R<(Tensor, Tensor)> {
    let spatial = hd / 2;
    let inv: Vec<f32> = (0..spatial)
        .step_by(2)
        .map(|i| (1.0 / theta.powf(i as f64 / spatial as f64)) as f32)
        .collect();
    let mut cos = Vec::with_capacity(rows.len() * hd);
    let mut sin = Vec::with_capacity(rows.len() * hd);
    for pos in rows {
        for _ in 0..2 {
            for &axis in pos {
                for f in &inv {
                    let a = axis as f32 * f;
                    cos.push(a.cos());
                    sin.push(a.sin());
                }
            }
        }
    }
    let n = rows.len();
    Ok((
        Tensor::from_vec(cos, (n, hd), &Device::Cpu)?,
        Tensor::from_vec(sin, (n, hd), &Device::Cpu)?,
    ))
}

/// The features' grid (rows, columns) of a processed image `pixels` for Qwen2-VL: the patch
/// grid over the merge.
pub(super) fn merged_grid(q: &Qwen2Vision, pixels: &Tensor) -> R<(usize, usize)> {
    let dims = pixels.dims();
    let f = q.factor() as usize;
    Ok((dims[dims.len() - 2] / f, dims[dims.len() - 1] / f))
}

/// M-RoPE's positions of `ids` from `start` (transformers' `get_rope_index`): a text token at
/// the next position on all three axes; a run of image placeholder tokens `token` laid over
/// the image's feature grid `grid` (rows × columns: time at the run's start, row and column
/// added to it), after which positions go on from the start plus the grid's longer side. And
/// how far the next position is from `start` + `ids.len()` (what later tokens add).
pub(super) fn positions(
    ids: &[u32],
    token: Option<u64>,
    grid: Option<(usize, usize)>,
    start: i64,
) -> (Vec<[i64; 3]>, i64) {
    let mut out = Vec::with_capacity(ids.len());
    let mut next = start;
    let mut i = 0;
    while i < ids.len() {
        match grid.filter(|_| Some(u64::from(ids[i])) == token) {
            Some((rows, cols)) => {
                // The run's tokens: the grid row by row (a run longer than the grid is the
                // processor's error, checked before).
                for k in 0..rows * cols {
                    let (r, c) = ((k / cols) as i64, (k % cols) as i64);
                    out.push([next, next + r, next + c]);
                }
                i += rows * cols;
                next += rows.max(cols) as i64;
            }
            None => {
                out.push([next; 3]);
                next += 1;
                i += 1;
            }
        }
    }
    out.truncate(ids.len());
    (out, next - start - ids.len() as i64)
}

/// One processed image as `encoder` takes it (a batch of one is the image), and why it does not
/// fit the tower, where it does not (the shape it takes).
pub(crate) fn one_image(encoder: &ImageEncoder, pixels: &Tensor) -> R<(Tensor, Option<String>)> {
    let pixels = match pixels.dims() {
        [1, _, _, _] => pixels.squeeze(0)?,
        _ => pixels.clone(),
    };
    let misfit = encoder.misfit(pixels.dims());
    Ok((pixels, misfit))
}

/// `grid` ([rows, cols, d]) resized to `oh` × `ow` as torch's `interpolate(mode="bilinear")`
/// does it, corners not aligned: each output's source place `(i + 0.5) · in / out - 0.5`
/// (held at 0), between its two nearest rows and columns.
fn bilinear(grid: &Tensor, oh: usize, ow: usize) -> R<Tensor> {
    let (h, w, d) = grid.dims3()?;
    let x: Vec<f32> = grid.flatten_all()?.to_vec1()?;
    let taps = |n: usize, out: usize| -> Vec<(usize, usize, f32)> {
        let scale = n as f32 / out as f32;
        (0..out)
            .map(|i| {
                let src = ((i as f32 + 0.5) * scale - 0.5).max(0.0);
                let i0 = (src.floor() as usize).min(n - 1);
                (i0, (i0 + 1).min(n - 1), (src - i0 as f32).clamp(0.0, 1.0))
            })
            .collect()
    };
    let (ys, xs) = (taps(h, oh), taps(w, ow));
    let at = |y: usize, c: usize, k: usize| x[(y * w + c) * d + k];
    let mut out = Vec::with_capacity(oh * ow * d);
    for &(y0, y1, ly) in &ys {
        for &(x0, x1, lx) in &xs {
            out.extend((0..d).map(|k| {
                let top = (1.0 - lx) * at(y0, x0, k) + lx * at(y0, x1, k);
                let bottom = (1.0 - lx) * at(y1, x0, k) + lx * at(y1, x1, k);
                (1.0 - ly) * top + ly * bottom
            }));
        }
    }
    Tensor::from_vec(out, (oh, ow, d), &Device::Cpu)
}

/// A tower's attention among every token (or where `mask`, [n, n] of 0 and -inf, lets it) of
/// `q`, `k`, `v` ([heads, n, head dim]), scaled by head dim^-½: the heads side by side, [n, d].
fn attend_all(q: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>) -> R<Tensor> {
    let (heads, n, hd) = q.dims3()?;
    let mut scores = (q.matmul(&k.t()?)? * (hd as f64).powf(-0.5))?;
    if let Some(mask) = mask {
        scores = scores.broadcast_add(mask)?;
    }
    let o = softmax_rows(&scores)?.matmul(v)?;
    o.transpose(0, 1)?.reshape((n, heads * hd))
}

/// Softmax over the last dim, each row by the executor's own softmax.
fn softmax_rows(x: &Tensor) -> R<Tensor> {
    let n = x.dim(D::Minus1)?;
    let mut v: Vec<f32> = x.flatten_all()?.to_vec1()?;
    v.chunks_mut(n)
        .for_each(|row| crate::math::softmax(row, None));
    Tensor::from_vec(v, x.dims(), &Device::Cpu)
}

/// The block each of `ids` (at positions from `start`) sees both ways, first and last key,
/// where a run of image placeholder tokens `token` sees itself both ways: a placeholder, its
/// run; any other, itself.
pub(super) fn reach(ids: &[u32], token: Option<u64>, start: usize) -> Vec<(usize, usize)> {
    let mut reach: Vec<(usize, usize)> = (start..start + ids.len()).map(|p| (p, p)).collect();
    let mut i = 0;
    while i < ids.len() {
        let run = ids[i..]
            .iter()
            .take_while(|&&id| Some(u64::from(id)) == token)
            .count();
        for r in &mut reach[i..i + run] {
            *r = (start + i, start + i + run - 1);
        }
        i += run.max(1);
    }
    reach
}

#[cfg(test)]
mod tests {
    /// A run of placeholders sees to its end; other ids, and each of two runs apart, their own.
    #[test]
    fn an_images_tokens_reach_their_runs_end() {
        assert_eq!(
            super::reach(&[1, 9, 9, 9, 2, 9, 9], Some(9), 10),
            [
                (10, 10),
                (11, 13),
                (11, 13),
                (11, 13),
                (14, 14),
                (15, 16),
                (15, 16)
            ]
        );
        assert_eq!(super::reach(&[1, 2], Some(9), 0), [(0, 0), (1, 1)]);
    }

    /// transformers' `get_rope_index` on two text tokens, a 2 × 3 image and a text token:
    /// the image at time 2, rows 2–3, columns 2–4; the text after it from 2 + 3.
    #[test]
    fn an_images_tokens_take_their_grids_positions() {
        let (p, delta) = super::positions(&[1, 2, 9, 9, 9, 9, 9, 9, 3], Some(9), Some((2, 3)), 0);
        assert_eq!(
            p,
            [
                [0, 0, 0],
                [1, 1, 1],
                [2, 2, 2],
                [2, 2, 3],
                [2, 2, 4],
                [2, 3, 2],
                [2, 3, 3],
                [2, 3, 4],
                [5, 5, 5]
            ]
        );
        // The next token at 6, not 9.
        assert_eq!(delta, -3);
        let (p, delta) = super::positions(&[4, 5], Some(9), None, 6);
        assert_eq!((p, delta), (vec![[6; 3], [7; 3]], 0));
    }
}
