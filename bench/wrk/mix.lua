-- mix.lua: rotate API key and URL on every request.
--
-- Environment (set by bench/run.sh):
--   BENCH_KEYS  file with one API key per line      (50 keys)
--   BENCH_URLS  file with one path?query per line   (200 URLs)
-- Request i (per wrk thread) uses key i mod K and URL (i div K) mod U, so K*U
-- consecutive requests cover every (key, URL) pair exactly once: the warm-up
-- pass and every measured run walk the same 10,000 combinations in order.
-- Requests are pre-formatted in init(), so request() costs one table lookup.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

local function lines(path)
  local out = {}
  local f = assert(io.open(path, "r"), "cannot open " .. tostring(path))
  for l in f:lines() do
    l = l:gsub("%s+$", "")
    if l ~= "" and l:sub(1, 1) ~= "#" then out[#out + 1] = l end
  end
  f:close()
  return out
end

local nthreads = 0
setup = function(thread)
  thread:set("tid", nthreads)
  nthreads = nthreads + 1
end

local reqs = {}
local n = 0
local i = 0

init = function(args)
  local keys = lines(os.getenv("BENCH_KEYS"))
  local urls = lines(os.getenv("BENCH_URLS"))
  assert(#keys > 0 and #urls > 0, "BENCH_KEYS / BENCH_URLS empty")
  for u = 1, #urls do
    for k = 1, #keys do
      n = n + 1
      reqs[n] = wrk.format("GET", urls[u], { ["X-Api-Key"] = keys[k] })
    end
  end
  -- spread threads over the cycle (bench/run.sh uses one thread)
  local tid = tonumber(wrk.thread:get("tid")) or 0
  i = (tid * 7919) % n
end

request = function()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
