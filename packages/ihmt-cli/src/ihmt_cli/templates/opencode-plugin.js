// ihmt-memory: added by `ihmt install opencode`; `ihmt uninstall opencode` deletes this file.
//
// Recall from the IHMT long-term memory without waiting for a tool call: on each user
// message, opencode's `chat.message` hook runs `ihmt hook prompt` (and, on a session's
// first message, `ihmt hook session-start`) and adds what it prints as a synthetic text
// part. `ihmt hook` prints nothing when the memory has nothing confident to say, never
// repeats a memory within a session, and exits 0 whatever happens.
//
// Capture: when a session goes idle, the user's own messages go to `ihmt hook stop`, in
// the background, which saves the durable statements it has not read yet
// (`ihmt install opencode --no-capture` leaves this out).
import { spawn, spawnSync } from "node:child_process";

const IHMT = __IHMT_COMMAND__;
const IHMT_HOME = __IHMT_HOME__;
const CAPTURE = __IHMT_CAPTURE__;
const TIMEOUT_MS = 10000;

function recall(event, payload) {
  try {
    const [program, ...args] = IHMT;
    const done = spawnSync(
      program,
      [...args, "hook", event, "--agent", "opencode", "--home", IHMT_HOME],
      { input: JSON.stringify(payload), encoding: "utf8", timeout: TIMEOUT_MS },
    );
    return done.status === 0 && typeof done.stdout === "string" ? done.stdout.trim() : "";
  } catch {
    return "";
  }
}

function capture(payload) {
  try {
    const [program, ...args] = IHMT;
    const child = spawn(
      program,
      [...args, "hook", "stop", "--agent", "opencode", "--home", IHMT_HOME],
      { stdio: ["pipe", "ignore", "ignore"], timeout: TIMEOUT_MS },
    );
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  } catch {
    // the memory must never break the session
  }
}

// The user's own text of each message: what `ihmt hook stop` reads (never the
// assistant's text, tool output or what a plugin added).
function userMessages(messages) {
  return messages
    .filter((message) => message.info && message.info.role === "user")
    .map((message) => ({
      info: { id: message.info.id, role: "user", time: message.info.time },
      parts: (message.parts || [])
        .filter((part) => part.type === "text" && !part.synthetic && !part.ignored)
        .map((part) => ({ type: "text", text: part.text })),
    }));
}

export const IhmtMemory = async ({ directory, client }) => {
  const started = new Set();
  return {
    event: async ({ event }) => {
      if (!CAPTURE || event.type !== "session.idle" || !client) return;
      try {
        const sessionID = event.properties.sessionID;
        const answer = await client.session.messages({ path: { id: sessionID } });
        const messages = userMessages(answer.data || []);
        if (messages.length === 0) return;
        capture({ session_id: sessionID, cwd: directory, hook_event_name: "session.idle", messages });
      } catch {
        // the memory must never break the session
      }
    },
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      const prompt = output.parts
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n");
      const texts = [];
      if (!started.has(sessionID)) {
        started.add(sessionID);
        texts.push(recall("session-start", { session_id: sessionID, cwd: directory, source: "opencode" }));
      }
      if (prompt.trim()) {
        texts.push(recall("prompt", { session_id: sessionID, cwd: directory, prompt }));
      }
      const text = texts.filter(Boolean).join("\n\n");
      if (!text) return;
      const last = output.parts[output.parts.length - 1];
      output.parts.push({
        id: `${last && last.id ? last.id : "prt_"}ihmt`,
        sessionID,
        messageID: output.message.id,
        type: "text",
        synthetic: true,
        text,
      });
    },
  };
};
