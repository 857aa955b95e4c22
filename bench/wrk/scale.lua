-- scale.lua: replay a pre-drawn request sequence (the scale mix, scenarios s and u).
--
-- Environment (set by bench/run.sh):
--   BENCH_SCALE_REQS  file of "key<TAB>path" lines: the distinct requests
--   BENCH_SCALE_SEQ   file of 1-based indices into it, one per line, drawn by
--                     `benchtool scaleseq` (Zipf or uniform)
--   BENCH_SCALE_GZIP  "1": every request carries Accept-Encoding: gzip
-- Requests are pre-formatted in init(); request() walks the sequence,
-- wrapping around, from an offset per thread.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

local nthreads = 0
setup = function(thread)
  thread:set("tid", nthreads)
  nthreads = nthreads + 1
end

local reqs, seq = {}, {}
local n, i = 0, 0

init = function(args)
  local f = assert(io.open(os.getenv("BENCH_SCALE_REQS"), "r"), "cannot open BENCH_SCALE_REQS")
  for l in f:lines() do
    local key, path = l:match("^([^\t]+)\t(.+)$")
    if key then
      local h = { ["X-Api-Key"] = key }
      if os.getenv("BENCH_SCALE_GZIP") == "1" then h["Accept-Encoding"] = "gzip" end
      reqs[#reqs + 1] = wrk.format("GET", path, h)
    end
  end
  f:close()
  f = assert(io.open(os.getenv("BENCH_SCALE_SEQ"), "r"), "cannot open BENCH_SCALE_SEQ")
  for l in f:lines() do
    local x = tonumber(l)
    if x then n = n + 1; seq[n] = x end
  end
  f:close()
  assert(#reqs > 0 and n > 0, "BENCH_SCALE_REQS / BENCH_SCALE_SEQ empty")
  local tid = tonumber(wrk.thread:get("tid")) or 0
  i = (tid * 7919) % n
end

request = function()
  i = i + 1
  if i > n then i = 1 end
  return reqs[seq[i]]
end
