//! The transcript a resume needs, under `<config>/projects/<slug(cwd)>/<session>.jsonl`.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::model::Block;
use crate::model::ids::is_uuid;
use crate::native::adapter::{Reported, ResumeFiles};
use crate::native::common::{absolute_cwd, runtime_dir};
use crate::native::types::ResumeOptions;
use crate::store::Session;

use crate::native::splice::{NativeText, Splices, TextRecord};

use super::export::{transcript, TranscriptContext};

/// The folder name Claude Code gives a working directory under `projects/` (FORMAT.md, Resume): every
/// UTF-16 unit outside `[A-Za-z0-9]` becomes `-`; past 200 units the name is cut and a base-36 hash
/// of the path is appended.
pub fn project_slug(cwd: &str) -> String {
    let units: Vec<u16> = cwd.encode_utf16().collect();
    let slug: String = units
        .iter()
        .map(|&u| if u < 128 && (u as u8).is_ascii_alphanumeric() { u as u8 as char } else { '-' })
        .collect();
    if units.len() <= 200 {
        return slug;
    }
    let mut h: i32 = 0;
    for &u in &units {
        h = h.wrapping_mul(31).wrapping_add(u as i32);
    }
    let mut n = (h as i64).unsigned_abs();
    let mut digits = Vec::new();
    loop {
        let d = (n % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    format!("{}-{}", &slug[..200], String::from_utf8(digits).unwrap_or_default())
}

/// The transcript for `<config>/projects/<slug(cwd)>/<session>.jsonl` and the command that resumes it.
pub(super) fn resume_files(session: &Session, mut blocks: Vec<Block>, splices: Splices, options: &ResumeOptions) -> Result<Reported<ResumeFiles>> {
    let mut ctx = TranscriptContext::for_session(session, &blocks)?;
    let cwd = match options.cwd.clone() {
        Some(cwd) => cwd,
        None => match &ctx.cwd {
            Some(cwd) => PathBuf::from(cwd),
            None => std::env::current_dir()
                .map_err(|source| Error::Io { context: "cannot read the current directory".into(), source })?,
        },
    };
    let cwd_text = absolute_cwd(&cwd)?;
    // Claude Code names the folder after the physical path.
    let physical = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    let physical_text = physical.to_str().unwrap_or(cwd_text).to_string();
    if let Some(id) = &options.options.session_id {
        if !is_uuid(id) {
            return Err(Error::invalid_field("session_id", format!("Claude Code session ids are UUIDs, not {id:?}")));
        }
        ctx.session_id = id.to_ascii_lowercase();
    }
    if !is_uuid(&ctx.session_id) {
        return Err(Error::invalid_field("session_id", format!("Claude Code session ids are UUIDs, not {:?}", ctx.session_id)));
    }
    ctx.cwd = Some(physical_text.clone());
    let (config_dir, env) = runtime_dir(options.config_dir.as_deref(), options.home.as_deref(), "CLAUDE_CONFIG_DIR", ".claude")?;
    let dir = config_dir.join("projects").join(project_slug(&physical_text));
    let file = dir.join(format!("{}.jsonl", ctx.session_id));
    if file.parent() != Some(dir.as_path()) {
        return Err(Error::invalid_field("session_id", "the session id would escape the projects folder"));
    }
    let (records, report) = transcript(session, &mut blocks, splices, &options.options, &ctx)?;
    let text = NativeText::Lines(records.into_iter().map(|r| TextRecord { value: r.value, splice: r.splice }).collect()).into_string()?;
    let files = ResumeFiles {
        native_id: ctx.session_id.clone(),
        file,
        text,
        replaces: Vec::new(),
        argv: vec!["claude".into(), "--resume".into(), ctx.session_id],
        cwd: Some(cwd),
        env,
        setup: Vec::new(),
        notes: Vec::new(),
    };
    Ok(Reported { value: files, report })
}

#[cfg(test)]
mod tests {
    use super::project_slug;

    #[test]
    fn slugs_replace_every_unit_outside_ascii_alphanumerics() {
        assert_eq!(project_slug("/home/dev/project"), "-home-dev-project");
        assert_eq!(project_slug("/a.b/c_d"), "-a-b-c-d");
        // One dash per UTF-16 unit: an astral character gives two.
        assert_eq!(project_slug("/é😀"), "----");
    }

    #[test]
    fn long_paths_are_cut_and_hashed() {
        let long = format!("/{}", "x".repeat(300));
        let slug = project_slug(&long);
        assert!(slug.starts_with(&format!("-{}", "x".repeat(199))), "{slug}");
        assert_eq!(&slug[200..201], "-");
        assert!(slug.len() > 201 && slug[201..].bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()), "{slug}");
        assert_ne!(project_slug(&format!("{long}y")), slug, "paths differing past the cut differ");
    }
}
