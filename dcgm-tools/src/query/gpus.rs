//! `-i`: the GPUs chosen by index, UUID or PCI bus id.

use dcgm::Handle;

/// The GPUs `-i` names (all when none), in index order.
pub(crate) fn select_gpus(
    handle: &Handle,
    all: &[u32],
    given: &[String],
) -> crate::Result<Vec<u32>> {
    if given.is_empty() {
        return Ok(all.to_vec());
    }
    let sys = handle.system();
    let attrs = all
        .iter()
        .map(|&g| sys.device_attributes(g).map(|a| (g, a)))
        .collect::<dcgm::Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for id in given.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let found = attrs.iter().find(|(g, a)| {
            id.parse::<u32>().ok() == Some(*g)
                || a.uuid.eq_ignore_ascii_case(id)
                || pci_address(&a.pci_bus_id).is_some_and(|b| pci_address(id) == Some(b))
        });
        match found {
            Some((g, _)) if !out.contains(g) => out.push(*g),
            Some(_) => {}
            None => {
                return Err(format!(
                    "no GPU with index, UUID or PCI bus id {id:?} (GPUs: {})",
                    crate::ranges(all)
                )
                .into());
            }
        }
    }
    // nvidia-smi lists the chosen GPUs in its own order, whatever the order of `-i`.
    out.sort_unstable();
    Ok(out)
}

/// `[domain:]bus:device.function` as numbers (`00000000:00:06.0` and `00:06.0` are equal).
fn pci_address(s: &str) -> Option<(u32, u32, u32, u32)> {
    let (rest, function) = s.rsplit_once('.')?;
    let mut parts: Vec<&str> = rest.split(':').collect();
    if parts.len() == 2 {
        parts.insert(0, "0");
    }
    let [domain, bus, device] = parts[..] else {
        return None;
    };
    let hex = |p: &str| u32::from_str_radix(p, 16).ok();
    Some((hex(domain)?, hex(bus)?, hex(device)?, hex(function)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bus_id_reads_with_or_without_its_domain() {
        assert_eq!(pci_address("00000000:00:06.0"), Some((0, 0, 6, 0)));
        assert_eq!(pci_address("00:06.0"), pci_address("00000000:00:06.0"));
        assert_eq!(pci_address("0001:1A:00.1"), Some((1, 0x1a, 0, 1)));
        assert_eq!(pci_address("GPU-1234"), None);
        assert_eq!(pci_address("1:2:3:4.0"), None);
    }
}
