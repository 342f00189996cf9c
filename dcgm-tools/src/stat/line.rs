//! gpustat's lines: the header, a line per GPU with its processes, `-f`'s lines under it.

use anstyle::{Ansi256Color, AnsiColor, Style};

use super::model::{Gpu, Proc, Snapshot};
use super::paint::{Paint, bytes_human, or_unknown, shorten_left};
use super::show::Show;

impl Snapshot {
    /// The header line and a line per GPU (each with its `-f` lines under it).
    pub(crate) fn render(
        &self,
        show: &Show,
        no_header: bool,
        name_width: Option<usize>,
        color: bool,
    ) -> Vec<String> {
        let paint = Paint(color);
        let width = name_width.unwrap_or_else(|| {
            self.gpus
                .iter()
                .map(|g| g.name.as_deref().unwrap_or("??").chars().count())
                .max()
                .unwrap_or(0)
        });
        let mut lines = Vec::new();
        if !no_header {
            // The host is padded to the width of `[N] name`, as gpustat pads it.
            let host_width = if width == 0 { 16 } else { width } + 3;
            let header = format!(
                "{}  {}  {}",
                paint.on(
                    &format!("{:<host_width$}", self.hostname),
                    Paint::fg(AnsiColor::White).bold()
                ),
                self.query_time.c_locale(),
                paint.on(
                    self.driver_version.as_deref().unwrap_or("??"),
                    Paint::fg(AnsiColor::Black).bold()
                ),
            );
            lines.push(header.trim().to_string());
        }
        for g in &self.gpus {
            lines.push(g.render(show, name_width.map_or(Some(width), Some), paint));
        }
        if self.gpus.is_empty() {
            lines.push(paint.on("(No GPUs are available)", Paint::fg(AnsiColor::Yellow)));
        }
        lines
    }
}

impl Gpu {
    /// `[0] NVIDIA H200 | 56°C,  99 % |  1010 / 143771 MB | root(1002M)`, with the `-f` lines
    /// under it. `width`: the name's width (`Some(0)`: no name).
    pub(crate) fn render(&self, show: &Show, width: Option<usize>, paint: Paint) -> String {
        let fg = Paint::fg;
        let width = width.unwrap_or(16);
        let mut s = paint.on(&format!("[{}]", self.index), fg(AnsiColor::Cyan)) + " ";
        if width != 0 {
            let name = shorten_left(self.name.as_deref().unwrap_or("??"), width);
            s += &paint.on(&format!("{name:<width$}"), fg(AnsiColor::Blue));
            s += " |";
        }
        let temp = Paint::by(
            self.temperature,
            50,
            fg(AnsiColor::Red),
            fg(AnsiColor::Red).bold(),
        );
        s += &paint.on(&format!("{:>3}°C", or_unknown(self.temperature)), temp);
        s += ", ";
        if show.fan {
            let style = Paint::by(
                self.fan_speed,
                30,
                fg(AnsiColor::Cyan),
                fg(AnsiColor::Cyan).bold(),
            );
            s += &paint.on(&format!("{:>3} %", or_unknown(self.fan_speed)), style);
            s += ", ";
        }
        let green = fg(AnsiColor::Green);
        let util = Paint::by(self.utilization, 30, green, green.bold());
        s += &paint.on(&format!("{:>3} %", or_unknown(self.utilization)), util);
        if show.enc || show.dec {
            s += &self.codec(show, paint);
        }
        if show.power {
            s += &self.power(show, paint);
        }
        let yellow = fg(AnsiColor::Yellow);
        s += " | ";
        s += &paint.on(
            &format!("{:>5}", or_unknown(self.memory_used)),
            yellow.bold(),
        );
        s += " / ";
        s += &paint.on(&format!("{:>5}", or_unknown(self.memory_total)), yellow);
        s += " MB";
        if !show.processes {
            return s;
        }
        s + " |" + &self.processes(show, paint)
    }

    /// ` (E:   0 %  D:  ?? %)`: the encoder's and decoder's use, those asked for.
    fn codec(&self, show: &Show, paint: Paint) -> String {
        let green = Paint::fg(AnsiColor::Green);
        let mut codec = Vec::new();
        for (on, label, v) in [
            (show.enc, "E: ", self.utilization_enc),
            (show.dec, "D: ", self.utilization_dec),
        ] {
            if on {
                let style = Paint::by(v, 50, green, green.bold());
                codec.push(
                    paint.on(label, Style::new().bold())
                        + &paint.on(&format!("{:>3} %", or_unknown(v)), style),
                );
            }
        }
        format!(" ({})", codec.join("  "))
    }

