/**
 * The `json` library a script is granted, written in Lua and run inside its VM: values cross between homed and a
 * script only as JSON text, so an empty array stays an array (`json.array()`), an empty object an object, and no
 * host object is ever shared with the script. `json.decode` gives arrays the `json.array` marker and turns `null`
 * into `nil` in objects and into `json.null` in arrays (so positions hold); errors name the character where the text
 * went wrong.
 *
 * @module
 */

/** Lua source that defines the global `json`. */
export const JSON_LUA = String.raw`
local json = {}
local array_mt = { __name = "json.array" }
json.null = setmetatable({}, { __name = "json.null", __tostring = function() return "null" end })
function json.array(t) return setmetatable(t or {}, array_mt) end
function json.is_array(t) return getmetatable(t) == array_mt end

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function quote(s)
  return '"' .. (s:gsub('[%c"\\]', function(c) return escapes[c] or string.format("\\u%04x", c:byte()) end)) .. '"'
end

local encode
local function encode_number(v)
  if math.type(v) == "integer" then return string.format("%d", v) end
  if v ~= v or v == math.huge or v == -math.huge then error("json.encode: cannot encode the number " .. tostring(v), 0) end
  local s = string.format("%.14g", v)
  if tonumber(s) ~= v then s = string.format("%.17g", v) end
  return s
end
encode = function(v, depth)
  if depth > 100 then error("json.encode: nested more than 100 deep", 0) end
  local kind = type(v)
  if v == nil or v == json.null then return "null" end
  if kind == "boolean" then return tostring(v) end
  if kind == "number" then return encode_number(v) end
  if kind == "string" then return quote(v) end
  if kind ~= "table" then error("json.encode: cannot encode a " .. kind, 0) end
  local n, count = #v, 0
  for _ in pairs(v) do count = count + 1 end
  local out = {}
  if getmetatable(v) == array_mt or (n > 0 and count == n) then
    for i = 1, n do out[i] = encode(v[i], depth + 1) end
    return "[" .. table.concat(out, ",") .. "]"
  end
  for key, value in pairs(v) do
    if type(key) ~= "string" then error("json.encode: an object key must be a string, not " .. type(key) .. " " .. tostring(key), 0) end
    out[#out + 1] = quote(key) .. ":" .. encode(value, depth + 1)
  end
  table.sort(out)
  return "{" .. table.concat(out, ",") .. "}"
end
function json.encode(v) return encode(v, 0) end

local decode_value
local function fail(text, pos, what) error(string.format("json.decode: %s at character %d", what, pos), 0) end
local function skip(text, pos) return (text:find("[^ \n\r\t]", pos)) or #text + 1 end
local function decode_string(text, pos)
  local parts, i = {}, pos + 1
  while true do
    local s = text:find('["\\%c]', i)
    if not s then fail(text, pos, "unterminated string") end
    parts[#parts + 1] = text:sub(i, s - 1)
    local c = text:sub(s, s)
    if c == '"' then return table.concat(parts), s + 1 end
    if c ~= "\\" then fail(text, s, "control character in string") end
    local e = text:sub(s + 1, s + 1)
    local simple = ({ ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' })[e]
    if simple then
      parts[#parts + 1] = simple
      i = s + 2
    elseif e == "u" then
      local hex = text:match("^%x%x%x%x", s + 2)
      if not hex then fail(text, s, "bad \\u escape") end
      local code = tonumber(hex, 16)
      i = s + 6
      if code >= 0xD800 and code <= 0xDBFF then
        local low = text:match("^\\u(%x%x%x%x)", i)
        local lowcode = low and tonumber(low, 16)
        if not lowcode or lowcode < 0xDC00 or lowcode > 0xDFFF then fail(text, s, "lone surrogate in \\u escape") end
        code = 0x10000 + (code - 0xD800) * 0x400 + (lowcode - 0xDC00)
        i = i + 6
      end
      parts[#parts + 1] = utf8.char(code)
    else
      fail(text, s, "bad escape")
    end
  end
end
local function decode_number(text, pos)
  local s = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  local valid = s and (s:match("^-?0$") or s:match("^-?[1-9]%d*$") or s:match("^-?0%.%d+$") or s:match("^-?[1-9]%d*%.%d+$")
    or s:match("^-?%d+%.?%d*[eE][-+]?%d+$"))
  if not valid then fail(text, pos, "bad number") end
  return math.tointeger(tonumber(s)) or tonumber(s), pos + #s
end
decode_value = function(text, pos, depth)
  if depth > 100 then fail(text, pos, "nested more than 100 deep") end
  pos = skip(text, pos)
  local c = text:sub(pos, pos)
  if c == "{" then
    local result = {}
    pos = skip(text, pos + 1)
    if text:sub(pos, pos) == "}" then return result, pos + 1 end
    while true do
      if text:sub(pos, pos) ~= '"' then fail(text, pos, "expected a key") end
      local key
      key, pos = decode_string(text, pos)
      pos = skip(text, pos)
      if text:sub(pos, pos) ~= ":" then fail(text, pos, "expected ':'") end
      local value
      value, pos = decode_value(text, pos + 1, depth + 1)
      if value ~= json.null then result[key] = value end
      pos = skip(text, pos)
      local sep = text:sub(pos, pos)
      if sep == "}" then return result, pos + 1 end
      if sep ~= "," then fail(text, pos, "expected ',' or '}'") end
      pos = skip(text, pos + 1)
    end
  elseif c == "[" then
    local result = json.array()
    pos = skip(text, pos + 1)
    if text:sub(pos, pos) == "]" then return result, pos + 1 end
    while true do
      local value
      value, pos = decode_value(text, pos, depth + 1)
      result[#result + 1] = value
      pos = skip(text, pos)
      local sep = text:sub(pos, pos)
      if sep == "]" then return result, pos + 1 end
      if sep ~= "," then fail(text, pos, "expected ',' or ']'") end
      pos = pos + 1
    end
  elseif c == '"' then
    return decode_string(text, pos)
  elseif c == "-" or c:match("%d") then
    return decode_number(text, pos)
  elseif text:sub(pos, pos + 3) == "true" then
    return true, pos + 4
  elseif text:sub(pos, pos + 4) == "false" then
    return false, pos + 5
  elseif text:sub(pos, pos + 3) == "null" then
    return json.null, pos + 4
  end
  fail(text, pos, c == "" and "unexpected end of text" or "unexpected '" .. c .. "'")
end
function json.decode(text)
  if type(text) ~= "string" then error("json.decode: expected a string, got " .. type(text), 2) end
  local value, pos = decode_value(text, 1, 0)
  pos = skip(text, pos)
  if pos <= #text then fail(text, pos, "trailing characters") end
  if value == json.null then return nil end
  return value
end
return json
`;
