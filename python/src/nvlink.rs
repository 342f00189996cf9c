//! NVLink: link states of GPUs and NvSwitches (`System.nvlink_status`) and peer-to-peer status
//! between GPUs (`System.nvlink_p2p_status`), as dicts.

use dcgm::System;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::ResultExt;

pub fn nvlink_status<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyDict>> {
    let st = py.detach(move || s.nvlink_status()).py(py)?;
    let d = PyDict::new(py);
    for (key, list) in [("gpus", &st.gpus), ("switches", &st.switches)] {
        let m = PyDict::new(py);
        for (id, links) in list {
            m.set_item(id, links.iter().map(|l| l.to_string()).collect::<Vec<_>>())?;
        }
        d.set_item(key, m)?;
    }
    Ok(d)
}

pub fn nvlink_p2p_status<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyDict>> {
    let st = py.detach(move || s.nvlink_p2p_status()).py(py)?;
    let d = PyDict::new(py);
    for g in st {
        let m = PyDict::new(py);
        for (peer, status) in g.peers {
            m.set_item(peer, format!("{status:?}"))?;
        }
        d.set_item(g.gpu, m)?;
    }
    Ok(d)
}
