//! Calls by index (`DcgmApi::call_raw`), as the Python compat layer makes them: arguments are
//! converted to each parameter's C type with range checks, and a wrong count, an out-of-range
//! integer or a float for an integer is refused before any call reaches the library.

use std::path::PathBuf;

use dcgm_sys::*;

fn sim() -> DcgmLibrary {
    let exe = std::env::current_exe().expect("the test binary");
    let mut dir = exe.parent().expect("a directory").to_path_buf();
    for _ in 0..3 {
        let c: PathBuf = dir.join("libdcgm_sim.so");
        if c.exists() {
            return DcgmLibrary::open_path(&c).expect("the simulator loads");
        }
        dir.pop();
    }
    panic!("libdcgm_sim.so not built: cargo build -p dcgm-sim");
}

fn index(name: &str) -> usize {
    DcgmApi::index_of(name).unwrap_or_else(|| panic!("{name} is in the table"))
}

#[test]
fn every_function_has_an_index_and_an_arity() {
    for (i, name) in DcgmApi::SYMBOLS.iter().enumerate() {
        assert_eq!(DcgmApi::index_of(name), Some(i));
        assert!(DcgmApi::arity(i).is_some(), "{name}");
    }
    assert_eq!(DcgmApi::arity(index("dcgmInit")), Some(0));
    assert_eq!(DcgmApi::arity(index("dcgmWatchFields")), Some(6));
    assert_eq!(DcgmApi::arity(DcgmApi::SYMBOLS.len()), None);
}

#[test]
fn a_call_by_index_reaches_the_library_and_writes_through_addresses() {
    let lib = sim();
    let api = lib.api();
    // SAFETY: dcgmInit takes no arguments.
    let rc = unsafe { api.call_raw(index("dcgmInit"), &[]) };
    assert_eq!(rc, Ok(DCGM_ST_OK as i128));
    let mut h: dcgmHandle_t = 0;
    let addr = &mut h as *mut dcgmHandle_t as usize as i128;
    // SAFETY: the mode is a valid operation mode and the address is a live dcgmHandle_t.
    let rc = unsafe {
        api.call_raw(
            index("dcgmStartEmbedded"),
            &[
                RawArg::Int(DCGM_OPERATION_MODE_AUTO as i128),
                RawArg::Int(addr),
            ],
        )
    };
    assert_eq!(rc, Ok(DCGM_ST_OK as i128));
    assert_ne!(h, 0);
    let mut count: std::ffi::c_int = 0;
    let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
    // SAFETY: the handle is live; the array holds DCGM_MAX_NUM_DEVICES ids, the count is a c_int.
    let rc = unsafe {
        api.call_raw(
            index("dcgmGetAllDevices"),
            &[
                RawArg::Int(h as i128),
                RawArg::Int(ids.as_mut_ptr() as usize as i128),
                RawArg::Int(&mut count as *mut _ as usize as i128),
            ],
        )
    };
    assert_eq!(rc, Ok(DCGM_ST_OK as i128));
    assert!(count > 0);
    // A double parameter takes a float or an int.
    // SAFETY: plain values for a live handle and the default group.
    let rc = unsafe {
        api.call_raw(
            index("dcgmWatchFieldValue"),
            &[
                RawArg::Int(h as i128),
                RawArg::Int(0),
                RawArg::Int(150),
                RawArg::Int(1_000_000),
                RawArg::Float(30.0),
                RawArg::Int(0),
            ],
        )
    };
    assert!(rc.is_ok(), "{rc:?}");
    // SAFETY: a live handle.
    let rc = unsafe { api.call_raw(index("dcgmStopEmbedded"), &[RawArg::Int(h as i128)]) };
    assert_eq!(rc, Ok(DCGM_ST_OK as i128));
}

#[test]
fn bad_arguments_are_refused_before_the_call() {
    let lib = sim();
    let api = lib.api();
    let i = index("dcgmGroupCreate");
    // SAFETY: each of these is refused before the function is called.
    unsafe {
        assert_eq!(
            api.call_raw(i, &[RawArg::Int(1)]),
            Err(RawCallError::Arity {
                function: "dcgmGroupCreate",
                expected: 4,
                given: 1
            })
        );
        let e = api
            .call_raw(
                index("dcgmWatchFieldValue"),
                &[
                    RawArg::Int(1),
                    RawArg::Int(0),
                    RawArg::Int(70_000),
                    RawArg::Int(1),
                    RawArg::Float(1.0),
                    RawArg::Int(0),
                ],
            )
            .unwrap_err();
        assert!(
            matches!(
                &e,
                RawCallError::Argument {
                    parameter: "fieldId",
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().contains("70000 is out of range for u16"),
            "{e}"
        );
        let e = api
            .call_raw(
                i,
                &[
                    RawArg::Float(1.5),
                    RawArg::Int(0),
                    RawArg::Int(0),
                    RawArg::Int(0),
                ],
            )
            .unwrap_err();
        assert!(e.to_string().contains("expected an integer"), "{e}");
        let e = api
            .call_raw(
                i,
                &[
                    RawArg::Int(-1),
                    RawArg::Int(0),
                    RawArg::Int(0),
                    RawArg::Int(0),
                ],
            )
            .unwrap_err();
        assert!(
            e.to_string().contains("-1 is out of range for usize"),
            "{e}"
        );
        assert_eq!(
            api.call_raw(DcgmApi::SYMBOLS.len(), &[]),
            Err(RawCallError::UnknownFunction(DcgmApi::SYMBOLS.len()))
        );
    }
}
