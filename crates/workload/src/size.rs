//! Sizes and durations as users write them in scenarios: "256M", "4k", "1.5G", "300ms".

pub const PAGE_SIZE: u64 = 4096;

/// Parses a byte size: a number with an optional binary suffix (k, M, G, T; "KiB", "KB" and
/// "K" all mean 1024 as in fio and the kernel's sysfs), or a page count with a "p" suffix.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size".into());
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("`{text}` is not a size (expected e.g. 4096, 4k, 256M, 1.5G or 100p)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "page" | "pages" => PAGE_SIZE,
        other => return Err(format!("`{text}` has an unknown unit `{other}` (use k, M, G, T or p for pages)")),
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(format!("`{text}` is out of range"));
    }
    if bytes.fract() != 0.0 {
        return Err(format!("`{text}` is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// Parses a duration into nanoseconds: "1s", "300ms", "50us", "20ns", "2m"; a bare number is
/// seconds.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("`{text}` is not a duration (expected e.g. 1s, 300ms, 50us, 20ns)"))?;
    let mult = match unit.trim() {
        "" | "s" | "sec" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "m" | "min" => 60e9,
        other => return Err(format!("`{text}` has an unknown unit `{other}` (use s, ms, us, ns or min)")),
    };
    let ns = value * mult;
    if !ns.is_finite() || !(0.0..=1e19).contains(&ns) {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(ns.round() as u64)
}

/// Deserializes a size key as users write it: a string (`"1G"`, `"4096p"`) or a bare
/// non-negative integer, which is a number of bytes (`size = 1073741824`), kept as the text
/// [`parse_size`] reads.
pub fn size_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Text {
        Bytes(u64),
        Text(String),
    }
    let v: Option<Text> = serde::Deserialize::deserialize(d)
        .map_err(|_: D::Error| serde::de::Error::custom("a size is a string with a unit (\"256M\", \"4096p\") or a whole number of bytes"))?;
    Ok(v.map(|t| match t {
        Text::Bytes(n) => n.to_string(),
        Text::Text(s) => s,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("10p").unwrap(), 40960);
        assert_eq!(parse_size("2 GiB").unwrap(), 2 << 30);
        assert!(parse_size("12Q").unwrap_err().contains("unknown unit"));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("0.3").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("1s").unwrap(), 1_000_000_000);
        assert_eq!(parse_duration_ns("300ms").unwrap(), 300_000_000);
        assert_eq!(parse_duration_ns("50us").unwrap(), 50_000);
        assert_eq!(parse_duration_ns("2").unwrap(), 2_000_000_000);
        assert!(parse_duration_ns("3 fortnights").is_err());
    }
}
