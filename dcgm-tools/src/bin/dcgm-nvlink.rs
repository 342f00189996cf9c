//! `nvlink`: NVLink link states of every GPU and NvSwitch, like `dcgmi nvlink -s`.
//!
//! ```text
//! dcgm-nvlink --simulate
//! ```

use dcgm_tools as common;

use std::process::ExitCode;

use clap::Parser;
use dcgm::LinkState;

#[derive(Debug, Parser)]
#[command(name = "nvlink", about = "NVLink link states of GPUs and NvSwitches", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// One JSON document.
    #[arg(long)]
    json: bool,
}

fn code(s: LinkState) -> char {
    match s {
        LinkState::Up => 'U',
        LinkState::Down => 'D',
        LinkState::Disabled => 'X',
        LinkState::NotSupported => '_',
    }
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let handle = cli.conn.open()?;
    let st = handle.system().nvlink_status()?;
    if cli.json {
        let enc = |v: &[(u32, Vec<LinkState>)]| -> Vec<serde_json::Value> {
            v.iter()
                .map(|(id, links)| {
                    serde_json::json!({"id": id, "links": links.iter().map(|l| format!("{l:?}")).collect::<Vec<_>>()})
                })
                .collect()
        };
        common::outln!(
            "{}",
            serde_json::json!({"simulated": handle.is_simulated(), "gpus": enc(&st.gpus), "nvswitches": enc(&st.switches)})
        );
        return Ok(ExitCode::SUCCESS);
    }
    common::outln!("+----------------------+");
    common::outln!("|  Link Status         |");
    common::outln!("+----------------------+");
    common::outln!("GPUs:");
    for (id, links) in &st.gpus {
        let s: String = links.iter().map(|l| format!(" {}", code(*l))).collect();
        common::outln!("    gpuId {id}:\n       {s}");
    }
    common::outln!("NvSwitches:");
    for (id, links) in &st.switches {
        let s: String = links.iter().map(|l| format!(" {}", code(*l))).collect();
        common::outln!("    physicalId {id}:\n       {s}");
    }
    common::outln!();
    common::outln!("Key: Up=U, Down=D, Disabled=X, Not Supported=_");
    let bad = st.unhealthy_links();
    if !bad.is_empty() {
        common::outln!("{} link(s) down", bad.len());
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
