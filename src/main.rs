//! `anatomy`: a thin command-line shell over anatomy-core.

use anatomy_core::{catalog, fmt, graph, manifest, render, source, stats};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "anatomy",
    version,
    about = "Shows exactly how a large language model is built"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Ignore config keys anatomy does not understand instead of refusing the model; every
    /// output then lists them ("anatomy ignored: key = value").
    #[arg(long, global = true)]
    lenient: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Draw the model tensor by tensor in the terminal.
    Show {
        /// Catalog name, config.json, or a folder holding one.
        #[arg(default_value = catalog::DEFAULT)]
        model: String,
        /// Expand step N into its Operation / Equation / Source callout.
        #[arg(long)]
        step: Option<usize>,
        /// Columns to fit (default: the terminal's width, else 100).
        #[arg(long)]
        width: Option<usize>,
    },
    /// Parameters, KV cache, weight memory and FLOPs, summed from the graph.
    Stats {
        model: String,
        /// Context length for KV cache and FLOPs (default: the model's maximum).
        #[arg(long)]
        context: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// Every checkpoint tensor with its shape.
    Manifest {
        model: String,
        #[arg(long, value_enum, default_value_t = Naming::Hf)]
        naming: Naming,
        #[arg(long)]
        json: bool,
    },
    /// The built-in catalog, one model a line.
    List,
    /// One self-contained interactive web page for a model.
    Html {
        model: String,
        /// The page to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Context length for KV cache and FLOPs (default: the model's maximum).
        #[arg(long)]
        context: Option<u64>,
        /// Overwrite a file that anatomy did not write.
        #[arg(long)]
        force: bool,
    },
    /// The whole catalog as a static site: an index and one page per model.
    Site {
        /// The folder to write (created if missing).
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        force: bool,
    },
    /// Check a checkpoint (a folder of safetensors with its config.json, or a .gguf file) tensor by
    /// tensor against the graph; exits 0 only when everything matches.
    Verify {
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Run a checkpoint: greedy decoding from a prompt, or the logits of given token ids.
    Run {
        /// A .gguf file, or a folder with config.json, safetensors and tokenizer.json.
        model: PathBuf,
        /// Text to continue (tokenized with the checkpoint's own tokenizer).
        #[arg(long, conflicts_with = "ids")]
        prompt: Option<String>,
        /// Token ids instead of a prompt, comma-separated (`1,2,3`).
        #[arg(long, value_delimiter = ',')]
        ids: Option<Vec<u32>>,
        #[arg(long, default_value_t = 32)]
        max_tokens: usize,
        /// Write the logits of every position of --ids / --prompt as an f32 .npy file [T, vocab].
        #[arg(long)]
        logits: Option<PathBuf>,
        /// Print prompt ids, generated ids and text as one JSON object.
        #[arg(long)]
        json: bool,
        /// Run a scaled-down copy of MODEL (any catalog name or config) on seeded random weights.
        #[arg(long)]
        tiny: bool,
        /// Threads for the forward pass (default: one per physical core, or
        /// $CANDLE_NUM_THREADS / $RAYON_NUM_THREADS).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
    },
    /// Every op with its glyph and output shape, in the order the forward pass runs them.
    Ops { model: String },
    /// The model as one runnable NumPy file: `python3 model.py --weights DIR --ids 1,2,3 --out logits.npy`.
    Numpy {
        model: String,
        #[arg(short, long)]
        output: PathBuf,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// The PyTorch reference of a model as one module (every part and a Model composing them).
    #[command(hide = true)]
    Torch { model: String },
}

#[derive(Clone, Copy, ValueEnum)]
enum Naming {
    Hf,
    Gguf,
}

static LENIENT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--lenient`, for every command.
fn lenient() -> bool {
    LENIENT.load(std::sync::atomic::Ordering::Relaxed)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    LENIENT.store(cli.lenient, std::sync::atomic::Ordering::Relaxed);
    match run(cli) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`anatomy show | head`) is not an error worth reporting.
            let _ = stdout.write_all(out.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The graph of MODEL: a catalog name, a config.json or a folder holding one, or a GGUF file (whose
/// metadata is its config; only its header is read).
fn build(model: &str) -> anatomy_core::Result<(graph::Graph, source::Origin)> {
    let lenient = lenient();
    let path = std::path::Path::new(model);
    if path.extension().is_some_and(|e| e == "gguf") {
        let c = anatomy_checkpoint::open(path)?;
        let spec = anatomy_checkpoint::spec(&c, lenient)?;
        return Ok((graph::build(&spec)?, source::Origin::File(c.path)));
    }
    let loaded = source::load(model, lenient)?;
    Ok((graph::build(&loaded.spec)?, loaded.origin))
}

fn run(cli: Cli) -> anatomy_core::Result<String> {
    match cli.command {
        Command::Show { model, step, width } => {
            let (g, _) = build(&model)?;
            let stdout = std::io::stdout();
            let width = width
                .or_else(|| terminal_size::terminal_size().map(|(w, _)| w.0 as usize))
                .unwrap_or(100);
            let color =
                stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            render::render(&g, &render::Options { width, color, step })
        }
        Command::Stats {
            model,
            context,
            json,
        } => {
            let (g, origin) = build(&model)?;
            if context == Some(0) {
                return Err(anatomy_core::Error::new(
                    model,
                    "--context",
                    "is 0; give a positive number of tokens",
                ));
            }
            let s = stats::stats(&g, context);
            Ok(if json {
                serde_json::to_string_pretty(&s).expect("stats serialize") + "\n"
            } else {
                render::report::stats(&g, &s, &origin.describe())
            })
        }
        Command::Manifest {
            model,
            naming,
            json,
        } => {
            let (g, _) = build(&model)?;
            let naming = match naming {
                Naming::Hf => manifest::Naming::Hf,
                Naming::Gguf => manifest::Naming::Gguf,
            };
            let entries = manifest::manifest(&g, naming)?;
            Ok(if json {
                let tensors: serde_json::Map<String, serde_json::Value> = entries
                    .iter()
                    .map(|e| (e.name.clone(), serde_json::json!(e.shape)))
                    .collect();
                let ignored: Vec<String> = g
                    .spec
                    .ignored
                    .iter()
                    .map(|i| format!("{} = {}", i.key, i.value))
                    .collect();
                serde_json::to_string_pretty(
                    &serde_json::json!({ "tensors": tensors, "ignored": ignored }),
                )
                .expect("json")
                    + "\n"
            } else {
                render::report::manifest(&entries)
            })
        }
        Command::Html {
            model,
            output,
            context,
            force,
        } => {
            let (g, origin) = build(&model)?;
            let values = run_values(&model, &g);
            let page = render::html::page(&render::html::PageInput {
                graph: &g,
                provenance: &origin.describe(),
                context,
                values: values.as_ref(),
            });
            anatomy_core::output::write(&output, &page, force)?;
            Ok(format!(
                "wrote {} ({} bytes)\n",
                output.display(),
                page.len()
            ))
        }
        Command::Site { output, force } => {
            std::fs::create_dir_all(&output).map_err(|e| {
                anatomy_core::Error::file(
                    output.display().to_string(),
                    format!("cannot create the folder: {e}"),
                )
            })?;
            let mut graphs = Vec::new();
            for e in catalog::ENTRIES {
                let (g, origin) = build(e.name)?;
                let values = run_values(e.name, &g);
                let page = render::html::page(&render::html::PageInput {
                    graph: &g,
                    provenance: &origin.describe(),
                    context: None,
                    values: values.as_ref(),
                });
                anatomy_core::output::write(
                    &output.join(format!("{}.html", e.name)),
                    &page,
                    force,
                )?;
                graphs.push((g, e));
            }
            let rows: Vec<render::html::site::Row> = graphs
                .iter()
                .map(|(g, e)| render::html::site::Row {
                    graph: g,
                    href: format!("{}.html", e.name),
                    source: e.repo.to_string(),
                })
                .collect();
            anatomy_core::output::write(
                &output.join("index.html"),
                &render::html::site::index(&rows),
                force,
            )?;
            Ok(format!(
                "wrote {} pages and index.html to {}\n",
                rows.len(),
                output.display()
            ))
        }
        Command::Verify { path, json } => {
            let c = anatomy_checkpoint::open(&path)?;
            let g = graph::build(&anatomy_checkpoint::spec(&c, lenient())?)?;
            let r = anatomy_checkpoint::verify::verify(&g, &c)?;
            let out = if json {
                let list = |v: Vec<String>| serde_json::json!(v);
                serde_json::to_string_pretty(&serde_json::json!({
                    "clean": r.clean(),
                    "matched": r.matched,
                    "params": r.params as u64,
                    "missing": list(r.missing.iter().map(|m| m.0.clone()).collect()),
                    "unexpected": list(r.unexpected.iter().map(|t| t.name.clone()).collect()),
                    "misshaped": list(r.misshaped.iter().map(|m| m.0.clone()).collect()),
                    "formats": r.formats.iter().map(|(f, (n, p))| (f.clone(), serde_json::json!({"tensors": n, "params": *p as u64}))).collect::<serde_json::Map<_, _>>(),
                }))
                .expect("json")
                    + "\n"
            } else {
                anatomy_checkpoint::verify::report_text(&g, &c, &r)
            };
            if r.clean() {
                Ok(out)
            } else {
                // The report goes to stdout; the exit status says it failed.
                print!("{out}");
                Err(anatomy_core::Error::file(
                    c.path,
                    "does not match the graph (see the report above)",
                ))
            }
        }
        Command::Run {
            model,
            prompt,
            ids,
            max_tokens,
            logits,
            json,
            tiny,
            threads,
        } => {
            if let Some(n) = threads {
                // Read once, when candle first starts its thread pools, which is later.
                std::env::set_var("CANDLE_NUM_THREADS", n.to_string());
                std::env::set_var("RAYON_NUM_THREADS", n.to_string());
            }
            if tiny {
                run_tiny(&model, ids, max_tokens, logits, json)
            } else {
                run_model(&model, prompt, ids, max_tokens, logits, json)
            }
        }
        Command::Ops { model } => {
            let (g, _) = build(&model)?;
            Ok(render::report::ops(&g))
        }
        Command::Numpy {
            model,
            output,
            force,
        } => {
            let (g, _) = build(&model)?;
            if output.exists() && !force {
                return Err(anatomy_core::Error::file(
                    output.display().to_string(),
                    "exists; pass --force to overwrite it",
                ));
            }
            let code = render::numpy::module(&g.spec);
            anatomy_core::output::write_atomic(&output, code.as_bytes())?;
            Ok(format!(
                "wrote {} ({} lines)\n",
                output.display(),
                code.lines().count()
            ))
        }
        Command::Torch { model } => {
            let (g, _) = build(&model)?;
            Ok(render::html::torch::module(&g.spec))
        }
        Command::List => {
            let mut out = format!(
                "{:<24}{:<13}{:>8}{:>8}{:>8}{:>9}  {}\n",
                "name", "family", "params", "active", "layers", "context", "source"
            );
            for e in catalog::ENTRIES {
                let (g, _) = build(e.name)?;
                let s = stats::stats(&g, None);
                out += &format!(
                    "{:<24}{:<13}{:>8}{:>8}{:>8}{:>9}  {} ({})\n",
                    e.name,
                    g.spec.family,
                    fmt::short(s.total_params as u128),
                    fmt::short(s.active_params as u128),
                    g.spec.layers,
                    fmt::context(g.spec.context),
                    e.repo,
                    catalog::SNAPSHOT
                );
            }
            Ok(out)
        }
    }
}

/// `anatomy run`: load weights (with a progress bar on a terminal), then decode or dump logits.
fn run_model(
    path: &std::path::Path,
    prompt: Option<String>,
    ids: Option<Vec<u32>>,
    max_tokens: usize,
    logits: Option<PathBuf>,
    json: bool,
) -> anatomy_core::Result<String> {
    use anatomy_core::Error;
    let c = anatomy_checkpoint::open(path)?;
    let spec = anatomy_checkpoint::spec(&c, lenient())?;
    let shown = path.display().to_string();
    let tokenizer = || -> anatomy_core::Result<tokenizers::Tokenizer> {
        if c.format == anatomy_checkpoint::Format::Gguf {
            anatomy_exec::tokenizer::from_gguf(path)
        } else {
            anatomy_exec::tokenizer::from_file(&path.join("tokenizer.json"))
        }
    };
    let tok = if prompt.is_some() || ids.is_none() {
        Some(tokenizer()?)
    } else {
        None
    };
    let prompt_ids: Vec<u32> = match (&prompt, &ids, &tok) {
        (Some(p), _, Some(t)) => t
            .encode(p.as_str(), false)
            .map_err(|e| Error::file(&shown, format!("cannot tokenize: {e}")))?
            .get_ids()
            .to_vec(),
        (None, Some(ids), _) => ids.clone(),
        _ => {
            return Err(Error::new(
                &shown,
                "--prompt",
                "give a prompt (--prompt TEXT) or token ids (--ids 1,2,3)",
            ))
        }
    };
    if prompt_ids.is_empty() {
        return Err(Error::new(
            &shown,
            "--prompt",
            "tokenizes to nothing; give some text",
        ));
    }
    if let Some(bad) = prompt_ids.iter().find(|&&i| i as u64 >= spec.vocab) {
        return Err(Error::new(
            &shown,
            "--ids",
            format!(
                "{bad} is not a token id; this model's vocabulary has {} ids",
                spec.vocab
            ),
        ));
    }
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("loading weights {bar:40} {pos}/{len}")
                .expect("template"),
        );
        b
    });
    let weights = anatomy_exec::weights::Weights::load(&c, &spec, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let model = anatomy_exec::Model::new(spec, weights)?;
    if let Some(out) = logits {
        let l = model.forward(
            &prompt_ids,
            &mut anatomy_exec::Cache::new(model.spec.layers as usize),
        )?;
        let data: Vec<f32> = l
            .flatten_all()
            .and_then(|t| t.to_vec1())
            .map_err(|e| Error::file("executor", e.to_string()))?;
        let bytes =
            anatomy_exec::npy::encode_f32(&[prompt_ids.len(), model.spec.vocab as usize], &data);
        anatomy_core::output::write_atomic(&out, &bytes)?;
        return Ok(format!(
            "wrote {} ({} positions × {} logits, f32)\n",
            out.display(),
            prompt_ids.len(),
            model.spec.vocab
        ));
    }
    let tok = match tok {
        Some(t) => t,
        None => tokenizer()?,
    };
    // Stream text as it comes: decode everything so far and print what is new.
    let mut text = String::new();
    let mut generated = Vec::new();
    let mut stdout = std::io::stdout().lock();
    let generation = anatomy_exec::generate(&model, &prompt_ids, max_tokens, &mut |id| {
        generated.push(id);
        if !json {
            if let Ok(all) = tok.decode(&generated, false) {
                if all.len() > text.len() && all.is_char_boundary(text.len()) {
                    let _ = write!(stdout, "{}", &all[text.len()..]);
                    let _ = stdout.flush();
                    text = all;
                }
            }
        }
        true
    })?;
    let rate = |n: usize, d: std::time::Duration| n as f64 / d.as_secs_f64().max(1e-9);
    eprintln!(
        "\nprefill: {} tokens in {:.0} ms ({:.1} tokens/s) · decode: {} tokens in {:.0} ms ({:.1} tokens/s)",
        prompt_ids.len(),
        generation.prefill.as_secs_f64() * 1e3,
        rate(prompt_ids.len(), generation.prefill),
        generation.ids.len().saturating_sub(1),
        generation.decode.as_secs_f64() * 1e3,
        rate(generation.ids.len().saturating_sub(1), generation.decode)
    );
    if json {
        let text = tok
            .decode(&generation.ids, false)
            .map_err(|e| Error::file(&shown, e.to_string()))?;
        return Ok(serde_json::to_string(&serde_json::json!({
            "prompt_ids": prompt_ids,
            "generated_ids": generation.ids,
            "text": text,
        }))
        .expect("json")
            + "\n");
    }
    Ok("\n".into())
}

/// `anatomy run --tiny`: the model's structure at toy sizes, on seeded random weights.
fn run_tiny(
    model: &std::path::Path,
    ids: Option<Vec<u32>>,
    max_tokens: usize,
    logits: Option<PathBuf>,
    json: bool,
) -> anatomy_core::Result<String> {
    use anatomy_core::Error;
    let (g, _) = build(&model.to_string_lossy())?;
    let spec = anatomy_exec::tiny::shrink(&g.spec);
    let tiny_graph = graph::build(&spec)?;
    let weights = anatomy_exec::tiny::random_weights(&tiny_graph, 0)?;
    let ids = ids.ok_or_else(|| {
        Error::new(
            model.display().to_string(),
            "--ids",
            "a tiny model has random weights and no tokenizer: give token ids (--ids 1,2,3)",
        )
    })?;
    if let Some(bad) = ids.iter().find(|&&i| i as u64 >= spec.vocab) {
        return Err(Error::new(
            model.display().to_string(),
            "--ids",
            format!(
                "{bad} is not a token id; the tiny copy's vocabulary has {} ids",
                spec.vocab
            ),
        ));
    }
    eprintln!(
        "random weights on a scaled-down copy: hidden {}, {} layers, {} heads ({} K/V), vocab {}",
        spec.hidden, spec.layers, spec.attn.heads, spec.attn.kv_heads, spec.vocab
    );
    let m = anatomy_exec::Model::new(spec, weights)?;
    let err = |e: candle_core::Error| Error::file("executor", e.to_string());
    if let Some(out) = logits {
        let l = m.forward(&ids, &mut anatomy_exec::Cache::new(m.spec.layers as usize))?;
        let data: Vec<f32> = l.flatten_all().and_then(|t| t.to_vec1()).map_err(err)?;
        anatomy_core::output::write_atomic(
            &out,
            &anatomy_exec::npy::encode_f32(&[ids.len(), m.spec.vocab as usize], &data),
        )?;
        return Ok(format!(
            "wrote {} ({} positions × {} logits, f32)\n",
            out.display(),
            ids.len(),
            m.spec.vocab
        ));
    }
    let g = anatomy_exec::generate(&m, &ids, max_tokens, &mut |_| true)?;
    Ok(if json {
        serde_json::json!({ "prompt_ids": ids, "generated_ids": g.ids }).to_string() + "\n"
    } else {
        format!("{:?}\n", g.ids)
    })
}

/// Values for the op view: a run of the checkpoint on a short prompt when MODEL is one, otherwise a
/// run of a scaled-down copy on random weights. `None` when the model cannot be run.
fn run_values(model: &str, g: &graph::Graph) -> Option<render::html::ops::Values> {
    let path = std::path::Path::new(model);
    if anatomy_checkpoint::is_checkpoint(path) {
        let c = anatomy_checkpoint::open(path).ok()?;
        let spec = anatomy_checkpoint::spec(&c, lenient()).ok()?;
        let tok = if c.format == anatomy_checkpoint::Format::Gguf {
            anatomy_exec::tokenizer::from_gguf(path).ok()?
        } else {
            anatomy_exec::tokenizer::from_file(&path.join("tokenizer.json")).ok()?
        };
        let enc = tok.encode("The capital of France is", false).ok()?;
        let ids = enc.get_ids().to_vec();
        let pieces = ids
            .iter()
            .map(|&i| tok.decode(&[i], false).unwrap_or_default())
            .collect();
        let w = anatomy_exec::weights::Weights::load(&c, &spec, &mut |_, _| {}).ok()?;
        let m = anatomy_exec::Model::new(spec, w).ok()?;
        let (_, captured) = m.forward_captured(&ids).ok()?;
        let note = format!("Values from a run of {} on its own weights.", c.path);
        return Some(anatomy_exec::values::values(
            g, &captured, &ids, pieces, note,
        ));
    }
    let spec = anatomy_exec::tiny::shrink(&g.spec);
    let tiny = graph::build(&spec).ok()?;
    let w = anatomy_exec::tiny::random_weights(&tiny, 0).ok()?;
    let m = anatomy_exec::Model::new(spec.clone(), w).ok()?;
    let ids: Vec<u32> = vec![1, 7, 3, 12, 5, 9];
    let (_, captured) = m.forward_captured(&ids).ok()?;
    let note = format!(
        "Values from a run of a scaled-down copy on random weights (hidden {}, {} heads, {} layers, {} experts): the shapes here are the full model's, the numbers the copy's.",
        spec.hidden,
        spec.attn.heads,
        spec.layers,
        spec.moe.as_ref().map_or(0, |m| m.experts)
    );
    Some(anatomy_exec::values::values(
        &tiny,
        &captured,
        &ids,
        Vec::new(),
        note,
    ))
}
