-- Anthropic's Messages API (POST {base_url}/v1/messages) for homed's LuaAdapter provider.
--
--   llm:
--     provider: lua
--     adapter: adapters/anthropic.lua      # relative to the config file
--     base_url: https://api.anthropic.com  # without /v1
--     model: claude-sonnet-4-5
--     api_key: ${ANTHROPIC_API_KEY}
--
-- What it translates: the system messages become the top-level `system`; assistant tool calls become `tool_use`
-- blocks (input: an object); tool results become `tool_result` blocks, all of one turn in ONE user message and before
-- any text; consecutive messages of one role are merged (roles must alternate); empty text is never sent;
-- `max_tokens` is always sent (it is required), temperature is capped at 1; streaming is SSE with named events, tool
-- input arriving as `partial_json` pieces; `stop_reason` maps to finish reasons (tool_use → tool_calls, max_tokens →
-- length); errors are `{"type": "error", "error": {"type", "message"}}`, also as an `error` event mid-stream.

stream_format = "sse"

local function decode_input(text)
  if type(text) ~= "string" or text == "" then return {} end
  local ok, value = pcall(json.decode, text)
  if ok and type(value) == "table" and not json.is_array(value) then return value end
  return {}
end

-- Appends blocks to the conversation, merging them into the last message when it has the same role.
local function push(messages, role, blocks)
  if #blocks == 0 then return end
  local last = messages[#messages]
  if last and last.role == role then
    for _, block in ipairs(blocks) do last.content[#last.content + 1] = block end
  else
    messages[#messages + 1] = { role = role, content = blocks }
  end
end

function build_request(text)
  local request = json.decode(text)
  local system = {}
  local messages = json.array()
  for _, message in ipairs(request.messages) do
    local role = message.role
    if role == "system" then
      if message.content ~= "" then system[#system + 1] = message.content end
    elseif role == "user" then
      if message.content ~= "" then push(messages, "user", json.array({ { type = "text", text = message.content } })) end
    elseif role == "assistant" then
      local blocks = json.array()
      if message.content and message.content ~= "" then blocks[#blocks + 1] = { type = "text", text = message.content } end
      for _, call in ipairs(message.tool_calls or {}) do
        blocks[#blocks + 1] = {
          type = "tool_use",
          id = call.id,
          name = call["function"].name,
          input = decode_input(call["function"].arguments),
        }
      end
      push(messages, "assistant", blocks)
    elseif role == "tool" then
      local content = message.content
      if content == "" then content = "(no output)" end
      push(messages, "user", json.array({ { type = "tool_result", tool_use_id = message.tool_call_id, content = content } }))
    end
  end
  -- Tool results first in their user message, as the API requires (text said after them follows).
  for _, message in ipairs(messages) do
    if message.role == "user" then
      local results, rest = json.array(), json.array()
      for _, block in ipairs(message.content) do
        if block.type == "tool_result" then results[#results + 1] = block else rest[#rest + 1] = block end
      end
      for _, block in ipairs(rest) do results[#results + 1] = block end
      message.content = results
    end
  end
  local body = {
    model = request.model,
    max_tokens = request.max_tokens,
    messages = messages,
    temperature = math.min(request.temperature, 1),
    stream = request.stream,
  }
  if #system > 0 then body.system = table.concat(system, "\n\n") end
  if request.tools and #request.tools > 0 then
    body.tools = json.array()
    for _, tool in ipairs(request.tools) do
      body.tools[#body.tools + 1] = { name = tool.name, description = tool.description, input_schema = tool.parameters }
    end
  end
  local base = (request.base_url:gsub("/+$", ""):gsub("/v1$", ""))
  return json.encode({
    url = base .. "/v1/messages",
    method = "POST",
    headers = {
      ["content-type"] = "application/json",
      ["x-api-key"] = request.api_key,
      ["anthropic-version"] = "2023-06-01",
    },
    body = json.encode(body),
  })
end

local FINISH = { end_turn = "stop", stop_sequence = "stop", max_tokens = "length", tool_use = "tool_calls" }

local function usage_of(usage, output)
  usage = usage or {}
  local read = usage.cache_read_input_tokens or 0
  local prompt = (usage.input_tokens or 0) + (usage.cache_creation_input_tokens or 0) + read
  return { prompt_tokens = prompt, completion_tokens = output or usage.output_tokens or 0, cache_read_tokens = read }
end

local function answer(blocks, stop_reason, usage)
  local texts, calls = {}, json.array()
  for _, block in ipairs(blocks) do
    if block.type == "text" then
      texts[#texts + 1] = block.text
    elseif block.type == "tool_use" then
      calls[#calls + 1] = { id = block.id, name = block.name, arguments = json.encode(block.input or {}) }
    end
  end
  return json.encode({
    content = table.concat(texts),
    tool_calls = calls,
    finish_reason = FINISH[stop_reason] or stop_reason or "stop",
    usage = usage,
  })
end

function parse_response(status, text)
  local response = json.decode(text)
  if type(response) ~= "table" then error("Anthropic answered with " .. text:sub(1, 80) .. ", not an object") end
  if response.type == "error" then error("Anthropic: " .. tostring((response.error or {}).message)) end
  if type(response.content) ~= "table" then error("Anthropic's answer has no content") end
  return answer(response.content, response.stop_reason, usage_of(response.usage))
end

local streams = {}

function stream_event(id, event, data)
  local state = streams[id]
  if not state then
    state = { blocks = {}, json = {} }
    streams[id] = state
  end
  local payload = json.decode(data)
  local kind = payload.type or event
  if kind == "error" then return json.encode({ error = tostring((payload.error or {}).message) }) end
  if kind == "message_start" then
    state.usage = (payload.message or {}).usage
  elseif kind == "content_block_start" then
    local block = payload.content_block or {}
    state.blocks[payload.index + 1] = block
    if block.type == "tool_use" then state.json[payload.index + 1] = {} end
  elseif kind == "content_block_delta" then
    local block, delta = state.blocks[payload.index + 1], payload.delta or {}
    if delta.type == "text_delta" and block then
      block.text = (block.text or "") .. delta.text
      return json.encode({ delta = delta.text })
    elseif delta.type == "input_json_delta" and state.json[payload.index + 1] then
      local pieces = state.json[payload.index + 1]
      pieces[#pieces + 1] = delta.partial_json
    end
  elseif kind == "content_block_stop" then
    local block, pieces = state.blocks[payload.index + 1], state.json[payload.index + 1]
    if block and pieces then block.input = decode_input(table.concat(pieces)) end
  elseif kind == "message_delta" then
    state.stop_reason = (payload.delta or {}).stop_reason
    state.output = (payload.usage or {}).output_tokens
  elseif kind == "message_stop" then
    state.stopped = true
  end
  return json.encode({})
end

function stream_end(id)
  local state = streams[id]
  streams[id] = nil
  if not state or not state.stopped then error("the stream ended before Anthropic's message_stop event") end
  local blocks = {}
  for i = 1, #state.blocks do blocks[#blocks + 1] = state.blocks[i] end
  return answer(blocks, state.stop_reason, usage_of(state.usage, state.output))
end
