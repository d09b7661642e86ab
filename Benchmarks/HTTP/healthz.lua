-- The baseline: the same server answering GET /healthz (HTTP alone, no engine).
function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format("RESULT requests_per_s=%.0f p50_ms=%.2f p99_ms=%.2f\n",
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
