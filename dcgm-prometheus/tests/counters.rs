//! The counters-file parser: format, aliases, exporter rows, and errors with line numbers.

use dcgm::FieldId;
use dcgm_prometheus::counters::{is_label_name, is_metric_name};
use dcgm_prometheus::*;

fn fid(name: &str) -> FieldId {
    FieldId(dcgm::raw::sys::field_by_name(name).unwrap().id)
}

fn err(text: &str) -> CountersError {
    parse_counters(text).expect_err("should be rejected")
}

#[test]
fn rows_comments_blank_lines_and_whitespace() {
    let text = "# a comment\n\
                \n\
                DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock (MHz).\n\
                \t  # an indented comment\n\
                \x20 DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION ,\tcounter ,  Energy (mJ).  \n\
                   \n\
                DCGM_FI_DRIVER_VERSION, label, Driver version\n";
    let c = parse_counters(text).unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].metric_name, "DCGM_FI_DEV_SM_CLOCK");
    assert_eq!(c[0].kind, MetricKind::Gauge);
    assert_eq!(c[0].help, "SM clock (MHz).");
    assert_eq!(c[0].line, 3);
    assert_eq!(c[1].metric_name, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
    assert_eq!(c[1].kind, MetricKind::Counter);
    assert_eq!(c[1].help, "Energy (mJ).");
    assert_eq!(c[1].line, 5);
    assert_eq!(c[2].kind, MetricKind::Label);
    assert!(c[2].is_label());
    assert_eq!(c[2].line, 7);
}

#[test]
fn pre_4_6_aliases_resolve_and_keep_their_spelling() {
    let text = "DCGM_FI_DEV_GPU_TEMP, gauge, old name\n\
                DCGM_FI_DEV_GPU_TEMP_CELSIUS, gauge, new name\n\
                DCGM_FI_DEV_POWER_USAGE, gauge, power\n\
                DCGM_FI_DEV_GPU_UTIL, gauge, util\n\
                DCGM_FI_PROF_SM_ACTIVE, gauge, sm active\n\
                DCGM_FI_DRIVER_VERSION, label, driver\n";
    let c = parse_counters(text).unwrap();
    let names: Vec<&str> = c.iter().map(|c| c.metric_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_GPU_TEMP_CELSIUS",
            "DCGM_FI_DEV_POWER_USAGE",
            "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_PROF_SM_ACTIVE",
            "DCGM_FI_DRIVER_VERSION"
        ]
    );
    // The alias and the 4.6 name are the same field.
    assert_eq!(c[0].field, CounterField::Dcgm(FieldId(150)));
    assert_eq!(c[1].field, c[0].field);
    assert_eq!(c[0].field_id(), Some(FieldId(150)));
    assert_eq!(c[2].field_id(), Some(fid("DCGM_FI_DEV_BOARD_POWER_WATTS")));
    assert_eq!(c[3].field_id(), Some(fid("DCGM_FI_DEV_GPU_UTIL_RATIO")));
    assert_eq!(c[4].field_id(), Some(fid("DCGM_FI_PROF_SM_UTIL_RATIO")));
    assert_eq!(c[5].field_id(), Some(FieldId(1)));
}

