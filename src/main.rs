//! `anatomy`: a thin command-line shell over the libraries. Each command parses its arguments,
//! calls anatomy-core, -checkpoint or -exec, and prints or writes what they return.

mod chat_child;

use anatomy_core::{catalog, fmt, graph, manifest, output, render, source, stats, Error};
use anatomy_exec::session;
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
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

/// MODEL: a catalog name (`anatomy list`), a config.json or a folder holding one, or a checkpoint.
const MODEL: &str =
    "Catalog name (see `anatomy list`), a config.json or a folder holding one, a .gguf file, or a Hugging Face Hub id: owner/name[/file.gguf][@revision]";

#[derive(Subcommand)]
enum Command {
    /// Draw the model tensor by tensor in the terminal.
    Show {
        #[arg(default_value = catalog::DEFAULT, help = MODEL)]
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
        #[arg(help = MODEL)]
        model: String,
        /// Context length for KV cache and FLOPs (default: the model's maximum).
        #[arg(long)]
        context: Option<u64>,
        /// Print the figures as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Will it fit, and how fast: memory by component on a device under a runtime's rules, the
    /// longest context that fits, llama.cpp's -ngl, and the decode and prefill ceilings.
    Plan {
        #[arg(help = MODEL)]
        model: String,
        /// A device of the built-in table (memory, bandwidth and matmul rates with their
        /// sources); see --device list.
        #[arg(long, default_value = anatomy_core::plan::DEFAULT_DEVICE)]
        device: String,
        /// The device's memory in GiB, instead of the table's (needed for a CPU's RAM).
        #[arg(long)]
        memory: Option<f64>,
        /// The device's memory bandwidth in GB/s, instead of the table's.
        #[arg(long)]
        bandwidth: Option<f64>,
        /// The device's peak dense matmul rate in TFLOP/s, instead of the table's.
        #[arg(long)]
        flops: Option<f64>,
        /// Tokens per sequence (default: the model's maximum).
        #[arg(long)]
        context: Option<u64>,
        /// Sequences decoded together.
        #[arg(long, default_value_t = 1)]
        batch: u64,
        /// How the weights are held: `stored` (a checkpoint's own formats, the default for one)
        /// or a format: f32, bf16, f16, fp8, int4-g128 (GPTQ/AWQ), nvfp4, mxfp4, or any GGUF
        /// type (q8_0, q4_k, iq4_xs, tq1_0, …; the error lists them) (default bf16 for a config).
        #[arg(long)]
        weights: Option<String>,
        /// The KV cache's type: f32, f16, bf16, fp8, q8_0, q4_0 (default: the runtime's).
        #[arg(long)]
        kv_type: Option<String>,
        /// llama.cpp, vllm, transformers or anatomy (default: llama.cpp for a GGUF, else vllm).
        #[arg(long)]
        runtime: Option<String>,
        /// llama.cpp's n_ubatch.
        #[arg(long, default_value_t = 512)]
        ubatch: u64,
        /// llama.cpp with flash attention (no score matrix in its compute buffer).
        #[arg(long)]
        flash_attn: bool,
        /// llama.cpp's --swa-full: sliding-window layers keep the whole context.
        #[arg(long)]
        swa_full: bool,
        /// Print the plan as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Every checkpoint tensor with its shape.
    Manifest {
        #[arg(help = MODEL)]
        model: String,
        /// Tensor names as Hugging Face checkpoints (hf) or llama.cpp's GGUF files (gguf) have them.
        #[arg(long, value_enum, default_value_t = Naming::Hf)]
        naming: Naming,
        /// Print the tensors as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The built-in catalog, one model a line.
    List {
        /// Instead, every config `model_type` anatomy reads, with its family and its llama.cpp
        /// GGUF architecture where anatomy reads that too.
        #[arg(long)]
        model_types: bool,
    },
    /// One self-contained interactive web page for a model.
    Html {
        #[arg(help = MODEL)]
        model: String,
        /// The page to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Context length for KV cache and FLOPs (default: the model's maximum).
        #[arg(long, conflicts_with = "compare")]
        context: Option<u64>,
        /// Instead, one page comparing MODEL with this one: both diagrams side by side, the
        /// parts that differ outlined, a part of both opened at once.
        #[arg(long, value_name = "MODEL")]
        compare: Option<String>,
        /// For a draft model's checkpoint (a Gemma 4 assistant): the target checkpoint whose
        /// state one draft step of the op view's values starts from.
        #[arg(long, conflicts_with = "compare")]
        target: Option<String>,
        /// Overwrite a file that anatomy did not write (never a folder, device or pipe).
        #[arg(long)]
        force: bool,
    },
    /// The whole catalog as a static site: an index and one page per model.
    Site {
        /// The folder to write (created if missing).
        #[arg(short, long)]
        output: PathBuf,
        /// Overwrite files in it that anatomy did not write.
        #[arg(long)]
        force: bool,
    },
    /// Check a checkpoint (a folder of safetensors with its config.json, or a .gguf file) tensor by
    /// tensor against the graph, and where every tensor's bytes lie; exits 0 only when all is sound.
    Verify {
        /// A .gguf file, a folder with config.json and safetensors, or a Hub id
        /// (`owner/name[/file.gguf][@revision]`, headers read by range requests).
        checkpoint: String,
        /// Also read every tensor once and report NaN, infinite and all-zero tensors.
        #[arg(long)]
        data: bool,
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Run a checkpoint: greedy decoding from a prompt, or the logits of given token ids.
    Run {
        /// A .gguf file, a folder with config.json, safetensors and tokenizer.json, or a Hub id
        /// (downloaded into the Hugging Face cache first); with --tiny, any MODEL.
        model: String,
        /// Text to continue (tokenized with the checkpoint's own tokenizer).
        #[arg(long, conflicts_with = "ids")]
        prompt: Option<String>,
        /// An image already processed as the model's processor makes it: an f32 .npy file
        /// [channels, height, width], or [tiles, channels, side, side] for a processor that cuts
        /// tiles (Llama 4, InternVL, Aya Vision, Command A Vision). Its features replace the prompt's image
        /// placeholder tokens: one per feature, or one that stands for them all (GIT's come before
        /// the prompt, which holds none).
        #[arg(long, value_name = "FILE.npy", conflicts_with = "image")]
        pixels: Option<PathBuf>,
        /// The image's own height and width before its processor (its `image_sizes`), with
        /// --pixels: LLaVA-NeXT's features follow it.
        #[arg(long, num_args = 2, value_names = ["HEIGHT", "WIDTH"], requires = "pixels")]
        image_size: Option<Vec<u64>>,
        /// An image file (PNG or JPEG) for the model to see, made into pixel values by the
        /// checkpoint's own image processor (preprocessor_config.json) as transformers makes
        /// them (the README lists the models that run one). Its features replace the prompt's
        /// image placeholder tokens,
        /// as with --pixels; with --chat, the message holds the image before the text.
        #[arg(long, value_name = "FILE")]
        image: Option<PathBuf>,
        /// Whose pixel values --image makes, to the bit: transformers' torchvision backend
        /// (its default where torchvision is installed) or its PIL backend (without it). They
        /// differ by a level in about 0.5% of the values.
        #[arg(long, value_enum, default_value_t = ImageBackend::Torchvision, requires = "image")]
        image_backend: ImageBackend,
        /// Token ids instead of a prompt, comma-separated (`1,2,3`).
        #[arg(long, value_delimiter = ',')]
        ids: Option<Vec<u32>>,
        /// Wrap --prompt in the checkpoint's chat template as one user message, with the
        /// assistant's turn opened (tokenizer_config.json, chat_template.jinja or the GGUF's).
        #[arg(long, requires = "prompt")]
        chat: bool,
        /// Most new tokens to generate; decoding stops sooner at an end-of-sequence id. The
        /// prompt and these must fit the model's context.
        #[arg(long, default_value_t = 32)]
        max_tokens: u64,
        /// Go on past the end-of-sequence ids (the GGUF's, or generation_config.json's or
        /// config.json's `eos_token_id`) up to --max-tokens.
        #[arg(long)]
        ignore_eos: bool,
        /// Write the logits of every position of --ids / --prompt as an f32 .npy file [T, vocab]
        /// (with --target, of each drafted token, [--max-tokens, vocab]).
        #[arg(long)]
        logits: Option<PathBuf>,
        /// The target checkpoint (or Hub id) a draft model (a Gemma 4 assistant) drafts for: it
        /// reads the prompt, then MODEL drafts --max-tokens tokens from its state.
        #[arg(long)]
        target: Option<String>,
        /// Overwrite an existing --logits file; allow --threads above the machine's cores.
        #[arg(long)]
        force: bool,
        /// Print prompt ids, generated ids and text as one JSON object.
        #[arg(long)]
        json: bool,
        /// Run a scaled-down copy of MODEL (any catalog name or config) on seeded random weights.
        #[arg(long)]
        tiny: bool,
        /// Threads for the forward pass (default: one per physical core, or
        /// $CANDLE_NUM_THREADS / $RAYON_NUM_THREADS); at most the machine's cores unless --force.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// How the weights are held: `stored` (the default) multiplies the projections in the
        /// format the checkpoint stores them (a GGUF's quantized blocks, with activations
        /// quantized to 8 bits per block as llama.cpp does; bf16 and f16 matrices in 16 bits),
        /// in about the file's memory; `f32` converts every weight to f32 first (the path the
        /// parity tests check against transformers; four times a bf16 file's memory).
        #[arg(long, value_enum, default_value_t = Dtype::Stored)]
        dtype: Dtype,
    },
    /// What differs from model A to model B: a summary in words, every differing mechanism,
    /// size and setting, the steps side by side, and the figures with their ratio.
    Diff {
        /// The model compared from (a MODEL as the other commands take it).
        a: String,
        /// The model compared to.
        b: String,
        /// Print the difference as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The model in another format: the whole Graph as JSON (schema/graph.schema.json), the
    /// block diagram as a standalone SVG, a Mermaid flowchart, or a Markdown model-card section.
    Export {
        #[arg(help = MODEL)]
        model: String,
        /// What to write.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// The file to write (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Overwrite a file that anatomy did not write.
        #[arg(long)]
        force: bool,
        /// With --format svg: the layer variant to draw, numbered as `anatomy html` numbers its
        /// buttons from 0 (default: the one whose layers hold the most parameters).
        #[arg(long)]
        variant: Option<usize>,
    },
    /// Every op with its glyph and output shape, in the order the forward pass runs them.
    Ops {
        #[arg(help = MODEL)]
        model: String,
    },
    /// The model as one runnable NumPy file: `python3 model.py --weights DIR --ids 1,2,3 --out logits.npy`.
    Numpy {
        #[arg(help = MODEL)]
        model: String,
        /// The Python file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Overwrite a file that anatomy did not write.
        #[arg(long)]
        force: bool,
    },
    /// The PyTorch reference of a model as one module, parameters named as in its checkpoint.
    Torch {
        #[arg(help = MODEL)]
        model: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Dtype {
    Stored,
    F32,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// The whole Graph: scopes, steps, tensors with dims, checkpoint names, figures.
    Json,
    /// The page's block diagram, no script: for slides and documents.
    Svg,
    /// A flowchart of the block structure that GitHub renders.
    Mermaid,
    /// A model-card section: figures, layer pattern, attention and FFN kinds.
    Md,
}

#[derive(Clone, Copy, ValueEnum)]
enum Naming {
    Hf,
    Gguf,
}

fn main() -> ExitCode {
    if chat_child::serve_if_child() {
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    // Interrupted, a run removes the temporary file of a write under way, then ends as an
    // interrupted process does (128 + SIGINT).
    let _ = ctrlc::set_handler(|| {
        let _held = output::remove_pending();
        std::process::exit(130);
    });
    match run(cli) {
        Ok(out) => match emit(&out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write to standard output: {e}");
                ExitCode::from(2)
            }
        },
        Err(Failure { report, error }) => {
            let _ = emit(&report);
            eprintln!("error: {}", fmt::printable(&error.to_string()));
            ExitCode::from(2)
        }
    }
}

/// Write `out` to stdout, flushed: a full disk is an error; a closed pipe (`anatomy show |
/// head`) is not one worth reporting.
fn emit(out: &str) -> std::io::Result<()> {
    let mut o = std::io::stdout().lock();
    match o.write_all(out.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// A command that failed: its error, and what it had to report all the same on stdout (the
/// report of a checkpoint that does not match its graph).
struct Failure {
    report: String,
    error: Error,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure {
            report: String::new(),
            error,
        }
    }
}

/// The graph of MODEL: a catalog name, a config.json or a folder holding one, or a GGUF file
/// (whose metadata is its config; only its header is read).
fn build(model: &str, lenient: bool) -> Result<(graph::Graph, source::Origin), Error> {
    if let Some(id) = hub_id(model) {
        let hub = anatomy_hub::Hub::from_env()?;
        let snap = hub.snapshot(&id)?;
        let spec = match snap.kind()? {
            anatomy_hub::Kind::Gguf(_) => {
                let c = snap.checkpoint(&|_, _| {})?;
                warn_problems(&c);
                anatomy_checkpoint::spec(&c, lenient)?
            }
            anatomy_hub::Kind::Safetensors => {
                let file = snap.config()?;
                let name = id.repo.rsplit('/').next().unwrap_or(&id.repo);
                source::load_file(&file, &snap.shown("config.json"), name, lenient)?
            }
        };
        return Ok((graph::build(&spec)?, snap.origin()));
    }
    let path = Path::new(model);
    if path.extension().is_some_and(|e| e == "gguf") {
        let c = anatomy_checkpoint::open(path)?;
        warn_problems(&c);
        let spec = anatomy_checkpoint::spec(&c, lenient)?;
        return Ok((graph::build(&spec)?, source::Origin::File(c.path)));
    }
    let mut loaded = source::load(model, lenient)?;
    // A folder of safetensors: the layout its headers show (a multimodal family saved
    // text-only names its tensors as a text model does).
    if path.is_dir() && anatomy_checkpoint::is_checkpoint(path) {
        if let Ok(c) = anatomy_checkpoint::open(path) {
            if c.format == anatomy_checkpoint::Format::Safetensors {
                anatomy_checkpoint::layout::fit(&mut loaded.spec, &c.tensors);
            }
        }
    }
    Ok((graph::build(&loaded.spec)?, loaded.origin))
}

/// MODEL as a Hub id: what names no local file or folder and no catalog entry, and has the
/// shape of one (`owner/name[/file.gguf][@revision]`).
fn hub_id(model: &str) -> Option<anatomy_hub::Id> {
    if Path::new(model).exists() || catalog::get(model).is_some() {
        return None;
    }
    anatomy_hub::parse(model)
}

/// MODEL's folder: a Hub id's snapshot, downloaded first (resuming a partial download), or the
/// path as given.
fn downloaded(model: &str) -> Result<PathBuf, Error> {
    let Some(id) = hub_id(model) else {
        return Ok(PathBuf::from(model));
    };
    let hub = anatomy_hub::Hub::from_env()?;
    let snap = hub.snapshot(&id)?;
    let bar = Bar::bytes();
    let path = snap.download(&|file, done, total| {
        bar.name(file);
        bar.report(done, total);
    })?;
    bar.finish();
    eprintln!("{}", snap.origin().describe());
    Ok(path)
}

/// MODEL's checkpoint by its headers, when it is one (a .gguf, a folder of safetensors, or a
/// Hub repo holding weights); None for a config or a catalog name.
fn checkpoint_of(model: &str) -> Result<Option<anatomy_checkpoint::Checkpoint>, Error> {
    if let Some(id) = hub_id(model) {
        let hub = anatomy_hub::Hub::from_env()?;
        let snap = hub.snapshot(&id)?;
        let weights = snap
            .files
            .iter()
            .any(|f| f.ends_with(".safetensors") || f.ends_with(".gguf"));
        return if weights {
            snap.checkpoint(&|_, _| {}).map(Some)
        } else {
            Ok(None)
        };
    }
    let path = Path::new(model);
    if anatomy_checkpoint::is_checkpoint(path) {
        return anatomy_checkpoint::open(path).map(Some);
    }
    Ok(None)
}

fn warn_problems(c: &anatomy_checkpoint::Checkpoint) {
    if !c.problems.is_empty() {
        eprintln!(
            "warning: {}: {} {} not where or what its header says; `anatomy verify` lists them",
            fmt::printable(&c.path),
            fmt::count(c.problems.len() as u128, "tensor"),
            if c.problems.len() == 1 { "is" } else { "are" }
        );
    }
}

fn run(cli: Cli) -> Result<String, Failure> {
    match cli.command {
        Command::Verify {
            checkpoint,
            data,
            json,
        } => verify(&checkpoint, data, json, cli.lenient),
        command => Ok(run_command(command, cli.lenient)?),
    }
}

/// Every command but `verify`, which reports even when it fails.
fn run_command(command: Command, lenient: bool) -> Result<String, Error> {
    match command {
        Command::Show { model, step, width } => {
            let (g, _) = build(&model, lenient)?;
            let width = width
                .or_else(|| terminal_size::terminal_size().map(|(w, _)| w.0 as usize))
                .unwrap_or(100);
            let color = std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            render::render(&g, &render::Options { width, color, step })
        }
        Command::Stats {
            model,
            context,
            json,
        } => {
            let (g, origin) = build(&model, lenient)?;
            let s = stats::stats(&g, context)?;
            Ok(if json {
                let mut v = serde_json::to_value(&s).expect("stats serialize");
                v["source"] = origin.json();
                serde_json::to_string_pretty(&v).expect("json") + "\n"
            } else {
                render::report::stats(&g, &s, &origin.describe())
            })
        }
        Command::Plan {
            model,
            device,
            memory,
            bandwidth,
            flops,
            context,
            batch,
            weights,
            kv_type,
            runtime,
            ubatch,
            flash_attn,
            swa_full,
            json,
        } => {
            use anatomy_core::plan;
            if device == "list" {
                return Ok(plan::devices::all()
                    .iter()
                    .map(|d| format!("{:<10} {}\n", d.id, d.name))
                    .collect());
            }
            let (g, origin) = build(&model, lenient)?;
            let bad = |field: &str, m: String| Error::new(&model, field, m);
            let mut dev = plan::devices::find(&device).ok_or_else(|| {
                bad(
                    "--device",
                    format!(
                        "is `{device}`, not in the table; give one of {} (`--device list`), and --memory, --bandwidth or --flops for another",
                        plan::devices::ids()
                    ),
                )
            })?;
            let positive = |field: &str, x: Option<f64>| match x {
                Some(v) if !(v.is_finite() && v > 0.0) => {
                    Err(bad(field, format!("is {v}; give a positive number")))
                }
                Some(_) | None => Ok(x),
            };
            if let Some(gib) = positive("--memory", memory)? {
                dev.memory = Some((gib * (1u64 << 30) as f64) as u64);
            }
            if let Some(gbs) = positive("--bandwidth", bandwidth)? {
                dev.bandwidth = gbs * 1e9;
            }
            if let Some(tf) = positive("--flops", flops)? {
                dev.flops_bf16 = Some(tf * 1e12);
                dev.flops_fp8 = Some(tf * 1e12);
                dev.flops_int8 = Some(tf * 1e12);
            }
            if memory.is_some() || bandwidth.is_some() || flops.is_some() {
                dev.name = format!("{} (figures given by hand)", dev.name);
            }
            let checkpoint = checkpoint_of(&model)?;
            // A config that declares a quantization_config plans its checkpoint as declared.
            let declared = plan::declared(&g)?;
            let weights = match (weights.as_deref(), &checkpoint, declared) {
                (None | Some("stored"), Some(c), _) => {
                    plan::Weights::Stored(anatomy_checkpoint::stored_bytes(c))
                }
                (None | Some("stored"), None, Some(d)) => plan::Weights::Stored(d),
                (Some("stored"), None, None) => {
                    return Err(bad(
                        "--weights",
                        "is `stored`, but MODEL is a config, not a checkpoint; give a format: "
                            .to_string()
                            + &plan::WeightFormat::names(),
                    ))
                }
                (None, None, None) => plan::Weights::Format(plan::WeightFormat::Bf16),
                (Some(f), _, _) => {
                    plan::Weights::Format(plan::WeightFormat::parse(f).ok_or_else(|| {
                        bad(
                            "--weights",
                            format!(
                                "is `{f}`; give `stored` or one of {}",
                                plan::WeightFormat::names()
                            ),
                        )
                    })?)
                }
            };
            let gguf = checkpoint
                .as_ref()
                .is_some_and(|c| c.format == anatomy_checkpoint::Format::Gguf);
            let runtime = match runtime {
                Some(r) => plan::Runtime::parse(&r).ok_or_else(|| {
                    bad(
                        "--runtime",
                        format!("is `{r}`; give one of {}", plan::Runtime::names()),
                    )
                })?,
                None if gguf => plan::Runtime::LlamaCpp,
                None => plan::Runtime::Vllm,
            };
            let kv = match kv_type {
                Some(k) => Some(plan::KvType::parse(&k).ok_or_else(|| {
                    bad(
                        "--kv-type",
                        format!("is `{k}`; give one of {}", plan::KvType::names()),
                    )
                })?),
                None => None,
            };
            if ubatch == 0 {
                return Err(bad("--ubatch", "is 0; give a number of tokens".into()));
            }
            let target = plan::Target {
                device: dev,
                runtime,
                settings: plan::Settings {
                    ubatch,
                    flash_attn,
                    swa_full,
                    ..plan::Settings::default()
                },
                context: context.unwrap_or(g.spec.context),
                batch,
                weights,
                kv,
            };
            let p = plan::plan(&g, &target)?;
            Ok(if json {
                let mut v = serde_json::to_value(&p).expect("plan serialize");
                v["source"] = origin.json();
                serde_json::to_string_pretty(&v).expect("json") + "\n"
            } else {
                render::plan::plan(&p)
            })
        }
        Command::Manifest {
            model,
            naming,
            json,
        } => {
            let (g, origin) = build(&model, lenient)?;
            let naming = match naming {
                Naming::Hf => manifest::Naming::Hf,
                Naming::Gguf => manifest::Naming::Gguf,
            };
            let entries = manifest::manifest(&g, naming)?;
            Ok(if json {
                render::report::manifest_json(&g, &entries, &origin)
            } else {
                render::report::manifest(&entries)
            })
        }
        Command::Html {
            model,
            output,
            context,
            compare,
            target,
            force,
        } => {
            output::check_target(&output, force)?;
            let (g, origin) = build(&model, lenient)?;
            if target.is_some() && g.spec.draft.is_none() {
                return Err(Error::new(
                    &g.spec.name,
                    "--target",
                    "is for a draft model (a Gemma 4 assistant); this model runs on its own",
                ));
            }
            let page = match compare {
                Some(other) => {
                    let (gb, ob) = build(&other, lenient)?;
                    let d = anatomy_core::diff::diff(&g, &gb)?;
                    render::html::compare::page(&g, &gb, &d, (&origin.describe(), &ob.describe()))?
                }
                None => page(
                    &model,
                    target.as_deref(),
                    &g,
                    &origin,
                    context,
                    lenient,
                    None,
                )?,
            };
            output::write(&output, page.as_bytes(), force)?;
            Ok(format!(
                "wrote {} ({} bytes)\n",
                output.display(),
                page.len()
            ))
        }
        Command::Site { output, force } => site(&output, force),
        Command::Verify { .. } => unreachable!("`run` handles verify"),
        Command::Run {
            model,
            prompt,
            pixels,
            image_size,
            image,
            image_backend,
            ids,
            chat,
            max_tokens,
            ignore_eos,
            logits,
            target,
            force,
            json,
            tiny,
            threads,
            dtype,
        } => {
            if let Some(n) = threads {
                // Threads beyond the cores only wait on each other (10,000 took 2,000 times
                // as long as 2 on two cores).
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                if usize::from(n) > cores && !force {
                    return Err(Error::new(
                        "run",
                        "--threads",
                        format!("is {n}, more than this machine's {cores} cores; give at most {cores} (or add --force to run that many anyway)"),
                    ));
                }
                // Read once, when candle first starts its thread pools, which is later.
                std::env::set_var("CANDLE_NUM_THREADS", n.to_string());
                std::env::set_var("RAYON_NUM_THREADS", n.to_string());
            }
            let picture = match (pixels, image) {
                (Some(p), _) => Some(session::Picture::Pixels(
                    p,
                    image_size.and_then(|s| s.try_into().ok()),
                )),
                (None, Some(i)) => Some(session::Picture::File(i, image_backend.into())),
                (None, None) => None,
            };
            let req = Request {
                prompt,
                picture,
                ids,
                chat,
                max_tokens,
                ignore_eos,
                logits,
                target,
                force,
                json,
                hold: match dtype {
                    Dtype::Stored => anatomy_exec::weights::Hold::Stored,
                    Dtype::F32 => anatomy_exec::weights::Hold::F32,
                },
            };
            if tiny {
                run_tiny(&model, req, lenient)
            } else {
                run_model(&downloaded(&model)?, req, lenient)
            }
        }
        Command::Export {
            model,
            format,
            output,
            force,
            variant,
        } => {
            if variant.is_some() && !matches!(format, ExportFormat::Svg) {
                return Err(Error::new(
                    &model,
                    "--variant",
                    "is for --format svg only: the other formats hold every variant",
                ));
            }
            if let Some(o) = &output {
                output::check_target(o, force)?;
            }
            let (g, origin) = build(&model, lenient)?;
            let text = match format {
                ExportFormat::Json => {
                    serde_json::to_string_pretty(&render::export::json(&g, &origin)?).expect("json")
                        + "\n"
                }
                ExportFormat::Svg => render::html::standalone_svg(&g, variant)?,
                ExportFormat::Mermaid => render::export::mermaid(&g)?,
                ExportFormat::Md => render::export::markdown(&g, &origin)?,
            };
            match output {
                Some(o) => {
                    output::write(&o, text.as_bytes(), force)?;
                    Ok(format!("wrote {} ({} bytes)\n", o.display(), text.len()))
                }
                None => Ok(text),
            }
        }
        Command::Diff { a, b, json } => {
            let (ga, oa) = build(&a, lenient)?;
            let (gb, ob) = build(&b, lenient)?;
            let d = anatomy_core::diff::diff(&ga, &gb)?;
            // Two checkpoints are compared tensor by tensor too, by their headers.
            let stored = match (checkpoint_of(&a)?, checkpoint_of(&b)?) {
                (Some(x), Some(y)) => Some(anatomy_checkpoint::compare(&x, &y)),
                _ => None,
            };
            Ok(if json {
                let mut v = serde_json::to_value(&d).expect("diff serialize");
                v["source_a"] = oa.json();
                v["source_b"] = ob.json();
                if let Some(c) = &stored {
                    v["checkpoints"] = serde_json::to_value(c).expect("json");
                }
                serde_json::to_string_pretty(&v).expect("json") + "\n"
            } else {
                let mut text = render::report::diff(&d);
                if let Some(c) = &stored {
                    text += &format!("\n{}", c.text(&d.a, &d.b));
                }
                text
            })
        }
        Command::Ops { model } => {
            let (g, _) = build(&model, lenient)?;
            Ok(render::report::ops(&g))
        }
        Command::Numpy {
            model,
            output,
            force,
        } => {
            output::check_target(&output, force)?;
            let (g, _) = build(&model, lenient)?;
            let script = output
                .file_name()
                .map_or("model.py".into(), |n| fmt::printable(&n.to_string_lossy()));
            let code = render::numpy::module(&g, &script);
            output::write(&output, code.as_bytes(), force)?;
            Ok(format!(
                "wrote {} ({} lines)\n",
                output.display(),
                code.lines().count()
            ))
        }
        Command::Torch { model } => {
            let (g, _) = build(&model, lenient)?;

            Ok(render::torch::module(&g.spec))
        }
        Command::List { model_types: true } => {
            // Columns as wide as their longest entry, and a space more: the names never touch.
            let families = anatomy_core::families::FAMILIES;
            // A language model read only inside its wrapper says which.
            let label = |f: &anatomy_core::families::Family| match families
                .iter()
                .find(|w| !f.standalone && w.text == Some(f.model_type))
            {
                Some(w) => format!("{}, inside {}", f.name, w.model_type),
                None => f.name.to_string(),
            };
            let w = 1 + families.iter().map(|f| label(f).len()).max().unwrap_or(0);
            let m = 1
                + (families.iter())
                    .flat_map(|f| std::iter::once(f.model_type).chain(f.aliases.iter().copied()))
                    .map(str::len)
                    .max()
                    .unwrap_or(0);
            let mut out = format!("{:<m$}{:<w$}{}\n", "model_type", "family", "gguf");
            for f in families {
                for t in std::iter::once(f.model_type).chain(f.aliases.iter().copied()) {
                    let gguf = anatomy_checkpoint::gguf::ARCHITECTURES
                        .iter()
                        .find(|a| a.model_type == t)
                        .map_or("-", |a| a.name);
                    out += &format!("{t:<m$}{:<w$}{gguf}\n", label(f));
                }
            }
            Ok(out)
        }
        Command::List { model_types: false } => {
            let mut rows = Vec::new();
            for e in catalog::ENTRIES {
                let (g, _) = build(e.name, false)?;
                let s = stats::stats(&g, None)?;
                rows.push([
                    e.name.to_string(),
                    g.spec.family.clone(),
                    fmt::short(s.total_params as u128),
                    fmt::short(s.active_params as u128),
                    g.spec.layers.to_string(),
                    fmt::context(g.spec.context),
                    e.provenance(),
                ]);
            }
            let header = [
                "name", "family", "params", "active", "layers", "context", "source",
            ];
            let wide = |i: usize| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .chain([header[i].len()])
                    .max()
                    .unwrap_or(0)
            };
            let (w0, w1) = (wide(0) + 2, wide(1) + 2);
            let line = |r: [&str; 7]| {
                format!(
                    "{:<w0$}{:<w1$}{:>8}{:>8}{:>8}{:>9}  {}\n",
                    r[0], r[1], r[2], r[3], r[4], r[5], r[6]
                )
            };
            let mut out = line(header);
            for r in &rows {
                out += &line(r.each_ref().map(|s| s.as_str()));
            }
            Ok(out)
        }
    }
}

/// A model's page, with the op view's values from a run of it: a draft model's from a draft
/// step after its `target` read a prompt, none without one.
fn page(
    model: &str,
    target: Option<&str>,
    g: &graph::Graph,
    origin: &source::Origin,
    context: Option<u64>,
    lenient: bool,
    gallery: Option<&str>,
) -> Result<String, Error> {
    let values = match (g.spec.draft, target) {
        (Some(_), None) => None,
        // Both run: a Hub id's weights are fetched first.
        (Some(_), Some(t)) => Some(session::draft_values(
            &downloaded(model)?,
            &downloaded(t)?,
            g,
            lenient,
        )),
        (None, _) => Some(session::op_values(Path::new(model), g, lenient)),
    };
    let values = values.transpose().map_err(|e| {
        Error::new(
            e.file,
            e.field,
            format!(
                "{} (while running the model for the op view's values)",
                e.message
            ),
        )
    })?;
    render::html::page_linked(
        &render::html::PageInput {
            graph: g,
            provenance: &origin.describe(),
            context,
            values: values.as_ref(),
        },
        &render::html::Links {
            gallery,
            source: origin.source_url(),
        },
    )
}

/// `anatomy site`: every page is made and every target checked before the first is written.
fn site(dir: &Path, force: bool) -> Result<String, Error> {
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::file(
                dir.display().to_string(),
                format!("cannot create the folder: {e}"),
            )
        })?;
    } else if !dir.is_dir() {
        return Err(Error::file(dir.display().to_string(), "is not a folder"));
    }
    let mut graphs = Vec::new();
    for e in catalog::ENTRIES {
        let (g, origin) = build(e.name, false)?;
        graphs.push((g, origin, e));
    }
    let mut files = Vec::new();
    for (g, origin, e) in &graphs {
        files.push((
            dir.join(format!("{}.html", e.name)),
            page(e.name, None, g, origin, None, false, Some("index.html"))?,
        ));
    }
    let rows: Vec<render::html::site::Row> = graphs
        .iter()
        .map(|(g, _, e)| render::html::site::Row {
            graph: g,
            href: format!("{}.html", e.name),
            source: e.repo.to_string(),
        })
        .collect();
    files.push((dir.join("index.html"), render::html::site::index(&rows)?));
    files.push((
        dir.join("compare.html"),
        render::html::site::compare(&rows)?,
    ));
    for (path, _) in &files {
        output::check_target(path, force)?;
    }
    for (path, contents) in &files {
        output::write(path, contents.as_bytes(), force)?;
    }
    Ok(format!(
        "wrote {} pages, index.html and compare.html to {}\n",
        rows.len(),
        dir.display()
    ))
}

fn verify(arg: &str, data: bool, json: bool, lenient: bool) -> Result<String, Failure> {
    let hub = match hub_id(arg) {
        Some(id) => Some((anatomy_hub::Hub::from_env()?, id)),
        None => None,
    };
    let snap = match &hub {
        Some((hub, id)) => {
            if data {
                return Err(Error::new(arg, "--data", "reads every value, which needs the weights on disk: `anatomy run` downloads a Hub checkpoint into the cache; verify that folder with --data").into());
            }
            Some(hub.snapshot(id)?)
        }
        None => None,
    };
    let c = match &snap {
        Some(snap) => {
            let bar = Bar::count("reading headers");
            let c = snap.checkpoint(&|done, total| bar.report(done as u64, total as u64))?;
            bar.finish();
            c
        }
        None => anatomy_checkpoint::open(Path::new(arg))?,
    };
    let g = graph::build(&anatomy_checkpoint::spec(&c, lenient)?)?;
    let r = anatomy_checkpoint::verify::verify(&g, &c)?;
    let findings = if data && r.problems.is_empty() {
        let bar = Bar::count("reading tensors");
        let f = anatomy_checkpoint::verify::data(&c, &mut |done, total| {
            bar.report(done as u64, total as u64)
        })?;
        bar.finish();
        Some(f)
    } else {
        None
    };
    let clean = r.clean() && findings.as_ref().is_none_or(|f| f.is_empty());
    let origin = match &snap {
        Some(s) => s.origin(),
        None => source::Origin::File(c.path.clone()),
    };
    let out = if json {
        let mut v = anatomy_checkpoint::verify::report_json(&r, findings.as_deref());
        v["source"] = origin.json();
        if let Some(s) = &snap {
            v["transferred_bytes"] = serde_json::json!(s.transferred());
            v["checkpoint_bytes"] = serde_json::json!(s.size_of_files_read());
        }
        serde_json::to_string_pretty(&v).expect("json") + "\n"
    } else {
        let mut text = anatomy_checkpoint::verify::report_text(&g, &c, &r)?;
        if let Some(s) = &snap {
            let (got, of) = (s.transferred(), s.size_of_files_read());
            text += &format!(
                "{}\nread over HTTP: {} bytes of the checkpoint's {} ({:.4}%), headers only\n",
                origin.describe(),
                got,
                of,
                100.0 * got as f64 / of.max(1) as f64
            );
        }
        if let Some(f) = &findings {
            text += &format!("data: read every tensor; {} findings\n", f.len());
            for f in f {
                text += &format!("  {} {}\n", f.tensor, f.what);
            }
        }
        text
    };
    if clean {
        Ok(out)
    } else {
        // The report goes to stdout all the same; the exit status says it failed.
        Err(Failure {
            report: out,
            error: Error::file(c.path, "does not match the graph (see the report above)"),
        })
    }
}

/// `run --image-backend`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum ImageBackend {
    Torchvision,
    Pil,
}

impl From<ImageBackend> for anatomy_exec::processor::Backend {
    fn from(b: ImageBackend) -> Self {
        match b {
            ImageBackend::Torchvision => Self::Torchvision,
            ImageBackend::Pil => Self::Pil,
        }
    }
}

/// What `run` was asked for, besides the model.
struct Request {
    prompt: Option<String>,
    picture: Option<session::Picture>,
    ids: Option<Vec<u32>>,
    chat: bool,
    max_tokens: u64,
    ignore_eos: bool,
    logits: Option<PathBuf>,
    target: Option<String>,
    force: bool,
    json: bool,
    hold: anatomy_exec::weights::Hold,
}

/// A progress bar on stderr when it is a terminal; nothing otherwise.
struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// Counts of items (`what 3/10`).
    fn count(what: &str) -> Bar {
        Bar::with(&format!("{what} {{bar:40}} {{pos}}/{{len}}"))
    }

    /// Bytes of a named file.
    fn bytes() -> Bar {
        Bar::with("downloading {msg} {bar:40} {bytes}/{total_bytes} {bytes_per_sec}")
    }

    fn with(template: &str) -> Bar {
        Bar(std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(indicatif::ProgressStyle::with_template(template).expect("template"));
            b
        }))
    }

