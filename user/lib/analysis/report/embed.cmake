# cmake -DIN=report.html -DOUT=report_template.cpp -P embed.cmake: the
# viewer page as HtmlExport::page_template(), a raw string literal cut in
# pieces below the compilers' literal length limits.
file(READ ${IN} page)
string(FIND "${page}" ")ktrack_html\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string delimiter )ktrack_html\"")
endif()
string(LENGTH "${page}" len)
set(body "")
set(pos 0)
while(pos LESS len)
  string(SUBSTRING "${page}" ${pos} 8000 piece)
  string(APPEND body "R\"ktrack_html(${piece})ktrack_html\"\n")
  math(EXPR pos "${pos} + 8000")
endwhile()
file(WRITE ${OUT} "// Generated from analysis/report/report.html by embed.cmake: do not edit.
#include \"analysis/export_html.hpp\"

namespace ktrack::analysis {

std::string_view HtmlExport::page_template() {
  static const char page[] =
${body};
  return {page, sizeof page - 1};
}

}  // namespace ktrack::analysis
")
