//===- Internal.h - what the launcher's files share -------------*- C++ -*-===//
//
// Not installed: the error reporting and the argument checks that
// Context.cpp (creating contexts) and Launcher.cpp (planning, packing,
// launching) call from Validate.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_LAUNCHER_INTERNAL_H
#define MLA_LAUNCHER_INTERNAL_H

#include "mla/launcher.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace mla_launcher {

/// Sets the calling thread's mla_last_error() to "<status name>: <printf
/// message>" and returns `s`.
mla_status fail(mla_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// The same with a ready message.
mla_status failWith(mla_status s, const std::string &msg);
/// Clears mla_last_error() (a call that succeeded).
void clearError();

/// mxfp4 KV: e8m0 block scales beside the packed e2m1 rows (ABI 8).
inline bool hasBlockScales(const mla_spec_desc &s) {
  return s.kv_type && std::strcmp(s.kv_type, "f4E2M1FN") == 0;
}

/// Stage-1 programs per (sequence, split): the q_seq_len x heads query rows
/// in groups of block_m (the descriptor was checked at create: block_m
/// divides the heads, or is whole tokens dividing the rows).
inline int64_t rowGroups(const mla_spec_desc &s) {
  return int64_t(s.q_seq_len) * s.num_heads / s.block_m;
}

/// batch in 1..2^31-1, max_kv_len in 0..2^31-1.
mla_status checkSizes(int64_t batch, int64_t maxKvLen);
/// Every check on a call's pointers, sizes and flags, shared by planning and
/// running (MLA_DECODE_VALIDATE's host-copy checks included).
mla_status validateArgs(const mla_spec_desc &s, const mla_decode_args *a);
/// The workspace a plan with `splits` splits needs: `need` bytes.
mla_status checkWorkspace(const mla_decode_args *a, int64_t splits,
                          size_t need);
/// Whether every length in the host copy (lengthsHost) is a multiple of
/// `multiple` (false without one); lengths outside [0, max_kv_len] fail.
mla_status hostLengthsDivide(const mla_spec_desc &s, const mla_decode_args *a,
                             int64_t multiple, bool *divides);
/// The host copy the lengths come from: cache_seqlens_host with a block
/// table, else kv_indptr_host (null when the caller gave none).
const int32_t *lengthsHost(const mla_spec_desc &s, const mla_decode_args *a);

} // namespace mla_launcher

#endif // MLA_LAUNCHER_INTERNAL_H