#[test]
fn exporter_rows_are_typed() {
    let text = "DCGM_EXP_XID_ERRORS_COUNT, counter, xids\n\
                DCGM_EXP_CLOCK_EVENTS_COUNT, counter, clock events\n\
                DCGM_EXP_GPU_HEALTH_STATUS, gauge, health\n\
                DCGM_EXP_P2P_STATUS, gauge, p2p\n";
    let c = parse_counters(text).unwrap();
    let kinds: Vec<CounterField> = c.iter().map(|c| c.field).collect();
    assert_eq!(
        kinds,
        [
            CounterField::Exporter(ExporterCounter::XidErrorsCount),
            CounterField::Exporter(ExporterCounter::ClockEventsCount),
            CounterField::Exporter(ExporterCounter::GpuHealthStatus),
            CounterField::Exporter(ExporterCounter::P2pStatus),
        ]
    );
    assert_eq!(c[0].field_id(), None);
    assert_eq!(
        ExporterCounter::XidErrorsCount.source_field(),
        Some(fid("DCGM_FI_DEV_XID_ERROR"))
    );
    assert_eq!(
        ExporterCounter::ClockEventsCount.source_field(),
        Some(fid("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"))
    );
    assert_eq!(ExporterCounter::P2pStatus.source_field(), None);
    // The fields to watch: the exporter rows' sources, each once.
    let fields = counter_fields(&c);
    assert_eq!(
        fields,
        [
            fid("DCGM_FI_DEV_XID_ERROR"),
            fid("DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
        ]
    );
    for e in ExporterCounter::ALL {
        assert_eq!(ExporterCounter::from_name(e.name()), Some(e));
    }
}

#[test]
fn counter_fields_are_unique_and_in_first_use_order() {
    let text = "DCGM_FI_DEV_GPU_TEMP, gauge, a\n\
                DCGM_FI_DEV_XID_ERRORS, gauge, b\n\
                DCGM_FI_DEV_GPU_TEMP_CELSIUS, gauge, c\n\
                DCGM_EXP_XID_ERRORS_COUNT, counter, d\n\
                DCGM_FI_DRIVER_VERSION, label, e\n";
    let c = parse_counters(text).unwrap();
    assert_eq!(
        counter_fields(&c),
        [FieldId(150), fid("DCGM_FI_DEV_XID_ERROR"), FieldId(1)]
    );
}

#[test]
fn types_histogram_summary_and_case() {
    let text = "DCGM_FI_DEV_GPU_TEMP, GAUGE, a\n\
                DCGM_FI_DEV_SM_CLOCK, Histogram, b\n\
                DCGM_FI_DEV_MEM_CLOCK, summary, c\n";
    let c = parse_counters(text).unwrap();
    assert_eq!(c[0].kind, MetricKind::Gauge);
    assert_eq!(c[1].kind, MetricKind::Histogram);
    assert_eq!(c[2].kind, MetricKind::Summary);
    // One DCGM value cannot make buckets or quantiles: exposed as untyped.
    assert_eq!(MetricKind::Histogram.exposition_type(), "untyped");
    assert_eq!(MetricKind::Summary.exposition_type(), "untyped");
    assert_eq!(MetricKind::Counter.exposition_type(), "counter");
    assert_eq!(MetricKind::Gauge.to_string(), "gauge");
}

#[test]
fn quoted_help_may_contain_commas_and_quotes() {
    let text = "DCGM_FI_DEV_GPU_TEMP, gauge, \"Temperature, in \"\"C\"\"\"  \n\
                \"DCGM_FI_DEV_SM_CLOCK\", \"gauge\", plain\n\
                DCGM_FI_DEV_MEM_CLOCK, gauge, \"\"\n";
    let c = parse_counters(text).unwrap();
    assert_eq!(c[0].help, "Temperature, in \"C\"");
    assert_eq!(c[1].metric_name, "DCGM_FI_DEV_SM_CLOCK");
    assert_eq!(c[2].help, "");
}

#[test]
fn crlf_bom_and_no_final_newline() {
    let text =
        "\u{feff}# comment\r\nDCGM_FI_DEV_GPU_TEMP, gauge, a\r\n\r\nDCGM_FI_DEV_SM_CLOCK, gauge, b";
    let c = parse_counters(text).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].help, "a");
    assert_eq!(c[1].line, 4);
    assert!(parse_counters("").unwrap().is_empty());
    assert!(parse_counters("# only comments\n\n").unwrap().is_empty());
}

