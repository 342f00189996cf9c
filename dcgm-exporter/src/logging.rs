//! The exporter's log on standard error: `--log-format text` (`time level message`) or `json`
//! (one object per line with `time`, `level` and `msg`), `--debug` for debug messages.

use std::io::Write as _;
use std::time::SystemTime;

use crate::cli::LogFormat;

struct Logger {
    level: log::LevelFilter,
    format: LogFormat,
}

impl log::Log for Logger {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= self.level
    }

    fn log(&self, r: &log::Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let time = humantime::format_rfc3339_millis(SystemTime::now());
        let level = r.level().as_str().to_ascii_lowercase();
        let line = match self.format {
            LogFormat::Text => format!("{time} {level:<5} {}\n", r.args()),
            LogFormat::Json => format!(
                "{{\"time\":\"{time}\",\"level\":\"{level}\",\"msg\":{}}}\n",
                serde_json::Value::String(r.args().to_string())
            ),
        };
        // One write per line, so lines of concurrent threads do not interleave.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn flush(&self) {}
}

/// Installs the logger (once; later calls are ignored).
pub fn init(format: LogFormat, debug: bool) {
    let level = if debug {
        log::LevelFilter::Debug
    } else {
        log::LevelFilter::Info
    };
    let logger: &'static Logger = Box::leak(Box::new(Logger { level, format }));
    if log::set_logger(logger).is_ok() {
        log::set_max_level(level);
    }
}
