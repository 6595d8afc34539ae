//! A captured run: each activation's statistics (per head where it has heads), small ones
//! whole, for the op view and for naming the first step whose output was not finite.

use super::*;

/// One activation of a forward pass: where it was computed, its statistics, and — when small —
/// its values.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Layer index, `None` outside the blocks.
    pub layer: Option<usize>,
    /// What it is.
    pub point: Point,
    pub shape: Vec<usize>,
    /// Statistics of its finite values.
    pub summary: Summary,
    /// Values that are NaN or infinite (masked attention scores, −∞ by design, not counted).
    pub nonfinite: usize,
    /// For an activation with a head axis (Q, K, V, scores, weights, head outputs): each head's
    /// own statistics, in head order (query heads, or K/V heads for K and V).
    pub heads: Vec<Summary>,
    /// The routed expert that computed it.
    pub expert: Option<usize>,
    /// All values (row-major) when there are at most `SMALL` of them.
    pub values: Option<Vec<f32>>,
}

/// Mean, standard deviation and range of the finite values of an activation or of a part of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub mean: f32,
    pub std: f32,
    pub min: f32,
    pub max: f32,
}

impl Summary {
    pub fn of(v: &[f32]) -> Summary {
        let finite: Vec<f32> = v.iter().copied().filter(|x| x.is_finite()).collect();
        let n = finite.len().max(1) as f32;
        let mean = finite.iter().sum::<f32>() / n;
        Summary {
            mean,
            std: (finite.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n).sqrt(),
            min: finite.iter().copied().fold(f32::INFINITY, f32::min),
            max: finite.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        }
    }
}

/// Where the heads of capture `point` are: (axis, count). Projections are [T, heads · d]; the
/// rotated, scored and weighted tensors [heads, T, …].
fn head_axis(
    spec: &Spec,
    layer: Option<usize>,
    point: Point,
    dims: &[usize],
) -> Option<(usize, usize)> {
    let a = layer.map_or(&spec.attn, |b| spec.attn_at(b));
    let (q, kv) = (a.heads as usize, a.kv_heads as usize);
    match (point, dims.len()) {
        (
            Point::Q
            | Point::K
            | Point::V
            | Point::QNorm
            | Point::KNorm
            | Point::QL2
            | Point::KL2
            | Point::QScaled
            | Point::Scores
            | Point::Probs
            | Point::KNope,
            3,
        ) => Some((0, dims[0])),
        (Point::QProj | Point::QNorm | Point::Heads, 2) => Some((1, q)),
        (Point::KProj | Point::KNorm, 2) if a.mla.is_none() => Some((1, kv)),
        _ => None,
    }
    .filter(|(axis, n)| *n > 0 && dims[*axis].is_multiple_of(*n))
}

/// The values of each of `n` equal parts along `axis` of a row-major tensor of `dims`.
fn split(v: &[f32], dims: &[usize], axis: usize, n: usize) -> Vec<Vec<f32>> {
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product::<usize>() * (dims[axis] / n);
    let mut out = vec![Vec::new(); n];
    for o in 0..outer {
        for (h, part) in out.iter_mut().enumerate() {
            let start = (o * n + h) * inner;
            part.extend_from_slice(&v[start..start + inner]);
        }
    }
    out
}

impl Model {
    /// Logits for `ids` and every activation computed on the way.
    pub fn forward_captured(&self, ids: &[u32]) -> Result<(Tensor, Vec<Captured>), Error> {
        *self.capture.borrow_mut() = Some(Vec::new());
        let logits = self.forward(ids, &mut Cache::new(self.spec.layers as usize));
        let captured = self.capture.borrow_mut().take().unwrap_or_default();
        Ok((logits?, captured))
    }

    pub(super) fn capturing(&self) -> bool {
        self.capture.borrow().is_some()
    }

    pub(super) fn keep(&self, layer: Option<usize>, point: Point, t: &Tensor) {
        self.record(layer, point, t, None);
    }

    /// An activation of routed expert `e`.
    pub(super) fn keep_expert(&self, layer: usize, point: Point, t: &Tensor, e: usize) {
        self.record(Some(layer), point, t, Some(e));
    }

    pub(super) fn record(
        &self,
        layer: Option<usize>,
        point: Point,
        t: &Tensor,
        expert: Option<usize>,
    ) {
        let mut guard = self.capture.borrow_mut();
        let Some(list) = guard.as_mut() else { return };
        let Ok(v) = t
            .flatten_all()
            .and_then(|f| f.to_dtype(DType::F32))
            .and_then(|f| f.to_vec1::<f32>())
        else {
            return;
        };
        // Masked scores are −∞ by design; anything else not finite is a fault.
        let nonfinite = v
            .iter()
            .filter(|x| !x.is_finite() && (point != Point::Scores || **x != f32::NEG_INFINITY))
            .count();
        let heads = match head_axis(&self.spec, layer, point, t.dims()) {
            Some((axis, n)) => split(&v, t.dims(), axis, n)
                .iter()
                .map(|h| Summary::of(h))
                .collect(),
            None => Vec::new(),
        };
        list.push(Captured {
            layer,
            point,
            shape: t.dims().to_vec(),
            summary: Summary::of(&v),
            nonfinite,
            heads,
            expert,
            values: (v.len() <= SMALL).then_some(v),
        });
    }
}
