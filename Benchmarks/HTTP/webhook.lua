-- One merchant endpoint's side of webhook deliveries at full speed (issue 37):
-- POSTs of a real delivery (docs/webhooks.md's captured session.created, 591
-- bytes) with Standard Webhooks headers, each with its own webhook-id, to a
-- sink (checkout-benchmark --webhook-sink). What wrk (C, epoll) and the sink
-- do per request on this machine is the least any sender of one POST per
-- event can cost: BENCHMARKS.md "What four POSTs a payment cost at least".
--
--   .build/release/checkout-benchmark --webhook-sink --seconds 30 &   # prints: sink http://127.0.0.1:PORT/hooks
--   wrk -t1 -c64 -d10s -s Benchmarks/HTTP/webhook.lua http://127.0.0.1:PORT

local body = [[{"id":"evt_ses_01m8jsds4bre2g7vdremhgpxvd_1","type":"session.created","mode":"test","sessionId":"ses_01m8jsds4bre2g7vdremhgpxvd","sequence":1,"at":"2026-11-29T04:36:15.627Z","status":"open","amount":{"value":2500,"currency":"SAR"},"detail":"order o-1; instruments: mock 0","session":{"id":"ses_01m8jsds4bre2g7vdremhgpxvd","mode":"test","amount":{"value":2500,"currency":"SAR"},"country":"SA","orderId":"o-1","capture":"automatic","createdAt":"2026-11-29T04:36:15.627Z","expiresAt":"2026-11-29T05:06:15.627Z","status":"open","attempts":[],"updatedAt":"2026-11-29T04:36:15.627Z","version":1}}]]
local n = 0

function request()
  n = n + 1
  return wrk.format("POST", "/hooks", {
    ["Content-Type"] = "application/json",
    ["webhook-id"] = "evt_bench_" .. n,
    ["webhook-timestamp"] = "1796000000",
    ["webhook-signature"] = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
    ["user-agent"] = "gateway-webhooks/1",
  }, body)
end
