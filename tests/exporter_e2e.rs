#[test]
fn nested() {
    let st = std::process::Command::new(env!("CARGO")).args(["build", "--example", "exporter"]).current_dir(env!("CARGO_MANIFEST_DIR")).status().unwrap();
    assert!(st.success());
}
