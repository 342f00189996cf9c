//! Connections per client address: one address (a scraper gone wrong, or an attacker) can hold
//! at most a share of the server's connections, so that it cannot lock out everyone else.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// The connections each client address holds.
#[derive(Debug)]
pub struct ClientSlots {
    max: usize,
    held: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection of an address, given back when dropped.
#[derive(Debug)]
pub struct ClientSlot {
    slots: Arc<ClientSlots>,
    addr: IpAddr,
}

impl ClientSlots {
    /// At most `max` connections per address.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            held: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for a new connection from `addr`, or `None` when that address holds `max`
    /// already. An IPv4 address mapped into IPv6 counts as the IPv4 address.
    pub fn take(self: &Arc<Self>, addr: IpAddr) -> Option<ClientSlot> {
        let addr = addr.to_canonical();
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let n = held.entry(addr).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            slots: self.clone(),
            addr,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = held.get_mut(&self.addr) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_at_most_max_and_gets_its_slots_back() {
        let slots = ClientSlots::new(2);
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "::ffff:127.0.0.2".parse().unwrap();
        let one = slots.take(a).unwrap();
        let _two = slots.take(b).unwrap();
        assert!(
            slots.take(a).is_none(),
            "a mapped address counts as its IPv4 one"
        );
        assert!(slots.take("127.0.0.1".parse().unwrap()).is_some());
        drop(one);
        assert!(slots.take(a).is_some());
    }
}
