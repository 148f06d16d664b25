-- Ollama's native chat API (POST {base_url}/api/chat) for homed's LuaAdapter provider.
--
--   llm:
--     provider: lua
--     adapter: adapters/ollama.lua        # relative to the config file
--     base_url: http://127.0.0.1:11434    # no /v1: this adapter speaks the native API
--     model: qwen3:8b
--
-- What it translates (see docs in ../../DESIGN.md, "LuaAdapter"): sampling goes in `options` (max_tokens becomes
-- num_predict); tool-call arguments are JSON objects both ways; tool results are `role: "tool"` messages named by
-- `tool_name`; streaming is NDJSON (on by default in Ollama, so `stream` is always sent); a tool-call answer still says
-- `done_reason: "stop"`, so tool calls are found by `message.tool_calls`; errors are `{"error": "text"}`.

stream_format = "ndjson"

local next_id = 0
local function new_id()
  next_id = next_id + 1
  return string.format("call_ollama_%d", next_id)
end

local function decode_arguments(text)
  if type(text) ~= "string" or text == "" then return {} end
  local ok, value = pcall(json.decode, text)
  if ok and type(value) == "table" and not json.is_array(value) then return value end
  return {}
end

function build_request(text)
  local request = json.decode(text)
  local messages = json.array()
  local names = {} -- tool call id -> function name, for the tool results that follow
  for _, message in ipairs(request.messages) do
    if message.role == "assistant" then
      local out = { role = "assistant", content = message.content or "" }
      if message.tool_calls and #message.tool_calls > 0 then
        out.tool_calls = json.array()
        for _, call in ipairs(message.tool_calls) do
          names[call.id] = call["function"].name
          out.tool_calls[#out.tool_calls + 1] = {
            ["function"] = { name = call["function"].name, arguments = decode_arguments(call["function"].arguments) },
          }
        end
      end
      messages[#messages + 1] = out
    elseif message.role == "tool" then
      messages[#messages + 1] = { role = "tool", tool_name = names[message.tool_call_id] or "tool", content = message.content }
    else
      messages[#messages + 1] = { role = message.role, content = message.content }
    end
  end
  local body = {
    model = request.model,
    messages = messages,
    stream = request.stream,
    options = { temperature = request.temperature, num_predict = request.max_tokens },
  }
  if request.tools and #request.tools > 0 then
    body.tools = json.array()
    for _, tool in ipairs(request.tools) do
      body.tools[#body.tools + 1] = {
        type = "function",
        ["function"] = { name = tool.name, description = tool.description, parameters = tool.parameters },
      }
    end
  end
  local headers = { ["content-type"] = "application/json" }
  if request.api_key ~= "" then headers.authorization = "Bearer " .. request.api_key end
  local base = (request.base_url:gsub("/+$", ""))
  return json.encode({ url = base .. "/api/chat", method = "POST", headers = headers, body = json.encode(body) })
end

local function calls_of(message, into)
  for _, call in ipairs(message.tool_calls or {}) do
    local fn = call["function"] or {}
    into[#into + 1] = { id = call.id or new_id(), name = fn.name, arguments = json.encode(fn.arguments or {}) }
  end
end

local function answer(content, calls, done_reason, final)
  local finish = "stop"
  if #calls > 0 then finish = "tool_calls" elseif done_reason == "length" then finish = "length" end
  return json.encode({
    content = content,
    tool_calls = calls,
    finish_reason = finish,
    usage = { prompt_tokens = final.prompt_eval_count or 0, completion_tokens = final.eval_count or 0 },
  })
end

function parse_response(status, text)
  local response = json.decode(text)
  if type(response) ~= "table" then error("Ollama answered with " .. text:sub(1, 80) .. ", not an object") end
  if response.error then error("Ollama: " .. tostring(response.error)) end
  local message = response.message
  if type(message) ~= "table" then error("Ollama's answer has no message") end
  local calls = json.array()
  calls_of(message, calls)
  return answer(message.content or "", calls, response.done_reason, response)
end

local streams = {}

function stream_event(id, event, data)
  local state = streams[id]
  if not state then
    state = { parts = {}, calls = json.array() }
    streams[id] = state
  end
  local chunk = json.decode(data)
  if chunk.error then return json.encode({ error = tostring(chunk.error) }) end
  local message = chunk.message or {}
  local delta = message.content or ""
  if delta ~= "" then state.parts[#state.parts + 1] = delta end
  calls_of(message, state.calls)
  if chunk.done then state.final = chunk end
  if delta == "" then return json.encode({}) end
  return json.encode({ delta = delta })
end

function stream_end(id)
  local state = streams[id]
  streams[id] = nil
  if not state or not state.final then error("the stream ended before Ollama's last line (done: true)") end
  return answer(table.concat(state.parts), state.calls, state.final.done_reason, state.final)
end
