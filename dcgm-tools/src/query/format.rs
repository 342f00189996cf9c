//! `--format=csv[,noheader][,nounits]`, and a field's cell as nvidia-smi prints it.

use dcgm::{FieldId, Value};

use crate::nvsmi_properties::{self as nvsmi, Property};

/// `--format`'s options.
pub(crate) struct Format {
    pub(crate) header: bool,
    pub(crate) units: bool,
}

/// Parses `--format`: `csv`, with `noheader` and `nounits` if given.
pub(crate) fn parse_format(s: &str) -> Result<Format, String> {
    let mut f = Format {
        header: true,
        units: true,
    };
    let mut csv = false;
    for p in s.split(',').map(str::trim) {
        match p {
            "csv" => csv = true,
            "noheader" => f.header = false,
            "nounits" => f.units = false,
            other => return Err(format!("unknown format option {other:?}")),
        }
    }
    if !csv {
        return Err("only --format=csv[,noheader][,nounits] is supported".into());
    }
    Ok(f)
}

/// A field's cell: the value with its unit (unless `nounits`), or the text nvidia-smi prints in
/// its place.
pub(crate) fn cell<'v>(
    p: &Property,
    get: impl Fn(FieldId) -> Option<&'v Value>,
    how: nvsmi::Show,
    fmt: &Format,
) -> String {
    let v = p.field().and_then(get);
    match nvsmi::show(v, how) {
        Ok(s) if fmt.units && !p.unit.is_empty() => format!("{s} {}", p.unit),
        Ok(s) | Err(s) => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_takes_noheader_and_nounits_and_nothing_else() {
        let f = parse_format("csv, noheader,nounits").unwrap();
        assert!(!f.header && !f.units);
        let f = parse_format("csv").unwrap();
        assert!(f.header && f.units);
        assert_eq!(
            parse_format("noheader").err().unwrap(),
            "only --format=csv[,noheader][,nounits] is supported"
        );
        assert_eq!(
            parse_format("csv,json").err().unwrap(),
            "unknown format option \"json\""
        );
    }
}
