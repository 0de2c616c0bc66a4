//! Results as tables: a run's series (one row an interval), a sweep (one row a point) and a
//! sizing curve (one row a size), column by column, as pandas, Parquet and DuckDB want them.
//! The Python package builds its DataFrames from these tables and `--parquet` writes them,
//! so both hold the same columns in the same order with the same types.

use serde_json::{json, Value};

/// The values of one column; `None` is a missing value (a counter a row lacks, a failed
/// sweep point's counters).
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::Int(v) => v.len(),
            Column::Float(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The column's type as [`Table::to_json`] names it: `int`, `float` or `text`.
    pub fn kind(&self) -> &'static str {
        match self {
            Column::Int(_) => "int",
            Column::Float(_) => "float",
            Column::Text(_) => "text",
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Column::Int(v) => json!(v),
            Column::Float(v) => json!(v),
            Column::Text(v) => json!(v),
        }
    }

    /// A column of JSON values: integers if every present value is one that fits an i64,
    /// else numbers if every present value is a number, else text.
    fn of_json(values: &[Option<&Value>]) -> Column {
        let present = || values.iter().flatten();
        if present().all(|v| v.is_i64() || v.is_u64() && v.as_i64().is_some()) {
            Column::Int(values.iter().map(|v| v.and_then(Value::as_i64)).collect())
        } else if present().all(|v| v.is_number()) {
            Column::Float(values.iter().map(|v| v.and_then(Value::as_f64)).collect())
        } else {
            Column::Text(values.iter().map(|v| v.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect())
        }
    }

    /// A column of values as a user typed them (`--vary machine.swappiness=0,100`): integers
    /// if each parses as one, else numbers if each parses as one, else the text. A kernel
    /// version (`6.1`, `6.12`) is text whatever it looks like.
    fn of_text(key: &str, values: &[Option<&str>]) -> Column {
        let present = || values.iter().flatten();
        if key == "kernel" || key.ends_with(".kernel") {
            Column::Text(values.iter().map(|v| v.map(str::to_string)).collect())
        } else if present().all(|v| v.parse::<i64>().is_ok()) {
            Column::Int(values.iter().map(|v| v.and_then(|v| v.parse().ok())).collect())
        } else if present().all(|v| v.parse::<f64>().is_ok_and(f64::is_finite)) {
            Column::Float(values.iter().map(|v| v.and_then(|v| v.parse().ok())).collect())
        } else {
            Column::Text(values.iter().map(|v| v.map(str::to_string)).collect())
        }
    }
}

/// Named columns of equal length, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
    /// What made the table, as key-value pairs (a Parquet file's key-value metadata):
    /// `pagelab.version`, `pagelab.schema_version`, `pagelab.set` (the fixed `--set`
    /// overrides, a JSON array), and for one run's series `pagelab.scenario_hash` and
    /// `pagelab.scenario` (docs/tables.md, "Provenance").
    pub meta: Vec<(String, String)>,
}

/// A table's provenance from one of its reports (`provenance` of a report as JSON): the
/// versions and the `--set` overrides but the last `varied` (a sweep's or curve's own values),
/// and with nothing varied the scenario and its hash. Empty for a report without provenance.
pub fn provenance_meta(report: &Value, varied: usize) -> Vec<(String, String)> {
    let Some(p) = report.get("provenance").filter(|p| p.is_object()) else { return Vec::new() };
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let set: Vec<&Value> = p["set"].as_array().map(|a| a.iter().take(a.len().saturating_sub(varied)).collect()).unwrap_or_default();
    let mut meta = vec![
        ("pagelab.version".to_string(), text(&p["pagelab_version"])),
        ("pagelab.schema_version".to_string(), text(&p["schema_version"])),
        ("pagelab.set".to_string(), Value::from(set.into_iter().cloned().collect::<Vec<_>>()).to_string()),
    ];
    if varied == 0 {
        for k in ["scenario_hash", "scenario"] {
            if let Some(v) = p.get(k) {
                meta.push((format!("pagelab.{k}"), text(v)));
            }
        }
    }
    meta
}

