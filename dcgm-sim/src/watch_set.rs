//! The group watches in force on an engine: which (group, field group) pairs a client watched
//! with `dcgmWatchFields` and has not unwatched. The samples and each entry's watchers are the
//! field cache's ([`crate::cache`]); these pairs are what `dcgmUnwatchFields` and the
//! destruction of a group or a field group undo.

/// One `dcgmWatchFields` in force: the entities of `group` watch the fields of `field_group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchSet {
    pub group: usize,
    pub field_group: usize,
}

/// The watches in force, in the order they were made. The same pair watched twice is held
/// twice (as libdcgm, which takes one unwatch for each watch).
#[derive(Debug, Default)]
pub struct WatchSets(Vec<WatchSet>);

impl WatchSets {
    /// Records a watch.
    pub fn add(&mut self, set: WatchSet) {
        self.0.push(set);
    }

    /// Forgets the oldest watch of this pair; `false` when none is in force.
    pub fn remove(&mut self, set: WatchSet) -> bool {
        match self.0.iter().position(|w| *w == set) {
            Some(pos) => {
                self.0.remove(pos);
                true
            }
            None => false,
        }
    }

    /// The watches in force that involve `group` (each field group once per watch).
    pub fn of_group(&self, group: usize) -> Vec<WatchSet> {
        self.0
            .iter()
            .filter(|w| w.group == group)
            .copied()
            .collect()
    }

    /// The watches in force that involve `field_group` (each group once per watch).
    pub fn of_field_group(&self, field_group: usize) -> Vec<WatchSet> {
        self.0
            .iter()
            .filter(|w| w.field_group == field_group)
            .copied()
            .collect()
    }

    /// Forgets every watch (`dcgmEmptyCache`).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_watched_twice_takes_two_unwatches() {
        let mut s = WatchSets::default();
        let set = WatchSet {
            group: 2,
            field_group: 3,
        };
        s.add(set);
        s.add(set);
        assert!(s.remove(set));
        assert!(s.remove(set));
        assert!(!s.remove(set));
    }

    #[test]
    fn the_watches_of_a_group_or_a_field_group() {
        let mut s = WatchSets::default();
        for (group, field_group) in [(1, 5), (2, 5), (1, 6)] {
            s.add(WatchSet { group, field_group });
        }
        let fgs: Vec<usize> = s.of_group(1).iter().map(|w| w.field_group).collect();
        assert_eq!(fgs, [5, 6]);
        let groups: Vec<usize> = s.of_field_group(5).iter().map(|w| w.group).collect();
        assert_eq!(groups, [1, 2]);
        s.clear();
        assert!(s.of_group(1).is_empty());
    }
}