    fn report(&self, done: u64, total: u64) {
        if let Some(b) = &self.0 {
            b.set_length(total);
            b.set_position(done);
        }
    }

    fn name(&self, what: &str) {
        if let Some(b) = &self.0 {
            b.set_message(what.to_string());
        }
    }

    fn finish(self) {
        if let Some(b) = self.0 {
            b.finish_and_clear();
        }
    }
}

/// `anatomy run`: load weights (with a progress bar on a terminal), then decode or dump logits.
fn run_model(path: &Path, req: Request, lenient: bool) -> Result<String, Error> {
    if let Some(out) = &req.logits {
        output::check_target(out, req.force)?;
    }
    if !anatomy_checkpoint::is_checkpoint(path) && (path.is_file() || !path.exists()) {
        let shown = path.display().to_string();
        let what = if path.exists() {
            "is a file, not a checkpoint"
        } else if catalog::get(&shown).is_some() {
            "is a catalog config, not a checkpoint: it has no weights"
        } else {
            "is not a checkpoint (no such file or folder)"
        };
        return Err(Error::file(
            &shown,
            format!("{what}; run a .gguf file, a folder of safetensors with its config.json, or a Hub id, or add --tiny to run a scaled-down copy of any model on random weights"),
        ));
    }
    let mut opened = session::open(path, lenient)?;
    opened.checkpoint.data_is_sound()?;
    let shown = opened.checkpoint.path.clone();
    // A prompt needs the tokenizer; ids are decoded to text with it where there is one.
    let tok = match (&req.prompt, &req.logits) {
        (Some(_), _) => Some(opened.tokenizer()?),
        (None, None) => opened.tokenizer().ok(),
        (None, Some(_)) => None,
    };
    // An image: read before the weights (a bad file fails fast), and before the prompt, whose
    // layout of the image may follow its tiles (Llama 4's).
    let (pixels, tiles) = match &req.picture {
        Some(p) => {
            let (pixels, tiles) = session::pixels(p, &opened)?;
            (Some(pixels), tiles)
        }
        None => (None, None),
    };
    let dims = pixels.as_ref().map_or(vec![], |p| p.values.dims().to_vec());
    // With --chat, the text the template made of the prompt (reported by --json).
    let mut chat_text = None;
    let (ids, arg) = match (&req.prompt, &req.ids, &tok) {
        (Some(p), _, Some(t)) if req.chat => {
            let images = usize::from(req.picture.is_some());
            let template = opened.chat_template()?;
            let text = chat_child::render(&template, p, images)?;
            // As transformers tokenizes a chat: a tokenizer's template never gets special
            // tokens added; a processor's (a message with an image) gets them unless the
            // text starts with the BOS, and frames the image's placeholders first.
            let specials =
                images > 0 && (template.bos.is_empty() || !text.starts_with(&template.bos));
            let framed = match images {
                0 => text.clone(),
                _ => session::framed(
                    &text,
                    &opened.spec,
                    (t, &opened.bos_text(t)?),
                    (&dims, tiles),
                    &shown,
                )?,
            };
            let ids = session::encode(t, &framed, specials, &shown)?;
            chat_text = Some(text);
            (ids, "--prompt")
        }
        (Some(p), _, Some(t)) => {
            // As transformers' `tokenizer(prompt)`: with what the post-processor adds, the
            // image's placeholders framed as its processor frames them.
            let text = match &req.picture {
                Some(_) => session::framed(
                    p,
                    &opened.spec,
                    (t, &opened.bos_text(t)?),
                    (&dims, tiles),
                    &shown,
                )?,
                None => p.clone(),
            };
            // PaliGemma's processor writes the BOS after the image itself.
            let writes_bos = req.picture.is_some()
                && (opened.spec.image.as_ref()).is_some_and(|i| i.placeholders.writes_bos());
            let mut ids = session::encode(t, &text, !writes_bos, &shown)?;
            if let Some(bos) = opened
                .bos()?
                .filter(|b| ids.first() != Some(b) && !writes_bos)
            {
                ids.insert(0, bos);
            }
            (ids, "--prompt")
        }
        (None, Some(ids), _) => (ids.clone(), "--ids"),
        _ => {
            return Err(Error::new(
                &shown,
                "--prompt",
                "give a prompt (--prompt TEXT) or token ids (--ids 1,2,3)",
            ))
        }
    };
    let new = if req.logits.is_some() {
        0
    } else {
        req.max_tokens
    };
    // The image's placeholders as the processor expands them.
    let ids = match &pixels {
        Some(p) => {
            let ids = session::with_placeholders(&ids, p, &opened.spec);
            session::check_placeholders(&ids, p, &opened.spec, &shown, arg)?;
            ids
        }
        None => ids,
    };
    session::check_ids(&ids, new, &opened.spec, &shown, arg)?;
    let eos = if req.ignore_eos {
        Vec::new()
    } else {
        opened.eos_ids()?
    };
    // Only what decoding ids to text needs is kept beside the weights.
    let tok = tok.map(|t| anatomy_exec::tokenizer::Detokenizer::new(&t));
    opened.forget_tokenizer();
    let bar = Bar::count("loading weights");
    let model = opened.load(req.hold, &mut |done, total| {
        bar.report(done as u64, total as u64)
    })?;
    bar.finish();
    let flag = match req.hold {
        anatomy_exec::weights::Hold::Stored => "stored",
        anatomy_exec::weights::Hold::F32 => "f32",
    };
    eprintln!("weights: {} (--dtype {flag})", model.held());
    if model.spec.draft.is_some() || req.target.is_some() {
        return run_draft(&model, &ids, req, lenient, tok.as_ref());
    }
    if let Some(out) = req.logits {
        let npy = match &pixels {
            Some(p) => session::image_logits_npy(&model, &ids, p)?,
            None => session::logits_npy(&model, &ids)?,
        };
        output::write(&out, &npy, req.force)?;
        return Ok(format!(
            "wrote {} ({} positions × {} logits, f32)\n",
            out.display(),
            ids.len(),
            model.spec.logits_width()
        ));
    }
    let stream = if req.json { None } else { tok.as_ref() };
    let generation = decode(&model, &ids, pixels.as_ref(), req.max_tokens, &eos, stream)?;
    if !req.json {
        return Ok(match tok {
            Some(_) => "\n".into(),
            None => format!("{:?}\n", generation.ids),
        });
    }
    let mut out = serde_json::json!({
        "prompt_ids": ids,
        "generated_ids": generation.ids,
    });
    if let Some(text) = chat_text {
        out["prompt_text"] = serde_json::json!(text);
    }
    if let Some(tok) = &tok {
        out["text"] = serde_json::json!(tok
            .decode(&generation.ids)
            .map_err(|e| Error::file(&shown, e.to_string()))?);
    }
    Ok(out.to_string() + "\n")
}