/// How a run (a report as JSON) ended for its tasks: its OOM kills and the tasks that did
/// not finish their work (OOM-killed); see [`crate::Report::outcome`].
pub fn outcome(report: &Value) -> (u64, u64) {
    let kills = report["oom_kills"].as_array().map_or(0, Vec::len) as u64;
    let unfinished = report["tasks"].as_array().map_or(0, |t| t.iter().filter(|t| t["oom_killed"].as_bool() == Some(true)).count()) as u64;
    (kills, unfinished)
}

/// The series' pressure columns, after the counters: the system's
/// `pressure.memory.{some,full}.{total_us,avg10_pct,avg60_pct,avg300_pct}` (µs stalled so
/// far, and the running averages in percent), then each cgroup's as
/// `memory.pressure.<path>.{some,full}.*`.
fn push_pressure(t: &mut Table, points: &[Value]) {
    let mut cgroups = std::collections::BTreeSet::new();
    for p in points {
        if let Some(v) = p.get("memory.pressure").and_then(Value::as_object) {
            cgroups.extend(v.keys().cloned());
        }
    }
    fn get<'a>(p: &'a Value, cgroup: Option<&str>) -> Option<&'a Value> {
        match cgroup {
            None => p.get("pressure"),
            Some(c) => p.get("memory.pressure").and_then(|m| m.get(c)),
        }
    }
    let sources = std::iter::once(None).chain(cgroups.into_iter().map(Some));
    for cgroup in sources {
        let prefix = cgroup.as_ref().map_or_else(|| "pressure.memory".to_string(), |c| format!("memory.pressure.{c}"));
        let get = |p| get(p, cgroup.as_deref());
        if !points.iter().any(|p| get(p).is_some()) {
            continue;
        }
        for line in ["some", "full"] {
            let ints: Vec<Option<i64>> = points.iter().map(|p| get(p).and_then(|v| v[line]["total_us"].as_i64())).collect();
            t.push(format!("{prefix}.{line}.total_us"), Column::Int(ints));
            for avg in ["avg10", "avg60", "avg300"] {
                t.push(format!("{prefix}.{line}.{avg}_pct"), Column::Float(points.iter().map(|p| get(p).and_then(|v| v[line][avg].as_f64())).collect()));
            }
        }
    }
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    fn push(&mut self, name: impl Into<String>, c: Column) {
        debug_assert!(self.columns.is_empty() || c.len() == self.rows(), "a column of another length");
        self.columns.push((name.into(), c));
    }

    /// `{"names": [...], "kinds": ["int"|"float"|"text", ...], "columns": [[...], ...]}`:
    /// what the Python package turns into a DataFrame (missing values are null).
    pub fn to_json(&self) -> Value {
        json!({
            "names": self.columns.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            "kinds": self.columns.iter().map(|(_, c)| c.kind()).collect::<Vec<_>>(),
            "columns": self.columns.iter().map(|(_, c)| c.to_json()).collect::<Vec<_>>(),
        })
    }

    /// A run's series, one row a report interval: `t_s` (modeled seconds at the interval's
    /// end), `ops` (operations in the interval), `ops.<task>` (each task's operations in the
    /// interval, tasks in name order), then every vmstat counter of the series
    /// (event counters as the interval's increase, gauges as their value at its end), in
    /// name order. `report` is a report as JSON (`pagelab run --json`); a report without a
    /// series (a plain cache's trace replay) is an error.
    pub fn series(report: &Value) -> Result<Table, String> {
        let Some(points) = report.get("series").and_then(Value::as_array) else {
            return Err("the report has no series (a plain cache's trace replay reports none)".into());
        };
        let mut names = std::collections::BTreeSet::new();
        for p in points {
            if let Some(v) = p["vmstat"].as_object() {
                names.extend(v.keys().cloned());
            }
        }
        let mut t = Table { meta: provenance_meta(report, 0), ..Table::default() };
        t.push("t_s", Column::Float(points.iter().map(|p| p["t_s"].as_f64()).collect()));
        t.push("ops", Column::Int(points.iter().map(|p| p["ops"].as_i64()).collect()));
        let mut tasks = std::collections::BTreeSet::new();
        for p in points {
            if let Some(v) = p["task_ops"].as_object() {
                tasks.extend(v.keys().cloned());
            }
        }
        for task in tasks {
            t.push(format!("ops.{task}"), Column::Int(points.iter().map(|p| p["task_ops"].get(&task).and_then(Value::as_i64)).collect()));
        }
        for n in names {
            let values: Vec<Option<&Value>> = points.iter().map(|p| p["vmstat"].get(&n)).collect();
            t.push(n, Column::of_json(&values));
        }
        // The interval's operation latency (null where no operation ended in it).
        if points.iter().any(|p| p.get("latency").is_some()) {
            for k in ["p50_ns", "p99_ns", "p999_ns", "max_ns"] {
                t.push(format!("latency.{k}"), Column::Int(points.iter().map(|p| p.get("latency").and_then(|l| l[k].as_i64())).collect()));
            }
        }
        push_pressure(&mut t, points);
        Ok(t)
    }

    /// A sweep, one row a point: the varied keys in `keys`' order (typed: integers, numbers
    /// or text as the values parse; `machine.kernel` text), then `elapsed_s`, `ops`, `throughput_ops_s` and every
    /// vmstat counter in name order, and `error` (the message, else null) if some point
    /// failed (its counters are null). `results` is `pagelab sweep --json`'s array of
    /// `{"point": {key: value}, "report": {...}}` or `{"point": ..., "error": "..."}`.
    pub fn sweep(keys: &[String], results: &[Value]) -> Table {
        let first = results.iter().find_map(|r| r.get("report").filter(|r| r.is_object()));
        let mut t = Table { meta: first.map_or_else(Vec::new, |r| provenance_meta(r, keys.len())), ..Table::default() };
        for k in keys {
            let values: Vec<Option<&str>> = results.iter().map(|r| r["point"].get(k).and_then(Value::as_str)).collect();
            t.push(k.clone(), Column::of_text(k, &values));
        }
        fn report(r: &Value) -> Option<&Value> {
            r.get("report").filter(|r| r.is_object())
        }
        for k in ["elapsed_s", "ops", "throughput_ops_s"] {
            let values: Vec<Option<&Value>> = results.iter().map(|r| report(r).and_then(|r| r.get(k))).collect();
            t.push(k, Column::of_json(&values));
        }
        let outcomes: Vec<Option<(u64, u64)>> = results.iter().map(|r| report(r).map(outcome)).collect();
        t.push("oom_kills", Column::Int(outcomes.iter().map(|o| o.map(|o| o.0 as i64)).collect()));
        t.push("unfinished_tasks", Column::Int(outcomes.iter().map(|o| o.map(|o| o.1 as i64)).collect()));
        let mut names = std::collections::BTreeSet::new();
        for r in results.iter().filter_map(report) {
            if let Some(v) = r["vmstat"].as_object() {
                names.extend(v.keys().cloned());
            }
        }
        for n in names {
            let values: Vec<Option<&Value>> = results.iter().map(|r| report(r).and_then(|r| r["vmstat"].get(&n))).collect();
            t.push(n, Column::of_json(&values));
        }
        if results.iter().any(|r| report(r).is_none()) {
            let errors = results.iter().map(|r| if report(r).is_some() { None } else { Some(r["error"].as_str().unwrap_or("no report").to_string()) });
            t.push("error", Column::Text(errors.collect()));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_is_one_row_an_interval_with_every_counter() {
        let r = json!({"series": [
            {"t_s": 0.5, "ops": 10, "task_ops": {"reader": 4, "db": 6}, "vmstat": {"pgsteal_file": 3, "nr_free_pages": 100}},
            {"t_s": 1.0, "ops": 12, "task_ops": {"reader": 12, "db": 0}, "vmstat": {"pgsteal_file": 5, "nr_free_pages": 90, "pswpin": 1}},
        ]});
        let t = Table::series(&r).unwrap();
        let names: Vec<&str> = t.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["t_s", "ops", "ops.db", "ops.reader", "nr_free_pages", "pgsteal_file", "pswpin"]);
        assert_eq!(t.column("ops.reader"), Some(&Column::Int(vec![Some(4), Some(12)])));
        assert_eq!(t.column("pswpin"), Some(&Column::Int(vec![None, Some(1)])));
        assert_eq!(t.column("t_s"), Some(&Column::Float(vec![Some(0.5), Some(1.0)])));
        assert!(Table::series(&json!({"misses": 3})).unwrap_err().contains("no series"));
    }

    #[test]
    fn a_series_has_the_pressure_columns_with_their_units() {
        let line = |t: u64, a: f64| json!({"total_us": t, "avg10": a, "avg60": 0.0, "avg300": 0.0});
        let p = |t: u64| json!({"some": line(t, 1.5), "full": line(t / 2, 0.5)});
        let r = json!({"series": [
            {"t_s": 1.0, "ops": 1, "vmstat": {}, "pressure": p(100), "memory.pressure": {"/a": p(40)}},
            {"t_s": 2.0, "ops": 1, "vmstat": {}, "pressure": p(300), "memory.pressure": {"/a": p(50)}},
        ]});
        let t = Table::series(&r).unwrap();
        assert_eq!(t.column("pressure.memory.some.total_us"), Some(&Column::Int(vec![Some(100), Some(300)])));
        assert_eq!(t.column("pressure.memory.full.avg10_pct"), Some(&Column::Float(vec![Some(0.5), Some(0.5)])));
        assert_eq!(t.column("memory.pressure./a.full.total_us"), Some(&Column::Int(vec![Some(20), Some(25)])));
        assert_eq!(t.columns.len(), 2 + 16);
    }

    #[test]
    fn a_sweep_types_its_varied_values_and_keeps_failed_points() {
        let results = [
            json!({"point": {"machine.swappiness": "0", "machine.memory": "1M"}, "report": {"elapsed_s": 1.5, "ops": 7, "throughput_ops_s": 4.5, "vmstat": {"pswpin": 2},
                "oom_kills": [{"task": "db"}], "tasks": [{"name": "db", "oom_killed": true}, {"name": "reader", "oom_killed": false}]}}),
            json!({"point": {"machine.swappiness": "100", "machine.memory": "2M"}, "error": "out of memory"}),
        ];
        let t = Table::sweep(&["machine.swappiness".into(), "machine.memory".into()], &results);
        let k = Table::sweep(&["machine.kernel".into(), "x".into()], &[json!({"point": {"machine.kernel": "6.1", "x": "0.5"}})]);
        assert_eq!(k.column("machine.kernel"), Some(&Column::Text(vec![Some("6.1".into())])));
        assert_eq!(k.column("x"), Some(&Column::Float(vec![Some(0.5)])));
        let names: Vec<&str> = t.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["machine.swappiness", "machine.memory", "elapsed_s", "ops", "throughput_ops_s", "oom_kills", "unfinished_tasks", "pswpin", "error"]);
        // Issue 40 #13: a point whose task was OOM-killed says so in the table.
        assert_eq!(t.column("oom_kills"), Some(&Column::Int(vec![Some(1), None])));
        assert_eq!(t.column("unfinished_tasks"), Some(&Column::Int(vec![Some(1), None])));
        assert_eq!(t.column("machine.swappiness"), Some(&Column::Int(vec![Some(0), Some(100)])));
        assert_eq!(t.column("machine.memory"), Some(&Column::Text(vec![Some("1M".into()), Some("2M".into())])));
        assert_eq!(t.column("pswpin"), Some(&Column::Int(vec![Some(2), None])));
        assert_eq!(t.column("error"), Some(&Column::Text(vec![None, Some("out of memory".into())])));
        assert_eq!(t.to_json()["kinds"][0], "int");
    }
}
