//! Every process on each GPU, with its GPU memory: `dcgm::ProcessWatch` over DCGM's
//! running-process lists. libdcgm stores one update's processes at consecutive microseconds;
//! the watch groups them back, so a GPU shared by three processes lists three.
//!
//! ```text
//! cargo run --example processes -- --simulate
//! ```

use std::time::Duration;

use clap::Parser;
use dcgm::{Handle, ProcessWatch};

#[derive(Parser)]
#[command(about = "List every process on each GPU")]
struct Cli {
    /// Read dcgm-sim's simulated node instead of the real GPUs.
    #[arg(long)]
    simulate: bool,
}

fn main() -> Result<(), dcgm::Error> {
    let cli = Cli::parse();
    let handle = if cli.simulate {
        Handle::builder().simulator().embedded()?
    } else {
        Handle::builder().embedded()?
    };
    if handle.is_simulated() {
        eprintln!("# SIMULATED DATA: reading from dcgm-sim, not from real GPUs");
    }
    let gpus = handle.system().gpu_ids()?;
    let watch = ProcessWatch::new(&handle, &gpus, Duration::from_secs(1))?;
    for (gpu, processes) in watch.read()? {
        if processes.is_empty() {
            println!("GPU {gpu}: no process");
        }
        for p in processes {
            println!(
                "GPU {gpu}: pid {:>7}  {:>8} MiB",
                p.pid,
                p.memory_used_bytes >> 20
            );
        }
    }
    Ok(())
}
