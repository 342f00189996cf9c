//! Gives the simulator library the soname of the library it stands in for, so C programs
//! linked against it (`-ldcgm`) record `libdcgm.so.4` as their dependency, as they would with
//! NVIDIA's library.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libdcgm.so.4");
}
