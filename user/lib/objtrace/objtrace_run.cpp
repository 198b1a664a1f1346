#include "objtrace/objtrace_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <thread>

#include "device/ring_reader.hpp"
#include "format/trace_file.hpp"
#include "host/kallsyms.hpp"
#include "objtrace/objtrace_funcs.hpp"

namespace ktrack {

struct ObjtraceRun::Impl {
  ObjConfig cfg;
  Session session;
  std::unique_ptr<TraceWriter> writer;
  ObjLifeBuilder builder;
  Symbolizer syms;  // without a file: names the lives at the end
  explicit Impl(ObjConfig c) : cfg(std::move(c)), session(Session::open_anonymous()) {}
};

ObjtraceRun::ObjtraceRun(ObjConfig cfg, ObjtraceRunOptions o)
    : impl_(std::make_unique<Impl>(std::move(cfg))) {
  Impl &m = *impl_;
  SessionConfig sc;
  sc.buf_pages = o.buf_pages;
  m.session.configure(sc);
  bool kernel_addrs = m.session.device().version().features & KTRACK_FEAT_OBJ_FUNC_ADDRS;
  note_ = resolve_obj_functions(m.cfg, o.module, o.use_btf, kernel_addrs);
  apply_obj_config(m.session.fd(), m.cfg, false);
  std::string kallsyms = read_kallsyms();
  if (!o.output.empty()) {
    TraceMeta meta;
    meta.nr_cpus = m.session.nr_cpus();
    meta.clock = "local";
    // The machine, as 'record' writes it (report --header, the HTML report).
    meta.kernel_release = m.session.device().version().kernel_release;
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) meta.hostname = host;
    meta.extra["ktrackctl_version"] = KTRACK_VERSION;
    meta.extra["objtrace.watch"] = serialize_watch_labels(m.cfg.watches);
    meta.extra["objtrace.functions"] = m.cfg.functions;
    SchemaRegistry schemas;
    for (auto &s : objtrace_schemas()) schemas.add(s);
    m.writer = std::make_unique<TraceWriter>(o.output, meta, schemas, kallsyms, o.compress);
  } else {
    m.syms.load(kallsyms);
  }
}

ObjtraceRun::~ObjtraceRun() = default;

void ObjtraceRun::run(const std::function<void()> &wait) {
  Impl &m = *impl_;
  MmapReader reader(m.session);
  std::atomic<bool> stop{false};
  std::exception_ptr reader_error;
  std::thread th([&] {
    try {
      reader.run(
          [&](uint32_t, std::span<const std::byte> rec) {
            std::span<const uint8_t> r(reinterpret_cast<const uint8_t *>(rec.data()), rec.size());
            if (m.writer) {
              m.writer->write_records(r);
            } else {
              m.syms.ingest(r);  // a module came or went (read after join)
              m.builder.add_raw(r);
            }
          },
          stop);
    } catch (...) {
      reader_error = std::current_exception();
    }
  });
  try {
    m.session.start();
    obj_track_addresses(m.session.fd(), m.cfg);
    obj_enable(m.session.fd());
    wait();
    obj_disable(m.session.fd());
    m.session.flush();
    m.session.stop();
  } catch (...) {
    stop = true;
    th.join();
    throw;
  }
  stop = true;
  th.join();
  if (reader_error) std::rethrow_exception(reader_error);
}

ktrack_obj_stats ObjtraceRun::stats() const { return obj_stats(impl_->session.fd()); }

uint64_t ObjtraceRun::finish_file() {
  Impl &m = *impl_;
  if (!m.writer) return 0;
  auto st = stats();
  m.writer->finish(fmt::format("objtrace.lives={}\nobjtrace.hits={}\n", st.lives, st.hits));
  return m.writer->records();
}

std::string ObjtraceRun::lives(bool json) const {
  const Impl &m = *impl_;
  std::vector<ObjWatchLabel> labels = parse_watch_labels(serialize_watch_labels(m.cfg.watches));
  auto lives = m.builder.lives();
  return json ? format_lives_json(lives, labels, m.syms) : format_lives_text(lives, labels, m.syms);
}

}  // namespace ktrack
