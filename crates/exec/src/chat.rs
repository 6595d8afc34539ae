//! Chat templates and end-of-sequence ids: what `run --chat` wraps a prompt in and where
//! decoding stops. The template is the checkpoint's own (`tokenizer_config.json`,
//! `chat_template.jinja`, or a GGUF's `tokenizer.chat_template`), rendered by minijinja as
//! transformers renders it with Jinja2: blocks trimmed, `raise_exception` and `strftime_now`
//! defined, Python's string methods available, `tojson` without HTML escaping. A template is
//! input like any other: its run is bounded by fuel, and its errors name the file.

use anatomy_checkpoint::gguf_header::Header;
use anatomy_core::Error;
use candle_core::quantized::gguf_file::Value as Gguf;
use std::path::Path;

/// The work a template may do (minijinja's fuel: about one unit per instruction, and more for
/// what an operation allocates); real chat templates use a few thousand for one message. What
/// one instruction can build is bounded by the process it runs in (the CLI renders in a child
/// of bounded memory and time).
const FUEL: u64 = 1_000_000;
/// The largest template read: real ones are a few KB, the largest with tools about 50 KB.
pub const MAX_TEMPLATE: u64 = 1 << 20;

#[derive(Debug, Clone)]
pub struct Template {
    pub source: String,
    pub bos: String,
    pub eos: String,
    /// The file it came from, for errors.
    pub file: String,
}

impl Template {
    /// One user message, with the prompt that starts the assistant's reply. A message with
    /// `images` is given as transformers' processors take one: a list of that many
    /// `{"type": "image"}` parts, then `{"type": "text", "text": user}`, so that the template
    /// writes the model's image placeholders where it puts them.
    pub fn render(&self, user: &str, images: usize) -> Result<String, Error> {
        let err = |e: minijinja::Error| {
            let mut m = format!("the chat template fails: {e}");
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                m += &format!(": {s}");
                src = s.source();
            }
            Error::new(&self.file, "chat_template", m)
        };
        let mut env = minijinja::Environment::new();
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .expect("the default delimiters"),
        );
        env.set_fuel(Some(FUEL));
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |msg: String| -> Result<String, minijinja::Error> {
                Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    msg,
                ))
            },
        );
        env.add_function("strftime_now", |_fmt: String| -> String {
            // A fixed date: the output must not depend on when it ran.
            "26 Jul 2024".to_string()
        });
        env.add_filter(
            "tojson",
            |v: minijinja::Value, indent: Option<usize>| -> Result<String, minijinja::Error> {
                let json = serde_json::to_value(&v).map_err(|e| {
                    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
                })?;
                Ok(match indent {
                    Some(n) => {
                        let pad = " ".repeat(n);
                        let mut out = Vec::new();
                        let fmt = serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes());
                        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
                        serde::Serialize::serialize(&json, &mut ser).expect("json");
                        String::from_utf8(out).expect("utf-8")
                    }
                    // Python's json.dumps separators: ", " and ": ".
                    None => python_json(&json),
                })
            },
        );
        let source = generation_blocks(&self.source);
        env.add_template("chat", &source).map_err(err)?;
        let content = match images {
            0 => minijinja::Value::from(user),
            n => {
                let mut parts = vec![minijinja::context! { type => "image" }; n];
                parts.push(minijinja::context! { type => "text", text => user });
                minijinja::Value::from(parts)
            }
        };
        let ctx = minijinja::context! {
            messages => vec![minijinja::context! { role => "user", content => content }],
            add_generation_prompt => true,
            bos_token => self.bos.clone(),
            eos_token => self.eos.clone(),
        };
        env.get_template("chat")
            .and_then(|t| t.render(ctx))
            .map_err(err)
    }
}