#[test]
fn malformed_lines_report_their_line_number() {
    // Line numbers count comments and blank lines.
    let e = err("# header\n\nDCGM_FI_DEV_GPU_TEMP, gauge, ok\nDCGM_FI_DEV_SM_CLOCK, gauge\n");
    assert_eq!(e.line, 4);
    assert_eq!(e.reason, CountersErrorKind::ColumnCount { found: 2 });
    assert!(e.to_string().starts_with("line 4: "), "{e}");

    let e = err("DCGM_FI_DEV_GPU_TEMP, gauge, help, with a comma\n");
    assert_eq!(
        (e.line, e.reason),
        (1, CountersErrorKind::ColumnCount { found: 4 })
    );

    let e = err("DCGM_FI_DEV_GPU_TEMP\n");
    assert_eq!(e.reason, CountersErrorKind::ColumnCount { found: 1 });

    let e = err("DCGM_FI_DEV_GPU_TEMP, gauge, ok\n\nDCGM_FI_DEV_SM_CLOCK, gauge, \"unterminated\n");
    assert_eq!(
        (e.line, e.reason),
        (3, CountersErrorKind::UnterminatedQuote)
    );

    let e = err("DCGM_FI_DEV_GPU_TEMP, gauge, \"quoted\" trailing\n");
    assert_eq!(e.reason, CountersErrorKind::TextAfterQuote);

    let e = err("DCGM_FI_DEV_GPU_TEMP, gauge, a \"bare\" quote\n");
    assert_eq!(e.reason, CountersErrorKind::BareQuote);

    let e = err("   , gauge, no field\n");
    assert_eq!(e.reason, CountersErrorKind::EmptyField);

    let e = err("DCGM_FI_DEV_GPU_TEMP, gauge, a\nDCGM_FI_DEV_SM_CLOCK, gaug, typo\n");
    assert_eq!(e.line, 2);
    assert_eq!(e.reason, CountersErrorKind::UnknownType("gaug".into()));
    assert!(e.to_string().contains("gaug"), "{e}");
}

#[test]
fn unknown_fields_and_duplicates_report_their_line_number() {
    let e = err("DCGM_FI_DEV_GPU_TEMP, gauge, a\n# x\nDCGM_FI_DEV_NO_SUCH_THING, gauge, b\n");
    assert_eq!(e.line, 3);
    assert_eq!(
        e.reason,
        CountersErrorKind::UnknownField("DCGM_FI_DEV_NO_SUCH_THING".into())
    );
    assert!(e.to_string().contains("DCGM_FI_DEV_NO_SUCH_THING"), "{e}");

    let e = err("DCGM_EXP_NOT_A_ROW, counter, x\n");
    assert_eq!(
        e.reason,
        CountersErrorKind::UnknownField("DCGM_EXP_NOT_A_ROW".into())
    );

    // A tag or a number names a field, but not a metric: the error says which name to write.
    let e = err("gpu_temp, gauge, x\n");
    assert_eq!(
        e.reason,
        CountersErrorKind::NotAFieldName {
            given: "gpu_temp".into(),
            name: "DCGM_FI_DEV_GPU_TEMP_CELSIUS".into()
        }
    );
    let e = err("150, gauge, x\n");
    assert!(matches!(e.reason, CountersErrorKind::NotAFieldName { .. }));

    let e = err(
        "DCGM_FI_DEV_GPU_TEMP, gauge, a\nDCGM_FI_DEV_SM_CLOCK, gauge, b\nDCGM_FI_DEV_GPU_TEMP, counter, c\n",
    );
    assert_eq!(e.line, 3);
    assert_eq!(
        e.reason,
        CountersErrorKind::Duplicate {
            name: "DCGM_FI_DEV_GPU_TEMP".into(),
            first_line: 1
        }
    );

    let e = err("DCGM_EXP_XID_ERRORS_COUNT, label, no\n");
    assert_eq!(
        e.reason,
        CountersErrorKind::ExporterRowAsLabel(ExporterCounter::XidErrorsCount)
    );
}

#[test]
fn prometheus_name_rules() {
    assert!(is_metric_name("DCGM_FI_DEV_GPU_TEMP"));
    assert!(is_metric_name("a:b_c9"));
    assert!(!is_metric_name("9abc"));
    assert!(!is_metric_name("a-b"));
    assert!(!is_metric_name(""));
    assert!(is_label_name("Hostname"));
    assert!(!is_label_name("a:b"));
    assert!(!is_label_name("__reserved"));
}

