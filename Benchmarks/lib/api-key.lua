-- The API key the benchmark scripts send: GATEWAY_API_KEY, or else
-- ./.gateway/test-api-key (the test key the first `gateway serve` wrote).
-- The run scripts set GATEWAY_API_KEY to the key of the server they start.
-- Loaded with dofile("Benchmarks/lib/api-key.lua") from the repository's root.
local key = os.getenv("GATEWAY_API_KEY")
if key == nil or key == "" then
  local file = io.open("./.gateway/test-api-key", "r")
  if file then key = file:read("*l"); file:close() end
end
if key == nil or key == "" then
  error("no API key: set GATEWAY_API_KEY, or run where ./.gateway/test-api-key is")
end
return key
