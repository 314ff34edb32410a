//! Model prices: the table shipped with the package (`prices.json`, its date and source inside),
//! overridden model by model by a user's file of the same shape.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

use super::usage::Tokens;

/// The table shipped with this version.
const SHIPPED: &str = include_str!("prices.json");

/// One model's prices, in USD per million tokens. A cache price left out is the input price.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl Price {
    /// What `tokens` cost at these prices, in USD.
    pub fn cost(&self, tokens: &Tokens) -> f64 {
        let per = |count: u64, price: f64| count as f64 * price / 1_000_000.0;
        per(tokens.input, self.input)
            + per(tokens.output, self.output)
            + per(tokens.cache_read, self.cache_read.unwrap_or(self.input))
            + per(tokens.cache_write, self.cache_write.unwrap_or(self.input))
    }
}

/// A table file by model name, dated, with its source and unit: `{"date", "source", "unit",
/// "models": {name: T}}` (a price file, a model file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TableFile<T> {
    #[serde(default)]
    pub date: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub unit: Option<String>,
    pub models: BTreeMap<String, T>,
}

impl<T: serde::de::DeserializeOwned> TableFile<T> {
    /// The file `shown` whose text is `text`: a `kind` file ("price", "model") whose root is named
    /// `root` in errors. A file that is not one is `INVALID_INPUT` naming the field, the line and
    /// the column.
    pub(crate) fn read(text: &str, shown: &str, kind: &str, root: &str) -> Result<TableFile<T>> {
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(deserializer).map_err(|e| {
            let inner = e.inner();
            let path = e.path().to_string();
            let at = if path == "." { String::new() } else { format!(" at {path}") };
            Error::invalid_field(
                if path == "." { root.to_string() } else { path.clone() },
                format!("{shown} is not a {kind} file{at} (line {}, column {}): {inner}", inner.line(), inner.column()),
            )
        })
    }
}

type PriceFile = TableFile<Price>;

/// The prices usage is costed with, and where they come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceTable {
    /// The date of the shipped table.
    pub date: String,
    /// Where the shipped table's prices come from.
    pub source: String,
    /// The user files read over it, in order.
    pub files: Vec<String>,
    /// Model name → prices.
    pub models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The table shipped with this version.
    pub fn shipped() -> PriceTable {
        let file: PriceFile = serde_json::from_str(SHIPPED).expect("the shipped prices.json is valid");
        PriceTable { date: file.date.unwrap_or_default(), source: file.source.unwrap_or_default(), files: Vec::new(), models: file.models }
    }

    /// Reads a user's price file over this table: its models replace the table's of the same name.
    /// A file that cannot be read or is not a price file is `INVALID_INPUT` naming it (and the
    /// field or line and column).
    pub fn overlay_file(&mut self, path: &Path) -> Result<()> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| Error::invalid(format!("cannot read the price file {shown}: {e}")))?;
        self.overlay(&text, &shown)
    }

    /// Like [`PriceTable::overlay_file`], from the file's text; `shown` names it in errors.
    pub fn overlay(&mut self, text: &str, shown: &str) -> Result<()> {
        let file = PriceFile::read(text, shown, "price", "prices")?;
        if let Some(unit) = &file.unit {
            if unit != "USD per million tokens" {
                return Err(Error::invalid_field("unit", format!("{shown}: prices must be in \"USD per million tokens\", not {unit:?}")));
            }
        }
        for (name, price) in &file.models {
            let rates = [Some(price.input), Some(price.output), price.cache_read, price.cache_write];
            if rates.iter().flatten().any(|rate| !rate.is_finite() || *rate < 0.0) {
                return Err(Error::invalid_field(format!("models.{name}"), format!("{shown}: a price is a number of USD, 0 or more")));
            }
        }
        self.models.extend(file.models);
        self.files.push(shown.to_string());
        Ok(())
    }

    /// The prices of `model`: its own entry; else, without a `vendor/` prefix or a date suffix
    /// (`-20250929`, `@20250929`, `-2025-09-29`, `-latest`), the entry of the name left.
    pub fn price(&self, model: &str) -> Option<&Price> {
        lookup(&self.models, model)
    }
}