/// The template with transformers' `{% generation %}…{% endgeneration %}` blocks (its
/// extension marks the assistant's text for training masks, and renders the body as it is) as
/// blocks minijinja renders the same way, whitespace control kept.
fn generation_blocks(source: &str) -> std::borrow::Cow<'_, str> {
    if !source.contains("generation") {
        return source.into();
    }
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(i) = rest.find("{%") {
        out.push_str(&rest[..i]);
        let tag = &rest[i..];
        let Some(end) = tag.find("%}") else {
            break;
        };
        let inner = &tag[2..end];
        let (open, body) = match inner.strip_prefix('-') {
            Some(b) => ("{%-", b),
            None => ("{%", inner),
        };
        let (body, close) = match body.strip_suffix('-') {
            Some(b) => (b, "-%}"),
            None => (body, "%}"),
        };
        match body.trim() {
            "generation" => out.push_str(&format!("{open} if true {close}")),
            "endgeneration" => out.push_str(&format!("{open} endif {close}")),
            _ => out.push_str(&tag[..end + 2]),
        }
        rest = &tag[end + 2..];
    }
    out.push_str(rest);
    out.into()
}

/// JSON as Python's `json.dumps` writes it by default (`, ` and `: ` separators).
fn python_json(v: &serde_json::Value) -> String {
    use serde_json::Value::*;
    match v {
        Array(a) => format!(
            "[{}]",
            a.iter().map(python_json).collect::<Vec<_>>().join(", ")
        ),
        Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", String(k.clone()), python_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// A bos/eos entry of tokenizer_config.json: a string, or an AddedToken object with `content`.
fn token_text(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(o) => o
            .get("content")
            .and_then(|c| c.as_str())
            .unwrap_or_default()
            .to_string(),
        None => String::new(),
    }
}

/// tokenizer_config.json beside a safetensors checkpoint, and its path (null where absent).
fn tokenizer_config(dir: &Path) -> Result<(std::path::PathBuf, serde_json::Value), Error> {
    let file = dir.join("tokenizer_config.json");
    let config = if file.is_file() {
        read_json(&file)?
    } else {
        serde_json::Value::Null
    };
    Ok((file, config))
}

/// The BOS's text in tokenizer_config.json beside a safetensors checkpoint (empty where it
/// names none).
pub fn folder_bos(dir: &Path) -> Result<String, Error> {
    Ok(token_text(tokenizer_config(dir)?.1.get("bos_token")))
}

fn read_json(path: &Path) -> Result<serde_json::Value, Error> {
    anatomy_checkpoint::safetensors::read_json(path)
}

/// The template beside a safetensors checkpoint: `chat_template.jinja`, else a processor's
/// `chat_template.json`, else tokenizer_config.json's `chat_template` (a string, or a list of named templates whose
/// `default` is used).
pub fn from_folder(dir: &Path) -> Result<Template, Error> {
    let (config_file, config) = tokenizer_config(dir)?;
    let (bos, eos) = (
        token_text(config.get("bos_token")),
        token_text(config.get("eos_token")),
    );
    let jinja = dir.join("chat_template.jinja");
    // A processor's template as transformers 4 saved it, beside a multimodal checkpoint.
    let processor = dir.join("chat_template.json");
    if !jinja.is_file() && processor.is_file() {
        let shown = processor.display().to_string();
        let source = match read_json(&processor)?.get("chat_template") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => {
                return Err(Error::new(
                    &shown,
                    "chat_template",
                    "must be the template, a string",
                ))
            }
        };
        capped(&shown, "chat_template", &source)?;
        return Ok(Template {
            source,
            bos,
            eos,
            file: shown,
        });
    }
    if jinja.is_file() {
        let shown = jinja.display().to_string();
        let mut source = String::new();
        let f = std::fs::File::open(&jinja)
            .map_err(|e| Error::file(&shown, format!("cannot open: {e}")))?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if len > MAX_TEMPLATE {
            return Err(Error::file(
                &shown,
                format!("is {len} bytes; a chat template of at most {MAX_TEMPLATE} is read"),
            ));
        }
        std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_TEMPLATE), &mut source)
            .map_err(|e| Error::file(&shown, format!("cannot read as UTF-8 text: {e}")))?;
        return Ok(Template {
            source,
            bos,
            eos,
            file: jinja.display().to_string(),
        });
    }
    let shown = config_file.display().to_string();
    let source = match config.get("chat_template") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(list)) => list
            .iter()
            .find(|t| t.get("name").and_then(|n| n.as_str()) == Some("default"))
            .and_then(|t| t.get("template")?.as_str())
            .ok_or_else(|| {
                Error::new(&shown, "chat_template", "lists templates but none named `default`")
            })?
            .to_string(),
        Some(_) => {
            return Err(Error::new(
                &shown,
                "chat_template",
                "must be a string or a list of {name, template}",
            ))
        }
        None => {
            return Err(Error::file(
                &shown,
                "has no chat_template (nor is there a chat_template.jinja beside it): this checkpoint has no chat format; drop --chat",
            ))
        }
    };
    capped(&shown, "chat_template", &source)?;
    Ok(Template {
        source,
        bos,
        eos,
        file: shown,
    })
}

