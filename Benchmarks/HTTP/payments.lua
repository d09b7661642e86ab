-- Complete payments through the checkout API: each payment is
-- POST /v1/sessions, then POST /v1/sessions/{id}/attempts (mada via the mock).
-- Connections of a thread share a queue of created sessions: a connection
-- pays a waiting session when there is one, else creates the next.
-- Counts are per thread; done() adds them up.

local sessions = {}
created, paid, failed, errors = 0, 0, 0, 0
local threads = {}
local session_body = '{"amount":1000,"currency":"SAR","country":"SA","orderId":"bench"}'
local attempt_body = '{"method":"mada"}'
-- The API key (Benchmarks/lib/api-key.lua): run from the repository's root.
local headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. dofile("Benchmarks/lib/api-key.lua") }

function setup(thread)
  table.insert(threads, thread)
end

function request()
  local id = table.remove(sessions)
  if id then
    return wrk.format("POST", "/v1/sessions/" .. id .. "/attempts", headers, attempt_body)
  end
  return wrk.format("POST", "/v1/sessions", headers, session_body)
end

function response(status, hdrs, body)
  if status == 201 then
    local id = body:match('^{"id":"(ses_[%w]+)"')
    if id then
      created = created + 1
      table.insert(sessions, id)
    elseif body:find('"status":"succeeded"', 1, true) then
      paid = paid + 1
    else
      failed = failed + 1
    end
  else
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local c, p, f, e = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    c = c + t:get("created")
    p = p + t:get("paid")
    f = f + t:get("failed")
    e = e + t:get("errors")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format("RESULT payments=%d payments_per_s=%.0f sessions=%d failed=%d errors=%d http_errors=%d requests=%d " ..
    "p50_ms=%.2f p99_ms=%.2f seconds=%.1f\n",
    p, p / seconds, c, f, e, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.requests, latency:percentile(50) / 1000, latency:percentile(99) / 1000, seconds))
end