/// A draft model's round: the target (--target) reads `ids`, `model` drafts --max-tokens
/// tokens from its state; their text (or ids, without a tokenizer), or their logits with
/// --logits.
fn run_draft(
    model: &anatomy_exec::Model,
    ids: &[u32],
    req: Request,
    lenient: bool,
    tok: Option<&anatomy_exec::tokenizer::Detokenizer>,
) -> Result<String, Error> {
    let Some(path) = &req.target else {
        return Err(Error::new(
            &model.spec.name,
            "--target",
            "is missing; a draft model (a Gemma 4 assistant) drafts from its target's state: give the target's checkpoint with --target DIR",
        ));
    };
    let opened = session::open(&downloaded(path)?, lenient)?;
    opened.checkpoint.data_is_sound()?;
    session::check_ids(ids, 0, &opened.spec, &opened.checkpoint.path, "--ids")?;
    let target = opened.load(req.hold, &mut |_, _| {})?;
    let n = req.max_tokens as usize;
    let drafted = model.draft(&target, ids, n)?;
    let text = match tok {
        Some(t) => Some(
            t.decode(&drafted.tokens)
                .map_err(|e| Error::file(&model.spec.name, e.to_string()))?,
        ),
        None => None,
    };
    match req.logits {
        Some(out) => {
            output::write(&out, &session::npy(&drafted.logits)?, req.force)?;
            Ok(format!(
                "wrote {} ({n} drafted tokens × {} logits, f32)\n",
                out.display(),
                model.spec.vocab
            ))
        }
        None if req.json => {
            let mut out = serde_json::json!({
                "prompt_ids": ids,
                "drafted_ids": drafted.tokens,
            });
            if let Some(text) = text {
                out["text"] = serde_json::json!(text);
            }
            Ok(out.to_string() + "\n")
        }
        None => Ok(match text {
            Some(text) => text + "\n",
            None => format!("{:?}\n", drafted.tokens),
        }),
    }
}