/// A template from a larger file (a tokenizer config, a GGUF header) no longer than a template
/// file may be.
fn capped(shown: &str, field: &str, source: &str) -> Result<(), Error> {
    if source.len() as u64 > MAX_TEMPLATE {
        return Err(Error::new(
            shown,
            field,
            format!(
                "is {} bytes; a chat template of at most {MAX_TEMPLATE} is read",
                source.len()
            ),
        ));
    }
    Ok(())
}

/// A GGUF's `tokenizer.chat_template`, with its bos and eos tokens' text.
pub fn from_gguf(h: &Header, shown: &str) -> Result<Template, Error> {
    let key = "tokenizer.chat_template";
    let source = match h.get(key) {
        Some(Gguf::String(s)) => s.clone(),
        Some(_) => return Err(Error::new(shown, key, "must be a string")),
        None => {
            return Err(Error::new(
                shown,
                key,
                "is missing: this GGUF has no chat format; drop --chat",
            ))
        }
    };
    capped(shown, key, &source)?;
    let text = |k: &str| -> String {
        let id = h.get(k).and_then(id_of);
        match (id, h.get("tokenizer.ggml.tokens")) {
            (Some(i), Some(Gguf::Array(tokens))) => match tokens.get(i as usize) {
                Some(Gguf::String(s)) => s.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        }
    };
    Ok(Template {
        source,
        bos: text("tokenizer.ggml.bos_token_id"),
        eos: text("tokenizer.ggml.eos_token_id"),
        file: shown.to_string(),
    })
}

fn id_of(v: &Gguf) -> Option<u32> {
    match v {
        Gguf::U32(i) => Some(*i),
        Gguf::I32(i) => u32::try_from(*i).ok(),
        Gguf::U64(i) => u32::try_from(*i).ok(),
        Gguf::I64(i) => u32::try_from(*i).ok(),
        Gguf::U16(i) => Some(*i as u32),
        Gguf::U8(i) => Some(*i as u32),
        _ => None,
    }
}

/// A GGUF's end-of-generation ids, as llama.cpp stops on them: eos, eot and eom.
pub fn eos_gguf(h: &Header) -> Vec<u32> {
    let mut out: Vec<u32> = [
        "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.eot_token_id",
        "tokenizer.ggml.eom_token_id",
    ]
    .iter()
    .filter_map(|k| h.get(k).and_then(id_of))
    .collect();
    out.dedup();
    out
}

/// The ids `generate` stops at for a safetensors checkpoint, as transformers' generate finds
/// them: generation_config.json's `eos_token_id`, else config.json's (top level or
/// `text_config`); an id or a list of ids.
pub fn eos_folder(dir: &Path, config: &serde_json::Value) -> Result<Vec<u32>, Error> {
    let ids = |v: &serde_json::Value, file: &str| -> Result<Option<Vec<u32>>, Error> {
        let bad = || Error::new(file, "eos_token_id", "must be a token id or a list of ids");
        match v.get("eos_token_id") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Array(a)) => a
                .iter()
                .map(|i| {
                    i.as_u64()
                        .and_then(|i| u32::try_from(i).ok())
                        .ok_or_else(bad)
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(i) => i
                .as_u64()
                .and_then(|i| u32::try_from(i).ok())
                .map(|i| Some(vec![i]))
                .ok_or_else(bad),
        }
    };
    let gen = dir.join("generation_config.json");
    if gen.is_file() {
        if let Some(v) = ids(&read_json(&gen)?, &gen.display().to_string())? {
            return Ok(v);
        }
    }
    let file = dir.join("config.json").display().to_string();
    if let Some(v) = ids(config, &file)? {
        return Ok(v);
    }
    Ok(match config.get("text_config") {
        Some(t) => ids(t, &file)?.unwrap_or_default(),
        None => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(source: &str) -> Template {
        Template {
            source: source.into(),
            bos: "<s>".into(),
            eos: "</s>".into(),
            file: "tokenizer_config.json".into(),
        }
    }

    #[test]
    fn renders_as_jinja2_with_transformers_settings() {
        let out = t("{{ bos_token }}{% for m in messages %}\n  {{ m['role'] | upper }}: {{ m.content.strip() }}{{ eos_token }}\n{% endfor %}{% if add_generation_prompt %}A:{% endif %}")
            .render("  hi  ", 0)
            .unwrap();
        // As Jinja2 renders it (checked with jinja2 3.1, trim_blocks and lstrip_blocks on).
        assert_eq!(out, "<s>  USER: hi</s>\nA:");
        assert_eq!(
            t("{{ messages | tojson }}").render("é<", 0).unwrap(),
            r#"[{"role": "user", "content": "é<"}]"#
        );
    }

    #[test]
    fn a_bad_or_endless_template_is_an_error_naming_the_file() {
        let e = t("{{ raise_exception('no system role') }}")
            .render("x", 0)
            .unwrap_err();
        assert_eq!(e.field, "chat_template");
        assert!(e.message.contains("no system role"), "{}", e.message);
        let e = t("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}")
            .render("x", 0)
            .unwrap_err();
        assert!(e.message.contains("fuel"), "{}", e.message);
        assert!(t("{% if %}").render("x", 0).is_err());
    }

    #[test]
    fn a_folder_template_comes_from_the_jinja_file_or_the_default_of_a_list() {
        let dir = tempfile::tempdir().unwrap();
        let config = serde_json::json!({
            "bos_token": {"content": "<|begin|>", "lstrip": false},
            "eos_token": "<|end|>",
            "chat_template": [
                {"name": "tool_use", "template": "tools"},
                {"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"},
            ],
        });
        std::fs::write(dir.path().join("tokenizer_config.json"), config.to_string()).unwrap();
        let t = from_folder(dir.path()).unwrap();
        assert_eq!(t.render("x", 0).unwrap(), "<|begin|>x<|end|>");
        std::fs::write(
            dir.path().join("chat_template.jinja"),
            "[{{ messages[0].content }}]",
        )
        .unwrap();
        assert_eq!(
            from_folder(dir.path()).unwrap().render("x", 0).unwrap(),
            "[x]"
        );
        let none = tempfile::tempdir().unwrap();
        std::fs::write(none.path().join("tokenizer_config.json"), "{}").unwrap();
        let e = from_folder(none.path()).unwrap_err();
        assert!(e.message.contains("has no chat_template"), "{}", e.message);
    }

    /// LLaVA-1.5's template (llava-hf's `chat_template.json`): the image parts become its
    /// `<image>` placeholder before the text; a message without images stays a string.
    #[test]
    fn a_message_with_an_image_is_given_as_parts() {
        let dir = tempfile::tempdir().unwrap();
        let llava = "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}{% endif %}{# Render all images first #}{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}{% endfor %}{# Render all text next #}{% if message['role'] != 'assistant' %}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ content['text'] + ' '}}{% endfor %}{% else %}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{% generation %}{{ content['text'] + ' '}}{% endgeneration %}{% endfor %}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}";
        std::fs::write(
            dir.path().join("chat_template.json"),
            serde_json::json!({ "chat_template": llava }).to_string(),
        )
        .unwrap();
        let t = from_folder(dir.path()).unwrap();
        assert!(t.file.ends_with("chat_template.json"));
        assert_eq!(
            t.render("What is this?", 1).unwrap(),
            "USER: <image>\nWhat is this? ASSISTANT:"
        );
        let plain = self::t("{{ messages[0].content }}");
        assert_eq!(plain.render("x", 0).unwrap(), "x");
    }
}
