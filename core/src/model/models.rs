//! Model context windows: the table shipped with the package (`models.json`, its date and source
//! inside), overridden model by model by a user's file of the same shape. A replay into a runtime
//! is bounded by its model's input window ([`crate::replay::budget`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The table shipped with this version.
const SHIPPED: &str = include_str!("models.json");

/// One model's limits, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelLimits {
    /// The whole context window: input and output.
    pub context_window: u64,
    /// The most input tokens one request may carry.
    pub max_input: u64,
    /// The most output tokens one response may have.
    pub max_output: u64,
}

/// A model file: `{"date", "source", "unit", "models": {name: {context_window, max_input, max_output}}}`.
type ModelFile = super::prices::TableFile<ModelLimits>;

/// The model limits replays are bounded by, and where they come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelTable {
    /// The date of the shipped table.
    pub date: String,
    /// Where the shipped table's figures come from.
    pub source: String,
    /// The user files read over it, in order.
    pub files: Vec<String>,
    /// Model name → limits.
    pub models: BTreeMap<String, ModelLimits>,
}

impl ModelTable {
    /// The table shipped with this version.
    pub fn shipped() -> ModelTable {
        let file: ModelFile = serde_json::from_str(SHIPPED).expect("the shipped models.json is valid");
        ModelTable { date: file.date.unwrap_or_default(), source: file.source.unwrap_or_default(), files: Vec::new(), models: file.models }
    }

    /// The shipped table with `given` read over it, or else the user's default file
    /// (`$XDG_CONFIG_HOME/sna/models.json`, `~/.config/sna/models.json`) when it exists.
    pub fn with_user_file(given: Option<&Path>) -> Result<ModelTable> {
        let mut table = ModelTable::shipped();
        match given {
            Some(path) => table.overlay_file(path)?,
            None => {
                if let Some(file) = super::prices::user_config_file("models.json") {
                    table.overlay_file(&file)?;
                }
            }
        }
        Ok(table)
    }

    /// Reads a user's model file over this table: its models replace the table's of the same
    /// name. A file that cannot be read or is not a model file is `INVALID_INPUT` naming it (and
    /// the field, line and column).
    pub fn overlay_file(&mut self, path: &Path) -> Result<()> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| Error::invalid_field("models", format!("cannot read the model file {shown}: {e}")))?;
        self.overlay(&text, &shown)
    }

    /// Like [`ModelTable::overlay_file`], from the file's text; `shown` names it in errors.
    pub fn overlay(&mut self, text: &str, shown: &str) -> Result<()> {
        let file = ModelFile::read(text, shown, "model", "models")?;
        if let Some(unit) = &file.unit {
            if unit != "tokens" {
                return Err(Error::invalid_field("unit", format!("{shown}: limits must be in \"tokens\", not {unit:?}")));
            }
        }
        for (name, limits) in &file.models {
            if limits.max_input == 0 || limits.context_window == 0 {
                return Err(Error::invalid_field(format!("models.{name}"), format!("{shown}: a window is a number of tokens above 0")));
            }
        }
        self.models.extend(file.models);
        self.files.push(shown.to_string());
        Ok(())
    }

    /// The limits of `model`, matched as prices are ([`super::PriceTable::price`]: without a
    /// `vendor/` prefix or a date suffix when the full name is not in the table).
    pub fn limits(&self, model: &str) -> Option<&ModelLimits> {
        super::prices::lookup(&self.models, model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_priced_model_has_limits_and_a_user_file_overrides_them() {
        let table = ModelTable::shipped();
        assert!(!table.date.is_empty() && !table.source.is_empty());
        for model in crate::model::PriceTable::shipped().models.keys() {
            let limits = table.limits(model).unwrap_or_else(|| panic!("no limits for {model}"));
            assert!(limits.max_input <= limits.context_window && limits.max_output > 0, "{model}: {limits:?}");
        }
        assert!(table.limits("anthropic/claude-sonnet-4-5-20250929").is_some());
        let mut table = table;
        table.overlay(r#"{"models": {"mine": {"context_window": 1000, "max_input": 900, "max_output": 100}}}"#, "u.json").unwrap();
        assert_eq!(table.limits("mine").map(|l| l.max_input), Some(900));
        let err = table.overlay(r#"{"models": {"x": {"context_window": "big", "max_input": 1, "max_output": 1}}}"#, "u.json").unwrap_err();
        assert!(err.to_string().contains("models.x.context_window"), "{err}");
        let err = table.overlay(r#"{"models": {"x": {"context_window": 0, "max_input": 0, "max_output": 1}}}"#, "u.json").unwrap_err();
        assert!(err.to_string().contains("models.x"), "{err}");
    }
}
