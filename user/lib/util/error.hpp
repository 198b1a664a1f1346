// Errors that ktrackctl prints as one sentence saying what to fix.
#pragma once

#include <stdexcept>
#include <string>

namespace ktrack {

// A runtime failure (exit status 2).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string &what) : std::runtime_error(what) {}
};

// The user asked for something malformed (exit status 1).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string &what) : Error(what) {}
};

// A failed system call: 'what' is the action ("open /dev/ktrack"),
// 'err' the errno.  The message is built by explain_errno().
class SysError : public Error {
 public:
  SysError(const std::string &action, int err);
  int err() const { return err_; }

 private:
  int err_;
};

// A failed call on a file the user named (a trace file, an output): the
// advice is about that file, not about /dev/ktrack.
class FileError : public Error {
 public:
  FileError(const std::string &action, int err);
};

// One sentence that says what 'err' means for 'action' and what to do.
// Known actions get specific advice (see error.cpp); others a generic one.
std::string explain_errno(const std::string &action, int err);

}  // namespace ktrack
