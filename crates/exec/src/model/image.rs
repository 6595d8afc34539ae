//! An image's features, made by the wrapper's encoder, and their place in the token stream: each
//! placeholder token's embedding replaced by the next feature.

use super::*;
use anatomy_core::spec::{ImageEncoder, Llava};

impl Model {
    /// `x` ([t, hidden], the embeddings of `ids`) with each placeholder's row replaced by the
    /// next of the features of `pixels` ([channels, height, width], as the wrapper's processor
    /// leaves them).
    pub(super) fn with_image(&self, x: Tensor, ids: &[u32], pixels: &Tensor) -> Res<Tensor> {
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
        input.check_placeholders(ids, &spec.name, "ids")?;
        let features = match &input.encoder {
            ImageEncoder::Llava(l) => self.llava(l, pixels)?,
        };
        let slots: Vec<usize> = (ids.iter().enumerate())
            .filter(|(_, &id)| u64::from(id) == input.token)
            .map(|(i, _)| i)
            .collect();
        // Rows of [x; features]: each position its own embedding, or its feature.
        let t = x.dim(0)?;
        let mut rows: Vec<u32> = (0..t as u32).collect();
        for (k, &i) in slots.iter().enumerate() {
            rows[i] = (t + k) as u32;
        }
        let joined = Tensor::cat(&[&x, &features.to_dtype(x.dtype())?], 0)?;
        Ok(joined.index_select(&Tensor::new(rows, &Device::Cpu)?, 0)?)
    }

    /// LLaVA's image features: CLIP's patch embedding, class token and positions, its first
    /// LayerNorm and encoder layers up to the last hidden state read; the states read side by
    /// side (the class token's dropped where the strategy says), through the projector.
    fn llava(&self, l: &Llava, pixels: &Tensor) -> Res<Tensor> {
        let (c, p, g) = (l.channels as usize, l.patch as usize, l.grid() as usize);
        let side = l.image as usize;
        // A batch of one image, as the processor returns it, is the image.
        let pixels = match pixels.dims() {
            [1, _, _, _] => pixels.squeeze(0)?,
            _ => pixels.clone(),
        };
        if pixels.dims() != [c, side, side] {
            return Err(Error::new(
                &self.spec.name,
                "--pixels",
                format!(
                    "holds an array of shape {:?}; this tower takes [{c}, {side}, {side}] (channels, height, width), as the model's processor makes it",
                    pixels.dims()
                ),
            )
            .into());
        }
        let tower = |name: &str| format!("{}{name}", l.tower);
        let w = |name: &str| -> Res<&Tensor> { Ok(self.weights.get(&tower(name))?) };
        let ln = |x: &Tensor, name: &str| -> Res<Tensor> {
            let n = Norm {
                kind: NormKind::Layer { bias: true },
                eps: l.eps,
                unit_offset: false,
                place: NormPlace::Pre,
            };
            Ok(norm(
                x,
                Some(w(&format!("{name}.weight"))?),
                Some(w(&format!("{name}.bias"))?),
                &n,
            )?)
        };
        let lin = |x: &Tensor, name: &str| -> Res<Tensor> {
            let b = w(&format!("{name}.bias"))?;
            self.linear(x, &tower(&format!("{name}.weight")), Some(b))
        };
        // The patch convolution (stride = kernel) as one product over each patch's pixels,
        // channel by row by column as its weight is laid out.
        let cropped = pixels.narrow(1, 0, g * p)?.narrow(2, 0, g * p)?;
        let patches = cropped
            .reshape((c, g, p, g, p))?
            .permute((1, 3, 0, 2, 4))?
            .reshape((g * g, c * p * p))?;
        let d = l.hidden as usize;
        let kernel = w("embeddings.patch_embedding.weight")?;
        let embedded = patches.matmul(&kernel.reshape((d, c * p * p))?.t()?)?;
        let class = w("embeddings.class_embedding")?.reshape((1, d))?;
        let mut h = Tensor::cat(&[&class, &embedded], 0)?
            .broadcast_add(w("embeddings.position_embedding.weight")?)?;
        h = ln(&h, "pre_layrnorm")?;
        // Hidden state 0 is the first layer's input; state i, layer i's output.
        let states: Vec<usize> = l.states().into_iter().map(|s| s as usize).collect();
        let last = l.layers_run() as usize;
        let mut kept = vec![h.clone()];
        let (heads, hd) = (l.heads as usize, d / l.heads as usize);
        for i in 0..last {
            let at = |name: &str| format!("encoder.layers.{i}.{name}");
            let a = ln(&h, &at("layer_norm1"))?;
            let split = |t: Tensor| {
                t.reshape((g * g + 1, heads, hd))
                    .and_then(|t| t.transpose(0, 1))
            };
            let q = split(lin(&a, &at("self_attn.q_proj"))?)?;
            let k = split(lin(&a, &at("self_attn.k_proj"))?)?;
            let v = split(lin(&a, &at("self_attn.v_proj"))?)?;
            let scores = (q.contiguous()?.matmul(&k.contiguous()?.t()?)? * (hd as f64).powf(-0.5))?;
            let o = softmax_rows(&scores)?.matmul(&v.contiguous()?)?;
            let o = o.transpose(0, 1)?.reshape((g * g + 1, d))?;
            h = (h + lin(&o, &at("self_attn.out_proj"))?)?;
            let m = ln(&h, &at("layer_norm2"))?;
            let m = apply_act(l.act, &lin(&m, &at("mlp.fc1"))?)?;
            h = (h + lin(&m, &at("mlp.fc2"))?)?;
            kept.push(h.clone());
        }
        let from = usize::from(l.drop_class);
        let picked = states
            .iter()
            .map(|&s| kept[s].narrow(0, from, g * g + 1 - from))
            .collect::<R<Vec<_>>>()?;
        let joined = Tensor::cat(&picked, 1)?;
        let proj = |x: &Tensor, name: &str| -> Res<Tensor> {
            let name = format!("{}{name}", l.projector);
            let b = match l.projector_bias {
                true => Some(self.weights.get(&format!("{name}.bias"))?),
                false => None,
            };
            self.linear(x, &format!("{name}.weight"), b)
        };
        let y = apply_act(l.projector_act, &proj(&joined, "linear_1")?)?;
        proj(&y, "linear_2")
    }
}

/// Softmax over the last dim, each row by the executor's own softmax.
fn softmax_rows(x: &Tensor) -> R<Tensor> {
    let n = x.dim(D::Minus1)?;
    let mut v: Vec<f32> = x.flatten_all()?.to_vec1()?;
    v.chunks_mut(n)
        .for_each(|row| crate::math::softmax(row, None));
    Tensor::from_vec(v, x.dims(), &Device::Cpu)
}