/// Greedy decoding up to `max_tokens` or an end-of-sequence id, its text streamed to stdout
/// as it comes when `stream` has the tokenizer; the speeds to stderr.
fn decode(
    model: &anatomy_exec::Model,
    ids: &[u32],
    pixels: Option<&anatomy_exec::Pixels>,
    max_tokens: u64,
    eos: &[u32],
    stream: Option<&anatomy_exec::tokenizer::Detokenizer>,
) -> Result<anatomy_exec::Generation, Error> {
    let mut text = String::new();
    let mut generated = Vec::new();
    let mut stdout = std::io::stdout().lock();
    // A write that fails stops the decoding: a full disk is reported, a closed pipe is not.
    let mut failed: Option<std::io::Error> = None;
    let generation =
        anatomy_exec::generate_with(model, ids, pixels, max_tokens as usize, &mut |id| {
            // The end-of-sequence id is kept in the ids (as transformers keeps it) but not printed.
            if eos.contains(&id) {
                return false;
            }
            generated.push(id);
            if let Some(tok) = stream {
                if let Ok(all) = tok.decode(&generated) {
                    if all.len() > text.len() && all.is_char_boundary(text.len()) {
                        let wrote =
                            write!(stdout, "{}", &all[text.len()..]).and_then(|()| stdout.flush());
                        text = all;
                        if let Err(e) = wrote {
                            failed = Some(e);
                            return false;
                        }
                    }
                }
            }
            true
        })?;
    if let Some(e) = failed.filter(|e| e.kind() != std::io::ErrorKind::BrokenPipe) {
        return Err(Error::file(
            "standard output",
            format!("cannot write the generated text: {e}"),
        ));
    }
    let rate = |n: usize, d: std::time::Duration| n as f64 / d.as_secs_f64().max(1e-9);
    let stop = match generation.ids.last() {
        Some(id) if eos.contains(id) => format!("stopped at end-of-sequence id {id}"),
        _ if eos.is_empty() => "no end-of-sequence id to stop at".to_string(),
        _ => format!("stopped after --max-tokens {max_tokens}"),
    };
    eprintln!(
        "\n{stop} · prefill: {} tokens in {:.0} ms ({:.1} tokens/s) · decode: {} tokens in {:.0} ms ({:.1} tokens/s) · cache: {:.1} MB",
        ids.len(),
        generation.prefill.as_secs_f64() * 1e3,
        rate(ids.len(), generation.prefill),
        generation.ids.len().saturating_sub(1),
        generation.decode.as_secs_f64() * 1e3,
        rate(generation.ids.len().saturating_sub(1), generation.decode),
        generation.cache_bytes as f64 / 1e6
    );
    Ok(generation)
}

