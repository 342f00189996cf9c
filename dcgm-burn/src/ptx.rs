//! The kernels burn loads from PTX text, compiled by the driver at load time (no nvcc, no
//! NVRTC): the results check's compare, and the matrix product used when no cuBLAS is found.
//! PTX ISA 7.0 for `sm_70`: every GPU since Volta, and any CUDA 11 or later driver, JIT-compiles
//! it for its own architecture.

/// `burn_compare(a, b, words, count)`: counts the 32-bit words where `a` and `b` differ and
/// adds the count to `*count` (one atomic per thread, a grid-stride loop).
pub const COMPARE: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry burn_compare(
    .param .u64 p_a,
    .param .u64 p_b,
    .param .u64 p_words,
    .param .u64 p_count
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<16>;

    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_words];
    ld.param.u64 %rd4, [p_count];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd4, %rd4;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd5, %r1, %r2;
    cvt.u64.u32 %rd6, %r3;
    add.u64 %rd5, %rd5, %rd6;
    mul.wide.u32 %rd7, %r4, %r2;
    mov.u64 %rd8, 0;
CMP_LOOP:
    setp.ge.u64 %p1, %rd5, %rd3;
    @%p1 bra CMP_DONE;
    shl.b64 %rd9, %rd5, 2;
    add.u64 %rd10, %rd1, %rd9;
    add.u64 %rd11, %rd2, %rd9;
    ld.global.u32 %r5, [%rd10];
    ld.global.u32 %r6, [%rd11];
    setp.ne.u32 %p2, %r5, %r6;
    @%p2 add.u64 %rd8, %rd8, 1;
    add.u64 %rd5, %rd5, %rd7;
    bra CMP_LOOP;
CMP_DONE:
    setp.eq.u64 %p1, %rd8, 0;
    @%p1 bra CMP_END;
    atom.global.add.u64 %rd12, [%rd4], %rd8;
CMP_END:
    ret;
}
"#;

/// `burn_matmul_f32(a, b, c, n)`: `C = A B` for square row-major FP32 matrices of side `n`,
/// one thread per element of `C` (blocks of 16 x 16). The fallback load: slower than cuBLAS
/// by far, but it keeps every SM busy and its results are as deterministic.
pub const MATMUL_F32: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry burn_matmul_f32(
    .param .u64 p_a,
    .param .u64 p_b,
    .param .u64 p_c,
    .param .u32 p_n
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<12>;

    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_c];
    ld.param.u32 %r1, [p_n];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.u32 %r5, %r2, %r3, %r4;
    mov.u32 %r2, %ctaid.y;
    mov.u32 %r3, %ntid.y;
    mov.u32 %r4, %tid.y;
    mad.lo.u32 %r6, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    setp.ge.u32 %p2, %r6, %r1;
    or.pred %p1, %p1, %p2;
    @%p1 bra MM_END;
    mov.f32 %f1, 0f00000000;
    mul.wide.u32 %rd4, %r6, %r1;
    shl.b64 %rd4, %rd4, 2;
    add.u64 %rd5, %rd1, %rd4;
    mul.wide.u32 %rd6, %r5, 4;
    add.u64 %rd7, %rd2, %rd6;
    mul.wide.u32 %rd8, %r1, 4;
    mov.u32 %r7, 0;
MM_LOOP:
    setp.ge.u32 %p3, %r7, %r1;
    @%p3 bra MM_STORE;
    ld.global.f32 %f2, [%rd5];
    ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f1, %f2, %f3, %f1;
    add.u64 %rd5, %rd5, 4;
    add.u64 %rd7, %rd7, %rd8;
    add.u32 %r7, %r7, 1;
    bra MM_LOOP;
MM_STORE:
    mul.wide.u32 %rd9, %r6, %r1;
    cvt.u64.u32 %rd10, %r5;
    add.u64 %rd9, %rd9, %rd10;
    shl.b64 %rd9, %rd9, 2;
    add.u64 %rd9, %rd3, %rd9;
    st.global.f32 [%rd9], %f1;
MM_END:
    ret;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// The driver finds kernels by these names; a typo would only show on a GPU.
    #[test]
    fn each_kernel_declares_the_entry_the_loader_asks_for() {
        assert!(COMPARE.contains(".visible .entry burn_compare("));
        assert!(MATMUL_F32.contains(".visible .entry burn_matmul_f32("));
        for ptx in [COMPARE, MATMUL_F32] {
            // Every branch target is a label of the same kernel.
            for line in ptx.lines() {
                if let Some(target) = line.trim().split("bra ").nth(1) {
                    let label = target.trim_end_matches(';');
                    assert!(ptx.contains(&format!("\n{label}:")), "{label}");
                }
            }
        }
    }
}
