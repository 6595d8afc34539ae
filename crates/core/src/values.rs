//! Values from a run of the Graph by anatomy's executor, placed on its steps: what the op view
//! shows beside each op. The executor fills them; the views only read them.

use std::collections::BTreeMap;

/// Statistics of one step's output in a run.
#[derive(Debug, Clone)]
pub struct StepValues {
    pub shape: Vec<usize>,
    pub mean: f32,
    pub std: f32,
    pub max: f32,
}

/// A small table of numbers from the run (router weights per token, one head's attention).
#[derive(Debug, Clone)]
pub struct Table {
    pub title: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub cells: Vec<Vec<f32>>,
}

/// Values from a run of the Graph by anatomy's executor.
#[derive(Debug, Clone)]
pub struct Values {
    /// What was run: the checkpoint, or "random weights on a scaled-down copy".
    pub note: String,
    pub ids: Vec<u32>,
    /// The text of each token, where a tokenizer was at hand.
    pub pieces: Vec<String>,
    /// By graph step number (of the model that ran), over the whole output.
    pub steps: BTreeMap<usize, StepValues>,
    /// By step number and lane, the lane given by its index in each repeated frame around the
    /// step (`[group, head]`, `[head]`, `[expert]`): that lane's own part of the output.
    pub lanes: BTreeMap<(usize, Vec<u64>), StepValues>,
    pub tables: Vec<Table>,
}
