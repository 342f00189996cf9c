//! `diag`: run DCGM diagnostics, like `dcgmi diag -r 1|2|3|4`. Levels 3 and 4 are the stress
//! tests people otherwise run gpu-burn for. Exit status: 0 all passed, 3 a test failed, 1 error.
//!
//! ```text
//! dcgm-diag --simulate -r 1
//! dcgm-diag --simulate -r 3 --json
//! dcgm-diag --simulate -r memory,pcie -g 0,1
//! ```

use dcgm_tools as common;

use std::process::ExitCode;

use clap::Parser;
use dcgm::{DiagLevel, DiagRequest, DiagResult};

#[derive(Debug, Parser)]
#[command(
    name = "diag",
    about = "Run DCGM diagnostics and print per-test, per-GPU results", after_help = common::EXIT_STATUS_GRADED)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Level 1 (short), 2 (medium), 3 (long), 4 (extra long), or test names.
    #[arg(short = 'r', long = "run", default_value = "1")]
    run: String,
    /// GPU ids (default: all).
    #[arg(short = 'g', long = "gpus", value_delimiter = ',')]
    gpus: Vec<u32>,
    /// Test parameters, `test.parameter=value`.
    #[arg(short = 'p', long = "parameters", value_delimiter = ';')]
    params: Vec<String>,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let mut req = match cli.run.as_str() {
        "1" => DiagRequest::level(DiagLevel::Short),
        "2" => DiagRequest::level(DiagLevel::Medium),
        "3" => DiagRequest::level(DiagLevel::Long),
        "4" => DiagRequest::level(DiagLevel::ExtraLong),
        names => DiagRequest::tests(names.split(',').map(str::trim)),
    };
    for p in &cli.params {
        req = req.param(p.clone());
    }
    let handle = cli.conn.open()?;
    let (group, gpus) = common::gpu_group(&handle, "diag", &cli.gpus)?;
    let resp = group.run_diag(&req)?;
    let overall = resp.overall();
    if cli.json {
        let tests: Vec<serde_json::Value> = resp
            .tests
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.name,
                    "result": t.result.to_string(),
                    "gpus": t.results.iter().map(|(e, r)| serde_json::json!({"entity": e.to_string(), "result": r.to_string()})).collect::<Vec<_>>(),
                    "errors": t.errors.iter().map(|e| serde_json::json!({
                        "entity": e.entity.map(|x| x.to_string()), "code": e.code_name, "message": e.message,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        common::outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "simulated": handle.is_simulated(),
                "overall": overall.to_string(),
                "dcgm_version": resp.dcgm_version,
                "driver_version": resp.driver_version,
                "tests": tests,
            }))
            .expect("JSON")
        );
    } else {
        let mut header = format!("{:<20}", "Test");
        for g in &gpus {
            header += &format!(" {:>6}", format!("GPU{g}"));
        }
        common::outln!("{header}");
        for t in &resp.tests {
            let mut line = format!("{:<20}", t.name);
            for g in &gpus {
                let r = t
                    .results
                    .iter()
                    .find(|(e, _)| e.group == dcgm::EntityGroup::Gpu && e.id == *g)
                    .map(|(_, r)| r.to_string())
                    .unwrap_or_else(|| "-".into());
                line += &format!(" {r:>6}");
            }
            common::outln!("{line}");
            for e in &t.errors {
                common::outln!("    {e}");
            }
        }
        common::outln!("Overall: {overall}");
    }
    Ok(ExitCode::from(if overall == DiagResult::Fail {
        3
    } else {
        0
    }))
}
