//! Which DCGM release first knows each field id: an nv-hostengine refuses a whole field group
//! holding one id it does not know, and the client library only says which ids *it* knows.
//! Where a handle talks to an engine of another release, the ids that engine's release lacks
//! are left out too ([`crate::Handle::knows_field`]).
//!
//! Read from `dcgmlib/dcgm_fields.h` at each public release tag of NVIDIA's DCGM (3.3.9,
//! 4.0.0, 4.1.0, 4.1.1, 4.2.3, 4.3.1, 4.4.1, 4.4.2, 4.5.0, 4.5.2, 4.5.3, 4.6.0): an id is
//! listed with the first tag from which every later tag defines it. Between two tags the
//! later one is named (an id first seen at 4.2.3 may exist in 4.2.0 to 4.2.2, where it is left
//! out: a value missing, never a refused group). Ids of DCGM 3.3.9 and before are not listed.

use crate::release::DcgmVersion;
use crate::{FieldId, Handle};

/// `(first id, last id, first release)`, ascending by id.
const SINCE: [(u16, u16, DcgmVersion); 33] = [
    (6, 6, DcgmVersion::new(4, 5, 0)),
    (64, 64, DcgmVersion::new(4, 3, 1)),
    (94, 94, DcgmVersion::new(4, 0, 0)),
    (153, 153, DcgmVersion::new(4, 1, 0)),
    (165, 167, DcgmVersion::new(4, 0, 0)),
    (170, 173, DcgmVersion::new(4, 0, 0)),
    (174, 174, DcgmVersion::new(4, 4, 2)),
    (175, 175, DcgmVersion::new(4, 6, 0)),
    (334, 345, DcgmVersion::new(4, 1, 0)),
    (346, 346, DcgmVersion::new(4, 2, 3)),
    (350, 362, DcgmVersion::new(4, 0, 0)),
    (363, 363, DcgmVersion::new(4, 5, 0)),
    (497, 499, DcgmVersion::new(4, 0, 0)),
    (571, 577, DcgmVersion::new(4, 1, 0)),
    (580, 592, DcgmVersion::new(4, 4, 1)),
    (817, 824, DcgmVersion::new(4, 0, 0)),
    (825, 843, DcgmVersion::new(4, 1, 0)),
    (879, 897, DcgmVersion::new(4, 1, 0)),
    (1034, 1034, DcgmVersion::new(4, 0, 0)),
    (1076, 1079, DcgmVersion::new(4, 1, 0)),
    (1080, 1083, DcgmVersion::new(4, 4, 1)),
    (1084, 1096, DcgmVersion::new(4, 6, 0)),
    (1200, 1215, DcgmVersion::new(4, 0, 0)),
    (1216, 1219, DcgmVersion::new(4, 2, 3)),
    (1220, 1220, DcgmVersion::new(4, 5, 0)),
    (1300, 1310, DcgmVersion::new(4, 1, 0)),
    (1399, 1399, DcgmVersion::new(4, 1, 0)),
    (1400, 1425, DcgmVersion::new(4, 2, 3)),
    (1426, 1442, DcgmVersion::new(4, 4, 1)),
    (1501, 1503, DcgmVersion::new(4, 4, 2)),
    (1507, 1509, DcgmVersion::new(4, 5, 0)),
    (1523, 1523, DcgmVersion::new(4, 5, 0)),
    (1524, 1533, DcgmVersion::new(4, 6, 0)),
];

/// The first release whose field table holds `id`, where that is later than 3.3.9. A field
/// added after 4.6.0 (4.6.1's base-unit fields 1600-1612) has its release in the registry
/// itself (the `since` column of `dcgm-sys/data/fields.tsv`).
pub(crate) fn field_since(id: u16) -> Option<DcgmVersion> {
    SINCE
        .iter()
        .find(|(first, last, _)| (*first..=*last).contains(&id))
        .map(|(_, _, since)| *since)
        .or_else(|| {
            let (major, minor, patch) = dcgm_sys::field_by_id(id)?.since?;
            Some(DcgmVersion::new(major.into(), minor.into(), patch.into()))
        })
}

/// Whether release `release` knows field `id` (every id of 3.3.9 and before is known).
pub(crate) fn release_knows(release: DcgmVersion, id: u16) -> bool {
    field_since(id).is_none_or(|since| release >= since)
}

impl Handle {
    /// Whether the release answering this handle knows field `id`: the loaded library
    /// (`DcgmFieldGetById`), and for a connection to an nv-hostengine also the engine's
    /// release (from the field facts of each release; the library only knows its own table).
    /// A field added in a later release is unknown to an older one, which refuses a whole
    /// field group holding it. True where neither can tell.
    pub fn knows_field(&self, id: FieldId) -> bool {
        let engine = self.engine_release().is_none_or(|v| release_knows(v, id.0));
        engine && self.library_knows_field(id)
    }

    /// Whether the loaded library's field table holds `id`; true where it cannot be asked.
    fn library_knows_field(&self, id: FieldId) -> bool {
        let Ok(get) = self.lib().raw.DcgmFieldGetById() else {
            return true;
        };
        // SAFETY: a plain id; the library returns NULL or a pointer into its own field table,
        // which is only compared with NULL here.
        !unsafe { get(id.0) }.is_null()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_ascend_and_do_not_overlap() {
        for w in SINCE.windows(2) {
            assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0, "{w:?}");
        }
    }

    #[test]
    fn the_fields_of_the_version_facts_are_placed() {
        let v = DcgmVersion::new;
        // PCIE_CORRECTABLE_ERROR_TOTAL, in dcgm-reader's defaults: 4.4.2.
        assert_eq!(field_since(1501), Some(v(4, 4, 2)));
        assert!(!release_knows(v(4, 4, 1), 1501));
        assert!(release_knows(v(4, 4, 2), 1501));
        assert!(!release_knows(v(3, 3, 9), 165));
        assert!(release_knows(v(4, 0, 0), 170));
        assert!(!release_knows(v(4, 5, 3), 175));
        assert!(release_knows(v(4, 6, 0), 1533));
        // DCGM_FI_DEV_SM_CLOCK_HERTZ, from the registry's since column: 4.6.1.
        assert_eq!(field_since(1603), Some(v(4, 6, 1)));
        assert!(!release_knows(v(4, 6, 0), 1603));
        assert!(release_knows(v(4, 6, 1), 1612));
        // Temperature and power: every release.
        assert_eq!(field_since(150), None);
        assert!(release_knows(v(3, 3, 9), 155));
    }
}
