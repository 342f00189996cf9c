//! gpustat's text pieces: its palette, `??` for no value, its byte sizes and shortened names.

use anstyle::{AnsiColor, Style};

/// A value as gpustat prints it: the value, or `??` where there is none.
pub(crate) fn or_unknown<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "??".to_string(), |v| v.to_string())
}

/// gpustat's palette (its `blessed` colours), or nothing when not colouring.
#[derive(Clone, Copy)]
pub(crate) struct Paint(pub(crate) bool);

impl Paint {
    pub(crate) fn fg(c: AnsiColor) -> Style {
        Style::new().fg_color(Some(c.into()))
    }

    /// `text` in `style` when colouring.
    pub(crate) fn on(self, text: &str, style: Style) -> String {
        if self.0 && !text.is_empty() {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// gpustat's conditional colours: `low` below `threshold`, `high` at or above it, grey
    /// where there is no value to compare.
    pub(crate) fn by(v: Option<i64>, threshold: i64, low: Style, high: Style) -> Style {
        match v {
            Some(v) if v < threshold => low,
            Some(_) => high,
            None => Self::fg(AnsiColor::Black).bold(),
        }
    }
}

/// bytes as gpustat's `bytes2human` prints them: `707MB`, shifting by 1024 while above 9999.
pub(crate) fn bytes_human(bytes: u64) -> String {
    const SUFFIXES: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut v = bytes;
    let mut i = 0;
    while v > 9999 && i < SUFFIXES.len() - 1 {
        v >>= 10;
        i += 1;
    }
    format!("{v}{}", SUFFIXES[i])
}

/// `name` cut to `width` characters from the left, `…` in front (gpustat's `shorten_left`).
pub(crate) fn shorten_left(name: &str, width: usize) -> String {
    let n = name.chars().count();
    if n <= width {
        return name.to_string();
    }
    if width <= 1 {
        return "…".chars().take(width).collect();
    }
    let tail: String = name.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_as_gpustats_bytes2human() {
        assert_eq!(bytes_human(0), "0B");
        assert_eq!(bytes_human(9999), "9999B");
        assert_eq!(bytes_human(10_000), "9KB");
        assert_eq!(bytes_human(741_343_232), "707MB");
    }

    #[test]
    fn names_are_cut_from_the_left() {
        assert_eq!(shorten_left("NVIDIA H200", 16), "NVIDIA H200");
        assert_eq!(shorten_left("NVIDIA H200", 6), "… H200");
        assert_eq!(shorten_left("NVIDIA H200", 1), "…");
        assert_eq!(shorten_left("NVIDIA H200", 0), "");
    }

    #[test]
    fn paint_colours_only_when_asked_and_never_an_empty_text() {
        let red = Paint::fg(AnsiColor::Red);
        assert_eq!(Paint(false).on("56", red), "56");
        assert_eq!(Paint(true).on("56", red), "\x1b[31m56\x1b[0m");
        assert_eq!(Paint(true).on("", red), "");
        assert_eq!(or_unknown(None::<i64>), "??");
        assert_eq!(or_unknown(Some(7)), "7");
    }
}
