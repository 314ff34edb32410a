//! `sna usage`: the rows of `Store::usage` as a table with totals, or as JSON; files named are
//! imported first, as `sna import` does.

use std::io::Write;
use std::path::PathBuf;

use sna_history::{Options, UsageBy, UsageOptions, UsageReport, UsageRow};

use crate::args::UsageArgs;
use crate::failure::Outcome;
use crate::ingest::import_files;
use crate::setup::open;
use crate::text::visible;

pub fn run(args: UsageArgs, db: Option<PathBuf>) -> Outcome {
    let UsageArgs { paths, by, since, until, runtime: rt, model, tz, prices, json } = args;
    let options = UsageOptions { by: by.parse()?, since, until, runtime: rt, model, tz, prices };
    let store = open(db)?;
    // Files that could not be imported are named on stderr and make the exit status 1;
    // the report of what the store holds is printed all the same.
    let imported = if paths.is_empty() { Ok(()) } else { import_files(&store, &paths, None, &Options::default(), true) };
    print(&store.usage(&options)?, json)?;
    imported
}

/// A count with thousands separated: `1,234,567`.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The cost of a row: `$1.23`, `$1.23 *` when some of it has no price, `—` when none has.
fn cost(row: &UsageRow) -> String {
    let partial = if row.unpriced_models.is_empty() { "" } else { " *" };
    match row.cost_usd {
        Some(usd) if usd > 0.0 && usd < 0.01 => format!("${usd:.4}{partial}"),
        Some(usd) => format!("${usd:.2}{partial}"),
        None if row.responses == 0 => "$0.00".into(),
        None => "— *".into(),
    }
}

fn cells(row: &UsageRow, key: String, models: bool) -> Vec<String> {
    let mut cells = vec![key];
    if models {
        let names: Vec<&str> = row.models.iter().map(|m| m.model.as_deref().unwrap_or("unknown")).collect();
        // The two most expensive, and how many more.
        let mut shown = names.iter().take(2).copied().collect::<Vec<_>>().join(", ");
        if names.len() > 2 {
            shown.push_str(&format!(" +{}", names.len() - 2));
        }
        cells.push(visible(&shown).into_owned());
    }
    let t = &row.tokens;
    cells.extend([count(t.input), count(t.output), count(t.cache_read), count(t.cache_write), count(row.total), cost(row)]);
    cells
}

/// Prints a usage report.
fn print(report: &UsageReport, json: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(report).map_err(std::io::Error::other)?)?;
        return Ok(());
    }
    let first = match report.by {
        UsageBy::Day => "Day",
        UsageBy::Week => "Week of",
        UsageBy::Month => "Month",
        UsageBy::Session => "Session",
        UsageBy::Project => "Project",
        UsageBy::Model => "Model",
        UsageBy::Provider => "Provider",
    };
    let models = !matches!(report.by, UsageBy::Model);
    let mut header: Vec<String> = vec![first.into()];
    if models {
        header.push("Models".into());
    }
    header.extend(["Input", "Output", "Cache read", "Cache write", "Total", "Cost (USD)"].map(String::from));
    let mut table = vec![header];
    for row in &report.rows {
        let key = match (&row.key, &row.title) {
            (Some(key), Some(title)) if report.by == UsageBy::Session => format!("{key} {title}"),
            (Some(key), _) => key.clone(),
            (None, _) => "unknown".into(),
        };
        table.push(cells(row, visible(&key).into_owned(), models));
    }
    table.push(cells(&report.totals, "Total".into(), models));
    let widths: Vec<usize> = (0..table[0].len()).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let numeric = |c: usize| c + 6 >= widths.len();
    for (i, row) in table.iter().enumerate() {
        if i == table.len() - 1 || i == 1 {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            if i == table.len() - 1 {
                writeln!(out, "{}", rule.join("  "))?;
            }
        }
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let pad = widths[c] - cell.chars().count();
                if numeric(c) { format!("{}{cell}", " ".repeat(pad)) } else { format!("{cell}{}", " ".repeat(pad)) }
            })
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    if !report.unpriced_models.is_empty() {
        writeln!(out, "* not priced (tokens counted, cost not): {}", visible(&report.unpriced_models.join(", ")))?;
    }
    let files = if report.prices.files.is_empty() { String::new() } else { format!(", overridden by {}", report.prices.files.join(", ")) };
    eprintln!("days in {}; prices of {}{files}", report.tz, report.prices.date);
    Ok(())
}
