//! The client functions a policy registration calls, in the form its release's register call
//! takes: 4.x's `dcgmPolicyRegister_v2` (one callback with user data, a version-2 response that
//! names the GPU) or 3.x's `dcgmPolicyRegister` (a callback when a violation begins and one when
//! it finishes, no user data, a version-1 response without the GPU; DCGM 3.3.9 calls both, one
//! after the other, for every violation, and skips a NULL one).

use std::ffi::{c_int, c_void};

use dcgm_sys::*;

type Current = unsafe extern "C" fn(*mut dcgmPolicyCallbackResponse_v2, u64) -> c_int;
type Legacy = unsafe extern "C" fn(*mut c_void) -> c_int;

/// Whom a registration calls, and how.
#[derive(Debug, Clone, Copy)]
pub enum PolicyCallback {
    /// `dcgmPolicyRegister_v2`'s callback and user data.
    Current { callback: Current, user_data: u64 },
    /// `dcgmPolicyRegister`'s begin and finish callbacks (either may be NULL).
    Legacy {
        begin: Option<Legacy>,
        finish: Option<Legacy>,
    },
}

impl PolicyCallback {
    /// From `dcgmPolicyRegister_v2`'s arguments; `None` for a NULL callback.
    pub fn current(callback: fpRecvUpdates, user_data: u64) -> Option<Self> {
        callback.map(|callback| Self::Current {
            callback,
            user_data,
        })
    }

    /// From `dcgmPolicyRegister`'s arguments.
    pub fn legacy(begin: fpRecvUpdates_v1, finish: fpRecvUpdates_v1) -> Self {
        Self::Legacy { begin, finish }
    }

    /// What tells this registration's callbacks apart from another's on one group, for the
    /// least time between two callbacks: the user data, or the begin function's address.
    pub fn key(&self) -> u64 {
        match *self {
            Self::Current { user_data, .. } => user_data,
            Self::Legacy { begin, finish } => begin.or(finish).map_or(0, |f| f as usize as u64),
        }
    }

    /// Whether `other` calls the same functions with the same user data.
    pub fn same_as(&self, other: &Self) -> bool {
        let same = |a: Option<Legacy>, b: Option<Legacy>| match (a, b) {
            (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        match (*self, *other) {
            (
                Self::Current {
                    callback: a,
                    user_data: ua,
                },
                Self::Current {
                    callback: b,
                    user_data: ub,
                },
            ) => ua == ub && std::ptr::fn_addr_eq(a, b),
            (
                Self::Legacy {
                    begin: ba,
                    finish: fa,
                },
                Self::Legacy {
                    begin: bb,
                    finish: fb,
                },
            ) => same(ba, bb) && same(fa, fb),
            _ => false,
        }
    }

    /// Calls the client with a copy of `response`, in the layout its register call promised.
    pub fn deliver(&self, response: &dcgmPolicyCallbackResponse_v2) {
        match *self {
            Self::Current {
                callback,
                user_data,
            } => {
                let mut r = *response;
                // SAFETY: the client registered this function with this signature; the
                // response lives for the duration of the call.
                unsafe { callback(&mut r, user_data) };
            }
            Self::Legacy { begin, finish } => {
                let mut r = legacy_response(response);
                for f in [begin, finish].into_iter().flatten() {
                    // SAFETY: the client registered this function for a pointer to a
                    // version-1 response, which lives for the duration of the call.
                    unsafe { f((&raw mut r).cast()) };
                }
            }
        }
    }
}

/// The version-1 response of a version-2 one: the same condition and details, no GPU.
fn legacy_response(r: &dcgmPolicyCallbackResponse_v2) -> dcgmPolicyCallbackResponse_v1 {
    dcgmPolicyCallbackResponse_v1 {
        version: dcgmPolicyCallbackResponse_version1,
        condition: r.condition,
        val: r.val,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    static SEEN: Mutex<Vec<(&str, u32, u32, i64)>> = Mutex::new(Vec::new());

    unsafe extern "C" fn begin(p: *mut c_void) -> c_int {
        // SAFETY: `deliver` passes a version-1 response.
        let r = unsafe { &*p.cast::<dcgmPolicyCallbackResponse_v1>() };
        // SAFETY: every member of the union starts with the sample time.
        let ts = unsafe { r.val.xid.timestamp };
        SEEN.lock()
            .unwrap()
            .push(("begin", r.version, r.condition, ts));
        0
    }

    unsafe extern "C" fn finish(p: *mut c_void) -> c_int {
        // SAFETY: `deliver` passes a version-1 response.
        let r = unsafe { &*p.cast::<dcgmPolicyCallbackResponse_v1>() };
        SEEN.lock()
            .unwrap()
            .push(("finish", r.version, r.condition, 0));
        0
    }

    #[test]
    fn a_legacy_registration_hears_begin_then_finish_in_the_version_1_layout() {
        let mut r: dcgmPolicyCallbackResponse_v2 = zeroed();
        r.version = dcgmPolicyCallbackResponse_version2;
        r.condition = DCGM_POLICY_COND_XID;
        r.val.xid.timestamp = 42;
        r.val.xid.errnum = 79;
        r.gpuId = 3;
        PolicyCallback::legacy(Some(begin), Some(finish)).deliver(&r);
        PolicyCallback::legacy(None, Some(finish)).deliver(&r);
        let v1 = dcgmPolicyCallbackResponse_version1;
        let c = DCGM_POLICY_COND_XID;
        assert_eq!(
            *SEEN.lock().unwrap(),
            [
                ("begin", v1, c, 42),
                ("finish", v1, c, 0),
                ("finish", v1, c, 0)
            ]
        );
    }

    #[test]
    fn registrations_match_by_functions_and_user_data() {
        let a = PolicyCallback::legacy(Some(begin), Some(finish));
        assert!(a.same_as(&PolicyCallback::legacy(Some(begin), Some(finish))));
        assert!(!a.same_as(&PolicyCallback::legacy(Some(begin), None)));
        assert_eq!(a.key(), begin as Legacy as usize as u64);
        assert!(PolicyCallback::current(None, 1).is_none());
    }
}
