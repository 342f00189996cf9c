//! Sample values as the Prometheus text format writes them: one function, shared by the text
//! encoder and the exposition model (for number labels).

use std::fmt::Write as _;

use dcgm::Value;

/// Appends a number as Prometheus writes sample values (`NaN`, `+Inf`, `-Inf`, integers
/// without a fraction, exponents for very large or small magnitudes). Returns `false`, writing
/// nothing, for anything that is not a number.
pub fn write_number(v: &Value, out: &mut String) -> bool {
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Double(d) => {
            let d = *d;
            if d.is_nan() {
                out.push_str("NaN");
            } else if d.is_infinite() {
                out.push_str(if d > 0.0 { "+Inf" } else { "-Inf" });
            } else if d != 0.0 && (d.abs() >= 1e15 || d.abs() < 1e-4) {
                let _ = write!(out, "{d:e}");
            } else {
                let _ = write!(out, "{d}");
            }
        }
        _ => return false,
    }
    true
}
