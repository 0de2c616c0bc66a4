//! `--parquet OUT`: a table ([`pagelab::tables::Table`]) as a Parquet file, one row group,
//! uncompressed, every column optional (a missing value is a null): integers as INT64,
//! numbers as DOUBLE, text as UTF-8 strings. pandas, polars, DuckDB and Arrow read it.

use std::sync::Arc;

use crate::output::Output;

use anyhow::{Context, Result};
use pagelab::tables::{Column, Table};
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// Writes `table` to `out` (a file claimed by [`crate::output::Files::output`]) and puts it
/// in place.
pub fn write(mut out: Output, table: &Table) -> Result<()> {
    let file = out.file().expect("--parquet is never standard output");
    write_to(file, table).context("--parquet: cannot write")?;
    out.commit()
}

fn write_to(out: &mut std::fs::File, table: &Table) -> Result<()> {
    let fields = table
        .columns
        .iter()
        .map(|(name, c)| {
            let (physical, logical) = match c {
                Column::Int(_) => (Physical::INT64, None),
                Column::Float(_) => (Physical::DOUBLE, None),
                Column::Text(_) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(name, physical).with_repetition(Repetition::OPTIONAL).with_logical_type(logical).build().map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build()?);
    let meta = table.meta.iter().map(|(k, v)| parquet::file::metadata::KeyValue::new(k.clone(), v.clone())).collect::<Vec<_>>();
    let props = Arc::new(
        WriterProperties::builder()
            .set_created_by(format!("pagelab {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata((!meta.is_empty()).then_some(meta))
            .build(),
    );
    let mut writer = SerializedFileWriter::new(std::io::BufWriter::new(out), schema, props)?;
    let mut group = writer.next_row_group()?;
    let mut columns = table.columns.iter();
    while let Some(mut w) = group.next_column()? {
        let (_, c) = columns.next().expect("one writer a column of the schema");
        // Definition levels: 1 for a value, 0 for a null; the values are the present ones.
        match c {
            Column::Int(v) => {
                let (values, defs) = present(v, |x| *x);
                w.typed::<Int64Type>().write_batch(&values, Some(&defs), None)?;
            }
            Column::Float(v) => {
                let (values, defs) = present(v, |x| *x);
                w.typed::<DoubleType>().write_batch(&values, Some(&defs), None)?;
            }
            Column::Text(v) => {
                let (values, defs) = present(v, |x: &String| ByteArray::from(x.as_str()));
                w.typed::<ByteArrayType>().write_batch(&values, Some(&defs), None)?;
            }
        }
        w.close()?;
    }
    group.close()?;
    writer.close()?;
    Ok(())
}

/// The present values of a column and its definition levels.
fn present<T, U>(v: &[Option<T>], f: impl Fn(&T) -> U) -> (Vec<U>, Vec<i16>) {
    (v.iter().flatten().map(f).collect(), v.iter().map(|x| i16::from(x.is_some())).collect())
}
