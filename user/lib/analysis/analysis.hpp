// The analysis core every view includes: samples and names
// (analysis/sample.hpp), the hot-path containers (util/flat_map.hpp) and
// the shared output (analysis/output.hpp).
#pragma once

#include "analysis/output.hpp"
#include "analysis/sample.hpp"
#include "util/flat_map.hpp"
