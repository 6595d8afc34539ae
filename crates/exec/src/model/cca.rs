//! ZAYA's compressed convolutional attention: Q, K and V made in a compressed space, convolved, and
//! split into heads.

use super::*;

impl Model {
    /// ZAYA's compressed convolutional attention: Q, K and V ([t, H·d], [t, KV·d], [t, KV·d])
    /// from the input `x`, the convolutions' last inputs and the last delayed value carried in
    /// the layer's state.
    pub(super) fn cca(
        &self,
        x: &Tensor,
        b: usize,
        cca: anatomy_core::spec::Cca,
        cache: &mut Cache,
    ) -> Res<(Tensor, Tensor, Tensor)> {
        let a = self.spec.attn_at(b);
        let (t, h, kv, hd) = (
            x.dim(0)?,
            a.heads as usize,
            a.kv_heads as usize,
            a.head_dim as usize,
        );
        let (qw, kw, c, g) = (h * hd, kv * hd, (h + kv) * hd, h / kv);
        let qp = self.proj(x, Role::Q, b, a.qkv_bias)?;
        let kp = self.proj(x, Role::K, b, a.qkv_bias)?;
        // The residual paths: each query head's mean of its query and its K/V head's key, and
        // for each K/V head the mean of those over its query heads.
        let k_rep = kp
            .reshape((t, kv, 1, hd))?
            .broadcast_as((t, kv, g, hd))?
            .reshape((t, h, hd))?;
        let q_res = ((qp.reshape((t, h, hd))? + k_rep)? * 0.5)?;
        let k_res = q_res.reshape((t, kv, g, hd))?.mean(2)?;
        // The convolutions, over the carried inputs and this call's.
        let (k0, k1) = (cca.depthwise as usize, cca.grouped as usize);
        let reach = cca.reach() as usize;
        let mut state = cache.ssm[b]
            .take()
            .unwrap_or_else(|| crate::ssm::SsmState::new(reach + 1, c, 0, 0, 0));
        let raw: Vec<f32> = Tensor::cat(&[&qp, &kp], 1)?.flatten_all()?.to_vec1()?;
        let mut full = state.conv.clone();
        full.extend_from_slice(&raw);
        let vec = |role, bias| -> Res<Vec<f32>> {
            let name = self.name(role, bias, Some(b), None);
            Ok(self.weights.get(&name)?.flatten_all()?.to_vec1()?)
        };
        let (w0, b0) = (
            vec(Role::CcaConvDepthwise, false)?,
            vec(Role::CcaConvDepthwise, true)?,
        );
        let (w1, b1) = (
            vec(Role::CcaConvGrouped, false)?,
            vec(Role::CcaConvGrouped, true)?,
        );
        let mid = t + k1 - 1;
        let mut y1 = vec![0f32; mid * c];
        for p in 0..mid {
            for ch in 0..c {
                let mut s = b0[ch];
                for j in 0..k0 {
                    s += w0[ch * k0 + j] * full[(p + j) * c + ch];
                }
                y1[p * c + ch] = s;
            }
        }
        let mut y2 = vec![0f32; t * c];
        for p in 0..t {
            for ch in 0..c {
                let group = ch / hd * hd;
                let mut s = b1[ch];
                for cc in 0..hd {
                    for j in 0..k1 {
                        s += w1[(ch * hd + cc) * k1 + j] * y1[(p + j) * c + group + cc];
                    }
                }
                y2[p * c + ch] = s;
            }
        }
        state.conv = full[full.len() - reach * c..].to_vec();
        let y2 = Tensor::from_vec(y2, (t, c), &Device::Cpu)?;
        let q = (y2.narrow(1, 0, qw)?.reshape((t, h, hd))? + q_res)?;
        let k = (y2.narrow(1, qw, kw)?.reshape((t, kv, hd))? + k_res)?;
        // The values: half from this token, half (the delayed projection) from the one before.
        let vc = self.proj(x, Role::CcaVCurrent, b, a.qkv_bias)?;
        let vd = self.proj(x, Role::CcaVDelayed, b, a.qkv_bias)?;
        let half = kw / 2;
        let prev = if state.h.len() == half {
            Tensor::from_vec(state.h.clone(), (1, half), &Device::Cpu)?
        } else if a.qkv_bias {
            self.bias(Role::CcaVDelayed, Some(b))?.reshape((1, half))?
        } else {
            Tensor::zeros((1, half), DType::F32, &Device::Cpu)?
        };
        let delayed = Tensor::cat(&[&prev, &vd.narrow(0, 0, t - 1)?], 0)?;
        state.h = vd.narrow(0, t - 1, 1)?.flatten_all()?.to_vec1()?;
        cache.ssm[b] = Some(state);
        let v = Tensor::cat(&[&vc, &delayed], 1)?;
        // Q and K to length √d per head, K then times its K/V head's learned scale.
        let unit = |x: &Tensor| -> Res<Tensor> {
            let len = x
                .sqr()?
                .sum_keepdim(2)?
                .sqrt()?
                .clamp(f32::EPSILON, f32::MAX)?;
            Ok(x.broadcast_div(&len)?.affine((hd as f64).sqrt(), 0.0)?)
        };
        let q = unit(&q)?.reshape((t, qw))?;
        let temp = self.w(Role::CcaKeyTemp, Some(b))?.reshape((1, kv, 1))?;
        let k = unit(&k)?.broadcast_mul(&temp)?.reshape((t, kw))?;
        Ok((q, k, v))
    }
}