    /// `,  350 / 700 W` (`,  350 W` without the limit).
    fn power(&self, show: &Show, paint: Paint) -> String {
        let fg = Paint::fg;
        let magenta = fg(AnsiColor::Magenta);
        let draw = match (self.power_draw, self.power_limit) {
            (None, _) => fg(AnsiColor::Black).bold(),
            (Some(d), Some(l)) if l != 0 && (d as f64) / (l as f64) < 0.4 => magenta,
            _ => magenta.bold(),
        };
        let mut s = ",  ".to_string();
        s += &paint.on(&format!("{:>3}", or_unknown(self.power_draw)), draw);
        s += " ";
        if show.power_limit {
            s += "/ ";
            s += &paint.on(&format!("{:>3}", or_unknown(self.power_limit)), magenta);
            s += " ";
            s += &paint.on("W", magenta);
        } else {
            s += &paint.on("W", draw);
        }
        s
    }

    /// ` root(1002M) ...` after the memory, with `-f`'s lines under them; ` (Not Supported)`
    /// where the library could not list them.
    fn processes(&self, show: &Show, paint: Paint) -> String {
        let Some(processes) = &self.processes else {
            return " (Not Supported)".into();
        };
        let mut s = String::new();
        for p in processes {
            s += " ";
            s += &p.render(show, paint);
        }
        if show.full_cmd {
            let n = processes.len();
            for (i, p) in processes.iter().enumerate() {
                s += "\n";
                s += &p.render_full(i + 1 == n, paint);
            }
        }
        s
    }
}

impl Proc {
    /// `root(1002M)`; `python3(1002M)` with -c, `root:python3/581(1002M)` with -cpu; `--` for
    /// what is not known.
    pub(crate) fn render(&self, show: &Show, paint: Paint) -> String {
        let mut r = String::new();
        if !show.cmd || show.user {
            r += &paint.on(
                self.username.as_deref().unwrap_or("--"),
                Paint::fg(AnsiColor::Black).bold(),
            );
        }
        if show.cmd {
            if !r.is_empty() {
                r.push(':');
            }
            r += &paint.on(
                self.command.as_deref().unwrap_or("--"),
                Paint::fg(AnsiColor::Cyan),
            );
        }
        if show.pid {
            r += &format!("/{}", self.pid);
        }
        r + "("
            + &paint.on(
                &format!("{}M", self.gpu_memory_usage),
                Paint::fg(AnsiColor::Yellow),
            )
            + ")"
    }

    /// ` ├─    581 (  99%,  707MB): python3 train.py` (`└─` for the last); `--` for the CPU use
    /// and memory of a process this host cannot read.
    pub(crate) fn render_full(&self, last: bool, paint: Paint) -> String {
        let cpu = match self.cpu_percent {
            Some(c) => format!("{c:4.0}"),
            None => "  --".to_string(),
        };
        let mem = self.cpu_memory_usage.map_or("--".to_string(), bytes_human);
        let dark = Style::new().fg_color(Some(Ansi256Color(24).into()));
        let command = match self.full_command.as_deref() {
            None | Some([]) => paint.on("?", dark),
            Some([first, rest @ ..]) => {
                let (dir, base) = match first.rsplit_once('/') {
                    Some((d, b)) => (format!("{d}/"), b),
                    None => (String::new(), first.as_str()),
                };
                let mut c = paint.on(&dir, dark) + &paint.on(base, Paint::fg(AnsiColor::Cyan));
                if !rest.is_empty() {
                    c += &paint.on(&format!(" {}", rest.join(" ")), dark);
                }
                c
            }
        };
        format!(
            " {} {:>6} ({}%, {}): {command}",
            if last { "└─" } else { "├─" },
            self.pid,
            paint.on(&cpu, Paint::fg(AnsiColor::Green)),
            paint.on(&format!("{mem:>6}"), Paint::fg(AnsiColor::Yellow)),
        )
    }
}