/// The entry of `model` in a table by model name: its own; else, without a `vendor/` prefix or a
/// date suffix (`-20250929`, `@20250929`, `-2025-09-29`, `-latest`), the entry of the name left;
/// else, for a Claude model named with a dotted version as GitHub Copilot names them
/// (`claude-sonnet-4.5`), the entry of Anthropic's name (`claude-sonnet-4-5`).
pub(crate) fn lookup<'t, T>(models: &'t BTreeMap<String, T>, model: &str) -> Option<&'t T> {
    if let Some(entry) = models.get(model) {
        return Some(entry);
    }
    let bare = model.rsplit_once('/').map_or(model, |(_, name)| name);
    if let Some(entry) = models.get(bare) {
        return Some(entry);
    }
    if let Some(entry) = strip_date(bare).and_then(|undated| models.get(undated)) {
        return Some(entry);
    }
    if bare.starts_with("claude-") && bare.contains('.') {
        return models.get(&bare.replace('.', "-"));
    }
    None
}

/// The user's sna configuration file `name` (`$XDG_CONFIG_HOME/sna/<name>`, else
/// `~/.config/sna/<name>`), when it exists.
pub(crate) fn user_config_file(name: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| std::path::PathBuf::from(home).join(".config")));
    dir.map(|d| d.join("sna").join(name)).filter(|f| f.is_file())
}

/// `name` without a trailing date (or `latest`) after `-` or `@`.
fn strip_date(name: &str) -> Option<&str> {
    let is_date = |s: &str| {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        s == "latest" || (s.len() == 8 && digits(s)) || (s.len() == 10 && s.split('-').map(str::len).eq([4, 2, 2]) && s.split('-').all(digits))
    };
    name.char_indices().filter(|(i, c)| *i > 0 && (*c == '-' || *c == '@')).find(|(i, _)| is_date(&name[i + 1..])).map(|(i, _)| &name[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_without_vendor_or_date() {
        let table = PriceTable::shipped();
        assert_eq!(table.price("claude-sonnet-4-5-20250929").map(|p| p.input), Some(3.0));
        assert_eq!(table.price("anthropic/claude-sonnet-4-5").map(|p| p.input), Some(3.0));
        assert_eq!(table.price("claude-sonnet-4-5@20250929").map(|p| p.input), Some(3.0));
        assert_eq!(table.price("claude-3-5-haiku-2024-10-22").map(|p| p.input), Some(0.8));
        assert!(table.price("gpt-5-mini-turbo").is_none(), "a longer name is another model");
        assert!(table.price("claude-sonnet-4-5-fast").is_none());
        // GitHub Copilot's names for Claude models.
        assert_eq!(table.price("claude-sonnet-4.5").map(|p| p.input), Some(3.0));
        assert!(table.price("gpt-5.9-unknown").is_none());
    }

    #[test]
    fn a_user_file_overrides_model_by_model_and_bad_files_name_the_field() {
        let mut table = PriceTable::shipped();
        table.overlay(r#"{"models": {"claude-sonnet-4-5": {"input": 1, "output": 2}, "mine": {"input": 0, "output": 0}}}"#, "u.json").unwrap();
        let price = table.price("claude-sonnet-4-5").unwrap();
        assert_eq!((price.input, price.cache_read), (1.0, None));
        assert_eq!(price.cost(&Tokens { input: 1_000_000, cache_read: 1_000_000, ..Tokens::default() }), 2.0);
        assert!(table.price("gpt-5").is_some());
        let err = table.overlay(r#"{"models": {"x": {"input": "3", "output": 1}}}"#, "u.json").unwrap_err();
        assert!(err.to_string().contains("models.x.input"), "{err}");
        let err = table.overlay(r#"{"models": {"x": {"input": -1, "output": 1}}}"#, "u.json").unwrap_err();
        assert!(err.to_string().contains("models.x"), "{err}");
    }
}
