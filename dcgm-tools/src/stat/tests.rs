//! The format of a given snapshot, line for line, without an engine.

use super::model::{Gpu, Proc};
use super::*;
use crate::local_time::LocalTime;
use std::time::{Duration, UNIX_EPOCH};

fn h200(index: u32, processes: Option<Vec<Proc>>) -> Gpu {
    Gpu {
        index,
        uuid: Some(format!("GPU-{index}")),
        name: Some("NVIDIA H200".into()),
        temperature: Some(56),
        fan_speed: None,
        utilization: Some(99),
        utilization_enc: Some(0),
        utilization_dec: None,
        power_draw: Some(350),
        power_limit: Some(700),
        memory_used: Some(1010),
        memory_total: Some(143771),
        processes,
    }
}

fn python(pid: u32) -> Proc {
    Proc {
        username: Some("root".into()),
        command: Some("python3".into()),
        full_command: Some(vec!["/usr/bin/python3".into(), "train.py".into()]),
        gpu_memory_usage: 1002,
        cpu_percent: Some(99.0),
        cpu_memory_usage: Some(741_343_232),
        pid,
    }
}

fn snapshot(gpus: Vec<Gpu>) -> Snapshot {
    Snapshot {
        hostname: "node-1".into(),
        driver_version: Some("570.86.15".into()),
        query_time: LocalTime::at(UNIX_EPOCH + Duration::from_secs(1_764_662_400)),
        gpus,
    }
}

fn plain(show: Show) -> Format {
    Format {
        json: false,
        show,
        no_header: true,
        name_width: None,
        color: false,
        in_place: false,
    }
}

#[test]
fn a_gpu_line_is_gpustats() {
    let s = snapshot(vec![h200(0, Some(vec![python(581)]))]);
    let f = plain(Show::of(&Flags::default()));
    assert_eq!(
        f.frame(&s, true),
        "[0] NVIDIA H200 | 56°C,  99 % |  1010 / 143771 MB | root(1002M)\n"
    );
}

#[test]
fn all_flags_add_fan_codec_power_command_and_pid_with_question_marks_for_blanks() {
    let s = snapshot(vec![h200(3, Some(vec![python(581)]))]);
    let f = plain(Show::of(&Flags {
        all: true,
        ..Flags::default()
    }));
    assert_eq!(
        f.frame(&s, true),
        "[3] NVIDIA H200 | 56°C,  ?? %,  99 % (E:   0 %  D:  ?? %),  350 / 700 W |  1010 / 143771 \
         MB | root:python3/581(1002M)\n"
    );
}

#[test]
fn full_command_lines_go_under_the_gpu_and_unlisted_processes_say_so() {
    let s = snapshot(vec![
        h200(0, Some(vec![python(581), python(582)])),
        h200(1, None),
    ]);
    let f = plain(Show::of(&Flags {
        cmd: true,
        full_cmd: true,
        ..Flags::default()
    }));
    assert_eq!(
        f.frame(&s, true),
        "[0] NVIDIA H200 | 56°C,  99 % |  1010 / 143771 MB | python3(1002M) python3(1002M)\n \
         ├─    581 (  99%,  707MB): /usr/bin/python3 train.py\n \
         └─    582 (  99%,  707MB): /usr/bin/python3 train.py\n\
         [1] NVIDIA H200 | 56°C,  99 % |  1010 / 143771 MB | (Not Supported)\n"
    );
}

#[test]
fn the_header_names_the_host_time_and_driver_and_no_gpu_is_said() {
    let s = snapshot(Vec::new());
    let mut f = plain(Show::of(&Flags::default()));
    f.no_header = false;
    let time = s.query_time.c_locale();
    assert_eq!(
        f.frame(&s, true),
        // No GPU name to pad to: the host is padded to 16 + 3.
        format!(
            "node-1{}  {time}  570.86.15\n(No GPUs are available)\n",
            " ".repeat(13)
        )
    );
}

#[test]
fn a_watch_on_a_terminal_redraws_in_place() {
    let s = snapshot(vec![h200(0, Some(Vec::new()))]);
    let mut f = plain(Show::of(&Flags::default()));
    f.in_place = true;
    let line = "[0] NVIDIA H200 | 56°C,  99 % |  1010 / 143771 MB |";
    assert_eq!(
        f.frame(&s, true),
        format!("\x1b[2J\x1b[H{line}\x1b[K\n\x1b[J")
    );
    assert_eq!(f.frame(&s, false), format!("\x1b[H{line}\x1b[K\n\x1b[J"));
}

#[test]
fn colours_are_gpustats_palette() {
    let mut g = h200(0, Some(Vec::new()));
    g.temperature = Some(40);
    let s = snapshot(vec![g]);
    let mut f = plain(Show::of(&Flags::default()));
    f.color = true;
    let text = f.frame(&s, true);
    // Index cyan, name blue, a cool temperature plain red, busy utilisation bold green.
    assert!(
        text.starts_with("\x1b[36m[0]\x1b[0m \x1b[34mNVIDIA H200\x1b[0m |\x1b[31m 40°C\x1b[0m")
    );
    assert!(text.contains("\x1b[1m\x1b[32m 99 %\x1b[0m"), "{text:?}");
}

#[test]
fn json_is_gpustats_schema_in_its_key_order() {
    let mut p = python(581);
    p.username = Some("é".into());
    p.cpu_memory_usage = None;
    let s = snapshot(vec![h200(0, Some(vec![p]))]);
    let mut f = plain(Show::of(&Flags::default()));
    f.json = true;
    let iso = s.query_time.iso();
    let want = format!(
        r#"{{
    "hostname": "node-1",
    "driver_version": "570.86.15",
    "query_time": "{iso}",
    "gpus": [
        {{
            "index": 0,
            "uuid": "GPU-0",
            "name": "NVIDIA H200",
            "temperature.gpu": 56,
            "fan.speed": null,
            "utilization.gpu": 99,
            "utilization.enc": 0,
            "utilization.dec": null,
            "power.draw": 350,
            "enforced.power.limit": 700,
            "memory.used": 1010,
            "memory.total": 143771,
            "processes": [
                {{
                    "username": "\u00e9",
                    "command": "python3",
                    "full_command": [
                        "/usr/bin/python3",
                        "train.py"
                    ],
                    "gpu_memory_usage": 1002,
                    "cpu_percent": 99.0,
                    "cpu_memory_usage": null,
                    "pid": 581
                }}
            ]
        }}
    ]
}}
"#
    );
    assert_eq!(f.frame(&s, true), want);
}
