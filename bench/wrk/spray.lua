-- spray.lua: a new random 32-character API key on every request (the key
-- spray of issue 12). Loads report.lua for the WRKJSON line.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

local alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
local path = "/dealer/REWIND/listing?page=1&page_size=20"

init = function(args)
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0))
  if args[1] then path = args[1] end
end

request = function()
  local t = {}
  for i = 1, 32 do
    local j = math.random(1, #alphabet)
    t[i] = alphabet:sub(j, j)
  end
  return wrk.format("GET", path, { ["X-Api-Key"] = table.concat(t) })
end
