// "Did you mean": the names closest to a misspelt one, by edit distance.
// The one such helper of the library (tracepoint names, ...).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ktrack {

// Levenshtein distance (insert, delete, substitute: cost 1 each).
size_t edit_distance(std::string_view a, std::string_view b);

// Up to 'max' of 'candidates' closest to 'word', closest first (ties in
// candidate order), among those within a third of the word's length (at
// least 2 edits); none when nothing is that close.
std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string> &candidates,
                                       size_t max = 3);

// " (did you mean a, b or c?)", or "" when 'names' is empty.
std::string did_you_mean(const std::vector<std::string> &names);

}  // namespace ktrack