/// The shipped default counters file parses and covers every row dcgm-exporter's default
/// counters file enables.
#[test]
fn shipped_default_counters_cover_dcgm_exporter_defaults() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dcgm-exporter/etc/default-counters.csv"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let c = parse_counters(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let has =
        |name: &str, kind: MetricKind| c.iter().any(|c| c.metric_name == name && c.kind == kind);
    let upstream = [
        ("DCGM_FI_DEV_SM_CLOCK", MetricKind::Gauge),
        ("DCGM_FI_DEV_MEM_CLOCK", MetricKind::Gauge),
        ("DCGM_FI_DEV_MEMORY_TEMP", MetricKind::Gauge),
        ("DCGM_FI_DEV_GPU_TEMP", MetricKind::Gauge),
        ("DCGM_FI_DEV_POWER_USAGE", MetricKind::Gauge),
        ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricKind::Counter),
        ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", MetricKind::Counter),
        ("DCGM_FI_DEV_GPU_UTIL", MetricKind::Gauge),
        ("DCGM_FI_DEV_MEM_COPY_UTIL", MetricKind::Gauge),
        ("DCGM_FI_DEV_ENC_UTIL", MetricKind::Gauge),
        ("DCGM_FI_DEV_DEC_UTIL", MetricKind::Gauge),
        ("DCGM_FI_DEV_XID_ERRORS", MetricKind::Gauge),
        ("DCGM_FI_DEV_FB_FREE", MetricKind::Gauge),
        ("DCGM_FI_DEV_FB_USED", MetricKind::Gauge),
        ("DCGM_FI_DEV_FB_RESERVED", MetricKind::Gauge),
        ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", MetricKind::Counter),
        ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", MetricKind::Gauge),
        (
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            MetricKind::Counter,
        ),
        ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", MetricKind::Counter),
        ("DCGM_FI_DEV_ROW_REMAP_FAILURE", MetricKind::Gauge),
        ("DCGM_FI_DRIVER_VERSION", MetricKind::Label),
        ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", MetricKind::Gauge),
        ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", MetricKind::Gauge),
        ("DCGM_FI_PROF_DRAM_ACTIVE", MetricKind::Gauge),
        ("DCGM_FI_PROF_PCIE_TX_BYTES", MetricKind::Gauge),
        ("DCGM_FI_PROF_PCIE_RX_BYTES", MetricKind::Gauge),
    ];
    for (name, kind) in upstream {
        assert!(
            has(name, kind),
            "{name} ({kind}) missing from the default counters"
        );
    }
    // What the shipped alert rules need beyond dcgm-exporter's defaults.
    assert!(has("DCGM_EXP_XID_ERRORS_COUNT", MetricKind::Counter));
    assert!(has("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", MetricKind::Counter));
    // Every commented-out row is a valid row too, ready to be enabled.
    let commented: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("# DCGM_"))
        .map(|l| format!("DCGM_{l}\n"))
        .collect();
    let extra = parse_counters(&commented).unwrap_or_else(|e| panic!("commented rows: {e}"));
    assert!(extra.len() >= 20, "{}", extra.len());
}

/// The shipped NvSwitch / NVLink / CPU counters file parses, and its rows read the entity
/// levels they are meant for.
#[test]
fn shipped_switch_cpu_counters_cover_every_entity_level() {
    use dcgm::EntityGroup;
    use dcgm_prometheus::row_entity_group;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dcgm-exporter/etc/switch-cpu-counters.csv"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let c = parse_counters(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let level = |name: &str| {
        let c = c.iter().find(|c| c.metric_name == name).unwrap();
        row_entity_group(c.field_id().unwrap())
    };
    assert_eq!(level("DCGM_FI_DEV_GPU_TEMP"), EntityGroup::Gpu);
    assert_eq!(level("DCGM_FI_DRIVER_VERSION"), EntityGroup::Gpu);
    assert_eq!(
        level("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"),
        EntityGroup::Switch
    );
    assert_eq!(level("DCGM_FI_DEV_SXID_FATAL_ERROR"), EntityGroup::Switch);
    assert_eq!(
        level("DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX"),
        EntityGroup::Link
    );
    assert_eq!(level("DCGM_FI_DEV_CPU_TEMP_CELSIUS"), EntityGroup::Cpu);
    assert_eq!(level("DCGM_FI_DEV_CPU_UTIL_TOTAL"), EntityGroup::CpuCore);
    let commented: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("# DCGM_"))
        .map(|l| format!("DCGM_{l}\n"))
        .collect();
    parse_counters(&commented).unwrap_or_else(|e| panic!("commented rows: {e}"));
}