/// `anatomy run --tiny`: the model's structure at toy sizes, on seeded random weights.
fn run_tiny(model: &str, req: Request, lenient: bool) -> Result<String, Error> {
    let shown = model.to_string();
    if let Some(out) = &req.logits {
        output::check_target(out, req.force)?;
    }
    if let Some(p) = &req.picture {
        return Err(Error::new(
            &shown,
            p.flag(),
            format!("a tiny copy is the language model alone, on random weights: it has no tower to run an image through; run a checkpoint with {}", p.flag()),
        ));
    }
    let (g, _) = build(model, lenient)?;
    let ids = req.ids.ok_or_else(|| {
        Error::new(
            &shown,
            "--ids",
            "a tiny model has random weights and no tokenizer: give token ids (--ids 1,2,3)",
        )
    })?;
    let m = session::tiny(&g.spec)?;
    let new = if req.logits.is_some() {
        0
    } else {
        req.max_tokens
    };
    session::check_ids(&ids, new, &m.spec, &shown, "--ids")?;
    let s = &m.spec;
    eprintln!(
        "random weights on a scaled-down copy: hidden {}, {} layers, {} heads ({} K/V), vocab {}",
        s.hidden, s.layers, s.attn.heads, s.attn.kv_heads, s.vocab
    );
    if let Some(out) = req.logits {
        output::write(&out, &session::logits_npy(&m, &ids)?, req.force)?;
        return Ok(format!(
            "wrote {} ({} positions × {} logits, f32)\n",
            out.display(),
            ids.len(),
            m.spec.logits_width()
        ));
    }
    let g = anatomy_exec::generate(&m, &ids, req.max_tokens as usize, &mut |_| true)?;
    Ok(if req.json {
        serde_json::json!({ "prompt_ids": ids, "generated_ids": g.ids }).to_string() + "\n"
    } else {
        format!("{:?}\n", g.ids)
    })
}
