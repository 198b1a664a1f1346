// Records parked per CPU while a recording runs, merged into the trace file
// after it: what `trace-cmd record` does with its trace.dat.cpuN files.
//
// A recorder that decodes, merges and compresses each record as it drains
// the rings does that work while the traced workload runs, and a reader
// slower than the writers loses records.  Parking costs a write(2) per run
// of a ring (short runs are gathered first, up to kParkBytes a CPU) and a
// few header reads per record (counts, task names), no decode; the merge by
// timestamp, the symbols and the compression happen once the recording
// stopped.
//
// The recorder's own writes are traced like any others: a probe on the
// write path (vfs_write) adds a record per write(2), which gathering keeps
// to one per kDirectBytes at least.  Probes that make more record bytes than the bytes
// written (f over every function of the write path) feed themselves until
// the disk is full: use `record --stream` there (it writes the records
// compressed, several times fewer bytes) or a filter that leaves ktrackctl
// out.
//
// Each CPU's file, BASE.cpuN.spool, is a raw record stream (records back to
// back, ring order).  The files are removed by discard(), once the merged
// records are safe; a spool destroyed before that (an error, a failed
// merge or file) writes out what it held in memory and keeps its files, which `ktrackctl report
// BASE.cpuN.spool` reads (as raw streams: built-in schemas, no symbols, no task names).  A killed recorder
// keeps them too, less what was still in memory.
//
// The space: the records raw, several times the compressed file, and the
// file beside them while merging (`record --stream` needs neither).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "format/merge.hpp"

namespace ktrack {

class RecordSpool {
 public:
  // Nothing is created until a CPU's first records are written.
  explicit RecordSpool(std::string base) : base_(std::move(base)) {}
  ~RecordSpool();
  RecordSpool(const RecordSpool &) = delete;
  RecordSpool &operator=(const RecordSpool &) = delete;

  // What a CPU's short runs gather in memory before they are written.
  static constexpr size_t kParkBytes = 256 << 10;
  // A run this long is written as it is, from the ring: no copy.
  static constexpr size_t kDirectBytes = 16 << 10;

  // Appends whole records of ONE CPU (a ring's run, in ring order).
  // Throws SysError when the file cannot be written.
  void append(uint32_t cpu, std::span<const uint8_t> recs);
  // Hands every record to 'out' merged by timestamp (each CPU's order
  // kept; ties go to the lower CPU), reading each file a block at a time.
  // The files stay until discard(): the records are not safe until what
  // 'out' wrote is.  Throws Error on a corrupt length.
  //
  // Merged output is a stream: a CPU's records that go back in time (an
  // NMI's record committed before the one it interrupted) keep ring order.
  //
  // 'abandon', asked first and then every 4,096 records, stops the merge
  // with an Error when it returns true (a second Ctrl-C): the files stay.
  void merge(const std::function<void(std::span<const uint8_t>)> &out,
             const std::function<bool()> &abandon = {});
  // Removes the files: their records are safe elsewhere.
  void discard();
  // Bytes parked so far (in files and in memory).
  uint64_t bytes() const { return bytes_; }
  // The file of a CPU's records.
  std::string path(uint32_t cpu) const;
  // The files that hold parked records now (after a merge: none).
  std::vector<std::string> files() const;
  // Files of this base that exist before anything is parked: what a killed
  // or failed recording to the same file kept (the recorder removes them).
  std::vector<std::string> leftovers() const;

 private:
  struct Cpu {
    int fd = -1;     // -1 until its first records are written
    ByteBuffer buf;  // not written yet (under kParkBytes)
  };
  void write_out(uint32_t cpu, std::span<const uint8_t> bytes);
  void remove_files();

  std::string base_;
  std::vector<Cpu> cpus_;
  uint64_t bytes_ = 0;
};

}  // namespace ktrack
