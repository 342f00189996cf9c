//! dcgm-exporter 4.8's interface through the binary on dcgm-sim: the `hostname` label and
//! `--hostname-label`, and the flags of its 4.8.3 and 4.8.4 releases.

use std::process::Output;
use std::time::Duration;

mod support;
use support::process::{self, run_bounded};

fn once(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec!["--simulate", "--once"];
    all.extend_from_slice(args);
    let mut c = process::exporter("iface-node", &all);
    for (k, v) in env {
        c.env(k, v);
    }
    run_bounded(c, Duration::from_secs(60))
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The GPU temperature series' lines.
fn temps(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("DCGM_FI_DEV_GPU_TEMP{"))
        .collect()
}

#[test]
fn hostname_is_the_default_label_and_hostname_label_brings_back_the_old_name() {
    let text = stdout(&once(&[], &[]));
    let t = temps(&text);
    assert!(!t.is_empty(), "{text}");
    for l in &t {
        assert!(l.contains(",hostname=\"iface-node\""), "{l}");
        assert!(!l.contains("Hostname="), "{l}");
    }

    let text = stdout(&once(&["--hostname-label", "Hostname"], &[]));
    for l in temps(&text) {
        assert!(l.contains(",Hostname=\"iface-node\""), "{l}");
        assert!(!l.contains("hostname="), "{l}");
    }

    // Its environment variable, and the command line over it.
    let env = [("DCGM_EXPORTER_HOSTNAME_LABEL", "Hostname")];
    let text = stdout(&once(&[], &env));
    assert!(temps(&text).iter().all(|l| l.contains(",Hostname=\"")));
    let text = stdout(&once(&["--hostname-label", "hostname"], &env));
    assert!(temps(&text).iter().all(|l| l.contains(",hostname=\"")));

    // Not a label name: a configuration error.
    let bad = once(&["--hostname-label", "host-name"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a label name"));
}
