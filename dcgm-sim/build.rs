//! Gives the simulator library the soname of the library it stands in for, so C programs
//! linked against it (`-ldcgm`) record `libdcgm.so.4` as their dependency, as they would with
//! NVIDIA's library.
//!
//! It is also marked never to be unloaded (`-z nodelete`). The simulated host engines live in
//! the library, where a real nv-hostengine is a process of its own: a client that unloads
//! libdcgm and loads it again (dcgm-rs does when its last handle goes, then retries) must find
//! them as it left them. Unloading would forget a restart in progress (`drop_after`), so it
//! fired again on every retry at the same call and the client never got past its start-up.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libdcgm.so.4");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
