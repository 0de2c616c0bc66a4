//! `--set key=value` overrides ([`with_overrides`]: list entries addressed by index or by
//! name) and locating a key in the scenario's text, so that an error names its line or the
//! `--set` that gave the value.

use super::ScenarioError;
use crate::mm::time::Costs;

/// The scenario text with `--set` overrides applied, re-serialized as TOML: what `pagelab
/// oracle` hands to its in-guest runner so the guest and the model read the same values.
/// Errors are located in `text` as [`Scenario::parse`] locates them.
pub fn with_overrides(text: &str, file: &str, overrides: &[String]) -> Result<String, ScenarioError> {
    let err = |line: Option<usize>, key: &str, message: String| ScenarioError { file: file.to_string(), line, key: key.to_string(), message };
    let mut doc: toml::Table = text.parse::<toml::Table>().map_err(|e| err(e.span().map(|s| line_of(text, s.start)), "", e.message().to_string()))?;
    for o in overrides {
        apply_override(&mut doc, o).map_err(|m| err(None, o.split('=').next().unwrap_or(""), m))?;
    }
    toml::to_string(&doc).map_err(|e| err(None, "", format!("cannot re-serialize: {e}")))
}

/// The key `--set` override `o` sets, in the deserializer's spelling: list entries (named
/// or numbered in the override) by index, `workload.fio-zipf.ops` → `workload[0].ops`.
pub(super) fn override_key(doc: &toml::Table, o: &str) -> Option<String> {
    let parts = split_key(o.split_once('=')?.0.trim());
    let mut out = String::new();
    let mut cur = Some(doc);
    let mut i = 0;
    while i < parts.len() {
        let name = parts[i];
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(name);
        let v = cur.and_then(|t| t.get(name));
        cur = match v.and_then(|v| v.as_array()) {
            Some(list) if i + 1 < parts.len() => {
                i += 1;
                let entry = parts[i];
                let idx = entry
                    .parse::<usize>()
                    .ok()
                    .or_else(|| list.iter().position(|e| ["name", "path"].iter().any(|k| e.get(k).and_then(|v| v.as_str()) == Some(entry))))?;
                out.push_str(&format!("[{idx}]"));
                list.get(idx).and_then(|e| e.as_table())
            }
            _ => v.and_then(|v| v.as_table()),
        };
        i += 1;
    }
    Some(out)
}

/// Tables read partly through a flattened struct lose the name of a mistyped key there: a
/// workload's phase defaults (its own `ops`, `kind`, `distribution`...) and `[time]`'s CPU
/// costs are reported at `workload[N]` or `time`. Finds the key of that table which the
/// flattened struct alone refuses.
pub(super) fn bad_flattened_key(doc: &toml::Table, key: &str) -> Option<String> {
    fn refused<T: serde::de::DeserializeOwned>(table: &toml::Table) -> Option<String> {
        table.iter().find_map(|(k, v)| {
            let alone = toml::Value::Table(toml::Table::from_iter([(k.clone(), v.clone())]));
            match T::deserialize(alone) {
                Err(e) if !e.message().starts_with("unknown field") => Some(k.clone()),
                _ => None,
            }
        })
    }
    if key == "time" {
        return refused::<Costs>(doc.get("time")?.as_table()?);
    }
    let index: usize = key.strip_prefix("workload[")?.strip_suffix(']')?.parse().ok()?;
    refused::<pagelab_workload::PhaseToml>(doc.get("workload")?.as_array()?.get(index)?.as_table()?)
}

pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Finds the line of a dotted key such as `workload[1].distribution` or `machine.memory`.
pub(super) fn locate(text: &str, key: &str) -> Option<usize> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let leaf = parts.pop()?;
    let mut from = 0usize;
    // The names so far: a nested table's header spells its whole path (`[[workload.phase]]`).
    let mut names: Vec<&str> = Vec::new();
    for part in &parts {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (*part, None),
        };
        names.push(name);
        let path = names.join(".");
        let header = match index {
            Some(_) => format!("[[{path}]]"),
            None => format!("[{path}]"),
        };
        let mut found = None;
        let mut count = 0;
        for (i, line) in text.lines().enumerate().skip(from) {
            if line.trim() == header {
                if index.is_none_or(|n| count == n) {
                    found = Some(i);
                    break;
                }
                count += 1;
            }
        }
        match found {
            Some(i) => from = i,
            None => {
                // An inline table (`swap = { ... }`) or an array-of-tables entry: look for the
                // leaf after the parent key instead.
                if let Some(i) = text.lines().enumerate().skip(from).find(|(_, l)| l.trim_start().starts_with(name)) {
                    from = i.0;
                }
            }
        }
    }
    let leaf_name = leaf.split('[').next().unwrap_or(leaf);
    // The key is a table of its own (`[time.storage]` missing a field): its header.
    if !leaf.contains('[') {
        let header = format!("[{}]", names.iter().copied().chain([leaf_name]).collect::<Vec<_>>().join("."));
        if let Some((i, _)) = text.lines().enumerate().skip(from).find(|(_, l)| l.trim() == header) {
            return Some(i + 1);
        }
    }
    text.lines()
        .enumerate()
        .skip(from)
        .find(|(_, l)| {
            let t = l.trim_start();
            t.starts_with(leaf_name) && t[leaf_name.len()..].trim_start().starts_with('=')
                || t.contains(&format!("{leaf_name} ="))
                || t.contains(&format!("{leaf_name}="))
        })
        .map(|(i, _)| i + 1)
        .or(if parts.is_empty() { None } else { Some(from + 1) })
}

/// Applies `a.b.c=value`; list entries are addressed by index (`workload.0.ops`) or by their
/// `name`/`path` (`workload.fio-zipf.ops`, `cgroup./test.max`).
pub(super) fn apply_override(doc: &mut toml::Table, o: &str) -> Result<(), String> {
    let (key, value) = o.split_once('=').ok_or_else(|| format!("`{o}`: --set takes key=value"))?;
    let mut value = parse_override_value(value.trim())?;
    // A kernel version on the command line is its text (`--set machine.kernel=6.10` is 6.10,
    // not the number 6.1); in a file, a number is refused (see `from_doc`).
    if key.trim() == "machine.kernel" && matches!(value, toml::Value::Float(_) | toml::Value::Integer(_)) {
        value = toml::Value::String(o.split_once('=').map_or("", |(_, v)| v).trim().to_string());
    }
    let parts: Vec<&str> = split_key(key.trim());
    if parts.is_empty() {
        return Err(format!("`{o}`: empty key"));
    }
    // Work on a copy so a failed override leaves the document unchanged.
    let mut root = toml::Value::Table(doc.clone());
    let mut cur = &mut root;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value.clone());
                    break;
                }
                t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(a) => {
                let idx = match part.parse::<usize>() {
                    Ok(n) => n,
                    Err(_) => a
                        .iter()
                        .position(|e| e.get("name").and_then(|v| v.as_str()) == Some(part) || e.get("path").and_then(|v| v.as_str()) == Some(part))
                        .ok_or_else(|| format!("`{key}`: no entry named `{part}`"))?,
                };
                if last {
                    return Err(format!("`{key}`: cannot replace a whole list entry"));
                }
                a.get_mut(idx).ok_or_else(|| format!("`{key}`: there is no entry {idx}"))?
            }
            _ => return Err(format!("`{key}`: `{part}` is inside a value, not a table")),
        };
    }
    match root {
        toml::Value::Table(t) => *doc = t,
        _ => unreachable!("the root stays a table"),
    }
    Ok(())
}

/// Splits `cgroup./a/b.max` into ["cgroup", "/a/b", "max"]: a part that starts with '/'
/// runs to the next '.'.
fn split_key(key: &str) -> Vec<&str> {
    key.split('.').filter(|s| !s.is_empty()).collect()
}

/// A `--set` value: TOML, or else a bare string. It is one line: the rest of a value with a
/// line break used to be dropped silently (`--set 'k=1<newline>j=2'` set k only).
fn parse_override_value(v: &str) -> Result<toml::Value, String> {
    if v.contains(['\n', '\r']) {
        return Err(format!("`{}`: a --set value is one line (this one holds a line break)", v.escape_debug()));
    }
    Ok(match format!("v = {v}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(v.to_string())),
        Err(_) => toml::Value::String(v.to_string()),
    })
}
