/**
 * A simulated OneBot implementation in its own thread: dials the URL it is given and sends `count` private message
 * events as fast as the socket takes them (alternating array and CQ-string formats), then reports when it started.
 *
 * Protocol: in `{url, count, selfId, userId}`; out `{started}` (absolute ms) once every frame is handed to the socket.
 *
 * @module
 */

/// <reference lib="deno.worker" />

self.onmessage = (message: MessageEvent<{ url: string; count: number; selfId: string; userId: string }>) => {
  const { url, count, selfId, userId } = message.data;
  const socket =
    new (WebSocket as unknown as new (url: string, options: { headers: Record<string, string> }) => WebSocket)(
      url,
      { headers: { "X-Self-ID": selfId, "X-Client-Role": "Universal", Authorization: "Bearer " } },
    );
  socket.onopen = () => {
    socket.send(
      JSON.stringify({
        post_type: "meta_event",
        meta_event_type: "lifecycle",
        sub_type: "connect",
        self_id: Number(selfId),
        time: 0,
      }),
    );
    const started = performance.timeOrigin + performance.now();
    for (let n = 0; n < count; n++) {
      const text = `m${n}`;
      socket.send(JSON.stringify({
        time: 0,
        self_id: Number(selfId),
        post_type: "message",
        message_type: "private",
        sub_type: "friend",
        message_id: n,
        user_id: Number(userId),
        message: n % 2 ? text : [{ type: "text", data: { text } }],
        raw_message: text,
        font: 0,
        sender: { user_id: Number(userId), nickname: "owner" },
      }));
    }
    self.postMessage({ started });
  };
};
