//! A minimal OTLP/gRPC metrics receiver, to try the exporter's `--otlp-endpoint` without an
//! OpenTelemetry Collector and to measure the push's cost on a GPU node: it takes every
//! `MetricsService/Export` request, decodes it with the generated `opentelemetry-proto`
//! structs, and on SIGTERM or SIGINT prints how many requests, resources, metrics and data
//! points arrived (and the metric names seen, with `--names`).
//!
//! ```text
//! cargo run -p dcgm-exporter --example otlp_sink -- 127.0.0.1:4317 [--names]
//! dcgm-exporter --simulate --otlp-endpoint http://127.0.0.1:4317
//! ```
//!
//! Once it listens it prints `listening on ADDR` to stdout. A bad address is an error (exit 2).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;

/// What arrived so far.
#[derive(Debug, Default)]
struct Tally {
    requests: u64,
    resources: u64,
    metrics: u64,
    points: u64,
    names: BTreeSet<String>,
}

#[derive(Debug, Clone, Default)]
struct Sink {
    tally: Arc<Mutex<Tally>>,
}

#[tonic::async_trait]
impl MetricsService for Sink {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let r = request.into_inner();
        let mut t = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        t.requests += 1;
        for rm in &r.resource_metrics {
            t.resources += 1;
            for sm in &rm.scope_metrics {
                for m in &sm.metrics {
                    t.metrics += 1;
                    t.points += match &m.data {
                        Some(Data::Gauge(g)) => g.data_points.len(),
                        Some(Data::Sum(s)) => s.data_points.len(),
                        _ => 0,
                    } as u64;
                    if !t.names.contains(&m.name) {
                        t.names.insert(m.name.clone());
                    }
                }
            }
        }
        Ok(tonic::Response::new(ExportMetricsServiceResponse::default()))
    }
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:4317".into());
    let names = args.any(|a| a == "--names");
    let addr: std::net::SocketAddr = match addr.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("otlp_sink: {addr:?} is not an address such as 127.0.0.1:4317: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("otlp_sink: cannot start a runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let sink = Sink::default();
    let tally = sink.tally.clone();
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        println!("listening on {}", listener.local_addr()?);
        let stop = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut term) => tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                },
                // No SIGTERM handler: Ctrl-C alone stops it.
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        };
        tonic::transport::Server::builder()
            .add_service(
                MetricsServiceServer::new(sink).max_decoding_message_size(256 * 1024 * 1024),
            )
            .serve_with_incoming_shutdown(
                tokio_stream::wrappers::TcpListenerStream::new(listener),
                stop,
            )
            .await
            .map_err(std::io::Error::other)
    });
    let t = tally.lock().unwrap_or_else(|p| p.into_inner());
    println!(
        "otlp_sink: {} requests, {} resources, {} metrics, {} data points",
        t.requests, t.resources, t.metrics, t.points
    );
    if names {
        for n in &t.names {
            println!("{n}");
        }
    }
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("otlp_sink: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
