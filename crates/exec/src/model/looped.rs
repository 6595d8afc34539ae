//! Dory's looped section: the middle layers run several times.

use super::*;

impl Model {
    /// Dory's looped section: the input layers once, the looped ones `loops` times, each pass
    /// from the stream normed plus the input layers' output normed, then the output layers.
    /// Each pass caches keys and values of its own (a visit's cache), or with `shared_cache`
    /// only the last does: an earlier pass appends its keys and values to the layers' caches,
    /// attends, and takes them off again.
    pub(super) fn looped(&self, x: &Tensor, l: Looped, cache: &mut Cache) -> Res<Tensor> {
        let (a, z) = (l.input as usize, (l.input + l.recurrent) as usize);
        let mut x = x.clone();
        for b in 0..a {
            x = self.layer(&x, b, cache, &mut None, None)?;
        }
        let x0 = self.norm(&x, Role::FinalNorm, None)?;
        self.keep(None, Point::LoopInput, &x0);
        let passes = l.loops as usize;
        for p in 0..passes {
            x = (self.norm(&x, Role::FinalNorm, None)? + &x0)?;
            // An earlier pass of `last_loop`: what each looped layer held before it.
            let held: Option<Vec<Option<usize>>> = (l.shared_cache && p + 1 < passes).then(|| {
                (a..z)
                    .map(|b| cache.kv[b].as_ref().map(|kv| kv.len()))
                    .collect()
            });
            let c = if l.shared_cache || p == 0 {
                &mut *cache
            } else {
                cache.visit(p - 1)
            };
            for b in a..z {
                x = self.layer(&x, b, c, &mut None, None)?;
            }
            for (b, len) in (a..z).zip(held.into_iter().flatten()) {
                match len {
                    Some(n) => cache.kv[b].iter_mut().for_each(|kv| kv.truncate(n)),
                    None => cache.kv[b] = None,
                }
            }
        }
        for b in z..self.spec.layers as usize {
            x = self.layer(&x, b, cache, &mut None, None)?;
        }
        Ok(x)
    }
}
