//! What the GPU lines show: gpustat's flags, resolved (`-a` sets the others).

/// The flags as given on the command line (gpustat's names).
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags<'a> {
    /// `-a`: everything, as -c -u -p -F -e -P.
    pub all: bool,
    /// `-c`: the command name of each process.
    pub cmd: bool,
    /// `-f`: a line per process under its GPU.
    pub full_cmd: bool,
    /// `-u`: the user of each process.
    pub user: bool,
    /// `-p`: the pid of each process.
    pub pid: bool,
    /// `-F`: the fan speed.
    pub fan: bool,
    /// `-e`'s value (`enc`, `dec`, `enc,dec`), when given.
    pub codec: Option<&'a str>,
    /// `-P`'s value (`draw`, `limit`, `draw,limit`), when given.
    pub power: Option<&'a str>,
    /// `--no-processes`.
    pub no_processes: bool,
}

/// What the GPU lines show, the flags resolved (`-a` sets the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Show {
    pub(crate) cmd: bool,
    pub(crate) full_cmd: bool,
    pub(crate) user: bool,
    pub(crate) pid: bool,
    pub(crate) fan: bool,
    pub(crate) enc: bool,
    pub(crate) dec: bool,
    pub(crate) power: bool,
    pub(crate) power_limit: bool,
    pub(crate) processes: bool,
}

impl Show {
    /// What `flags` ask to show.
    pub fn of(flags: &Flags<'_>) -> Self {
        let all = flags.all;
        let codec = flags.codec.unwrap_or("");
        let power = flags.power.unwrap_or("");
        Self {
            cmd: flags.cmd || all,
            full_cmd: flags.full_cmd,
            user: flags.user || all,
            pid: flags.pid || all,
            fan: flags.fan || all,
            enc: codec.contains("enc") || all,
            dec: codec.contains("dec") || all,
            power: !power.is_empty() || all,
            power_limit: power.contains("limit") || all,
            processes: !flags.no_processes,
        }
    }

    /// Whether `-f`'s process lines are shown (they show each process's CPU use).
    pub fn full_cmd(&self) -> bool {
        self.full_cmd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_shows_everything_but_the_full_command_lines() {
        let s = Show::of(&Flags {
            all: true,
            ..Flags::default()
        });
        assert!(s.cmd && s.user && s.pid && s.fan && s.enc && s.dec && s.power && s.power_limit);
        assert!(!s.full_cmd && s.processes);
    }

    #[test]
    fn codec_and_power_values_choose_their_parts() {
        let s = Show::of(&Flags {
            codec: Some("dec"),
            power: Some("draw"),
            no_processes: true,
            ..Flags::default()
        });
        assert_eq!(
            (s.enc, s.dec, s.power, s.power_limit),
            (false, true, true, false)
        );
        assert!(!s.processes);
        let none = Show::of(&Flags::default());
        assert!(!none.enc && !none.dec && !none.power && none.processes);
    }
}
