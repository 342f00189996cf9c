#!/usr/bin/env bash
# Runs every test of the project: the Rust workspace (unit, integration and doc tests, all
# against the dcgm-sim simulator built in the same run).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-targets
cargo test --workspace --doc
