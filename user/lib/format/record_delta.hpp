// The record delta transform of compressed record chunks (trace format 6).
//
// Records of one workload differ from the previous record of the same
// kind in a few bytes: the timestamp's low bytes, a sequence number, now
// and then an argument.  LZ4 has no entropy coder, so each of those
// scattered differences costs it a token, a literal run and an offset:
// 6.1 bytes per 72-byte vfs_write record.  Before compressing, the writer
// replaces each record by its difference from the previous record with
// the same length, type and CPU: the timestamp by the (wrapping)
// difference of the two, every byte after it by the XOR of the two.  The
// first 8 bytes (len, type, cpu, flags) stay, so the reader walks the
// transformed records exactly as the writer did.  On a 405,599-record
// vfs_write recording: LZ4 2.46 MB -> 1.56 MB, zstd 1.12 MB -> 0.53 MB.
//
// Each chunk starts with an empty table, so chunks decode independently.
// The previous record of a kind is found in a 64-slot table keyed by
// (len, type, cpu); a kind that maps to a slot another kind holds takes it
// over, and its record is stored as it is (both sides do the same).
// Anything that does not parse as a record (a length under 24, not a
// multiple of 8, or past the end) ends the transform: the rest of the
// chunk is stored as it is, and the reader's own checks report it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ktrack {

// out[0..n) = the delta form of in[0..n); the buffers must not overlap.
void record_delta_encode(const uint8_t *in, uint8_t *out, size_t n);
// Undoes record_delta_encode() in place.
void record_delta_decode(uint8_t *buf, size_t n);

}  // namespace ktrack
